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
