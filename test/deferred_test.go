package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/maestro-serverless/maestro/localstack"
	"github.com/maestro-serverless/maestro/localstack/stack"
	"github.com/maestro-serverless/maestro/orchestrator"
	"github.com/maestro-serverless/maestro/store"
)

// holder keeps the work messages of one workflow's steps from the workers
// until released, as a slow or backed-up work queue would.
type holder struct {
	match   string
	mu      sync.Mutex
	held    int
	release chan struct{}
}

func (h *holder) hook(next localstack.SQSHandler) localstack.SQSHandler {
	return func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		for _, m := range ev.Records {
			if strings.Contains(m.Body, h.match) && strings.Contains(m.Body, `"kind":"run_step"`) {
				h.mu.Lock()
				h.held++
				h.mu.Unlock()
				select {
				case <-h.release:
				case <-ctx.Done():
					return events.SQSEventResponse{}, ctx.Err()
				}
				break
			}
		}
		return next(ctx, ev)
	}
}

func (h *holder) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.held
}

// TestDeferredStarts: a step attempt created and started in one decision has
// its item written by its worker's claim, not by the decision (deferred.go).
// While its work message waits, the attempt has no item, yet the views show
// it RUNNING with its params and start timeline; stopped before any worker
// claimed it, it ends STOPPED with its whole timeline, and the work message
// delivered afterwards runs nothing. A step whose worker came runs once and
// keeps every entry.
func TestDeferredStarts(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(&flaky{})
	defer srv.Close()
	h := &holder{match: `"workflow_id":"deferred-held"`, release: make(chan struct{})}
	s := startSystem(t, stack.Options{Hooks: stack.Hooks{Worker: h.hook}})
	held := s.push(httpThenNoOp("deferred-held", srv.URL))
	ran := s.push(httpThenNoOp("deferred-ran", srv.URL))

	r := s.start(held, "")
	poll(t, 20*time.Second, "the Http step's work message reaches a worker", func() (bool, string) {
		return h.count() > 0, fmt.Sprintf("%d held", h.count())
	})
	ctx := context.Background()
	cfg := s.st.Emulator.TestConfig(t)
	db := store.New(dynamodb.NewFromConfig(cfg), s.st.Resources.Table.Name, store.Options{})
	if _, err := db.Attempts.GetAttempt(ctx, held, r.WorkflowInstanceID, 1, "call", 1); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("attempt item of an unclaimed step: %v, want none (its start deferred to the claim)", err)
	}
	statuses := func(v orchestrator.StepView) string {
		var out []string
		for _, e := range v.Timeline {
			out = append(out, e.Status)
		}
		return strings.Join(out, ",")
	}
	const started = "CREATED,INITIALIZED,EVALUATING_PARAMS,STARTING,RUNNING"
	check := func(what string, v orchestrator.StepView, status, timeline string) {
		t.Helper()
		if v.RuntimeState.Status != status || statuses(v) != timeline || v.Params["http"] == nil || v.RuntimeState.StartTime == 0 {
			t.Errorf("%s: %s, timeline %s, params %v, start %d; want %s, timeline %s, its params", what,
				v.RuntimeState.Status, statuses(v), v.Params, v.RuntimeState.StartTime, status, timeline)
		}
	}
	check("listed unclaimed step", s.steps(held, r.WorkflowInstanceID)["call"], "RUNNING", started)
	for _, attempt := range []string{"latest", "1"} {
		var v orchestrator.StepView
		path := fmt.Sprintf("/api/v3/workflows/%s/instances/%d/runs/1/steps/call/attempts/%s", held, r.WorkflowInstanceID, attempt)
		if code := s.do("GET", path, nil, &v); code != 200 {
			t.Fatalf("GET %s: %d", path, code)
		}
		check("unclaimed step, attempt "+attempt, v, "RUNNING", started)
	}

	var stopped orchestrator.InstanceView
	if code := s.do("PUT", fmt.Sprintf("/api/v3/workflows/%s/instances/%d/actions/stop", held, r.WorkflowInstanceID), nil, &stopped); code != 200 {
		t.Fatalf("stop: %d", code)
	}
	if v := s.wait(held, r.WorkflowInstanceID, 30*time.Second); v.Status != "STOPPED" {
		t.Fatalf("stopped instance %s %v", v.Status, v.StepStatuses)
	}
	check("step stopped before any claim", s.steps(held, r.WorkflowInstanceID)["call"], "STOPPED", started+",STOPPED")
	if a, err := db.Attempts.GetAttempt(ctx, held, r.WorkflowInstanceID, 1, "call", 1); err != nil || a.Status != "STOPPED" {
		t.Fatalf("attempt item after the stop: %+v, %v; want it written STOPPED", a, err)
	}
	close(h.release) // the held message now finds the attempt stopped

	r2 := s.start(ran, "")
	if v := s.wait(ran, r2.WorkflowInstanceID, 30*time.Second); v.Status != "SUCCEEDED" {
		t.Fatalf("%s %v", v.Status, v.StepStatuses)
	}
	v := s.steps(ran, r2.WorkflowInstanceID)["call"]
	check("claimed step", v, "SUCCEEDED", started+",FINISHING,SUCCEEDED")
	if v.Outputs["answer"] == nil {
		t.Errorf("claimed step's outputs %v", v.Outputs)
	}
	// The held message (and the router's backstop copy) found the attempt
	// stopped: only the second workflow's step called the server.
	s.idle(t)
	if n := srv.Config.Handler.(*flaky).calls.Load(); n != 1 {
		t.Errorf("the Http endpoint was called %d times, want 1 (the stopped step never ran)", n)
	}
}
