package jsonnum

import (
	"encoding/json"
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLong(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true},
		{"-0", 0, true},
		{"12", 12, true},
		{"-12", -12, true},
		{"1.0", 1, true},
		{"1.000e2", 100, true},
		{"100e-2", 1, true},
		{"1E+2", 100, true},
		{"0.0001e4", 1, true},
		{"0e-999999999999999999999", 0, true},
		{"9223372036854775807", math.MaxInt64, true},
		{"922337203685477580.7e1", math.MaxInt64, true},
		{"-9223372036854775808", math.MinInt64, true},
		{"9223372036854775808", 0, false},
		{"-9223372036854775809", 0, false},
		{"99999999999999999999", 0, false},
		{"1e19", 0, false},
		{"1e18", 1e18, true},
		{"1e999999999999999999999", 0, false},
		{"1.5", 0, false},
		{"1e-1", 0, false},
		{"01", 0, false},
		{"1.", 0, false},
		{".1", 0, false},
		{"1e", 0, false},
		{"+1", 0, false},
		{"-", 0, false},
		{"", 0, false},
		{"1 ", 0, false},
		{"NaN", 0, false},
	}
	for _, tt := range tests {
		got, ok := Long(tt.in)
		assert.Equal(t, tt.ok, ok, tt.in)
		assert.Equal(t, tt.want, got, tt.in)
	}
}

// FuzzLong checks Long against math/big on JSON number text.
func FuzzLong(f *testing.F) {
	for _, s := range []string{"0", "-0", "1.5", "1e3", "12.50e1", "9223372036854775807", "-9223372036854775808",
		"9223372036854775808", "1e-1", "100e-2", "01", "1.", "-", "0.0e-5", "1E+18"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := Long(s)
		isNumber := isJSONNumber(s)
		if ok && !isNumber {
			t.Fatalf("Long(%q) accepted text that is not a JSON number", s)
		}
		if !isNumber || len(s) > 64 || strings.ContainsAny(s, "eE") && len(s) > 24 {
			return // keep math/big's work small
		}
		r, valid := new(big.Rat).SetString(s)
		if !valid {
			if strings.ContainsAny(s, "eE") {
				return // math/big refuses exponents beyond its limit
			}
			t.Fatalf("math/big cannot read JSON number %q", s)
		}
		want := r.IsInt() && r.Num().IsInt64()
		if ok != want {
			t.Fatalf("Long(%q) ok = %v, want %v", s, ok, want)
		}
		if ok && r.Num().Int64() != got {
			t.Fatalf("Long(%q) = %d, want %s", s, got, r.Num())
		}
	})
}

// isJSONNumber reports whether s is exactly one JSON number.
func isJSONNumber(s string) bool {
	if s == "" || !(s[0] == '-' || s[0] >= '0' && s[0] <= '9') || strings.TrimSpace(s) != s {
		return false
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return false
	}
	_, isNum := v.(json.Number)
	return isNum && !dec.More() && dec.InputOffset() == int64(len(s))
}

func TestNumber(t *testing.T) {
	tests := []struct {
		in   string
		want any
		err  bool
	}{
		{"42", int64(42), false},
		{"-7", int64(-7), false},
		{"9007199254740993", int64(9007199254740993), false}, // 2^53 + 1 stays exact
		{"9223372036854775807", int64(math.MaxInt64), false},
		{"9223372036854775808", float64(9223372036854775808), false},
		{"1.0", 1.0, false},
		{"1e3", 1000.0, false},
		{"0.5", 0.5, false},
		{"1e999", nil, true},
		{"abc", nil, true},
		{"", nil, true},
	}
	for _, tt := range tests {
		got, err := Number(json.Number(tt.in))
		if tt.err {
			assert.Error(t, err, tt.in)
			continue
		}
		require.NoError(t, err, tt.in)
		assert.Equal(t, tt.want, got, tt.in)
	}
}

func TestDecodeKeepsLongsExact(t *testing.T) {
	var m map[string]any
	require.NoError(t, Decode([]byte(`{"a": 9007199254740993, "b": [1, 2.5], "c": {"d": -9223372036854775808}}`), &m))
	assert.Equal(t, json.Number("9007199254740993"), m["a"])
	assert.Equal(t, []any{json.Number("1"), json.Number("2.5")}, m["b"])
	assert.Equal(t, map[string]any{"d": json.Number("-9223372036854775808")}, m["c"])

	assert.Error(t, Decode([]byte(`{"a": 1} {"b": 2}`), &m), "trailing value")
	assert.Error(t, Decode([]byte(`{"a": 1}x`), &m), "trailing garbage")
	assert.NoError(t, Decode([]byte(" {\"a\": 1}\n "), &m), "surrounding space")
	assert.Error(t, Decode([]byte(`{"a": `), &m), "truncated")
}

func TestInt64(t *testing.T) {
	for _, c := range []struct {
		in   any
		want int64
		ok   bool
	}{
		{int64(-7), -7, true}, {int(3), 3, true}, {int8(-8), -8, true}, {uint8(255), 255, true},
		{uint(math.MaxInt64), math.MaxInt64, true}, {uint64(math.MaxInt64) + 1, 0, false},
		{uint(math.MaxInt64) + 1, 0, false}, {1.0, 0, false}, {"1", 0, false}, {nil, 0, false},
	} {
		if got, ok := Int64(c.in); got != c.want || ok != c.ok {
			t.Errorf("Int64(%T %v) = %d, %v; want %d, %v", c.in, c.in, got, ok, c.want, c.ok)
		}
	}
}
