package localstack

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// SQSAPI is the part of the SQS client an SQSPump uses.
type SQSAPI interface {
	ReceiveMessage(context.Context, *sqs.ReceiveMessageInput, ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	DeleteMessageBatch(context.Context, *sqs.DeleteMessageBatchInput, ...func(*sqs.Options)) (*sqs.DeleteMessageBatchOutput, error)
	ChangeMessageVisibilityBatch(context.Context, *sqs.ChangeMessageVisibilityBatchInput, ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityBatchOutput, error)
	GetQueueAttributes(context.Context, *sqs.GetQueueAttributesInput, ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error)
}

// SQSHandler handles a batch of queue messages, as a Lambda function behind
// an SQS event source mapping with ReportBatchItemFailures does.
type SQSHandler func(context.Context, events.SQSEvent) (events.SQSEventResponse, error)

// Defaults of SQSPumpOptions.
const (
	// DefaultPollers is the number of concurrent receive loops.
	DefaultPollers = 2
	// DefaultSQSBatchSize is the most messages per handler call (SQS's maximum).
	DefaultSQSBatchSize = 10
	// DefaultWaitTime is the long-poll wait of one ReceiveMessage call.
	DefaultWaitTime = time.Second
	// DefaultErrorBackoff is the pause after a failed ReceiveMessage call.
	DefaultErrorBackoff = time.Second
)

// sqsEventSource is the eventSource of every SQS event record.
const sqsEventSource = "aws:sqs"

// ackTimeout bounds the acknowledgement calls made after a handler returns,
// which run even while the pump shuts down.
const ackTimeout = 10 * time.Second

// SQSPumpOptions tunes an SQSPump. The zero value is ready to use.
type SQSPumpOptions struct {
	// Pollers is the number of concurrent receive loops; zero means DefaultPollers.
	Pollers int
	// BatchSize is the most messages per handler call (1 to 10); zero means
	// DefaultSQSBatchSize.
	BatchSize int
	// WaitTime is the long-poll wait of a receive, in whole seconds up to
	// 20 s; zero means DefaultWaitTime.
	WaitTime time.Duration
	// ErrorBackoff is the pause after a failed receive; zero means DefaultErrorBackoff.
	ErrorBackoff time.Duration
	// QueueARN is the queue's ARN for the records' eventSourceARN; empty
	// means Run asks SQS for it.
	QueueARN string
	// Region fills the records' awsRegion.
	Region string
	// Logger receives errors; nil discards.
	Logger *slog.Logger

	// DuplicateDelivery is a fault injection for tests: every batch is
	// handed to the handler twice, as if SQS delivered each message twice.
	// A message is deleted only when both calls succeeded for it.
	DuplicateDelivery bool
	// CrashAfterHandler is a fault injection for tests: for the messages it
	// returns true for, the pump skips the DeleteMessage that would follow a
	// successful handler call, as if the worker died after committing; the
	// message reappears after its visibility timeout.
	CrashAfterHandler func(events.SQSMessage) bool
}

// SQSPump receives messages from one queue and calls a handler with them,
// playing Lambda's SQS event source mapping with ReportBatchItemFailures:
// messages the handler did not report as failed are deleted, the others
// stay and reappear after the visibility timeout, as does every message of
// a batch whose handler call returned an error. On a FIFO queue no two
// batches of the same message group are handled at once, and a failed
// message holds back the later messages of its group in the same batch.
type SQSPump struct {
	client   SQSAPI
	queueURL string
	handler  SQSHandler
	opts     SQSPumpOptions
	fifo     bool
	log      *slog.Logger

	recvMu     sync.Mutex // serialises a FIFO queue's receives
	mu         sync.Mutex
	busyGroups map[string]bool // FIFO message groups being handled
	inFlight   atomic.Int64    // batches received and not yet acknowledged
}

// InFlight returns how many received batches the pump is handling; a
// received message is also counted by the queue as not visible.
func (p *SQSPump) InFlight() int64 { return p.inFlight.Load() }

// NewSQSPump returns a pump for the queue at queueURL that calls handler.
func NewSQSPump(client SQSAPI, queueURL string, handler SQSHandler, opts SQSPumpOptions) *SQSPump {
	opts.Pollers = positiveOr(opts.Pollers, DefaultPollers)
	if opts.BatchSize <= 0 || opts.BatchSize > 10 {
		opts.BatchSize = DefaultSQSBatchSize
	}
	opts.WaitTime = min(positiveOr(opts.WaitTime, DefaultWaitTime), 20*time.Second)
	opts.ErrorBackoff = positiveOr(opts.ErrorBackoff, DefaultErrorBackoff)
	return &SQSPump{
		client:     client,
		queueURL:   queueURL,
		handler:    handler,
		opts:       opts,
		fifo:       strings.HasSuffix(queueURL, ".fifo"),
		log:        pumpLogger(opts.Logger, "pump", "sqs", "queue", queueURL),
		busyGroups: map[string]bool{},
	}
}

// Run receives and handles messages until ctx is done, then waits for the
// batches in progress to be handled and acknowledged and returns nil. It
// fails early only when it cannot learn the queue's ARN.
func (p *SQSPump) Run(ctx context.Context) error {
	arn := p.opts.QueueARN
	if arn == "" {
		var err error
		if arn, err = queueARN(ctx, p.client, p.queueURL); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("sqs pump: %w", err)
		}
	}
	var wg sync.WaitGroup
	for range p.opts.Pollers {
		wg.Go(func() { p.pollLoop(ctx, arn) })
	}
	wg.Wait()
	return nil
}

func (p *SQSPump) pollLoop(ctx context.Context, arn string) {
	for ctx.Err() == nil {
		records, err := p.receive(ctx, arn)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			p.log.Error("receive messages", "err", err)
			sleep(ctx, p.opts.ErrorBackoff)
			continue
		}
		if len(records) > 0 {
			p.inFlight.Add(1)
			p.handle(ctx, records)
			p.inFlight.Add(-1)
		}
	}
}

// fifoBusyPause is the pause between short polls of a FIFO queue while
// some of its message groups are being handled.
const fifoBusyPause = 25 * time.Millisecond

// receive receives one batch. On a FIFO queue the pollers receive one at a
// time and claim the batch's message groups before the next receive, so
// no two pollers ever hold messages of one group even where the emulator
// evaluates in-flight groups only when a receive starts (moto does, which
// a long poll makes stale): while groups are claimed, it short-polls.
func (p *SQSPump) receive(ctx context.Context, arn string) ([]events.SQSMessage, error) {
	wait := p.opts.WaitTime
	if p.fifo {
		p.recvMu.Lock()
		defer p.recvMu.Unlock()
		if p.anyGroupBusy() {
			wait = 0
		}
	}
	out, err := p.client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
		QueueUrl:                    aws.String(p.queueURL),
		MaxNumberOfMessages:         int32(p.opts.BatchSize),
		WaitTimeSeconds:             int32(wait / time.Second),
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
		MessageAttributeNames:       []string{"All"},
	})
	if err != nil {
		return nil, err
	}
	records := make([]events.SQSMessage, len(out.Messages))
	for i, m := range out.Messages {
		records[i] = lambdaSQSMessage(m, arn, p.opts.Region)
	}
	if !p.fifo {
		return records, nil
	}
	mine, others := p.claimGroups(records)
	if len(others) > 0 {
		p.log.Warn("received messages of a group in progress elsewhere; returning them", "count", len(others))
		p.changeVisibility(ctx, others, 0)
	}
	if len(mine) == 0 && wait == 0 {
		sleep(ctx, fifoBusyPause)
	}
	return mine, nil
}

// sleep waits for d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// handle runs the handler on one received batch and acknowledges it.
func (p *SQSPump) handle(ctx context.Context, records []events.SQSMessage) {
	if p.fifo {
		defer p.releaseGroups(records)
	}
	failed, err := p.call(ctx, records)
	if err == nil && p.opts.DuplicateDelivery {
		var again map[string]bool
		again, err = p.call(ctx, records)
		for id := range again {
			failed[id] = true
		}
	}
	if err != nil {
		if ctx.Err() == nil {
			p.log.Warn("handler failed; batch returns after the visibility timeout", "messages", len(records), "err", err)
		}
		return
	}
	if p.fifo {
		holdBackGroups(records, failed)
	}
	var done []events.SQSMessage
	for _, r := range records {
		switch {
		case failed[r.MessageId]:
		case p.opts.CrashAfterHandler != nil && p.opts.CrashAfterHandler(r):
			p.log.Debug("fault injection: not deleting a handled message", "messageId", r.MessageId)
		default:
			done = append(done, r)
		}
	}
	if len(failed) > 0 {
		p.log.Warn("handler reported failed messages; they return after the visibility timeout", "failed", len(failed), "messages", len(records))
	}
	p.delete(ctx, done)
}

// call runs the handler once and returns the ids of the messages that
// failed. A failure naming no message of the batch fails the whole call,
// as Lambda treats an invalid item identifier.
func (p *SQSPump) call(ctx context.Context, records []events.SQSMessage) (map[string]bool, error) {
	resp, err := callHandler(ctx, p.handler, events.SQSEvent{Records: records})
	if err != nil {
		return nil, err
	}
	ids := make(map[string]bool, len(records))
	for _, r := range records {
		ids[r.MessageId] = true
	}
	failed := map[string]bool{}
	for _, f := range resp.BatchItemFailures {
		if !ids[f.ItemIdentifier] {
			return nil, fmt.Errorf("handler reported failure of unknown message %q", f.ItemIdentifier)
		}
		failed[f.ItemIdentifier] = true
	}
	return failed, nil
}

// holdBackGroups marks as failed every message that follows a failed
// message of the same group, so a FIFO group is never handled out of order.
func holdBackGroups(records []events.SQSMessage, failed map[string]bool) {
	blocked := map[string]bool{}
	for _, r := range records {
		g := r.Attributes[string(types.MessageSystemAttributeNameMessageGroupId)]
		if blocked[g] {
			failed[r.MessageId] = true
		} else if failed[r.MessageId] {
			blocked[g] = true
		}
	}
}

// claimGroups marks the records' message groups busy. It returns the
// records it may handle and those whose group another poller is handling.
func (p *SQSPump) claimGroups(records []events.SQSMessage) (mine, others []events.SQSMessage) {
	p.mu.Lock()
	defer p.mu.Unlock()
	claimed := map[string]bool{}
	for _, r := range records {
		g := r.Attributes[string(types.MessageSystemAttributeNameMessageGroupId)]
		if p.busyGroups[g] && !claimed[g] {
			others = append(others, r)
			continue
		}
		p.busyGroups[g] = true
		claimed[g] = true
		mine = append(mine, r)
	}
	return mine, others
}

func (p *SQSPump) anyGroupBusy() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.busyGroups) > 0
}

func (p *SQSPump) releaseGroups(records []events.SQSMessage) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, r := range records {
		delete(p.busyGroups, r.Attributes[string(types.MessageSystemAttributeNameMessageGroupId)])
	}
}

// delete removes handled messages from the queue, even while ctx ends.
func (p *SQSPump) delete(ctx context.Context, records []events.SQSMessage) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ackTimeout)
	defer cancel()
	for chunk := range chunks(records, 10) {
		entries := make([]types.DeleteMessageBatchRequestEntry, len(chunk))
		for i, r := range chunk {
			entries[i] = types.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: aws.String(r.ReceiptHandle)}
		}
		out, err := p.client.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(p.queueURL), Entries: entries})
		if err != nil {
			p.log.Error("delete handled messages", "count", len(chunk), "err", err)
			continue
		}
		for _, f := range out.Failed {
			p.log.Error("delete handled message", "id", aws.ToString(f.Id), "code", aws.ToString(f.Code), "message", aws.ToString(f.Message))
		}
	}
}

// changeVisibility makes messages visible again after d.
func (p *SQSPump) changeVisibility(ctx context.Context, records []events.SQSMessage, d time.Duration) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ackTimeout)
	defer cancel()
	for chunk := range chunks(records, 10) {
		entries := make([]types.ChangeMessageVisibilityBatchRequestEntry, len(chunk))
		for i, r := range chunk {
			entries[i] = types.ChangeMessageVisibilityBatchRequestEntry{
				Id:                aws.String(strconv.Itoa(i)),
				ReceiptHandle:     aws.String(r.ReceiptHandle),
				VisibilityTimeout: int32(d / time.Second),
			}
		}
		if _, err := p.client.ChangeMessageVisibilityBatch(ctx, &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: aws.String(p.queueURL), Entries: entries}); err != nil {
			p.log.Error("change message visibility", "count", len(chunk), "err", err)
		}
	}
}

// chunks yields successive slices of at most n elements of s.
func chunks[T any](s []T, n int) func(func([]T) bool) {
	return func(yield func([]T) bool) {
		for len(s) > 0 {
			k := min(n, len(s))
			if !yield(s[:k]) {
				return
			}
			s = s[k:]
		}
	}
}

// lambdaSQSMessage converts a received message into the record Lambda hands
// a function.
func lambdaSQSMessage(m types.Message, arn, region string) events.SQSMessage {
	out := events.SQSMessage{
		MessageId:              aws.ToString(m.MessageId),
		ReceiptHandle:          aws.ToString(m.ReceiptHandle),
		Body:                   aws.ToString(m.Body),
		Md5OfBody:              aws.ToString(m.MD5OfBody),
		Md5OfMessageAttributes: aws.ToString(m.MD5OfMessageAttributes),
		Attributes:             map[string]string{},
		MessageAttributes:      map[string]events.SQSMessageAttribute{},
		EventSourceARN:         arn,
		EventSource:            sqsEventSource,
		AWSRegion:              region,
	}
	for k, v := range m.Attributes {
		out.Attributes[k] = v
	}
	for k, v := range m.MessageAttributes {
		out.MessageAttributes[k] = events.SQSMessageAttribute{
			StringValue:      v.StringValue,
			BinaryValue:      v.BinaryValue,
			StringListValues: v.StringListValues,
			BinaryListValues: v.BinaryListValues,
			DataType:         aws.ToString(v.DataType),
		}
	}
	return out
}
