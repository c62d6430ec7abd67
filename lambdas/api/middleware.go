package api

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/maestro-serverless/maestro/caller"
	"github.com/maestro-serverless/maestro/logctx"
	"github.com/maestro-serverless/maestro/trace"
)

// RequestIDHeader carries the request id: a caller's well-formed value is
// echoed back, otherwise the API generates one (a random UUID).
const RequestIDHeader = "X-Request-Id"

// maxRequestIDLen bounds a caller-supplied request id.
const maxRequestIDLen = 128

// requestIDKey is the context key of the request id.
type requestIDKey struct{}

// RequestIDFromContext returns the id the API gave the request whose
// context ctx is, or "" outside the API's handler.
func RequestIDFromContext(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// TraceHeader is the X-Ray trace header: API Gateway sets it on the
// requests it traces; a run started by a request keeps its trace id
// (package trace), and every answer names the trace it belongs to.
const TraceHeader = "X-Amzn-Trace-Id"

// requestID sets the request id and the trace id on the response and the
// request context, and opens the request's log scope (package logctx)
// with both.
func (s *server) requestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(RequestIDHeader)
		if !wellFormedRequestID(id) {
			id = uuid.NewString()
		}
		tid, ok := trace.Parse(r.Header.Get(TraceHeader))
		if !ok {
			tid = trace.New(time.Now())
		}
		w.Header().Set(RequestIDHeader, id)
		w.Header().Set(TraceHeader, tid.Header())
		ctx := logctx.Scope(trace.With(context.WithValue(r.Context(), requestIDKey{}, id), tid))
		logctx.Add(ctx, "request_id", id, "trace_id", string(tid))
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// wellFormedRequestID accepts 1..128 characters from a set that is safe
// to echo in a header and a log line: ASCII letters, digits and -_.:@/+=.
func wellFormedRequestID(id string) bool {
	if id == "" || len(id) > maxRequestIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '-', c == '_', c == '.', c == ':', c == '@', c == '/', c == '+', c == '=':
		default:
			return false
		}
	}
	return true
}

// accessLog writes one line per request: id, method, path, status,
// duration and response size. Query strings, headers and bodies are left
// out: they may carry secrets.
func (s *server) accessLog(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			status := sw.status
			if status == 0 {
				// Nothing written: net/http answers 200 with no body;
				// a panic that escaped recovery aborts the connection.
				status = http.StatusOK
			}
			s.log.LogAttrs(r.Context(), slog.LevelInfo, "http request",
				slog.String("method", r.Method),
				slog.String("path", redactPath(r.URL.Path)),
				slog.Int("status", status),
				slog.Duration("duration", time.Since(start)),
				slog.Int64("bytes", sw.bytes),
				slog.String("principal", caller.From(r.Context())),
			)
		}()
		next.ServeHTTP(sw, r)
	})
}

// recoverPanics turns a panicking handler into a 500 JSON answer (when
// nothing was written yet) and logs the panic with its stack.
// http.ErrAbortHandler is re-raised, as net/http expects.
func (s *server) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.log.LogAttrs(r.Context(), slog.LevelError, "panic serving request",
				slog.String("request_id", RequestIDFromContext(r.Context())),
				slog.String("method", r.Method),
				slog.String("path", redactPath(r.URL.Path)),
				slog.String("panic", fmt.Sprint(v)),
				slog.String("stack", string(debug.Stack())),
			)
			if sw.status == 0 {
				writeRaw(sw, http.StatusInternalServerError,
					encodeError(http.StatusInternalServerError, "internal error", nil))
			}
		}()
		next.ServeHTTP(sw, r)
	})
}

// limitBody answers 413 to a declared body over MaxBodyBytes and caps the
// bytes a handler can read from any other; readBody answers 413 when the
// cap is hit.
func (s *server) limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ContentLength > MaxBodyBytes {
			s.fail(w, r, bodyTooLarge())
			return
		}
		if r.Body != nil && r.Body != http.NoBody {
			r.Body = http.MaxBytesReader(w, r.Body, MaxBodyBytes)
		}
		next.ServeHTTP(w, r)
	})
}

// statusWriter records the status and the number of body bytes written.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 && code >= 200 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

// Unwrap gives http.ResponseController the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// redactPath hides the task token in the path of a task endpoint's path
// form (POST /api/v3/tasks/{token}/{action}): whoever reads the logs must
// not be able to end the step.
func redactPath(p string) string {
	rest, ok := strings.CutPrefix(p, tasksPath)
	if !ok {
		return p
	}
	_, action, inPath := strings.Cut(rest, "/")
	if !inPath {
		return p // the body form: POST /api/v3/tasks/{action}
	}
	return tasksPath + "{token}/" + action
}
