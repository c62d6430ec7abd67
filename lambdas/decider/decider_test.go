package decider

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
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
