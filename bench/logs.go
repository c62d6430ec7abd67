package bench

import (
	"bytes"
	"context"
	"log/slog"
	"sync"
)

// LogUsage is what the handlers wrote to their logs: the lines CloudWatch
// Logs would ingest from them (JSON log records at the deployed level,
// Info, and EMF metric lines), not counting Lambda's own lines per
// invocation or API Gateway's access log, which the cost adds.
type LogUsage struct {
	// Events counts lines (CloudWatch Logs bills 26 bytes more for each).
	Events int64 `json:"events"`
	// Bytes counts their bytes, newlines included.
	Bytes int64 `json:"bytes"`
}

// LogMeter is an io.Writer that counts the lines and bytes written to it.
type LogMeter struct {
	mu sync.Mutex
	u  LogUsage
}

// NewLogMeter returns a log meter at zero.
func NewLogMeter() *LogMeter { return &LogMeter{} }

// Write counts p: its bytes and its newlines.
func (m *LogMeter) Write(p []byte) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.u.Bytes += int64(len(p))
	m.u.Events += int64(bytes.Count(p, []byte{'\n'}))
	return len(p), nil
}

// Usage returns what was written since the last Reset.
func (m *LogMeter) Usage() LogUsage {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.u
}

// Reset sets the counts back to zero.
func (m *LogMeter) Reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.u = LogUsage{}
}

// meteredLogs is a slog.Handler that passes on the records logged while
// handling a metered request only: the benchmark's own status reads
// (unmetered, see Invocations.HTTP) are no cost of the workload.
type meteredLogs struct{ slog.Handler }

func (h meteredLogs) Handle(ctx context.Context, r slog.Record) error {
	if unmetered(ctx) {
		return nil
	}
	return h.Handler.Handle(ctx, r)
}

func (h meteredLogs) WithAttrs(attrs []slog.Attr) slog.Handler {
	return meteredLogs{h.Handler.WithAttrs(attrs)}
}

func (h meteredLogs) WithGroup(name string) slog.Handler {
	return meteredLogs{h.Handler.WithGroup(name)}
}
