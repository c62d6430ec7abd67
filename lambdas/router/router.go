// Package router is the stream router: it reads the table's DynamoDB stream
// and forwards every outbox message a committed change carries to its queue,
// and the change events it carries to the events SNS topic.
// Messages due more than 15 minutes ahead become one-time EventBridge
// Scheduler schedules that deliver to the work queue when due; a run's
// workflow-timeout schedule is deleted when the run ends.
package router

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	schedtypes "github.com/aws/aws-sdk-go-v2/service/scheduler/types"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	changes "github.com/maestro-serverless/maestro/events"

	"github.com/maestro-serverless/maestro/pricing"
	"github.com/maestro-serverless/maestro/store"
	"github.com/maestro-serverless/maestro/trace"
)

// SQS is the subset of the SQS client the router uses.
type SQS interface {
	SendMessageBatch(ctx context.Context, in *sqs.SendMessageBatchInput, opts ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error)
}

// Scheduler is the subset of the EventBridge Scheduler client the router uses.
type Scheduler interface {
	CreateSchedule(ctx context.Context, in *scheduler.CreateScheduleInput, opts ...func(*scheduler.Options)) (*scheduler.CreateScheduleOutput, error)
	DeleteSchedule(ctx context.Context, in *scheduler.DeleteScheduleInput, opts ...func(*scheduler.Options)) (*scheduler.DeleteScheduleOutput, error)
}

// SNS is the subset of the SNS client the router uses.
type SNS interface {
	PublishBatch(ctx context.Context, in *sns.PublishBatchInput, opts ...func(*sns.Options)) (*sns.PublishBatchOutput, error)
}

// Config wires the router.
type Config struct {
	SQS       SQS
	Scheduler Scheduler
	// SNS and EventsTopicARN publish change events; without them events
	// are dropped with a warning.
	SNS            SNS
	EventsTopicARN string
	// MaestroEvents, when set, publishes Maestro's *_CHANGE_EVENT
	// messages of every change event beside it (events.EncodeMaestro),
	// with ClusterName (default DefaultClusterName) as their cluster_name.
	MaestroEvents bool
	ClusterName   string
	// QueueURLs maps the store's logical queue names to URLs.
	QueueURLs map[string]string
	// WorkQueueARN is the target of long-timer schedules.
	WorkQueueARN string
	// ScheduleGroup holds the one-time schedules; SchedulerRoleARN is the
	// role Scheduler assumes to send to the work queue.
	ScheduleGroup    string
	SchedulerRoleARN string
	// BackstopsNeeded, when set, says which backstop copies of directly
	// dispatched messages (store.Message.Direct) to send: a copy whose
	// step a worker already took is dropped. Its error only costs the
	// copies (all are sent).
	BackstopsNeeded func(ctx context.Context, msgs []store.Message) ([]bool, error)
	Now             func() time.Time
	Logger          *slog.Logger
}

// Router forwards outbox messages.
type Router struct{ cfg Config }

// New returns a Router.
func New(cfg Config) *Router {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Router{cfg: cfg}
}

// Handle forwards a batch of stream records. The messages of every record
// are sent together — SQS messages ten per SendMessageBatch, change events
// ten per PublishBatch, across records — so that a busy shard (a kill of
// 300 steps writes 300 records) costs a few calls per batch rather than a
// few per record: one at a time, the router fell tens of seconds behind
// and every timer and wake behind it came late. On a failure it reports
// the first record with a message not sent, and every later one, as
// failed, so Lambda retries from there (ReportBatchItemFailures semantics)
// and no message is lost; messages already sent may be sent again, which
// every consumer tolerates.
//
// Wakes are coalesced: a FIFO message (a decider wake) that a later record
// of the same batch repeats is sent only with that later record. A wake
// means "apply this run's pending events", and the decider applies all of
// them at once, so one wake after the batch's events is enough; a fan-in
// of N finishing steps costs one decision instead of N.
func (r *Router) Handle(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	var resp events.DynamoDBEventResponse
	wakes := r.lastWakes(ev.Records)
	var out []outgoing
	for i, rec := range ev.Records {
		out = append(out, r.messagesOf(rec, i, wakes)...)
	}
	out = r.dropTakenBackstops(ctx, out)
	if failed, err := r.send(ctx, out); err != nil {
		r.cfg.Logger.Error("router: forwarding failed; the batch is retried from this record",
			"sequence_number", ev.Records[failed].Change.SequenceNumber, "error", err)
		for _, later := range ev.Records[failed:] {
			resp.BatchItemFailures = append(resp.BatchItemFailures,
				events.DynamoDBBatchItemFailure{ItemIdentifier: later.Change.SequenceNumber})
		}
	}
	return resp, nil
}

// dropTakenBackstops leaves out of out the backstop copies that
// Config.BackstopsNeeded says are not needed.
func (r *Router) dropTakenBackstops(ctx context.Context, out []outgoing) []outgoing {
	if r.cfg.BackstopsNeeded == nil {
		return out
	}
	var idx []int
	var msgs []store.Message
	for i, o := range out {
		if o.msg.Direct {
			idx, msgs = append(idx, i), append(msgs, o.msg)
		}
	}
	if len(msgs) == 0 {
		return out
	}
	needed, err := r.cfg.BackstopsNeeded(ctx, msgs)
	if err != nil {
		r.cfg.Logger.Warn("router: cannot tell which backstop copies are needed; sending them all", "error", err)
		return out
	}
	drop := make([]bool, len(out))
	for j, i := range idx {
		drop[i] = j < len(needed) && !needed[j]
	}
	kept := out[:0:0]
	for i, o := range out {
		if !drop[i] {
			kept = append(kept, o)
		}
	}
	return kept
}

// wakeKey identifies a FIFO message by its group and body (a wake's body
// without the attempts it names, see store.WakeCoalesceKey).
type wakeKey struct{ queue, group, body string }

func keyOf(m store.Message) wakeKey {
	return wakeKey{m.Queue, m.GroupID, store.WakeCoalesceKey(m.Body)}
}

// batchWake is a FIFO message of a batch: the first and last records that
// carry it, and its bodies (wakes of one run naming different attempts).
type batchWake struct {
	first, last int
	bodies      []string
}

// lastWakes maps each FIFO message of the batch to the records that carry
// it: the last one sends it, merged (store.MergeWakes), and a failure to
// send it retries the batch from the first.
func (r *Router) lastWakes(recs []events.DynamoDBEventRecord) map[wakeKey]*batchWake {
	wakes := map[wakeKey]*batchWake{}
	for i, rec := range recs {
		if rec.EventName == string(events.DynamoDBOperationTypeRemove) {
			continue
		}
		msgs, err := store.OutboxFromImage(rec.Change.NewImage)
		if err != nil {
			continue
		}
		for _, m := range msgs {
			if m.GroupID == "" {
				continue
			}
			k := keyOf(m)
			w := wakes[k]
			if w == nil {
				w = &batchWake{first: i}
				wakes[k] = w
			}
			w.last = i
			if !slices.Contains(w.bodies, m.Body) {
				w.bodies = append(w.bodies, m.Body)
			}
		}
	}
	return wakes
}

// outgoing is one message to send and the index of the stream record (of
// its batch) that carries it.
type outgoing struct {
	rec int
	msg store.Message
	// id is the FIFO deduplication id (and the seed of a schedule's name),
	// stable across retries of the record.
	id string
}

// messagesOf returns the messages record rec (index in its batch) carries.
func (r *Router) messagesOf(rec events.DynamoDBEventRecord, index int, wakes map[wakeKey]*batchWake) []outgoing {
	if rec.EventName == string(events.DynamoDBOperationTypeRemove) {
		return nil
	}
	msgs, err := store.OutboxFromImage(rec.Change.NewImage)
	if err != nil {
		// A record that cannot be decoded never will be: log it and move on
		// rather than blocking the shard.
		r.cfg.Logger.Error("router: undecodable outbox dropped", "sequence_number", rec.Change.SequenceNumber, "error", err)
		return nil
	}
	var out []outgoing
	for i, m := range msgs {
		from := index
		if m.GroupID != "" {
			w := wakes[keyOf(m)]
			if w.last > index {
				continue // a later record of this batch sends the same wake
			}
			if len(w.bodies) > 1 {
				m.Body = store.MergeWakes(w.bodies...)
			}
			from = w.first
		}
		if m.Direct {
			// The committer sent it already; this copy is the backstop
			// for a committer that died before it could, marked so that
			// the worker checks cheaply whether it is still needed.
			m.DelaySeconds, m.At = int32(store.BackstopDelay/time.Second), max(m.At, r.cfg.Now().Add(store.BackstopDelay).UnixMilli())
			m.Body = markBackstop(m.Body)
		}
		out = append(out, outgoing{rec: from, msg: m, id: dedupID(rec, i)})
	}
	return out
}

// Dispatch sends messages at once: the committer's direct dispatch right
// after its commit (work-queue messages, see store.Message.Direct) and
// wakes of the FIFO decision queue (a run handed to the decider). Each
// wake gets a deduplication id of its own: a wake sent directly is a
// shortcut beside the stream's copy, and a second wake of a run is a no-op.
func (r *Router) Dispatch(ctx context.Context, msgs []store.Message) error {
	out := make([]outgoing, len(msgs))
	for i, m := range msgs {
		switch {
		case m.At > 0:
			return fmt.Errorf("router: direct dispatch takes messages to send now, not one due at %d", m.At)
		case m.Queue == store.QueueWork:
			out[i] = outgoing{msg: m}
		case m.Queue == store.QueueDecision && m.GroupID != "":
			out[i] = outgoing{msg: m, id: "direct-" + rand.Text()}
		default:
			return fmt.Errorf("router: direct dispatch takes work or decision-queue wakes, not a %s message", m.Queue)
		}
	}
	_, err := r.send(ctx, out)
	return err
}

// send sends out: change events to SNS, messages due in more than 15
// minutes to EventBridge Scheduler, the rest to their queues in batches of
// ten. On a failure it returns the smallest record index among the
// messages it did not send.
func (r *Router) send(ctx context.Context, out []outgoing) (failed int, err error) {
	sd := &sending{out: out, sent: make([]bool, len(out)), byQueue: map[string][]queued{}}
	if err := r.sort(ctx, sd, r.cfg.Now()); err != nil {
		return sd.unsent(err)
	}
	for _, url := range sd.queues {
		if err := r.sendQueue(ctx, sd, url); err != nil {
			return sd.unsent(err)
		}
	}
	if len(sd.evs) > 0 {
		done, err := r.publish(ctx, sd.evs)
		// An events message is sent once all its events are.
		for k, from := range sd.evFrom {
			sd.sent[from] = k < done
		}
		if err != nil {
			return sd.unsent(err)
		}
	}
	return 0, nil
}

// sending is one send's messages and what became of them.
type sending struct {
	out  []outgoing
	sent []bool
	// byQueue holds the queue messages by queue URL, queues the URLs in
	// first-use order.
	byQueue map[string][]queued
	queues  []string
	// evs are the change events to publish, evFrom the index in out of
	// each one's message.
	evs    []changes.Event
	evFrom []int
}

// queued is a message for a queue.
type queued struct {
	at int // index in out
	e  sqstypes.SendMessageBatchRequestEntry
}

// unsent returns the smallest record index among the messages not sent.
func (sd *sending) unsent(err error) (int, error) {
	first := -1
	for i, o := range sd.out {
		if !sd.sent[i] && (first < 0 || o.rec < first) {
			first = o.rec
		}
	}
	return max(first, 0), err
}

// sort sorts the messages: change events to publish, far timers scheduled
// at once, the rest to their queues.
func (r *Router) sort(ctx context.Context, sd *sending, now time.Time) error {
	for i, o := range sd.out {
		m := o.msg
		switch {
		case m.Queue == store.QueueEvents:
			batch, err := changes.DecodeBatch(m.Body)
			if err != nil {
				// A batch that cannot be decoded never will be.
				r.cfg.Logger.Error("router: undecodable events dropped", "error", err)
				sd.sent[i] = true
				continue
			}
			sd.evs = append(sd.evs, batch...)
			for range batch {
				sd.evFrom = append(sd.evFrom, i)
			}
			sd.sent[i] = len(batch) == 0
		case m.At > 0 && time.UnixMilli(m.At).Sub(now) > 15*time.Minute:
			if err := r.schedule(ctx, o.id, m); err != nil {
				return err
			}
			sd.sent[i] = true
		case m.Queue == store.QueueUnschedule:
			if err := r.unschedule(ctx, m.Body); err != nil {
				return err
			}
			sd.sent[i] = true
		default:
			url, ok := r.cfg.QueueURLs[m.Queue]
			if !ok || url == "" {
				return fmt.Errorf("router: no URL for queue %q", m.Queue)
			}
			if _, seen := sd.byQueue[url]; !seen {
				sd.queues = append(sd.queues, url)
			}
			sd.byQueue[url] = append(sd.byQueue[url], queued{i, queueEntry(o, now)})
		}
	}
	return nil
}

// queueEntry is the SQS entry of a queue message: its trace header, its
// FIFO group and deduplication id, or its delay.
func queueEntry(o outgoing, now time.Time) sqstypes.SendMessageBatchRequestEntry {
	m := o.msg
	e := sqstypes.SendMessageBatchRequestEntry{MessageBody: aws.String(m.Body)}
	if id := trace.ID(m.Trace); id.Valid() {
		// X-Ray follows a trace through SQS by this attribute; the
		// handlers also read it to log the run's trace id.
		e.MessageSystemAttributes = map[string]sqstypes.MessageSystemAttributeValue{
			string(sqstypes.MessageSystemAttributeNameForSendsAWSTraceHeader): {DataType: aws.String("String"), StringValue: aws.String(id.Header())},
		}
	}
	switch {
	case m.GroupID != "":
		e.MessageGroupId = aws.String(m.GroupID)
		e.MessageDeduplicationId = aws.String(o.id)
	case m.At > 0:
		// The delay counts from now, not from the commit: a record
		// forwarded late (a busy shard, a retried batch) must not make its
		// timer late by as much.
		e.DelaySeconds = delayUntil(time.UnixMilli(m.At), now)
	case m.DelaySeconds > 0:
		e.DelaySeconds = m.DelaySeconds
	}
	return e
}

// sendQueue sends the messages sd holds for queue url, ten per
// SendMessageBatch: one batch after another for a FIFO queue, whose order
// matters, and up to sendersAtOnce batches at once for a standard queue (a
// fan-out's hundreds of work messages). It marks in sd what was sent and
// returns the batches' failures, joined (a FIFO queue's stop at the first).
func (r *Router) sendQueue(ctx context.Context, sd *sending, url string) error {
	entries := sd.byQueue[url]
	var batches [][]queued
	for len(entries) > 0 {
		n := min(10, len(entries))
		batches, entries = append(batches, entries[:n]), entries[n:]
	}
	at := 1
	if !strings.HasSuffix(url, ".fifo") {
		at = sendersAtOnce
	}
	errs := make([]error, len(batches))
	slots := make(chan struct{}, at)
	var wg sync.WaitGroup
	for i, b := range batches {
		if at == 1 {
			if errs[i] = r.sendBatch(ctx, sd, url, b); errs[i] != nil {
				break
			}
			continue
		}
		slots <- struct{}{}
		wg.Go(func() {
			defer func() { <-slots }()
			errs[i] = r.sendBatch(ctx, sd, url, b)
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// sendersAtOnce is how many batches sendQueue sends to a standard queue at
// once.
const sendersAtOnce = 8

// sendBatch sends up to ten messages in one SendMessageBatch and marks in
// sd those that were sent (each batch marks its own entries only).
func (r *Router) sendBatch(ctx context.Context, sd *sending, url string, entries []queued) error {
	batch := make([]sqstypes.SendMessageBatchRequestEntry, len(entries))
	payload := 0
	for _, e := range entries {
		payload += len(aws.ToString(e.e.MessageBody))
	}
	// Each message carries its share of the batch's billed requests (one
	// per 64 KB) to its run, whose handler records it (store.MessageOps).
	part := pricing.SQSRequests
	if strings.HasSuffix(url, ".fifo") {
		part = pricing.SQSFIFORequests
	}
	share := float64(max(1, (payload+64*1024-1)/(64*1024))) / float64(len(entries))
	for k, e := range entries {
		batch[k] = e.e
		batch[k].MessageBody = aws.String(store.WithSendShare(aws.ToString(e.e.MessageBody), part, share))
		batch[k].Id = aws.String(strconv.Itoa(k))
	}
	res, err := r.cfg.SQS.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(url), Entries: batch})
	if err != nil {
		return fmt.Errorf("router: send to %s: %w", url, err)
	}
	for k, e := range entries {
		sd.sent[e.at] = true
		for _, f := range res.Failed {
			if aws.ToString(f.Id) == strconv.Itoa(k) {
				sd.sent[e.at] = false
			}
		}
	}
	if len(res.Failed) > 0 {
		f := res.Failed[0]
		return fmt.Errorf("router: send to %s: %d failed, first %s: %s", url, len(res.Failed), aws.ToString(f.Code), aws.ToString(f.Message))
	}
	return nil
}

// markBackstop adds "backstop": true to a JSON object body; any other body
// is returned as it is.
func markBackstop(body string) string {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal([]byte(body), &fields); err != nil || fields == nil {
		return body
	}
	fields["backstop"] = json.RawMessage("true")
	out, err := json.Marshal(fields)
	if err != nil {
		return body
	}
	return string(out)
}

// delayUntil is the SQS delay (whole seconds, rounded up, 0..900) of a
// message due at at.
func delayUntil(at, now time.Time) int32 {
	d := at.Sub(now)
	if d <= 0 {
		return 0
	}
	return int32(min((d+time.Second-1)/time.Second, 900))
}

// schedule hands a long timer to EventBridge Scheduler as a one-time
// schedule that deletes itself after delivering to the work queue.
func (r *Router) schedule(ctx context.Context, id string, m store.Message) error {
	if r.cfg.Scheduler == nil {
		return errors.New("router: a timer beyond 15 minutes needs EventBridge Scheduler, which is not configured")
	}
	at := time.UnixMilli(m.At).UTC()
	name := "t-" + id[:48]
	if m.Schedule != "" {
		name = m.Schedule
	}
	_, err := r.cfg.Scheduler.CreateSchedule(ctx, &scheduler.CreateScheduleInput{
		Name:                       aws.String(name),
		GroupName:                  aws.String(r.cfg.ScheduleGroup),
		ScheduleExpression:         aws.String("at(" + at.Format("2006-01-02T15:04:05") + ")"),
		ScheduleExpressionTimezone: aws.String("UTC"),
		FlexibleTimeWindow:         &schedtypes.FlexibleTimeWindow{Mode: schedtypes.FlexibleTimeWindowModeOff},
		ActionAfterCompletion:      schedtypes.ActionAfterCompletionDelete,
		Target: &schedtypes.Target{
			Arn:     aws.String(r.cfg.WorkQueueARN),
			RoleArn: aws.String(r.cfg.SchedulerRoleARN),
			Input:   aws.String(m.Body),
		},
	})
	var conflict *schedtypes.ConflictException
	if err != nil && !errors.As(err, &conflict) { // conflict: created by an earlier try
		return fmt.Errorf("router: create schedule %s: %w", name, err)
	}
	return nil
}

// unschedule deletes a run's workflow-timeout schedule
// (store.QueueUnschedule) that has not fired; one already gone (fired, or
// deleted by an earlier try) is no error. Only those schedules may be
// deleted here: any other name is dropped, with a warning.
func (r *Router) unschedule(ctx context.Context, name string) error {
	if !strings.HasPrefix(name, store.RunTimeoutSchedulePrefix) {
		r.cfg.Logger.Warn("router: not deleting a schedule that is no run's timeout", "schedule", name)
		return nil
	}
	if r.cfg.Scheduler == nil {
		return nil // then nothing was scheduled either
	}
	_, err := r.cfg.Scheduler.DeleteSchedule(ctx, &scheduler.DeleteScheduleInput{Name: aws.String(name), GroupName: aws.String(r.cfg.ScheduleGroup)})
	var gone *schedtypes.ResourceNotFoundException
	if err != nil && !errors.As(err, &gone) {
		return fmt.Errorf("router: delete schedule %s: %w", name, err)
	}
	return nil
}

// publish sends change events to the events topic, ten messages per
// PublishBatch call, each with its filterable attributes (with
// Config.MaestroEvents an event is several messages, see eventMessages).
// It returns how many of evs, from the first, it published whole; an
// event published in part is published again whole (delivery is at least
// once).
func (r *Router) publish(ctx context.Context, evs []changes.Event) (int, error) {
	if r.cfg.SNS == nil || r.cfg.EventsTopicARN == "" {
		r.cfg.Logger.Warn("router: no events topic configured; events dropped", "count", len(evs))
		return len(evs), nil
	}
	var entries []snstypes.PublishBatchRequestEntry
	var of []int // of[i]: the index in evs of entries[i]'s event
	for i, e := range evs {
		msgs, err := r.eventMessages(e)
		if err != nil {
			return 0, err
		}
		entries = append(entries, msgs...)
		for range msgs {
			of = append(of, i)
		}
	}
	for sent := 0; sent < len(entries); {
		n := min(10, len(entries)-sent)
		batch := entries[sent : sent+n]
		entryIDs(batch)
		out, err := r.cfg.SNS.PublishBatch(ctx, &sns.PublishBatchInput{TopicArn: aws.String(r.cfg.EventsTopicARN), PublishBatchRequestEntries: batch})
		if err == nil && len(out.Failed) > 0 {
			f := out.Failed[0]
			err = fmt.Errorf("%d failed, first %s: %s", len(out.Failed), aws.ToString(f.Code), aws.ToString(f.Message))
		}
		if err != nil {
			return of[sent], fmt.Errorf("router: publish events: %w", err)
		}
		sent += n
	}
	return len(evs), nil
}

func dedupID(rec events.DynamoDBEventRecord, i int) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s|%s|%d", rec.EventSourceArn, rec.Change.SequenceNumber, i)
	return hex.EncodeToString(h.Sum(nil))
}
