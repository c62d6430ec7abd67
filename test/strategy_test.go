package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/localstack/stack"
)

func sleeper(id, strategy string, secs int) []byte {
	props := `"owner":"rs"`
	if strategy != "" {
		props += `,"run_strategy":` + strategy
	}
	return []byte(fmt.Sprintf(`{"properties":{%s},"workflow":{"id":%q,"steps":[
	  {"step":{"id":"s","type":"Sleep","params":{"sleep_seconds":{"value":%d,"type":"LONG"}}}}]}}`, props, id, secs))
}

// watch starts n instances and samples their statuses until all ended,
// returning the most seen IN_PROGRESS at once and the final statuses.
func watch(t *testing.T, s *system, wf string, n int) (maxRunning int, final []string) {
	t.Helper()
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = s.start(wf, "").WorkflowInstanceID
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		running, ended := 0, 0
		final = final[:0]
		for _, id := range ids {
			v := s.instance(wf, id)
			final = append(final, v.Status)
			switch v.Status {
			case "IN_PROGRESS":
				running++
			case "SUCCEEDED", "FAILED", "STOPPED", "TIMED_OUT":
				ended++
			}
		}
		maxRunning = max(maxRunning, running)
		if ended == n {
			return maxRunning, final
		}
		if time.Now().After(deadline) {
			t.Fatalf("instances still running: %v", final)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestRunStrategies(t *testing.T) {
	s := startSystem(t, stack.Options{})

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
		_, final := watch(t, s, wf, 2)
		if fmt.Sprint(final) != "[SUCCEEDED STOPPED]" {
			t.Fatalf("final %v, want [SUCCEEDED STOPPED]", final)
		}
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
		if got := s.wait(wf, first, 30*time.Second); got.Status != "SUCCEEDED" {
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
		deadline := time.Now().Add(30 * time.Second)
		for s.instance(wf, second).Status != "IN_PROGRESS" {
			if time.Now().After(deadline) {
				t.Fatalf("newer run is %s, want IN_PROGRESS", s.instance(wf, second).Status)
			}
			time.Sleep(100 * time.Millisecond)
		}
	})

	t.Run("SERIAL_LATEST_ONLY: older queued runs give way, the running one goes on", func(t *testing.T) {
		wf := s.push(sleeper("rs-serial-latest", `"serial_latest_only"`, 2))
		_, final := watch(t, s, wf, 3)
		if fmt.Sprint(final) != "[SUCCEEDED STOPPED SUCCEEDED]" {
			t.Fatalf("final %v, want [SUCCEEDED STOPPED SUCCEEDED]", final)
		}
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
			_, final := watch(t, s, wf, 3)
			if fmt.Sprint(final) != "[SUCCEEDED SUCCEEDED SUCCEEDED]" {
				t.Fatalf("final %v", final)
			}
		})
	}
}
