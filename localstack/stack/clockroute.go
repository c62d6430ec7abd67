package stack

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/maestro-serverless/maestro/localstack"
)

// maxAdvance bounds one clock move.
const maxAdvance = 400 * 24 * time.Hour

// clockRoutes registers POST /local/clock {"advance_seconds": N}: the local
// stack only (Lambda has no such route). It moves the stack's clock forward
// so that schedules and timers fall due without waiting; the schedule pump
// fires what became due at its next poll (SQS message delays still run in
// real time). The answer is {"now": RFC 3339}.
func clockRoutes(clock localstack.AdvancingClock) func(*http.ServeMux) {
	return func(mux *http.ServeMux) {
		mux.HandleFunc("POST /local/clock", func(w http.ResponseWriter, r *http.Request) {
			var req struct {
				AdvanceSeconds *int64 `json:"advance_seconds"`
			}
			body, err := io.ReadAll(io.LimitReader(r.Body, 4096))
			dec := json.NewDecoder(bytes.NewReader(body))
			dec.DisallowUnknownFields()
			if err == nil {
				err = dec.Decode(&req)
			}
			switch {
			case err != nil:
				writeClockError(w, "request body: "+err.Error())
				return
			case req.AdvanceSeconds == nil:
				writeClockError(w, "advance_seconds: is required")
				return
			case *req.AdvanceSeconds < 0 || *req.AdvanceSeconds > int64(maxAdvance/time.Second):
				// Compared in seconds: in nanoseconds a large count
				// wraps around, into range or below zero.
				writeClockError(w, fmt.Sprintf("advance_seconds: must be between 0 and %d", int64(maxAdvance/time.Second)))
				return
			}
			now := clock.Advance(time.Duration(*req.AdvanceSeconds) * time.Second)
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]string{"now": now.UTC().Format(time.RFC3339Nano)})
		})
	}
}

func writeClockError(w http.ResponseWriter, detail string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_ = json.NewEncoder(w).Encode(map[string]any{"status": 400, "message": "invalid clock request", "errors": []string{detail}})
}
