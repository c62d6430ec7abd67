package expression

// Limits bound what one expression may cost. Every limit applies per
// expression: at compile time (source length, AST size) or per evaluation
// (memory, string and array sizes).
type Limits struct {
	// MaxSourceLen is the longest accepted expression source, in bytes.
	// Maestro's SEL length-limit is 10,000.
	MaxSourceLen int
	// MaxNodes caps the number of AST nodes of one expression.
	MaxNodes uint
	// MaxStringLen caps every string the expression builds (by +,
	// toString, helpers) and its string result, in bytes.
	MaxStringLen int
	// MaxArrayLen caps arrays built by helpers (Util.intsBetween, ...) and
	// array results. Maestro's SEL array-limit is 25,001.
	MaxArrayLen int
	// MemoryBudget is the allocation budget of one evaluation. The expr VM
	// charges one unit per element of every range, array, map and predicate
	// scope it builds; the helpers of this package charge one unit per array
	// element and one unit per 16 bytes of every string they build.
	MemoryBudget uint
}

// Default limit values.
const (
	DefaultMaxSourceLen = 10000
	DefaultMaxNodes     = 2000
	DefaultMaxStringLen = 1 << 20
	DefaultMaxArrayLen  = 25001
	DefaultMemoryBudget = 1000000
)

// stringBytesPerUnit is how many string bytes cost one MemoryBudget unit.
const stringBytesPerUnit = 16

// DefaultLimits returns the limits used when none are configured.
func DefaultLimits() Limits {
	return Limits{
		MaxSourceLen: DefaultMaxSourceLen,
		MaxNodes:     DefaultMaxNodes,
		MaxStringLen: DefaultMaxStringLen,
		MaxArrayLen:  DefaultMaxArrayLen,
		MemoryBudget: DefaultMemoryBudget,
	}
}

// withDefaults replaces every zero field of l with its default.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxSourceLen <= 0 {
		l.MaxSourceLen = d.MaxSourceLen
	}
	if l.MaxNodes == 0 {
		l.MaxNodes = d.MaxNodes
	}
	if l.MaxStringLen <= 0 {
		l.MaxStringLen = d.MaxStringLen
	}
	if l.MaxArrayLen <= 0 {
		l.MaxArrayLen = d.MaxArrayLen
	}
	if l.MemoryBudget == 0 {
		l.MemoryBudget = d.MemoryBudget
	}
	return l
}
