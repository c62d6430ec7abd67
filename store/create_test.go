package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/store"
)

// TestCreatingCommit: a commit with Create writes a run that did not exist
// (version 1), its instance summary with the decision's update applied and
// its start request's record, or nothing: a second creation with the same
// request id gets ErrRequestTaken, one of the same instance ErrConflict,
// and the request id then names the first instance.
func TestCreatingCommit(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	now := time.UnixMilli(1_700_000_000_000)
	pushVersion(t, s, "wf", now)
	id, prior, err := s.Instances.ReserveInstance(ctx, "wf", "req-1")
	if err != nil || prior != nil || id != 1 {
		t.Fatalf("reserve: id %d, prior %v, %v", id, prior, err)
	}
	create := func(inst int64, request string) error {
		return s.Runs.CommitRun(ctx, store.Commit{
			WorkflowID: "wf", InstanceID: inst, RunID: 1, Status: "IN_PROGRESS", State: []byte(`{"status":"IN_PROGRESS"}`),
			Instance: &store.InstanceUpdate{RunID: 1, Status: "IN_PROGRESS", StartTime: now.UnixMilli(), ModifyTime: now.UnixMilli()},
			Create: &store.InstanceRecord{WorkflowID: "wf", InstanceID: inst, Version: 1, RunID: 1, UUID: "u", Status: "CREATED",
				RequestID: request, CreateTime: now.UnixMilli(), ModifyTime: now.UnixMilli()},
			Timeline: []store.TimelineItem{{Seq: 1, Body: []byte(`{"started":true}`)}},
		})
	}
	if err := create(id, "req-1"); err != nil {
		t.Fatal(err)
	}
	rec, events, err := s.Runs.LoadRun(ctx, "wf", id, 1)
	if err != nil || rec.V != 1 || rec.Status != "IN_PROGRESS" || len(events) != 0 || len(rec.Timeline) != 1 {
		t.Fatalf("run: %+v, events %v, %v", rec, events, err)
	}
	inst, err := s.Instances.GetInstance(ctx, "wf", id)
	if err != nil || inst.Status != "IN_PROGRESS" || inst.StartTime != now.UnixMilli() || inst.UUID != "u" || inst.RequestID != "req-1" {
		t.Fatalf("instance: %+v, %v", inst, err)
	}
	if _, prior, err := s.Instances.ReserveInstance(ctx, "wf", "req-1"); err != nil || prior == nil || prior.InstanceID != id {
		t.Fatalf("the request id names %+v, %v; want instance %d", prior, err, id)
	}
	if err := create(id+1, "req-1"); !errors.Is(err, store.ErrRequestTaken) {
		t.Errorf("same request id: %v, want ErrRequestTaken", err)
	}
	if _, err := s.Instances.GetInstance(ctx, "wf", id+1); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the losing creation wrote its instance: %v", err)
	}
	if err := create(id, ""); !errors.Is(err, store.ErrConflict) {
		t.Errorf("same instance: %v, want ErrConflict", err)
	}
}

// TestInstanceTimelineInRunItem: a run's first instance timeline entries
// are kept in its run item, carried on by every commit; past eight, the
// entries are items of their own. Readers get them all, once each.
func TestInstanceTimelineInRunItem(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	rec, _ := createRun(t, s, "wf")
	entry := func(seq int64) store.TimelineItem {
		return store.TimelineItem{Seq: seq, Body: []byte(`{"t":1700000000000,"s":"IN_PROGRESS","m":"entry ` + string(rune('a'+seq)) + `"}`)}
	}
	// Commits adding 3, none, 4, 3 entries: 8 held, the last 2 items.
	var seq int64
	consumed := []string{"0-start"}
	for _, n := range []int{3, 0, 4, 3} {
		run, _, err := s.Runs.LoadRun(ctx, "wf", rec.InstanceID, 1)
		if err != nil {
			t.Fatal(err)
		}
		var added []store.TimelineItem
		for range n {
			seq++
			added = append(added, entry(seq))
		}
		if err := s.Runs.CommitRun(ctx, store.Commit{WorkflowID: "wf", InstanceID: rec.InstanceID, RunID: 1, ExpectV: run.V,
			Status: "IN_PROGRESS", State: run.State, Timeline: added, PriorTimeline: run.Timeline, Consumed: consumed}); err != nil {
			t.Fatal(err)
		}
		consumed = nil
	}
	run, _, err := s.Runs.LoadRun(ctx, "wf", rec.InstanceID, 1)
	if err != nil {
		t.Fatal(err)
	}
	rest, err := s.Runs.ListTimeline(ctx, "wf", rec.InstanceID, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Timeline) != 8 || len(rest) != 2 {
		t.Fatalf("%d entries in the run item, %d items; want 8 and 2", len(run.Timeline), len(rest))
	}
	for i, e := range append(run.Timeline, rest...) {
		if want := entry(int64(i + 1)); e.Seq != want.Seq || string(e.Body) != string(want.Body) {
			t.Errorf("entry %d: %d %s, want %d %s", i, e.Seq, e.Body, want.Seq, want.Body)
		}
	}
	if _, quiet, err := s.Runs.LoadQuietRun(ctx, "wf", rec.InstanceID, 1); err != nil || !quiet {
		t.Errorf("quiet read: %v %v", quiet, err)
	}
}
