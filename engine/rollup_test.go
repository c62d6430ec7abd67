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
	g, err := Compile(subWorkflow(nil, nil), newEvaluator(t))
	require.NoError(t, err)
	d, err := Decide(ctx, g, newInstance(g), StartRun{}, t0)
	require.NoError(t, err)
	d, err = Decide(ctx, g, d.State, ChildStarted{StepID: "sub", Attempt: 1, Child: ChildRef{WorkflowID: "child", InstanceID: 2, RunID: 1}}, t0)
	require.NoError(t, err)
	d, err = Decide(ctx, g, d.State, ChildEnded{StepID: "sub", Attempt: 1, Status: model.WorkflowSucceeded,
		Rollup: &Rollup{TotalLeafCount: 7, Overview: map[model.StepStatus]int64{model.StepSucceeded: 7}}}, t0)
	require.NoError(t, err)
	assert.Equal(t, &Rollup{TotalLeafCount: 8, Overview: map[model.StepStatus]int64{model.StepSucceeded: 8}}, RollupOf(g, d.State))
}
