package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/maestro-serverless/maestro/store/internal/layout"
)

// Job queue items:
//
//	JQ  Q#<name>  capacity: cpu (thousandths of a vCPU), memory (MiB), gpu;
//	              aging (ms per priority point a waiter gains);
//	              holders {entry: lease expiry ms}, waiters {entry: since ms}, v
//
// A job queue is a permit whose holders and waiters are entries
// (QueueEntry): a step attempt's holder key with its priority and needs.
// Decisions change it as they change tag permits (PermitUpdate with Queue),
// conditioned on its version, in their transaction.
const (
	attrCPU    = "cpu"
	attrMemory = "memory"
	attrGPU    = "gpu"
	attrAging  = "aging"
)

// QueueCapacity is a job queue's capacity and aging.
type QueueCapacity struct {
	CPU, Memory, GPU int64
	// AgingMillis is how long a waiter waits to gain one priority point;
	// 0 means no aging.
	AgingMillis int64
}

// QueueEntry is a holder or waiter of a job queue: the attempt's holder key
// (PermitKey) and what it asks.
type QueueEntry struct {
	Key              string
	Priority         int64
	CPU, Memory, GPU int64
}

// String encodes the entry as a holders or waiters map key.
func (e QueueEntry) String() string {
	return fmt.Sprintf("%s~%d,%d,%d,%d", e.Key, e.Priority, e.CPU, e.Memory, e.GPU)
}

// ParseQueueEntry decodes an entry made by String.
func ParseQueueEntry(s string) (QueueEntry, error) {
	key, rest, ok := strings.Cut(s, "~")
	parts := strings.Split(rest, ",")
	if !ok || len(parts) != 4 {
		return QueueEntry{}, fmt.Errorf("store: bad job queue entry %q", s)
	}
	var n [4]int64
	for i, p := range parts {
		v, err := strconv.ParseInt(p, 10, 64)
		if err != nil {
			return QueueEntry{}, fmt.Errorf("store: bad job queue entry %q: %w", s, err)
		}
		n[i] = v
	}
	return QueueEntry{Key: key, Priority: n[0], CPU: n[1], Memory: n[2], GPU: n[3]}, nil
}

// PutJobQueue creates a job queue or changes its capacity, keeping its
// holders and waiters, and returns it as stored.
func (s *Gates) PutJobQueue(ctx context.Context, name string, c QueueCapacity, now int64) (*TagPermit, error) {
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.table),
		Key:       key(layout.JobQueuePK, layout.JobQueueSK(name)),
		UpdateExpression: aws.String("SET #c = :c, #m = :m, #g = :g, #a = :a, #h = if_not_exists(#h, :empty), #w = if_not_exists(#w, :empty), " +
			"create_time = if_not_exists(create_time, :now), modify_time = :now ADD #v :one"),
		ExpressionAttributeNames: map[string]string{"#c": attrCPU, "#m": attrMemory, "#g": attrGPU, "#a": attrAging,
			"#h": attrHolders, "#w": attrWaiters, "#v": attrVersion},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":c": num(c.CPU), ":m": num(c.Memory), ":g": num(c.GPU), ":a": num(c.AgingMillis),
			":empty": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{}}, ":now": num(now), ":one": num(1),
		},
		ReturnValues: types.ReturnValueAllNew,
	})
	if err != nil {
		return nil, fmt.Errorf("store: put job queue %q: %w", name, err)
	}
	return jobQueueFromItem(out.Attributes), nil
}

// GetJobQueues reads every job queue, by name, strongly consistent.
func (s *Gates) GetJobQueues(ctx context.Context) (map[string]*TagPermit, error) {
	out := map[string]*TagPermit{}
	err := s.queryAll(ctx, &dynamodb.QueryInput{
		TableName: aws.String(s.table), KeyConditionExpression: aws.String("pk = :pk"), ConsistentRead: aws.Bool(true),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": str(layout.JobQueuePK)},
	}, func(item map[string]types.AttributeValue) error {
		q := jobQueueFromItem(item)
		out[q.Tag] = q
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: get job queues: %w", err)
	}
	return out, nil
}

// GetJobQueue returns one job queue, or ErrNotFound.
func (s *Gates) GetJobQueue(ctx context.Context, name string) (*TagPermit, error) {
	item, err := s.getItem(ctx, key(layout.JobQueuePK, layout.JobQueueSK(name)), "get job queue %q", name)
	if err != nil {
		return nil, err
	}
	return jobQueueFromItem(item), nil
}

// DeleteJobQueue removes a job queue and returns it as it was (its waiters
// need a wake), or ErrNotFound.
func (s *Gates) DeleteJobQueue(ctx context.Context, name string) (*TagPermit, error) {
	out, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: aws.String(s.table), Key: key(layout.JobQueuePK, layout.JobQueueSK(name)), ReturnValues: types.ReturnValueAllOld,
	})
	if err != nil {
		return nil, fmt.Errorf("store: delete job queue %q: %w", name, err)
	}
	if len(out.Attributes) == 0 {
		return nil, ErrNotFound
	}
	return jobQueueFromItem(out.Attributes), nil
}

func jobQueueFromItem(item map[string]types.AttributeValue) *TagPermit {
	p := permitFromItem(strings.TrimPrefix(getS(item, attrSK), "Q#"), item)
	p.Queue = &QueueCapacity{CPU: getN(item, attrCPU), Memory: getN(item, attrMemory), GPU: getN(item, attrGPU), AgingMillis: getN(item, attrAging)}
	return p
}
