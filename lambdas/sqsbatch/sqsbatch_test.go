package sqsbatch

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sort"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/assert"
)

func TestProcessReportsFailuresAndPanics(t *testing.T) {
	ev := events.SQSEvent{Records: []events.SQSMessage{{MessageId: "ok"}, {MessageId: "err"}, {MessageId: "panic"}, {MessageId: "ok2"}}}
	var inFlight, peak atomic.Int32
	resp := Process(context.Background(), ev, 2, slog.New(slog.NewTextHandler(io.Discard, nil)), "test",
		func(_ context.Context, m events.SQSMessage) error {
			n := inFlight.Add(1)
			defer inFlight.Add(-1)
			for {
				p := peak.Load()
				if n <= p || peak.CompareAndSwap(p, n) {
					break
				}
			}
			switch m.MessageId {
			case "err":
				return errors.New("boom")
			case "panic":
				panic("bad")
			}
			return nil
		})
	var failed []string
	for _, f := range resp.BatchItemFailures {
		failed = append(failed, f.ItemIdentifier)
	}
	sort.Strings(failed)
	assert.Equal(t, []string{"err", "panic"}, failed)
	assert.LessOrEqual(t, peak.Load(), int32(2))
}
