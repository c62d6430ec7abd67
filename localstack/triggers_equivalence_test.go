package localstack

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/triggers"
)

// The window the equivalence tests compare fire times over: more than 400
// days from 2026-01-01, through the daylight saving changes of both
// hemispheres (US 2026-03-08 and 2026-11-01, UK 2026-03-29 and 2026-10-25,
// Sydney 2026-04-05 and 2026-10-04).
var (
	equivalenceStart = time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)
	equivalenceEnd   = equivalenceStart.AddDate(0, 0, 410)
)

// equivalenceTriggers covers unix and Quartz forms, the OR of both day
// fields, predefined expressions and schedules that fire in the hours
// daylight saving time skips or repeats, in five zones.
func equivalenceTriggers() []model.TimeTrigger {
	cron := func(expr, tz string) model.TimeTrigger {
		return model.TimeTrigger{Type: model.TriggerCron, Cron: expr, Timezone: tz}
	}
	predefined := func(expr, tz string) model.TimeTrigger {
		return model.TimeTrigger{Type: model.TriggerPredefined, Expression: expr, Timezone: tz}
	}
	return []model.TimeTrigger{
		// sample-time-trigger-wf.json
		cron("0 0 12 1/1 * ? *", "US/Pacific"),
		predefined("@daily", "Asia/Tokyo"),
		cron("*/2 * * * *", "US/Pacific"),
		// unix
		cron("0 9 * * MON-FRI", "Europe/London"),
		cron("30 2 * * *", "US/Pacific"),
		cron("30 1 * * *", "Europe/London"),
		cron("30 2 * * *", "Australia/Sydney"),
		cron("0 0 * * 0", "UTC"),
		cron("0 0 * * 7", ""),
		cron("15 10 1,15 * 1", "US/Pacific"),
		cron("0 6 */10 * 5-7", "Australia/Sydney"),
		cron("0 */3 1-7 * 1", "US/Pacific"),
		cron("0 0 1-31 * 1", "UTC"),
		cron("5 4 * JAN,JUL *", "UTC"),
		cron("0 1-5/2 * * 1/2", "Europe/London"),
		cron("45 23 31 * *", "Australia/Sydney"),
		cron("7 */4 * * */2", "Asia/Tokyo"),
		cron("0,30 0-3 * * sat,sun", "Australia/Sydney"),
		// Quartz
		cron("0 30 8 ? * 2-6", "Europe/London"),
		cron("0 15 9 ? * SUN,SAT *", "Asia/Tokyo"),
		cron("0 0/15 * ? * 2", "Australia/Sydney"),
		cron("0 0 6 1/5 * ?", "US/Pacific"),
		cron("0 0 1 ? * *", "Europe/London"),
		// predefined
		predefined("@hourly", "Australia/Sydney"),
		predefined("@weekly", "US/Pacific"),
		predefined("@monthly", "Europe/London"),
		predefined("@yearly", "Asia/Tokyo"),
	}
}

// TestTriggerSchedulesMatchModel checks, for each trigger, that the union of
// the fire times of its Scheduler expressions (as this package's Scheduler
// evaluator reads them) equals model's sequence of fire times, and that both
// follow EventBridge Scheduler's documented daylight saving behaviour: a
// fire time the clock skips does not fire, and one in the repeated hour
// fires once.
func TestTriggerSchedulesMatchModel(t *testing.T) {
	for _, tt := range equivalenceTriggers() {
		name := tt.Cron + tt.Expression + " " + tt.Timezone
		t.Run(name, func(t *testing.T) {
			sched, err := tt.Schedule()
			require.NoError(t, err)
			modelFires := modelFireTimes(sched, equivalenceStart, equivalenceEnd)
			require.NotEmpty(t, modelFires, "model never fires in the window")

			exprs, err := triggers.SchedulerCron(&tt)
			require.NoError(t, err)
			schedulerFires := schedulerFireTimes(t, exprs, equivalenceStart, equivalenceEnd)
			t.Logf("%v: %d fires", exprs, len(schedulerFires))

			if msg := firstMismatch(sched.Location(), "scheduler", schedulerFires, "model", modelFires); msg != "" {
				t.Errorf("translation: %s", msg)
			}
			documented := documentedFires(sched.Location(), modelFires)
			if msg := firstMismatch(sched.Location(), "scheduler evaluator (schedexpr.go)", schedulerFires, "documented Scheduler", documented); msg != "" {
				t.Errorf("DST: %s", msg)
			}
			if msg := firstMismatch(sched.Location(), "model.ParseCron", modelFires, "documented Scheduler", documented); msg != "" {
				t.Errorf("DST: %s", msg)
			}
		})
	}
}

// TestTriggerSchedulesAcrossDSTChanges pins EventBridge Scheduler's
// documented daylight saving behaviour at the changes themselves, for the
// Scheduler evaluator and for model: the fire times of a daily trigger
// around each change, in UTC.
func TestTriggerSchedulesAcrossDSTChanges(t *testing.T) {
	tests := []struct {
		name, cron, tz, from string
		want                 []string
	}{
		// Clocks go from 02:00 to 03:00 on 2026-03-08: 02:30 does not exist that day.
		{"US spring forward skips", "30 2 * * *", "US/Pacific", "2026-03-07T00:00:00Z",
			[]string{"2026-03-07T10:30:00Z", "2026-03-09T09:30:00Z", "2026-03-10T09:30:00Z"}},
		// Clocks go from 02:00 back to 01:00 on 2026-11-01: 01:30 happens twice and fires once.
		{"US fall back fires once", "30 1 * * *", "US/Pacific", "2026-10-31T00:00:00Z",
			[]string{"2026-10-31T08:30:00Z", "2026-11-01T08:30:00Z", "2026-11-02T09:30:00Z"}},
		// 01:00 becomes 02:00 on 2026-03-29 and 02:00 becomes 01:00 on 2026-10-25.
		{"UK spring forward skips", "30 1 * * *", "Europe/London", "2026-03-28T00:00:00Z",
			[]string{"2026-03-28T01:30:00Z", "2026-03-30T00:30:00Z"}},
		{"UK fall back fires once", "30 1 * * *", "Europe/London", "2026-10-24T00:00:00Z",
			[]string{"2026-10-24T00:30:00Z", "2026-10-25T00:30:00Z", "2026-10-26T01:30:00Z"}},
		// Sydney: 03:00 becomes 02:00 on 2026-04-05, 02:00 becomes 03:00 on 2026-10-04.
		{"Sydney fall back fires once", "30 2 * * *", "Australia/Sydney", "2026-04-03T00:00:00Z",
			[]string{"2026-04-03T15:30:00Z", "2026-04-04T15:30:00Z", "2026-04-05T16:30:00Z"}},
		{"Sydney spring forward skips", "30 2 * * *", "Australia/Sydney", "2026-10-02T00:00:00Z",
			[]string{"2026-10-02T16:30:00Z", "2026-10-04T15:30:00Z"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			trig := model.TimeTrigger{Type: model.TriggerCron, Cron: tt.cron, Timezone: tt.tz}
			from, err := time.Parse(time.RFC3339, tt.from)
			require.NoError(t, err)
			last, err := time.Parse(time.RFC3339, tt.want[len(tt.want)-1])
			require.NoError(t, err)
			var want []time.Time
			for _, w := range tt.want {
				v, err := time.Parse(time.RFC3339, w)
				require.NoError(t, err)
				want = append(want, v)
			}

			exprs, err := triggers.SchedulerCron(&trig)
			require.NoError(t, err)
			sched, err := trig.Schedule()
			require.NoError(t, err)
			loc := sched.Location()
			if msg := firstMismatch(loc, "scheduler evaluator (schedexpr.go)", schedulerFireTimes(t, exprs, from, last), "documented Scheduler", want); msg != "" {
				t.Error(msg)
			}
			if msg := firstMismatch(loc, "model.ParseCron", modelFireTimes(sched, from, last), "documented Scheduler", want); msg != "" {
				t.Error(msg)
			}
		})
	}
}

// modelFireTimes lists model's fire times in (from, to], in UTC.
func modelFireTimes(s model.CronSchedule, from, to time.Time) []time.Time {
	var out []time.Time
	for cur := s.Next(from); !cur.IsZero() && !cur.After(to); cur = s.Next(cur) {
		out = append(out, cur.UTC())
	}
	return out
}

// schedulerFireTimes lists the fire times in (from, to] of a set of
// Scheduler expressions, as the union of theirs in UTC: a time two
// expressions share is one firing, as the runtime dedups it.
func schedulerFireTimes(t *testing.T, exprs []triggers.Expression, from, to time.Time) []time.Time {
	t.Helper()
	var out []time.Time
	for _, e := range exprs {
		s, err := parseScheduleExpression(e.Cron, e.Timezone, from)
		require.NoError(t, err, "Scheduler rejects %+v", e)
		require.True(t, s.recurring(), "%+v is not recurring", e)
		for cur, ok := s.next(from); ok && !cur.After(to); cur, ok = s.next(cur) {
			out = append(out, cur.UTC())
		}
	}
	slices.SortFunc(out, time.Time.Compare)
	return slices.CompactFunc(out, time.Time.Equal)
}

// documentedFires applies EventBridge Scheduler's documented daylight saving
// rule to a sequence of fire times: "When the time shifts back in the Fall,
// your schedule runs only once and doesn't repeat its invocation". A fire
// whose wall clock time in loc repeats an earlier one's (the second pass
// through the repeated hour) is dropped. (Fire times the clock skips in the
// spring never appear in a sequence of instants; the DST change test checks
// that they are skipped rather than moved.)
func documentedFires(loc *time.Location, fires []time.Time) []time.Time {
	seen := map[string]bool{}
	var out []time.Time
	for _, f := range fires {
		wall := f.In(loc).Format("2006-01-02T15:04:05")
		if seen[wall] {
			continue
		}
		seen[wall] = true
		out = append(out, f)
	}
	return out
}

// firstMismatch describes the first difference between two sequences of
// fire times, or returns "" when they are equal.
func firstMismatch(loc *time.Location, gotName string, got []time.Time, wantName string, want []time.Time) string {
	show := func(s []time.Time, i int) string {
		if i >= len(s) {
			return "nothing (end of sequence)"
		}
		return fmt.Sprintf("%s (%s)", s[i].UTC().Format(time.RFC3339), s[i].In(loc).Format("2006-01-02 15:04 MST"))
	}
	for i := 0; i < len(got) || i < len(want); i++ {
		if i < len(got) && i < len(want) && got[i].Equal(want[i]) {
			continue
		}
		prev := "the start"
		if i > 0 {
			prev = show(want, i-1)
		}
		return fmt.Sprintf("fire #%d after %s: %s gives %s, %s gives %s (%d vs %d fires in all)",
			i, prev, gotName, show(got, i), wantName, show(want, i), len(got), len(want))
	}
	return ""
}

// TestRandomTriggerTranslations compares, for generated unix and Quartz
// expressions that model accepts, the union of their Scheduler expressions'
// fire times with model's over two months, in zones with and without
// daylight saving time. Both evaluators read daylight saving changes the
// same way, so this isolates the translation of the fields.
func TestRandomTriggerTranslations(t *testing.T) {
	pick := func(r *rand.Rand, opts ...string) string { return opts[r.IntN(len(opts))] }
	r := rand.New(rand.NewPCG(6, 1))
	from := time.Date(2026, time.September, 20, 0, 0, 0, 0, time.UTC)
	to := from.AddDate(0, 0, 62)
	zones := []string{"UTC", "US/Pacific", "Europe/London", "Asia/Tokyo", "Australia/Sydney"}
	tested := 0
	for tested < 300 {
		minute := pick(r, "0", "5,35", "*/20", "10-12", "59", "7/30")
		hour := pick(r, "*", "3", "1-5/2", "*/6", "0,12", "22", "9-17")
		month := pick(r, "*", "*", "*", "10-12", "NOV", "jan,oct,11", "*/2", "2/3")
		dom := pick(r, "*", "*", "?", "1", "1,15", "*/10", "5-9", "31", "L", "1-31", "28-31/2", "3/7")
		var expr string
		if r.IntN(2) == 0 {
			dow := pick(r, "*", "*", "?", "0", "7", "1-5", "MON-FRI", "sat,sun", "*/2", "1/3", "5-7", "0-7", "7/2", "1-7/3", "tue", "2,4,6", "0-6")
			expr = fmt.Sprintf("%s %s %s %s %s", minute, hour, dom, month, dow)
		} else {
			dow := pick(r, "*", "?", "1", "2-6", "MON-FRI", "SUN,SAT", "*/2", "2/2", "1-7", "7", "3-5/2", "wed")
			if r.IntN(2) == 0 {
				dom = "?"
			} else {
				dow = "?"
			}
			expr = fmt.Sprintf("0 %s %s %s %s %s", minute, hour, dom, month, dow)
		}
		tz := zones[r.IntN(len(zones))]
		trig := model.TimeTrigger{Type: model.TriggerCron, Cron: expr, Timezone: tz}
		sched, err := trig.Schedule()
		if err != nil {
			continue // not a valid trigger
		}
		tested++
		exprs, err := triggers.SchedulerCron(&trig)
		require.NoError(t, err, "%q accepted by model", expr)
		if msg := firstMismatch(sched.Location(), "scheduler", schedulerFireTimes(t, exprs, from, to), "model", modelFireTimes(sched, from, to)); msg != "" {
			t.Errorf("%q %s as %v: %s", expr, tz, exprs, msg)
		}
	}
}
