package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/localstack/stack"
	"github.com/maestro-serverless/maestro/orchestrator"
)

// subChild is a PARALLEL workflow whose one Http step calls
// /it/<p>/<w>: p and w are its params (defaults 0 and "none"), so the
// calls tell which params a parent passed down.
func subChild(url string) []byte {
	return []byte(fmt.Sprintf(`{"properties":{"owner":"sub","run_strategy":"parallel"},"workflow":{"id":"sub-child",
	  "params":{"p":{"type":"LONG","value":0},"w":{"type":"STRING","value":"none"}},
	  "steps":[{"step":{"id":"call","type":"Http","retry_policy":{"error_retry_limit":0,"platform_retry_limit":0},
	    "params":{"http":{"type":"MAP","value":{"url":{"type":"STRING","value":"%s/it/${p}/${w}"},"method":{"type":"STRING","value":"GET"}}}}}}]}}`, url))
}

// subParent runs sub-child three times: "a" (sync, all params), then "b"
// (explicit_params: only its own p), and beside them "c" (sync false).
const subParent = `{"properties":{"owner":"sub"},"workflow":{"id":"sub-parent",
  "params":{"w":{"type":"STRING","value":"pw"}},
  "steps":[
    {"subworkflow":{"id":"a","params":{"subworkflow_id":{"type":"STRING","value":"sub-child"},"p":{"type":"LONG","value":1}},
      "transition":{"successors":{"b":"true"}}}},
    {"subworkflow":{"id":"b","explicit_params":true,"params":{"subworkflow_id":{"type":"STRING","value":"sub-child"},
      "subworkflow_version":{"type":"STRING","value":"latest"},"p":{"type":"LONG","value":2}}}},
    {"subworkflow":{"id":"c","sync":false,"params":{"subworkflow_id":{"type":"STRING","value":"sub-child"},"p":{"type":"LONG","value":3}}}}]}}`

// TestSubworkflows: a subworkflow step starts one real instance of its
// workflow per attempt (initiator SUBWORKFLOW, parent named), passes the
// params Maestro passes, follows it (sync) or not; a workflow that calls
// itself stops at the depth limit; a kill of the parent reaches the child;
// a child workflow that does not exist fails the step with a message.
func TestSubworkflows(t *testing.T) {
	// Mostly waiting on its children's steps: it runs beside the sample
	// tests.
	ls, srv := startLoopServer(t, 20*time.Millisecond)
	s := startParallelSystem(t, stack.Options{})
	s.push(subChild(srv.URL))
	parent := s.push([]byte(subParent))
	r := s.start(parent, "")
	v := s.wait(parent, r.WorkflowInstanceID, 90*time.Second)
	steps := s.steps(parent, r.WorkflowInstanceID)
	if v.Status != "SUCCEEDED" {
		t.Fatalf("sub-parent: %s %v", v.Status, v.StepStatuses)
	}
	// c does not wait for its child: wait for the child's call.
	poll(t, 30*time.Second, "the sync=false child's call", func() (bool, string) {
		calls, _ := ls.snapshot()
		return calls["3/pw"] == 1, fmt.Sprint(calls)
	})
	calls, _ := ls.snapshot()
	want := map[string]int{"1/pw": 1, "2/none": 1, "3/pw": 1}
	if fmt.Sprint(calls) != fmt.Sprint(want) {
		t.Errorf("calls %v, want %v (a and c pass the workflow param w down, b with explicit_params does not)", calls, want)
	}
	seen := map[int64]bool{}
	for _, id := range []string{"a", "b", "c"} {
		o := steps[id].Subworkflow
		if o == nil || o.WorkflowID != "sub-child" || o.InstanceID < 1 || seen[o.InstanceID] {
			t.Fatalf("step %s: subworkflow overview %+v", id, o)
		}
		seen[o.InstanceID] = true
		child := s.wait("sub-child", o.InstanceID, 30*time.Second)
		if child.Status != "SUCCEEDED" || child.Initiator == nil || child.Initiator.Type != "SUBWORKFLOW" ||
			child.Initiator.Parent == nil || child.Initiator.Parent.StepID != id || child.Initiator.Parent.InstanceID != r.WorkflowInstanceID ||
			child.Initiator.Parent.Depth != 1 {
			t.Errorf("step %s's child: %s initiator %+v", id, child.Status, child.Initiator)
		}
	}
	if !strings.Contains(steps["c"].Timeline[len(steps["c"].Timeline)-1].Message, "sync false") {
		t.Errorf("step c's last timeline entry: %+v", steps["c"].Timeline)
	}

	t.Run("a workflow that calls itself stops at the depth limit", func(t *testing.T) {
		self := s.push([]byte(`{"properties":{"owner":"sub","run_strategy":"parallel"},"workflow":{"id":"sub-self","steps":[
		  {"subworkflow":{"id":"again","params":{"subworkflow_id":{"type":"STRING","value":"sub-self"}}}}]}}`))
		r := s.start(self, "")
		if v := s.wait(self, r.WorkflowInstanceID, 90*time.Second); v.Status != "FAILED" {
			t.Fatalf("sub-self: %s %v", v.Status, v.StepStatuses)
		}
		// Instances 1..11: instance k is at depth k-1; the step of the one
		// at depth 10 fails without starting another.
		deepest := s.steps(self, 11)["again"]
		if deepest.RuntimeState.Status != "FATALLY_FAILED" || !strings.Contains(deepest.Timeline[len(deepest.Timeline)-1].Message, "nesting deeper than the limit of 10 levels") {
			t.Errorf("instance 11's step: %s %+v", deepest.RuntimeState.Status, deepest.Timeline)
		}
		if code := s.do("GET", "/api/v3/workflows/sub-self/instances/12", nil, nil); code != 404 {
			t.Errorf("a 12th instance: GET answered %d, want 404", code)
		}
	})

	t.Run("a kill of the parent kills its child", func(t *testing.T) {
		s.push([]byte(`{"properties":{"owner":"sub","run_strategy":"parallel"},"workflow":{"id":"sub-sleeper","steps":[
		  {"step":{"id":"nap","type":"Sleep","params":{"sleep_seconds":{"type":"LONG","value":600}}}}]}}`))
		wf := s.push([]byte(`{"properties":{"owner":"sub"},"workflow":{"id":"sub-killed","steps":[
		  {"subworkflow":{"id":"sub","params":{"subworkflow_id":{"type":"STRING","value":"sub-sleeper"}}}}]}}`))
		r := s.start(wf, "")
		var child int64
		poll(t, 30*time.Second, "the child starts", func() (bool, string) {
			o := s.steps(wf, r.WorkflowInstanceID)["sub"].Subworkflow
			if o == nil {
				return false, "no child yet"
			}
			child = o.InstanceID
			return s.instance("sub-sleeper", child).StepStatuses["nap"] == "RUNNING", "child not running yet"
		})
		killed := time.Now()
		s.act(wf, r.WorkflowInstanceID, "kill")
		if v := s.wait(wf, r.WorkflowInstanceID, 30*time.Second); v.Status != "FAILED" {
			t.Fatalf("killed parent: %s", v.Status)
		}
		c := s.wait("sub-sleeper", child, 30*time.Second)
		t.Logf("child %s %.1f s after the kill", c.Status, time.Since(killed).Seconds())
		if c.Status != "FAILED" && c.Status != "STOPPED" {
			t.Errorf("child after the parent's kill: %s", c.Status)
		}
	})

	// The iterations have work (a Sleep), so they are runs of their own whose
	// settled steps' params are in their attempt items (read in batches).
	t.Run("getFromSubworkflow and getFromForeach read the children's params", func(t *testing.T) {
		s.push([]byte(`{"properties":{"owner":"sub","run_strategy":"parallel"},"workflow":{"id":"sub-inner",
		  "params":{"p":{"type":"LONG","value":0}},
		  "steps":[{"step":{"id":"inner","type":"NoOp","params":{"x":{"type":"LONG","expression":"p * 10"}}}}]}}`))
		wf := s.push([]byte(`{"properties":{"owner":"sub"},"workflow":{"id":"sub-reader","steps":[
		  {"subworkflow":{"id":"sub","params":{"subworkflow_id":{"type":"STRING","value":"sub-inner"},"p":{"type":"LONG","value":4}},
		    "transition":{"successors":{"loop":"true"}}}},
		  {"foreach":{"id":"loop","params":{"loop_params":{"type":"MAP","value":{"i":{"type":"LONG_ARRAY","value":[3,1,2]}}}},
		    "steps":[{"step":{"id":"sq","type":"NoOp","params":{"v":{"type":"LONG","expression":"i * i"}},"transition":{"successors":{"nap":"true"}}}},
		      {"step":{"id":"nap","type":"Sleep","params":{"sleep_seconds":{"type":"LONG","value":0}}}}],
		    "transition":{"successors":{"read":"true"}}}},
		  {"step":{"id":"read","type":"NoOp","params":{
		    "got":{"type":"LONG","expression":"params.getFromSubworkflow('sub', 'inner', 'x')"},
		    "all":{"type":"LONG_ARRAY","expression":"params.getFromForeach('loop', 'sq', 'v')"}}}}]}}`))
		r := s.start(wf, "")
		if v := s.wait(wf, r.WorkflowInstanceID, 60*time.Second); v.Status != "SUCCEEDED" {
			st := s.steps(wf, r.WorkflowInstanceID)["read"]
			t.Fatalf("sub-reader: %s %v %+v", v.Status, v.StepStatuses, st.Timeline)
		}
		p := s.steps(wf, r.WorkflowInstanceID)["read"].Params
		if fmt.Sprint(p["got"]) != "40" || fmt.Sprint(p["all"]) != "[9 1 4]" {
			t.Errorf("read: got=%v all=%v; want 40 and [9 1 4]", p["got"], p["all"])
		}
	})

	t.Run("change events name the parent and root of a child run", func(t *testing.T) {
		sub := subscribe(t, s, "tree", `{"root_workflow_id": ["sub-tree"], "event_type": ["instance_status_changed"]}`)
		wf := s.push([]byte(`{"properties":{"owner":"sub"},"workflow":{"id":"sub-tree","steps":[
		  {"subworkflow":{"id":"sub","params":{"subworkflow_id":{"type":"STRING","value":"sub-inner"},"p":{"type":"LONG","value":1}},
		    "transition":{"successors":{"loop":"true"}}}},
		  {"foreach":{"id":"loop","params":{"loop_params":{"type":"MAP","value":{"i":{"type":"LONG_ARRAY","value":[1,2]}}}},
		    "steps":[{"step":{"id":"sq","type":"NoOp"}}]}}]}}`))
		r := s.start(wf, "")
		if v := s.wait(wf, r.WorkflowInstanceID, 60*time.Second); v.Status != "SUCCEEDED" {
			t.Fatalf("sub-tree: %s %v", v.Status, v.StepStatuses)
		}
		ended := map[string]string{} // whose SUCCEEDED event -> parent step
		for _, e := range sub.drain() {
			if e.NewStatus != "SUCCEEDED" {
				continue
			}
			switch {
			case e.WorkflowID == "sub-tree" && e.Parent == nil:
				ended["root"] = ""
			case e.Parent != nil && e.Parent.WorkflowID == "sub-tree" && e.Parent.InstanceID == r.WorkflowInstanceID &&
				e.Parent.RootWorkflowID == "sub-tree" && e.Parent.RootInstanceID == r.WorkflowInstanceID:
				ended[fmt.Sprintf("%s/%d", strings.SplitN(e.WorkflowID, "_", 2)[0], e.InstanceID)] = e.Parent.StepID
			default:
				t.Errorf("unexpected event %+v parent %+v", e, e.Parent)
			}
		}
		inner := s.steps(wf, r.WorkflowInstanceID)["sub"].Subworkflow
		want := map[string]string{"root": "", fmt.Sprintf("sub-inner/%d", inner.InstanceID): "sub", "maestro/1": "loop", "maestro/2": "loop"}
		if fmt.Sprint(ended) != fmt.Sprint(want) {
			t.Errorf("SUCCEEDED events of the tree (by run -> parent step): %v, want %v", ended, want)
		}
	})

	t.Run("a restart from incomplete restarts the failed child, which reruns only its failed step", func(t *testing.T) {
		ls.mu.Lock()
		ls.fail["flaky/x"] = true
		ls.mu.Unlock()
		s.push([]byte(fmt.Sprintf(`{"properties":{"owner":"sub","run_strategy":"parallel"},"workflow":{"id":"sub-twostep","steps":[
		  {"step":{"id":"ok","type":"Http","params":{"http":{"type":"MAP","value":{"url":{"type":"STRING","value":"%[1]s/it/ok/x"},"method":{"type":"STRING","value":"GET"}}}},
		    "transition":{"successors":{"flaky":"true"}}}},
		  {"step":{"id":"flaky","type":"Http","retry_policy":{"error_retry_limit":0,"platform_retry_limit":0},
		    "params":{"http":{"type":"MAP","value":{"url":{"type":"STRING","value":"%[1]s/it/flaky/x"},"method":{"type":"STRING","value":"GET"}}}}}}]}}`, srv.URL)))
		wf := s.push([]byte(`{"properties":{"owner":"sub"},"workflow":{"id":"sub-restarted","steps":[
		  {"subworkflow":{"id":"sub","params":{"subworkflow_id":{"type":"STRING","value":"sub-twostep"}}}}]}}`))
		r := s.start(wf, "")
		if v := s.wait(wf, r.WorkflowInstanceID, 60*time.Second); v.Status != "FAILED" {
			t.Fatalf("first run: %s %v", v.Status, v.StepStatuses)
		}
		first := s.steps(wf, r.WorkflowInstanceID)["sub"].Subworkflow
		ls.heal("flaky/x")
		s.restart(t, wf, r.WorkflowInstanceID, "RESTART_FROM_INCOMPLETE", "restart")
		if v := s.wait(wf, r.WorkflowInstanceID, 60*time.Second); v.Status != "SUCCEEDED" {
			t.Fatalf("restarted run: %s %v", v.Status, v.StepStatuses)
		}
		again := s.steps(wf, r.WorkflowInstanceID)["sub"].Subworkflow
		if first == nil || again == nil || again.InstanceID != first.InstanceID || again.RunID != 2 {
			t.Fatalf("child before %+v, after %+v: want the same instance, run 2", first, again)
		}
		calls, _ := ls.snapshot()
		if calls["ok/x"] != 1 || calls["flaky/x"] != 2 {
			t.Errorf("calls ok=%d flaky=%d, want 1 and 2: the child reruns only its failed step", calls["ok/x"], calls["flaky/x"])
		}
	})

	t.Run("a child workflow that does not exist fails the step", func(t *testing.T) {
		wf := s.push([]byte(`{"properties":{"owner":"sub"},"workflow":{"id":"sub-missing","steps":[
		  {"subworkflow":{"id":"sub","params":{"subworkflow_id":{"type":"STRING","value":"no-such-workflow"}}}}]}}`))
		r := s.start(wf, "")
		if v := s.wait(wf, r.WorkflowInstanceID, 30*time.Second); v.Status != "FAILED" {
			t.Fatalf("sub-missing: %s", v.Status)
		}
		st := s.steps(wf, r.WorkflowInstanceID)["sub"]
		last := st.Timeline[len(st.Timeline)-1].Message
		if st.RuntimeState.Status != "FATALLY_FAILED" || !strings.Contains(last, "no-such-workflow") {
			t.Errorf("step: %s %q", st.RuntimeState.Status, last)
		}
	})
}

// TestMaestroSubworkflowSamples runs sample-nested-subworkflow-wf, whose
// step starts sample-subworkflow-wf, whose six steps each start
// sample-dag-test-3 (sync, sync false, explicit_params true and false):
// depth 2 below the root, every instance SUCCEEDED. The samples' own Sleep
// steps (sample-dag-test-3's 15 s sleeps, three children at a time under
// instance_step_concurrency 3) took about two minutes, nearly all of it
// idle; the stack's clock now skips to them (waitSkipping). It runs beside
// the other sample tests (t.Parallel).
func TestMaestroSubworkflowSamples(t *testing.T) {
	s := startParallelSystem(t, stack.Options{})
	// Push order as the reference says: what a sample calls first.
	r, _ := s.runSample(t, s.waitSkipping, 3*time.Minute, "sample-dag-test-3", "sample-subworkflow-wf", "sample-nested-subworkflow-wf")
	mid := s.steps("sample-nested-subworkflow-wf", r.WorkflowInstanceID)["sub-step1"].Subworkflow
	if mid == nil || mid.WorkflowID != "sample-subworkflow-wf" {
		t.Fatalf("sub-step1 overview %+v", mid)
	}
	subs := s.steps("sample-subworkflow-wf", mid.InstanceID)
	if len(subs) != 6 {
		t.Fatalf("sample-subworkflow-wf has %d steps", len(subs))
	}
	for id, st := range subs {
		o := st.Subworkflow
		if st.RuntimeState.Status != "SUCCEEDED" || o == nil || o.WorkflowID != "sample-dag-test-3" {
			t.Errorf("sample-subworkflow-wf step %s: %s %+v", id, st.RuntimeState.Status, o)
			continue
		}
		leaf := s.wait("sample-dag-test-3", o.InstanceID, 2*time.Minute)
		var p *orchestrator.InstanceView = &leaf
		if p.Status != "SUCCEEDED" || p.Initiator == nil || p.Initiator.Parent == nil || p.Initiator.Parent.Depth != 2 ||
			p.Initiator.Parent.RootWorkflowID != "sample-nested-subworkflow-wf" {
			t.Errorf("step %s's instance: %s %+v", id, p.Status, p.Initiator)
		}
	}
}

// TestMaestroMixedSample runs sample-mixed-wf: three subworkflows side by
// side — sample-dag-test-3, sample-nested-foreach-subworkflow-wf (a foreach
// of 6 iterations, 2 at a time, each starting sample-dag-test-3) and
// sample-nested-subworkflow-foreach-wf (three sample-foreach-wf instances,
// queued one after the other by its SEQUENTIAL run strategy). Mostly the
// samples' Sleep steps, which the stack's clock skips to (waitSkipping): it
// runs beside the other sample tests.
func TestMaestroMixedSample(t *testing.T) {
	s := startParallelSystem(t, stack.Options{})
	r, v := s.runSample(t, s.waitSkipping, 5*time.Minute, "sample-dag-test-3", "sample-foreach-wf", "sample-nested-foreach-subworkflow-wf",
		"sample-nested-subworkflow-foreach-wf", "sample-mixed-wf")
	// 196 leaf steps: sample-dag-test-3's 4; 6 iterations of job1 and a
	// sample-dag-test-3 (30); 3 sample-foreach-wf of 9 iterations of 6
	// (162).
	if ro := v.RollupOverview; ro == nil || ro.TotalLeafCount != 196 || ro.Overview["SUCCEEDED"] != 196 {
		t.Errorf("sample-mixed-wf rollup %+v, want 196 leaf steps SUCCEEDED", ro)
	}
	steps := s.steps("sample-mixed-wf", r.WorkflowInstanceID)
	child := func(step, wf string) int64 {
		t.Helper()
		o := steps[step].Subworkflow
		if o == nil || o.WorkflowID != wf {
			t.Fatalf("step %s: overview %+v, want an instance of %s", step, o, wf)
		}
		if v := s.instance(wf, o.InstanceID); v.Status != "SUCCEEDED" {
			t.Fatalf("%s/%d: %s", wf, o.InstanceID, v.Status)
		}
		return o.InstanceID
	}
	child("sub-step1", "sample-dag-test-3")

	// The foreach's 6 iterations each started sample-dag-test-3.
	nfs := child("sub-step2", "sample-nested-foreach-subworkflow-wf")
	loop := s.steps("sample-nested-foreach-subworkflow-wf", nfs)["foreach-step1"].Foreach
	if loop == nil || loop.Total != 6 || loop.Counts["SUCCEEDED"] != 6 {
		t.Fatalf("sample-nested-foreach-subworkflow-wf foreach overview %+v", loop)
	}
	leaves := map[int64]bool{}
	for n := int64(1); n <= 6; n++ {
		o := s.steps(loop.WorkflowID, n)["sub-step2"].Subworkflow
		if o == nil || o.WorkflowID != "sample-dag-test-3" || leaves[o.InstanceID] {
			t.Fatalf("iteration %d: subworkflow %+v", n, o)
		}
		leaves[o.InstanceID] = true
		leaf := s.instance("sample-dag-test-3", o.InstanceID)
		if leaf.Status != "SUCCEEDED" || leaf.Initiator == nil || leaf.Initiator.Parent == nil || leaf.Initiator.Parent.Depth != 3 ||
			leaf.Initiator.Parent.RootWorkflowID != "sample-mixed-wf" {
			t.Errorf("iteration %d's instance: %s %+v", n, leaf.Status, leaf.Initiator)
		}
	}

	// Three sample-foreach-wf instances, each with its 9 iterations.
	nsf := child("sub-step3", "sample-nested-subworkflow-foreach-wf")
	for _, id := range []string{"sub-step1", "sub-step2", "sub-step3"} {
		o := s.steps("sample-nested-subworkflow-foreach-wf", nsf)[id].Subworkflow
		if o == nil || o.WorkflowID != "sample-foreach-wf" {
			t.Fatalf("sample-nested-subworkflow-foreach-wf step %s: %+v", id, o)
		}
		fe := s.steps("sample-foreach-wf", o.InstanceID)["foreach-job"].Foreach
		if fe == nil || fe.Total != 9 || fe.Counts["SUCCEEDED"] != 9 {
			t.Errorf("sample-foreach-wf/%d foreach overview %+v", o.InstanceID, fe)
		}
	}
}
