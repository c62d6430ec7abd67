package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"

	"github.com/maestro-serverless/maestro/jsonnum"
	"github.com/maestro-serverless/maestro/model"
)

// Values holds evaluated parameters (or step outputs) by name. Every value has
// one of the canonical Go types of model/param.go, except MAP, whose evaluated
// form is a map[string]any of canonical values:
//
//	STRING string, LONG int64, DOUBLE float64, BOOLEAN bool,
//	STRING_MAP map[string]string, STRING_ARRAY []string, LONG_ARRAY []int64,
//	DOUBLE_ARRAY []float64, BOOLEAN_ARRAY []bool, MAP map[string]any.
//
// In JSON each value is written with its type, {"name": {"type": "LONG",
// "value": 15}}, so that decoding restores exactly the same Go types.
// Values are treated as immutable once stored: the engine replaces entries,
// it never modifies a stored slice or map in place.
type Values map[string]any

type typedValue struct {
	Type  model.ParamType `json:"type"`
	Value json.RawMessage `json:"value"`
}

// MarshalJSON writes each value with its parameter type, keys sorted.
func (v Values) MarshalJSON() ([]byte, error) {
	if v == nil {
		return []byte("null"), nil
	}
	names := make([]string, 0, len(v))
	for name := range v {
		names = append(names, name)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, name := range names {
		if i > 0 {
			buf.WriteByte(',')
		}
		key, err := json.Marshal(name)
		if err != nil {
			return nil, fmt.Errorf("encode param name %q: %w", name, err)
		}
		buf.Write(key)
		buf.WriteByte(':')
		if err := writeTyped(&buf, v[name]); err != nil {
			return nil, fmt.Errorf("encode param %q: %w", name, err)
		}
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

func writeTyped(buf *bytes.Buffer, x any) error {
	t, err := TypeOf(x)
	if err != nil {
		return err
	}
	var raw []byte
	if t == model.TypeMap {
		raw, err = Values(x.(map[string]any)).MarshalJSON()
	} else {
		raw, err = json.Marshal(x)
	}
	if err != nil {
		return err
	}
	buf.WriteString(`{"type":`)
	buf.WriteString(`"` + string(t) + `"`)
	buf.WriteString(`,"value":`)
	buf.Write(raw)
	buf.WriteByte('}')
	return nil
}

// UnmarshalJSON reads the typed form written by MarshalJSON.
func (v *Values) UnmarshalJSON(data []byte) error {
	if bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		*v = nil
		return nil
	}
	var entries map[string]typedValue
	if err := json.Unmarshal(data, &entries); err != nil {
		return fmt.Errorf("decode params: %w", err)
	}
	out := make(Values, len(entries))
	for name, e := range entries {
		x, err := decodeTyped(e)
		if err != nil {
			return fmt.Errorf("decode param %q: %w", name, err)
		}
		out[name] = x
	}
	*v = out
	return nil
}

func decodeTyped(e typedValue) (any, error) {
	switch e.Type {
	case model.TypeString:
		return unmarshalAs(e.Value, "")
	case model.TypeLong:
		return unmarshalAs(e.Value, int64(0))
	case model.TypeDouble:
		return unmarshalAs(e.Value, float64(0))
	case model.TypeBoolean:
		return unmarshalAs(e.Value, false)
	case model.TypeStringMap:
		return unmarshalAs(e.Value, map[string]string{})
	case model.TypeStringArray:
		return unmarshalAs(e.Value, []string{})
	case model.TypeLongArray:
		return unmarshalAs(e.Value, []int64{})
	case model.TypeDoubleArray:
		return unmarshalAs(e.Value, []float64{})
	case model.TypeBooleanArray:
		return unmarshalAs(e.Value, []bool{})
	case model.TypeMap:
		var nested Values
		if err := nested.UnmarshalJSON(e.Value); err != nil {
			return nil, err
		}
		return map[string]any(nested), nil
	default:
		return nil, fmt.Errorf("unknown param type %q", e.Type)
	}
}

// unmarshalAs decodes raw JSON into v, the value of the type wanted to
// start from, and returns it.
func unmarshalAs[T any](raw json.RawMessage, v T) (any, error) {
	err := json.Unmarshal(raw, &v)
	return v, err
}

// TypeOf reports the parameter type of a canonical value (see Values), or an
// error naming the Go type when v is not canonical.
func TypeOf(v any) (model.ParamType, error) {
	switch v.(type) {
	case string:
		return model.TypeString, nil
	case int64:
		return model.TypeLong, nil
	case float64:
		return model.TypeDouble, nil
	case bool:
		return model.TypeBoolean, nil
	case map[string]string:
		return model.TypeStringMap, nil
	case []string:
		return model.TypeStringArray, nil
	case []int64:
		return model.TypeLongArray, nil
	case []float64:
		return model.TypeDoubleArray, nil
	case []bool:
		return model.TypeBooleanArray, nil
	case map[string]any:
		return model.TypeMap, nil
	default:
		return "", fmt.Errorf("value of Go type %T is not a parameter value", v)
	}
}

// Normalize converts a value decoded from JSON or produced by Go code (int,
// float32, json.Number, []any, map[string]any ...) to its canonical form (see
// Values). Whole json.Numbers become LONG, other numbers DOUBLE; a []any takes
// the array type of its elements (mixed integers and floats become
// DOUBLE_ARRAY, an empty one STRING_ARRAY); a map[string]any is a MAP whose
// values are normalised in turn. Null values, nested arrays and other types are
// rejected.
func Normalize(v any) (any, error) {
	switch x := v.(type) {
	case nil:
		return nil, fmt.Errorf("null is not a parameter value")
	case string, int64, bool, map[string]string, []string, []int64, []bool:
		return x, nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("number %v is not a parameter value", x)
		}
		return x, nil
	case []float64:
		for _, f := range x {
			if math.IsNaN(f) || math.IsInf(f, 0) {
				return nil, fmt.Errorf("number %v is not a parameter value", f)
			}
		}
		return x, nil
	case int, int8, int16, int32, uint, uint8, uint16, uint32, uint64:
		n, ok := jsonnum.Int64(x)
		if !ok {
			return nil, fmt.Errorf("number %d overflows LONG", x)
		}
		return n, nil
	case float32:
		return Normalize(float64(x))
	case json.Number:
		return jsonnum.Number(x)
	case []int:
		out := make([]int64, len(x))
		for i, n := range x {
			out[i] = int64(n)
		}
		return out, nil
	case []int32:
		out := make([]int64, len(x))
		for i, n := range x {
			out[i] = int64(n)
		}
		return out, nil
	case []any:
		return normalizeArray(x)
	case map[string]any:
		if x == nil {
			return x, nil
		}
		return normalizeEach(x, "key %q")
	default:
		return nil, fmt.Errorf("value of Go type %T is not a parameter value", v)
	}
}

// normalizeEach normalizes the values of m into a new map, in key order so
// that the first bad value reported is always the same. Its error names
// that value's key with keyFormat ("key %q").
func normalizeEach(m map[string]any, keyFormat string) (map[string]any, error) {
	out := make(map[string]any, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v, err := Normalize(m[k])
		if err != nil {
			return nil, fmt.Errorf(keyFormat+": %w", k, err)
		}
		out[k] = v
	}
	return out, nil
}

func normalizeArray(a []any) (any, error) {
	if len(a) == 0 {
		return []string{}, nil
	}
	elems := make([]any, len(a))
	var nStr, nBool, nInt, nFloat int
	for i, e := range a {
		n, err := Normalize(e)
		if err != nil {
			return nil, fmt.Errorf("element %d: %w", i, err)
		}
		switch n.(type) {
		case string:
			nStr++
		case bool:
			nBool++
		case int64:
			nInt++
		case float64:
			nFloat++
		default:
			return nil, fmt.Errorf("element %d: nested %T is not supported in an array parameter", i, n)
		}
		elems[i] = n
	}
	switch len(a) {
	case nStr:
		out := make([]string, len(a))
		for i, e := range elems {
			out[i] = e.(string)
		}
		return out, nil
	case nBool:
		out := make([]bool, len(a))
		for i, e := range elems {
			out[i] = e.(bool)
		}
		return out, nil
	case nInt:
		out := make([]int64, len(a))
		for i, e := range elems {
			out[i] = e.(int64)
		}
		return out, nil
	case nInt + nFloat:
		out := make([]float64, len(a))
		for i, e := range elems {
			if n, ok := e.(int64); ok {
				out[i] = float64(n)
			} else {
				out[i] = e.(float64)
			}
		}
		return out, nil
	default:
		return nil, fmt.Errorf("array mixes element types (%d strings, %d booleans, %d numbers)", nStr, nBool, nInt+nFloat)
	}
}

// cloneValue returns a deep copy of a canonical value, keeping nil slices and
// maps nil and empty ones empty (JSON distinguishes them).
func cloneValue(v any) any {
	switch x := v.(type) {
	case map[string]string:
		if x == nil {
			return x
		}
		out := make(map[string]string, len(x))
		for k, e := range x {
			out[k] = e
		}
		return out
	case []string:
		return cloneSlice(x)
	case []int64:
		return cloneSlice(x)
	case []float64:
		return cloneSlice(x)
	case []bool:
		return cloneSlice(x)
	case map[string]any:
		if x == nil {
			return x
		}
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = cloneValue(e)
		}
		return out
	default:
		return v
	}
}

func cloneSlice[T any](s []T) []T {
	if s == nil {
		return nil
	}
	out := make([]T, len(s))
	copy(out, s)
	return out
}

// Clone returns a deep copy of v (nil for nil).
func (v Values) Clone() Values {
	if v == nil {
		return nil
	}
	out := make(Values, len(v))
	for k, x := range v {
		out[k] = cloneValue(x)
	}
	return out
}
