package triggers

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"time"

	"github.com/google/uuid"
)

// schedulePrefix starts every time-trigger schedule name.
const schedulePrefix = "tt-"

// SchedulePrefix returns the name prefix shared by the schedules of one
// workflow's time triggers and by no other workflow's: "tt-", 16 hex digits
// of the SHA-256 of the workflow id, and "-". It is a valid ListSchedules
// NamePrefix for any workflow id.
func SchedulePrefix(workflowID string) string {
	sum := sha256.Sum256([]byte(workflowID))
	return schedulePrefix + hex.EncodeToString(sum[:8]) + "-"
}

// ScheduleName returns the name of the schedule for part part of the time
// trigger at index index (its position in the workflow's time_triggers) of a
// workflow: SchedulePrefix(workflowID) followed by the index, and by "-" and
// the part when part is not 0. part is the position of the expression in
// SchedulerCron's result. The name is deterministic, at most 64 characters
// and made of [0-9a-zA-Z-_.] for any workflow id, as Scheduler requires;
// index and part must not be negative.
func ScheduleName(workflowID string, index, part int) string {
	name := SchedulePrefix(workflowID) + strconv.Itoa(index)
	if part != 0 {
		name += "-" + strconv.Itoa(part)
	}
	return name
}

// firingNamespace is the name space of FiringRequestID's UUIDs, itself the
// SHA-1 UUID of a fixed URL in the URL name space.
func firingNamespace() uuid.UUID {
	return uuid.NewSHA1(uuid.NameSpaceURL, []byte("https://github.com/maestro-serverless/maestro/triggers#time-trigger-firing"))
}

// FiringRequestID returns the start request id of the firing of a workflow's
// time trigger (by index) scheduled at scheduled: a SHA-1 (version 5) UUID of
// the three, with the time taken in UTC to the second. Every delivery of one
// firing, from any of the trigger's schedules, has the same id, so starting
// the workflow with it as request id starts at most one instance.
func FiringRequestID(workflowID string, index int, scheduled time.Time) string {
	name := workflowID + "\x00" + strconv.Itoa(index) + "\x00" + scheduled.UTC().Format(time.RFC3339)
	return uuid.NewSHA1(firingNamespace(), []byte(name)).String()
}
