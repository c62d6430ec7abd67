package memstore

import (
	"context"
	"fmt"
	"time"

	"github.com/maestro-serverless/maestro/store"
)

// PutAccess replaces a workflow's grant, conditioned on the head read and
// retried on a lost race: store.ErrNotFound when the workflow does not
// exist, a *store.ItemTooLargeError when the head would pass the limit,
// and an error for an empty grant.
func (s *Definitions) PutAccess(ctx context.Context, workflowID string, grant []byte, now time.Time, extra ...store.Message) error {
	if len(grant) == 0 {
		return fmt.Errorf("store: access of %s: an empty grant", workflowID)
	}
	acl := clone(grant)
	for range conflictAttempts {
		head, err := s.GetHead(ctx, workflowID)
		if err != nil {
			return err
		}
		err = s.updateHead(workflowID, headV(head), nil, func(n *headItem) {
			n.acl, n.modifyTime = acl, now.UnixMilli()
		})
		if err == nil {
			return nil
		}
		if _, ok := asCancelled(err); !ok {
			return fmt.Errorf("store: access of %s: %w", workflowID, err)
		}
	}
	return fmt.Errorf("store: access of %s: %w after 20 attempts", workflowID, store.ErrConflict)
}
