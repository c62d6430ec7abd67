package triggers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// FiringKind is the kind of the message a time trigger's schedule delivers.
const FiringKind = "time_trigger"

// scheduledTimePlaceholder is the context attribute EventBridge Scheduler
// replaces, in a target's input, with the scheduled time of the invocation
// (RFC 3339 in UTC, such as 2026-11-22T10:00:00Z).
const scheduledTimePlaceholder = "<aws.scheduler.scheduled-time>"

// Firing is the message a time trigger's schedule delivers each time it
// fires.
type Firing struct {
	// WorkflowID is the workflow whose trigger fired.
	WorkflowID string
	// TriggerIndex is the trigger's position in the workflow's time_triggers.
	TriggerIndex int
	// ScheduledTime is the fire time the schedule was due at, in UTC.
	ScheduledTime time.Time
}

// firingJSON is the JSON form of a Firing.
type firingJSON struct {
	Kind          string  `json:"kind"`
	WorkflowID    string  `json:"workflow_id"`
	TriggerIndex  *int    `json:"trigger_index"`
	ScheduledTime *string `json:"scheduled_time"`
}

// FiringInput returns the target input of the schedules of a workflow's time
// trigger (by index):
//
//	{"kind":"time_trigger","workflow_id":"wf","trigger_index":0,"scheduled_time":"<aws.scheduler.scheduled-time>"}
//
// Scheduler replaces the placeholder with each invocation's scheduled time;
// ParseFiring reads the result.
func FiringInput(workflowID string, index int) string {
	placeholder := scheduledTimePlaceholder
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // Scheduler looks for the placeholder's literal '<' and '>'
	// Encoding strings and an int cannot fail.
	_ = enc.Encode(firingJSON{Kind: FiringKind, WorkflowID: workflowID, TriggerIndex: &index, ScheduledTime: &placeholder})
	return string(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

// EncodeFiring returns the message f's schedule delivers (FiringInput with
// its placeholder replaced by f's scheduled time), which ParseFiring reads.
func EncodeFiring(f Firing) []byte {
	index, at := f.TriggerIndex, f.ScheduledTime.UTC().Format(time.RFC3339)
	b, _ := json.Marshal(firingJSON{Kind: FiringKind, WorkflowID: f.WorkflowID, TriggerIndex: &index, ScheduledTime: &at}) // strings and an int: cannot fail
	return b
}

// ParseFiring reads a firing message delivered by a time trigger's schedule:
// kind "time_trigger", a workflow_id, a trigger_index of 0 or more and a
// scheduled_time in RFC 3339. Unknown keys are ignored.
func ParseFiring(body []byte) (Firing, error) {
	var m firingJSON
	if err := json.Unmarshal(body, &m); err != nil {
		return Firing{}, fmt.Errorf("time trigger firing: %w", err)
	}
	switch {
	case m.Kind != FiringKind:
		return Firing{}, fmt.Errorf("time trigger firing: kind is %q, want %q", m.Kind, FiringKind)
	case m.WorkflowID == "":
		return Firing{}, errors.New("time trigger firing: workflow_id is missing")
	case m.TriggerIndex == nil:
		return Firing{}, errors.New("time trigger firing: trigger_index is missing")
	case *m.TriggerIndex < 0:
		return Firing{}, fmt.Errorf("time trigger firing: trigger_index %d is negative", *m.TriggerIndex)
	case m.ScheduledTime == nil:
		return Firing{}, errors.New("time trigger firing: scheduled_time is missing")
	}
	at, err := time.Parse(time.RFC3339, *m.ScheduledTime)
	if err != nil {
		return Firing{}, fmt.Errorf("time trigger firing: scheduled_time %q is not an RFC 3339 time (was %s replaced?): %w", *m.ScheduledTime, scheduledTimePlaceholder, err)
	}
	return Firing{WorkflowID: m.WorkflowID, TriggerIndex: *m.TriggerIndex, ScheduledTime: at.UTC()}, nil
}
