// Package jsonnum is the project's one JSON number decoder: every place that
// turns JSON text into Go values (stored run state, events, signal params,
// API bodies, Http step responses) decodes through Decode, so numbers arrive
// as json.Number and are converted exactly — never through float64, which
// loses LONG values above 2^53.
//
// Long and Number are the two conversions a json.Number needs: Long for a
// value that must be a whole number (a signal's LONG param, in any JSON
// notation: 12, 1.2e1, 12.0), Number for a parameter value (integer literals
// are LONG, everything else DOUBLE). Int64 is the one conversion of a Go
// integer of any type to a LONG.
package jsonnum

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// Decode decodes one JSON value from data into v, with numbers that land in
// interface values (any, map[string]any, []any) as json.Number. Trailing data
// after the value is an error, as with json.Unmarshal.
func Decode(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("invalid JSON: data after the top-level value")
	}
	return nil
}

// Int64 converts a Go integer of any type to int64; ok is false for
// other types and for unsigned values above math.MaxInt64.
func Int64(v any) (n int64, ok bool) {
	var u uint64
	switch x := v.(type) {
	case int64:
		return x, true
	case int:
		return int64(x), true
	case int32:
		return int64(x), true
	case int16:
		return int64(x), true
	case int8:
		return int64(x), true
	case uint64:
		u = x
	case uint:
		u = uint64(x)
	case uint32:
		u = uint64(x)
	case uint16:
		u = uint64(x)
	case uint8:
		u = uint64(x)
	default:
		return 0, false
	}
	if u > math.MaxInt64 {
		return 0, false
	}
	return int64(u), true
}

// Long reads JSON number text as an int64 when it denotes a whole number
// within int64, in any notation JSON allows ("12", "-0", "1.0", "1e3",
// "12.5e1"). Text that is not a JSON number, not whole or out of range fails.
// Exponents are not expanded, so huge ones cost nothing.
func Long(s string) (int64, bool) {
	i := 0
	neg := i < len(s) && s[i] == '-'
	if neg {
		i++
	}
	start := i
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	intPart := s[start:i]
	if intPart == "" || len(intPart) > 1 && intPart[0] == '0' {
		return 0, false
	}
	var frac string
	if i < len(s) && s[i] == '.' {
		i++
		fs := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		frac = s[fs:i]
		if frac == "" {
			return 0, false
		}
	}
	exp := 0
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		expNeg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			expNeg = s[i] == '-'
			i++
		}
		es := i
		for i < len(s) && isDigit(s[i]) {
			if exp < 100_000_000 { // beyond this the answer no longer changes
				exp = exp*10 + int(s[i]-'0')
			}
			i++
		}
		if es == i {
			return 0, false
		}
		if expNeg {
			exp = -exp
		}
	}
	if i != len(s) {
		return 0, false
	}
	digits := strings.TrimLeft(intPart+frac, "0")
	if digits == "" {
		return 0, true // zero in any notation
	}
	exp -= len(frac)
	trimmed := strings.TrimRight(digits, "0")
	exp += len(digits) - len(trimmed)
	digits = trimmed
	// digits now ends in a non-zero digit: a negative exponent leaves a fraction.
	if exp < 0 || len(digits)+exp > 19 {
		return 0, false
	}
	u, err := strconv.ParseUint(digits+strings.Repeat("0", exp), 10, 64)
	if err != nil {
		return 0, false
	}
	switch {
	case neg && u == 1<<63:
		return math.MinInt64, true
	case u > math.MaxInt64:
		return 0, false
	case neg:
		return -int64(u), true
	}
	return int64(u), true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// Number converts a JSON number to a parameter value: an integer literal
// within int64 ("42", "-7") is an int64 (LONG), any other number a finite
// float64 (DOUBLE: "1.0", "1e3", "0.5"). Text that is not a JSON number, or
// does not fit a float64, is an error.
func Number(n json.Number) (any, error) {
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return i, nil
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, fmt.Errorf("number %s is not a finite LONG or DOUBLE", n)
	}
	if !json.Valid([]byte(n)) {
		return nil, fmt.Errorf("%q is not a JSON number", string(n))
	}
	return f, nil
}
