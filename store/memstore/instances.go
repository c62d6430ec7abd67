package memstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/maestro-serverless/maestro/store"
	"github.com/maestro-serverless/maestro/store/internal/layout"
)

// maxFilteredPages is package store's bound on the pages one filtered
// listing reads.
const maxFilteredPages = 10

// newEvent is the item of inbox event ev, written now: in the sweep index
// unless Covered, due EventSweepAfter (and its backstop delay) later.
func (s *base) newEvent(ev store.Event) (*eventItem, error) {
	if err := needBody(ev.Body, "event "+ev.ID); err != nil {
		return nil, err
	}
	it := &eventItem{body: clone(ev.Body), work: ev.WakeAfter > 0}
	if !ev.Covered {
		it.swept = true
		it.due = s.now().Add(s.eventSweepAfter + time.Duration(ev.WakeAfter)*time.Second).UnixMilli()
	}
	return it, nil
}

// ReserveInstance returns the instance a start with requestID already
// made (prior), or takes the workflow's next instance id
// (store.ErrNotFound without a head).
func (s *Instances) ReserveInstance(ctx context.Context, wf, requestID string) (id int64, prior *store.InstanceRecord, err error) {
	if requestID != "" {
		if rec, err := s.InstanceForRequest(ctx, wf, requestID); err == nil {
			return 0, rec, nil
		} else if !errors.Is(err, store.ErrNotFound) {
			return 0, nil, err
		}
	}
	id, err = s.nextInstanceID(ctx, wf)
	return id, nil, err
}

// ReserveInstances is ReserveInstance for a batch of starts, each with a
// request id of its own (see store.Instances.ReserveInstances): the new
// ids are consecutive in the order of requestIDs.
func (s *Instances) ReserveInstances(ctx context.Context, wf string, requestIDs []string) (ids []int64, prior []*store.InstanceRecord, err error) {
	if err := store.CheckRequestIDs(requestIDs); err != nil {
		return nil, nil, fmt.Errorf("store: reserve instances of %s: %w", wf, err)
	}
	prior = make([]*store.InstanceRecord, len(requestIDs))
	for i, id := range requestIDs {
		rec, err := s.InstanceForRequest(ctx, wf, id)
		switch {
		case err == nil:
			prior[i] = rec
		case !errors.Is(err, store.ErrNotFound):
			return nil, nil, err
		}
	}
	ids, err = store.NumberFresh(prior, func(n int) (int64, error) { return s.nextInstanceIDs(ctx, wf, n) })
	if err != nil {
		return nil, nil, err
	}
	return ids, prior, nil
}

// nextInstanceID takes the workflow's next instance id from its head.
func (s *base) nextInstanceID(ctx context.Context, wf string) (int64, error) {
	return s.nextInstanceIDs(ctx, wf, 1)
}

// nextInstanceIDs takes the workflow's next n instance ids from its head
// and returns the first; the others follow it.
func (s *base) nextInstanceIDs(ctx context.Context, wf string, n int) (int64, error) {
	if err := ctxErr(ctx); err != nil {
		return 0, err
	}
	defer s.lock()()
	var id int64
	err := s.t.one(write{pk: layout.WorkflowPK(wf), sk: layout.HeadSK, cond: present, apply: func(cur any) (any, error) {
		h := *cur.(*headItem)
		id = h.next
		h.next += int64(n)
		return &h, nil
	}})
	if _, ok := asCancelled(err); ok {
		return 0, fmt.Errorf("store: workflow %s: %w", wf, store.ErrNotFound)
	}
	if err != nil {
		return 0, fmt.Errorf("store: allocate instance id of %s: %w", wf, err)
	}
	return id, nil
}

// CreateInstance writes an instance summary, its first run (version 1) and
// the run's first event at once, with the next instance id unless
// ni.InstanceID names a reserved one; with a request id already used it
// returns that start's instance and created false.
func (s *Instances) CreateInstance(ctx context.Context, ni store.NewInstance) (rec *store.InstanceRecord, created bool, err error) {
	if ni.RequestID != "" {
		if rec, err := s.InstanceForRequest(ctx, ni.WorkflowID, ni.RequestID); err == nil {
			return rec, false, nil
		} else if !errors.Is(err, store.ErrNotFound) {
			return nil, false, err
		}
	}
	id := ni.InstanceID
	if id == 0 {
		if id, err = s.nextInstanceID(ctx, ni.WorkflowID); err != nil {
			return nil, false, err
		}
	}
	rec = &store.InstanceRecord{WorkflowID: ni.WorkflowID, InstanceID: id, Version: ni.Version, RunID: 1, UUID: ni.UUID,
		Status: ni.Status, RequestID: ni.RequestID, Initiator: ni.Initiator, CreateTime: ni.Now.UnixMilli(), ModifyTime: ni.Now.UnixMilli()}
	state, err := ni.State(id)
	if err != nil {
		return nil, false, fmt.Errorf("store: initial state: %w", err)
	}
	var outbox []store.Message
	if ni.Outbox != nil {
		if outbox, err = ni.Outbox(id); err != nil {
			return nil, false, err
		}
	}
	err = s.createInstance(ni, rec, state, outbox)
	if err == nil {
		return rec, true, nil
	}
	if _, ok := asCancelled(err); ok && ni.RequestID != "" {
		if rec, rerr := s.InstanceForRequest(ctx, ni.WorkflowID, ni.RequestID); rerr == nil {
			return rec, false, nil
		}
	}
	return nil, false, fmt.Errorf("store: create instance %s/%d: %w", ni.WorkflowID, rec.InstanceID, err)
}

func (s *Instances) createInstance(ni store.NewInstance, rec *store.InstanceRecord, state []byte, outbox []store.Message) error {
	run, err := newRunItem(1, ni.Status, state, outbox)
	if err != nil {
		return err
	}
	ev, err := s.newEvent(ni.FirstEvent)
	if err != nil {
		return err
	}
	pk := layout.RunPK(ni.WorkflowID, rec.InstanceID)
	ws := []write{
		putIfAbsent(layout.WorkflowPK(ni.WorkflowID), layout.InstanceSK(rec.InstanceID), instanceOf(rec)),
		putIfAbsent(pk, layout.RunSK(1), run),
		put(pk, layout.EventSK(1, ni.FirstEvent.ID), ev),
	}
	if ni.RequestID != "" {
		ws = append(ws, putIfAbsent(layout.WorkflowPK(ni.WorkflowID), layout.RequestSK(ni.RequestID), &requestItem{instance: rec.InstanceID}))
	}
	defer s.lock()()
	return s.t.transact(ws)
}

// newRunItem is a run item kept whole, not in the sweep index.
func newRunItem(v int64, status string, state []byte, outbox []store.Message) (*runItem, error) {
	if err := needBody(state, "run state"); err != nil {
		return nil, err
	}
	ob, err := outboxJSON(outbox)
	if err != nil {
		return nil, err
	}
	return &runItem{v: v, status: status, state: clone(state), outbox: ob}, nil
}

// InstanceForRequest returns the instance a start with request id
// requestID made, store.ErrNotFound if none.
func (s *Instances) InstanceForRequest(ctx context.Context, wf, requestID string) (*store.InstanceRecord, error) {
	return lookup(s.base, ctx, layout.WorkflowPK(wf), layout.RequestSK(requestID), func(req *requestItem) (*store.InstanceRecord, error) {
		return s.instance(wf, req.instance)
	})
}

func (s *base) instance(wf string, inst int64) (*store.InstanceRecord, error) {
	it, ok := s.t.get(layout.WorkflowPK(wf), layout.InstanceSK(inst)).(*instanceItem)
	if !ok {
		return nil, store.ErrNotFound
	}
	return it.record(wf, inst), nil
}

// GetInstance returns an instance summary, store.ErrNotFound if none.
func (s *Instances) GetInstance(ctx context.Context, wf string, inst int64) (*store.InstanceRecord, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	defer s.lock()()
	return s.instance(wf, inst)
}

// GetInstances returns the summaries of those of insts that exist, by
// id. An id twice among a hundred is refused, as BatchGetItem refuses it.
func (s *Instances) GetInstances(ctx context.Context, wf string, insts []int64) (map[int64]*store.InstanceRecord, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	keys := make([]itemKey, len(insts))
	for i, n := range insts {
		keys[i] = itemKey{layout.WorkflowPK(wf), layout.InstanceSK(n)}
	}
	if err := checkBatch(keys, batchGetKeys); err != nil {
		return nil, fmt.Errorf("store: get instances of %s: %w", wf, err)
	}
	defer s.lock()()
	out := make(map[int64]*store.InstanceRecord, len(insts))
	for _, n := range insts {
		if rec, err := s.instance(wf, n); err == nil {
			out[n] = rec
		}
	}
	return out, nil
}

// ListInstances pages through a workflow's instances, newest first; with
// status set, only those in that status, reading up to ten pages of
// max(limit, 250) instances. The cursor is the instance id to continue
// below; a page that reached its limit has one even when nothing follows.
func (s *Instances) ListInstances(ctx context.Context, wf, status, cursor string, limit int) ([]*store.InstanceRecord, string, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, "", err
	}
	q := query{pk: layout.WorkflowPK(wf), prefix: "I#", desc: true, limit: limit}
	if status != "" {
		q.limit = max(limit, 250)
	}
	if cursor != "" {
		var id int64
		if _, err := fmt.Sscanf(cursor, "%d", &id); err != nil || id <= 0 {
			return nil, "", fmt.Errorf("%w %q", store.ErrBadCursor, cursor)
		}
		q.start, q.hasStart = layout.InstanceSK(id), true
	}
	recs := make([]*store.InstanceRecord, 0, limit)
	if q.limit < 1 {
		return nil, "", fmt.Errorf("store: list instances of %s: %w", wf, validation("limit must be at least 1"))
	}
	defer s.lock()()
	for page := 1; ; page++ {
		keys, more := s.t.run(q)
		var got []*store.InstanceRecord
		for _, sk := range keys {
			inst, _ := strconv.ParseInt(sk[2:], 10, 64)
			r, err := s.instance(wf, inst)
			if err != nil {
				return nil, "", err
			}
			if status == "" || r.Status == status {
				got = append(got, r)
			}
		}
		for n, r := range got {
			recs = append(recs, r)
			if len(recs) == limit {
				if n == len(got)-1 && !more {
					return recs, "", nil
				}
				return recs, fmt.Sprint(r.InstanceID), nil
			}
		}
		if !more {
			return recs, "", nil
		}
		last := keys[len(keys)-1]
		if page >= maxFilteredPages || status == "" {
			id, _ := strconv.ParseInt(last[2:], 10, 64)
			return recs, fmt.Sprint(id), nil
		}
		q.start, q.hasStart = last, true
	}
}

// Enqueue records that an instance's run waits for a run slot and bumps
// the queue version.
func (s *Instances) Enqueue(ctx context.Context, wf string, inst, run int64) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	defer s.lock()()
	err := s.t.transact([]write{
		put(layout.WorkflowPK(wf), layout.QueueSK(inst), &queueItem{run: run}),
		{pk: layout.WorkflowPK(wf), sk: layout.SlotSK, apply: func(cur any) (any, error) {
			n := slotOf(cur)
			n.qv, n.hasQV = n.qv+1, true
			return n, nil
		}},
	})
	if err != nil {
		return fmt.Errorf("store: enqueue %s/%d: %w", wf, inst, err)
	}
	return nil
}

// slotOf returns a copy of the slot item cur (a new one when absent).
func slotOf(cur any) *slotItem {
	if r, ok := cur.(*slotItem); ok {
		n := *r
		n.holders = slices.Clone(r.holders)
		return &n
	}
	return &slotItem{}
}

// QueueVersion returns the slot item's queue version (0 before any
// enqueue).
func (s *Instances) QueueVersion(ctx context.Context, wf string) (int64, error) {
	if err := ctxErr(ctx); err != nil {
		return 0, err
	}
	defer s.lock()()
	if r, ok := s.t.get(layout.WorkflowPK(wf), layout.SlotSK).(*slotItem); ok {
		return r.qv, nil
	}
	return 0, nil
}

// OldestQueued returns the waiting instance with the lowest id other than
// except; ok is false when none waits.
func (s *Instances) OldestQueued(ctx context.Context, wf string, except int64) (inst, run int64, ok bool, err error) {
	if err := ctxErr(ctx); err != nil {
		return 0, 0, false, err
	}
	defer s.lock()()
	keys, _ := s.t.run(query{pk: layout.WorkflowPK(wf), prefix: "Q#", limit: 2})
	for _, sk := range keys {
		var id int64
		fmt.Sscanf(strings.TrimPrefix(sk, "Q#"), "%d", &id)
		if id != except {
			return id, s.t.get(layout.WorkflowPK(wf), sk).(*queueItem).run, true, nil
		}
	}
	return 0, 0, false, nil
}

// ActiveRuns returns the runs holding a slot (in the order of their
// "instance#run" strings) and the queued runs (oldest first), except
// instance except's.
func (s *Instances) ActiveRuns(ctx context.Context, wf string, except int64) (holding, queued []store.RunRef, err error) {
	if err := ctxErr(ctx); err != nil {
		return nil, nil, err
	}
	defer s.lock()()
	if r, ok := s.t.get(layout.WorkflowPK(wf), layout.SlotSK).(*slotItem); ok {
		for _, h := range r.holders {
			var ref store.RunRef
			if _, err := fmt.Sscanf(h, "%d#%d", &ref.InstanceID, &ref.RunID); err == nil && ref.InstanceID != except {
				holding = append(holding, ref)
			}
		}
	}
	keys, _ := s.t.run(query{pk: layout.WorkflowPK(wf), prefix: "Q#"})
	for _, sk := range keys {
		var id int64
		fmt.Sscanf(strings.TrimPrefix(sk, "Q#"), "%d", &id)
		if id != except {
			queued = append(queued, store.RunRef{InstanceID: id, RunID: s.t.get(layout.WorkflowPK(wf), sk).(*queueItem).run})
		}
	}
	return holding, queued, nil
}

// holderKey is a run's entry in the slot item's holders.
func holderKey(inst, run int64) string { return fmt.Sprintf("%d#%d", inst, run) }

// withHolder returns holders with h added, in order.
func withHolder(holders []string, h string) []string {
	if i, found := slices.BinarySearch(holders, h); !found {
		return slices.Insert(slices.Clone(holders), i, h)
	}
	return holders
}

// withoutHolder returns holders without h.
func withoutHolder(holders []string, h string) []string {
	return slices.DeleteFunc(slices.Clone(holders), func(x string) bool { return x == h })
}

// ReleaseSlot gives back the slot an ended run still holds and puts wake
// (when set) into another run's inbox, at once; store.ErrNotHolding when
// the run holds none.
func (s *Instances) ReleaseSlot(ctx context.Context, wf string, inst, run int64, wake *store.RunEvent) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	h := holderKey(inst, run)
	ws := []write{{pk: layout.WorkflowPK(wf), sk: layout.SlotSK,
		cond: func(cur any) bool { r, ok := cur.(*slotItem); return ok && slices.Contains(r.holders, h) },
		apply: func(cur any) (any, error) {
			n := slotOf(cur)
			n.running, n.hasRunning = n.running-1, true
			n.holders = withoutHolder(n.holders, h)
			return n, nil
		}}}
	if wake != nil {
		ev, err := s.newEvent(wake.Event)
		if err != nil {
			return fmt.Errorf("store: release slot of %s/%d/%d: %w", wf, inst, run, err)
		}
		ws = append(ws, put(layout.RunPK(wf, wake.InstanceID), layout.EventSK(wake.RunID, wake.Event.ID), ev))
	}
	defer s.lock()()
	err := s.t.transact(ws)
	if c, ok := asCancelled(err); ok && c.at(0) {
		return fmt.Errorf("store: release slot of %s/%d/%d: %w", wf, inst, run, store.ErrNotHolding)
	}
	if err != nil {
		return fmt.Errorf("store: release slot of %s/%d/%d: %w", wf, inst, run, err)
	}
	return nil
}
