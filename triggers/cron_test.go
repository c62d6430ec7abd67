package triggers

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/maestro-serverless/maestro/model"
)

func cronTrigger(expr, tz string) model.TimeTrigger {
	return model.TimeTrigger{Type: model.TriggerCron, Cron: expr, Timezone: tz}
}

func TestSchedulerCronTranslates(t *testing.T) {
	tests := []struct {
		name    string
		trigger model.TimeTrigger
		want    []Expression
	}{
		{"quartz every day at noon", cronTrigger("0 0 12 1/1 * ? *", "US/Pacific"),
			[]Expression{{"cron(0 12 * * ? *)", "US/Pacific"}}},
		{"predefined daily", model.TimeTrigger{Type: model.TriggerPredefined, Expression: "@daily", Timezone: "Asia/Tokyo"},
			[]Expression{{"cron(0 0 * * ? *)", "Asia/Tokyo"}}},
		{"unix every two minutes", cronTrigger("*/2 * * * *", "US/Pacific"),
			[]Expression{{"cron(0/2 * * * ? *)", "US/Pacific"}}},
		{"no zone is UTC", cronTrigger("0 * * * *", ""),
			[]Expression{{"cron(0 * * * ? *)", "UTC"}}},
		{"predefined hourly", model.TimeTrigger{Type: model.TriggerPredefined, Expression: "@HOURLY"},
			[]Expression{{"cron(0 * * * ? *)", "UTC"}}},
		{"predefined weekly is sunday", model.TimeTrigger{Type: model.TriggerPredefined, Expression: "@weekly"},
			[]Expression{{"cron(0 0 ? * 1 *)", "UTC"}}},
		{"predefined monthly", model.TimeTrigger{Type: model.TriggerPredefined, Expression: "@monthly"},
			[]Expression{{"cron(0 0 1 * ? *)", "UTC"}}},
		{"predefined yearly", model.TimeTrigger{Type: model.TriggerPredefined, Expression: "@yearly"},
			[]Expression{{"cron(0 0 1 1 ? *)", "UTC"}}},
		{"unix day names", cronTrigger("0 9 * * MON-FRI", "Europe/London"),
			[]Expression{{"cron(0 9 ? * 2-6 *)", "Europe/London"}}},
		{"unix day numbers", cronTrigger("0 9 * * 1-5", ""),
			[]Expression{{"cron(0 9 ? * 2-6 *)", "UTC"}}},
		{"unix lower-case names", cronTrigger("0 9 * * sat,sun", ""),
			[]Expression{{"cron(0 9 ? * 1,7 *)", "UTC"}}},
		{"unix sunday is 0", cronTrigger("0 0 * * 0", ""),
			[]Expression{{"cron(0 0 ? * 1 *)", "UTC"}}},
		{"unix sunday is 7", cronTrigger("0 0 * * 7", ""),
			[]Expression{{"cron(0 0 ? * 1 *)", "UTC"}}},
		{"unix range to 7", cronTrigger("0 0 * * 5-7", ""),
			[]Expression{{"cron(0 0 ? * 1,6,7 *)", "UTC"}}},
		{"unix stepped range to 7", cronTrigger("0 0 * * 1-7/2", ""),
			[]Expression{{"cron(0 0 ? * 1,2,4,6 *)", "UTC"}}},
		{"unix step from 7", cronTrigger("0 0 * * 7/3", ""),
			[]Expression{{"cron(0 0 ? * 1,4,7 *)", "UTC"}}},
		{"unix step on days expands", cronTrigger("0 0 * * */2", ""),
			[]Expression{{"cron(0 0 ? * 1,3,5,7 *)", "UTC"}}},
		{"unix value with step runs to saturday", cronTrigger("0 0 * * 1/2", ""),
			[]Expression{{"cron(0 0 ? * 2,4,6 *)", "UTC"}}},
		{"unix all days of week is every day", cronTrigger("0 0 * * 0-6", ""),
			[]Expression{{"cron(0 0 * * ? *)", "UTC"}}},
		{"unix day of month", cronTrigger("30 6 1,15 * *", "Australia/Sydney"),
			[]Expression{{"cron(30 6 1,15 * ? *)", "Australia/Sydney"}}},
		{"unix question mark day of week", cronTrigger("30 6 1 * ?", ""),
			[]Expression{{"cron(30 6 1 * ? *)", "UTC"}}},
		{"unix or of both day fields", cronTrigger("15 10 1,15 * 1", "US/Pacific"),
			[]Expression{{"cron(15 10 1,15 * ? *)", "US/Pacific"}, {"cron(15 10 ? * 2 *)", "US/Pacific"}}},
		{"unix stepped day of month is restricted", cronTrigger("0 6 */10 * 5-7", ""),
			[]Expression{{"cron(0 6 1,11,21,31 * ? *)", "UTC"}, {"cron(0 6 ? * 1,6,7 *)", "UTC"}}},
		{"unix or with every day of month", cronTrigger("0 0 1-31 * 1", ""),
			[]Expression{{"cron(0 0 * * ? *)", "UTC"}}},
		{"unix months and lists", cronTrigger("5,35 4,16 * JAN,jul,10-12 *", ""),
			[]Expression{{"cron(5,35 4,16 * 1,7,10-12 ? *)", "UTC"}}},
		{"unix hour step and range", cronTrigger("0 1-23/2 * * *", ""),
			[]Expression{{"cron(0 1/2 * * ? *)", "UTC"}}},
		{"unix minute step that ends early", cronTrigger("10-40/10 * * * *", ""),
			[]Expression{{"cron(10,20,30,40 * * * ? *)", "UTC"}}},
		{"unix minute offset step", cronTrigger("5/15 * * * *", ""),
			[]Expression{{"cron(5/15 * * * ? *)", "UTC"}}},
		{"quartz question mark in day of month", cronTrigger("0 30 8 ? * 2-6", "Europe/London"),
			[]Expression{{"cron(30 8 ? * 2-6 *)", "Europe/London"}}},
		{"quartz day names and year", cronTrigger("0 15 9 ? * SUN,SAT *", "Asia/Tokyo"),
			[]Expression{{"cron(15 9 ? * 1,7 *)", "Asia/Tokyo"}}},
		{"quartz day step", cronTrigger("0 0 0 ? * 2/2", ""),
			[]Expression{{"cron(0 0 ? * 2,4,6 *)", "UTC"}}},
		{"quartz every day of week", cronTrigger("0 0 1 ? * *", ""),
			[]Expression{{"cron(0 1 * * ? *)", "UTC"}}},
		{"quartz day of month step", cronTrigger("0 0 6 1/5 * ?", ""),
			[]Expression{{"cron(0 6 1,6,11,16,21,26,31 * ? *)", "UTC"}}},
		{"quartz star seconds step of 60", cronTrigger("0/60 0 6 * * ?", ""),
			[]Expression{{"cron(0 6 * * ? *)", "UTC"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SchedulerCron(&tt.trigger)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestSchedulerCronRejects(t *testing.T) {
	tests := []struct {
		name    string
		trigger *model.TimeTrigger
		want    string
	}{
		{"nil", nil, "nil time trigger"},
		{"interval", &model.TimeTrigger{Type: model.TriggerInterval, Interval: "3H"}, "INTERVAL triggers cannot be expressed"},
		{"unknown predefined", &model.TimeTrigger{Type: model.TriggerPredefined, Expression: "@midnight"}, "unknown predefined expression"},
		{"quartz seconds", ptr(cronTrigger("30 0 12 * * ?", "")), `seconds field "30"`},
		{"quartz every second", ptr(cronTrigger("* 0 12 * * ?", "")), `seconds field "*"`},
		{"quartz second list", ptr(cronTrigger("0,30 0 12 * * ?", "")), "seconds field must be 0"},
		{"quartz both question marks", ptr(cronTrigger("0 0 12 ? * ?", "")), "only one of day-of-month and day-of-week"},
		{"quartz last day", ptr(cronTrigger("0 0 12 L * ?", "")), "not supported"},
		{"bad hour", ptr(cronTrigger("0 30 * * *", "")), "cron"},
		{"bad zone", ptr(cronTrigger("0 0 * * *", "Mars/Olympus")), "unknown timezone"},
		{"four fields", ptr(cronTrigger("0 0 * *", "")), "4 fields"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := SchedulerCron(tt.trigger)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func ptr[T any](v T) *T { return &v }

// TestSchedulerCronSample translates the three triggers of Maestro's
// sample-time-trigger-wf.json.
func TestSchedulerCronSample(t *testing.T) {
	data, err := os.ReadFile("testdata/sample-time-trigger-wf.json")
	require.NoError(t, err)
	def, err := model.ParseDefinition(data)
	require.NoError(t, err)
	require.Empty(t, model.Validate(def, model.ValidateOptions{}))
	want := [][]Expression{
		{{"cron(0 12 * * ? *)", "US/Pacific"}},
		{{"cron(0 0 * * ? *)", "Asia/Tokyo"}},
		{{"cron(0/2 * * * ? *)", "US/Pacific"}},
	}
	require.Len(t, def.Workflow.TimeTriggers, len(want))
	for i := range def.Workflow.TimeTriggers {
		got, err := SchedulerCron(&def.Workflow.TimeTriggers[i])
		require.NoError(t, err)
		assert.Equal(t, want[i], got, "trigger %d", i)
	}

	// The third trigger's fuzzy_max_delay "30s" spreads its firings over 0-29 s.
	tr := &def.Workflow.TimeTriggers[2]
	seen := map[time.Duration]bool{}
	at := time.Date(2026, time.November, 22, 10, 0, 0, 0, time.UTC)
	for i := range 600 {
		d, err := Jitter(tr, def.Workflow.ID, 2, at.Add(time.Duration(i)*2*time.Minute))
		require.NoError(t, err)
		require.True(t, d >= 0 && d < 30*time.Second, "jitter %v", d)
		seen[d] = true
	}
	assert.Len(t, seen, 30, "600 firings should reach every second of the 30")
}

func TestFormatField(t *testing.T) {
	set := func(vs ...int) uint64 {
		var s uint64
		for _, v := range vs {
			s |= 1 << v
		}
		return s
	}
	tests := []struct {
		set    uint64
		lo, hi int
		steps  bool
		want   string
	}{
		{set(0, 15, 30, 45), 0, 59, true, "0/15"},
		{set(0, 15, 30, 45), 0, 59, false, "0,15,30,45"},
		{set(0, 15, 30), 0, 59, true, "0,15,30"}, // stops before the end: not "0/15"
		{set(0, 30), 0, 59, true, "0,30"},
		{set(1, 2, 3, 5, 7), 1, 7, false, "1-3,5,7"},
		{set(0, 1, 2, 3), 1, 3, false, "*"}, // values outside lo-hi are not written
		{set(1, 2, 3, 4, 5, 6, 7), 1, 7, false, "*"},
		{set(3), 1, 31, false, "3"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, formatField(tt.set, tt.lo, tt.hi, tt.steps), "%b", tt.set)
	}
}
