package engine

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/maestro-serverless/maestro/model"
)

// TestRedriveRepeatsWhatTheRunAwaits: a Redrive emits again the RunStep of
// the running Http step (same params), the Sleep step's timer at its
// original fire time, the retry timer of a step waiting to retry, the step
// timeouts and the workflow timeout, and changes no status; a duplicate of
// the repeated work changes nothing; Awaited lists the same commands.
func TestRedriveRepeatsWhatTheRunAwaits(t *testing.T) {
	ctx := context.Background()
	rp := &model.RetryPolicy{ErrorRetryLimit: pl(2), Backoff: &model.Backoff{Type: model.FixedBackoff, ErrorRetryBackoffInSecs: pl(300)}}
	wf := &model.Workflow{ID: "redrive", Timeout: &model.ParsableDuration{Seconds: 3600}, Steps: []model.Step{
		{Kind: model.KindStep, ID: "call", Type: model.StepHTTP, Timeout: &model.ParsableDuration{Seconds: 120},
			Params: params("url", literal(model.TypeString, "http://127.0.0.1:1/x"))},
		sleepy("nap", 600, nil, nil),
		{Kind: model.KindStep, ID: "flaky", Type: model.StepHTTP, RetryPolicy: rp},
	}}
	g, started := startRun(t, wf)
	failed, err := Decide(ctx, g, started.State, StepFinished{StepID: "flaky", Attempt: 1, Outcome: OutcomeUserError, Message: "boom"}, t0.Add(time.Second))
	require.NoError(t, err)
	require.NotZero(t, failed.State.Step("flaky").RetryAt)

	later := t0.Add(5 * time.Minute)
	d, err := Decide(ctx, g, failed.State, Redrive{Reason: "test"}, later)
	require.NoError(t, err)
	assert.Empty(t, d.Transitions, "a redrive changes no status")
	require.Len(t, d.Timeline, 1)
	assert.Contains(t, d.Timeline[0].Message, "re-driven")

	var runs []RunStep
	timers := map[string]time.Time{}
	for _, c := range d.Commands {
		switch c := c.(type) {
		case RunStep:
			runs = append(runs, c)
		case StartTimer:
			timers[c.StepID+"/"+string(c.Purpose)] = c.FireAt
		}
	}
	require.Len(t, runs, 1)
	assert.Equal(t, "call", runs[0].StepID)
	assert.Equal(t, int64(1), runs[0].Attempt)
	assert.Equal(t, "http://127.0.0.1:1/x", runs[0].Params["url"])
	assert.Equal(t, t0.Add(10*time.Minute), timers["nap/sleep"], "the Sleep ends when it always would")
	assert.Equal(t, t0.Add(2*time.Minute), timers["call/timeout"])
	assert.Equal(t, t0.Add(time.Second+300*time.Second), timers["flaky/retry"])
	assert.Equal(t, t0.Add(time.Hour), timers["/workflow_timeout"])

	aw, err := Awaited(ctx, g, failed.State, later)
	require.NoError(t, err)
	assert.ElementsMatch(t, d.Commands, aw)

	// The first delivery of the repeated work ends the step; the second
	// finds nothing to do.
	done, err := Decide(ctx, g, d.State, StepFinished{StepID: "call", Attempt: 1, Outcome: OutcomeSucceeded}, later)
	require.NoError(t, err)
	assert.Equal(t, model.StepSucceeded, done.State.Step("call").Status)
	assertUnchanged(t, ctx, g, done.State, StepFinished{StepID: "call", Attempt: 1, Outcome: OutcomeSucceeded}, later)

	// A run that has ended awaits nothing and ignores a redrive.
	killed, err := Decide(ctx, g, done.State, Action{Action: "kill"}, later)
	require.NoError(t, err)
	require.True(t, killed.State.Status.IsTerminal())
	aw, err = Awaited(ctx, g, killed.State, later)
	require.NoError(t, err)
	assert.Empty(t, aw)
	assertUnchanged(t, ctx, g, killed.State, Redrive{}, later)
}
