package engine

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/maestro-serverless/maestro/model"
)

func noRetries() *model.RetryPolicy {
	return &model.RetryPolicy{
		ErrorRetryLimit:    &model.ParsableLong{Value: 0},
		PlatformRetryLimit: &model.ParsableLong{Value: 0},
	}
}

func pl(v int64) *model.ParsableLong { return &model.ParsableLong{Value: v} }

// httpThen builds a (Http, given policy and failure mode) -> b (NoOp), plus
// s (Sleep 60s) running beside them.
func httpThen(rp *model.RetryPolicy, mode model.FailureMode) *model.Workflow {
	return &model.Workflow{ID: "retry", Steps: []model.Step{
		{Kind: model.KindStep, ID: "a", Type: model.StepHTTP, RetryPolicy: rp, FailureMode: mode,
			Transition: model.Transition{Successors: []model.Successor{{StepID: "b", Condition: "true"}}}},
		{Kind: model.KindStep, ID: "b", Type: model.StepNoOp},
		{Kind: model.KindStep, ID: "s", Type: model.StepSleep, Params: params("sleep_seconds", literal(model.TypeLong, int64(60)))},
	}}
}

func TestRetriesThenSuccess(t *testing.T) {
	ctx := context.Background()
	rp := &model.RetryPolicy{ErrorRetryLimit: pl(3), Backoff: &model.Backoff{Type: model.FixedBackoff, ErrorRetryBackoffInSecs: pl(2)}}
	g, d := startRun(t, httpThen(rp, ""))
	var err error
	now := t0
	for attempt := int64(1); attempt <= 2; attempt++ {
		now = now.Add(time.Second)
		d, err = Decide(ctx, g, d.State, StepFinished{StepID: "a", Attempt: attempt, Outcome: OutcomeUserError, Message: "HTTP 500"}, now)
		require.NoError(t, err)
		a := d.State.Step("a")
		assert.Equal(t, model.StepUserFailed, a.Status)
		assert.Equal(t, attempt, a.ErrorRetries)
		require.Len(t, d.Commands, 1)
		timer := d.Commands[0].(StartTimer)
		assert.Equal(t, StartTimer{StepID: "a", Attempt: attempt, Purpose: PurposeRetry, FireAt: now.Add(2 * time.Second).UTC()}, timer)
		assert.Equal(t, model.StepNotCreated, d.State.Step("b").Status, "successor waits while a retries")
		// A late or duplicate retry timer for another attempt changes nothing.
		assertUnchanged(t, ctx, g, d.State, TimerFired{StepID: "a", Attempt: attempt + 5, Purpose: PurposeRetry}, now)

		now = timer.FireAt
		d, err = Decide(ctx, g, d.State, TimerFired{StepID: "a", Attempt: attempt, Purpose: PurposeRetry}, now)
		require.NoError(t, err)
		a = d.State.Step("a")
		assert.Equal(t, attempt+1, a.Attempt)
		assert.Equal(t, model.StepRunning, a.Status)
		require.Len(t, d.Commands, 1)
		assert.Equal(t, attempt+1, d.Commands[0].(RunStep).Attempt)
	}
	d, err = Decide(ctx, g, d.State, StepFinished{StepID: "a", Attempt: 3, Outcome: OutcomeSucceeded}, now)
	require.NoError(t, err)
	assert.Equal(t, model.StepSucceeded, d.State.Step("a").Status)
	assert.Equal(t, int64(3), d.State.Step("a").Attempt)
	assert.Equal(t, model.StepSucceeded, d.State.Step("b").Status)
}

func TestRetriesExhausted(t *testing.T) {
	ctx := context.Background()
	rp := &model.RetryPolicy{ErrorRetryLimit: pl(1), Backoff: &model.Backoff{Type: model.FixedBackoff, ErrorRetryBackoffInSecs: pl(1)}}
	g, d := startRun(t, httpThen(rp, ""))
	var err error
	d, err = Decide(ctx, g, d.State, StepFinished{StepID: "a", Attempt: 1, Outcome: OutcomeUserError}, t0)
	require.NoError(t, err)
	d, err = Decide(ctx, g, d.State, TimerFired{StepID: "a", Attempt: 1, Purpose: PurposeRetry}, t0.Add(time.Second))
	require.NoError(t, err)
	d, err = Decide(ctx, g, d.State, StepFinished{StepID: "a", Attempt: 2, Outcome: OutcomeUserError, Message: "HTTP 500"}, t0.Add(2*time.Second))
	require.NoError(t, err)
	a := d.State.Step("a")
	assert.Equal(t, model.StepFatallyFailed, a.Status)
	assert.Contains(t, a.Message, "retries exhausted")
	assert.Equal(t, model.StepUnsatisfied, d.State.Step("b").Status)
	// FAIL_AFTER_RUNNING: the sleeping sibling finishes, then the run fails.
	assert.Equal(t, model.WorkflowInProgress, d.State.Status)
	d, err = Decide(ctx, g, d.State, TimerFired{StepID: "s", Attempt: 1, Purpose: PurposeSleep}, t0.Add(time.Minute))
	require.NoError(t, err)
	assert.Equal(t, model.WorkflowFailed, d.State.Status)
}

func TestExponentialBackoffAndParamLimits(t *testing.T) {
	ctx := context.Background()
	wf := httpThen(&model.RetryPolicy{
		PlatformRetryLimit: &model.ParsableLong{Expr: "${limit}"},
		Backoff: &model.Backoff{PlatformRetryBackoffInSecs: pl(10), PlatformRetryExponent: pl(3),
			PlatformRetryLimitInSecs: pl(100)},
	}, "")
	wf.Steps[0].Params = params("limit", literal(model.TypeLong, int64(4)))
	g, d := startRun(t, wf)
	var err error
	now := t0
	var waits []time.Duration
	for attempt := int64(1); attempt <= 5; attempt++ {
		d, err = Decide(ctx, g, d.State, StepFinished{StepID: "a", Attempt: attempt, Outcome: OutcomePlatformError}, now)
		require.NoError(t, err)
		if attempt == 5 {
			break
		}
		timer := d.Commands[0].(StartTimer)
		waits = append(waits, timer.FireAt.Sub(now))
		now = timer.FireAt
		d, err = Decide(ctx, g, d.State, TimerFired{StepID: "a", Attempt: attempt, Purpose: PurposeRetry}, now)
		require.NoError(t, err)
	}
	// min(10 * 3^n, 100): 10s, 30s, 90s, 100s; the limit "${limit}" = 4 retries.
	assert.Equal(t, []time.Duration{10 * time.Second, 30 * time.Second, 90 * time.Second, 100 * time.Second}, waits)
	assert.Equal(t, model.StepFatallyFailed, d.State.Step("a").Status)
	assert.Equal(t, int64(4), d.State.Step("a").PlatformRetries)
}

func TestIgnoreFailure(t *testing.T) {
	ctx := context.Background()
	g, d := startRun(t, httpThen(noRetries(), model.IgnoreFailure))
	var err error
	d, err = Decide(ctx, g, d.State, StepFinished{StepID: "a", Attempt: 1, Outcome: OutcomeUserError, Message: "HTTP 500"}, t0)
	require.NoError(t, err)
	assert.Equal(t, model.StepCompletedWithError, d.State.Step("a").Status)
	assert.Equal(t, model.StepSucceeded, d.State.Step("b").Status, "downstream continues")
	d, err = Decide(ctx, g, d.State, TimerFired{StepID: "s", Attempt: 1, Purpose: PurposeSleep}, t0.Add(time.Minute))
	require.NoError(t, err)
	assert.Equal(t, model.WorkflowSucceeded, d.State.Status)
}

func TestFailImmediatelyStopsSiblings(t *testing.T) {
	ctx := context.Background()
	g, d := startRun(t, httpThen(noRetries(), model.FailImmediately))
	var err error
	require.Equal(t, model.StepRunning, d.State.Step("s").Status)
	d, err = Decide(ctx, g, d.State, StepFinished{StepID: "a", Attempt: 1, Outcome: OutcomeFatalError, Message: "bad"}, t0.Add(time.Second))
	require.NoError(t, err)
	assert.Equal(t, model.WorkflowFailed, d.State.Status)
	assert.Equal(t, model.StepStopped, d.State.Step("s").Status, "the sleeping sibling is stopped at once")
	assert.Equal(t, model.StepUnsatisfied, d.State.Step("b").Status, "downstream of the failure never runs")
	assert.Equal(t, []Command{InstanceDone{Status: model.WorkflowFailed}}, d.Commands)
	// The stopped sleeper's timer arrives later and changes nothing.
	assertUnchanged(t, ctx, g, d.State, TimerFired{StepID: "s", Attempt: 1, Purpose: PurposeSleep}, t0.Add(time.Minute))
}

func TestDefaultRetryLimits(t *testing.T) {
	ctx := context.Background()
	g, d := startRun(t, httpThen(nil, ""))
	var err error
	d, err = Decide(ctx, g, d.State, StepFinished{StepID: "a", Attempt: 1, Outcome: OutcomeUserError}, t0)
	require.NoError(t, err)
	// Default: 2 error retries, exponential 60s * 2^n capped at 600s.
	assert.Equal(t, StartTimer{StepID: "a", Attempt: 1, Purpose: PurposeRetry, FireAt: t0.Add(60 * time.Second).UTC()}, d.Commands[0])
}
