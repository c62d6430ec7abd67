package loopitems

import (
	"errors"
	"fmt"
	"strings"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/model"
)

// source is an items_from object, checked: where it is, its format and
// the fields its items must have.
type source struct {
	uri, bucket, key string
	format           string
	fields           map[string]model.ParamType
	declared         []string // the names in fields, sorted
}

// fail returns the ItemsError of the object, at where ("line 3"; "" for
// the whole object).
func (s *source) fail(where, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if where == "" {
		return &engine.ItemsError{Msg: fmt.Sprintf("items_from %s: %s", s.uri, msg)}
	}
	return &engine.ItemsError{Msg: fmt.Sprintf("items_from %s %s: %s", s.uri, where, msg)}
}

// readFailure sorts an error of Objects.GetRange: the object's fault is an
// ItemsError, any other is returned wrapped.
func (s *source) readFailure(err error) error {
	switch {
	case errors.Is(err, ErrNotFound):
		return s.fail("", "no such object")
	case errors.Is(err, ErrChanged):
		return s.fail("", "changed since the loop started")
	case errors.Is(err, ErrDenied):
		return s.fail("", "access denied (%v)", err)
	}
	return fmt.Errorf("items_from %s: %w", s.uri, err)
}

// tooLarge is the error of an item larger than engine.MaxItemBytes.
func (s *source) tooLarge(where string) error {
	return s.fail(where, "item larger than %d bytes", engine.MaxItemBytes)
}

// item checks the fields of one item and returns them as params: valid
// names, none reserved, param values, the declared fields present with
// their types. The error says what is wrong, without where.
func (s *source) item(m map[string]any) (engine.Values, error) {
	out := make(engine.Values, len(m))
	// Of the fields at fault, the first in name order is named.
	var bad string
	var badErr error
	for name, v := range m {
		if badErr != nil && name > bad {
			continue
		}
		v, err := field(name, v)
		if err != nil {
			bad, badErr = name, err
			continue
		}
		out[name] = v
	}
	if badErr != nil {
		return nil, badErr
	}
	for _, name := range s.declared {
		v, ok := out[name]
		if !ok {
			return nil, fmt.Errorf("no field %q (declared %s)", name, s.fields[name])
		}
		v, err := asType(v, s.fields[name])
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", name, err)
		}
		out[name] = v
	}
	return out, nil
}

// field checks the name and the value of a field and returns the value
// normalized.
func field(name string, v any) (any, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	v, err := engine.Normalize(v)
	if err != nil {
		return nil, fmt.Errorf("field %q: %w", name, err)
	}
	return v, nil
}

// checkName says why an item may not have a field called name, if so.
func checkName(name string) error {
	if p := model.NameProblems(name, "field name"); len(p) > 0 {
		return errors.New(strings.Join(p, "; "))
	}
	if model.ReservedItemField(name) {
		return fmt.Errorf("field name %q is reserved: every iteration has that param", name)
	}
	return nil
}

// asType returns v, a normalized value, as a value of type t: v itself, or
// a LONG as a DOUBLE, a LONG_ARRAY as a DOUBLE_ARRAY, an empty array as an
// empty array of t, a MAP of strings as a STRING_MAP.
func asType(v any, t model.ParamType) (any, error) {
	got, err := engine.TypeOf(v)
	if err != nil {
		return nil, err
	}
	if got == t {
		return v, nil
	}
	switch x := v.(type) {
	case int64:
		if t == model.TypeDouble {
			return float64(x), nil
		}
	case []int64:
		if t == model.TypeDoubleArray {
			out := make([]float64, len(x))
			for i, n := range x {
				out[i] = float64(n)
			}
			return out, nil
		}
	case []string:
		if e, ok := emptyArray(t); ok && len(x) == 0 {
			return e, nil
		}
	case map[string]any:
		if m, ok := stringMap(x); ok && t == model.TypeStringMap {
			return m, nil
		}
	}
	return nil, fmt.Errorf("a %s, declared %s", got, t)
}

func emptyArray(t model.ParamType) (any, bool) {
	switch t {
	case model.TypeLongArray:
		return []int64{}, true
	case model.TypeDoubleArray:
		return []float64{}, true
	case model.TypeBooleanArray:
		return []bool{}, true
	}
	return nil, false
}

func stringMap(m map[string]any) (map[string]string, bool) {
	out := make(map[string]string, len(m))
	for k, v := range m {
		s, ok := v.(string)
		if !ok {
			return nil, false
		}
		out[k] = s
	}
	return out, true
}
