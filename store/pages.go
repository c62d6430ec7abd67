package store

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// A run's state is one JSON object whose "steps" array holds one entry per
// step of the definition (an object with "step_id"), in definition order.
// Every decision rewrites the run item whole, and DynamoDB bills a write
// by the item's size: kept inline, the entries of the steps a decision did
// not touch would make every decision of a 300-step run cost about three
// times what it costs in a 10-step one.
//
// So past PageSteps steps the entries live in pages, items of their own
// that the run item names in order (attribute "pg"). The first pages are a
// snapshot of every entry, PageSteps to a page, in definition order; the
// later ones are logs: the entries of steps that settled (Commit.Unsettled
// names the others), written together once more than MaxOverlaySteps of
// them have changed since the pages were written. Reading a run applies
// its pages in order, an entry replacing the earlier one of its step,
// then the run item's own entries (the overlay: every other entry that
// changed). A decision's write is then the run's header, the entries of
// its steps in flight and at most MaxOverlaySteps settled ones, and its
// outbox, whatever the definition's size; a settled step's entry is
// written once more, in a log page shared with dozens of others. Past
// MaxPages pages, a commit writes a new snapshot and deletes the old pages.
//
// Pages are never updated in place: a page is put under a fresh sort key
// before the run item that names it is committed. A commit that fails
// deletes the pages it put; one whose writer dies between the two leaves
// an unnamed page behind, deleted with the instance. A reader who read a
// run item whose pages a snapshot has since deleted reads again.
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

const attrPages = "pg"

// Pages is how a run's state is split between its run item and its pages,
// as read (RunRecord.Pages) and as a commit of it must know (Commit.Pages).
// The zero value is a run kept whole in its item.
type Pages struct {
	// keys are the page items' sort keys, one per page, in order.
	keys []string
	// base holds each page's entries as stored.
	base [][]json.RawMessage
}

// Count returns how many pages the run's state has; 0 when it is kept
// whole in its item.
func (p Pages) Count() int { return len(p.keys) }

// pageSK is the sort key of a page of run run's state: its index and a
// random tag that makes every written page a new item.
func pageSK(run int64, page int) (string, error) {
	var tag [6]byte
	if _, err := rand.Read(tag[:]); err != nil {
		return "", fmt.Errorf("store: page key: %w", err)
	}
	return fmt.Sprintf("%s%04d#%s", pagePrefix(run), page, hex.EncodeToString(tag[:])), nil
}

// pagePrefix begins the sort keys of run run's pages: they follow its run
// item's, outside the range of its events a read of the item and its
// inbox covers (LoadQuietRun), and before the next run's.
func pagePrefix(run int64) string { return runSK(run) + "#PG#" }

// stateDoc is a run state split into its fields, "steps" decoded into its
// entries.
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

// stepID returns the "step_id" of a step entry.
func stepID(entry json.RawMessage) (string, error) {
	var e struct {
		StepID string `json:"step_id"`
	}
	if err := json.Unmarshal(entry, &e); err != nil {
		return "", fmt.Errorf("store: step entry: %w", err)
	}
	return e.StepID, nil
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
func pagedSteps(p Pages) ([]json.RawMessage, map[string]int, error) {
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

// mergePages returns the whole state of a run whose run item holds state
// and whose pages are p.
func mergePages(state []byte, p Pages) ([]byte, error) {
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

// pageWrite is a page a commit writes.
type pageWrite struct {
	sk    string
	steps []json.RawMessage
}

// splitState splits a run's whole state for a commit of run run whose
// stored pages are p (unsettled names the steps whose entries may still
// change): the state its run item holds, the pages it writes, and the
// pages the run has once it commits.
func splitState(state []byte, run int64, p Pages, unsettled map[string]bool) ([]byte, []pageWrite, Pages, error) {
	d, err := parseState(state)
	if err != nil {
		return nil, nil, Pages{}, err
	}
	if p.Count() == 0 && len(d.steps) <= PageSteps {
		return state, nil, Pages{}, nil
	}
	base, at, err := pagedSteps(p)
	if err != nil {
		return nil, nil, Pages{}, err
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
			return nil, nil, Pages{}, err
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
	next := Pages{keys: slices.Clone(p.keys), base: slices.Clone(p.base)}
	var writes []pageWrite
	if !snapshot && len(settled) > MaxOverlaySteps {
		if next.Count() >= MaxPages {
			snapshot = true
		} else {
			// The settled entries go to a log page; the others stay.
			sk, err := pageSK(run, next.Count())
			if err != nil {
				return nil, nil, Pages{}, err
			}
			writes = append(writes, pageWrite{sk: sk, steps: settled})
			next.keys, next.base = append(next.keys, sk), append(next.base, settled)
			overlay = slices.DeleteFunc(overlay, func(e json.RawMessage) bool {
				id, _ := stepID(e)
				return !unsettled[id]
			})
		}
	}
	if snapshot {
		next, overlay = Pages{}, nil
		for k := 0; k*PageSteps < len(d.steps); k++ {
			sk, err := pageSK(run, k)
			if err != nil {
				return nil, nil, Pages{}, err
			}
			entries := d.steps[k*PageSteps : min((k+1)*PageSteps, len(d.steps))]
			writes = append(writes, pageWrite{sk: sk, steps: entries})
			next.keys, next.base = append(next.keys, sk), append(next.base, entries)
		}
	}
	out, err := d.encode(overlay)
	if err != nil {
		return nil, nil, Pages{}, err
	}
	return out, writes, next, nil
}

// replaced returns the keys of p that next no longer names.
func (p Pages) replaced(next Pages) []string {
	var out []string
	for _, k := range p.keys {
		if !slices.Contains(next.keys, k) {
			out = append(out, k)
		}
	}
	return out
}

// pageItem is the item of a page of run run of instance inst of wf.
func (s *base) pageItem(wf string, inst int64, w pageWrite) (map[string]types.AttributeValue, error) {
	raw, err := json.Marshal(w.steps)
	if err != nil {
		return nil, fmt.Errorf("store: run state page: %w", err)
	}
	body, err := s.encodeBody(raw)
	if err != nil {
		return nil, err
	}
	item := merge(key(runPK(wf, inst), w.sk), body)
	if n := ItemSize(item); n > MaxItemBytes {
		return nil, &ItemTooLargeError{Item: "run state page", Bytes: n}
	}
	return item, nil
}

// putPages writes pages outside any transaction (BatchWriteItem, 25 at a
// time): they are new items no reader knows of until a run item names
// them.
func (s *base) putPages(ctx context.Context, wf string, inst int64, writes []pageWrite) error {
	reqs := make([]types.WriteRequest, 0, len(writes))
	for _, w := range writes {
		item, err := s.pageItem(wf, inst, w)
		if err != nil {
			return err
		}
		reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: item}})
	}
	if err := s.batchWrite(ctx, reqs); err != nil {
		return fmt.Errorf("store: put run state pages: %w", err)
	}
	return nil
}

// deletePages deletes page items by sort key.
func (s *base) deletePages(ctx context.Context, wf string, inst int64, sks []string) error {
	if len(sks) == 0 {
		return nil
	}
	keys := make([]map[string]types.AttributeValue, len(sks))
	for i, sk := range sks {
		keys[i] = key(runPK(wf, inst), sk)
	}
	return s.batchDelete(ctx, keys)
}

// pagesAttr is the run item attribute naming its pages.
func pagesAttr(p Pages) types.AttributeValue {
	keys := make([]types.AttributeValue, len(p.keys))
	for i, k := range p.keys {
		keys[i] = str(k)
	}
	return &types.AttributeValueMemberL{Value: keys}
}

// pageKeysOf returns the page keys a run item names.
func pageKeysOf(item map[string]types.AttributeValue) []string {
	l, ok := item[attrPages].(*types.AttributeValueMemberL)
	if !ok {
		return nil
	}
	out := make([]string, 0, len(l.Value))
	for _, v := range l.Value {
		if s, ok := v.(*types.AttributeValueMemberS); ok {
			out = append(out, s.Value)
		}
	}
	return out
}

// errPageGone is a page a run item names that is no longer stored: a
// commit replaced it after the run item was read.
var errPageGone = fmt.Errorf("store: a run state page is gone")

// withPages completes rec, read from item, with the pages item names:
// from found (the run's page items already read, by sort key) or, when
// found is nil, read now (one query of the run's pages: billed by their
// size, not by their number). It returns errPageGone when one is missing.
func (s *base) withPages(ctx context.Context, rec *RunRecord, item map[string]types.AttributeValue, found map[string]map[string]types.AttributeValue) error {
	keys := pageKeysOf(item)
	if len(keys) == 0 {
		return nil
	}
	if found == nil {
		found = map[string]map[string]types.AttributeValue{}
		in := &dynamodb.QueryInput{
			TableName:              aws.String(s.table),
			KeyConditionExpression: aws.String("pk = :pk AND begins_with(sk, :p)"),
			ExpressionAttributeValues: map[string]types.AttributeValue{
				":pk": str(runPK(rec.WorkflowID, rec.InstanceID)), ":p": str(pagePrefix(rec.RunID)),
			},
			ConsistentRead: aws.Bool(true),
		}
		err := s.queryAll(ctx, in, func(it map[string]types.AttributeValue) error {
			found[getS(it, attrSK)] = it
			return nil
		})
		if err != nil {
			return fmt.Errorf("store: read run state pages of %s/%d/%d: %w", rec.WorkflowID, rec.InstanceID, rec.RunID, err)
		}
	}
	p := Pages{keys: keys, base: make([][]json.RawMessage, len(keys))}
	for i, k := range keys {
		it, ok := found[k]
		if !ok {
			return errPageGone
		}
		raw, err := decodeBody(it)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(raw, &p.base[i]); err != nil {
			return fmt.Errorf("store: run state page %s: %w", k, err)
		}
	}
	state, err := mergePages(rec.State, p)
	if err != nil {
		return err
	}
	rec.State, rec.Pages = state, p
	return nil
}

// maxPageReads bounds how often a reader reads a run again because a page
// it named was replaced meanwhile.
const maxPageReads = 5
