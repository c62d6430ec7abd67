package orchestrator

import (
	"context"
	"strings"
	"testing"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/engine/expression"
	"github.com/maestro-serverless/maestro/model"
)

// TestTriggerPatternFromSignalParams: the security review's probe through a
// signal trigger's condition, the pattern taken from the signal's params —
// sized before anything compiles it, refused naming the limit; and the
// trigger expressions of a workflow share one budget per signal.
func TestTriggerPatternFromSignalParams(t *testing.T) {
	o := New(Config{})
	env := signalTriggerEnv([]engine.SignalMatch{{Name: "s", Seq: 1, Params: map[string]any{"p": strings.Repeat("a{1000}", 1400), "big": strings.Repeat("a", 1<<20)}}})
	_, err := o.Signals.evalTriggerExpr(context.Background(), "'' matches p", model.TypeBoolean, env)
	if err == nil || !strings.Contains(err.Error(), "regular expression of 1,400,002 instructions, more than the limit of 10,000") {
		t.Fatalf("got %v", err)
	}

	b := expression.NewBudget(0, 0)
	ctx := expression.WithBudget(context.Background(), b)
	var spent error
	for i := 0; i < 200 && spent == nil; i++ {
		_, spent = o.Signals.evalTriggerExpr(ctx, "big contains 'b'", model.TypeBoolean, env)
	}
	if spent == nil || !strings.Contains(spent.Error(), "CPU budget exceeded") {
		t.Fatalf("200 scans of 1 MiB under one budget: %v", spent)
	}
}
