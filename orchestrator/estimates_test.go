package orchestrator

import (
	"strings"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/model"
)

// TestForeachEstimate: a foreach attempt of more iterations than the
// stack's threshold shows an estimate — from its own succeeded iterations
// once some ended, before that from the same step's loop in an earlier
// succeeded run — and one of fewer shows none.
func TestForeachEstimate(t *testing.T) {
	r := newRoleRig(t, func(c *Config) { c.ForeachEstimateOver = 2 })
	r.push(rigDef("outer", `"parallel"`, rigForeach("loop", 3, 2, rigStep("x", "Titus"), rigStep("y", "Titus"))))
	// Each iteration's steps take two seconds of the rig's clock.
	runners := rigRunners(&workRunner{run: func(StepWork) (engine.StepFinished, error) {
		r.clock.Advance(time.Second)
		return engine.StepFinished{Outcome: engine.OutcomeSucceeded}, nil
	}})
	r.start("outer", StartRequest{})
	loop := r.step("outer", 1, 1, "loop").Loop
	v, err := r.o.Runs.GetStepAttempt(r.ctx, "outer", 1, 1, "loop", 0)
	if err != nil {
		t.Fatal(err)
	}
	if e := v.Estimate; e == nil || e.Iterations != 3 || e.Steps != 6 || e.Concurrency != 2 || e.Waves != 2 ||
		e.Duration != nil || e.Cost != nil || e.DurationReason == "" || e.CostReason == "" || e.From != "" {
		t.Fatalf("estimate before any iteration ran, without history: %+v", e)
	}
	r.iterate(loop.WorkflowID, 1, runners, 1, 2)
	r.iterate(loop.WorkflowID, 1, runners, 3) // launched once one of the first two ended
	if st := r.state("outer", 1, 1); st.Status != model.WorkflowSucceeded {
		t.Fatalf("run 1: %s", rigStatus(st))
	}
	v, err = r.o.Runs.GetStepAttempt(r.ctx, "outer", 1, 1, "loop", 0)
	if err != nil {
		t.Fatal(err)
	}
	e := v.Estimate
	if e == nil || e.Duration == nil || e.Duration.Sample != 3 || e.Duration.RunP50Millis < 2000 ||
		e.Duration.P50Millis != 2*e.Duration.RunP50Millis || e.Cost == nil || e.Cost.Sample != 3 ||
		!strings.Contains(e.From, "this loop's") {
		t.Fatalf("estimate from its own iterations: %+v %+v %+v", e, e.Duration, e.Cost)
	}

	// A second run's loop, before its iterations end, is estimated from
	// the first's.
	r.start("outer", StartRequest{})
	v, err = r.o.Runs.GetStepAttempt(r.ctx, "outer", 2, 1, "loop", 0)
	if err != nil {
		t.Fatal(err)
	}
	if e := v.Estimate; e == nil || e.Duration == nil || e.Duration.Sample != 3 || !strings.Contains(e.From, "instance 1's loop of step loop") {
		t.Fatalf("estimate from the earlier run: %+v", e)
	}

	// At the default threshold (1,000 iterations) a loop of three shows none.
	d := newRoleRig(t)
	d.push(rigDef("small", `"parallel"`, rigForeach("loop", 3, 3, rigStep("x", "Titus"))))
	d.start("small", StartRequest{})
	if v, err := d.o.Runs.GetStepAttempt(d.ctx, "small", 1, 1, "loop", 0); err != nil || v.Foreach == nil || v.Estimate != nil {
		t.Fatalf("a small loop: %+v, %v", v, err)
	}
}
