package orchestrator

import (
	"net/http"
	"testing"
)

// TestDiffVersions: the diff of two pushed versions names the step and
// edge the second added; selectors resolve as GetWorkflowVersion's do; a
// version compared with itself is empty; a missing workflow or version is
// a 404 naming it.
func TestDiffVersions(t *testing.T) {
	r := newRoleRig(t)
	r.push(rigChain("diffs", 2))
	r.push(rigChain("diffs", 3))
	d, err := r.o.Definitions.DiffVersions(r.ctx, "diffs", "1", "latest")
	if err != nil {
		t.Fatal(err)
	}
	if d.From != 1 || d.To != 2 || len(d.Steps.Added) != 1 || d.Steps.Added[0].ID != "t2" || d.Steps.Added[0].Path != "workflow.steps[2].step" ||
		len(d.Edges.Added) != 1 || d.Edges.Added[0].From != "t1" || d.Edges.Added[0].To != "t2" || len(d.Steps.Removed) != 0 {
		t.Fatalf("diff 1..latest: %+v", d)
	}
	back, err := r.o.Definitions.DiffVersions(r.ctx, "diffs", "active", "1")
	if err != nil || len(back.Steps.Removed) != 1 || back.Steps.Removed[0].ID != "t2" || len(back.Edges.Removed) != 1 {
		t.Fatalf("diff active..1: %v %+v", err, back)
	}
	same, err := r.o.Definitions.DiffVersions(r.ctx, "diffs", "2", "default")
	if err != nil || !same.Empty() {
		t.Fatalf("diff 2..default: %v %+v", err, same)
	}
	_, err = r.o.Definitions.DiffVersions(r.ctx, "diffs", "1", "3")
	wantRefusal(t, err, http.StatusNotFound, "diffs has no version 3")
	_, err = r.o.Definitions.DiffVersions(r.ctx, "nope", "1", "2")
	wantRefusal(t, err, http.StatusNotFound, "nope not found")
}
