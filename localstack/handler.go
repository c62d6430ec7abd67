package localstack

import (
	"context"
	"fmt"
	"runtime/debug"
)

// callHandler calls a handler as Lambda would: a panic becomes a function
// error (with its stack), so the pump retries the batch instead of dying.
func callHandler[E, R any](ctx context.Context, h func(context.Context, E) (R, error), event E) (resp R, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("handler panicked: %v\n%s", v, debug.Stack())
		}
	}()
	return h(ctx, event)
}
