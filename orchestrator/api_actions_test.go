package orchestrator

import (
	"net/http"
	"strings"
	"testing"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/store"
)

// The Actions role over the memstore: actions on runs and steps in each
// state, applied at once or refused with a status that says why;
// restarts of runs and steps; workflow-wide actions; unblocking a failed
// STRICT_SEQUENTIAL run.

// failing is a runner under which the steps named fail fatally and the
// rest succeed.
func failing(steps ...string) *workRunner {
	return &workRunner{run: func(m StepWork) (engine.StepFinished, error) {
		for _, s := range steps {
			if m.StepID == s {
				return engine.StepFinished{Outcome: engine.OutcomeFatalError, Message: s + " broke"}, nil
			}
		}
		return engine.StepFinished{Outcome: engine.OutcomeSucceeded}, nil
	}}
}

// actedRun is a rig with instance 1 of the chain "acts" (t0 → t1) in
// state: "running" (t0 dispatched, not run), "succeeded", "failed" (t1
// failed), or "stopped".
func actedRun(t *testing.T, state string) *roleRig {
	t.Helper()
	r := newRoleRig(t)
	r.push(rigChain("acts", 2))
	r.start("acts", StartRequest{})
	switch state {
	case "running":
		r.disp.take(t)
	case "succeeded":
		r.pump(rigRunners(&workRunner{}))
	case "failed":
		r.pump(rigRunners(failing("t1")))
	case "stopped":
		r.disp.take(t)
		if _, err := r.o.Actions.ActOnInstance(r.ctx, "acts", 1, 0, "stop"); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// TestActionsByRunState: an action the run's state allows is applied at
// once (the answer shows it); one it does not is refused with a 409
// naming the status and what is allowed; an unknown action is a 400, an
// unknown step, instance or run a 404.
func TestActionsByRunState(t *testing.T) {
	for _, c := range []struct {
		state, step, action string
		status              int
		says                string // the refusal's text, or the run's statuses after
	}{
		{"running", "", "stop", 0, "STOPPED t0=STOPPED t1=NOT_CREATED"},
		{"running", "", "KILL", 0, "FAILED t0=FATALLY_FAILED t1=NOT_CREATED"},
		{"running", "t0", "skip", 0, "IN_PROGRESS t0=SKIPPED t1=RUNNING"},
		{"running", "t0", "stop", 0, "STOPPED t0=STOPPED t1=UNSATISFIED"},
		{"running", "", "restart", http.StatusConflict, "RESTART"},
		{"running", "", "dance", http.StatusBadRequest, `unknown workflow action "dance"`},
		{"running", "t0", "dance", http.StatusBadRequest, `unknown step action "dance"`},
		{"running", "ghost", "stop", http.StatusNotFound, "has no step ghost"},
		{"running", "t0", "pause", http.StatusConflict, "PAUSE"},
		{"running", "t1", "stop", http.StatusConflict, "NOT_CREATED"},
		{"running", "", "unblock", http.StatusConflict, "UNBLOCK is not allowed on workflow instance in status IN_PROGRESS"},
		{"succeeded", "", "stop", http.StatusConflict, "SUCCEEDED"},
		{"succeeded", "t0", "stop", http.StatusConflict, "SUCCEEDED"},
		{"stopped", "", "kill", http.StatusConflict, "STOPPED"},
		{"failed", "", "unblock", http.StatusConflict, "blocks nothing"},
	} {
		t.Run(c.state+" "+c.step+" "+c.action, func(t *testing.T) {
			r := actedRun(t, c.state)
			var v *InstanceView
			var err error
			if c.step == "" {
				v, err = r.o.Actions.ActOnInstance(r.ctx, "acts", 1, 0, c.action)
			} else {
				v, err = r.o.Actions.ActOnStep(r.ctx, "acts", 1, c.step, c.action)
			}
			if c.status != 0 {
				wantRefusal(t, err, c.status, c.says)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if want, _, _ := strings.Cut(c.says, " "); v.Status != want {
				t.Errorf("answered %s, want %s", v.Status, want)
			}
			r.wantRun("acts", 1, c.says)
		})
	}
	r := actedRun(t, "running")
	_, err := r.o.Actions.ActOnInstance(r.ctx, "acts", 1, 2, "stop")
	wantRefusal(t, err, http.StatusNotFound, "has no run 2")
	_, err = r.o.Actions.ActOnInstance(r.ctx, "acts", 9, 0, "stop")
	wantRefusal(t, err, http.StatusNotFound)
	_, err = r.o.Actions.ActOnStep(r.ctx, "nope", 1, "t0", "stop")
	wantRefusal(t, err, http.StatusNotFound)
}

// TestRestartInstance: a run that ended restarts as run 2 — from
// incomplete (the default), the steps that succeeded are kept and not
// run again; from the beginning, all run — while a run in progress, a bad
// policy and an unknown instance are refused.
func TestRestartInstance(t *testing.T) {
	for _, c := range []struct {
		policy string
		ran    string // the steps run 2 runs
	}{{"", "t1#1"}, {"restart_from_incomplete", "t1#1"}, {"RESTART_FROM_BEGINNING", "t0#1 t1#1"}} {
		t.Run("policy "+c.policy, func(t *testing.T) {
			r := actedRun(t, "failed")
			v, err := r.o.Actions.RestartInstance(r.ctx, "acts", 1, RestartRequest{RestartPolicy: c.policy})
			if err != nil {
				t.Fatal(err)
			}
			if v.WorkflowRunID != 2 {
				t.Fatalf("restarted as %+v", v)
			}
			runner := &workRunner{}
			r.pump(rigRunners(runner))
			if got := strings.Join(runner.ran(), " "); got != c.ran {
				t.Errorf("run 2 ran %q, want %q", got, c.ran)
			}
			if st := r.state("acts", 1, 2); st.Status != model.WorkflowSucceeded {
				t.Errorf("run 2: %s", rigStatus(st))
			}
			if inst, err := r.o.Runs.GetInstance(r.ctx, "acts", 1); err != nil || inst.WorkflowRunID != 2 {
				t.Errorf("the instance's latest run: %+v %v", inst, err)
			}
		})
	}
	r := actedRun(t, "running")
	_, err := r.o.Actions.RestartInstance(r.ctx, "acts", 1, RestartRequest{})
	wantRefusal(t, err, http.StatusConflict, "RESTART is not allowed", "IN_PROGRESS", "allowed: STOP, KILL")
	r = actedRun(t, "stopped")
	_, err = r.o.Actions.RestartInstance(r.ctx, "acts", 1, RestartRequest{RestartPolicy: "sideways"})
	wantRefusal(t, err, http.StatusBadRequest, "restart_policy")
	_, err = r.o.Actions.RestartInstance(r.ctx, "acts", 7, RestartRequest{})
	wantRefusal(t, err, http.StatusNotFound)
}

// TestRestartStep: a step that ended restarts — in a run in progress as a
// new attempt, in a run that ended as a new run running it and its
// downstream — unless a step downstream of it is in flight; the request's
// policies are checked first.
func TestRestartStep(t *testing.T) {
	t.Run("in a run in progress", func(t *testing.T) {
		r := newRoleRig(t)
		r.push(workDef("fan", "", workStep("a", "Titus", ""), workStep("b", "Titus", "")))
		r.start("fan", StartRequest{})
		var b wireWork
		for _, m := range r.disp.take(t) {
			if m.StepID == "a" {
				r.work(m, rigRunners(failing("a")))
			} else {
				b = m
			}
		}
		r.decide("fan", 1, 1)
		r.wantRun("fan", 1, "IN_PROGRESS a=FATALLY_FAILED b=RUNNING")
		if _, err := r.o.Actions.RestartStep(r.ctx, "fan", 1, "a", StepRestartRequest{}); err != nil {
			t.Fatal(err)
		}
		if ss := r.step("fan", 1, 1, "a"); ss.Attempt != 2 || ss.Status != model.StepRunning {
			t.Fatalf("a after its restart: attempt %d %s", ss.Attempt, ss.Status)
		}
		// a's second attempt finds b in flight and hands its end over; b's
		// worker then finds the run quiet and ends it.
		r.pump(rigRunners(&workRunner{}))
		r.wantRun("fan", 1, "IN_PROGRESS a=SUCCEEDED b=RUNNING")
		r.work(b, rigRunners(&workRunner{}))
		r.wantRun("fan", 1, "SUCCEEDED a=SUCCEEDED b=SUCCEEDED")
	})
	t.Run("in a run that ended", func(t *testing.T) {
		r := actedRun(t, "failed")
		v, err := r.o.Actions.RestartStep(r.ctx, "acts", 1, "t1", StepRestartRequest{})
		if err != nil || v.WorkflowRunID != 2 {
			t.Fatalf("restart: %+v %v", v, err)
		}
		runner := &workRunner{}
		r.pump(rigRunners(runner))
		if got := strings.Join(runner.ran(), " "); got != "t1#1" {
			t.Errorf("run 2 ran %q", got)
		}
	})
	for _, c := range []struct {
		state, step string
		req         StepRestartRequest
		status      int
		says        string
	}{
		{"running", "t0", StepRestartRequest{}, http.StatusConflict, `step "t1" downstream of it`},
		{"running", "t0", StepRestartRequest{RestartPolicy: "sideways"}, http.StatusBadRequest, "restart_policy"},
		{"running", "t0", StepRestartRequest{UpstreamRestartMode: "sideways"}, http.StatusBadRequest, "upstream_restart_mode"},
		{"running", "t0", StepRestartRequest{RestartPolicy: "RESTART_FROM_BEGINNING"}, http.StatusConflict, `step "t1" downstream of it`},
		{"running", "t0", StepRestartRequest{UpstreamRestartMode: "RESTART_FROM_INLINE_ROOT"}, http.StatusConflict, "RESTART_FROM_INLINE_ROOT: workflow acts instance 1 is IN_PROGRESS"},
		{"running", "ghost", StepRestartRequest{}, http.StatusNotFound, "has no step ghost"},
		{"succeeded", "t0", StepRestartRequest{}, 0, ""},
		{"stopped", "t1", StepRestartRequest{}, http.StatusConflict, "NOT_CREATED"},
	} {
		r := actedRun(t, c.state)
		if c.state == "running" && c.step == "t0" && c.status == http.StatusConflict {
			// t0 done, t1 in flight.
			r.succeed("acts", "t0")
		}
		_, err := r.o.Actions.RestartStep(r.ctx, "acts", 1, c.step, c.req)
		if c.status == 0 {
			if err != nil {
				t.Errorf("%s %s: %v", c.state, c.step, err)
			}
			continue
		}
		wantRefusal(t, err, c.status, c.says)
	}
}

// succeed has the decider apply a success of step's attempt 1 in run 1
// of instance 1 of wf, as a worker that found the run contended leaves it.
func (r *roleRig) succeed(wf, step string) {
	r.t.Helper()
	ev := engine.StepFinished{StepID: step, Attempt: 1, Outcome: engine.OutcomeSucceeded}
	if err := r.mem.Runs.PutEvent(r.ctx, wf, 1, 1, store.Event{ID: outcomeEventID(step, 1), Body: mustJSON(ev)}); err != nil {
		r.t.Fatal(err)
	}
	r.decide(wf, 1, 1)
}

// TestActOnWorkflow: a workflow-wide stop or kill goes into the inbox of
// every run that holds a slot or waits for one, and each applies it; a
// bad action or workflow is refused.
func TestActOnWorkflow(t *testing.T) {
	r := newRoleRig(t)
	r.push(rigChain("all", 1))
	r.push(rigChain("other", 1))
	for range 3 {
		r.start("all", StartRequest{})
	}
	r.start("other", StartRequest{})
	r.disp.take(t)
	n, err := r.o.Actions.ActOnWorkflow(r.ctx, "all", "stop")
	if err != nil || n != 3 {
		t.Fatalf("stop: %d %v", n, err)
	}
	for inst := int64(1); inst <= 3; inst++ {
		r.decide("all", inst, 1) // the inbox event's wake
		r.wantRun("all", inst, "STOPPED t0=STOPPED")
	}
	r.wantRun("other", 1, "IN_PROGRESS t0=RUNNING")
	if n, err := r.o.Actions.ActOnWorkflow(r.ctx, "all", "kill"); err != nil || n != 0 {
		t.Errorf("a kill of ended runs: %d %v", n, err)
	}
	_, err = r.o.Actions.ActOnWorkflow(r.ctx, "all", "restart")
	wantRefusal(t, err, http.StatusBadRequest, `"restart" is not a workflow action`)
	_, err = r.o.Actions.ActOnWorkflow(r.ctx, "nope", "stop")
	wantRefusal(t, err, http.StatusNotFound, "workflow nope not found")
}

// TestUnblockAFailedStrictSequentialRun: a failed STRICT_SEQUENTIAL run
// keeps its slot and the next instance waits; UNBLOCK releases it and the
// next starts; a second UNBLOCK finds nothing blocked; the workflow-wide
// UNBLOCK counts what it released.
func TestUnblockAFailedStrictSequentialRun(t *testing.T) {
	for _, wide := range []bool{false, true} {
		r := newRoleRig(t)
		r.push(workDef("strict", `{"owner": "unit", "run_strategy": "strict_sequential"}`, workStep("t0", "Titus", "")))
		r.start("strict", StartRequest{})
		r.pump(rigRunners(failing("t0")))
		r.start("strict", StartRequest{})
		r.pump(rigRunners(&workRunner{}))
		r.wantRun("strict", 1, "FAILED t0=FATALLY_FAILED")
		if st := r.state("strict", 2, 1); st.Status != model.WorkflowCreated {
			t.Fatalf("the next instance: %s", rigStatus(st))
		}
		if wide {
			if n, err := r.o.Actions.ActOnWorkflow(r.ctx, "strict", "unblock"); err != nil || n != 1 {
				t.Fatalf("workflow unblock: %d %v", n, err)
			}
		} else if _, err := r.o.Actions.ActOnInstance(r.ctx, "strict", 1, 0, "unblock"); err != nil {
			t.Fatal(err)
		}
		r.decide("strict", 2, 1) // the wake of the event the release put
		r.pump(rigRunners(&workRunner{}))
		r.wantRun("strict", 1, "FAILED t0=FATALLY_FAILED")
		r.wantRun("strict", 2, "SUCCEEDED t0=SUCCEEDED")
		_, err := r.o.Actions.ActOnInstance(r.ctx, "strict", 1, 0, "unblock")
		wantRefusal(t, err, http.StatusConflict, "blocks nothing")
	}
}
