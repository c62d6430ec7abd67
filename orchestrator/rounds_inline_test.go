package orchestrator

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/store"
)

// rigRunner is a StepRunner that answers every step with outcome and
// counts its calls by step.
type rigRunner struct {
	mu      sync.Mutex
	calls   map[string]int
	outcome engine.Outcome
}

func (f *rigRunner) RunStep(_ context.Context, m StepWork) (engine.StepFinished, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.calls == nil {
		f.calls = map[string]int{}
	}
	f.calls[m.StepID]++
	return engine.StepFinished{Outcome: f.outcome}, nil
}

func (f *rigRunner) count(step string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[step]
}

// titusRunners runs Titus steps with runner.
func titusRunners(runner *rigRunner) map[model.StepType]StepRunner {
	return map[model.StepType]StepRunner{model.StepTitus: runner}
}

// inlineCase is a worker about to continue a run inline: it claimed step
// a's attempt 1 from its work message and holds its success.
type inlineCase struct {
	r  *roundRig
	wf string
	m  wireWork
	in *inlineRound
}

// claimInline claims m's attempt for token as the worker's claim does and
// returns the inline round of its success; withEnd has the worker write
// the end itself (store.FinishAttempt), else record the outcome.
func (r *roundRig) claimInline(w wireWork, token string, withEnd bool, prev *engine.Instance) *inlineRound {
	r.t.Helper()
	m := w.step(r.t)
	ref := m.Ref()
	now := r.clock.Now()
	if _, err := r.ms.Attempts.ClaimAttempt(r.ctx, ref, token, now, now.Add(time.Minute), workerStart(m)); err != nil {
		r.t.Fatalf("claim %s: %v", ref, err)
	}
	res := succeeded(m.StepID, m.Attempt)
	res.FinishedAt = now.UnixMilli()
	ev := store.Event{ID: outcomeEventID(m.StepID, m.Attempt), Body: mustJSON(res), Covered: true}
	var end *store.AttemptEnd
	if withEnd {
		end = workerEnd(m, res)
	}
	return r.o.Worker.inlineRound(r.ctx, m, titusRunners(&rigRunner{outcome: engine.OutcomeSucceeded}), token, ev, end, nil, prev)
}

// inlineChain starts a three-step Titus chain (a → b → c) and has a worker
// hold a's success.
func inlineChain(t *testing.T, withEnd bool) inlineCase {
	t.Helper()
	r := newRoundRig(t)
	wf := r.push(rigDef("inline", "", rigStep("a", "Titus", "b"), rigStep("b", "Titus", "c"), rigStep("c", "Titus")))
	r.start(wf)
	m := workFor(t, r.work(), "a")
	return inlineCase{r: r, wf: wf, m: m, in: r.claimInline(m, "tok-a", withEnd, nil)}
}

// TestInlineRoundContinuesAnUncontendedRun: a worker's inline round
// applies the outcome it holds (never stored in the inbox), makes it
// durable on the attempt first, and picks the step the decision starts
// that it can run itself: no work message is sent for it, and its start
// is left to the worker (deferred) or claimed on the commit.
func TestInlineRoundContinuesAnUncontendedRun(t *testing.T) {
	for _, withEnd := range []bool{false, true} {
		name := "outcome recorded"
		if withEnd {
			name = "end written by the worker"
		}
		t.Run(name, func(t *testing.T) {
			c := inlineChain(t, withEnd)
			r := c.r
			commits := len(r.runs.committed())
			st, more, err := r.o.Rounds.processOnce(r.ctx, rigWake(c.wf, 1, 1), fullRound(), c.in, nil)
			if err != nil || more {
				t.Fatalf("processOnce = %v, %v", more, err)
			}
			if statuses(st) != "a=SUCCEEDED b=RUNNING c=NOT_CREATED" {
				t.Errorf("after the round: %s", statuses(st))
			}
			if !c.in.recorded {
				t.Error("the outcome was not made durable before the commit")
			}
			a, err := r.ms.Attempts.GetAttempt(r.ctx, c.wf, 1, 1, "a", 1)
			if err != nil {
				t.Fatal(err)
			}
			if withEnd && a.Status != string(model.StepSucceeded) {
				t.Errorf("a's item is %s, want the end the worker wrote", a.Status)
			}
			cs := r.runs.committed()
			if len(cs) != commits+1 {
				t.Fatalf("%d commits, want one", len(cs)-commits)
			}
			commit := cs[len(cs)-1]
			if len(commit.Consumed) != 0 || len(commit.NewEvents) != 0 {
				t.Errorf("consumed %v, new events %v: the outcome never was in the inbox", commit.Consumed, commit.NewEvents)
			}
			if len(c.in.picks) != 1 || c.in.picks[0].cmd.StepID != "b" || c.in.picks[0].cmd.Attempt != 1 {
				t.Fatalf("picked %+v, want b", c.in.picks)
			}
			b := c.in.picks[0]
			if w := rigWorkOf(t, commit.Outbox, WorkRunStep); len(w) != 0 {
				t.Errorf("the commit sends %d run_step messages for the step the worker runs", len(w))
			}
			for _, at := range commit.Attempts {
				if at.StepID == "b" {
					t.Errorf("the commit writes b's start (claim %q): created and started in one instant, it is the worker's to write", at.Claim)
				}
				if at.StepID == "a" && withEnd {
					t.Errorf("the commit rewrites a's end the worker wrote")
				}
			}
			if b.start == nil || b.startTime != r.clock.Now().UnixMilli() {
				t.Errorf("b's start not left to the worker: %+v at %d", b.start, b.startTime)
			}
			if _, err := r.ms.Attempts.GetAttempt(r.ctx, c.wf, 1, 1, "b", 1); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("b's item before the worker writes it: %v", err)
			}
		})
	}
}

// TestInlineRoundGivesWayToOthers: an inline round finds the run contended
// — an event waits in its inbox (the decider is on its way), or another
// step of it is in a worker's hands — and gives up with errContended,
// having committed nothing; the outcome was not recorded (a contended
// run's outcome goes to the decider at once).
func TestInlineRoundGivesWayToOthers(t *testing.T) {
	t.Run("an event waits", func(t *testing.T) {
		c := inlineChain(t, false)
		c.r.putEvent(c.wf, 1, 1, actionEventID("u"), engine.Action{Action: "STOP"})
		commits := c.r.runs.calls()
		_, _, err := c.r.o.Rounds.processOnce(c.r.ctx, rigWake(c.wf, 1, 1), fullRound(), c.in, nil)
		if !errors.Is(err, errContended) {
			t.Fatalf("processOnce = %v, want errContended", err)
		}
		if c.r.runs.calls() != commits || c.in.recorded || len(c.r.pending(c.wf, 1, 1)) != 1 {
			t.Errorf("commits %d, recorded %v, pending %v", c.r.runs.calls()-commits, c.in.recorded, c.r.pending(c.wf, 1, 1))
		}
	})
	t.Run("another step in flight", func(t *testing.T) {
		r, wf := parallelRig(t)
		in := r.claimInline(workFor(t, r.work(), "a"), "tok-a", false, nil)
		commits := r.runs.calls()
		_, _, err := r.o.Rounds.processOnce(r.ctx, rigWake(wf, 1, 1), fullRound(), in, nil)
		if !errors.Is(err, errContended) {
			t.Fatalf("processOnce = %v, want errContended", err)
		}
		if r.runs.calls() != commits || in.recorded {
			t.Errorf("commits %d, recorded %v", r.runs.calls()-commits, in.recorded)
		}
		if others, err := r.o.Rounds.othersAtWork(r.ctx, mustGraph(t, r, wf), r.state(wf, 1, 1), "a"); err != nil || len(others) == 0 {
			t.Errorf("othersAtWork(a) = %v, %v", others, err)
		}
	})
}

// mustGraph returns version 1 of wf's graph.
func mustGraph(t *testing.T, r *roundRig, wf string) *engine.Graph {
	t.Helper()
	g, _, err := r.o.Rounds.graph(r.ctx, wf, 1)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestInlineRoundRecordsBesideTheRead: with the run's state from the
// worker's previous round showing no other step in flight (a chain), the
// outcome is recorded beside the run's read — before it is known to be
// uncontended — so a run found contended after all has it recorded
// (runAndContinue then wakes the decider for it). Without that state it
// is recorded only once the run is found quiet.
func TestInlineRoundRecordsBesideTheRead(t *testing.T) {
	for _, withPrev := range []bool{false, true} {
		c := inlineChain(t, true)
		var prev *engine.Instance
		if withPrev {
			prev = c.r.state(c.wf, 1, 1)
		}
		in := c.r.o.Worker.inlineRound(c.r.ctx, c.m.step(t), titusRunners(&rigRunner{}), "tok-a", c.in.event, workerEnd(c.m.step(t), mustStepFinished(t, c.in.event.Body)), nil, prev)
		c.r.putEvent(c.wf, 1, 1, actionEventID("u"), engine.Action{Action: "STOP"})
		_, _, err := c.r.o.Rounds.processOnce(c.r.ctx, rigWake(c.wf, 1, 1), fullRound(), in, nil)
		if !errors.Is(err, errContended) {
			t.Fatalf("prev %v: processOnce = %v, want errContended", withPrev, err)
		}
		a, _ := c.r.ms.Attempts.GetAttempt(c.r.ctx, c.wf, 1, 1, "a", 1)
		ended := a != nil && a.Status == string(model.StepSucceeded)
		if in.recorded != withPrev || ended != withPrev {
			t.Errorf("prev %v: recorded %v, a's item ended %v; want both %v", withPrev, in.recorded, ended, withPrev)
		}
	}
}

func mustStepFinished(t *testing.T, body []byte) engine.StepFinished {
	t.Helper()
	ev, ok := decodeEvent(t, body).(engine.StepFinished)
	if !ok {
		t.Fatalf("not a step outcome: %s", body)
	}
	return ev
}

// TestInlineRoundNeedsItsRecord: an inline round decides only once the
// outcome is durable; a record that fails (the claim was lost to another
// worker) fails the round with nothing committed.
func TestInlineRoundNeedsItsRecord(t *testing.T) {
	c := inlineChain(t, false)
	c.in.record = func() error {
		return c.r.ms.Attempts.RecordOutcome(c.r.ctx, store.AttemptRef{WorkflowID: c.wf, InstanceID: 1, RunID: 1, StepID: "a", Attempt: 1}, "not-mine", c.in.event.Body)
	}
	commits := c.r.runs.calls()
	_, _, err := c.r.o.Rounds.processOnce(c.r.ctx, rigWake(c.wf, 1, 1), fullRound(), c.in, nil)
	if !errors.Is(err, store.ErrClaimLost) {
		t.Fatalf("processOnce = %v, want the lost claim", err)
	}
	if c.r.runs.calls() != commits || c.in.recorded {
		t.Errorf("%d commits, recorded %v", c.r.runs.calls()-commits, c.in.recorded)
	}
	if st := c.r.state(c.wf, 1, 1); stepStatus(st, "a") != model.StepRunning {
		t.Errorf("a is %s", stepStatus(st, "a"))
	}
}

// TestInlineRoundTooLargeFailsTheRun: an inline round is never retried
// smaller (its source does not fit, round.fit): a commit with an item past the
// size limit fails the run at once, naming the limit.
func TestInlineRoundTooLargeFailsTheRun(t *testing.T) {
	c := inlineChain(t, false)
	tooLarge := &store.ItemTooLargeError{Item: "run state", Bytes: 401_000}
	c.r.runs.failCommit = func(_ int, cm store.Commit) error {
		if cm.Status == string(model.WorkflowFailed) {
			return nil
		}
		return tooLarge
	}
	st, _, err := c.r.o.Rounds.processOnce(c.r.ctx, rigWake(c.wf, 1, 1), fullRound(), c.in, nil)
	if err != nil {
		t.Fatal(err)
	}
	stored := c.r.state(c.wf, 1, 1)
	if st.Status != model.WorkflowFailed || stored.Status != model.WorkflowFailed || !strings.Contains(stored.Message, "401000 bytes") {
		t.Errorf("returned %s, stored %s %q; want FAILED naming the limit", st.Status, stored.Status, stored.Message)
	}
}

// TestWorkerContinuesAChainInline: the worker that runs a chain's first
// step runs the rest in the same invocation, each step's outcome applied
// by its own inline round: one work message, no decider.
func TestWorkerContinuesAChainInline(t *testing.T) {
	r := newRoundRig(t)
	wf := r.push(rigDef("inline", "", rigStep("a", "Titus", "b"), rigStep("b", "Titus", "c"), rigStep("c", "Titus")))
	r.start(wf)
	msgs := r.work()
	if len(msgs) != 1 {
		t.Fatalf("%d work messages after the start", len(msgs))
	}
	runner := &rigRunner{outcome: engine.OutcomeSucceeded}
	if _, err := r.o.Worker.HandleWork(r.ctx, mustJSON(msgs[0]), titusRunners(runner)); err != nil {
		t.Fatal(err)
	}
	st := r.state(wf, 1, 1)
	if st.Status != model.WorkflowSucceeded || statuses(st) != "a=SUCCEEDED b=SUCCEEDED c=SUCCEEDED" {
		t.Errorf("after one work message: %s %s", st.Status, statuses(st))
	}
	for _, s := range []string{"a", "b", "c"} {
		if n := runner.count(s); n != 1 {
			t.Errorf("step %s ran %d times", s, n)
		}
	}
	if more := r.work(); len(more) != 0 {
		t.Errorf("%d more work messages sent", len(more))
	}
	if ids := r.pending(wf, 1, 1); len(ids) != 0 {
		t.Errorf("pending %v", ids)
	}
}
