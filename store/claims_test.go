package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/store"
)

// TestClaimsRunAnAttemptOncePerLease: a RUNNING attempt is claimed by one
// worker at a time; a claim whose lease passed can be taken again, and hands
// the next worker the outcome its holder recorded; only the holder records
// one; an attempt that is no longer RUNNING cannot be claimed.
func TestClaimsRunAnAttemptOncePerLease(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	ref := store.AttemptRef{WorkflowID: "wf", InstanceID: 1, RunID: 1, StepID: "s", Attempt: 1}
	now := time.UnixMilli(1_700_000_000_000)
	claim := func(token string, at, until time.Time) error {
		_, err := s.Attempts.ClaimAttempt(ctx, ref, token, at, until, nil)
		return err
	}
	if err := claim("a", now, now.Add(time.Minute)); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("claim of a missing attempt: %v, want ErrNotFound", err)
	}
	commit := func(v int64, status string) {
		t.Helper()
		if err := s.Runs.CommitRun(ctx, store.Commit{WorkflowID: "wf", InstanceID: 1, RunID: 1, ExpectV: v, Status: "IN_PROGRESS",
			State: []byte(`{}`), Attempts: []store.Attempt{{StepID: "s", Attempt: 1, Status: status, Body: []byte(`{}`)}}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := s.Instances.CreateInstance(ctx, store.NewInstance{WorkflowID: "wf", Version: 1, Status: "CREATED", State: state, Now: now}); err == nil {
		t.Fatal("an instance of a workflow without a head was created")
	}
	pushVersion(t, s, "wf", now)
	if _, _, err := s.Instances.CreateInstance(ctx, store.NewInstance{WorkflowID: "wf", Version: 1, Status: "CREATED", State: state, Now: now,
		FirstEvent: store.Event{ID: "start", Body: []byte(`{}`)}}); err != nil {
		t.Fatal(err)
	}
	commit(1, "STARTING")
	var ce *store.ClaimError
	if err := claim("a", now, now.Add(time.Minute)); !errors.As(err, &ce) || !ce.Done {
		t.Fatalf("claim of a STARTING attempt: %v, want done", err)
	}
	commit(2, "RUNNING")
	if err := s.Attempts.RecordOutcome(ctx, ref, "a", []byte(`{"x":1}`)); !errors.Is(err, store.ErrClaimLost) {
		t.Fatalf("outcome recorded without a claim: %v", err)
	}
	if err := claim("a", now, now.Add(time.Minute)); err != nil {
		t.Fatalf("first claim: %v", err)
	}
	if err := claim("b", now.Add(30*time.Second), now.Add(90*time.Second)); !errors.As(err, &ce) || ce.Done ||
		ce.Until != now.Add(time.Minute).UnixMilli() {
		t.Fatalf("second claim within the lease: %v, want held until %d", err, now.Add(time.Minute).UnixMilli())
	}
	if err := s.Attempts.RecordOutcome(ctx, ref, "b", []byte(`{"x":1}`)); !errors.Is(err, store.ErrClaimLost) {
		t.Fatalf("outcome recorded by a worker that does not hold the claim: %v", err)
	}
	if err := s.Attempts.RecordOutcome(ctx, ref, "a", []byte(`{"x":2}`)); err != nil {
		t.Fatalf("holder records its outcome: %v", err)
	}
	// "a" dies; after its lease, "b" claims the attempt and gets the outcome.
	got, err := s.Attempts.ClaimAttempt(ctx, ref, "b", now.Add(61*time.Second), now.Add(2*time.Minute), nil)
	if err != nil || string(got) != `{"x":2}` {
		t.Fatalf("claim after the lease: outcome %q, %v; want the recorded one", got, err)
	}
	commit(3, "SUCCEEDED")
	if err := claim("c", now.Add(time.Hour), now.Add(2*time.Hour)); !errors.As(err, &ce) || !ce.Done {
		t.Fatalf("claim of a finished attempt: %v, want done", err)
	}
	a, err := s.Attempts.GetAttempt(ctx, "wf", 1, 1, "s", 1)
	if err != nil {
		t.Fatal(err)
	}
	if a.Status != "SUCCEEDED" {
		t.Errorf("attempt %+v", a)
	}
}

// TestDeferredStarts: an attempt whose start commit left its item out is
// created by its first claim, as the start describes, and claimed once per
// lease; a commit that ends an attempt no worker claimed writes the start's
// entries before its own, and the claim that comes after finds it done; a
// later commit of an attempt whose item exists keeps the stored entries.
func TestDeferredStarts(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	now := time.UnixMilli(1_700_000_000_000)
	createRun(t, s, "wf")
	start := &store.AttemptStart{Body: []byte(`{"params":{"a":1}}`), Timeline: [][]byte{[]byte(`"CREATED"`), []byte(`"RUNNING"`)}}
	entries := func(a *store.Attempt) string {
		var out []string
		for _, e := range a.Timeline {
			out = append(out, string(e))
		}
		return strings.Join(out, ",")
	}

	// Claimed, then ended: the claim wrote the start, the end appends.
	if _, err := s.Attempts.ClaimAttempt(ctx, firstAttempt("x"), "a", now, now.Add(time.Minute), start); err != nil {
		t.Fatalf("first claim of a deferred start: %v", err)
	}
	a, err := s.Attempts.GetAttempt(ctx, "wf", 1, 1, "x", 1)
	if err != nil || a.Status != "RUNNING" || string(a.Body) != `{"params":{"a":1}}` || entries(a) != `"CREATED","RUNNING"` {
		t.Fatalf("claimed deferred start: %+v, %v", a, err)
	}
	var ce *store.ClaimError
	if _, err := s.Attempts.ClaimAttempt(ctx, firstAttempt("x"), "b", now.Add(time.Second), now.Add(time.Minute), start); !errors.As(err, &ce) || ce.Done {
		t.Fatalf("second claim within the lease: %v, want held", err)
	}
	end := func(v int64, step string) {
		t.Helper()
		if err := s.Runs.CommitRun(ctx, store.Commit{WorkflowID: "wf", InstanceID: 1, RunID: 1, ExpectV: v, Status: "IN_PROGRESS",
			State: []byte(`{}`), Attempts: []store.Attempt{{StepID: step, Attempt: 1, Status: "STOPPED",
				Body: []byte(`{"stopped":true}`), Timeline: [][]byte{[]byte(`"STOPPED"`)}, Start: start}}}); err != nil {
			t.Fatal(err)
		}
	}
	end(1, "x")
	if a, err = s.Attempts.GetAttempt(ctx, "wf", 1, 1, "x", 1); err != nil || a.Status != "STOPPED" || entries(a) != `"CREATED","RUNNING","STOPPED"` {
		t.Fatalf("claimed attempt ended: %+v, %v", a, err)
	}

	// Ended before any claim: the end writes the start's entries first, and
	// a late claim finds the attempt done.
	end(2, "y")
	if a, err = s.Attempts.GetAttempt(ctx, "wf", 1, 1, "y", 1); err != nil || a.Status != "STOPPED" || entries(a) != `"CREATED","RUNNING","STOPPED"` ||
		string(a.Body) != `{"stopped":true}` {
		t.Fatalf("unclaimed attempt ended: %+v, %v", a, err)
	}
	if _, err := s.Attempts.ClaimAttempt(ctx, firstAttempt("y"), "a", now, now.Add(time.Minute), start); !errors.As(err, &ce) || !ce.Done {
		t.Fatalf("claim after the end: %v, want done", err)
	}

	// A status-only write (no body) of an unclaimed attempt takes the
	// start's body.
	if err := s.Runs.CommitRun(ctx, store.Commit{WorkflowID: "wf", InstanceID: 1, RunID: 1, ExpectV: 3, Status: "IN_PROGRESS",
		State: []byte(`{}`), Attempts: []store.Attempt{{StepID: "z", Attempt: 1, Status: "FAILED",
			Timeline: [][]byte{[]byte(`"FAILED"`)}, Start: start}}}); err != nil {
		t.Fatal(err)
	}
	if a, err = s.Attempts.GetAttempt(ctx, "wf", 1, 1, "z", 1); err != nil || string(a.Body) != `{"params":{"a":1}}` || entries(a) != `"CREATED","RUNNING","FAILED"` {
		t.Fatalf("status-only end of an unclaimed attempt: %+v, %v", a, err)
	}
}

// TestStartedAttempts: an attempt counts as taken once a worker claimed it
// or it ended; one its commit wrote RUNNING, no worker having claimed it,
// and one with no item yet (a deferred start) do not.
func TestStartedAttempts(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	now := time.UnixMilli(1_700_000_000_000)
	_, run := createRun(t, s, "wf")
	if err := s.Runs.CommitRun(ctx, store.Commit{WorkflowID: "wf", InstanceID: 1, RunID: 1, ExpectV: run.V, Status: "IN_PROGRESS", State: []byte(`{}`),
		Attempts: []store.Attempt{
			{StepID: "running", Attempt: 1, Status: "RUNNING", Body: []byte(`{}`)},
			{StepID: "claimed", Attempt: 1, Status: "RUNNING", Body: []byte(`{}`)},
			{StepID: "ended", Attempt: 1, Status: "SUCCEEDED", Body: []byte(`{}`)},
		}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Attempts.ClaimAttempt(ctx, firstAttempt("claimed"), "w", now, now.Add(time.Minute), nil); err != nil {
		t.Fatal(err)
	}
	refs := []store.AttemptRef{firstAttempt("running"), firstAttempt("claimed"), firstAttempt("ended"), firstAttempt("deferred"), firstAttempt("claimed")}
	started, err := s.Attempts.StartedAttempts(ctx, refs)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range refs {
		if want := r.StepID == "claimed" || r.StepID == "ended"; started[r] != want {
			t.Errorf("%s: started %v, want %v", r.StepID, started[r], want)
		}
	}
}
