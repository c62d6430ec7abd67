package memstore

import (
	"context"
	"fmt"

	"github.com/maestro-serverless/maestro/store"
	"github.com/maestro-serverless/maestro/store/internal/layout"
)

// GetJob returns the hash of the task token whose attempt job is,
// store.ErrNotFound when no attempt recorded the job.
func (s *Tasks) GetJob(ctx context.Context, job string) (hash string, err error) {
	if err := ctxErr(ctx); err != nil {
		return "", err
	}
	defer s.lock()()
	it, ok := s.t.get(layout.JobPK(job), layout.JobSK).(*jobItem)
	if !ok {
		return "", store.ErrNotFound
	}
	return it.hash, nil
}

// PutTaskToken records that the token hashed as hash ends attempt ref; a
// hash already stored is an error (not a sentinel: package store's is
// DynamoDB's failed condition).
func (s *Tasks) PutTaskToken(ctx context.Context, hash string, ref store.AttemptRef) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	defer s.lock()()
	it := &taskItem{ref: ref, created: s.now().UnixMilli()}
	if err := s.t.one(putIfAbsent(layout.TaskPK(hash), layout.TaskSK, it)); err != nil {
		return fmt.Errorf("store: put task token for %s: %w", ref, err)
	}
	return nil
}

// GetTaskToken reads the token hashed as hash; store.ErrNotFound when
// there is none.
func (s *Tasks) GetTaskToken(ctx context.Context, hash string) (*store.TaskToken, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	defer s.lock()()
	it, ok := s.t.get(layout.TaskPK(hash), layout.TaskSK).(*taskItem)
	if !ok {
		return nil, store.ErrNotFound
	}
	return &store.TaskToken{Ref: it.ref, Created: it.created, Used: it.used, Result: it.result}, nil
}

// WaitForTask marks attempt ref, claimed by claim, as waiting for the task
// token hashed as hash and puts ev in its run's inbox, at once (with job,
// the job's record too): store.ErrClaimLost when claim no longer holds a
// RUNNING attempt; nothing, and no error, when ev is in the inbox already
// (a retry).
func (s *Tasks) WaitForTask(ctx context.Context, ref store.AttemptRef, claim, hash, job string, ev store.Event) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	evItem, err := s.newEvent(ev)
	if err != nil {
		return fmt.Errorf("store: wait for task of %s: %w", ref, err)
	}
	pk, sk := refKey(ref)
	ws := []write{
		{pk: pk, sk: sk, cond: func(cur any) bool { return holds(cur, claim) }, apply: func(cur any) (any, error) {
			n := cur.(*attemptItem).copy()
			n.wait, n.hasWait = hash, true
			return n, nil
		}},
		putIfAbsent(layout.RunPK(ref.WorkflowID, ref.InstanceID), layout.EventSK(ref.RunID, ev.ID), evItem),
	}
	if job != "" {
		ws = append(ws, put(layout.JobPK(job), layout.JobSK, &jobItem{hash: hash}))
	}
	err = s.transactLocked(ws)
	if c, ok := asCancelled(err); ok {
		if c.at(0) {
			return fmt.Errorf("store: wait for task of %s: %w", ref, store.ErrClaimLost)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("store: wait for task of %s: %w", ref, err)
	}
	return nil
}

// UseTaskToken marks the token hashed as hash used with result and puts ev
// in its run's inbox, at once; store.ErrTaskTokenUsed (and nothing
// written) when the token was used already or never stored.
func (s *Tasks) UseTaskToken(ctx context.Context, hash, result string, ref store.AttemptRef, ev store.Event) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	evItem, err := s.newEvent(ev)
	if err != nil {
		return fmt.Errorf("store: use task token for %s: %w", ref, err)
	}
	now := s.now().UnixMilli()
	err = s.transactLocked([]write{
		{pk: layout.TaskPK(hash), sk: layout.TaskSK,
			cond: func(cur any) bool { t, ok := cur.(*taskItem); return ok && !t.hasUsed },
			apply: func(cur any) (any, error) {
				n := *cur.(*taskItem)
				n.used, n.hasUsed, n.result = now, true, result
				return &n, nil
			}},
		put(layout.RunPK(ref.WorkflowID, ref.InstanceID), layout.EventSK(ref.RunID, ev.ID), evItem),
	})
	if c, ok := asCancelled(err); ok && c.at(0) {
		return store.ErrTaskTokenUsed
	}
	if err != nil {
		return fmt.Errorf("store: use task token for %s: %w", ref, err)
	}
	return nil
}
