package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/maestro-serverless/maestro/store/internal/layout"
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
//
// A worker that has run the step records its outcome on the attempt
// ("outcome", RecordOutcome) before it decides what follows: a worker that
// dies after that leaves the outcome, and the next claim of the attempt
// returns it instead of having the step run again. The commit that applies
// the outcome ends the attempt and removes it.
//
// A worker that hands the attempt to an external system with a task token
// (WaitForTask) sets "wait" (the token's hash): no later delivery can claim
// the attempt, which the token's holder ends.
const (
	attrClaim   = "claim"
	attrLease   = "lease"
	attrOutcome = "outcome"
	attrWait    = "wait"
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
	return key(layout.RunPK(r.WorkflowID, r.InstanceID), layout.AttemptSK(r.RunID, r.StepID, r.Attempt))
}

func (r AttemptRef) String() string {
	return fmt.Sprintf("%s/%d/%d/%s/%d", r.WorkflowID, r.InstanceID, r.RunID, r.StepID, r.Attempt)
}

// statusRunning is the attempt status (model.StepRunning) a claim needs.
const statusRunning = "RUNNING"

// ClaimError says why an attempt could not be claimed.
type ClaimError struct {
	// Done is set when the attempt is no longer RUNNING (finished, or
	// stopped meanwhile) or waits for its task token: there is nothing to
	// run.
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
// until. It returns the outcome an earlier holder recorded (RecordOutcome),
// if any: the step ran, and must not run again. It returns a *ClaimError
// when another worker holds an unexpired claim, the attempt has finished or
// is no longer RUNNING or waits for its task token, and ErrNotFound when
// the attempt item does not exist.
//
// With start, the attempt's start commit may have left its item unwritten
// (a deferred start: one conditional write here instead of a transactional
// one there): an item that does not exist yet is the attempt RUNNING, and
// the claim creates it as start describes. A commit that ended the attempt
// meanwhile wrote the item (see Attempt.Start), so the claim then fails.
func (s *Attempts) ClaimAttempt(ctx context.Context, ref AttemptRef, token string, now, until time.Time, start *AttemptStart) (outcome []byte, err error) {
	set := "SET #c = :c, #l = :l"
	cond := "#st = :running AND attribute_not_exists(#w) AND (attribute_not_exists(#l) OR #l < :now)"
	names := map[string]string{"#c": attrClaim, "#l": attrLease, "#st": attrStatus, "#w": attrWait}
	values := map[string]types.AttributeValue{
		":c": str(token), ":l": num(millis(until)), ":now": num(millis(now)), ":running": str(statusRunning),
	}
	if start != nil {
		body, err := s.encodeBody(start.Body)
		if err != nil {
			return nil, err
		}
		set += ", #st = if_not_exists(#st, :running), #tl = if_not_exists(#tl, :tl), #b = if_not_exists(#b, :b), #e = if_not_exists(#e, :e)"
		cond = "attribute_not_exists(#st) OR (" + cond + ")"
		names["#tl"], names["#b"], names["#e"] = attrTimeline, attrBody, attrEnc
		values[":tl"], values[":b"], values[":e"] = entryList(start.Timeline), body[attrBody], body[attrEnc]
	}
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                           aws.String(s.table),
		Key:                                 ref.key(),
		UpdateExpression:                    aws.String(set),
		ConditionExpression:                 aws.String(cond),
		ExpressionAttributeNames:            names,
		ExpressionAttributeValues:           values,
		ReturnValues:                        types.ReturnValueAllNew,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if err == nil {
		if v, ok := out.Attributes[attrOutcome].(*types.AttributeValueMemberB); ok {
			return v.Value, nil
		}
		return nil, nil
	}
	var ccf *types.ConditionalCheckFailedException
	if !errors.As(err, &ccf) {
		return nil, fmt.Errorf("store: claim %s: %w", ref, err)
	}
	item := ccf.Item
	if len(item) == 0 {
		// Not every implementation returns the item with the failure.
		got, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: ref.key(), ConsistentRead: aws.Bool(true)})
		if err != nil {
			return nil, fmt.Errorf("store: claim %s: %w", ref, err)
		}
		item = got.Item
	}
	if len(item) == 0 {
		return nil, fmt.Errorf("store: claim %s: %w", ref, ErrNotFound)
	}
	_, waiting := item[attrWait]
	return nil, &ClaimError{Done: getS(item, attrStatus) != statusRunning || waiting, Until: getN(item, attrLease)}
}

// ErrClaimLost is returned by RecordOutcome when token no longer holds the
// attempt (its lease passed and another worker claimed it) or the attempt
// is no longer RUNNING.
var ErrClaimLost = errors.New("store: the claim on the step attempt was lost")

// RecordOutcome records the outcome of attempt ref on its item, provided
// token still holds the claim and the attempt is RUNNING: one write of the
// outcome's size, which makes it durable before its worker decides what
// follows (see ClaimAttempt).
func (s *Attempts) RecordOutcome(ctx context.Context, ref AttemptRef, token string, outcome []byte) error {
	return s.updateCarrying(ctx, "record outcome of", ref, token, "SET #o = :o", "",
		map[string]string{"#o": attrOutcome}, map[string]types.AttributeValue{":o": bin(outcome)})
}

// claimedUpdate is the update set (an update expression, whose placeholders
// names and values hold) of attempt ref's item, on condition that token
// still holds the claim on the attempt and the attempt is RUNNING; the
// condition's placeholders are added to names and values.
func (s *base) claimedUpdate(ref AttemptRef, token, set string, names map[string]string, values map[string]types.AttributeValue) *types.Update {
	names["#c"], names["#st"] = attrClaim, attrStatus
	values[":c"], values[":running"] = str(token), str(statusRunning)
	return &types.Update{
		TableName:                 aws.String(s.table),
		Key:                       ref.key(),
		UpdateExpression:          aws.String(set),
		ConditionExpression:       aws.String("#c = :c AND #st = :running"),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
	}
}

// updateItem makes update u as a single UpdateItem.
func (s *base) updateItem(ctx context.Context, u *types.Update) error {
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: u.TableName, Key: u.Key, UpdateExpression: u.UpdateExpression,
		ConditionExpression: u.ConditionExpression, ExpressionAttributeNames: u.ExpressionAttributeNames,
		ExpressionAttributeValues: u.ExpressionAttributeValues,
	})
	return err
}

// AttemptPeek is what PeekAttempt reads of an attempt.
type AttemptPeek struct {
	Status string
	// Lease is when the current claim ends (unix ms; 0 when never claimed).
	Lease int64
	// Waiting is set when the attempt waits for its task token.
	Waiting bool
}

// PeekAttempt reads an attempt's status, claim lease and whether it waits
// for its task token with an eventually consistent read, half the cost of
// the claim's conditional write: a worker uses it to drop a duplicate
// delivery without writing. The answer may be stale; the claim decides.
func (s *Attempts) PeekAttempt(ctx context.Context, ref AttemptRef) (AttemptPeek, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:                aws.String(s.table),
		Key:                      ref.key(),
		ProjectionExpression:     aws.String("#st, #l, #w"),
		ExpressionAttributeNames: map[string]string{"#st": attrStatus, "#l": attrLease, "#w": attrWait},
	})
	if err != nil {
		return AttemptPeek{}, fmt.Errorf("store: peek attempt %s: %w", ref, err)
	}
	if out.Item == nil {
		return AttemptPeek{}, ErrNotFound
	}
	_, waiting := out.Item[attrWait]
	return AttemptPeek{Status: getS(out.Item, attrStatus), Lease: getN(out.Item, attrLease), Waiting: waiting}, nil
}

// StartedAttempts reports which of refs a worker has claimed or that have
// ended: their attempt item carries a claim, or a status other than
// RUNNING. Eventually consistent: an attempt claimed a moment ago may read
// as not started (never the reverse, as an attempt item's first write is
// its start or its claim). One BatchGetItem per 100 refs.
func (s *Attempts) StartedAttempts(ctx context.Context, refs []AttemptRef) (map[AttemptRef]bool, error) {
	out := make(map[AttemptRef]bool, len(refs))
	seen := make(map[AttemptRef]bool, len(refs))
	var keys []map[string]types.AttributeValue
	for _, r := range refs {
		if !seen[r] {
			seen[r] = true
			keys = append(keys, r.key())
		}
	}
	items, err := s.batchRead(ctx, keys, types.KeysAndAttributes{
		ProjectionExpression:     aws.String("#pk, #sk, #st, #c"),
		ExpressionAttributeNames: map[string]string{"#pk": attrPK, "#sk": attrSK, "#st": attrStatus, "#c": attrClaim},
	})
	if err != nil {
		return nil, fmt.Errorf("store: read attempts: %w", err)
	}
	for _, item := range items {
		_, claimed := item[attrClaim]
		if !claimed && getS(item, attrStatus) == statusRunning {
			continue
		}
		if r, err := attemptRefOf(getS(item, attrPK), getS(item, attrSK)); err == nil {
			out[r] = true
		}
	}
	return out, nil
}
