package e2e

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/maestro-serverless/maestro/localstack/stack"
	"github.com/maestro-serverless/maestro/orchestrator"
	"github.com/maestro-serverless/maestro/store"
)

// sleepChain builds a -> b -> c of Sleep(1s) steps with a NoOp d hanging off
// b: every step crosses the router, the work queue, the worker and the
// decision queue.
const sleepChain = `{"properties":{"owner":"faults"},"workflow":{"id":"sleep-chain","steps":[
 {"step":{"id":"a","type":"Sleep","params":{"sleep_seconds":{"value":1,"type":"LONG"}},"transition":{"successors":{"b":"true"}}}},
 {"step":{"id":"b","type":"Sleep","params":{"sleep_seconds":{"value":1,"type":"LONG"}},"transition":{"successors":{"c":"true","d":"true"}}}},
 {"step":{"id":"c","type":"Sleep","params":{"sleep_seconds":{"value":1,"type":"LONG"}}}},
 {"step":{"id":"d","type":"NoOp"}}]}}`

func runFaultWorkloads(t *testing.T, s *system) {
	t.Helper()
	wf, r, v := s.run([]byte(sleepChain), 90*time.Second)
	if v.Status != "SUCCEEDED" {
		t.Fatalf("sleep chain: %s %v", v.Status, v.StepStatuses)
	}
	steps := s.steps(wf, r.WorkflowInstanceID)
	if len(steps) != 4 {
		t.Errorf("sleep chain: %d steps listed, want 4", len(steps))
	}
	for _, st := range steps {
		ranOnce(t, st)
	}
	wf8 := s.push(readFile(t, "sample-dag-test-8.json"))
	r8 := s.start(wf8, "")
	if v := s.wait(wf8, r8.WorkflowInstanceID, 30*time.Second); v.Status != "SUCCEEDED" {
		t.Fatalf("dag-test-8: %s", v.Status)
	}
	expectSteps(t, s, wf8, r8.WorkflowInstanceID, map[string]string{
		"job.1": "SUCCEEDED", "job.2": "SUCCEEDED", "job.3": "UNSATISFIED", "job.4": "SUCCEEDED", "job.5": "SUCCEEDED",
	})
}

// TestEveryMessageDeliveredTwice hands every SQS batch to its handler twice.
func TestEveryMessageDeliveredTwice(t *testing.T) {
	t.Parallel()
	s := startSystem(t, stack.Options{Faults: stack.Faults{DuplicateDelivery: true}})
	runFaultWorkloads(t, s)
}

// TestCrashAfterCommitBeforeDelete makes every message's first successful
// handling end as if the process died after its DynamoDB commit and before
// the SQS delete: the message comes back after the visibility timeout.
func TestCrashAfterCommitBeforeDelete(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	seen := map[string]bool{}
	crashes := map[string]int{}
	s := startSystem(t, stack.Options{
		VisibilityTimeout: 2 * time.Second,
		Faults: stack.Faults{CrashAfterHandler: func(queue string, m events.SQSMessage) bool {
			mu.Lock()
			defer mu.Unlock()
			k := queue + "|" + m.MessageId
			if seen[k] {
				return false
			}
			seen[k] = true
			crashes[queue]++
			return true
		}},
	})
	runFaultWorkloads(t, s)
	mu.Lock()
	defer mu.Unlock()
	if crashes[store.QueueWork] < 3 || crashes[store.QueueDecision] < 3 {
		t.Errorf("crash injection did not reach every step: %v", crashes)
	}
	t.Logf("crashes injected: %v", crashes)
}

// TestConcurrentDecidersNeverLoseAnEvent races several deciders over one
// run whose steps all finish at once: optimistic-concurrency conflicts are
// retried and every event is applied exactly once.
func TestConcurrentDecidersNeverLoseAnEvent(t *testing.T) {
	t.Parallel()
	s := startSystem(t, stack.Options{})
	const width = 8
	var b strings.Builder
	fmt.Fprintf(&b, `{"properties":{"owner":"faults","run_strategy":"parallel"},"workflow":{"id":"race","steps":[`)
	fmt.Fprintf(&b, `{"step":{"id":"root","type":"NoOp","transition":{"successors":{`)
	for i := range width {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"p%d":"true"`, i)
	}
	b.WriteString(`}}}}`)
	for i := range width {
		// Long sleeps: the test, not the timer, finishes these steps.
		fmt.Fprintf(&b, `,{"step":{"id":"p%d","type":"Sleep","params":{"sleep_seconds":{"value":3600,"type":"LONG"}},"transition":{"successors":{"join":"true"}}}}`, i)
	}
	b.WriteString(`,{"step":{"id":"join","type":"NoOp"}}]}}`)
	wf := s.push([]byte(b.String()))
	r := s.start(wf, "")
	orch := s.st.Deps.Orchestrator
	ctx := context.Background()
	// Deliver every step's timer at once, then let 4 deciders race over
	// the run while the stream-driven decider joins in.
	for i := range width {
		msg := orchestrator.EncodeWork(orchestrator.TimerWork{
			StepRef: orchestrator.StepRef{WorkflowID: wf, InstanceID: r.WorkflowInstanceID, RunID: 1, StepID: fmt.Sprintf("p%d", i), Attempt: 1},
			Purpose: "sleep", FireAt: time.Now().Add(-time.Second),
		})
		if _, err := orch.Worker.HandleWork(ctx, []byte(msg), nil); err != nil {
			t.Fatalf("deliver timer %d: %v", i, err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := orch.Rounds.Process(ctx, store.Wake{WorkflowID: wf, InstanceID: r.WorkflowInstanceID, RunID: 1})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("decider: %v", err)
		}
	}
	v := s.wait(wf, r.WorkflowInstanceID, 30*time.Second)
	wantEnd(t, v, "SUCCEEDED", nil)
	for _, st := range s.steps(wf, r.WorkflowInstanceID) {
		ranOnce(t, st)
	}
}
