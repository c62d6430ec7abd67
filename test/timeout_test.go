package e2e

import (
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/localstack/stack"
)

// TestTimeouts: a step's timeout and a workflow's timeout end a Sleep of an
// hour. Their timers ride SQS message delays; the stack's clock skips to
// them (waitSkipping), and the stack's own times say when they fired.
func TestTimeouts(t *testing.T) {
	t.Parallel()
	s := startSystem(t, stack.Options{})

	t.Run("step timeout", func(t *testing.T) {
		wf := s.push([]byte(`{"properties":{"owner":"to"},"workflow":{"id":"step-timeout","steps":[
		  {"step":{"id":"slow","type":"Sleep","timeout":"2s","params":{"sleep_seconds":{"value":3600,"type":"LONG"}},
		    "transition":{"successors":{"after":"true"}}}},
		  {"step":{"id":"after","type":"NoOp"}}]}}`))
		r := s.start(wf, "")
		v := s.waitSkipping(wf, r.WorkflowInstanceID, 30*time.Second)
		wantEnd(t, v, "FAILED", map[string]string{"slow": "TIMED_OUT", "after": "UNSATISFIED"})
		// By the stack's clock: not before the timeout, and long before the
		// hour's sleep (or the next timers, backstops 15 s after a commit).
		rt := s.steps(wf, r.WorkflowInstanceID)["slow"].RuntimeState
		if d := time.Duration(rt.EndTime-rt.StartTime) * time.Millisecond; d < 2*time.Second || d >= 15*time.Second {
			t.Errorf("timed out %v after it started, want about 2s", d)
		}
	})

	t.Run("workflow timeout", func(t *testing.T) {
		wf := s.push([]byte(`{"properties":{"owner":"to"},"workflow":{"id":"wf-timeout","timeout":2,"steps":[
		  {"step":{"id":"slow","type":"Sleep","params":{"sleep_seconds":{"value":3600,"type":"LONG"}}}},
		  {"step":{"id":"quick","type":"NoOp"}}]}}`))
		r := s.start(wf, "")
		v := s.waitSkipping(wf, r.WorkflowInstanceID, 30*time.Second)
		wantEnd(t, v, "TIMED_OUT", map[string]string{"slow": "TIMED_OUT", "quick": "SUCCEEDED"})
		if d := time.Duration(v.EndTime-v.StartTime) * time.Millisecond; d < 2*time.Second || d >= 15*time.Second {
			t.Errorf("timed out %v after it started, want about 2s", d)
		}
	})
}
