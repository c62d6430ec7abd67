package localstack

import (
	"context"
	"maps"
	"sync"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/smithy-go/middleware"
)

// RequestCounter counts SDK calls by service and operation. It is safe for
// concurrent use. Add it to a configuration before creating clients:
//
//	cfg.APIOptions = append(cfg.APIOptions, counter.Middleware())
//
// A call counts once however many attempts its retries take.
type RequestCounter struct {
	mu     sync.Mutex
	counts map[string]int64
}

// NewRequestCounter returns a counter at zero.
func NewRequestCounter() *RequestCounter {
	return &RequestCounter{counts: map[string]int64{}}
}

// requestCounterID names the counter's middleware in a stack.
const requestCounterID = "maestro.RequestCounter"

// Middleware returns an API option that adds the counting middleware to a
// client's stack.
func (c *RequestCounter) Middleware() func(*middleware.Stack) error {
	return func(stack *middleware.Stack) error {
		return stack.Initialize.Add(middleware.InitializeMiddlewareFunc(requestCounterID,
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				c.add(awsmiddleware.GetServiceID(ctx) + "." + awsmiddleware.GetOperationName(ctx))
				return next.HandleInitialize(ctx, in)
			}), middleware.After)
	}
}

func (c *RequestCounter) add(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.counts == nil {
		c.counts = map[string]int64{}
	}
	c.counts[key]++
}

// Snapshot returns a copy of the counts, keyed "Service.Operation", for
// example "DynamoDB.TransactWriteItems".
func (c *RequestCounter) Snapshot() map[string]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := maps.Clone(c.counts)
	if out == nil {
		out = map[string]int64{}
	}
	return out
}

// Total returns the number of calls counted.
func (c *RequestCounter) Total() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var n int64
	for _, v := range c.counts {
		n += v
	}
	return n
}

// Reset sets every count back to zero.
func (c *RequestCounter) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.counts)
}
