package memstore

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/maestro-serverless/maestro/store"
	"github.com/maestro-serverless/maestro/store/internal/layout"
)

// backfillItem is WF#<wf>/BF#<id> (store.Backfills).
type backfillItem struct {
	body       []byte
	createTime int64
	v          int64
	outbox     []byte
}

func (b *backfillItem) size(pk, sk string, _ bool) int {
	n := keyAttrs(pk, sk) + len("body") + len(b.body) + len("v") + numSize(b.v) + len("create_time") + numSize(b.createTime)
	if len(b.outbox) > 0 {
		n += len("ob") + len(b.outbox)
	}
	return n
}

func (b *backfillItem) backfill(wf, sk string) *store.Backfill {
	return &store.Backfill{WorkflowID: wf, ID: sk[len(layout.BackfillPrefix):], Body: slices.Clone(b.body), CreateTime: b.createTime, V: b.v}
}

// CreateBackfill stores a new backfill at version 1 (store.Backfills):
// store.ErrConflict when it exists.
func (s *Backfills) CreateBackfill(ctx context.Context, b store.Backfill, outbox []store.Message) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	it := &backfillItem{body: slices.Clone(b.Body), createTime: b.CreateTime, v: 1}
	if len(outbox) > 0 {
		ob, err := json.Marshal(outbox)
		if err != nil {
			return fmt.Errorf("store: outbox: %w", err)
		}
		it.outbox = ob
	}
	defer s.lock()()
	err := s.t.one(putIfAbsent(layout.WorkflowPK(b.WorkflowID), layout.BackfillSK(b.ID), it))
	if _, ok := asCancelled(err); ok {
		return fmt.Errorf("store: create backfill %s/%s: %w", b.WorkflowID, b.ID, store.ErrConflict)
	}
	if err != nil {
		return wrapf(err, "store: create backfill %s/%s", b.WorkflowID, b.ID)
	}
	return nil
}

// PutBackfill replaces a backfill's body at version b.V with version
// b.V+1 (store.Backfills): store.ErrNotFound when there is none,
// store.ErrConflict when its version is another.
func (s *Backfills) PutBackfill(ctx context.Context, b store.Backfill) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	defer s.lock()()
	pk, sk := layout.WorkflowPK(b.WorkflowID), layout.BackfillSK(b.ID)
	cur, ok := s.t.get(pk, sk).(*backfillItem)
	switch {
	case !ok:
		return fmt.Errorf("store: put backfill %s/%s: %w", b.WorkflowID, b.ID, store.ErrNotFound)
	case cur.v != b.V:
		return fmt.Errorf("store: put backfill %s/%s: %w", b.WorkflowID, b.ID, store.ErrConflict)
	}
	it := &backfillItem{body: slices.Clone(b.Body), createTime: b.CreateTime, v: b.V + 1}
	if err := s.t.one(put(pk, sk, it)); err != nil {
		return wrapf(err, "store: put backfill %s/%s", b.WorkflowID, b.ID)
	}
	return nil
}

// GetBackfill returns a backfill, or store.ErrNotFound.
func (s *Backfills) GetBackfill(ctx context.Context, wf, id string) (*store.Backfill, error) {
	sk := layout.BackfillSK(id)
	return lookup(s.base, ctx, layout.WorkflowPK(wf), sk,
		func(it *backfillItem) (*store.Backfill, error) { return it.backfill(wf, sk), nil })
}

// ListBackfills returns a workflow's newest backfills, newest first, at
// most store.MaxBackfillsListed.
func (s *Backfills) ListBackfills(ctx context.Context, wf string) ([]*store.Backfill, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	defer s.lock()()
	pk := layout.WorkflowPK(wf)
	keys, _ := s.t.run(query{pk: pk, prefix: layout.BackfillPrefix, desc: true, limit: store.MaxBackfillsListed})
	out := make([]*store.Backfill, 0, len(keys))
	for _, sk := range keys {
		if it, ok := s.t.get(pk, sk).(*backfillItem); ok {
			out = append(out, it.backfill(wf, sk))
		}
	}
	return out, nil
}
