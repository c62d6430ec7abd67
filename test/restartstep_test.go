package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/localstack/stack"
	"github.com/maestro-serverless/maestro/orchestrator"
)

// stepRestartPath is the step restart action of step of instance id of wf.
func stepRestartPath(wf string, id int64, step string) string {
	return fmt.Sprintf("/api/v3/workflows/%s/instances/%d/steps/%s/actions/restart", wf, id, step)
}

// TestStepRestartInsideAnEndedIteration: restarting the failed step of an
// iteration whose foreach run has ended goes through the parent, as an
// instance restart of that iteration does: the parent takes run 2, which
// runs that iteration's step again (and only it) and the steps after the
// loop.
func TestStepRestartInsideAnEndedIteration(t *testing.T) {
	t.Parallel()
	ls, srv := startLoopServer(t, 0, "2/a")
	s := startSystem(t, stack.Options{})
	wf := s.push(foreachWorkflow("step-restart-iteration", srv.URL, "[1,2,3]", `["a"]`, 3, "FAIL_AFTER_RUNNING"))
	r := s.start(wf, "")
	wantEnd(t, s.wait(wf, r.WorkflowInstanceID, 60*time.Second), "FAILED", map[string]string{"loop": "FATALLY_FAILED"})
	inline := s.steps(wf, r.WorkflowInstanceID)["loop"].Foreach.WorkflowID
	wantEnd(t, s.wait(inline, 2, 30*time.Second), "FAILED", map[string]string{"call": "FATALLY_FAILED"})
	ls.heal("2/a")

	var v orchestrator.InstanceView
	if code := s.do("POST", stepRestartPath(inline, 2, "call"), []byte(`{"restart_policy":"RESTART_FROM_INCOMPLETE"}`), &v); code != http.StatusOK {
		t.Fatalf("restart of the iteration's step: HTTP %d %+v", code, v)
	}
	poll(t, 60*time.Second, "the parent's run 2 succeeds", func() (bool, string) {
		p := s.instance(wf, r.WorkflowInstanceID)
		return p.WorkflowRunID == 2 && p.Status == "SUCCEEDED", fmt.Sprintf("parent run %d %s %v; iteration 2 run %d %s",
			p.WorkflowRunID, p.Status, p.StepStatuses, s.instance(inline, 2).WorkflowRunID, s.instance(inline, 2).Status)
	})
	if it := s.instance(inline, 2); it.WorkflowRunID != 2 || it.Status != "SUCCEEDED" || it.Initiator == nil || it.Initiator.Parent == nil || it.Initiator.Parent.RunID != 2 {
		t.Errorf("iteration 2: run %d %s initiator %+v, want run 2 SUCCEEDED under the parent's run 2", it.WorkflowRunID, it.Status, it.Initiator)
	}
	calls, _ := ls.snapshot()
	if want := map[string]int{"1/a": 1, "2/a": 2, "3/a": 1}; fmt.Sprint(calls) != fmt.Sprint(want) {
		t.Errorf("calls %v, want %v: only the restarted iteration's step runs again", calls, want)
	}
	if st := s.steps(wf, r.WorkflowInstanceID)["after"]; st.RuntimeState.Status != "SUCCEEDED" || st.WorkflowRunID != 2 {
		t.Errorf("after: %s in run %d, want SUCCEEDED in run 2", st.RuntimeState.Status, st.WorkflowRunID)
	}

	// RESTART_FROM_INLINE_ROOT from the step of iteration 1, from the
	// beginning: the loop's run restarts as run 3 and every iteration
	// calls again.
	if code := s.do("POST", stepRestartPath(inline, 1, "call"), []byte(`{"restart_policy":"RESTART_FROM_BEGINNING","upstream_restart_mode":"RESTART_FROM_INLINE_ROOT"}`), &v); code != http.StatusOK || v.WorkflowID != wf || v.WorkflowRunID != 3 {
		t.Fatalf("restart from the inline root: HTTP %d %s run %d, want the root's run 3", code, v.WorkflowID, v.WorkflowRunID)
	}
	wantEnd(t, s.wait(wf, r.WorkflowInstanceID, 60*time.Second), "SUCCEEDED", map[string]string{"loop": "SUCCEEDED", "after": "SUCCEEDED"})
	calls, _ = ls.snapshot()
	if want := map[string]int{"1/a": 2, "2/a": 3, "3/a": 2}; fmt.Sprint(calls) != fmt.Sprint(want) {
		t.Errorf("calls %v, want %v: from the beginning, every iteration calls again", calls, want)
	}
}

// TestStepRestartControls: on one workflow (first -> call -> last, call
// an Http step pointed at a server that always fails): the abuses of a
// step restart are refused and change nothing; step_run_params point the
// restarted call elsewhere for that restart; a skip of the ended call
// restarts it and skips it; RESTART_FROM_INLINE_ROOT with
// RESTART_FROM_BEGINNING restarts the whole instance from the beginning.
func TestStepRestartControls(t *testing.T) {
	t.Parallel()
	s := startSystem(t, stack.Options{})
	bad, good := &flaky{failures: 1 << 30}, &flaky{}
	badSrv, goodSrv := httptest.NewServer(bad), httptest.NewServer(good)
	defer badSrv.Close()
	defer goodSrv.Close()
	wf := s.push([]byte(fmt.Sprintf(`{"properties":{"owner":"restart"},"workflow":{"id":"step-restart-controls","steps":[
	  {"step":{"id":"first","type":"NoOp","transition":{"successors":{"call":"true"}}}},
	  {"step":{"id":"call","type":"Http","retry_policy":{"error_retry_limit":0,"platform_retry_limit":0},
	    "params":{"http":{"type":"MAP","value":{"url":{"type":"STRING","value":%q}}}},
	    "transition":{"successors":{"last":"true"}}}},
	  {"step":{"id":"last","type":"NoOp"}}]}}`, badSrv.URL)))
	other := s.push([]byte(`{"properties":{"owner":"restart"},"workflow":{"id":"step-restart-other","steps":[{"step":{"id":"only","type":"NoOp"}}]}}`))
	r := s.start(wf, "")
	wantEnd(t, s.wait(wf, r.WorkflowInstanceID, 30*time.Second), "FAILED", map[string]string{"call": "FATALLY_FAILED"})
	o := s.start(other, "")
	wantEnd(t, s.wait(other, o.WorkflowInstanceID, 30*time.Second), "SUCCEEDED", nil)
	path := stepRestartPath(wf, r.WorkflowInstanceID, "call")

	// Abuses: each refused naming the field or the rule; nothing changes.
	big := strings.Repeat("x", orchestrator.MaxStepRunParamsBytes)
	for _, c := range []struct {
		path, body string
		code       int
		says       string
	}{
		{path, `{"restart_policy":"RESTART_FROM_SIDEWAYS"}`, http.StatusBadRequest, "restart_policy"},
		{path, `{"upstream_restart_mode":"RESTART_FROM_MOON"}`, http.StatusBadRequest, "upstream_restart_mode"},
		{path, `{"step_run_params":{"http":{"type":"STRING","value":"x"}}}`, http.StatusBadRequest, "step_run_params.http: type STRING does not match the step's param type MAP"},
		{path, `{"step_run_params":{"blob":{"type":"STRING","value":"` + big + `"}}}`, http.StatusBadRequest, "step_run_params: 16"},
		// Mixing ids: another workflow's instance with this one's step,
		// this workflow with an instance it does not have.
		{stepRestartPath(other, o.WorkflowInstanceID, "call"), `{}`, http.StatusNotFound, "has no step call"},
		{stepRestartPath(wf, 99, "call"), `{}`, http.StatusNotFound, "99"},
		{stepRestartPath(other, o.WorkflowInstanceID, "only"), `{"step_run_params":{"http":{"type":"MAP","value":{}}},"restart_policy":"RESTART_FROM_INCOMPLETE"}`, http.StatusOK, ""},
	} {
		var e map[string]any
		code := s.do("POST", c.path, []byte(c.body), &e)
		if code != c.code || !strings.Contains(fmt.Sprint(e), c.says) {
			t.Errorf("POST %s %.80s: HTTP %d %.300v, want %d saying %q", c.path, c.body, code, e, c.code, c.says)
		}
	}
	if v := s.instance(wf, r.WorkflowInstanceID); v.WorkflowRunID != 1 || bad.calls.Load() != 1 {
		t.Fatalf("after the refusals: run %d, %d calls to the failing server, want run 1 and 1", v.WorkflowRunID, bad.calls.Load())
	}

	// step_run_params: the restarted call goes to the good server.
	s.restartToRun2(t, wf, r.WorkflowInstanceID, path, fmt.Sprintf(
		`{"restart_policy":"RESTART_FROM_INCOMPLETE","step_run_params":{"http":{"type":"MAP","value":{"url":{"type":"STRING","value":%q}}}}}`, goodSrv.URL))
	if bad.calls.Load() != 1 || good.calls.Load() != 1 {
		t.Errorf("calls: failing server %d, good server %d, want 1 and 1", bad.calls.Load(), good.calls.Load())
	}
	call := s.steps(wf, r.WorkflowInstanceID)["call"]
	if u := fmt.Sprint(call.Params["http"]); !strings.Contains(u, goodSrv.URL) {
		t.Errorf("call's params in run 2: %v, want the step run param's url", call.Params["http"])
	}
	if st := s.steps(wf, r.WorkflowInstanceID)["first"]; st.WorkflowRunID != 1 {
		t.Errorf("first: from run %d, want carried over from run 1", st.WorkflowRunID)
	}

	// Skip of the ended call: run 3 restarts it and skips it.
	var v orchestrator.InstanceView
	if code := s.do("PUT", fmt.Sprintf("/api/v3/workflows/%s/instances/%d/steps/call/actions/skip", wf, r.WorkflowInstanceID), nil, &v); code != http.StatusOK || v.WorkflowRunID != 3 {
		t.Fatalf("skip of the ended step: HTTP %d run %d", code, v.WorkflowRunID)
	}
	wantEnd(t, s.wait(wf, r.WorkflowInstanceID, 30*time.Second), "SUCCEEDED", map[string]string{"call": "SKIPPED", "last": "SUCCEEDED"})
	call = s.steps(wf, r.WorkflowInstanceID)["call"]
	if call.WorkflowRunID != 3 || !strings.Contains(fmt.Sprint(call.Timeline), "Step is skipped because of a user skip action.") {
		t.Errorf("skipped call: run %d timeline %v", call.WorkflowRunID, call.Timeline)
	}
	if bad.calls.Load() != 1 || good.calls.Load() != 1 {
		t.Errorf("the skipped step called out: %d/%d", bad.calls.Load(), good.calls.Load())
	}

	// From the inline root (its own instance here), from the beginning:
	// run 4 runs every step again, the call with its definition's params.
	if code := s.do("POST", path, []byte(`{"restart_policy":"RESTART_FROM_BEGINNING","upstream_restart_mode":"RESTART_FROM_INLINE_ROOT"}`), &v); code != http.StatusOK || v.WorkflowRunID != 4 {
		t.Fatalf("restart from the inline root: HTTP %d run %d", code, v.WorkflowRunID)
	}
	wantEnd(t, s.wait(wf, r.WorkflowInstanceID, 30*time.Second), "FAILED", map[string]string{"call": "FATALLY_FAILED"})
	if st := s.steps(wf, r.WorkflowInstanceID)["first"]; st.WorkflowRunID != 4 || bad.calls.Load() != 2 {
		t.Errorf("run 4: first from run %d, %d calls to the failing server; want run 4 and 2", st.WorkflowRunID, bad.calls.Load())
	}
}
