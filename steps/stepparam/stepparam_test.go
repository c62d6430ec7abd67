package stepparam

import (
	"reflect"
	"strconv"
	"testing"

	"github.com/maestro-serverless/maestro/engine"
)

func TestMap(t *testing.T) {
	for _, tc := range []struct {
		params engine.Values
		err    string
	}{
		{engine.Values{"p": map[string]any{"a": "b"}}, ""},
		{engine.Values{}, `param "p" is missing`},
		{engine.Values{"p": "x"}, `param "p" must be a MAP, not string`},
	} {
		m, err := Map(tc.params, "p")
		if got := errText(err); got != tc.err {
			t.Errorf("Map(%v): %q, want %q", tc.params, got, tc.err)
		}
		if err == nil && m["a"] != "b" {
			t.Errorf("Map(%v) = %v", tc.params, m)
		}
	}
}

func TestString(t *testing.T) {
	m := map[string]any{"s": " x ", "null": nil, "n": int64(1)}
	for _, tc := range []struct {
		name, want, err string
	}{
		{"s", " x ", ""},
		{"absent", "", ""},
		{"null", "", ""},
		{"n", "", "param p.n must be a STRING, not int64"},
	} {
		got, err := String(m, "p", tc.name)
		if got != tc.want || errText(err) != tc.err {
			t.Errorf("String(%q) = %q, %q; want %q, %q", tc.name, got, errText(err), tc.want, tc.err)
		}
	}
}

func TestFields(t *testing.T) {
	for _, tc := range []struct {
		name     string
		field    any
		read     func(f *Fields) any
		want     any
		problems []string
	}{
		{"Str trims", " a ", func(f *Fields) any { return f.Str("x") }, "a", nil},
		{"Str absent", nil, func(f *Fields) any { return f.Str("x") }, "", nil},
		{"Str wrong type", int64(1), func(f *Fields) any { return f.Str("x") }, "", []string{"x: must be a STRING, not int64"}},
		{"Strs", []string{"a"}, func(f *Fields) any { return f.Strs("x") }, []string{"a"}, nil},
		{"Strs of any", []any{"a", int64(1)}, func(f *Fields) any { return f.Strs("x") }, []string{"a", ""}, []string{"x[1]: must be a STRING"}},
		{"Strs wrong type", "a", func(f *Fields) any { return f.Strs("x") }, []string(nil), []string{"x: must be a STRING_ARRAY, not string"}},
		{"StrMap", map[string]any{"a": "1"}, func(f *Fields) any { return f.StrMap("x") }, map[string]string{"a": "1"}, nil},
		{"StrMap number", map[string]any{"a": int64(1)}, func(f *Fields) any { return f.StrMap("x") }, map[string]string{}, []string{"x.a: must be a STRING"}},
		{"StrMap wrong type", "a", func(f *Fields) any { return f.StrMap("x") }, map[string]string(nil), []string{"x: must be a STRING_MAP, not string"}},
		{"Env scalars", map[string]any{"a": int64(1), "b": true, "c": 0.5}, func(f *Fields) any { return f.Env("x") },
			map[string]string{"a": "1", "b": "true", "c": "0.5"}, nil},
		{"Env nested", map[string]any{"a": []string{}}, func(f *Fields) any { return f.Env("x") }, map[string]string{}, []string{"x.a: must be a STRING"}},
		{"Quantity string", " 2 ", func(f *Fields) any { return f.Quantity("x", double) }, 4, nil},
		{"Quantity number", int64(3), func(f *Fields) any { return f.Quantity("x", double) }, 6, nil},
		{"Quantity wrong type", true, func(f *Fields) any { return f.Quantity("x", double) }, 0, []string{"x: must be a STRING or a number, not bool"}},
		{"Quantity unparsable", "two", func(f *Fields) any { return f.Quantity("x", double) }, 0, []string{`x: strconv.Atoi: parsing "two": invalid syntax`}},
		{"Int", int64(5), func(f *Fields) any { return f.Int("x", 1, 10) }, 5, nil},
		{"Int of a string", " 5 ", func(f *Fields) any { return f.Int("x", 1, 10) }, 5, nil},
		{"Int of a double", 5.7, func(f *Fields) any { return f.Int("x", 1, 10) }, 5, nil},
		{"Int out of range", int64(11), func(f *Fields) any { return f.Int("x", 1, 10) }, 0, []string{"x: 11 is outside 1-10"}},
		{"Int not whole", "5.5", func(f *Fields) any { return f.Int("x", 1, 10) }, 0, []string{`x: "5.5" is not a whole number`}},
		{"Int wrong type", true, func(f *Fields) any { return f.Int("x", 1, 10) }, 0, []string{"x: must be a number, not bool"}},
	} {
		f, err := Read(engine.Values{"p": map[string]any{"x": tc.field}}, "p")
		if err != nil {
			t.Fatal(err)
		}
		if got := tc.read(f); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %#v, want %#v", tc.name, got, tc.want)
		}
		if !reflect.DeepEqual(f.Problems(), tc.problems) {
			t.Errorf("%s: problems %q, want %q", tc.name, f.Problems(), tc.problems)
		}
	}
}

func TestOnlyAndErr(t *testing.T) {
	f, err := Read(engine.Values{"p": map[string]any{"b": "", "a": "", "z": ""}}, "p")
	if err != nil {
		t.Fatal(err)
	}
	if f.Err() != nil {
		t.Fatalf("Err before any problem: %v", f.Err())
	}
	f.Only("not a field", "a")
	want := []string{"b: not a field (a)", "z: not a field (a)"}
	if !reflect.DeepEqual(f.Problems(), want) {
		t.Fatalf("problems %q, want %q", f.Problems(), want)
	}
	if got := errText(f.Err()); got != "param p.b: not a field (a)" {
		t.Fatalf("Err() = %q", got)
	}
}

func double(s string) (int, error) {
	n, err := strconv.Atoi(s)
	return 2 * n, err
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
