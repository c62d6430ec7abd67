package memstore

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/maestro-serverless/maestro/store"
	"github.com/maestro-serverless/maestro/store/internal/layout"
	"github.com/maestro-serverless/maestro/store/internal/runpages"
)

// outboxJSON is an outbox's JSON; nil when there is none.
func outboxJSON(msgs []store.Message) ([]byte, error) {
	if len(msgs) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(msgs)
	if err != nil {
		return nil, fmt.Errorf("store: outbox: %w", err)
	}
	return b, nil
}

// inlineEntry is how a run item holds an instance timeline entry.
type inlineEntry struct {
	Seq  int64           `json:"s"`
	Body json.RawMessage `json:"e"`
}

func inlineEntries(entries []store.TimelineItem) []inlineEntry {
	out := make([]inlineEntry, len(entries))
	for i, t := range entries {
		out[i] = inlineEntry{Seq: t.Seq, Body: t.Body}
	}
	return out
}

// heldTimeline returns entries as a run item holding them reads them back
// (their JSON compacted); nil for none.
func heldTimeline(entries []store.TimelineItem) ([]store.TimelineItem, error) {
	if len(entries) == 0 {
		return nil, nil
	}
	raw, err := json.Marshal(inlineEntries(entries))
	if err != nil {
		return nil, fmt.Errorf("store: timeline: %w", err)
	}
	var in []inlineEntry
	if err := json.Unmarshal(raw, &in); err != nil {
		return nil, fmt.Errorf("store: run timeline: %w", err)
	}
	out := make([]store.TimelineItem, len(in))
	for i, e := range in {
		out[i] = store.TimelineItem{Seq: e.Seq, Body: []byte(e.Body)}
	}
	return out, nil
}

// runRecord returns run run's record as read from its item, its pages
// merged into its state. The caller holds the lock.
func (s *base) runRecord(wf string, inst, run int64, it *runItem) (*store.RunRecord, error) {
	state := clone(it.state)
	if len(it.pages) > 0 {
		p := runpages.Set{Keys: it.pages}
		for _, k := range it.pages {
			pg, ok := s.t.get(layout.RunPK(wf, inst), k).(*pageItem)
			if !ok {
				return nil, fmt.Errorf("store: a run state page is gone")
			}
			p.Base = append(p.Base, pg.entries)
		}
		var err error
		if state, err = runpages.Merge(it.state, p); err != nil {
			return nil, err
		}
	}
	rec := &store.RunRecord{WorkflowID: wf, InstanceID: inst, RunID: run, V: it.v, Status: it.status, State: state, SweepAt: it.sweepAt}
	if it.timeline != nil {
		rec.Timeline = make([]store.TimelineItem, len(it.timeline))
		for i, t := range it.timeline {
			rec.Timeline[i] = store.TimelineItem{Seq: t.Seq, Body: clone(t.Body)}
		}
	}
	return rec, nil
}

// PutEvent adds an event to a run's inbox, in the sweep index unless
// Covered; an event id already there is left as it is.
func (s *Runs) PutEvent(ctx context.Context, wf string, inst, run int64, ev store.Event) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	it, err := s.newEvent(ev)
	if err != nil {
		return fmt.Errorf("store: put event %s: %w", ev.ID, err)
	}
	defer s.lock()()
	err = s.t.one(putIfAbsent(layout.RunPK(wf, inst), layout.EventSK(run, ev.ID), it))
	if _, ok := asCancelled(err); err != nil && !ok {
		return fmt.Errorf("store: put event %s: %w", ev.ID, err)
	}
	return nil
}

// LoadQuietRun loads a run when no inbox event waits at its instance (of
// it, or of a later run): quiet reports whether none does, and rec is nil
// when one does. It reads what package store's query reads: the run item
// and the item before it.
func (s *Runs) LoadQuietRun(ctx context.Context, wf string, inst, run int64) (rec *store.RunRecord, quiet bool, err error) {
	if err := ctxErr(ctx); err != nil {
		return nil, false, err
	}
	defer s.lock()()
	pk := layout.RunPK(wf, inst)
	keys, _ := s.t.run(query{pk: pk, from: layout.EventPrefix(run), to: layout.RunSK(run), desc: true, limit: 2})
	if len(keys) == 0 || keys[0] != layout.RunSK(run) {
		return nil, false, store.ErrNotFound
	}
	if len(keys) > 1 {
		if !strings.HasPrefix(keys[1], "E#") {
			// An earlier run's item (a restart's run): read it all.
			rec, events, err := s.loadRun(wf, inst, run)
			if err != nil || len(events) > 0 {
				return nil, false, err
			}
			return rec, true, nil
		}
		return nil, false, nil
	}
	rec, err = s.runRecord(wf, inst, run, s.t.get(pk, keys[0]).(*runItem))
	if err != nil {
		return nil, false, err
	}
	return rec, true, nil
}

// LoadRun reads a run's state and its pending events (oldest first);
// store.ErrNotFound without its run item.
func (s *Runs) LoadRun(ctx context.Context, wf string, inst, run int64) (*store.RunRecord, []store.Event, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, nil, err
	}
	defer s.lock()()
	return s.loadRun(wf, inst, run)
}

func (s *base) loadRun(wf string, inst, run int64) (*store.RunRecord, []store.Event, error) {
	pk := layout.RunPK(wf, inst)
	it, ok := s.t.get(pk, layout.RunSK(run)).(*runItem)
	if !ok {
		return nil, nil, store.ErrNotFound
	}
	var events []store.Event
	prefix := layout.EventPrefix(run)
	keys, _ := s.t.run(query{pk: pk, prefix: prefix})
	for _, sk := range keys {
		events = append(events, store.Event{ID: strings.TrimPrefix(sk, prefix), Body: clone(s.t.get(pk, sk).(*eventItem).body)})
	}
	sort.Slice(events, func(i, j int) bool { return events[i].ID < events[j].ID })
	rec, err := s.runRecord(wf, inst, run, it)
	if err != nil {
		return nil, nil, err
	}
	return rec, events, nil
}

// GetRuns reads the run items of many runs: the records of those that
// exist. A key twice among a hundred is refused, as BatchGetItem refuses
// it.
func (s *Runs) GetRuns(ctx context.Context, keys []store.RunKey) (map[store.RunKey]*store.RunRecord, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	ks := make([]itemKey, len(keys))
	for i, k := range keys {
		ks[i] = itemKey{layout.RunPK(k.WorkflowID, k.InstanceID), layout.RunSK(k.RunID)}
	}
	if err := checkBatch(ks, batchGetKeys); err != nil {
		return nil, fmt.Errorf("store: get runs: %w", err)
	}
	defer s.lock()()
	out := make(map[store.RunKey]*store.RunRecord, len(keys))
	for i, k := range keys {
		it, ok := s.t.get(ks[i].pk, ks[i].sk).(*runItem)
		if !ok {
			continue
		}
		rec, err := s.runRecord(k.WorkflowID, k.InstanceID, k.RunID, it)
		if err != nil {
			return nil, err
		}
		out[k] = rec
	}
	return out, nil
}

// ListTimeline returns a run's instance timeline entries its run item
// does not hold, in order.
func (s *Runs) ListTimeline(ctx context.Context, wf string, inst, run int64) ([]store.TimelineItem, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	defer s.lock()()
	pk, prefix := layout.RunPK(wf, inst), layout.TimelinePrefix(run)
	keys, _ := s.t.run(query{pk: pk, prefix: prefix})
	var out []store.TimelineItem
	for _, sk := range keys {
		var seq int64
		fmt.Sscanf(strings.TrimPrefix(sk, prefix), "%d", &seq)
		out = append(out, store.TimelineItem{Seq: seq, Body: clone(s.t.get(pk, sk).(*timelineItem).body)})
	}
	return out, nil
}

// CreateRun adds run PrevRun+1 to an instance: its item, its first event
// and the summary's latest run and status, conditioned on the latest run
// still being PrevRun (store.ErrConflict otherwise).
func (s *Runs) CreateRun(ctx context.Context, nr store.NewRun) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	ws, err := s.newRunWrites(nr)
	if err == nil {
		defer s.lock()()
		err = s.t.transact(ws)
	}
	if _, ok := asCancelled(err); ok {
		return fmt.Errorf("store: restart %s/%d after run %d: %w", nr.WorkflowID, nr.InstanceID, nr.PrevRun, store.ErrConflict)
	}
	if err != nil {
		return fmt.Errorf("store: restart %s/%d: %w", nr.WorkflowID, nr.InstanceID, err)
	}
	return nil
}

// newRunWrites are CreateRun's writes: the summary (on its latest run
// being PrevRun), the new run's item (on its absence) and first event.
func (s *base) newRunWrites(nr store.NewRun) ([]write, error) {
	run := nr.PrevRun + 1
	it, err := newRunItem(1, nr.Status, nr.State, nr.Outbox)
	if err != nil {
		return nil, err
	}
	ev, err := s.newEvent(nr.FirstEvent)
	if err != nil {
		return nil, err
	}
	now := nr.Now.UnixMilli()
	pk := layout.RunPK(nr.WorkflowID, nr.InstanceID)
	return []write{
		{pk: layout.WorkflowPK(nr.WorkflowID), sk: layout.InstanceSK(nr.InstanceID),
			cond: func(cur any) bool { i, ok := cur.(*instanceItem); return ok && i.run == nr.PrevRun },
			apply: func(cur any) (any, error) {
				n := *cur.(*instanceItem)
				n.run, n.status, n.startTime, n.endTime, n.modifyTime = run, nr.Status, 0, 0, now
				return &n, nil
			}},
		putIfAbsent(pk, layout.RunSK(run), it),
		put(pk, layout.EventSK(run, nr.FirstEvent.ID), ev),
	}, nil
}

// DiscardEvents deletes applied inbox events of a run, 25 at a time (an id
// twice among 25 is refused, as BatchWriteItem refuses it, after the
// batches before it were deleted).
func (s *Runs) DiscardEvents(ctx context.Context, wf string, inst, run int64, ids []string) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	defer s.lock()()
	pk := layout.RunPK(wf, inst)
	for len(ids) > 0 {
		n := min(len(ids), batchWriteKeys)
		keys := make([]itemKey, n)
		for i, id := range ids[:n] {
			keys[i] = itemKey{pk, layout.EventSK(run, id)}
		}
		if err := checkBatch(keys, batchWriteKeys); err != nil {
			return fmt.Errorf("store: discard events of %s/%d/%d: store: batch delete: %w", wf, inst, run, err)
		}
		for _, k := range keys {
			s.t.set(k.pk, k.sk, nil)
		}
		ids = ids[n:]
	}
	return nil
}

// GetLoopParams reads the loop params item of a foreach step attempt,
// store.ErrNotFound when there is none.
func (s *Runs) GetLoopParams(ctx context.Context, wf string, inst, run int64, step string, attempt int64) ([]byte, error) {
	return lookup(s.base, ctx, layout.RunPK(wf, inst), layout.LoopParamsSK(run, step, attempt), func(it *loopParamsItem) ([]byte, error) {
		return clone(it.body), nil
	})
}
