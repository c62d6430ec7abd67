// Package router is the stream router: it reads the table's DynamoDB stream
// and forwards every outbox message a committed change carries to its queue,
// and the change events it carries to the events SNS topic.
// Messages due more than 15 minutes ahead become one-time EventBridge
// Scheduler schedules that deliver to the work queue when due.
package router

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
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
	"github.com/maestro-serverless/maestro/store"
)

// SQS is the subset of the SQS client the router uses.
type SQS interface {
	SendMessageBatch(ctx context.Context, in *sqs.SendMessageBatchInput, opts ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error)
}

// Scheduler is the subset of the EventBridge Scheduler client the router uses.
type Scheduler interface {
	CreateSchedule(ctx context.Context, in *scheduler.CreateScheduleInput, opts ...func(*scheduler.Options)) (*scheduler.CreateScheduleOutput, error)
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
	// QueueURLs maps the store's logical queue names to URLs.
	QueueURLs map[string]string
	// WorkQueueARN is the target of long-timer schedules.
	WorkQueueARN string
	// ScheduleGroup holds the one-time schedules; SchedulerRoleARN is the
	// role Scheduler assumes to send to the work queue.
	ScheduleGroup    string
	SchedulerRoleARN string
	Now              func() time.Time
	Logger           *slog.Logger
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

// Handle processes a batch of stream records in order. On a failure it
// reports that record and every later one as failed, so Lambda retries from
// the failed record on (ReportBatchItemFailures semantics) and no message is
// lost; messages already sent may be sent again, which every consumer tolerates.
//
// Wakes are coalesced: a FIFO message (a decider wake) that a later record
// of the same batch repeats is sent only with that later record. A wake
// means "apply this run's pending events", and the decider applies all of
// them at once, so one wake after the batch's events is enough; a fan-in
// of N finishing steps costs one decision instead of N.
func (r *Router) Handle(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	var resp events.DynamoDBEventResponse
	last := r.lastWakes(ev.Records)
	for i, rec := range ev.Records {
		if err := r.forward(ctx, rec, i, last); err != nil {
			r.cfg.Logger.Error("router: forwarding failed; the batch is retried from this record",
				"sequence_number", rec.Change.SequenceNumber, "error", err)
			for _, later := range ev.Records[i:] {
				resp.BatchItemFailures = append(resp.BatchItemFailures,
					events.DynamoDBBatchItemFailure{ItemIdentifier: later.Change.SequenceNumber})
			}
			return resp, nil
		}
	}
	return resp, nil
}

// wakeKey identifies a FIFO message by its group and body.
type wakeKey struct{ queue, group, body string }

// lastWakes maps each FIFO message of the batch to the index of the last
// record that carries it.
func (r *Router) lastWakes(recs []events.DynamoDBEventRecord) map[wakeKey]int {
	last := map[wakeKey]int{}
	for i, rec := range recs {
		if rec.EventName == string(events.DynamoDBOperationTypeRemove) {
			continue
		}
		msgs, err := store.OutboxFromImage(rec.Change.NewImage)
		if err != nil {
			continue
		}
		for _, m := range msgs {
			if m.GroupID != "" {
				last[wakeKey{m.Queue, m.GroupID, m.Body}] = i
			}
		}
	}
	return last
}

func (r *Router) forward(ctx context.Context, rec events.DynamoDBEventRecord, index int, last map[wakeKey]int) error {
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
	if len(msgs) == 0 {
		return nil
	}
	ids := make([]string, len(msgs))
	send := make([]store.Message, 0, len(msgs))
	for i, m := range msgs {
		if m.GroupID != "" && last[wakeKey{m.Queue, m.GroupID, m.Body}] > index {
			continue // a later record of this batch sends the same wake
		}
		if m.Direct {
			// The committer sent it already; this copy is the backstop
			// for a committer that died before it could, marked so that
			// the worker checks cheaply whether it is still needed.
			m.DelaySeconds, m.At = int32(store.BackstopDelay/time.Second), max(m.At, r.cfg.Now().Add(store.BackstopDelay).UnixMilli())
			m.Body = markBackstop(m.Body)
		}
		// The id is stable across retries of this record, so SQS FIFO
		// drops a resend within its deduplication window.
		ids[len(send)] = dedupID(rec, i)
		send = append(send, m)
	}
	return r.send(ctx, send, ids[:len(send)])
}

// Dispatch sends work-queue messages at once: the committer's direct
// dispatch, right after its commit (see store.Message.Direct).
func (r *Router) Dispatch(ctx context.Context, msgs []store.Message) error {
	for _, m := range msgs {
		if m.Queue != store.QueueWork || m.At > 0 {
			return fmt.Errorf("router: direct dispatch takes work to do now, not a %s message due at %d", m.Queue, m.At)
		}
	}
	return r.send(ctx, msgs, make([]string, len(msgs)))
}

// send sends msgs: change events to SNS, messages due in more than 15
// minutes to EventBridge Scheduler, the rest to their queues in batches.
func (r *Router) send(ctx context.Context, msgs []store.Message, ids []string) error {
	now := r.cfg.Now()
	byQueue := map[string][]sqstypes.SendMessageBatchRequestEntry{}
	var queues []string
	for i, m := range msgs {
		if m.Queue == store.QueueEvents {
			if err := r.publish(ctx, m.Body); err != nil {
				return err
			}
			continue
		}
		id := ids[i]
		if m.At > 0 && time.UnixMilli(m.At).Sub(now) > 15*time.Minute {
			if err := r.schedule(ctx, id, m); err != nil {
				return err
			}
			continue
		}
		url, ok := r.cfg.QueueURLs[m.Queue]
		if !ok {
			return fmt.Errorf("router: no URL for queue %q", m.Queue)
		}
		e := sqstypes.SendMessageBatchRequestEntry{Id: aws.String(fmt.Sprint(i)), MessageBody: aws.String(m.Body)}
		switch {
		case m.GroupID != "":
			e.MessageGroupId = aws.String(m.GroupID)
			e.MessageDeduplicationId = aws.String(id)
		case m.At > 0:
			// The delay counts from now, not from the commit: a record
			// forwarded late (a busy shard, a retried batch) must not
			// make its timer late by as much.
			e.DelaySeconds = delayUntil(time.UnixMilli(m.At), now)
		case m.DelaySeconds > 0:
			e.DelaySeconds = m.DelaySeconds
		}
		if _, seen := byQueue[url]; !seen {
			queues = append(queues, url)
		}
		byQueue[url] = append(byQueue[url], e)
	}
	for _, url := range queues {
		entries := byQueue[url]
		for len(entries) > 0 {
			n := min(10, len(entries))
			out, err := r.cfg.SQS.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(url), Entries: entries[:n]})
			if err != nil {
				return fmt.Errorf("router: send to %s: %w", url, err)
			}
			if len(out.Failed) > 0 {
				f := out.Failed[0]
				return fmt.Errorf("router: send to %s: %d failed, first %s: %s", url, len(out.Failed), aws.ToString(f.Code), aws.ToString(f.Message))
			}
			entries = entries[n:]
		}
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

// publish sends a batch of change events to the events topic, ten per
// PublishBatch call, each with its filterable attributes. A batch that
// cannot be decoded never will be: it is logged and dropped.
func (r *Router) publish(ctx context.Context, body string) error {
	evs, err := changes.DecodeBatch(body)
	if err != nil {
		r.cfg.Logger.Error("router: undecodable events dropped", "error", err)
		return nil
	}
	if r.cfg.SNS == nil || r.cfg.EventsTopicARN == "" {
		r.cfg.Logger.Warn("router: no events topic configured; events dropped", "count", len(evs))
		return nil
	}
	for len(evs) > 0 {
		n := min(10, len(evs))
		entries := make([]snstypes.PublishBatchRequestEntry, n)
		for i, e := range evs[:n] {
			msg, err := json.Marshal(e)
			if err != nil {
				return fmt.Errorf("router: encode event %s: %w", e.ID, err)
			}
			attrs := map[string]snstypes.MessageAttributeValue{}
			for k, v := range changes.Attributes(e) {
				attrs[k] = snstypes.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(v)}
			}
			entries[i] = snstypes.PublishBatchRequestEntry{
				Id: aws.String(fmt.Sprint(i)), Message: aws.String(string(msg)), MessageAttributes: attrs,
			}
		}
		out, err := r.cfg.SNS.PublishBatch(ctx, &sns.PublishBatchInput{TopicArn: aws.String(r.cfg.EventsTopicARN), PublishBatchRequestEntries: entries})
		if err != nil {
			return fmt.Errorf("router: publish events: %w", err)
		}
		if len(out.Failed) > 0 {
			f := out.Failed[0]
			return fmt.Errorf("router: publish events: %d failed, first %s: %s", len(out.Failed), aws.ToString(f.Code), aws.ToString(f.Message))
		}
		evs = evs[n:]
	}
	return nil
}

func dedupID(rec events.DynamoDBEventRecord, i int) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s|%s|%d", rec.EventSourceArn, rec.Change.SequenceNumber, i)
	return hex.EncodeToString(h.Sum(nil))
}
