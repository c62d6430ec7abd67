package engine

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/maestro-serverless/maestro/model"
)

// childRuns is a ChildParams over an in-memory map from "wf/inst/run/step".
type childRuns struct {
	params map[string]Values
	err    error
	reads  int
}

func (c *childRuns) ChildStepParam(_ context.Context, wf string, inst, run int64, stepID, name string) (ChildParam, error) {
	c.reads++
	if c.err != nil {
		return ChildParam{}, c.err
	}
	params, ok := c.params[fmt.Sprintf("%s/%d/%d/%s", wf, inst, run, stepID)]
	v, found := params[name]
	return ChildParam{Value: v, Reached: ok, Found: found}, nil
}

// prefetching is a childRuns that also prefetches (ChildrenPrefetcher).
type prefetching struct {
	childRuns
	prefetched [][]int64
	err        error
}

func (p *prefetching) PrefetchChildren(_ context.Context, wf string, insts []int64, run int64, stepID, name string, _ func(int64) error) error {
	p.prefetched = append(p.prefetched, insts)
	return p.err
}

func TestGetFromForeachCollectsAnInnerParamInIterationOrder(t *testing.T) {
	ctx := context.Background()
	loop := params("i", expr(model.TypeLongArray, "Util.intsBetween(1, 5, 1)"))
	wf := &model.Workflow{ID: "collect", Steps: []model.Step{
		{Kind: model.KindForeach, ID: "loop", Params: params("loop_params", &model.ParamDefinition{Type: model.TypeMap, Value: loop.Defs, HasValue: true}),
			Steps:      []model.Step{{Kind: model.KindStep, ID: "sq", Type: model.StepNoOp, Params: params("v", expr(model.TypeLong, "i * i"))}},
			Transition: model.Transition{Successors: []model.Successor{{StepID: "sum", Condition: "true"}}}},
		{Kind: model.KindStep, ID: "sum", Type: model.StepNoOp, Params: params("all", expr(model.TypeLongArray, "params.getFromForeach('loop', 'sq', 'v')"))},
	}}
	g, d := startRun(t, wf)
	var err error
	st := d.State
	inline := st.Step("loop").Loop.WorkflowID
	runs := &childRuns{params: map[string]Values{}}
	// Iteration 3 never set v (say it failed before): the zero value.
	for _, n := range []int64{1, 2, 4} {
		runs.params[fmt.Sprintf("%s/%d/1/sq", inline, n)] = Values{"v": n * n}
	}
	var beforeLast *Instance
	for idx := int64(0); idx < 4; idx++ {
		if idx == 3 {
			beforeLast = st
		}
		d, err = Decide(ctx, g, st, ChildEnded{StepID: "loop", Attempt: 1, Index: idx, Status: model.WorkflowSucceeded}, t0, WithChildParams(runs))
		require.NoError(t, err)
		st = d.State
	}
	sum := st.Step("sum")
	require.Equal(t, model.StepSucceeded, sum.Status, sum.Message)
	assert.Equal(t, []int64{1, 4, 0, 16}, sum.Params["all"])
	assert.Equal(t, 4, runs.reads)

	// A reader that prefetches is handed every iteration first, once; one
	// whose prefetch fails fails the decision.
	pre := &prefetching{childRuns: childRuns{params: runs.params}}
	last := ChildEnded{StepID: "loop", Attempt: 1, Index: 3, Status: model.WorkflowSucceeded}
	d, err = Decide(ctx, g, beforeLast, last, t0, WithChildParams(pre))
	require.NoError(t, err)
	assert.Equal(t, []int64{1, 4, 0, 16}, d.State.Step("sum").Params["all"])
	assert.Equal(t, [][]int64{{1, 2, 3, 4}}, pre.prefetched)
	_, err = Decide(ctx, g, beforeLast, last, t0, WithChildParams(&prefetching{childRuns: childRuns{params: runs.params}, err: errors.New("throttled")}))
	require.ErrorContains(t, err, "throttled")

}

func TestGetFromForeachAndSubworkflowErrors(t *testing.T) {
	ctx := context.Background()
	wf := &model.Workflow{ID: "errs", Steps: []model.Step{
		{Kind: model.KindSubworkflow, ID: "sub", Params: params("subworkflow_id", literal(model.TypeString, "child")),
			Transition: model.Transition{Successors: []model.Successor{{StepID: "read", Condition: "true"}}}},
		{Kind: model.KindStep, ID: "read", Type: model.StepNoOp, Params: params("got", expr(model.TypeLong, "params.getFromSubworkflow('sub', 'inner', 'x')"))},
	}}
	g, d := startRun(t, wf)
	var err error
	d, err = Decide(ctx, g, d.State, ChildStarted{StepID: "sub", Attempt: 1, Child: ChildRef{WorkflowID: "child", InstanceID: 8, RunID: 1}}, t0)
	require.NoError(t, err)
	running := d.State
	end := ChildEnded{StepID: "sub", Attempt: 1, Status: model.WorkflowSucceeded}

	t.Run("reads the child's step param", func(t *testing.T) {
		d, err := Decide(ctx, g, running, end, t0, WithChildParams(&childRuns{params: map[string]Values{"child/8/1/inner": {"x": int64(42)}}}))
		require.NoError(t, err)
		assert.Equal(t, int64(42), d.State.Step("read").Params["got"])
	})
	t.Run("a missing param fails the step naming it", func(t *testing.T) {
		d, err := Decide(ctx, g, running, end, t0, WithChildParams(&childRuns{params: map[string]Values{"child/8/1/inner": {"y": int64(1)}}}))
		require.NoError(t, err)
		read := d.State.Step("read")
		assert.Equal(t, model.StepFatallyFailed, read.Status)
		assert.Contains(t, read.Message, `step "inner" of child instance 8 has no param "x"`)
	})
	t.Run("a failed read fails the decision, to be retried", func(t *testing.T) {
		_, err := Decide(ctx, g, running, end, t0, WithChildParams(&childRuns{err: errors.New("throttled")}))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "throttled")
	})
	t.Run("the wrong kind of step", func(t *testing.T) {
		wf := &model.Workflow{ID: "kind", Steps: []model.Step{
			{Kind: model.KindStep, ID: "a", Type: model.StepNoOp, Transition: model.Transition{Successors: []model.Successor{{StepID: "b", Condition: "true"}}}},
			{Kind: model.KindStep, ID: "b", Type: model.StepNoOp, Params: params("got", expr(model.TypeLongArray, "params.getFromForeach('a', 'x', 'y')"))},
		}}
		g, err := Compile(wf, newEvaluator(t))
		require.NoError(t, err)
		d, err := Decide(ctx, g, newInstance(g), StartRun{}, t0, WithChildParams(&childRuns{}))
		require.NoError(t, err)
		assert.Equal(t, model.StepFatallyFailed, d.State.Step("b").Status)
		assert.Contains(t, d.State.Step("b").Message, `step "a" is a step step, not a foreach step`)
	})
}
