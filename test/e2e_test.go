package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/localstack/stack"
)

// expectSteps checks every step's final status.
func expectSteps(t *testing.T, s *system, wf string, id int64, want map[string]string) {
	t.Helper()
	got := s.steps(wf, id)
	for step, status := range want {
		v, ok := got[step]
		if !ok {
			t.Errorf("%s: step %s missing from the steps list", wf, step)
			continue
		}
		if v.RuntimeState.Status != status {
			t.Errorf("%s: step %s is %s, want %s", wf, step, v.RuntimeState.Status, status)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%s: %d steps listed, want %d", wf, len(got), len(want))
	}
}

// TestSamplesReachExpectedOutcomes runs the samples of expected-outcomes.txt
// that this runtime supports end to end.
func TestSamplesReachExpectedOutcomes(t *testing.T) {
	t.Parallel()
	s := startSystem(t, stack.Options{})
	cases := []struct {
		file string
		want map[string]string
	}{
		{"sample-dag-test-7.json", map[string]string{
			"job.1": "SUCCEEDED", "job.2": "SUCCEEDED", "job.3": "SUCCEEDED", "job.4": "SUCCEEDED",
			"job.5": "SUCCEEDED", "job.6": "SUCCEEDED", "job.7": "SUCCEEDED", "job.8": "SUCCEEDED",
		}},
		{"sample-dag-test-8.json", map[string]string{
			"job.1": "SUCCEEDED", "job.2": "SUCCEEDED", "job.3": "UNSATISFIED", "job.4": "SUCCEEDED", "job.5": "SUCCEEDED",
		}},
		{"fixture-sample-conditional-wf.json", map[string]string{
			"job.1": "SUCCEEDED", "job.2": "SUCCEEDED", "job.3": "SUCCEEDED", "job.4": "SUCCEEDED",
			"job.5": "SUCCEEDED", "job.6": "SUCCEEDED", "job.7": "SUCCEEDED",
		}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			wf := s.push(readFile(t, c.file))
			r := s.start(wf, `{"initiator":{"type":"manual"}}`)
			if r.WorkflowInstanceID != 1 || r.WorkflowRunID != 1 {
				t.Errorf("first start got instance %d run %d, want 1/1", r.WorkflowInstanceID, r.WorkflowRunID)
			}
			v := s.wait(wf, r.WorkflowInstanceID, 30*time.Second)
			if v.Status != "SUCCEEDED" {
				t.Fatalf("instance %s, want SUCCEEDED; steps %v", v.Status, v.StepStatuses)
			}
			expectSteps(t, s, wf, r.WorkflowInstanceID, c.want)
			for _, st := range s.steps(wf, r.WorkflowInstanceID) {
				if st.RuntimeState.Status == "SUCCEEDED" {
					ranOnce(t, st)
				}
			}
		})
	}
	t.Run("unsatisfied step has a reason", func(t *testing.T) {
		st := s.steps("sample-dag-test-8", 1)["job.3"]
		if len(st.Timeline) == 0 || !strings.Contains(st.Timeline[len(st.Timeline)-1].Message, "x > 10") {
			t.Errorf("job.3 timeline does not name the false condition: %+v", st.Timeline)
		}
	})
}

// paramsWorkflow mirrors sample-dag-test-3's params (cross-step references,
// Java-style string concatenation, literal interpolation) on NoOp steps so
// it runs in milliseconds instead of a minute of sleeps.
const paramsWorkflow = `{
  "properties": {"owner": "tester", "run_strategy": "parallel"},
  "workflow": {
    "id": "params-e2e",
    "params": {"foo": {"expression": "'bar1';", "type": "STRING"}, "base": {"value": 5, "type": "LONG"}},
    "steps": [
      {"step": {"id": "job1", "type": "NoOp", "transition": {"successors": {"job.2": "true", "job3": "true"}},
        "params": {"sleep_seconds": {"value": 15, "type": "LONG"}}}},
      {"step": {"id": "job3", "type": "NoOp", "transition": {"successors": {"job.2": "true"}},
        "params": {"sleep_seconds": {"value": 15, "type": "LONG"}}}},
      {"step": {"id": "job.2", "type": "NoOp",
        "params": {
          "param1": {"expression": "sleep_seconds + '1';", "type": "STRING"},
          "param2": {"value": "${job1__sleep_seconds} + 1", "type": "STRING"},
          "param3": {"value": "$foo-$$-${base}", "type": "STRING"},
          "days":   {"expression": "Util.dateIntsBetween(20200101, 20200110, 1)", "type": "LONG_ARRAY"},
          "sleep_seconds": {"expression": "job3__sleep_seconds + 1;", "type": "LONG"},
          "from_wf": {"expression": "params.get('base') * 2", "type": "LONG"}
        }}}
    ]
  }
}`

// TestParamsEvaluateAsMaestro checks cross-step references, SEL-style
// concatenation, interpolation and helpers on a running instance.
func TestParamsEvaluateAsMaestro(t *testing.T) {
	t.Parallel()
	s := startSystem(t, stack.Options{})
	wf := s.push([]byte(paramsWorkflow))
	r := s.start(wf, "")
	if v := s.wait(wf, r.WorkflowInstanceID, 30*time.Second); v.Status != "SUCCEEDED" {
		t.Fatalf("instance %s: %v", v.Status, v.StepStatuses)
	}
	p := s.steps(wf, r.WorkflowInstanceID)["job.2"].Params
	want := map[string]any{
		"sleep_seconds": 16.0, "param1": "161", "param2": "15 + 1", "param3": "bar1-$-5", "from_wf": 10.0,
	}
	for k, v := range want {
		if fmt.Sprint(p[k]) != fmt.Sprint(v) {
			t.Errorf("job.2 param %s = %v (%T), want %v", k, p[k], p[k], v)
		}
	}
	days, _ := json.Marshal(p["days"])
	if string(days) != "[20200101,20200102,20200103,20200104,20200105,20200106,20200107,20200108,20200109]" {
		t.Errorf("days = %s", days)
	}
}

// fanOut builds root -> n parallel Sleep(1s) steps -> join.
func fanOut(id string, n int) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, `{"properties":{"owner":"e2e","run_strategy":"parallel"},"workflow":{"id":%q,"steps":[`, id)
	succ := make([]string, n)
	for i := range succ {
		succ[i] = fmt.Sprintf(`"p%d":"true"`, i)
	}
	fmt.Fprintf(&b, `{"step":{"id":"root","type":"NoOp","transition":{"successors":{%s}}}}`, strings.Join(succ, ","))
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `,{"step":{"id":"p%d","type":"Sleep","params":{"sleep_seconds":{"value":1,"type":"LONG"}},"transition":{"successors":{"join":"true"}}}}`, i)
	}
	b.WriteString(`,{"step":{"id":"join","type":"NoOp"}}]}}`)
	return []byte(b.String())
}

// TestConcurrentFanOutFanIn starts 20 instances of a 40-step fan-out/fan-in
// at once; every instance must succeed with every step run exactly once.
//
// Under CI load the emulator has twice lost one batch of ten timer messages
// of one run (its Sleep steps stayed RUNNING, nothing logged). Such a loss
// is what the recovery sweeper is for, in AWS as here; with its default
// pace (a sweep a minute, a minute's grace) recovery can take two minutes,
// so this test sweeps every two seconds and logs the runs it re-drove.
func TestConcurrentFanOutFanIn(t *testing.T) {
	t.Parallel()
	s := startSystem(t, stack.Options{SweepEvery: 2 * time.Second, EventSweepAfter: 10 * time.Second, SweepGrace: 10 * time.Second})
	wf := s.push(fanOut("fan-40", 38))
	const n = 20
	ids := make([]int64, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids[i] = s.start(wf, "").WorkflowInstanceID
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow() // a start failed (and said why): its id is 0
	}
	seen := map[int64]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Fatalf("instance id %d handed out twice", id)
		}
		seen[id] = true
	}
	for _, id := range ids {
		v := s.wait(wf, id, 90*time.Second)
		if v.Status != "SUCCEEDED" {
			t.Errorf("instance %d: %s %v", id, v.Status, v.StepStatuses)
			continue
		}
		for _, e := range v.Timeline {
			if strings.Contains(e.Message, "re-driven") {
				t.Logf("instance %d was re-driven by the sweeper: %s", id, e.Message)
			}
		}
		steps := s.steps(wf, id)
		if len(steps) != 40 {
			t.Errorf("instance %d: %d steps listed, want 40", id, len(steps))
		}
		for _, st := range steps {
			ranOnce(t, st)
		}
	}
}

// TestRejectedDefinitionStoresNothing pushes a definition with a cycle.
func TestRejectedDefinitionStoresNothing(t *testing.T) {
	t.Parallel()
	s := startSystem(t, stack.Options{})
	var body struct {
		Status  int      `json:"status"`
		Message string   `json:"message"`
		Errors  []string `json:"errors"`
	}
	code := s.do("POST", "/api/v3/workflows", readFile(t, "sample-dag-with-cycle-wf.json"), &body)
	if code != http.StatusBadRequest || body.Status != http.StatusBadRequest {
		t.Fatalf("status %d / body %d, want 400", code, body.Status)
	}
	joined := strings.Join(body.Errors, "\n")
	if !strings.Contains(joined, "cycle") || !strings.Contains(joined, "workflow.steps") {
		t.Errorf("errors do not name the cycle and its path: %q", joined)
	}
	if code := s.do("GET", "/api/v3/workflows/sample-dag-test-1-wf/versions/latest", nil, nil); code != http.StatusNotFound {
		t.Errorf("rejected workflow is readable: status %d", code)
	}
	// A bad field in an otherwise fine definition names its JSON path.
	bad := strings.Replace(paramsWorkflow, `"successors": {"job.2": "true"}`, `"successors": {"ghost": "true"}`, 1)
	code = s.do("POST", "/api/v3/workflows", []byte(bad), &body)
	if code != http.StatusBadRequest || !strings.Contains(strings.Join(body.Errors, "\n"), `workflow.steps[1].step.transition.successors`) {
		t.Errorf("status %d errors %q", code, body.Errors)
	}
	if code := s.do("GET", "/api/v3/workflows/params-e2e/versions/latest", nil, nil); code != http.StatusNotFound {
		t.Errorf("rejected workflow is readable: status %d", code)
	}
}

// TestStartIsIdempotentOnRequestID starts twice with one request_id.
func TestStartIsIdempotentOnRequestID(t *testing.T) {
	t.Parallel()
	s := startSystem(t, stack.Options{})
	wf := s.push(readFile(t, "sample-dag-test-7.json"))
	body := `{"initiator":{"type":"manual"},"request_id":"5b3c1f2e-8e6a-4f7c-9d1a-2b3c4d5e6f70"}`
	a, b := s.start(wf, body), s.start(wf, body)
	if a.WorkflowInstanceID != b.WorkflowInstanceID || !a.Created || b.Created {
		t.Fatalf("two starts with one request_id: %+v then %+v", a, b)
	}
	var list struct {
		Instances []json.RawMessage `json:"workflow_instances"`
	}
	s.do("GET", "/api/v3/workflows/"+wf+"/instances", nil, &list)
	if len(list.Instances) != 1 {
		t.Errorf("%d instances, want 1", len(list.Instances))
	}
}

// TestRunParamModes: run params may not override CONSTANT or IMMUTABLE
// params; a MUTABLE one is overridden and the step sees the new value.
func TestRunParamModes(t *testing.T) {
	t.Parallel()
	s := startSystem(t, stack.Options{})
	wf := s.push([]byte(`{"properties":{"owner":"modes"},"workflow":{"id":"modes","params":{
	  "fixed":{"value":1,"type":"LONG","mode":"constant"},
	  "frozen":{"value":2,"type":"LONG","mode":"IMMUTABLE"},
	  "free":{"value":3,"type":"LONG"}},
	  "steps":[{"step":{"id":"a","type":"NoOp","params":{"sum":{"expression":"fixed + frozen + free","type":"LONG"}}}}]}}`))
	var body struct {
		Errors []string `json:"errors"`
	}
	code := s.do("POST", "/api/v3/workflows/modes/versions/latest/actions/start",
		[]byte(`{"run_params":{"fixed":{"value":10,"type":"LONG"},"frozen":{"value":20,"type":"LONG"}}}`), &body)
	joined := strings.Join(body.Errors, "\n")
	if code != http.StatusBadRequest || !strings.Contains(joined, "run_params.fixed") || !strings.Contains(joined, "IMMUTABLE") {
		t.Fatalf("HTTP %d %q", code, joined)
	}
	r := s.start(wf, `{"run_params":{"free":{"value":30,"type":"LONG"}}}`)
	s.wait(wf, r.WorkflowInstanceID, 30*time.Second)
	if got := s.steps(wf, r.WorkflowInstanceID)["a"].Params["sum"]; fmt.Sprint(got) != "33" {
		t.Errorf("sum = %v, want 33", got)
	}
}
