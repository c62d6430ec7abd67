package e2e

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/localstack/stack"
)

// TestMaestroSELSampleRunsUnchanged runs Maestro's sample-dag-test-5 as
// Maestro ships it: its workflow param WF_RESTART_MODE is SEL statements
// (an untyped variable, if / else if / else, return, throw) reading
// params.getFromInstance('RUN_POLICY'). As reference/expected-outcomes.txt
// has it: WF_RESTART_MODE is "run" on a fresh start, job.1 waits for its
// two signals, a second start while the first runs is STOPPED
// (first_only), and the signals let the first run end.
func TestMaestroSELSampleRunsUnchanged(t *testing.T) {
	t.Parallel()
	s := startSystem(t, stack.Options{})
	wf := s.push(readFile(t, "sample-dag-test-5.json"))
	first := s.start(wf, `{"initiator": {"type": "manual"}}`)
	poll(t, 30*time.Second, "job.1 waits for its signals", func() (bool, string) {
		st := s.instance(wf, first.WorkflowInstanceID).StepStatuses["job.1"]
		return st == "WAITING_FOR_SIGNALS", st
	})
	v := s.instance(wf, first.WorkflowInstanceID)
	if got := fmt.Sprint(v.Params["WF_RESTART_MODE"]); got != "run" {
		t.Errorf("WF_RESTART_MODE = %q, want \"run\" (params %v)", got, v.Params)
	}
	d, ok := v.Params["DERIVED_RUN_DATE_UTC"].(float64) // a JSON number: 20261129
	if !ok {
		t.Fatalf("the instance's params have no DERIVED_RUN_DATE_UTC: %v", v.Params)
	}
	dateint := strconv.FormatFloat(d, 'f', -1, 64)

	second := s.start(wf, `{"initiator": {"type": "manual"}}`)
	if v2 := s.wait(wf, second.WorkflowInstanceID, 30*time.Second); v2.Status != "STOPPED" {
		t.Errorf("a second start while the first runs: %s, want STOPPED (first_only)", v2.Status)
	}

	s.announce(t, fmt.Sprintf(`{"name":"prod_db/foo/bar","params":{"vtts_utc_dateint":"%s"}}`, dateint))
	s.announce(t, `{"name":"signal_b","params":{"key2":"value2"}}`)
	if v := s.wait(wf, first.WorkflowInstanceID, time.Minute); v.Status != "SUCCEEDED" {
		t.Fatalf("sample-dag-test-5: %s %v", v.Status, v.StepStatuses)
	}
}
