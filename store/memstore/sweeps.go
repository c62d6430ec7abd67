package memstore

import (
	"context"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"time"

	"github.com/maestro-serverless/maestro/store"
	"github.com/maestro-serverless/maestro/store/internal/layout"
)

// The sweep index (store/sweep.go): inbox events (unless Covered), run
// items committed with a SweepAt and announced signals until delivered,
// each in the shard its partition key hashes to, due at a time whose
// 13-digit decimal string orders the shard.

func sweepShard(pk string) int {
	h := fnv.New32a()
	h.Write([]byte(pk))
	return int(h.Sum32() % store.SweepShards)
}

func sweepSK(due int64) string { return fmt.Sprintf("%013d", due) }

// indexEntry is an item in the sweep index.
type indexEntry struct {
	pk, sk, due string
}

// swept returns it's due time in the sweep index; ok false when it is not
// in it.
func swept(it any) (due int64, ok bool) {
	switch x := it.(type) {
	case *eventItem:
		return x.due, x.swept
	case *runItem:
		return x.sweepAt, x.sweepAt > 0
	case *signalItem:
		return x.due, x.swept
	}
	return 0, false
}

// DueItems returns up to limit items of the sweep index's shard due at or
// before now, earliest first (items due at the same instant in key order).
func (s *Sweeps) DueItems(ctx context.Context, shard int, now time.Time, limit int) ([]store.Due, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	if limit <= 0 {
		return nil, nil
	}
	cut := sweepSK(now.UnixMilli())
	defer s.lock()()
	var entries []indexEntry
	for pk, p := range s.t.parts {
		if sweepShard(pk) != shard {
			continue
		}
		for sk, it := range p.items {
			if due, ok := swept(it); ok {
				if d := sweepSK(due); d <= cut {
					entries = append(entries, indexEntry{pk: pk, sk: sk, due: d})
				}
			}
		}
	}
	slices.SortFunc(entries, func(a, b indexEntry) int {
		return strings.Compare(a.due+"\x00"+a.pk+"\x00"+a.sk, b.due+"\x00"+b.pk+"\x00"+b.sk)
	})
	var out []store.Due
	for _, e := range entries {
		if d, ok := store.ParseDue(e.pk, e.sk, e.due); ok {
			out = append(out, d)
			if len(out) == limit {
				break
			}
		}
	}
	return out, nil
}

// Redrive puts ev into the inbox of a run found due, on condition that its
// run item is still due at d.At and ev is not there yet
// (store.ErrConflict otherwise).
func (s *Sweeps) Redrive(ctx context.Context, d store.Due, ev store.Event) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	it, err := s.newEvent(ev)
	if err != nil {
		return fmt.Errorf("store: redrive %s/%d/%d: %w", d.WorkflowID, d.InstanceID, d.RunID, err)
	}
	pk := layout.RunPK(d.WorkflowID, d.InstanceID)
	err = s.transactLocked([]write{
		{pk: pk, sk: layout.RunSK(d.RunID), cond: func(cur any) bool {
			r, ok := cur.(*runItem)
			return ok && r.sweepAt > 0 && sweepSK(r.sweepAt) == sweepSK(d.At)
		}},
		putIfAbsent(pk, layout.EventSK(d.RunID, ev.ID), it),
	})
	if _, ok := asCancelled(err); ok {
		return fmt.Errorf("store: redrive %s/%d/%d: %w", d.WorkflowID, d.InstanceID, d.RunID, store.ErrConflict)
	}
	if err != nil {
		return fmt.Errorf("store: redrive %s/%d/%d: %w", d.WorkflowID, d.InstanceID, d.RunID, err)
	}
	return nil
}

// UnsweepEvents takes a run's pending inbox events out of the sweep index;
// they stay pending.
func (s *Sweeps) UnsweepEvents(ctx context.Context, wf string, inst, run int64) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	defer s.lock()()
	pk := layout.RunPK(wf, inst)
	keys, _ := s.t.run(query{pk: pk, prefix: layout.EventPrefix(run)})
	for _, sk := range keys {
		e := s.t.get(pk, sk).(*eventItem)
		if e.swept {
			n := *e
			n.swept, n.due = false, 0
			s.t.set(pk, sk, &n)
		}
	}
	return nil
}
