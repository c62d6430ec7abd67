package e2e

import (
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/localstack/stack"
	"github.com/maestro-serverless/maestro/orchestrator"
)

func sleeper(id, strategy string, secs int) []byte {
	props := `"owner":"rs"`
	if strategy != "" {
		props += `,"run_strategy":` + strategy
	}
	return []byte(fmt.Sprintf(`{"properties":{%s},"workflow":{"id":%q,"steps":[
	  {"step":{"id":"s","type":"Sleep","params":{"sleep_seconds":{"value":%d,"type":"LONG"}}}}]}}`, props, id, secs))
}

// watch starts n instances and samples their statuses until all ended
// (skipping to their timers, see pollSkipping), returning the most that
// ran at once and the final statuses.
func watch(t *testing.T, s *system, wf string, n int) (maxRunning int, final []string) {
	t.Helper()
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = s.start(wf, "").WorkflowInstanceID
	}
	var views []orchestrator.InstanceView
	s.pollSkipping(t, 60*time.Second, "every instance ends", func() (bool, string) {
		ended := 0
		final, views = final[:0], views[:0]
		for _, id := range ids {
			v := s.instance(wf, id)
			final = append(final, v.Status)
			views = append(views, v)
			switch v.Status {
			case "SUCCEEDED", "FAILED", "STOPPED", "TIMED_OUT":
				ended++
			}
		}
		return ended == n, fmt.Sprint(final)
	})
	// How many ran at once, from the runs' own start and end times: reading
	// the statuses one after the other cannot tell (a run read IN_PROGRESS
	// may have ended before the next one is read).
	for _, v := range views {
		if v.StartTime == 0 {
			continue // never ran (stopped while queued)
		}
		at := 0
		for _, o := range views {
			if o.StartTime != 0 && o.StartTime <= v.StartTime && v.StartTime < o.EndTime {
				at++
			}
		}
		maxRunning = max(maxRunning, at)
	}
	return maxRunning, final
}

// wantFinals starts n instances of wf (watch) and fails t unless they end
// in the statuses want, in their order.
func wantFinals(t *testing.T, s *system, wf string, n int, want string) {
	t.Helper()
	if _, final := watch(t, s, wf, n); fmt.Sprint(final) != want {
		t.Fatalf("final %v, want %s", final, want)
	}
}

func TestRunStrategies(t *testing.T) {
	// Its sleepers (skipped to, see watch) leave it mostly idle: it runs
	// beside the sample tests.
	s := startParallelSystem(t, stack.Options{})

	t.Run("SEQUENTIAL is the default: one run at a time, in order", func(t *testing.T) {
		wf := s.push(sleeper("rs-seq", "", 1))
		most, final := watch(t, s, wf, 3)
		if most != 1 || fmt.Sprint(final) != "[SUCCEEDED SUCCEEDED SUCCEEDED]" {
			t.Fatalf("at most %d in progress, final %v", most, final)
		}
		var prevEnd int64
		for id := int64(1); id <= 3; id++ {
			v := s.instance(wf, id)
			if v.StartTime < prevEnd {
				t.Errorf("instance %d started at %d before the previous ended at %d", id, v.StartTime, prevEnd)
			}
			prevEnd = v.EndTime
		}
	})

	t.Run("PARALLEL with workflow_concurrency 2", func(t *testing.T) {
		wf := s.push(sleeper("rs-par", `{"rule":"parallel","workflow_concurrency":2}`, 2))
		most, final := watch(t, s, wf, 4)
		if most != 2 || fmt.Sprint(final) != "[SUCCEEDED SUCCEEDED SUCCEEDED SUCCEEDED]" {
			t.Fatalf("at most %d in progress, final %v", most, final)
		}
	})

	t.Run("FIRST_ONLY stops a newcomer while one runs", func(t *testing.T) {
		wf := s.push(sleeper("rs-first", `"first_only"`, 2))
		wantFinals(t, s, wf, 2, "[SUCCEEDED STOPPED]")
	})

	t.Run("a queued instance can be stopped at once", func(t *testing.T) {
		wf := s.push(sleeper("rs-queued-stop", "", 3))
		first := s.start(wf, "").WorkflowInstanceID
		second := s.start(wf, "").WorkflowInstanceID
		if v := s.instance(wf, second); v.Status != "CREATED" {
			t.Fatalf("second instance is %s, want CREATED (queued)", v.Status)
		}
		var v struct {
			Status string `json:"status"`
		}
		if code := s.do("PUT", fmt.Sprintf("/api/v3/workflows/%s/instances/%d/actions/stop", wf, second), nil, &v); code != 200 || v.Status != "STOPPED" {
			t.Fatalf("stop queued: HTTP %d status %s", code, v.Status)
		}
		if got := s.waitSkipping(wf, first, 30*time.Second); got.Status != "SUCCEEDED" {
			t.Errorf("first instance %s", got.Status)
		}
	})

	t.Run("LAST_ONLY: a new run stops the older one", func(t *testing.T) {
		wf := s.push(sleeper("rs-last", `"last_only"`, 600))
		first := s.start(wf, "").WorkflowInstanceID
		second := s.start(wf, "").WorkflowInstanceID
		if v := s.wait(wf, first, 30*time.Second); v.Status != "STOPPED" {
			t.Fatalf("older run %s, want STOPPED", v.Status)
		}
		poll(t, 30*time.Second, "the newer run is IN_PROGRESS", func() (bool, string) {
			st := s.instance(wf, second).Status
			return st == "IN_PROGRESS", st
		})
	})

	t.Run("SERIAL_LATEST_ONLY: older queued runs give way, the running one goes on", func(t *testing.T) {
		wf := s.push(sleeper("rs-serial-latest", `"serial_latest_only"`, 2))
		wantFinals(t, s, wf, 3, "[SUCCEEDED STOPPED SUCCEEDED]")
	})

	t.Run("workflow-wide stop reaches running and queued runs", func(t *testing.T) {
		wf := s.push(sleeper("rs-stop-all", `{"rule":"parallel","workflow_concurrency":2}`, 600))
		ids := []int64{s.start(wf, "").WorkflowInstanceID, s.start(wf, "").WorkflowInstanceID, s.start(wf, "").WorkflowInstanceID}
		var out struct {
			N int `json:"workflow_instances"`
		}
		if code := s.do("PUT", "/api/v3/workflows/"+wf+"/actions/stop", nil, &out); code != 202 || out.N != 3 {
			t.Fatalf("stop all: HTTP %d, %d instances", code, out.N)
		}
		for _, id := range ids {
			if v := s.wait(wf, id, 30*time.Second); v.Status != "STOPPED" {
				t.Errorf("instance %d: %s", id, v.Status)
			}
		}
	})

	// Maestro's samples with their own strategies (STRICT_SEQUENTIAL,
	// LAST_ONLY, LAST_ONLY with concurrency 1), three instances each: NoOp
	// runs finish within their start, so every one succeeds, in order.
	for _, file := range []string{"sample-dag-test-4.json", "sample-dag-test-6.json", "sample-dag-test-9.json"} {
		t.Run(file, func(t *testing.T) {
			wf := s.push(readFile(t, file))
			wantFinals(t, s, wf, 3, "[SUCCEEDED SUCCEEDED SUCCEEDED]")
		})
	}
}

// strictHTTP is a STRICT_SEQUENTIAL workflow with one Http step that fails
// on a user error without retries.
func strictHTTP(id, url string) []byte {
	return []byte(fmt.Sprintf(`{"properties":{"owner":"rs","run_strategy":"strict_sequential"},"workflow":{"id":%q,"steps":[
	  {"step":{"id":"call","type":"Http","retry_policy":{"error_retry_limit":0,"platform_retry_limit":0},
	    "params":{"http":{"type":"MAP","value":{"url":{"type":"STRING","value":%q},"method":{"type":"STRING","value":"GET"}}}}}}]}}`, id, url))
}

func TestStrictSequentialBlocksAfterFailure(t *testing.T) {
	t.Parallel()
	s := startSystem(t, stack.Options{})
	blocked := func(wf string, id int64) {
		t.Helper()
		s.idle(t) // a wrongly admitted run would have started by now
		if v := s.instance(wf, id); v.Status != "CREATED" {
			t.Fatalf("instance %d is %s, want CREATED (blocked behind the failed run)", id, v.Status)
		}
	}

	// failedFirst pushes strictHTTP(id, url) and runs its first instance,
	// which fails and so blocks the ones after it.
	failedFirst := func(t *testing.T, id, url string) (string, int64) {
		t.Helper()
		wf := s.push(strictHTTP(id, url))
		first := s.start(wf, "").WorkflowInstanceID
		if v := s.wait(wf, first, 30*time.Second); v.Status != "FAILED" {
			t.Fatalf("first run %s, want FAILED", v.Status)
		}
		return wf, first
	}

	t.Run("unblock lets the queue go on", func(t *testing.T) {
		srv := httptest.NewServer(&flaky{failures: 1})
		defer srv.Close()
		wf, first := failedFirst(t, "rs-strict", srv.URL)
		second, third := s.start(wf, "").WorkflowInstanceID, s.start(wf, "").WorkflowInstanceID
		blocked(wf, second)
		var e map[string]any
		if code := s.do("PUT", fmt.Sprintf("/api/v3/workflows/%s/instances/%d/actions/unblock", wf, second), nil, &e); code != 409 {
			t.Fatalf("unblock of a queued instance: HTTP %d %v, want 409", code, e)
		}
		var v struct {
			Status string `json:"status"`
		}
		if code := s.do("PUT", fmt.Sprintf("/api/v3/workflows/%s/instances/%d/actions/unblock", wf, first), nil, &v); code != 200 || v.Status != "FAILED" {
			t.Fatalf("unblock: HTTP %d status %s", code, v.Status)
		}
		for _, id := range []int64{second, third} {
			if got := s.wait(wf, id, 30*time.Second); got.Status != "SUCCEEDED" {
				t.Fatalf("instance %d %s after unblock", id, got.Status)
			}
		}
		if code := s.do("PUT", fmt.Sprintf("/api/v3/workflows/%s/instances/%d/actions/unblock", wf, first), nil, &e); code != 409 {
			t.Fatalf("second unblock: HTTP %d %v, want 409", code, e)
		}
	})

	t.Run("a restart of the failed run takes its slot", func(t *testing.T) {
		srv := httptest.NewServer(&flaky{failures: 1})
		defer srv.Close()
		wf, first := failedFirst(t, "rs-strict-restart", srv.URL)
		second := s.start(wf, "").WorkflowInstanceID
		blocked(wf, second)
		var v struct {
			RunID int64 `json:"workflow_run_id"`
		}
		if code := s.do("POST", fmt.Sprintf("/api/v3/workflows/%s/instances/%d/actions/restart", wf, first), []byte(`{}`), &v); code != 200 || v.RunID != 2 {
			t.Fatalf("restart: HTTP %d run %d", code, v.RunID)
		}
		if got := s.wait(wf, first, 30*time.Second); got.Status != "SUCCEEDED" || got.WorkflowRunID != 2 {
			t.Fatalf("restarted run %d %s", got.WorkflowRunID, got.Status)
		}
		if got := s.wait(wf, second, 30*time.Second); got.Status != "SUCCEEDED" {
			t.Fatalf("queued instance %s after the restart succeeded", got.Status)
		}
		a, b := s.instance(wf, first), s.instance(wf, second)
		if b.StartTime < a.EndTime {
			t.Errorf("the queued instance started at %d before the restarted run ended at %d", b.StartTime, a.EndTime)
		}
	})
}
