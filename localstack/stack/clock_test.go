package stack

import (
	"context"
	"errors"
	"runtime"
	"testing"
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
