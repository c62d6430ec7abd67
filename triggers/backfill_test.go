package triggers

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/maestro-serverless/maestro/model"
)

func TestFirings(t *testing.T) {
	utc := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		require.NoError(t, err)
		return v.UTC()
	}
	hourly := model.TimeTrigger{Type: model.TriggerPredefined, Expression: "@hourly"}
	tests := []struct {
		name     string
		tts      []model.TimeTrigger
		from, to string
		limit    int
		want     []string // "index@time"
		err      error
	}{
		{name: "hourly, from inclusive, to exclusive", tts: []model.TimeTrigger{hourly},
			from: "2026-11-01T00:00:00Z", to: "2026-11-01T03:00:00Z", limit: 10,
			want: []string{"0@2026-11-01T00:00:00Z", "0@2026-11-01T01:00:00Z", "0@2026-11-01T02:00:00Z"}},
		{name: "from between firings", tts: []model.TimeTrigger{hourly},
			from: "2026-11-01T00:30:00Z", to: "2026-11-01T02:00:01Z", limit: 10,
			want: []string{"0@2026-11-01T01:00:00Z", "0@2026-11-01T02:00:00Z"}},
		{name: "a fraction of a second after a firing excludes it", tts: []model.TimeTrigger{hourly},
			from: "2026-11-01T00:00:00.5Z", to: "2026-11-01T01:00:00.5Z", limit: 10,
			want: []string{"0@2026-11-01T01:00:00Z"}},
		{name: "empty interval", tts: []model.TimeTrigger{hourly},
			from: "2026-11-01T00:10:00Z", to: "2026-11-01T00:50:00Z", limit: 10},
		{name: "two triggers merge by time then index; a shared instant fires both",
			tts:  []model.TimeTrigger{{Type: model.TriggerCron, Cron: "0 */2 * * *"}, hourly},
			from: "2026-11-01T00:00:00Z", to: "2026-11-01T03:00:00Z", limit: 10,
			want: []string{"0@2026-11-01T00:00:00Z", "1@2026-11-01T00:00:00Z", "1@2026-11-01T01:00:00Z",
				"0@2026-11-01T02:00:00Z", "1@2026-11-01T02:00:00Z"}},
		{name: "time zone: daily at 9 in US/Pacific", tts: []model.TimeTrigger{{Type: model.TriggerCron, Cron: "0 9 * * *", Timezone: "US/Pacific"}},
			from: "2026-11-01T00:00:00Z", to: "2026-11-03T00:00:00Z", limit: 10,
			// 1 November 2026: PDT ends at 09:00 UTC; 9:00 PST is 17:00 UTC.
			want: []string{"0@2026-11-01T17:00:00Z", "0@2026-11-02T17:00:00Z"}},
		{name: "the limit is inclusive", tts: []model.TimeTrigger{hourly},
			from: "2026-11-01T00:00:00Z", to: "2026-11-01T03:00:00Z", limit: 3,
			want: []string{"0@2026-11-01T00:00:00Z", "0@2026-11-01T01:00:00Z", "0@2026-11-01T02:00:00Z"}},
		{name: "over the limit", tts: []model.TimeTrigger{hourly},
			from: "2026-11-01T00:00:00Z", to: "2026-11-01T03:00:00Z", limit: 2, err: ErrTooManyFirings},
		{name: "interval trigger", tts: []model.TimeTrigger{{Type: model.TriggerInterval}},
			from: "2026-11-01T00:00:00Z", to: "2026-11-01T03:00:00Z", limit: 2, err: errors.New("")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Firings("wf", tt.tts, utc(tt.from), utc(tt.to), tt.limit)
			if tt.err != nil {
				require.Error(t, err)
				if errors.Is(tt.err, ErrTooManyFirings) {
					assert.ErrorIs(t, err, ErrTooManyFirings)
				}
				assert.Nil(t, got)
				return
			}
			require.NoError(t, err)
			var names []string
			for _, f := range got {
				assert.Equal(t, "wf", f.WorkflowID)
				names = append(names, fmtIndex(f.TriggerIndex)+"@"+f.ScheduledTime.Format(time.RFC3339))
			}
			assert.Equal(t, tt.want, names)
		})
	}
}

func fmtIndex(i int) string { return string(rune('0' + i)) }

// A backfilled firing starts with the request id its real firing starts
// with (the time trigger's handler uses FiringRequestID).
func TestFiringRequestIDMatchesRealFiring(t *testing.T) {
	at := time.Date(2026, 11, 1, 5, 0, 0, 0, time.UTC)
	fs, err := Firings("wf", []model.TimeTrigger{{Type: model.TriggerPredefined, Expression: "@hourly"}}, at, at.Add(time.Hour), 5)
	require.NoError(t, err)
	require.Len(t, fs, 1)
	real, err := ParseFiring(EncodeFiring(Firing{WorkflowID: "wf", TriggerIndex: 0, ScheduledTime: at.In(time.FixedZone("x", 3600))}))
	require.NoError(t, err)
	assert.Equal(t, FiringRequestID(real.WorkflowID, real.TriggerIndex, real.ScheduledTime), fs[0].RequestID())
	assert.Equal(t, "UTC", Timezone(&model.TimeTrigger{}))
	assert.Equal(t, "US/Pacific", Timezone(&model.TimeTrigger{Timezone: "US/Pacific"}))
}
