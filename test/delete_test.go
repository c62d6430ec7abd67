package e2e

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/localstack/stack"
)

func TestDeleteWorkflow(t *testing.T) {
	t.Parallel()
	s := startSystem(t, stack.Options{})
	def := func(secs int) []byte {
		return []byte(fmt.Sprintf(`{"properties":{"owner":"del","run_strategy":"parallel"},"workflow":{"id":"del-wf","steps":[
		  {"step":{"id":"s","type":"Sleep","params":{"sleep_seconds":{"value":%d,"type":"LONG"}}}}]}}`, secs))
	}
	wf := s.push(def(600))
	s.push(def(0))
	var long struct {
		WorkflowInstanceID int64 `json:"workflow_instance_id"`
	}
	if code := s.do("POST", "/api/v3/workflows/"+wf+"/versions/1/actions/start", nil, &long); code != 200 {
		t.Fatalf("start version 1: HTTP %d", code)
	}
	done := s.start(wf, "")
	if v := s.wait(wf, done.WorkflowInstanceID, 30*time.Second); v.Status != "SUCCEEDED" {
		t.Fatalf("short run %s", v.Status)
	}
	var e map[string]any
	if code := s.do("DELETE", "/api/v3/workflows/"+wf, nil, &e); code != http.StatusConflict {
		t.Fatalf("delete with a running instance: HTTP %d %v, want 409", code, e)
	}
	if code := s.do("PUT", fmt.Sprintf("/api/v3/workflows/%s/instances/%d/actions/kill", wf, long.WorkflowInstanceID), nil, nil); code != 200 {
		t.Fatalf("kill: HTTP %d", code)
	}
	s.wait(wf, long.WorkflowInstanceID, 30*time.Second)
	var res struct {
		WorkflowID string `json:"workflow_id"`
		Status     string `json:"status"`
	}
	if code := s.do("DELETE", "/api/v3/workflows/"+wf, nil, &res); code != http.StatusAccepted || res.Status != "DELETING" {
		t.Fatalf("delete: HTTP %d %+v", code, res)
	}
	if code := s.do("GET", "/api/v3/workflows/"+wf+"/versions/latest", nil, &e); code != http.StatusNotFound {
		t.Fatalf("version after delete: HTTP %d", code)
	}
	if code := s.do("POST", "/api/v3/workflows/"+wf+"/versions/latest/actions/start", nil, &e); code != http.StatusNotFound {
		t.Fatalf("start after delete: HTTP %d", code)
	}
	if code := s.do("DELETE", "/api/v3/workflows/"+wf, nil, &e); code != http.StatusNotFound {
		t.Fatalf("second delete: HTTP %d %v", code, e)
	}
	// The purge runs in the background (stream -> router -> work queue ->
	// worker); once it is done the id can be pushed again, and the new
	// workflow continues the old version and instance numbers.
	var defResp struct {
		WorkflowDefinition struct {
			Metadata struct {
				Version int64 `json:"workflow_version_id"`
			} `json:"metadata"`
		} `json:"workflow_definition"`
	}
	poll(t, 30*time.Second, "re-push after the purge", func() (bool, string) {
		code := s.do("POST", "/api/v3/workflows", def(0), &defResp)
		if code != http.StatusOK && code != http.StatusConflict {
			t.Fatalf("push after delete: HTTP %d", code)
		}
		return code == http.StatusOK, fmt.Sprintf("HTTP %d", code)
	})
	if v := defResp.WorkflowDefinition.Metadata.Version; v != 3 {
		t.Errorf("version after re-push %d, want 3", v)
	}
	if code := s.do("GET", fmt.Sprintf("/api/v3/workflows/%s/instances/%d", wf, done.WorkflowInstanceID), nil, &e); code != http.StatusNotFound {
		t.Errorf("old instance after purge: HTTP %d", code)
	}
	r := s.start(wf, "")
	if r.WorkflowInstanceID != 3 {
		t.Errorf("instance id after re-push %d, want 3", r.WorkflowInstanceID)
	}
	if v := s.wait(wf, r.WorkflowInstanceID, 30*time.Second); v.Status != "SUCCEEDED" {
		t.Fatalf("run after re-push %s", v.Status)
	}
}
