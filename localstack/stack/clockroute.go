package stack

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// maxAdvance bounds one clock move.
const maxAdvance = 400 * 24 * time.Hour

// clockRoutes registers POST /local/clock {"advance_seconds": N}: the local
// stack only (Lambda has no such route). It moves the stack's clock forward
// (Stack.AdvanceClock) so that schedules and timers fall due without
// waiting: the schedule pump fires what became due at its next poll, and
// the queues' delayed messages (timers up to 15 minutes) move with the
// clock when the emulator can move them. The answer is {"now": RFC 3339,
// "queue_delays_moved": bool}; false means the emulator (LocalStack, an
// endpoint from AWS_ENDPOINT_URL) keeps SQS delays in real time.
func clockRoutes(s *Stack) func(*http.ServeMux) {
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
				writeClockError(w, http.StatusBadRequest, "request body: "+err.Error())
				return
			case req.AdvanceSeconds == nil:
				writeClockError(w, http.StatusBadRequest, "advance_seconds: is required")
				return
			case *req.AdvanceSeconds < 0 || *req.AdvanceSeconds > int64(maxAdvance/time.Second):
				// Compared in seconds: in nanoseconds a large count
				// wraps around, into range or below zero.
				writeClockError(w, http.StatusBadRequest, fmt.Sprintf("advance_seconds: must be between 0 and %d", int64(maxAdvance/time.Second)))
				return
			}
			ctx, cancel := context.WithTimeout(r.Context(), advanceTimeout)
			defer cancel()
			now, moved, err := s.AdvanceClock(ctx, time.Duration(*req.AdvanceSeconds)*time.Second)
			if err != nil {
				writeClockError(w, http.StatusInternalServerError, err.Error())
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{"now": now.UTC().Format(time.RFC3339Nano), "queue_delays_moved": moved})
		})
	}
}

// advanceTimeout bounds the wait of POST /local/clock for the handler calls
// in progress.
const advanceTimeout = time.Minute

func writeClockError(w http.ResponseWriter, status int, detail string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	message := "invalid clock request"
	if status >= 500 {
		message = "clock advance failed"
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"status": status, "message": message, "errors": []string{detail}})
}
