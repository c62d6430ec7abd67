package store

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/maestro-serverless/maestro/store/internal/layout"
)

// Tag permit items:
//
//	TAG#<tag>  PERMIT  max_allowed, holders {holder: lease expiry ms},
//	                   waiters {holder: since ms}, v (bumped on every change)
//
// A holder key names one step attempt (PermitKey). Every change to the item
// is conditioned on the version its writer read, so a decision that takes
// or returns permits commits against an exact snapshot.
const (
	attrMaxAllowed = "max_allowed"
	attrHolders    = "holders"
	attrWaiters    = "waiters"
)

// TagPermit is a tag's limit with the step attempts holding and awaiting it.
type TagPermit struct {
	Tag        string
	MaxAllowed int64
	// Holders maps holder keys to their lease expiry (unix ms).
	Holders map[string]int64
	// Waiters maps holder keys to when they started waiting (unix ms).
	Waiters map[string]int64
	// Queue is set on a job queue (see PutJobQueue): its capacity, and
	// its holders and waiters are QueueEntry strings.
	Queue *QueueCapacity
	// V is the item's version; updates are conditioned on it.
	V          int64
	CreateTime int64
	ModifyTime int64
	// ExtraInfo is the permit's extra info (a JSON object), if any.
	ExtraInfo []byte
}

// PermitKey is the holder key of one step attempt. Workflow and step ids
// cannot contain '#'.
func PermitKey(wf string, inst, run int64, step string, attempt int64) string {
	return fmt.Sprintf("%s#%d#%d#%s#%d", wf, inst, run, step, attempt)
}

// PermitHolder is a parsed holder key.
type PermitHolder struct {
	WorkflowID string
	InstanceID int64
	RunID      int64
	StepID     string
	Attempt    int64
}

// ParsePermitKey splits a holder key made by PermitKey, or the key of a
// job queue entry (QueueEntry.String).
func ParsePermitKey(k string) (PermitHolder, error) {
	k, _, _ = strings.Cut(k, "~")
	parts := strings.Split(k, "#")
	if len(parts) != 5 {
		return PermitHolder{}, fmt.Errorf("store: bad permit holder key %q", k)
	}
	inst, err1 := strconv.ParseInt(parts[1], 10, 64)
	run, err2 := strconv.ParseInt(parts[2], 10, 64)
	att, err3 := strconv.ParseInt(parts[4], 10, 64)
	if err := errors.Join(err1, err2, err3); err != nil {
		return PermitHolder{}, fmt.Errorf("store: bad permit holder key %q: %w", k, err)
	}
	return PermitHolder{WorkflowID: parts[0], InstanceID: inst, RunID: run, StepID: parts[3], Attempt: att}, nil
}

// PutTagPermit creates a tag permit or changes its limit, keeping its
// holders and waiters. It returns the permit as stored.
func (s *Gates) PutTagPermit(ctx context.Context, tag string, maxAllowed, now int64) (*TagPermit, error) {
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(s.table),
		Key:       key(layout.PermitPK(tag), layout.PermitSK),
		UpdateExpression: aws.String("SET #m = :m, #h = if_not_exists(#h, :empty), #w = if_not_exists(#w, :empty), " +
			"create_time = if_not_exists(create_time, :now), modify_time = :now ADD #v :one"),
		ExpressionAttributeNames: map[string]string{"#m": attrMaxAllowed, "#h": attrHolders, "#w": attrWaiters, "#v": attrVersion},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":m": num(maxAllowed), ":empty": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{}},
			":now": num(now), ":one": num(1),
		},
		ReturnValues: types.ReturnValueAllNew,
	})
	if err != nil {
		return nil, fmt.Errorf("store: put tag permit %q: %w", tag, err)
	}
	return permitFromItem(tag, out.Attributes), nil
}

// GetTagPermit returns one tag permit, or ErrNotFound.
func (s *Gates) GetTagPermit(ctx context.Context, tag string) (*TagPermit, error) {
	m, err := s.GetTagPermits(ctx, []string{tag})
	if err != nil {
		return nil, err
	}
	p, ok := m[tag]
	if !ok {
		return nil, ErrNotFound
	}
	return p, nil
}

// GetTagPermits reads the permits of tags with strongly consistent reads;
// tags without a permit are absent from the result.
func (s *Gates) GetTagPermits(ctx context.Context, tags []string) (map[string]*TagPermit, error) {
	out := make(map[string]*TagPermit, len(tags))
	seen := map[string]bool{}
	var keys []map[string]types.AttributeValue
	for _, t := range tags {
		if !seen[t] {
			seen[t] = true
			keys = append(keys, key(layout.PermitPK(t), layout.PermitSK))
		}
	}
	items, err := s.batchGet(ctx, keys)
	if err != nil {
		return nil, fmt.Errorf("store: get tag permits: %w", err)
	}
	for _, item := range items {
		tag := strings.TrimPrefix(getS(item, attrPK), "TAG#")
		out[tag] = permitFromItem(tag, item)
	}
	return out, nil
}

// DeleteTagPermit removes a tag permit and returns it as it was (its
// waiters need a wake), or ErrNotFound.
func (s *Gates) DeleteTagPermit(ctx context.Context, tag string) (*TagPermit, error) {
	out, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName:    aws.String(s.table),
		Key:          key(layout.PermitPK(tag), layout.PermitSK),
		ReturnValues: types.ReturnValueAllOld,
	})
	if err != nil {
		return nil, fmt.Errorf("store: delete tag permit %q: %w", tag, err)
	}
	if len(out.Attributes) == 0 {
		return nil, ErrNotFound
	}
	return permitFromItem(tag, out.Attributes), nil
}

func permitFromItem(tag string, item map[string]types.AttributeValue) *TagPermit {
	p := &TagPermit{
		Tag:        tag,
		MaxAllowed: getN(item, attrMaxAllowed),
		Holders:    numMap(item[attrHolders]),
		Waiters:    numMap(item[attrWaiters]),
		V:          getN(item, attrVersion),
		CreateTime: getN(item, "create_time"),
		ModifyTime: getN(item, "modify_time"),
	}
	if x := getS(item, attrExtraInfo); x != "" {
		p.ExtraInfo = []byte(x)
	}
	return p
}

func numMap(av types.AttributeValue) map[string]int64 {
	m, ok := av.(*types.AttributeValueMemberM)
	out := map[string]int64{}
	if !ok {
		return out
	}
	for k, v := range m.Value {
		if n, ok := v.(*types.AttributeValueMemberN); ok {
			x, _ := strconv.ParseInt(n.Value, 10, 64)
			out[k] = x
		}
	}
	return out
}

// PermitUpdate is a commit's change to one tag permit, conditioned on the
// version the decision read.
type PermitUpdate struct {
	Tag     string
	ExpectV int64
	// Queue says Tag names a job queue.
	Queue bool
	// Hold adds holders (key -> lease expiry ms); Release removes them.
	Hold    map[string]int64
	Release []string
	// Wait adds waiters (key -> since ms); Unwait removes them.
	Wait   map[string]int64
	Unwait []string
}

func (u PermitUpdate) empty() bool {
	return len(u.Hold) == 0 && len(u.Release) == 0 && len(u.Wait) == 0 && len(u.Unwait) == 0
}

// permitItem builds the conditional update of one permit item.
func (s *base) permitItem(u PermitUpdate) types.TransactWriteItem {
	// DynamoDB refuses unused names, so #h and #w are added when used.
	names := map[string]string{"#v": attrVersion}
	values := map[string]types.AttributeValue{":v": num(u.ExpectV), ":one": num(1)}
	var sets, removes []string
	n := 0
	add := func(m map[string]int64, attr string) {
		for _, k := range sortedKeys(m) {
			n++
			nk, vk := fmt.Sprintf("#k%d", n), fmt.Sprintf(":x%d", n)
			names[nk], values[vk] = k, num(m[k])
			sets = append(sets, fmt.Sprintf("%s.%s = %s", attr, nk, vk))
		}
	}
	drop := func(ks []string, attr string) {
		for _, k := range ks {
			n++
			nk := fmt.Sprintf("#k%d", n)
			names[nk] = k
			removes = append(removes, fmt.Sprintf("%s.%s", attr, nk))
		}
	}
	add(u.Hold, "#h")
	add(u.Wait, "#w")
	drop(u.Release, "#h")
	drop(u.Unwait, "#w")
	if len(u.Hold) > 0 || len(u.Release) > 0 {
		names["#h"] = attrHolders
	}
	if len(u.Wait) > 0 || len(u.Unwait) > 0 {
		names["#w"] = attrWaiters
	}
	expr := ""
	if len(sets) > 0 {
		expr += "SET " + strings.Join(sets, ", ") + " "
	}
	if len(removes) > 0 {
		expr += "REMOVE " + strings.Join(removes, ", ") + " "
	}
	expr += "ADD #v :one"
	k := key(layout.PermitPK(u.Tag), layout.PermitSK)
	if u.Queue {
		k = key(layout.JobQueuePK, layout.JobQueueSK(u.Tag))
	}
	return types.TransactWriteItem{Update: &types.Update{
		TableName:                 aws.String(s.table),
		Key:                       k,
		UpdateExpression:          aws.String(expr),
		ConditionExpression:       aws.String("#v = :v"),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
	}}
}

func sortedKeys(m map[string]int64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
