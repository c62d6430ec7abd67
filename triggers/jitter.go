package triggers

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/maestro-serverless/maestro/model"
)

// Jitter returns the delay a firing of a time trigger waits before it starts
// the workflow: a deterministic value in [0, fuzzy_max_delay), in whole
// seconds, derived from the workflow id, the trigger's index and the
// scheduled time, so that every delivery of one firing gets the same delay
// and the firings of different triggers and times spread out. It is 0 when
// the trigger has no fuzzy_max_delay or one under a second.
//
// fuzzy_max_delay is a number of seconds or a duration string ("30s",
// "2 minutes"). Maestro's jitter reads a bare number as milliseconds while
// its validation reads it as seconds; this reads it as seconds throughout. A
// "${param}" reference is an error: there are no params to resolve it with
// when Scheduler fires.
func Jitter(t *model.TimeTrigger, workflowID string, index int, scheduled time.Time) (time.Duration, error) {
	if t == nil {
		return 0, errors.New("nil time trigger")
	}
	limit, err := fuzzyMaxDelay(t.FuzzyMaxDelay)
	if err != nil {
		return 0, fmt.Errorf("time trigger fuzzy_max_delay: %w", err)
	}
	n := uint64(limit / time.Second)
	if n == 0 {
		return 0, nil
	}
	sum := sha256.Sum256([]byte("jitter\x00" + workflowID + "\x00" + strconv.Itoa(index) + "\x00" + scheduled.UTC().Format(time.RFC3339)))
	return time.Duration(binary.BigEndian.Uint64(sum[:8])%n) * time.Second, nil
}

// fuzzyMaxDelay returns the length of a fuzzy_max_delay; nil means 0.
func fuzzyMaxDelay(d *model.ParsableDuration) (time.Duration, error) {
	if d == nil {
		return 0, nil
	}
	if d.Expr == "" {
		if d.Seconds < 0 {
			return 0, fmt.Errorf("%d seconds is negative", d.Seconds)
		}
		if d.Seconds > int64(1<<63-1)/int64(time.Second) {
			return 0, fmt.Errorf("%d seconds is too long", d.Seconds)
		}
		return time.Duration(d.Seconds) * time.Second, nil
	}
	if strings.Contains(d.Expr, "$") {
		return 0, fmt.Errorf("%q refers to a parameter, which cannot be resolved when a schedule fires; use a number of seconds or a duration", d.Expr)
	}
	v, err := model.ParseDuration(d.Expr)
	if err != nil {
		return 0, err
	}
	return v, nil
}
