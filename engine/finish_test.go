package engine

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-serverless/maestro/model"
)

// TestSucceededAttemptIsTheDecidedEnd: the end SucceededAttempt predicts
// for a success — what a worker writes on its attempt item — is the end the
// decision that applies the success makes, field for field and entry for
// entry, with the event passed through JSON as the runtime passes it.
// Otherwise every decision would rewrite the worker's end.
func TestSucceededAttemptIsTheDecidedEnd(t *testing.T) {
	def, err := model.ParseDefinition([]byte(`{"workflow":{"id":"ends","steps":[
	  {"step":{"id":"a","type":"Http","params":{"http":{"type":"MAP","value":{"url":{"type":"STRING","value":"http://example.com"}}},
	    "n":{"type":"LONG","value":1}}}},
	  {"step":{"id":"b","type":"Http","params":{"http":{"type":"MAP","value":{"url":{"type":"STRING","value":"http://example.com"}}}}}}]}}`))
	require.NoError(t, err)
	g, err := Compile(def.Workflow, newEvaluator(t))
	require.NoError(t, err)
	ctx := context.Background()
	started, err := Decide(ctx, g, newInstance(g), StartRun{}, t0)
	require.NoError(t, err)
	now := t0.Add(800 * time.Millisecond)
	for name, tc := range map[string]struct {
		ev   StepFinished
		same bool // the prediction is the decided end
	}{
		"outputs over params": {ev: StepFinished{Outputs: map[string]any{"n": int64(7), "status_code": 200, "ratio": 0.25,
			"body": map[string]any{"k": []any{"x", "y"}, "f": 1.5}}, FinishedAt: t0.Add(300 * time.Millisecond).UnixMilli()}, same: true},
		"no outputs, a message":       {ev: StepFinished{Message: "done", FinishedAt: now.UnixMilli()}, same: true},
		"finished after the decision": {ev: StepFinished{FinishedAt: now.Add(time.Second).UnixMilli()}},
	} {
		t.Run(name, func(t *testing.T) {
			ev := tc.ev
			ev.StepID, ev.Attempt, ev.Outcome = "a", 1, OutcomeSucceeded
			body, err := json.Marshal(ev)
			require.NoError(t, err)
			decoded, err := UnmarshalEvent(body)
			require.NoError(t, err)
			d, err := Decide(ctx, g, started.State, decoded, now)
			require.NoError(t, err)
			end, entries, ok := SucceededAttempt(*started.State.Step("a"), decoded.(StepFinished))
			require.True(t, ok)
			var decided []TimelineEntry
			for _, e := range d.Timeline {
				if e.StepID == "a" {
					decided = append(decided, e)
				}
			}
			got := *d.State.Step("a")
			endJSON, err := json.Marshal(end)
			require.NoError(t, err)
			gotJSON, err := json.Marshal(got)
			require.NoError(t, err)
			if tc.same {
				require.JSONEq(t, string(gotJSON), string(endJSON))
				require.Equal(t, decided, entries)
			} else {
				require.NotEqual(t, string(gotJSON), string(endJSON), "a prediction the decision cannot make must differ")
			}
		})
	}
	for name, ev := range map[string]StepFinished{
		"a failure":          {Outcome: OutcomeUserError, FinishedAt: now.UnixMilli()},
		"no finish instant":  {Outcome: OutcomeSucceeded},
		"before its start":   {Outcome: OutcomeSucceeded, FinishedAt: t0.Add(-time.Second).UnixMilli()},
		"outputs not params": {Outcome: OutcomeSucceeded, FinishedAt: now.UnixMilli(), Outputs: map[string]any{"f": func() {}}},
	} {
		t.Run(name, func(t *testing.T) {
			ev.StepID, ev.Attempt = "a", 1
			_, _, ok := SucceededAttempt(*started.State.Step("a"), ev)
			require.False(t, ok)
		})
	}
}
