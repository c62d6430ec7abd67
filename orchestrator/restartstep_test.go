package orchestrator

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/maestro-serverless/maestro/model"
)

// Step restarts over the memstore: inside an iteration that has ended
// (through the loop's run), from the inline root, a skip of an ended
// step, and the checks of a request.

// TestStepRestartInsideAnEndedIteration: the step of a failed iteration
// restarts through the loop's run, which takes run 2 with that iteration
// run again from the step, and only it.
func TestStepRestartInsideAnEndedIteration(t *testing.T) {
	r, inline := loopRig(t)
	v, err := r.o.Actions.RestartStep(r.ctx, inline, 2, "x", StepRestartRequest{
		StepRunParams: map[string]json.RawMessage{"note": json.RawMessage(`{"type":"STRING","value":"again"}`)}})
	if err != nil || v.WorkflowID != "outer" || v.WorkflowRunID != 2 {
		t.Fatalf("restart: %+v %v", v, err)
	}
	runner := &workRunner{}
	r.iterate(inline, 2, rigRunners(runner), 2)
	if got := runner.ran(); len(got) != 1 || runner.calls[0].InstanceID != 2 || runner.calls[0].Params["note"] != "again" {
		t.Errorf("ran %v (%+v), want iteration 2's step only, with its step run param", got, runner.calls)
	}
	if st := r.state("outer", 1, 2); st.Status != model.WorkflowSucceeded {
		t.Errorf("run 2: %s", rigStatus(st))
	}
	if st := r.state(inline, 2, 2); st.Status != model.WorkflowSucceeded || st.RunPolicy != "RESTART_FROM_SPECIFIC" {
		t.Errorf("iteration 2's run 2: %s policy %s", rigStatus(st), st.RunPolicy)
	}
}

// TestStepRestartFromInlineRoot: RESTART_FROM_INLINE_ROOT on a step of an
// iteration restarts the loop's run with the policy: from the beginning,
// every iteration runs again.
func TestStepRestartFromInlineRoot(t *testing.T) {
	r, inline := loopRig(t)
	_, err := r.o.Actions.RestartStep(r.ctx, inline, 2, "x", StepRestartRequest{UpstreamRestartMode: "restart_from_inline_root",
		StepRunParams: map[string]json.RawMessage{"note": json.RawMessage(`{"type":"STRING","value":"x"}`)}})
	wantRefusal(t, err, http.StatusBadRequest, "step_run_params", "RESTART_FROM_INLINE_ROOT")
	v, err := r.o.Actions.RestartStep(r.ctx, inline, 2, "x", StepRestartRequest{UpstreamRestartMode: "RESTART_FROM_INLINE_ROOT", RestartPolicy: "RESTART_FROM_BEGINNING"})
	if err != nil || v.WorkflowID != "outer" || v.WorkflowRunID != 2 {
		t.Fatalf("restart: %+v %v", v, err)
	}
	if st := r.state("outer", 1, 2); st.RunPolicy != "RESTART_FROM_BEGINNING" {
		t.Errorf("the root's run 2: policy %s, want RESTART_FROM_BEGINNING", st.RunPolicy)
	}
}

// TestSkipAnEndedStep: skipping the failed step of an ended iteration
// restarts it through the loop's run and ends it SKIPPED with Maestro's
// message; the iteration, and so the loop's run, succeed without running
// it.
func TestSkipAnEndedStep(t *testing.T) {
	r, inline := loopRig(t)
	v, err := r.o.Actions.ActOnStep(r.ctx, inline, 2, "x", "skip")
	if err != nil || v.WorkflowID != "outer" || v.WorkflowRunID != 2 {
		t.Fatalf("skip: %+v %v", v, err)
	}
	runner := &workRunner{}
	r.iterate(inline, 2, rigRunners(runner), 2)
	if got := runner.ran(); len(got) != 0 {
		t.Errorf("ran %v, want nothing", got)
	}
	x := r.step(inline, 2, 2, "x")
	if x.Status != model.StepSkipped || x.Message != "Step is skipped because of a user skip action." {
		t.Errorf("x: %s %q", x.Status, x.Message)
	}
	// The iteration ended in its first decision, whose wake of the loop's
	// run the rig's pump does not see: play the decision queue.
	r.decide("outer", 1, 2)
	if st := r.state("outer", 1, 2); st.Status != model.WorkflowSucceeded {
		t.Errorf("run 2: %s", rigStatus(st))
	}
}

// TestStepRestartRefusals: what a step restart refuses, naming the field
// or the rule, before anything is stored.
func TestStepRestartRefusals(t *testing.T) {
	r := newRoleRig(t)
	r.push(rigDef("typed", `"parallel"`, `{"step":{"id":"s","type":"Titus","params":{
	  "n":{"type":"LONG","value":1},"c":{"type":"STRING","value":"k","mode":"CONSTANT"}}}}`))
	r.start("typed", StartRequest{})
	big := `{"type":"STRING","value":"` + strings.Repeat("a", MaxStepRunParamsBytes) + `"}`
	for _, c := range []struct {
		params map[string]string
		policy string
		says   []string
	}{
		{map[string]string{"n": `{"type":"STRING","value":"one"}`}, "", []string{"step_run_params.n", "type STRING", "LONG"}},
		{map[string]string{"c": `{"type":"STRING","value":"other"}`}, "", []string{"step_run_params.c", "CONSTANT"}},
		{map[string]string{"bad name!": `{"type":"LONG","value":1}`}, "", []string{"step_run_params.bad name!", "must match"}},
		{map[string]string{"big": big}, "", []string{"step_run_params", "limit is 16384"}},
		{nil, "RESTART_FROM_SOMEWHERE", []string{"restart_policy", "RESTART_FROM_SOMEWHERE"}},
	} {
		req := StepRestartRequest{RestartPolicy: c.policy, StepRunParams: map[string]json.RawMessage{}}
		for k, v := range c.params {
			req.StepRunParams[k] = json.RawMessage(v)
		}
		_, err := r.o.Actions.RestartStep(r.ctx, "typed", 1, "s", req)
		wantRefusal(t, err, http.StatusBadRequest, c.says...)
	}
	// The step is RUNNING: a restart is refused naming its status.
	_, err := r.o.Actions.RestartStep(r.ctx, "typed", 1, "s", StepRestartRequest{})
	wantRefusal(t, err, http.StatusConflict, "RESTART", "RUNNING")
	if st := r.state("typed", 1, 1); st.Status != model.WorkflowInProgress || r.step("typed", 1, 1, "s").Attempt != 1 {
		t.Errorf("after the refusals: %s, attempt %d", rigStatus(st), r.step("typed", 1, 1, "s").Attempt)
	}
}
