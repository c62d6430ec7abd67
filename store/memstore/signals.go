package memstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/maestro-serverless/maestro/signals"
	"github.com/maestro-serverless/maestro/store"
	"github.com/maestro-serverless/maestro/store/internal/layout"
)

// The param index of signals, as package store keys it (store/signals.go):
// one partition per (name, param), entries keyed by value then sequence
// number so that key order is value order. FindSignal reads one
// condition's range of it backwards, at most maxSignalScan entries.
const (
	indexInlineParams = 1024
	maxSignalScan     = 1000
	signalScanPage    = 100
)

// indexRange returns the query of a param's index partition that reads
// the range layout.IndexRange gives for c; ok is false when nothing can
// satisfy c.
func indexRange(c signals.Condition) (q query, ok bool, err error) {
	r, ok, err := layout.IndexRange(c)
	return query{prefix: r.Prefix, from: r.From, to: r.To}, ok, err
}

// AnnounceSignal stores a signal instance with the next sequence number of
// its name and its param index entries at once; with a request id already
// used it returns the earlier instance and created false. A number taken
// by an announce that then fails is left unused.
func (s *Signals) AnnounceSignal(ctx context.Context, ns store.NewSignal) (*store.SignalRecord, bool, error) {
	if n := len(ns.Params); n+2 > maxTransactItems {
		return nil, false, fmt.Errorf("store: signal %s has %d params, more than the %d one transaction can index", ns.Name, n, maxTransactItems-2)
	}
	p := ns.Params
	if p == nil {
		p = map[string]any{}
	}
	params, err := json.Marshal(p)
	if err != nil {
		return nil, false, fmt.Errorf("store: params of signal %s: %w", ns.Name, err)
	}
	if ns.RequestID != "" {
		if rec, err := s.signalForRequest(ctx, ns.Name, ns.RequestID); err == nil {
			return rec, false, nil
		} else if !errors.Is(err, store.ErrNotFound) {
			return nil, false, err
		}
	}
	if err := ctxErr(ctx); err != nil {
		return nil, false, err
	}
	seq := s.nextSeq(ns.Name)
	rec := &store.SignalRecord{Name: ns.Name, Seq: seq, Params: params, Payload: ns.Payload, RequestID: ns.RequestID,
		Source: ns.Source, CreateTime: ns.Now.UnixMilli()}
	it := &signalItem{name: ns.Name, seq: seq, params: string(params), payload: "{}", createTime: rec.CreateTime,
		requestID: ns.RequestID, source: string(ns.Source)}
	if len(ns.Payload) > 0 {
		it.payload = string(ns.Payload)
	}
	if ns.Outbox != nil {
		msgs, err := ns.Outbox(seq)
		if err != nil {
			return nil, false, err
		}
		if it.outbox, err = json.Marshal(msgs); err != nil {
			return nil, false, fmt.Errorf("store: outbox: %w", err)
		}
		it.swept, it.due = true, s.now().Add(s.eventSweepAfter).UnixMilli()
	}
	pk := layout.SignalPK(ns.Name)
	ws := []write{putIfAbsent(pk, layout.SignalInstanceSK(seq), it)}
	if ns.RequestID != "" {
		ws = append(ws, putIfAbsent(pk, layout.SignalRequestSK(ns.RequestID), &sigRequestItem{seq: seq}))
	}
	for param, v := range ns.Params {
		sk, err := layout.SignalIndexSK(v, seq)
		if err != nil {
			return nil, false, fmt.Errorf("store: signal %s param %q: %w", ns.Name, param, err)
		}
		ix := &indexItem{seq: seq}
		if len(params) <= indexInlineParams {
			ix.params = string(params)
		}
		ws = append(ws, put(layout.SignalIndexPK(ns.Name, param), sk, ix))
	}
	err = s.transactLocked(ws)
	if err == nil {
		return rec, true, nil
	}
	if _, ok := asCancelled(err); ok && ns.RequestID != "" {
		if prev, perr := s.signalForRequest(ctx, ns.Name, ns.RequestID); perr == nil {
			return prev, false, nil
		}
	}
	return nil, false, fmt.Errorf("store: announce signal %s: %w", ns.Name, err)
}

// transactLocked applies ws under the lock.
func (s *base) transactLocked(ws []write) error {
	defer s.lock()()
	return s.t.transact(ws)
}

// nextSeq takes the next sequence number of a signal name.
func (s *Signals) nextSeq(name string) int64 {
	defer s.lock()()
	var n int64
	_ = s.t.one(write{pk: layout.SignalPK(name), sk: layout.SigSeqSK, apply: func(cur any) (any, error) {
		if c, ok := cur.(*sigSeqItem); ok {
			n = c.n
		}
		n++
		return &sigSeqItem{n: n}, nil
	}})
	return n
}

func (s *Signals) signalForRequest(ctx context.Context, name, requestID string) (*store.SignalRecord, error) {
	return lookup(s.base, ctx, layout.SignalPK(name), layout.SignalRequestSK(requestID), func(req *sigRequestItem) (*store.SignalRecord, error) {
		return s.signal(name, req.seq)
	})
}

// signal returns signal instance seq of name (0: the latest). The caller
// holds the lock.
func (s *base) signal(name string, seq int64) (*store.SignalRecord, error) {
	pk := layout.SignalPK(name)
	sk := layout.SignalInstanceSK(seq)
	if seq == 0 {
		keys, _ := s.t.run(query{pk: pk, prefix: "I#", desc: true, limit: 1})
		if len(keys) == 0 {
			return nil, store.ErrNotFound
		}
		sk = keys[0]
	}
	it, ok := s.t.get(pk, sk).(*signalItem)
	if !ok {
		return nil, store.ErrNotFound
	}
	return it.record(), nil
}

// GetSignal returns signal instance seq of name (0: the latest),
// store.ErrNotFound if none.
func (s *Signals) GetSignal(ctx context.Context, name string, seq int64) (*store.SignalRecord, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	defer s.lock()()
	return s.signal(name, seq)
}

// FindSignal looks up, over the whole history of name, a signal instance
// meeting every condition (signals.MatchesAll), as package store does:
// reading the param index of the first equality (else the first
// condition) backwards, newest first among equal values, at most
// maxSignalScan entries (store.ErrSignalScanLimit past them). Without
// conditions it is the newest instance, with its payload; a match found
// through the index carries its name, number and params only.
func (s *Signals) FindSignal(ctx context.Context, name string, conds []signals.Condition) (signals.Signal, bool, error) {
	if err := ctxErr(ctx); err != nil {
		return signals.Signal{}, false, err
	}
	if len(conds) == 0 {
		return store.NewestSignal(s.GetSignal(ctx, name, 0))
	}
	drive := signals.Driving(conds)
	q, ok, err := indexRange(drive)
	if err != nil || !ok {
		return signals.Signal{}, false, err
	}
	q.pk, q.desc = layout.SignalIndexPK(name, drive.Param), true
	defer s.lock()()
	for scanned := 0; scanned < maxSignalScan; {
		q.limit = min(signalScanPage, maxSignalScan-scanned)
		keys, more := s.t.run(q)
		scanned += len(keys)
		cands, err := s.indexCandidates(name, q.pk, keys)
		if err != nil {
			return signals.Signal{}, false, err
		}
		for _, c := range cands {
			if signals.MatchesAll(conds, c) {
				return c, true, nil
			}
		}
		if !more {
			return signals.Signal{}, false, nil
		}
		q.start, q.hasStart = keys[len(keys)-1], true
	}
	return signals.Signal{}, false, fmt.Errorf("%w (%d) for signal %s: no match among them; make its conditions narrower (an equality first)",
		store.ErrSignalScanLimit, maxSignalScan, name)
}

// indexCandidates turns index entries into signals, in their order: params
// carried by the entry, else read from the instance item.
func (s *Signals) indexCandidates(name, pk string, keys []string) ([]signals.Signal, error) {
	cands := make([]signals.Signal, len(keys))
	var missing []int
	for i, sk := range keys {
		ix := s.t.get(pk, sk).(*indexItem)
		cands[i] = signals.Signal{Name: name, Seq: ix.seq}
		if ix.params == "" {
			missing = append(missing, i)
			continue
		}
		p, err := signals.DecodeParams(json.RawMessage(ix.params))
		if err != nil {
			return nil, fmt.Errorf("store: index entry of signal %s/%d: %w", name, ix.seq, err)
		}
		cands[i].Params = p
	}
	for _, i := range missing {
		it, ok := s.t.get(layout.SignalPK(name), layout.SignalInstanceSK(cands[i].Seq)).(*signalItem)
		if !ok {
			continue
		}
		p, err := signals.DecodeParams(json.RawMessage(it.params))
		if err != nil {
			return nil, fmt.Errorf("store: signal %s/%d: %w", name, it.seq, err)
		}
		cands[i].Params = p
	}
	return cands, nil
}

// Subscribers returns the subscriptions to name and the keys of the step
// attempts waiting for it, each in key order.
func (s *Signals) Subscribers(ctx context.Context, name string) (subs []store.Subscription, waiters []string, err error) {
	if err := ctxErr(ctx); err != nil {
		return nil, nil, err
	}
	defer s.lock()()
	pk := layout.SignalPK(name)
	keys, _ := s.t.run(query{pk: pk, prefix: "T#"})
	for _, sk := range keys {
		subs = append(subs, store.Subscription{WorkflowID: strings.TrimPrefix(sk, "T#"), Since: s.t.get(pk, sk).(*subscriptionItem).since})
	}
	keys, _ = s.t.run(query{pk: pk, prefix: "D#"})
	waiters = append(waiters, keys...)
	return subs, waiters, nil
}

// SyncSubscriptions brings workflow wf's signal subscriptions in line
// with its current head, conditioned on the head read; it retries a lost
// race.
func (s *Signals) SyncSubscriptions(ctx context.Context, wf string, subs store.SubscriptionsFunc) error {
	for range conflictAttempts {
		if err := ctxErr(ctx); err != nil {
			return err
		}
		head := s.headLocked(wf)
		if subs == nil {
			return nil
		}
		want, err := wanted(ctx, head, subs)
		if err != nil {
			return err
		}
		err = s.syncSubscriptions(wf, head, want)
		if err == nil {
			return nil
		}
		if _, ok := asCancelled(err); !ok {
			return fmt.Errorf("store: sync signal subscriptions of %s: %w", wf, err)
		}
	}
	return fmt.Errorf("store: sync signal subscriptions of %s: %w after 20 attempts", wf, store.ErrConflict)
}

func (s *base) headLocked(wf string) *store.WorkflowHead {
	defer s.lock()()
	return s.head(wf)
}

func (s *Signals) syncSubscriptions(wf string, head *store.WorkflowHead, want []string) error {
	defer s.lock()()
	ws := s.subscriptionWrites(wf, want)
	if len(ws) == 0 {
		return nil
	}
	check := write{pk: layout.WorkflowPK(wf), sk: layout.HeadSK, cond: absent}
	if head != nil {
		v := headV(head)
		check.cond = func(cur any) bool { h, ok := cur.(*headItem); return ok && h.v == v }
	}
	return s.t.transact(append(ws, check))
}

// Lineage returns the links recorded for signal instance seq of name, in
// their ids' order.
func (s *Signals) Lineage(ctx context.Context, name string, seq int64) ([]json.RawMessage, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	defer s.lock()()
	pk := layout.SignalPK(name)
	keys, _ := s.t.run(query{pk: pk, prefix: layout.LineagePrefix(seq)})
	links := make([]json.RawMessage, len(keys))
	for i, sk := range keys {
		links[i] = json.RawMessage(s.t.get(pk, sk).(*lineageItem).body)
	}
	return links, nil
}

// PutLineage records one lineage link outside a run commit.
func (s *Signals) PutLineage(ctx context.Context, l store.LineageLink) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	defer s.lock()()
	if err := s.t.one(lineageWrite(l)); err != nil {
		return fmt.Errorf("store: lineage of %s/%d: %w", l.Name, l.Seq, err)
	}
	return nil
}

// SignalDelivered takes a signal instance out of the sweep index.
func (s *Signals) SignalDelivered(ctx context.Context, name string, seq int64) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	defer s.lock()()
	err := s.t.one(write{pk: layout.SignalPK(name), sk: layout.SignalInstanceSK(seq),
		cond: func(cur any) bool { it, ok := cur.(*signalItem); return ok && it.swept },
		apply: func(cur any) (any, error) {
			n := *cur.(*signalItem)
			n.swept, n.due = false, 0
			return &n, nil
		}})
	if _, ok := asCancelled(err); ok || err == nil {
		return nil
	}
	return fmt.Errorf("store: signal %s/%d delivered: %w", name, seq, err)
}
