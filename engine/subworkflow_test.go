package engine

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/maestro-serverless/maestro/model"
)

// subWorkflow has a subworkflow step "sub" calling child at version
// "latest" with its own param p, then a NoOp "after"; the workflow has a
// param w.
func subWorkflow(sync, explicit *bool) *model.Workflow {
	return &model.Workflow{ID: "parent", Params: params("w", literal(model.TypeString, "wv")), Steps: []model.Step{
		{Kind: model.KindSubworkflow, ID: "sub", Sync: sync, ExplicitParams: explicit,
			Params: params("subworkflow_id", literal(model.TypeString, "child"),
				"subworkflow_version", literal(model.TypeString, "latest"),
				"p", literal(model.TypeLong, int64(7))),
			Transition: model.Transition{Successors: []model.Successor{{StepID: "after", Condition: "true"}}}},
		{Kind: model.KindStep, ID: "after", Type: model.StepNoOp},
	}}
}

func subworkflowStarts(d *Decision) []StartSubworkflow {
	return commandsOf[StartSubworkflow](d.Commands)
}

func ptr[T any](v T) *T { return &v }

func TestSubworkflowStartsItsChildAndFollowsIt(t *testing.T) {
	ctx := context.Background()
	g, err := Compile(subWorkflow(nil, nil), newEvaluator(t))
	require.NoError(t, err)
	st := newInstance(g)
	d, err := Decide(ctx, g, st, StartRun{}, t0)
	require.NoError(t, err)
	starts := subworkflowStarts(d)
	require.Len(t, starts, 1)
	x := starts[0]
	assert.Equal(t, "child", x.WorkflowID)
	assert.Equal(t, "latest", x.Version)
	assert.Equal(t, SubworkflowRequestID(st, "sub", 1), x.RequestID)
	assert.Equal(t, "wv", x.Params["w"], "workflow params pass down")
	assert.Equal(t, int64(7), x.Params["p"], "the step's params pass down")
	assert.NotContains(t, x.Params, SubworkflowIDName)
	assert.NotContains(t, x.Params, SubworkflowVersionName)
	assert.NotContains(t, x.Params, "workflow_id")
	assert.Equal(t, ParentRef{WorkflowID: "parent", InstanceID: 1, RunID: 1, StepID: "sub", Attempt: 1, Depth: 1,
		RootWorkflowID: "parent", RootInstanceID: 1, Subworkflow: true}, x.Parent)
	st = d.State

	// Until its child is reported, the step awaits the (idempotent) start.
	awaited, err := Awaited(ctx, g, st, t0)
	require.NoError(t, err)
	assert.Contains(t, awaited, Command(x))

	child := ChildRef{WorkflowID: "child", InstanceID: 12, RunID: 1, Version: 3}
	d, err = Decide(ctx, g, st, ChildStarted{StepID: "sub", Attempt: 1, Child: child}, t0)
	require.NoError(t, err)
	st = d.State
	require.NotNil(t, st.Step("sub").Child)
	assert.Equal(t, child, *st.Step("sub").Child)
	assert.Equal(t, model.StepRunning, st.Step("sub").Status)
	awaited, err = Awaited(ctx, g, st, t0)
	require.NoError(t, err)
	assert.Empty(t, subworkflowStarts(&Decision{Commands: awaited}), "a known child reports its end itself")

	// A duplicate report changes nothing.
	d, err = Decide(ctx, g, st, ChildStarted{StepID: "sub", Attempt: 1, Child: child}, t0)
	require.NoError(t, err)
	assert.False(t, d.Changed())

	d, err = Decide(ctx, g, st, ChildEnded{StepID: "sub", Attempt: 1, Status: model.WorkflowSucceeded}, t0)
	require.NoError(t, err)
	st = d.State
	assert.Equal(t, model.StepSucceeded, st.Step("sub").Status)
	assert.Equal(t, "subworkflow child instance 12 succeeded", st.Step("sub").Message)
	assert.Equal(t, model.WorkflowSucceeded, st.Status)
	assert.Empty(t, stops(d), "a child that ended is not stopped")
}

func TestSubworkflowParamsAndModes(t *testing.T) {
	ctx := context.Background()
	t.Run("explicit_params passes only the step's params", func(t *testing.T) {
		_, d := startRun(t, subWorkflow(nil, ptr(true)))
		x := subworkflowStarts(d)[0]
		assert.NotContains(t, x.Params, "w")
		assert.Equal(t, int64(7), x.Params["p"])
	})
	t.Run("sync false succeeds once the child has started and never stops it", func(t *testing.T) {
		g, d := startRun(t, subWorkflow(ptr(false), nil))
		var err error
		assert.True(t, subworkflowStarts(d)[0].Parent.Async)
		child := ChildRef{WorkflowID: "child", InstanceID: 4, RunID: 1, Version: 1}
		d, err = Decide(ctx, g, d.State, ChildStarted{StepID: "sub", Attempt: 1, Child: child}, t0)
		require.NoError(t, err)
		assert.Equal(t, model.StepSucceeded, d.State.Step("sub").Status)
		assert.Equal(t, model.WorkflowSucceeded, d.State.Status)
		assert.Empty(t, stops(d))
		// A second delivery of the report, after the run ended, names the
		// step's own child: it is not stopped.
		d, err = Decide(ctx, g, d.State, ChildStarted{StepID: "sub", Attempt: 1, Child: child}, t0)
		require.NoError(t, err)
		assert.Empty(t, stops(d))
	})
	t.Run("a child that cannot start fails the step", func(t *testing.T) {
		g, d := startRun(t, subWorkflow(nil, nil))
		var err error
		d, err = Decide(ctx, g, d.State, ChildStarted{StepID: "sub", Attempt: 1, Error: "cannot start child version latest: workflow child not found"}, t0)
		require.NoError(t, err)
		sub := d.State.Step("sub")
		assert.Equal(t, model.StepFatallyFailed, sub.Status)
		assert.Equal(t, "subworkflow: cannot start child version latest: workflow child not found", sub.Message)
		assert.Equal(t, model.WorkflowFailed, d.State.Status)
	})
	t.Run("the step ends as its child did", func(t *testing.T) {
		for status, want := range map[model.WorkflowStatus]model.StepStatus{
			model.WorkflowFailed: model.StepFatallyFailed, model.WorkflowTimedOut: model.StepTimedOut, model.WorkflowStopped: model.StepStopped,
		} {
			g, d := startRun(t, subWorkflow(nil, nil))
			var err error
			d, err = Decide(ctx, g, d.State, ChildStarted{StepID: "sub", Attempt: 1, Child: ChildRef{WorkflowID: "child", InstanceID: 2, RunID: 1}}, t0)
			require.NoError(t, err)
			d, err = Decide(ctx, g, d.State, ChildEnded{StepID: "sub", Attempt: 1, Status: status, Message: "why"}, t0)
			require.NoError(t, err)
			assert.Equal(t, want, d.State.Step("sub").Status, status)
			assert.Empty(t, stops(d))
		}
	})
	t.Run("depth limit", func(t *testing.T) {
		g, err := Compile(subWorkflow(nil, nil), newEvaluator(t))
		require.NoError(t, err)
		st := newInstance(g)
		st.Parent = &ParentRef{WorkflowID: "up", InstanceID: 1, RunID: 1, StepID: "s", Attempt: 1, Depth: model.WorkflowDepthLimit, Subworkflow: true}
		d, err := Decide(ctx, g, st, StartRun{}, t0)
		require.NoError(t, err)
		assert.Empty(t, subworkflowStarts(d))
		assert.Equal(t, model.StepFatallyFailed, d.State.Step("sub").Status)
		assert.Contains(t, d.State.Step("sub").Message, "nesting deeper than the limit of 10 levels")
	})
}

func TestSubworkflowStopsReachTheChild(t *testing.T) {
	ctx := context.Background()
	g, d := startRun(t, subWorkflow(nil, nil))
	running := d.State

	t.Run("a kill of the run kills the child it follows", func(t *testing.T) {
		d, err := Decide(ctx, g, running, ChildStarted{StepID: "sub", Attempt: 1, Child: ChildRef{WorkflowID: "child", InstanceID: 9, RunID: 1}}, t0)
		require.NoError(t, err)
		d, err = Decide(ctx, g, d.State, Action{Action: string(model.WorkflowActionKill)}, t0)
		require.NoError(t, err)
		assert.Equal(t, model.WorkflowFailed, d.State.Status)
		assert.Equal(t, []StopChild{{WorkflowID: "child", InstanceID: 9, Action: "KILL",
			Reason: `its subworkflow step "sub", which ended FATALLY_FAILED`}}, stops(d))
	})
	t.Run("a child reported after the run stopped is stopped", func(t *testing.T) {
		d, err := Decide(ctx, g, running, Action{Action: string(model.WorkflowActionStop)}, t0)
		require.NoError(t, err)
		assert.Empty(t, stops(d), "no child known yet")
		d, err = Decide(ctx, g, d.State, ChildStarted{StepID: "sub", Attempt: 1, Child: ChildRef{WorkflowID: "child", InstanceID: 5, RunID: 1}}, t0)
		require.NoError(t, err)
		require.Len(t, stops(d), 1)
		assert.Equal(t, int64(5), stops(d)[0].InstanceID)
		assert.Equal(t, "STOP", stops(d)[0].Action)
	})
}

func TestSubworkflowEndReportedBeforeItsStart(t *testing.T) {
	ctx := context.Background()
	g, d := startRun(t, subWorkflow(nil, nil))
	var err error
	// A child that runs to its end inside its start request reports its
	// end first; the end names it.
	child := ChildRef{WorkflowID: "child", InstanceID: 3, RunID: 1, Version: 2}
	d, err = Decide(ctx, g, d.State, ChildEnded{StepID: "sub", Attempt: 1, Status: model.WorkflowSucceeded, Child: &child}, t0)
	require.NoError(t, err)
	assert.Equal(t, model.StepSucceeded, d.State.Step("sub").Status)
	assert.Equal(t, int64(3), d.State.Step("sub").Child.InstanceID)
	// The start report that follows names the same child: nothing to stop.
	d, err = Decide(ctx, g, d.State, ChildStarted{StepID: "sub", Attempt: 1, Child: child}, t0)
	require.NoError(t, err)
	assert.Empty(t, stops(d))
}

func TestSubworkflowRestartFromIncompleteRestartsTheFailedChild(t *testing.T) {
	ctx := context.Background()
	g, d := startRun(t, subWorkflow(nil, nil))
	var err error
	child := ChildRef{WorkflowID: "child", InstanceID: 6, RunID: 1, Version: 2, UUID: "u"}
	d, err = Decide(ctx, g, d.State, ChildStarted{StepID: "sub", Attempt: 1, Child: child}, t0)
	require.NoError(t, err)
	d, err = Decide(ctx, g, d.State, ChildEnded{StepID: "sub", Attempt: 1, Status: model.WorkflowFailed}, t0)
	require.NoError(t, err)
	require.Equal(t, model.WorkflowFailed, d.State.Status)

	d = restartRun(t, g, d.State, RestartFromIncomplete)
	starts := subworkflowStarts(d)
	require.Len(t, starts, 1)
	assert.Equal(t, &child, starts[0].Restart, "the same instance, restarted")
	assert.Equal(t, int64(2), starts[0].Parent.RunID)
	// Its report (run 2 of the instance) replaces the redo.
	restarted := child
	restarted.RunID = 2
	d, err = Decide(ctx, g, d.State, ChildStarted{StepID: "sub", Attempt: starts[0].Attempt, Child: restarted}, t0)
	require.NoError(t, err)
	assert.Nil(t, d.State.Step("sub").RedoChild)
	assert.Equal(t, int64(2), d.State.Step("sub").Child.RunID)

	// RESTART_FROM_BEGINNING starts a new instance.
	d, err = Decide(ctx, g, d.State, ChildEnded{StepID: "sub", Attempt: starts[0].Attempt, Status: model.WorkflowSucceeded}, t0)
	require.NoError(t, err)
	require.Equal(t, model.WorkflowSucceeded, d.State.Status)
	d = restartRun(t, g, d.State, RestartFromBeginning)
	require.Len(t, subworkflowStarts(d), 1)
	assert.Nil(t, subworkflowStarts(d)[0].Restart)
}
