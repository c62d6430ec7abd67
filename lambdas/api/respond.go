package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/maestro-serverless/maestro/orchestrator"
)

// errorBody is the JSON body of every error answer.
type errorBody struct {
	Status  int      `json:"status"`
	Message string   `json:"message"`
	Errors  []string `json:"errors"`
}

// writeJSON writes v as a JSON answer with the given status. If v cannot
// be encoded nothing has been written yet, and the error is returned for
// the caller to answer.
func writeJSON(w http.ResponseWriter, status int, v any) error {
	b, err := marshal(v)
	if err != nil {
		return orchestrator.Internal(fmt.Errorf("encode %T response: %w", v, err))
	}
	writeRaw(w, status, b)
	return nil
}

// marshal encodes v followed by a newline, without HTML escaping: answers
// are JSON for programs and people, and messages such as "a -> b" should
// read as written (Content-Type and nosniff keep browsers from sniffing).
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// fail answers err: an *orchestrator.Error with its own status and text,
// anything else as 500 "internal error". The cause of a 5xx answer is
// logged, with the request's id, method and path only.
func (s *server) fail(w http.ResponseWriter, r *http.Request, err error) {
	e := orchestrator.AsError(err)
	if e.Status < 400 || e.Status > 599 {
		e = orchestrator.Internal(fmt.Errorf("error with status %d outside 4xx/5xx: %w", e.Status, err))
	}
	if e.Status >= 500 {
		attrs := []slog.Attr{
			slog.String("request_id", RequestIDFromContext(r.Context())),
			slog.String("method", r.Method),
			slog.String("path", redactPath(r.URL.Path)),
			slog.Int("status", e.Status),
			slog.String("error", err.Error()),
		}
		if cause := errors.Unwrap(e); cause != nil && cause.Error() != err.Error() {
			attrs = append(attrs, slog.String("cause", cause.Error()))
		}
		s.log.LogAttrs(r.Context(), slog.LevelError, "request failed", attrs...)
	}
	writeRaw(w, e.Status, encodeError(e.Status, e.Message, e.Errors))
}

// encodeError renders an error body. It cannot fail: every field is a
// string or an int.
func encodeError(status int, message string, details []string) []byte {
	b, err := marshal(errorBody{Status: status, Message: message, Errors: nonNil(details)})
	if err != nil {
		// Unreachable: strings and ints always encode.
		return []byte(`{"status":500,"message":"internal error","errors":[]}` + "\n")
	}
	return b
}

// nonNil returns s, or an empty slice when s is nil: JSON answers list
// nothing as [], never null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// writeRaw writes an already encoded JSON body.
func writeRaw(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	// A write error means the client is gone; there is no one to tell.
	_, _ = w.Write(body)
}
