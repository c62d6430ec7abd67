package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/store"
)

// TestTaskTokens: a token is stored by its hash and names its attempt; a
// waiting attempt cannot be claimed again; a token is used once, and its
// report reaches the run's inbox in the same write.
func TestTaskTokens(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	now := time.UnixMilli(1_700_000_000_000)
	ref := store.AttemptRef{WorkflowID: "wf", InstanceID: 1, RunID: 1, StepID: "s", Attempt: 1}
	pushVersion(t, s, "wf", now)
	if _, _, err := s.Instances.CreateInstance(ctx, store.NewInstance{WorkflowID: "wf", Version: 1, Status: "CREATED", State: state, Now: now,
		FirstEvent: store.Event{ID: "start", Body: []byte(`{}`)}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Runs.CommitRun(ctx, store.Commit{WorkflowID: "wf", InstanceID: 1, RunID: 1, ExpectV: 1, Status: "IN_PROGRESS", State: []byte(`{}`),
		Consumed: []string{"start"}, Attempts: []store.Attempt{{StepID: "s", Attempt: 1, Status: "RUNNING", Body: []byte(`{}`)}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Attempts.ClaimAttempt(ctx, ref, "worker", now, now.Add(time.Minute), nil); err != nil {
		t.Fatal(err)
	}
	const token = "the-token"
	hash := store.HashTaskToken(token)
	if len(hash) != 64 || hash == token {
		t.Fatalf("hash %q", hash)
	}
	if _, err := s.Tasks.GetTaskToken(ctx, hash); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a token never stored: %v", err)
	}
	if err := s.Tasks.PutTaskToken(ctx, hash, ref); err != nil {
		t.Fatal(err)
	}
	got, err := s.Tasks.GetTaskToken(ctx, hash)
	if err != nil || got.Ref != ref || got.Used != 0 {
		t.Fatalf("token %+v, %v", got, err)
	}
	if err := s.Tasks.WaitForTask(ctx, ref, "another-worker", hash, "ecs:task-1", store.Event{ID: "w-s-000001", Body: []byte(`{"kind":"task_waiting"}`)}); !errors.Is(err, store.ErrClaimLost) {
		t.Fatalf("a wait by a worker without the claim: %v, want ErrClaimLost", err)
	}
	if err := s.Tasks.WaitForTask(ctx, ref, "worker", hash, "ecs:task-1", store.Event{ID: "w-s-000001", Body: []byte(`{"kind":"task_waiting"}`)}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Tasks.GetJob(ctx, "ecs:task-1"); err != nil || got != hash {
		t.Fatalf("job: %q, %v", got, err)
	}
	if _, err := s.Tasks.GetJob(ctx, "ecs:task-2"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("an unknown job: %v", err)
	}
	// Past the lease, a redelivery finds the attempt handed over.
	var ce *store.ClaimError
	if _, err := s.Attempts.ClaimAttempt(ctx, ref, "late", now.Add(2*time.Minute), now.Add(3*time.Minute), nil); !errors.As(err, &ce) || !ce.Done {
		t.Fatalf("a claim of a waiting attempt: %v, want done", err)
	}
	if p, err := s.Attempts.PeekAttempt(ctx, ref); err != nil || !p.Waiting || p.Status != "RUNNING" {
		t.Fatalf("peek %+v, %v", p, err)
	}
	if err := s.Tasks.UseTaskToken(ctx, hash, "success", ref, store.Event{ID: "k-s-000001", Body: []byte(`{"kind":"step_finished"}`)}); err != nil {
		t.Fatal(err)
	}
	if err := s.Tasks.UseTaskToken(ctx, hash, "failure", ref, store.Event{ID: "k-s-000001b", Body: []byte(`{"kind":"step_finished"}`)}); !errors.Is(err, store.ErrTaskTokenUsed) {
		t.Fatalf("a second use: %v, want ErrTaskTokenUsed", err)
	}
	if got, err := s.Tasks.GetTaskToken(ctx, hash); err != nil || got.Used == 0 || got.Result != "success" {
		t.Fatalf("token after use %+v, %v", got, err)
	}
	_, evs, err := s.Runs.LoadRun(ctx, "wf", 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range evs {
		ids = append(ids, e.ID)
	}
	if len(ids) != 2 || ids[0] != "k-s-000001" || ids[1] != "w-s-000001" {
		t.Fatalf("inbox %v: want the wait and the first use's report only", ids)
	}
	if err := s.Tasks.UseTaskToken(ctx, store.HashTaskToken("unknown"), "success", ref, store.Event{ID: "k-x", Body: []byte(`{}`)}); !errors.Is(err, store.ErrTaskTokenUsed) {
		t.Fatalf("an unknown token: %v", err)
	}
}
