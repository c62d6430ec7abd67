package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/localstack/stack"
)

// whileWorkflow is a workflow whose while step "loop" runs, while n < 4
// (n from 0), an Http step calling /it/<n>/w and then a NoOp that sets
// n = n + 1, the value the next iteration sees; a NoOp "after" follows.
func whileWorkflow(id, url string) []byte {
	return []byte(fmt.Sprintf(`{"properties":{"owner":"loop"},"workflow":{"id":%q,"steps":[
	  {"while":{"id":"loop","condition":"n < 4",
	    "params":{"loop_params":{"type":"MAP","value":{"n":{"type":"LONG","value":0}}}},
	    "steps":[
	      {"step":{"id":"call","type":"Http","retry_policy":{"error_retry_limit":0,"platform_retry_limit":0},
	        "params":{"http":{"type":"MAP","value":{
	          "url":{"type":"STRING","value":"%s/it/${n}/w"},"method":{"type":"STRING","value":"GET"}}}},
	        "transition":{"successors":{"next":"true"}}}},
	      {"step":{"id":"next","type":"NoOp","params":{"n":{"type":"LONG","expression":"n + 1"}}}}],
	    "transition":{"successors":{"after":"true"}}}},
	  {"step":{"id":"after","type":"NoOp"}}]}}`, id, url))
}

// TestWhileRunsUntilItsConditionIsFalse runs Maestro's sample-while-wf
// (5 iterations, i = 20200101..20200105, each iteration's job.1 feeding
// i + 1 back) and a while loop of Http calls: each iteration called once,
// one at a time, exactly until the condition is false; and a failed
// iteration fails the step and stops the loop.
func TestWhileRunsUntilItsConditionIsFalse(t *testing.T) {
	t.Parallel()
	ls, srv := startLoopServer(t, 50*time.Millisecond)
	s := startSystem(t, stack.Options{})

	sample := s.push(readFile(t, "sample-while-wf.json"))
	rs := s.start(sample, `{"initiator": {"type": "manual"}}`)
	wf := s.push(whileWorkflow("while-calls", srv.URL))
	r := s.start(wf, "")

	if v := s.wait(sample, rs.WorkflowInstanceID, 2*time.Minute); v.Status != "SUCCEEDED" {
		t.Fatalf("sample-while-wf: %s %v", v.Status, v.StepStatuses)
	} else if foo := fmt.Sprint(v.Params["foo"]); foo != "September" {
		// Its param foo is Maestro's SEL, unchanged:
		// new DateTime(1569018000000).withZone(DateTimeZone.forID('UTC')).monthOfYear().getAsText();
		t.Errorf("sample-while-wf: foo = %q, want September", foo)
	}
	o := s.steps(sample, rs.WorkflowInstanceID)["while-job"].While
	if o == nil || o.Total != 5 || o.Counts["SUCCEEDED"] != 5 || o.Running != 0 || fmt.Sprint(o.LoopParams["i"]) != "20200106" {
		t.Fatalf("sample-while-wf: while overview %+v; want 5 SUCCEEDED iterations and i = 20200106", o)
	}
	for n := int64(1); n <= 5; n++ {
		it := s.instance(o.WhileID, n)
		if it.Status != "SUCCEEDED" || fmt.Sprintf("%.0f", it.Params["i"]) != fmt.Sprint(20200100+n) || fmt.Sprintf("%.0f", it.Params["loop_index"]) != fmt.Sprint(n-1) {
			t.Errorf("sample-while-wf iteration %d: %s i=%v loop_index=%v", n, it.Status, it.Params["i"], it.Params["loop_index"])
		}
		if it.Initiator == nil || it.Initiator.Type != "WHILE" {
			t.Errorf("iteration %d initiator %+v", n, it.Initiator)
		}
	}
	// The instance's rollup counts the leaf steps of its tree: job.1 of
	// each of the 5 iterations (the while step is not a leaf).
	if r := s.instance(sample, rs.WorkflowInstanceID).RollupOverview; r == nil || r.TotalLeafCount != 5 || r.Overview["SUCCEEDED"] != 5 {
		t.Errorf("sample-while-wf rollup %+v, want 5 leaf steps SUCCEEDED", r)
	}
	if code := s.do("GET", fmt.Sprintf("/api/v3/workflows/%s/instances/6", o.WhileID), nil, nil); code != 404 {
		t.Errorf("a sixth iteration: GET answered %d, want 404", code)
	}

	if v := s.wait(wf, r.WorkflowInstanceID, 2*time.Minute); v.Status != "SUCCEEDED" {
		t.Fatalf("while-calls: %s %v", v.Status, v.StepStatuses)
	}
	calls, peak := ls.snapshot()
	for n := 0; n < 4; n++ {
		if c := calls[fmt.Sprintf("%d/w", n)]; c != 1 {
			t.Errorf("iteration n=%d called %d times, want 1", n, c)
		}
	}
	if len(calls) != 4 || peak != 1 {
		t.Errorf("calls %v, %d at once; want n = 0..3, one at a time", calls, peak)
	}
	steps := s.steps(wf, r.WorkflowInstanceID)
	if o := steps["loop"].While; o == nil || o.Total != 4 || o.Counts["SUCCEEDED"] != 4 || fmt.Sprint(o.LoopParams["n"]) != "4" {
		t.Errorf("while-calls overview %+v", o)
	}
	if st := steps["after"].RuntimeState.Status; st != "SUCCEEDED" {
		t.Errorf("after: %s", st)
	}

	// A failing call in the third iteration fails the step; no fourth
	// iteration starts.
	ls.mu.Lock()
	ls.calls, ls.peak = map[string]int{}, 0
	ls.fail["2/w"] = true
	ls.mu.Unlock()
	r = s.start(wf, "")
	v := s.wait(wf, r.WorkflowInstanceID, 2*time.Minute)
	steps = s.steps(wf, r.WorkflowInstanceID)
	if v.Status != "FAILED" || steps["loop"].RuntimeState.Status != "FATALLY_FAILED" || steps["after"].RuntimeState.Status != "UNSATISFIED" {
		t.Fatalf("failing while: %s %v", v.Status, v.StepStatuses)
	}
	calls, _ = ls.snapshot()
	if len(calls) != 3 || calls["0/w"] != 1 || calls["1/w"] != 1 || calls["2/w"] != 1 {
		t.Errorf("failing while: calls %v; want n = 0, 1, 2 once each", calls)
	}
	if o := steps["loop"].While; o == nil || o.Total != 3 || o.Counts["FAILED"] != 1 || o.Counts["SUCCEEDED"] != 2 {
		t.Errorf("failing while overview %+v", o)
	}

	// Restarted from incomplete, the loop goes on from its failed third
	// iteration (run 2 of the same iteration, n = 2 again), then a fourth.
	ls.heal("2/w")
	s.restart(t, wf, r.WorkflowInstanceID, "RESTART_FROM_INCOMPLETE", "restart")
	if v := s.wait(wf, r.WorkflowInstanceID, 2*time.Minute); v.Status != "SUCCEEDED" || v.WorkflowRunID != 2 {
		t.Fatalf("restarted while: %s run %d %v", v.Status, v.WorkflowRunID, v.StepStatuses)
	}
	calls, _ = ls.snapshot()
	if want := map[string]int{"0/w": 1, "1/w": 1, "2/w": 2, "3/w": 1}; fmt.Sprint(calls) != fmt.Sprint(want) {
		t.Errorf("calls after the restart %v, want %v", calls, want)
	}
	if o := s.steps(wf, r.WorkflowInstanceID)["loop"].While; o == nil || o.Total != 4 || o.Counts["SUCCEEDED"] != 4 || fmt.Sprint(o.LoopParams["n"]) != "4" {
		t.Errorf("restarted while overview %+v", o)
	}
}
