package expression

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/maestro-serverless/maestro/model"
)

// TestStringOperations: the charged helpers behave as expr's operators and
// builtins they replace.
func TestStringOperations(t *testing.T) {
	l := New(DefaultLimits())
	for _, tc := range []struct {
		src  string
		want any
	}{
		{"'abc' matches 'b'", true},
		{"'abc' matches '^b'", false},
		{"s matches '^s.r$'", true},
		{"s matches ('^' + 's')", true},
		{"s contains 't'", true},
		{"s contains 'x'", false},
		{"s startsWith 'st'", true},
		{"s endsWith 'tr'", true},
		{"not (s endsWith 'x')", true},
		{"upper(s)", "STR"},
		{"lower('AbC')", "abc"},
		{"trim('  a ')", "a"},
		{"trim('xxaxx', 'x')", "a"},
		{"trimPrefix('prefix-a', 'prefix-')", "a"},
		{"trimSuffix('a.txt', '.txt')", "a"},
		{"indexOf('abcabc', 'c')", int64(2)},
		{"lastIndexOf('abcabc', 'c')", int64(5)},
		{"indexOf('abc', 'z')", int64(-1)},
		{"hasPrefix(s, 's')", true},
		{"hasSuffix(s, 's')", false},
		{"upper(s) + lower('X')", "STRx"},
	} {
		got, err := evalString(t, l, tc.src, "")
		require.NoError(t, err, tc.src)
		assert.Equal(t, tc.want, got, tc.src)
	}
	for _, tc := range []struct {
		src  string
		kind error
		msg  string
	}{
		{"'a' matches '('", ErrSyntax, `invalid regular expression "("`},
		{"l matches 'a'", ErrType, "s matches pattern: argument 1 must be a string"},
		{"upper(l)", ErrType, "upper(s): argument 1 must be a string"},
		{"indexOf(s, l)", ErrType, "indexOf(s, t): argument 2 must be a string"},
	} {
		_, err := l.Compile(tc.src, "", testScope())
		require.Error(t, err, tc.src)
		assert.ErrorIs(t, err, tc.kind, tc.src)
		assert.Contains(t, err.Error(), tc.msg, tc.src)
	}
	// A pattern computed at run time is checked when it runs.
	_, err := evalString(t, l, "s matches ('(' + s)", "")
	require.ErrorIs(t, err, ErrEval)
	assert.Contains(t, err.Error(), "matches: invalid regular expression")
}

// TestBudgetIsSharedAndCounted: every evaluation under one context charges
// one Budget; what it charges is counted, so it fails the same way on every
// replay.
func TestBudgetIsSharedAndCounted(t *testing.T) {
	l := New(DefaultLimits())
	s600 := strings.Repeat("a", 600)
	scope := model.Scope{Vars: map[string]model.ParamType{"s": model.TypeString}}
	env := &Env{Vars: map[string]any{"s": s600}}
	eval := func(ctx context.Context, src string) error {
		p, err := l.Compile(src, "", scope)
		require.NoError(t, err, src)
		_, err = p.Eval(ctx, env)
		return err
	}

	// Each occurrence of a variable reads it: s == s reads 2 × 601 units.
	b := NewBudget(1000, 0)
	ctx := WithBudget(context.Background(), b)
	require.NoError(t, eval(ctx, "s == 'x'"))
	assert.Equal(t, int64(601), b.CPUUsed())
	err := eval(ctx, "s == 'y'")
	require.ErrorIs(t, err, ErrLimit)
	assert.Contains(t, err.Error(), "CPU budget exceeded: the expressions of one decision may spend at most 1,000 units")

	// A regular expression costs subject bytes × program instructions,
	// charged before it runs.
	insts, err := regexSize(strings.Repeat("(a|b)", 200) + "c")
	require.NoError(t, err)
	b = NewBudget(int64(601*insts), 0) // less than the pattern costs, after reading s
	ctx = WithBudget(context.Background(), b)
	err = eval(ctx, "s matches '"+strings.Repeat("(a|b)", 200)+"c'")
	require.ErrorIs(t, err, ErrLimit)
	assert.GreaterOrEqual(t, b.CPUUsed(), int64(601+601*insts), "charged subject × instructions before running")

	// Memory: upper builds a new string of the subject's size.
	b = NewBudget(0, 50)
	ctx = WithBudget(context.Background(), b)
	require.NoError(t, eval(ctx, "upper(s)"))
	err = eval(ctx, "upper(s)")
	require.ErrorIs(t, err, ErrLimit)
	assert.Contains(t, err.Error(), "memory budget exceeded: the expressions of one decision may build at most 50 units")

	// A cancelled context stops a costly step.
	cctx, cancel := context.WithCancel(WithBudget(context.Background(), NewBudget(0, 0)))
	cancel()
	err = eval(cctx, "upper(s)")
	require.Error(t, err)
	assert.True(t, errors.Is(err, context.Canceled) || strings.Contains(err.Error(), "canceled"), err.Error())

	// Without a budget in the context, each evaluation gets its own.
	for range 3 {
		require.NoError(t, eval(context.Background(), "s matches 'a+'"))
	}
}
