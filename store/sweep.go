package store

import (
	"context"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/maestro-serverless/maestro/resources"
	"github.com/maestro-serverless/maestro/store/internal/layout"
)

// The sweep index. Items that must lead to something by a certain time
// carry two attributes that put them in the table's sparse index GSI1:
// gsi1pk "SWEEP#<shard>" (the shard a hash of the item's partition key, so
// the index's writes spread over SweepShards partitions) and gsi1sk the
// time (unix ms, 13 digits) by which that should have happened:
//
//   - an inbox event (E#), from when it is written until the decider applies
//     and deletes it: due EventSweepAfter after it was written (plus its
//     backstop delay). Still there then, its wake was lost.
//   - a run item (RUN#) of a run in progress that awaits work: due when the
//     run should have heard back (its worker's claim lease, its earliest
//     timer) plus a grace; each commit moves it. Still due then, the work
//     message, the timer, or the outbox that carried them was lost.
//   - a signal instance (SIG#<name>, I#<seq>) until its delivery to waiting
//     steps and signal triggers is done, due EventSweepAfter after it was
//     announced.
//
// The index projects keys only, so a run's commit costs the index one small
// write, and an item leaves the index when it is deleted or rewritten
// without the attributes. The recovery sweeper (orchestrator.Sweep) queries
// each shard for what is due; nothing ever scans the table.
const (
	attrSweepPK = resources.AttrGSI1PK
	attrSweepSK = resources.AttrGSI1SK
	sweepIndex  = resources.GSI1
)

// SweepShards is how many index partitions the sweep index is spread over.
const SweepShards = 8

func sweepShard(pk string) int {
	h := fnv.New32a()
	h.Write([]byte(pk))
	return int(h.Sum32() % SweepShards)
}

func sweepPK(shard int) string { return "SWEEP#" + strconv.Itoa(shard) }

func sweepSK(due int64) string { return fmt.Sprintf("%013d", due) }

// sweepKey is the attributes that put an item of partition pk in the sweep
// index, due at due (unix ms).
func sweepKey(pk string, due int64) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		attrSweepPK: str(sweepPK(sweepShard(pk))),
		attrSweepSK: str(sweepSK(due)),
	}
}

// Due is an item of the sweep index whose time has come: a run's item or
// inbox event, or a signal instance (Signal set).
type Due struct {
	WorkflowID string
	InstanceID int64
	RunID      int64
	// Run is set for a run item; otherwise it is an inbox event, EventID.
	Run     bool
	EventID string
	// Signal and SignalSeq name a signal instance whose delivery is not
	// done.
	Signal    string
	SignalSeq int64
	// At is when it was due (unix ms).
	At int64
}

// DueItems returns up to limit items of the sweep index's shard that were
// due at or before now, earliest first. The index is eventually
// consistent: an item may be listed shortly after it left it, so the
// caller checks before acting (see Redrive).
func (s *Sweeps) DueItems(ctx context.Context, shard int, now time.Time, limit int) ([]Due, error) {
	if limit <= 0 {
		return nil, nil
	}
	in := &dynamodb.QueryInput{
		TableName:              aws.String(s.table),
		IndexName:              aws.String(sweepIndex),
		KeyConditionExpression: aws.String("#p = :p AND #s <= :now"),
		ExpressionAttributeNames: map[string]string{
			"#p": attrSweepPK, "#s": attrSweepSK,
		},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":p": str(sweepPK(shard)), ":now": str(sweepSK(millis(now))),
		},
		Limit: aws.Int32(int32(min(limit, 1000))),
	}
	var out []Due
	err := s.queryPages(ctx, in, func(items []map[string]types.AttributeValue) (bool, error) {
		for _, item := range items {
			if d, ok := ParseDue(getS(item, attrPK), getS(item, attrSK), getS(item, attrSweepSK)); ok {
				out = append(out, d)
			}
		}
		return len(out) < limit, nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: sweep index shard %d: %w", shard, err)
	}
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// ParseDue reads a sweep index entry out of its item's keys and its due
// time (the index's sort key, unix ms); ok is false for an item of another
// kind. It is exported for store/memstore, whose index holds the same
// keys.
func ParseDue(pk, sk, due string) (Due, bool) {
	at, _ := strconv.ParseInt(due, 10, 64)
	if name, ok := strings.CutPrefix(pk, "SIG#"); ok {
		seq, err := strconv.ParseInt(strings.TrimPrefix(sk, "I#"), 10, 64)
		if err != nil || !strings.HasPrefix(sk, "I#") {
			return Due{}, false
		}
		return Due{Signal: name, SignalSeq: seq, At: at}, true
	}
	rest, ok := strings.CutPrefix(pk, "R#")
	if !ok {
		return Due{}, false
	}
	cut := strings.LastIndexByte(rest, '#')
	if cut < 0 {
		return Due{}, false
	}
	inst, err := strconv.ParseInt(rest[cut+1:], 10, 64)
	if err != nil {
		return Due{}, false
	}
	d := Due{WorkflowID: rest[:cut], InstanceID: inst, At: at}
	switch {
	case strings.HasPrefix(sk, "RUN#"):
		d.Run = true
		d.RunID, err = strconv.ParseInt(sk[len("RUN#"):], 10, 64)
	case strings.HasPrefix(sk, "E#") && len(sk) > len("E#000000#"):
		d.RunID, err = strconv.ParseInt(sk[len("E#"):len("E#000000")], 10, 64)
		d.EventID = sk[len("E#000000#"):]
	default:
		return Due{}, false
	}
	if err != nil {
		return Due{}, false
	}
	return d, true
}

// Redrive puts ev into the inbox of a run found due in the sweep index, on
// condition that the run item is still due at d.At: a run that committed
// since (the index lags the table) is left alone and ErrConflict returned.
// The event's own wake goes through the stream like any other's; the
// sweeper also decides the run itself.
func (s *Sweeps) Redrive(ctx context.Context, d Due, ev Event) error {
	item, err := s.eventItem(d.WorkflowID, d.InstanceID, d.RunID, ev)
	if err != nil {
		return err
	}
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{ConditionCheck: &types.ConditionCheck{
			TableName:                 aws.String(s.table),
			Key:                       key(layout.RunPK(d.WorkflowID, d.InstanceID), layout.RunSK(d.RunID)),
			ConditionExpression:       aws.String("#s = :due"),
			ExpressionAttributeNames:  map[string]string{"#s": attrSweepSK},
			ExpressionAttributeValues: map[string]types.AttributeValue{":due": str(sweepSK(d.At))},
		}},
		{Put: &types.Put{TableName: aws.String(s.table), Item: item, ConditionExpression: aws.String("attribute_not_exists(pk)")}},
	}})
	if err != nil {
		if isConflict(err) {
			return fmt.Errorf("store: redrive %s/%d/%d: %w", d.WorkflowID, d.InstanceID, d.RunID, ErrConflict)
		}
		return fmt.Errorf("store: redrive %s/%d/%d: %w", d.WorkflowID, d.InstanceID, d.RunID, err)
	}
	return nil
}

// UnsweepEvents takes a run's pending inbox events out of the sweep index:
// for a run queued for a run-strategy slot, whose start event waits, by
// design, until a run frees a slot and wakes it (with an event of its own,
// which is indexed). Without it the sweeper would decide the queued run
// every minute for nothing. An event consumed meanwhile is skipped.
func (s *Sweeps) UnsweepEvents(ctx context.Context, wf string, inst, run int64) error {
	in := s.prefixQuery(layout.RunPK(wf, inst), layout.EventPrefix(run))
	in.ProjectionExpression = aws.String("sk, #s")
	in.ExpressionAttributeNames = map[string]string{"#s": attrSweepSK}
	err := s.queryAll(ctx, in, func(item map[string]types.AttributeValue) error {
		if getS(item, attrSweepSK) == "" {
			return nil
		}
		_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
			TableName:                aws.String(s.table),
			Key:                      key(layout.RunPK(wf, inst), getS(item, attrSK)),
			UpdateExpression:         aws.String("REMOVE #p, #s"),
			ConditionExpression:      aws.String("attribute_exists(pk)"),
			ExpressionAttributeNames: map[string]string{"#p": attrSweepPK, "#s": attrSweepSK},
		})
		if err != nil && !isConflict(err) {
			return fmt.Errorf("unsweep %s: %w", getS(item, attrSK), err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: pending events of %s/%d/%d: %w", wf, inst, run, err)
	}
	return nil
}
