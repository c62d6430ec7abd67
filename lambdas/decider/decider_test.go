package decider

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/maestro-serverless/maestro/store"
)

type recorder struct {
	mu    sync.Mutex
	calls []string
	fail  map[string]bool
}

func (r *recorder) HandleWake(_ context.Context, body []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, string(body))
	if r.fail[string(body)] {
		return errors.New("boom")
	}
	return nil
}

func msg(id, group, body string) events.SQSMessage {
	return events.SQSMessage{MessageId: id, Body: body, Attributes: map[string]string{"MessageGroupId": group}}
}

func TestHandleCoalescesWakesAndKeepsGroupOrder(t *testing.T) {
	r := &recorder{fail: map[string]bool{"B": true}}
	resp, err := New(r, nil).Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
		msg("1", "a", "A"), msg("2", "a", "A"), msg("3", "b", "B"), msg("4", "b", "B2"), msg("5", "a", "A"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	// A is applied once; B fails, so B2 (same group, later) is held back too.
	got := slices.Clone(r.calls)
	slices.Sort(got)
	if !slices.Equal(got, []string{"A", "B"}) {
		t.Fatalf("calls %v, want A and B once each", r.calls)
	}
	var failed []string
	for _, f := range resp.BatchItemFailures {
		failed = append(failed, f.ItemIdentifier)
	}
	if !slices.Equal(failed, []string{"3", "4"}) {
		t.Fatalf("failed %v, want [3 4]", failed)
	}
}

// TestHandleMergesTheWakesOfARun: the wakes of one run within a group —
// workers' ends naming their attempts, and a plain wake — are applied as
// one wake naming every attempt; another run of the instance is decided
// apart, in its place.
func TestHandleMergesTheWakesOfARun(t *testing.T) {
	ended := func(run int64, step string) string {
		return store.FinishedWakeMessage(store.AttemptRef{WorkflowID: "wf", InstanceID: 1, RunID: run, StepID: step, Attempt: 1}).Body
	}
	r := &recorder{}
	resp, err := New(r, nil).Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
		msg("1", "wf#1", ended(1, "a")), msg("2", "wf#1", ended(2, "a")), msg("3", "wf#1", store.WakeBody("wf", 1, 1)),
		msg("4", "wf#1", ended(1, "b")),
	}})
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatal(err, resp.BatchItemFailures)
	}
	want := []string{
		`{"workflow_id":"wf","workflow_instance_id":1,"workflow_run_id":1,"finished":[{"step_id":"a","step_attempt_id":1},{"step_id":"b","step_attempt_id":1}]}`,
		ended(2, "a"),
	}
	if !slices.Equal(r.calls, want) {
		t.Fatalf("calls %v, want %v", r.calls, want)
	}
}

// gate blocks each wake until n wakes are in flight at once.
type gate struct {
	n       int
	mu      sync.Mutex
	in      int
	release chan struct{}
	order   map[string][]string
}

func (g *gate) HandleWake(ctx context.Context, body []byte) error {
	g.mu.Lock()
	g.in++
	if g.in == g.n {
		close(g.release)
	}
	g.mu.Unlock()
	select {
	case <-g.release:
	case <-time.After(10 * time.Second):
		return errors.New("the groups were not handled concurrently")
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	group := string(body[:1])
	g.order[group] = append(g.order[group], string(body))
	return nil
}

func TestHandleDecidesGroupsConcurrentlyAndEachInOrder(t *testing.T) {
	g := &gate{n: 3, release: make(chan struct{}), order: map[string][]string{}}
	resp, err := New(g, nil).Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{
		msg("1", "a", "a1"), msg("2", "b", "b1"), msg("3", "c", "c1"), msg("4", "a", "a2"), msg("5", "b", "b2"),
	}})
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("err %v, failures %v", err, resp.BatchItemFailures)
	}
	if !slices.Equal(g.order["a"], []string{"a1", "a2"}) || !slices.Equal(g.order["b"], []string{"b1", "b2"}) {
		t.Fatalf("per-group order %v", g.order)
	}
}
