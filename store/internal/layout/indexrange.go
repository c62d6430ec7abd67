package layout

import (
	"fmt"
	"math"

	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/signals"
)

// KeyRange is a range of sort keys in one partition: the keys that begin
// with Prefix when it is set, else those from From to To (both included).
type KeyRange struct {
	Prefix   string
	From, To string
}

// IndexRange returns the range of a param's index partition that holds a
// superset of the entries that can satisfy c (and, for exact values,
// exactly them); ok is false when none can.
func IndexRange(c signals.Condition) (r KeyRange, ok bool, err error) {
	v, err := signals.Normalize(c.Value)
	if err != nil {
		return KeyRange{}, false, fmt.Errorf("store: signal condition on %q: %w", c.Param, err)
	}
	between := func(from, to string) (KeyRange, bool, error) { return KeyRange{From: from, To: to}, true, nil }
	prefix := func(p string) (KeyRange, bool, error) { return KeyRange{Prefix: p}, true, nil }
	enc, exact, _ := IndexValue(v)
	if n, isLong := v.(int64); isLong {
		switch c.Op {
		case model.OpEqual:
			return prefix(enc + "#")
		case model.OpGreater:
			if n == math.MaxInt64 {
				return KeyRange{}, false, nil
			}
			next, _, _ := IndexValue(n + 1)
			return between(next, "M")
		case model.OpGreaterEqual:
			return between(enc, "M")
		case model.OpLess:
			return between("L", enc) // enc alone sorts before every entry of n
		case model.OpLessEqual:
			return between("L", enc+"$")
		}
		return KeyRange{}, false, fmt.Errorf("store: unknown signal operator %q", c.Op)
	}
	switch c.Op {
	case model.OpEqual:
		if exact {
			return prefix(enc + "#")
		}
		return prefix(enc + "$")
	}
	// Among the characters that follow a value's hex digits in a key,
	// '"' < '#' (an exact value ends) < '$' (a cut value ends) < '%' < the
	// hex digits (a longer value goes on); "T" sorts after every string.
	switch {
	case c.Op == model.OpGreater && exact:
		return between(enc+"$", "T")
	case c.Op == model.OpGreater, c.Op == model.OpGreaterEqual:
		return between(enc, "T")
	case c.Op == model.OpLess && exact:
		return between("S", enc+`"`)
	case c.Op == model.OpLessEqual && exact:
		return between("S", enc+"$")
	case c.Op == model.OpLess, c.Op == model.OpLessEqual:
		return between("S", enc+"%")
	}
	return KeyRange{}, false, fmt.Errorf("store: unknown signal operator %q", c.Op)
}
