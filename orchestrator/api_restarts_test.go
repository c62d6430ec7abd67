package orchestrator

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/model"
)

// Restarting one iteration of a foreach (Actions.RestartInstance on an
// instance of the loop's inline workflow) and deleting a workflow, over
// the memstore.

// loopRig is a rig whose workflow "outer" runs a foreach "loop" of three
// Titus iterations, iteration 2 failing: the run fails. It returns the
// loop's inline workflow id.
func loopRig(t *testing.T) (*roleRig, string) {
	t.Helper()
	r := newRoleRig(t)
	r.push(rigDef("outer", `"parallel"`, rigForeach("loop", 3, 3, rigStep("x", "Titus"))))
	r.start("outer", StartRequest{})
	loop := r.step("outer", 1, 1, "loop").Loop
	if loop == nil {
		t.Fatal("no loop started")
	}
	r.iterate(loop.WorkflowID, 1, rigRunners(&workRunner{run: func(m StepWork) (engine.StepFinished, error) {
		if m.InstanceID == 2 {
			return engine.StepFinished{Outcome: engine.OutcomeFatalError, Message: "iteration 2 broke"}, nil
		}
		return engine.StepFinished{Outcome: engine.OutcomeSucceeded}, nil
	}}), 1, 2, 3)
	if st := r.state("outer", 1, 1); st.Status != model.WorkflowFailed {
		t.Fatalf("the run with a failing iteration: %s", rigStatus(st))
	}
	return r, loop.WorkflowID
}

// iterate decides run run of the loop's iterations insts (their start
// events, which the rig's pump does not see) and pumps the rest.
func (r *roleRig) iterate(inline string, run int64, runners map[model.StepType]StepRunner, insts ...int64) {
	r.t.Helper()
	for _, inst := range insts {
		r.decide(inline, inst, run)
	}
	r.pump(runners)
}

// TestRestartAnIteration: restarting a failed iteration restarts its
// parent run as run 2, with that iteration run again and the others kept;
// an iteration's restart takes no run params and a known policy.
func TestRestartAnIteration(t *testing.T) {
	r, inline := loopRig(t)
	_, err := r.o.Actions.RestartInstance(r.ctx, inline, 2, RestartRequest{RestartPolicy: "sideways"})
	wantRefusal(t, err, http.StatusBadRequest, "restart_policy")
	_, err = r.o.Actions.RestartInstance(r.ctx, inline, 2, RestartRequest{RunParams: map[string]json.RawMessage{"p": json.RawMessage(`{"value": 1, "type": "LONG"}`)}})
	wantRefusal(t, err, http.StatusBadRequest, "run_params: an iteration's params are its loop's")
	v, err := r.o.Actions.RestartInstance(r.ctx, inline, 2, RestartRequest{})
	if err != nil || v.WorkflowID != "outer" || v.WorkflowRunID != 2 {
		t.Fatalf("restart: %+v %v", v, err)
	}
	runner := &workRunner{}
	r.iterate(inline, 2, rigRunners(runner), 2)
	if got := runner.ran(); len(got) != 1 || runner.calls[0].InstanceID != 2 {
		t.Errorf("ran %v, want iteration 2's step only", got)
	}
	if st := r.state("outer", 1, 2); st.Status != model.WorkflowSucceeded {
		t.Errorf("run 2: %s", rigStatus(st))
	}
}

// TestRestartAnIterationInFlight: an iteration that has not ended is not
// restarted.
func TestRestartAnIterationInFlight(t *testing.T) {
	r := newRoleRig(t)
	r.push(rigDef("outer", `"parallel"`, rigForeach("loop", 2, 2, rigStep("x", "Titus"))))
	r.start("outer", StartRequest{})
	inline := r.step("outer", 1, 1, "loop").Loop.WorkflowID
	r.decide(inline, 1, 1)
	_, err := r.o.Actions.RestartInstance(r.ctx, inline, 1, RestartRequest{})
	wantRefusal(t, err, http.StatusConflict, "iteration 1 of step loop is IN_PROGRESS")
}

// TestDeleteWorkflow: a workflow with a run in progress is not deleted;
// once none is, it is deleted at once for reads, starts and a second
// deletion, its items purged in the background.
func TestDeleteWorkflow(t *testing.T) {
	r := newRoleRig(t)
	r.push(rigChain("doomed", 1))
	r.start("doomed", StartRequest{})
	_, err := r.o.Definitions.DeleteWorkflow(r.ctx, "doomed")
	wantRefusal(t, err, http.StatusConflict, "workflow doomed has 1 running or queued instances")
	if _, err := r.o.Actions.ActOnInstance(r.ctx, "doomed", 1, 0, "kill"); err != nil {
		t.Fatal(err)
	}
	if res, err := r.o.Definitions.DeleteWorkflow(r.ctx, "doomed"); err != nil || res.Status != "DELETING" {
		t.Fatalf("delete: %+v %v", res, err)
	}
	for _, call := range []func() error{
		func() error { _, err := r.o.Definitions.DeleteWorkflow(r.ctx, "doomed"); return err },
		func() error { _, err := r.o.Definitions.GetWorkflowVersion(r.ctx, "doomed", "latest"); return err },
		func() error { _, err := r.o.Runs.StartWorkflow(r.ctx, "doomed", "active", StartRequest{}); return err },
	} {
		wantRefusal(t, call(), http.StatusNotFound, "workflow doomed not found")
	}
}
