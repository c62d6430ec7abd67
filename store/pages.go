package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/maestro-serverless/maestro/store/internal/layout"
	"github.com/maestro-serverless/maestro/store/internal/runpages"
)

// A run's state (an engine.Instance's JSON) holds one step entry per step
// of the definition, in definition order. Package engine owns its shape:
// engine.SplitState separates the entries from the state's other fields,
// engine.JoinState puts them back, engine.StepEntryID reads an entry's
// step id; the store names none of its fields.
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
	PageSteps = runpages.PageSteps
	// MaxOverlaySteps bounds the settled step entries a paged run's item
	// holds.
	MaxOverlaySteps = runpages.MaxOverlaySteps
	// MaxPages bounds a run's pages: past it, a commit writes a snapshot.
	MaxPages = runpages.MaxPages
)

const attrPages = "pg"

// Pages is how a run's state is split between its run item and its pages,
// as read (RunRecord.Pages) and as a commit of it must know (Commit.Pages).
// The zero value is a run kept whole in its item.
type Pages struct {
	// set is the pages' keys and their entries as stored.
	set runpages.Set
}

// Count returns how many pages the run's state has; 0 when it is kept
// whole in its item.
func (p Pages) Count() int { return p.set.Count() }

// pageSK is the sort key of a page of run run's state: its index and a
// random tag that makes every written page a new item.
func pageSK(run int64, page int) (string, error) {
	var tag [6]byte
	if _, err := rand.Read(tag[:]); err != nil {
		return "", fmt.Errorf("store: page key: %w", err)
	}
	return fmt.Sprintf("%s%04d#%s", layout.PagePrefix(run), page, hex.EncodeToString(tag[:])), nil
}

// splitState splits a run's whole state for a commit of run run whose
// stored pages are p (runpages.Split): the state its run item holds, the
// pages it writes, and the pages the run has once it commits.
func splitState(state []byte, run int64, p Pages, unsettled map[string]bool) ([]byte, []runpages.Write, Pages, error) {
	out, writes, next, err := runpages.Split(state, p.set, unsettled, func(page int) (string, error) { return pageSK(run, page) })
	if err != nil {
		return nil, nil, Pages{}, err
	}
	return out, writes, Pages{set: next}, nil
}

// pageItem is the item of a page of run run of instance inst of wf.
func (s *base) pageItem(wf string, inst int64, w runpages.Write) (map[string]types.AttributeValue, error) {
	raw, err := json.Marshal(w.Steps)
	if err != nil {
		return nil, fmt.Errorf("store: run state page: %w", err)
	}
	body, err := s.encodeBody(raw)
	if err != nil {
		return nil, err
	}
	item := merge(key(layout.RunPK(wf, inst), w.SK), body)
	if n := ItemSize(item); n > MaxItemBytes {
		return nil, &ItemTooLargeError{Item: "run state page", Bytes: n}
	}
	return item, nil
}

// putPageItems writes page items (pageItem) outside any transaction
// (BatchWriteItem, 25 at a time): they are new items no reader knows of
// until a run item names them.
func (s *base) putPageItems(ctx context.Context, items []map[string]types.AttributeValue) error {
	reqs := make([]types.WriteRequest, len(items))
	for i, item := range items {
		reqs[i] = types.WriteRequest{PutRequest: &types.PutRequest{Item: item}}
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
		keys[i] = key(layout.RunPK(wf, inst), sk)
	}
	return s.batchDelete(ctx, keys)
}

// pagesAttr is the run item attribute naming its pages.
func pagesAttr(p Pages) types.AttributeValue {
	keys := make([]types.AttributeValue, len(p.set.Keys))
	for i, k := range p.set.Keys {
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
				":pk": str(layout.RunPK(rec.WorkflowID, rec.InstanceID)), ":p": str(layout.PagePrefix(rec.RunID)),
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
	p := runpages.Set{Keys: keys, Base: make([][]json.RawMessage, len(keys))}
	for i, k := range keys {
		it, ok := found[k]
		if !ok {
			return errPageGone
		}
		raw, err := decodeBody(it)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(raw, &p.Base[i]); err != nil {
			return fmt.Errorf("store: run state page %s: %w", k, err)
		}
	}
	state, err := runpages.Merge(rec.State, p)
	if err != nil {
		return err
	}
	rec.State, rec.Pages = state, Pages{set: p}
	return nil
}

// maxPageReads bounds how often a reader reads a run again because a page
// it named was replaced meanwhile.
const maxPageReads = 5
