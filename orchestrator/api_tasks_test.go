package orchestrator

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/model"
)

// Reports from outside over the memstore: a task token's holder reporting
// its handed-over step (Actions.CompleteTask), and an external job's
// output data for a running attempt (Actions.PutOutputData).

// handedOver is a rig whose workflow "cb" (a Callback step handed over
// with a task token, then a Titus step t1) has n instances started, each
// cb handed over; it returns the tokens in instance order.
func handedOver(t *testing.T, n int) (*roleRig, []string) {
	t.Helper()
	r := newRoleRig(t)
	r.push(workDef("cb", "", workStep("cb", "Callback", "", "t1"), workStep("t1", "Titus", "")))
	cb := &rigCallback{}
	runners := map[model.StepType]StepRunner{model.StepCallback: cb, model.StepTitus: &workRunner{}}
	var tokens []string
	for i := range n {
		r.start("cb", StartRequest{})
		for _, m := range r.disp.take(t) {
			if _, err := r.work(m, runners); err != nil {
				t.Fatal(err)
			}
		}
		tokens = append(tokens, cb.token(t, i))
	}
	return r, tokens
}

// cbOutputs is the outputs the API shows for step cb of instance inst.
func (r *roleRig) cbOutputs(inst int64) map[string]any {
	r.t.Helper()
	v, err := r.o.Runs.GetStepAttempt(r.ctx, "cb", inst, 1, "cb", 0)
	if err != nil {
		r.t.Fatal(err)
	}
	return v.Outputs
}

// TestCompleteTask: a task token's report is checked (its shape, its
// action, a failure's kind, the outputs' size) before the token is looked
// up; a success or failure ends the attempt at once and uses the token,
// which cannot report again; a heartbeat of a step with no
// heartbeat_timeout records nothing.
func TestCompleteTask(t *testing.T) {
	r, tokens := handedOver(t, 3)
	unknown := strings.Repeat("A", TaskTokenLength)
	huge := map[string]any{"blob": strings.Repeat("x", engine.MaxStepOutputsBytes)}
	for _, c := range []struct {
		token  string
		report TaskCompletion
		status int
		says   string
	}{
		{"short", TaskCompletion{Action: TaskSuccess}, http.StatusBadRequest, "token: must be"},
		{unknown, TaskCompletion{Action: "maybe"}, http.StatusNotFound, `no task action "maybe"`},
		{unknown, TaskCompletion{Action: TaskFailure, Error: "OOPS"}, http.StatusBadRequest, `error: must be USER_ERROR, PLATFORM_ERROR or FATAL_ERROR, not "OOPS"`},
		{unknown, TaskCompletion{Action: TaskSuccess, Outputs: huge}, http.StatusBadRequest, "outputs:"},
		{unknown, TaskCompletion{Action: TaskSuccess}, http.StatusNotFound, "unknown task token"},
	} {
		_, err := r.o.Actions.CompleteTask(r.ctx, c.token, c.report)
		wantRefusal(t, err, c.status, c.says)
	}
	report := func(token string, c TaskCompletion) string {
		t.Helper()
		v, err := r.o.Actions.CompleteTask(r.ctx, token, c)
		if err != nil {
			t.Fatalf("%s: %v", c.Action, err)
		}
		return fmt.Sprintf("%s/%d %s#%d %s recorded=%v", v.WorkflowID, v.InstanceID, v.StepID, v.Attempt, v.Status, v.Recorded)
	}
	if got := report(tokens[0], TaskCompletion{Action: TaskHeartbeat}); got != "cb/1 cb#1 RUNNING recorded=false" {
		t.Errorf("heartbeat: %s", got)
	}
	if got := report(tokens[0], TaskCompletion{Action: TaskSuccess, Outputs: map[string]any{"rows": int64(3)}}); got != "cb/1 cb#1 SUCCEEDED recorded=true" {
		t.Errorf("success: %s", got)
	}
	if out := r.cbOutputs(1); fmt.Sprint(out["rows"]) != "3" {
		t.Errorf("outputs %v", out)
	}
	r.wantRun("cb", 1, "IN_PROGRESS cb=SUCCEEDED t1=RUNNING")
	_, err := r.o.Actions.CompleteTask(r.ctx, tokens[0], TaskCompletion{Action: TaskFailure})
	wantRefusal(t, err, http.StatusConflict, "already used", "success")
	if got := report(tokens[1], TaskCompletion{Action: TaskFailure, Error: engine.OutcomeFatalError, Message: "disk full"}); got != "cb/2 cb#1 FATALLY_FAILED recorded=true" {
		t.Errorf("failure: %s", got)
	}
	if ss := r.step("cb", 2, 1, "cb"); !strings.Contains(ss.Message, "task failed: disk full") {
		t.Errorf("failure message %q", ss.Message)
	}
	if _, err := r.o.Actions.ActOnInstance(r.ctx, "cb", 3, 0, "stop"); err != nil {
		t.Fatal(err)
	}
	_, err = r.o.Actions.CompleteTask(r.ctx, tokens[2], TaskCompletion{Action: TaskSuccess})
	wantRefusal(t, err, http.StatusConflict, "no longer runs", "STOPPED")
}

// TestPutOutputData: output data for a running attempt shows in its
// outputs at once and names the attempt that took it; for a step that
// does not exist it is a 404, for an attempt that does not run or is not
// the current one a 409.
func TestPutOutputData(t *testing.T) {
	r, _ := handedOver(t, 1)
	res, err := r.o.Actions.PutOutputData(r.ctx, OutputData{WorkflowID: "cb", InstanceID: 1, StepID: "cb",
		Params: map[string]any{"b": "two", "a": int64(1)}, ExternalJobType: "spark", ExternalJobID: "j-1"})
	if err != nil || fmt.Sprintf("%d %s#%d %v", res.RunID, res.StepID, res.Attempt, res.Params) != "1 cb#1 [a b]" {
		t.Fatalf("put: %+v %v", res, err)
	}
	if out := r.cbOutputs(1); fmt.Sprint(out["a"]) != "1" || out["b"] != "two" {
		t.Errorf("outputs %v", out)
	}
	for _, c := range []struct {
		od     OutputData
		status int
		says   string
	}{
		{OutputData{WorkflowID: "cb", InstanceID: 1, StepID: "ghost"}, http.StatusNotFound, "has no step ghost"},
		{OutputData{WorkflowID: "cb", InstanceID: 1, StepID: "cb", Attempt: 2}, http.StatusConflict, "is at attempt 1, not 2"},
		{OutputData{WorkflowID: "cb", InstanceID: 1, StepID: "t1"}, http.StatusConflict, "NOT_CREATED"},
		{OutputData{WorkflowID: "cb", InstanceID: 2, StepID: "cb"}, http.StatusNotFound, "instance 2 not found"},
	} {
		_, err := r.o.Actions.PutOutputData(r.ctx, c.od)
		wantRefusal(t, err, c.status, c.says)
	}
}
