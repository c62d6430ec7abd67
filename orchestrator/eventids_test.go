package orchestrator

import (
	"slices"
	"testing"

	"github.com/maestro-serverless/maestro/engine"
)

// TestEventIDsSortInTheDocumentedOrder: events waiting together apply in
// id order, and eventids.go documents that order by kind; each kind's ids
// must sort where the table puts them, whatever their arguments.
func TestEventIDsSortInTheDocumentedOrder(t *testing.T) {
	st := &engine.Instance{Seq: 999_999_999}
	inOrder := []struct{ kind, id string }{
		{"action", actionEventID("ffffffff-ffff-ffff-ffff-ffffffffffff")},
		{"parent action", parentActionEventID("stop")},
		{"continue", continueEventID(st, 1<<40)},
		{"child ended", childEndedEventID("zz", 99, 99)},
		{"child started", childStartedEventID("zz", 99)},
		{"task waiting", taskWaitingEventID("zzzz", 999999)},
		{"outcome", outcomeEventID("zzzz", 999999)},
		{"heartbeat", heartbeatEventID("ffffffff")},
		{"hand-off", handOffEventID("ffffffff")},
		{"task report", taskReportEventID("zzzz", 999999)},
		{"last only", lastOnlyEventID(999_999_999_999)},
		{"output data", outputDataEventID("ffffffff")},
		{"permits", permitsEventID(9_999_999_999_999)},
		{"queue", queueEventID(9_999_999_999_999)},
		{"redrive", redriveEventID(9_999_999_999_999)},
		{"signal", signalEventID("db/table", 999_999_999_999)},
		{"timer", timerEventID("zzzz", 999999, engine.PurposeTimeout)},
		{"unblock", unblockEventID(999999)},
		{"workflow action", workflowActionEventID("00000000")},
	}
	for i := 1; i < len(inOrder); i++ {
		if prev, cur := inOrder[i-1], inOrder[i]; prev.id >= cur.id {
			t.Errorf("%s (%s) does not sort before %s (%s)", prev.kind, prev.id, cur.kind, cur.id)
		}
	}
	// Ids of one kind tell their events apart, and a report is stored once.
	ids := []string{outcomeEventID("a", 1), outcomeEventID("a", 2), outcomeEventID("b", 1), timerEventID("a", 1, engine.PurposeRetry),
		timerEventID("a", 1, engine.PurposeSleep), childEndedEventID("a", 1, 0), childEndedEventID("a", 1, 1), signalEventID("x", 1), signalEventID("y", 1)}
	if len(slices.Compact(slices.Sorted(slices.Values(ids)))) != len(ids) {
		t.Errorf("ids collide: %v", ids)
	}
	if outcomeEventID("a", 1) != outcomeEventID("a", 1) {
		t.Error("an outcome's id is not stable")
	}
}
