package engine

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/maestro-serverless/maestro/model"
)

// announced returns the AnnounceSignal commands of d.
func announced(d *Decision) []AnnounceSignal {
	var out []AnnounceSignal
	for _, c := range d.Commands {
		if a, ok := c.(AnnounceSignal); ok {
			out = append(out, a)
		}
	}
	return out
}

func TestDynamicSignalsAnnouncedOnSuccess(t *testing.T) {
	ctx := context.Background()
	table := DynamicSignal{Name: "demo_table", Params: map[string]any{"dt": int64(20260101)}, Payload: map[string]any{"ok": true}}

	t.Run("from the worker's end, after the declared outputs", func(t *testing.T) {
		wf := chain(1, model.StepHTTP)
		wf.Steps[0].SignalOutputs = []model.SignalOutput{{Name: "declared"}}
		g, d := startRun(t, wf)
		// Through JSON, as the inbox stores it.
		raw, err := json.Marshal(StepFinished{StepID: "job.1", Attempt: 1, Outcome: OutcomeSucceeded, Signals: []DynamicSignal{table}})
		require.NoError(t, err)
		ev, err := UnmarshalEvent(raw)
		require.NoError(t, err)
		d, err = Decide(ctx, g, d.State, ev, t0)
		require.NoError(t, err)
		got := announced(d)
		require.Len(t, got, 2)
		assert.Equal(t, "declared", got[0].Name)
		assert.Equal(t, AnnounceSignal{StepID: "job.1", Attempt: 1, Index: 1, Name: "demo_table",
			Params: map[string]any{"dt": int64(20260101)}, Payload: map[string]any{"ok": true}}, got[1])
		assert.Nil(t, d.State.Step("job.1").Signals, "nothing kept once announced")
	})

	t.Run("output data's override the worker's; a failure announces none", func(t *testing.T) {
		g, d := startRun(t, chain(1, model.StepHTTP))
		raw, err := json.Marshal(OutputData{StepID: "job.1", Attempt: 1, Signals: []DynamicSignal{table}})
		require.NoError(t, err)
		ev, err := UnmarshalEvent(raw)
		require.NoError(t, err)
		d, err = Decide(ctx, g, d.State, ev, t0)
		require.NoError(t, err)
		require.Len(t, d.State.Step("job.1").Signals, 1)
		assert.Contains(t, d.Timeline[0].Message, "1 dynamic signal outputs")
		assert.Empty(t, announced(d), "announced only when the attempt succeeds")

		ok, err := Decide(ctx, g, d.State, StepFinished{StepID: "job.1", Attempt: 1, Outcome: OutcomeSucceeded,
			Signals: []DynamicSignal{{Name: "from_the_log"}}}, t0)
		require.NoError(t, err)
		got := announced(ok)
		require.Len(t, got, 1)
		assert.Equal(t, "demo_table", got[0].Name)

		failed, err := Decide(ctx, g, d.State, StepFinished{StepID: "job.1", Attempt: 1, Outcome: OutcomeFatalError, Message: "boom"}, t0)
		require.NoError(t, err)
		assert.Empty(t, announced(failed))
		assert.Nil(t, failed.State.Step("job.1").Signals)
	})

	t.Run("past the limits the step fails, naming them", func(t *testing.T) {
		many := make([]DynamicSignal, MaxDynamicSignals+1)
		for i := range many {
			many[i] = DynamicSignal{Name: "s"}
		}
		big := []DynamicSignal{{Name: "s", Payload: map[string]any{"x": strings.Repeat("a", MaxDynamicSignalBytes)}}}
		for name, sigs := range map[string][]DynamicSignal{"count": many, "bytes": big, "no name": {{}}} {
			g, d := startRun(t, chain(1, model.StepHTTP))
			d, err := Decide(ctx, g, d.State, StepFinished{StepID: "job.1", Attempt: 1, Outcome: OutcomeSucceeded, Signals: sigs}, t0)
			require.NoError(t, err, name)
			s := d.State.Step("job.1")
			assert.Equal(t, model.StepFatallyFailed, s.Status, name)
			assert.Contains(t, s.Message, "dynamic signal output", name)
			assert.Empty(t, announced(d), name)

			// As output data they are dropped (the API refuses them first).
			g, d = startRun(t, chain(1, model.StepHTTP))
			d, err = Decide(ctx, g, d.State, OutputData{StepID: "job.1", Attempt: 1, Signals: sigs}, t0)
			require.NoError(t, err, name)
			assert.Nil(t, d.State.Step("job.1").Signals, name)
		}
	})

	t.Run("a worker-written end is not taken for an attempt with dynamic outputs", func(t *testing.T) {
		s := StepState{StepID: "j", Attempt: 1, Status: model.StepRunning, StartTime: 1}
		_, _, ok := SucceededAttempt(s, StepFinished{StepID: "j", Attempt: 1, Outcome: OutcomeSucceeded, FinishedAt: 2, Signals: []DynamicSignal{table}})
		assert.False(t, ok)
	})
}
