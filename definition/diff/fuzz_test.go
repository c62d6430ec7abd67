package diff

import (
	"encoding/json"
	"testing"
)

// FuzzCompare: any two documents either fail to decode or compare without
// panicking into a diff that encodes, lists at most its limit's entries,
// and compares a document with itself as empty.
func FuzzCompare(f *testing.F) {
	f.Add([]byte(base), []byte(base))
	f.Add([]byte(base), []byte(`{"workflow": {"id": "wf", "steps": [{"while": {"id": "wait", "steps": [{"step": {"id": "extract"}}]}}]}}`))
	f.Add([]byte(`{"workflow": {"steps": [{"step": {"id": "a", "transition": {"successors": {"a": 1}}}}, {}, 3]}}`), []byte(`{"workflow": {"params": [], "steps": {}}}`))
	f.Add(chain(30, "a"), chain(20, "b"))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		const limit = 50
		d, err := Compare("wf", Version{1, a}, Version{2, b}, Options{MaxChanges: limit})
		if err != nil {
			return
		}
		if _, err := json.Marshal(d); err != nil {
			t.Fatal(err)
		}
		n := len(d.Steps.Added) + len(d.Steps.Removed) + len(d.Edges.Added) + len(d.Edges.Removed) + len(d.Edges.Changed) +
			len(d.Params.Added) + len(d.Params.Removed) + len(d.Workflow) + len(d.Properties)
		for _, s := range d.Steps.Changed {
			n += max(len(s.Changes), 1)
		}
		for _, p := range d.Params.Changed {
			n += len(p.Changes)
		}
		if n > limit {
			t.Fatalf("%d entries, limit %d", n, limit)
		}
		same, err := Compare("wf", Version{1, a}, Version{1, a}, Options{})
		if err != nil || !same.Empty() {
			t.Fatalf("a document against itself: %v %+v", err, same)
		}
	})
}
