package engine

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/maestro-serverless/maestro/model"
)

func restarts(d *Decision) []RestartChild { return commandsOf[RestartChild](d.Commands) }

func TestForeachRestartFromIncompleteRunsOnlyTheIterationsThatDidNotSucceed(t *testing.T) {
	ctx := context.Background()
	// A FAILED foreach (FAIL_AFTER_RUNNING, all 6 launched at once):
	// iterations 1 and 4 fail.
	g, d := startRun(t, loopWorkflow(6, 6, model.FailAfterRunning))
	var err error
	st := d.State
	inline := st.Step("loop").Loop.WorkflowID
	for _, idx := range []int64{0, 1, 2, 3, 4, 5} {
		status := model.WorkflowSucceeded
		if idx == 1 || idx == 4 {
			status = model.WorkflowFailed
		}
		d, err = Decide(ctx, g, st, ChildEnded{StepID: "loop", Attempt: 1, Index: idx, Status: status}, t0)
		require.NoError(t, err)
		st = d.State
	}
	require.Equal(t, model.WorkflowFailed, st.Status)
	assert.Equal(t, []int64{1, 4}, st.Step("loop").Loop.Failed)

	next, err := RestartState(st, RestartFromIncomplete, t0)
	require.NoError(t, err)
	assert.Equal(t, &LoopRedo{WorkflowID: inline, Total: 6, Ran: 6, Indices: []int64{1, 4}}, next.Step("loop").Redo)
	d, err = Decide(ctx, g, next, StartRun{}, t0)
	require.NoError(t, err)
	st = d.State
	loop := st.Step("loop")
	for _, c := range d.Commands {
		switch c.(type) {
		case CreateLoop, StartChild:
			t.Fatalf("a restarted loop creates no inline workflow and starts no fresh iteration: %#v", c)
		}
	}
	rs := restarts(d)
	require.Len(t, rs, 2)
	assert.Equal(t, []int64{1, 4}, []int64{rs[0].Index, rs[1].Index})
	assert.Equal(t, inline, rs[0].WorkflowID, "the same iterations, run again")
	assert.Equal(t, loop.Attempt, rs[0].Parent.Attempt)
	assert.Equal(t, int64(2), rs[0].Parent.RunID)
	assert.Equal(t, int64(1), rs[0].Params["i"], "the iteration's params")
	assert.Equal(t, int64(4), loop.Loop.Counts[model.WorkflowSucceeded])
	assert.Nil(t, loop.Redo)

	for _, idx := range []int64{4, 1} {
		d, err = Decide(ctx, g, st, ChildEnded{StepID: "loop", Attempt: loop.Attempt, Index: idx, Status: model.WorkflowSucceeded}, t0)
		require.NoError(t, err)
		st = d.State
	}
	assert.Equal(t, model.StepSucceeded, st.Step("loop").Status, st.Step("loop").Message)
	assert.Equal(t, int64(6), st.Step("loop").Loop.Counts[model.WorkflowSucceeded])
	assert.Equal(t, model.WorkflowSucceeded, st.Status)

	// RESTART_FROM_BEGINNING runs the loop afresh.
	d = restartRun(t, g, st, RestartFromBeginning)
	assert.Len(t, started(d), 6)
	assert.NotEqual(t, inline, d.State.Step("loop").Loop.WorkflowID)
}

func TestForeachRestartAfterAKillRunsTheStoppedAndTheUnlaunchedIterations(t *testing.T) {
	ctx := context.Background()
	g, d := startRun(t, loopWorkflow(5, 2, ""))
	var err error
	d, err = Decide(ctx, g, d.State, ChildEnded{StepID: "loop", Attempt: 1, Index: 0, Status: model.WorkflowSucceeded}, t0)
	require.NoError(t, err)
	// Iterations 1 and 2 run, 3 and 4 are not launched: the kill stops 1, 2.
	d, err = Decide(ctx, g, d.State, Action{Action: string(model.WorkflowActionKill)}, t0)
	require.NoError(t, err)
	st := d.State
	require.Equal(t, model.WorkflowFailed, st.Status)
	next, err := RestartState(st, RestartFromIncomplete, t0)
	require.NoError(t, err)
	assert.Equal(t, []int64{1, 2}, next.Step("loop").Redo.Indices)
	assert.Equal(t, int64(3), next.Step("loop").Redo.Ran)
	d, err = Decide(ctx, g, next, StartRun{}, t0)
	require.NoError(t, err)
	// Concurrency 2: the two stopped ones again first.
	assert.Len(t, restarts(d), 2)
	assert.Empty(t, started(d))
	st = d.State
	a := st.Step("loop").Attempt
	d, err = Decide(ctx, g, st, ChildEnded{StepID: "loop", Attempt: a, Index: 2, Status: model.WorkflowSucceeded}, t0)
	require.NoError(t, err)
	assert.Equal(t, []int64{3}, started(d), "then the ones never launched")
}

func TestRestartOneIteration(t *testing.T) {
	ctx := context.Background()
	g, d := startRun(t, loopWorkflow(4, 4, model.FailAfterRunning))
	var err error
	st := d.State
	// Iterations 0 and 2 fail, 1 and 3 succeed.
	for idx, status := range []model.WorkflowStatus{model.WorkflowFailed, model.WorkflowSucceeded, model.WorkflowFailed, model.WorkflowSucceeded} {
		d, err = Decide(ctx, g, st, ChildEnded{StepID: "loop", Attempt: 1, Index: int64(idx), Status: status}, t0)
		require.NoError(t, err)
		st = d.State
	}
	require.Equal(t, model.WorkflowFailed, st.Status)

	// Restart iteration 3 (index 2): only it runs again; iteration 1 keeps
	// its failure, so the loop fails again.
	next, err := RestartIteration(g, st, "loop", 2, model.WorkflowFailed, "", t0, nil)
	require.NoError(t, err)
	d, err = Decide(ctx, g, next, StartRun{}, t0)
	require.NoError(t, err)
	rs := restarts(d)
	require.Len(t, rs, 1)
	assert.Equal(t, int64(2), rs[0].Index)
	assert.Empty(t, started(d))
	loop := d.State.Step("loop")
	d, err = Decide(ctx, g, d.State, ChildEnded{StepID: "loop", Attempt: loop.Attempt, Index: 2, Status: model.WorkflowSucceeded}, t0)
	require.NoError(t, err)
	st2 := d.State
	assert.Equal(t, model.StepFatallyFailed, st2.Step("loop").Status, "iteration 1 still failed")
	assert.Equal(t, map[model.WorkflowStatus]int64{model.WorkflowFailed: 1, model.WorkflowSucceeded: 3}, st2.Step("loop").Loop.Counts)
	assert.Equal(t, []int64{0}, st2.Step("loop").Loop.Failed)

	// Then iteration 1 (index 0): the loop succeeds, and the step after it runs.
	next, err = RestartIteration(g, st2, "loop", 0, model.WorkflowFailed, RestartFromBeginning, t0, nil)
	require.NoError(t, err)
	d, err = Decide(ctx, g, next, StartRun{}, t0)
	require.NoError(t, err)
	require.Len(t, restarts(d), 1)
	assert.Equal(t, RestartFromBeginning, restarts(d)[0].Policy)
	loop = d.State.Step("loop")
	d, err = Decide(ctx, g, d.State, ChildEnded{StepID: "loop", Attempt: loop.Attempt, Index: 0, Status: model.WorkflowSucceeded}, t0)
	require.NoError(t, err)
	assert.Equal(t, model.StepSucceeded, d.State.Step("loop").Status)
	assert.Equal(t, model.StepSucceeded, d.State.Step("after").Status)
	assert.Equal(t, model.WorkflowSucceeded, d.State.Status)

	// An iteration restarted for one inner iteration of its own: the
	// relaunch carries the inner restart, once, and no policy of its own
	// matters.
	inner := &InnerRestart{StepID: "innerloop", Index: 4, Was: model.WorkflowFailed, Policy: RestartFromBeginning}
	next, err = RestartIteration(g, st, "loop", 2, model.WorkflowFailed, "", t0, inner)
	require.NoError(t, err)
	assert.Equal(t, inner, next.Step("loop").Redo.Inner)
	d, err = Decide(ctx, g, next, StartRun{}, t0)
	require.NoError(t, err)
	require.Len(t, restarts(d), 1)
	assert.Equal(t, inner, restarts(d)[0].Inner)
	assert.Nil(t, d.State.Step("loop").Loop.PendingInner, "handed to the relaunch")

	_, err = RestartIteration(g, st, "loop", 9, model.WorkflowFailed, "", t0, nil)
	assert.ErrorContains(t, err, "never launched iteration 10")
	_, err = RestartIteration(g, st, "after", 0, model.WorkflowFailed, "", t0, nil)
	assert.ErrorContains(t, err, "not a foreach step")
}
