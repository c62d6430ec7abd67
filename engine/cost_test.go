package engine

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/pricing"
)

// A step's reported compute is its attempt's cost and adds to the run's,
// whatever the outcome; a retry's attempt starts from nothing, a duplicate
// report adds nothing, a restart's run starts from nothing.
func TestStepComputeAddsToTheRunsCost(t *testing.T) {
	ctx := context.Background()
	wf := chain(1, model.StepHTTP)
	wf.Steps[0].RetryPolicy = &model.RetryPolicy{ErrorRetryLimit: pl(1)}
	g, d := startRun(t, wf)
	first := pricing.Usage{pricing.FargateVCPUSeconds: 60, pricing.FargateGBSeconds: 120}
	d, err := Decide(ctx, g, d.State, StepFinished{StepID: "job.1", Attempt: 1, Outcome: OutcomeUserError, Message: "exit 1", Compute: first}, t0.Add(time.Second))
	require.NoError(t, err)
	s := d.State.Step("job.1")
	require.NotZero(t, s.RetryAt, "the failed attempt waits to retry")
	assert.Equal(t, first, s.Cost)
	assert.Equal(t, first, d.State.Cost)

	d, err = Decide(ctx, g, d.State, TimerFired{StepID: "job.1", Attempt: 1, Purpose: PurposeRetry}, time.UnixMilli(s.RetryAt))
	require.NoError(t, err)
	assert.Equal(t, int64(2), d.State.Step("job.1").Attempt)
	assert.Empty(t, d.State.Step("job.1").Cost, "a retry's attempt has cost nothing yet")
	assert.Equal(t, first, d.State.Cost)

	second := pricing.Usage{pricing.FargateVCPUSeconds: 90, pricing.FargateGBSeconds: 180}
	done := StepFinished{StepID: "job.1", Attempt: 2, Outcome: OutcomeSucceeded, Compute: second}
	at := time.UnixMilli(s.RetryAt).Add(time.Minute)
	ended, err := Decide(ctx, g, d.State, done, at)
	require.NoError(t, err)
	assert.Equal(t, model.WorkflowSucceeded, ended.State.Status)
	assert.Equal(t, second, ended.State.Step("job.1").Cost)
	assert.Equal(t, pricing.Usage{pricing.FargateVCPUSeconds: 150, pricing.FargateGBSeconds: 300}, ended.State.Cost)
	assert.Equal(t, first, d.State.Cost, "the decision changed its input state")

	// A worker-written end says the same of the attempt as the decision.
	done.FinishedAt = at.UnixMilli()
	end, _, ok := SucceededAttempt(*d.State.Step("job.1"), done)
	require.True(t, ok)
	assert.Equal(t, second, end.Cost)

	assertUnchanged(t, ctx, g, ended.State, done, at.Add(time.Second), "a duplicate report")

	next, err := RestartState(ended.State, RestartFromBeginning, at.Add(time.Hour))
	require.NoError(t, err)
	assert.Empty(t, next.Cost, "a restart's run starts from nothing")
}

// A loop's and a subworkflow's ended children add their cost to the
// parent's, once.
func TestChildrenCostAddsToTheParents(t *testing.T) {
	ctx := context.Background()
	child := pricing.Usage{pricing.FargateARMVCPUSeconds: 60}

	loop := params("i", expr(model.TypeLongArray, "Util.intsBetween(1, 3, 1)"))
	wf := &model.Workflow{ID: "loop", Steps: []model.Step{
		{Kind: model.KindForeach, ID: "loop", Params: params("loop_params", &model.ParamDefinition{Type: model.TypeMap, Value: loop.Defs, HasValue: true}),
			Steps: []model.Step{{Kind: model.KindStep, ID: "a", Type: model.StepHTTP}}},
	}}
	g, d := startRun(t, wf)
	st := d.State
	require.Equal(t, int64(2), st.Step("loop").Loop.Total)
	for idx := int64(0); idx < 2; idx++ {
		ev := ChildEnded{StepID: "loop", Attempt: 1, Index: idx, Status: model.WorkflowSucceeded, Cost: child}
		d, err := Decide(ctx, g, st, ev, t0.Add(time.Second))
		require.NoError(t, err)
		assertUnchanged(t, ctx, g, d.State, ev, t0.Add(2*time.Second), "a duplicate end")
		st = d.State
	}
	assert.Equal(t, model.WorkflowSucceeded, st.Status)
	assert.Equal(t, pricing.Usage{pricing.FargateARMVCPUSeconds: 120}, st.Cost)

	sub := &model.Workflow{ID: "sub", Steps: []model.Step{
		{Kind: model.KindSubworkflow, ID: "sub", Params: params("subworkflow_id", literal(model.TypeString, "child"))},
	}}
	g, d = startRun(t, sub)
	d, err := Decide(ctx, g, d.State, ChildStarted{StepID: "sub", Attempt: 1, Child: ChildRef{WorkflowID: "child", InstanceID: 8, RunID: 1}}, t0)
	require.NoError(t, err)
	end := ChildEnded{StepID: "sub", Attempt: 1, Status: model.WorkflowSucceeded, Cost: child}
	d, err = Decide(ctx, g, d.State, end, t0.Add(time.Second))
	require.NoError(t, err)
	assert.Equal(t, child, d.State.Cost)
	assertUnchanged(t, ctx, g, d.State, end, t0.Add(2*time.Second), "a duplicate end")
}
