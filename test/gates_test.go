package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/localstack/stack"
	"github.com/maestro-serverless/maestro/orchestrator"
)

// gauge is a loopback endpoint that holds each call for hold and records
// the most calls in flight at once.
type gauge struct {
	hold time.Duration

	mu            sync.Mutex
	inFlight, max int
	calls         int
}

func (g *gauge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	g.inFlight++
	g.calls++
	g.max = max(g.max, g.inFlight)
	g.mu.Unlock()
	select { // the call takes hold: the step holds its permit meanwhile
	case <-time.After(g.hold):
	case <-r.Context().Done():
	}
	g.mu.Lock()
	g.inFlight--
	g.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprint(w, `{"ok": true}`)
}

func (g *gauge) stats() (maxInFlight, calls int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.max, g.calls
}

// fanOutHTTP is root -> n Http steps calling url (each with tags) -> done.
func fanOutHTTP(id, url string, n int, tags, props string) []byte {
	var steps, succ []string
	for i := 1; i <= n; i++ {
		succ = append(succ, fmt.Sprintf(`"call%d":"true"`, i))
		steps = append(steps, fmt.Sprintf(`{"step":{"id":"call%d","type":"Http","tags":%s,
		  "params":{"http":{"type":"MAP","value":{"url":{"type":"STRING","value":%q},"method":{"type":"STRING","value":"GET"}}}},
		  "transition":{"successors":{"done":"true"}}}}`, i, tags, url))
	}
	return []byte(fmt.Sprintf(`{"properties":{"owner":"gates-e2e",%s},"workflow":{"id":%q,"steps":[
	  {"step":{"id":"root","type":"NoOp","transition":{"successors":{%s}}}},
	  %s,
	  {"step":{"id":"done","type":"NoOp"}}]}}`, props, id, strings.Join(succ, ","), strings.Join(steps, ",")))
}

type permitBody struct {
	Tag        string `json:"tag"`
	MaxAllowed int64  `json:"max_allowed"`
	Held       int    `json:"held"`
	Waiting    int    `json:"waiting"`
}

func TestTagPermitsAndStepConcurrency(t *testing.T) {
	t.Parallel()
	s := startSystem(t, stack.Options{})
	parallel := `"run_strategy":"parallel"`

	t.Run("without a permit the steps overlap", func(t *testing.T) {
		g := &gauge{hold: 400 * time.Millisecond}
		srv := httptest.NewServer(g)
		defer srv.Close()
		wf := s.push(fanOutHTTP("gate-free", srv.URL, 6, `[]`, parallel))
		r := s.start(wf, "")
		if v := s.wait(wf, r.WorkflowInstanceID, 60*time.Second); v.Status != "SUCCEEDED" {
			t.Fatalf("instance %s: %v", v.Status, v.StepStatuses)
		}
		if m, calls := g.stats(); m < 3 || calls != 6 {
			t.Fatalf("max in flight %d over %d calls: the control run should overlap (>= 3)", m, calls)
		}
	})

	t.Run("six steps under a permit of two", func(t *testing.T) {
		var p permitBody
		if code := s.do("POST", "/api/v3/tag-permits", []byte(`{"tag":"e2e-db","max_allowed":2}`), &p); code != 200 || p.MaxAllowed != 2 {
			t.Fatalf("put permit: %d %+v", code, p)
		}
		g := &gauge{hold: 300 * time.Millisecond}
		srv := httptest.NewServer(g)
		defer srv.Close()
		wf := s.push(fanOutHTTP("gate-db", srv.URL, 6, `["e2e-db"]`, parallel))
		r := s.start(wf, "")
		saw := false
		poll(t, 60*time.Second, "the fan-out succeeds", func() (bool, string) {
			v := s.instance(wf, r.WorkflowInstanceID)
			for _, st := range v.StepStatuses {
				saw = saw || st == "WAITING_FOR_PERMITS"
			}
			if v.Status != "IN_PROGRESS" && v.Status != "SUCCEEDED" {
				t.Fatalf("instance %s: %v", v.Status, v.StepStatuses)
			}
			return v.Status == "SUCCEEDED", fmt.Sprint(v.StepStatuses)
		})
		m, calls := g.stats()
		if m > 2 || calls != 6 {
			t.Fatalf("max in flight %d over %d calls, want <= 2 over 6", m, calls)
		}
		if !saw {
			t.Errorf("no step was seen WAITING_FOR_PERMITS")
		}
		if code := s.do("GET", "/api/v3/tag-permits/e2e-db", nil, &p); code != 200 || p.Held != 0 || p.Waiting != 0 {
			t.Fatalf("permit after the run: %d %+v, want nothing held or waiting", code, p)
		}
		t.Logf("max in flight %d over %d calls", m, calls)
	})

	// Two instances of 3 calls each, bounded to 2 in flight across both.
	for _, tc := range []struct{ name, wf, tags, props string }{
		{"two instances share the permit", "gate-db2", `["e2e-db"]`, parallel},
		{"step_concurrency bounds a workflow across instances", "gate-wf", `[]`, parallel + `,"step_concurrency":2`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := &gauge{hold: 300 * time.Millisecond}
			srv := httptest.NewServer(g)
			defer srv.Close()
			wf := s.push(fanOutHTTP(tc.wf, srv.URL, 3, tc.tags, tc.props))
			a, b := s.start(wf, ""), s.start(wf, "")
			for _, id := range []int64{a.WorkflowInstanceID, b.WorkflowInstanceID} {
				if v := s.wait(wf, id, 60*time.Second); v.Status != "SUCCEEDED" {
					t.Fatalf("instance %d %s: %v", id, v.Status, v.StepStatuses)
				}
			}
			if m, calls := g.stats(); m > 2 || calls != 6 {
				t.Fatalf("max in flight %d over %d calls, want <= 2 over 6", m, calls)
			}
		})
	}

	t.Run("bad permits are refused", func(t *testing.T) {
		var e map[string]any
		if code := s.do("POST", "/api/v3/tag-permits", []byte(`{"tag":"maestro_x","max_allowed":1}`), &e); code != 400 {
			t.Fatalf("reserved tag: %d %v", code, e)
		}
		if code := s.do("GET", "/api/v3/tag-permits/none-such", nil, &e); code != 404 {
			t.Fatalf("missing permit: %d %v", code, e)
		}
	})
}

func TestBreakpoints(t *testing.T) {
	t.Parallel()
	s := startSystem(t, stack.Options{})
	wf := s.push([]byte(`{"properties":{"owner":"bp-e2e","run_strategy":"parallel"},"workflow":{"id":"bp-wf","steps":[
	  {"step":{"id":"first","type":"NoOp","transition":{"successors":{"second":"true"}}}},
	  {"step":{"id":"second","type":"NoOp","transition":{"successors":{"third":"true"}}}},
	  {"step":{"id":"third","type":"NoOp"}}]}}`))

	var bp map[string]any
	if code := s.do("POST", "/api/v3/workflows/steps/breakpoints", []byte(`{"workflow_id":"bp-wf","step_id":"second"}`), &bp); code != 200 {
		t.Fatalf("add breakpoint: %d %v", code, bp)
	}
	if code := s.do("POST", "/api/v3/workflows/steps/breakpoints", []byte(`{"workflow_id":"bp-wf","step_id":"nope"}`), &bp); code != 404 {
		t.Fatalf("breakpoint on an unknown step: %d %v", code, bp)
	}
	var list struct {
		Breakpoints []map[string]any `json:"breakpoints"`
	}
	if code := s.do("GET", "/api/v3/workflows/steps/breakpoints?workflowId=bp-wf", nil, &list); code != 200 || len(list.Breakpoints) != 1 {
		t.Fatalf("list: %d %v", code, list)
	}

	paused := func(id int64) {
		t.Helper()
		var v orchestrator.InstanceView
		poll(t, 30*time.Second, "step second pauses", func() (bool, string) {
			v = s.instance(wf, id)
			return v.StepStatuses["second"] == "PAUSED", fmt.Sprintf("%s %v", v.Status, v.StepStatuses)
		})
		if v.Status != "IN_PROGRESS" || v.StepStatuses["first"] != "SUCCEEDED" || v.StepStatuses["third"] != "NOT_CREATED" {
			t.Fatalf("paused instance %s: %v", v.Status, v.StepStatuses)
		}
	}

	// Resume one paused attempt: that instance goes on, the other stays.
	a, b := s.start(wf, ""), s.start(wf, "")
	paused(a.WorkflowInstanceID)
	paused(b.WorkflowInstanceID)
	var pl struct {
		Attempts []map[string]any `json:"paused_step_attempts"`
	}
	if code := s.do("GET", "/api/v3/workflows/steps/breakpoints/paused-step-attempts?workflowId=bp-wf&stepId=second", nil, &pl); code != 200 || len(pl.Attempts) != 2 {
		t.Fatalf("paused attempts: %d %v", code, pl)
	}
	var e map[string]any
	if code := s.do("PUT", fmt.Sprintf("/api/v3/workflows/steps/breakpoints/%s/instances/%d/runs/1/steps/first/attempts/1/actions/resume", wf, a.WorkflowInstanceID), nil, &e); code != 409 {
		t.Fatalf("resume of a finished step: %d %v, want 409", code, e)
	}
	path := fmt.Sprintf("/api/v3/workflows/steps/breakpoints/%s/instances/%d/runs/1/steps/second/attempts/1/actions/resume", wf, a.WorkflowInstanceID)
	if code := s.do("PUT", path, nil, &e); code != 200 {
		t.Fatalf("resume: %d %v", code, e)
	}
	if v := s.wait(wf, a.WorkflowInstanceID, 30*time.Second); v.Status != "SUCCEEDED" {
		t.Fatalf("resumed instance %s: %v", v.Status, v.StepStatuses)
	}
	if v := s.instance(wf, b.WorkflowInstanceID); v.StepStatuses["second"] != "PAUSED" {
		t.Fatalf("the other instance moved on: %v", v.StepStatuses)
	}

	// Deleting the breakpoint resumes every attempt it paused.
	s.removeBreakpoint(t, "bp-wf", "second", 1)
	wantEnd(t, s.wait(wf, b.WorkflowInstanceID, 30*time.Second), "SUCCEEDED", nil)
	// Without the breakpoint nothing pauses.
	c := s.start(wf, "")
	if v := s.wait(wf, c.WorkflowInstanceID, 30*time.Second); v.Status != "SUCCEEDED" {
		t.Fatalf("instance without breakpoint %s: %v", v.Status, v.StepStatuses)
	}
}
