// Package trace carries a run's X-Ray trace id from the request that started
// it, through the DynamoDB outbox and SQS (as the AWSTraceHeader message
// system attribute, which X-Ray follows), to the decider and the workers, so
// one run can be followed in X-Ray and in the logs (trace_id).
package trace

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"time"
)

// ID is an X-Ray trace id: "1-" + 8 hex digits of the start time in unix
// seconds + "-" + 24 hex digits of randomness.
type ID string

// New returns a fresh trace id for a request that arrived without one.
func New(now time.Time) ID {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return ID(fmt.Sprintf("1-%08x-%s", uint32(now.Unix()), hex.EncodeToString(b[:])))
}

// Valid reports whether id has the X-Ray format.
func (id ID) Valid() bool {
	s := string(id)
	if len(s) != 35 || s[0] != '1' || s[1] != '-' || s[10] != '-' {
		return false
	}
	for i, c := range s {
		if i == 0 || i == 1 || i == 10 {
			continue
		}
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// Parse reads the trace id of an X-Ray trace header
// ("Root=1-…;Parent=…;Sampled=1", the X-Amzn-Trace-Id HTTP header and the
// AWSTraceHeader SQS attribute) or a bare id; ok is false when there is
// none or it is malformed.
func Parse(header string) (ID, bool) {
	for _, part := range strings.Split(header, ";") {
		k, v, found := strings.Cut(strings.TrimSpace(part), "=")
		if !found && strings.HasPrefix(k, "1-") {
			v, found = k, true
			k = "Root"
		}
		if found && k == "Root" {
			id := ID(v)
			return id, id.Valid()
		}
	}
	return "", false
}

// Header is the trace header that continues the trace: its root only, so
// each service makes its own sampling decision.
func (id ID) Header() string { return "Root=" + string(id) }

type key struct{}

// With returns ctx carrying id.
func With(ctx context.Context, id ID) context.Context { return context.WithValue(ctx, key{}, id) }

// From returns the trace id ctx carries, "" for none.
func From(ctx context.Context) ID {
	id, _ := ctx.Value(key{}).(ID)
	return id
}
