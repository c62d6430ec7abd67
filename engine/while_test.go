package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/maestro-serverless/maestro/model"
)

// whileWorkflow is sample-while-wf's shape: a while step over i (LONG,
// from start) with the given condition, whose body's job.1 sets i = i+1,
// followed by a NoOp.
func whileWorkflow(cond string, start int64, mode model.FailureMode) *model.Workflow {
	loop := params("i", &model.ParamDefinition{Type: model.TypeLong, Value: start, HasValue: true})
	return &model.Workflow{ID: "whiles", Steps: []model.Step{
		{Kind: model.KindWhile, ID: "loop", Condition: cond, FailureMode: mode,
			Params: params("loop_params", &model.ParamDefinition{Type: model.TypeMap, Value: loop.Defs, HasValue: true}),
			Steps: []model.Step{{Kind: model.KindStep, ID: "job.1", Type: model.StepNoOp,
				Params: params("i", expr(model.TypeLong, "i+1"))}},
			Transition: model.Transition{Successors: []model.Successor{{StepID: "after", Condition: "true"}}}},
		{Kind: model.KindStep, ID: "after", Type: model.StepNoOp},
	}}
}

func startedChildren(d *Decision) []StartChild { return commandsOf[StartChild](d.Commands) }

func TestWhileRunsOneIterationAtATimeUntilItsConditionIsFalse(t *testing.T) {
	ctx := context.Background()
	g, d := startRun(t, whileWorkflow("i <= 20200105", 20200101, ""))
	var err error
	st := d.State
	var creates int
	for _, c := range d.Commands {
		if cl, ok := c.(CreateLoop); ok {
			creates++
			assert.True(t, cl.While)
			assert.Equal(t, st.Step("loop").Loop.WorkflowID, cl.WorkflowID)
		}
	}
	assert.Equal(t, 1, creates, "the inline workflow is created once, with the first iteration")
	var seen []any
	for n := int64(0); ; n++ {
		sc := startedChildren(d)
		if st.Step("loop").Status != model.StepRunning {
			assert.Empty(t, sc)
			break
		}
		require.Len(t, sc, 1, "iteration %d", n)
		c := sc[0]
		assert.Equal(t, n, c.Index)
		assert.Equal(t, "WHILE", c.Initiator)
		assert.Equal(t, []string{"i"}, c.Parent.Feedback)
		assert.Equal(t, n, c.Params[LoopIndexName])
		assert.Equal(t, true, c.Params[WhileConditionName])
		assert.NotContains(t, c.Params, LoopParamsName)
		assert.True(t, strings.HasPrefix(c.WorkflowID, model.InlineWhilePrefix), c.WorkflowID)
		seen = append(seen, c.Params["i"])
		// The iteration's job.1 computes i+1 and reports it back.
		d, err = Decide(ctx, g, st, ChildEnded{StepID: "loop", Attempt: 1, Index: n, Status: model.WorkflowSucceeded,
			Feedback: Values{"i": c.Params["i"].(int64) + 1}}, t0)
		require.NoError(t, err)
		st = d.State
		require.Less(t, n, int64(10), "the loop does not stop")
	}
	assert.Equal(t, []any{int64(20200101), int64(20200102), int64(20200103), int64(20200104), int64(20200105)}, seen)
	loop := st.Step("loop")
	assert.Equal(t, model.StepSucceeded, loop.Status, loop.Message)
	assert.Equal(t, "while: condition false after 5 iterations", loop.Message)
	assert.Equal(t, model.StepSucceeded, st.Step("after").Status)
	assert.Equal(t, model.WorkflowSucceeded, st.Status)
	sum := loop.Loop.Summary()
	assert.Equal(t, int64(5), sum.Total)
	assert.Equal(t, Values{"i": int64(20200106)}, sum.LoopParams)
	assert.Empty(t, sum.WorkflowID)
	assert.Equal(t, loop.Loop.WorkflowID, sum.WhileID)

	// A duplicate report changes nothing.
	d, err = Decide(ctx, g, st, ChildEnded{StepID: "loop", Attempt: 1, Index: 4, Status: model.WorkflowSucceeded}, t0)
	require.NoError(t, err)
	assert.False(t, d.Changed())
}

func TestWhileEndsByItsIterations(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		cond   string
		ends   []model.WorkflowStatus
		step   model.StepStatus
		run    model.WorkflowStatus
		starts int64
		msg    string
	}{
		{"false at once: an empty loop succeeds", "i < 0", nil, model.StepSucceeded, model.WorkflowSucceeded, 0, "while: condition false after 0 iterations"},
		{"a failed iteration fails the step", "true", []model.WorkflowStatus{"SUCCEEDED", "FAILED"}, model.StepFatallyFailed, model.WorkflowFailed, 2, "while: iteration 2 failed: boom"},
		{"a timed-out iteration times the step out", "true", []model.WorkflowStatus{"TIMED_OUT"}, model.StepTimedOut, model.WorkflowFailed, 1, "while: iteration 1 timed out"},
		{"a stopped iteration stops the step", "true", []model.WorkflowStatus{"STOPPED"}, model.StepStopped, model.WorkflowStopped, 1, "while: iteration 1 was stopped"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, d := startRun(t, whileWorkflow(tt.cond, 1, ""))
			var err error
			st := d.State
			if tt.ends == nil {
				for _, c := range d.Commands {
					_, create := c.(CreateLoop)
					assert.False(t, create, "an empty loop creates no inline workflow")
				}
			}
			for idx, status := range tt.ends {
				d, err = Decide(ctx, g, st, ChildEnded{StepID: "loop", Attempt: 1, Index: int64(idx), Status: status, Message: "boom"}, t0)
				require.NoError(t, err)
				st = d.State
			}
			loop := st.Step("loop")
			assert.Equal(t, tt.step, loop.Status)
			assert.Equal(t, tt.msg, loop.Message)
			assert.Equal(t, tt.run, st.Status)
			assert.Equal(t, tt.starts, loop.Loop.Next)
		})
	}
}

func TestWhileConditionErrorsFailTheStep(t *testing.T) {
	// A condition that does not compile (unknown name) fails the step
	// when it runs, naming the problem.
	_, d := startRun(t, whileWorkflow("nope > 1", 1, ""))
	loop := d.State.Step("loop")
	assert.Equal(t, model.StepFatallyFailed, loop.Status)
	assert.Contains(t, loop.Message, "while: ")
	assert.Contains(t, loop.Message, "nope")
}

func TestWhileResumesAfterTheStartBudget(t *testing.T) {
	ctx := context.Background()
	g, err := Compile(whileWorkflow("true", 1, ""), newEvaluator(t))
	require.NoError(t, err)
	// A budget of one start is spent by the while step itself: its first
	// iteration goes on in the Continue decision.
	d, err := Decide(ctx, g, newInstance(g), StartRun{}, t0, WithMaxStarts(1))
	require.NoError(t, err)
	assert.True(t, d.Continue)
	assert.Empty(t, startedChildren(d))
	d, err = Decide(ctx, g, d.State, Continue{}, t0, WithMaxStarts(10))
	require.NoError(t, err)
	require.Len(t, startedChildren(d), 1)
	assert.Equal(t, int64(0), startedChildren(d)[0].Index)
	// While the iteration runs, a Continue launches nothing more.
	d, err = Decide(ctx, g, d.State, Continue{}, t0, WithMaxStarts(10))
	require.NoError(t, err)
	assert.Empty(t, startedChildren(d))
}

// TestWhileIterationReportsItsLoopParams: a child run whose parent names
// loop params reports, when it succeeds, the value of each as the last
// step to set it, in creation order, gives it.
func TestWhileIterationReportsItsLoopParams(t *testing.T) {
	ctx := context.Background()
	wf := &model.Workflow{ID: "body", Steps: []model.Step{
		{Kind: model.KindStep, ID: "a", Type: model.StepNoOp, Params: params("i", expr(model.TypeLong, "i+1")),
			Transition: model.Transition{Successors: []model.Successor{{StepID: "b", Condition: "true"}}}},
		{Kind: model.KindStep, ID: "b", Type: model.StepNoOp, Params: params("i", expr(model.TypeLong, "a__i * 10"))},
	}, Params: params("i", &model.ParamDefinition{Type: model.TypeLong, Value: int64(1), HasValue: true})}
	g, err := Compile(wf, newEvaluator(t))
	require.NoError(t, err)
	st := newInstance(g)
	st.Parent = &ParentRef{WorkflowID: "p", InstanceID: 1, RunID: 1, StepID: "loop", Attempt: 1, Depth: 1, Feedback: []string{"i", "j"}}
	d, err := Decide(ctx, g, st, StartRun{}, t0)
	require.NoError(t, err)
	assert.Equal(t, model.WorkflowSucceeded, d.State.Status)
	assert.Equal(t, Values{"i": int64(20)}, d.State.Feedback)

	// A run with no parent, or a foreach iteration, reports nothing.
	d, err = Decide(ctx, g, newInstance(g), StartRun{}, t0)
	require.NoError(t, err)
	assert.Nil(t, d.State.Feedback)
}

func TestWhileRestartFromIncompleteGoesOnFromTheFailedIteration(t *testing.T) {
	ctx := context.Background()
	g, d := startRun(t, whileWorkflow("i < 5", 1, ""))
	var err error
	st := d.State
	inline := st.Step("loop").Loop.WorkflowID
	// i = 1 and 2 succeed (feeding back 2 and 3), i = 3 fails.
	for idx, status := range []model.WorkflowStatus{model.WorkflowSucceeded, model.WorkflowSucceeded, model.WorkflowFailed} {
		i := int64(idx) + 1
		d, err = Decide(ctx, g, st, ChildEnded{StepID: "loop", Attempt: 1, Index: int64(idx), Status: status, Feedback: Values{"i": i + 1}}, t0)
		require.NoError(t, err)
		st = d.State
	}
	require.Equal(t, model.WorkflowFailed, st.Status)

	d = restartRun(t, g, st, RestartFromIncomplete)
	rs := restarts(d)
	require.Len(t, rs, 1, "the failed third iteration runs again")
	assert.Equal(t, int64(2), rs[0].Index)
	assert.Equal(t, inline, rs[0].WorkflowID)
	assert.Equal(t, int64(3), rs[0].Params["i"], "with the values it started with")
	assert.Equal(t, []string{"i"}, rs[0].Parent.Feedback)
	assert.Empty(t, startedChildren(d))
	st = d.State
	a := st.Step("loop").Attempt
	d, err = Decide(ctx, g, st, ChildEnded{StepID: "loop", Attempt: a, Index: 2, Status: model.WorkflowSucceeded, Feedback: Values{"i": int64(4)}}, t0)
	require.NoError(t, err)
	sc := startedChildren(d)
	require.Len(t, sc, 1, "then the loop goes on")
	assert.Equal(t, int64(3), sc[0].Index)
	assert.Equal(t, int64(4), sc[0].Params["i"])
	d, err = Decide(ctx, g, d.State, ChildEnded{StepID: "loop", Attempt: a, Index: 3, Status: model.WorkflowSucceeded, Feedback: Values{"i": int64(5)}}, t0)
	require.NoError(t, err)
	loop := d.State.Step("loop")
	assert.Equal(t, model.StepSucceeded, loop.Status, loop.Message)
	assert.Equal(t, int64(4), loop.Loop.Counts[model.WorkflowSucceeded])
	assert.Zero(t, loop.Loop.Counts[model.WorkflowFailed])
	assert.Equal(t, model.WorkflowSucceeded, d.State.Status)
}
