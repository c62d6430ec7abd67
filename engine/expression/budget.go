package expression

import (
	"context"
	"fmt"
	"regexp"
	"sync"
	"sync/atomic"

	"github.com/maestro-serverless/maestro/model"
)

// Default budgets of one unit of work (the engine: one decision; elsewhere:
// one evaluation), see Budget.
const (
	// DefaultBudgetCPU is 100 million CPU units. A unit is one byte read,
	// built or scanned; an array element or map entry costs elementCost, a
	// regular expression regexMatchCost per subject byte and program
	// instruction. Those weights make a unit 0.3 to 3 ns of CPU on a 2-core
	// x86 machine whatever the construct (BenchmarkAdversarialDecide), so a
	// decision's expressions spend at most about 0.3 s of CPU.
	DefaultBudgetCPU = 100_000_000
	// DefaultBudgetMemory is 4 million memory units (a unit is one array
	// element or 16 string bytes): 64 MiB of strings built by all the
	// expressions of one unit of work.
	DefaultBudgetMemory = 4_000_000
)

// Budget is the CPU and memory allowance shared by every expression
// evaluated for one unit of work — the engine gives each decision one, so
// that however many expressions a definition holds, a decision does bounded
// work. Costs are counted, not timed, so an evaluation that runs out of
// budget does so on every replay. It also keeps the regular expressions its
// unit of work compiled, so a pattern matched by many expressions is
// compiled once. It is safe for concurrent use.
type Budget struct {
	cpuLimit, memLimit int64
	cpu, mem           atomic.Int64

	mu       sync.Mutex
	regexps  map[string]keptRegex
	kept     int64 // instructions of the kept programs
	compiles int
}

// keptRegex is a compiled pattern and its size.
type keptRegex struct {
	re    *regexp.Regexp
	insts int64
}

// A Budget keeps at most this many compiled patterns, of at most this many
// instructions in all (a few MB of programs); past either, patterns are
// compiled — and charged — again.
const (
	maxKeptRegexps      = 256
	maxKeptInstructions = 100_000
)

// NewBudget returns a budget of cpu CPU units and mem memory units; zero or
// negative values take the defaults.
func NewBudget(cpu, mem int64) *Budget {
	if cpu <= 0 {
		cpu = DefaultBudgetCPU
	}
	if mem <= 0 {
		mem = DefaultBudgetMemory
	}
	return &Budget{cpuLimit: cpu, memLimit: mem}
}

// CPUUsed returns the CPU units spent so far (possibly over the limit, by
// the charge that failed).
func (b *Budget) CPUUsed() int64 { return b.cpu.Load() }

// MemoryUsed returns the memory units spent so far.
func (b *Budget) MemoryUsed() int64 { return b.mem.Load() }

// CPULimit and MemoryLimit return the allowance.
func (b *Budget) CPULimit() int64 { return b.cpuLimit }

// MemoryLimit returns the memory allowance.
func (b *Budget) MemoryLimit() int64 { return b.memLimit }

// MemoryLeft returns the memory units not spent yet (0 once overspent).
func (b *Budget) MemoryLeft() int64 { return max(b.memLimit-b.mem.Load(), 0) }

// RegexCompiles returns how many regular expressions the unit of work
// compiled (a pattern kept from an earlier match is not compiled again).
func (b *Budget) RegexCompiles() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.compiles
}

// Charge spends cpu CPU units and mem memory units of work done outside
// the expressions for them — the engine charges the bytes it reads from
// other runs for params.getFromForeach. The error is ErrLimit's, naming the
// budget, once either is spent.
func (b *Budget) Charge(cpu, mem int64) error {
	if err := b.chargeCPU(cpu); err != nil {
		return err
	}
	return b.chargeMemory(mem)
}

// regex returns the program kept for pattern.
func (b *Budget) regex(pattern string) (*regexp.Regexp, int64, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	k, ok := b.regexps[pattern]
	return k.re, k.insts, ok
}

// keepRegex records a compilation and keeps its program while there is room.
func (b *Budget) keepRegex(pattern string, re *regexp.Regexp, insts int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.compiles++
	if len(b.regexps) >= maxKeptRegexps || b.kept+insts > maxKeptInstructions {
		return
	}
	if b.regexps == nil {
		b.regexps = make(map[string]keptRegex)
	}
	b.regexps[pattern] = keptRegex{re: re, insts: insts}
	b.kept += insts
}

// chargeCPU spends n CPU units, failing once the budget is spent.
func (b *Budget) chargeCPU(n int64) error {
	if b.cpu.Add(n) > b.cpuLimit {
		return failf(ErrLimit, "CPU budget exceeded: the expressions of one decision may spend at most %s units "+
			"(a unit per byte read, built or scanned, %d per array element, %d per subject byte and instruction of a regular expression)",
			units(b.cpuLimit), elementCost, regexMatchCost)
	}
	return nil
}

// chargeMemory spends n memory units, failing once the budget is spent.
func (b *Budget) chargeMemory(n int64) error {
	if b.mem.Add(n) > b.memLimit {
		return failf(ErrLimit, "memory budget exceeded: the expressions of one decision may build at most %s units (one per array element or %d string bytes)", units(b.memLimit), stringBytesPerUnit)
	}
	return nil
}

// units prints n with thousands separators.
func units(n int64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

type budgetKey struct{}

// WithBudget returns a context whose evaluations all charge b. Evaluations
// under a context without one get a fresh default budget each.
func WithBudget(ctx context.Context, b *Budget) context.Context {
	return context.WithValue(ctx, budgetKey{}, b)
}

// BudgetFrom returns the budget WithBudget attached to ctx, or nil.
func BudgetFrom(ctx context.Context) *Budget {
	b, _ := ctx.Value(budgetKey{}).(*Budget)
	return b
}

// elementCost is the CPU units of one array element or map entry read:
// the operations over them (in, ==, max, min, keys, printing) go through
// reflection at 30-50 ns an element, where a string byte costs about one
// nanosecond (BenchmarkAdversarialDecide measures both).
const elementCost = 32

// valueCost is the CPU cost of reading v: its string bytes and its
// elements, elementCost each.
func valueCost(v any) int64 {
	switch x := v.(type) {
	case string:
		return int64(len(x)) + 1
	case []string:
		n := int64(len(x))*elementCost + 1
		for _, s := range x {
			n += int64(len(s))
		}
		return n
	case []int64:
		return int64(len(x))*elementCost + 1
	case []float64:
		return int64(len(x))*elementCost + 1
	case []bool:
		return int64(len(x))*elementCost + 1
	case []any:
		n := int64(len(x))*elementCost + 1
		for _, e := range x {
			n += valueCost(e)
		}
		return n
	case map[string]any:
		n := int64(len(x))*elementCost + 1
		for k, e := range x {
			n += int64(len(k)) + valueCost(e)
		}
		return n
	case map[string]string:
		n := int64(len(x))*elementCost + 1
		for k, e := range x {
			n += int64(len(k) + len(e))
		}
		return n
	default:
		return 1
	}
}

// Checker returns a model.ExpressionChecker that compiles with l and
// charges b what checking each expression costs (its bytes, and each
// literal regular expression its program's compilation), so that checking
// one definition does bounded work whatever it holds: past b every further
// expression is refused with ErrLimit. A cached compilation is charged as a
// fresh one, so the verdict does not depend on what was checked before.
func (l *Language) Checker(b *Budget) model.ExpressionChecker {
	return &budgetedChecker{lang: l, budget: b}
}

type budgetedChecker struct {
	lang   *Language
	budget *Budget
}

func (c *budgetedChecker) CheckExpression(src string, want model.ParamType, scope model.Scope) error {
	p, err := c.lang.Compile(src, want, scope)
	if err != nil {
		return err
	}
	if c.budget.cpu.Add(p.checkCost) > c.budget.cpuLimit {
		return newError(src, ErrLimit, nil, "checking the definition's expressions costs more than %s units "+
			"(one per source byte, %d per instruction of each literal regular expression): use fewer or smaller patterns",
			units(c.budget.cpuLimit), regexCompileCost)
	}
	return nil
}
