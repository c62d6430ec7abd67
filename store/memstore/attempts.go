package memstore

import (
	"context"
	"fmt"
	"time"

	"github.com/maestro-serverless/maestro/store"
	"github.com/maestro-serverless/maestro/store/internal/layout"
)

// endOutbox is the outbox of an attempt whose worker wrote its end.
const endOutbox = "end"

// refOf parses the keys of an attempt item.
func refOf(pk, sk string) (store.AttemptRef, error) {
	wf, inst, err := layout.ParseRunPK(pk)
	if err != nil {
		return store.AttemptRef{}, err
	}
	run, step, n, err := layout.ParseAttemptSK(sk)
	if err != nil {
		return store.AttemptRef{}, err
	}
	return store.AttemptRef{WorkflowID: wf, InstanceID: inst, RunID: run, StepID: step, Attempt: n}, nil
}

// attemptAt returns the attempt item of ref, or nil. The caller holds the
// lock.
func (s *base) attemptAt(ref store.AttemptRef) *attemptItem {
	it, _ := s.t.get(refKey(ref)).(*attemptItem)
	return it
}

// ClaimAttempt claims attempt ref, which must be RUNNING, not waiting for
// its task token and not held by an unexpired claim, for token until
// until, and returns the outcome a holder recorded. A *store.ClaimError
// says why it could not; store.ErrNotFound that the item does not exist.
// With start, a missing item is the attempt RUNNING (a deferred start)
// and the claim creates it as start describes.
func (s *Attempts) ClaimAttempt(ctx context.Context, ref store.AttemptRef, token string, now, until time.Time, start *store.AttemptStart) (outcome []byte, err error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	if start != nil {
		if err := needBody(start.Body, "start body"); err != nil {
			return nil, fmt.Errorf("store: claim %s: %w", ref, err)
		}
	}
	at := now.UnixMilli()
	claimable := func(a *attemptItem) bool {
		return a.status == statusRunning && !a.hasWait && (!a.hasLease || a.lease < at)
	}
	pk, sk := refKey(ref)
	defer s.lock()()
	err = s.t.one(write{pk: pk, sk: sk,
		cond: func(cur any) bool {
			a, ok := cur.(*attemptItem)
			return ok && claimable(a) || !ok && start != nil
		},
		apply: func(cur any) (any, error) {
			n := &attemptItem{}
			if a, ok := cur.(*attemptItem); ok {
				n = a.copy()
			} else {
				n.status, n.tl = statusRunning, strs(start.Timeline)
			}
			if start != nil && n.body == nil {
				n.body = clone(start.Body)
			}
			n.claim, n.hasClaim, n.lease, n.hasLease = token, true, until.UnixMilli(), true
			outcome = clone(n.outcome)
			return n, nil
		}})
	if err == nil {
		return outcome, nil
	}
	if _, ok := asCancelled(err); !ok {
		return nil, fmt.Errorf("store: claim %s: %w", ref, err)
	}
	a := s.attemptAt(ref)
	if a == nil {
		return nil, fmt.Errorf("store: claim %s: %w", ref, store.ErrNotFound)
	}
	return nil, &store.ClaimError{Done: a.status != statusRunning || a.hasWait, Until: a.lease}
}

// holds says whether token holds a claim on a RUNNING attempt.
func holds(cur any, token string) bool {
	a, ok := cur.(*attemptItem)
	return ok && a.hasClaim && a.claim == token && a.status == statusRunning
}

// RecordOutcome records attempt ref's outcome on its item, provided token
// still holds its claim and it is RUNNING (store.ErrClaimLost otherwise).
func (s *Attempts) RecordOutcome(ctx context.Context, ref store.AttemptRef, token string, outcome []byte) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	if err := needBody(outcome, "outcome"); err != nil {
		return fmt.Errorf("store: record outcome of %s: %w", ref, err)
	}
	o := clone(outcome)
	pk, sk := refKey(ref)
	defer s.lock()()
	err := s.t.one(write{pk: pk, sk: sk, cond: func(cur any) bool { return holds(cur, token) }, apply: func(cur any) (any, error) {
		n := cur.(*attemptItem).copy()
		n.outcome = o
		return n, nil
	}})
	if _, ok := asCancelled(err); ok {
		return fmt.Errorf("store: record outcome of %s: %w", ref, store.ErrClaimLost)
	}
	if err != nil {
		return fmt.Errorf("store: record outcome of %s: %w", ref, err)
	}
	return nil
}

// PeekAttempt reads an attempt's status, claim lease and whether it waits
// for its task token; store.ErrNotFound without its item.
func (s *Attempts) PeekAttempt(ctx context.Context, ref store.AttemptRef) (store.AttemptPeek, error) {
	if err := ctxErr(ctx); err != nil {
		return store.AttemptPeek{}, err
	}
	defer s.lock()()
	a := s.attemptAt(ref)
	if a == nil {
		return store.AttemptPeek{}, store.ErrNotFound
	}
	return store.AttemptPeek{Status: a.status, Lease: a.lease, Waiting: a.hasWait}, nil
}

// dedupe returns refs without repeats, in order.
func dedupe(refs []store.AttemptRef) []store.AttemptRef {
	seen := make(map[store.AttemptRef]bool, len(refs))
	out := make([]store.AttemptRef, 0, len(refs))
	for _, r := range refs {
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	return out
}

// StartedAttempts reports which of refs a worker has claimed or that have
// ended (a claim, or a status other than RUNNING).
func (s *Attempts) StartedAttempts(ctx context.Context, refs []store.AttemptRef) (map[store.AttemptRef]bool, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	defer s.lock()()
	out := make(map[store.AttemptRef]bool, len(refs))
	for _, r := range dedupe(refs) {
		pk, sk := refKey(r)
		a, ok := s.t.get(pk, sk).(*attemptItem)
		if !ok || !a.hasClaim && a.status == statusRunning {
			continue
		}
		if ref, err := refOf(pk, sk); err == nil {
			out[ref] = true
		}
	}
	return out, nil
}

// FinishAttempt writes attempt ref's end — status, body, its entries
// appended, their count, and with wake the wake that names it — and drops
// its claim, provided token still holds it and it is RUNNING
// (store.ErrClaimLost otherwise).
func (s *Attempts) FinishAttempt(ctx context.Context, ref store.AttemptRef, token string, end store.AttemptEnd, wake bool) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	body, err := endBody(ref, end)
	if err != nil {
		return err
	}
	entries := strs(end.Timeline)
	pk, sk := refKey(ref)
	defer s.lock()()
	err = s.t.one(write{pk: pk, sk: sk, cond: func(cur any) bool { return holds(cur, token) }, apply: func(cur any) (any, error) {
		n := cur.(*attemptItem).copy()
		n.status, n.body = end.Status, body
		n.tl = append(n.tl[:len(n.tl):len(n.tl)], entries...)
		n.wn, n.hasWN = int64(len(entries)), true
		if wake {
			n.ob = endOutbox
		}
		n.claim, n.hasClaim, n.lease, n.hasLease = "", false, 0, false
		return n, nil
	}})
	return finishError(ref, err)
}

// endBody is an end's body, refused past the item size limit (or nil).
func endBody(ref store.AttemptRef, end store.AttemptEnd) ([]byte, error) {
	if len(end.Body) > store.MaxItemBytes {
		if n := storedLen(end.Body); n > store.MaxItemBytes {
			return nil, fmt.Errorf("store: finish %s: %w", ref, tooLarge("step attempt "+ref.StepID, n))
		}
	}
	if err := needBody(end.Body, "end body"); err != nil {
		return nil, fmt.Errorf("store: finish %s: %w", ref, err)
	}
	return clone(end.Body), nil
}

func finishError(ref store.AttemptRef, err error) error {
	if _, ok := asCancelled(err); ok {
		return fmt.Errorf("store: finish %s: %w", ref, store.ErrClaimLost)
	}
	if err != nil {
		return fmt.Errorf("store: finish %s: %w", ref, err)
	}
	return nil
}

// FinishDeferredAttempt writes attempt ref's whole item, start and end,
// for a worker that ran it unclaimed, on the item not existing
// (store.ErrClaimLost otherwise).
func (s *Attempts) FinishDeferredAttempt(ctx context.Context, ref store.AttemptRef, start store.AttemptStart, end store.AttemptEnd, wake bool) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	body, err := endBody(ref, end)
	if err != nil {
		return err
	}
	it := &attemptItem{status: end.Status, body: body, tl: append(strs(start.Timeline), strs(end.Timeline)...),
		wn: int64(len(end.Timeline)), hasWN: true}
	if wake {
		it.ob = endOutbox
	}
	pk, sk := refKey(ref)
	defer s.lock()()
	return finishError(ref, s.t.one(putIfAbsent(pk, sk, it)))
}

// WakeEnd adds the wake to the end attempt ref's worker wrote without one,
// when that end is still there.
func (s *Attempts) WakeEnd(ctx context.Context, ref store.AttemptRef) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	pk, sk := refKey(ref)
	defer s.lock()()
	err := s.t.one(write{pk: pk, sk: sk,
		cond: func(cur any) bool { a, ok := cur.(*attemptItem); return ok && a.hasWN },
		apply: func(cur any) (any, error) {
			n := cur.(*attemptItem).copy()
			n.ob = endOutbox
			return n, nil
		}})
	if _, ok := asCancelled(err); ok || err == nil {
		return nil
	}
	return fmt.Errorf("store: wake the end of %s: %w", ref, err)
}

// FinishedAttempts returns those of refs whose item carries a worker's end
// or recorded outcome, in refs' order, once each.
func (s *Attempts) FinishedAttempts(ctx context.Context, refs []store.AttemptRef) ([]store.FinishedAttempt, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	defer s.lock()()
	out := make([]store.FinishedAttempt, 0, len(refs))
	for _, r := range dedupe(refs) {
		pk, sk := refKey(r)
		a, ok := s.t.get(pk, sk).(*attemptItem)
		if !ok || a.outcome == nil && a.wn == 0 {
			continue
		}
		ref, err := refOf(pk, sk)
		if err != nil {
			return nil, err
		}
		if ref != r {
			continue // package store finds it under the reference its keys parse as
		}
		if a.wn < 0 || a.wn > int64(len(a.tl)) {
			return nil, fmt.Errorf("store: attempt %s: %d worker entries of a timeline of %d", ref, a.wn, len(a.tl))
		}
		out = append(out, store.FinishedAttempt{Ref: r, Attempt: a.attempt(ref.StepID, ref.Attempt),
			Outcome: clone(a.outcome), WorkerEntries: int(a.wn)})
	}
	return out, nil
}

// GetAttempt returns one attempt of a step (0: the latest, by its key),
// store.ErrNotFound if none.
func (s *Attempts) GetAttempt(ctx context.Context, wf string, inst, run int64, step string, attempt int64) (*store.Attempt, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	q := query{pk: layout.RunPK(wf, inst), prefix: layout.AttemptPrefix(run) + step + "#", desc: true, limit: 1}
	if attempt > 0 {
		q = query{pk: layout.RunPK(wf, inst), prefix: layout.AttemptSK(run, step, attempt), limit: 1}
	}
	defer s.lock()()
	list, err := s.attempts(q)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 || list[0].StepID != step {
		return nil, store.ErrNotFound
	}
	return &list[0], nil
}

// attempts returns the attempts q reads.
func (s *base) attempts(q query) ([]store.Attempt, error) {
	keys, _ := s.t.run(q)
	var out []store.Attempt
	for _, sk := range keys {
		_, step, n, err := layout.ParseAttemptSK(sk)
		if err != nil {
			return nil, err
		}
		out = append(out, s.t.get(q.pk, sk).(*attemptItem).attempt(step, n))
	}
	return out, nil
}

// GetAttempts reads many step attempts: those that exist, by reference. A
// reference twice among a hundred is refused, as BatchGetItem refuses it.
func (s *Attempts) GetAttempts(ctx context.Context, refs []store.AttemptRef) (map[store.AttemptRef]*store.Attempt, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	keys := make([]itemKey, len(refs))
	for i, r := range refs {
		keys[i].pk, keys[i].sk = refKey(r)
	}
	if err := checkBatch(keys, batchGetKeys); err != nil {
		return nil, fmt.Errorf("store: get attempts: %w", err)
	}
	defer s.lock()()
	out := make(map[store.AttemptRef]*store.Attempt, len(refs))
	for _, k := range keys {
		a, ok := s.t.get(k.pk, k.sk).(*attemptItem)
		if !ok {
			continue
		}
		ref, err := refOf(k.pk, k.sk)
		if err != nil {
			return nil, err
		}
		at := a.attempt(ref.StepID, ref.Attempt)
		out[ref] = &at
	}
	return out, nil
}

// ListAttempts returns every step attempt of a run, by step id then
// attempt (their keys' order).
func (s *Attempts) ListAttempts(ctx context.Context, wf string, inst, run int64) ([]store.Attempt, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	defer s.lock()()
	return s.attempts(query{pk: layout.RunPK(wf, inst), prefix: layout.AttemptPrefix(run)})
}
