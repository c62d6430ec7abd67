package orchestrator

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/store"
)

// succeeded is a step attempt's success.
func succeeded(step string, attempt int64) engine.StepFinished {
	return engine.StepFinished{StepID: step, Attempt: attempt, Outcome: engine.OutcomeSucceeded}
}

// parallelRig is a rig with a started run of two parallel Titus steps, a
// and b, both running.
func parallelRig(t *testing.T) (*roundRig, string) {
	t.Helper()
	r := newRoundRig(t)
	wf := r.push(rigDef("par", "", rigStep("a", "Titus"), rigStep("b", "Titus")))
	r.start(wf)
	if st := r.state(wf, 1, 1); statuses(st) != "a=RUNNING b=RUNNING" {
		t.Fatalf("started %s", statuses(st))
	}
	return r, wf
}

// endByWorker has a worker claim step's attempt 1 from its work message and
// write its success as its end (store.FinishAttempt), as a worker that
// found the run contended does; it returns the wake naming it.
func (r *roundRig) endByWorker(w wireWork) store.Wake {
	r.t.Helper()
	m := w.step(r.t)
	ref := m.Ref()
	now := r.clock.Now()
	if _, err := r.ms.Attempts.ClaimAttempt(r.ctx, ref, "tok-"+m.StepID, now, now.Add(time.Minute), workerStart(m)); err != nil {
		r.t.Fatalf("claim %s: %v", ref, err)
	}
	res := succeeded(m.StepID, m.Attempt)
	res.FinishedAt = now.UnixMilli()
	end := workerEnd(m, res)
	if end == nil {
		r.t.Fatalf("no worker end for %+v", m)
	}
	if err := r.ms.Attempts.FinishAttempt(r.ctx, ref, "tok-"+m.StepID, *end, true); err != nil {
		r.t.Fatalf("finish %s: %v", ref, err)
	}
	return store.Wake{WorkflowID: m.WorkflowID, InstanceID: m.InstanceID, RunID: m.RunID,
		Finished: []store.FinishedStep{{StepID: m.StepID, Attempt: m.Attempt}}}
}

// workFor returns the work message of step among msgs.
func workFor(t *testing.T, msgs []wireWork, step string) wireWork {
	t.Helper()
	for _, m := range msgs {
		if m.StepID == step {
			return m
		}
	}
	t.Fatalf("no work message for step %s among %d", step, len(msgs))
	return wireWork{}
}

// TestWakeAppliesEventsInIDOrder: a decider's round applies the run's
// inbox events in id order (eventids.go: a user's action, "a-", before the
// outcomes, "f-", that arrived with it; a workflow-wide action, "w-",
// after them), and the outcomes workers wrote on their attempts before
// every inbox event. The order decides the result: a stop applied first
// leaves the outcome nothing to apply to.
func TestWakeAppliesEventsInIDOrder(t *testing.T) {
	stop := engine.Action{Action: string(model.WorkflowActionStop)}
	for _, tc := range []struct {
		name     string
		stopID   string
		byWorker bool // a's success written on its attempt, not in the inbox
		wantA    model.StepStatus
		consumed string
	}{
		{name: "action before outcome", stopID: actionEventID("u1"), wantA: model.StepStopped, consumed: "[a-u1]"},
		{name: "workflow action after outcome", stopID: workflowActionEventID("u1"), wantA: model.StepSucceeded, consumed: "[w-u1]"},
		{name: "worker's end before the inbox", stopID: actionEventID("u1"), byWorker: true, wantA: model.StepSucceeded, consumed: "[a-u1]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, wf := parallelRig(t)
			w := rigWake(wf, 1, 1)
			if tc.byWorker {
				w = r.endByWorker(workFor(t, r.work(), "a"))
			} else {
				r.putEvent(wf, 1, 1, outcomeEventID("a", 1), succeeded("a", 1))
			}
			r.putEvent(wf, 1, 1, tc.stopID, stop)
			st, err := r.o.Rounds.Process(r.ctx, w)
			if err != nil {
				t.Fatal(err)
			}
			if st.Status != model.WorkflowStopped || stepStatus(st, "a") != tc.wantA || stepStatus(st, "b") != model.StepStopped {
				t.Errorf("after the round: %s %s; want STOPPED with a %s", st.Status, statuses(st), tc.wantA)
			}
			c := r.lastCommit(wf, 1, 1)
			if fmt.Sprint(c.Consumed) != tc.consumed {
				t.Errorf("consumed %v, want %s (an outcome is deleted after the commit)", c.Consumed, tc.consumed)
			}
			if ids := r.pending(wf, 1, 1); len(ids) != 0 {
				t.Errorf("pending after the round: %v", ids)
			}
			if len(r.runs.committed()) != 2 {
				t.Errorf("%d commits, want the start's and one round's", len(r.runs.committed()))
			}
		})
	}
}

// TestWakeDropsEventsThatCannotApply: an event that does not decode, or
// that the engine rejects, is consumed without effect, and the round
// applies the rest; alone, it is consumed by a commit that changes nothing
// else.
func TestWakeDropsEventsThatCannotApply(t *testing.T) {
	for _, tc := range []struct {
		name string
		body []byte
	}{
		{"not JSON", []byte("not json")},
		{"unknown kind", []byte(`{"kind":"bogus"}`)},
		{"no kind", []byte(`{"step_id":"a"}`)},
		{"malformed fields", []byte(`{"kind":"step_finished","step_attempt_id":"one"}`)},
		{"unknown step", mustJSON(succeeded("nope", 1))},
		{"unknown outcome", mustJSON(engine.StepFinished{StepID: "b", Attempt: 1, Outcome: "MAYBE"})},
		{"unknown timer purpose", mustJSON(engine.TimerFired{StepID: "b", Attempt: 1, Purpose: "lunch"})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, wf := parallelRig(t)
			// Sorted before the good outcome: the bad one is met first.
			r.putEvent(wf, 1, 1, "a-bad", tc.body)
			r.putEvent(wf, 1, 1, outcomeEventID("a", 1), succeeded("a", 1))
			st := r.mustProcess(wf, 1, 1)
			if statuses(st) != "a=SUCCEEDED b=RUNNING" {
				t.Errorf("after the round: %s", statuses(st))
			}
			if c := r.lastCommit(wf, 1, 1); !slices.Contains(c.Consumed, "a-bad") {
				t.Errorf("consumed %v, want the bad event", c.Consumed)
			}
			if ids := r.pending(wf, 1, 1); len(ids) != 0 {
				t.Errorf("pending %v", ids)
			}
		})
	}
	t.Run("alone", func(t *testing.T) {
		r, wf := parallelRig(t)
		r.putEvent(wf, 1, 1, "a-bad", []byte(`{"kind":"bogus"}`))
		st := r.mustProcess(wf, 1, 1)
		rec, _, pending := r.load(wf, 1, 1)
		if statuses(st) != "a=RUNNING b=RUNNING" || rec.V != 2 || len(pending) != 0 {
			t.Errorf("%s at v%d, pending %v; want the event consumed and nothing else", statuses(st), rec.V, pending)
		}
	})
}

// TestWakeReadsThatFailCommitNothing: when a read a decision makes fails —
// a signal lookup, a settled step's offloaded params, the run itself, the
// outcomes workers wrote — the round commits nothing and returns the
// error; the events stay pending and the next round, with the read
// working, applies them.
func TestWakeReadsThatFailCommitNothing(t *testing.T) {
	readErr := errors.New("read throttled")
	for _, tc := range []struct {
		name string
		def  string
		// event puts the event to apply; it returns the wake.
		event func(r *roundRig, wf string) store.Wake
		fail  func(r *roundRig, err error)
		want  string
	}{
		{
			name: "signal lookup",
			def: rigDef("sig", "", rigStep("a", "Titus", "g"),
				`{"step":{"id":"g","type":"NoOp","signal_dependencies":[{"name":"unit/ready"}]}}`),
			event: func(r *roundRig, wf string) store.Wake {
				r.putEvent(wf, 1, 1, outcomeEventID("a", 1), succeeded("a", 1))
				return rigWake(wf, 1, 1)
			},
			fail: func(r *roundRig, err error) { r.sigs.failFind = err },
			want: "a=SUCCEEDED g=WAITING_FOR_SIGNALS",
		},
		{
			name: "offloaded params of a settled step",
			def: rigDef("params", "",
				`{"step":{"id":"a","type":"Titus","params":{"v":{"value":41,"type":"LONG"}},"transition":{"successors":{"s":"true"}}}}`,
				rigSleep("s", 5, "c"),
				`{"step":{"id":"c","type":"NoOp","params":{"w":{"expression":"a__v + 1","type":"LONG"}}}}`),
			event: func(r *roundRig, wf string) store.Wake {
				r.finish(wf, 1, 1, "a", 1, engine.OutcomeSucceeded)
				r.putEvent(wf, 1, 1, timerEventID("s", 1, engine.PurposeSleep), engine.TimerFired{StepID: "s", Attempt: 1, Purpose: engine.PurposeSleep})
				return rigWake(wf, 1, 1)
			},
			fail: func(r *roundRig, err error) { r.atts.failGet = err },
			want: "a=SUCCEEDED s=SUCCEEDED c=SUCCEEDED",
		},
		{
			name: "the run",
			def:  rigDef("load", "", rigStep("a", "Titus")),
			event: func(r *roundRig, wf string) store.Wake {
				r.putEvent(wf, 1, 1, outcomeEventID("a", 1), succeeded("a", 1))
				return rigWake(wf, 1, 1)
			},
			fail: func(r *roundRig, err error) {
				r.runs.mu.Lock()
				defer r.runs.mu.Unlock()
				r.runs.failLoad = func(string, int64, int64) error {
					if err == nil {
						return nil
					}
					return err
				}
			},
			want: "a=SUCCEEDED",
		},
		{
			name: "the ends workers wrote",
			def:  rigDef("ends", "", rigStep("a", "Titus")),
			event: func(r *roundRig, wf string) store.Wake {
				return r.endByWorker(workFor(r.t.(*testing.T), r.work(), "a"))
			},
			fail: func(r *roundRig, err error) { r.atts.failFinished = err },
			want: "a=SUCCEEDED",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRoundRig(t)
			wf := r.push(tc.def)
			r.start(wf)
			w := tc.event(r, wf)
			rec, _, pending := r.load(wf, 1, 1)
			commits := len(r.runs.committed())
			tc.fail(r, readErr)
			if _, err := r.o.Rounds.Process(r.ctx, w); !errors.Is(err, readErr) {
				t.Fatalf("Process with the read failing = %v", err)
			}
			if n := len(r.runs.committed()); n != commits {
				t.Errorf("%d commits with the read failing", n-commits)
			}
			again, _, still := r.load(wf, 1, 1)
			if again.V != rec.V || len(still) != len(pending) {
				t.Errorf("v%d → v%d, pending %d → %d; want nothing written", rec.V, again.V, len(pending), len(still))
			}
			tc.fail(r, nil)
			st, err := r.o.Rounds.Process(r.ctx, w)
			if err != nil {
				t.Fatalf("Process with the read working: %v", err)
			}
			if got := statuses(st); got != tc.want {
				t.Errorf("after the round: %s, want %s", got, tc.want)
			}
		})
	}
}

// TestWakeReadOfIterationsThatFailsCommitsNothing: params.getFromForeach
// reads the iterations of a foreach step (PrefetchChildren, one batch
// read); when that read fails, the decision may be wrong, so the round
// must commit nothing and leave the event for the next round, as it does
// for every other failed read. (It did not: the prefetch's error was not
// kept in childBook.err, readFailed did not see it, and the round dropped
// the event as one the engine rejected — here the last iteration's end, so
// the loop never ended.)
func TestWakeReadOfIterationsThatFailsCommitsNothing(t *testing.T) {
	r := newRoundRig(t)
	wf := r.push(rigDef("gather", "",
		rigThen(rigForeach("loop", 1, 1, `{"step":{"id":"x","type":"Titus","params":{"v":{"value":7,"type":"LONG"}}}}`), "all"),
		`{"step":{"id":"all","type":"NoOp","params":{"vs":{"expression":"params.getFromForeach('loop', 'x', 'v')","type":"LONG_ARRAY"}}}}`))
	r.start(wf)
	child := r.state(wf, 1, 1).Step("loop").Loop.WorkflowID
	r.mustProcess(child, 1, 1)
	r.finish(child, 1, 1, "x", 1, engine.OutcomeSucceeded)
	end := childEndedEventID("loop", 1, 0)
	if ids := r.pending(wf, 1, 1); fmt.Sprint(ids) != fmt.Sprint([]string{end}) {
		t.Fatalf("parent's inbox %v, want the iteration's end", ids)
	}
	readErr := errors.New("batch read throttled")
	r.runs.failGetRuns = readErr
	_, err := r.process(wf, 1, 1)
	if ids := r.pending(wf, 1, 1); err == nil || len(ids) != 1 {
		t.Errorf("with the read of the iterations failing: Process = %v, pending %v; want the error and the end kept", err, ids)
	}
	r.runs.failGetRuns = nil
	st := r.mustProcess(wf, 1, 1)
	if st.Status != model.WorkflowSucceeded || fmt.Sprint(st.Step("all").Params["vs"]) != "[7]" {
		t.Errorf("once the read works: %s %s, vs = %v", st.Status, statuses(st), st.Step("all").Params["vs"])
	}
}

// TestWakeAppliesEndsWorkersWrote: a wake naming an attempt whose worker
// wrote its end (store.FinishAttempt) applies it from the attempt item; the
// commit leaves that item alone when its own write would be the same. A
// worker's outcome recorded on a running attempt (RecordOutcome) is read
// when a Redrive is pending, without a wake naming it.
func TestWakeAppliesEndsWorkersWrote(t *testing.T) {
	t.Run("end named by the wake", func(t *testing.T) {
		r, wf := chainRig(t)
		if err := r.ms.Runs.DiscardEvents(r.ctx, wf, 1, 1, []string{outcomeEventID("a", 1)}); err != nil {
			t.Fatal(err)
		}
		w := r.endByWorker(workFor(t, r.work(), "a"))
		st, err := r.o.Rounds.Process(r.ctx, w)
		if err != nil {
			t.Fatal(err)
		}
		if statuses(st) != "a=SUCCEEDED b=RUNNING" {
			t.Errorf("after the round: %s", statuses(st))
		}
		for _, a := range r.lastCommit(wf, 1, 1).Attempts {
			if a.StepID == "a" {
				t.Errorf("the commit rewrites a's item the worker wrote: %s %d entries", a.Status, len(a.Timeline))
			}
		}
		if a, err := r.ms.Attempts.GetAttempt(r.ctx, wf, 1, 1, "a", 1); err != nil || a.Status != string(model.StepSucceeded) {
			t.Errorf("a's item: %+v, %v", a, err)
		}
		// The same wake again: the attempt is no longer running.
		before := r.runs.calls()
		r.mustProcess(wf, 1, 1)
		if _, err := r.o.Rounds.Process(r.ctx, w); err != nil || r.runs.calls() != before {
			t.Errorf("a repeated wake: %v, %d commits", err, r.runs.calls()-before)
		}
	})
	t.Run("a forged wake", func(t *testing.T) {
		// Anyone able to send to the decision queue (the router, the
		// workers) could name any attempt: one still running, a step
		// that does not exist, a later attempt. The decider applies only
		// ends written on the attempts it names: nothing is committed.
		r, wf := parallelRig(t)
		before := r.runs.calls()
		w := store.Wake{WorkflowID: wf, InstanceID: 1, RunID: 1, Finished: []store.FinishedStep{
			{StepID: "a", Attempt: 1}, {StepID: "b", Attempt: 7}, {StepID: "nope", Attempt: 1}}}
		st, err := r.o.Rounds.Process(r.ctx, w)
		if err != nil {
			t.Fatal(err)
		}
		if statuses(st) != "a=RUNNING b=RUNNING" || r.runs.calls() != before {
			t.Errorf("after a forged wake: %s, %d commits", statuses(st), r.runs.calls()-before)
		}
	})
	t.Run("outcome recorded, found by a redrive", func(t *testing.T) {
		r, wf := parallelRig(t)
		m := workFor(t, r.work(), "b")
		ref := store.AttemptRef{WorkflowID: wf, InstanceID: 1, RunID: 1, StepID: "b", Attempt: 1}
		now := r.clock.Now()
		if _, err := r.ms.Attempts.ClaimAttempt(r.ctx, ref, "tok", now, now.Add(time.Minute), workerStart(m.step(t))); err != nil {
			t.Fatal(err)
		}
		fatal := engine.StepFinished{StepID: "b", Attempt: 1, Outcome: engine.OutcomeFatalError, Message: "worker died after this"}
		if err := r.ms.Attempts.RecordOutcome(r.ctx, ref, "tok", mustJSON(fatal)); err != nil {
			t.Fatal(err)
		}
		// A plain wake does not look at running attempts.
		if st := r.mustProcess(wf, 1, 1); stepStatus(st, "b") != model.StepRunning {
			t.Fatalf("b is %s without a redrive", stepStatus(st, "b"))
		}
		r.putEvent(wf, 1, 1, redriveEventID(now.UnixMilli()), engine.Redrive{Reason: "unit"})
		st := r.mustProcess(wf, 1, 1)
		if stepStatus(st, "b") != model.StepFatallyFailed || stepStatus(st, "a") != model.StepRunning {
			t.Errorf("after the redrive: %s", statuses(st))
		}
		if ids := r.pending(wf, 1, 1); len(ids) != 0 {
			t.Errorf("pending %v", ids)
		}
	})
}

// TestHandleWake: a decision-queue message that is not a wake is poison;
// a wake decides its run; a wake for a run that does not exist is dropped
// when its workflow is gone (deleted) and poison otherwise.
func TestHandleWake(t *testing.T) {
	r, wf := chainRig(t)
	for _, body := range []string{`nope`, `{}`, `{"workflow_id":"chain","workflow_instance_id":0,"workflow_run_id":1}`,
		`{"workflow_id":"chain","workflow_instance_id":1,"workflow_run_id":0}`, `{"workflow_instance_id":1,"workflow_run_id":1}`} {
		if err := r.o.Rounds.HandleWake(r.ctx, []byte(body)); !errors.Is(err, ErrPoison) {
			t.Errorf("HandleWake(%s) = %v, want poison", body, err)
		}
	}
	if err := r.o.Rounds.HandleWake(r.ctx, []byte(store.WakeBody(wf, 1, 1))); err != nil {
		t.Fatal(err)
	}
	if st := r.state(wf, 1, 1); statuses(st) != "a=SUCCEEDED b=RUNNING" {
		t.Errorf("after the wake: %s", statuses(st))
	}
	if err := r.o.Rounds.HandleWake(r.ctx, []byte(store.WakeBody(wf, 7, 1))); !errors.Is(err, ErrPoison) {
		t.Errorf("wake for a run that never existed: %v, want poison", err)
	}
	if err := r.o.Rounds.HandleWake(r.ctx, []byte(store.WakeBody("never-pushed", 1, 1))); err != nil {
		t.Errorf("wake for a run of a workflow that is gone: %v, want it dropped", err)
	}
}

// TestWakeOfADeletedWorkflowIsDropped: a late wake or backstop for a run
// of a workflow deleted and purged since is a no-op.
func TestWakeOfADeletedWorkflowIsDropped(t *testing.T) {
	r := newRoundRig(t)
	wf := r.push(rigDef("gone", "", rigStep("a", "NoOp")))
	r.start(wf)
	if _, err := r.o.Definitions.DeleteWorkflow(r.ctx, wf); err != nil {
		t.Fatal(err)
	}
	if _, err := r.o.Worker.HandleWork(r.ctx, mustJSON(wireWork{Kind: WorkPurge, WorkflowID: wf, Round: 1}), nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.ms.Runs.LoadRun(r.ctx, wf, 1, 1); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("run after the purge: %v", err)
	}
	if err := r.o.Rounds.HandleWake(r.ctx, []byte(store.WakeBody(wf, 1, 1))); err != nil {
		t.Errorf("wake: %v", err)
	}
	backstop := mustJSON(wireWork{Kind: WorkWake, WorkflowID: wf, InstanceID: 1, RunID: 1})
	if _, err := r.o.Worker.HandleWork(r.ctx, backstop, nil); err != nil {
		t.Errorf("backstop: %v", err)
	}
}

// TestBackstopHandsPendingRunsToTheDecider: a backstop wake (an event's
// WakeAfter, through the work queue) does not decide the run itself: a run
// whose events still wait is handed to the decider (a decision-queue
// wake), one with none is left alone, and one that never existed is
// poison.
func TestBackstopHandsPendingRunsToTheDecider(t *testing.T) {
	d := &rigDispatch{}
	r := newRoundRig(t, withDispatcher(d))
	wf := r.push(rigDef("bs", "", rigStep("a", "Titus")))
	r.start(wf)
	backstop := func(inst int64) error {
		_, err := r.o.Worker.HandleWork(r.ctx, mustJSON(wireWork{Kind: WorkWake, WorkflowID: wf, InstanceID: inst, RunID: 1}), nil)
		return err
	}
	sent := len(d.messages())
	if err := backstop(1); err != nil || len(d.messages()) != sent {
		t.Fatalf("backstop of a quiet run: %v, %d messages", err, len(d.messages())-sent)
	}
	r.putEvent(wf, 1, 1, outcomeEventID("a", 1), succeeded("a", 1))
	commits := r.runs.calls()
	if err := backstop(1); err != nil {
		t.Fatal(err)
	}
	msgs := d.messages()[sent:]
	if len(msgs) != 1 || msgs[0].Queue != store.QueueDecision || msgs[0].Body != store.WakeBody(wf, 1, 1) {
		t.Errorf("dispatched %+v, want the run's wake", msgs)
	}
	if r.runs.calls() != commits || len(r.pending(wf, 1, 1)) != 1 {
		t.Errorf("the backstop decided the run itself")
	}
	if err := backstop(9); !errors.Is(err, ErrPoison) {
		t.Errorf("backstop of a run that never existed: %v", err)
	}
	// Without a dispatcher the hand-off is an inbox event, whose wake the
	// stream carries.
	r2, wf2 := chainRig(t)
	if _, err := r2.o.Worker.HandleWork(r2.ctx, mustJSON(wireWork{Kind: WorkWake, WorkflowID: wf2, InstanceID: 1, RunID: 1}), nil); err != nil {
		t.Fatal(err)
	}
	if ids := r2.pending(wf2, 1, 1); len(ids) != 2 || ids[1] != handOffEventID("uuid-0002") {
		t.Errorf("pending %v, want the outcome and a hand-off event", ids)
	}
}
