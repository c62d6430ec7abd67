package orchestrator

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/jsonnum"
	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/store"
)

// TestDeferredStartRoundTrip: what a worker writes from a run_step message
// (workerStart) is what the decision would have written (stateStart) for an
// attempt created and started in one instant, whatever its params — numbers
// of every kind, nested maps, unicode — once the message went through JSON;
// deferrable refuses a write that differs, a claimed one, and a step that
// was not started in one instant gets no start time.
func TestDeferredStartRoundTrip(t *testing.T) {
	params := engine.Values{
		"n": int64(1), "big": int64(9007199254740993), "f": 1.5, "e": 1e21, "s": "é\u2028<>&",
		"m":     map[string]any{"k": []int64{1, -2}, "x": []string{"a", "ü"}, "b": []bool{true}, "d": []float64{0.1, 3}},
		"sm":    map[string]string{"a": "b"},
		"http":  map[string]any{"url": "http://127.0.0.1/x", "method": "GET"},
		"empty": "",
	}
	st := &engine.Instance{WorkflowID: "wf", InstanceID: 7, RunID: 2, Steps: []engine.StepState{
		{StepID: "call", Attempt: 3, Status: model.StepRunning, Params: params, CreateTime: 1700000000123, StartTime: 1700000000123},
		{StepID: "slow", Attempt: 1, Status: model.StepRunning, Params: params, CreateTime: 1700000000000, StartTime: 1700000000123},
	}}
	msg := func(step string, attempt int64) store.Message {
		m, ok, err := (&Rounds{&core{}}).outboxMessage(st, engine.RunStep{StepID: step, Attempt: attempt, StepKind: model.KindStep,
			StepType: "Http", Params: params.Clone()}, launch{crowd: 40}, time.Time{})
		if err != nil || !ok {
			t.Fatal(ok, err)
		}
		return m
	}
	ss := st.Step("call")
	want := stateStart(st, ss)
	var m StepWork
	if err := jsonnum.Decode([]byte(msg("call", 3).Body), &m); err != nil {
		t.Fatal(err)
	}
	got := workerStart(m)
	if got == nil || !bytes.Equal(got.Body, want.Body) || !slices.EqualFunc(got.Timeline, want.Timeline, bytes.Equal) {
		t.Fatalf("worker writes\n%s\nthe decision would write\n%s", got.Body, want.Body)
	}
	if len(want.Timeline) != 5 {
		t.Errorf("start timeline %q", want.Timeline)
	}
	write := store.Attempt{StepID: "call", Attempt: 3, Status: "RUNNING", Body: want.Body, Timeline: want.Timeline}
	if !deferrable(write, msg("call", 3)) {
		t.Error("the decision's own write is not deferrable")
	}
	for name, w := range map[string]store.Attempt{
		"other body": {StepID: "call", Attempt: 3, Status: "RUNNING", Body: []byte(`{}`), Timeline: want.Timeline},
		"more entries": {StepID: "call", Attempt: 3, Status: "RUNNING", Body: want.Body,
			Timeline: append(slices.Clone(want.Timeline), []byte(`{}`))},
		"claimed":       {StepID: "call", Attempt: 3, Status: "RUNNING", Body: want.Body, Timeline: want.Timeline, Claim: "me"},
		"not running":   {StepID: "call", Attempt: 3, Status: "SUCCEEDED", Body: want.Body, Timeline: want.Timeline},
		"other attempt": {StepID: "call", Attempt: 2, Status: "RUNNING", Body: want.Body, Timeline: want.Timeline},
	} {
		if deferrable(w, msg("call", 3)) {
			t.Errorf("%s: deferrable", name)
		}
	}
	var slow StepWork
	if err := json.Unmarshal([]byte(msg("slow", 1).Body), &slow); err != nil {
		t.Fatal(err)
	}
	if slow.StartTime != 0 || workerStart(slow) != nil || pendingAttempt(st, "slow", 0) != nil {
		t.Errorf("a step created and started at different instants: start time %d", slow.StartTime)
	}
	if p := pendingAttempt(st, "call", 0); p == nil || p.Attempt != 3 || !bytes.Equal(p.Body, want.Body) {
		t.Errorf("pending attempt %+v", p)
	}
	if pendingAttempt(st, "call", 2) != nil {
		t.Error("an earlier attempt is pending")
	}
}

// TestReplayable: only events whose second application changes nothing are
// deleted outside the commit.
func TestReplayable(t *testing.T) {
	for _, c := range []struct {
		ev   engine.Event
		want bool
	}{
		{engine.StepFinished{StepID: "a", Attempt: 1}, true},
		{&engine.StepFinished{StepID: "a", Attempt: 1}, true},
		{engine.TimerFired{Purpose: engine.PurposeSleep}, true},
		{engine.TimerFired{Purpose: engine.PurposeRetry}, true},
		{&engine.TimerFired{Purpose: engine.PurposeTimeout}, true},
		{engine.TimerFired{Purpose: engine.PurposeSignalCheck}, false},
		{engine.TimerFired{Purpose: engine.PurposeWorkflowTimeout}, false},
		{engine.Action{Action: "stop"}, false},
		{engine.ChildEnded{}, false},
		{engine.Continue{}, false},
	} {
		if got := replayable(c.ev); got != c.want {
			t.Errorf("replayable(%T %+v) = %v, want %v", c.ev, c.ev, got, c.want)
		}
	}
}
