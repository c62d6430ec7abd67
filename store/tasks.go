package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/maestro-serverless/maestro/store/internal/layout"
)

// Task tokens.
//
// A worker that hands a step attempt to an external system gives it a task
// token; whoever holds the token ends the attempt (success, failure) or
// says it is still at work (heartbeat). The table keeps only the token's
// SHA-256, in its own item,
//
//	pk                 sk      item
//	TASK#<sha256 hex>  TASK    the attempt the token ends; "used" once it did
//
// so that neither a reader of the table nor a view of the run learns a
// token. The item expires (ttl) after the longest a step may run.
const (
	attrUsed     = "used"
	attrResult   = "result"
	attrWorkflow = "wf"
	attrInstance = "inst"
	attrRun      = "run"
	attrStep     = "step"
	attrAttempt  = "attempt"
	attrCreated  = "created"
)

// External jobs: JOB#<job> JOB names the hash of the task token whose
// attempt the job is (attribute "hash").
const (
	attrHash = "hash"
)

// GetJob returns the hash of the task token whose attempt job is;
// ErrNotFound when no attempt recorded the job.
func (s *Tasks) GetJob(ctx context.Context, job string) (hash string, err error) {
	item, err := s.getItem(ctx, key(layout.JobPK(job), layout.JobSK), "get job %s", job)
	if err != nil {
		return "", err
	}
	return getS(item, attrHash), nil
}

// taskTokenTTL is how long a token item lives: Maestro's longest timeout
// (120 days) and a day.
const taskTokenTTL = 121 * 24 * time.Hour

// HashTaskToken is the hash under which a task token is stored.
func HashTaskToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// TaskToken is what the table holds of a task token.
type TaskToken struct {
	Ref AttemptRef
	// Created and Used are unix ms; Used is 0 until the token ended its
	// attempt, Result then says how ("success" or "failure").
	Created int64
	Used    int64
	Result  string
}

// ErrTaskTokenUsed is returned by UseTaskToken for a token that already
// ended its attempt.
var ErrTaskTokenUsed = errors.New("store: the task token was already used")

// PutTaskToken records that the token hashed as hash ends attempt ref.
func (s *Tasks) PutTaskToken(ctx context.Context, hash string, ref AttemptRef) error {
	now := s.now()
	_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: aws.String(s.table),
		Item: merge(key(layout.TaskPK(hash), layout.TaskSK), map[string]types.AttributeValue{
			attrWorkflow: str(ref.WorkflowID), attrInstance: num(ref.InstanceID), attrRun: num(ref.RunID),
			attrStep: str(ref.StepID), attrAttempt: num(ref.Attempt), attrCreated: num(millis(now)),
			attrTTL: num(now.Add(taskTokenTTL).Unix()),
		}),
		ConditionExpression: aws.String("attribute_not_exists(pk)"),
	})
	if err != nil {
		return fmt.Errorf("store: put task token for %s: %w", ref, err)
	}
	return nil
}

// GetTaskToken reads the token hashed as hash; ErrNotFound when there is
// none.
func (s *Tasks) GetTaskToken(ctx context.Context, hash string) (*TaskToken, error) {
	it, err := s.getItem(ctx, key(layout.TaskPK(hash), layout.TaskSK), "get task token")
	if err != nil {
		return nil, err
	}
	return &TaskToken{
		Ref: AttemptRef{WorkflowID: getS(it, attrWorkflow), InstanceID: getN(it, attrInstance), RunID: getN(it, attrRun),
			StepID: getS(it, attrStep), Attempt: getN(it, attrAttempt)},
		Created: getN(it, attrCreated), Used: getN(it, attrUsed), Result: getS(it, attrResult),
	}, nil
}

// WaitForTask marks attempt ref, claimed by claim, as waiting for the task
// token hashed as hash, and puts ev (the engine's TaskWaiting) in its
// run's inbox, in one transaction: no later delivery of the attempt's work
// claims it again. With job (an external job's name), it also records that
// the job's end is the token's (GetJob). ErrClaimLost when claim no longer
// holds the attempt or it is no longer RUNNING (its token's holder may
// already have ended it).
func (s *Tasks) WaitForTask(ctx context.Context, ref AttemptRef, claim, hash, job string, ev Event) error {
	evItem, err := s.eventItem(ref.WorkflowID, ref.InstanceID, ref.RunID, ev)
	if err != nil {
		return err
	}
	var jobItems []types.TransactWriteItem
	if job != "" {
		jobItems = append(jobItems, types.TransactWriteItem{Put: &types.Put{
			TableName: aws.String(s.table),
			Item: merge(key(layout.JobPK(job), layout.JobSK), map[string]types.AttributeValue{
				attrHash: str(hash), attrTTL: num(s.now().Add(taskTokenTTL).Unix()),
			}),
		}})
	}
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: append([]types.TransactWriteItem{
		{Update: s.claimedUpdate(ref, claim, "SET #w = :h",
			map[string]string{"#w": attrWait}, map[string]types.AttributeValue{":h": str(hash)})},
		{Put: &types.Put{TableName: aws.String(s.table), Item: evItem, ConditionExpression: aws.String("attribute_not_exists(pk)")}},
	}, jobItems...)})
	if err == nil {
		return nil
	}
	if reasons := cancelReasons(err); len(reasons) > 0 && reasons[0] == "ConditionalCheckFailed" {
		return fmt.Errorf("store: wait for task of %s: %w", ref, ErrClaimLost)
	}
	if isConflict(err) {
		return nil // the event is there already: a retry of this write
	}
	return fmt.Errorf("store: wait for task of %s: %w", ref, err)
}

// UseTaskToken marks the token hashed as hash used with result and puts ev
// (the attempt's StepFinished) in its run's inbox, in one transaction.
// ErrTaskTokenUsed when the token was used already (or was never stored);
// nothing is written then.
func (s *Tasks) UseTaskToken(ctx context.Context, hash, result string, ref AttemptRef, ev Event) error {
	evItem, err := s.eventItem(ref.WorkflowID, ref.InstanceID, ref.RunID, ev)
	if err != nil {
		return err
	}
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Update: &types.Update{
			TableName:                aws.String(s.table),
			Key:                      key(layout.TaskPK(hash), layout.TaskSK),
			UpdateExpression:         aws.String("SET #u = :u, #r = :r"),
			ConditionExpression:      aws.String("attribute_exists(pk) AND attribute_not_exists(#u)"),
			ExpressionAttributeNames: map[string]string{"#u": attrUsed, "#r": attrResult},
			ExpressionAttributeValues: map[string]types.AttributeValue{
				":u": num(millis(s.now())), ":r": str(result),
			},
		}},
		{Put: &types.Put{TableName: aws.String(s.table), Item: evItem}},
	}})
	if err == nil {
		return nil
	}
	if reasons := cancelReasons(err); len(reasons) > 0 && reasons[0] == "ConditionalCheckFailed" {
		return ErrTaskTokenUsed
	}
	return fmt.Errorf("store: use task token for %s: %w", ref, err)
}
