package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Signal items share the partition of their name:
//
//	SIG#<name>  SEQ                        the name's sequence counter ("n")
//	SIG#<name>  I#<seq:12>                 a signal instance (params, payload, request id, source), outbox: its handling
//	SIG#<name>  R#<request id>             announce dedup record -> seq (expires after 30 days)
//	SIG#<name>  T#<wf>#<trigger:4>         a workflow's signal trigger subscribed to the name
//	SIG#<name>  D#<wf>#<inst>#<run>#<step>#<attempt>   a step attempt waiting for the name
//	SIG#<name>  L#<seq:12>#<link>          lineage: an instance the signal triggered, an attempt it unblocked
//	WF#<wf>     SIGSUBS                    the names the workflow's triggers subscribe to
func sigPK(name string) string { return "SIG#" + name }

const (
	sigSeqSK  = "SEQ"
	sigSubsSK = "SIGSUBS"
)

func sigInstanceSK(seq int64) string       { return fmt.Sprintf("I#%012d", seq) }
func sigRequestSK(id string) string        { return "R#" + id }
func sigTriggerSK(wf string, i int) string { return fmt.Sprintf("T#%s#%04d", wf, i) }
func sigLineagePrefix(seq int64) string    { return fmt.Sprintf("L#%012d#", seq) }

// SignalWaiterKey names a waiting step attempt.
func SignalWaiterKey(wf string, inst, run int64, step string, attempt int64) string {
	return fmt.Sprintf("D#%s#%d#%d#%s#%d", wf, inst, run, step, attempt)
}

// SignalRecord is a stored signal instance.
type SignalRecord struct {
	Name      string
	Seq       int64
	Params    json.RawMessage
	Payload   json.RawMessage
	RequestID string
	// Source describes who announced it (JSON, the caller's schema).
	Source     json.RawMessage
	CreateTime int64
}

// NewSignal is a signal to announce.
type NewSignal struct {
	Name      string
	Params    json.RawMessage
	Payload   json.RawMessage
	RequestID string
	Source    json.RawMessage
	// Outbox builds the messages the stored signal sends (its handling),
	// once its sequence number is known.
	Outbox func(seq int64) ([]Message, error)
	Now    time.Time
}

// signalRequestTTL is how long an announce request id is remembered.
const signalRequestTTL = 30 * 24 * time.Hour

// AnnounceSignal stores a signal instance with the next sequence number of
// its name. With a request id already used it returns the earlier instance
// and created=false (sequence numbers increase but may have gaps).
func (s *Store) AnnounceSignal(ctx context.Context, ns NewSignal) (*SignalRecord, bool, error) {
	pk := sigPK(ns.Name)
	if ns.RequestID != "" {
		if rec, err := s.signalForRequest(ctx, ns.Name, ns.RequestID); err == nil {
			return rec, false, nil
		} else if !errors.Is(err, ErrNotFound) {
			return nil, false, err
		}
	}
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       key(pk, sigSeqSK),
		UpdateExpression:          aws.String("ADD n :one"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":one": num(1)},
		ReturnValues:              types.ReturnValueUpdatedNew,
	})
	if err != nil {
		return nil, false, fmt.Errorf("store: allocate seq of signal %s: %w", ns.Name, err)
	}
	seq := getN(out.Attributes, "n")
	rec := &SignalRecord{Name: ns.Name, Seq: seq, Params: ns.Params, Payload: ns.Payload, RequestID: ns.RequestID,
		Source: ns.Source, CreateTime: millis(ns.Now)}
	item := merge(key(pk, sigInstanceSK(seq)), map[string]types.AttributeValue{
		"name": str(ns.Name), "seq": num(seq), "params": str(orEmptyJSON(ns.Params)), "payload": str(orEmptyJSON(ns.Payload)),
		"create_time": num(rec.CreateTime),
	})
	if ns.RequestID != "" {
		item["request_id"] = str(ns.RequestID)
	}
	if len(ns.Source) > 0 {
		item["source"] = str(string(ns.Source))
	}
	if ns.Outbox != nil {
		msgs, err := ns.Outbox(seq)
		if err != nil {
			return nil, false, err
		}
		ob, err := json.Marshal(msgs)
		if err != nil {
			return nil, false, fmt.Errorf("store: outbox: %w", err)
		}
		item[attrOutbox] = str(string(ob))
	}
	items := []types.TransactWriteItem{{Put: &types.Put{
		TableName: aws.String(s.table), Item: item, ConditionExpression: aws.String("attribute_not_exists(pk)"),
	}}}
	if ns.RequestID != "" {
		items = append(items, types.TransactWriteItem{Put: &types.Put{
			TableName: aws.String(s.table),
			Item: merge(key(pk, sigRequestSK(ns.RequestID)), map[string]types.AttributeValue{
				"seq": num(seq), attrTTL: num(ns.Now.Add(signalRequestTTL).Unix()),
			}),
			ConditionExpression: aws.String("attribute_not_exists(pk)"),
		}})
	}
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
	if err == nil {
		return rec, true, nil
	}
	if ns.RequestID != "" && isConflict(err) {
		// A concurrent announce with the same request id won.
		if prev, perr := s.signalForRequest(ctx, ns.Name, ns.RequestID); perr == nil {
			return prev, false, nil
		}
	}
	return nil, false, fmt.Errorf("store: announce signal %s: %w", ns.Name, err)
}

func orEmptyJSON(b json.RawMessage) string {
	if len(b) == 0 {
		return "{}"
	}
	return string(b)
}

func (s *Store) signalForRequest(ctx context.Context, name, requestID string) (*SignalRecord, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), Key: key(sigPK(name), sigRequestSK(requestID)), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return nil, fmt.Errorf("store: signal request %s: %w", requestID, err)
	}
	if out.Item == nil {
		return nil, ErrNotFound
	}
	return s.GetSignal(ctx, name, getN(out.Item, "seq"))
}

// GetSignal returns signal instance seq of name; seq 0 means the latest.
func (s *Store) GetSignal(ctx context.Context, name string, seq int64) (*SignalRecord, error) {
	if seq == 0 {
		list, err := s.RecentSignals(ctx, name, 1)
		if err != nil {
			return nil, err
		}
		if len(list) == 0 {
			return nil, ErrNotFound
		}
		return &list[0], nil
	}
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), Key: key(sigPK(name), sigInstanceSK(seq)), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return nil, fmt.Errorf("store: get signal %s/%d: %w", name, seq, err)
	}
	if out.Item == nil {
		return nil, ErrNotFound
	}
	return signalFromItem(out.Item), nil
}

// RecentSignals returns up to limit instances of name, newest first
// (strongly consistent).
func (s *Store) RecentSignals(ctx context.Context, name string, limit int32) ([]SignalRecord, error) {
	out, err := s.db.Query(ctx, &dynamodb.QueryInput{
		TableName:              aws.String(s.table),
		KeyConditionExpression: aws.String("pk = :pk AND begins_with(sk, :p)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": str(sigPK(name)), ":p": str("I#"),
		},
		ScanIndexForward: aws.Bool(false),
		ConsistentRead:   aws.Bool(true),
		Limit:            aws.Int32(limit),
	})
	if err != nil {
		return nil, fmt.Errorf("store: signals of %s: %w", name, err)
	}
	list := make([]SignalRecord, len(out.Items))
	for i, it := range out.Items {
		list[i] = *signalFromItem(it)
	}
	return list, nil
}

func signalFromItem(it map[string]types.AttributeValue) *SignalRecord {
	return &SignalRecord{
		Name: getS(it, "name"), Seq: getN(it, "seq"),
		Params: json.RawMessage(getS(it, "params")), Payload: json.RawMessage(getS(it, "payload")),
		RequestID: getS(it, "request_id"), Source: json.RawMessage(getS(it, "source")), CreateTime: getN(it, "create_time"),
	}
}

// TriggerSub is a workflow's signal trigger subscribed to a name.
type TriggerSub struct {
	WorkflowID   string
	TriggerIndex int
}

// Subscribers returns the signal triggers subscribed to name and the keys of
// the step attempts waiting for it.
func (s *Store) Subscribers(ctx context.Context, name string) (triggers []TriggerSub, waiters []string, err error) {
	pk := sigPK(name)
	for _, prefix := range []string{"T#", "D#"} {
		var start map[string]types.AttributeValue
		for {
			out, err := s.db.Query(ctx, &dynamodb.QueryInput{
				TableName:              aws.String(s.table),
				KeyConditionExpression: aws.String("pk = :pk AND begins_with(sk, :p)"),
				ExpressionAttributeValues: map[string]types.AttributeValue{
					":pk": str(pk), ":p": str(prefix),
				},
				ConsistentRead:    aws.Bool(true),
				ExclusiveStartKey: start,
			})
			if err != nil {
				return nil, nil, fmt.Errorf("store: subscribers of %s: %w", name, err)
			}
			for _, it := range out.Items {
				sk := getS(it, attrSK)
				if prefix == "D#" {
					waiters = append(waiters, sk)
					continue
				}
				rest := strings.TrimPrefix(sk, "T#")
				i := strings.LastIndexByte(rest, '#')
				idx, err := strconv.Atoi(rest[i+1:])
				if i < 0 || err != nil {
					return nil, nil, fmt.Errorf("store: bad trigger subscription %q", sk)
				}
				triggers = append(triggers, TriggerSub{WorkflowID: rest[:i], TriggerIndex: idx})
			}
			if len(out.LastEvaluatedKey) == 0 {
				break
			}
			start = out.LastEvaluatedKey
		}
	}
	return triggers, waiters, nil
}

// ParseSignalWaiterKey splits a waiter key made by SignalWaiterKey.
func ParseSignalWaiterKey(k string) (PermitHolder, error) {
	return ParsePermitKey(strings.TrimPrefix(k, "D#"))
}

// SetTriggerSubscriptions makes workflow wf's trigger subscriptions exactly
// subs (signal name -> trigger indexes): it writes the missing ones and
// deletes the others, keeping the list under WF#<wf>/SIGSUBS.
func (s *Store) SetTriggerSubscriptions(ctx context.Context, wf string, subs map[string][]int) error {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), Key: key(wfPK(wf), sigSubsSK), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return fmt.Errorf("store: trigger subscriptions of %s: %w", wf, err)
	}
	have := map[string]bool{}
	if ss, ok := out.Item["subs"].(*types.AttributeValueMemberSS); ok {
		for _, v := range ss.Value {
			have[v] = true
		}
	}
	want := map[string]bool{}
	var list []string
	for name, idxs := range subs {
		for _, i := range idxs {
			k := name + "\x00" + strconv.Itoa(i)
			want[k] = true
			list = append(list, k)
			if have[k] {
				continue
			}
			_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{
				TableName: aws.String(s.table),
				Item:      merge(key(sigPK(name), sigTriggerSK(wf, i)), map[string]types.AttributeValue{"workflow": str(wf)}),
			})
			if err != nil {
				return fmt.Errorf("store: subscribe %s to %s: %w", wf, name, err)
			}
		}
	}
	for k := range have {
		if want[k] {
			continue
		}
		name, idx, _ := strings.Cut(k, "\x00")
		i, _ := strconv.Atoi(idx)
		if _, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
			TableName: aws.String(s.table), Key: key(sigPK(name), sigTriggerSK(wf, i)),
		}); err != nil {
			return fmt.Errorf("store: unsubscribe %s from %s: %w", wf, name, err)
		}
	}
	if len(list) == 0 {
		_, err = s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(s.table), Key: key(wfPK(wf), sigSubsSK)})
	} else {
		_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{
			TableName: aws.String(s.table),
			Item:      merge(key(wfPK(wf), sigSubsSK), map[string]types.AttributeValue{"subs": &types.AttributeValueMemberSS{Value: list}}),
		})
	}
	if err != nil {
		return fmt.Errorf("store: trigger subscriptions of %s: %w", wf, err)
	}
	return nil
}

// SignalWait adds (or, with Remove, deletes) a step attempt's registration
// as a waiter for a signal name; it rides in a run commit.
type SignalWait struct {
	Name   string
	Key    string // SignalWaiterKey
	Remove bool
}

// LineageLink records what a signal instance did: triggered an instance or
// unblocked a step attempt. It rides in a run commit.
type LineageLink struct {
	Name string
	Seq  int64
	// ID names the link uniquely (the instance or attempt it names).
	ID   string
	Body json.RawMessage
}

// Lineage returns the links recorded for signal instance seq of name.
func (s *Store) Lineage(ctx context.Context, name string, seq int64) ([]json.RawMessage, error) {
	out, err := s.db.Query(ctx, &dynamodb.QueryInput{
		TableName:              aws.String(s.table),
		KeyConditionExpression: aws.String("pk = :pk AND begins_with(sk, :p)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": str(sigPK(name)), ":p": str(sigLineagePrefix(seq)),
		},
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return nil, fmt.Errorf("store: lineage of %s/%d: %w", name, seq, err)
	}
	links := make([]json.RawMessage, len(out.Items))
	for i, it := range out.Items {
		links[i] = json.RawMessage(getS(it, "body"))
	}
	return links, nil
}

// PutLineage records one lineage link outside a run commit (a trigger's
// start).
func (s *Store) PutLineage(ctx context.Context, l LineageLink) error {
	if _, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: lineageItem(l)}); err != nil {
		return fmt.Errorf("store: lineage of %s/%d: %w", l.Name, l.Seq, err)
	}
	return nil
}

func lineageItem(l LineageLink) map[string]types.AttributeValue {
	return merge(key(sigPK(l.Name), sigLineagePrefix(l.Seq)+l.ID), map[string]types.AttributeValue{"body": str(string(l.Body))})
}

func (s *Store) signalWaitItem(w SignalWait) types.TransactWriteItem {
	if w.Remove {
		return types.TransactWriteItem{Delete: &types.Delete{TableName: aws.String(s.table), Key: key(sigPK(w.Name), w.Key)}}
	}
	return types.TransactWriteItem{Put: &types.Put{
		TableName: aws.String(s.table),
		Item:      merge(key(sigPK(w.Name), w.Key), map[string]types.AttributeValue{"name": str(w.Name)}),
	}}
}
