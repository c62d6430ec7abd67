package triggers

import (
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/maestro-serverless/maestro/model"
)

// ErrTooManyFirings is returned by Firings when the interval holds more
// firings than the limit it was given.
var ErrTooManyFirings = errors.New("too many firings")

// Firings returns the firings of a workflow's time triggers (a version's
// time_triggers, by index) scheduled in [from, to), ordered by scheduled
// time and, at one instant, by trigger index: the firings the schedules of
// those triggers would have delivered over the interval. Their
// FiringRequestID is the request id each real firing starts with, so a
// start of one of them and its real firing start one instance. A trigger
// without a cron schedule (INTERVAL, which validation rejects) is an
// error. More than limit firings is ErrTooManyFirings, and nothing is
// returned.
func Firings(workflowID string, tts []model.TimeTrigger, from, to time.Time, limit int) ([]Firing, error) {
	var out []Firing
	for i := range tts {
		sched, err := tts[i].Schedule()
		if err != nil {
			return nil, fmt.Errorf("time trigger %d: %w", i, err)
		}
		// Next is strictly after its argument, to the second: start a
		// second before from, or at its second when it has a fraction.
		start := from.Add(-time.Second)
		if from.Nanosecond() != 0 {
			start = from.Truncate(time.Second)
		}
		for at := sched.Next(start); !at.IsZero() && at.Before(to); at = sched.Next(at) {
			if len(out) == limit {
				return nil, fmt.Errorf("%w: more than %d in [%s, %s)", ErrTooManyFirings, limit,
					from.UTC().Format(time.RFC3339), to.UTC().Format(time.RFC3339))
			}
			out = append(out, Firing{WorkflowID: workflowID, TriggerIndex: i, ScheduledTime: at.UTC()})
		}
	}
	sort.SliceStable(out, func(a, b int) bool {
		if !out[a].ScheduledTime.Equal(out[b].ScheduledTime) {
			return out[a].ScheduledTime.Before(out[b].ScheduledTime)
		}
		return out[a].TriggerIndex < out[b].TriggerIndex
	})
	return out, nil
}

// RequestID returns the start request id of the firing (FiringRequestID).
func (f Firing) RequestID() string {
	return FiringRequestID(f.WorkflowID, f.TriggerIndex, f.ScheduledTime)
}

// Timezone returns the time zone a firing of trigger t runs in: its
// timezone, else UTC (the initiator's timezone of a real firing).
func Timezone(t *model.TimeTrigger) string {
	if t.Timezone == "" {
		return "UTC"
	}
	return t.Timezone
}
