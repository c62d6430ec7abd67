// Package worker is the step worker: it consumes the standard work queue
// (step work and timers), runs the step, and records the outcome as an event
// of the step's run.
package worker

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/maestro-serverless/maestro/lambdas/sqsbatch"
	"github.com/maestro-serverless/maestro/metering"
	"github.com/maestro-serverless/maestro/metrics"
	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/orchestrator"
	"github.com/maestro-serverless/maestro/pricing"
	"github.com/maestro-serverless/maestro/trace"
)

// Processor handles one work message; orchestrator.Orchestrator implements it.
type Processor interface {
	HandleWork(ctx context.Context, body []byte, runners map[model.StepType]orchestrator.StepRunner) (time.Duration, error)
}

// SQS is the subset of the SQS client the worker uses to re-queue timers.
type SQS interface {
	SendMessage(ctx context.Context, in *sqs.SendMessageInput, opts ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
}

// Config wires the worker.
type Config struct {
	Processor Processor
	SQS       SQS
	// WorkQueueURL is where not-yet-due timers are re-queued.
	WorkQueueURL string
	Runners      map[model.StepType]orchestrator.StepRunner
	// Parallelism bounds concurrently processed messages of one batch (default 10).
	Parallelism int
	Logger      *slog.Logger
	// Metrics receives each message's queue lag (nil: none).
	Metrics *metrics.Emitter
	// MemoryMB is the function's memory: each message's run is billed its
	// share of the invocation at it (see package metering); 0 bills none.
	MemoryMB int
}

// Handler consumes work-queue batches.
type Handler struct {
	cfg  Config
	tail metering.Tail
}

// New returns a Handler.
func New(cfg Config) *Handler {
	if cfg.Parallelism <= 0 {
		cfg.Parallelism = 10
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Handler{cfg: cfg}
}

// Handle processes a batch concurrently and reports the failed messages.
func (h *Handler) Handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	sqsbatch.EmitQueueLag(h.cfg.Metrics, "work", ev)
	frac := 1 / float64(max(1, len(ev.Records)))
	inv := metering.NewInvocation(nil, h.cfg.MemoryMB, &h.tail)
	return sqsbatch.Process(ctx, ev, h.cfg.Parallelism, h.cfg.Logger, "worker", func(ctx context.Context, m events.SQSMessage) error {
		// The message's run is billed its share of the invocation and of
		// the event source mapping's receive and delete of the batch.
		l := inv.Begin(frac)
		defer inv.End(l)
		l.Add(pricing.SQSRequests, 2*frac)
		return h.one(metering.With(ctx, l), m)
	}), nil
}

func (h *Handler) one(ctx context.Context, m events.SQSMessage) error {
	wait, err := h.cfg.Processor.HandleWork(ctx, []byte(m.Body), h.cfg.Runners)
	if err != nil {
		return err
	}
	if wait <= 0 {
		return nil
	}
	// Not due yet: send it again with the remaining delay; this copy is
	// then acknowledged. A crash between the two leaves a duplicate, which
	// is harmless: a timer for a step that moved on is ignored.
	delay := min(wait, orchestrator.MaxSQSDelay)
	in := &sqs.SendMessageInput{
		QueueUrl:     aws.String(h.cfg.WorkQueueURL),
		MessageBody:  aws.String(m.Body),
		DelaySeconds: int32((delay + time.Second - 1) / time.Second),
	}
	if id := trace.From(ctx); id != "" {
		in.MessageSystemAttributes = map[string]types.MessageSystemAttributeValue{
			string(types.MessageSystemAttributeNameForSendsAWSTraceHeader): {DataType: aws.String("String"), StringValue: aws.String(id.Header())},
		}
	}
	_, err = h.cfg.SQS.SendMessage(ctx, in)
	if err != nil {
		return fmt.Errorf("worker: re-queue timer: %w", err)
	}
	return nil
}
