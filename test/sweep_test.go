package e2e

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/maestro-serverless/maestro/localstack"
	"github.com/maestro-serverless/maestro/localstack/stack"
	"github.com/maestro-serverless/maestro/store"
)

// sleepThenNoOp is a (Sleep 1s) -> b (NoOp).
func sleepThenNoOp(id string) []byte {
	return []byte(fmt.Sprintf(`{"properties":{"owner":"sweep","run_strategy":"parallel"},"workflow":{"id":%q,"steps":[
 {"step":{"id":"a","type":"Sleep","params":{"sleep_seconds":{"value":1,"type":"LONG"}},"transition":{"successors":{"b":"true"}}}},
 {"step":{"id":"b","type":"NoOp"}}]}}`, id))
}

// httpThenNoOp is call (Http GET url) -> after (NoOp).
func httpThenNoOp(id, url string) []byte {
	return []byte(fmt.Sprintf(`{"properties":{"owner":"sweep","run_strategy":"parallel"},"workflow":{"id":%q,"steps":[
	  {"step":{"id":"call","type":"Http","retry_policy":{"error_retry_limit":0,"platform_retry_limit":0},
	    "params":{"http":{"type":"MAP","value":{"url":{"type":"STRING","value":%q},"method":{"type":"STRING","value":"GET"}}}},
	    "transition":{"successors":{"after":"true"}}}},
	  {"step":{"id":"after","type":"NoOp"}}]}}`, id, url))
}

// twoHTTP is a workflow of two Http steps side by side: neither worker can
// apply its step's outcome inline (the other step is in flight), so both
// outcomes go to the run's inbox and wake the decider.
func twoHTTP(id, url string) []byte {
	call := func(step string) string {
		return fmt.Sprintf(`{"step":{"id":%q,"type":"Http","retry_policy":{"error_retry_limit":0,"platform_retry_limit":0},
	    "params":{"http":{"type":"MAP","value":{"url":{"type":"STRING","value":%q},"method":{"type":"STRING","value":"GET"}}}}}}`, step, url)
	}
	return []byte(fmt.Sprintf(`{"properties":{"owner":"sweep","run_strategy":"parallel"},"workflow":{"id":%q,"steps":[%s,%s]}}`,
		id, call("left"), call("right")))
}

// dropper loses chosen messages and stream records on their way to a
// handler, as AWS can (a poison message past its receive count, a stream
// record past its retry or age limit, a handler broken by a deploy).
type dropper struct {
	mu      sync.Mutex
	dropped map[string]int
	// work, decision and record decide what to drop; each is called for
	// every message or record, and each drops at most what it says.
	work, decision func(body string) bool
	record         func(pk, sk, outbox string) bool
}

func (d *dropper) count(what string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.dropped[what]++
}

func (d *dropper) droppedCount(what string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.dropped[what]
}

func (d *dropper) sqs(what string, drop func(string) bool) func(localstack.SQSHandler) localstack.SQSHandler {
	return func(next localstack.SQSHandler) localstack.SQSHandler {
		return func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
			kept := ev.Records[:0:0]
			for _, m := range ev.Records {
				if drop(m.Body) {
					d.count(what) // acknowledged without being handled: lost
					continue
				}
				kept = append(kept, m)
			}
			if len(kept) == 0 {
				return events.SQSEventResponse{}, nil
			}
			return next(ctx, events.SQSEvent{Records: kept})
		}
	}
}

func (d *dropper) stream(next localstack.StreamHandler) localstack.StreamHandler {
	return func(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		kept := ev.Records[:0:0]
		for _, r := range ev.Records {
			img := r.Change.NewImage
			msgs, err := store.OutboxFromImage(img)
			if err != nil {
				panic(err)
			}
			var outbox strings.Builder
			for _, m := range msgs {
				outbox.WriteString(m.Body)
			}
			if d.record(img["pk"].String(), img["sk"].String(), outbox.String()) {
				d.count("record")
				continue
			}
			kept = append(kept, r)
		}
		if len(kept) == 0 {
			return events.DynamoDBEventResponse{}, nil
		}
		return next(ctx, events.DynamoDBEvent{Records: kept})
	}
}

// once returns a predicate that is true for the first value cond accepts.
func once(cond func(string) bool) func(string) bool {
	var mu sync.Mutex
	done := false
	return func(s string) bool {
		mu.Lock()
		defer mu.Unlock()
		if done || !cond(s) {
			return false
		}
		done = true
		return true
	}
}

// TestSweeperRecoversLostWork loses, on purpose, what runs depend on and
// nothing else resends: an Http step's work message; the decision wakes of
// two parallel Http steps' results (which their workers cannot apply
// inline); the decision wake of a signal a step waits for (with
// the run's signal check timer and every backstop wake); the stream record
// of the commit whose outbox holds a Sleep step's timer. Each run stays stuck
// until the recovery sweeper finds it through the sweep index: by its run
// item's due time, and re-drives it; or by the unapplied signal event, and
// applies it. Then it succeeds, and each Http step was called once.
func TestSweeperRecoversLostWork(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(&flaky{})
	defer srv.Close()
	wfWork, wfResult, wfSignal, wfRecord := "sweep-work", "sweep-result", "sweep-signal", "sweep-record"
	of := func(wf string) func(string) bool {
		return func(body string) bool { return strings.Contains(body, `"workflow_id":"`+wf+`"`) }
	}
	kind := func(k string) func(string) bool {
		return func(body string) bool { return strings.Contains(body, `"kind":"`+k+`"`) }
	}
	and := func(a, b func(string) bool) func(string) bool { return func(s string) bool { return a(s) && b(s) } }
	d := &dropper{dropped: map[string]int{}}
	dropRunStep := once(and(of(wfWork), kind("run_step")))
	d.work = func(body string) bool {
		return dropRunStep(body) ||
			and(of(wfResult), kind("wake"))(body) || // every backstop wake
			and(of(wfSignal), kind("wake"))(body) ||
			and(of(wfSignal), kind("timer"))(body) // the signal check
	}
	dropSignal := once(of(wfSignal))
	d.decision = func(body string) bool { return of(wfResult)(body) || dropSignal(body) }
	dropRecord := once(func(s string) bool { return s != "" })
	d.record = func(pk, sk, outbox string) bool {
		return pk == "R#"+wfRecord+"#1" && strings.HasPrefix(sk, "RUN#") && strings.Contains(outbox, `timer`) && dropRecord(sk)
	}
	s := startSystem(t, stack.Options{
		// A run awaiting an Http step is due after the lease and the grace
		// (5 s); the signal's event is due 1 s after it was written.
		SweepEvery: 250 * time.Millisecond, EventSweepAfter: time.Second, SweepGrace: time.Second, ClaimLease: 4 * time.Second,
		Hooks: stack.Hooks{
			Worker:  d.sqs("work", d.work),
			Decider: d.sqs("decision", d.decision),
			Router:  d.stream,
		},
	})
	s.push(httpThenNoOp(wfWork, srv.URL))
	s.push(twoHTTP(wfResult, srv.URL))
	s.push(sleepThenNoOp(wfRecord))
	s.push([]byte(`{"properties":{"owner":"sweep","run_strategy":"parallel"},"workflow":{"id":"` + wfSignal + `","steps":[
	  {"step":{"id":"gated","type":"NoOp","signal_dependencies":[{"name":"sweep/go"}]}}]}}`))

	rs := s.start(wfSignal, "")
	poll(t, 20*time.Second, "the gated step waits for its signal", func() (bool, string) {
		st := s.instance(wfSignal, rs.WorkflowInstanceID).StepStatuses
		return st["gated"] == "WAITING_FOR_SIGNALS", fmt.Sprint(st)
	})
	s.announce(t, `{"name":"sweep/go","params":{"k":1}}`)
	runs := map[string]int64{wfSignal: rs.WorkflowInstanceID}
	for _, wf := range []string{wfWork, wfResult, wfRecord} {
		runs[wf] = s.start(wf, "").WorkflowInstanceID
	}
	for wf, id := range runs {
		v := s.wait(wf, id, 60*time.Second)
		if v.Status != "SUCCEEDED" {
			t.Fatalf("%s: %s %v", wf, v.Status, v.StepStatuses)
		}
		redriven := false
		for _, e := range v.Timeline {
			redriven = redriven || strings.Contains(e.Message, "re-driven")
		}
		// The lost signal needs no redrive: the sweeper applies its
		// waiting event. Lost work and records need one that sends the
		// work again. (The redrive of the lost result finds the result
		// waiting and applies it first: the run ends before the redrive
		// has anything to send, so its timeline says nothing.)
		switch wf {
		case wfSignal:
			if redriven {
				t.Errorf("%s: re-driven; timeline %+v", wf, v.Timeline)
			}
		case wfWork, wfRecord:
			if !redriven {
				t.Errorf("%s: not re-driven; timeline %+v", wf, v.Timeline)
			}
		}
	}
	if n := d.droppedCount("decision"); n < 2 {
		t.Errorf("%d decision wakes dropped, want the signal's and the Http results'", n)
	}
	for _, what := range []string{"work", "decision", "record"} {
		if d.droppedCount(what) == 0 {
			t.Errorf("no %s was dropped: the test tested nothing", what)
		}
	}
	if n := srv.Config.Handler.(*flaky).calls.Load(); n != 3 {
		t.Errorf("the Http endpoint was called %d times, want 3 (once per Http step)", n)
	}
}

// TestSweeperDeliversALostSignal: the work message that delivers a signal to
// the steps waiting for it and to signal triggers is lost (with the waiting
// run's signal check): the signal instance stays in the sweep index until
// its delivery is done, so the sweeper delivers it — the waiting step goes
// on and the triggered workflow starts, once.
func TestSweeperDeliversALostSignal(t *testing.T) {
	t.Parallel()
	d := &dropper{dropped: map[string]int{}}
	d.work = func(body string) bool {
		return strings.Contains(body, `"kind":"signal"`) ||
			(strings.Contains(body, `"workflow_id":"lost-wait"`) && strings.Contains(body, `"purpose":"signal_check"`))
	}
	s := startSystem(t, stack.Options{
		SweepEvery: 250 * time.Millisecond, EventSweepAfter: time.Second, SweepGrace: time.Second,
		Hooks: stack.Hooks{Worker: d.sqs("work", d.work)},
	})
	wait := s.push([]byte(`{"properties":{"owner":"sweep","run_strategy":"parallel"},"workflow":{"id":"lost-wait","steps":[
	  {"step":{"id":"gated","type":"NoOp","signal_dependencies":[{"name":"sweep/lost"}]}}]}}`))
	trig := s.push([]byte(`{"properties":{"owner":"sweep"},"workflow":{"id":"lost-trigger",
	  "signal_triggers":[{"definitions":{"sweep/lost":{}}}],"steps":[{"step":{"id":"x","type":"NoOp"}}]}}`))
	r := s.start(wait, "")
	poll(t, 20*time.Second, "the gated step waits for its signal", func() (bool, string) {
		st := s.instance(wait, r.WorkflowInstanceID).StepStatuses
		return st["gated"] == "WAITING_FOR_SIGNALS", fmt.Sprint(st)
	})
	s.announce(t, `{"name":"sweep/lost","params":{"k":1}}`)
	if v := s.wait(wait, r.WorkflowInstanceID, 30*time.Second); v.Status != "SUCCEEDED" {
		t.Fatalf("waiting run %s %v", v.Status, v.StepStatuses)
	}
	list := s.waitInstances(t, trig, 1, 30*time.Second)
	if v := s.wait(trig, list[0].WorkflowInstanceID, 30*time.Second); v.Status != "SUCCEEDED" {
		t.Fatalf("triggered run %s", v.Status)
	}
	if d.droppedCount("work") == 0 {
		t.Error("no delivery was dropped: the test tested nothing")
	}
}

// TestDirectDispatchNeedsNoStream: with the stream records of a workflow's
// run item lost, a chain of Http steps still runs to the end, each step
// called once: the API's commit sends the first step to the work queue
// itself (direct dispatch; the stream router is only its backstop), and
// the worker runs the others inline.
func TestDirectDispatchNeedsNoStream(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(&flaky{})
	defer srv.Close()
	d := &dropper{dropped: map[string]int{}}
	d.record = func(pk, sk, _ string) bool {
		return strings.HasPrefix(pk, "R#direct#") && strings.HasPrefix(sk, "RUN#")
	}
	s := startSystem(t, stack.Options{SweepEvery: time.Hour, Hooks: stack.Hooks{Router: d.stream}})
	var steps []string
	for i := 1; i <= 5; i++ {
		next := ""
		if i < 5 {
			next = fmt.Sprintf(`,"transition":{"successors":{"h%d":"true"}}`, i+1)
		}
		steps = append(steps, fmt.Sprintf(`{"step":{"id":"h%d","type":"Http","retry_policy":{"error_retry_limit":0,"platform_retry_limit":0},
		  "params":{"http":{"type":"MAP","value":{"url":{"type":"STRING","value":%q},"method":{"type":"STRING","value":"GET"}}}}%s}}`, i, srv.URL, next))
	}
	wf := s.push([]byte(`{"properties":{"owner":"direct","run_strategy":"parallel"},"workflow":{"id":"direct","steps":[` + strings.Join(steps, ",") + `]}}`))
	r := s.start(wf, "")
	if v := s.wait(wf, r.WorkflowInstanceID, 30*time.Second); v.Status != "SUCCEEDED" {
		t.Fatalf("%s %v", v.Status, v.StepStatuses)
	}
	// The run may end before the stream is first polled: its records are
	// dropped then.
	poll(t, 10*time.Second, "the run item's stream records reach the router (and are dropped)", func() (bool, string) {
		return d.droppedCount("record") > 0, "none yet"
	})
	if n := srv.Config.Handler.(*flaky).calls.Load(); n != 5 {
		t.Errorf("the Http endpoint was called %d times, want 5", n)
	}
}
