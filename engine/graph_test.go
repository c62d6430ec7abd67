package engine

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/maestro-serverless/maestro/model"
)

func TestCompileSamples(t *testing.T) {
	tests := []struct {
		file  string
		roots []string
		topo  []string
		succ  map[string][]Edge
		pred  map[string][]Edge
	}{
		{
			file:  "sample-dag-test-1.json",
			roots: []string{"job.1"},
			topo:  []string{"job.1", "job.5", "job.2", "job.3", "job.6", "job.4"},
			succ: map[string][]Edge{
				"job.1": {{From: "job.1", To: "job.5", Condition: "true"}, {From: "job.1", To: "job.2", Condition: "true"}},
				"job.4": nil,
			},
			pred: map[string][]Edge{
				"job.3": {{From: "job.2", To: "job.3", Condition: "true"}, {From: "job.5", To: "job.3", Condition: "true"}},
			},
		},
		{
			file:  "sample-dag-test-7.json",
			roots: []string{"job.1", "job.7"},
			topo:  []string{"job.1", "job.7", "job.2", "job.3", "job.8", "job.4", "job.5", "job.6"},
		},
		{
			file:  "sample-dag-test-8.json",
			roots: []string{"job.1", "job.2"},
			topo:  []string{"job.1", "job.2", "job.3", "job.4", "job.5"},
			pred: map[string][]Edge{
				"job.4": {
					{From: "job.1", To: "job.4", Condition: "x > 10"},
					{From: "job.2", To: "job.4", Condition: "x > 3"},
					{From: "job.3", To: "job.4", Condition: "x > 10"},
				},
			},
		},
		{
			file:  "fixtures-sample-conditional-wf.json",
			roots: []string{"job.1", "job.4"},
			topo:  []string{"job.1", "job.4", "job.2", "job.3", "job.5", "job.6", "job.7"},
			succ: map[string][]Edge{
				"job.2": {
					{From: "job.2", To: "job.3", Condition: "true"},
					{From: "job.2", To: "job.5", Condition: "1 > 0"},
					{From: "job.2", To: "job.6", Condition: "!(1 > 0)"},
				},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			g := loadGraph(t, tc.file)
			assert.Equal(t, tc.roots, g.Roots())
			assert.Equal(t, tc.topo, g.TopologicalOrder())
			assert.Len(t, g.StepIDs(), len(tc.topo))
			for id, want := range tc.succ {
				assert.Equal(t, want, g.Successors(id), id)
			}
			for id, want := range tc.pred {
				assert.Equal(t, want, g.Predecessors(id), id)
			}
			assert.Nil(t, g.Successors("ghost"))
			assert.Nil(t, g.Step("ghost"))
			assert.Equal(t, tc.roots[0], g.Step(tc.roots[0]).ID)
		})
	}
}

func TestCompileErrors(t *testing.T) {
	noop := func(id string, succ ...model.Successor) model.Step {
		return model.Step{Kind: model.KindStep, ID: id, Type: model.StepNoOp, Transition: model.Transition{Successors: succ}}
	}
	to := func(id, cond string) model.Successor { return model.Successor{StepID: id, Condition: cond} }
	tests := []struct {
		name string
		wf   *model.Workflow
		want string
	}{
		{"nil workflow", nil, "nil workflow"},
		{"no steps", &model.Workflow{ID: "w"}, `workflow "w": no steps`},
		{"duplicate id", &model.Workflow{ID: "w", Steps: []model.Step{noop("a"), noop("a")}}, `duplicate step id "a"`},
		{"unknown successor", &model.Workflow{ID: "w", Steps: []model.Step{noop("a", to("ghost", "true"))}}, `step "a": unknown successor "ghost"`},
		{"duplicate successor", &model.Workflow{ID: "w", Steps: []model.Step{noop("a", to("b", "true"), to("b", "true")), noop("b")}}, `duplicate successor "b"`},
		{"self loop", &model.Workflow{ID: "w", Steps: []model.Step{noop("a", to("a", "true"))}}, "cycle: a -> a"},
		{"bad condition", &model.Workflow{ID: "w", Steps: []model.Step{noop("a", to("b", "nope >")), noop("b")}}, `step "a": condition of successor "b"`},
		{"condition on unknown param", &model.Workflow{ID: "w", Steps: []model.Step{noop("a", to("b", "ghost > 1")), noop("b")}}, "ghost"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Compile(tc.wf, newEvaluator(t))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	_, err := Compile(&model.Workflow{ID: "w", Steps: []model.Step{noop("a")}}, nil)
	assert.ErrorContains(t, err, "nil evaluator")
}

func TestCompileRejectsCycleSample(t *testing.T) {
	wf := loadWorkflow(t, "fixtures-sample-dag-with-cycle-wf.json")
	_, err := Compile(wf, newEvaluator(t))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "DAG contains a cycle: job.2 -> job.3 -> job.4 -> job.2")
}
