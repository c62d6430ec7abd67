package expression

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/maestro-serverless/maestro/model"
)

func exprDef(t model.ParamType, src string) *model.ParamDefinition {
	return &model.ParamDefinition{Type: t, Expression: src}
}

func valueDef(t model.ParamType, v any) *model.ParamDefinition {
	return &model.ParamDefinition{Type: t, Value: v, HasValue: true}
}

func paramsOf(names []string, defs ...*model.ParamDefinition) model.Params {
	p := model.Params{Names: names, Defs: map[string]*model.ParamDefinition{}}
	for i, name := range names {
		p.Defs[name] = defs[i]
	}
	return p
}

func TestEvalParamsCrossReferences(t *testing.T) {
	l := New(DefaultLimits())
	// sample-dag-test-3's job.2, declared in an order that needs sorting.
	params := paramsOf(
		[]string{"param1", "param2", "sleep_seconds", "vtts_ts", "double_it"},
		exprDef("STRING", "sleep_seconds + '1';"),
		valueDef("STRING", "${job1__sleep_seconds} + 1"),
		exprDef("LONG", "job3__sleep_seconds + 1;"),
		exprDef("LONG", "Util.dateIntHourToTs(TARGET_RUN_DATE, TARGET_RUN_HOUR, 'UTC', 0, 0)/1000"),
		exprDef("long", "params.get('sleep_seconds') * 2"),
	)
	env := &Env{Vars: map[string]any{
		"job1__sleep_seconds": int64(15), "job3__sleep_seconds": int64(15),
		"TARGET_RUN_DATE": int64(20210707), "TARGET_RUN_HOUR": "01",
	}}
	out, err := l.EvalParams(context.Background(), params, env)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{
		"sleep_seconds": int64(16),
		"param1":        "161",
		"param2":        "15 + 1",
		"vtts_ts":       int64(1625619600),
		"double_it":     int64(32),
	}, out)

	set, err := l.CompileParams(params, scopeOf(env))
	require.NoError(t, err)
	order := set.Order()
	assert.Less(t, indexOf(order, "sleep_seconds"), indexOf(order, "param1"))
	assert.Less(t, indexOf(order, "sleep_seconds"), indexOf(order, "double_it"))
	assert.ElementsMatch(t, []string{"job3__sleep_seconds", "TARGET_RUN_DATE", "TARGET_RUN_HOUR", "job1__sleep_seconds"}, set.ExternalRefs())
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

func TestEvalParamsShadowingAndSelfReference(t *testing.T) {
	l := New(DefaultLimits())
	// sample-while-wf: the inner step's i = i + 1 reads the loop's i.
	params := paramsOf([]string{"i", "next"}, exprDef("LONG", "i + 1"), exprDef("LONG", "i * 10"))
	out, err := l.EvalParams(context.Background(), params, &Env{Vars: map[string]any{"i": int64(20200101)}})
	require.NoError(t, err)
	assert.Equal(t, int64(20200102), out["i"])
	assert.Equal(t, int64(202001020), out["next"], "other params see the set's i, which shadows the outer one")
}

func TestEvalParamsCycles(t *testing.T) {
	l := New(DefaultLimits())
	tests := []struct {
		name   string
		params model.Params
		cycle  string
	}{
		{"self", paramsOf([]string{"a"}, exprDef("LONG", "a + 1")), "a -> a"},
		{"pair", paramsOf([]string{"a", "b"}, exprDef("LONG", "b + 1"), exprDef("LONG", "a + 1")), "a -> b -> a"},
		{"three via params.get and literal", paramsOf([]string{"x", "a", "b", "c"},
			valueDef("LONG", int64(1)),
			exprDef("LONG", "params.get('b') + x"),
			valueDef("STRING", "c is ${c}"),
			exprDef("STRING", "a + ''")), "a -> b -> c -> a"},
		{"nested map", paramsOf([]string{"m", "z"},
			valueDef("MAP", map[string]*model.ParamDefinition{"inner": exprDef("LONG", "z")}),
			exprDef("LONG", "len(m)")), "m -> z -> m"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := l.EvalParams(context.Background(), tt.params, &Env{})
			requireErrorOf(t, err, ErrCycle, tt.cycle)
		})
	}
}

func TestEvalParamsMap(t *testing.T) {
	l := New(DefaultLimits())
	// Shaped like fixtures/sample-wf-map-params.json, with the supported
	// expressions, plus a foreach's loop_params.
	p1 := map[string]*model.ParamDefinition{
		"l1": valueDef("STRING", "bar"),
		"l2": valueDef("LONG", int64(1598399975650)),
		"l3": valueDef("DOUBLE", 1.23),
		"l4": valueDef("BOOLEAN", true),
		"l5": valueDef("STRING_MAP", map[string]string{"foo": "bar", "$key": "${l1}"}),
		"l6": valueDef("string_array", []string{"a", "b", "$l1"}),
		"l7": valueDef("long_array", []int64{1, 2, 3}),
		"l8": valueDef("double_array", []float64{1.1, 2.2, 3.3}),
		"l9": valueDef("boolean_array", []bool{true, false, true}),
		"e1": exprDef("STRING", "'bar';"),
		"e2": exprDef("LONG", "1+1;"),
		"e3": exprDef("DOUBLE", "1.23;"),
		"e4": exprDef("BOOLEAN", "1>0;"),
		"e5": exprDef("LONG", "e2 + l2 - l2 + outer"),
		"l10": valueDef("MAP", map[string]*model.ParamDefinition{
			"deep": exprDef("STRING", "l1 + e2"),
		}),
	}
	params := paramsOf([]string{"outer", "p1", "loop_params"},
		valueDef("LONG", int64(100)),
		valueDef("MAP", p1),
		valueDef("MAP", map[string]*model.ParamDefinition{
			"i": exprDef("LONG_ARRAY", "Util.dateIntsBetween(20200101, 20200104, 1);"),
			"j": exprDef("STRING_ARRAY", "param1;"),
		}),
	)
	env := &Env{Vars: map[string]any{"param1": []string{"a", "b", "c"}, "key": "K"}}
	out, err := l.EvalParams(context.Background(), params, env)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{
		"outer": int64(100),
		"p1": map[string]any{
			"l1": "bar", "l2": int64(1598399975650), "l3": 1.23, "l4": true,
			"l5": map[string]string{"foo": "bar", "K": "bar"},
			"l6": []string{"a", "b", "bar"},
			"l7": []int64{1, 2, 3}, "l8": []float64{1.1, 2.2, 3.3}, "l9": []bool{true, false, true},
			"e1": "bar", "e2": int64(2), "e3": 1.23, "e4": true, "e5": int64(102),
			"l10": map[string]any{"deep": "bar2"},
		},
		"loop_params": map[string]any{
			"i": []int64{20200101, 20200102, 20200103},
			"j": []string{"a", "b", "c"},
		},
	}, out)
}

func TestEvalParamsErrors(t *testing.T) {
	l := New(DefaultLimits())
	tests := []struct {
		name   string
		params model.Params
		kind   error
		msg    string
	}{
		{"unknown identifier", paramsOf([]string{"a"}, exprDef("LONG", "nope + 1")), ErrUnknownParam,
			`parameter "a": expression "nope + 1": unknown parameter "nope"`},
		{"unknown interpolation", paramsOf([]string{"a"}, valueDef("STRING", "x ${fat}")), ErrUnknownParam,
			`parameter "a": cannot interpolate "x ${fat}": unknown parameter "fat"`},
		{"unsupported", paramsOf([]string{"a"}, exprDef("STRING_MAP", "new HashSet()")), ErrUnsupported,
			`parameter "a": expression "new HashSet()": new HashSet(...): the class HashSet is not available in SEL`},
		{"static type", paramsOf([]string{"a"}, exprDef("LONG", "'x'")), ErrType,
			"result is STRING, but the expected type is LONG"},
		{"literal type", paramsOf([]string{"a"}, valueDef("LONG", "abc")), ErrType,
			`parameter "a": literal value: expected LONG, got string "abc"`},
		{"run-time type", paramsOf([]string{"a", "b"}, valueDef("STRING", "abc"), exprDef("LONG", "params.get('a')")), ErrType,
			`parameter "b": expression "params.get('a')": result: expected LONG, got string "abc"`},
		{"no value", paramsOf([]string{"a"}, &model.ParamDefinition{Type: "LONG"}), ErrType,
			"neither a value nor an expression"},
		{"bad type", paramsOf([]string{"a"}, valueDef("NUMBER", 1)), ErrType, `invalid type "NUMBER"`},
		{"nested error path", paramsOf([]string{"m"}, valueDef("MAP", map[string]*model.ParamDefinition{
			"x": exprDef("LONG", "1 / 0")})), ErrEval, `parameter "m.x": expression "1 / 0": division by zero`},
		{"dynamic reference too early", paramsOf([]string{"a", "b"},
			exprDef("LONG", "params.get('b' + '') + 1"), exprDef("LONG", "params.get('a' + '') + 1")), ErrEval,
			"is not evaluated yet"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := l.EvalParams(context.Background(), tt.params, &Env{})
			requireErrorOf(t, err, tt.kind, tt.msg)
		})
	}
}

func TestEvalParamsDynamicReferencesGoLast(t *testing.T) {
	l := New(DefaultLimits())
	params := paramsOf([]string{"pick", "a", "b"},
		exprDef("LONG", "params['a' + ''] + params.get('b' + '')"),
		valueDef("LONG", int64(1)), exprDef("LONG", "a + 1"))
	out, err := l.EvalParams(context.Background(), params, &Env{})
	require.NoError(t, err)
	assert.Equal(t, int64(3), out["pick"])
}

func TestEvalParamsUUIDsDifferPerParam(t *testing.T) {
	l := New(DefaultLimits())
	// sample-dag-test-2: two params, each a random UUID.
	params := paramsOf([]string{"param1", "param2"},
		exprDef("STRING", "return UUID.randomUUID().toString();"),
		exprDef("STRING", "return UUID.randomUUID().toString();"))
	set, err := l.CompileParams(params, model.Scope{})
	require.NoError(t, err)
	a, err := set.Eval(context.Background(), &Env{Seed: "instance-1"})
	require.NoError(t, err)
	b, err := set.Eval(context.Background(), &Env{Seed: "instance-1"})
	require.NoError(t, err)
	assert.Equal(t, a, b)
	assert.NotEqual(t, a["param1"], a["param2"])
	assert.Regexp(t, uuidPattern, a["param1"])
}
