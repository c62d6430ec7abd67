package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/maestro-serverless/maestro/metering"
	"github.com/maestro-serverless/maestro/pricing"
	"github.com/maestro-serverless/maestro/store/internal/layout"
)

// Message is one outbox entry: work a committed change causes. The stream
// router sends it to the named queue.
type Message struct {
	// Queue is a logical queue name: QueueDecision or QueueWork.
	Queue string `json:"q"`
	Body  string `json:"b"`
	// GroupID is the FIFO message group (the instance, for the decision queue).
	GroupID      string `json:"g,omitempty"`
	DelaySeconds int32  `json:"s,omitempty"`
	// At, when set, is when the message is due (unix ms). The router sends a
	// message due within SQS's 15-minute delay limit with a delay and hands a
	// later one to EventBridge Scheduler as a one-time schedule.
	At int64 `json:"at,omitempty"`
	// Direct marks a message the committer sends itself right after its
	// commit (direct dispatch): the router forwards it only as a backstop,
	// BackstopDelay later, for a committer that died in between.
	Direct bool `json:"d,omitempty"`
	// Trace is the X-Ray trace id of the run that sends it (package trace);
	// the message carries it as its AWSTraceHeader attribute.
	Trace string `json:"tr,omitempty"`
	// Schedule, on a message due later than SQS's delay limit, names the
	// EventBridge Scheduler schedule it becomes, so that a later
	// QueueUnschedule message can delete it (RunTimeoutSchedule); without
	// it the router derives a name from the stream record.
	Schedule string `json:"sn,omitempty"`
	// Events is how many change events a QueueEvents message holds, each
	// an entry of the router's SNS batches (not stored: a commit's
	// estimate of what publishing them costs, see ops.go).
	Events int `json:"-"`
}

// RunTimeoutSchedulePrefix begins the name of every run's workflow-timeout
// schedule (RunTimeoutSchedule); the router may delete only those.
const RunTimeoutSchedulePrefix = "wt-"

// RunTimeoutSchedule is the name of the schedule that carries run run of
// instance inst of wf's workflow timeout: "wt-" and 40 hex digits of a
// hash of the three.
func RunTimeoutSchedule(wf string, inst, run int64) string {
	sum := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%d\x00%d", wf, inst, run)))
	return RunTimeoutSchedulePrefix + hex.EncodeToString(sum[:20])
}

// BackstopDelay is how much later than its committer the router sends a
// Direct message: long enough that the committer's copy has normally been
// handled (a handler then drops the backstop copy cheaply), short enough
// that a committer's crash costs seconds.
const BackstopDelay = 15 * time.Second

// Logical queue names used in outbox messages.
const (
	QueueDecision = "decision"
	QueueWork     = "work"
	// QueueEvents carries a batch of change events (events.EncodeBatch)
	// that the router publishes to the events topic.
	QueueEvents = "events"
	// QueueUnschedule carries the name of a schedule (Message.Schedule)
	// that the router deletes: a run's workflow timeout once the run has
	// ended, which would otherwise fire days later for nothing.
	QueueUnschedule = "unschedule"
)

// InstanceRecord is the summary item of a workflow instance.
type InstanceRecord struct {
	WorkflowID string
	InstanceID int64
	Version    int64
	RunID      int64
	UUID       string
	Status     string
	RequestID  string
	// Initiator is JSON.
	Initiator  []byte
	CreateTime int64
	StartTime  int64
	EndTime    int64
	ModifyTime int64
}

func instanceItem(r *InstanceRecord) map[string]types.AttributeValue {
	item := merge(key(layout.WorkflowPK(r.WorkflowID), layout.InstanceSK(r.InstanceID)), map[string]types.AttributeValue{
		"version":     num(r.Version),
		"run":         num(r.RunID),
		"uuid":        str(r.UUID),
		attrStatus:    str(r.Status),
		"create_time": num(r.CreateTime),
		"start_time":  num(r.StartTime),
		"end_time":    num(r.EndTime),
		"modify_time": num(r.ModifyTime),
	})
	if r.RequestID != "" {
		item["request_id"] = str(r.RequestID)
	}
	if len(r.Initiator) > 0 {
		item["initiator"] = str(string(r.Initiator))
	}
	return item
}

func instanceFromItem(item map[string]types.AttributeValue) (*InstanceRecord, error) {
	id, err := layout.ParseInstanceSK(getS(item, attrSK))
	if err != nil {
		return nil, err
	}
	return &InstanceRecord{
		WorkflowID: strings.TrimPrefix(getS(item, attrPK), "WF#"),
		InstanceID: id,
		Version:    getN(item, "version"),
		RunID:      getN(item, "run"),
		UUID:       getS(item, "uuid"),
		Status:     getS(item, attrStatus),
		RequestID:  getS(item, "request_id"),
		Initiator:  []byte(getS(item, "initiator")),
		CreateTime: getN(item, "create_time"),
		StartTime:  getN(item, "start_time"),
		EndTime:    getN(item, "end_time"),
		ModifyTime: getN(item, "modify_time"),
	}, nil
}

// NewInstance describes an instance to create with its first run.
type NewInstance struct {
	WorkflowID string
	// InstanceID is an id ReserveInstance took; 0 takes the next one.
	InstanceID int64
	Version    int64
	UUID       string
	// RequestID, when set, makes the start idempotent.
	RequestID string
	Initiator []byte
	Status    string
	// State builds the initial run state (JSON) once the instance id is
	// known; it is written with version 1.
	State func(instanceID int64) ([]byte, error)
	// FirstEvent is put into the run's inbox, waking the decider.
	FirstEvent Event
	// Outbox, built once the instance id is known, is forwarded by the
	// router from the new run item (the instance's creation event).
	Outbox func(instanceID int64) ([]Message, error)
	Now    time.Time
}

// requestTTL is how long a start request id is remembered.
const requestTTL = 30 * 24 * time.Hour

// CreateInstance allocates the next instance id and writes the instance
// summary, its first run and the run's first event in one transaction. With a
// RequestID already used it returns the earlier instance and created=false.
//
// The id comes from an unconditional atomic counter increment, so concurrent
// starts never contend on the workflow's head item; an id whose transaction
// then fails (a racing duplicate request_id) is left unused.
func (s *Instances) CreateInstance(ctx context.Context, ni NewInstance) (rec *InstanceRecord, created bool, err error) {
	if ni.RequestID != "" {
		if rec, err := s.InstanceForRequest(ctx, ni.WorkflowID, ni.RequestID); err == nil {
			return rec, false, nil
		} else if !errors.Is(err, ErrNotFound) {
			return nil, false, err
		}
	}
	id := ni.InstanceID
	if id == 0 {
		if id, err = s.nextInstanceID(ctx, ni.WorkflowID); err != nil {
			return nil, false, err
		}
	}
	rec = &InstanceRecord{
		WorkflowID: ni.WorkflowID,
		InstanceID: id,
		Version:    ni.Version,
		RunID:      1,
		UUID:       ni.UUID,
		Status:     ni.Status,
		RequestID:  ni.RequestID,
		Initiator:  ni.Initiator,
		CreateTime: millis(ni.Now),
		ModifyTime: millis(ni.Now),
	}
	state, err := ni.State(id)
	if err != nil {
		return nil, false, fmt.Errorf("store: initial state: %w", err)
	}
	var outbox []Message
	if ni.Outbox != nil {
		if outbox, err = ni.Outbox(id); err != nil {
			return nil, false, err
		}
	}
	runItem, err := s.runItem(ni.WorkflowID, id, 1, 1, ni.Status, state, outbox, 0)
	if err != nil {
		return nil, false, err
	}
	evItem, err := s.eventItem(ni.WorkflowID, id, 1, ni.FirstEvent)
	if err != nil {
		return nil, false, err
	}
	items := []types.TransactWriteItem{
		{Put: &types.Put{TableName: aws.String(s.table), Item: instanceItem(rec), ConditionExpression: aws.String("attribute_not_exists(pk)")}},
		{Put: &types.Put{TableName: aws.String(s.table), Item: runItem, ConditionExpression: aws.String("attribute_not_exists(pk)")}},
		{Put: &types.Put{TableName: aws.String(s.table), Item: evItem}},
	}
	if ni.RequestID != "" {
		items = append(items, types.TransactWriteItem{Put: requestPut(s.table, ni.WorkflowID, ni.RequestID, id, ni.Now)})
	}
	// The first event carries the start's usage, the transaction's own
	// write units with it, to the run's first decision.
	taken := takeUsage(ctx)
	var others, indexed int64
	for i, it := range items {
		if it.Put.Item[attrSweepSK] != nil {
			indexed++
		}
		if i != 2 { // the event's own units are withOwnUnits'
			others += WriteUnits(ItemSize(it.Put.Item))
		}
	}
	own := withOwnUnits(evItem, metering.Sum(ni.FirstEvent.Ops, taken), 2, 2*others+indexed)
	_, err = s.db.TransactWriteItems(precharged(ctx, own), &dynamodb.TransactWriteItemsInput{TransactItems: items})
	if err == nil {
		return rec, true, nil
	}
	giveBack(ctx, taken, own)
	if ni.RequestID != "" && isConflict(err) {
		// A concurrent start with the same request_id won.
		if rec, rerr := s.InstanceForRequest(ctx, ni.WorkflowID, ni.RequestID); rerr == nil {
			return rec, false, nil
		}
	}
	return nil, false, fmt.Errorf("store: create instance %s/%d: %w", ni.WorkflowID, id, err)
}

// requestPut is the write of start request id requestID's dedup record,
// naming instance inst, on its not existing.
func requestPut(table, wf, requestID string, inst int64, now time.Time) *types.Put {
	return &types.Put{
		TableName: aws.String(table),
		Item: merge(key(layout.WorkflowPK(wf), layout.RequestSK(requestID)), map[string]types.AttributeValue{
			"instance": num(inst),
			attrTTL:    num(now.Add(requestTTL).Unix()),
		}),
		ConditionExpression: aws.String("attribute_not_exists(pk)"),
	}
}

// ReserveInstance is the first half of a start whose first decision is
// committed with the instance's creation (Commit.Create): it returns the
// instance a start with requestID already made (prior), or takes the
// workflow's next instance id. An id taken and never created is left
// unused, as CreateInstance leaves one.
func (s *Instances) ReserveInstance(ctx context.Context, wf, requestID string) (id int64, prior *InstanceRecord, err error) {
	if requestID != "" {
		if rec, err := s.InstanceForRequest(ctx, wf, requestID); err == nil {
			return 0, rec, nil
		} else if !errors.Is(err, ErrNotFound) {
			return 0, nil, err
		}
	}
	id, err = s.nextInstanceID(ctx, wf)
	return id, nil, err
}

// nextInstanceID atomically takes the workflow's next instance id.
func (s *base) nextInstanceID(ctx context.Context, wf string) (int64, error) {
	return s.nextInstanceIDs(ctx, wf, 1)
}

// nextInstanceIDs atomically takes the workflow's next n instance ids and
// returns the first; the others follow it.
func (s *base) nextInstanceIDs(ctx context.Context, wf string, n int) (int64, error) {
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.table),
		Key:                       key(layout.WorkflowPK(wf), layout.HeadSK),
		UpdateExpression:          aws.String("ADD next_instance :n REMOVE #ob"), // ob: a definition change's events, already sent
		ExpressionAttributeNames:  map[string]string{"#ob": attrOutbox},
		ConditionExpression:       aws.String("attribute_exists(pk)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":n": num(int64(n))},
		ReturnValues:              types.ReturnValueUpdatedOld,
	})
	if err != nil {
		if isConflict(err) {
			return 0, fmt.Errorf("store: workflow %s: %w", wf, ErrNotFound)
		}
		return 0, fmt.Errorf("store: allocate instance id of %s: %w", wf, err)
	}
	return getN(out.Attributes, "next_instance"), nil
}

// InstanceForRequest returns the instance a start with request id
// requestID made (ErrNotFound if none), strongly consistent.
func (s *Instances) InstanceForRequest(ctx context.Context, wf, requestID string) (*InstanceRecord, error) {
	item, err := s.getItem(ctx, key(layout.WorkflowPK(wf), layout.RequestSK(requestID)), "get request %s", requestID)
	if err != nil {
		return nil, err
	}
	return s.GetInstance(ctx, wf, getN(item, "instance"))
}

// GetInstance returns an instance summary.
func (s *Instances) GetInstance(ctx context.Context, wf string, inst int64) (*InstanceRecord, error) {
	item, err := s.getItem(ctx, key(layout.WorkflowPK(wf), layout.InstanceSK(inst)), "get instance %s/%d", wf, inst)
	if err != nil {
		return nil, err
	}
	return instanceFromItem(item)
}

// maxFilteredPages bounds the pages one filtered listing reads: a status
// few instances have would otherwise read the whole partition in one
// request. A listing cut short returns a cursor to go on from.
const maxFilteredPages = 10

// ListInstances pages through a workflow's instances, newest first; with
// status set, only those in that status. The cursor is the instance id to
// continue below; a filtered page may hold fewer than limit instances
// and still have a cursor.
func (s *Instances) ListInstances(ctx context.Context, wf, status, cursor string, limit int) ([]*InstanceRecord, string, error) {
	in := s.prefixQuery(layout.WorkflowPK(wf), "I#")
	in.ScanIndexForward = aws.Bool(false)
	in.Limit = aws.Int32(int32(limit))
	if status != "" {
		in.FilterExpression = aws.String("#st = :st")
		in.ExpressionAttributeNames = map[string]string{"#st": attrStatus}
		in.ExpressionAttributeValues[":st"] = str(status)
		in.Limit = aws.Int32(int32(max(limit, 250)))
	}
	if cursor != "" {
		var id int64
		if _, err := fmt.Sscanf(cursor, "%d", &id); err != nil || id <= 0 {
			return nil, "", fmt.Errorf("%w %q", ErrBadCursor, cursor)
		}
		in.ExclusiveStartKey = key(layout.WorkflowPK(wf), layout.InstanceSK(id))
	}
	recs := make([]*InstanceRecord, 0, limit)
	for page := 1; ; page++ {
		out, err := s.db.Query(ctx, in)
		if err != nil {
			return nil, "", fmt.Errorf("store: list instances of %s: %w", wf, err)
		}
		for n, item := range out.Items {
			r, err := instanceFromItem(item)
			if err != nil {
				return nil, "", err
			}
			recs = append(recs, r)
			if len(recs) == limit {
				if n == len(out.Items)-1 && out.LastEvaluatedKey == nil {
					return recs, "", nil
				}
				return recs, fmt.Sprint(r.InstanceID), nil
			}
		}
		if out.LastEvaluatedKey == nil {
			return recs, "", nil
		}
		if page >= maxFilteredPages || status == "" {
			id, err := layout.ParseInstanceSK(getS(out.LastEvaluatedKey, attrSK))
			if err != nil {
				return nil, "", fmt.Errorf("store: list instances of %s: %w", wf, err)
			}
			return recs, fmt.Sprint(id), nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// Event is an engine event waiting in a run's inbox.
type Event struct {
	// ID orders and dedupes events: the same ID is stored once.
	ID   string
	Body []byte
	// WakeAfter, when > 0, is for an event its writer decides itself right
	// away (a start, an action, a continuation): instead of waking the
	// decider at once, which would only race the writer for the same run,
	// the event carries a backstop wake delivered that many seconds later
	// through the work queue (at most 900), in case the writer died first.
	WakeAfter int32
	// Covered marks a worker's answer to work its run item's sweep due
	// time already covers (a step's result, a timer the run awaits): if
	// its wake is lost, the sweeper finds the run by that due time, so the
	// event stays out of the sweep index and costs it no writes.
	Covered bool
	// Recorded marks the outcome a worker recorded on its attempt item
	// (FinishedAttempts), not an inbox event: nothing to delete.
	Recorded bool
	// Ops is the orchestration usage the event carries to its run: what
	// its writer spent on the run's behalf (see ops.go). A commit that
	// applies the event adds it to the run's (Commit.Ops).
	Ops pricing.Usage
}

// WorkKindWake is the kind of a backstop wake on the work queue (see
// Event.WakeAfter); its body is a Wake with "kind".
const WorkKindWake = "wake"

// RunRecord is a run's state item as loaded.
type RunRecord struct {
	WorkflowID string
	InstanceID int64
	RunID      int64
	// V is the optimistic-concurrency version the state was read at.
	V      int64
	Status string
	State  []byte
	// SweepAt is the run's due time in the sweep index (unix ms), 0 when
	// it is not indexed.
	SweepAt int64
	// Pages is how State, whole as read, is stored (see PageSteps); a
	// commit of the run passes it on (Commit.Pages).
	Pages Pages
	// Timeline is the run's instance timeline entries its item holds (its
	// first ones; see timeline.go); a commit of the run passes them on
	// (Commit.PriorTimeline).
	Timeline []TimelineItem
	// Ops is the run's orchestration usage recorded so far (see ops.go);
	// Bytes is the run item's size as read: a commit that replaces it is
	// billed the larger of the two.
	Ops   pricing.Usage
	Bytes int
}

// runItem is a run's state item. With sweepAt (unix ms) > 0 it is in the
// sweep index, due then.
func (s *base) runItem(wf string, inst, run, v int64, status string, state []byte, outbox []Message, sweepAt int64) (map[string]types.AttributeValue, error) {
	item := merge(key(layout.RunPK(wf, inst), layout.RunSK(run)), map[string]types.AttributeValue{
		attrVersion: num(v),
		attrStatus:  str(status),
	})
	if sweepAt > 0 {
		merge(item, sweepKey(layout.RunPK(wf, inst), sweepAt))
	}
	body, err := s.encodeBody(state)
	if err != nil {
		return nil, err
	}
	merge(item, body)
	if len(outbox) > 0 {
		ob, err := s.encodeOutbox(outbox)
		if err != nil {
			return nil, err
		}
		item[attrOutbox] = str(ob)
	}
	return item, nil
}

// WakeMessage is the decision-queue message that wakes a run's decider; its
// FIFO group is the instance, so one instance is decided one wake at a time.
func WakeMessage(wf string, inst, run int64) Message {
	return Message{Queue: QueueDecision, Body: WakeBody(wf, inst, run), GroupID: fmt.Sprintf("%s#%d", wf, inst)}
}

func (s *base) eventItem(wf string, inst, run int64, ev Event) (map[string]types.AttributeValue, error) {
	msg := WakeMessage(wf, inst, run)
	if ev.WakeAfter > 0 {
		body, err := json.Marshal(struct {
			Kind string `json:"kind"`
			Wake
		}{WorkKindWake, Wake{WorkflowID: wf, InstanceID: inst, RunID: run}})
		if err != nil {
			return nil, fmt.Errorf("store: outbox: %w", err)
		}
		msg = Message{Queue: QueueWork, Body: string(body), DelaySeconds: min(ev.WakeAfter, 900)}
	}
	wake, err := json.Marshal([]Message{msg})
	if err != nil {
		return nil, fmt.Errorf("store: outbox: %w", err)
	}
	item := merge(key(layout.RunPK(wf, inst), layout.EventSK(run, ev.ID)), map[string]types.AttributeValue{
		attrOutbox: str(string(wake)),
	})
	if !ev.Covered {
		// Until it is applied (and deleted), the event is in the sweep
		// index, due when its wake should long have been delivered.
		due := s.now().Add(s.eventSweepAfter + time.Duration(ev.WakeAfter)*time.Second)
		merge(item, sweepKey(layout.RunPK(wf, inst), millis(due)))
	}
	body, err := s.encodeBody(ev.Body)
	if err != nil {
		return nil, err
	}
	setOps(item, ev.Ops)
	return merge(item, body), nil
}

// Wake is the body of a decision-queue message: "decide this run".
type Wake struct {
	WorkflowID string `json:"workflow_id"`
	InstanceID int64  `json:"workflow_instance_id"`
	RunID      int64  `json:"workflow_run_id"`
	// Finished names attempts whose workers wrote their ends (see
	// FinishAttempt): the decider reads them for their outcomes.
	Finished []FinishedStep `json:"finished,omitempty"`
	// Ops is the message's share of what sending it was billed (see
	// MessageOps), which the run's decider records.
	Ops pricing.Usage `json:"ops,omitempty"`
}

// WakeMessageOf is the decision-queue message of wake w, its hints kept.
func WakeMessageOf(w Wake) Message {
	m := WakeMessage(w.WorkflowID, w.InstanceID, w.RunID)
	m.Body = wakeBody(w)
	return m
}

// WakeBody encodes a Wake message.
func WakeBody(wf string, inst, run int64) string {
	return wakeBody(Wake{WorkflowID: wf, InstanceID: inst, RunID: run})
}

// PutEvent adds an event to a run's inbox. Putting the same event id twice
// stores it once; the decider deletes events as it applies them.
func (s *Runs) PutEvent(ctx context.Context, wf string, inst, run int64, ev Event) error {
	item, err := s.eventItem(wf, inst, run, ev)
	if err != nil {
		return err
	}
	// The event carries what the ledger holds, and its own write (with
	// its sweep index entry) to the run.
	taken := takeUsage(ctx)
	var indexed int64
	if _, ok := item[attrSweepSK]; ok {
		indexed = 1
	}
	own := withOwnUnits(item, metering.Sum(ev.Ops, taken), 1, indexed)
	_, err = s.db.PutItem(precharged(ctx, own), &dynamodb.PutItemInput{
		TableName:           aws.String(s.table),
		Item:                item,
		ConditionExpression: aws.String("attribute_not_exists(pk)"),
	})
	if err != nil {
		giveBack(ctx, taken, own)
		if !isConflict(err) {
			return fmt.Errorf("store: put event %s: %w", ev.ID, err)
		}
	}
	return nil
}

// LoadQuietRun loads run run of instance inst when no inbox event waits for
// it: quiet reports whether none does, and rec is nil when one does. It
// reads the run item and at most one event — one read unit where LoadRun
// would read every waiting event (a worker of a 250-wide fan-out asking
// whether it may decide inline read up to 250).
func (s *Runs) LoadQuietRun(ctx context.Context, wf string, inst, run int64) (rec *RunRecord, quiet bool, err error) {
	out, err := s.db.Query(ctx, &dynamodb.QueryInput{
		TableName:              aws.String(s.table),
		KeyConditionExpression: aws.String("pk = :pk AND sk BETWEEN :from AND :to"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": str(layout.RunPK(wf, inst)), ":from": str(layout.EventPrefix(run)), ":to": str(layout.RunSK(run)),
		},
		ScanIndexForward: aws.Bool(false), // the run item first, then the latest event
		Limit:            aws.Int32(2),
		ConsistentRead:   aws.Bool(true),
	})
	if err != nil {
		return nil, false, fmt.Errorf("store: load run %s/%d/%d: %w", wf, inst, run, err)
	}
	if len(out.Items) == 0 || getS(out.Items[0], attrSK) != layout.RunSK(run) {
		return nil, false, ErrNotFound
	}
	if len(out.Items) > 1 {
		if sk := getS(out.Items[1], attrSK); !strings.HasPrefix(sk, "E#") {
			// An earlier run's item (this run is a restart's): the
			// range holds them before its events, so read it all.
			rec, events, err := s.LoadRun(ctx, wf, inst, run)
			if err != nil || len(events) > 0 {
				return nil, false, err
			}
			return rec, true, nil
		}
		// An event of this run, or of a later one (a restart's): either
		// way, others are at the instance.
		return nil, false, nil
	}
	rec, err = runRecordFromItem(out.Items[0], wf, inst, run)
	if err != nil {
		return nil, false, err
	}
	if err := s.withPages(ctx, rec, out.Items[0], nil); err != nil {
		if !errors.Is(err, errPageGone) {
			return nil, false, err
		}
		// A snapshot replaced the pages since the run item was read.
		rec, events, err := s.LoadRun(ctx, wf, inst, run)
		if err != nil || len(events) > 0 {
			return nil, false, err
		}
		return rec, true, nil
	}
	return rec, true, nil
}

// runRecordFromItem decodes the run item of run run of instance inst of wf.
func runRecordFromItem(item map[string]types.AttributeValue, wf string, inst, run int64) (*RunRecord, error) {
	body, err := decodeBody(item)
	if err != nil {
		return nil, err
	}
	due, _ := strconv.ParseInt(getS(item, attrSweepSK), 10, 64)
	tl, err := inlineTimeline(item)
	if err != nil {
		return nil, err
	}
	return &RunRecord{WorkflowID: wf, InstanceID: inst, RunID: run,
		V: getN(item, attrVersion), Status: getS(item, attrStatus), State: body, SweepAt: due, Timeline: tl,
		Ops: opsOf(item), Bytes: ItemSize(item)}, nil
}

// LoadRun reads a run's state and its pending events (oldest first) with one
// strongly consistent query (the range it reads ends with the run's pages,
// see PageSteps).
func (s *Runs) LoadRun(ctx context.Context, wf string, inst, run int64) (*RunRecord, []Event, error) {
	for reads := 1; ; reads++ {
		rec, events, err := s.loadRun(ctx, wf, inst, run)
		if errors.Is(err, errPageGone) && reads < maxPageReads {
			continue
		}
		return rec, events, err
	}
}

func (s *base) loadRun(ctx context.Context, wf string, inst, run int64) (*RunRecord, []Event, error) {
	in := &dynamodb.QueryInput{
		TableName:              aws.String(s.table),
		KeyConditionExpression: aws.String("pk = :pk AND sk BETWEEN :from AND :to"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			// The run's events up to its item and its pages.
			":pk": str(layout.RunPK(wf, inst)), ":from": str(layout.EventPrefix(run)), ":to": str(layout.PagePrefix(run) + "~"),
		},
		ConsistentRead: aws.Bool(true),
	}
	var rec *RunRecord
	var runItem map[string]types.AttributeValue
	var events []Event
	pages := map[string]map[string]types.AttributeValue{}
	prefix := layout.EventPrefix(run)
	err := s.queryAll(ctx, in, func(item map[string]types.AttributeValue) (err error) {
		switch sk := getS(item, attrSK); {
		case sk == layout.RunSK(run):
			rec, err = runRecordFromItem(item, wf, inst, run)
			runItem = item
		case strings.HasPrefix(sk, prefix):
			var body []byte
			if body, err = decodeBody(item); err == nil {
				events = append(events, Event{ID: strings.TrimPrefix(sk, prefix), Body: body, Ops: opsOf(item)})
			}
		case strings.HasPrefix(sk, layout.PagePrefix(run)):
			pages[sk] = item
		}
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("store: load run %s/%d/%d: %w", wf, inst, run, err)
	}
	if rec == nil {
		return nil, nil, ErrNotFound
	}
	if err := s.withPages(ctx, rec, runItem, pages); err != nil {
		return nil, nil, err
	}
	sort.Slice(events, func(i, j int) bool { return events[i].ID < events[j].ID })
	return rec, events, nil
}

// Attempt is a step attempt item.
type Attempt struct {
	StepID  string
	Attempt int64
	Status  string
	// Body is the attempt's JSON (params, outputs, times...); nil on commit
	// leaves the stored body as it is.
	Body []byte
	// Timeline holds the attempt's timeline entries (JSON each). On commit
	// they are appended to the entries earlier commits wrote; on read they
	// are all of them, oldest first.
	Timeline [][]byte
	// Claim and Lease, when Claim is set on commit, claim the attempt for
	// the committing worker until Lease (unix ms), as ClaimAttempt does: a
	// worker that decided a step's start runs it itself.
	Claim string
	Lease int64
	// ReplaceTimeline makes Timeline the item's whole timeline instead of
	// entries appended to it: a decision that rewrites an end its worker
	// wrote (FinishAttempt) replaces the worker's entries with its own.
	ReplaceTimeline bool
	// Start, when set, is what the attempt's start would have written: its
	// start commit may have left the item to the worker that claims it
	// (ClaimAttempt with a start). Should the item not exist yet — no
	// worker claimed the attempt before this commit ends it — the commit
	// writes Start's timeline before its own entries and, when Body is nil,
	// Start's body.
	Start *AttemptStart
}

// AttemptStart is a step attempt's item as its start writes it: RUNNING,
// with its body and its timeline entries up to RUNNING.
type AttemptStart struct {
	Body     []byte
	Timeline [][]byte
}

// InstanceUpdate changes the mutable fields of an instance summary.
type InstanceUpdate struct {
	RunID      int64
	Status     string
	StartTime  int64
	EndTime    int64
	ModifyTime int64
}

// TimelineItem is one instance-level timeline entry.
type TimelineItem struct {
	Seq  int64
	Body []byte
}

// Commit is one decision's writes for a run.
type Commit struct {
	WorkflowID string
	InstanceID int64
	RunID      int64
	// ExpectV is the version the state was loaded at; the commit fails with
	// ErrConflict when the item moved on.
	ExpectV int64
	Status  string
	// State is the run's whole state; Pages, the run's as read, says how it
	// is stored (see PageSteps), and Unsettled names the steps whose
	// entries in it may still change.
	State     []byte
	Pages     Pages
	Unsettled map[string]bool
	// Outbox is the work the decision causes, sent by the stream router.
	Outbox []Message
	// SweepAt, when > 0, puts the run in the sweep index, due then (unix
	// ms): by then the run should have heard back from the work it awaits,
	// or the sweeper re-drives it. 0 leaves it out (a run that ended, or
	// waits only for events that are themselves indexed).
	SweepAt  int64
	Attempts []Attempt
	// Timeline are the decision's instance timeline entries; PriorTimeline,
	// the run's as read (RunRecord.Timeline), which the run item keeps.
	Timeline      []TimelineItem
	PriorTimeline []TimelineItem
	// Consumed lists applied inbox event ids, deleted in the same transaction.
	Consumed []string
	// Instance, when set, updates the instance summary.
	Instance *InstanceUpdate
	// Create, when set, makes the commit the instance's creation: the run
	// item, the instance summary (Create, with Instance's update applied)
	// and the start request's dedup record are put, each on its not
	// existing, instead of the run item being conditioned on ExpectV
	// (which is 0). The id comes from ReserveInstance; a request id
	// already used fails the commit with ErrRequestTaken.
	Create *InstanceRecord
	// NewEvents are put in the inbox (e.g. "continue" for a long decision).
	NewEvents []Event
	// Slots changes the workflow's run-slot count by SlotDelta (+1 admits
	// this run, -1 releases its slot, 0 with Admit only checks); with Admit
	// the commit fails with ErrNoSlot when the count is already SlotLimit.
	SlotDelta int64
	Admit     bool
	SlotLimit int64
	// Dequeue removes this instance's queue item.
	Dequeue bool
	// CheckQueue conditions a commit that gives a slot back on the queue
	// version QueueVersion read before looking for a run to wake: a run
	// that enqueued since fails the commit (ErrConflict, or ErrNoSlot when
	// the commit also admits), and the retry looks again.
	CheckQueue   bool
	QueueVersion int64
	// WakeOther puts an event into another run's inbox (the next queued
	// instance, when this run frees its slot).
	WakeOther *RunEvent
	// Permits change tag permits (conditioned on the versions read);
	// Wakes put events into other runs' inboxes, of any workflow (waiters
	// of a permit this commit frees).
	Permits []PermitUpdate
	Wakes   []WakeRun
	// Definitions are inline workflows (foreach bodies) first used by this
	// commit; Children are child runs (iterations) it creates.
	Definitions []InlineDefinition
	Children    []ChildRun
	// LoopParams are loop params items of this run's foreach steps whose
	// state leaves them out from this commit on.
	LoopParams []LoopParams
	// Reruns are new runs of child runs (iterations of a foreach step
	// restarted from incomplete), each conditioned on the child's latest
	// run being the one it follows.
	Reruns []NewRun
	// SignalWaits register and withdraw step attempts waiting for signals;
	// Lineage records the signals that unblocked step attempts.
	SignalWaits []SignalWait
	Lineage     []LineageLink
	// Ops is the run's orchestration usage as read (RunRecord.Ops) plus
	// what the events the commit applies carried (Event.Ops); the commit
	// records it with what the context's ledger holds and its own write
	// units (see ops.go). PriorBytes and PriorSweepAt are the run item's
	// size and sweep due time as read, which its own units depend on.
	Ops          pricing.Usage
	PriorBytes   int
	PriorSweepAt int64
	// RecordedOps, when set, receives the usage the committed run item
	// records.
	RecordedOps *pricing.Usage
}

// WakeRun is an event for a run of any workflow.
type WakeRun struct {
	WorkflowID        string
	InstanceID, RunID int64
	Event             Event
	// CarryOps makes the event carry the run's whole orchestration usage
	// as this commit records it (a child run's end, to its parent).
	CarryOps bool
}

// RunEvent is an event for a given run.
type RunEvent struct {
	InstanceID, RunID int64
	Event             Event
}

// DiscardEvents deletes applied inbox events of run run of instance inst
// outside any transaction, one write unit each (two inside one). It is for
// events whose second application changes nothing — a step attempt's
// outcome or timer once the attempt moved on — deleted after the commit that
// applied them: should the deletes fail, or their writer die first, the next
// round finds them, applies them as the no-ops they have become, and
// deletes them again.
func (s *Runs) DiscardEvents(ctx context.Context, wf string, inst, run int64, ids []string) error {
	keys := make([]map[string]types.AttributeValue, len(ids))
	for i, id := range ids {
		keys[i] = key(layout.RunPK(wf, inst), layout.EventSK(run, id))
	}
	if err := s.batchDelete(ctx, keys); err != nil {
		return fmt.Errorf("store: discard events of %s/%d/%d: %w", wf, inst, run, err)
	}
	return nil
}

// CommitRun writes a decision in one transaction conditioned on ExpectV (a
// conditional put when the decision writes the run item alone). Every
// write is planned and counted first (prepareCommit): a commit past
// DynamoDB's limits is refused before anything is written, so that a
// decision round can commit less at no cost. The pages of the run's state it rewrites (see PageSteps) are
// put before the transaction, and the ones they replace deleted after.
func (s *Runs) CommitRun(ctx context.Context, c Commit) error {
	pc, err := s.prepareCommit(c)
	if err != nil {
		return err
	}
	if len(pc.pages) > 0 {
		if err := s.putPageItems(ctx, pc.pages); err != nil {
			return err
		}
	}
	taken := takeUsage(ctx)
	own := s.recordOps(pc.plan, c, taken)
	if err := s.sendCommit(precharged(ctx, own), c, pc.plan); err != nil {
		giveBack(ctx, taken, own)
		if len(pc.pages) > 0 {
			// No run item names them. Should the deletes fail, they stay
			// until the instance is deleted.
			fresh := make([]string, len(pc.pages))
			for i, it := range pc.pages {
				fresh[i] = getS(it, attrSK)
			}
			_ = s.deletePages(context.WithoutCancel(ctx), c.WorkflowID, c.InstanceID, fresh)
		}
		return err
	}
	// The pages replaced are no longer named; a reader who read the run
	// item before this commit reads it again. Should the deletes fail,
	// they stay until the instance is deleted.
	_ = s.deletePages(ctx, c.WorkflowID, c.InstanceID, c.Pages.set.Replaced(pc.next.set))
	return nil
}

// preparedCommit is a commit planned and counted: the page items it puts
// before its transaction, the run's pages after it, and the transaction's
// writes.
type preparedCommit struct {
	pages []map[string]types.AttributeValue
	next  Pages
	plan  *commitPlan
}

// CommitItems plans c as CommitRun plans it and returns how many
// transaction items it writes: the count CommitRun holds against
// MaxTransactItems (a count past it is returned, not refused). It fails
// as CommitRun's planning fails (an item past DynamoDB's size:
// *ItemTooLargeError), and writes nothing. A decision round asks it how
// many of its decisions one commit holds.
func (s *Runs) CommitItems(_ context.Context, c Commit) (int, error) {
	pc, err := s.planWrites(c)
	if err != nil {
		return 0, err
	}
	return len(pc.plan.items), nil
}

// prepareCommit plans c (planWrites) and holds its count against
// DynamoDB's limit on items per transaction.
func (s *Runs) prepareCommit(c Commit) (*preparedCommit, error) {
	pc, err := s.planWrites(c)
	if err != nil {
		return nil, err
	}
	if n := len(pc.plan.items); n > MaxTransactItems {
		return nil, fmt.Errorf("store: commit of %s/%d: %w", c.WorkflowID, c.InstanceID, &TooManyItemsError{Items: n})
	}
	return pc, nil
}

// planWrites splits c's state between the run item and its pages, builds
// every write and sizes each item against DynamoDB's limit: the one place
// a commit's items and bytes are counted.
func (s *Runs) planWrites(c Commit) (*preparedCommit, error) {
	state, writes, next, err := splitState(c.State, c.RunID, c.Pages, c.Unsettled)
	if err != nil {
		return nil, err
	}
	pc := &preparedCommit{next: next, pages: make([]map[string]types.AttributeValue, len(writes))}
	for i, w := range writes {
		if pc.pages[i], err = s.pageItem(c.WorkflowID, c.InstanceID, w); err != nil {
			return nil, fmt.Errorf("store: commit %s/%d/%d: %w", c.WorkflowID, c.InstanceID, c.RunID, err)
		}
	}
	if pc.plan, err = s.planCommit(c, state, next); err != nil {
		return nil, err
	}
	return pc, nil
}

// commitPlan is a commit's writes, in transaction order, and where the
// writes whose failed condition means something other than a conflict are.
type commitPlan struct {
	items []types.TransactWriteItem
	// slotIndex is the run slot update's (ErrNoSlot), requestIndex the
	// start request id's (ErrRequestTaken); -1 when absent.
	slotIndex, requestIndex int
	// carry are the items (puts) that carry the run's usage (WakeRun.CarryOps).
	carry []int
}

func (p *commitPlan) put(table string, item map[string]types.AttributeValue) {
	p.items = append(p.items, types.TransactWriteItem{Put: &types.Put{TableName: aws.String(table), Item: item}})
}

// planCommit lists every write of commit c, the run item first.
func (s *Runs) planCommit(c Commit, state []byte, pages Pages) (*commitPlan, error) {
	p := &commitPlan{slotIndex: -1, requestIndex: -1}
	held, spilled := SplitTimeline(c.PriorTimeline, c.Timeline)
	runPut, err := s.runPut(c, state, pages, held)
	if err != nil {
		return nil, err
	}
	p.items = append(p.items, types.TransactWriteItem{Put: runPut})
	pk := layout.RunPK(c.WorkflowID, c.InstanceID)
	for _, a := range c.Attempts {
		item, err := s.attemptWrite(c.WorkflowID, c.InstanceID, c.RunID, a)
		if err != nil {
			return nil, err
		}
		p.items = append(p.items, item)
	}
	for _, t := range spilled {
		p.items = append(p.items, s.timelineWrite(pk, c.RunID, t))
	}
	for _, id := range c.Consumed {
		p.items = append(p.items, types.TransactWriteItem{Delete: &types.Delete{
			TableName: aws.String(s.table), Key: key(pk, layout.EventSK(c.RunID, id)),
		}})
	}
	if err := s.planEvents(p, c.WorkflowID, c.InstanceID, c.RunID, c.NewEvents...); err != nil {
		return nil, err
	}
	s.planSlot(p, c)
	if err := s.planOthers(p, c); err != nil {
		return nil, err
	}
	s.planInstance(p, c)
	return p, nil
}

// runPut is the conditional put of the run item: on the version read, or
// on its absence for a creating commit.
func (s *Runs) runPut(c Commit, state []byte, pages Pages, held []TimelineItem) (*types.Put, error) {
	runItem, err := s.runItem(c.WorkflowID, c.InstanceID, c.RunID, c.ExpectV+1, c.Status, state, c.Outbox, c.SweepAt)
	if err != nil {
		return nil, err
	}
	if pages.Count() > 0 {
		runItem[attrPages] = pagesAttr(pages)
	}
	if len(held) > 0 {
		if runItem[attrInlineTimeline], err = s.encodeInlineTimeline(held); err != nil {
			return nil, err
		}
	}
	setOps(runItem, c.Ops)
	if n := ItemSize(runItem); n > MaxItemBytes {
		return nil, fmt.Errorf("store: commit %s/%d/%d: %w", c.WorkflowID, c.InstanceID, c.RunID, &ItemTooLargeError{Item: "run state", Bytes: n})
	}
	put := &types.Put{
		TableName:                 aws.String(s.table),
		Item:                      runItem,
		ConditionExpression:       aws.String("#v = :v"),
		ExpressionAttributeNames:  map[string]string{"#v": attrVersion},
		ExpressionAttributeValues: map[string]types.AttributeValue{":v": num(c.ExpectV)},
	}
	if c.Create != nil {
		put.ConditionExpression, put.ExpressionAttributeNames, put.ExpressionAttributeValues = aws.String("attribute_not_exists(pk)"), nil, nil
	}
	return put, nil
}

// planEvents adds inbox event puts to run run of instance inst of wf.
func (s *Runs) planEvents(p *commitPlan, wf string, inst, run int64, evs ...Event) error {
	for _, ev := range evs {
		item, err := s.eventItem(wf, inst, run, ev)
		if err != nil {
			return err
		}
		p.put(s.table, item)
	}
	return nil
}

// planSlot adds the run slot update (admission, a slot taken or freed) and
// the queue entry's delete.
func (s *Runs) planSlot(p *commitPlan, c Commit) {
	if c.Admit || c.SlotDelta != 0 {
		// "holders" names the runs holding a slot (instance#run), so that
		// LAST_ONLY can stop them.
		holder := &types.AttributeValueMemberSS{Value: []string{fmt.Sprintf("%d#%d", c.InstanceID, c.RunID)}}
		expr := "ADD running :d"
		values := map[string]types.AttributeValue{":d": num(c.SlotDelta)}
		switch {
		case c.SlotDelta > 0:
			expr += ", holders :h"
			values[":h"] = holder
		case c.SlotDelta < 0:
			expr += " DELETE holders :h"
			values[":h"] = holder
		}
		u := &types.Update{
			TableName:                 aws.String(s.table),
			Key:                       key(layout.WorkflowPK(c.WorkflowID), layout.SlotSK),
			UpdateExpression:          aws.String(expr),
			ExpressionAttributeValues: values,
		}
		var conds []string
		if c.Admit {
			conds = append(conds, "(attribute_not_exists(running) OR running < :limit)")
			u.ExpressionAttributeValues[":limit"] = num(c.SlotLimit)
		}
		if c.CheckQueue {
			conds = append(conds, "(attribute_not_exists(qv) OR qv = :qv)")
			u.ExpressionAttributeValues[":qv"] = num(c.QueueVersion)
		}
		if len(conds) > 0 {
			u.ConditionExpression = aws.String(strings.Join(conds, " AND "))
		}
		p.slotIndex = len(p.items)
		p.items = append(p.items, types.TransactWriteItem{Update: u})
	}
	if c.Dequeue {
		p.items = append(p.items, types.TransactWriteItem{Delete: &types.Delete{
			TableName: aws.String(s.table), Key: key(layout.WorkflowPK(c.WorkflowID), layout.QueueSK(c.InstanceID)),
		}})
	}
}

// planOthers adds the writes to other items: another run's wake, permits,
// signal waits, lineage, waiters' wakes, inline definitions, loop params,
// child runs and reruns.
func (s *Runs) planOthers(p *commitPlan, c Commit) error {
	if o := c.WakeOther; o != nil {
		if err := s.planEvents(p, c.WorkflowID, o.InstanceID, o.RunID, o.Event); err != nil {
			return err
		}
	}
	for _, pm := range c.Permits {
		if !pm.empty() {
			p.items = append(p.items, s.permitItem(pm))
		}
	}
	for _, w := range c.SignalWaits {
		p.items = append(p.items, s.signalWaitItem(w))
	}
	for _, l := range c.Lineage {
		p.put(s.table, lineageItem(l))
	}
	for _, w := range c.Wakes {
		if w.CarryOps {
			p.carry = append(p.carry, len(p.items))
		}
		if err := s.planEvents(p, w.WorkflowID, w.InstanceID, w.RunID, w.Event); err != nil {
			return err
		}
	}
	for _, d := range c.Definitions {
		item, err := s.inlineDefinitionItem(d)
		if err != nil {
			return err
		}
		p.items = append(p.items, item)
	}
	for _, lp := range c.LoopParams {
		item, err := s.loopParamsItem(c.WorkflowID, c.InstanceID, c.RunID, lp)
		if err != nil {
			return err
		}
		p.items = append(p.items, item)
	}
	for _, ch := range c.Children {
		its, err := s.childItems(ch)
		if err != nil {
			return err
		}
		p.items = append(p.items, its...)
	}
	for _, nr := range c.Reruns {
		its, err := s.newRunItems(nr)
		if err != nil {
			return err
		}
		p.items = append(p.items, its...)
	}
	return nil
}

// planInstance adds the instance summary's write: created with its start
// request id by a creating commit, else updated when the run's status or
// times changed.
func (s *Runs) planInstance(p *commitPlan, c Commit) {
	if r := c.Create; r != nil {
		created := *r
		if u := c.Instance; u != nil {
			created.RunID, created.Status, created.StartTime, created.EndTime, created.ModifyTime = u.RunID, u.Status, u.StartTime, u.EndTime, u.ModifyTime
		}
		p.items = append(p.items, types.TransactWriteItem{Put: &types.Put{
			TableName: aws.String(s.table), Item: instanceItem(&created), ConditionExpression: aws.String("attribute_not_exists(pk)"),
		}})
		if r.RequestID != "" {
			p.requestIndex = len(p.items)
			p.items = append(p.items, types.TransactWriteItem{Put: requestPut(s.table, r.WorkflowID, r.RequestID, r.InstanceID, time.UnixMilli(r.CreateTime))})
		}
		return
	}
	if u := c.Instance; u != nil {
		p.items = append(p.items, types.TransactWriteItem{Update: &types.Update{
			TableName:                aws.String(s.table),
			Key:                      key(layout.WorkflowPK(c.WorkflowID), layout.InstanceSK(c.InstanceID)),
			UpdateExpression:         aws.String("SET #run = :run, #st = :st, start_time = :start, end_time = :end, modify_time = :mod"),
			ConditionExpression:      aws.String("attribute_exists(pk)"),
			ExpressionAttributeNames: map[string]string{"#run": "run", "#st": attrStatus},
			ExpressionAttributeValues: map[string]types.AttributeValue{
				":run": num(u.RunID), ":st": str(u.Status), ":start": num(u.StartTime),
				":end": num(u.EndTime), ":mod": num(u.ModifyTime),
			},
		}})
	}
}

// sendCommit sends a planned commit: a lone run item as a conditional put
// (half a transaction's write units, the same condition and stream
// record), anything more as one transaction whose cancellation reasons say
// which error it was.
func (s *Runs) sendCommit(ctx context.Context, c Commit, p *commitPlan) error {
	if len(p.items) == 1 {
		put := p.items[0].Put
		_, err := s.db.PutItem(ctx, &dynamodb.PutItemInput{
			TableName: put.TableName, Item: put.Item, ConditionExpression: put.ConditionExpression,
			ExpressionAttributeNames: put.ExpressionAttributeNames, ExpressionAttributeValues: put.ExpressionAttributeValues,
		})
		switch {
		case isConflict(err):
			return fmt.Errorf("store: commit %s/%d/%d at v%d: %w", c.WorkflowID, c.InstanceID, c.RunID, c.ExpectV, ErrConflict)
		case err != nil:
			return fmt.Errorf("store: commit %s/%d/%d: %w", c.WorkflowID, c.InstanceID, c.RunID, err)
		}
		return nil
	}
	_, err := s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: p.items})
	if err == nil {
		return nil
	}
	reasons := cancelReasons(err)
	failed := func(i int) bool { return i >= 0 && i < len(reasons) && reasons[i] == "ConditionalCheckFailed" }
	switch {
	case c.Admit && failed(p.slotIndex) && !failed(0):
		return fmt.Errorf("store: commit %s/%d/%d: %w", c.WorkflowID, c.InstanceID, c.RunID, ErrNoSlot)
	case failed(p.requestIndex):
		return fmt.Errorf("store: create %s/%d: %w", c.WorkflowID, c.InstanceID, ErrRequestTaken)
	case isConflict(err):
		return fmt.Errorf("store: commit %s/%d/%d at v%d: %w (%v)", c.WorkflowID, c.InstanceID, c.RunID, c.ExpectV, ErrConflict, reasons)
	}
	return fmt.Errorf("store: commit %s/%d/%d: %w", c.WorkflowID, c.InstanceID, c.RunID, err)
}

// attemptWrite is the write of step attempt a of run run of instance inst:
// its status, its new timeline entries appended to the stored ones, its
// claim and, unless nil, its body. An update, so it creates the item too.
func (s *base) attemptWrite(wf string, inst, run int64, a Attempt) (types.TransactWriteItem, error) {
	tl := entryList(a.Timeline).Value
	set := "SET #st = :st, #tl = list_append(if_not_exists(#tl, :none), :tl)"
	names := map[string]string{"#st": attrStatus, "#tl": attrTimeline}
	values := map[string]types.AttributeValue{
		":st": str(a.Status), ":tl": &types.AttributeValueMemberL{Value: tl},
		":none": &types.AttributeValueMemberL{Value: []types.AttributeValue{}},
	}
	switch {
	case a.ReplaceTimeline:
		set = "SET #st = :st, #tl = :tl"
		delete(values, ":none")
	case a.Start != nil:
		// The attempt's start may be unwritten (left to a claim that has
		// not come): its entries come first.
		values[":none"] = entryList(a.Start.Timeline)
		if a.Body == nil && a.Start.Body != nil {
			body, err := s.encodeBody(a.Start.Body)
			if err != nil {
				return types.TransactWriteItem{}, err
			}
			set += ", #b = if_not_exists(#b, :sb), #e = if_not_exists(#e, :se)"
			names["#b"], names["#e"] = attrBody, attrEnc
			values[":sb"], values[":se"] = body[attrBody], body[attrEnc]
		}
	}
	remove := ""
	if a.Status != statusRunning {
		// The attempt ends here: a recorded outcome has been applied, and
		// the wake of a worker's end (FinishAttempt) was sent.
		remove = " REMOVE #o, #ob, #wn"
		names["#o"], names["#ob"], names["#wn"] = attrOutcome, attrOutbox, attrWorkerEntries
	}
	if a.Claim != "" {
		set += ", #c = :c, #l = :l"
		names["#c"], names["#l"] = attrClaim, attrLease
		values[":c"], values[":l"] = str(a.Claim), num(a.Lease)
	}
	if a.Body != nil { // nil: a status-only update that keeps the stored body
		body, err := s.encodeBody(a.Body)
		if err != nil {
			return types.TransactWriteItem{}, err
		}
		set += ", #b = :b, #e = :e"
		names["#b"], names["#e"] = attrBody, attrEnc
		values[":b"], values[":e"] = body[attrBody], body[attrEnc]
		// The stored timeline is small next to the body; the body alone
		// past the limit can never be written.
		if n := AttributeValueSize(body[attrBody]); n > MaxItemBytes {
			return types.TransactWriteItem{}, fmt.Errorf("store: commit %s/%d/%d: %w", wf, inst, run,
				&ItemTooLargeError{Item: fmt.Sprintf("step attempt %s/%d", a.StepID, a.Attempt), Bytes: n})
		}
	}
	return types.TransactWriteItem{Update: &types.Update{
		TableName:                 aws.String(s.table),
		Key:                       key(layout.RunPK(wf, inst), layout.AttemptSK(run, a.StepID, a.Attempt)),
		UpdateExpression:          aws.String(set + remove),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
	}}, nil
}

// entryList is the stored form of timeline entries: a list of strings.
func entryList(entries [][]byte) *types.AttributeValueMemberL {
	l := make([]types.AttributeValue, len(entries))
	for i, e := range entries {
		l[i] = str(string(e))
	}
	return &types.AttributeValueMemberL{Value: l}
}

// timelineWrite is the write of instance timeline entry t of run run in
// partition pk.
func (s *base) timelineWrite(pk string, run int64, t TimelineItem) types.TransactWriteItem {
	return types.TransactWriteItem{Put: &types.Put{
		TableName: aws.String(s.table),
		Item:      merge(key(pk, layout.TimelineSK(run, t.Seq)), map[string]types.AttributeValue{attrBody: bin(t.Body), attrEnc: str("raw")}),
	}}
}

// ListAttempts returns every step attempt of a run, ordered by step id then attempt.
func (s *Attempts) ListAttempts(ctx context.Context, wf string, inst, run int64) ([]Attempt, error) {
	return s.queryAttempts(ctx, wf, inst, layout.AttemptPrefix(run), true, 0)
}

// GetAttempt returns one attempt of a step; attempt 0 means the latest.
func (s *Attempts) GetAttempt(ctx context.Context, wf string, inst, run int64, step string, attempt int64) (*Attempt, error) {
	var list []Attempt
	var err error
	if attempt > 0 {
		list, err = s.queryAttempts(ctx, wf, inst, layout.AttemptSK(run, step, attempt), true, 1)
	} else {
		list, err = s.queryAttempts(ctx, wf, inst, layout.AttemptPrefix(run)+step+"#", false, 1)
	}
	if err != nil {
		return nil, err
	}
	if len(list) == 0 || list[0].StepID != step {
		return nil, ErrNotFound
	}
	return &list[0], nil
}

// attemptFromItem decodes a step attempt item and the run it belongs to.
func attemptFromItem(item map[string]types.AttributeValue) (*Attempt, int64, error) {
	body, err := decodeBody(item)
	if err != nil {
		return nil, 0, err
	}
	run, step, n, err := layout.ParseAttemptSK(getS(item, attrSK))
	if err != nil {
		return nil, 0, err
	}
	a := &Attempt{StepID: step, Attempt: n, Status: getS(item, attrStatus), Body: body}
	if l, ok := item[attrTimeline].(*types.AttributeValueMemberL); ok {
		for _, e := range l.Value {
			if sv, ok := e.(*types.AttributeValueMemberS); ok {
				a.Timeline = append(a.Timeline, []byte(sv.Value))
			}
		}
	}
	return a, run, nil
}

func (s *base) queryAttempts(ctx context.Context, wf string, inst int64, prefix string, forward bool, limit int32) ([]Attempt, error) {
	in := s.prefixQuery(layout.RunPK(wf, inst), prefix)
	in.ScanIndexForward = aws.Bool(forward)
	in.ConsistentRead = aws.Bool(true)
	if limit > 0 {
		in.Limit = aws.Int32(limit)
	}
	var out []Attempt
	err := s.queryPages(ctx, in, func(items []map[string]types.AttributeValue) (bool, error) {
		for _, item := range items {
			a, _, err := attemptFromItem(item)
			if err != nil {
				return false, err
			}
			out = append(out, *a)
		}
		return limit <= 0 || int32(len(out)) < limit, nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: list attempts %s/%d: %w", wf, inst, err)
	}
	return out, nil
}

// ListTimeline returns the instance-level timeline entries of a run that
// its run item does not hold (RunRecord.Timeline holds its first ones), in
// order.
func (s *Runs) ListTimeline(ctx context.Context, wf string, inst, run int64) ([]TimelineItem, error) {
	in := s.prefixQuery(layout.RunPK(wf, inst), layout.TimelinePrefix(run))
	var out []TimelineItem
	err := s.queryAll(ctx, in, func(item map[string]types.AttributeValue) error {
		body, err := decodeBody(item)
		if err != nil {
			return err
		}
		var seq int64
		fmt.Sscanf(strings.TrimPrefix(getS(item, attrSK), layout.TimelinePrefix(run)), "%d", &seq)
		out = append(out, TimelineItem{Seq: seq, Body: body})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: timeline %s/%d: %w", wf, inst, err)
	}
	return out, nil
}

// NewRun is a run to add to an existing instance (a restart).
type NewRun struct {
	WorkflowID string
	InstanceID int64
	// PrevRun is the instance's latest run, which the new run follows.
	PrevRun    int64
	Status     string
	State      []byte
	FirstEvent Event
	// Outbox is forwarded by the router from the new run item.
	Outbox []Message
	Now    time.Time
}

// CreateRun adds run PrevRun+1 to an instance in one transaction: the run's
// state item, its first event, and the instance summary's latest run and
// status, conditioned on the latest run still being PrevRun, so that two
// concurrent restarts create one run (the other gets ErrConflict).
func (s *Runs) CreateRun(ctx context.Context, nr NewRun) error {
	items, err := s.newRunItems(nr)
	if err != nil {
		return err
	}
	_, err = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
	if err != nil {
		if isConflict(err) {
			return fmt.Errorf("store: restart %s/%d after run %d: %w", nr.WorkflowID, nr.InstanceID, nr.PrevRun, ErrConflict)
		}
		return fmt.Errorf("store: restart %s/%d: %w", nr.WorkflowID, nr.InstanceID, err)
	}
	return nil
}

// newRunItems are the writes of CreateRun: the instance summary's latest
// run (conditioned on it being PrevRun), the new run's item (on it not
// existing) and its first event.
func (s *Runs) newRunItems(nr NewRun) ([]types.TransactWriteItem, error) {
	run := nr.PrevRun + 1
	runItem, err := s.runItem(nr.WorkflowID, nr.InstanceID, run, 1, nr.Status, nr.State, nr.Outbox, 0)
	if err != nil {
		return nil, err
	}
	evItem, err := s.eventItem(nr.WorkflowID, nr.InstanceID, run, nr.FirstEvent)
	if err != nil {
		return nil, err
	}
	return []types.TransactWriteItem{
		{Update: &types.Update{
			TableName:                aws.String(s.table),
			Key:                      key(layout.WorkflowPK(nr.WorkflowID), layout.InstanceSK(nr.InstanceID)),
			UpdateExpression:         aws.String("SET #run = :run, #st = :st, start_time = :zero, end_time = :zero, modify_time = :now"),
			ConditionExpression:      aws.String("#run = :prev"),
			ExpressionAttributeNames: map[string]string{"#run": "run", "#st": attrStatus},
			ExpressionAttributeValues: map[string]types.AttributeValue{
				":run": num(run), ":prev": num(nr.PrevRun), ":st": str(nr.Status), ":zero": num(0), ":now": num(millis(nr.Now)),
			},
		}},
		{Put: &types.Put{TableName: aws.String(s.table), Item: runItem, ConditionExpression: aws.String("attribute_not_exists(pk)")}},
		{Put: &types.Put{TableName: aws.String(s.table), Item: evItem}},
	}, nil
}

// Enqueue records that an instance's run waits for a run slot. It bumps the
// slot item's queue version "qv" in the same transaction, so a run that
// releases its slot having looked at the queue before this enqueue fails
// its commit (QueueVersion) and looks again: no queued run is missed.
func (s *Instances) Enqueue(ctx context.Context, wf string, inst, run int64) error {
	_, err := s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{
			TableName: aws.String(s.table),
			Item:      merge(key(layout.WorkflowPK(wf), layout.QueueSK(inst)), map[string]types.AttributeValue{"run": num(run)}),
		}},
		{Update: &types.Update{
			TableName:                 aws.String(s.table),
			Key:                       key(layout.WorkflowPK(wf), layout.SlotSK),
			UpdateExpression:          aws.String("ADD qv :one"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":one": num(1)},
		}},
	}})
	if err != nil {
		return fmt.Errorf("store: enqueue %s/%d: %w", wf, inst, err)
	}
	return nil
}

// QueueVersion returns the slot item's queue version (0 before any
// enqueue), strongly consistent. Read it before OldestQueued and commit
// with Commit.QueueVersion.
func (s *Instances) QueueVersion(ctx context.Context, wf string) (int64, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), Key: key(layout.WorkflowPK(wf), layout.SlotSK), ConsistentRead: aws.Bool(true),
		ProjectionExpression: aws.String("qv"),
	})
	if err != nil {
		return 0, fmt.Errorf("store: queue version of %s: %w", wf, err)
	}
	return getN(out.Item, "qv"), nil
}

// OldestQueued returns the waiting instance with the lowest id other than
// except, strongly consistent; ok is false when none waits.
func (s *Instances) OldestQueued(ctx context.Context, wf string, except int64) (inst, run int64, ok bool, err error) {
	in := s.prefixQuery(layout.WorkflowPK(wf), "Q#")
	in.ConsistentRead = aws.Bool(true)
	in.Limit = aws.Int32(2)
	out, err := s.db.Query(ctx, in)
	if err != nil {
		return 0, 0, false, fmt.Errorf("store: queue of %s: %w", wf, err)
	}
	for _, item := range out.Items {
		var id int64
		fmt.Sscanf(strings.TrimPrefix(getS(item, attrSK), "Q#"), "%d", &id)
		if id != except {
			return id, getN(item, "run"), true, nil
		}
	}
	return 0, 0, false, nil
}

// RunRef names one run of an instance.
type RunRef struct{ InstanceID, RunID int64 }

// ActiveRuns returns the runs holding a slot and the queued runs of a
// workflow (strongly consistent), excluding instance except.
func (s *Instances) ActiveRuns(ctx context.Context, wf string, except int64) (holding, queued []RunRef, err error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table), Key: key(layout.WorkflowPK(wf), layout.SlotSK), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return nil, nil, fmt.Errorf("store: slots of %s: %w", wf, err)
	}
	if ss, ok := out.Item["holders"].(*types.AttributeValueMemberSS); ok {
		for _, h := range ss.Value {
			var r RunRef
			if _, err := fmt.Sscanf(h, "%d#%d", &r.InstanceID, &r.RunID); err == nil && r.InstanceID != except {
				holding = append(holding, r)
			}
		}
	}
	in := s.prefixQuery(layout.WorkflowPK(wf), "Q#")
	in.ConsistentRead = aws.Bool(true)
	err = s.queryAll(ctx, in, func(item map[string]types.AttributeValue) error {
		var id int64
		fmt.Sscanf(strings.TrimPrefix(getS(item, attrSK), "Q#"), "%d", &id)
		if id != except {
			queued = append(queued, RunRef{InstanceID: id, RunID: getN(item, "run")})
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("store: queue of %s: %w", wf, err)
	}
	return holding, queued, nil
}

// ErrNotHolding is returned by ReleaseSlot when the run holds no slot.
var ErrNotHolding = errors.New("store: run holds no slot")

// ReleaseSlot gives back the run-strategy slot that a run which has ended
// still holds (a failed STRICT_SEQUENTIAL run blocks its workflow that way)
// and, in the same transaction, puts wake (when set) into another run's
// inbox. It fails with ErrNotHolding when the run holds no slot.
func (s *Instances) ReleaseSlot(ctx context.Context, wf string, inst, run int64, wake *RunEvent) error {
	holder := &types.AttributeValueMemberSS{Value: []string{fmt.Sprintf("%d#%d", inst, run)}}
	items := []types.TransactWriteItem{{Update: &types.Update{
		TableName:           aws.String(s.table),
		Key:                 key(layout.WorkflowPK(wf), layout.SlotSK),
		UpdateExpression:    aws.String("ADD running :d DELETE holders :h"),
		ConditionExpression: aws.String("contains(holders, :one)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":d": num(-1), ":h": holder, ":one": str(holder.Value[0]),
		},
	}}}
	if wake != nil {
		item, err := s.eventItem(wf, wake.InstanceID, wake.RunID, wake.Event)
		if err != nil {
			return err
		}
		items = append(items, types.TransactWriteItem{Put: &types.Put{TableName: aws.String(s.table), Item: item}})
	}
	_, err := s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
	if err != nil {
		if reasons := cancelReasons(err); len(reasons) > 0 && reasons[0] == "ConditionalCheckFailed" {
			return fmt.Errorf("store: release slot of %s/%d/%d: %w", wf, inst, run, ErrNotHolding)
		}
		return fmt.Errorf("store: release slot of %s/%d/%d: %w", wf, inst, run, err)
	}
	return nil
}
