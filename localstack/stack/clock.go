package stack

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/maestro-serverless/maestro/localstack"
)

// ErrFixedClock is returned by Stack.AdvanceClock and Stack.SkipToNextTimer
// when the stack's clock (Options.Clock) cannot be moved.
var ErrFixedClock = errors.New("the stack's clock cannot be moved (it has no Advance method)")

// handlerGate lets the stack's clock move while no handler runs. Every
// handler call the pumps and the sweep make holds it shared; moving the
// clock holds it alone, so a handler reads the time either before the move
// and is done with it (its messages sent, their delays counted from the
// old time, which the move then shortens) or after it.
type handlerGate struct{ mu sync.RWMutex }

// gated wraps h so that its calls hold g shared.
func gated[E, R any](g *handlerGate, h func(context.Context, E) (R, error)) func(context.Context, E) (R, error) {
	return func(ctx context.Context, e E) (R, error) {
		g.mu.RLock()
		defer g.mu.RUnlock()
		return h(ctx, e)
	}
}

// hold waits until no handler call is in progress and keeps new ones
// waiting until release is called. It gives up when ctx ends.
func (g *handlerGate) hold(ctx context.Context) (release func(), err error) {
	locked := make(chan struct{})
	go func() {
		g.mu.Lock()
		close(locked)
	}()
	select {
	case <-locked:
		return g.mu.Unlock, nil
	case <-ctx.Done():
		go func() {
			<-locked
			g.mu.Unlock()
		}()
		return nil, fmt.Errorf("wait for the handlers in progress: %w", ctx.Err())
	}
}

// AdvanceClock moves the stack's clock forward by d and plays d's passing
// where AWS would count it: the handlers decide with the later time, the
// schedule pump fires the schedules that became due, and the delayed
// messages of the stack's queues (timers up to 15 minutes: Sleep steps,
// retry backoffs, timeouts; backstop wakes) fall due when the clock says
// they are due — when the emulator can move SQS message delays (see
// localstack.Emulator.CanAdvanceQueueDelays; delaysMoved reports it).
// Elsewhere those delays keep their real time. The clock moves while no
// handler runs (it waits for the calls in progress), so a delay counted
// from the old time is moved too. It returns the new time.
func (s *Stack) AdvanceClock(ctx context.Context, d time.Duration) (now time.Time, delaysMoved bool, err error) {
	if d < 0 {
		return time.Time{}, false, fmt.Errorf("advance clock: negative duration %v", d)
	}
	if s.clock == nil {
		return time.Time{}, false, ErrFixedClock
	}
	release, err := s.gate.hold(ctx)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("advance clock: %w", err)
	}
	defer release()
	return s.advanceHeld(ctx, d)
}

// advanceHeld moves the clock and the queues' delays by d; s.gate is held.
func (s *Stack) advanceHeld(ctx context.Context, d time.Duration) (time.Time, bool, error) {
	now := s.clock.Advance(d)
	if !s.Emulator.CanAdvanceQueueDelays() {
		return now, false, nil
	}
	if _, _, err := s.Emulator.AdvanceQueueDelays(ctx, s.queueURLs, d); err != nil {
		return now, false, fmt.Errorf("advance clock: the clock moved by %v, the queues' delays did not: %w", d, err)
	}
	return now, true, nil
}

// SkipToNextTimer moves the stack's clock to the next delayed message of
// its queues (see AdvanceClock) and returns how far it moved it; ok is
// false, and the clock stays, when no message is delayed. Called when the
// stack is idle (WaitIdle), it is what a time-skipping test server does:
// the next timer fires now instead of after its real time, and timers fire
// in the order they would have. Schedules (timers over 15 minutes) are not
// looked at. It returns localstack.ErrNoQueueClock when the emulator
// cannot move message delays.
func (s *Stack) SkipToNextTimer(ctx context.Context) (skipped time.Duration, ok bool, err error) {
	if s.clock == nil {
		return 0, false, ErrFixedClock
	}
	if !s.Emulator.CanAdvanceQueueDelays() {
		return 0, false, localstack.ErrNoQueueClock
	}
	release, err := s.gate.hold(ctx)
	if err != nil {
		return 0, false, fmt.Errorf("skip to the next timer: %w", err)
	}
	defer release()
	next, ok, err := s.Emulator.AdvanceQueueDelays(ctx, s.queueURLs, 0)
	if err != nil || !ok {
		return 0, false, err
	}
	if _, _, err := s.advanceHeld(ctx, next); err != nil {
		return 0, false, err
	}
	return next, true, nil
}
