// Package caller carries who made a request — the IAM principal API Gateway
// authenticated — through a context, so that what the request writes
// (versions, instances, actions, signals, change events) records it.
package caller

import "context"

type key struct{}

// With returns a context that names principal (an IAM ARN, or "local" for
// the local stack) as the caller.
func With(ctx context.Context, principal string) context.Context {
	return context.WithValue(ctx, key{}, principal)
}

// From returns the caller With recorded, or "" when the work was not
// requested by anyone (a queue message, a timer).
func From(ctx context.Context) string {
	p, _ := ctx.Value(key{}).(string)
	return p
}
