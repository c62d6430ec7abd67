package expression

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/maestro-serverless/maestro/model"
)

func TestLimitsFailFast(t *testing.T) {
	l := New(DefaultLimits())
	big := strings.Repeat("x", 600_000)
	half := strings.Repeat("y", 500_000)
	var many []string
	for range 40 {
		many = append(many, "len(h + '.')")
	}
	env := &Env{
		Vars: map[string]any{"s": big, "h": half, "n": int64(2_000_000_000)},
		Foreach: func(context.Context, string, string, string) (any, error) {
			return make([]int64, 1_000_000), nil
		},
	}
	scope := model.Scope{Vars: map[string]model.ParamType{"s": model.TypeString, "h": model.TypeString, "n": model.TypeLong}}
	tests := []struct {
		name string
		src  string
		want model.ParamType
		kind error
		msg  string
		// compile is set when the compiler already rejects the source.
		compile bool
	}{
		{"intsBetween 2e9 values", "Util.intsBetween(0, 2000000000, 1)", "", ErrLimit,
			"Util.intsBetween would produce 2000000000 values, more than the limit of 25001", false},
		{"intsBetween from a param", "Util.intsBetween(0, n, 1)", "", ErrLimit, "more than the limit of 25001", false},
		{"intsBetween whole int64 range", "Util.intsBetween(-9223372036854775807 - 1, 9223372036854775807, 1)", "", ErrLimit,
			"would produce 18446744073709551615 values", false},
		{"dateIntsBetween 8000 years", "Util.dateIntsBetween(10000101, 99991231, 1)", "", ErrLimit,
			"Util.dateIntsBetween would produce", false},
		{"foreach result too large", "params.getFromForeach('f', 's', 'p')", "", ErrLimit,
			"params.getFromForeach would produce 1000000 values", false},
		{"repeat is disabled", "repeat('x', 1000000000)", "", ErrUnsupported, "function repeat(..) is not supported", true},
		{"join is disabled", "join(['a'], s)", "", ErrUnsupported, "function join(..) is not supported", true},
		{"concatenation in map over a range", "map(0..1000, s + #)", "", ErrUnsupported,
			"predicates and closures ({...}, #) are not supported", true},
		{"string doubling", "s + s", "", ErrLimit, "string of 1200000 bytes exceeds the limit of 1048576 bytes", false},
		{"string doubling via toString", "(s + s).toString()", "", ErrLimit, "exceeds the limit of 1048576 bytes", false},
		{"many large concatenations", strings.Join(many, " + "), "", ErrLimit, "memory budget exceeded", false},
		{"huge range", "0..100000000", "", ErrLimit, "range 0..100000000 would produce 100000001 values, more than the limit of 25001", true},
		{"range of literal bounds too long", "0..30000", model.TypeLongArray, ErrLimit,
			"range 0..30000 would produce 30001 values, more than the limit of 25001", true},
		{"range from a param", "len(0..n)", "", ErrLimit, "range 0..2000000000 would produce 2000000001 values, more than the limit of 25001", false},
		{"source too long", "1 + " + strings.Repeat(" ", 10000) + "1", "", ErrLimit,
			"more than the limit of 10000", true},
		{"too many nodes", strings.Repeat("1+", 2500) + "1", "", ErrLimit, "more than 2000 syntax nodes", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			p, err := l.Compile(tt.src, tt.want, scope)
			if !tt.compile {
				require.NoError(t, err)
				_, err = p.Eval(context.Background(), env)
			}
			requireErrorOf(t, err, tt.kind, tt.msg)
			assert.Less(t, time.Since(start), time.Second, "must fail fast")
		})
	}
}

func TestLimitsConfigurable(t *testing.T) {
	l := New(Limits{MaxArrayLen: 5, MaxStringLen: 8})
	assert.Equal(t, 5, l.Limits().MaxArrayLen)
	assert.Equal(t, uint(DefaultMaxNodes), l.Limits().MaxNodes, "zero fields take defaults")

	p, err := l.Compile("Util.intsBetween(0, 5, 1)", "", model.Scope{})
	require.NoError(t, err)
	v, err := p.Eval(context.Background(), nil)
	require.NoError(t, err)
	assert.Equal(t, []int64{0, 1, 2, 3, 4}, v)

	p, err = l.Compile("Util.intsBetween(0, 6, 1)", "", model.Scope{})
	require.NoError(t, err)
	_, err = p.Eval(context.Background(), nil)
	assert.ErrorIs(t, err, ErrLimit)

	p, err = l.Compile("'1234' + '56789'", "", model.Scope{})
	require.NoError(t, err)
	_, err = p.Eval(context.Background(), nil)
	assert.ErrorIs(t, err, ErrLimit)
	assert.Contains(t, err.Error(), "string of 9 bytes exceeds the limit of 8 bytes")

	// A string literal is not built by +, but the result is still capped.
	p, err = l.Compile("'123456789'", "", model.Scope{})
	require.NoError(t, err)
	_, err = p.Eval(context.Background(), nil)
	assert.ErrorIs(t, err, ErrLimit)
}

func TestDeepNestingCompiles(t *testing.T) {
	l := New(DefaultLimits())
	src := strings.Repeat("(", 4000) + "1" + strings.Repeat(")", 4000)
	p, err := l.Compile(src, model.TypeLong, model.Scope{})
	require.NoError(t, err)
	v, err := p.Eval(context.Background(), nil)
	require.NoError(t, err)
	assert.Equal(t, int64(1), v)
}
