package triggers

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/maestro-serverless/maestro/model"
)

func TestJitter(t *testing.T) {
	at := time.Date(2026, time.November, 22, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name  string
		delay *model.ParsableDuration
		max   time.Duration // exclusive; 0 means the jitter is always 0
	}{
		{"none", nil, 0},
		{"zero", &model.ParsableDuration{Seconds: 0}, 0},
		{"one second", &model.ParsableDuration{Seconds: 1}, 0},
		{"bare number is seconds", &model.ParsableDuration{Seconds: 60}, time.Minute},
		{"decoded duration string", &model.ParsableDuration{Seconds: 30, Raw: model.RawJSON(`"30s"`)}, 30 * time.Second},
		{"unresolved duration string", &model.ParsableDuration{Expr: "2 minutes"}, 2 * time.Minute},
		{"under a second", &model.ParsableDuration{Expr: "500ms"}, 0},
		{"hours", &model.ParsableDuration{Expr: "1h 30min"}, 90 * time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := &model.TimeTrigger{Type: model.TriggerCron, Cron: "*/5 * * * *", FuzzyMaxDelay: tt.delay}
			distinct := map[time.Duration]bool{}
			for i := range 200 {
				when := at.Add(time.Duration(i) * 5 * time.Minute)
				d, err := Jitter(tr, "wf", 0, when)
				require.NoError(t, err)
				again, err := Jitter(tr, "wf", 0, when)
				require.NoError(t, err)
				require.Equal(t, d, again, "deterministic")
				require.Zero(t, d%time.Second, "whole seconds")
				if tt.max == 0 {
					require.Zero(t, d)
					continue
				}
				require.True(t, d >= 0 && d < tt.max, "jitter %v outside [0, %v)", d, tt.max)
				distinct[d] = true
			}
			if tt.max > 0 {
				assert.Greater(t, len(distinct), min(int(tt.max/time.Second), 200)/2, "jitter should spread")
			}
		})
	}
}

func TestJitterDependsOnFiring(t *testing.T) {
	tr := &model.TimeTrigger{Type: model.TriggerCron, Cron: "0 * * * *", FuzzyMaxDelay: &model.ParsableDuration{Seconds: 3600}}
	at := time.Date(2026, time.November, 22, 10, 0, 0, 0, time.UTC)
	base, err := Jitter(tr, "wf", 0, at)
	require.NoError(t, err)
	differs := 0
	for _, other := range []struct {
		wf    string
		index int
		at    time.Time
	}{{"wf2", 0, at}, {"wf", 1, at}, {"wf", 0, at.Add(time.Hour)}} {
		d, err := Jitter(tr, other.wf, other.index, other.at)
		require.NoError(t, err)
		if d != base {
			differs++
		}
	}
	// With 3600 possible values, three equal to base would be a broken seed.
	assert.Positive(t, differs)
}

func TestJitterRejects(t *testing.T) {
	at := time.Now()
	tests := []struct {
		name  string
		delay *model.ParsableDuration
		want  string
	}{
		{"param", &model.ParsableDuration{Expr: "${delay}"}, "refers to a parameter"},
		{"param with unit", &model.ParsableDuration{Expr: "$d s"}, "refers to a parameter"},
		{"not a duration", &model.ParsableDuration{Expr: "soon"}, "fuzzy_max_delay"},
		{"negative", &model.ParsableDuration{Seconds: -5}, "negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Jitter(&model.TimeTrigger{Type: model.TriggerCron, Cron: "0 * * * *", FuzzyMaxDelay: tt.delay}, "wf", 0, at)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
	_, err := Jitter(nil, "wf", 0, at)
	assert.Error(t, err)
}
