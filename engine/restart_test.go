package engine

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/maestro-serverless/maestro/model"
)

func TestRestartFromIncompleteKeepsFinishedSteps(t *testing.T) {
	ctx := context.Background()
	wf := &model.Workflow{ID: "rs", Steps: []model.Step{
		{Kind: model.KindStep, ID: "first", Type: model.StepNoOp, Params: params("n", literal(model.TypeLong, int64(7))),
			Transition: model.Transition{Successors: []model.Successor{{StepID: "call", Condition: "true"}}}},
		{Kind: model.KindStep, ID: "call", Type: model.StepHTTP, RetryPolicy: noRetries(),
			Params:     params("m", expr(model.TypeLong, "first__n + 1")),
			Transition: model.Transition{Successors: []model.Successor{{StepID: "last", Condition: "true"}}}},
		{Kind: model.KindStep, ID: "last", Type: model.StepNoOp},
	}}
	g, err := Compile(wf, newEvaluator(t))
	require.NoError(t, err)
	d, err := Decide(ctx, g, newInstance(g), StartRun{}, t0)
	require.NoError(t, err)
	d, err = Decide(ctx, g, d.State, StepFinished{StepID: "call", Attempt: 1, Outcome: OutcomeFatalError}, t0)
	require.NoError(t, err)
	require.Equal(t, model.WorkflowFailed, d.State.Status)

	_, err = RestartState(newInstance(g), RestartFromIncomplete, t0)
	assert.Error(t, err, "a run that has not ended cannot be restarted")
	_, err = RestartState(d.State, "RESTART_SOMEHOW", t0)
	assert.ErrorContains(t, err, "unknown restart policy")

	next, err := RestartState(d.State, "", t0.Add(time.Minute))
	require.NoError(t, err)
	assert.Equal(t, int64(2), next.RunID)
	assert.Equal(t, model.WorkflowCreated, next.Status)
	assert.Equal(t, int64(1), next.Step("first").FromRun)
	assert.Equal(t, model.StepNotCreated, next.Step("call").Status)

	d2, err := Decide(ctx, g, next, StartRun{}, t0.Add(time.Minute))
	require.NoError(t, err)
	for _, tr := range d2.Transitions {
		assert.NotEqual(t, "first", tr.StepID, "the finished step is not run again")
	}
	require.Len(t, stepCommands(d2.Commands), 1)
	rs := d2.Commands[0].(RunStep)
	assert.Equal(t, "call", rs.StepID)
	assert.Equal(t, int64(1), rs.Attempt)
	assert.Equal(t, int64(8), rs.Params["m"], "the carried step's params stay visible")
	assert.Equal(t, RestartFromIncomplete, d2.State.Params["RUN_POLICY"])

	d2, err = Decide(ctx, g, d2.State, StepFinished{StepID: "call", Attempt: 1, Outcome: OutcomeSucceeded}, t0.Add(2*time.Minute))
	require.NoError(t, err)
	assert.Equal(t, model.WorkflowSucceeded, d2.State.Status)

	// From the beginning: every step runs again.
	fresh, err := RestartState(d.State, RestartFromBeginning, t0)
	require.NoError(t, err)
	d3, err := Decide(ctx, g, fresh, StartRun{}, t0)
	require.NoError(t, err)
	assert.Equal(t, model.StepSucceeded, d3.State.Step("first").Status)
	assert.Zero(t, d3.State.Step("first").FromRun)
}
