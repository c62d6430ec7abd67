package engine

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/maestro-serverless/maestro/engine/expression"
	"github.com/maestro-serverless/maestro/model"
)

// The probes of the security review (issue 34) that went around the
// decision's expression budget. Each built an accepted definition whose
// decision ran for seconds to minutes of CPU or gigabytes of allocation.

// repeatBomb is 1,400 copies of a{1000}: 9,800 bytes, a program of 1.4
// million instructions once compiled.
var repeatBomb = strings.Repeat("a{1000}", 1400)

// TestRegexPatternFromAParamIsSizedBeforeCompiling: a pattern taken from a
// param is sized from its parse tree before anything compiles it; one over
// the instruction limit fails the step naming the limit, whatever its
// subject. Before, each of the 50 matches compiled the 1.4-million
// instruction program (twice) and the step succeeded after 54 s of CPU.
func TestRegexPatternFromAParamIsSizedBeforeCompiling(t *testing.T) {
	g := matchesGraph(t, repeatBomb, "''", 50)
	b := expression.NewBudget(0, 0)
	allocated := allocatedBy(func() {
		d, err := Decide(context.Background(), g, newInstance(g), StartRun{}, t0, WithBudget(b))
		require.NoError(t, err)
		s := d.State.Step("bomb")
		assert.Equal(t, model.StepFatallyFailed, s.Status)
		assert.Contains(t, s.Message, "regular expression of 1,400,002 instructions, more than the limit of 10,000")
	})
	assert.Less(t, b.CPUUsed(), int64(1_000_000), "sizing a pattern costs its bytes, not its program")
	assert.Less(t, allocated, uint64(16<<20), "no program was built")
}

// TestRegexCompiledOncePerDecision: the same pattern matched by many
// expressions of one decision is compiled once and charged once for it;
// every match is still charged its subject times the program.
func TestRegexCompiledOncePerDecision(t *testing.T) {
	g := matchesGraph(t, strings.Repeat("(a|b)", 400), "'ab'", 40) // 1,202 instructions
	one := expression.NewBudget(0, 0)
	d, err := Decide(context.Background(), g, newInstance(g), StartRun{}, t0, WithBudget(one))
	require.NoError(t, err)
	require.Equal(t, succeeded, d.State.Step("bomb").Status, d.State.Step("bomb").Message)
	assert.Equal(t, 1, one.RegexCompiles(), "one compilation for 40 matches of one pattern")
}

// matchesGraph is a workflow of one step "bomb" whose param p holds pattern
// and whose n other params each match subject against it.
func matchesGraph(t *testing.T, pattern, subject string, n int) *Graph {
	t.Helper()
	kv := []any{"p", literal(model.TypeString, pattern)}
	for i := 0; i < n; i++ {
		kv = append(kv, fmt.Sprintf("m%02d", i), expr(model.TypeBoolean, subject+" matches p"))
	}
	wf := &model.Workflow{ID: "regex", Steps: []model.Step{{Kind: model.KindStep, ID: "bomb", Type: model.StepNoOp, Params: params(kv...)}}}
	g, err := Compile(wf, newEvaluator(t))
	require.NoError(t, err)
	return g
}

// TestRangesAreCharged: a range builds one element per value. A constant
// range past the array limit is refused when the definition is checked; one
// whose bounds come from params fails its step at the array limit. Before,
// each of 4,600 params built a million-element slice for no units and the
// step succeeded after 11.6 s of CPU and 35 GB allocated.
func TestRangesAreCharged(t *testing.T) {
	lang := expression.New(expression.DefaultLimits())
	_, err := lang.Compile("len(0..999998)", model.TypeLong, model.Scope{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "range 0..999998 would produce 999999 values, more than the limit of 25001")

	var kv []any
	kv = append(kv, "n", literal(model.TypeLong, int64(999_998)))
	for i := 0; i < 4600; i++ {
		kv = append(kv, fmt.Sprintf("r%04d", i), expr(model.TypeLong, "len(0..n)"))
	}
	wf := &model.Workflow{ID: "ranges", Steps: []model.Step{{Kind: model.KindStep, ID: "bomb", Type: model.StepNoOp, Params: params(kv...)}}}
	g, err := Compile(wf, newEvaluator(t))
	require.NoError(t, err)
	allocated := allocatedBy(func() {
		d, err := Decide(context.Background(), g, newInstance(g), StartRun{}, t0)
		require.NoError(t, err)
		s := d.State.Step("bomb")
		assert.Equal(t, model.StepFatallyFailed, s.Status)
		assert.Contains(t, s.Message, "range 0..999998 would produce 999999 values, more than the limit of 25001")
	})
	assert.Less(t, allocated, uint64(64<<20))

	// Ranges inside the limit are charged to the decision: 4,600 ranges of
	// 25,000 elements are 115 million elements, 32 units each.
	kv = kv[:0]
	kv = append(kv, "n", literal(model.TypeLong, int64(24_999)))
	for i := 0; i < 4600; i++ {
		kv = append(kv, fmt.Sprintf("r%04d", i), expr(model.TypeLong, "len(0..n)"))
	}
	wf.Steps[0].Params = params(kv...)
	g, err = Compile(wf, newEvaluator(t))
	require.NoError(t, err)
	_, b := decideOverBudget(t, g)
	assert.LessOrEqual(t, b.CPUUsed(), b.CPULimit()+32*25_000+1)
}

// TestRangeInsideExpressions: ranges still work where they fit.
func TestRangeInsideExpressions(t *testing.T) {
	lang := expression.New(expression.DefaultLimits())
	for src, want := range map[string]any{
		"len(1..5)":         int64(5),
		"3 in 1..5":         true,
		"7 in 1..5":         false,
		"(1..3).toString()": "[1,2,3]",
		"len(5..1)":         int64(0),
	} {
		p, err := lang.Compile(src, "", model.Scope{})
		require.NoError(t, err, src)
		got, err := p.Eval(context.Background(), nil)
		require.NoError(t, err, src)
		assert.Equal(t, want, got, src)
	}
}

// allocatedBy returns the bytes fn allocated.
func allocatedBy(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// bigIterations is a ChildrenPrefetcher over n iterations whose run items
// each hold itemBytes of params and whose param "v" is a string of
// valueBytes: it charges what a store would read, as it reads it.
type bigIterations struct {
	n                     int64
	itemBytes, valueBytes int
	loaded                []int64 // the last chunk
	reads                 int64   // iterations read
}

func (b *bigIterations) PrefetchChildren(_ context.Context, _ string, insts []int64, _ int64, _, _ string, charge func(int64) error) error {
	b.loaded = b.loaded[:0]
	for _, n := range insts {
		if err := charge(int64(b.itemBytes)); err != nil {
			return err
		}
		b.reads++
		b.loaded = append(b.loaded, n)
	}
	return nil
}

func (b *bigIterations) ChildStepParam(_ context.Context, _ string, inst, _ int64, _, name string) (ChildParam, error) {
	for _, n := range b.loaded {
		if n == inst {
			return ChildParam{Value: strings.Repeat("x", b.valueBytes), Reached: true, Found: name == "v"}, nil
		}
	}
	return ChildParam{}, fmt.Errorf("iteration %d was not prefetched", inst)
}

// TestForeachReadsAreChargedAsRead: params.getFromForeach reads its
// iterations a chunk at a time and charges each as it is read, so it stops
// at the step's params limit or the decision's budget, whichever comes
// first, having read a bounded number of iterations. Before, 999
// iterations of 700 KB were all read (699 MB held) before the budget
// refused the result.
func TestForeachReadsAreChargedAsRead(t *testing.T) {
	loop := params("i", expr(model.TypeLongArray, "Util.intsBetween(0, 999, 1)"))
	wf := &model.Workflow{ID: "collect", Steps: []model.Step{
		{Kind: model.KindForeach, ID: "loop", Params: params("loop_params", &model.ParamDefinition{Type: model.TypeMap, Value: loop.Defs, HasValue: true}),
			Steps:      []model.Step{{Kind: model.KindStep, ID: "inner", Type: model.StepNoOp}},
			Transition: model.Transition{Successors: []model.Successor{{StepID: "all", Condition: "true"}}}},
		{Kind: model.KindStep, ID: "all", Type: model.StepNoOp, Params: params("got", expr(model.TypeStringArray, "params.getFromForeach('loop', 'inner', 'v')"))},
	}}
	g, err := Compile(wf, newEvaluator(t))
	require.NoError(t, err)
	ctx := context.Background()
	d, err := Decide(ctx, g, newInstance(g), StartRun{}, t0)
	require.NoError(t, err)
	st := d.State
	loopState := st.Step("loop")
	// Every iteration launched, all but the last ended.
	loopState.Loop.Next = loopState.Loop.Total
	loopState.Loop.Running = []int64{loopState.Loop.Total - 1}
	loopState.Loop.Counts = map[model.WorkflowStatus]int64{model.WorkflowSucceeded: loopState.Loop.Total - 1}
	last := ChildEnded{StepID: "loop", Attempt: 1, Index: loopState.Loop.Total - 1, Status: model.WorkflowSucceeded}

	for _, tc := range []struct {
		name                  string
		itemBytes, valueBytes int
		msg                   string
		maxReads              int64
	}{
		// Large values: the limit of a step's params after two.
		{"700 KB values", 700_000, 700_000, "is more than 750000 bytes as JSON, over the limit of a step's params", ForeachReadChunk},
		// Small values in large runs: the budget, charged per run read.
		{"700 KB runs", 700_000, 10, "CPU budget exceeded", 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &bigIterations{n: 999, itemBytes: tc.itemBytes, valueBytes: tc.valueBytes}
			allocated := allocatedBy(func() {
				d, err := Decide(ctx, g, st, last, t0, WithChildParams(r))
				require.NoError(t, err)
				all := d.State.Step("all")
				assert.Equal(t, model.StepFatallyFailed, all.Status)
				assert.Contains(t, all.Message, tc.msg)
			})
			assert.LessOrEqual(t, r.reads, tc.maxReads)
			assert.Less(t, allocated, uint64(64<<20))
			t.Logf("%d iterations read, %d MiB allocated", r.reads, allocated>>20)
		})
	}
}
