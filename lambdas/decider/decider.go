// Package decider is the decision worker: it consumes the FIFO decision queue
// (one message group per workflow instance) and lets the orchestrator apply a
// run's pending events.
package decider

import (
	"context"
	"log/slog"
	"sync"

	"github.com/aws/aws-lambda-go/events"

	"github.com/maestro-serverless/maestro/lambdas/sqsbatch"
	"github.com/maestro-serverless/maestro/logctx"
	"github.com/maestro-serverless/maestro/metering"
	"github.com/maestro-serverless/maestro/metrics"
	"github.com/maestro-serverless/maestro/pricing"
	"github.com/maestro-serverless/maestro/store"
)

// Processor applies a wake message; orchestrator.Orchestrator implements it.
type Processor interface {
	HandleWake(ctx context.Context, body []byte) error
}

// Handler consumes decision-queue batches.
type Handler struct {
	p           Processor
	log         *slog.Logger
	concurrency int
	metrics     *metrics.Emitter
	memoryMB    int
	tail        metering.Tail
}

// WithMemory has the handler bill each run's messages their share of an
// invocation of a function of memoryMB (see package metering): of the
// batch's request and of its receive and delete, and of the invocation's
// time while they were in flight. Without it (0) no time is billed.
func (h *Handler) WithMemory(memoryMB int) *Handler {
	h.memoryMB = memoryMB
	return h
}

// WithMetrics makes the handler emit each message's queue lag to m.
func (h *Handler) WithMetrics(m *metrics.Emitter) *Handler {
	h.metrics = m
	return h
}

// DefaultConcurrency is how many runs of one batch are decided at once.
const DefaultConcurrency = 10

// New returns a Handler.
func New(p Processor, log *slog.Logger) *Handler {
	if log == nil {
		log = slog.Default()
	}
	return &Handler{p: p, log: log, concurrency: DefaultConcurrency}
}

// Handle processes a batch: the messages of one message group (one run) in
// order, different groups concurrently (at most Concurrency at once), as
// the runs are independent. Once a message fails, later messages of the
// same group are failed too, so their order is kept when SQS redelivers
// them. The wakes of one run within a group are applied as one, naming
// every attempt any of them names (store.MergeWakes): it applies all of the
// run's pending events, and any added since carry their own wakes.
func (h *Handler) Handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	var order []string
	groups := map[string][]events.SQSMessage{}
	sqsbatch.EmitQueueLag(h.metrics, "decision", ev)
	for _, m := range ev.Records {
		g := m.Attributes["MessageGroupId"]
		if g == "" {
			g = "\x00" + m.MessageId // no group: a group of its own
		}
		if _, ok := groups[g]; !ok {
			order = append(order, g)
		}
		groups[g] = append(groups[g], m)
	}
	failed := make([][]string, len(order))
	share := batchShare{messages: len(ev.Records), inv: metering.NewInvocation(nil, h.memoryMB, &h.tail)}
	sem := make(chan struct{}, max(1, h.concurrency))
	var wg sync.WaitGroup
	for i, g := range order {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			failed[i] = h.group(ctx, groups[g], share)
		}()
	}
	wg.Wait()
	var resp events.SQSEventResponse
	for _, ids := range failed {
		for _, id := range ids {
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: id})
		}
	}
	return resp, nil
}

// group handles one group's messages, each run's at the place of its first
// wake, and returns the ids of those that failed (the first failure's and
// every later one's).
func (h *Handler) group(ctx context.Context, msgs []events.SQSMessage, share batchShare) []string {
	// Wakes of one run become one: the attempts they name, merged.
	var order []string
	bodies := map[string][]string{}
	ids := map[string][]string{}
	for _, m := range msgs {
		k := store.WakeCoalesceKey(m.Body)
		if _, ok := bodies[k]; !ok {
			order = append(order, k)
		}
		bodies[k] = append(bodies[k], m.Body)
		ids[k] = append(ids[k], m.MessageId)
	}
	var failed []string
	for _, k := range order {
		if len(failed) > 0 {
			failed = append(failed, ids[k]...)
			continue
		}
		body := bodies[k][0]
		if len(bodies[k]) > 1 {
			body = store.MergeWakes(bodies[k]...)
		}
		l := share.ledger(len(ids[k]))
		mctx := metering.With(logctx.Scope(ctx), l)
		logctx.Add(mctx, "message_ids", ids[k])
		err := h.p.HandleWake(mctx, []byte(body))
		share.inv.End(l)
		if err != nil {
			h.log.ErrorContext(mctx, "decider: message failed; SQS will redeliver it", "error", err)
			failed = append(failed, ids[k]...)
		}
	}
	return failed
}

// batchShare is what one run's messages of a batch are billed of it.
type batchShare struct {
	messages int
	inv      *metering.Invocation
}

// ledger is the ledger, in flight until inv.End, of n of the batch's
// messages, one run's: their share of the invocation's request and time
// and of the event source mapping's receive and delete of the batch (FIFO
// requests).
func (b batchShare) ledger(n int) *metering.Ledger {
	frac := float64(n) / float64(max(1, b.messages))
	l := b.inv.Begin(frac)
	l.Add(pricing.SQSFIFORequests, 2*frac)
	return l
}
