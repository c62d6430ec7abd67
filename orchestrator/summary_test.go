package orchestrator

import (
	"fmt"
	"testing"

	"github.com/maestro-serverless/maestro/store"
)

// TestInstanceSummaryInitiator: a listed instance carries the initiator
// its summary item stores (a backfill's id and scheduled time), and none
// when the item has none or holds what does not decode as one.
func TestInstanceSummaryInitiator(t *testing.T) {
	for _, c := range []struct {
		stored string
		want   string
	}{
		{`{"type":"BACKFILL","timezone":"UTC","scheduled_time":1767225600000,"backfill":"bf-1"}`, "&{Type:BACKFILL User: Timezone:UTC ScheduledTime:1767225600000 Principal: Parent:<nil> Backfill:bf-1}"},
		{`{"type":"MANUAL","principal":"alice"}`, "&{Type:MANUAL User: Timezone: ScheduledTime:0 Principal:alice Parent:<nil> Backfill:}"},
		{``, "<nil>"},
		{`{}`, "<nil>"},
		{`not json`, "<nil>"},
		{`{"type":7}`, "<nil>"},
	} {
		v := instanceSummary(&store.InstanceRecord{WorkflowID: "w", InstanceID: 1, Status: "IN_PROGRESS", Initiator: []byte(c.stored)})
		if got := fmt.Sprintf("%+v", v.Initiator); got != c.want {
			t.Errorf("initiator %q: %s, want %s", c.stored, got, c.want)
		}
	}
}
