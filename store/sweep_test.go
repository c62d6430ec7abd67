package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/localstack"
	"github.com/maestro-serverless/maestro/store"
)

// due lists every shard's due items at t.
func due(t *testing.T, s *store.Store, at time.Time) []store.Due {
	t.Helper()
	var all []store.Due
	for shard := 0; shard < store.SweepShards; shard++ {
		items, err := s.Sweeps.DueItems(context.Background(), shard, at, 100)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, items...)
	}
	return all
}

// TestSweepIndexHoldsWhatIsPending: an inbox event is in the sweep index
// until it is consumed, due EventSweepAfter after it was written; a run
// committed with SweepAt is due then and leaves the index when a commit
// sets none; Redrive puts its event only while the run is still due at the
// time the sweeper read.
func TestSweepIndexHoldsWhatIsPending(t *testing.T) {
	t0 := time.UnixMilli(1_800_000_000_000)
	c := localstack.NewManualClock()
	c.Set(t0)
	s := newStoreWith(t, store.Options{Now: c.Now, EventSweepAfter: 30 * time.Second})
	ctx := context.Background()
	rec, run := createRun(t, s, "swept")

	if got := due(t, s, t0.Add(29*time.Second)); len(got) != 0 {
		t.Fatalf("due before its time: %+v", got)
	}
	got := due(t, s, t0.Add(30*time.Second))
	if len(got) != 1 || got[0].Run || got[0].EventID != "0-start" || got[0].WorkflowID != "swept" ||
		got[0].InstanceID != rec.InstanceID || got[0].RunID != 1 || got[0].At != t0.Add(30*time.Second).UnixMilli() {
		t.Fatalf("due at 30s: %+v", got)
	}

	// The decider applies it and expects work back within a minute.
	sweepAt := t0.Add(time.Minute).UnixMilli()
	if err := s.Runs.CommitRun(ctx, store.Commit{WorkflowID: "swept", InstanceID: rec.InstanceID, RunID: 1, ExpectV: run.V,
		Status: "IN_PROGRESS", State: []byte(`{}`), Consumed: []string{"0-start"}, SweepAt: sweepAt}); err != nil {
		t.Fatal(err)
	}
	if got := due(t, s, t0.Add(59*time.Second)); len(got) != 0 {
		t.Fatalf("due before the run's time: %+v", got)
	}
	got = due(t, s, t0.Add(time.Hour))
	if len(got) != 1 || !got[0].Run || got[0].At != sweepAt {
		t.Fatalf("run due: %+v", got)
	}
	runDue := got[0]

	// A redrive read at another due time (the run committed since) is
	// refused; at the current one it puts the event, itself indexed.
	stale := runDue
	stale.At--
	redrive := store.Event{ID: "r-1", Body: []byte(`{"kind":"redrive"}`)}
	if err := s.Sweeps.Redrive(ctx, stale, redrive); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("stale redrive: %v, want ErrConflict", err)
	}
	c.Set(t0.Add(2 * time.Minute))
	if err := s.Sweeps.Redrive(ctx, runDue, redrive); err != nil {
		t.Fatal(err)
	}
	_, events, err := s.Runs.LoadRun(ctx, "swept", rec.InstanceID, 1)
	if err != nil || len(events) != 1 || events[0].ID != "r-1" {
		t.Fatalf("inbox after redrive: %+v %v", events, err)
	}

	// The run ends: a commit without SweepAt takes it out of the index.
	if err := s.Runs.CommitRun(ctx, store.Commit{WorkflowID: "swept", InstanceID: rec.InstanceID, RunID: 1, ExpectV: run.V + 1,
		Status: "SUCCEEDED", State: []byte(`{}`), Consumed: []string{"r-1"}}); err != nil {
		t.Fatal(err)
	}
	if got := due(t, s, t0.Add(24*time.Hour)); len(got) != 0 {
		t.Fatalf("an ended run is still indexed: %+v", got)
	}
}

// TestUnsweepEventsTakesAQueuedRunOut: a run's pending events leave the
// sweep index and stay pending; an already consumed one is no error.
func TestUnsweepEventsTakesAQueuedRunOut(t *testing.T) {
	t0 := time.UnixMilli(1_800_000_000_000)
	c := localstack.NewManualClock()
	c.Set(t0)
	s := newStoreWith(t, store.Options{Now: c.Now, EventSweepAfter: time.Second})
	ctx := context.Background()
	rec, _ := createRun(t, s, "queued")
	if err := s.Runs.PutEvent(ctx, "queued", rec.InstanceID, 1, store.Event{ID: "a-1", Body: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	if got := due(t, s, t0.Add(time.Minute)); len(got) != 2 {
		t.Fatalf("due before: %+v", got)
	}
	if err := s.Sweeps.UnsweepEvents(ctx, "queued", rec.InstanceID, 1); err != nil {
		t.Fatal(err)
	}
	if got := due(t, s, t0.Add(time.Hour)); len(got) != 0 {
		t.Fatalf("due after: %+v", got)
	}
	_, events, err := s.Runs.LoadRun(ctx, "queued", rec.InstanceID, 1)
	if err != nil || len(events) != 2 {
		t.Fatalf("pending after: %+v %v", events, err)
	}
	if err := s.Sweeps.UnsweepEvents(ctx, "queued", rec.InstanceID, 1); err != nil {
		t.Fatal(err)
	}
}
