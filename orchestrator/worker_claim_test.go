package orchestrator

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/store"
)

// rigOne starts a one-Titus-step workflow wf and returns its run_step.
func rigOne(t *testing.T, r *roleRig, wf string, extra string) wireWork {
	t.Helper()
	r.push(workDef(wf, "", workStep("t0", "Titus", extra)))
	r.start(wf, StartRequest{})
	msgs := r.disp.take(t)
	if len(msgs) != 1 || msgs[0].Kind != WorkRunStep || msgs[0].StepID != "t0" || msgs[0].StartTime == 0 {
		t.Fatalf("dispatched %+v, want the run_step of t0 with its start", msgs)
	}
	return msgs[0]
}

// TestWorkerSecondDeliveryWaitsForTheLease: a delivery that finds the
// attempt claimed by a live worker does not run it and asks to look again
// when the claim's lease ends (at least a second from now); the router's
// backstop copy finds that out with a read, no claim. Once the lease has
// ended, a delivery runs the step again (the first worker died).
func TestWorkerSecondDeliveryWaitsForTheLease(t *testing.T) {
	r := newRoleRig(t, func(c *Config) { c.ClaimLease = 2 * time.Minute })
	m := rigOne(t, r, "leased", "")
	runner := &workRunner{}
	runners := rigRunners(runner)
	type answer struct {
		redelay time.Duration
		err     error
	}
	var inside []answer
	claims := 0
	runner.run = func(StepWork) (engine.StepFinished, error) {
		if len(runner.ran()) == 1 {
			claims = len(r.log.ops("ClaimAttempt"))
			for _, c := range []struct {
				advance  time.Duration
				backstop bool
			}{{0, false}, {0, true}, {119 * time.Second, false}, {500 * time.Millisecond, true}} {
				r.clock.Advance(c.advance)
				dup := m
				dup.Backstop = c.backstop
				d, err := r.work(dup, runners)
				inside = append(inside, answer{d, err})
			}
		}
		return engine.StepFinished{Outcome: engine.OutcomeSucceeded}, nil
	}
	if _, err := r.work(m, runners); err != nil {
		t.Fatal(err)
	}
	want := []answer{{2 * time.Minute, nil}, {2 * time.Minute, nil}, {time.Second, nil}, {time.Second, nil}}
	if len(inside) != len(want) {
		t.Fatalf("answers %+v", inside)
	}
	for i, a := range inside {
		if a != want[i] {
			t.Errorf("delivery %d while claimed: %+v, want %+v", i+2, a, want[i])
		}
	}
	if got := len(runner.ran()); got != 1 {
		t.Errorf("the step ran %d times", got)
	}
	if got := len(r.log.ops("ClaimAttempt")); got != claims+2 {
		t.Errorf("%d claims tried while claimed, want 2 (the backstop copies only read)", got-claims)
	}
	r.wantRun("leased", 1, "SUCCEEDED t0=SUCCEEDED")
}

// TestWorkerRunsAgainAfterTheLeaseEnds: a worker that died keeps its
// claim until the lease ends; the next delivery then runs the step.
func TestWorkerRunsAgainAfterTheLeaseEnds(t *testing.T) {
	r := newRoleRig(t)
	m := rigOne(t, r, "dead", "")
	ref := store.AttemptRef{WorkflowID: "dead", InstanceID: 1, RunID: 1, StepID: "t0", Attempt: 1}
	if _, err := r.mem.Attempts.ClaimAttempt(r.ctx, ref, "dead-worker", r.clock.Now(), r.clock.Now().Add(DefaultClaimLease), workerStart(m.step(t))); err != nil {
		t.Fatal(err)
	}
	runner := &workRunner{}
	if d, err := r.work(m, rigRunners(runner)); err != nil || d != DefaultClaimLease {
		t.Fatalf("while the dead worker's lease holds: %v, %v", d, err)
	}
	r.clock.Advance(DefaultClaimLease + time.Millisecond)
	if d, err := r.work(m, rigRunners(runner)); err != nil || d != 0 {
		t.Fatalf("after the lease: %v, %v", d, err)
	}
	if got := strings.Join(runner.ran(), ","); got != "t0#1" {
		t.Errorf("ran %s", got)
	}
	r.wantRun("dead", 1, "SUCCEEDED t0=SUCCEEDED")
}

// TestWorkerDropsWorkOfEndedAttempts: a delivery for an attempt that
// ended (succeeded, or stopped before any worker claimed it) or that does
// not exist is dropped without running anything, the backstop copy's
// included.
func TestWorkerDropsWorkOfEndedAttempts(t *testing.T) {
	r := newRoleRig(t)
	done := rigOne(t, r, "done", "")
	runner := &workRunner{}
	if _, err := r.work(done, rigRunners(runner)); err != nil {
		t.Fatal(err)
	}
	stopped := rigOne(t, r, "stopped", "")
	if _, err := r.o.Actions.ActOnInstance(r.ctx, "stopped", 1, 0, "stop"); err != nil {
		t.Fatal(err)
	}
	if a := r.stored("stopped", 1, 1, "t0", 1); a == nil || a.Status != "STOPPED" {
		t.Fatalf("the stopped attempt's item: %+v", a)
	}
	missing := done
	missing.Attempt, missing.StartTime = 7, 0
	before := len(runner.ran())
	for name, m := range map[string]wireWork{"succeeded": done, "stopped": stopped, "no such attempt": missing} {
		for _, backstop := range []bool{false, true} {
			m.Backstop = backstop
			if d, err := r.work(m, rigRunners(runner)); err != nil || d != 0 {
				t.Errorf("%s (backstop %v): %v, %v; want dropped", name, backstop, d, err)
			}
		}
	}
	if got := len(runner.ran()) - before; got != 0 {
		t.Errorf("ran %d steps for dropped work", got)
	}
	if got := rigStatus(r.state("stopped", 1, 1)); got != "STOPPED t0=STOPPED" {
		t.Errorf("the stopped run: %s", got)
	}
}

// TestWorkerBackstopCopyClaimsADeferredStart: the router's copy of a step
// whose committer's message was lost finds no item (its start deferred to
// the claim) and claims and runs it.
func TestWorkerBackstopCopyClaimsADeferredStart(t *testing.T) {
	r := newRoleRig(t)
	m := rigOne(t, r, "backstop", "")
	if r.stored("backstop", 1, 1, "t0", 1) != nil {
		t.Fatal("the start was not deferred to the claim")
	}
	m.Backstop = true
	runner := &workRunner{}
	if _, err := r.work(m, rigRunners(runner)); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(runner.ran(), ","); got != "t0#1" {
		t.Errorf("ran %q", got)
	}
	r.wantRun("backstop", 1, "SUCCEEDED t0=SUCCEEDED")
}

// TestWorkerAppliesTheOutcomeADeadWorkerRecorded: a worker that recorded
// its step's outcome and died leaves it on the attempt; the next delivery
// applies it without running the step again — unless it cannot be read as
// this attempt's outcome, when the step runs.
func TestWorkerAppliesTheOutcomeADeadWorkerRecorded(t *testing.T) {
	for _, c := range []struct {
		name     string
		recorded engine.StepFinished
		runs     int
		want     string
		output   string
	}{
		{"its outcome", engine.StepFinished{StepID: "t0", Attempt: 1, Outcome: engine.OutcomeSucceeded, Outputs: map[string]any{"out": "recorded"}},
			0, "SUCCEEDED t0=SUCCEEDED", "recorded"},
		{"a failure", engine.StepFinished{StepID: "t0", Attempt: 1, Outcome: engine.OutcomeFatalError, Message: "boom"},
			0, "FAILED t0=FATALLY_FAILED", ""},
		{"another attempt's", engine.StepFinished{StepID: "t0", Attempt: 2, Outcome: engine.OutcomeFatalError},
			1, "SUCCEEDED t0=SUCCEEDED", "ran"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRoleRig(t)
			m := rigOne(t, r, "recorded", "")
			ref := store.AttemptRef{WorkflowID: "recorded", InstanceID: 1, RunID: 1, StepID: "t0", Attempt: 1}
			now := r.clock.Now()
			if _, err := r.mem.Attempts.ClaimAttempt(r.ctx, ref, "dead", now, now.Add(time.Second), workerStart(m.step(t))); err != nil {
				t.Fatal(err)
			}
			if err := r.mem.Attempts.RecordOutcome(r.ctx, ref, "dead", mustJSON(c.recorded)); err != nil {
				t.Fatal(err)
			}
			r.clock.Advance(2 * time.Second)
			runner := &workRunner{run: func(StepWork) (engine.StepFinished, error) {
				return engine.StepFinished{Outcome: engine.OutcomeSucceeded, Outputs: map[string]any{"out": "ran"}}, nil
			}}
			if _, err := r.work(m, rigRunners(runner)); err != nil {
				t.Fatal(err)
			}
			if got := len(runner.ran()); got != c.runs {
				t.Errorf("ran %d times, want %d", got, c.runs)
			}
			if got := rigStatus(r.state("recorded", 1, 1)); got != c.want {
				t.Errorf("run %s, want %s", got, c.want)
			}
			v, err := r.o.Runs.GetStepAttempt(r.ctx, "recorded", 1, 1, "t0", 1)
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := v.Outputs["out"].(string); got != c.output {
				t.Errorf("output %q, want %q", got, c.output)
			}
		})
	}
}

// TestWorkerStepOutcomes: what the runner answers becomes the attempt's
// outcome: a success with its outputs; an error is a platform error and a
// runner's user error a user error, each retried per its own limit; no
// runner for the type, or outputs past the limit, a fatal error (no retry)
// with a message saying so.
func TestWorkerStepOutcomes(t *testing.T) {
	big := strings.Repeat("x", 400_000)
	for _, c := range []struct {
		name    string
		runners func(*workRunner) map[model.StepType]StepRunner
		run     func(StepWork) (engine.StepFinished, error)
		status  model.StepStatus
		message string
	}{
		{"success", nil, func(StepWork) (engine.StepFinished, error) {
			return engine.StepFinished{Outcome: engine.OutcomeSucceeded, Outputs: map[string]any{"n": int64(3)}}, nil
		}, model.StepSucceeded, ""},
		{"runner error", nil, func(StepWork) (engine.StepFinished, error) {
			return engine.StepFinished{}, errors.New("connection refused")
		}, model.StepPlatformFailed, "connection refused; retrying in"},
		{"user error", nil, func(StepWork) (engine.StepFinished, error) {
			return engine.StepFinished{Outcome: engine.OutcomeUserError, Message: "bad input"}, nil
		}, model.StepUserFailed, "bad input; retrying in"},
		{"no runner", func(*workRunner) map[model.StepType]StepRunner { return map[model.StepType]StepRunner{} }, nil,
			model.StepFatallyFailed, "step type Titus is not supported by this runtime"},
		{"outputs too large", nil, func(StepWork) (engine.StepFinished, error) {
			return engine.StepFinished{Outcome: engine.OutcomeSucceeded, Outputs: map[string]any{"big": big}}, nil
		}, model.StepFatallyFailed, "output"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRoleRig(t)
			m := rigOne(t, r, "outcome", `"retry_policy": {"error_retry_limit": 1, "platform_retry_limit": 1}`)
			runner := &workRunner{run: c.run}
			runners := rigRunners(runner)
			if c.runners != nil {
				runners = c.runners(runner)
			}
			if _, err := r.work(m, runners); err != nil {
				t.Fatal(err)
			}
			r.pump(runners)
			ss := r.step("outcome", 1, 1, "t0")
			if ss.Status != c.status {
				t.Fatalf("status %s, want %s", ss.Status, c.status)
			}
			v, err := r.o.Runs.GetStepAttempt(r.ctx, "outcome", 1, 1, "t0", 1)
			if err != nil {
				t.Fatal(err)
			}
			last := v.Timeline[len(v.Timeline)-1]
			if c.message != "" && !strings.Contains(last.Message, c.message) {
				t.Errorf("last timeline entry %+v, want it to say %q", last, c.message)
			}
			if c.status == model.StepSucceeded && v.Outputs["n"] == nil {
				t.Errorf("outputs %v", v.Outputs)
			}
			if c.status == model.StepSucceeded && ss.EndTime != r.clock.Now().UnixMilli() {
				t.Errorf("ended at %d, want the worker's clock %d", ss.EndTime, r.clock.Now().UnixMilli())
			}
		})
	}
}

// TestWorkerLostClaim: a worker whose lease ran out while its step ran
// loses the claim to the next delivery, which runs the step too; the
// first worker's end then cannot be written on the item and its outcome
// goes to the run's inbox, where the decider finds the attempt already
// ended and changes nothing.
func TestWorkerLostClaim(t *testing.T) {
	r := newRoleRig(t)
	m := rigOne(t, r, "lost", "")
	runner := &workRunner{}
	runners := rigRunners(runner)
	runner.run = func(StepWork) (engine.StepFinished, error) {
		if len(runner.ran()) == 1 {
			r.clock.Advance(DefaultClaimLease + time.Second)
			if _, err := r.work(m, runners); err != nil {
				t.Errorf("the second worker: %v", err)
			}
			return engine.StepFinished{Outcome: engine.OutcomeSucceeded, Outputs: map[string]any{"who": "first"}}, nil
		}
		return engine.StepFinished{Outcome: engine.OutcomeSucceeded, Outputs: map[string]any{"who": "second"}}, nil
	}
	if _, err := r.work(m, runners); err != nil {
		t.Fatal(err)
	}
	if got := len(runner.ran()); got != 2 {
		t.Fatalf("ran %d times, want 2", got)
	}
	var lost int
	for _, c := range r.log.ops("FinishAttempt") {
		if errors.Is(c.err, store.ErrClaimLost) {
			lost++
		}
	}
	if lost != 1 {
		t.Errorf("%d ends refused for a lost claim, want 1", lost)
	}
	if ids := r.inbox("lost", 1, 1); len(ids) != 1 || ids[0] != outcomeEventID("t0", 1) {
		t.Fatalf("inbox %v, want the first worker's outcome", ids)
	}
	st := r.decide("lost", 1, 1)
	if got := rigStatus(st); got != "SUCCEEDED t0=SUCCEEDED" {
		t.Errorf("%s", got)
	}
	if ids := r.inbox("lost", 1, 1); len(ids) != 0 {
		t.Errorf("inbox %v after the decider", ids)
	}
	v, err := r.o.Runs.GetStepAttempt(r.ctx, "lost", 1, 1, "t0", 1)
	if err != nil || v.Outputs["who"] != "second" {
		t.Errorf("outputs %v, %v: want the second worker's, which ended the attempt", v.Outputs, err)
	}
}

// TestWorkerLateRunStepOfAPurgedWorkflowRunsNothing: SQS may deliver a
// run_step again late; once its workflow is deleted and purged, the
// redelivery must neither run the step again nor leave an item behind.
// The claim of a message that carries its start (a deferred start) creates
// a missing attempt item, so it runs the step of a run that no longer
// exists and writes an orphan SUCCEEDED item under the purged workflow,
// which no purge round will ever delete.
func TestWorkerLateRunStepOfAPurgedWorkflowRunsNothing(t *testing.T) {
	t.Skip("bug: claimAndRun's claim creates the deferred start of an attempt whose workflow was deleted and purged; a late redelivery runs the step again and leaves an orphan attempt item")
	r := newRoleRig(t)
	m := rigOne(t, r, "gone", "")
	runner := &workRunner{}
	if _, err := r.work(m, rigRunners(runner)); err != nil {
		t.Fatal(err)
	}
	if _, err := r.o.Definitions.DeleteWorkflow(r.ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.work(wireWork{Kind: WorkPurge, WorkflowID: "gone", Round: 1}, nil); err != nil {
		t.Fatal(err)
	}
	if r.stored("gone", 1, 1, "t0", 1) != nil {
		t.Fatal("the purge left the attempt")
	}
	if _, err := r.work(m, rigRunners(runner)); err != nil {
		t.Fatal(err)
	}
	if got := len(runner.ran()); got != 1 {
		t.Errorf("the step of a purged workflow ran again: %d runs", got)
	}
	if a := r.stored("gone", 1, 1, "t0", 1); a != nil {
		t.Errorf("an orphan item of a purged workflow: %s", a.Status)
	}
}
