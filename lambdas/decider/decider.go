// Package decider is the decision worker: it consumes the FIFO decision queue
// (one message group per workflow instance) and lets the orchestrator apply a
// run's pending events.
package decider

import (
	"context"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"
)

// Processor applies a wake message; orchestrator.Orchestrator implements it.
type Processor interface {
	HandleWake(ctx context.Context, body []byte) error
}

// Handler consumes decision-queue batches.
type Handler struct {
	p   Processor
	log *slog.Logger
}

// New returns a Handler.
func New(p Processor, log *slog.Logger) *Handler {
	if log == nil {
		log = slog.Default()
	}
	return &Handler{p: p, log: log}
}

// Handle processes messages in order. A FIFO batch may hold several message
// groups; once a message fails, later messages of the same group are failed
// too so their order is kept when SQS redelivers them.
func (h *Handler) Handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	var resp events.SQSEventResponse
	failedGroups := map[string]bool{}
	done := map[string]bool{} // wake bodies already applied in this batch
	for _, m := range ev.Records {
		group := m.Attributes["MessageGroupId"]
		if group != "" && failedGroups[group] {
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
			continue
		}
		if done[m.Body] {
			// The same wake again: the run's pending events were all
			// applied by the first one, and any added since carry their own.
			continue
		}
		if err := h.p.HandleWake(ctx, []byte(m.Body)); err != nil {
			h.log.Error("decider: message failed; SQS will redeliver it", "message_id", m.MessageId, "error", err)
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
			if group != "" {
				failedGroups[group] = true
			}
			continue
		}
		done[m.Body] = true
	}
	return resp, nil
}
