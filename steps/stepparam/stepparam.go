// Package stepparam reads the MAP param that describes a typed step to its
// runner (`http`, `lambda`, `callback`, `ecs`, `kubernetes`, `batch`): the
// param itself (Map), a STRING field of it (String), and, for the runners
// that report every problem of the param before using it, its fields by
// type (Fields).
//
// The values are the engine's (see engine.Values): STRING string, LONG
// int64, DOUBLE float64, STRING_ARRAY []string, STRING_MAP
// map[string]string, MAP map[string]any.
package stepparam

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/maestro-serverless/maestro/engine"
)

// Map returns the step's MAP param name: an error says that it is missing
// or not a MAP.
func Map(params engine.Values, name string) (map[string]any, error) {
	raw, ok := params[name]
	if !ok {
		return nil, fmt.Errorf("param %q is missing", name)
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("param %q must be a MAP, not %T", name, raw)
	}
	return m, nil
}

// String returns field name of MAP param m (the step's param param): ""
// when it is absent or null, an error when it is not a STRING.
func String(m map[string]any, param, name string) (string, error) {
	v, ok := m[name]
	if !ok || v == nil {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("param %s.%s must be a STRING, not %T", param, name, v)
	}
	return s, nil
}

// Fields reads the fields of a MAP param, recording the problems it finds
// instead of stopping at the first: each reader returns the zero value for
// a field that is absent, null or not of its type.
type Fields struct {
	param    string
	m        map[string]any
	problems []string
}

// Read returns the Fields of the step's MAP param name; see Map for the
// error.
func Read(params engine.Values, name string) (*Fields, error) {
	m, err := Map(params, name)
	if err != nil {
		return nil, err
	}
	return &Fields{param: name, m: m}, nil
}

// Fail records a problem, "<field>: <what is wrong>".
func (f *Fields) Fail(problem string) { f.problems = append(f.problems, problem) }

// Problems returns the problems recorded, in the order they were found.
func (f *Fields) Problems() []string { return f.problems }

// Err returns the first problem recorded as "param <name>.<problem>", or
// nil.
func (f *Fields) Err() error {
	if len(f.problems) == 0 {
		return nil
	}
	return fmt.Errorf("param %s.%s", f.param, f.problems[0])
}

// Only records "<field>: <rule> (<names>)" for each field of the param
// that is not one of names, in the order of the field names.
func (f *Fields) Only(rule string, names ...string) {
	for _, k := range slices.Sorted(maps.Keys(f.m)) {
		if !slices.Contains(names, k) {
			f.Fail(fmt.Sprintf("%s: %s (%s)", k, rule, strings.Join(names, ", ")))
		}
	}
}

// value returns field name, and false when it is absent or null.
func (f *Fields) value(name string) (any, bool) {
	v, ok := f.m[name]
	return v, ok && v != nil
}

// Str reads a STRING field, without its surrounding white space.
func (f *Fields) Str(name string) string {
	v, ok := f.value(name)
	if !ok {
		return ""
	}
	s, ok := v.(string)
	if !ok {
		f.Fail(fmt.Sprintf("%s: must be a STRING, not %T", name, v))
	}
	return strings.TrimSpace(s)
}

// Strs reads a STRING_ARRAY field.
func (f *Fields) Strs(name string) []string {
	v, ok := f.value(name)
	if !ok {
		return nil
	}
	switch x := v.(type) {
	case []string:
		return x
	case []any:
		out := make([]string, len(x))
		for i, e := range x {
			s, ok := e.(string)
			if !ok {
				f.Fail(fmt.Sprintf("%s[%d]: must be a STRING", name, i))
			}
			out[i] = s
		}
		return out
	}
	f.Fail(fmt.Sprintf("%s: must be a STRING_ARRAY, not %T", name, v))
	return nil
}

// StrMap reads a STRING_MAP field, or a MAP whose values are all strings.
func (f *Fields) StrMap(name string) map[string]string {
	return f.strMap(name, func(v any) (string, bool) {
		s, ok := v.(string)
		return s, ok
	})
}

// Env reads an environment: a STRING_MAP field, or a MAP whose values are
// strings, numbers or booleans (taken as their text).
func (f *Fields) Env(name string) map[string]string {
	return f.strMap(name, func(v any) (string, bool) {
		switch s := v.(type) {
		case string:
			return s, true
		case int64, float64, bool:
			return fmt.Sprint(s), true
		}
		return "", false
	})
}

// strMap reads a STRING_MAP field, or a MAP whose values text turns into
// strings.
func (f *Fields) strMap(name string, text func(any) (string, bool)) map[string]string {
	v, ok := f.value(name)
	if !ok {
		return nil
	}
	switch x := v.(type) {
	case map[string]string:
		return x
	case map[string]any:
		out := make(map[string]string, len(x))
		for k, e := range x {
			s, ok := text(e)
			if !ok {
				f.Fail(fmt.Sprintf("%s.%s: must be a STRING", name, k))
				continue
			}
			out[k] = s
		}
		return out
	}
	f.Fail(fmt.Sprintf("%s: must be a STRING_MAP, not %T", name, v))
	return nil
}

// Quantity reads a size, a STRING or a number, with parse; 0 when absent.
func (f *Fields) Quantity(name string, parse func(string) (int, error)) int {
	v, ok := f.value(name)
	if !ok {
		return 0
	}
	s, ok := quantityText(v)
	if !ok {
		f.Fail(fmt.Sprintf("%s: must be a STRING or a number, not %T", name, v))
		return 0
	}
	n, err := parse(strings.TrimSpace(s))
	if err != nil {
		f.Fail(fmt.Sprintf("%s: %v", name, err))
	}
	return n
}

// quantityText is a STRING as it is, a number as its decimal text.
func quantityText(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case int64:
		return strconv.FormatInt(x, 10), true
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), true
	}
	return "", false
}

// Int reads a whole number from lo to hi: a LONG, a DOUBLE (its whole
// part) or a STRING holding one; 0 when absent or out of range.
func (f *Fields) Int(name string, lo, hi int) int {
	v, ok := f.value(name)
	if !ok {
		return 0
	}
	n, problem := wholeNumber(v)
	if problem == "" && (n < int64(lo) || n > int64(hi)) {
		problem = fmt.Sprintf("%d is outside %d-%d", n, lo, hi)
	}
	if problem != "" {
		f.Fail(name + ": " + problem)
		return 0
	}
	return int(n)
}

// wholeNumber reads a LONG, a DOUBLE (its whole part) or a STRING holding
// a whole number, or says what is wrong with v.
func wholeNumber(v any) (int64, string) {
	switch x := v.(type) {
	case int64:
		return x, ""
	case float64:
		return int64(x), ""
	case string:
		n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
		if err != nil {
			return 0, fmt.Sprintf("%q is not a whole number", x)
		}
		return n, ""
	}
	return 0, fmt.Sprintf("must be a number, not %T", v)
}
