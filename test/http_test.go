package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/localstack/stack"
)

// flaky answers 500 for the first failures calls, then 200 with a JSON body.
type flaky struct {
	failures int64
	calls    atomic.Int64
}

func (f *flaky) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := f.calls.Add(1)
	if n <= f.failures {
		http.Error(w, "try again", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"answer": 42, "call": %d}`, n)
}

// httpWorkflow has an Http step "call" (the given retry policy and failure
// mode) followed by "after", and a Sleep(sleep) step "nap" beside them.
func httpWorkflow(id, url, retry, mode string, sleep int) []byte {
	if mode != "" {
		mode = fmt.Sprintf(`"failure_mode": %q,`, mode)
	}
	return []byte(fmt.Sprintf(`{"properties":{"owner":"http-e2e","run_strategy":"parallel"},"workflow":{"id":%q,"steps":[
	  {"step":{"id":"call","type":"Http",%s "retry_policy": %s,
	    "params":{"http":{"type":"MAP","value":{"url":{"type":"STRING","value":%q},"method":{"type":"STRING","value":"GET"}}}},
	    "transition":{"successors":{"after":"true"}}}},
	  {"step":{"id":"after","type":"NoOp"}},
	  {"step":{"id":"nap","type":"Sleep","params":{"sleep_seconds":{"value":%d,"type":"LONG"}}}}]}}`, id, mode, retry, url, sleep))
}

const fastRetries = `{"error_retry_limit": %d, "platform_retry_limit": 0, "backoff": {"type": "FIXED_BACKOFF", "error_retry_backoff_in_secs": 1}}`

// TestHttpRetriesAndFailureModes: retries, their exhaustion and the failure
// modes of an Http step. The retries' 1-second backoffs and the 1-second
// Sleep after the call are timers the stack's clock skips to
// (waitSkipping).
func TestHttpRetriesAndFailureModes(t *testing.T) {
	t.Parallel()
	s := startSystem(t, stack.Options{})

	t.Run("fails twice then succeeds on attempt 3", func(t *testing.T) {
		srv := httptest.NewServer(&flaky{failures: 2})
		defer srv.Close()
		wf, r, v := s.runSkipping(httpWorkflow("http-flaky", srv.URL, fmt.Sprintf(fastRetries, 3), "", 1), 60*time.Second)
		wantEnd(t, v, "SUCCEEDED", nil)
		call := s.steps(wf, r.WorkflowInstanceID)["call"]
		if call.StepAttemptID != 3 || call.RuntimeState.Status != "SUCCEEDED" {
			t.Fatalf("call: attempt %d %s, want attempt 3 SUCCEEDED", call.StepAttemptID, call.RuntimeState.Status)
		}
		if fmt.Sprint(call.Outputs["answer"]) != "42" || fmt.Sprint(call.Outputs["status_code"]) != "200" {
			t.Errorf("outputs %v", call.Outputs)
		}
		// The earlier attempts stay readable.
		for a := 1; a <= 2; a++ {
			var att struct {
				StepAttemptID int64 `json:"step_attempt_id"`
				RuntimeState  struct {
					Status string `json:"status"`
				} `json:"runtime_state"`
			}
			path := fmt.Sprintf("/api/v3/workflows/%s/instances/%d/runs/1/steps/call/attempts/%d", wf, r.WorkflowInstanceID, a)
			if code := s.do("GET", path, nil, &att); code != 200 || att.RuntimeState.Status != "USER_FAILED" || att.StepAttemptID != int64(a) {
				t.Errorf("attempt %d: HTTP %d %+v", a, code, att)
			}
		}
	})

	t.Run("retries exhausted", func(t *testing.T) {
		srv := httptest.NewServer(&flaky{failures: 1000})
		defer srv.Close()
		wf, r, v := s.runSkipping(httpWorkflow("http-exhausted", srv.URL, fmt.Sprintf(fastRetries, 1), "", 1), 60*time.Second)
		wantEnd(t, v, "FAILED", map[string]string{"call": "FATALLY_FAILED", "after": "UNSATISFIED"})
		if s.steps(wf, r.WorkflowInstanceID)["call"].StepAttemptID != 2 {
			t.Errorf("want 2 attempts (1 retry)")
		}
	})

	t.Run("IGNORE_FAILURE", func(t *testing.T) {
		srv := httptest.NewServer(&flaky{failures: 1000})
		defer srv.Close()
		_, _, v := s.runSkipping(httpWorkflow("http-ignore", srv.URL, fmt.Sprintf(fastRetries, 0), "ignore_failure", 1), 60*time.Second)
		wantEnd(t, v, "SUCCEEDED", map[string]string{"call": "COMPLETED_WITH_ERROR", "after": "SUCCEEDED"})
	})

	t.Run("FAIL_IMMEDIATELY stops a sleeping sibling at once", func(t *testing.T) {
		srv := httptest.NewServer(&flaky{failures: 1000})
		defer srv.Close()
		wf := s.push(httpWorkflow("http-immediate", srv.URL, fmt.Sprintf(fastRetries, 0), "fail_immediately", 3600))
		t0 := time.Now()
		r := s.start(wf, "")
		v := s.wait(wf, r.WorkflowInstanceID, 60*time.Second)
		wantEnd(t, v, "FAILED", map[string]string{"nap": "STOPPED", "call": "FATALLY_FAILED"})
		if d := time.Since(t0); d > 30*time.Second {
			t.Errorf("took %s: the hour-long sleep was not stopped at once", d)
		}
	})

	// Maestro's default state_expr: a 4xx is FATAL_ERROR (not retried), any
	// other non-2xx a USER_ERROR (retried per error_retry_limit).
	for _, tc := range []struct {
		code      int
		wantCalls int64
	}{{http.StatusNotFound, 1}, {http.StatusServiceUnavailable, 3}} {
		t.Run(fmt.Sprintf("HTTP %d under error_retry_limit 2", tc.code), func(t *testing.T) {
			var calls atomic.Int64
			var contentType, accept atomic.Value
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				calls.Add(1)
				contentType.Store(r.Header.Get("Content-Type"))
				accept.Store(r.Header.Get("Accept"))
				w.WriteHeader(tc.code)
			}))
			defer srv.Close()
			wf, r, v := s.runSkipping(httpWorkflow(fmt.Sprintf("http-status-%d", tc.code), srv.URL, fmt.Sprintf(fastRetries, 2), "", 1), 60*time.Second)
			call := s.steps(wf, r.WorkflowInstanceID)["call"]
			if v.Status != "FAILED" || call.RuntimeState.Status != "FATALLY_FAILED" {
				t.Fatalf("instance %s, call %s: want FAILED, FATALLY_FAILED", v.Status, call.RuntimeState.Status)
			}
			if n := calls.Load(); n != tc.wantCalls || call.StepAttemptID != tc.wantCalls {
				t.Errorf("server called %d times, last attempt %d; want %d", n, call.StepAttemptID, tc.wantCalls)
			}
			if contentType.Load() != "application/json" || accept.Load() != "application/json" {
				t.Errorf("headers Content-Type %q, Accept %q; want Maestro's application/json defaults", contentType.Load(), accept.Load())
			}
		})
	}

	t.Run("host not on the allow-list", func(t *testing.T) {
		wf, r, v := s.runSkipping(httpWorkflow("http-denied", "http://example.com/", fmt.Sprintf(fastRetries, 3), "", 1), 60*time.Second)
		call := s.steps(wf, r.WorkflowInstanceID)["call"]
		if v.Status != "FAILED" || call.RuntimeState.Status != "FATALLY_FAILED" || call.StepAttemptID != 1 {
			t.Fatalf("instance %s, call attempt %d %s", v.Status, call.StepAttemptID, call.RuntimeState.Status)
		}
	})
}

func TestOutputData(t *testing.T) {
	t.Parallel()
	s := startSystem(t, stack.Options{})
	// The external job reports its outputs through the API while the Http
	// call that started it is still open, then answers.
	var reported atomic.Int64
	job := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := fmt.Sprintf(`{"workflow_id":"output-data","workflow_instance_id":%s,"step_id":"call","external_job_type":"test","external_job_id":"job-1",
		  "params":{"answer":{"evaluated_result":42,"type":"LONG"},"table":{"value":"db.t1","type":"STRING"}}}`, r.URL.Query().Get("inst"))
		req, _ := http.NewRequest("PUT", s.st.URL+"/api/v3/output-data", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			reported.Store(int64(resp.StatusCode))
			resp.Body.Close()
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"answer": 1, "rows": 10}`)
	}))
	defer job.Close()
	wf := s.push([]byte(fmt.Sprintf(`{"properties":{"owner":"od"},"workflow":{"id":"output-data","steps":[
	  {"step":{"id":"call","type":"Http","params":{"http":{"type":"MAP","value":{"url":{"type":"STRING","value":"%s/?inst=${workflow_instance_id}"}}}},
	    "transition":{"successors":{"after":"true"}}}},
	  {"step":{"id":"after","type":"NoOp","params":{"got":{"type":"LONG","expression":"params.getFromStep(\"call\", \"answer\")"}}}}]}}`, job.URL)))
	r := s.start(wf, "")
	if v := s.wait(wf, r.WorkflowInstanceID, 30*time.Second); v.Status != "SUCCEEDED" {
		t.Fatalf("instance %s: %v", v.Status, v.StepStatuses)
	}
	if code := reported.Load(); code != 200 {
		t.Fatalf("PUT /api/v3/output-data answered %d", code)
	}
	steps := s.steps(wf, r.WorkflowInstanceID)
	call := steps["call"]
	if fmt.Sprint(call.Outputs["answer"]) != "42" || fmt.Sprint(call.Outputs["table"]) != "db.t1" || fmt.Sprint(call.Outputs["rows"]) != "10" {
		t.Fatalf("outputs %v: want answer 42 and table from the output data, rows from the response", call.Outputs)
	}
	if got := fmt.Sprint(steps["after"].Params["got"]); got != "42" {
		t.Errorf("downstream saw call__answer = %s, want 42", got)
	}
	// Output data for an attempt that ended is refused.
	var e map[string]any
	late := fmt.Sprintf(`{"workflow_id":"output-data","workflow_instance_id":%d,"step_id":"call","params":{"x":{"value":1}}}`, r.WorkflowInstanceID)
	if code := s.do("PUT", "/api/v3/output-data", []byte(late), &e); code != http.StatusConflict {
		t.Fatalf("late output data: HTTP %d %v, want 409", code, e)
	}
}
