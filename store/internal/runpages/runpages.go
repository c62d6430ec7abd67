// Package runpages splits a run's state into pages and merges it back:
// the layout package store's DynamoDB store writes (store/pages.go tells
// why and how) and store/memstore, its in-memory stand-in, writes alike.
// It holds the logic alone; where pages are stored is the caller's, and
// the state's JSON shape is package engine's: the state is split into its
// step entries and its other fields, and an entry's step id read, by
// engine.SplitState, engine.JoinState and engine.StepEntryID, entries and
// fields kept as their JSON.
package runpages

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/maestro-serverless/maestro/engine"
)

// The limits of a run's paging; package store exports them (PageSteps,
// MaxOverlaySteps, MaxPages) and documents them.
const (
	// PageSteps is how many step entries one snapshot page holds, and the
	// most a run's state holds inline before it is paged.
	PageSteps = 64
	// MaxOverlaySteps bounds the settled step entries a paged run's item
	// holds.
	MaxOverlaySteps = 32
	// MaxPages bounds a run's pages: past it, a commit writes a snapshot.
	MaxPages = 32
)

// Set is a run's pages, as read and as a commit of the run must know
// them. The zero value is a run kept whole in its item.
type Set struct {
	// Keys are the page items' sort keys, one per page, in order.
	Keys []string
	// Base holds each page's entries as stored.
	Base [][]json.RawMessage
}

// Count returns how many pages the run's state has; 0 when it is kept
// whole in its item.
func (p Set) Count() int { return len(p.Keys) }

// stateDoc is a run state split into its other fields and its step
// entries (engine.SplitState).
type stateDoc struct {
	fields map[string]json.RawMessage
	steps  []json.RawMessage
}

func parseState(state []byte) (*stateDoc, error) {
	fields, steps, err := engine.SplitState(state)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	return &stateDoc{fields: fields, steps: steps}, nil
}

// encode returns the state with steps as its step entries (left out when
// empty): engine.JoinState.
func (d *stateDoc) encode(steps []json.RawMessage) ([]byte, error) {
	b, err := engine.JoinState(d.fields, steps)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	return b, nil
}

// stepID returns the step id of a step entry (engine.StepEntryID).
func stepID(entry json.RawMessage) (string, error) {
	id, err := engine.StepEntryID(entry)
	if err != nil {
		return "", fmt.Errorf("store: %w", err)
	}
	return id, nil
}

// applyEntries applies entries to steps: each replaces the entry of its
// step, or is appended. at indexes steps by step id.
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

// pagedSteps returns the entries p's pages make, in order, indexed by id.
func pagedSteps(p Set) ([]json.RawMessage, map[string]int, error) {
	var steps []json.RawMessage
	at := map[string]int{}
	for _, page := range p.Base {
		var err error
		if steps, err = applyEntries(steps, at, page); err != nil {
			return nil, nil, err
		}
	}
	return steps, at, nil
}

// Merge returns the whole state of a run whose run item holds state
// and whose pages are p.
func Merge(state []byte, p Set) ([]byte, error) {
	if p.Count() == 0 {
		return state, nil
	}
	d, err := parseState(state)
	if err != nil {
		return nil, err
	}
	steps, at, err := pagedSteps(p)
	if err != nil {
		return nil, err
	}
	if steps, err = applyEntries(steps, at, d.steps); err != nil {
		return nil, err
	}
	return d.encode(steps)
}

// Write is a page a commit writes: its sort key and its entries.
type Write struct {
	SK    string
	Steps []json.RawMessage
}

// Split splits a run's whole state for a commit of a run whose stored
// pages are p (unsettled names the steps whose entries may still change):
// the state its run item holds, the pages it writes, and the pages the run
// has once it commits. newKey returns the sort key of a new page of index
// page; every page written gets a key of its own.
func Split(state []byte, p Set, unsettled map[string]bool, newKey func(page int) (string, error)) ([]byte, []Write, Set, error) {
	d, err := parseState(state)
	if err != nil {
		return nil, nil, Set{}, err
	}
	if p.Count() == 0 && len(d.steps) <= PageSteps {
		return state, nil, Set{}, nil
	}
	base, at, err := pagedSteps(p)
	if err != nil {
		return nil, nil, Set{}, err
	}
	// The overlay: the entries that differ from the pages'. A state whose
	// steps are not the pages' (another definition's) is a new snapshot.
	snapshot := p.Count() == 0 || len(base) != len(d.steps)
	var overlay, settled []json.RawMessage
	for i, e := range d.steps {
		if snapshot {
			break
		}
		id, err := stepID(e)
		if err != nil {
			return nil, nil, Set{}, err
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
	next := Set{Keys: slices.Clone(p.Keys), Base: slices.Clone(p.Base)}
	var writes []Write
	if !snapshot && len(settled) > MaxOverlaySteps {
		if next.Count() >= MaxPages {
			snapshot = true
		} else {
			// The settled entries go to a log page; the others stay.
			sk, err := newKey(next.Count())
			if err != nil {
				return nil, nil, Set{}, err
			}
			writes = append(writes, Write{SK: sk, Steps: settled})
			next.Keys, next.Base = append(next.Keys, sk), append(next.Base, settled)
			overlay = slices.DeleteFunc(overlay, func(e json.RawMessage) bool {
				id, _ := stepID(e)
				return !unsettled[id]
			})
		}
	}
	if snapshot {
		next, overlay = Set{}, nil
		for k := 0; k*PageSteps < len(d.steps); k++ {
			sk, err := newKey(k)
			if err != nil {
				return nil, nil, Set{}, err
			}
			entries := d.steps[k*PageSteps : min((k+1)*PageSteps, len(d.steps))]
			writes = append(writes, Write{SK: sk, Steps: entries})
			next.Keys, next.Base = append(next.Keys, sk), append(next.Base, entries)
		}
	}
	out, err := d.encode(overlay)
	if err != nil {
		return nil, nil, Set{}, err
	}
	return out, writes, next, nil
}

// Replaced returns the keys of p that next no longer names.
func (p Set) Replaced(next Set) []string {
	var out []string
	for _, k := range p.Keys {
		if !slices.Contains(next.Keys, k) {
			out = append(out, k)
		}
	}
	return out
}
