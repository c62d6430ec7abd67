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

// restartToRun2 posts body to the restart action at path and fails t
// unless that starts run 2 of instance id of wf and run 2 succeeds.
func (s *system) restartToRun2(t *testing.T, wf string, id int64, path, body string) orchestrator.InstanceView {
	t.Helper()
	var v orchestrator.InstanceView
	if code := s.do("POST", path, []byte(body), &v); code != http.StatusOK || v.WorkflowRunID != 2 {
		t.Fatalf("restart: HTTP %d run %d", code, v.WorkflowRunID)
	}
	v = s.wait(wf, id, 30*time.Second)
	if v.Status != "SUCCEEDED" || v.WorkflowRunID != 2 {
		t.Fatalf("run 2: %s (run %d) %v", v.Status, v.WorkflowRunID, v.StepStatuses)
	}
	return v
}

func TestRestartFromIncomplete(t *testing.T) {
	t.Parallel()
	s := startSystem(t, stack.Options{})
	first := &flaky{}             // always succeeds; counts calls
	second := &flaky{failures: 1} // fails once, then succeeds
	a, b := httptest.NewServer(first), httptest.NewServer(second)
	defer a.Close()
	defer b.Close()
	noRetry := `{"error_retry_limit": 0, "platform_retry_limit": 0}`
	wf := s.push([]byte(fmt.Sprintf(`{"properties":{"owner":"restart"},"workflow":{"id":"restart-wf","steps":[
	  {"step":{"id":"first","type":"Http","retry_policy":%s,"params":{"http":{"type":"MAP","value":{"url":{"type":"STRING","value":%q}}}},
	    "transition":{"successors":{"second":"true"}}}},
	  {"step":{"id":"second","type":"Http","retry_policy":%s,"params":{"http":{"type":"MAP","value":{"url":{"type":"STRING","value":%q}}}},
	    "transition":{"successors":{"last":"true"}}}},
	  {"step":{"id":"last","type":"NoOp"}}]}}`, noRetry, a.URL, noRetry, b.URL)))
	r := s.start(wf, "")
	if v := s.wait(wf, r.WorkflowInstanceID, 30*time.Second); v.Status != "FAILED" || v.StepStatuses["second"] != "FATALLY_FAILED" {
		t.Fatalf("run 1: %s %v", v.Status, v.StepStatuses)
	}

	// Restarting a running or succeeded instance is refused; this one failed.
	s.restartToRun2(t, wf, r.WorkflowInstanceID, fmt.Sprintf("/api/v3/workflows/%s/instances/%d/actions/restart", wf, r.WorkflowInstanceID),
		`{"restart_policy": "restart_from_incomplete"}`)
	if n := first.calls.Load(); n != 1 {
		t.Errorf("the first step was called %d times, want 1 (restart from incomplete must not call it again)", n)
	}
	if n := second.calls.Load(); n != 2 {
		t.Errorf("the failed step was called %d times, want 2", n)
	}
	// Aggregated view: the carried-over step shows its run-1 attempt.
	steps := s.steps(wf, r.WorkflowInstanceID)
	if st := steps["first"]; st.RuntimeState.Status != "SUCCEEDED" || st.WorkflowRunID != 1 {
		t.Errorf("first: %s from run %d, want SUCCEEDED from run 1", st.RuntimeState.Status, st.WorkflowRunID)
	}
	if st := steps["second"]; st.RuntimeState.Status != "SUCCEEDED" || st.WorkflowRunID != 2 {
		t.Errorf("second: %s from run %d, want SUCCEEDED from run 2", st.RuntimeState.Status, st.WorkflowRunID)
	}
	// Run 1 is still readable as it ended.
	var run1 orchestrator.InstanceView
	s.do("GET", fmt.Sprintf("/api/v3/workflows/%s/instances/%d/runs/1", wf, r.WorkflowInstanceID), nil, &run1)
	if run1.Status != "FAILED" {
		t.Errorf("run 1 now reads %s", run1.Status)
	}
	// A succeeded instance can be restarted; a bad policy names the field.
	var body map[string]any
	code := s.do("POST", fmt.Sprintf("/api/v3/workflows/%s/instances/%d/actions/restart", wf, r.WorkflowInstanceID),
		[]byte(`{"restart_policy": "sometimes"}`), &body)
	if code != http.StatusBadRequest || !strings.Contains(fmt.Sprint(body["errors"]), "restart_policy") {
		t.Errorf("bad policy: HTTP %d %v", code, body)
	}
}

func TestStepRestart(t *testing.T) {
	t.Parallel()
	s := startSystem(t, stack.Options{})
	noRetry := `{"error_retry_limit": 0, "platform_retry_limit": 0}`
	httpStep := func(id, url, succ string) string {
		return fmt.Sprintf(`{"step":{"id":%q,"type":"Http","retry_policy":%s,"params":{"http":{"type":"MAP","value":{"url":{"type":"STRING","value":%q}}}},
	    "transition":{"successors":{%s}}}}`, id, noRetry, url, succ)
	}

	t.Run("in a running run: a new attempt, then downstream", func(t *testing.T) {
		flakySrv := &flaky{failures: 1}
		srv := httptest.NewServer(flakySrv)
		defer srv.Close()
		wf := s.push([]byte(fmt.Sprintf(`{"properties":{"owner":"restart","run_strategy":"parallel"},"workflow":{"id":"step-restart-live","steps":[
		  %s, {"step":{"id":"after","type":"NoOp"}},
		  {"step":{"id":"nap","type":"Sleep","params":{"sleep_seconds":{"value":4,"type":"LONG"}}}}]}}`, httpStep("call", srv.URL, `"after":"true"`))))
		r := s.start(wf, "")
		poll(t, 20*time.Second, "call fails", func() (bool, string) {
			st := s.instance(wf, r.WorkflowInstanceID).StepStatuses
			return st["call"] == "FATALLY_FAILED", fmt.Sprint(st)
		})
		var e map[string]any
		path := fmt.Sprintf("/api/v3/workflows/%s/instances/%d/steps/%%s/actions/restart", wf, r.WorkflowInstanceID)
		if code := s.do("POST", fmt.Sprintf(path, "nap"), nil, &e); code != http.StatusConflict || !strings.Contains(fmt.Sprint(e["message"]), `action RESTART is not allowed on step "nap" in status RUNNING`) {
			t.Fatalf("restart of a running step: HTTP %d %v, want 409 naming the rule", code, e)
		}
		if code := s.do("POST", fmt.Sprintf(path, "nope"), nil, &e); code != http.StatusNotFound {
			t.Fatalf("restart of an unknown step: HTTP %d %v, want 404", code, e)
		}
		var v orchestrator.InstanceView
		if code := s.do("POST", fmt.Sprintf(path, "call"), nil, &v); code != http.StatusOK || v.WorkflowRunID != 1 {
			t.Fatalf("restart: HTTP %d run %d", code, v.WorkflowRunID)
		}
		v = s.wait(wf, r.WorkflowInstanceID, 30*time.Second)
		if v.Status != "SUCCEEDED" || v.StepStatuses["after"] != "SUCCEEDED" {
			t.Fatalf("after the step restart: %s %v", v.Status, v.StepStatuses)
		}
		if st := s.steps(wf, r.WorkflowInstanceID)["call"]; st.StepAttemptID != 2 || st.WorkflowRunID != 1 {
			t.Errorf("call: attempt %d of run %d, want attempt 2 of run 1", st.StepAttemptID, st.WorkflowRunID)
		}
		if n := flakySrv.calls.Load(); n != 2 {
			t.Errorf("call made %d requests, want 2", n)
		}
	})

	t.Run("in an ended run: a new run from that step", func(t *testing.T) {
		first, second := &flaky{}, &flaky{failures: 1}
		a, b := httptest.NewServer(first), httptest.NewServer(second)
		defer a.Close()
		defer b.Close()
		wf := s.push([]byte(fmt.Sprintf(`{"properties":{"owner":"restart"},"workflow":{"id":"step-restart-ended","steps":[
		  %s, %s, {"step":{"id":"last","type":"NoOp"}}]}}`, httpStep("first", a.URL, `"second":"true"`), httpStep("second", b.URL, `"last":"true"`))))
		r := s.start(wf, "")
		if v := s.wait(wf, r.WorkflowInstanceID, 30*time.Second); v.Status != "FAILED" {
			t.Fatalf("run 1: %s %v", v.Status, v.StepStatuses)
		}
		v := s.restartToRun2(t, wf, r.WorkflowInstanceID, fmt.Sprintf("/api/v3/workflows/%s/instances/%d/steps/second/actions/restart", wf, r.WorkflowInstanceID),
			`{"restart_policy":"RESTART_FROM_INCOMPLETE"}`)
		if n := first.calls.Load(); n != 1 {
			t.Errorf("the upstream step was called %d times, want 1", n)
		}
		// A step of a run that succeeded can be restarted too: it runs
		// again with everything downstream of it.
		if code := s.do("POST", fmt.Sprintf("/api/v3/workflows/%s/instances/%d/steps/first/actions/restart", wf, r.WorkflowInstanceID), nil, &v); code != http.StatusOK || v.WorkflowRunID != 3 {
			t.Fatalf("restart of a succeeded step: HTTP %d run %d", code, v.WorkflowRunID)
		}
		if v = s.wait(wf, r.WorkflowInstanceID, 30*time.Second); v.Status != "SUCCEEDED" || first.calls.Load() != 2 || second.calls.Load() != 3 {
			t.Fatalf("run 3: %s, calls %d/%d, want SUCCEEDED 2/3", v.Status, first.calls.Load(), second.calls.Load())
		}
	})
}
