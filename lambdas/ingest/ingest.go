// Package ingest is the signal-ingest handler: it consumes the standard
// signal-ingest queue, where S3 object notifications (of the signals bucket
// and of attached buckets) and the messages of the incoming-signals SNS
// topic arrive, and announces each as a signal.
//
// A message is one of:
//
//   - an S3 event notification: every object in it becomes one signal
//     (signals.FromS3 with the configured rules), announced with a request
//     id derived from the object event, so a redelivered notification
//     announces once; S3's "s3:TestEvent" yields nothing;
//   - an announce body ({"name", "params", "payload"...}, see
//     signals.ParseAnnounce) published to the topic, delivered raw or inside
//     the SNS envelope. Without a request_id it gets one derived from the SNS
//     message id (enveloped) or the SQS message id (raw), so a redelivery of
//     the same message announces once.
//
// An S3 notification published through SNS is unwrapped and handled as one.
//
// A malformed message (it does not parse, or the announcement breaks a
// rule, or the orchestrator rejects it with a 4xx) is sent, with its
// original body, to the signal-ingest dead-letter queue with the message
// attributes "reason" (the problems, at most 1 KB) and "source_message_id",
// and counts as done: it is not retried. A failure of the orchestrator
// (5xx) or of the dead-letter send is reported as a batch item failure, so
// SQS redelivers the message and, after the queue's receive limit, moves it
// to the same dead-letter queue by its redrive policy.
package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/maestro-serverless/maestro/lambdas/sqsbatch"

	"github.com/maestro-serverless/maestro/orchestrator"
	"github.com/maestro-serverless/maestro/signals"
)

// Announcer stores a signal and has it delivered;
// orchestrator.Orchestrator implements it.
type Announcer interface {
	AnnounceSignal(ctx context.Context, a signals.Announce, src orchestrator.SignalSource) (*orchestrator.SignalView, error)
}

// SQS is the part of the SQS client the handler uses to dead-letter
// malformed messages.
type SQS interface {
	SendMessage(ctx context.Context, in *sqs.SendMessageInput, opts ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
}

// Source kinds of the signals this handler announces.
const (
	SourceS3  = "s3"
	SourceSNS = "sns"
)

// Message attributes of a dead-lettered message.
const (
	// AttrReason holds why the message was rejected.
	AttrReason = "reason"
	// AttrSourceMessageID holds the SQS message id it had on the ingest queue.
	AttrSourceMessageID = "source_message_id"
)

// MaxReasonBytes bounds the reason attribute.
const MaxReasonBytes = 1024

// DefaultParallelism is how many messages of a batch are handled at once
// unless Config says otherwise.
const DefaultParallelism = 10

// Config wires the handler.
type Config struct {
	// Announcer stores the signals.
	Announcer Announcer
	// SQS sends rejected messages to DLQURL.
	SQS SQS
	// DLQURL is the signal-ingest dead-letter queue's URL.
	DLQURL string
	// Rules name the signals of S3 objects (see signals.FromS3).
	Rules []signals.Rule
	// Parallelism bounds the messages of one batch handled concurrently;
	// zero means DefaultParallelism.
	Parallelism int
	// Logger receives a line per rejected or failed message; nil means
	// slog.Default().
	Logger *slog.Logger
}

// Handler consumes signal-ingest batches.
type Handler struct{ cfg Config }

// New returns a Handler.
func New(cfg Config) *Handler {
	if cfg.Parallelism <= 0 {
		cfg.Parallelism = DefaultParallelism
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Handler{cfg: cfg}
}

// Handle announces the signals of a batch, its messages concurrently, and
// reports the messages to be retried. It never returns an error: every
// message is either done, dead-lettered or reported as failed.
func (h *Handler) Handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	return sqsbatch.Process(ctx, ev, h.cfg.Parallelism, h.cfg.Logger, "ingest", h.one), nil
}

// rejection is a message that can never succeed: it goes to the DLQ.
type rejection struct{ problems []string }

func (r *rejection) Error() string { return strings.Join(r.problems, "; ") }

func reject(problems ...string) error { return &rejection{problems: problems} }

// one handles a message; a *rejection is dead-lettered here, any other
// error is the message's failure.
func (h *Handler) one(ctx context.Context, m events.SQSMessage) error {
	err := h.process(ctx, m)
	var r *rejection
	if !errors.As(err, &r) {
		return err
	}
	reason := truncate(r.Error(), MaxReasonBytes)
	h.cfg.Logger.Warn("ingest: malformed signal message sent to the dead-letter queue",
		"message_id", m.MessageId, "reason", reason)
	return h.deadLetter(ctx, m, reason)
}

// process announces the signals of a message.
func (h *Handler) process(ctx context.Context, m events.SQSMessage) error {
	body := []byte(m.Body)
	msg, err := signals.ParseSNSMessage(body)
	if err != nil {
		return reject(err.Error())
	}
	var env snsEnvelope
	if !bytes.Equal(msg, body) {
		// An envelope: its Message was unwrapped. ParseSNSMessage checked
		// its shape, so this decode cannot fail on a valid envelope.
		if err := json.Unmarshal(body, &env); err != nil {
			return reject("sns envelope: " + err.Error())
		}
	}
	if isS3Notification(msg) {
		return h.s3(ctx, msg)
	}
	return h.announce(ctx, m, msg, env)
}

// snsEnvelope holds the fields of an SNS notification envelope the
// handler uses beyond its Message.
type snsEnvelope struct {
	MessageID string `json:"MessageId"`
	TopicARN  string `json:"TopicArn"`
}

// isS3Notification reports whether msg is an S3 event notification (or
// S3's test event) rather than an announce body: a JSON object with
// "Records" or "Event" and no "name".
func isS3Notification(msg []byte) bool {
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(msg, &keys); err != nil {
		return false
	}
	if _, ok := keys["name"]; ok {
		return false
	}
	_, records := keys["Records"]
	_, event := keys["Event"]
	return records || event
}

// s3 announces every object of an S3 notification. Objects that break a
// rule are reported together after the others were announced (a redrive
// of the message announces those again under the same request ids, which
// changes nothing).
func (h *Handler) s3(ctx context.Context, msg []byte) error {
	objects, err := signals.ParseS3Notification(msg)
	if err != nil {
		return reject(err.Error())
	}
	var problems []string
	for _, o := range objects {
		where := "s3://" + o.Bucket + "/" + o.Key
		a := signals.FromS3(o, h.cfg.Rules)
		if ps := a.Validate(); len(ps) > 0 {
			problems = append(problems, prefixed(where, ps)...)
			continue
		}
		src := orchestrator.SignalSource{Kind: SourceS3, Detail: where}
		if err := h.send(ctx, a, src); err != nil {
			var r *rejection
			if !errors.As(err, &r) {
				return err
			}
			problems = append(problems, prefixed(where, r.problems)...)
		}
	}
	if len(problems) > 0 {
		return reject(problems...)
	}
	return nil
}

// announce announces an announce body from the SNS topic.
func (h *Handler) announce(ctx context.Context, m events.SQSMessage, msg []byte, env snsEnvelope) error {
	a, problems := signals.ParseAnnounce(msg)
	if len(problems) > 0 {
		return reject(problems...)
	}
	if a.RequestID == "" {
		// A redelivery of the same message must not announce twice.
		if env.MessageID != "" {
			a.RequestID = "sns:" + env.MessageID
		} else {
			a.RequestID = "sqs:" + m.MessageId
		}
	}
	return h.send(ctx, a, orchestrator.SignalSource{Kind: SourceSNS, Detail: env.TopicARN})
}

// send announces one signal: a 4xx answer is a rejection, anything else
// that fails is the message's failure.
func (h *Handler) send(ctx context.Context, a signals.Announce, src orchestrator.SignalSource) error {
	v, err := h.cfg.Announcer.AnnounceSignal(ctx, a, src)
	if err != nil {
		var oe *orchestrator.Error
		if errors.As(err, &oe) && oe.Status < http.StatusInternalServerError {
			return reject(oe.Error())
		}
		return fmt.Errorf("announce signal %q: %w", a.Name, err)
	}
	h.cfg.Logger.Debug("ingest: signal announced", "name", v.Name, "seq_id", v.SeqID, "created", v.Created, "source", src.Kind)
	return nil
}

// deadLetter sends the original body to the DLQ with the reason.
func (h *Handler) deadLetter(ctx context.Context, m events.SQSMessage, reason string) error {
	if h.cfg.DLQURL == "" {
		return fmt.Errorf("no dead-letter queue configured for a rejected message (%s)", reason)
	}
	// SQS refuses empty attribute values.
	attrs := map[string]sqstypes.MessageAttributeValue{}
	for k, v := range map[string]string{AttrReason: reason, AttrSourceMessageID: m.MessageId} {
		if v != "" {
			attrs[k] = sqstypes.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(v)}
		}
	}
	_, err := h.cfg.SQS.SendMessage(ctx, &sqs.SendMessageInput{
		QueueUrl:          aws.String(h.cfg.DLQURL),
		MessageBody:       aws.String(m.Body),
		MessageAttributes: attrs,
	})
	if err != nil {
		return fmt.Errorf("send rejected message to the dead-letter queue: %w", err)
	}
	return nil
}

// prefixed prefixes every problem with where it was found.
func prefixed(where string, problems []string) []string {
	out := make([]string, len(problems))
	for i, p := range problems {
		out[i] = where + ": " + p
	}
	return out
}

// truncate cuts s to at most n bytes at a rune boundary, marking the cut
// with "...".
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const mark = "..."
	cut := n - len(mark)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + mark
}
