package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/localstack/stack"
)

// TestMaestroForeachSamples runs Maestro's foreach samples unchanged and
// checks the outcomes of ../shared/maestro/reference/expected-outcomes.txt
// (sample-large-foreach-wf, 1,098 iterations, is TestMaestroLargeForeachSample).
//
// The samples' Sleep steps, which the stack's clock skips to
// (waitSkipping), made it mostly idle: it runs beside the other sample
// tests (t.Parallel).
func TestMaestroForeachSamples(t *testing.T) {
	s := startParallelSystem(t, stack.Options{})
	type run struct {
		wf   string
		inst int64
	}
	var runs []run
	for _, f := range []string{"sample-foreach-wf.json", "sample-nested-foreach-wf.json"} {
		wf := s.push(readFile(t, f))
		runs = append(runs, run{wf, s.start(wf, `{"initiator": {"type": "manual"}}`).WorkflowInstanceID})
	}
	started := time.Now()
	for _, r := range runs {
		v := s.waitSkipping(r.wf, r.inst, 5*time.Minute)
		t.Logf("%s ended %s after %.1f s", r.wf, v.Status, time.Since(started).Seconds())
		if v.Status != "SUCCEEDED" {
			t.Errorf("%s: %s %v", r.wf, v.Status, v.StepStatuses)
		}
		if foo, ok := v.Params["foo"]; r.wf == "sample-foreach-wf" && (!ok || fmt.Sprint(foo) != "September") {
			// Maestro's SEL, unchanged: new DateTime(1569018000000)
			// .withZone(DateTimeZone.forID('UTC')).monthOfYear().getAsText();
			t.Errorf("%s: foo = %v, want September", r.wf, foo)
		}
	}
	overview := func(wf, step string) (string, int64, map[string]int64) {
		o := s.steps(wf, 1)[step].Foreach
		if o == nil {
			t.Fatalf("%s step %s has no foreach overview", wf, step)
		}
		counts := map[string]int64{}
		for k, v := range o.Counts {
			counts[string(k)] = v
		}
		return o.WorkflowID, o.Total, counts
	}

	// sample-foreach-wf: 9 iterations (20200101..20200109), each the 6-step DAG.
	inline, total, counts := overview("sample-foreach-wf", "foreach-job")
	if total != 9 || counts["SUCCEEDED"] != 9 {
		t.Errorf("sample-foreach-wf: %d iterations, counts %v; want 9 SUCCEEDED", total, counts)
	}
	it := s.instance(inline, 9)
	if fmt.Sprintf("%.0f", it.Params["i"]) != "20200109" || len(it.StepStatuses) != 6 {
		t.Errorf("sample-foreach-wf iteration 9: i=%v steps %v", it.Params["i"], it.StepStatuses)
	}
	for id, st := range it.StepStatuses {
		if st != "SUCCEEDED" {
			t.Errorf("sample-foreach-wf iteration 9: step %s %s", id, st)
		}
	}

	// sample-nested-foreach-wf: 6 outer iterations; the inner loop of
	// i = 1 is empty, of i = 2 has one iteration, of i = 3 two.
	inline, total, counts = overview("sample-nested-foreach-wf", "foreach-job")
	if total != 6 || counts["SUCCEEDED"] != 6 {
		t.Errorf("sample-nested-foreach-wf: %d iterations, counts %v; want 6 SUCCEEDED", total, counts)
	}
	for n, want := range map[int64]int64{1: 0, 2: 1, 3: 2, 4: 0, 5: 1, 6: 2} {
		o := s.steps(inline, n)["job1"].Foreach
		if o == nil || o.Total != want || o.Counts["SUCCEEDED"] != want {
			t.Errorf("sample-nested-foreach-wf outer iteration %d: inner overview %+v, want %d SUCCEEDED", n, o, want)
		}
	}
}
