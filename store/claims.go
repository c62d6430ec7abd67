package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// A worker claims a step attempt before it runs it, so that a work message
// delivered twice (a redelivery, the stream backstop of a direct dispatch,
// a sweeper's re-drive) runs the attempt at most once per claim. The claim
// lives on the attempt item: "claim" (the holder's token) and "lease" (unix
// ms until which it holds), and needs the attempt to be RUNNING. Once the
// worker's outcome is applied the attempt is no longer RUNNING, so no later
// delivery can claim it; a claim whose lease passed while the attempt is
// still RUNNING (its worker died) can be taken again, so the step runs again.
//
// Ending a claim costs no write: the decider's commit that applies the
// outcome changes the attempt's status. The one gap: a duplicate delivered
// after the lease ends but before that commit would run the step again, so
// the lease must exceed the longest run plus the decider's lag.
const (
	attrClaim = "claim"
	attrLease = "lease"
)

// AttemptRef names one step attempt of a run.
type AttemptRef struct {
	WorkflowID string
	InstanceID int64
	RunID      int64
	StepID     string
	Attempt    int64
}

func (r AttemptRef) key() map[string]types.AttributeValue {
	return key(runPK(r.WorkflowID, r.InstanceID), attemptSK(r.RunID, r.StepID, r.Attempt))
}

func (r AttemptRef) String() string {
	return fmt.Sprintf("%s/%d/%d/%s/%d", r.WorkflowID, r.InstanceID, r.RunID, r.StepID, r.Attempt)
}

// statusRunning is the attempt status (model.StepRunning) a claim needs.
const statusRunning = "RUNNING"

// ClaimError says why an attempt could not be claimed.
type ClaimError struct {
	// Done is set when the attempt is no longer RUNNING (finished, or
	// stopped meanwhile): there is nothing to run.
	Done bool
	// Until is when the current holder's lease ends (unix ms), when not Done.
	Until int64
}

func (e *ClaimError) Error() string {
	if e.Done {
		return "store: step attempt already finished"
	}
	return fmt.Sprintf("store: step attempt claimed by another worker until %s", time.UnixMilli(e.Until).UTC().Format(time.RFC3339Nano))
}

// ClaimAttempt claims attempt ref, which must be RUNNING, for token until
// until. It returns a *ClaimError when another worker holds an unexpired
// claim, the attempt has finished or is no longer RUNNING, and ErrNotFound
// when the attempt item does not exist.
func (s *Store) ClaimAttempt(ctx context.Context, ref AttemptRef, token string, now, until time.Time) error {
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                aws.String(s.table),
		Key:                      ref.key(),
		UpdateExpression:         aws.String("SET #c = :c, #l = :l"),
		ConditionExpression:      aws.String("#st = :running AND (attribute_not_exists(#l) OR #l < :now)"),
		ExpressionAttributeNames: map[string]string{"#c": attrClaim, "#l": attrLease, "#st": attrStatus},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":c": str(token), ":l": num(millis(until)), ":now": num(millis(now)), ":running": str(statusRunning),
		},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if err == nil {
		return nil
	}
	var ccf *types.ConditionalCheckFailedException
	if !errors.As(err, &ccf) {
		return fmt.Errorf("store: claim %s: %w", ref, err)
	}
	item := ccf.Item
	if len(item) == 0 {
		// Not every implementation returns the item with the failure.
		got, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: ref.key(), ConsistentRead: aws.Bool(true)})
		if err != nil {
			return fmt.Errorf("store: claim %s: %w", ref, err)
		}
		item = got.Item
	}
	if len(item) == 0 {
		return fmt.Errorf("store: claim %s: %w", ref, ErrNotFound)
	}
	return &ClaimError{Done: getS(item, attrStatus) != statusRunning, Until: getN(item, attrLease)}
}

// PeekAttempt reads an attempt's status and claim lease (unix ms; 0 when
// never claimed) with an eventually consistent read, half the cost of the
// claim's conditional write: a worker uses it to drop a duplicate delivery
// without writing. The answer may be stale; the claim decides.
func (s *Store) PeekAttempt(ctx context.Context, ref AttemptRef) (status string, lease int64, err error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:                aws.String(s.table),
		Key:                      ref.key(),
		ProjectionExpression:     aws.String("#st, #l"),
		ExpressionAttributeNames: map[string]string{"#st": attrStatus, "#l": attrLease},
	})
	if err != nil {
		return "", 0, fmt.Errorf("store: peek attempt %s: %w", ref, err)
	}
	if out.Item == nil {
		return "", 0, ErrNotFound
	}
	return getS(out.Item, attrStatus), getN(out.Item, attrLease), nil
}
