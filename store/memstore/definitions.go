package memstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/maestro-serverless/maestro/caller"
	"github.com/maestro-serverless/maestro/store"
	"github.com/maestro-serverless/maestro/store/internal/layout"
)

// conflictAttempts is how often package store retries a head change that
// lost a race before it returns ErrConflict.
const conflictAttempts = 20

// needBody refuses a nil body as DynamoDB refuses the empty attribute
// value package store writes for it (an empty one is stored).
func needBody(b []byte, what string) error {
	if b == nil {
		return validation("supplied AttributeValue is empty, must contain exactly one of the supported datatypes (%s)", what)
	}
	return nil
}

// head returns workflow wf's head as package store reads it, or nil. The
// caller holds the lock.
func (s *base) head(wf string) *store.WorkflowHead {
	h, ok := s.t.get(layout.WorkflowPK(wf), layout.HeadSK).(*headItem)
	if !ok {
		return nil
	}
	return headOf(wf, h)
}

func headOf(wf string, h *headItem) *store.WorkflowHead {
	out := &store.WorkflowHead{WorkflowID: wf, Latest: h.latest, Active: h.active, NextInstance: h.next,
		Properties: clone(h.props), CreateTime: h.createTime, ModifyTime: h.modifyTime, Access: clone(h.acl)}
	setHeadV(out, h.v)
	return out
}

// GetHead returns a workflow's head, store.ErrNotFound when the workflow
// does not exist.
func (s *Definitions) GetHead(ctx context.Context, workflowID string) (*store.WorkflowHead, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	defer s.lock()()
	if h := s.head(workflowID); h != nil {
		return h, nil
	}
	return nil, store.ErrNotFound
}

// ListWorkflows returns up to limit workflow heads in id order after the
// workflow id cursor, and the next page's cursor ("" after the last page;
// a page that ends exactly at the last workflow still has one, as
// DynamoDB's query says more may follow).
func (s *Definitions) ListWorkflows(ctx context.Context, cursor string, limit int) ([]*store.WorkflowHead, string, error) {
	return s.listDirectory(ctx, cursor, limit, false)
}

// ListWorkflowsBefore is ListWorkflows backwards: descending id order,
// before cursor ("" from the last id).
func (s *Definitions) ListWorkflowsBefore(ctx context.Context, cursor string, limit int) ([]*store.WorkflowHead, string, error) {
	return s.listDirectory(ctx, cursor, limit, true)
}

// listDirectory lists the heads after cursor in id order, or before it
// in descending order when backward is set.
func (s *Definitions) listDirectory(ctx context.Context, cursor string, limit int, backward bool) ([]*store.WorkflowHead, string, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, "", err
	}
	if limit < 1 {
		return nil, "", wrapf(validation("limit must be at least 1"), "store: list workflows")
	}
	defer s.lock()()
	var ids []string
	for pk, p := range s.t.parts {
		wf, ok := strings.CutPrefix(pk, "WF#")
		if ok && (backward && (cursor == "" || wf < cursor) || !backward && wf > cursor) {
			if _, ok := p.items[layout.HeadSK].(*headItem); ok {
				ids = append(ids, wf)
			}
		}
	}
	slices.Sort(ids)
	if backward {
		slices.Reverse(ids)
	}
	more := len(ids) >= limit
	if more {
		ids = ids[:limit]
	}
	heads := make([]*store.WorkflowHead, 0, len(ids))
	for _, id := range ids {
		heads = append(heads, s.head(id))
	}
	next := ""
	if more && len(ids) > 0 {
		next = ids[len(ids)-1]
	}
	return heads, next, nil
}

// CreateVersion stores the next version of a workflow (continuing a
// deleted one's numbers), making it active if asked, with its signal
// subscriptions, conditioned on the head read; it retries a lost race and
// returns the version number. store.ErrDeleting while the id is being
// deleted. A new head gets nv.Access; nv.Check, when set, is asked before
// every attempt (without the lock: it may call the store) and its error
// returned as it is.
func (s *Definitions) CreateVersion(ctx context.Context, nv store.NewVersion) (int64, error) {
	for range conflictAttempts {
		if err := ctxErr(ctx); err != nil {
			return 0, err
		}
		head, exists := s.headForVersion(nv)
		if nv.Check != nil {
			read := *head
			if err := nv.Check(&read, exists); err != nil {
				return 0, err
			}
		}
		version := head.Latest + 1
		after := *head
		after.Latest = version
		if nv.Activate {
			after.Active = version
		}
		if nv.Properties != nil {
			after.Properties = nv.Properties
		}
		want, err := wanted(ctx, &after, nv.Subscriptions)
		if err != nil {
			return 0, err
		}
		err = s.writeVersion(ctx, nv, head, exists, &after, want)
		if err == nil {
			return version, nil
		}
		c, ok := asCancelled(err)
		switch {
		case ok && c.at(2):
			return 0, fmt.Errorf("store: create version of %s: %w", nv.WorkflowID, store.ErrDeleting)
		case ok && c.at(1) && !c.at(0):
			// The version exists under a head that did not move: no retry
			// can succeed (an inline workflow's id has versions, no head).
			return 0, fmt.Errorf("store: create version of %s: version %d exists without a head to match: %w", nv.WorkflowID, version, store.ErrConflict)
		case !ok:
			return 0, fmt.Errorf("store: create version of %s: %w", nv.WorkflowID, err)
		}
	}
	return 0, fmt.Errorf("store: create version of %s: %w after 20 attempts", nv.WorkflowID, store.ErrConflict)
}

// headForVersion is the head a new version is written over: the stored
// one, or a new one continuing a deleted workflow's sequences.
func (s *Definitions) headForVersion(nv store.NewVersion) (*store.WorkflowHead, bool) {
	defer s.lock()()
	if h := s.head(nv.WorkflowID); h != nil {
		return h, true
	}
	head := &store.WorkflowHead{WorkflowID: nv.WorkflowID, NextInstance: 1, CreateTime: nv.Now.UnixMilli(), Access: clone(nv.Access)}
	if tomb, ok := s.t.get(layout.WorkflowPK(nv.WorkflowID), layout.TombSK).(*tombItem); ok {
		head.Latest, head.NextInstance = tomb.latest, max(tomb.next, 1)
	}
	return head, false
}

// wanted returns the signal names subs says head has; nil subs writes none.
func wanted(ctx context.Context, head *store.WorkflowHead, subs store.SubscriptionsFunc) ([]string, error) {
	if subs == nil {
		return nil, nil
	}
	want, err := subs(ctx, head)
	if err != nil {
		return nil, err
	}
	if want == nil {
		want = []string{}
	}
	return want, nil
}

// writeVersion writes version after.Latest over head: the head's update,
// the version item, for a new workflow the check that its id is not
// being deleted (third), and the subscriptions.
func (s *Definitions) writeVersion(ctx context.Context, nv store.NewVersion, head *store.WorkflowHead, exists bool, after *store.WorkflowHead, want []string) error {
	if err := needBody(nv.Definition, "definition"); err != nil {
		return err
	}
	now := nv.Now.UnixMilli()
	pk := layout.WorkflowPK(nv.WorkflowID)
	hv := headV(head)
	props := clone(after.Properties)
	var acl []byte
	if len(nv.Access) > 0 {
		acl = clone(nv.Access)
	}
	headW := write{pk: pk, sk: layout.HeadSK,
		cond: func(cur any) bool {
			if !exists {
				return cur == nil
			}
			h, ok := cur.(*headItem)
			return ok && h.v == hv
		},
		apply: func(cur any) (any, error) {
			n := &headItem{createTime: now, next: head.NextInstance, acl: acl}
			if h, ok := cur.(*headItem); ok {
				c := *h
				n = &c
			}
			n.latest, n.active, n.modifyTime, n.v = after.Latest, after.Active, now, hv+1
			if len(props) > 0 {
				n.props = props
			}
			return n, nil
		}}
	ver := &versionItem{def: clone(nv.Definition), createTime: now, principal: caller.From(ctx)}
	ws := []write{headW, putIfAbsent(pk, layout.VersionSK(after.Latest), ver)}
	if !exists {
		ws = append(ws, write{pk: pk, sk: layout.PurgeSK, cond: absent})
	}
	defer s.lock()()
	subs := s.subscriptionWrites(nv.WorkflowID, want)
	ws = append(ws, subs...)
	if len(ws) > maxTransactItems {
		return fmt.Errorf("store: create version of %s needs %d writes, more than DynamoDB's %d per transaction", nv.WorkflowID, len(ws), maxTransactItems)
	}
	return s.t.transact(ws)
}

// GetVersion returns one stored version, store.ErrNotFound if it does not
// exist.
func (s *Definitions) GetVersion(ctx context.Context, workflowID string, version int64) (*store.VersionRecord, error) {
	return lookup(s.base, ctx, layout.WorkflowPK(workflowID), layout.VersionSK(version), func(v *versionItem) (*store.VersionRecord, error) {
		return &store.VersionRecord{WorkflowID: workflowID, Version: version, Definition: clone(v.def),
			CreateTime: v.createTime, Principal: v.principal}, nil
	})
}

// SetActive makes version the active one (0: none), store.ErrNotFound when
// the workflow or the version does not exist; it retries a lost race.
func (s *Definitions) SetActive(ctx context.Context, workflowID string, version int64, now time.Time, subs store.SubscriptionsFunc, extra ...store.Message) error {
	for range conflictAttempts {
		head, err := s.GetHead(ctx, workflowID)
		if err != nil {
			return err
		}
		if version > head.Latest {
			return store.ErrNotFound
		}
		after := *head
		after.Active = version
		want, err := wanted(ctx, &after, subs)
		if err != nil {
			return err
		}
		err = s.updateHead(workflowID, headV(head), want, func(n *headItem) {
			n.active, n.modifyTime = version, now.UnixMilli()
		})
		if err == nil {
			return nil
		}
		if _, ok := asCancelled(err); !ok {
			return fmt.Errorf("store: set active version of %s: %w", workflowID, err)
		}
	}
	return fmt.Errorf("store: set active version of %s: %w after 20 attempts", workflowID, store.ErrConflict)
}

// UpdateProperties replaces a workflow's properties, conditioned on the
// head version the caller read (store.ErrConflict when it moved on). head
// must be one the memstore returned, or a copy of one.
func (s *Definitions) UpdateProperties(ctx context.Context, head *store.WorkflowHead, props []byte, now time.Time, subs store.SubscriptionsFunc, extra ...store.Message) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	after := *head
	after.Properties = props
	want, err := wanted(ctx, &after, subs)
	if err != nil {
		return err
	}
	if err := needBody(props, "properties"); err != nil {
		return fmt.Errorf("store: properties of %s: %w", head.WorkflowID, err)
	}
	p := clone(props)
	err = s.updateHead(head.WorkflowID, headV(head), want, func(n *headItem) {
		n.props, n.modifyTime = p, now.UnixMilli()
	})
	if _, ok := asCancelled(err); ok {
		return fmt.Errorf("store: properties of %s: %w", head.WorkflowID, store.ErrConflict)
	}
	if err != nil {
		return fmt.Errorf("store: properties of %s: %w", head.WorkflowID, err)
	}
	return nil
}

// updateHead applies change to workflow wf's head, conditioned on its
// version being v, bumping it, with the writes that make its signal
// subscriptions want (none when want is nil).
func (s *Definitions) updateHead(wf string, v int64, want []string, change func(*headItem)) error {
	defer s.lock()()
	w := write{pk: layout.WorkflowPK(wf), sk: layout.HeadSK,
		cond: func(cur any) bool { h, ok := cur.(*headItem); return ok && h.v == v },
		apply: func(cur any) (any, error) {
			n := *cur.(*headItem)
			change(&n)
			n.v = v + 1
			return &n, nil
		}}
	ws := append([]write{w}, s.subscriptionWrites(wf, want)...)
	if len(ws) > maxTransactItems {
		return fmt.Errorf("store: a change of %s needs %d writes, more than DynamoDB's %d per transaction", layout.WorkflowPK(wf), len(ws), maxTransactItems)
	}
	return s.t.transact(ws)
}

// DeleteWorkflow removes a workflow's head and records its deletion, in
// one write: store.ErrNotFound when it does not exist, store.ErrBusy when
// a run holds a slot, store.ErrDeleting when a deletion is under way,
// store.ErrConflict when the head changed meanwhile.
func (s *Definitions) DeleteWorkflow(ctx context.Context, wf string, next store.Message, now time.Time, extra ...store.Message) error {
	head, err := s.GetHead(ctx, wf)
	if err != nil {
		return err
	}
	pk, v := layout.WorkflowPK(wf), headV(head)
	ws := []write{
		{pk: pk, sk: layout.HeadSK, cond: func(cur any) bool { h, ok := cur.(*headItem); return ok && h.v == v },
			apply: func(any) (any, error) { return nil, nil }},
		{pk: pk, sk: layout.SlotSK, cond: func(cur any) bool { r, ok := cur.(*slotItem); return !ok || !r.hasRunning || r.running <= 0 }},
		putIfAbsent(pk, layout.PurgeSK, &purgeItem{createTime: now.UnixMilli()}),
		put(pk, layout.TombSK, &tombItem{latest: head.Latest, next: head.NextInstance, deleteTime: now.UnixMilli()}),
	}
	defer s.lock()()
	ws = append(ws, s.subscriptionWrites(wf, []string{})...)
	if len(ws) > maxTransactItems {
		return fmt.Errorf("store: delete %s needs %d writes, more than DynamoDB's %d per transaction", wf, len(ws), maxTransactItems)
	}
	err = s.t.transact(ws)
	if err == nil {
		return nil
	}
	c, ok := asCancelled(err)
	switch {
	case ok && c.at(2):
		return fmt.Errorf("store: delete %s: %w", wf, store.ErrDeleting)
	case ok && c.at(0):
		return fmt.Errorf("store: delete %s (changed meanwhile): %w", wf, store.ErrConflict)
	case ok && c.at(1):
		return fmt.Errorf("store: delete %s: %w", wf, store.ErrBusy)
	}
	return fmt.Errorf("store: delete %s: %w", wf, err)
}

// purgePage is how many keys one page of a purge reads.
const purgePage = 100

// PurgeWorkflow deletes up to budget items of a deleted workflow — a page
// of its partition's items at a time, each instance's run partition
// before its summary — as package store counts them; done once nothing is
// left, the deletion job included.
func (s *Definitions) PurgeWorkflow(ctx context.Context, wf string, budget int) (done bool, deleted int, err error) {
	if err := ctxErr(ctx); err != nil {
		return false, 0, err
	}
	defer s.lock()()
	pk := layout.WorkflowPK(wf)
	q := query{pk: pk, limit: purgePage}
	for {
		sks, more := s.t.run(q)
		var keys []string
		for _, sk := range sks {
			if sk == layout.PurgeSK || sk == layout.TombSK {
				continue
			}
			if rest, ok := strings.CutPrefix(sk, "I#"); ok {
				var inst int64
				if _, err := fmt.Sscan(rest, &inst); err != nil {
					return false, deleted, fmt.Errorf("store: not an instance key: %q", sk)
				}
				n, complete := s.purgePartition(layout.RunPK(wf, inst), budget-deleted)
				deleted += n
				if !complete {
					return false, deleted, nil
				}
			}
			keys = append(keys, sk)
		}
		for _, sk := range keys {
			s.t.set(pk, sk, nil)
		}
		deleted += len(keys)
		if deleted >= budget {
			return false, deleted, nil
		}
		if !more {
			break
		}
		q.start, q.hasStart = sks[len(sks)-1], true
	}
	s.t.set(pk, layout.PurgeSK, nil)
	return true, deleted, nil
}

// purgePartition deletes up to budget items of partition pk, a page at a
// time; complete reports that a page found it empty.
func (s *Definitions) purgePartition(pk string, budget int) (n int, complete bool) {
	for n < budget {
		sks, _ := s.t.run(query{pk: pk, limit: min(purgePage, budget-n)})
		if len(sks) == 0 {
			return n, true
		}
		for _, sk := range sks {
			s.t.set(pk, sk, nil)
		}
		n += len(sks)
	}
	return n, false
}

// RearmPurge records purge round round of workflow wf (its outbox carries
// the next round); nothing when the deletion job is gone.
func (s *Definitions) RearmPurge(ctx context.Context, wf string, round int64, next store.Message) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	defer s.lock()()
	err := s.t.one(write{pk: layout.WorkflowPK(wf), sk: layout.PurgeSK, cond: present, apply: func(cur any) (any, error) {
		n := *cur.(*purgeItem)
		n.round = round
		return &n, nil
	}})
	if _, ok := asCancelled(err); ok || err == nil {
		return nil
	}
	return fmt.Errorf("store: rearm purge of %s: %w", wf, err)
}

// subscriptionWrites returns the writes that make workflow wf's signal
// subscriptions exactly want (nil want: no change asked): a T# item per
// name added (since the name's last sequence number), a delete per name
// removed, and the SIGSUBS set; none when nothing changes. The caller
// holds the lock.
func (s *base) subscriptionWrites(wf string, want []string) []write {
	if want == nil {
		return nil
	}
	var have []string
	if it, ok := s.t.get(layout.WorkflowPK(wf), layout.SigSubsSK).(*sigSubsItem); ok {
		have = it.names
	}
	want = slices.Compact(slices.Sorted(slices.Values(want)))
	var ws []write
	for _, n := range want {
		if slices.Contains(have, n) {
			continue
		}
		var since int64
		if seq, ok := s.t.get(layout.SignalPK(n), layout.SigSeqSK).(*sigSeqItem); ok {
			since = seq.n
		}
		ws = append(ws, put(layout.SignalPK(n), layout.SubscriberSK(wf), &subscriptionItem{workflow: wf, since: since}))
	}
	for _, n := range have {
		if !slices.Contains(want, n) {
			ws = append(ws, del(layout.SignalPK(n), layout.SubscriberSK(wf)))
		}
	}
	if len(ws) == 0 {
		return nil
	}
	if len(want) == 0 {
		return append(ws, del(layout.WorkflowPK(wf), layout.SigSubsSK))
	}
	return append(ws, put(layout.WorkflowPK(wf), layout.SigSubsSK, &sigSubsItem{names: want}))
}

// GetVersions returns the versions of a workflow that exist among
// versions, by number.
func (s *Definitions) GetVersions(ctx context.Context, workflowID string, versions []int64) (map[int64]*store.VersionRecord, error) {
	out := make(map[int64]*store.VersionRecord, len(versions))
	for _, v := range versions {
		rec, err := s.GetVersion(ctx, workflowID, v)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out[v] = rec
	}
	return out, nil
}

// GetVersionStamps is GetVersions without the definitions.
func (s *Definitions) GetVersionStamps(ctx context.Context, workflowID string, versions []int64) (map[int64]*store.VersionRecord, error) {
	out, err := s.GetVersions(ctx, workflowID, versions)
	for _, r := range out {
		r.Definition = nil
	}
	return out, err
}
