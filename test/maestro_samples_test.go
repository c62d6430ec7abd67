package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/localstack/stack"
)

// TestMaestroTopLevelSamples runs, unchanged, the samples of Maestro's
// server tests that no other test here runs, and checks each against
// Maestro's outcome (shared/maestro/reference/expected-outcomes.txt).
// Sleep steps and the workflow timeout are timers, so the stack's clock
// skips to them (waitSkipping) instead of the test waiting 100 s.
func TestMaestroTopLevelSamples(t *testing.T) {
	s := startParallelSystem(t, stack.Options{})

	t.Run("sample-dag-test-1", func(t *testing.T) {
		r, v := s.runSample(t, s.waitSkipping, 2*time.Minute, "sample-dag-test-1")
		// 1569018000000 is 2019-09-20T22:20Z: the SEL Joda expression's month.
		if got := fmt.Sprint(v.Params["foo"]); got != "September" {
			t.Errorf("param foo = %q, want September", got)
		}
		expectSteps(t, s, "sample-dag-test-1", r.WorkflowInstanceID, map[string]string{
			"job.1": "SUCCEEDED", "job.2": "SUCCEEDED", "job.3": "SUCCEEDED",
			"job.4": "SUCCEEDED", "job.5": "SUCCEEDED", "job.6": "SUCCEEDED",
		})
	})

	t.Run("sample-dag-test-2", func(t *testing.T) {
		r, v := s.runSample(t, s.waitSkipping, 2*time.Minute, "sample-dag-test-2")
		// param1 (CONSTANT) and param2 (IMMUTABLE) are SEL's UUID.randomUUID().
		for _, p := range []string{"param1", "param2"} {
			if got := fmt.Sprint(v.Params[p]); len(got) != 36 {
				t.Errorf("param %s = %q, want a UUID", p, got)
			}
		}
		steps := s.steps("sample-dag-test-2", r.WorkflowInstanceID)
		for _, id := range []string{"job.1", "job.2", "job.3", "job.4", "job.5"} {
			if st := steps[id]; st.RuntimeState.Status != "SUCCEEDED" {
				t.Errorf("step %s is %s, want SUCCEEDED", id, st.RuntimeState.Status)
			}
		}
		// job.4 joins the two sleeps: it starts after job.3's 100 s.
		if j3, j4 := steps["job.3"], steps["job.4"]; j4.RuntimeState.StartTime < j3.RuntimeState.EndTime {
			t.Errorf("job.4 started at %d, before job.3 ended at %d", j4.RuntimeState.StartTime, j3.RuntimeState.EndTime)
		}
	})

	t.Run("sample-dag-test-10", func(t *testing.T) {
		// job1 waits for signal_a and signal_b, which nobody announces: the
		// workflow's 100-second timeout ends the instance TIMED_OUT.
		s.push(readFile(t, "sample-dag-test-10.json"))
		r := s.start("sample-dag-test-10", `{"initiator": {"type": "manual"}}`)
		v := s.waitSkipping("sample-dag-test-10", r.WorkflowInstanceID, 2*time.Minute)
		if v.Status != "TIMED_OUT" {
			t.Fatalf("instance %s, want TIMED_OUT; steps %v", v.Status, v.StepStatuses)
		}
		if st := s.steps("sample-dag-test-10", r.WorkflowInstanceID)["job1"]; st.RuntimeState.Status != "TIMED_OUT" {
			t.Errorf("job1 is %s, want TIMED_OUT (it was waiting for its signals)", st.RuntimeState.Status)
		}
	})

	t.Run("sample-conditional-wf", func(t *testing.T) {
		r, _ := s.runSample(t, s.waitSkipping, 2*time.Minute, "sample-conditional-wf")
		expectSteps(t, s, "sample-conditional-wf", r.WorkflowInstanceID, map[string]string{
			"job.1": "SUCCEEDED", "job.2": "SUCCEEDED", "job.3": "SUCCEEDED",
			"job.4": "UNSATISFIED", "job.5": "UNSATISFIED",
			"job.6": "SUCCEEDED", "job.7": "SUCCEEDED",
		})
		if got := fmt.Sprint(s.steps("sample-conditional-wf", r.WorkflowInstanceID)["job.7"].Params["param5"]); got != "15" {
			t.Errorf("job.7 param5 = %s, want 15 (params.get('param0'))", got)
		}
	})
}
