package expression

import (
	"context"
	"fmt"
	"testing"

	"github.com/maestro-serverless/maestro/model"
)

// hundredParams builds 100 definitions in reverse dependency order: chains
// of arithmetic, string concatenation, interpolated literals, params.get and
// a helper call, each reading the one before.
func hundredParams() model.Params {
	p := model.Params{Defs: map[string]*model.ParamDefinition{}}
	for i := 99; i >= 0; i-- {
		name := fmt.Sprintf("p%02d", i)
		prev := fmt.Sprintf("p%02d", i-1)
		var def *model.ParamDefinition
		switch {
		case i == 0:
			def = &model.ParamDefinition{Type: model.TypeLong, Expression: "base + 1"}
		case i%10 == 1:
			def = &model.ParamDefinition{Type: model.TypeString, Value: "v${" + prev + "}", HasValue: true}
		case i%10 == 2:
			def = &model.ParamDefinition{Type: model.TypeLong, Expression: "len(" + prev + ") + " + fmt.Sprint(i)}
		case i%10 == 5:
			def = &model.ParamDefinition{Type: model.TypeString, Expression: prev + " + '-' + params.get('base')"}
		case i%10 == 6:
			def = &model.ParamDefinition{Type: model.TypeLong, Expression: "len(" + prev + ") * 2"}
		case i%10 == 9:
			def = &model.ParamDefinition{Type: model.TypeLongArray, Expression: "Util.intsBetween(0, " + prev + " % 20, 1)"}
		case i%10 == 0:
			def = &model.ParamDefinition{Type: model.TypeLong, Expression: "len(" + prev + ") + base"}
		default:
			def = &model.ParamDefinition{Type: model.TypeLong, Expression: prev + " * 3 / 2 + " + fmt.Sprint(i)}
		}
		p.Names = append(p.Names, name)
		p.Defs[name] = def
	}
	return p
}

func benchEnv() *Env { return &Env{Vars: map[string]any{"base": int64(7)}, Seed: "bench"} }

func benchScope() model.Scope {
	return model.Scope{Vars: map[string]model.ParamType{"base": model.TypeLong}}
}

func TestHundredParams(t *testing.T) {
	l := New(DefaultLimits())
	out, err := l.EvalParams(context.Background(), hundredParams(), benchEnv())
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 100 || out["p00"] != int64(8) || out["p01"] != "v8" {
		t.Fatalf("unexpected results: p00=%v p01=%v (%d params)", out["p00"], out["p01"], len(out))
	}
}

// BenchmarkEval100Params evaluates 100 cross-referencing params compiled once.
func BenchmarkEval100Params(b *testing.B) {
	l := New(DefaultLimits())
	set, err := l.CompileParams(hundredParams(), benchScope())
	if err != nil {
		b.Fatal(err)
	}
	env := benchEnv()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := set.Eval(ctx, env); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCompileEval100Params compiles and evaluates the 100 params each time.
func BenchmarkCompileEval100Params(b *testing.B) {
	l := New(DefaultLimits())
	params := hundredParams()
	env := benchEnv()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := l.EvalParams(ctx, params, env); err != nil {
			b.Fatal(err)
		}
	}
}

// selDateExpr is the corpus's Joda date expression (sample-signal-trigger-wf,
// a signal dependency's match param), and exprDateExpr the same day's date
// in the expr dialect, for the two readers side by side.
const (
	selDateExpr = "DateTimeFormatter f = DateTimeFormat.forPattern(\"yyyyMMddHH\").withZone(DateTimeZone.forID(\"UTC\"));\n" +
		"DateTime dt = f.parseDateTime(TARGET_RUN_DATE + \"00\").minusDays(0).minusHours(0);\n" +
		"dt.withZone(DateTimeZone.forID(\"UTC\")).toString(\"yyyyMMdd\");"
	exprDateExpr = "Util.tsToDateInt(Util.dateIntHourToTs(TARGET_RUN_DATE, '00', 'UTC', 0, 0), 'UTC')"
)

// BenchmarkDateParam evaluates a compiled date param (an evaluated param of
// a typical date expression), in SEL and in the expr dialect; the Compile
// variants compile it each time too, as a definition check does.
func BenchmarkDateParam(b *testing.B) {
	l := New(DefaultLimits())
	scope := model.Scope{Vars: map[string]model.ParamType{"TARGET_RUN_DATE": model.TypeLong}}
	env := &Env{Vars: map[string]any{"TARGET_RUN_DATE": int64(20210707)}, Seed: "bench"}
	for _, c := range []struct{ name, src string }{{"SEL", selDateExpr}, {"expr", exprDateExpr}} {
		p, err := l.Compile(c.src, model.TypeString, scope)
		if err != nil {
			b.Fatal(err)
		}
		if v, err := p.Eval(context.Background(), env); err != nil || v != "20210707" {
			b.Fatalf("%s: %v, %v", c.name, v, err)
		}
		b.Run(c.name+"/Eval", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.Eval(context.Background(), env); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/CompileEval", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				q, err := l.compile(c.src, model.TypeString, &recordingScope{scope: scope})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := q.Eval(context.Background(), env); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
