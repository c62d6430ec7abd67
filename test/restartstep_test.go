package e2e

import (
	"fmt"
	"net/http"
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
}
