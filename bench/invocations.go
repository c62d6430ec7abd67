package bench

import (
	"context"
	"maps"
	"net/http"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/maestro-serverless/maestro/localstack"
)

// FunctionUsage is what one Lambda function did: how often it was invoked
// and for how long.
type FunctionUsage struct {
	// Invocations counts handler calls (one per non-empty batch, one per
	// API request).
	Invocations int64 `json:"invocations"`
	// Records counts the stream records or queue messages delivered.
	Records int64 `json:"records"`
	// BilledMillis sums each invocation's duration rounded up to 1 ms, as
	// Lambda bills.
	BilledMillis int64 `json:"billed_ms"`
}

// Invocations wraps the handlers that run as Lambda functions in AWS and
// counts their invocations and durations. It is safe for concurrent use.
type Invocations struct {
	mu  sync.Mutex
	fns map[string]FunctionUsage
}

// NewInvocations returns a zero count.
func NewInvocations() *Invocations {
	return &Invocations{fns: map[string]FunctionUsage{}}
}

// Usage returns a copy of the counts by function name.
func (v *Invocations) Usage() map[string]FunctionUsage {
	v.mu.Lock()
	defer v.mu.Unlock()
	return maps.Clone(v.fns)
}

// Reset sets every count back to zero.
func (v *Invocations) Reset() {
	v.mu.Lock()
	defer v.mu.Unlock()
	clear(v.fns)
}

func (v *Invocations) add(name string, records int, d time.Duration) {
	v.mu.Lock()
	defer v.mu.Unlock()
	u := v.fns[name]
	u.Invocations++
	u.Records += int64(records)
	u.BilledMillis += int64((d + time.Millisecond - 1) / time.Millisecond)
	v.fns[name] = u
}

// SQS wraps a queue handler as function name. Empty batches, which Lambda
// never delivers, are passed through uncounted.
func (v *Invocations) SQS(name string, h localstack.SQSHandler) localstack.SQSHandler {
	return func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		if len(ev.Records) == 0 {
			return h(ctx, ev)
		}
		start := time.Now()
		resp, err := h(ctx, ev)
		v.add(name, len(ev.Records), time.Since(start))
		return resp, err
	}
}

// Stream wraps a DynamoDB stream handler as function name. Empty batches
// are passed through uncounted.
func (v *Invocations) Stream(name string, h localstack.StreamHandler) localstack.StreamHandler {
	return func(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		if len(ev.Records) == 0 {
			return h(ctx, ev)
		}
		start := time.Now()
		resp, err := h(ctx, ev)
		v.add(name, len(ev.Records), time.Since(start))
		return resp, err
	}
}

// HTTP wraps the API handler as function name. Reads (GET and HEAD) are
// the benchmark observing the system: they are served with metering off
// and not counted. Every other request counts as one invocation.
func (v *Invocations) HTTP(name string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			h.ServeHTTP(w, r.WithContext(withoutMetering(r.Context())))
			return
		}
		start := time.Now()
		h.ServeHTTP(w, r)
		v.add(name, 1, time.Since(start))
	})
}
