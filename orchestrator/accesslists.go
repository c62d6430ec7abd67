package orchestrator

import (
	"context"

	"github.com/maestro-serverless/maestro/store"
)

// maxFilteredPages bounds the store pages one filtered listing reads to
// fill a page with workflows the caller may read: past it the page is
// shorter, and its cursor goes on from where the reading stopped.
const maxFilteredPages = 10

// headLister lists workflow heads from a cursor (exclusive), in one
// direction (store.Definitions.ListWorkflows or ListWorkflowsBefore).
type headLister func(ctx context.Context, cursor string, limit int) ([]*store.WorkflowHead, string, error)

// readableHeads pages through list from cursor and keeps the heads the
// caller may read (Access.CanRead), until limit are kept, the listing
// ends or maxFilteredPages were read. next continues after the last head
// read; "" when the listing ended.
func (a *Access) readableHeads(ctx context.Context, list headLister, cursor string, limit int) (heads []*store.WorkflowHead, next string, err error) {
	if !a.settings.Enforce {
		return list(ctx, cursor, limit)
	}
	next = cursor
	for range maxFilteredPages {
		page, after, err := list(ctx, next, limit)
		if err != nil {
			return nil, "", err
		}
		for i, h := range page {
			ok, err := a.CanRead(ctx, h)
			if err != nil {
				return nil, "", err
			}
			if ok {
				heads = append(heads, h)
			}
			if len(heads) == limit {
				if i < len(page)-1 || after != "" {
					return heads, h.WorkflowID, nil
				}
				return heads, "", nil
			}
		}
		if after == "" {
			return heads, "", nil
		}
		next = after
	}
	return heads, next, nil
}
