package engine

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/maestro-serverless/maestro/model"
)

func TestRollupCountsLeafStepsAndEndedChildren(t *testing.T) {
	ctx := context.Background()
	g, err := Compile(loopWorkflow(3, 3, ""), newEvaluator(t))
	require.NoError(t, err)
	st := newInstance(g)
	// Before the run starts: its one leaf step ("after"), not created.
	assert.Equal(t, &Rollup{TotalLeafCount: 1, Overview: map[model.StepStatus]int64{model.StepNotCreated: 1}}, RollupOf(g, st))

	d, err := Decide(ctx, g, st, StartRun{}, t0)
	require.NoError(t, err)
	st = d.State
	child := &Rollup{TotalLeafCount: 2, Overview: map[model.StepStatus]int64{model.StepSucceeded: 2}}
	failed := &Rollup{TotalLeafCount: 2, Overview: map[model.StepStatus]int64{model.StepSucceeded: 1, model.StepFatallyFailed: 1}}
	for idx, r := range []*Rollup{child, failed} {
		d, err = Decide(ctx, g, st, ChildEnded{StepID: "loop", Attempt: 1, Index: int64(idx), Status: model.WorkflowSucceeded, Rollup: r}, t0)
		require.NoError(t, err)
		st = d.State
	}
	// A duplicate report is not counted twice.
	d, err = Decide(ctx, g, st, ChildEnded{StepID: "loop", Attempt: 1, Index: 0, Status: model.WorkflowSucceeded, Rollup: child}, t0)
	require.NoError(t, err)
	st = d.State
	assert.Equal(t, &Rollup{TotalLeafCount: 5, Overview: map[model.StepStatus]int64{
		model.StepNotCreated: 1, model.StepSucceeded: 3, model.StepFatallyFailed: 1,
	}}, RollupOf(g, st))
	assert.Equal(t, int64(4), st.Step("loop").Loop.Summary().Rollup.TotalLeafCount)

	// Maestro's JSON shape, and back.
	b, err := json.Marshal(RollupOf(g, st))
	require.NoError(t, err)
	assert.JSONEq(t, `{"total_leaf_count":5,"overview":{"NOT_CREATED":{"cnt":1},"SUCCEEDED":{"cnt":3},"FATALLY_FAILED":{"cnt":1}}}`, string(b))
	var back Rollup
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, RollupOf(g, st), &back)
}

func TestRollupOfASubworkflowStepIsItsChilds(t *testing.T) {
	ctx := context.Background()
	g, d := startRun(t, subWorkflow(nil, nil))
	var err error
	d, err = Decide(ctx, g, d.State, ChildStarted{StepID: "sub", Attempt: 1, Child: ChildRef{WorkflowID: "child", InstanceID: 2, RunID: 1}}, t0)
	require.NoError(t, err)
	d, err = Decide(ctx, g, d.State, ChildEnded{StepID: "sub", Attempt: 1, Status: model.WorkflowSucceeded,
		Rollup: &Rollup{TotalLeafCount: 7, Overview: map[model.StepStatus]int64{model.StepSucceeded: 7}}}, t0)
	require.NoError(t, err)
	assert.Equal(t, &Rollup{TotalLeafCount: 8, Overview: map[model.StepStatus]int64{model.StepSucceeded: 8}}, RollupOf(g, d.State))
}

func TestTreeLeafStepLimit(t *testing.T) {
	ctx := context.Background()
	t.Run("a loop that would pass it fails at its start", func(t *testing.T) {
		loop := params("i", expr(model.TypeLongArray, "Util.intsBetween(0, 1000, 1)"), "j", expr(model.TypeLongArray, "Util.intsBetween(0, 600, 1)"))
		wf := &model.Workflow{ID: "big", Steps: []model.Step{{Kind: model.KindForeach, ID: "loop",
			Params: params("loop_params", &model.ParamDefinition{Type: model.TypeMap, Value: loop.Defs, HasValue: true}),
			Steps: []model.Step{
				{Kind: model.KindStep, ID: "a", Type: model.StepNoOp, Transition: model.Transition{Successors: []model.Successor{{StepID: "b", Condition: "true"}}}},
				{Kind: model.KindStep, ID: "b", Type: model.StepNoOp},
			}}}}
		_, d := startRun(t, wf)
		s := d.State.Step("loop")
		assert.Equal(t, model.StepFatallyFailed, s.Status)
		assert.Equal(t, "foreach: 600000 iterations of 2 leaf steps each is more than the limit of 1000000 leaf steps in an instance tree", s.Message)
		assert.Empty(t, started(d))
	})
	t.Run("a root whose ended iterations report past it is stopped", func(t *testing.T) {
		// 4,000 iterations, each a nested loop of 300 (not known at the
		// start): a 1,200,000-leaf tree, accepted, then stopped once the
		// reports pass 1,000,000.
		g, d := startRun(t, loopWorkflow(4000, 100, ""))
		var err error
		st := d.State
		report := &Rollup{TotalLeafCount: 300, Overview: map[model.StepStatus]int64{model.StepSucceeded: 300}}
		var n int64
		for ; st.Status == model.WorkflowInProgress && st.Ending == nil; n++ {
			require.Less(t, n, int64(4000))
			idx := st.Step("loop").Loop.Running[0]
			d, err = Decide(ctx, g, st, ChildEnded{StepID: "loop", Attempt: 1, Index: idx, Status: model.WorkflowSucceeded, Rollup: report}, t0)
			require.NoError(t, err)
			st = d.State
		}
		// 3,334 reports make 1,000,200 leaves (plus "after"): the run stops.
		assert.Equal(t, int64(3334), n)
		assert.Equal(t, model.WorkflowStopped, st.Status)
		assert.Equal(t, "stopped: the instance's tree has 1000201 leaf steps, more than the limit of 1000000", st.Message)
		assert.Equal(t, model.StepStopped, st.Step("loop").Status)
		assert.Len(t, st.ChildStops, 0, "its running iterations are told to stop")
		assert.NotEmpty(t, stops(d))
	})
}
