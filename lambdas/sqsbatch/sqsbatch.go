// Package sqsbatch runs the messages of an SQS batch concurrently for a
// Lambda handler and reports the failed ones as a partial batch response
// (ReportBatchItemFailures), so SQS redelivers only those.
package sqsbatch

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"

	"github.com/aws/aws-lambda-go/events"

	"github.com/maestro-serverless/maestro/logctx"
	"github.com/maestro-serverless/maestro/metrics"
	"github.com/maestro-serverless/maestro/trace"
)

// Process calls one for every message of ev, at most parallelism at a
// time, and returns the messages whose call failed (an error or a panic,
// which would otherwise end the whole process from a goroutine). Failures
// are logged with what. Each call's context carries a log scope (package
// logctx) holding the message id and the trace id of its AWSTraceHeader
// (package trace), which one may add to; the failure's log line shows it.
func Process(ctx context.Context, ev events.SQSEvent, parallelism int, log *slog.Logger, what string,
	one func(context.Context, events.SQSMessage) error) events.SQSEventResponse {
	if parallelism <= 0 {
		parallelism = 1
	}
	var (
		mu   sync.Mutex
		resp events.SQSEventResponse
		wg   sync.WaitGroup
		sem  = make(chan struct{}, parallelism)
	)
	for _, m := range ev.Records {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			mctx := MessageContext(ctx, m)
			if err := safe(mctx, m, one); err != nil {
				log.ErrorContext(mctx, what+": message failed; SQS will redeliver it", "error", err)
				mu.Lock()
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return resp
}

// EmitQueueLag emits how long each message of ev waited in queue (by its
// SentTimestamp) to m, as metric QueueLag of queue.
func EmitQueueLag(m *metrics.Emitter, queue string, ev events.SQSEvent) {
	sent := make([]string, len(ev.Records))
	for i, r := range ev.Records {
		sent[i] = r.Attributes["SentTimestamp"]
	}
	m.SQSLag(queue, sent)
}

// MessageContext returns ctx with a log scope naming message m and, when
// m carries an AWSTraceHeader, its trace id (trace.With).
func MessageContext(ctx context.Context, m events.SQSMessage) context.Context {
	ctx = logctx.Scope(ctx)
	logctx.Add(ctx, "message_id", m.MessageId)
	if id, ok := trace.Parse(m.Attributes["AWSTraceHeader"]); ok {
		ctx = trace.With(ctx, id)
		logctx.Add(ctx, "trace_id", string(id))
	}
	return ctx
}

func safe(ctx context.Context, m events.SQSMessage, one func(context.Context, events.SQSMessage) error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("panic: %v\n%s", v, debug.Stack())
		}
	}()
	return one(ctx, m)
}
