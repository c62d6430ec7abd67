package orchestrator

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/store"
)

// rigFan is a workflow of n root Titus steps r0..r{n-1}, all joined by a
// last Titus step z.
func rigFan(id string, n int) string {
	steps := make([]string, 0, n+1)
	for i := range n {
		steps = append(steps, workStep(fmt.Sprintf("r%d", i), "Titus", "", "z"))
	}
	steps = append(steps, workStep("z", "Titus", ""))
	return workDef(id, "", steps...)
}

// TestWorkerRunsAChainInline: one work message runs a chain of steps to
// its end, within maxInlineSteps: each step's outcome is applied by the
// worker in one commit that starts the next, which it runs itself — its
// start left to it and written once, with its end — and nothing goes
// through the work queue or the inbox.
func TestWorkerRunsAChainInline(t *testing.T) {
	const n = 40
	if n >= maxInlineSteps {
		t.Fatal("the chain must fit maxInlineSteps")
	}
	r := newRoleRig(t)
	r.push(rigChain("inline", n))
	r.start("inline", StartRequest{})
	msgs := r.disp.take(t)
	if len(msgs) != 1 {
		t.Fatalf("the start dispatched %d messages", len(msgs))
	}
	r.log.reset()
	runner := &workRunner{}
	if _, err := r.work(msgs[0], rigRunners(runner)); err != nil {
		t.Fatal(err)
	}
	var want []string
	for i := range n {
		want = append(want, fmt.Sprintf("t%d#1", i))
	}
	if got := runner.ran(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("ran %v", got)
	}
	st := r.state("inline", 1, 1)
	if st.Status != model.WorkflowSucceeded {
		t.Fatalf("run %s", rigStatus(st))
	}
	if more := r.disp.take(t); len(more) != 0 {
		t.Errorf("dispatched %d messages during an inline chain", len(more))
	}
	if calls := r.log.ops("PutEvent"); len(calls) != 0 {
		t.Errorf("%d inbox events during an inline chain", len(calls))
	}
	wantTrace := []string{"ClaimAttempt t0#1", "FinishAttempt t0#1"}
	for i := 1; i < n; i++ {
		wantTrace = append(wantTrace, fmt.Sprintf("FinishDeferredAttempt t%d#1", i))
	}
	r.log.wantTrace(t, wantTrace, "ClaimAttempt", "FinishAttempt", "FinishDeferredAttempt", "RecordOutcome", "WakeEnd")
	for i := range n {
		a := r.stored("inline", 1, 1, fmt.Sprintf("t%d", i), 1)
		if a == nil || a.Status != "SUCCEEDED" || len(a.Timeline) != 7 {
			t.Fatalf("attempt t%d: %+v", i, a)
		}
	}
	if ids := r.inbox("inline", 1, 1); len(ids) != 0 {
		t.Errorf("inbox %v", ids)
	}
}

// TestWorkerCrowdHandsResultsToTheDecider: a step started with crowdInline
// others or more does not try to continue the run inline (no run read): a
// success's end goes on its attempt with a wake, a failure to the inbox;
// the decider applies them together. A smaller fan-out tries, finds the
// run contended and hands over just the same.
func TestWorkerCrowdHandsResultsToTheDecider(t *testing.T) {
	for _, c := range []struct {
		n       int
		inlines bool
	}{{crowdInline + 1, false}, {crowdInline, true}} {
		t.Run(fmt.Sprint(c.n, " roots"), func(t *testing.T) {
			r := newRoleRig(t)
			r.push(rigFan("crowd", c.n))
			r.start("crowd", StartRequest{})
			// More than maxDirect starts: the commit leaves them all to the
			// stream router (limitDirect), nothing is dispatched directly.
			if direct := r.disp.take(t); len(direct) != 0 {
				t.Fatalf("dispatched %d directly", len(direct))
			}
			msgs := r.runs.sent(t, WorkRunStep)
			if len(msgs) != c.n {
				t.Fatalf("the start sent %d", len(msgs))
			}
			for _, m := range msgs {
				if m.Crowd != c.n-1 {
					t.Fatalf("%s: crowd %d, want %d", m.StepID, m.Crowd, c.n-1)
				}
			}
			runner := &workRunner{run: func(m StepWork) (engine.StepFinished, error) {
				if m.StepID == "r0" {
					return engine.StepFinished{Outcome: engine.OutcomeUserError, Message: "no"}, nil
				}
				return engine.StepFinished{Outcome: engine.OutcomeSucceeded}, nil
			}}
			r.log.reset()
			for _, m := range msgs {
				if _, err := r.work(m, rigRunners(runner)); err != nil {
					t.Fatal(err)
				}
			}
			reads := len(r.log.ops("LoadQuietRun"))
			if c.inlines && reads == 0 || !c.inlines && reads != 0 {
				t.Errorf("%d run reads by the workers", reads)
			}
			// The ends go with their wakes for the stream: a crowd's (the
			// router sends one wake for a poll's worth), and a join's
			// inputs' (not apart: z waits for them all).
			var wakes []store.FinishedStep
			for _, call := range r.log.ops("FinishAttempt") {
				if call.err != nil || !call.wake {
					t.Fatalf("end %+v", call)
				}
				wakes = append(wakes, store.FinishedStep{StepID: call.ref.StepID, Attempt: call.ref.Attempt})
			}
			if len(wakes) != c.n-1 {
				t.Errorf("%d ends with a wake, want %d", len(wakes), c.n-1)
			}
			if direct, streamed := r.handed(t, 0); len(direct) != 0 || len(streamed) != c.n-1 {
				t.Errorf("ends handed directly %v, by the stream %v: want %d by the stream", direct, streamed, c.n-1)
			}
			if ids := r.inbox("crowd", 1, 1); len(ids) != 1 || ids[0] != outcomeEventID("r0", 1) {
				t.Errorf("inbox %v, want the failure", ids)
			}
			if st := r.state("crowd", 1, 1); st.Step("r1").Status != model.StepRunning {
				t.Errorf("a worker applied an outcome: %s", rigStatus(st))
			}
			// A user error is retried (DefaultErrorRetryLimit): r0 waits
			// for its retry, and z for r0.
			st := r.decide("crowd", 1, 1, wakes...)
			for _, s := range st.Steps {
				want := model.StepSucceeded
				switch s.StepID {
				case "r0":
					want = model.StepUserFailed
					if s.RetryAt == 0 {
						t.Errorf("r0 has no retry pending")
					}
				case "z":
					want = model.StepNotCreated
				}
				if s.Status != want {
					t.Errorf("%s is %s, want %s", s.StepID, s.Status, want)
				}
			}
			if st.Status != model.WorkflowInProgress {
				t.Errorf("run %s", st.Status)
			}
			if ids := r.inbox("crowd", 1, 1); len(ids) != 0 {
				t.Errorf("inbox after the decider %v", ids)
			}
		})
	}
}

// TestWorkerContendedRunHandsOff: a worker whose run has another step in
// flight, or events waiting in its inbox, does not decide: it writes its
// success's end on the attempt (a failure goes to the inbox) and leaves
// the run to the decider, which then starts what follows. The end of a
// join's input that is not the last goes with its wake, for the stream
// (the last input's worker decides the join, see
// TestWorkerLastOfAJoinDecidesIt), and so does one found contended.
func TestWorkerContendedRunHandsOff(t *testing.T) {
	r := newRoleRig(t)
	r.push(rigFan("busy", 2))
	r.start("busy", StartRequest{})
	msgs := r.disp.take(t)
	for _, m := range msgs {
		if m.Apart {
			t.Errorf("%s, an input of a join in flight beside its partner, marked apart", m.StepID)
		}
	}
	runner := &workRunner{}
	r.log.reset()
	if _, err := r.work(msgs[0], rigRunners(runner)); err != nil {
		t.Fatal(err)
	}
	if !r.log.wantTrace(t, []string{"FinishAttempt r0#1 wake"}, "FinishAttempt", "FinishDeferredAttempt", "RecordOutcome", "WakeEnd") {
		t.FailNow()
	}
	if direct, streamed := r.handed(t, 0); fmt.Sprint(direct, streamed) != "[] [r0#1]" {
		t.Fatalf("ends handed directly %v, by the stream %v; want r0#1 by the stream", direct, streamed)
	}
	if st := r.state("busy", 1, 1); st.Step("r0").Status != model.StepRunning {
		t.Fatalf("applied inline though contended: %s", rigStatus(st))
	}
	if a := r.stored("busy", 1, 1, "r0", 1); a == nil || a.Status != "SUCCEEDED" {
		t.Fatalf("r0's item %+v", a)
	}

	// The other step's worker finds r0's end not applied yet, and an event
	// waiting besides: contended too.
	if err := r.mem.Runs.PutEvent(r.ctx, "busy", 1, 1, store.Event{ID: outputDataEventID("x"),
		Body: mustJSON(engine.OutputData{StepID: "r1", Attempt: 1, Outputs: map[string]any{"k": "v"}})}); err != nil {
		t.Fatal(err)
	}
	r.log.reset()
	if _, err := r.work(msgs[1], rigRunners(runner)); err != nil {
		t.Fatal(err)
	}
	if !r.log.wantTrace(t, []string{"LoadQuietRun #0", "FinishAttempt r1#1 wake"}, "LoadQuietRun", "FinishAttempt", "WakeEnd") {
		t.FailNow()
	}
	// The quiet read (its wake mark is "quiet") found the run busy.
	if reads := r.log.ops("LoadQuietRun"); len(reads) != 1 || reads[0].wake {
		t.Fatalf("quiet reads %+v, want one finding the run busy", reads)
	}
	r.decide("busy", 1, 1, store.FinishedStep{StepID: "r0", Attempt: 1}, store.FinishedStep{StepID: "r1", Attempt: 1})
	next := r.disp.take(t)
	if len(next) != 1 || next[0].StepID != "z" {
		t.Fatalf("after the decider: dispatched %+v, want z", next)
	}
	r.work(next[0], rigRunners(runner))
	r.wantRun("busy", 1, "SUCCEEDED r0=SUCCEEDED r1=SUCCEEDED z=SUCCEEDED")
}

// TestWorkerLastOfAJoinDecidesIt: the worker of a join's last step to
// end finds the others' ends on their attempts and applies them all with
// its own, so the join's successor starts (and runs, in that worker)
// without a trip through the stream; the wakes of those ends then find
// nothing to do. The first to end hands its end to the decider, with its
// wake for the stream: the join's last input decides it sooner. A worker
// that loses the race for the run's version leaves its end, already
// woken, to the decider: no second write (the winner, almost always the
// join's other last input, decided it; a direct wake would only make the
// decider find nothing to do).
func TestWorkerLastOfAJoinDecidesIt(t *testing.T) {
	for _, lose := range []bool{false, true} {
		t.Run(fmt.Sprint("loses the race: ", lose), func(t *testing.T) {
			r := newRoleRig(t)
			r.push(rigFan("join", 3))
			r.start("join", StartRequest{})
			msgs := r.disp.take(t)
			if len(msgs) != 3 {
				t.Fatalf("dispatched %d", len(msgs))
			}
			runner := &workRunner{}
			for _, m := range msgs[:2] {
				if _, err := r.work(m, rigRunners(runner)); err != nil {
					t.Fatal(err)
				}
			}
			if st := r.state("join", 1, 1); st.Step("r0").Status != model.StepRunning || st.Step("r1").Status != model.StepRunning {
				t.Fatalf("applied before the join's last end: %s", rigStatus(st))
			}
			if lose {
				r.runs.setCommit(func(store.Commit) error { return store.ErrConflict })
			}
			r.log.reset()
			commits := r.runs.commits
			if _, err := r.work(msgs[2], rigRunners(runner)); err != nil {
				t.Fatal(err)
			}
			r.runs.setCommit(nil)
			ends := []store.FinishedStep{{StepID: "r0", Attempt: 1}, {StepID: "r1", Attempt: 1}, {StepID: "r2", Attempt: 1}}
			direct, streamed := r.handed(t, 0)
			if lose {
				r.log.wantTrace(t, []string{"FinishAttempt r2#1 wake"}, "FinishAttempt", "FinishDeferredAttempt", "RecordOutcome", "WakeEnd")
				if fmt.Sprint(direct, streamed) != "[] [r2#1]" {
					t.Errorf("ends handed directly %v, by the stream %v", direct, streamed)
				}
				r.wantRun("join", 1, "IN_PROGRESS r0=RUNNING r1=RUNNING r2=RUNNING z=NOT_CREATED")
				r.decide("join", 1, 1, ends...)
				next := r.disp.take(t)
				if len(next) != 1 || next[0].StepID != "z" {
					t.Fatalf("after the decider: dispatched %+v, want z", next)
				}
				r.work(next[0], rigRunners(runner))
				r.wantRun("join", 1, "SUCCEEDED r0=SUCCEEDED r1=SUCCEEDED r2=SUCCEEDED z=SUCCEEDED")
				return
			}
			r.log.wantTrace(t, []string{"FinishAttempt r2#1 wake", "FinishDeferredAttempt z#1"},
				"FinishAttempt", "FinishDeferredAttempt", "RecordOutcome", "WakeEnd")
			// r2's worker decided the join: nothing woken directly.
			if fmt.Sprint(direct, streamed) != "[] [r2#1]" {
				t.Errorf("ends handed directly %v, by the stream %v", direct, streamed)
			}
			r.wantRun("join", 1, "SUCCEEDED r0=SUCCEEDED r1=SUCCEEDED r2=SUCCEEDED z=SUCCEEDED")
			if next := r.disp.take(t); len(next) != 0 {
				t.Errorf("dispatched %+v: the join's worker runs z itself", next)
			}
			if ran := runner.ran(); fmt.Sprint(ran[len(ran)-1]) != "z#1" {
				t.Errorf("ran %v", ran)
			}
			// The three ends' wakes reach the decider: nothing to apply.
			after := r.runs.commits
			r.decide("join", 1, 1, ends...)
			if r.runs.commits != after || after-commits != 2 {
				t.Errorf("commits: %d by the worker (its join and z's end), %d by the decider's wakes", after-commits, r.runs.commits-after)
			}
			if ids := r.inbox("join", 1, 1); len(ids) != 0 {
				t.Errorf("inbox %v", ids)
			}
		})
	}
}

// TestWorkerIndependentBranchesGoToTheDecider: a step whose successor
// waits for no step in flight (one of two independent chains of a run) is
// not decided by its worker while the other chain's step is in flight:
// its end goes to the decider, its wake sent to the decision queue at once
// rather than carried by the stream (deciding each branch inline cost
// conflicts, see join).
func TestWorkerIndependentBranchesGoToTheDecider(t *testing.T) {
	r := newRoleRig(t)
	r.push(workDef("branches", "", workStep("a1", "Titus", "", "a2"), workStep("a2", "Titus", ""),
		workStep("b1", "Titus", "", "b2"), workStep("b2", "Titus", "")))
	r.start("branches", StartRequest{})
	msgs := r.disp.take(t)
	if len(msgs) != 2 {
		t.Fatalf("dispatched %d", len(msgs))
	}
	// Each root leaves the other branch in flight, which its successor
	// does not wait for: its worker hands its end over without reading
	// the run to find it busy.
	for _, m := range msgs {
		if !m.Apart {
			t.Errorf("%s's message not marked apart", m.StepID)
		}
	}
	r.log.reset()
	if _, err := r.work(msgs[0], rigRunners(&workRunner{})); err != nil {
		t.Fatal(err)
	}
	if reads := r.log.ops("LoadQuietRun"); len(reads) != 0 {
		t.Errorf("%d run reads by the worker of a branch", len(reads))
	}
	first := msgs[0].StepID
	r.log.wantTrace(t, []string{"FinishAttempt " + first + "#1"}, "FinishAttempt", "FinishDeferredAttempt", "RecordOutcome", "WakeEnd")
	if direct, streamed := r.handed(t, 0); fmt.Sprint(direct, streamed) != fmt.Sprintf("[%s#1] []", first) {
		t.Errorf("ends handed directly %v, by the stream %v; want %s#1 directly", direct, streamed, first)
	}
	if st := r.state("branches", 1, 1); st.Step(first).Status != model.StepRunning {
		t.Errorf("decided inline beside the other branch: %s", rigStatus(st))
	}
	if next := r.disp.take(t); len(next) != 0 {
		t.Errorf("dispatched %+v", next)
	}
	// A message without the mark (a step whose commit left nothing else
	// in flight, another branch started since; a message from before the
	// mark): its worker reads the run, finds the other branch apart from
	// it, and wakes the decider directly all the same.
	second := msgs[1]
	second.Apart = false
	r.log.reset()
	if _, err := r.work(second, rigRunners(&workRunner{})); err != nil {
		t.Fatal(err)
	}
	if reads := r.log.ops("LoadQuietRun"); len(reads) != 1 {
		t.Errorf("%d run reads by the worker of an unmarked branch, want 1", len(reads))
	}
	if direct, streamed := r.handed(t, 0); fmt.Sprint(direct, streamed) != fmt.Sprintf("[%s#1] []", second.StepID) {
		t.Errorf("ends handed directly %v, by the stream %v; want %s#1 directly", direct, streamed, second.StepID)
	}
}

// TestWorkerBranchesItRunsAreWokenDirectly: the branches a worker's
// inline round started and runs side by side (a fork into two chains)
// each end while the other is in flight. Neither end has a partner: each
// is recorded beside the run's read without a wake and, the run being
// busy, woken directly (no write for the stream's sake); the decider then
// goes on with both chains.
func TestWorkerBranchesItRunsAreWokenDirectly(t *testing.T) {
	// c returns once b's end was handed to the decider: b ends with c
	// in flight. c then ends with b in flight, not yet applied.
	bHanded := make(chan struct{})
	disp := &handedDispatch{rigDispatch: &rigDispatch{}, step: "b", handed: bHanded}
	r := newRoleRig(t, func(c *Config) { c.Dispatcher = disp })
	r.disp = disp.rigDispatch
	r.push(workDef("fork", "", workStep("a", "Titus", "", "b", "c"), workStep("b", "Titus", "", "b2"),
		workStep("c", "Titus", "", "c2"), workStep("b2", "Titus", ""), workStep("c2", "Titus", "")))
	r.start("fork", StartRequest{})
	runner := &workRunner{run: func(m StepWork) (engine.StepFinished, error) {
		if m.StepID == "c" {
			select {
			case <-bHanded:
			case <-time.After(10 * time.Second): // a deadline, not a pace
				return engine.StepFinished{}, fmt.Errorf("b's end was never handed over")
			}
		}
		return engine.StepFinished{Outcome: engine.OutcomeSucceeded}, nil
	}}
	r.log.reset()
	if _, err := r.work(r.disp.take(t)[0], rigRunners(runner)); err != nil {
		t.Fatal(err)
	}
	ends := r.log.trace("FinishAttempt", "FinishDeferredAttempt", "RecordOutcome", "WakeEnd")
	slices.Sort(ends)
	if fmt.Sprint(ends) != "[FinishAttempt a#1 FinishDeferredAttempt b#1 FinishDeferredAttempt c#1]" {
		t.Errorf("writes %v: want b's and c's ends, each without a wake", ends)
	}
	if direct, streamed := r.handed(t, 0); fmt.Sprint(direct, streamed) != "[b#1 c#1] []" {
		t.Fatalf("ends handed directly %v, by the stream %v; want b#1 and c#1 directly", direct, streamed)
	}
	r.wantRun("fork", 1, "IN_PROGRESS a=SUCCEEDED b2=NOT_CREATED b=RUNNING c2=NOT_CREATED c=RUNNING")
	r.decide("fork", 1, 1, store.FinishedStep{StepID: "b", Attempt: 1}, store.FinishedStep{StepID: "c", Attempt: 1})
	r.pump(rigRunners(runner))
	r.wantRun("fork", 1, "SUCCEEDED a=SUCCEEDED b2=SUCCEEDED b=SUCCEEDED c2=SUCCEEDED c=SUCCEEDED")
}

// handedDispatch is a rigDispatch that closes handed once a decision-queue
// wake naming step was sent.
type handedDispatch struct {
	*rigDispatch
	step   string
	handed chan struct{}
	once   sync.Once
}

func (d *handedDispatch) Dispatch(ctx context.Context, msgs []store.Message) error {
	err := d.rigDispatch.Dispatch(ctx, msgs)
	for _, m := range msgs {
		if err == nil && m.Queue == store.QueueDecision && strings.Contains(m.Body, `"step_id":"`+d.step+`"`) {
			d.once.Do(func() { close(d.handed) })
		}
	}
	return err
}

// TestWorkerInlineCommitFailure: when the inline round's commit fails
// after the worker recorded the step's end on its attempt (without a
// wake), the worker sends its wake to the decision queue, or, when that
// fails too, adds it to the item (WakeEnd), so that the decider applies
// it; a failure's recorded outcome instead goes to the inbox; either way
// the run goes on from the decider.
func TestWorkerInlineCommitFailure(t *testing.T) {
	for _, c := range []struct {
		name, want string
		outcome    engine.Outcome
		commit     error
		writes     []string
		inbox      bool
		queueDown  bool
		handed     string // directly, by the stream
	}{
		{"success, conflict", "IN_PROGRESS t0=SUCCEEDED t1=RUNNING", engine.OutcomeSucceeded, store.ErrConflict,
			[]string{"FinishAttempt t0#1"}, false, false, "[t0#1] []"},
		{"success, store down", "IN_PROGRESS t0=SUCCEEDED t1=RUNNING", engine.OutcomeSucceeded, errRigThrottled,
			[]string{"FinishAttempt t0#1"}, false, false, "[t0#1] []"},
		{"success, store and queue down", "IN_PROGRESS t0=SUCCEEDED t1=RUNNING", engine.OutcomeSucceeded, errRigThrottled,
			[]string{"FinishAttempt t0#1", "WakeEnd t0#1"}, false, true, "[] [t0#1]"},
		{"failure, conflict", "FAILED t0=FATALLY_FAILED t1=UNSATISFIED", engine.OutcomeFatalError, store.ErrConflict,
			[]string{"RecordOutcome t0#1"}, true, false, "[] []"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRoleRig(t)
			r.push(rigChain("fails", 2))
			r.start("fails", StartRequest{})
			m := r.disp.take(t)[0]
			r.runs.setCommit(func(store.Commit) error { return c.commit })
			r.log.reset()
			runner := &workRunner{run: func(StepWork) (engine.StepFinished, error) {
				return engine.StepFinished{Outcome: c.outcome, Message: "m"}, nil
			}}
			if c.queueDown {
				r.disp.fail = errRigThrottled
			}
			if _, err := r.work(m, rigRunners(runner)); err != nil {
				t.Fatalf("HandleWork: %v", err)
			}
			r.runs.setCommit(nil)
			r.disp.fail = nil
			r.log.wantTrace(t, c.writes, "FinishAttempt", "RecordOutcome", "WakeEnd")
			if direct, streamed := r.handed(t, 0); fmt.Sprint(direct, streamed) != c.handed {
				t.Errorf("ends handed directly %v, by the stream %v; want %s", direct, streamed, c.handed)
			}
			ids := r.inbox("fails", 1, 1)
			if c.inbox != (len(ids) == 1) {
				t.Errorf("inbox %v", ids)
			}
			if st := r.state("fails", 1, 1); st.Step("t0").Status != model.StepRunning {
				t.Fatalf("a failed commit changed the run: %s", rigStatus(st))
			}
			st := r.decide("fails", 1, 1, store.FinishedStep{StepID: "t0", Attempt: 1})
			if got := rigStatus(st); got != c.want {
				t.Errorf("after the decider: %s, want %s", got, c.want)
			}
		})
	}
}

// TestWorkerDeferredStartRunsUnclaimed: the step an inline commit starts
// is run by its worker unclaimed, its item written once at its end; an
// outcome that is not a success the worker can write is recorded on the
// item the worker then claims; a decision that ended the attempt
// meanwhile makes the worker drop its outcome; a claim the store refuses
// sends the outcome to the inbox.
func TestWorkerDeferredStartRunsUnclaimed(t *testing.T) {
	fail := func(m StepWork) (engine.StepFinished, error) {
		if m.StepID == "t1" {
			return engine.StepFinished{Outcome: engine.OutcomeFatalError, Message: "t1 broke"}, nil
		}
		return engine.StepFinished{Outcome: engine.OutcomeSucceeded}, nil
	}
	t.Run("a failure is claimed then recorded", func(t *testing.T) {
		r := newRoleRig(t)
		r.push(rigChain("claimed", 3))
		r.start("claimed", StartRequest{})
		r.log.reset()
		runner := &workRunner{run: fail}
		if _, err := r.work(r.disp.take(t)[0], rigRunners(runner)); err != nil {
			t.Fatal(err)
		}
		want := []string{"ClaimAttempt t0#1", "FinishAttempt t0#1", "ClaimAttempt t1#1", "RecordOutcome t1#1"}
		r.log.wantTrace(t, want, "ClaimAttempt", "FinishAttempt", "FinishDeferredAttempt", "RecordOutcome")
		r.wantRun("claimed", 1, "FAILED t0=SUCCEEDED t1=FATALLY_FAILED t2=UNSATISFIED")
		if a := r.stored("claimed", 1, 1, "t1", 1); a == nil || a.Status != "FATALLY_FAILED" {
			t.Errorf("t1's item %+v", a)
		}
	})
	t.Run("ended meanwhile", func(t *testing.T) {
		r := newRoleRig(t)
		r.push(rigChain("ended", 3))
		r.start("ended", StartRequest{})
		runner := &workRunner{}
		runner.run = func(m StepWork) (engine.StepFinished, error) {
			if m.StepID == "t1" {
				if _, err := r.o.Actions.ActOnInstance(r.ctx, "ended", 1, 0, "stop"); err != nil {
					t.Errorf("stop: %v", err)
				}
			}
			return fail(m)
		}
		r.log.reset()
		if _, err := r.work(r.disp.take(t)[0], rigRunners(runner)); err != nil {
			t.Fatal(err)
		}
		if got := r.log.trace("RecordOutcome", "FinishDeferredAttempt"); len(got) != 0 {
			t.Errorf("wrote %v for an attempt a decision ended", got)
		}
		if ids := r.inbox("ended", 1, 1); len(ids) != 0 {
			t.Errorf("inbox %v", ids)
		}
		r.wantRun("ended", 1, "STOPPED t0=SUCCEEDED t1=STOPPED t2=NOT_CREATED")
	})
	t.Run("the claim fails", func(t *testing.T) {
		r := newRoleRig(t)
		r.push(rigChain("refused", 3))
		r.start("refused", StartRequest{})
		r.attempts.setFail(func(op string, ref store.AttemptRef) error {
			if op == "ClaimAttempt" && ref.StepID == "t1" {
				return errRigThrottled
			}
			return nil
		})
		if _, err := r.work(r.disp.take(t)[0], rigRunners(&workRunner{run: fail})); err != nil {
			t.Fatal(err)
		}
		r.attempts.setFail(nil)
		if ids := r.inbox("refused", 1, 1); len(ids) != 1 || ids[0] != outcomeEventID("t1", 1) {
			t.Fatalf("inbox %v, want t1's outcome", ids)
		}
		if r.stored("refused", 1, 1, "t1", 1) != nil {
			t.Fatal("t1's item was written")
		}
		if got := rigStatus(r.decide("refused", 1, 1)); got != "FAILED t0=SUCCEEDED t1=FATALLY_FAILED t2=UNSATISFIED" {
			t.Errorf("%s", got)
		}
		if a := r.stored("refused", 1, 1, "t1", 1); a == nil || a.Status != "FATALLY_FAILED" || len(a.Timeline) < 6 {
			t.Errorf("t1's item, start and end, written by the decision: %+v", a)
		}
	})
	t.Run("a success while contended", func(t *testing.T) {
		r := newRoleRig(t)
		r.push(workDef("forked", "", workStep("a", "Titus", "", "b", "c"), workStep("b", "Titus", ""), workStep("c", "Titus", "")))
		r.start("forked", StartRequest{})
		r.log.reset()
		runner := &workRunner{}
		if _, err := r.work(r.disp.take(t)[0], rigRunners(runner)); err != nil {
			t.Fatal(err)
		}
		// a's commit started b and c: the worker ran both itself, side by
		// side and unclaimed. Each found the other in flight and wrote its
		// end with its wake; the one that found the other ended too
		// applied both. Both may (they end in the same millisecond of the
		// rig's clock): the loser then wakes the decider directly, naming
		// both, and the decider finds nothing left to apply.
		ran := runner.ran()
		slices.Sort(ran)
		if fmt.Sprint(ran) != "[a#1 b#1 c#1]" {
			t.Fatalf("ran %v", ran)
		}
		ends := []string{}
		for _, c := range r.log.ops("FinishDeferredAttempt") {
			ends = append(ends, fmt.Sprint(c.ref.StepID, " wake=", c.wake))
		}
		slices.Sort(ends)
		if fmt.Sprint(ends) != "[b wake=true c wake=true]" {
			t.Errorf("deferred ends %v", ends)
		}
		if direct, _ := r.handed(t, 0); len(direct) != 0 && fmt.Sprint(direct) != "[b#1 c#1]" {
			t.Errorf("ends handed directly %v, want none or both", direct)
		}
		if other := r.disp.take(t); len(other) != 0 {
			t.Fatalf("dispatched %+v", other)
		}
		r.wantRun("forked", 1, "SUCCEEDED a=SUCCEEDED b=SUCCEEDED c=SUCCEEDED")
	})
}

// TestWorkerRunsInlineOnlyWhatItMay: the next step runs in the same
// invocation only with StepRunReserve left before its deadline and when a
// runner here executes its type (not hands it over); otherwise its commit
// sends it through the work queue.
func TestWorkerRunsInlineOnlyWhatItMay(t *testing.T) {
	for _, c := range []struct {
		name, second string
		left         time.Duration
		runners      func(*workRunner) map[model.StepType]StepRunner
		inline       bool
	}{
		{"time left", "Titus", 10 * time.Minute, nil, true},
		{"no deadline", "Titus", 0, nil, true},
		{"too little time", "Titus", 30 * time.Second, nil, false},
		{"no runner here", "Notebook", 10 * time.Minute, nil, false},
		{"handed over", "Callback", 10 * time.Minute, func(r *workRunner) map[model.StepType]StepRunner {
			return map[model.StepType]StepRunner{model.StepTitus: r, model.StepCallback: &rigCallback{}}
		}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRoleRig(t, func(cfg *Config) { cfg.StepRunReserve = time.Minute })
			r.push(workDef("reserve", "", workStep("t0", "Titus", "", "t1"), workStep("t1", c.second, "")))
			r.start("reserve", StartRequest{})
			runner := &workRunner{}
			runners := rigRunners(runner)
			if c.runners != nil {
				runners = c.runners(runner)
			}
			if _, err := r.workWithin(c.left, r.disp.take(t)[0], runners); err != nil {
				t.Fatal(err)
			}
			if got := len(runner.ran()) == 2; got != c.inline {
				t.Errorf("ran %v inline", runner.ran())
			}
			// Not run here, t1 goes through the queue.
			queued := r.disp.take(t)
			if c.inline && len(queued) != 0 || !c.inline && (len(queued) != 1 || queued[0].StepID != "t1") {
				t.Errorf("through the queue: %+v", queued)
			}
			if ss := r.step("reserve", 1, 1, "t1"); (ss.Status == model.StepSucceeded) != c.inline {
				t.Errorf("t1 is %s", ss.Status)
			}
		})
	}
}
