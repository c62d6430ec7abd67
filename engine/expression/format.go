package expression

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"

	"github.com/maestro-serverless/maestro/engine/expression/sel"
	"github.com/maestro-serverless/maestro/jsonnum"
)

// javaDouble formats f as Java's Double.toString does (sel.JavaDouble).
func javaDouble(f float64) string { return sel.JavaDouble(f) }

// scalarString formats a scalar as Java's String.valueOf would. ok is false
// for values that are not scalars (arrays, maps, other types).
func scalarString(v any) (s string, ok bool) {
	switch x := v.(type) {
	case nil:
		return "null", true
	case string:
		return x, true
	case bool:
		return strconv.FormatBool(x), true
	case float64:
		return javaDouble(x), true
	case float32:
		return javaDouble(float64(x)), true
	case json.Number:
		return x.String(), true
	}
	if i, ok := jsonnum.Int64(v); ok {
		return strconv.FormatInt(i, 10), true
	}
	if u, ok := v.(uint64); ok {
		return strconv.FormatUint(u, 10), true
	}
	return "", false
}

// formatValue formats a parameter value for string interpolation: scalars
// as Java prints them, arrays and maps as JSON (as Maestro does).
func formatValue(v any) (string, error) {
	if s, ok := scalarString(v); ok {
		return s, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("cannot format %s as a string: %w", describe(v), err)
	}
	return string(b), nil
}

// toFloat64 converts any Go integer or float type to float64.
func toFloat64(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case float32:
		return float64(x), true
	}
	if i, ok := jsonnum.Int64(v); ok {
		return float64(i), true
	}
	if u, ok := v.(uint64); ok {
		return float64(u), true
	}
	return 0, false
}

func isFloat(v any) bool {
	switch v.(type) {
	case float64, float32:
		return true
	}
	return false
}

// describe names a value's kind and shows it briefly, for error messages:
// `string "abc"`, `long 5`, `double 1.5`, `boolean true`, `array of 3`.
func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return "string " + strconv.Quote(truncate(x, 40))
	case bool:
		return "boolean " + strconv.FormatBool(x)
	case float64, float32:
		s, _ := scalarString(x)
		return "double " + s
	}
	if i, ok := jsonnum.Int64(v); ok {
		return "long " + strconv.FormatInt(i, 10)
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Array:
		return fmt.Sprintf("array of %d", rv.Len())
	case reflect.Map:
		return fmt.Sprintf("map of %d", rv.Len())
	}
	return fmt.Sprintf("value of Go type %T", v)
}
