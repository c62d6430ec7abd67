package expression

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/maestro-serverless/maestro/model"
)

func TestCoerce(t *testing.T) {
	tests := []struct {
		in   any
		typ  model.ParamType
		want any
	}{
		{int64(5), model.TypeLong, int64(5)},
		{5, model.TypeLong, int64(5)},
		{uint8(5), model.TypeLong, int64(5)},
		{"42", model.TypeLong, int64(42)},
		{json.Number("7"), model.TypeLong, int64(7)},
		{1.5, model.TypeDouble, 1.5},
		{3, model.TypeDouble, 3.0},
		{"2.5", model.TypeDouble, 2.5},
		{float32(0.5), model.TypeDouble, 0.5},
		{"s", model.TypeString, "s"},
		{int64(16), model.TypeString, "16"},
		{2.0, model.TypeString, "2.0"},
		{true, model.TypeString, "true"},
		{true, model.TypeBoolean, true},
		{"TRUE", model.TypeBoolean, true},
		{"false", model.TypeBoolean, false},
		{[]string{"a"}, model.TypeStringArray, []string{"a"}},
		{[]any{"a", "b"}, model.TypeStringArray, []string{"a", "b"}},
		{[]any{1, int64(2)}, model.TypeLongArray, []int64{1, 2}},
		{[]int{1, 2}, model.TypeLongArray, []int64{1, 2}},
		{[]any{1, 2.5}, model.TypeDoubleArray, []float64{1, 2.5}},
		{[]int64{1}, model.TypeDoubleArray, []float64{1}},
		{[]any{true, false}, model.TypeBooleanArray, []bool{true, false}},
		{[]any{}, model.TypeLongArray, []int64{}},
		{map[string]string{"k": "v"}, model.TypeStringMap, map[string]string{"k": "v"}},
		{map[string]any{"k": "v"}, model.TypeStringMap, map[string]string{"k": "v"}},
		{map[string]any{"k": 1, "n": []any{2}}, model.TypeMap, map[string]any{"k": int64(1), "n": []any{int64(2)}}},
		{map[string]string{"k": "v"}, model.TypeMap, map[string]any{"k": "v"}},
		{map[any]any{"k": "v"}, model.TypeStringMap, map[string]string{"k": "v"}},
		{map[any]any{"k": 1}, model.TypeMap, map[string]any{"k": int64(1)}},
		{7, "long", int64(7)},
		{7, "", int64(7)},
		{[]int{7}, "", []int64{7}},
		{map[string]any{"a": []any{1}}, "", map[string]any{"a": []any{int64(1)}}},
	}
	for _, tt := range tests {
		got, err := Coerce(tt.in, tt.typ)
		require.NoError(t, err, "%v to %s", tt.in, tt.typ)
		assert.Equal(t, tt.want, got, "%v to %s", tt.in, tt.typ)
	}
}

func TestCoerceErrors(t *testing.T) {
	tests := []struct {
		in  any
		typ model.ParamType
		msg string
	}{
		{"abc", model.TypeLong, `expected LONG, got string "abc"`},
		{1.5, model.TypeLong, "expected LONG, got double 1.5"},
		{nil, model.TypeLong, "expected LONG, got null"},
		{uint64(1 << 63), model.TypeLong, "expected LONG"},
		{"x", model.TypeDouble, `expected DOUBLE, got string "x"`},
		{nil, model.TypeString, "expected STRING, got null"},
		{[]string{"a"}, model.TypeString, "expected STRING, got array of 1"},
		{"yes", model.TypeBoolean, `expected BOOLEAN, got string "yes"`},
		{1, model.TypeBoolean, "expected BOOLEAN, got long 1"},
		{"a", model.TypeStringArray, `expected STRING_ARRAY, got string "a"`},
		{[]any{"a", 1}, model.TypeStringArray, "expected STRING_ARRAY, element 1: expected STRING, got long 1"},
		{[]any{1.5}, model.TypeLongArray, "element 0: expected LONG, got double 1.5"},
		{[]any{"1"}, model.TypeLongArray, `element 0: expected LONG, got string "1"`},
		{[]any{1}, model.TypeBooleanArray, "element 0: expected BOOLEAN, got long 1"},
		{map[string]any{"k": 1}, model.TypeStringMap, `value of "k": expected STRING, got long 1`},
		{map[int]string{1: "a"}, model.TypeStringMap, "got a map with key long 1"},
		{map[any]any{true: "a"}, model.TypeMap, "expected MAP, got a map with key boolean true"},
		{[]any{1}, model.TypeMap, "expected MAP, got array of 1"},
		{1, "NUMBER", `unknown parameter type "NUMBER"`},
	}
	for _, tt := range tests {
		_, err := Coerce(tt.in, tt.typ)
		require.Error(t, err, "%v to %s", tt.in, tt.typ)
		assert.ErrorIs(t, err, ErrType)
		assert.Contains(t, err.Error(), tt.msg)
	}
}

func TestInferType(t *testing.T) {
	tests := map[model.ParamType]any{
		model.TypeString: "s", model.TypeLong: int64(1), model.TypeDouble: 1.5, model.TypeBoolean: true,
		model.TypeStringArray: []string{}, model.TypeLongArray: []int64{}, model.TypeDoubleArray: []float64{},
		model.TypeBooleanArray: []bool{}, model.TypeStringMap: map[string]string{}, model.TypeMap: map[string]any{},
	}
	for want, v := range tests {
		assert.Equal(t, want, InferType(v))
	}
	assert.Equal(t, model.ParamType(""), InferType([]any{}))
	assert.Equal(t, model.ParamType(""), InferType(nil))
}
