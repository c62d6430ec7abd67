package sel

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// run parses and evaluates src as Maestro's driver would (a ";" appended
// unless src ends in ";" or "}").
func run(t *testing.T, src string, cfg Config) (Value, error) {
	t.Helper()
	s := strings.TrimSpace(src)
	if s != "" && !strings.HasSuffix(s, ";") && !strings.HasSuffix(s, "}") {
		s += ";"
	}
	p, err := Parse(s)
	if err != nil {
		return nil, err
	}
	done := make(chan struct{})
	var v Value
	go func() {
		defer close(done)
		v, err = p.Eval(cfg)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatalf("%q did not end in 10 s", src)
	}
	return v, err
}

func TestEvalCore(t *testing.T) {
	cases := []struct {
		src  string
		kind Kind
		want string
	}{
		{"1 + 2 * 3", KindLong, "7"},
		{"(1 + 2) * 3", KindLong, "9"},
		{"7 / 2", KindLong, "3"},
		{"-7 / 2", KindLong, "-3"},
		{"-7 % 3", KindLong, "-1"},
		{"7.0 / 2", KindDouble, "3.5"},
		{"7 / 2.0", KindDouble, "3.5"},
		{"1.5d + 1", KindDouble, "2.5"},
		{"2f", KindDouble, "2.0"},
		{"10000000.0", KindDouble, "1.0E7"},
		{"9223372036854775807L + 1", KindLong, "-9223372036854775808"},
		{"017", KindLong, "17"},
		{"'a' + 1", KindString, "a1"},
		{"1 + 'a'", KindString, "1a"},
		{"1 + 2 + 'a'", KindString, "3a"},
		{"'a' + 1 + 2", KindString, "a12"},
		{"'a' + true", KindString, "atrue"},
		{"'a' + null", KindString, "anull"},
		{"null + 'a'", KindString, "nulla"},
		{"'x' + 1.5", KindString, "x1.5"},
		{`"a\tb" == 'a\tb'`, KindBoolean, "true"},
		{"'abc' == 'abc'", KindBoolean, "true"},
		{"'abc' != 'abd'", KindBoolean, "true"},
		{"1 == '1'", KindBoolean, "true"},
		{"1 < 2 && 2 < 3", KindBoolean, "true"},
		{"1 > 2 || 2 > 3", KindBoolean, "false"},
		{"!(1 > 2)", KindBoolean, "true"},
		{"1 < 2.5", KindBoolean, "true"},
		{"null == null", KindBoolean, "true"},
		{"x == null", KindBoolean, "true"},
		{"null < 1", KindBoolean, "false"},
		{"1 > 0 ? 'yes' : 'no'", KindString, "yes"},
		{"1 > 0 ? 1 > 2 ? 'a' : 'b' : 'c'", KindString, "b"},
		{"x = 1; x += 2; x *= 5; x -= 1; x /= 2; x %= 4", KindLong, "3"},
		{"s = 'a'; s += 1; s += true", KindString, "a1true"},
		{"String s; s += 'x'", KindString, "nullx"},
		{"int a = 1, b; b = a + 1; return b * 10;", KindLong, "20"},
		{"long x = 5L; double y = 2.5; return x + y;", KindDouble, "7.5"},
		{"x = 1; if (x > 0) { y = 'pos'; } else { y = 'neg'; } y", KindString, "pos"},
		{"x = -1; if (x > 0) y = 1; else if (x == 0) y = 2; else y = 3; y", KindLong, "3"},
		{"x = 1; if (x > 0) { 5; }", KindVoid, "VOID"},
		{"s = 0; for (int i = 0; i < 10; i += 1) { s += i; } s", KindLong, "45"},
		{"s = 0; i = 0; while (i < 10) { i += 1; if (i % 2 == 0) continue; s += i; } s", KindLong, "25"},
		{"s = 0; for (;;) { s += 1; if (s == 7) break; } s", KindLong, "7"},
		{"for (int i = 0; i < 5; i += 1) { if (i == 3) return i * 100; } return -1;", KindLong, "300"},
		{"x = 1; { x = 2; { x = 3; } } x", KindLong, "3"},
		{"/* a */ 1 + // b\n 2", KindLong, "3"},
		{"import org.joda.time.DateTime; import static a.b.*; 42", KindLong, "42"},
		{"a = new long[]{1, 2, 3}; a[1] = 20; a[1] + a.length", KindLong, "23"},
		{"int[] a = new int[3]; a[0] += 5; a[0]", KindLong, "5"},
		{"String[] a = new String[2]; a[0]", KindString, "null"},
		{"a = new String[]{'x', 'y',}; b = a; b[0] = 'z'; a[0]", KindString, "z"},
		{"boolean[] b = new boolean[]{true}; b[0]", KindBoolean, "true"},
		{"throw 'bad ' + 1", KindError, "bad 1"},
		{"x = 2; if (x > 1) { throw 'big'; } 'small'", KindError, "big"},
		{"1; 2; 3", KindLong, "3"},
		{"x = 1;", KindLong, "1"},
		{"int x = 1;", KindVoid, "VOID"},
		// SEL's boxes: a typed declaration from a variable shares its box,
		// an assignment copies, a map keeps the variable's box.
		{"long x = 1; long y = x; x += 1; y", KindLong, "2"},
		{"x = 1; y = x; x += 1; y", KindLong, "1"},
		{"m = new Map(); v = 'a'; m.put('k', v); v = 'b'; m.get('k')", KindString, "b"},
	}
	for _, c := range cases {
		v, err := run(t, c.src, Config{Vars: map[string]Value{"in": Long(3)}})
		if err != nil {
			t.Errorf("%s: %v", c.src, err)
			continue
		}
		if v.Kind() != c.kind || JavaString(v) != c.want {
			t.Errorf("%s = %s %q, want %s %q", c.src, v.Kind(), JavaString(v), c.kind, c.want)
		}
	}
}

func TestEvalInputs(t *testing.T) {
	arr := &Array{Of: KindLongArray, Items: []Value{Long(1), Long(2)}}
	cfg := Config{Vars: map[string]Value{"n": Long(3), "s": String("x"), "arr": arr}}
	for src, want := range map[string]string{
		"n + 1":                    "4",
		"n += 1; n":                "4",
		"s + n":                    "x3",
		"arr[0] = 9; arr[0]":       "9",
		"arr.length":               "2",
		"undefinedName == null":    "true",
		"x = n; x += 10; x":        "13",
		"x = n; x += 10; n":        "3",
		"for (;n < 10;) n += 1; n": "10",
	} {
		v, err := run(t, src, cfg)
		if err != nil || JavaString(v) != want {
			t.Errorf("%s = %v, %v; want %s", src, v, err, want)
		}
	}
	if arr.Items[0] != Long(1) {
		t.Errorf("an expression changed its input array: %v", arr.Items)
	}
	if cfg.Vars["n"] != Long(3) {
		t.Errorf("an expression changed its input: %v", cfg.Vars["n"])
	}
}

func TestEvalErrors(t *testing.T) {
	cases := []struct {
		src  string
		is   error  // nil: any error
		text string // in the message
	}{
		{"1 / 0", nil, "/ by zero"},
		{"x = 1; x %= 0", nil, "/ by zero"},
		{"'a' == 1", nil, "type mismatch"},
		{"x = 1; x = 'a'", nil, "type mismatch"},
		{"long x = 1.5", nil, "type mismatch"},
		{"double d = 1", nil, "type mismatch"},
		{"String s = null", nil, "type mismatch"},
		{"x = null", nil, "cannot create the variable x"},
		{"y += 1", ErrUnsupported, "NULL"},
		{"new long[]{1, 2.0};", nil, "type mismatch"},
		{"a = new long[2]; a[2]", nil, "out of bounds"},
		{"a = new long[2]; a[-1] = 1", nil, "out of bounds"},
		{"if (1) { 2; }", nil, "must be a BOOLEAN"},
		{"throw 1", nil, "can only throw a string"},
		{"x = 1; x++", ErrUnsupported, "++"},
		{"x = 1 << 2", ErrUnsupported, "<<"},
		{"x = 1 & 2", ErrUnsupported, "&"},
		{"x = 1; x |= 2", ErrUnsupported, "|="},
		{"switch (1) { }", ErrUnsupported, "switch"},
		{"do { } while (true);", ErrUnsupported, "do"},
		{"try { } finally { }", ErrUnsupported, "try"},
		{"new java.io.File('x')", ErrUnsupported, "qualified"},
		{"new int[2][2]", nil, "out of bounds"}, // (new int[2])[2]: one dimension, then an index
		{"new int[][]{}", ErrUnsupported, "multi-dimensional"},
		{"(int) 1.5", ErrUnsupported, "line 1, column 2"},
		{"Math == null", ErrUnsupported, "CLASS"},
		{"java.lang.Runtime.getRuntime()", nil, ""},
		{"Object o = 1", ErrUnsupported, "Object"},
		{"new Thread()", ErrUnsupported, "Thread"},
		{"0x1F", nil, "not a valid long literal"},
		{"'abc", nil, "not closed"},
		{"'a\\q'", nil, "invalid escape"},
		{"1 +\n  * 2", nil, "line 2, column 3"},
		{"break;", nil, "outside a loop"},
		{"Long = 1", ErrUnsupported, "class Long"},
		{"9223372036854775808", nil, "not a valid long literal"},
	}
	for _, c := range cases {
		_, err := run(t, c.src, Config{})
		if err == nil {
			t.Errorf("%s: no error", c.src)
			continue
		}
		if c.is != nil && !errors.Is(err, c.is) {
			t.Errorf("%s: %v, want one wrapping %v", c.src, err, c.is)
		}
		if !strings.Contains(err.Error(), c.text) {
			t.Errorf("%s: %v, want it to say %q", c.src, err, c.text)
		}
	}
}

// countingMeter refuses work past limit units.
type countingMeter struct{ used, limit int64 }

func (c *countingMeter) Charge(cpu, mem int64) error {
	c.used += cpu
	if c.used > c.limit {
		return errors.New("over budget")
	}
	return nil
}

func TestEvalLimits(t *testing.T) {
	cases := []struct {
		src string
		cfg Config
	}{
		{"i = 0; while (i < 1000) { i += 1; }", Config{Limits: Limits{Loop: 100}}},
		{"for (;;) { }", Config{Limits: Limits{Loop: 1 << 62, Visits: 1 << 62}, Meter: &countingMeter{limit: 1e7}}},
		{"while (true) { x = 1; }", Config{Limits: Limits{Loop: 1 << 62}}},
		{"new long[100]", Config{Limits: Limits{Array: 100}}},
		{"new long[]{1,2,3};", Config{Limits: Limits{Array: 3}}},
		{"s = 'ab'; for (int i = 0; i < 100; i += 1) { s += s; }", Config{}},
		{"s = 'x'; while (true) { s = s + s; }", Config{Limits: Limits{Loop: 1 << 62}}},
		{strings.Repeat("(", 300) + "1" + strings.Repeat(")", 300), Config{}},
		{strings.Repeat("!", 300) + "true", Config{}},
		{strings.Repeat("{", 300) + strings.Repeat("}", 300), Config{}},
	}
	for _, c := range cases {
		_, err := run(t, c.src, c.cfg)
		if !errors.Is(err, ErrLimit) {
			name := c.src
			if len(name) > 40 {
				name = name[:40] + "…"
			}
			t.Errorf("%s: %v, want a limit error", name, err)
		}
	}
	// The loop limit counts as SEL does: a loop fails once it has run the
	// limit's number of iterations.
	if _, err := run(t, "i = 0; while (i < 99) { i += 1; } i", Config{Limits: Limits{Loop: 100}}); err != nil {
		t.Errorf("99 iterations under a limit of 100: %v", err)
	}
	if _, err := run(t, "i = 0; while (i < 100) { i += 1; } i", Config{Limits: Limits{Loop: 100}}); !errors.Is(err, ErrLimit) {
		t.Errorf("100 iterations under a limit of 100: %v", err)
	}
}

func TestParseErrorsNamePosition(t *testing.T) {
	_, err := Parse("x = 1;\ny = ;")
	var se *SyntaxError
	if !errors.As(err, &se) || se.Pos != (Pos{2, 5}) {
		t.Fatalf("got %v, want a syntax error at line 2, column 5", err)
	}
	_, err = run(t, "x = 1;\n  y = x / 0;", Config{})
	var ee *EvalError
	if !errors.As(err, &ee) || ee.Pos.Line != 2 {
		t.Fatalf("got %v, want an evaluation error on line 2", err)
	}
}
