package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/definition"
	"github.com/maestro-serverless/maestro/engine/expression"
	"github.com/maestro-serverless/maestro/model"
)

// The adversarial generator builds definitions the validator accepts from
// the costliest constructs the language offers — regular expressions with
// counted repeats, ranges, nested maps, string doubling, date helpers, the
// JSON encoding of large values, reads of a foreach's iterations — each
// repeated up to about 200 KB of params, and FuzzDecideAdversarial
// checks that no decision of them spends more than a second of CPU or
// allocates more than 256 MB: the budget bounds every one of them.

// Limits a decision must stay within, whatever the definition.
const (
	maxDecisionCPU   = time.Second
	maxDecisionAlloc = 256 << 20
)

// raceCPUFactor scales maxDecisionCPU when the tests run under the race
// detector (make test runs this package with -race): it slows execution
// 5–20× and its bookkeeping counts in the process's CPU time, so the
// costliest seeds, a few hundred milliseconds of CPU without it, take over
// a second with it. Ten seconds still fails a decision that goes around the
// budget: each of those (bypass_test.go) ran for seconds to minutes of CPU
// without the race detector, and so for far longer with it.
const raceCPUFactor = 10

// decisionCPULimit is maxDecisionCPU, scaled under the race detector.
func decisionCPULimit() time.Duration {
	if raceEnabled {
		return raceCPUFactor * maxDecisionCPU
	}
	return maxDecisionCPU
}

// adversarialTerm is a costly expression template: its type and source
// given a number the fuzzer picks.
type adversarialTerm struct {
	name string
	typ  model.ParamType
	src  func(k int) string
}

// adversarialTerms reads the workflow params of adversarialDefinition:
// big (256 KiB string), half (128 KiB), pat (a pattern, possibly over the
// instruction limit), n (a count), arr (a LONG_ARRAY).
var adversarialTerms = []adversarialTerm{
	{"regex literal repeats", model.TypeBoolean, func(k int) string {
		return "big matches '" + strings.Repeat("a{1000}", k%10) + "a{990}b'" // up to 9,993 instructions
	}},
	{"regex literal alternations", model.TypeBoolean, func(k int) string {
		return "half matches '" + strings.Repeat("(a|bc)", 1+k*6%1600) + "z'"
	}},
	{"regex from a param", model.TypeBoolean, func(int) string { return "big matches pat" }},
	{"regex built at run time", model.TypeBoolean, func(k int) string {
		return fmt.Sprintf("'' matches (pat + '%s')", strings.Repeat("x{9}", k%40))
	}},
	{"range", model.TypeLong, func(int) string { return "len(0..n)" }},
	{"range printed", model.TypeString, func(int) string { return "(0..n).toString()" }},
	{"range membership", model.TypeBoolean, func(k int) string { return fmt.Sprintf("%d in 0..n", k*97) }},
	{"array equality", model.TypeBoolean, func(int) string { return "arr == arr" }},
	{"array builtins", model.TypeLong, func(int) string { return "max(arr) + min(arr) + len(keys(params.getFromStep('wide', 'm')))" }},
	{"array membership", model.TypeBoolean, func(k int) string { return fmt.Sprintf("%d in arr", k*97) }},
	{"string doubling", model.TypeString, func(int) string { return "(big + big) + (big + big)" }},
	{"upper and scans", model.TypeLong, func(int) string { return "indexOf(upper(big), 'z') + lastIndexOf(lower(half), 'q')" }},
	{"contains", model.TypeBoolean, func(int) string { return "big contains (half + 'z')" }},
	{"date helper", model.TypeLongArray, func(k int) string {
		return fmt.Sprintf("Util.dateIntsBetween(19000101, 20991231, %d)", 1+k%5)
	}},
	{"date helper printed", model.TypeString, func(k int) string {
		return fmt.Sprintf("Util.dateIntsBetween(20000101, 20681231, %d).toString()", 1+k%3)
	}},
	{"ints printed", model.TypeString, func(int) string { return "Util.intsBetween(0, 25000, 1).toString() + arr.toString()" }},
	{"array JSON", model.TypeString, func(int) string { return "[big, half, big, half].toString()" }},
	{"cross-step read", model.TypeString, func(int) string { return "params.getFromStep('wide', 'm').toString()" }},
	{"foreach read", model.TypeStringArray, func(int) string { return "params.getFromForeach('loop', 'inner', 'v')" }},
	{"sort (refused)", model.TypeLongArray, func(int) string { return "sort(arr)" }},
	{"repeat (refused)", model.TypeString, func(k int) string { return fmt.Sprintf("repeat(big, %d)", k) }},
	{"fromJSON (refused)", model.TypeMap, func(int) string { return "fromJSON(big)" }},
}

// adversarialDefinition builds a definition from the fuzzer's bytes: a
// foreach whose iterations hold a param (read by getFromForeach), a step
// "wide" with a nested MAP param, then a chain of NoOp steps — all decided
// in one decision — whose params repeat costly terms, up to about 200 KB.
func adversarialDefinition(f *fuzzBytes) []byte {
	n := f.next() * 100 // up to 25,500: ranges near the array limit
	pat := strings.Repeat("a{1000}", 1+f.next()%12)
	nested := `"m":{"type":"MAP","value":{"x":{"type":"STRING","expression":"big + half"},"y":{"type":"MAP","value":{"z":{"type":"STRING","expression":"half + half"}}}}}`
	var steps []string
	total := 0
	for i := 0; total < 200_000 && i < 1+f.next()%32; i++ {
		term := adversarialTerms[f.next()%len(adversarialTerms)]
		k := f.next()
		copies := 1 + f.next()*f.next()%400
		var ps []string
		size := 0
		for c := 0; c < copies && total+size < 200_000; c++ {
			p := fmt.Sprintf(`"p%d":{"type":%q,"expression":%q}`, c, term.typ, term.src(k+c))
			ps = append(ps, p)
			size += len(p)
		}
		total += size
		// A failed step does not stop the chain: every step is decided.
		steps = append(steps, fmt.Sprintf(`{"step":{"id":"s%d","type":"NoOp","failure_mode":"IGNORE_FAILURE","params":{%s}}}`, i, strings.Join(ps, ",")))
	}
	for i := range steps[:len(steps)-1] {
		steps[i] = strings.TrimSuffix(steps[i], "}}") + fmt.Sprintf(`,"transition":{"successors":{"s%d":"true"}}}}`, i+1)
	}
	return []byte(fmt.Sprintf(`{"properties":{"owner":"adversary"},"workflow":{"id":"adversary",
	  "params":{"a0":{"type":"STRING","value":%q},
	    "a1":{"type":"STRING","expression":"a0 + a0"},"a2":{"type":"STRING","expression":"a1 + a1"},
	    "a3":{"type":"STRING","expression":"a2 + a2"},"a4":{"type":"STRING","expression":"a3 + a3"},
	    "half":{"type":"STRING","expression":"a4 + a4"},"big":{"type":"STRING","expression":"half + half"},
	    "pat":{"type":"STRING","value":%q},"n":{"type":"LONG","value":%d},
	    "arr":{"type":"LONG_ARRAY","expression":"Util.intsBetween(0, 20000, 1)"}},
	  "steps":[
	    {"foreach":{"id":"loop","params":{"loop_params":{"type":"MAP","value":{"i":{"type":"LONG_ARRAY","expression":"Util.intsBetween(0, 10000, 1)"}}}},
	      "steps":[{"step":{"id":"inner","type":"NoOp","params":{"v":{"type":"STRING","value":"x"}}}}],
	      "transition":{"successors":{"wide":"true"}}}},
	    {"step":{"id":"wide","type":"NoOp","params":{%s},"transition":{"successors":{"s0":"true"}}}},
	    %s]}}`, strings.Repeat("a", 4<<10), pat, n, nested, strings.Join(steps, ",")))
}

// adversarialSeed is the fuzzer's bytes for a definition of one step
// repeating term 1 + square%400 times (k picks its variant), then one
// regular expression, with ranges near the array limit.
func adversarialSeed(term int, k, square byte) []byte {
	return []byte{250, 0, 1, byte(term), k, square, square}
}

// fatIterations serves every iteration's param "v" as a 100 KB string, and
// charges a 300 KB run read for each, as a store would.
type fatIterations struct{ loaded map[int64]bool }

func (f *fatIterations) PrefetchChildren(_ context.Context, _ string, insts []int64, _ int64, _, _ string, charge func(int64) error) error {
	f.loaded = map[int64]bool{}
	for _, n := range insts {
		if err := charge(300_000); err != nil {
			return err
		}
		f.loaded[n] = true
	}
	return nil
}

func (f *fatIterations) ChildStepParam(_ context.Context, _ string, inst, _ int64, _, name string) (ChildParam, error) {
	if !f.loaded[inst] {
		return ChildParam{Read: 300_000, Value: strings.Repeat("v", 100_000), Reached: true, Found: name == "v"}, nil
	}
	return ChildParam{Value: strings.Repeat("v", 100_000), Reached: true, Found: name == "v"}, nil
}

// decisionCost is what one decision spent.
type decisionCost struct {
	cpu   time.Duration
	alloc uint64
	units int64
}

// processCPU is the CPU time the process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// decideMeasured decides and measures the decision.
func decideMeasured(g *Graph, st *Instance, ev Event, opts ...Option) (*Decision, error, decisionCost) {
	b := expression.NewBudget(0, 0)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	cpu := processCPU()
	d, err := Decide(context.Background(), g, st, ev, t0, append(opts, WithBudget(b))...)
	cost := decisionCost{cpu: processCPU() - cpu, units: b.CPUUsed()}
	runtime.ReadMemStats(&after)
	cost.alloc = after.TotalAlloc - before.TotalAlloc
	return d, err, cost
}

// runAdversary decides an adversarial definition's start, then the end of
// its foreach (which starts every other step, in one decision), and returns
// the costliest decision; ok is false when the validator refused it.
func runAdversary(t testing.TB, checker *definition.Checker, eval Evaluator, data []byte) (worst decisionCost, ok bool) {
	def, err := checker.Check(data, definition.JSON)
	if err != nil {
		return worst, false
	}
	g, err := Compile(def.Workflow, eval)
	if err != nil {
		t.Fatalf("an accepted definition does not compile: %v", err)
	}
	d, err, cost := decideMeasured(g, newInstance(g), StartRun{})
	if err != nil {
		t.Fatalf("decide the start: %v", err)
	}
	worst = cost
	st := d.State
	if s := st.Step("loop"); s != nil && s.Loop != nil && s.Loop.Total > 0 {
		// Every iteration launched, all but the last ended; the last ends now.
		s.Loop.Next = s.Loop.Total
		s.Loop.Running = []int64{s.Loop.Total - 1}
		s.Loop.Counts = map[model.WorkflowStatus]int64{model.WorkflowSucceeded: s.Loop.Total - 1}
		ev := ChildEnded{StepID: "loop", Attempt: s.Attempt, Index: s.Loop.Total - 1, Status: model.WorkflowSucceeded}
		d, err, cost = decideMeasured(g, st, ev, WithChildParams(&fatIterations{}))
		if err != nil {
			t.Fatalf("decide the loop's end: %v", err)
		}
		if cost.cpu > worst.cpu || cost.alloc > worst.alloc {
			worst = cost
		}
		if _, err := json.Marshal(d.State); err != nil {
			t.Fatalf("state does not encode: %v", err)
		}
	}
	return worst, true
}

// FuzzDecideAdversarial: no accepted definition makes a decision spend more
// than maxDecisionCPU of CPU (decisionCPULimit under the race detector) or
// allocate more than maxDecisionAlloc.
func FuzzDecideAdversarial(f *testing.F) {
	for term := range adversarialTerms {
		// Each term, repeated as often as the definition holds, and a few
		// times (the checking budget refuses too many literal patterns).
		f.Add(adversarialSeed(term, 7, 255))
		f.Add(adversarialSeed(term, 99, 3))
	}
	f.Add([]byte{255, 5, 32, 0, 1, 255, 255, 4, 1, 255, 255, 2, 3, 255, 255, 15, 0, 255, 255, 7, 9, 255, 255})
	checker := definition.NewChecker(definition.WithClock(func() time.Time { return t0 }))
	eval := NewEvaluator(expression.New(expression.DefaultLimits()))
	f.Fuzz(func(t *testing.T, data []byte) {
		worst, ok := runAdversary(t, checker, eval, adversarialDefinition(&fuzzBytes{b: data}))
		if !ok {
			return
		}
		if worst.cpu > decisionCPULimit() || worst.alloc > maxDecisionAlloc {
			t.Fatalf("a decision took %s of CPU and allocated %d MiB (%d units)", worst.cpu, worst.alloc>>20, worst.units)
		}
	})
}

// TestAdversarialDefinitionsAreAccepted keeps FuzzDecideAdversarial
// meaningful: the definitions of its seeds that use no refused function
// pass the validator.
func TestAdversarialDefinitionsAreAccepted(t *testing.T) {
	checker := definition.NewChecker(definition.WithClock(func() time.Time { return t0 }))
	for term, tc := range adversarialTerms {
		data := adversarialDefinition(&fuzzBytes{b: adversarialSeed(term, 7, 3)})
		_, err := checker.Check(data, definition.JSON)
		refused := strings.HasSuffix(tc.name, "(refused)")
		if (err != nil) != refused {
			t.Errorf("%s (%d KB): %v", tc.name, len(data)>>10, err)
		}
	}
}

// BenchmarkAdversarialDecide prints the costliest decision of the
// adversarial seeds, each term at its largest: what "any definition
// decides in well under a second" rests on.
func BenchmarkAdversarialDecide(b *testing.B) {
	checker := definition.NewChecker(definition.WithClock(func() time.Time { return t0 }))
	eval := NewEvaluator(expression.New(expression.DefaultLimits()))
	var worst decisionCost
	worstTerm := ""
	for b.Loop() {
		for term, tc := range adversarialTerms {
			for _, k := range []byte{0, 7, 99, 250} {
				for _, square := range []byte{255, 16, 3} {
					cost, ok := runAdversary(b, checker, eval, adversarialDefinition(&fuzzBytes{b: adversarialSeed(term, k, square)}))
					if ok && cost.cpu > worst.cpu {
						worst, worstTerm = cost, fmt.Sprintf("%s (k %d, %d copies)", tc.name, k, 1+int(square)*int(square)%400)
					}
				}
			}
		}
	}
	b.ReportMetric(float64(worst.cpu.Milliseconds()), "worst-cpu-ms")
	b.ReportMetric(float64(worst.alloc>>20), "worst-alloc-MiB")
	b.ReportMetric(float64(worst.units)/1e6, "worst-Munits")
	b.Logf("costliest decision: %s, %s of CPU, %d MiB allocated, %d units", worstTerm, worst.cpu, worst.alloc>>20, worst.units)
}
