package orchestrator

import (
	"fmt"
	"net/http"
	"testing"
)

// The read side of the API over the memstore: instances and their runs,
// the steps of a run and their attempts, and the paged lists of
// instances and workflows.

// readRig has workflow "reads" (t0 → t1) with three instances: 1 failed
// at t1 then restarted from incomplete and succeeded (run 2), 2 running
// t0, 3 stopped.
func readRig(t *testing.T) *roleRig {
	t.Helper()
	r := newRoleRig(t)
	r.push(workDef("reads", "", workStep("t0", "Titus", `"params": {"n": {"value": 7, "type": "LONG"}}`, "t1"), workStep("t1", "Titus", "")))
	r.start("reads", StartRequest{})
	r.pump(rigRunners(failing("t1")))
	if _, err := r.o.Actions.RestartInstance(r.ctx, "reads", 1, RestartRequest{}); err != nil {
		t.Fatal(err)
	}
	r.pump(rigRunners(&workRunner{}))
	r.start("reads", StartRequest{})
	r.start("reads", StartRequest{})
	r.disp.take(t)
	if _, err := r.o.Actions.ActOnInstance(r.ctx, "reads", 3, 0, "stop"); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestReadInstancesAndRuns: an instance reads as its latest run, any run
// by number; what does not exist is a 404 naming it.
func TestReadInstancesAndRuns(t *testing.T) {
	r := readRig(t)
	for _, c := range []struct {
		inst, run int64 // run 0: GetInstance
		want      string
	}{
		{1, 0, "run 2 SUCCEEDED 2 steps SUCCEEDED:2"},
		{1, 1, "run 1 FAILED 2 steps FATALLY_FAILED:1 SUCCEEDED:1"},
		{1, 2, "run 2 SUCCEEDED 2 steps SUCCEEDED:2"},
		{2, 0, "run 1 IN_PROGRESS 2 steps NOT_CREATED:1 RUNNING:1"},
		{3, 1, "run 1 STOPPED 2 steps NOT_CREATED:1 STOPPED:1"},
	} {
		var v *InstanceView
		var err error
		if c.run == 0 {
			v, err = r.o.Runs.GetInstance(r.ctx, "reads", c.inst)
		} else {
			v, err = r.o.Runs.GetRun(r.ctx, "reads", c.inst, c.run)
		}
		if err != nil {
			t.Fatalf("%d/%d: %v", c.inst, c.run, err)
		}
		got := fmt.Sprintf("run %d %s", v.WorkflowRunID, v.Status)
		if o := v.RuntimeOverview; o != nil {
			got += fmt.Sprintf(" %d steps", o.TotalStepCount)
			for _, s := range []string{"FATALLY_FAILED", "NOT_CREATED", "RUNNING", "STOPPED", "SUCCEEDED", "UNSATISFIED"} {
				if n := o.StepOverview[s]; n > 0 {
					got += fmt.Sprintf(" %s:%d", s, n)
				}
			}
		}
		if got != c.want {
			t.Errorf("%d/%d: %s, want %s", c.inst, c.run, got, c.want)
		}
	}
	_, err := r.o.Runs.GetRun(r.ctx, "reads", 1, 3)
	wantRefusal(t, err, http.StatusNotFound, "workflow reads instance 1 has no run 3")
	_, err = r.o.Runs.GetInstance(r.ctx, "reads", 9)
	wantRefusal(t, err, http.StatusNotFound, "workflow reads instance 9 not found")
	_, err = r.o.Runs.GetInstance(r.ctx, "nope", 1)
	wantRefusal(t, err, http.StatusNotFound, "workflow nope instance 1 not found")
}

// TestReadStepsAndAttempts: the steps of an instance's latest run, and one
// attempt of a run (0: the latest), whether or not the attempt has an item
// yet; a step that does not exist is a 404.
func TestReadStepsAndAttempts(t *testing.T) {
	r := readRig(t)
	steps, err := r.o.Runs.ListSteps(r.ctx, "reads", 1)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range steps {
		got = append(got, fmt.Sprintf("%s#%d %s", s.StepID, s.StepAttemptID, s.RuntimeState.Status))
	}
	if fmt.Sprint(got) != "[t0#1 SUCCEEDED t1#1 SUCCEEDED]" {
		t.Errorf("steps of the latest run %v", got)
	}
	for _, c := range []struct {
		inst, run, attempt int64
		step, want         string
	}{
		{1, 1, 0, "t1", "t1#1 FATALLY_FAILED"},
		{1, 1, 1, "t1", "t1#1 FATALLY_FAILED"},
		{1, 2, 0, "t1", "t1#1 SUCCEEDED"},
		{1, 1, 1, "t0", "t0#1 SUCCEEDED n=7"},
		// Its start left to the worker's claim, which has not come: read
		// from the run's state.
		{2, 1, 0, "t0", "t0#1 RUNNING n=7"},
	} {
		v, err := r.o.Runs.GetStepAttempt(r.ctx, "reads", c.inst, c.run, c.step, c.attempt)
		if err != nil {
			t.Errorf("%+v: %v", c, err)
			continue
		}
		got := fmt.Sprintf("%s#%d %s", v.StepID, v.StepAttemptID, v.RuntimeState.Status)
		if n, ok := v.Params["n"]; ok {
			got += fmt.Sprintf(" n=%v", n)
		}
		if got != c.want {
			t.Errorf("%d/%d %s#%d: %s, want %s", c.inst, c.run, c.step, c.attempt, got, c.want)
		}
	}
	_, err = r.o.Runs.GetStepAttempt(r.ctx, "reads", 1, 1, "ghost", 0)
	wantRefusal(t, err, http.StatusNotFound, "has no attempt of step ghost")
	_, err = r.o.Runs.GetStepAttempt(r.ctx, "reads", 2, 1, "t1", 0)
	wantRefusal(t, err, http.StatusNotFound, "instance 2 run 1 has no attempt of step t1")
	_, err = r.o.Runs.ListSteps(r.ctx, "reads", 9)
	wantRefusal(t, err, http.StatusNotFound, "instance 9 not found")
}

// TestListInstancesAndWorkflows: instances list newest first, by status
// if asked, in pages whose cursor leads to the next; a bad status or
// cursor is a 400 naming the field, an unknown workflow a 404.
func TestListInstancesAndWorkflows(t *testing.T) {
	r := readRig(t)
	r.push(rigChain("other", 1))
	ids := func(l *InstanceList) string {
		out := ""
		for _, v := range l.Instances {
			out += fmt.Sprintf("%d:%s ", v.WorkflowInstanceID, v.Status)
		}
		return out
	}
	for _, c := range []struct {
		status string
		want   string
	}{
		{"", "3:STOPPED 2:IN_PROGRESS 1:SUCCEEDED "},
		{"stopped", "3:STOPPED "},
		{"FAILED", ""},
	} {
		l, err := r.o.Runs.ListInstances(r.ctx, "reads", c.status, "", 10)
		if err != nil || ids(l) != c.want || l.NextCursor != "" {
			t.Errorf("status %q: %s (next %q) %v, want %s", c.status, ids(l), l.NextCursor, err, c.want)
		}
	}
	page, err := r.o.Runs.ListInstances(r.ctx, "reads", "", "", 2)
	if err != nil || ids(page) != "3:STOPPED 2:IN_PROGRESS " || page.NextCursor == "" {
		t.Fatalf("first page %s next %q %v", ids(page), page.NextCursor, err)
	}
	if next, err := r.o.Runs.ListInstances(r.ctx, "reads", "", page.NextCursor, 2); err != nil || ids(next) != "1:SUCCEEDED " || next.NextCursor != "" {
		t.Errorf("second page %v %v", next, err)
	}
	_, err = r.o.Runs.ListInstances(r.ctx, "reads", "bogus", "", 10)
	wantRefusal(t, err, http.StatusBadRequest, `status: "bogus" is not a workflow instance status`)
	_, err = r.o.Runs.ListInstances(r.ctx, "reads", "", "not-a-cursor", 10)
	wantRefusal(t, err, http.StatusBadRequest, "cursor:")
	_, err = r.o.Runs.ListInstances(r.ctx, "nope", "", "", 10)
	wantRefusal(t, err, http.StatusNotFound, "workflow nope not found")

	wfs, err := r.o.Definitions.ListWorkflows(r.ctx, "", 1)
	if err != nil || len(wfs.Workflows) != 1 || wfs.Workflows[0].WorkflowID != "other" || wfs.NextCursor == "" {
		t.Fatalf("first workflow page %+v %v", wfs, err)
	}
	wfs, err = r.o.Definitions.ListWorkflows(r.ctx, wfs.NextCursor, 1)
	if err != nil || len(wfs.Workflows) != 1 || wfs.Workflows[0].WorkflowID != "reads" || wfs.Workflows[0].InstanceCount != 3 {
		t.Errorf("second workflow page %+v %v", wfs, err)
	}
	_, err = r.o.Definitions.ListWorkflows(r.ctx, "not a cursor!", 1)
	wantRefusal(t, err, http.StatusBadRequest, "cursor:")
}
