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

	"github.com/aws/aws-lambda-go/events"

	"github.com/maestro-serverless/maestro/localstack"
	"github.com/maestro-serverless/maestro/localstack/stack"
)

// TestHttpChainContinuesInline: in a chain of Http steps, the worker that
// runs a step applies its outcome itself and runs the next step in the same
// invocation — no step's outcome goes through the decision queue, and only
// the first step's work message is sent — and each step is called once.
func TestHttpChainContinuesInline(t *testing.T) {
	const wf, n = "inline-chain", 6
	var mu sync.Mutex
	calls := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls[r.URL.Path]++
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"ok": true}`)
	}))
	defer srv.Close()

	var seen sync.Map // queue -> *int of messages of wf
	count := func(queue string, next localstack.SQSHandler) localstack.SQSHandler {
		return func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
			for _, m := range ev.Records {
				if strings.Contains(m.Body, `"workflow_id":"`+wf+`"`) &&
					(queue == "decision" || strings.Contains(m.Body, `"kind":"run_step"`)) {
					v, _ := seen.LoadOrStore(queue, new(int))
					mu.Lock()
					*v.(*int)++
					mu.Unlock()
				}
			}
			return next(ctx, ev)
		}
	}
	s := startSystem(t, stack.Options{Hooks: stack.Hooks{
		Worker:  func(h localstack.SQSHandler) localstack.SQSHandler { return count("work", h) },
		Decider: func(h localstack.SQSHandler) localstack.SQSHandler { return count("decision", h) },
	}})
	var steps []string
	for i := 1; i <= n; i++ {
		next := ""
		if i < n {
			next = fmt.Sprintf(`,"transition":{"successors":{"h%d":"true"}}`, i+1)
		}
		steps = append(steps, fmt.Sprintf(`{"step":{"id":"h%d","type":"Http",
		  "params":{"http":{"type":"MAP","value":{"url":{"type":"STRING","value":"%s/h%d"},"method":{"type":"STRING","value":"GET"}}}}%s}}`,
			i, srv.URL, i, next))
	}
	s.push([]byte(fmt.Sprintf(`{"properties":{"owner":"inline"},"workflow":{"id":%q,"steps":[%s]}}`, wf, strings.Join(steps, ","))))

	r := s.start(wf, "")
	if v := s.wait(wf, r.WorkflowInstanceID, 30*time.Second); v.Status != "SUCCEEDED" {
		t.Fatalf("%s %v", v.Status, v.StepStatuses)
	}
	s.idle(t)
	mu.Lock()
	defer mu.Unlock()
	for i := 1; i <= n; i++ {
		if c := calls[fmt.Sprintf("/h%d", i)]; c != 1 {
			t.Errorf("step h%d called %d times, want once", i, c)
		}
	}
	got := func(queue string) int {
		if v, ok := seen.Load(queue); ok {
			return *v.(*int)
		}
		return 0
	}
	if w := got("work"); w != 1 {
		t.Errorf("%d run_step work messages, want 1 (the first step's; the worker ran the others inline)", w)
	}
	if d := got("decision"); d != 0 {
		t.Errorf("%d decision-queue messages for the run, want none (every outcome applied inline)", d)
	}
}
