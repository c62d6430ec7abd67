package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/maestro-serverless/maestro/store/internal/layout"
)

// Backfill items:
//
//	WF#<wf>  BF#<id>  a backfill: body (its JSON document, which package
//	                  orchestrator owns), v (its version), create_time, and
//	                  on creation the outbox ("ob") of the work it causes
//
// A backfill is one item, changed by conditional puts on the version read
// (ErrConflict when another writer moved it on): its document must stay
// small (the orchestrator bounds what it holds), and a document past
// MaxItemBytes is refused with an *ItemTooLargeError (sizedDB). A workflow's purge
// deletes its backfills with its other items.

// MaxBackfillsListed is the most backfills ListBackfills returns.
const MaxBackfillsListed = 100

// Backfill is a stored backfill.
type Backfill struct {
	WorkflowID, ID string
	// Body is the backfill's JSON document.
	Body []byte
	// CreateTime is when it was created (unix ms).
	CreateTime int64
	// V is the item's version: 1 when created, one more per PutBackfill.
	V int64
}

// CreateBackfill stores a new backfill at version 1 with outbox as the
// work its creation causes (forwarded by the stream router). A backfill
// with b's id that exists already is ErrConflict; nothing is written.
func (s *Backfills) CreateBackfill(ctx context.Context, b Backfill, outbox []Message) error {
	item := key(layout.WorkflowPK(b.WorkflowID), layout.BackfillSK(b.ID))
	item[attrBody], item[attrVersion], item[attrCreateTime] = str(string(b.Body)), num(1), num(b.CreateTime)
	if len(outbox) > 0 {
		ob, err := json.Marshal(outbox)
		if err != nil {
			return fmt.Errorf("store: outbox: %w", err)
		}
		item[attrOutbox] = str(string(ob))
	}
	_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: aws.String(s.table), Item: item, ConditionExpression: aws.String("attribute_not_exists(pk)"),
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return fmt.Errorf("store: create backfill %s/%s: %w", b.WorkflowID, b.ID, ErrConflict)
	}
	if err != nil {
		return fmt.Errorf("store: create backfill %s/%s: %w", b.WorkflowID, b.ID, err)
	}
	return nil
}

// PutBackfill replaces a backfill's body, conditioned on its version being
// b.V (ErrConflict otherwise, ErrNotFound when there is none), and stores
// it as version b.V+1.
func (s *Backfills) PutBackfill(ctx context.Context, b Backfill) error {
	k := key(layout.WorkflowPK(b.WorkflowID), layout.BackfillSK(b.ID))
	item := key(layout.WorkflowPK(b.WorkflowID), layout.BackfillSK(b.ID))
	item[attrBody], item[attrVersion], item[attrCreateTime] = str(string(b.Body)), num(b.V+1), num(b.CreateTime)
	_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: aws.String(s.table), Item: item, ConditionExpression: aws.String("#v = :v"),
		ExpressionAttributeNames:  map[string]string{"#v": attrVersion},
		ExpressionAttributeValues: map[string]types.AttributeValue{":v": num(b.V)},
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		if _, gerr := s.getItem(ctx, k, "get backfill %s", b.ID); errors.Is(gerr, ErrNotFound) {
			return fmt.Errorf("store: put backfill %s/%s: %w", b.WorkflowID, b.ID, ErrNotFound)
		}
		return fmt.Errorf("store: put backfill %s/%s: %w", b.WorkflowID, b.ID, ErrConflict)
	}
	if err != nil {
		return fmt.Errorf("store: put backfill %s/%s: %w", b.WorkflowID, b.ID, err)
	}
	return nil
}

// GetBackfill returns a backfill, strongly consistent, or ErrNotFound.
func (s *Backfills) GetBackfill(ctx context.Context, wf, id string) (*Backfill, error) {
	item, err := s.getItem(ctx, key(layout.WorkflowPK(wf), layout.BackfillSK(id)), "get backfill %s/%s", wf, id)
	if err != nil {
		return nil, err
	}
	return backfillFromItem(wf, item), nil
}

// ListBackfills returns a workflow's newest backfills, newest first, at
// most MaxBackfillsListed.
func (s *Backfills) ListBackfills(ctx context.Context, wf string) ([]*Backfill, error) {
	in := s.prefixQuery(layout.WorkflowPK(wf), layout.BackfillPrefix)
	in.ConsistentRead, in.ScanIndexForward, in.Limit = aws.Bool(true), aws.Bool(false), aws.Int32(MaxBackfillsListed)
	out, err := s.db.Query(ctx, in)
	if err != nil {
		return nil, fmt.Errorf("store: list backfills of %s: %w", wf, err)
	}
	list := make([]*Backfill, 0, len(out.Items))
	for _, item := range out.Items {
		list = append(list, backfillFromItem(wf, item))
	}
	return list, nil
}

func backfillFromItem(wf string, item map[string]types.AttributeValue) *Backfill {
	sk := getS(item, attrSK)
	return &Backfill{WorkflowID: wf, ID: sk[len(layout.BackfillPrefix):], Body: []byte(getS(item, attrBody)),
		CreateTime: getN(item, attrCreateTime), V: getN(item, attrVersion)}
}
