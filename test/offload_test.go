package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/localstack/stack"
)

// TestOffloadedParamsKeepTheirTypes: a settled step's params leave the run
// state (engine.Offload) and are read back from its attempt item when a
// later expression needs them — as LONG and DOUBLE values, not the JSON
// numbers they were stored as (which failed "a__v + 1" with "operator + is
// not defined for value of Go type json.Number").
func TestOffloadedParamsKeepTheirTypes(t *testing.T) {
	t.Parallel()
	s := startSystem(t, stack.Options{})
	wf := s.push([]byte(`{"properties":{"owner":"x"},"workflow":{"id":"offloaded","steps":[
	  {"step":{"id":"a","type":"NoOp","params":{"v":{"type":"LONG","value":5},"d":{"type":"DOUBLE","value":1.5}},
	    "transition":{"successors":{"b":"true"}}}},
	  {"step":{"id":"b","type":"Sleep","params":{"sleep_seconds":{"type":"LONG","value":1}},"transition":{"successors":{"c":"true"}}}},
	  {"step":{"id":"c","type":"NoOp","params":{"w":{"type":"LONG","expression":"a__v + 1"},
	    "e":{"type":"DOUBLE","expression":"params.getFromStep('a', 'd') * 2"}}}}]}}`))
	r := s.start(wf, "")
	v := s.wait(wf, r.WorkflowInstanceID, 30*time.Second)
	c := s.steps(wf, r.WorkflowInstanceID)["c"]
	if v.Status != "SUCCEEDED" || fmt.Sprint(c.Params["w"]) != "6" || fmt.Sprint(c.Params["e"]) != "3" {
		t.Fatalf("%s: c's params %v, timeline %+v", v.Status, c.Params, c.Timeline)
	}
}
