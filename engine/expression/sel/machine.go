package sel

import (
	"errors"
	"fmt"
	"time"
)

// Limits are SEL's own limits on one evaluation (SelEvaluator's stack,
// loop, array, length and visit limits), enforced beside the host's
// Meter.
type Limits struct {
	// Loop is how many iterations one loop may run.
	Loop int64
	// Array is the length of the largest array, and the most entries of
	// a map, an expression may build.
	Array int64
	// Length is the length of the longest string an expression may build,
	// in bytes. (Maestro's length-limit bounds the expression's source;
	// the host bounds that before parsing.)
	Length int64
	// Visits is how many AST nodes one evaluation may visit.
	Visits int64
}

// DefaultLimits returns Maestro's defaults for SEL (maestro.sel.* in its
// application.yml: loop-limit and array-limit 25,001, visit-limit
// 100,000,000), strings at most 1 MiB. Nesting, which Maestro bounds by
// its stack-limit, is bounded when parsing (maxNesting).
func DefaultLimits() Limits {
	return Limits{Loop: 25001, Array: 25001, Length: 1 << 20, Visits: 100_000_000}
}

// Meter is what an evaluation's work is charged to: CPU units (about a
// nanosecond each) and bytes of memory. The host's budget
// (expression.Budget) is one.
type Meter interface {
	Charge(cpu, mem int64) error
}

// ErrLimit is wrapped by every error of a limit reached: SEL's own
// (Limits) or the Meter's.
var ErrLimit = errors.New("sel: limit reached")

// ErrUnsupported is wrapped by the errors of what SEL refuses: an unknown
// class, method or field, a statement or operator it does not have.
var ErrUnsupported = errors.New("sel: unsupported")

// Machine is the state of one evaluation: its variables, its limits, its
// meter and the host's objects. Methods of values receive it to charge
// their work and check the sizes they build.
type Machine struct {
	limits Limits
	meter  Meter
	vars   map[string]*slot
	inputs map[string]Value
	hosts  map[string]Host
	visits int64
	// now is the instant new DateTime() and System.currentTimeMillis() read; seed and
	// uuids make UUID.randomUUID() deterministic per evaluation.
	now   time.Time
	seed  string
	uuids int64
}

// Charge charges cpu units and mem bytes of work to the evaluation's
// meter.
func (m *Machine) Charge(cpu, mem int64) error {
	if m.meter == nil {
		return nil
	}
	if err := m.meter.Charge(cpu, mem); err != nil {
		return fmt.Errorf("%w: %w", ErrLimit, err)
	}
	return nil
}

// CheckString fails when a string of n bytes is longer than the limit.
func (m *Machine) CheckString(n int) error {
	if int64(n) > m.limits.Length {
		return fmt.Errorf("%w: a string of %d bytes is over the length limit of %d", ErrLimit, n, m.limits.Length)
	}
	return nil
}

// CheckArray fails when an array of n items is longer than the limit.
func (m *Machine) CheckArray(n int) error {
	if int64(n) > m.limits.Array {
		return fmt.Errorf("%w: an array of %d items is over the array limit of %d", ErrLimit, n, m.limits.Array)
	}
	return nil
}

// CheckMap fails when a map of n entries is larger than the limit.
func (m *Machine) CheckMap(n int) error {
	if int64(n) > m.limits.Array {
		return fmt.Errorf("%w: a map of %d entries is over the array limit of %d", ErrLimit, n, m.limits.Array)
	}
	return nil
}

// Now is the evaluation's instant (new DateTime(), System.currentTimeMillis()).
func (m *Machine) Now() time.Time { return m.now }

// Unsupported returns an error wrapping ErrUnsupported.
func Unsupported(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUnsupported, fmt.Sprintf(format, args...))
}

// Config is what one evaluation is given.
type Config struct {
	// Limits are SEL's limits; zero fields take DefaultLimits'.
	Limits Limits
	// Meter is charged the evaluation's work; nil charges nothing.
	Meter Meter
	// Vars are the expression's inputs by name (Maestro's params by bare
	// name): assignments in the expression do not change the map.
	Vars map[string]Value
	// Hosts are the host's objects by name (params, Util).
	Hosts map[string]Host
	// Now is the instant new DateTime() and System.currentTimeMillis() read.
	Now time.Time
	// Seed makes UUID.randomUUID() deterministic: the same seed gives
	// the same UUIDs in the same order.
	Seed string
}

// newMachine returns the machine of one evaluation under cfg.
func newMachine(cfg Config) *Machine {
	l := cfg.Limits
	d := DefaultLimits()
	if l.Loop <= 0 {
		l.Loop = d.Loop
	}
	if l.Array <= 0 {
		l.Array = d.Array
	}
	if l.Length <= 0 {
		l.Length = d.Length
	}
	if l.Visits <= 0 {
		l.Visits = d.Visits
	}
	return &Machine{limits: l, meter: cfg.Meter, vars: map[string]*slot{}, hosts: cfg.Hosts, now: cfg.Now, seed: cfg.Seed,
		inputs: cfg.Vars}
}
