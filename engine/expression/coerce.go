package expression

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/maestro-serverless/maestro/jsonnum"
	"github.com/maestro-serverless/maestro/model"
)

// normalizeType returns t in its canonical spelling (types are
// case-insensitive in Maestro); "" stays "" (any type).
func normalizeType(t model.ParamType) (model.ParamType, error) {
	if t == "" {
		return "", nil
	}
	u := model.ParamType(strings.ToUpper(string(t)))
	for _, known := range model.ParamTypes {
		if u == known {
			return u, nil
		}
	}
	return "", fmt.Errorf("unknown parameter type %q", string(t))
}

// sampleValue returns a value of the Go type a parameter of type t has, for
// type checking; nil (unknown type) for "" and unrecognised types.
func sampleValue(t model.ParamType) any {
	nt, err := normalizeType(t)
	if err != nil {
		return nil
	}
	switch nt {
	case model.TypeString:
		return ""
	case model.TypeLong:
		return int64(0)
	case model.TypeDouble:
		return float64(0)
	case model.TypeBoolean:
		return false
	case model.TypeStringMap:
		return map[string]string{}
	case model.TypeStringArray:
		return []string{}
	case model.TypeLongArray:
		return []int64{}
	case model.TypeDoubleArray:
		return []float64{}
	case model.TypeBooleanArray:
		return []bool{}
	case model.TypeMap:
		return map[string]any{}
	}
	return nil
}

// scalarOf returns the element type of an array type.
func scalarOf(t model.ParamType) model.ParamType {
	switch t {
	case model.TypeStringArray:
		return model.TypeString
	case model.TypeLongArray:
		return model.TypeLong
	case model.TypeDoubleArray:
		return model.TypeDouble
	case model.TypeBooleanArray:
		return model.TypeBoolean
	}
	return ""
}

// scalarFits reports whether a static type can hold a value of the scalar
// ParamType t, following Maestro's implicit conversions: a STRING takes any
// scalar (it is printed), a DOUBLE takes integers.
func scalarFits(rt reflect.Type, t model.ParamType) bool {
	if isUnknownType(rt) {
		return true
	}
	switch t {
	case model.TypeLong:
		return isIntType(rt)
	case model.TypeDouble:
		return isNumberType(rt)
	case model.TypeString:
		return isScalarType(rt)
	case model.TypeBoolean:
		return rt.Kind() == reflect.Bool
	}
	return false
}

// elemFits is scalarFits for array elements and STRING_MAP values, which
// Maestro keeps strictly typed: no implicit conversion but int to double.
func elemFits(rt reflect.Type, t model.ParamType) bool {
	if t == model.TypeString {
		return isUnknownType(rt) || rt.Kind() == reflect.String
	}
	return scalarFits(rt, t)
}

// staticMismatch explains why a static result type cannot be want, or
// returns "" when it can (unknown types are checked after evaluation).
func staticMismatch(rt reflect.Type, want model.ParamType) string {
	if want == "" || isUnknownType(rt) {
		return ""
	}
	ok := false
	switch want {
	case model.TypeLong, model.TypeDouble, model.TypeString, model.TypeBoolean:
		ok = scalarFits(rt, want)
	case model.TypeStringArray, model.TypeLongArray, model.TypeDoubleArray, model.TypeBooleanArray:
		ok = (rt.Kind() == reflect.Slice || rt.Kind() == reflect.Array) && elemFits(rt.Elem(), scalarOf(want))
	case model.TypeStringMap:
		ok = rt.Kind() == reflect.Map && mapKeyFits(rt.Key()) && elemFits(rt.Elem(), model.TypeString)
	case model.TypeMap:
		ok = rt.Kind() == reflect.Map && mapKeyFits(rt.Key())
	}
	if ok {
		return ""
	}
	return fmt.Sprintf("result is %s, but the expected type is %s", describeType(rt), want)
}

func mapKeyFits(k reflect.Type) bool { return isUnknownType(k) || k.Kind() == reflect.String }

func describeType(rt reflect.Type) string {
	switch rt.Kind() {
	case reflect.Slice, reflect.Array:
		if isUnknownType(rt.Elem()) {
			return "an array"
		}
		return "an array of " + typeName(rt.Elem())
	case reflect.Map:
		return "a map"
	}
	return typeName(rt)
}

// Coerce converts v to the canonical Go type of a parameter of type t (see
// model.ParamDefinition): int64, float64, string, bool, []string, []int64,
// []float64, []bool, map[string]string or map[string]any. It applies
// Maestro's implicit conversions: numeric strings to LONG and DOUBLE,
// integers to DOUBLE, scalars to STRING (printed as Java does), "true" and
// "false" to BOOLEAN. Array elements and STRING_MAP values must have their
// type already (integers may widen to DOUBLE). Anything else is an error such as: expected LONG, got string "abc".
// With t == "" it only normalises (integers to int64, floats to float64).
func Coerce(v any, t model.ParamType) (any, error) {
	nt, err := normalizeType(t)
	if err != nil {
		return nil, failf(ErrType, "%v", err)
	}
	switch nt {
	case "":
		return normalizeValue(v), nil
	case model.TypeLong, model.TypeDouble, model.TypeString, model.TypeBoolean:
		return coerceScalar(v, nt)
	case model.TypeStringArray:
		return coerceArray[string](v, nt)
	case model.TypeLongArray:
		return coerceArray[int64](v, nt)
	case model.TypeDoubleArray:
		return coerceArray[float64](v, nt)
	case model.TypeBooleanArray:
		return coerceArray[bool](v, nt)
	case model.TypeStringMap:
		return coerceStringMap(v)
	case model.TypeMap:
		return coerceMap(v)
	}
	return nil, failf(ErrType, "unknown parameter type %q", string(t))
}

func mismatch(t model.ParamType, v any) error {
	return failf(ErrType, "expected %s, got %s", t, describe(v))
}

// coerceElem converts an array element or STRING_MAP value: strictly,
// except that integers widen to doubles.
func coerceElem(v any, t model.ParamType) (any, error) {
	switch t {
	case model.TypeString:
		if s, ok := v.(string); ok {
			return s, nil
		}
	case model.TypeLong:
		if i, ok := jsonnum.Int64(v); ok {
			return i, nil
		}
		if n, ok := v.(json.Number); ok {
			if i, err := n.Int64(); err == nil {
				return i, nil
			}
		}
	case model.TypeDouble:
		if f, ok := toFloat64(v); ok {
			return f, nil
		}
		if n, ok := v.(json.Number); ok {
			if f, err := n.Float64(); err == nil {
				return f, nil
			}
		}
	case model.TypeBoolean:
		if b, ok := v.(bool); ok {
			return b, nil
		}
	}
	return nil, mismatch(t, v)
}

// coerceScalar converts v to the scalar type t.
func coerceScalar(v any, t model.ParamType) (any, error) {
	switch t {
	case model.TypeLong:
		if i, ok := jsonnum.Int64(v); ok {
			return i, nil
		}
		switch x := v.(type) {
		case string:
			if i, err := strconv.ParseInt(x, 10, 64); err == nil {
				return i, nil
			}
		case json.Number:
			if i, err := x.Int64(); err == nil {
				return i, nil
			}
		}
	case model.TypeDouble:
		if f, ok := toFloat64(v); ok {
			return f, nil
		}
		switch x := v.(type) {
		case string:
			if f, err := strconv.ParseFloat(x, 64); err == nil {
				return f, nil
			}
		case json.Number:
			if f, err := x.Float64(); err == nil {
				return f, nil
			}
		}
	case model.TypeString:
		if v != nil {
			if s, ok := scalarString(v); ok {
				return s, nil
			}
		}
	case model.TypeBoolean:
		switch x := v.(type) {
		case bool:
			return x, nil
		case string:
			if strings.EqualFold(x, "true") {
				return true, nil
			}
			if strings.EqualFold(x, "false") {
				return false, nil
			}
		}
	}
	return nil, mismatch(t, v)
}

func coerceArray[T any](v any, t model.ParamType) (any, error) {
	if typed, ok := v.([]T); ok {
		return typed, nil
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Slice && rv.Kind() != reflect.Array {
		return nil, mismatch(t, v)
	}
	elem := scalarOf(t)
	out := make([]T, rv.Len())
	for i := range out {
		e := rv.Index(i).Interface()
		c, err := coerceElem(e, elem)
		if err != nil {
			return nil, failf(ErrType, "expected %s, element %d: expected %s, got %s", t, i, elem, describe(e))
		}
		out[i] = c.(T)
	}
	return out, nil
}

func coerceStringMap(v any) (any, error) {
	if m, ok := v.(map[string]string); ok {
		return m, nil
	}
	keys, value, err := mapEntries(v, model.TypeStringMap)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(keys))
	for _, k := range keys {
		e := value(k)
		c, err := coerceElem(e, model.TypeString)
		if err != nil {
			return nil, failf(ErrType, "expected STRING_MAP, value of %q: expected STRING, got %s", k, describe(e))
		}
		out[k] = c.(string)
	}
	return out, nil
}

func coerceMap(v any) (any, error) {
	keys, value, err := mapEntries(v, model.TypeMap)
	if err != nil {
		return nil, err
	}
	out := make(map[string]any, len(keys))
	for _, k := range keys {
		out[k] = normalizeValue(value(k))
	}
	return out, nil
}

// mapEntries returns the keys of v, a map wanted as type t, sorted so that
// errors are deterministic, and value, which returns the value of a key;
// v must be a map and every key a string.
func mapEntries(v any, t model.ParamType) (keys []string, value func(key string) any, err error) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Map {
		return nil, nil, mismatch(t, v)
	}
	keys = make([]string, 0, rv.Len())
	for _, k := range rv.MapKeys() {
		if k.Kind() == reflect.Interface {
			k = k.Elem()
		}
		if k.Kind() != reflect.String {
			return nil, nil, failf(ErrType, "expected %s, got a map with key %s", t, describe(k.Interface()))
		}
		keys = append(keys, k.String())
	}
	slices.Sort(keys)
	value = func(key string) any {
		return rv.MapIndex(reflect.ValueOf(key).Convert(rv.Type().Key())).Interface()
	}
	return keys, value, nil
}

// normalizeValue converts integers to int64 and floats to float64, also
// inside []any, typed integer slices and map[string]any.
func normalizeValue(v any) any {
	switch x := v.(type) {
	case int64, float64, string, bool, nil, []int64, []float64, []string, []bool, map[string]string:
		return v
	case float32:
		return float64(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalizeValue(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = normalizeValue(e)
		}
		return out
	}
	if i, ok := jsonnum.Int64(v); ok {
		return i
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Slice && isIntType(rv.Type().Elem()) {
		out := make([]int64, rv.Len())
		for i := range out {
			out[i], _ = jsonnum.Int64(rv.Index(i).Interface())
		}
		return out
	}
	return v
}
