package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/maestro-serverless/maestro/engine/expression"
	"github.com/maestro-serverless/maestro/model"
)

// kibParams are workflow params whose last, a5, is a 32 KiB string built by
// doubling (63 KiB in all, under the params size limit); bigExpr builds a
// 1 MiB string from it. A definition of a few KB the validator accepts.
func kibParams() model.Params {
	kv := []any{"a0", literal(model.TypeString, strings.Repeat("a", 1024))}
	for i := 1; i <= 5; i++ {
		kv = append(kv, fmt.Sprintf("a%d", i), expr(model.TypeString, fmt.Sprintf("a%d + a%d", i-1, i-1)))
	}
	return params(kv...)
}

var bigExpr = balanced(32)

// balanced concatenates n copies of a5 as a balanced tree, which builds
// n × 32 KiB while allocating only log2(n) times that.
func balanced(n int) string {
	if n == 1 {
		return "a5"
	}
	return "(" + balanced(n/2) + " + " + balanced(n-n/2) + ")"
}

// bombWorkflow has one step whose n params each evaluate term.
func bombWorkflow(n int, term string, typ model.ParamType) *model.Workflow {
	var kv []any
	for i := 0; i < n; i++ {
		kv = append(kv, fmt.Sprintf("p%03d", i), expr(typ, term))
	}
	return &model.Workflow{ID: "bomb", Params: kibParams(), Steps: []model.Step{
		{Kind: model.KindStep, ID: "bomb", Type: model.StepNoOp, Params: params(kv...)},
	}}
}

// regexBomb is the security review's probe: a pattern of ~1,000
// instructions over a 1 MiB subject takes seconds per match in Go's
// linear-time matcher; 300 of them took minutes.
var regexBomb = bigExpr + " matches '" + strings.Repeat("(a|b)", 200) + "c'"

// decideOverBudget runs g's first decision under a fresh default budget and
// checks that step "bomb" failed fatally for spending the budget's CPU
// units; it returns the decision and the budget.
func decideOverBudget(t *testing.T, g *Graph) (*Decision, *expression.Budget) {
	t.Helper()
	b := expression.NewBudget(0, 0)
	d, err := Decide(context.Background(), g, newInstance(g), StartRun{}, t0, WithBudget(b))
	require.NoError(t, err)
	s := d.State.Step("bomb")
	assert.Equal(t, model.StepFatallyFailed, s.Status)
	assert.Contains(t, s.Message, "CPU budget exceeded: the expressions of one decision may spend at most 100,000,000 units")
	return d, b
}

// TestRegexBombFailsTheStep: the decision stops charging regular
// expressions once its CPU budget is spent; the step fails with an error
// naming the budget and the rest of the run goes on.
func TestRegexBombFailsTheStep(t *testing.T) {
	g, err := Compile(bombWorkflow(300, regexBomb, model.TypeBoolean), newEvaluator(t))
	require.NoError(t, err)
	d, b := decideOverBudget(t, g)
	assert.Equal(t, model.WorkflowFailed, d.State.Status)
	// No match ran: the first would cost more than the whole budget.
	assert.Greater(t, b.CPUUsed(), b.CPULimit())
}

// TestMemoryBombFailsTheStep: 300 params each holding the same 1 MiB string
// marshalled to 290 MiB before; now the step fails at Maestro's params size
// limit, having allocated a small fraction of 256 MB.
func TestMemoryBombFailsTheStep(t *testing.T) {
	for _, tc := range []struct {
		term string
		typ  model.ParamType
	}{{bigExpr, model.TypeString}, {"upper(" + bigExpr + ")", model.TypeString}, {"[a5, a5, a5, a5, a5, a5, a5, a5]", model.TypeStringArray}} {
		term := tc.term
		t.Run(term, func(t *testing.T) {
			g, err := Compile(bombWorkflow(300, term, tc.typ), newEvaluator(t))
			require.NoError(t, err)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			d, err := Decide(context.Background(), g, newInstance(g), StartRun{}, t0)
			require.NoError(t, err)
			runtime.ReadMemStats(&after)
			s := d.State.Step("bomb")
			assert.Equal(t, model.StepFatallyFailed, s.Status)
			assert.Regexp(t, "over the limit of 750000|memory budget exceeded|CPU budget exceeded", s.Message)
			allocated := after.TotalAlloc - before.TotalAlloc
			t.Logf("%.40s: allocated %d MiB; step message: %.200s", term, allocated>>20, s.Message)
			assert.Less(t, allocated, uint64(256<<20), "a decision must not allocate 256 MB")
		})
	}
}

// TestParamsSizeLimits: Maestro's 750,000-byte params limit per step, and
// the run-wide limit across steps.
func TestParamsSizeLimits(t *testing.T) {
	str := func(n int) *model.ParamDefinition { return literal(model.TypeString, strings.Repeat("x", n)) }
	// A step's params also hold its four default params (~120 bytes).
	wf := &model.Workflow{ID: "sizes", Steps: []model.Step{
		{Kind: model.KindStep, ID: "fits", Type: model.StepNoOp, Params: params("s", str(MaxStepParamsBytes-1000))},
		{Kind: model.KindStep, ID: "over", Type: model.StepNoOp, Params: params("s", str(MaxStepParamsBytes))},
	}}
	g, d := startRun(t, wf)
	var err error
	require.Equal(t, succeeded, d.State.Step("fits").Status, d.State.Step("fits").Message)
	over := d.State.Step("over")
	assert.Equal(t, model.StepFatallyFailed, over.Status)
	assert.Contains(t, over.Message, "the step's params are more than 750000 bytes as JSON, over the limit of 750000")

	// Three steps of 600 KB fit; the fourth takes the run past 2 MiB.
	var steps []model.Step
	for i := 0; i < 4; i++ {
		steps = append(steps, model.Step{Kind: model.KindStep, ID: fmt.Sprintf("s%d", i), Type: model.StepNoOp, Params: params("s", str(600_000))})
		if i > 0 {
			steps[i-1].Transition.Successors = []model.Successor{{StepID: steps[i].ID, Condition: "true"}}
		}
	}
	g, err = Compile(&model.Workflow{ID: "run-size", Steps: steps}, newEvaluator(t))
	require.NoError(t, err)
	d, err = Decide(context.Background(), g, newInstance(g), StartRun{}, t0)
	require.NoError(t, err)
	for i := 0; i < 3; i++ {
		assert.Equal(t, succeeded, d.State.Step(fmt.Sprintf("s%d", i)).Status)
	}
	last := d.State.Step("s3")
	assert.Equal(t, model.StepFatallyFailed, last.Status)
	assert.Contains(t, last.Message, "over the limit of 2097152 bytes of params per run")
}

// TestJSONSize: the size estimate is encoding/json's size.
func TestJSONSize(t *testing.T) {
	for _, v := range []any{
		nil, true, false, "", "plain", "quote\" back\\ nl\n tab\t cr\r ctl\x01 html<>&", "é ü 😀", "bad\xff utf8", "sep\u2028\u2029",
		int64(0), int64(-42), int64(9007199254740993), 0.5, 1e21, -3.25e-7,
		[]any{"a", int64(1), nil, []any{}}, []string{"a", "b\"c"}, []int64{1, -2, 300}, []float64{0.5, 2}, []bool{true, false},
		map[string]any{"k": "v", "n": int64(1), "nested": map[string]any{"x": []any{"y"}}},
		map[string]string{"a": "b", "c<": "d"}, Values{"step_id": "a", "n": int64(3)},
	} {
		want, err := json.Marshal(v)
		require.NoError(t, err)
		got, over := jsonSizeUpTo(v, 1<<30)
		assert.False(t, over)
		assert.Equal(t, int64(len(want)), got, "%#v", v)
	}
	_, over := jsonSizeUpTo(strings.Repeat("a", 100), 50)
	assert.True(t, over)
}

// BenchmarkRegexBombDecide prints the CPU a decision spends on the regex
// bomb: bounded by the budget, whatever the definition.
func BenchmarkRegexBombDecide(b *testing.B) {
	g, err := Compile(bombWorkflow(300, regexBomb, model.TypeBoolean), newEvaluator(b))
	require.NoError(b, err)
	for b.Loop() {
		d, err := Decide(context.Background(), g, newInstance(g), StartRun{}, t0)
		require.NoError(b, err)
		require.Equal(b, model.StepFatallyFailed, d.State.Step("bomb").Status)
	}
}

// BenchmarkRegexWithinBudget is the costliest regular-expression work a
// decision can do: matches that each fit the budget, until it is spent.
func BenchmarkRegexWithinBudget(b *testing.B) {
	term := "a5 matches '" + strings.Repeat("(a|b)", 100) + "c'"
	g, err := Compile(bombWorkflow(300, term, model.TypeBoolean), newEvaluator(b))
	require.NoError(b, err)
	for b.Loop() {
		budget := expression.NewBudget(0, 0)
		d, err := Decide(context.Background(), g, newInstance(g), StartRun{}, t0, WithBudget(budget))
		require.NoError(b, err)
		require.Contains(b, d.State.Step("bomb").Message, "CPU budget exceeded")
		b.ReportMetric(float64(budget.CPUUsed()), "units/op")
	}
}
