package localstack

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// ErrNoQueueClock is returned by Emulator.AdvanceQueueDelays when the
// emulator cannot move SQS message delays: only the moto_server that
// Discover starts through its launcher can. On LocalStack or an endpoint
// from AWS_ENDPOINT_URL, delays take their real time.
var ErrNoQueueClock = errors.New("this emulator cannot move SQS message delays (the moto_server that Discover starts can)")

// advancePath is the launcher's route that moves message delays (see
// moto_server.py).
const advancePath = "/_maestro/sqs/advance"

// CanAdvanceQueueDelays reports whether AdvanceQueueDelays can move this
// emulator's SQS message delays.
func (e *Emulator) CanAdvanceQueueDelays() bool { return e.queueClock }

// AdvanceQueueDelays plays the passing of d on the queues (by URL) for
// their delayed messages: each one's remaining delay (SQS DelaySeconds)
// shrinks by d, and the messages with none left become receivable, as in
// SQS after d of real time. Visibility timeouts do not move: a received
// message is its handler's, which still runs in real time. It returns the
// least delay that remains on the queues, and ok false when no message is
// delayed; d = 0 only looks. It returns ErrNoQueueClock when the emulator
// cannot move delays (see CanAdvanceQueueDelays).
func (e *Emulator) AdvanceQueueDelays(ctx context.Context, queueURLs []string, d time.Duration) (next time.Duration, ok bool, err error) {
	if !e.queueClock {
		return 0, false, ErrNoQueueClock
	}
	if d < 0 {
		return 0, false, fmt.Errorf("advance queue delays: negative duration %v", d)
	}
	body, err := json.Marshal(map[string]any{
		"region":     e.Region,
		"queue_urls": queueURLs,
		// Whole milliseconds, rounded up: the clock moves by d, so a
		// message due within d must not stay a fraction of a millisecond.
		"advance_ms": int64((d + time.Millisecond - 1) / time.Millisecond),
	})
	if err != nil {
		return 0, false, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.Endpoint+advancePath, bytes.NewReader(body))
	if err != nil {
		return 0, false, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, false, fmt.Errorf("advance queue delays: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return 0, false, fmt.Errorf("advance queue delays: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return 0, false, fmt.Errorf("advance queue delays: HTTP %d: %s", resp.StatusCode, bytes.TrimSpace(data))
	}
	var out struct {
		NextDueMS *int64 `json:"next_due_ms"`
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return 0, false, fmt.Errorf("advance queue delays: answer %q: %w", data, err)
	}
	if out.NextDueMS == nil {
		return 0, false, nil
	}
	return time.Duration(*out.NextDueMS) * time.Millisecond, true, nil
}
