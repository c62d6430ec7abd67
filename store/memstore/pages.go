package memstore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/maestro-serverless/maestro/store"
)

// Run state pages, as package store splits a run's state (store/pages.go):
// past store.PageSteps steps, a commit keeps the state's step entries in
// page items the run item names, snapshots and logs of settled entries, and
// a reader merges them back. What a reader gets of such a state is not the
// bytes committed but their merge: the state's fields in key order, every
// value compacted, one entry per step id. The memstore splits states the
// same way, into page items of its own, so that what LoadRun returns, and
// what a purge counts, are the same.
//
// store.Pages cannot be built outside package store, so a RunRecord's
// Pages is always empty here and a commit's Pages is ignored: the
// memstore splits a commit over the pages its run item names, which are
// the ones a caller read at the version the commit is conditioned on.

// stateDoc is a run state split into its fields, "steps" decoded.
type stateDoc struct {
	fields map[string]json.RawMessage
	steps  []json.RawMessage
}

func parseState(state []byte) (*stateDoc, error) {
	d := &stateDoc{}
	if err := json.Unmarshal(state, &d.fields); err != nil {
		return nil, fmt.Errorf("store: run state: %w", err)
	}
	if raw, ok := d.fields["steps"]; ok {
		if err := json.Unmarshal(raw, &d.steps); err != nil {
			return nil, fmt.Errorf("store: run state steps: %w", err)
		}
	}
	return d, nil
}

// encode returns the state with steps as its "steps" (left out when empty).
func (d *stateDoc) encode(steps []json.RawMessage) ([]byte, error) {
	if len(steps) == 0 {
		delete(d.fields, "steps")
	} else {
		raw, err := json.Marshal(steps)
		if err != nil {
			return nil, fmt.Errorf("store: run state steps: %w", err)
		}
		d.fields["steps"] = raw
	}
	b, err := json.Marshal(d.fields)
	if err != nil {
		return nil, fmt.Errorf("store: run state: %w", err)
	}
	return b, nil
}

func stepID(entry json.RawMessage) (string, error) {
	var e struct {
		StepID string `json:"step_id"`
	}
	if err := json.Unmarshal(entry, &e); err != nil {
		return "", fmt.Errorf("store: step entry: %w", err)
	}
	return e.StepID, nil
}

// applyEntries applies entries to steps: each replaces its step's entry,
// or is appended.
func applyEntries(steps []json.RawMessage, at map[string]int, entries []json.RawMessage) ([]json.RawMessage, error) {
	for _, e := range entries {
		id, err := stepID(e)
		if err != nil {
			return nil, err
		}
		if i, ok := at[id]; ok {
			steps[i] = e
		} else {
			at[id] = len(steps)
			steps = append(steps, e)
		}
	}
	return steps, nil
}

// pageSet is a run's pages: their keys and entries, in order.
type pageSet struct {
	keys []string
	base [][]json.RawMessage
}

func (p pageSet) count() int { return len(p.keys) }

func (p pageSet) steps() ([]json.RawMessage, map[string]int, error) {
	var steps []json.RawMessage
	at := map[string]int{}
	for _, page := range p.base {
		var err error
		if steps, err = applyEntries(steps, at, page); err != nil {
			return nil, nil, err
		}
	}
	return steps, at, nil
}

// mergePages returns the whole state of a run item holding state with
// pages p.
func mergePages(state []byte, p pageSet) ([]byte, error) {
	if p.count() == 0 {
		return state, nil
	}
	d, err := parseState(state)
	if err != nil {
		return nil, err
	}
	steps, at, err := p.steps()
	if err != nil {
		return nil, err
	}
	if steps, err = applyEntries(steps, at, d.steps); err != nil {
		return nil, err
	}
	return d.encode(steps)
}

// pageWrite is a page a commit writes.
type pageWrite struct {
	sk    string
	steps []json.RawMessage
}

// splitState splits a commit's whole state over the run's pages p, as
// package store's splitState: the state the run item holds, the pages
// written, and the pages the run has after. newKey names a new page.
func splitState(state []byte, p pageSet, unsettled map[string]bool, newKey func(page int) string) ([]byte, []pageWrite, pageSet, error) {
	d, err := parseState(state)
	if err != nil {
		return nil, nil, pageSet{}, err
	}
	if p.count() == 0 && len(d.steps) <= store.PageSteps {
		return state, nil, pageSet{}, nil
	}
	base, at, err := p.steps()
	if err != nil {
		return nil, nil, pageSet{}, err
	}
	snapshot := p.count() == 0 || len(base) != len(d.steps)
	var overlay, settled []json.RawMessage
	for i, e := range d.steps {
		if snapshot {
			break
		}
		id, err := stepID(e)
		if err != nil {
			return nil, nil, pageSet{}, err
		}
		j, ok := at[id]
		if !ok || j != i {
			snapshot = true
			break
		}
		if bytes.Equal(e, base[j]) {
			continue
		}
		overlay = append(overlay, e)
		if !unsettled[id] {
			settled = append(settled, e)
		}
	}
	next := pageSet{keys: slices.Clone(p.keys), base: slices.Clone(p.base)}
	var writes []pageWrite
	if !snapshot && len(settled) > store.MaxOverlaySteps {
		if next.count() >= store.MaxPages {
			snapshot = true
		} else {
			sk := newKey(next.count())
			writes = append(writes, pageWrite{sk: sk, steps: settled})
			next.keys, next.base = append(next.keys, sk), append(next.base, settled)
			overlay = slices.DeleteFunc(overlay, func(e json.RawMessage) bool {
				id, _ := stepID(e)
				return !unsettled[id]
			})
		}
	}
	if snapshot {
		next, overlay = pageSet{}, nil
		for k := 0; k*store.PageSteps < len(d.steps); k++ {
			sk := newKey(k)
			entries := d.steps[k*store.PageSteps : min((k+1)*store.PageSteps, len(d.steps))]
			writes = append(writes, pageWrite{sk: sk, steps: entries})
			next.keys, next.base = append(next.keys, sk), append(next.base, entries)
		}
	}
	out, err := d.encode(overlay)
	if err != nil {
		return nil, nil, pageSet{}, err
	}
	return out, writes, next, nil
}

// replaced returns the keys of p that next no longer names.
func (p pageSet) replaced(next pageSet) []string {
	var out []string
	for _, k := range p.keys {
		if !slices.Contains(next.keys, k) {
			out = append(out, k)
		}
	}
	return out
}

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
