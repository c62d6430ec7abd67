package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/store"
)

// gatedDispatch holds each Dispatch until the test lets it go, and keeps
// what each carried.
type gatedDispatch struct {
	mu    sync.Mutex
	calls [][]store.Message
	gate  chan error
}

func (d *gatedDispatch) Dispatch(_ context.Context, msgs []store.Message) error {
	err := <-d.gate
	d.mu.Lock()
	d.calls = append(d.calls, msgs)
	d.mu.Unlock()
	return err
}

// waitFor polls cond until it holds, failing the test after 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); runtime.Gosched() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// TestWakeSenderBatchesEndsThatComeWhileASendIsInFlight: the first end's
// wake goes out alone at once; the ends that come while it is in flight
// go in the next send, one wake per run naming its attempts in order; a
// send's error reaches every end it carried, and none of another send's.
func TestWakeSenderBatchesEndsThatComeWhileASendIsInFlight(t *testing.T) {
	d := &gatedDispatch{gate: make(chan error)}
	s := wakeSenderOf(d)
	ctx := context.Background()
	ref := func(wf string, step int) store.AttemptRef {
		return store.AttemptRef{WorkflowID: wf, InstanceID: 1, RunID: 1, StepID: fmt.Sprint("s", step), Attempt: 1}
	}
	errs := make(chan error, 1)
	go func() { errs <- s.send(ctx, []store.AttemptRef{ref("a", 0)}) }()
	waitFor(t, "the first send", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.sending && s.next == nil
	})
	later := []store.AttemptRef{ref("a", 1), ref("b", 1), ref("a", 2), ref("b", 2), ref("a", 3)}
	laterErrs := make(chan error, len(later))
	for _, r := range later {
		go func() { laterErrs <- s.send(ctx, []store.AttemptRef{r}) }()
	}
	waitFor(t, "the later ends to queue", func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.next != nil && len(s.next.refs) == len(later)
	})
	d.gate <- nil                         // the first send returns
	d.gate <- fmt.Errorf("queue refused") // the second fails
	if err := <-errs; err != nil {
		t.Errorf("first end: %v", err)
	}
	for range later {
		if err := <-laterErrs; err == nil || err.Error() != "queue refused" {
			t.Errorf("later end: %v, want the second send's error", err)
		}
	}
	if len(d.calls) != 2 {
		t.Fatalf("%d sends, want 2", len(d.calls))
	}
	var got []string
	for _, call := range d.calls {
		var line []string
		for _, m := range call {
			var w store.Wake
			if err := json.Unmarshal([]byte(m.Body), &w); err != nil {
				t.Fatal(err)
			}
			if m.Queue != store.QueueDecision || m.GroupID == "" {
				t.Errorf("message %+v: not a decision-queue wake", m)
			}
			line = append(line, fmt.Sprint(w.WorkflowID, w.Finished))
		}
		got = append(got, fmt.Sprint(line))
	}
	// Within a run the order of the queued ends is the order they came
	// in, which the goroutines do not fix: compare as sets per run.
	if got[0] != "[a[{s0 1}]]" {
		t.Errorf("first send %s", got[0])
	}
	if len(d.calls[1]) != 2 {
		t.Errorf("second send %s, want one wake per run", got[1])
	}
	named := map[string]int{}
	for _, m := range d.calls[1] {
		var w store.Wake
		_ = json.Unmarshal([]byte(m.Body), &w)
		named[w.WorkflowID] += len(w.Finished)
	}
	if named["a"] != 3 || named["b"] != 2 {
		t.Errorf("second send names %v, want 3 of a and 2 of b", named)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sending || s.next != nil {
		t.Errorf("sender left busy")
	}
}

// TestWakeSenderSendsAloneWhenNothingElseCame: ends one after the other
// each go in a send of their own, at once (no timer holds them).
func TestWakeSenderSendsAloneWhenNothingElseCame(t *testing.T) {
	d := &gatedDispatch{gate: make(chan error, 3)}
	s := wakeSenderOf(d)
	for i := range 3 {
		d.gate <- nil
		ref := store.AttemptRef{WorkflowID: "w", InstanceID: 1, RunID: 1, StepID: fmt.Sprint(i), Attempt: 1}
		if err := s.send(context.Background(), []store.AttemptRef{ref}); err != nil {
			t.Fatal(err)
		}
	}
	if len(d.calls) != 3 {
		t.Fatalf("%d sends, want 3", len(d.calls))
	}
	if wakeSenderOf(nil) != nil {
		t.Error("a sender without a dispatcher")
	}
}

// stalledDispatch answers only when its context ends.
type stalledDispatch struct{}

func (stalledDispatch) Dispatch(ctx context.Context, _ []store.Message) error {
	<-ctx.Done()
	return ctx.Err()
}

// TestWakeSenderGivesUpOnAStalledQueue: a send the queue does not answer
// ends at the sender's timeout with an error for its callers (who then
// leave the end to the stream), and the sender sends again afterwards.
func TestWakeSenderGivesUpOnAStalledQueue(t *testing.T) {
	s := wakeSenderOf(stalledDispatch{})
	s.timeout = 10 * time.Millisecond
	ref := []store.AttemptRef{{WorkflowID: "w", InstanceID: 1, RunID: 1, StepID: "a", Attempt: 1}}
	for range 2 {
		if err := s.send(context.Background(), ref); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("send to a stalled queue: %v, want the deadline", err)
		}
	}
	// A caller whose own context ends stops waiting too.
	s.timeout = time.Hour
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.send(ctx, ref); !errors.Is(err, context.Canceled) {
		t.Fatalf("send under an ended context: %v", err)
	}
}
