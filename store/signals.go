package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/maestro-serverless/maestro/jsonnum"
	"github.com/maestro-serverless/maestro/signals"
	"github.com/maestro-serverless/maestro/store/internal/layout"
)

// Signal items share the partition of their name, except the param index,
// which has one partition per (name, param):
//
//	SIG#<name>  SEQ                        the name's sequence counter ("n")
//	SIG#<name>  I#<seq:12>                 a signal instance (params, payload, request id, source), outbox: its handling
//	SIG#<name>  R#<request id>             announce dedup record -> seq (expires after 30 days)
//	SIG#<name>  T#<wf>                     workflow wf's active signal triggers use the name ("since": the seq then)
//	SIG#<name>  D#<wf>#<inst>#<run>#<step>#<attempt>   a step attempt waiting for the name
//	SIG#<name>  L#<seq:12>#<link>          lineage: an instance the signal triggered, an attempt it unblocked
//	SIGX#<hex(param)>#<name>  <value>#<seq:12>   param index: one item per param of every instance
//	WF#<wf>     SIGSUBS                    the names wf's T# items are written under
//
// Param index sort keys order by value: a LONG is "L" and 16 hex digits of
// the value with its sign bit flipped; a STRING is "S" and the hex of its
// UTF-8 bytes, followed by "#" — or, for a string longer than
// layout.IndexedStringBytes, the hex of its first IndexedStringBytes bytes
// followed by "$" (such keys only narrow a lookup; the match itself always
// compares the full values). Byte order of these keys is value order, and
// a LONG never sorts among STRINGs, so "a type mismatch never matches"
// holds. The keys are built by store/internal/layout.

// indexInlineParams is the largest params JSON an index item carries, so
// that a lookup needs no second read; larger params are read from the
// instance item.
const indexInlineParams = 1024

// maxSignalScan bounds the index items one lookup reads (10 pages).
const maxSignalScan = 1000

// indexRange returns the key condition that selects, in a param's index
// partition, the range layout.IndexRange gives for c; ok is false when
// nothing can satisfy c.
func indexRange(c signals.Condition) (cond string, values map[string]types.AttributeValue, ok bool, err error) {
	r, ok, err := layout.IndexRange(c)
	if err != nil || !ok {
		return "", nil, false, err
	}
	if r.Prefix != "" {
		return "begins_with(sk, :p)", map[string]types.AttributeValue{":p": str(r.Prefix)}, true, nil
	}
	return "sk BETWEEN :lo AND :hi", map[string]types.AttributeValue{":lo": str(r.From), ":hi": str(r.To)}, true, nil
}

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

// Signal decodes the record's params (LONG values exact) and payload.
func (r *SignalRecord) Signal() (signals.Signal, error) {
	params, err := signals.DecodeParams(r.Params)
	if err != nil {
		return signals.Signal{}, fmt.Errorf("store: params of signal %s/%d: %w", r.Name, r.Seq, err)
	}
	var payload map[string]any
	if len(r.Payload) > 0 {
		if err := jsonnum.Decode(r.Payload, &payload); err != nil {
			return signals.Signal{}, fmt.Errorf("store: payload of signal %s/%d: %w", r.Name, r.Seq, err)
		}
		if len(payload) == 0 {
			payload = nil
		}
	}
	return signals.Signal{Name: r.Name, Seq: r.Seq, Params: params, Payload: payload, CreateTime: r.CreateTime}, nil
}

// NewestSignal is FindSignal's answer without conditions, given the
// newest instance's record as read (with its error): ok is false when the
// name has none. It is exported for store/memstore, whose FindSignal
// answers alike.
func NewestSignal(rec *SignalRecord, err error) (signals.Signal, bool, error) {
	if errors.Is(err, ErrNotFound) {
		return signals.Signal{}, false, nil
	}
	if err != nil {
		return signals.Signal{}, false, err
	}
	sig, err := rec.Signal()
	return sig, err == nil, err
}

// NewSignal is a signal to announce.
type NewSignal struct {
	Name string
	// Params are the LONG (int64) and STRING (string) params; each is
	// indexed, so lookups over the whole history cost what one page costs.
	Params    map[string]any
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
// its name, with its param index entries, in one transaction. With a request
// id already used it returns the earlier instance and created=false.
//
// Sequence numbers increase per name but may have gaps: the number is taken
// from an atomic counter before the transaction, so a request that loses a
// race with a duplicate of itself (same request id), or dies before its
// transaction, leaves its number unused. The counter never contends, which a
// gap-free scheme (a conditional counter inside the transaction) would on a
// busy name.
func (s *Signals) AnnounceSignal(ctx context.Context, ns NewSignal) (*SignalRecord, bool, error) {
	if n := len(ns.Params); n+2 > MaxTransactItems {
		return nil, false, fmt.Errorf("store: signal %s has %d params, more than the %d one transaction can index", ns.Name, n, MaxTransactItems-2)
	}
	params, err := json.Marshal(orEmpty(ns.Params))
	if err != nil {
		return nil, false, fmt.Errorf("store: params of signal %s: %w", ns.Name, err)
	}
	pk := layout.SignalPK(ns.Name)
	if ns.RequestID != "" {
		if rec, err := s.signalForRequest(ctx, ns.Name, ns.RequestID); err == nil {
			return rec, false, nil
		} else if !errors.Is(err, ErrNotFound) {
			return nil, false, err
		}
	}
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       key(pk, layout.SigSeqSK),
		UpdateExpression:          aws.String("ADD n :one"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":one": num(1)},
		ReturnValues:              types.ReturnValueUpdatedNew,
	})
	if err != nil {
		return nil, false, fmt.Errorf("store: allocate seq of signal %s: %w", ns.Name, err)
	}
	seq := getN(out.Attributes, "n")
	rec := &SignalRecord{Name: ns.Name, Seq: seq, Params: params, Payload: ns.Payload, RequestID: ns.RequestID,
		Source: ns.Source, CreateTime: millis(ns.Now)}
	item := merge(key(pk, layout.SignalInstanceSK(seq)), map[string]types.AttributeValue{
		"name": str(ns.Name), "seq": num(seq), "params": str(string(params)), "payload": str(orEmptyJSON(ns.Payload)),
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
		// Until its delivery is done (SignalDelivered), the instance is in
		// the sweep index: a lost delivery message is found and redone.
		merge(item, sweepKey(pk, millis(s.now().Add(s.eventSweepAfter))))
	}
	items := []types.TransactWriteItem{{Put: &types.Put{
		TableName: aws.String(s.table), Item: item, ConditionExpression: aws.String("attribute_not_exists(pk)"),
	}}}
	if ns.RequestID != "" {
		items = append(items, types.TransactWriteItem{Put: &types.Put{
			TableName: aws.String(s.table),
			Item: merge(key(pk, layout.SignalRequestSK(ns.RequestID)), map[string]types.AttributeValue{
				"seq": num(seq), attrTTL: num(ns.Now.Add(signalRequestTTL).Unix()),
			}),
			ConditionExpression: aws.String("attribute_not_exists(pk)"),
		}})
	}
	for param, v := range ns.Params {
		sk, err := layout.SignalIndexSK(v, seq)
		if err != nil {
			return nil, false, fmt.Errorf("store: signal %s param %q: %w", ns.Name, param, err)
		}
		ix := merge(key(layout.SignalIndexPK(ns.Name, param), sk), map[string]types.AttributeValue{"seq": num(seq)})
		if len(params) <= indexInlineParams {
			ix["params"] = str(string(params))
		}
		items = append(items, types.TransactWriteItem{Put: &types.Put{TableName: aws.String(s.table), Item: ix}})
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

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

func orEmptyJSON(b json.RawMessage) string {
	if len(b) == 0 {
		return "{}"
	}
	return string(b)
}

func (s *Signals) signalForRequest(ctx context.Context, name, requestID string) (*SignalRecord, error) {
	item, err := s.getItem(ctx, key(layout.SignalPK(name), layout.SignalRequestSK(requestID)), "signal request %s", requestID)
	if err != nil {
		return nil, err
	}
	return s.GetSignal(ctx, name, getN(item, "seq"))
}

// GetSignal returns signal instance seq of name; seq 0 means the latest.
func (s *Signals) GetSignal(ctx context.Context, name string, seq int64) (*SignalRecord, error) {
	if seq == 0 {
		return s.latestSignal(ctx, name)
	}
	item, err := s.getItem(ctx, key(layout.SignalPK(name), layout.SignalInstanceSK(seq)), "get signal %s/%d", name, seq)
	if err != nil {
		return nil, err
	}
	return signalFromItem(item), nil
}

// latestSignal returns the newest instance of name (strongly consistent).
func (s *Signals) latestSignal(ctx context.Context, name string) (*SignalRecord, error) {
	in := s.prefixQuery(layout.SignalPK(name), "I#")
	in.ScanIndexForward = aws.Bool(false)
	in.ConsistentRead = aws.Bool(true)
	in.Limit = aws.Int32(1)
	out, err := s.db.Query(ctx, in)
	if err != nil {
		return nil, fmt.Errorf("store: latest signal of %s: %w", name, err)
	}
	if len(out.Items) == 0 {
		return nil, ErrNotFound
	}
	return signalFromItem(out.Items[0]), nil
}

func signalFromItem(it map[string]types.AttributeValue) *SignalRecord {
	return &SignalRecord{
		Name: getS(it, "name"), Seq: getN(it, "seq"),
		Params: json.RawMessage(getS(it, "params")), Payload: json.RawMessage(getS(it, "payload")),
		RequestID: getS(it, "request_id"), Source: json.RawMessage(getS(it, "source")), CreateTime: getN(it, "create_time"),
	}
}

// ErrSignalScanLimit is returned by FindSignal when the lookup read
// maxSignalScan index entries without finding a signal that meets every
// condition.
var ErrSignalScanLimit = errors.New("store: signal lookup read its limit of index entries")

// FindSignal looks up, over the whole history of name, a signal instance
// that meets every condition (see signals.MatchesAll); ok is false when
// there is none. Without conditions it is the newest instance.
//
// The lookup reads the param index of one condition — the first equality,
// else the first condition — newest first among equal values, highest value
// first for a range, and checks the other conditions on each entry in that
// order. So with an equality condition the answer is the newest match; with
// ranges only it is the match with the highest value of the first range
// param. It reads at most maxSignalScan index entries (ErrSignalScanLimit
// past that, with ok false), which bounds its cost whatever the history's
// size.
func (s *Signals) FindSignal(ctx context.Context, name string, conds []signals.Condition) (signals.Signal, bool, error) {
	if len(conds) == 0 {
		return NewestSignal(s.latestSignal(ctx, name))
	}
	drive := signals.Driving(conds)
	cond, values, ok, err := indexRange(drive)
	if err != nil || !ok {
		return signals.Signal{}, false, err
	}
	values[":pk"] = str(layout.SignalIndexPK(name, drive.Param))
	var start map[string]types.AttributeValue
	for scanned := 0; scanned < maxSignalScan; {
		out, err := s.db.Query(ctx, &dynamodb.QueryInput{
			TableName:                 aws.String(s.table),
			KeyConditionExpression:    aws.String("pk = :pk AND " + cond),
			ExpressionAttributeValues: values,
			ScanIndexForward:          aws.Bool(false),
			ConsistentRead:            aws.Bool(true),
			Limit:                     aws.Int32(int32(min(100, maxSignalScan-scanned))),
			ExclusiveStartKey:         start,
		})
		if err != nil {
			return signals.Signal{}, false, fmt.Errorf("store: signal index of %s.%s: %w", name, drive.Param, err)
		}
		scanned += len(out.Items)
		cands, err := s.indexCandidates(ctx, name, out.Items)
		if err != nil {
			return signals.Signal{}, false, err
		}
		for _, c := range cands {
			if signals.MatchesAll(conds, c) {
				return c, true, nil
			}
		}
		if len(out.LastEvaluatedKey) == 0 {
			return signals.Signal{}, false, nil
		}
		start = out.LastEvaluatedKey
	}
	return signals.Signal{}, false, fmt.Errorf("%w (%d) for signal %s: no match among them; make its conditions narrower (an equality first)",
		ErrSignalScanLimit, maxSignalScan, name)
}

// indexCandidates turns index entries into signals, in their order: params
// carried by the entry, else read from the instance items (one batch read).
func (s *Signals) indexCandidates(ctx context.Context, name string, items []map[string]types.AttributeValue) ([]signals.Signal, error) {
	cands := make([]signals.Signal, len(items))
	var missing []int64
	for i, it := range items {
		cands[i] = signals.Signal{Name: name, Seq: getN(it, "seq")}
		raw := getS(it, "params")
		if raw == "" {
			missing = append(missing, cands[i].Seq)
			continue
		}
		p, err := signals.DecodeParams(json.RawMessage(raw))
		if err != nil {
			return nil, fmt.Errorf("store: index entry of signal %s/%d: %w", name, cands[i].Seq, err)
		}
		cands[i].Params = p
	}
	if len(missing) == 0 {
		return cands, nil
	}
	keys := make([]map[string]types.AttributeValue, 0, len(missing))
	for _, seq := range slices.Compact(slices.Sorted(slices.Values(missing))) {
		keys = append(keys, key(layout.SignalPK(name), layout.SignalInstanceSK(seq)))
	}
	got, err := s.batchGet(ctx, keys)
	if err != nil {
		return nil, fmt.Errorf("store: signals of %s: %w", name, err)
	}
	bySeq := make(map[int64]map[string]any, len(got))
	for _, it := range got {
		p, err := signals.DecodeParams(json.RawMessage(getS(it, "params")))
		if err != nil {
			return nil, fmt.Errorf("store: signal %s/%d: %w", name, getN(it, "seq"), err)
		}
		bySeq[getN(it, "seq")] = p
	}
	for i := range cands {
		if cands[i].Params == nil {
			cands[i].Params = bySeq[cands[i].Seq]
		}
	}
	return cands, nil
}

// Subscription is a workflow whose active signal triggers use a name.
type Subscription struct {
	WorkflowID string
	// Since is the name's last sequence number when the subscription was
	// made: only later signals fire the workflow's triggers (as Maestro's
	// trigger checkpoints start at the latest signal), so a trigger
	// activated now is not fired by a backlog of older signals still on
	// their way.
	Since int64
}

// Subscribers returns the subscriptions to name and the keys of the step
// attempts waiting for it.
func (s *Signals) Subscribers(ctx context.Context, name string) (subs []Subscription, waiters []string, err error) {
	pk := layout.SignalPK(name)
	for _, prefix := range []string{"T#", "D#"} {
		in := s.prefixQuery(pk, prefix)
		in.ConsistentRead = aws.Bool(true)
		err := s.queryAll(ctx, in, func(it map[string]types.AttributeValue) error {
			sk := getS(it, attrSK)
			if prefix == "D#" {
				waiters = append(waiters, sk)
			} else {
				subs = append(subs, Subscription{WorkflowID: strings.TrimPrefix(sk, "T#"), Since: getN(it, "since")})
			}
			return nil
		})
		if err != nil {
			return nil, nil, fmt.Errorf("store: subscribers of %s: %w", name, err)
		}
	}
	return subs, waiters, nil
}

// ParseSignalWaiterKey splits a waiter key made by SignalWaiterKey.
func ParseSignalWaiterKey(k string) (PermitHolder, error) {
	return ParsePermitKey(strings.TrimPrefix(k, "D#"))
}

// SubscriptionsFunc returns the signal names a workflow's triggers use
// under head, the head as a change leaves it (nil: the workflow is gone);
// nil when none. Every change of a head (push, activate, deactivate,
// properties, delete) writes the subscriptions it calls for in its own
// transaction, so a trigger is live as soon as the change returns.
type SubscriptionsFunc func(ctx context.Context, head *WorkflowHead) ([]string, error)

// subscriptionWrites returns the writes that make workflow wf's
// subscriptions exactly want: a T# item per name added, a delete per name
// removed, and the SIGSUBS list; none when nothing changes. They are
// consistent with the head only inside a transaction conditioned on the
// head version read with them.
func (s *base) subscriptionWrites(ctx context.Context, wf string, want []string) ([]types.TransactWriteItem, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), Key: key(layout.WorkflowPK(wf), layout.SigSubsSK), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return nil, fmt.Errorf("store: signal subscriptions of %s: %w", wf, err)
	}
	var have []string
	if ss, ok := out.Item["names"].(*types.AttributeValueMemberSS); ok {
		have = ss.Value
	}
	want = slices.Compact(slices.Sorted(slices.Values(want)))
	var added []string
	for _, n := range want {
		if !slices.Contains(have, n) {
			added = append(added, n)
		}
	}
	since, err := s.signalSeqs(ctx, added)
	if err != nil {
		return nil, fmt.Errorf("store: signal subscriptions of %s: %w", wf, err)
	}
	var items []types.TransactWriteItem
	for _, n := range added {
		items = append(items, types.TransactWriteItem{Put: &types.Put{
			TableName: aws.String(s.table),
			Item: merge(key(layout.SignalPK(n), layout.SubscriberSK(wf)), map[string]types.AttributeValue{
				"workflow": str(wf), "since": num(since[n]),
			}),
		}})
	}
	for _, n := range have {
		if !slices.Contains(want, n) {
			items = append(items, types.TransactWriteItem{Delete: &types.Delete{
				TableName: aws.String(s.table), Key: key(layout.SignalPK(n), layout.SubscriberSK(wf)),
			}})
		}
	}
	if len(items) == 0 {
		return nil, nil
	}
	if len(want) == 0 {
		items = append(items, types.TransactWriteItem{Delete: &types.Delete{TableName: aws.String(s.table), Key: key(layout.WorkflowPK(wf), layout.SigSubsSK)}})
	} else {
		items = append(items, types.TransactWriteItem{Put: &types.Put{
			TableName: aws.String(s.table),
			Item:      merge(key(layout.WorkflowPK(wf), layout.SigSubsSK), map[string]types.AttributeValue{"names": &types.AttributeValueMemberSS{Value: want}}),
		}})
	}
	return items, nil
}

// signalSeqs returns the last sequence number given out for each name (0
// for a name never announced).
func (s *base) signalSeqs(ctx context.Context, names []string) (map[string]int64, error) {
	keys := make([]map[string]types.AttributeValue, len(names))
	for i, n := range names {
		keys[i] = key(layout.SignalPK(n), layout.SigSeqSK)
	}
	items, err := s.batchGet(ctx, keys)
	if err != nil {
		return nil, err
	}
	out := make(map[string]int64, len(items))
	for _, it := range items {
		out[strings.TrimPrefix(getS(it, attrPK), "SIG#")] = getN(it, "n")
	}
	return out, nil
}

// headSubscriptions returns the subscription writes of a head change that
// leaves the head as after (nil: deleted); none when subs is nil.
func (s *base) headSubscriptions(ctx context.Context, wf string, after *WorkflowHead, subs SubscriptionsFunc) ([]types.TransactWriteItem, error) {
	if subs == nil {
		return nil, nil
	}
	want, err := subs(ctx, after)
	if err != nil {
		return nil, err
	}
	return s.subscriptionWrites(ctx, wf, want)
}

// SyncSubscriptions brings workflow wf's signal subscriptions in line with
// its current head (the backstop of the writes every head change makes
// itself): one transaction conditioned on the head it read, retried when the
// head moves meanwhile.
func (s *Signals) SyncSubscriptions(ctx context.Context, wf string, subs SubscriptionsFunc) error {
	return retryConditional(ctx, "sync signal subscriptions of "+wf, func() (write, err error) {
		head, err := s.store.Definitions.GetHead(ctx, wf)
		if errors.Is(err, ErrNotFound) {
			head = nil
		} else if err != nil {
			return nil, err
		}
		items, err := s.headSubscriptions(ctx, wf, head, subs)
		if err != nil || len(items) == 0 {
			return nil, err
		}
		check := &types.ConditionCheck{TableName: aws.String(s.table), Key: key(layout.WorkflowPK(wf), layout.HeadSK)}
		if head == nil {
			check.ConditionExpression = aws.String("attribute_not_exists(pk)")
		} else {
			check.ConditionExpression = aws.String("#v = :v")
			check.ExpressionAttributeNames = map[string]string{"#v": attrVersion}
			check.ExpressionAttributeValues = map[string]types.AttributeValue{":v": num(head.v)}
		}
		items = append(items, types.TransactWriteItem{ConditionCheck: check})
		_, write = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
		return write, nil
	})
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
func (s *Signals) Lineage(ctx context.Context, name string, seq int64) ([]json.RawMessage, error) {
	in := s.prefixQuery(layout.SignalPK(name), layout.LineagePrefix(seq))
	in.ConsistentRead = aws.Bool(true)
	out, err := s.db.Query(ctx, in)
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
func (s *Signals) PutLineage(ctx context.Context, l LineageLink) error {
	if _, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: lineageItem(l)}); err != nil {
		return fmt.Errorf("store: lineage of %s/%d: %w", l.Name, l.Seq, err)
	}
	return nil
}

func lineageItem(l LineageLink) map[string]types.AttributeValue {
	return merge(key(layout.SignalPK(l.Name), layout.LineagePrefix(l.Seq)+l.ID), map[string]types.AttributeValue{"body": str(string(l.Body))})
}

func (s *base) signalWaitItem(w SignalWait) types.TransactWriteItem {
	if w.Remove {
		return types.TransactWriteItem{Delete: &types.Delete{TableName: aws.String(s.table), Key: key(layout.SignalPK(w.Name), w.Key)}}
	}
	return types.TransactWriteItem{Put: &types.Put{
		TableName: aws.String(s.table),
		Item:      merge(key(layout.SignalPK(w.Name), w.Key), map[string]types.AttributeValue{"name": str(w.Name)}),
	}}
}

// SignalDelivered takes a signal instance out of the sweep index once its
// delivery (to waiting steps and signal triggers) is done.
func (s *Signals) SignalDelivered(ctx context.Context, name string, seq int64) error {
	_, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                aws.String(s.table),
		Key:                      key(layout.SignalPK(name), layout.SignalInstanceSK(seq)),
		UpdateExpression:         aws.String("REMOVE #p, #s"),
		ConditionExpression:      aws.String("attribute_exists(#s)"),
		ExpressionAttributeNames: map[string]string{"#p": attrSweepPK, "#s": attrSweepSK},
	})
	if err != nil && !isConflict(err) {
		return fmt.Errorf("store: signal %s/%d delivered: %w", name, seq, err)
	}
	return nil
}
