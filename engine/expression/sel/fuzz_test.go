package sel

import (
	"errors"
	"testing"
	"time"
)

// FuzzParseEval parses and evaluates arbitrary programs under small limits
// and a metered budget: never a panic, always an end within the budget,
// and every error positioned or a limit's.
func FuzzParseEval(f *testing.F) {
	for _, s := range []string{
		"1 + 2;", "x = 1; x += 2; x;", "for (;;) { }", "while (true) { x = 'a' + x; }",
		"a = new long[]{1, 2}; a[5];", "int[] a = new int[3]; a[0] = 'x';", "if (1) { }",
		"s = 'ab'; for (int i = 0; i < 40; i += 1) { s = s + s; } s;", "return 1 / 0;", "throw 'x';",
		"{ { { 1; } } }", "x = ((((1))));", "new Map();", "'a' == 1;", "null + null;", "- - - 1;",
		"import a.b.*; 1;", "/* c */ 1; // d", "x = 9223372036854775807L; x * x;", "1.5 % 0.0;",
		"a = new String[2]; a[0] + a[1];", "b = true; b = !b && b || !b;", "x = 1; x = x > 0 ? 2 : 3;",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		if len(src) > 4096 {
			return
		}
		start := time.Now()
		p, err := Parse(src)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) && !errors.Is(err, ErrUnsupported) && !errors.Is(err, ErrLimit) {
				t.Fatalf("%q: parse error %T without a position: %v", src, err, err)
			}
			return
		}
		_ = p.Info()
		_, _, _ = p.ResultKind(func(string) (Kind, bool) { return KindLong, true })
		_, err = p.Eval(Config{
			Limits: Limits{Loop: 1000, Array: 1000, Length: 1 << 16, Visits: 1 << 20},
			Meter:  &countingMeter{limit: 1 << 24},
			Vars:   map[string]Value{"n": Long(3), "s": String("abc")},
			Seed:   "fuzz",
		})
		if err != nil {
			var ee *EvalError
			if !errors.As(err, &ee) && !errors.Is(err, ErrLimit) {
				t.Fatalf("%q: evaluation error %T without a position: %v", src, err, err)
			}
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("%q took %v", src, d)
		}
	})
}
