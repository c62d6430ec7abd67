package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/maestro-serverless/maestro/caller"
	"github.com/maestro-serverless/maestro/events"
	"github.com/maestro-serverless/maestro/store/internal/layout"
)

// ErrBusy is returned by DeleteWorkflow when a run of the workflow holds a
// run-strategy slot.
var ErrBusy = errors.New("store: workflow has runs in progress")

// ErrDeleting is returned when a workflow is being deleted.
var ErrDeleting = errors.New("store: workflow is being deleted")

// DeleteWorkflow removes a workflow's head, so that it no longer exists for
// readers and starts, and records its deletion job with next as its outbox
// (the first purge round), in one transaction. It fails with ErrNotFound
// when the workflow does not exist, ErrBusy when a run holds a slot and
// ErrDeleting when a deletion is already under way.
func (s *Definitions) DeleteWorkflow(ctx context.Context, wf string, next Message, now time.Time, extra ...Message) error {
	head, err := s.GetHead(ctx, wf)
	if err != nil {
		return err
	}
	// The deletion's event rides with the first purge round.
	ev := events.Definition(events.WorkflowDeleted, wf, 0, head.v+1, millis(now))
	ev.Principal = caller.From(ctx)
	body, err := events.EncodeBatch([]events.Event{ev})
	if err != nil {
		return err
	}
	ob, err := json.Marshal(append([]Message{next, {Queue: QueueEvents, Body: body}}, extra...))
	if err != nil {
		return fmt.Errorf("store: outbox: %w", err)
	}
	items := []types.TransactWriteItem{
		{Delete: &types.Delete{
			TableName: aws.String(s.table), Key: key(layout.WorkflowPK(wf), layout.HeadSK),
			ConditionExpression:       aws.String("#v = :v"),
			ExpressionAttributeNames:  map[string]string{"#v": attrVersion},
			ExpressionAttributeValues: map[string]types.AttributeValue{":v": num(head.v)},
		}},
		{ConditionCheck: &types.ConditionCheck{
			TableName: aws.String(s.table), Key: key(layout.WorkflowPK(wf), layout.SlotSK),
			ConditionExpression:       aws.String("attribute_not_exists(running) OR running <= :zero"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":zero": num(0)},
		}},
		{Put: &types.Put{
			TableName: aws.String(s.table),
			Item: merge(key(layout.WorkflowPK(wf), layout.PurgeSK), map[string]types.AttributeValue{
				"create_time": num(millis(now)), "round": num(0), attrOutbox: str(string(ob)),
			}),
			ConditionExpression: aws.String("attribute_not_exists(pk)"),
		}},
		{Put: &types.Put{
			TableName: aws.String(s.table),
			Item: merge(key(layout.WorkflowPK(wf), layout.TombSK), map[string]types.AttributeValue{
				"latest": num(head.Latest), "next_instance": num(head.NextInstance), "delete_time": num(millis(now)),
			}),
		}},
	}
	// A deleted workflow's signal triggers go with it.
	unsub, err := s.subscriptionWrites(ctx, wf, nil)
	if err != nil {
		return err
	}
	items = append(items, unsub...)
	if len(items) > MaxTransactItems {
		return fmt.Errorf("store: delete %s needs %d writes, more than DynamoDB's %d per transaction", wf, len(items), MaxTransactItems)
	}
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
	if err == nil {
		return nil
	}
	reasons := cancelReasons(err)
	switch {
	case len(reasons) > 2 && reasons[2] == "ConditionalCheckFailed":
		return fmt.Errorf("store: delete %s: %w", wf, ErrDeleting)
	case len(reasons) > 0 && reasons[0] == "ConditionalCheckFailed":
		return fmt.Errorf("store: delete %s (changed meanwhile): %w", wf, ErrConflict)
	case len(reasons) > 1 && reasons[1] == "ConditionalCheckFailed":
		return fmt.Errorf("store: delete %s: %w", wf, ErrBusy)
	}
	return fmt.Errorf("store: delete %s: %w", wf, err)
}

// Deleting reports whether a deletion of workflow wf is under way.
func (s *Definitions) Deleting(ctx context.Context, wf string) (bool, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), Key: key(layout.WorkflowPK(wf), layout.PurgeSK), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return false, fmt.Errorf("store: deletion of %s: %w", wf, err)
	}
	return out.Item != nil, nil
}

// PurgeWorkflow deletes up to budget items of a deleted workflow: its
// versions, instances (each instance's runs, events, attempts and timeline
// first), queue, dedup and breakpoint items. done reports that nothing is
// left, in which case the deletion job itself is gone too. Each call is
// idempotent, so a purge message delivered twice does no harm.
func (s *Definitions) PurgeWorkflow(ctx context.Context, wf string, budget int) (done bool, deleted int, err error) {
	pk := layout.WorkflowPK(wf)
	var start map[string]types.AttributeValue
	for {
		res, err := s.db.Query(ctx, &dynamodb.QueryInput{
			TableName:              aws.String(s.table),
			KeyConditionExpression: aws.String("pk = :pk"),
			ExpressionAttributeValues: map[string]types.AttributeValue{
				":pk": str(pk),
			},
			ProjectionExpression: aws.String("pk, sk"),
			ConsistentRead:       aws.Bool(true),
			ExclusiveStartKey:    start,
			Limit:                aws.Int32(100),
		})
		if err != nil {
			return false, deleted, fmt.Errorf("store: purge %s: %w", wf, err)
		}
		var keys []map[string]types.AttributeValue
		for _, it := range res.Items {
			sk := getS(it, attrSK)
			if sk == layout.PurgeSK || sk == layout.TombSK {
				continue
			}
			if strings.HasPrefix(sk, "I#") {
				inst, err := layout.ParseInstanceSK(sk)
				if err != nil {
					return false, deleted, err
				}
				n, complete, err := s.purgePartition(ctx, layout.RunPK(wf, inst), budget-deleted)
				deleted += n
				if err != nil {
					return false, deleted, err
				}
				if !complete {
					return false, deleted, nil
				}
			}
			keys = append(keys, key(pk, sk))
		}
		if err := s.batchDelete(ctx, keys); err != nil {
			return false, deleted, err
		}
		deleted += len(keys)
		if deleted >= budget {
			return false, deleted, nil
		}
		if len(res.LastEvaluatedKey) == 0 {
			break
		}
		start = res.LastEvaluatedKey
	}
	_, err = s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(s.table), Key: key(pk, layout.PurgeSK)})
	if err != nil {
		return false, deleted, fmt.Errorf("store: purge %s: %w", wf, err)
	}
	return true, deleted, nil
}

// purgePartition deletes up to budget items of partition pk; complete
// reports that it is empty.
func (s *Definitions) purgePartition(ctx context.Context, pk string, budget int) (n int, complete bool, err error) {
	for n < budget {
		res, err := s.db.Query(ctx, &dynamodb.QueryInput{
			TableName:                 aws.String(s.table),
			KeyConditionExpression:    aws.String("pk = :pk"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":pk": str(pk)},
			ProjectionExpression:      aws.String("pk, sk"),
			ConsistentRead:            aws.Bool(true),
			Limit:                     aws.Int32(int32(min(100, budget-n))),
		})
		if err != nil {
			return n, false, fmt.Errorf("store: purge %s: %w", pk, err)
		}
		if len(res.Items) == 0 {
			return n, true, nil
		}
		keys := make([]map[string]types.AttributeValue, len(res.Items))
		for i, it := range res.Items {
			keys[i] = key(pk, getS(it, attrSK))
		}
		if err := s.batchDelete(ctx, keys); err != nil {
			return n, false, err
		}
		n += len(keys)
	}
	return n, false, nil
}

// batchDelete deletes keys 25 at a time, retrying unprocessed ones.
func (s *base) batchDelete(ctx context.Context, keys []map[string]types.AttributeValue) error {
	reqs := make([]types.WriteRequest, len(keys))
	for i, k := range keys {
		reqs[i] = types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: k}}
	}
	if err := s.batchWrite(ctx, reqs); err != nil {
		return fmt.Errorf("store: batch delete: %w", err)
	}
	return nil
}

// batchWrite sends write requests 25 at a time (BatchWriteItem), retrying
// unprocessed ones.
func (s *base) batchWrite(ctx context.Context, reqs []types.WriteRequest) error {
	for len(reqs) > 0 {
		n := min(len(reqs), 25)
		pending := map[string][]types.WriteRequest{s.table: reqs[:n]}
		reqs = reqs[n:]
		for attempt := 0; len(pending) > 0; attempt++ {
			out, err := s.db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: pending})
			if err != nil {
				return err
			}
			pending = out.UnprocessedItems
			if len(pending) > 0 {
				if err := backoff(ctx, attempt); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// RearmPurge records purge round round of workflow wf with next as its
// outbox, so that the stream carries the next round to a worker.
func (s *Definitions) RearmPurge(ctx context.Context, wf string, round int64, next Message) error {
	ob, err := json.Marshal([]Message{next})
	if err != nil {
		return fmt.Errorf("store: outbox: %w", err)
	}
	_, err = s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       key(layout.WorkflowPK(wf), layout.PurgeSK),
		UpdateExpression:          aws.String("SET round = :r, #ob = :ob"),
		ConditionExpression:       aws.String("attribute_exists(pk)"),
		ExpressionAttributeNames:  map[string]string{"#ob": attrOutbox},
		ExpressionAttributeValues: map[string]types.AttributeValue{":r": num(round), ":ob": str(string(ob))},
	})
	if err != nil && !isConflict(err) {
		return fmt.Errorf("store: rearm purge of %s: %w", wf, err)
	}
	return nil
}

// tombstone returns the last version and the next instance id of a deleted
// workflow; ok is false when the workflow was never deleted.
func (s *Definitions) tombstone(ctx context.Context, wf string) (latest, nextInstance int64, ok bool, err error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), Key: key(layout.WorkflowPK(wf), layout.TombSK), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return 0, 0, false, fmt.Errorf("store: tombstone of %s: %w", wf, err)
	}
	if out.Item == nil {
		return 0, 0, false, nil
	}
	return getN(out.Item, "latest"), getN(out.Item, "next_instance"), true, nil
}
