package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/maestro-serverless/maestro/localstack"
	"github.com/maestro-serverless/maestro/localstack/stack"
	"github.com/maestro-serverless/maestro/store"
)

// holdRuns is a decider hook that holds back the decision messages of the
// instances it is told to hold, each until it is released, and lets the
// rest of a batch through at once.
type holdRuns struct {
	mu       sync.Mutex
	held     map[int64]chan struct{} // instance -> closed on release
	arrived  map[int64]chan struct{} // instance -> closed when one is held
	released map[int64]bool
}

func newHoldRuns() *holdRuns {
	return &holdRuns{held: map[int64]chan struct{}{}, arrived: map[int64]chan struct{}{}, released: map[int64]bool{}}
}

// hold arms the hold for instance id; the channel is closed when a message
// of it is held.
func (h *holdRuns) hold(id int64) <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.held[id], h.arrived[id] = make(chan struct{}), make(chan struct{})
	return h.arrived[id]
}

// release lets instance id's held messages go.
func (h *holdRuns) release(id int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.released[id] {
		h.released[id] = true
		close(h.held[id])
	}
}

// gate returns the channel to wait on for instance id's messages, nil when
// they pass, noting the arrival.
func (h *holdRuns) gate(id int64) <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	g, armed := h.held[id]
	if !armed || h.released[id] {
		return nil
	}
	select {
	case <-h.arrived[id]:
	default:
		close(h.arrived[id])
	}
	return g
}

func (h *holdRuns) wrap(next localstack.SQSHandler) localstack.SQSHandler {
	return func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		byRun := map[int64][]events.SQSMessage{}
		var order []int64
		for _, r := range ev.Records {
			var w store.Wake
			_ = json.Unmarshal([]byte(r.Body), &w)
			if _, ok := byRun[w.InstanceID]; !ok {
				order = append(order, w.InstanceID)
			}
			byRun[w.InstanceID] = append(byRun[w.InstanceID], r)
		}
		var resp events.SQSEventResponse
		for _, id := range order {
			if g := h.gate(id); g != nil {
				select {
				case <-g:
				case <-ctx.Done():
					return resp, ctx.Err()
				}
			}
			out, err := next(ctx, events.SQSEvent{Records: byRun[id]})
			if err != nil {
				return resp, err
			}
			resp.BatchItemFailures = append(resp.BatchItemFailures, out.BatchItemFailures...)
		}
		return resp, nil
	}
}

// TestQueuedRunsStartInInstanceOrder: under SEQUENTIAL, a queued run whose
// decision comes while the slot is free (a late decision, here made right
// after the running instance was stopped, while the wake the stop sent the
// oldest queued run is held back) does not start ahead of the older queued
// run: the older one starts. Before the fix, instance 3 took the slot and
// instance 2 waited behind it (a CI run saw TestRunStrategies' three
// instances run 1, 3, 2).
func TestQueuedRunsStartInInstanceOrder(t *testing.T) {
	t.Parallel()
	h := newHoldRuns()
	s := startSystem(t, stack.Options{Hooks: stack.Hooks{Decider: h.wrap}})
	wf := s.push(sleeper("rs-order", "", 600))
	for want := int64(1); want <= 3; want++ {
		if got := s.start(wf, "").WorkflowInstanceID; got != want {
			t.Fatalf("instance %d, want %d", got, want)
		}
	}
	arrived2 := h.hold(2)
	var v struct {
		Status string `json:"status"`
	}
	if code := s.do("PUT", fmt.Sprintf("/api/v3/workflows/%s/instances/1/actions/stop", wf), nil, &v); code != 200 || v.Status != "STOPPED" {
		t.Fatalf("stop instance 1: HTTP %d, %s", code, v.Status)
	}
	// Instance 3's decision, as its decider would make it.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := s.st.Deps.Orchestrator.Rounds.Process(ctx, store.Wake{WorkflowID: wf, InstanceID: 3, RunID: 1}); err != nil {
		t.Fatalf("decide instance 3: %v", err)
	}
	if st := s.instance(wf, 3).Status; st != "CREATED" {
		t.Fatalf("instance 3 is %s while instance 2 waits, want CREATED (queued)", st)
	}
	waitClosed(t, arrived2, "the stop's wake of instance 2 reaches the decider")
	h.release(2)
	poll(t, 30*time.Second, "instance 2 starts", func() (bool, string) {
		st := s.instance(wf, 2).Status
		return st == "IN_PROGRESS", st
	})
	for _, id := range []int64{2, 3} {
		if code := s.do("PUT", fmt.Sprintf("/api/v3/workflows/%s/instances/%d/actions/stop", wf, id), nil, &v); code != 200 {
			t.Fatalf("stop instance %d: HTTP %d", id, code)
		}
	}
}

// waitClosed waits up to 30 s for ch to be closed.
func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: not within 30 s", what)
	}
}
