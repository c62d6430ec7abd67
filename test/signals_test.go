package e2e

import (
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/localstack/stack"
	"github.com/maestro-serverless/maestro/orchestrator"
)

func (s *system) announce(t *testing.T, body string) orchestrator.SignalView {
	t.Helper()
	var v orchestrator.SignalView
	var e map[string]any
	if code := s.do("POST", "/api/v3/signals", []byte(body), &v); code != http.StatusOK {
		s.do("POST", "/api/v3/signals", []byte(body), &e)
		t.Fatalf("announce %s: HTTP %d %v", body, code, e)
	}
	return v
}

// waitInstances polls until the workflow has n instances, then checks that
// it still has n once the stack is idle (no more are on their way).
func (s *system) waitInstances(t *testing.T, wf string, n int, timeout time.Duration) []*orchestrator.InstanceView {
	t.Helper()
	var list []*orchestrator.InstanceView
	poll(t, timeout, fmt.Sprintf("%d instances of %s", n, wf), func() (bool, string) {
		list = s.instances(t, wf)
		if len(list) > n {
			t.Fatalf("%d instances of %s, want %d", len(list), wf, n)
		}
		return len(list) == n, fmt.Sprintf("%d instances", len(list))
	})
	s.idle(t)
	if again := s.instances(t, wf); len(again) != n {
		t.Fatalf("%d instances of %s once idle, want %d", len(again), wf, n)
	}
	return list
}

func TestSignalTriggers(t *testing.T) {
	t.Parallel()
	s := startSystem(t, stack.Options{})

	t.Run("operators, one instance per matching signal", func(t *testing.T) {
		wf := s.push([]byte(`{"properties":{"owner":"sig","run_strategy":"parallel"},"workflow":{"id":"sig-ops",
		  "signal_triggers":[{"definitions":{"orders":{"match_params":{"region":{"value":"eu","operator":"="},"count":{"value":10,"operator":">="}}}},
		    "params":{"label":{"value":"from-trigger","type":"STRING"}}}],
		  "steps":[{"step":{"id":"s","type":"NoOp","params":{"c":{"type":"LONG","expression":"params.getFromSignal('orders', 'count')"}}}}]}}`))
		s.announce(t, `{"name":"orders","params":{"region":"eu","count":12}}`)
		s.announce(t, `{"name":"orders","params":{"region":"us","count":50}}`)   // region differs
		s.announce(t, `{"name":"orders","params":{"region":"eu","count":9}}`)    // count too small
		s.announce(t, `{"name":"orders","params":{"region":"eu","count":"12"}}`) // a STRING never matches a LONG
		list := s.waitInstances(t, wf, 1, 20*time.Second)
		v := s.wait(wf, list[0].WorkflowInstanceID, 20*time.Second)
		if v.Status != "SUCCEEDED" || v.Initiator == nil || v.Initiator.Type != "SIGNAL" {
			t.Fatalf("instance %s initiator %+v", v.Status, v.Initiator)
		}
		if fmt.Sprint(v.Params["label"]) != "from-trigger" {
			t.Errorf("trigger params: label = %v", v.Params["label"])
		}
		if got := fmt.Sprint(s.steps(wf, v.WorkflowInstanceID)["s"].Params["c"]); got != "12" {
			t.Errorf("params.getFromSignal gave %s, want 12", got)
		}
	})

	t.Run("signal_trigger_disabled turns a trigger off", func(t *testing.T) {
		wf := s.push([]byte(`{"properties":{"owner":"sig","signal_trigger_disabled":true},"workflow":{"id":"sig-off",
		  "signal_triggers":[{"definitions":{"off-signal":{}}}],
		  "steps":[{"step":{"id":"s","type":"NoOp"}}]}}`))
		s.announce(t, `{"name":"off-signal","params":{}}`)
		s.idle(t) // the delivery (stream, router, worker) has run
		if n := len(s.instances(t, wf)); n != 0 {
			t.Fatalf("%d instances of a workflow whose signal triggers are disabled", n)
		}
		// Enabled again, the next signal starts it.
		if code := s.do("POST", "/api/v3/workflows/"+wf+"/properties", []byte(`{"signal_trigger_disabled": false}`), nil); code != http.StatusOK {
			t.Fatalf("enable: HTTP %d", code)
		}
		s.announce(t, `{"name":"off-signal","params":{}}`)
		s.waitInstances(t, wf, 1, 20*time.Second)
	})

	t.Run("join keys across two names", func(t *testing.T) {
		wf := s.push(readFile(t, "sample-signal-trigger-wf.json"))
		s.announce(t, `{"name":"signal_a","params":{"foo":"bat","watermark":123456,"updated_by":"tester"}}`)
		s.announce(t, `{"name":"signal_b","params":{"bar":"baz","watermark":123456,"posted_by":"someone-else"}}`)
		s.idle(t)
		if n := len(s.instances(t, wf)); n != 0 {
			t.Fatalf("%d instances before the join keys agree", n)
		}
		s.announce(t, `{"name":"signal_b","params":{"bar":"baz","watermark":123456,"posted_by":"tester"}}`)
		list := s.waitInstances(t, wf, 1, 20*time.Second)
		// job.1 waits for db/test/table1 and db/test/table2, its match params
		// computed by the sample's SEL (Joda: TARGET_RUN_DATE parsed with
		// yyyyMMddHH, printed as yyyyMMdd and HH).
		poll(t, 20*time.Second, "job.1 waits for signals", func() (bool, string) {
			st := s.instance(wf, list[0].WorkflowInstanceID).StepStatuses["job.1"]
			return st == "WAITING_FOR_SIGNALS", st
		})
		s.announce(t, `{"name":"db/test/table1","params":{"vtts_utc_dateint":"20500101","vtts_utc_hour":"00"}}`)
		s.announce(t, `{"name":"db/test/table2","params":{"vtts_utc_dateint":"20500101","vtts_utc_hour":"00"}}`)
		v := s.wait(wf, list[0].WorkflowInstanceID, 30*time.Second)
		job1 := s.steps(wf, v.WorkflowInstanceID)["job.1"]
		if v.Status != "SUCCEEDED" {
			t.Fatalf("instance %s %v; job.1: %+v", v.Status, v.StepStatuses, job1.Timeline)
		}
		if fmt.Sprint(job1.Params["param1"]) != "bat" || fmt.Sprint(job1.Params["param2"]) != "123456" || fmt.Sprint(job1.Params["param3"]) != "20500101" {
			t.Errorf("job.1 params %v", job1.Params)
		}
		// On success job.1 announced its two output signals (through the
		// outbox, so shortly after).
		for _, name := range []string{"dummy/test/signal1", "dummy/test/signal2"} {
			var out orchestrator.SignalView
			poll(t, 10*time.Second, "output signal "+name+" announced", func() (bool, string) {
				return s.do("GET", "/api/v3/signals/"+url.PathEscape(name)+"/instances/latest", nil, &out) == 200, ""
			})
			if out.Source == nil || out.Source.Kind != "step" || out.Source.StepID != "job.1" {
				t.Errorf("%s source %+v", name, out.Source)
			}
			if name == "dummy/test/signal1" && (fmt.Sprint(out.Params["key1"]) != "v1" || fmt.Sprint(out.Params["key2"]) != "1") {
				t.Errorf("%s params %v", name, out.Params)
			}
		}
	})

	t.Run("request_id dedupes, 100 concurrent signals start 100 instances", func(t *testing.T) {
		wf := s.push([]byte(`{"properties":{"owner":"sig","run_strategy":{"rule":"parallel","workflow_concurrency":100}},"workflow":{"id":"sig-many",
		  "signal_triggers":[{"definitions":{"tick":{"match_params":{"n":{"value":0,"operator":">"}}}}}],
		  "steps":[{"step":{"id":"s","type":"NoOp"}}]}}`))
		a := s.announce(t, `{"name":"tick","params":{"n":1},"request_id":"same-request"}`)
		b := s.announce(t, `{"name":"tick","params":{"n":1},"request_id":"same-request"}`)
		if a.SeqID != b.SeqID || !a.Created || b.Created {
			t.Fatalf("same request id: %+v then %+v", a, b)
		}
		var wg sync.WaitGroup
		for i := 2; i <= 100; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s.announce(t, fmt.Sprintf(`{"name":"tick","params":{"n":%d}}`, i))
			}()
		}
		for i := 0; i < 20; i++ { // these never match (n > 0)
			wg.Add(1)
			go func() {
				defer wg.Done()
				s.announce(t, `{"name":"tick","params":{"n":0}}`)
			}()
		}
		wg.Wait()
		s.waitInstances(t, wf, 100, 90*time.Second)
	})
}

func TestSignalDependenciesChainAndLineage(t *testing.T) {
	t.Parallel()
	s := startSystem(t, stack.Options{})
	// A publishes chain/a; it triggers B; B publishes chain/b; a step of C
	// waits for chain/b (and another step of C is bypassed).
	a := s.push([]byte(`{"properties":{"owner":"sig"},"workflow":{"id":"chain-a","steps":[
	  {"step":{"id":"pub","type":"NoOp","signal_outputs":[{"name":"chain/a","params":{"k":{"value":"v","type":"STRING"}}}]}}]}}`))
	b := s.push([]byte(`{"properties":{"owner":"sig"},"workflow":{"id":"chain-b",
	  "signal_triggers":[{"definitions":{"chain/a":{"match_params":{"k":{"value":"v","operator":"="}}}}}],
	  "steps":[{"step":{"id":"relay","type":"NoOp","signal_outputs":[{"name":"chain/b","params":{"from":{"type":"STRING","expression":"params.getFromSignal('k')"}}}]}}]}}`))
	c := s.push([]byte(`{"properties":{"owner":"sig","run_strategy":"parallel"},"workflow":{"id":"chain-c","steps":[
	  {"step":{"id":"gated","type":"NoOp","signal_dependencies":[{"name":"chain/b","match_params":{"from":{"param":{"type":"STRING","value":"v"},"operator":"="}}}]}},
	  {"step":{"id":"never","type":"NoOp","signal_dependencies":[{"name":"chain/none"}]}}]}}`))

	rc := s.start(c, "")
	poll(t, 20*time.Second, "C's steps wait for signals", func() (bool, string) {
		st := s.instance(c, rc.WorkflowInstanceID).StepStatuses
		return st["gated"] == "WAITING_FOR_SIGNALS" && st["never"] == "WAITING_FOR_SIGNALS", fmt.Sprint(st)
	})
	ra := s.start(a, "")
	if v := s.wait(a, ra.WorkflowInstanceID, 20*time.Second); v.Status != "SUCCEEDED" {
		t.Fatalf("A %s", v.Status)
	}
	listB := s.waitInstances(t, b, 1, 20*time.Second)
	if v := s.wait(b, listB[0].WorkflowInstanceID, 20*time.Second); v.Status != "SUCCEEDED" {
		t.Fatalf("B %s", v.Status)
	}
	poll(t, 20*time.Second, "C's gated step succeeds", func() (bool, string) {
		st := s.instance(c, rc.WorkflowInstanceID).StepStatuses
		return st["gated"] == "SUCCEEDED", fmt.Sprint(st)
	})
	var e map[string]any
	if code := s.do("PUT", fmt.Sprintf("/api/v3/workflows/%s/instances/%d/steps/never/actions/bypass", c, rc.WorkflowInstanceID), nil, &e); code != 200 {
		t.Fatalf("bypass: HTTP %d %v", code, e)
	}
	if v := s.wait(c, rc.WorkflowInstanceID, 20*time.Second); v.Status != "SUCCEEDED" {
		t.Fatalf("C %s %v", v.Status, v.StepStatuses)
	}

	// Lineage: chain/a was published by A's step and triggered B; chain/b
	// was published by B's step and unblocked C's step.
	var la, lb orchestrator.LineageView
	if code := s.do("GET", "/api/v3/signals/"+url.PathEscape("chain/a")+"/instances/latest/lineage", nil, &la); code != 200 {
		t.Fatalf("lineage chain/a: HTTP %d", code)
	}
	if la.PublishedBy == nil || la.PublishedBy.WorkflowID != a || la.PublishedBy.StepID != "pub" ||
		len(la.Triggered) != 1 || la.Triggered[0].WorkflowID != b {
		t.Errorf("lineage of chain/a: %+v published by %+v", la, la.PublishedBy)
	}
	if code := s.do("GET", "/api/v3/signals/"+url.PathEscape("chain/b")+"/instances/1/lineage", nil, &lb); code != 200 {
		t.Fatalf("lineage chain/b: HTTP %d", code)
	}
	if lb.PublishedBy == nil || lb.PublishedBy.WorkflowID != b || len(lb.Unblocked) != 1 ||
		lb.Unblocked[0].WorkflowID != c || lb.Unblocked[0].StepID != "gated" {
		t.Errorf("lineage of chain/b: %+v published by %+v", lb, lb.PublishedBy)
	}
	if fmt.Sprint(lb.Signal.Params["from"]) != "v" {
		t.Errorf("chain/b params %v", lb.Signal.Params)
	}
}
