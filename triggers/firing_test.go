package triggers

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFiringInputRoundTrip(t *testing.T) {
	in := FiringInput("sample-time-trigger-wf", 2)
	assert.JSONEq(t, `{"kind":"time_trigger","workflow_id":"sample-time-trigger-wf","trigger_index":2,"scheduled_time":"<aws.scheduler.scheduled-time>"}`, in)
	// Scheduler replaces the literal placeholder, so it must not be escaped.
	require.Contains(t, in, `"<aws.scheduler.scheduled-time>"`)

	// What Scheduler delivers.
	body := strings.ReplaceAll(in, "<aws.scheduler.scheduled-time>", "2026-11-22T10:00:00Z")
	f, err := ParseFiring([]byte(body))
	require.NoError(t, err)
	assert.Equal(t, Firing{
		WorkflowID:    "sample-time-trigger-wf",
		TriggerIndex:  2,
		ScheduledTime: time.Date(2026, time.November, 22, 10, 0, 0, 0, time.UTC),
	}, f)

	// Any workflow id survives the round trip.
	odd := `w"\<>&` + "\u2028"
	body = strings.ReplaceAll(FiringInput(odd, 0), "<aws.scheduler.scheduled-time>", "2026-11-22T10:00:00Z")
	require.True(t, json.Valid([]byte(body)))
	f, err = ParseFiring([]byte(body))
	require.NoError(t, err)
	assert.Equal(t, odd, f.WorkflowID)
}

func TestParseFiring(t *testing.T) {
	tests := []struct {
		name, body string
		want       Firing
		err        string
	}{
		{name: "offset time is UTC", body: `{"kind":"time_trigger","workflow_id":"wf","trigger_index":0,"scheduled_time":"2026-11-22T02:00:00-08:00","extra":1}`,
			want: Firing{WorkflowID: "wf", ScheduledTime: time.Date(2026, time.November, 22, 10, 0, 0, 0, time.UTC)}},
		{name: "not json", body: `{`, err: "time trigger firing"},
		{name: "wrong kind", body: `{"kind":"signal","workflow_id":"wf","trigger_index":0,"scheduled_time":"2026-11-22T10:00:00Z"}`, err: `kind is "signal"`},
		{name: "no workflow", body: `{"kind":"time_trigger","trigger_index":0,"scheduled_time":"2026-11-22T10:00:00Z"}`, err: "workflow_id is missing"},
		{name: "no index", body: `{"kind":"time_trigger","workflow_id":"wf","scheduled_time":"2026-11-22T10:00:00Z"}`, err: "trigger_index is missing"},
		{name: "negative index", body: `{"kind":"time_trigger","workflow_id":"wf","trigger_index":-1,"scheduled_time":"2026-11-22T10:00:00Z"}`, err: "negative"},
		{name: "fractional index", body: `{"kind":"time_trigger","workflow_id":"wf","trigger_index":1.5,"scheduled_time":"2026-11-22T10:00:00Z"}`, err: "time trigger firing"},
		{name: "no time", body: `{"kind":"time_trigger","workflow_id":"wf","trigger_index":0}`, err: "scheduled_time is missing"},
		{name: "placeholder left", body: FiringInput("wf", 0), err: "not an RFC 3339 time"},
		{name: "date only", body: `{"kind":"time_trigger","workflow_id":"wf","trigger_index":0,"scheduled_time":"2026-11-22"}`, err: "not an RFC 3339 time"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseFiring([]byte(tt.body))
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, time.UTC, got.ScheduledTime.Location())
		})
	}
}
