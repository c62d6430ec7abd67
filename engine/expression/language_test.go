package expression

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/maestro-serverless/maestro/model"
)

// testScope and testEnv give every type one variable.
var testVarTypes = map[string]model.ParamType{
	"l": model.TypeLong, "d": model.TypeDouble, "s": model.TypeString, "b": model.TypeBoolean,
	"sm": model.TypeStringMap, "sa": model.TypeStringArray, "la": model.TypeLongArray,
	"da": model.TypeDoubleArray, "ba": model.TypeBooleanArray, "m": model.TypeMap,
	"u": "", "get": model.TypeLong, "Util": model.TypeLong,
	"job1__sleep_seconds": model.TypeLong,
}

func testScope() model.Scope { return model.Scope{Vars: testVarTypes} }

func testEnv() *Env {
	return &Env{Vars: map[string]any{
		"l": int64(7), "d": 2.5, "s": "str", "b": true,
		"sm": map[string]string{"k": "v"}, "sa": []string{"x", "y"}, "la": []int64{1, 2, 3},
		"da": []float64{1.5}, "ba": []bool{true}, "m": map[string]any{"k": int64(1), "n": map[string]any{"z": "deep"}},
		"u": "16", "get": int64(3), "Util": int64(4), "job1__sleep_seconds": int64(15),
	}, Seed: "test"}
}

func evalString(t *testing.T, l *Language, src string, want model.ParamType) (any, error) {
	t.Helper()
	p, err := l.Compile(src, want, testScope())
	if err != nil {
		return nil, err
	}
	return p.Eval(context.Background(), testEnv())
}

func TestEvalSemantics(t *testing.T) {
	l := New(DefaultLimits())
	tests := []struct {
		src  string
		want model.ParamType
		out  any
	}{
		// Java +: strings concatenate with anything, numbers add.
		{"l + '1'", model.TypeString, "71"},
		{"'1' + l", model.TypeString, "17"},
		{"d + 'x'", model.TypeString, "2.5x"},
		{"2.0 + 'x'", model.TypeString, "2.0x"},
		{"1e7 + ''", model.TypeString, "1.0E7"},
		{"b + '!'", model.TypeString, "true!"},
		{"nil + 'x'", model.TypeString, "nullx"},
		{"1 + 2 + 'a' + 1 + 2", model.TypeString, "3a12"},
		{"l + 1", model.TypeLong, int64(8)},
		{"l + d", model.TypeDouble, 9.5},
		{"u + 1", model.TypeString, "161"}, // unknown type, string at run time
		// Integer arithmetic stays integer; / and % truncate like Java.
		{"l / 2", model.TypeLong, int64(3)},
		{"-7 / 2", model.TypeLong, int64(-3)},
		{"-7 % 3", model.TypeLong, int64(-1)},
		{"l * 5", model.TypeLong, int64(35)},
		{"l - 10", model.TypeLong, int64(-3)},
		{"7.0 / 2", model.TypeDouble, 3.5},
		{"l / 2.0", model.TypeDouble, 3.5},
		{"5.5 % 2", model.TypeDouble, 1.5},
		{"1000 * 1000 * 1000 * 1000", model.TypeLong, int64(1e12)},
		{"9223372036854775807 + 1", model.TypeLong, int64(-9223372036854775808)},
		// DOUBLE accepts integers; STRING accepts any scalar.
		{"l", model.TypeDouble, 7.0},
		{"l", model.TypeString, "7"},
		{"b", model.TypeString, "true"},
		// Comparisons, logic, ternary.
		{"l > 3 && s == 'str'", model.TypeBoolean, true},
		{"!(l > 3) || false", model.TypeBoolean, false},
		{"l > 3 ? 'big' : 'small'", model.TypeString, "big"},
		{"s != null", model.TypeBoolean, true},
		// Identifiers that look like helpers are plain params.
		{"get + Util", model.TypeLong, int64(7)},
		{"job1__sleep_seconds + 1", model.TypeLong, int64(16)},
		// Collections and member access.
		{"la", model.TypeLongArray, []int64{1, 2, 3}},
		{"la[1]", model.TypeLong, int64(2)},
		{"[1, 2, 3]", model.TypeLongArray, []int64{1, 2, 3}},
		{"[1, 2.5]", model.TypeDoubleArray, []float64{1, 2.5}},
		{"['a', 'b']", model.TypeStringArray, []string{"a", "b"}},
		{"[true]", model.TypeBooleanArray, []bool{true}},
		{"{'a': 'b'}", model.TypeStringMap, map[string]string{"a": "b"}},
		{"{'a': 1, 'b': [1]}", model.TypeMap, map[string]any{"a": int64(1), "b": []any{int64(1)}}},
		{"m.n.z", model.TypeString, "deep"},
		{"m['k'] + 1", model.TypeLong, int64(2)},
		{"sm.k", model.TypeString, "v"},
		{"len(sa)", model.TypeLong, int64(2)},
		{"sa.size() + s.length()", model.TypeLong, int64(5)},
		{"la.toString()", model.TypeString, "[1,2,3]"},
		{"l.toString() + d.toString()", model.TypeString, "72.5"},
		{"upper(s)", model.TypeString, "STR"},
		{"2 in la", model.TypeBoolean, true},
		// params.get and params[...] read any param, by literal or computed name.
		{"params.get('l') * 2", model.TypeLong, int64(14)},
		{"params['s'] + params.s", model.TypeString, "strstr"},
		{"params['jo' + 'b1__sleep_seconds']", model.TypeLong, int64(15)},
		// Math.
		{"Math.max(l, 10)", model.TypeLong, int64(10)},
		{"Math.min(l, 2.5)", model.TypeDouble, 2.5},
		{"Math.abs(-l)", model.TypeLong, int64(7)},
		{"Math.abs(-2.5)", model.TypeDouble, 2.5},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			out, err := evalString(t, l, tt.src, tt.want)
			require.NoError(t, err)
			assert.Equal(t, tt.out, out)
		})
	}
}

// TestContainsKeyGuard: a name tested with params.containsKey may be read
// even when it is not in scope, as in SEL's optional-param idiom.
func TestContainsKeyGuard(t *testing.T) {
	l := New(DefaultLimits())
	for _, tc := range []struct {
		src  string
		vars map[string]any
		want any
	}{
		{"params.containsKey('opt') ? params.get('opt') : 'none'", nil, "none"},
		{"params.containsKey('opt') ? params['opt'] : 'none'", map[string]any{"opt": "set"}, "set"},
		{"params.containsKey('s')", nil, true},
		{"params.containsKey('s' + 'x')", nil, false},
	} {
		t.Run(tc.src, func(t *testing.T) {
			p, err := l.Compile(tc.src, "", testScope())
			require.NoError(t, err)
			vars := map[string]any{"s": "str"}
			for k, v := range tc.vars {
				vars[k] = v
			}
			got, err := p.Eval(context.Background(), &Env{Vars: vars})
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestCompileErrors(t *testing.T) {
	l := New(DefaultLimits())
	tests := []errorCase{
		{"foo + 1", model.TypeLong, ErrUnknownParam, `unknown parameter "foo"`},
		{"params.get('nope')", "", ErrUnknownParam, `unknown parameter "nope"`},
		{"params['nope']", "", ErrUnknownParam, `unknown parameter "nope"`},
		{"params.containsKey('other') ? params.get('nope') : 1", "", ErrUnknownParam, `unknown parameter "nope"`},
		{"$env", "", ErrUnknownParam, `unknown parameter "$env"`},
		{"params", "", ErrUnsupported, "params is not a value"},
		{"Math", "", ErrUnsupported, "Math is not a value"},
		{"Util.x", "", ErrUnsupported, "Util is not a value"},
		{"Util.nope(1)", "", ErrUnsupported, "Util.nope(..) is not a supported function"},
		{"params.nope('a')", "", ErrUnsupported, "params.nope(..) is not a supported function"},
		{"Util.intsBetween(1, 2)", "", ErrSyntax, "Util.intsBetween takes 3 arguments, got 2"},
		{"params.getFromStep()", "", ErrSyntax, "params.getFromStep takes 1 to 2 arguments, got 0"},
		{"UUID.randomUUID(1)", "", ErrSyntax, "UUID.randomUUID takes 0 arguments, got 1"},
		{"s.toString(1)", "", ErrSyntax, "x.toString() takes no arguments"},
		{"repeat('x', 3)", "", ErrUnsupported, "function repeat(..) is not supported"},
		{"now()", "", ErrUnsupported, "function now(..) is not supported"},
		{"map(la, # + 1)", "", ErrUnsupported, "predicates and closures ({...}, #) are not supported"},
		// SEL's sandbox: no class but SEL's, no qualified names.
		{"Runtime.getRuntime().exec('ls')", "", ErrUnknownParam, `unknown parameter "Runtime"`},
		{"new java.io.File('x')", "", ErrUnsupported, "qualified class names"},
		{"new Thread()", "", ErrUnsupported, "the class Thread is not available in SEL"},
		// Type checks against the wanted type.
		{"'a'", model.TypeLong, ErrType, "result is STRING, but the expected type is LONG"},
		{"1.5", model.TypeLong, ErrType, "result is DOUBLE, but the expected type is LONG"},
		{"1", model.TypeBoolean, ErrType, "result is LONG, but the expected type is BOOLEAN"},
		{"la", model.TypeStringArray, ErrType, "result is an array of LONG, but the expected type is STRING_ARRAY"},
		{"da", model.TypeLongArray, ErrType, "expected type is LONG_ARRAY"},
		{"sa", model.TypeString, ErrType, "result is an array of STRING, but the expected type is STRING"},
		{"m", model.TypeStringArray, ErrType, "result is a map"},
		{"la", model.TypeMap, ErrType, "expected type is MAP"},
		{"1", "NUMBER", ErrType, `unknown parameter type "NUMBER"`},
		{"true + 1", "", ErrType, "operator + is not defined for BOOLEAN and LONG"},
		{"la + 'x'", "", ErrType, "cannot concatenate array to a string"},
		{"s / 2", "", ErrType, "operator / needs numbers, got STRING"},
		{"1 +", "", ErrSyntax, "syntax error"},
		{"(1", "", ErrSyntax, "syntax error"},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			_, err := l.Compile(tt.src, tt.want, testScope())
			requireErrorOf(t, err, tt.kind, tt.msg)
			var e *Error
			require.True(t, errors.As(err, &e))
			assert.Equal(t, tt.src, e.Source)
		})
	}
}

func TestCompileAcceptsUnknownTypes(t *testing.T) {
	l := New(DefaultLimits())
	for _, want := range model.ParamTypes {
		_, err := l.Compile("u", want, testScope())
		assert.NoError(t, err, want)
	}
	// Case-insensitive type names, as in Maestro definitions.
	_, err := l.Compile("l", "lonG", testScope())
	assert.NoError(t, err)
}

func TestEvalErrors(t *testing.T) {
	l := New(DefaultLimits())
	tests := []errorCase{
		{"l / 0", "", ErrEval, "division by zero"},
		{"l % 0", "", ErrEval, "division by zero"},
		{"params.get('s')", model.TypeLong, ErrType, `expected LONG, got string "str"`},
		{"m", model.TypeStringMap, ErrType, `expected STRING_MAP, value of "k": expected STRING, got long 1`},
		{"[1, 'a']", model.TypeLongArray, ErrType, `expected LONG_ARRAY, element 1: expected LONG, got string "a"`},
		{"u", model.TypeBoolean, ErrType, `expected BOOLEAN, got string "16"`},
		{"u * 2", "", ErrEval, "evaluation failed: invalid operation"},
		{"params.get('jo' + 'b2')", "", ErrUnknownParam, `parameter "job2" has no value`},
		{"la[10]", "", ErrEval, "index out of range"},
		{"UUID.randomUUID()", "", ErrEval, ""},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			p, err := l.Compile(tt.src, tt.want, testScope())
			require.NoError(t, err)
			env := testEnv()
			if tt.src == "UUID.randomUUID()" {
				env.Seed = ""
			}
			_, err = p.Eval(context.Background(), env)
			requireErrorOf(t, err, tt.kind, tt.msg)
			assert.Contains(t, err.Error(), fmt.Sprintf("expression %q", tt.src))
		})
	}
}

func TestEvalMissingVarAndStepFallback(t *testing.T) {
	l := New(DefaultLimits())
	scope := model.Scope{Vars: map[string]model.ParamType{"job3__sleep_seconds": model.TypeLong, "gone": model.TypeLong}}
	p, err := l.Compile("job3__sleep_seconds + 1", model.TypeLong, scope)
	require.NoError(t, err)
	env := &Env{Step: func(_ context.Context, step, name string) (any, error) {
		if step == "job3" && name == "sleep_seconds" {
			return int64(15), nil
		}
		return nil, errors.New("no such param")
	}}
	v, err := p.Eval(context.Background(), env)
	require.NoError(t, err)
	assert.Equal(t, int64(16), v)

	p, err = l.Compile("gone", model.TypeLong, scope)
	require.NoError(t, err)
	_, err = p.Eval(context.Background(), &Env{})
	assert.ErrorIs(t, err, ErrUnknownParam)
	assert.Contains(t, err.Error(), `parameter "gone" has no value`)
}

func TestEvalCancelledContext(t *testing.T) {
	l := New(DefaultLimits())
	p, err := l.Compile("1", "", model.Scope{})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = p.Eval(ctx, nil)
	assert.ErrorIs(t, err, context.Canceled)
}

func TestRefs(t *testing.T) {
	l := New(DefaultLimits())
	p, err := l.Compile("l + params.get('d') + params['l'] + len(sa) + params.get(s)", "", testScope())
	require.NoError(t, err)
	assert.Equal(t, []string{"l", "sa", "s", "d"}, p.Refs())
	assert.True(t, p.HasDynamicRefs())
	p, err = l.Compile("Util.intsBetween(0, l, 1)", "", testScope())
	require.NoError(t, err)
	assert.Equal(t, []string{"l"}, p.Refs())
	assert.False(t, p.HasDynamicRefs())
	assert.Equal(t, "Util.intsBetween(0, l, 1)", p.Source())
}

func TestCheckExpressionImplementsChecker(t *testing.T) {
	var checker model.ExpressionChecker = New(DefaultLimits())
	assert.NoError(t, checker.CheckExpression("x > 10", model.TypeBoolean, model.Scope{Vars: map[string]model.ParamType{"x": model.TypeLong}}))
	// SEL (Java syntax) is checked too: a class SEL does not have is refused.
	assert.NoError(t, checker.CheckExpression("x = new Map(); x.put('a', 'b'); return x;", model.TypeStringMap, model.Scope{}))
	err := checker.CheckExpression("new Thread()", model.TypeString, model.Scope{})
	assert.ErrorIs(t, err, ErrUnsupported)
}

func TestConcurrentEval(t *testing.T) {
	l := New(DefaultLimits())
	p, err := l.Compile("l + '-' + UUID.randomUUID() + Util.intsBetween(0, l, 1).size()", model.TypeString, testScope())
	require.NoError(t, err)
	want, err := p.Eval(context.Background(), testEnv())
	require.NoError(t, err)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			env := testEnv()
			for range 200 {
				got, err := p.Eval(context.Background(), env)
				if err != nil || got != want {
					errs <- fmt.Errorf("got %v, %v; want %v", got, err, want)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// errorCase is an expression that fails to compile or evaluate as want:
// with an error of kind whose message contains msg.
type errorCase struct {
	src  string
	want model.ParamType
	kind error
	msg  string
}

// requireErrorOf fails t unless err is an error of kind whose message
// contains msg.
func requireErrorOf(t *testing.T, err, kind error, msg string) {
	t.Helper()
	require.Error(t, err)
	assert.ErrorIs(t, err, kind)
	assert.Contains(t, err.Error(), msg)
}
