package stack

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/localstack"
)

// TestHandlerGate: holding the gate waits for the handler call in progress
// and keeps new calls out until it is released; a hold given up (its
// context ended) lets calls in again once the call in progress is done.
func TestHandlerGate(t *testing.T) {
	var g handlerGate
	inside, leave := make(chan string, 2), make(chan struct{})
	call := gated(&g, func(_ context.Context, name string) (string, error) {
		inside <- name
		<-leave
		return name, nil
	})
	go call(context.Background(), "first")
	if got := <-inside; got != "first" {
		t.Fatalf("inside: %s", got)
	}

	held := make(chan func(), 1)
	go func() {
		release, err := g.hold(context.Background())
		if err != nil {
			t.Error(err)
		}
		held <- release
	}()
	// The hold is waiting once a shared hold cannot be taken any more.
	for g.mu.TryRLock() {
		g.mu.RUnlock()
		runtime.Gosched()
	}
	select {
	case <-held:
		t.Fatal("the gate was held while a handler call was in progress")
	default:
	}
	second := make(chan struct{})
	go func() {
		call(context.Background(), "second")
		close(second)
	}()
	leave <- struct{}{} // the first call ends
	release := <-held
	select {
	case name := <-inside:
		t.Fatalf("%s call started while the gate was held", name)
	default:
	}
	release()
	if got := <-inside; got != "second" {
		t.Fatalf("inside: %s", got)
	}
	leave <- struct{}{}
	<-second

	// A hold whose context ends gives up and does not keep the gate.
	go call(context.Background(), "third")
	<-inside
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := g.hold(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("hold with a cancelled context: %v", err)
	}
	leave <- struct{}{}
	go call(context.Background(), "fourth")
	if got := <-inside; got != "fourth" {
		t.Fatalf("inside: %s", got)
	}
	leave <- struct{}{}
}

// TestAdvanceClockWithoutQueueClock: on an emulator that cannot move SQS
// delays (LocalStack, AWS_ENDPOINT_URL), POST /local/clock still moves the
// stack's clock and says the delays did not move; skipping to the next
// timer is refused, as is moving a clock that cannot move.
func TestAdvanceClockWithoutQueueClock(t *testing.T) {
	clock := localstack.NewManualClock()
	s := &Stack{Emulator: &localstack.Emulator{Kind: localstack.KindLocalStack}, clock: clock}
	before := clock.Now()
	mux := http.NewServeMux()
	clockRoutes(s)(mux)
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/local/clock", strings.NewReader(`{"advance_seconds": 3600}`)))
	var got struct {
		Now   string `json:"now"`
		Moved *bool  `json:"queue_delays_moved"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || rec.Code != http.StatusOK {
		t.Fatalf("HTTP %d %s: %v", rec.Code, rec.Body, err)
	}
	if got.Moved == nil || *got.Moved || got.Now != clock.Now().UTC().Format(time.RFC3339Nano) {
		t.Errorf("answer %s, want the new time and queue_delays_moved false", rec.Body)
	}
	if moved := clock.Now().Sub(before); moved != time.Hour {
		t.Errorf("the clock moved %v, want an hour", moved)
	}
	if _, _, err := s.SkipToNextTimer(context.Background()); !errors.Is(err, localstack.ErrNoQueueClock) {
		t.Errorf("SkipToNextTimer: %v, want ErrNoQueueClock", err)
	}
	fixed := &Stack{Emulator: s.Emulator}
	if _, _, err := fixed.AdvanceClock(context.Background(), time.Minute); !errors.Is(err, ErrFixedClock) {
		t.Errorf("AdvanceClock of a fixed clock: %v, want ErrFixedClock", err)
	}
}
