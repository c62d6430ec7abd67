package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/localstack/stack"
)

// wideLoops has loops foreach steps side by side, each with per iterations
// of a 10-minute Sleep all in flight at once, a workflow timeout when
// timeout > 0 and, with failURL, an Http step that fails with
// FAIL_IMMEDIATELY once failURL answers.
func wideLoops(id string, loops, per, timeout int, failURL string) []byte {
	var steps []string
	if failURL != "" {
		steps = append(steps, failImmediatelyStep(failURL))
	}
	for l := 0; l < loops; l++ {
		steps = append(steps, fmt.Sprintf(`{"foreach":{"id":"loop%d","concurrency":%d,
		  "params":{"loop_params":{"type":"MAP","value":{"i":{"type":"LONG_ARRAY","expression":"Util.intsBetween(0, %d, 1)"}}}},
		  "steps":[{"step":{"id":"nap%d","type":"Sleep","params":{"sleep_seconds":{"type":"LONG","value":600}}}}]}}`, l, per, per, l))
	}
	t := ""
	if timeout > 0 {
		t = fmt.Sprintf(`"timeout":%d,`, timeout)
	}
	return []byte(fmt.Sprintf(`{"properties":{"owner":"wide"},"workflow":{"id":%q,%s"instance_step_concurrency":999,"steps":[%s]}}`,
		id, t, strings.Join(steps, ",")))
}

// The workflow timeout and FAIL_IMMEDIATELY with 500 iterations in flight
// and kill with 1,000 end the run soon after their cause (issue 12's
// acceptance, beside TestEndingAWideRun's 120 and 300 steps; stop takes the
// same path as kill with another status; endBound). Each case is a test
// of its own on an emulator of its own (see startParallelSystem), so the
// three run side by side: together, one after the other on one stack, they
// were the end-to-end package's longest test by far (228 s of its 356 s).

// TestEndingWideLoopsOnTimeout: a workflow timeout with 500 iterations in
// flight ends the run within endBound.
func TestEndingWideLoopsOnTimeout(t *testing.T) {
	s := startParallelSystem(t, stack.Options{})
	// Time for every iteration to start first. The stack's clock then
	// moves to the timeout; where it cannot move SQS delays (LocalStack),
	// the timeout comes in real time.
	timeout := 300
	if !s.st.Emulator.CanAdvanceQueueDelays() {
		timeout = 40
	}
	wf := s.push(wideLoops("loops-timeout", 1, 500, timeout, ""))
	t0 := time.Now()
	r := s.start(wf, "")
	iterationsStarted(t, s, iterationsInFlight(t, s, wf, r.WorkflowInstanceID, 1, 500), 500)
	if left := time.Until(t0.Add(time.Duration(timeout) * time.Second)); left < 0 {
		t.Fatalf("the iterations took %s longer than the workflow timeout to start", -left)
	} else {
		t.Logf("every iteration started %s before the timeout", left.Round(time.Millisecond))
	}
	due := s.advanceTimers(t, time.Duration(timeout)*time.Second, t0)
	runEnded(t, s, wf, r.WorkflowInstanceID, "TIMED_OUT", due)
}

// TestEndingWideLoopsOnFailImmediately: a step failing with
// FAIL_IMMEDIATELY beside 500 iterations in flight ends the run within
// endBound.
func TestEndingWideLoopsOnFailImmediately(t *testing.T) {
	s := startParallelSystem(t, stack.Options{})
	url, release := heldFailure(t) // answers once every iteration runs
	wf := s.push(wideLoops("loops-fail", 1, 500, 0, url))
	r := s.start(wf, "")
	iterationsStarted(t, s, iterationsInFlight(t, s, wf, r.WorkflowInstanceID, 1, 500), 500)
	t0 := time.Now()
	release()
	runEnded(t, s, wf, r.WorkflowInstanceID, "FAILED", t0)
}

// TestEndingWideLoopsOnKill: a kill with two loops of 500 iterations in
// flight ends the run within endBound. That every iteration then ends is
// TestForeachKillStopsItsIterations'.
func TestEndingWideLoopsOnKill(t *testing.T) {
	s := startParallelSystem(t, stack.Options{})
	wf := s.push(wideLoops("loops-kill", 2, 500, 0, ""))
	r := s.start(wf, "")
	iterationsInFlight(t, s, wf, r.WorkflowInstanceID, 2, 500)
	t0 := time.Now()
	s.act(wf, r.WorkflowInstanceID, "kill")
	runEnded(t, s, wf, r.WorkflowInstanceID, "FAILED", t0)
}

// iterationsInFlight waits until every loop of run id of wf has per
// iterations running and returns the loops' inline workflow ids.
func iterationsInFlight(t *testing.T, s *system, wf string, id int64, loops, per int) []string {
	t.Helper()
	var inline []string
	poll(t, 3*time.Minute, fmt.Sprintf("%d x %d iterations running", loops, per), func() (bool, string) {
		inline = inline[:0]
		running := 0
		for _, v := range s.steps(wf, id) {
			if o := v.Foreach; o != nil {
				running += int(o.Running)
				inline = append(inline, o.WorkflowID)
			}
		}
		return running == loops*per && len(inline) == loops, fmt.Sprintf("%d running", running)
	})
	return inline
}

// iterationsStarted waits until every iteration of the loops has started
// (its own first decision is done), checking the last ones first.
func iterationsStarted(t *testing.T, s *system, inline []string, per int) {
	t.Helper()
	poll(t, 3*time.Minute, "every iteration started", func() (bool, string) {
		for _, wf := range inline {
			for n := int64(per); n >= 1; n-- {
				if st := s.instance(wf, n).Status; st != "IN_PROGRESS" {
					return false, fmt.Sprintf("iteration %d of %s is %s", n, wf, st)
				}
			}
		}
		return true, ""
	})
}

// runEnded checks that run id of wf ends with status within endBound of
// t0, its cause.
func runEnded(t *testing.T, s *system, wf string, id int64, status string, t0 time.Time) {
	t.Helper()
	v := s.wait(wf, id, time.Until(t0.Add(endBound)))
	if v.Status != status {
		t.Fatalf("instance %s, want %s: %v", v.Status, status, v.StepStatuses)
	}
	t.Logf("%s ended %s %s after its cause", wf, status, time.Since(t0).Round(time.Millisecond))
}
