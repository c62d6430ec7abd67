package localstack

import (
	"sync"
	"time"
)

// Clock tells the time schedules are fired by.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
}

// SystemClock is the wall clock.
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

// ManualClock is a clock that moves only when told to, for tests that jump
// ahead to due timers. It is safe for concurrent use.
type ManualClock struct {
	mu  sync.Mutex
	now time.Time
}

// NewManualClock returns a clock set to the real current time.
func NewManualClock() *ManualClock {
	return &ManualClock{now: time.Now()}
}

// Now returns the clock's time.
func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d (backward if d is negative) and
// returns the new time.
func (c *ManualClock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	return c.now
}

// Set moves the clock to t.
func (c *ManualClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// OffsetClock is the wall clock moved forward by however much it was told
// to advance: the local stack's default, so that `POST /local/clock` can
// jump to due schedules while time keeps running. It is safe for
// concurrent use.
type OffsetClock struct {
	mu     sync.Mutex
	offset time.Duration
}

// Now returns the wall clock plus the offset.
func (c *OffsetClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

// Advance moves the clock forward by d and returns the new time.
func (c *OffsetClock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	c.offset += d
	c.mu.Unlock()
	return c.Now()
}

// AdvancingClock is a Clock that can be moved forward.
type AdvancingClock interface {
	Clock
	Advance(d time.Duration) time.Time
}
