package triggers

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// validScheduleName is EventBridge Scheduler's rule for schedule names.
var validScheduleName = regexp.MustCompile(`^[0-9a-zA-Z\-_.]{1,64}$`)

func TestScheduleNames(t *testing.T) {
	long := strings.Repeat("a.-_Z9", 21) + "xy" // 128 characters, every kind allowed in a workflow id
	require.Len(t, long, 128)
	ids := []string{"sample-time-trigger-wf", "w", long, long[:127] + "z", "_x.y-z", "sample-time-trigger-wf2"}

	names := map[string]string{}
	for _, id := range ids {
		prefix := SchedulePrefix(id)
		assert.Equal(t, prefix, SchedulePrefix(id), "deterministic")
		assert.Regexp(t, `^tt-[0-9a-f]{16}-$`, prefix)
		for _, index := range []int{0, 1, 9, 10, 99} {
			for _, part := range []int{0, 1} {
				name := ScheduleName(id, index, part)
				assert.Regexp(t, validScheduleName, name)
				assert.True(t, strings.HasPrefix(name, prefix), "%s has prefix %s", name, prefix)
				assert.Equal(t, name, ScheduleName(id, index, part), "deterministic")
				key := id + "/" + string(rune('0'+index)) + "/" + string(rune('0'+part))
				if other, dup := names[name]; dup {
					t.Errorf("%s names both %s and %s", name, other, key)
				}
				names[name] = key
			}
		}
		// No other workflow's schedule starts with this workflow's prefix.
		for name, key := range names {
			if !strings.HasPrefix(key, id+"/") {
				assert.False(t, strings.HasPrefix(name, prefix), "%s (%s) matches the prefix of %s", name, key, id)
			}
		}
	}
	assert.Equal(t, SchedulePrefix("w")+"3", ScheduleName("w", 3, 0))
	assert.Equal(t, SchedulePrefix("w")+"3-1", ScheduleName("w", 3, 1))
	// Trigger 1's name is not a prefix of trigger 10's, nor the reverse.
	assert.False(t, strings.HasPrefix(ScheduleName("w", 10, 0), ScheduleName("w", 1, 0)+"-"))
}

func TestFiringRequestID(t *testing.T) {
	at := time.Date(2026, time.November, 22, 10, 0, 0, 0, time.UTC)
	id := FiringRequestID("wf", 0, at)
	u, err := uuid.Parse(id)
	require.NoError(t, err)
	assert.Equal(t, uuid.Version(5), u.Version())

	pacific, err := time.LoadLocation("US/Pacific")
	require.NoError(t, err)
	assert.Equal(t, id, FiringRequestID("wf", 0, at), "deterministic")
	assert.Equal(t, id, FiringRequestID("wf", 0, at.In(pacific)), "the same instant in another zone")
	assert.Equal(t, id, FiringRequestID("wf", 0, at.Add(300*time.Millisecond)), "sub-second parts are dropped")

	others := []string{
		FiringRequestID("wf", 1, at),
		FiringRequestID("wf2", 0, at),
		FiringRequestID("wf", 0, at.Add(time.Minute)),
		FiringRequestID("wf", 0, at.Add(time.Second)),
		FiringRequestID("w", 10, at), // no ambiguity between the id and the index
		FiringRequestID("w1", 0, at),
	}
	seen := map[string]bool{id: true}
	for _, o := range others {
		assert.False(t, seen[o], "%s repeats", o)
		seen[o] = true
	}
}
