package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/store"
)

// TestPermitExtraInfo: a permit's extra info is stored with its limit,
// kept by the run commits that take and return its permits and by a put
// of the limit alone, and removed by a put with none.
func TestPermitExtraInfo(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	p, err := s.Gates.PutTagPermitInfo(ctx, "db", 2, 1, []byte(`{"source":"test"}`))
	if err != nil || p.MaxAllowed != 2 || string(p.ExtraInfo) != `{"source":"test"}` {
		t.Fatalf("put: %+v %v", p, err)
	}
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
	rr, _, err := s.Runs.LoadRun(ctx, "wf", rec.InstanceID, 1)
	if err != nil {
		t.Fatal(err)
	}
	k := store.PermitKey("wf", 1, 1, "a", 1)
	if err := s.Runs.CommitRun(ctx, store.Commit{WorkflowID: "wf", InstanceID: rec.InstanceID, RunID: 1, ExpectV: rr.V,
		Status: "IN_PROGRESS", State: rr.State, Permits: []store.PermitUpdate{{Tag: "db", ExpectV: p.V, Hold: map[string]int64{k: 100}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Gates.PutTagPermit(ctx, "db", 3, 2); err != nil {
		t.Fatal(err)
	}
	got, err := s.Gates.GetTagPermit(ctx, "db")
	if err != nil || got.MaxAllowed != 3 || len(got.Holders) != 1 || string(got.ExtraInfo) != `{"source":"test"}` {
		t.Fatalf("after a commit and a put of the limit: %+v %v", got, err)
	}
	if _, err := s.Gates.PutTagPermitInfo(ctx, "db", 3, 3, nil); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Gates.GetTagPermit(ctx, "db"); err != nil || len(got.ExtraInfo) != 0 || len(got.Holders) != 1 {
		t.Fatalf("after a put without extra info: %+v %v", got, err)
	}
}
