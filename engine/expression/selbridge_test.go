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

// TestSELPrograms runs SEL through Language: its helpers are the dialect's
// (params.*, Util.*), its inputs the scope's params, its results the
// params' Go types.
func TestSELPrograms(t *testing.T) {
	l := New(DefaultLimits())
	cases := []struct {
		src  string
		want model.ParamType
		out  any
	}{
		{"x = params.get('l'); if (x > 2) return 'big'; else return 'small';", model.TypeString, "big"},
		{"int n = 0; for (int i = 0; i < l; i += 1) { n += i; } return n;", model.TypeLong, int64(21)},
		{"a = Util.dateIntsBetween(20200101, 20200104, 1); return a[2];", model.TypeLong, int64(20200103)},
		{"r = Util.intsBetween(0, 3, 1); return r.length;", model.TypeLong, int64(3)},
		// An input keeps its type: d is a DOUBLE param.
		{"d = d * 2; return d;", model.TypeDouble, 5.0},
		{"s.split('t')", model.TypeStringArray, []string{"s", "r"}},
		{"m = new HashMap(); m.put('k', params['s']); return m;", model.TypeStringMap, map[string]string{"k": "str"}},
		{"x = job1__sleep_seconds; x += 1; return x;", model.TypeLong, int64(16)},
		{"new long[]{l, l * 2};", model.TypeLongArray, []int64{7, 14}},
		{"DateTimeFormat.forPattern('yyyyMMdd').withZone(DateTimeZone.forID('UTC')).parseDateTime('20210101').plusDays(l).toString('yyyyMMdd');",
			model.TypeString, "20210108"},
		{"if (params.containsKey('opt')) { return params.get('opt'); } return 'none';", model.TypeString, "none"},
		// Boxes holding null: a declared String, new String[n]'s elements.
		{"String s; return s;", "", nil},
		{"return new String[2];", model.TypeStringArray, []string{"null", "null"}},
		{"m = new Map(); String s; m.put('k', s); m.put('n', 1); return m;", model.TypeMap, map[string]any{"k": nil, "n": int64(1)}},
	}
	for _, c := range cases {
		t.Run(c.src, func(t *testing.T) {
			p, err := l.Compile(c.src, c.want, testScope())
			require.NoError(t, err)
			require.NotNil(t, p.sel, "read as SEL")
			v, err := p.Eval(context.Background(), testEnv())
			require.NoError(t, err)
			assert.Equal(t, c.out, v)
		})
	}
}

// TestSELErrors: create-time checks and run-time failures name what is
// wrong; every error is an *Error quoting the source.
func TestSELErrors(t *testing.T) {
	l := New(DefaultLimits())
	compile := []struct {
		src  string
		want model.ParamType
		kind error
		msg  string
	}{
		{"x = 1; return nope + x;", "", ErrUnknownParam, `unknown parameter "nope"`},
		{"x = Util.nope(1); return x;", "", ErrUnsupported, "Util.nope(..) is not a supported function"},
		{"x = params.getFromStep(); return x;", "", ErrSyntax, "params.getFromStep takes 1 to 2 arguments, got 0"},
		{"x = params.get('nope'); return x;", "", ErrUnknownParam, `unknown parameter "nope"`},
		{"x = Math; return 1;", "", ErrUnsupported, "Math is not a value"},
		{"return 'a' + 1;", model.TypeLong, ErrType, "result is STRING, but the expected type is LONG"},
		{"return new long[]{1};", model.TypeString, ErrType, "result is an array of LONG, but the expected type is STRING"},
		{"return new Map() + 1;", "", ErrType, "MAP does not support the operator +"},
		{"new Socket('h', 1);", "", ErrUnsupported, "the class Socket is not available in SEL"},
		{"x = 1;\ny = x +;", "", ErrSyntax, "line 2, column 8"},
		{"x = 1; x++;", "", ErrUnsupported, "++"},
	}
	for _, c := range compile {
		_, err := l.Compile(c.src, c.want, testScope())
		requireErrorOf(t, err, c.kind, c.msg)
		var e *Error
		require.True(t, errors.As(err, &e), c.src)
		assert.Equal(t, c.src, e.Source)
	}
	run := []struct {
		src  string
		kind error
		msg  string
	}{
		{"x = 0; return 10 / x;", ErrEval, "line 1, column 18: / by zero"},
		{"throw 'stop: ' + l;", ErrEval, "the expression threw an error: stop: 7"},
		{"int x = 1;", ErrType, "the expression has no value"},
		{"x = true; return x + 1;", ErrEval, "type mismatch, lhs type: BOOLEAN, rhs object type: LONG"},
		{"new DateTime(0);", ErrType, "invalid return type DATETIME"},
		{"DateTimeZone.forID('../../etc/passwd').toString();", ErrEval, "passwd"},
	}
	for _, c := range run {
		p, err := l.Compile(c.src, "", testScope())
		require.NoError(t, err, c.src)
		_, err = p.Eval(context.Background(), testEnv())
		requireErrorOf(t, err, c.kind, c.msg)
	}
}

// TestSELIsChargedToTheBudget: loops, strings and helpers in SEL spend the
// decision's budget as the dialect does; no program gets around it.
func TestSELIsChargedToTheBudget(t *testing.T) {
	l := New(DefaultLimits())
	for _, src := range []string{
		"for (;;) { }",
		"i = 0; while (true) { i += 1; }",
		"s = 'x'; for (int i = 0; i < 25000; i += 1) { s = s + 'abcdefgh'; } return s.length();",
		"n = 0; for (int i = 0; i < 25000; i += 1) { a = Util.intsBetween(0, 20000, 1); n += a.length; } return n;",
	} {
		p, err := l.Compile(src, "", testScope())
		require.NoError(t, err, src)
		b := NewBudget(2_000_000, 0)
		_, err = p.Eval(WithBudget(context.Background(), b), testEnv())
		require.ErrorIs(t, err, ErrLimit, src)
		assert.True(t, strings.Contains(err.Error(), "budget") || strings.Contains(err.Error(), "limit"), err.Error())
		// It stops at the first charge past the budget: at most one
		// operation's cost (here a 20,000-long array, 640,000 units) over.
		assert.LessOrEqual(t, b.CPUUsed(), int64(2_000_000)+700_000, src)
	}
	// SEL's own loop limit stops a loop the budget allows.
	p, err := l.Compile("i = 0; while (i < 30000) { i += 1; } return i;", "", testScope())
	require.NoError(t, err)
	_, err = p.Eval(context.Background(), testEnv())
	requireErrorOf(t, err, ErrLimit, "loop limit")
}
