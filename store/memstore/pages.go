package memstore

import (
	"encoding/json"
	"fmt"
)

// Run state pages, as package store splits a run's state (store/pages.go):
// past store.PageSteps steps, a commit keeps the state's step entries in
// page items the run item names, snapshots and logs of settled entries, and
// a reader merges them back. What a reader gets of such a state is not the
// bytes committed but their merge: the state's fields in key order, every
// value compacted, one entry per step id. The memstore splits states the
// same way, into page items of its own, so that what LoadRun returns, and
// what a purge counts, are the same: it splits and merges with package
// store's own code (store/internal/runpages).
//
// store.Pages cannot be built outside package store, so a RunRecord's
// Pages is always empty here and a commit's Pages is ignored: the
// memstore splits a commit over the pages its run item names, which are
// the ones a caller read at the version the commit is conditioned on.

// pageEntries returns the entries a page item holds as a reader decodes
// them (compacted, as their JSON is stored).
func pageEntries(steps []json.RawMessage) ([]json.RawMessage, error) {
	raw, err := json.Marshal(steps)
	if err != nil {
		return nil, fmt.Errorf("store: run state page: %w", err)
	}
	var out []json.RawMessage
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("store: run state page: %w", err)
	}
	return out, nil
}
