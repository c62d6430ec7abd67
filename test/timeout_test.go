package e2e

import (
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/localstack/stack"
)

func TestTimeouts(t *testing.T) {
	s := startSystem(t, stack.Options{})

	t.Run("step timeout", func(t *testing.T) {
		wf := s.push([]byte(`{"properties":{"owner":"to"},"workflow":{"id":"step-timeout","steps":[
		  {"step":{"id":"slow","type":"Sleep","timeout":"2s","params":{"sleep_seconds":{"value":3600,"type":"LONG"}},
		    "transition":{"successors":{"after":"true"}}}},
		  {"step":{"id":"after","type":"NoOp"}}]}}`))
		t0 := time.Now()
		r := s.start(wf, "")
		v := s.wait(wf, r.WorkflowInstanceID, 30*time.Second)
		if v.Status != "FAILED" || v.StepStatuses["slow"] != "TIMED_OUT" || v.StepStatuses["after"] != "UNSATISFIED" {
			t.Fatalf("instance %s: %v", v.Status, v.StepStatuses)
		}
		if d := time.Since(t0); d < 2*time.Second || d > 20*time.Second {
			t.Errorf("timed out after %s, want about 2s", d)
		}
	})

	t.Run("workflow timeout", func(t *testing.T) {
		wf := s.push([]byte(`{"properties":{"owner":"to"},"workflow":{"id":"wf-timeout","timeout":2,"steps":[
		  {"step":{"id":"slow","type":"Sleep","params":{"sleep_seconds":{"value":3600,"type":"LONG"}}}},
		  {"step":{"id":"quick","type":"NoOp"}}]}}`))
		r := s.start(wf, "")
		v := s.wait(wf, r.WorkflowInstanceID, 30*time.Second)
		if v.Status != "TIMED_OUT" || v.StepStatuses["slow"] != "TIMED_OUT" || v.StepStatuses["quick"] != "SUCCEEDED" {
			t.Fatalf("instance %s: %v", v.Status, v.StepStatuses)
		}
	})
}
