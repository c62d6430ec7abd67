package engine

import (
	"context"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/maestro-serverless/maestro/model"
)

// loopWorkflow has a foreach step over i in 0..n-1 with the given
// concurrency and failure mode, followed by a NoOp.
func loopWorkflow(n int, concurrency int64, mode model.FailureMode) *model.Workflow {
	loop := params("i", expr(model.TypeLongArray, "Util.intsBetween(0, "+itoa(n)+", 1)"))
	return &model.Workflow{ID: "loops", Steps: []model.Step{
		{Kind: model.KindForeach, ID: "loop", Concurrency: &concurrency, FailureMode: mode,
			Params:     params("loop_params", &model.ParamDefinition{Type: model.TypeMap, Value: loop.Defs, HasValue: true}),
			Steps:      []model.Step{{Kind: model.KindStep, ID: "body", Type: model.StepNoOp}},
			Transition: model.Transition{Successors: []model.Successor{{StepID: "after", Condition: "true"}}}},
		{Kind: model.KindStep, ID: "after", Type: model.StepNoOp},
	}}
}

func itoa(n int) string { return strconv.Itoa(n) }

func started(d *Decision) []int64 {
	var out []int64
	for _, c := range d.Commands {
		if sc, ok := c.(StartChild); ok {
			out = append(out, sc.Index)
		}
	}
	return out
}

func stops(d *Decision) []StopChild { return commandsOf[StopChild](d.Commands) }

func TestForeachLaunchesWithinConcurrencyAndEndsWithItsIterations(t *testing.T) {
	g, err := Compile(loopWorkflow(5, 2, ""), newEvaluator(t))
	require.NoError(t, err)
	ctx := context.Background()
	d, err := Decide(ctx, g, newInstance(g), StartRun{}, t0)
	require.NoError(t, err)
	assert.Equal(t, []int64{0, 1}, started(d))
	st := d.State
	end := func(idx int64, status model.WorkflowStatus) *Decision {
		t.Helper()
		d, err := Decide(ctx, g, st, ChildEnded{StepID: "loop", Attempt: 1, Index: idx, Status: status}, t0)
		require.NoError(t, err)
		st = d.State
		return d
	}
	assert.Equal(t, []int64{2}, started(end(0, model.WorkflowSucceeded)))
	// A duplicate report changes nothing.
	assert.False(t, end(0, model.WorkflowSucceeded).Changed())
	assert.Equal(t, []int64{3}, started(end(2, model.WorkflowSucceeded)))
	assert.Equal(t, []int64{4}, started(end(1, model.WorkflowSucceeded)))
	assert.Empty(t, started(end(3, model.WorkflowSucceeded)))
	assert.Equal(t, model.StepRunning, st.Step("loop").Status)
	end(4, model.WorkflowSucceeded)
	assert.Equal(t, model.StepSucceeded, st.Step("loop").Status)
	assert.Equal(t, model.StepSucceeded, st.Step("after").Status)
	assert.Equal(t, model.WorkflowSucceeded, st.Status)
	assert.Equal(t, int64(5), st.Step("loop").Loop.Counts[model.WorkflowSucceeded])
}

func TestForeachFailureModesAndStatusOrder(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name     string
		mode     model.FailureMode
		ends     []model.WorkflowStatus // of iterations 0, 1, 2 in order
		step     model.StepStatus
		run      model.WorkflowStatus
		launched int64
		stopped  int
	}{
		{"all succeed", "", []model.WorkflowStatus{"SUCCEEDED", "SUCCEEDED", "SUCCEEDED", "SUCCEEDED"}, model.StepSucceeded, model.WorkflowSucceeded, 4, 0},
		{"FAIL_AFTER_RUNNING waits for the running ones, launches no more", model.FailAfterRunning, []model.WorkflowStatus{"FAILED", "SUCCEEDED", "SUCCEEDED"}, model.StepFatallyFailed, model.WorkflowFailed, 3, 0},
		{"IGNORE_FAILURE completes with error", model.IgnoreFailure, []model.WorkflowStatus{"SUCCEEDED", "FAILED", "SUCCEEDED", "SUCCEEDED"}, model.StepCompletedWithError, model.WorkflowSucceeded, 4, 0},
		{"FAIL_IMMEDIATELY kills the running ones", model.FailImmediately, []model.WorkflowStatus{"FAILED"}, model.StepFatallyFailed, model.WorkflowFailed, 3, 2},
		{"TIMED_OUT over STOPPED", "", []model.WorkflowStatus{"STOPPED", "TIMED_OUT", "SUCCEEDED", "SUCCEEDED"}, model.StepTimedOut, model.WorkflowFailed, 4, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, d := startRun(t, loopWorkflow(4, 3, tt.mode))
			var err error
			st := d.State
			var nstops int
			for idx, status := range tt.ends {
				d, err = Decide(ctx, g, st, ChildEnded{StepID: "loop", Attempt: 1, Index: int64(idx), Status: status}, t0)
				require.NoError(t, err)
				st = d.State
				nstops += len(stops(d))
			}
			loop := st.Step("loop")
			assert.Equal(t, tt.step, loop.Status, loop.Message)
			assert.Equal(t, tt.run, st.Status)
			assert.Equal(t, tt.launched, loop.Loop.Next)
			assert.Equal(t, tt.stopped, nstops)
		})
	}
}

func TestForeachStopsItsIterationsAFewPerDecision(t *testing.T) {
	ctx := context.Background()
	g, d := startRun(t, loopWorkflow(60, 60, ""))
	var err error
	require.Len(t, started(d), 60)
	d, err = Decide(ctx, g, d.State, Action{Action: string(model.WorkflowActionKill)}, t0, WithMaxEnds(25))
	require.NoError(t, err)
	assert.Equal(t, model.WorkflowFailed, d.State.Status)
	seen := map[int64]bool{}
	for round := 0; ; round++ {
		require.Less(t, round, 5)
		s := stops(d)
		assert.LessOrEqual(t, len(s), 25)
		for _, c := range s {
			assert.Equal(t, "KILL", c.Action)
			assert.False(t, seen[c.InstanceID], "iteration %d stopped twice", c.InstanceID)
			seen[c.InstanceID] = true
		}
		if !d.Continue {
			break
		}
		d, err = Decide(ctx, g, d.State, Continue{}, t0, WithMaxEnds(25))
		require.NoError(t, err)
	}
	assert.Len(t, seen, 60)
	assert.Empty(t, d.State.ChildStops)
}

func TestForeachLoopParams(t *testing.T) {
	ctx := context.Background()
	// Two loop params: the first varies fastest, as in Maestro.
	lp := model.Params{Names: []string{"i", "j"}, Defs: map[string]*model.ParamDefinition{
		"i": literal(model.TypeLongArray, []int64{1, 2, 3}),
		"j": literal(model.TypeStringArray, []string{"a", "b"}),
	}}
	wf := &model.Workflow{ID: "pairs", Steps: []model.Step{{Kind: model.KindForeach, ID: "loop",
		Params: params("loop_params", &model.ParamDefinition{Type: model.TypeMap, Value: lp.Defs, HasValue: true, Keys: lp.Names}),
		Steps:  []model.Step{{Kind: model.KindStep, ID: "body", Type: model.StepNoOp}}}}}
	g, d := startRun(t, wf)
	var err error
	var pairs []string
	for _, c := range d.Commands {
		if sc, ok := c.(StartChild); ok {
			pairs = append(pairs, sc.Params["j"].(string)+itoa(int(sc.Params["i"].(int64))))
		}
	}
	assert.Equal(t, []string{"a1", "a2", "a3", "b1", "b2", "b3"}, pairs)

	// A loop param that is not an array fails the step, naming it.
	bad := model.Params{Names: []string{"k"}, Defs: map[string]*model.ParamDefinition{"k": literal(model.TypeLong, int64(3))}}
	wf.Steps[0].Params = params("loop_params", &model.ParamDefinition{Type: model.TypeMap, Value: bad.Defs, HasValue: true, Keys: bad.Names})
	g, err = Compile(wf, newEvaluator(t))
	require.NoError(t, err)
	d, err = Decide(ctx, g, newInstance(g), StartRun{}, t0)
	require.NoError(t, err)
	assert.Equal(t, model.StepFatallyFailed, d.State.Step("loop").Status)
	assert.Contains(t, d.State.Step("loop").Message, `loop param "k" is LONG, want an array`)
}

func TestAParentsStopDetachesTheChild(t *testing.T) {
	ctx := context.Background()
	wf := &model.Workflow{ID: "child", Steps: []model.Step{{Kind: model.KindStep, ID: "nap", Type: model.StepSleep}}}
	g, d := startRun(t, wf)
	for _, fromParent := range []bool{false, true} {
		s, err := Decide(ctx, g, d.State, Action{Action: "STOP", FromParent: fromParent}, t0)
		require.NoError(t, err)
		assert.Equal(t, model.WorkflowStopped, s.State.Status)
		assert.Equal(t, fromParent, s.State.ParentGone, "a stop from the parent detaches the child; a user's does not")
	}
}

// TestIterationStartBudget: WithIterationStarts prices an iteration against
// WithMaxStarts (the foreach step's own start counts 1); a plain budget lets
// one iteration through in a decision that started nothing else whatever
// its price, a strict one (WithStrictMaxStarts) does not; both ask for a
// Continue when they stop launching.
func TestIterationStartBudget(t *testing.T) {
	g, err := Compile(loopWorkflow(50, 30, ""), newEvaluator(t))
	require.NoError(t, err)
	ctx := context.Background()
	price := func(n int) Option { return WithIterationStarts(func(*model.Step) int { return n }) }
	tests := []struct {
		name   string
		opts   []Option
		starts int
		cont   bool
	}{
		{"default price 2", []Option{WithMaxStarts(40)}, 19, true},
		{"price 6", []Option{WithMaxStarts(40), price(6)}, 6, true},
		{"over the budget after the step's start", []Option{WithMaxStarts(4), price(6)}, 0, true},
		{"strict within the budget", []Option{WithStrictMaxStarts(13), price(6)}, 2, true},
		{"unbounded", []Option{price(6)}, 30, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Decide(ctx, g, newInstance(g), StartRun{}, t0, tc.opts...)
			require.NoError(t, err)
			assert.Len(t, started(d), tc.starts)
			assert.Equal(t, tc.cont, d.Continue)
		})
	}
	d, err := Decide(ctx, g, newInstance(g), StartRun{}, t0, WithMaxStarts(4), price(6))
	require.NoError(t, err)
	plain, err := Decide(ctx, g, d.State, Continue{}, t0, WithMaxStarts(4), price(6))
	require.NoError(t, err)
	assert.Len(t, started(plain), 1, "a plain budget lets a first iteration through")
	strict, err := Decide(ctx, g, d.State, Continue{}, t0, WithStrictMaxStarts(4), price(6))
	require.NoError(t, err)
	assert.Empty(t, started(strict), "a strict budget does not")
	assert.True(t, strict.Continue)
}
