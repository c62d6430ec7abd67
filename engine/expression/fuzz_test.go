package expression

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/model"
)

// FuzzCompileEval compiles and evaluates arbitrary sources against a fixed
// environment: it must never panic, hang or exhaust memory, and every error
// must be an *Error that quotes the source.
func FuzzCompileEval(f *testing.F) {
	for _, e := range loadCorpus(f) {
		f.Add(e.Expression, uint8(0))
	}
	for _, s := range []string{
		"Util.intsBetween(0, 2000000000, 1)", "s + s + s", "m.n.z", "la[1:2]", "1..10",
		"params['s'] + params.get('l')", "Math.max(l, d) / 0", "u + 1", "x.toString().size()",
		"Util.dateIntsBetween(20200101, 20200110, -1)", "'a' + null", "0x1FL * 2", "1e308 * 10",
		"-9223372036854775807 - 1", "l % -1", "keys(m)", "first(sa) + last(sa)", "type(m)",
		// SEL: statements, loops, Java objects.
		"for (;;) { }", "x = 's'; while (true) { x = x + x; }", "m = new Map(); for (int i = 0; i < 30000; i += 1) { m.put('k' + i, i); } m",
		"a = new long[25000]; a[0] = 1; a", "int x = 1, y; if (x > 0) { y = 2; } else y = 3; return y;",
		"new DateTime(1569018000000).withZone(DateTimeZone.forID('UTC')).monthOfYear().getAsText();",
		"throw 'stop';", "s.split('b')", "params.getFromInstance('RUN_POLICY') == 'START_FRESH_NEW_RUN' ? 'run' : 'resume'",
	} {
		f.Add(s, uint8(1))
	}
	lang := New(DefaultLimits())
	env := testEnv()
	env.Vars["s"] = strings.Repeat("abc", 1000)
	scope := testScope()
	wants := append([]model.ParamType{""}, model.ParamTypes...)
	f.Fuzz(func(t *testing.T, src string, w uint8) {
		want := wants[int(w)%len(wants)]
		start := time.Now()
		p, err := lang.Compile(src, want, scope)
		if err == nil {
			var v any
			v, err = p.Eval(context.Background(), env)
			if err == nil && want != "" {
				if _, cerr := Coerce(v, want); cerr != nil {
					t.Fatalf("%q: result %#v does not fit %s: %v", src, v, want, cerr)
				}
			}
		}
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("%q: error is %T, not *Error: %v", src, err, err)
			}
			if e.Source != src {
				t.Fatalf("%q: error quotes %q", src, e.Source)
			}
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("%q took %v", src, d)
		}
	})
}
