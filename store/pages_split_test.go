package store

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/store/internal/runpages"
)

// runState returns a run state of n steps, entry i with status statuses[i]
// (or NOT_CREATED).
func runState(t testing.TB, n int, statuses map[int]string) []byte {
	t.Helper()
	steps := make([]engine.StepState, n)
	for i := range steps {
		st := statuses[i]
		if st == "" {
			st = "NOT_CREATED"
		}
		steps[i] = engine.StepState{StepID: fmt.Sprintf("s%d", i), Status: model.StepStatus(st), CreateTime: int64(i)}
	}
	b, err := json.Marshal(engine.Instance{WorkflowID: "wf", Seq: int64(len(statuses)), Steps: steps})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// normal re-encodes JSON with sorted keys, to compare states by content.
func normal(t testing.TB, b []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

// unsettledOf names the steps of a runState that are not settled.
func unsettledOf(n int, statuses map[int]string) map[string]bool {
	out := map[string]bool{}
	for i := range n {
		if st := statuses[i]; st == "" || st == "RUNNING" {
			out[fmt.Sprintf("s%d", i)] = true
		}
	}
	return out
}

// commitSplit splits state as a commit would, then returns what a reader
// of the stored item and pages reads, the item's settled step entries and
// the pages written.
func commitSplit(t testing.TB, state []byte, p Pages, unsettled map[string]bool) (read []byte, next Pages, overlay, written int) {
	t.Helper()
	item, writes, next, err := splitState(state, 1, p, unsettled)
	if err != nil {
		t.Fatal(err)
	}
	// What the store holds: the item and the pages it names.
	stored := runpages.Set{Keys: next.set.Keys, Base: make([][]json.RawMessage, len(next.set.Keys))}
	for i, k := range next.set.Keys {
		stored.Base[i] = next.set.Base[i]
		for _, w := range writes {
			if w.SK == k {
				raw, _ := json.Marshal(w.Steps)
				if err := json.Unmarshal(raw, &stored.Base[i]); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	read, err = runpages.Merge(item, stored)
	if err != nil {
		t.Fatal(err)
	}
	var d engine.Instance
	if err := json.Unmarshal(item, &d); err != nil {
		t.Fatal(err)
	}
	for _, e := range d.Steps {
		if !unsettled[e.StepID] {
			overlay++
		}
	}
	return read, Pages{set: stored}, overlay, len(writes)
}

func TestSplitStateKeepsSmallRunsWhole(t *testing.T) {
	state := runState(t, PageSteps, map[int]string{3: "RUNNING"})
	item, writes, next, err := splitState(state, 1, Pages{}, nil)
	if err != nil || string(item) != string(state) || len(writes) != 0 || next.Count() != 0 {
		t.Fatalf("a run of %d steps: item changed %v, %d pages written, %d pages, %v", PageSteps, string(item) != string(state), len(writes), next.Count(), err)
	}
}

func TestSplitStatePagesABigRunAndBoundsItsOverlay(t *testing.T) {
	const n = 300
	statuses := map[int]string{}
	state := runState(t, n, statuses)
	read, p, overlay, written := commitSplit(t, state, Pages{}, unsettledOf(n, statuses))
	if normal(t, read) != normal(t, state) || overlay != 0 || written != 5 || p.Count() != 5 {
		t.Fatalf("first commit: same %v, overlay %d, %d pages written of %d", normal(t, read) == normal(t, state), overlay, written, p.Count())
	}
	// Decisions that each start ten steps and settle the ten before: no
	// page written until more than MaxOverlaySteps settled entries wait,
	// and the read state is always the whole.
	logs := 0
	for i := 0; i <= n; i += 10 {
		for j := i; j < min(i+10, n); j++ {
			statuses[j] = "RUNNING"
		}
		for j := max(i-10, 0); j < i; j++ {
			statuses[j] = "SUCCEEDED"
		}
		state = runState(t, n, statuses)
		var w int
		read, p, overlay, w = commitSplit(t, state, p, unsettledOf(n, statuses))
		if normal(t, read) != normal(t, state) {
			t.Fatalf("after step %d: read state differs", i)
		}
		if overlay > MaxOverlaySteps {
			t.Fatalf("after step %d: %d settled entries in the run item, more than %d", i, overlay, MaxOverlaySteps)
		}
		logs += w
	}
	// Each settled entry is written once more, in a page of more than
	// MaxOverlaySteps of them.
	if logs == 0 || logs > n/(MaxOverlaySteps+1) || p.Count() != 5+logs {
		t.Fatalf("%d settled steps: %d log pages written, %d pages", n, logs, p.Count())
	}
	// Past MaxPages pages, a snapshot.
	for p.Count() < MaxPages {
		p.set.Keys, p.set.Base = append(p.set.Keys, "x"), append(p.set.Base, nil)
	}
	for j := range n {
		statuses[j] = "FAILED"
	}
	state = runState(t, n, statuses)
	read, p, overlay, written = commitSplit(t, state, p, unsettledOf(n, statuses))
	if normal(t, read) != normal(t, state) || overlay != 0 || written != 5 || p.Count() != 5 {
		t.Fatalf("past MaxPages: same %v, overlay %d, %d written, %d pages", normal(t, read) == normal(t, state), overlay, written, p.Count())
	}
}

func TestSplitStateSnapshotsStepsThatMoved(t *testing.T) {
	state := runState(t, 200, nil)
	_, p, _, _ := commitSplit(t, state, Pages{}, nil)
	// The same steps in another order (a state that is not the pages'
	// run): a new snapshot.
	var doc engine.Instance
	if err := json.Unmarshal(state, &doc); err != nil {
		t.Fatal(err)
	}
	doc.Steps[0], doc.Steps[1] = doc.Steps[1], doc.Steps[0]
	moved, _ := json.Marshal(doc)
	read, _, overlay, written := commitSplit(t, moved, p, nil)
	if normal(t, read) != normal(t, moved) || written != 4 || overlay != 0 {
		t.Fatalf("moved steps: same %v, %d written, overlay %d", normal(t, read) == normal(t, moved), written, overlay)
	}
	// Fewer steps than the pages': the state read back has exactly its own.
	fewer := runState(t, 100, nil)
	read, p2, _, _ := commitSplit(t, fewer, p, nil)
	if normal(t, read) != normal(t, fewer) || p2.Count() != 2 {
		t.Fatalf("fewer steps: same %v, %d pages", normal(t, read) == normal(t, fewer), p2.Count())
	}
}

func FuzzSplitStateReadsBackWhatWasCommitted(f *testing.F) {
	f.Add(uint64(1), uint16(300), uint8(10))
	f.Add(uint64(7), uint16(65), uint8(64))
	f.Fuzz(func(t *testing.T, seed uint64, steps uint16, perCommit uint8) {
		n := int(steps%400) + 1
		r := rand.New(rand.NewPCG(seed, seed))
		statuses := map[int]string{}
		var p Pages
		for range 40 {
			for range int(perCommit%80) + 1 {
				statuses[r.IntN(n)] = []string{"RUNNING", "SUCCEEDED", "FAILED"}[r.IntN(3)]
			}
			state := runState(t, n, statuses)
			read, next, overlay, _ := commitSplit(t, state, p, unsettledOf(n, statuses))
			if normal(t, read) != normal(t, state) {
				t.Fatalf("read state differs from the committed one")
			}
			if n > PageSteps && overlay > MaxOverlaySteps {
				t.Fatalf("%d settled entries in the run item", overlay)
			}
			if next.Count() > MaxPages {
				t.Fatalf("%d pages", next.Count())
			}
			p = next
		}
	})
}
