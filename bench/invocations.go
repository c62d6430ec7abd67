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
	// BilledMillis sums each invocation's duration here, rounded up to 1 ms
	// as Lambda bills.
	BilledMillis int64 `json:"billed_ms"`
	// ModelledMillis sums each invocation's duration as it would be on AWS
	// (see AWSCallLatency), rounded up to 1 ms: what the cost is priced at.
	ModelledMillis int64 `json:"modelled_ms"`
}

// AWSCallLatency is the time one AWS call of service (an SDK service ID)
// is taken to last on AWS when the benchmark models a handler's duration
// there. The emulators on a busy 2-core machine answer a call in anything
// from 1 ms to seconds (a burst of 200 starts queues behind DynamoDB
// Local's single writer), time a Lambda on AWS would not be billed for.
//
// DynamoDB: 5 ms, the figure of docs/benchmarks.md's AWS estimate (AWS
// states single-digit milliseconds for single-item calls). Other services
// publish no latency; 20 ms is assumed, on the high side.
func AWSCallLatency(service string) time.Duration {
	switch service {
	case "DynamoDB", "DynamoDB Streams":
		return 5 * time.Millisecond
	default:
		return 20 * time.Millisecond
	}
}

// callClock times the AWS calls of one invocation: how long at least one
// was in flight, and how many each service answered.
type callClock struct {
	mu       sync.Mutex
	inFlight int
	since    time.Time
	busy     time.Duration
	calls    map[string]int64
}

type callClockKey struct{}

// withCallClock returns a context whose AWS calls (made through a client
// with Meter.Middleware) the returned clock times.
func withCallClock(ctx context.Context) (context.Context, *callClock) {
	c := &callClock{calls: map[string]int64{}}
	return context.WithValue(ctx, callClockKey{}, c), c
}

func callClockFrom(ctx context.Context) *callClock {
	c, _ := ctx.Value(callClockKey{}).(*callClock)
	return c
}

// begin notes a call of the invocation starting at now.
func (c *callClock) begin(now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inFlight == 0 {
		c.since = now
	}
	c.inFlight++
}

// end notes a call of service ending at now.
func (c *callClock) end(now time.Time, service string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.inFlight--
	if c.inFlight == 0 {
		c.busy += now.Sub(c.since)
	}
	c.calls[service]++
}

// modelled returns the duration on AWS of an invocation that took d here,
// ending at end: d without the time its calls were in flight here, plus
// each call at AWSCallLatency, one after the other (calls made side by
// side are charged as if they were not: an upper bound).
func (c *callClock) modelled(d time.Duration, end time.Time) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	busy := c.busy
	if c.inFlight > 0 { // a call outlives the handler: count it to the end
		busy += end.Sub(c.since)
	}
	m := max(d-busy, 0)
	for service, n := range c.calls {
		m += time.Duration(n) * AWSCallLatency(service)
	}
	return m
}

// Invocations wraps the handlers that run as Lambda functions in AWS and
// counts their invocations and durations. It is safe for concurrent use.
type Invocations struct {
	mu  sync.Mutex
	fns map[string]FunctionUsage
	now func() time.Time // the clock invocations are timed by
}

// NewInvocations returns a zero count.
func NewInvocations() *Invocations {
	return &Invocations{fns: map[string]FunctionUsage{}, now: time.Now}
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

// invoke runs handler h as one invocation of function name and counts it.
func (v *Invocations) invoke(ctx context.Context, name string, records int, h func(context.Context)) {
	ctx, clock := withCallClock(ctx)
	start := v.now()
	h(ctx)
	end := v.now()
	d := end.Sub(start)
	v.add(name, records, d, clock.modelled(d, end))
}

func (v *Invocations) add(name string, records int, d, modelled time.Duration) {
	v.mu.Lock()
	defer v.mu.Unlock()
	u := v.fns[name]
	u.Invocations++
	u.Records += int64(records)
	u.BilledMillis += int64((d + time.Millisecond - 1) / time.Millisecond)
	u.ModelledMillis += int64((modelled + time.Millisecond - 1) / time.Millisecond)
	v.fns[name] = u
}

// SQS wraps a queue handler as function name. Empty batches, which Lambda
// never delivers, are passed through uncounted.
func (v *Invocations) SQS(name string, h localstack.SQSHandler) localstack.SQSHandler {
	return batchHandler(v, name, h, func(ev events.SQSEvent) int { return len(ev.Records) })
}

// Stream wraps a DynamoDB stream handler as function name. Empty batches
// are passed through uncounted.
func (v *Invocations) Stream(name string, h localstack.StreamHandler) localstack.StreamHandler {
	return batchHandler(v, name, h, func(ev events.DynamoDBEvent) int { return len(ev.Records) })
}

// batchHandler wraps h, a handler of batches of records (records counts
// an event's), as function name; empty batches are passed through
// uncounted.
func batchHandler[E, R any](v *Invocations, name string, h func(context.Context, E) (R, error), records func(E) int) func(context.Context, E) (R, error) {
	return func(ctx context.Context, ev E) (R, error) {
		n := records(ev)
		if n == 0 {
			return h(ctx, ev)
		}
		var resp R
		var err error
		v.invoke(ctx, name, n, func(ctx context.Context) { resp, err = h(ctx, ev) })
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
		v.invoke(r.Context(), name, 1, func(ctx context.Context) { h.ServeHTTP(w, r.WithContext(ctx)) })
	})
}
