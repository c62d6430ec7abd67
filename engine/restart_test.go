package engine

import (
	"context"
	"fmt"
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
	g, d := startRun(t, wf)
	var err error
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
	d3 := restartRun(t, g, d.State, RestartFromBeginning)
	assert.Equal(t, model.StepSucceeded, d3.State.Step("first").Status)
	assert.Zero(t, d3.State.Step("first").FromRun)
}

func TestRestartStepInRunningRun(t *testing.T) {
	ctx := context.Background()
	// a (Http) -> b (NoOp); nap (Sleep) keeps the run going.
	wf := &model.Workflow{ID: "rs", Steps: []model.Step{
		{Kind: model.KindStep, ID: "a", Type: model.StepHTTP, RetryPolicy: noRetries(),
			Transition: model.Transition{Successors: []model.Successor{{StepID: "b"}}}},
		{Kind: model.KindStep, ID: "b", Type: model.StepNoOp},
		{Kind: model.KindStep, ID: "nap", Type: model.StepSleep, Params: params("sleep_seconds", literal(model.TypeLong, int64(60)))},
	}}
	g, d := startRun(t, wf)
	var err error
	d, err = Decide(ctx, g, d.State, StepFinished{StepID: "a", Attempt: 1, Outcome: OutcomeFatalError}, t0)
	require.NoError(t, err)
	require.Equal(t, model.StepFatallyFailed, d.State.Step("a").Status)
	require.Equal(t, model.StepUnsatisfied, d.State.Step("b").Status)
	require.Equal(t, model.WorkflowInProgress, d.State.Status)

	// A step in flight cannot be restarted; RESTART on the ended one can.
	assert.ErrorIs(t, CheckAction(d.State, "nap", "RESTART"), ErrActionNotAllowed)
	require.NoError(t, CheckAction(d.State, "a", "RESTART"))
	require.NoError(t, CheckStepRestart(g, d.State, "a"))
	d, err = Decide(ctx, g, d.State, Action{StepID: "a", Action: "RESTART"}, t0.Add(time.Second))
	require.NoError(t, err)
	a := d.State.Step("a")
	assert.Equal(t, model.StepRunning, a.Status)
	assert.Equal(t, int64(2), a.Attempt, "a restart is a new attempt")
	assert.Equal(t, model.StepNotCreated, d.State.Step("b").Status, "downstream waits for the new attempt")
	rs := stepCommands(d.Commands)[0].(RunStep)
	assert.Equal(t, int64(2), rs.Attempt)

	d, err = Decide(ctx, g, d.State, StepFinished{StepID: "a", Attempt: 2, Outcome: OutcomeSucceeded}, t0.Add(2*time.Second))
	require.NoError(t, err)
	assert.Equal(t, model.StepSucceeded, d.State.Step("b").Status)
	d, err = Decide(ctx, g, d.State, TimerFired{StepID: "nap", Attempt: 1, Purpose: PurposeSleep}, t0.Add(time.Minute))
	require.NoError(t, err)
	assert.Equal(t, model.WorkflowSucceeded, d.State.Status)
}

func TestCheckStepRestartRefusesWhenDownstreamRuns(t *testing.T) {
	ctx := context.Background()
	g, d := startRun(t, chain(2, model.StepHTTP))
	var err error
	d, err = Decide(ctx, g, d.State, StepFinished{StepID: "job.1", Attempt: 1, Outcome: OutcomeSucceeded}, t0)
	require.NoError(t, err)
	require.Equal(t, model.StepRunning, d.State.Step("job.2").Status)
	err = CheckStepRestart(g, d.State, "job.1")
	require.ErrorIs(t, err, ErrActionNotAllowed)
	assert.Contains(t, err.Error(), `"job.2" downstream of it is RUNNING`)
	// Applied anyway (a race), it changes nothing.
	d2, err := Decide(ctx, g, d.State, Action{StepID: "job.1", Action: "RESTART"}, t0)
	require.NoError(t, err)
	assert.Empty(t, d2.Transitions)
}

func TestRestartFromStep(t *testing.T) {
	ctx := context.Background()
	g, d := startRun(t, chain(3, model.StepHTTP))
	var err error
	for i, out := range []Outcome{OutcomeSucceeded, OutcomeSucceeded, OutcomeFatalError} {
		d, err = Decide(ctx, g, d.State, StepFinished{StepID: fmt.Sprintf("job.%d", i+1), Attempt: 1, Outcome: out}, t0)
		require.NoError(t, err)
	}
	require.Equal(t, model.WorkflowFailed, d.State.Status)

	next, err := RestartFromStep(g, d.State, "job.2", t0.Add(time.Minute))
	require.NoError(t, err)
	assert.Equal(t, RunPolicyRestartFromSpecific, next.RunPolicy)
	assert.Equal(t, int64(2), next.RunID)
	assert.Equal(t, model.StepSucceeded, next.Step("job.1").Status)
	assert.Equal(t, int64(1), next.Step("job.1").FromRun)
	assert.Equal(t, model.StepNotCreated, next.Step("job.2").Status, "the step itself runs again although it succeeded")
	assert.Equal(t, model.StepNotCreated, next.Step("job.3").Status)

	d, err = Decide(ctx, g, next, StartRun{}, t0.Add(time.Minute))
	require.NoError(t, err)
	cmds := stepCommands(d.Commands)
	require.Len(t, cmds, 1)
	assert.Equal(t, "job.2", cmds[0].(RunStep).StepID)

	_, err = RestartFromStep(g, d.State, "job.2", t0)
	assert.Error(t, err, "a run in progress is not restarted into a new run")
	_, err = RestartFromStep(g, next, "nope", t0)
	assert.Error(t, err)
}
