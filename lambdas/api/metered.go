package api

import (
	"net/http"

	"github.com/maestro-serverless/maestro/metering"
	"github.com/maestro-serverless/maestro/pricing"
)

// metered bills each request's work to a ledger (package metering): the
// run a request starts records it with its creation — the API Gateway
// request, the function's invocation at memoryMB and the AWS calls made
// for it. A request that starts no run records nothing.
func metered(next http.Handler, memoryMB int) http.Handler {
	tail := &metering.Tail{}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inv := metering.NewInvocation(nil, memoryMB, tail)
		share := 1.0
		if memoryMB <= 0 {
			share = 0
		}
		l := inv.Begin(share)
		defer inv.End(l)
		l.Add(pricing.APIRequests, 1)
		next.ServeHTTP(w, r.WithContext(metering.With(r.Context(), l)))
	})
}
