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
			if d.record(img["pk"].String(), img["sk"].String(), img["ob"].String()) {
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

// TestSweeperRecoversLostWork loses, on purpose, the three things a run
// depends on and nothing else resends: an Http step's work message, the
// decision wake of an Http step's result (and every backstop wake of that run),
// and the stream record of the commit whose outbox holds a Sleep step's
// timer. Each run stays stuck until the recovery sweeper finds it through
// the sweep index and applies its waiting event or re-drives it; then it
// succeeds, and each Http step was called once.
func TestSweeperRecoversLostWork(t *testing.T) {
	srv := httptest.NewServer(&flaky{})
	defer srv.Close()
	wfWork, wfWake, wfRecord := "sweep-work", "sweep-wake", "sweep-record"
	d := &dropper{dropped: map[string]int{}}
	d.work = func(body string) bool {
		switch {
		case strings.Contains(body, `"workflow_id":"`+wfWake+`"`) && strings.Contains(body, `"kind":"wake"`):
			return true // every backstop wake of the lost-wake run
		default:
			return false
		}
	}
	dropRunStep := once(func(body string) bool {
		return strings.Contains(body, `"workflow_id":"`+wfWork+`"`) && strings.Contains(body, `"kind":"run_step"`)
	})
	work := d.work
	d.work = func(body string) bool { return work(body) || dropRunStep(body) }
	d.decision = once(func(body string) bool { return strings.Contains(body, `"workflow_id":"`+wfWake+`"`) })
	dropRecord := once(func(s string) bool { return s != "" })
	d.record = func(pk, sk, outbox string) bool {
		return pk == "R#"+wfRecord+"#1" && strings.HasPrefix(sk, "RUN#") && strings.Contains(outbox, `timer`) && dropRecord(sk)
	}
	s := startSystem(t, stack.Options{
		// The runs awaiting an Http step are due after the lease and the
		// grace (9 s), long after the lost wake's event (1 s): that run
		// must be recovered by applying its event, not by a redrive.
		SweepEvery: 250 * time.Millisecond, EventSweepAfter: time.Second, SweepGrace: time.Second, ClaimLease: 8 * time.Second,
		Hooks: stack.Hooks{
			Worker:  d.sqs("work", func(b string) bool { return d.work(b) }),
			Decider: d.sqs("decision", d.decision),
			Router:  d.stream,
		},
	})
	s.push(httpThenNoOp(wfWork, srv.URL))
	s.push(httpThenNoOp(wfWake, srv.URL))
	s.push(sleepThenNoOp(wfRecord))
	for _, wf := range []string{wfWork, wfWake, wfRecord} {
		r := s.start(wf, "")
		v := s.wait(wf, r.WorkflowInstanceID, 60*time.Second)
		if v.Status != "SUCCEEDED" {
			t.Fatalf("%s: %s %v", wf, v.Status, v.StepStatuses)
		}
		redriven := false
		for _, e := range v.Timeline {
			redriven = redriven || strings.Contains(e.Message, "re-driven")
		}
		// A lost wake needs no redrive: the sweeper applies the waiting
		// event. Lost work needs one.
		if want := wf != wfWake; redriven != want {
			t.Errorf("%s: re-driven %v, want %v; timeline %+v", wf, redriven, want, v.Timeline)
		}
	}
	for _, what := range []string{"work", "decision", "record"} {
		if d.droppedCount(what) == 0 {
			t.Errorf("no %s was dropped: the test tested nothing", what)
		}
	}
	if n := srv.Config.Handler.(*flaky).calls.Load(); n != 2 {
		t.Errorf("the Http endpoint was called %d times, want 2 (once per Http run)", n)
	}
}
