package engine

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/maestro-serverless/maestro/model"
)

// restartStepWorkflow: first (NoOp, n=7) -> call (Http, m = first__n + 1,
// k = "def") -> last (NoOp).
func restartStepWorkflow() *model.Workflow {
	p := params("m", expr(model.TypeLong, "first__n + 1"))
	p.Names = append(p.Names, "k")
	p.Defs["k"] = literal(model.TypeString, "def")
	return &model.Workflow{ID: "rs", Steps: []model.Step{
		{Kind: model.KindStep, ID: "first", Type: model.StepNoOp, Params: params("n", literal(model.TypeLong, int64(7))),
			Transition: model.Transition{Successors: []model.Successor{{StepID: "call", Condition: "true"}}}},
		{Kind: model.KindStep, ID: "call", Type: model.StepHTTP, RetryPolicy: noRetries(), Params: p,
			Transition: model.Transition{Successors: []model.Successor{{StepID: "last", Condition: "true"}}}},
		{Kind: model.KindStep, ID: "last", Type: model.StepNoOp},
	}}
}

// TestRestartStepRun: the new run of an ended run restarted from a step
// runs that step with its step run params merged over the definition's
// (an override and a new param; the others evaluated as defined), or,
// for a skip, ends it SKIPPED at once with Maestro's message and goes on.
func TestRestartStepRun(t *testing.T) {
	ctx := context.Background()
	g, d := startRun(t, restartStepWorkflow())
	d, err := Decide(ctx, g, d.State, StepFinished{StepID: "call", Attempt: 1, Outcome: OutcomeFatalError}, t0)
	require.NoError(t, err)
	require.Equal(t, model.WorkflowFailed, d.State.Status)

	over := params("k", literal(model.TypeString, "override"))
	over.Names = append(over.Names, "extra")
	over.Defs["extra"] = literal(model.TypeLong, int64(5))
	next, err := RestartStepRun(g, d.State, StepRestart{StepID: "call", Params: &over}, t0)
	require.NoError(t, err)
	assert.Equal(t, RunPolicyRestartFromSpecific, next.RunPolicy)
	d2, err := Decide(ctx, g, next, StartRun{}, t0)
	require.NoError(t, err)
	require.Len(t, stepCommands(d2.Commands), 1)
	rs := d2.Commands[0].(RunStep)
	assert.Equal(t, "call", rs.StepID)
	assert.Equal(t, "override", rs.Params["k"], "a step run param overrides the definition's")
	assert.Equal(t, int64(5), rs.Params["extra"], "a new step run param is added")
	assert.Equal(t, int64(8), rs.Params["m"], "the other params evaluate as defined")

	// An unknown step is refused.
	_, err = RestartStepRun(g, d.State, StepRestart{StepID: "nope"}, t0)
	assert.Error(t, err)

	skip, err := RestartStepRun(g, d.State, StepRestart{StepID: "call", Skip: true}, t0)
	require.NoError(t, err)
	d3, err := Decide(ctx, g, skip, StartRun{}, t0)
	require.NoError(t, err)
	assert.False(t, ranStep(d3.Commands, "call"), "a skipped step runs nothing")
	assert.Equal(t, model.StepSkipped, d3.State.Step("call").Status)
	assert.Equal(t, SkippedByUser, d3.State.Step("call").Message)
	assert.False(t, d3.State.Step("call").SkipOnStart, "the skip is spent")
	assert.Equal(t, model.StepSucceeded, d3.State.Step("last").Status, "the steps after a skipped one run")
	assert.Equal(t, model.WorkflowSucceeded, d3.State.Status)
}

// TestRestartStepActionWithParams: a RESTART action in a run in progress
// carries its step run params to the new attempt only; a skip restart ends
// the new attempt SKIPPED and the successors run.
func TestRestartStepActionWithParams(t *testing.T) {
	ctx := context.Background()
	wf := restartStepWorkflow()
	wf.Steps = append(wf.Steps, model.Step{Kind: model.KindStep, ID: "nap", Type: model.StepSleep, Params: params("sleep_seconds", literal(model.TypeLong, int64(60)))})
	g, d := startRun(t, wf)
	d, err := Decide(ctx, g, d.State, StepFinished{StepID: "call", Attempt: 1, Outcome: OutcomeFatalError}, t0)
	require.NoError(t, err)
	require.Equal(t, model.WorkflowInProgress, d.State.Status)

	over := params("k", literal(model.TypeString, "again"))
	d, err = Decide(ctx, g, d.State, Action{StepID: "call", Action: "restart", Restart: &StepRestart{StepID: "call", Params: &over}}, t0)
	require.NoError(t, err)
	cmds := stepCommands(d.Commands)
	require.Len(t, cmds, 1)
	rs := cmds[0].(RunStep)
	assert.Equal(t, int64(2), rs.Attempt)
	assert.Equal(t, "again", rs.Params["k"])

	d, err = Decide(ctx, g, d.State, StepFinished{StepID: "call", Attempt: 2, Outcome: OutcomeFatalError}, t0)
	require.NoError(t, err)
	d, err = Decide(ctx, g, d.State, Action{StepID: "call", Action: "restart", Restart: &StepRestart{StepID: "call", Skip: true}}, t0)
	require.NoError(t, err)
	assert.False(t, ranStep(d.Commands, "call"), "a skipped step runs nothing")
	call := d.State.Step("call")
	assert.Equal(t, int64(3), call.Attempt)
	assert.Equal(t, model.StepSkipped, call.Status)
	assert.Equal(t, model.StepSucceeded, d.State.Step("last").Status)
}

// ranStep reports whether cmds run step id.
func ranStep(cmds []Command, id string) bool {
	for _, c := range cmds {
		if rs, ok := c.(RunStep); ok && rs.StepID == id {
			return true
		}
	}
	return false
}
