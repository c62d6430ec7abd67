package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/localstack/stack"
)

// failImmediatelyStep is an Http step "bad" that calls url and fails the
// run with FAIL_IMMEDIATELY when it gets an error. A call that times out
// (30 s, a platform error) is made again, 10 times at most: url is held
// until every other step started (heldFailure), which can take longer on a
// loaded machine, and a timeout must not end the run before.
func failImmediatelyStep(url string) string {
	return fmt.Sprintf(`{"step":{"id":"bad","type":"Http","failure_mode":"fail_immediately",
	  "retry_policy":{"error_retry_limit":0,"platform_retry_limit":10,"backoff":{"type":"FIXED_BACKOFF","platform_retry_backoff_in_secs":1}},
	  "params":{"http":{"type":"MAP","value":{"url":{"type":"STRING","value":%q}}}}}}`, url)
}

// endBound is how long after its cause a wide run may take to end. The
// runs ended within 0.1-2.5 s of it on two cores shared with the rest of
// the suite and other work (load average 13-30), 30 s at the worst seen;
// issue 12's acceptance was 30 s on an idle machine, and the failure these
// tests guard against is a run that never ends. Each test logs its figure.
const endBound = 2 * time.Minute

// heldFailure serves 404 to every call once release is called (so a test
// can let every other step start first); it is closed when t ends.
func heldFailure(t *testing.T) (url string, release func()) {
	t.Helper()
	ch := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-ch:
		case <-r.Context().Done():
		}
		w.WriteHeader(http.StatusNotFound)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, sync.OnceFunc(func() { close(ch) })
}

// act sends a run action (stop, kill, ...) and fails the test unless it
// is accepted.
func (s *system) act(wf string, id int64, action string) {
	s.t.Helper()
	var e map[string]any
	if code := s.do("PUT", fmt.Sprintf("/api/v3/workflows/%s/instances/%d/actions/%s", wf, id, action), nil, &e); code != http.StatusOK {
		s.t.Fatalf("%s: HTTP %d %v", action, code, e)
	}
}

// wideWorkflow has n 10-minute Sleep steps side by side (all in flight at
// once; their timers ride SQS delays, not a Scheduler schedule each, which
// the router creates one at a time) and, with failURL, an Http step that fails with FAIL_IMMEDIATELY.
func wideWorkflow(id string, n int, timeout int, failURL string) []byte {
	var steps []string
	if failURL != "" {
		steps = append(steps, failImmediatelyStep(failURL))
	}
	for i := 0; i < n; i++ {
		steps = append(steps, fmt.Sprintf(`{"step":{"id":"s%03d","type":"Sleep","params":{"sleep_seconds":{"value":600,"type":"LONG"}}}}`, i))
	}
	t := ""
	if timeout > 0 {
		t = fmt.Sprintf(`"timeout":%d,`, timeout)
	}
	return []byte(fmt.Sprintf(`{"properties":{"owner":"wide","run_strategy":"parallel"},"workflow":{"id":%q,%s
	  "instance_step_concurrency":999,"steps":[%s]}}`, id, t, strings.Join(steps, ",")))
}

// TestEndingAWideRun: stop and kill with 120 and 300 steps in flight (a
// definition's most), workflow timeout and FAIL_IMMEDIATELY with 120, end
// the run soon after their cause (endBound). Each moved every step
// in one decision before, whose transaction passed DynamoDB's 100 items and
// failed on every retry: the run stayed IN_PROGRESS for good.
func TestEndingAWideRun(t *testing.T) {
	s := startParallelSystem(t, stack.Options{})
	running := func(wf string, id int64, n int) {
		t.Helper()
		poll(t, 60*time.Second, fmt.Sprintf("%d steps running", n), func() (bool, string) {
			k := 0
			for _, st := range s.instance(wf, id).StepStatuses {
				if st == "RUNNING" {
					k++
				}
			}
			return k >= n, fmt.Sprintf("%d running", k)
		})
	}
	// ended checks that the run ends within endBound of t0, when what
	// ends it happened.
	ended := func(wf string, id int64, status, stepStatus string, n int, t0 time.Time) {
		t.Helper()
		v := s.wait(wf, id, time.Until(t0.Add(endBound)))
		if v.Status != status {
			t.Fatalf("instance %s, want %s", v.Status, status)
		}
		k := 0
		for sid, st := range v.StepStatuses {
			if strings.HasPrefix(sid, "s") && st == stepStatus {
				k++
			}
		}
		if k != n {
			t.Errorf("%d of %d steps %s", k, n, stepStatus)
		}
		t.Logf("%s with %d steps in flight ended %s %s after its cause", wf, n, status, time.Since(t0).Round(time.Millisecond))
	}

	for _, n := range []int{120, 300} {
		for _, a := range []struct{ action, status, stepStatus string }{
			{"kill", "FAILED", "FATALLY_FAILED"},
			{"stop", "STOPPED", "STOPPED"},
		} {
			t.Run(fmt.Sprintf("%s %d", a.action, n), func(t *testing.T) {
				wf := s.push(wideWorkflow(fmt.Sprintf("wide-%s-%d", a.action, n), n, 0, ""))
				r := s.start(wf, "")
				running(wf, r.WorkflowInstanceID, n)
				t0 := time.Now()
				s.act(wf, r.WorkflowInstanceID, a.action)
				ended(wf, r.WorkflowInstanceID, a.status, a.stepStatus, n, t0)
			})
		}
	}
	// The timeout and FAIL_IMMEDIATELY wait for a timer or a step's result
	// to come through the stream behind every record the wide start wrote;
	// at 300 steps that alone took 20 s of the 30 on a loaded machine.
	// The ending itself is the same code as kill's, tested at 300 above.
	for _, n := range []int{120} {
		t.Run(fmt.Sprintf("workflow timeout %d", n), func(t *testing.T) {
			// Time to start every step first. The stack's clock then
			// moves to the timeout; where it cannot move SQS delays
			// (LocalStack), the timeout comes in real time.
			timeout := 300
			if !s.st.Emulator.CanAdvanceQueueDelays() {
				timeout = 5 + n/20
			}
			wf := s.push(wideWorkflow(fmt.Sprintf("wide-timeout-%d", n), n, timeout, ""))
			started := time.Now()
			r := s.start(wf, "")
			running(wf, r.WorkflowInstanceID, n)
			due := s.advanceTimers(t, time.Duration(timeout)*time.Second, started)
			ended(wf, r.WorkflowInstanceID, "TIMED_OUT", "TIMED_OUT", n, due)
		})
	}
	for _, n := range []int{120} {
		t.Run(fmt.Sprintf("FAIL_IMMEDIATELY %d", n), func(t *testing.T) {
			url, release := heldFailure(t) // answers once every sleep runs
			wf := s.push(wideWorkflow(fmt.Sprintf("wide-fail-%d", n), n, 0, url))
			r := s.start(wf, "")
			running(wf, r.WorkflowInstanceID, n)
			t0 := time.Now()
			release()
			ended(wf, r.WorkflowInstanceID, "FAILED", "STOPPED", n, t0)
		})
	}
}
