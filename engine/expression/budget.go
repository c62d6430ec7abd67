package expression

import (
	"context"
	"fmt"
	"sync/atomic"
)

// Default budgets of one unit of work (the engine: one decision; elsewhere:
// one evaluation), see Budget.
const (
	// DefaultBudgetCPU is 100 million CPU units. A unit is one byte read,
	// built or scanned (one byte times one instruction for a regular
	// expression); measured at 1 to 5 ns a unit on a 2-core x86 machine, so
	// a decision's expressions spend at most about half a second of CPU.
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
// budget does so on every replay. It is safe for concurrent use.
type Budget struct {
	cpuLimit, memLimit int64
	cpu, mem           atomic.Int64
}

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

// chargeCPU spends n CPU units, failing once the budget is spent.
func (b *Budget) chargeCPU(n int64) error {
	if b.cpu.Add(n) > b.cpuLimit {
		return failf(ErrLimit, "CPU budget exceeded: the expressions of one decision may read, build or scan at most %s bytes (regular expressions: bytes × pattern instructions)", units(b.cpuLimit))
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

// valueCost is the CPU cost of reading v: its string bytes and elements.
func valueCost(v any) int64 {
	switch x := v.(type) {
	case string:
		return int64(len(x)) + 1
	case []string:
		n := int64(len(x)) + 1
		for _, s := range x {
			n += int64(len(s))
		}
		return n
	case []int64:
		return int64(len(x)) + 1
	case []float64:
		return int64(len(x)) + 1
	case []bool:
		return int64(len(x)) + 1
	case []any:
		n := int64(len(x)) + 1
		for _, e := range x {
			n += valueCost(e)
		}
		return n
	case map[string]any:
		n := int64(len(x)) + 1
		for k, e := range x {
			n += int64(len(k)) + valueCost(e)
		}
		return n
	case map[string]string:
		n := int64(len(x)) + 1
		for k, e := range x {
			n += int64(len(k) + len(e))
		}
		return n
	default:
		return 1
	}
}
