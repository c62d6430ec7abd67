package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/store"
)

// TestClaimsRunAnAttemptOncePerLease: a RUNNING attempt is claimed by one
// worker at a time; a claim whose lease passed can be taken again; an attempt
// that is no longer RUNNING cannot be claimed.
func TestClaimsRunAnAttemptOncePerLease(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	ref := store.AttemptRef{WorkflowID: "wf", InstanceID: 1, RunID: 1, StepID: "s", Attempt: 1}
	now := time.UnixMilli(1_700_000_000_000)
	if err := s.ClaimAttempt(ctx, ref, "a", now, now.Add(time.Minute)); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("claim of a missing attempt: %v, want ErrNotFound", err)
	}
	commit := func(v int64, status string) {
		t.Helper()
		if err := s.CommitRun(ctx, store.Commit{WorkflowID: "wf", InstanceID: 1, RunID: 1, ExpectV: v, Status: "IN_PROGRESS",
			State: []byte(`{}`), Attempts: []store.Attempt{{StepID: "s", Attempt: 1, Status: status, Body: []byte(`{}`)}}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := s.CreateInstance(ctx, store.NewInstance{WorkflowID: "wf", Version: 1, Status: "CREATED", State: state, Now: now}); err == nil {
		t.Fatal("an instance of a workflow without a head was created")
	}
	if _, err := s.CreateVersion(ctx, store.NewVersion{WorkflowID: "wf", Definition: []byte(`{}`), Activate: true, Now: now}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.CreateInstance(ctx, store.NewInstance{WorkflowID: "wf", Version: 1, Status: "CREATED", State: state, Now: now,
		FirstEvent: store.Event{ID: "start", Body: []byte(`{}`)}}); err != nil {
		t.Fatal(err)
	}
	commit(1, "STARTING")
	var ce *store.ClaimError
	if err := s.ClaimAttempt(ctx, ref, "a", now, now.Add(time.Minute)); !errors.As(err, &ce) || !ce.Done {
		t.Fatalf("claim of a STARTING attempt: %v, want done", err)
	}
	commit(2, "RUNNING")
	if err := s.ClaimAttempt(ctx, ref, "a", now, now.Add(time.Minute)); err != nil {
		t.Fatalf("first claim: %v", err)
	}
	if err := s.ClaimAttempt(ctx, ref, "b", now.Add(30*time.Second), now.Add(90*time.Second)); !errors.As(err, &ce) || ce.Done ||
		ce.Until != now.Add(time.Minute).UnixMilli() {
		t.Fatalf("second claim within the lease: %v, want held until %d", err, now.Add(time.Minute).UnixMilli())
	}
	if err := s.ClaimAttempt(ctx, ref, "b", now.Add(61*time.Second), now.Add(2*time.Minute)); err != nil {
		t.Fatalf("claim after the lease: %v", err)
	}
	commit(3, "SUCCEEDED")
	if err := s.ClaimAttempt(ctx, ref, "c", now.Add(time.Hour), now.Add(2*time.Hour)); !errors.As(err, &ce) || !ce.Done {
		t.Fatalf("claim of a finished attempt: %v, want done", err)
	}
}
