package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/localstack/stack"
)

// TestMaestroLargeForeachSample runs sample-large-foreach-wf (1,098
// iterations) unchanged, on an emulator of its own (see
// startIsolatedSystem).
func TestMaestroLargeForeachSample(t *testing.T) {
	// On an emulator of its own, beside the (mostly idle) sample tests.
	s := startParallelSystem(t, stack.Options{})
	wf := "sample-large-foreach-wf"
	r, _ := s.runSample(t, s.wait, 5*time.Minute, wf)
	o := s.steps(wf, r.WorkflowInstanceID)["job1"].Foreach
	if o == nil {
		t.Fatal("no foreach overview")
	}
	if o.Total != 1098 || o.Counts["SUCCEEDED"] != 1098 {
		t.Errorf("%d iterations, counts %v; want 1098 SUCCEEDED", o.Total, o.Counts)
	}
	if p := s.steps(o.WorkflowID, 1098)["job2"].Params["param2"]; fmt.Sprint(p) != "20201231c" {
		t.Errorf("iteration 1098: param2 = %v, want 20201231c", p)
	}
}
