package engine

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/maestro-serverless/maestro/model"
)

func TestOutputDataOverridesWorkerOutputs(t *testing.T) {
	ctx := context.Background()
	g, d := startRun(t, chain(2, model.StepHTTP))
	require.NoError(t, AcceptsOutputData(d.State, "job.1", 1))
	assert.Error(t, AcceptsOutputData(d.State, "job.1", 2), "another attempt")
	assert.Error(t, AcceptsOutputData(d.State, "job.2", 0), "a step not started")

	// Through JSON, as the inbox stores it.
	raw, err := json.Marshal(OutputData{StepID: "job.1", Attempt: 1, Outputs: map[string]any{"answer": 7}, Source: "spark app-1"})
	require.NoError(t, err)
	ev, err := UnmarshalEvent(raw)
	require.NoError(t, err)
	d, err = Decide(ctx, g, d.State, ev, t0)
	require.NoError(t, err)
	assert.Equal(t, Values{"answer": int64(7)}, d.State.Step("job.1").External)
	require.Len(t, d.Timeline, 1)
	assert.Contains(t, d.Timeline[0].Message, "from spark app-1")
	assert.Empty(t, d.Transitions, "output data changes no status")

	d, err = Decide(ctx, g, d.State, StepFinished{StepID: "job.1", Attempt: 1, Outcome: OutcomeSucceeded,
		Outputs: map[string]any{"answer": 1, "other": 2}}, t0)
	require.NoError(t, err)
	s := d.State.Step("job.1")
	assert.Equal(t, Values{"answer": int64(7), "other": int64(2)}, s.Outputs)
	assert.Equal(t, int64(7), s.Params["answer"])
	assert.Nil(t, s.External)

	// Late output data for an ended attempt changes nothing.
	late, err := Decide(ctx, g, d.State, OutputData{StepID: "job.1", Attempt: 1, Outputs: map[string]any{"answer": 9}}, t0)
	require.NoError(t, err)
	assert.Equal(t, d.State, late.State)
	assert.Error(t, AcceptsOutputData(d.State, "job.1", 1))
}

// TestOutputDataStaysWithItsAttempt: output data an external job reported
// for an attempt that then failed is not carried into the retry: the
// next attempt's outputs are its own.
func TestOutputDataStaysWithItsAttempt(t *testing.T) {
	ctx := context.Background()
	g, d := startRun(t, chain(2, model.StepHTTP))
	d, err := Decide(ctx, g, d.State, OutputData{StepID: "job.1", Attempt: 1, Outputs: map[string]any{"answer": 7}}, t0)
	require.NoError(t, err)
	d, err = Decide(ctx, g, d.State, StepFinished{StepID: "job.1", Attempt: 1, Outcome: OutcomeUserError, Message: "boom"}, t0)
	require.NoError(t, err)
	require.NotZero(t, d.State.Step("job.1").RetryAt, "the user error is retried")
	assert.Nil(t, d.State.Step("job.1").External, "the failed attempt's output data")
	d, err = Decide(ctx, g, d.State, TimerFired{StepID: "job.1", Attempt: 1, Purpose: PurposeRetry}, t0.Add(time.Hour))
	require.NoError(t, err)
	require.Equal(t, int64(2), d.State.Step("job.1").Attempt)
	d, err = Decide(ctx, g, d.State, StepFinished{StepID: "job.1", Attempt: 2, Outcome: OutcomeSucceeded,
		Outputs: map[string]any{"other": 2}}, t0.Add(time.Hour))
	require.NoError(t, err)
	assert.Equal(t, Values{"other": int64(2)}, d.State.Step("job.1").Outputs)
}
