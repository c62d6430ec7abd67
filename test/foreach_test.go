package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/jsonnum"
	"github.com/maestro-serverless/maestro/localstack/stack"
	"github.com/maestro-serverless/maestro/orchestrator"
	"github.com/maestro-serverless/maestro/store"
)

// loopServer records which (i, j) pairs the iterations of a foreach called
// and how many were in flight at once; a call holds for hold, and a pair in
// fail answers 500.
type loopServer struct {
	mu       sync.Mutex
	calls    map[string]int
	inFlight int
	peak     int
	hold     time.Duration
	fail     map[string]bool
}

func (l *loopServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	key := strings.TrimPrefix(r.URL.Path, "/it/")
	l.mu.Lock()
	l.calls[key]++
	l.inFlight++
	l.peak = max(l.peak, l.inFlight)
	l.mu.Unlock()
	time.Sleep(l.hold)
	l.mu.Lock()
	l.inFlight--
	l.mu.Unlock()
	if l.fail[key] {
		http.Error(w, "planned failure", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprint(w, `{"ok": true}`)
}

// startLoopServer serves a loopServer that holds each call for hold and
// fails the calls to /it/<key> for the keys of fail, until t ends.
func startLoopServer(t *testing.T, hold time.Duration, fail ...string) (*loopServer, *httptest.Server) {
	ls := &loopServer{calls: map[string]int{}, hold: hold, fail: map[string]bool{}}
	for _, key := range fail {
		ls.fail[key] = true
	}
	srv := httptest.NewServer(ls)
	t.Cleanup(srv.Close)
	return ls, srv
}

// heal makes the calls to /it/<key> succeed from now on.
func (l *loopServer) heal(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.fail, key)
}

func (l *loopServer) snapshot() (map[string]int, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string]int, len(l.calls))
	for k, v := range l.calls {
		out[k] = v
	}
	return out, l.peak
}

// foreachWorkflow is a workflow whose foreach step "loop" runs an Http step
// calling /it/<i>/<j> for every i in is and j in js.
func foreachWorkflow(id, url, is, js string, concurrency int, mode string) []byte {
	return []byte(fmt.Sprintf(`{"properties":{"owner":"loop"},"workflow":{"id":%q,"steps":[
	  {"foreach":{"id":"loop","concurrency":%d,"failure_mode":%q,
	    "params":{"loop_params":{"type":"MAP","value":{
	      "i":{"type":"LONG_ARRAY","value":%s},
	      "j":{"type":"STRING_ARRAY","value":%s}}}},
	    "steps":[{"step":{"id":"call","type":"Http","retry_policy":{"error_retry_limit":0,"platform_retry_limit":0},"params":{"http":{"type":"MAP","value":{
	      "url":{"type":"STRING","value":"%s/it/${i}/${j}"},"method":{"type":"STRING","value":"GET"}}}}}}],
	    "transition":{"successors":{"after":"true"}}}},
	  {"step":{"id":"after","type":"NoOp"}}]}}`, id, concurrency, mode, is, js, url))
}

func TestForeachRunsEachIterationOnceWithinItsConcurrency(t *testing.T) {
	t.Parallel()
	ls, srv := startLoopServer(t, 150*time.Millisecond)
	s := startSystem(t, stack.Options{})

	wf, r, v := s.run(foreachWorkflow("loop-ok", srv.URL, "[1,2,3,4,5,6,7]", `["a","b"]`, 3, "FAIL_AFTER_RUNNING"), 90*time.Second)
	if v.Status != "SUCCEEDED" {
		t.Fatalf("instance %s, steps %v", v.Status, v.StepStatuses)
	}
	calls, peak := ls.snapshot()
	for i := 1; i <= 7; i++ {
		for _, j := range []string{"a", "b"} {
			if n := calls[fmt.Sprintf("%d/%s", i, j)]; n != 1 {
				t.Errorf("iteration (%d, %s) called %d times, want 1", i, j, n)
			}
		}
	}
	if len(calls) != 14 {
		t.Errorf("%d distinct calls, want 14: %v", len(calls), calls)
	}
	if peak > 3 {
		t.Errorf("%d iterations called at once, concurrency is 3", peak)
	}
	steps := s.steps(wf, r.WorkflowInstanceID)
	loop := steps["loop"]
	if loop.RuntimeState.Status != "SUCCEEDED" || steps["after"].RuntimeState.Status != "SUCCEEDED" {
		t.Fatalf("loop %s, after %s", loop.RuntimeState.Status, steps["after"].RuntimeState.Status)
	}
	if o := loop.Foreach; o == nil || o.Total != 14 || o.Counts["SUCCEEDED"] != 14 || o.Running != 0 {
		t.Fatalf("foreach overview %+v", o)
	}
	// Iteration n is instance n of the inline workflow: (i, j) with the
	// first loop param varying fastest, as in Maestro.
	it := s.instance(loop.Foreach.WorkflowID, 9)
	if it.Status != "SUCCEEDED" || fmt.Sprint(it.Params["i"]) != "2" || fmt.Sprint(it.Params["j"]) != "b" || fmt.Sprint(it.Params["loop_index"]) != "8" {
		t.Fatalf("iteration 9: %s i=%v j=%v loop_index=%v", it.Status, it.Params["i"], it.Params["j"], it.Params["loop_index"])
	}
	if it.Initiator == nil || it.Initiator.Type != "FOREACH" {
		t.Errorf("iteration initiator %+v", it.Initiator)
	}
}

func TestForeachFailureModes(t *testing.T) {
	t.Parallel()
	_, srv := startLoopServer(t, 100*time.Millisecond, "2/a")
	s := startSystem(t, stack.Options{})

	t.Run("FAIL_AFTER_RUNNING launches no more and fails the step", func(t *testing.T) {
		wf, r, v := s.run(foreachWorkflow("loop-fail", srv.URL, "[1,2,3,4,5,6,7,8,9,10]", `["a"]`, 2, "FAIL_AFTER_RUNNING"), 90*time.Second)
		steps := s.steps(wf, r.WorkflowInstanceID)
		if v.Status != "FAILED" || steps["loop"].RuntimeState.Status != "FATALLY_FAILED" {
			t.Fatalf("instance %s, steps %v", v.Status, v.StepStatuses)
		}
		o := steps["loop"].Foreach
		if o == nil || o.Counts["FAILED"] != 1 || o.Launched >= 10 {
			t.Fatalf("foreach overview %+v: want one failure and no launch after it", o)
		}
	})

	t.Run("IGNORE_FAILURE completes with error and the run goes on", func(t *testing.T) {
		wf, r, v := s.run(foreachWorkflow("loop-ignore", srv.URL, "[1,2,3]", `["a"]`, 3, "IGNORE_FAILURE"), 90*time.Second)
		steps := s.steps(wf, r.WorkflowInstanceID)
		if v.Status != "SUCCEEDED" || steps["loop"].RuntimeState.Status != "COMPLETED_WITH_ERROR" || steps["after"].RuntimeState.Status != "SUCCEEDED" {
			t.Fatalf("instance %s, steps %v", v.Status, v.StepStatuses)
		}
	})

	t.Run("an empty loop succeeds", func(t *testing.T) {
		wf := s.push(foreachWorkflow("loop-empty", srv.URL, "[]", `["a"]`, 3, "FAIL_AFTER_RUNNING"))
		r := s.start(wf, "")
		if v := s.wait(wf, r.WorkflowInstanceID, 30*time.Second); v.Status != "SUCCEEDED" {
			t.Fatalf("instance %s, steps %v", v.Status, v.StepStatuses)
		}
	})
}

func TestForeachKillStopsItsIterations(t *testing.T) {
	t.Parallel()
	s := startSystem(t, stack.Options{})
	wf := s.push([]byte(`{"properties":{"owner":"loop"},"workflow":{"id":"loop-kill","instance_step_concurrency":200,"steps":[
	  {"foreach":{"id":"loop","concurrency":150,
	    "params":{"loop_params":{"type":"MAP","value":{"i":{"type":"LONG_ARRAY","expression":"Util.intsBetween(0, 150, 1)"}}}},
	    "steps":[{"step":{"id":"nap","type":"Sleep","params":{"sleep_seconds":{"type":"LONG","value":600}}}}]}}]}}`))
	r := s.start(wf, "")
	var overview string
	poll(t, 60*time.Second, "150 iterations running", func() (bool, string) {
		o := s.steps(wf, r.WorkflowInstanceID)["loop"].Foreach
		if o == nil {
			return false, "no overview yet"
		}
		overview = fmt.Sprintf("%+v", *o)
		return o.Running == 150, overview
	})
	inline := s.steps(wf, r.WorkflowInstanceID)["loop"].Foreach.WorkflowID
	killed := time.Now()
	if code := s.do("PUT", fmt.Sprintf("/api/v3/workflows/%s/instances/%d/actions/kill", wf, r.WorkflowInstanceID), nil, nil); code != http.StatusOK {
		t.Fatalf("kill: HTTP %d", code)
	}
	v := s.wait(wf, r.WorkflowInstanceID, 30*time.Second)
	if v.Status != "FAILED" {
		t.Fatalf("killed instance ended %s", v.Status)
	}
	t.Logf("instance ended %s %.1f s after the kill", v.Status, time.Since(killed).Seconds())
	// Every iteration ends too.
	poll(t, 60*time.Second, "every iteration ended", func() (bool, string) {
		live := 0
		for n := int64(1); n <= 150; n++ {
			switch s.instance(inline, n).Status {
			case "SUCCEEDED", "FAILED", "STOPPED", "TIMED_OUT":
			default:
				live++
			}
		}
		return live == 0, fmt.Sprintf("%d iterations still live", live)
	})
}

// TestForeachRestartFromIncompleteCallsOnlyTheFailedIterationAgain: a
// foreach whose iteration (3, a) failed is restarted from incomplete; only
// that iteration runs again — as run 2 of the same iteration instance —
// and the others keep their first (and only) call.
func TestForeachRestartFromIncompleteCallsOnlyTheFailedIterationAgain(t *testing.T) {
	t.Parallel()
	ls, srv := startLoopServer(t, 20*time.Millisecond, "3/a")
	s := startSystem(t, stack.Options{})
	wf := s.push(foreachWorkflow("loop-restart", srv.URL, "[1,2,3,4,5]", `["a"]`, 5, "FAIL_AFTER_RUNNING"))
	r := s.start(wf, "")
	if v := s.wait(wf, r.WorkflowInstanceID, 60*time.Second); v.Status != "FAILED" {
		t.Fatalf("first run: %s %v", v.Status, v.StepStatuses)
	}
	inline := s.steps(wf, r.WorkflowInstanceID)["loop"].Foreach.WorkflowID
	ls.heal("3/a")
	s.restart(t, wf, r.WorkflowInstanceID, "RESTART_FROM_INCOMPLETE", "restart")
	v := s.wait(wf, r.WorkflowInstanceID, 60*time.Second)
	steps := s.steps(wf, r.WorkflowInstanceID)
	if v.Status != "SUCCEEDED" || v.WorkflowRunID != 2 {
		t.Fatalf("restarted run: %s run %d %v", v.Status, v.WorkflowRunID, v.StepStatuses)
	}
	o := steps["loop"].Foreach
	if o == nil || o.WorkflowID != inline || o.Total != 5 || o.Counts["SUCCEEDED"] != 5 {
		t.Fatalf("restarted foreach overview %+v (inline workflow before: %s)", o, inline)
	}
	calls, _ := ls.snapshot()
	want := map[string]int{"1/a": 1, "2/a": 1, "3/a": 2, "4/a": 1, "5/a": 1}
	if fmt.Sprint(calls) != fmt.Sprint(want) {
		t.Errorf("calls %v, want %v: only the failed iteration runs again", calls, want)
	}
	it := s.instance(inline, 3)
	if it.Status != "SUCCEEDED" || it.WorkflowRunID != 2 || it.Initiator == nil || it.Initiator.Parent == nil || it.Initiator.Parent.RunID != 2 {
		t.Errorf("iteration 3: %s run %d initiator %+v", it.Status, it.WorkflowRunID, it.Initiator)
	}
	if it := s.instance(inline, 2); it.WorkflowRunID != 1 {
		t.Errorf("iteration 2 ran again: run %d", it.WorkflowRunID)
	}

	// One iteration restarted by itself (through its own id), from the
	// beginning: the parent's run 3 runs it again, and it alone.
	s.restart(t, inline, 2, "RESTART_FROM_BEGINNING", "restart iteration 2")
	v = s.wait(wf, r.WorkflowInstanceID, 60*time.Second)
	if v.Status != "SUCCEEDED" || v.WorkflowRunID != 3 {
		t.Fatalf("after restarting iteration 2: %s run %d %v", v.Status, v.WorkflowRunID, v.StepStatuses)
	}
	calls, _ = ls.snapshot()
	want = map[string]int{"1/a": 1, "2/a": 2, "3/a": 2, "4/a": 1, "5/a": 1}
	if fmt.Sprint(calls) != fmt.Sprint(want) {
		t.Errorf("calls %v, want %v: only iteration 2 runs again", calls, want)
	}
	if it := s.instance(inline, 2); it.WorkflowRunID != 2 || it.Status != "SUCCEEDED" {
		t.Errorf("iteration 2: %s run %d", it.Status, it.WorkflowRunID)
	}
	if o := s.steps(wf, r.WorkflowInstanceID)["loop"].Foreach; o == nil || o.Counts["SUCCEEDED"] != 5 {
		t.Errorf("foreach overview after restarting one iteration: %+v", o)
	}
	// An iteration runs with its loop's params.
	var rv map[string]any
	if code := s.do("POST", fmt.Sprintf("/api/v3/workflows/%s/instances/4/actions/restart", inline),
		[]byte(`{"run_params": {"i": {"type": "LONG", "value": 9}}}`), &rv); code != http.StatusBadRequest {
		t.Errorf("an iteration restarted with run params: HTTP %d %v, want 400", code, rv)
	}
}

// TestBreakpointsInsideLoops: a breakpoint on a step inside a foreach,
// set with the workflow's id, pauses that step in every iteration; the
// paused attempts are listed under the iterations' inline workflow, one
// resumes through its own id, and deleting the breakpoint resumes the
// rest.
func TestBreakpointsInsideLoops(t *testing.T) {
	t.Parallel()
	ls, srv := startLoopServer(t, 10*time.Millisecond)
	s := startSystem(t, stack.Options{})
	wf := s.push(foreachWorkflow("loop-bp", srv.URL, "[1,2,3]", `["a"]`, 3, "FAIL_AFTER_RUNNING"))
	var bp map[string]any
	if code := s.do("POST", "/api/v3/workflows/steps/breakpoints", []byte(`{"workflow_id":"loop-bp","step_id":"call"}`), &bp); code != 200 {
		t.Fatalf("breakpoint on a step inside the loop: %d %v", code, bp)
	}
	r := s.start(wf, "")
	type paused struct {
		WorkflowID string `json:"workflow_id"`
		Instance   int64  `json:"workflow_instance_id"`
		Run        int64  `json:"workflow_run_id"`
		StepID     string `json:"step_id"`
		Attempt    int64  `json:"step_attempt_id"`
	}
	var pl struct {
		Attempts []paused `json:"paused_step_attempts"`
	}
	poll(t, 30*time.Second, "three iterations paused at the breakpoint", func() (bool, string) {
		pl.Attempts = nil
		code := s.do("GET", "/api/v3/workflows/steps/breakpoints/paused-step-attempts?workflowId=loop-bp&stepId=call", nil, &pl)
		return code == 200 && len(pl.Attempts) == 3, fmt.Sprintf("HTTP %d, %+v", code, pl.Attempts)
	})
	s.idle(t)
	if calls, _ := ls.snapshot(); len(calls) != 0 {
		t.Fatalf("paused steps called the server: %v", calls)
	}
	inline := s.steps(wf, r.WorkflowInstanceID)["loop"].Foreach.WorkflowID
	first := pl.Attempts[0]
	if first.WorkflowID != inline || first.StepID != "call" {
		t.Fatalf("paused attempt %+v, want step call of %s", first, inline)
	}
	var e map[string]any
	path := fmt.Sprintf("/api/v3/workflows/steps/breakpoints/%s/instances/%d/runs/%d/steps/call/attempts/%d/actions/resume",
		first.WorkflowID, first.Instance, first.Run, first.Attempt)
	if code := s.do("PUT", path, nil, &e); code != 200 {
		t.Fatalf("resume one iteration: %d %v", code, e)
	}
	poll(t, 30*time.Second, "the resumed iteration's call", func() (bool, string) {
		calls, _ := ls.snapshot()
		return len(calls) == 1, fmt.Sprint(calls)
	})
	s.removeBreakpoint(t, "loop-bp", "call", 2)
	wantEnd(t, s.wait(wf, r.WorkflowInstanceID, 60*time.Second), "SUCCEEDED", nil)
	if calls, _ := ls.snapshot(); fmt.Sprint(calls) != fmt.Sprint(map[string]int{"1/a": 1, "2/a": 1, "3/a": 1}) {
		t.Errorf("calls %v, want each iteration once", calls)
	}
}

// TestTagPermitsBoundStepsInsideLoops: a tag permit bounds the steps that
// carry its tag across iterations as across runs — six iterations, four at
// a time, of an Http step tagged with a permit of 2 never call more than
// two at once.
func TestTagPermitsBoundStepsInsideLoops(t *testing.T) {
	t.Parallel()
	ls, srv := startLoopServer(t, 150*time.Millisecond)
	s := startSystem(t, stack.Options{})
	var p map[string]any
	if code := s.do("POST", "/api/v3/tag-permits", []byte(`{"tag":"loop-db","max_allowed":2}`), &p); code != 200 {
		t.Fatalf("tag permit: %d %v", code, p)
	}
	wf := s.push([]byte(fmt.Sprintf(`{"properties":{"owner":"loop"},"workflow":{"id":"loop-permits","steps":[
	  {"foreach":{"id":"loop","concurrency":4,
	    "params":{"loop_params":{"type":"MAP","value":{"i":{"type":"LONG_ARRAY","value":[1,2,3,4,5,6]}}}},
	    "steps":[{"step":{"id":"call","type":"Http","tags":[{"name":"loop-db"}],"retry_policy":{"error_retry_limit":0,"platform_retry_limit":0},
	      "params":{"http":{"type":"MAP","value":{"url":{"type":"STRING","value":"%s/it/${i}/p"},"method":{"type":"STRING","value":"GET"}}}}}}]}}]}}`, srv.URL)))
	r := s.start(wf, "")
	if v := s.wait(wf, r.WorkflowInstanceID, 90*time.Second); v.Status != "SUCCEEDED" {
		t.Fatalf("instance: %s %v", v.Status, v.StepStatuses)
	}
	calls, peak := ls.snapshot()
	if len(calls) != 6 || peak > 2 {
		t.Errorf("calls %v, %d at once; want 6 calls, at most 2 at once (the permit)", calls, peak)
	}
	t.Logf("peak %d calls at once", peak)
}

// TestNestedForeachCallsEachPairOnce: a foreach over i whose body is a
// foreach over j calls /it/<i>/<j> for exactly the (i, j) pairs, each once,
// never more at once than the two concurrencies allow; one inner iteration
// restarted by itself calls its pair again, and only it.
func TestNestedForeachCallsEachPairOnce(t *testing.T) {
	t.Parallel()
	ls, srv := startLoopServer(t, 50*time.Millisecond)
	s := startSystem(t, stack.Options{})
	wf := s.push([]byte(fmt.Sprintf(`{"properties":{"owner":"loop"},"workflow":{"id":"loop-nested","steps":[
	  {"foreach":{"id":"outer","concurrency":2,
	    "params":{"loop_params":{"type":"MAP","value":{"i":{"type":"LONG_ARRAY","value":[1,2,3]}}}},
	    "steps":[{"foreach":{"id":"inner","concurrency":2,
	      "params":{"loop_params":{"type":"MAP","value":{"j":{"type":"STRING_ARRAY","value":["a","b","c"]}}}},
	      "steps":[{"step":{"id":"call","type":"Http","retry_policy":{"error_retry_limit":0,"platform_retry_limit":0},
	        "params":{"http":{"type":"MAP","value":{"url":{"type":"STRING","value":"%s/it/${i}/${j}"},"method":{"type":"STRING","value":"GET"}}}}}}]}}]}}]}}`, srv.URL)))
	r := s.start(wf, "")
	v := s.wait(wf, r.WorkflowInstanceID, 90*time.Second)
	if v.Status != "SUCCEEDED" {
		t.Fatalf("instance: %s %v", v.Status, v.StepStatuses)
	}
	calls, peak := ls.snapshot()
	want := map[string]int{}
	for _, i := range []string{"1", "2", "3"} {
		for _, j := range []string{"a", "b", "c"} {
			want[i+"/"+j] = 1
		}
	}
	if fmt.Sprint(calls) != fmt.Sprint(want) {
		t.Errorf("calls %v, want each of the 9 pairs once", calls)
	}
	if peak > 4 {
		t.Errorf("%d calls at once; 2 outer x 2 inner allow 4", peak)
	}

	// One inner iteration restarted by itself: (2, b) is called again and
	// nothing else; its outer iteration and the root each take a new run.
	outer := s.steps(wf, r.WorkflowInstanceID)["outer"].Foreach.WorkflowID
	inner := s.steps(outer, 2)["inner"].Foreach.WorkflowID
	s.restart(t, inner, 2, "RESTART_FROM_BEGINNING", "restart inner iteration (2, b)")
	if v := s.wait(wf, r.WorkflowInstanceID, 90*time.Second); v.Status != "SUCCEEDED" || v.WorkflowRunID != 2 {
		t.Fatalf("after restarting (2, b): %s run %d %v", v.Status, v.WorkflowRunID, v.StepStatuses)
	}
	want["2/b"] = 2
	if calls, _ := ls.snapshot(); fmt.Sprint(calls) != fmt.Sprint(want) {
		t.Errorf("calls %v, want %v: only (2, b) runs again", calls, want)
	}
	for _, c := range []struct {
		wf        string
		inst, run int64
	}{{outer, 1, 1}, {outer, 2, 2}, {outer, 3, 1}, {inner, 1, 1}, {inner, 2, 2}, {inner, 3, 1}} {
		if it := s.instance(c.wf, c.inst); it.Status != "SUCCEEDED" || it.WorkflowRunID != c.run {
			t.Errorf("%s/%d: %s run %d, want SUCCEEDED run %d", c.wf, c.inst, it.Status, it.WorkflowRunID, c.run)
		}
	}
	if o := s.steps(wf, r.WorkflowInstanceID)["outer"].Foreach; o == nil || o.Counts["SUCCEEDED"] != 3 {
		t.Errorf("outer overview after the restart: %+v", o)
	}
	if o := s.steps(outer, 2)["inner"].Foreach; o == nil || o.Counts["SUCCEEDED"] != 3 || o.WorkflowID != inner {
		t.Errorf("inner overview of (2, *) after the restart: %+v", o)
	}
	if ro := v.RollupOverview; ro == nil || ro.TotalLeafCount != 9 || ro.Overview["SUCCEEDED"] != 9 {
		t.Errorf("rollup %+v, want 9 leaf steps SUCCEEDED", ro)
	}
	t.Logf("peak %d calls at once", peak)
}

// TestNoOpIterationsAreBornFinished holds the born-finished path: a foreach
// whose steps have no work creates each iteration already ended, in the
// commit that launches it — its run item stays at version 1 and its inbox
// empty, so no decider of its own ever ran — and stores a succeeded one
// compact (no attempt or timeline items), while the views, getFromForeach
// and the rollup read those iterations as they read any other. A failed
// iteration is born too, with its items. A breakpoint on one of those steps
// keeps its iterations from being born finished: they pause there.
func TestNoOpIterationsAreBornFinished(t *testing.T) {
	t.Parallel()
	s := startSystem(t, stack.Options{})
	const n = engine.OffloadLoopElements + 26 // its loop params leave the run's state
	is := make([]string, n)
	want := make([]string, n)
	for i := range n {
		is[i], want[i] = fmt.Sprint(i), fmt.Sprint(i*i)
	}
	body := func(id string) []byte {
		return []byte(fmt.Sprintf(`{"properties":{"owner":"born"},"workflow":{"id":%q,"steps":[
		  {"foreach":{"id":"loop","concurrency":7,"params":{"loop_params":{"type":"MAP","value":{"i":{"type":"LONG_ARRAY","value":[%s]}}}},
		    "steps":[{"step":{"id":"sq","type":"NoOp","params":{"v":{"type":"LONG","expression":"i * i"}},"transition":{"successors":{"tail":"true"}}}},
		      {"step":{"id":"tail","type":"NoOp"}}],
		    "transition":{"successors":{"read":"true"}}}},
		  {"step":{"id":"read","type":"NoOp","params":{"all":{"type":"LONG_ARRAY","expression":"params.getFromForeach('loop', 'sq', 'v')"}}}}]}}`,
			id, strings.Join(is, ",")))
	}
	wf := s.push(body("born-loop"))
	r := s.start(wf, "")
	if v := s.wait(wf, r.WorkflowInstanceID, 60*time.Second); v.Status != "SUCCEEDED" {
		t.Fatalf("instance %s, steps %v", v.Status, v.StepStatuses)
	}
	steps := s.steps(wf, r.WorkflowInstanceID)
	if got := fmt.Sprint(steps["read"].Params["all"]); got != "["+strings.Join(want, " ")+"]" {
		t.Errorf("getFromForeach over born iterations: %s", got)
	}
	loop := steps["loop"].Foreach
	if loop == nil || loop.Total != n || loop.Counts["SUCCEEDED"] != n || loop.Running != 0 {
		t.Fatalf("foreach overview %+v", loop)
	}
	if ro := s.instance(wf, r.WorkflowInstanceID).RollupOverview; ro == nil || ro.TotalLeafCount < 2*n || ro.Overview["SUCCEEDED"] != ro.TotalLeafCount {
		t.Errorf("rollup overview %+v, want every one of more than %d leaf steps SUCCEEDED", ro, 2*n)
	}
	ctx := context.Background()
	cfg := s.st.Emulator.TestConfig(t)
	db := store.New(dynamodb.NewFromConfig(cfg), s.st.Resources.Table.Name, store.Options{})
	for inst := int64(1); inst <= n; inst++ {
		rec, pending, err := db.Runs.LoadRun(ctx, loop.WorkflowID, inst, 1)
		if err != nil {
			t.Fatalf("iteration %d: %v", inst, err)
		}
		if rec.V != 1 || rec.Status != "SUCCEEDED" || len(pending) != 0 {
			t.Errorf("iteration %d: run item v%d %s, %d inbox events; want v1 SUCCEEDED, none (born finished)", inst, rec.V, rec.Status, len(pending))
		}
	}
	// The loop params lived in their own item while the loop ran; the
	// foreach step's attempt keeps them.
	raw, err := db.Runs.GetLoopParams(ctx, wf, r.WorkflowInstanceID, 1, "loop", 1)
	var lp engine.Values
	if err == nil {
		err = jsonnum.Decode(raw, &lp)
	}
	m, _ := lp[engine.LoopParamsName].(map[string]any)
	if ints, _ := m["i"].([]int64); err != nil || len(ints) != n {
		t.Errorf("loop params item: %v %v, want %d LONG values", lp, err, n)
	}
	if got := fmt.Sprint(steps["loop"].Params["loop_params"]); got != "map[i:["+strings.Join(is, " ")+"]]" {
		t.Errorf("the foreach step's params after the loop: loop_params %s", got)
	}
	if as, err := db.Attempts.ListAttempts(ctx, loop.WorkflowID, 34, 1); err != nil || len(as) != 0 {
		t.Errorf("iteration 34 has %d attempt items (%v), want none: stored compact", len(as), err)
	}
	if tl, err := db.Runs.ListTimeline(ctx, loop.WorkflowID, 34, 1); err != nil || len(tl) != 0 {
		t.Errorf("iteration 34 has %d timeline items (%v), want none: stored compact", len(tl), err)
	}
	it := s.instance(loop.WorkflowID, 34)
	if it.Status != "SUCCEEDED" || fmt.Sprint(it.Params["i"]) != "33" || it.Initiator == nil || it.Initiator.Type != "FOREACH" || len(it.Timeline) != 2 {
		t.Errorf("iteration 34: %s i=%v initiator %+v timeline %+v", it.Status, it.Params["i"], it.Initiator, it.Timeline)
	}
	inner := s.steps(loop.WorkflowID, 34)
	if sq := inner["sq"]; sq.RuntimeState.Status != "SUCCEEDED" || fmt.Sprint(sq.Params["v"]) != "1089" || len(sq.Timeline) != 7 ||
		sq.Timeline[6].Message != "step sq attempt 1 is SUCCEEDED" {
		t.Errorf("iteration 34 step sq: %s v=%v timeline %+v", sq.RuntimeState.Status, sq.Params["v"], sq.Timeline)
	}
	if tail := inner["tail"]; tail.RuntimeState.Status != "SUCCEEDED" {
		t.Errorf("iteration 34 step tail: %s", tail.RuntimeState.Status)
	}
	var one orchestrator.StepView
	if code := s.do("GET", fmt.Sprintf("/api/v3/workflows/%s/instances/34/runs/1/steps/sq/attempts/1", loop.WorkflowID), nil, &one); code != 200 ||
		fmt.Sprint(one.Params["v"]) != "1089" || len(one.Timeline) != 7 {
		t.Errorf("iteration 34 step sq attempt 1: HTTP %d, v=%v, %d timeline entries", code, one.Params["v"], len(one.Timeline))
	}

	// A failed iteration is born finished too, with its items.
	wf = s.push([]byte(`{"properties":{"owner":"born"},"workflow":{"id":"born-fail","steps":[
	  {"foreach":{"id":"loop","concurrency":3,"failure_mode":"IGNORE_FAILURE","params":{"loop_params":{"type":"MAP","value":{"i":{"type":"LONG_ARRAY","value":[3,4,5,6]}}}},
	    "steps":[{"step":{"id":"div","type":"NoOp","params":{"v":{"type":"LONG","expression":"10 / (i - 5)"}}}}]}}]}}`))
	r = s.start(wf, "")
	if v := s.wait(wf, r.WorkflowInstanceID, 60*time.Second); v.Status != "SUCCEEDED" || v.StepStatuses["loop"] != "COMPLETED_WITH_ERROR" {
		t.Fatalf("born-fail: %s %v; want SUCCEEDED, the loop COMPLETED_WITH_ERROR (IGNORE_FAILURE)", v.Status, v.StepStatuses)
	}
	fl := s.steps(wf, r.WorkflowInstanceID)["loop"].Foreach
	if fl == nil || fl.Counts["SUCCEEDED"] != 3 || fl.Counts["FAILED"] != 1 {
		t.Fatalf("born-fail overview %+v", fl)
	}
	for inst := int64(1); inst <= 4; inst++ {
		rec, _, err := db.Runs.LoadRun(ctx, fl.WorkflowID, inst, 1)
		if err != nil || rec.V != 1 {
			t.Errorf("born-fail iteration %d: %v, v%d; want v1", inst, err, rec.V)
		}
	}
	if as, err := db.Attempts.ListAttempts(ctx, fl.WorkflowID, 3, 1); err != nil || len(as) != 1 || as[0].Status != "FATALLY_FAILED" {
		t.Errorf("the failed iteration's attempt items: %+v %v", as, err)
	}
	if div := s.steps(fl.WorkflowID, 3)["div"]; div.RuntimeState.Status != "FATALLY_FAILED" || len(div.Timeline) == 0 ||
		!strings.Contains(div.Timeline[len(div.Timeline)-1].Message, "division by zero") {
		t.Errorf("the failed iteration's step: %s %+v", div.RuntimeState.Status, div.Timeline)
	}

	wf = s.push(body("born-bp"))
	var bp map[string]any
	if code := s.do("POST", "/api/v3/workflows/steps/breakpoints", []byte(`{"workflow_id":"born-bp","step_id":"tail"}`), &bp); code != 200 {
		t.Fatalf("breakpoint: %d %v", code, bp)
	}
	r = s.start(wf, "")
	var pl struct {
		Attempts []struct {
			WorkflowID string `json:"workflow_id"`
		} `json:"paused_step_attempts"`
	}
	poll(t, 30*time.Second, "7 iterations paused at the breakpoint", func() (bool, string) {
		pl.Attempts = nil
		code := s.do("GET", "/api/v3/workflows/steps/breakpoints/paused-step-attempts?workflowId=born-bp&stepId=tail", nil, &pl)
		return code == 200 && len(pl.Attempts) == 7, fmt.Sprintf("HTTP %d, %d paused", code, len(pl.Attempts))
	})
	if o := s.steps(wf, r.WorkflowInstanceID)["loop"].Foreach; o == nil || o.Running != 7 || o.Counts["SUCCEEDED"] != 0 {
		t.Errorf("foreach overview with a breakpoint on its steps: %+v", o)
	}
}
