package store_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/store"
)

func TestDeleteWorkflowPurgesInRoundsAndKeepsSequences(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	now := time.Now()
	for range 2 {
		pushVersion(t, s, "wf", now)
	}
	for i := range 4 {
		rec, _, err := s.Instances.CreateInstance(ctx, store.NewInstance{
			WorkflowID: "wf", Version: 2, UUID: fmt.Sprint(i), Status: "SUCCEEDED", State: state,
			FirstEvent: store.Event{ID: "0-start", Body: []byte(`{}`)}, Now: now,
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Runs.PutEvent(ctx, "wf", rec.InstanceID, 1, store.Event{ID: "x", Body: []byte(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Gates.PutBreakpoint(ctx, "wf", store.Breakpoint{StepID: "a"}); err != nil {
		t.Fatal(err)
	}
	next := store.Message{Queue: store.QueueWork, Body: `{"kind":"purge"}`}
	if err := s.Definitions.DeleteWorkflow(ctx, "nope", next, now); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("delete of a missing workflow: %v", err)
	}
	if err := s.Definitions.DeleteWorkflow(ctx, "wf", next, now); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Definitions.GetHead(ctx, "wf"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("head after delete: %v", err)
	}
	if heads, _, err := s.Definitions.ListWorkflows(ctx, "", 10); err != nil || len(heads) != 0 {
		t.Fatalf("a deleted workflow is listed: %+v, %v", heads, err)
	}
	if _, err := s.Definitions.CreateVersion(ctx, store.NewVersion{WorkflowID: "wf", Definition: []byte(`{}`), Now: now}); !errors.Is(err, store.ErrDeleting) {
		t.Fatalf("push while deleting: %v, want ErrDeleting", err)
	}
	if deleting, err := s.Definitions.Deleting(ctx, "wf"); err != nil || !deleting {
		t.Fatalf("deleting = %v, %v", deleting, err)
	}
	// 2 versions, 4 instances (summary + run + event each), a breakpoint:
	// in rounds of 5.
	rounds, total := 0, 0
	for {
		rounds++
		done, n, err := s.Definitions.PurgeWorkflow(ctx, "wf", 5)
		if err != nil {
			t.Fatal(err)
		}
		total += n
		if done {
			break
		}
		if rounds > 20 {
			t.Fatal("purge does not finish")
		}
	}
	if rounds < 3 || total < 15 {
		t.Errorf("%d rounds deleted %d items, want several rounds and >= 15 items", rounds, total)
	}
	if _, _, err := s.Runs.LoadRun(ctx, "wf", 1, 1); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("run after purge: %v", err)
	}
	if deleting, _ := s.Definitions.Deleting(ctx, "wf"); deleting {
		t.Error("the deletion job outlived the purge")
	}
	// Pushed again, the workflow continues its version and instance ids.
	v, err := s.Definitions.CreateVersion(ctx, store.NewVersion{WorkflowID: "wf", Definition: []byte(`{}`), Activate: true, Now: now})
	if err != nil || v != 3 {
		t.Fatalf("push after purge: version %d, %v; want 3", v, err)
	}
	rec, _, err := s.Instances.CreateInstance(ctx, store.NewInstance{
		WorkflowID: "wf", Version: 3, UUID: "n", Status: "CREATED", State: state,
		FirstEvent: store.Event{ID: "0-start", Body: []byte(`{}`)}, Now: now,
	})
	if err != nil || rec.InstanceID != 5 {
		t.Fatalf("instance after purge: %d, %v; want 5", rec.InstanceID, err)
	}
}

func TestPermitUpdatesAreConditional(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	p, err := s.Gates.PutTagPermit(ctx, "db", 2, 1)
	if err != nil || p.MaxAllowed != 2 || p.V != 1 {
		t.Fatalf("put: %+v %v", p, err)
	}
	// Permit updates ride in run commits.
	if _, err := s.Definitions.CreateVersion(ctx, store.NewVersion{WorkflowID: "wf", Definition: []byte(`{}`), Activate: true, Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	rec, _, err := s.Instances.CreateInstance(ctx, store.NewInstance{
		WorkflowID: "wf", Version: 1, UUID: "u", Status: "IN_PROGRESS", State: state,
		FirstEvent: store.Event{ID: "0-start", Body: []byte(`{}`)}, Now: time.Now(),
	})
	if err != nil {
		t.Fatal(err)
	}
	commit := func(u store.PermitUpdate) error {
		rr, _, err := s.Runs.LoadRun(ctx, "wf", rec.InstanceID, 1)
		if err != nil {
			return err
		}
		return s.Runs.CommitRun(ctx, store.Commit{WorkflowID: "wf", InstanceID: rec.InstanceID, RunID: 1, ExpectV: rr.V,
			Status: "IN_PROGRESS", State: rr.State, Permits: []store.PermitUpdate{u}})
	}
	k1, k2 := store.PermitKey("wf", 1, 1, "a", 1), store.PermitKey("wf", 1, 1, "b", 1)
	// Each shape of update: hold only, wait only, release and unwait.
	steps := []store.PermitUpdate{
		{Tag: "db", ExpectV: 1, Hold: map[string]int64{k1: 100}},
		{Tag: "db", ExpectV: 2, Wait: map[string]int64{k2: 5}},
		{Tag: "db", ExpectV: 3, Release: []string{k1}, Unwait: []string{k2}, Hold: map[string]int64{k2: 200}},
		{Tag: "db", ExpectV: 4, Release: []string{k2}},
	}
	for i, u := range steps {
		if err := commit(u); err != nil {
			t.Fatalf("update %d: %v", i, err)
		}
	}
	if err := commit(store.PermitUpdate{Tag: "db", ExpectV: 4, Hold: map[string]int64{k1: 1}}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("stale update: %v, want ErrConflict", err)
	}
	got, err := s.Gates.GetTagPermit(ctx, "db")
	if err != nil || len(got.Holders) != 0 || len(got.Waiters) != 0 || got.V != 5 {
		t.Fatalf("after the updates: %+v %v", got, err)
	}
	if h, err := store.ParsePermitKey(k2); err != nil || h.StepID != "b" || h.InstanceID != 1 {
		t.Fatalf("parse %q: %+v %v", k2, h, err)
	}
}
