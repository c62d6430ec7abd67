package memstore

import (
	"context"
	"sync"
	"time"

	"github.com/maestro-serverless/maestro/store"
)

// maxTransactItems is DynamoDB's limit on one transaction.
const maxTransactItems = store.MaxTransactItems

// Options tune a Store; the zero value is the default, as store.Options.
type Options struct {
	// Now is the clock the sweep index's due times and task tokens' times
	// are set by (default time.Now).
	Now func() time.Time
	// EventSweepAfter is how long an inbox event may wait before the
	// recovery sweeper wakes its run (default store.DefaultEventSweepAfter).
	EventSweepAfter time.Duration
}

// Store is an in-memory store: its fields implement the orchestrator's
// store interfaces (orchestrator.Stores), one aggregate each, over one
// shared table. It is safe for concurrent use.
type Store struct {
	// Definitions: workflow heads, versions, properties, deletion.
	Definitions *Definitions
	// Instances: instance ids, start request ids, the run-strategy queue.
	Instances *Instances
	// Runs: run items, their inboxes and commits.
	Runs *Runs
	// Attempts: step attempt items, claims and ends.
	Attempts *Attempts
	// Signals: signal instances, subscriptions, lineage.
	Signals *Signals
	// Gates: breakpoints, tag permits, job queues.
	Gates *Gates
	// Tasks: task tokens and external jobs.
	Tasks *Tasks
	// Sweeps: the recovery sweeper's index.
	Sweeps *Sweeps
	// Templates: job templates.
	Templates *Templates
	// Teams: the teams authorization names.
	Teams *Teams
	// Backfills: workflows' backfills.
	Backfills *Backfills

	b *base
}

// base is what every aggregate shares: the table, its lock and the clock.
type base struct {
	mu              sync.Mutex
	t               *table
	now             func() time.Time
	eventSweepAfter time.Duration
	// pageTag numbers page items (their keys need only be new).
	pageTag int64
}

// The aggregates.
type (
	// Definitions reads and writes workflow heads and versions.
	Definitions struct{ *base }
	// Instances reads and writes instance ids, start request ids and the
	// run-strategy queue.
	Instances struct{ *base }
	// Runs reads and writes run items, their inbox events and commits.
	Runs struct{ *base }
	// Attempts reads and writes step attempt items.
	Attempts struct{ *base }
	// Signals reads and writes signal instances, subscriptions and lineage.
	Signals struct{ *base }
	// Gates reads and writes breakpoints, tag permits and job queues.
	Gates struct{ *base }
	// Tasks reads and writes task tokens and external jobs.
	Tasks struct{ *base }
	// Sweeps reads and clears the recovery sweeper's index.
	Sweeps struct{ *base }
	// Templates reads and writes job templates.
	Templates struct{ *base }
	// Teams reads and writes teams.
	Teams struct{ *base }
	// Backfills reads and writes backfills.
	Backfills struct{ *base }
)

// New returns an empty Store.
func New(opts Options) *Store {
	checkHeadVersion()
	b := &base{t: newTable(), now: opts.Now, eventSweepAfter: opts.EventSweepAfter}
	if b.now == nil {
		b.now = time.Now
	}
	if b.eventSweepAfter <= 0 {
		b.eventSweepAfter = store.DefaultEventSweepAfter
	}
	return &Store{
		Definitions: &Definitions{b}, Instances: &Instances{b}, Runs: &Runs{b}, Attempts: &Attempts{b},
		Signals: &Signals{b}, Gates: &Gates{b}, Tasks: &Tasks{b}, Sweeps: &Sweeps{b}, Templates: &Templates{b}, Teams: &Teams{b}, Backfills: &Backfills{b}, b: b,
	}
}

// lock takes the table's lock and returns its release.
func (s *base) lock() func() {
	s.mu.Lock()
	return s.mu.Unlock
}

// lookup runs read on the item at pk, sk, a T, under the lock:
// store.ErrNotFound when there is none, ctxErr's error when ctx is done.
func lookup[T, R any](s *base, ctx context.Context, pk, sk string, read func(T) (R, error)) (R, error) {
	var zero R
	if err := ctxErr(ctx); err != nil {
		return zero, err
	}
	defer s.lock()()
	it, ok := s.t.get(pk, sk).(T)
	if !ok {
		return zero, store.ErrNotFound
	}
	return read(it)
}

// ctxErr is the error DynamoDB's client returns for a request made with a
// context already done.
func ctxErr(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return wrapf(err, "memstore: request not sent")
	}
	return nil
}
