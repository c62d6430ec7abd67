package model

import (
	"strings"
	"testing"
	"time"
)

func TestParseCronNextFireTimes(t *testing.T) {
	from := fixedNow() // Wednesday 2026-03-04 05:06:07 UTC
	tests := []struct {
		expr, tz string
		want     []string // the next fire times, RFC 3339 in the schedule's zone
	}{
		{"0 0 * * *", "", []string{"2026-03-05T00:00:00Z", "2026-03-06T00:00:00Z"}},
		{"*/2 * * * *", "UTC", []string{"2026-03-04T05:08:00Z", "2026-03-04T05:10:00Z"}},
		{"15 9-17/4 * * MON-FRI", "UTC", []string{"2026-03-04T09:15:00Z", "2026-03-04T13:15:00Z", "2026-03-04T17:15:00Z", "2026-03-05T09:15:00Z"}},
		{"0 12 * * 7", "UTC", []string{"2026-03-08T12:00:00Z", "2026-03-15T12:00:00Z"}}, // unix 7 = Sunday
		{"0 12 * * 5-7", "UTC", []string{"2026-03-06T12:00:00Z", "2026-03-07T12:00:00Z", "2026-03-08T12:00:00Z", "2026-03-13T12:00:00Z"}},
		{"0 0 12 1/1 * ? *", "US/Pacific", []string{"2026-03-04T12:00:00-08:00", "2026-03-05T12:00:00-08:00"}},
		{"0 0 13 1 * ? *", "UTC", []string{"2026-04-01T13:00:00Z", "2026-05-01T13:00:00Z"}},
		{"0 0 12 ? * 2", "UTC", []string{"2026-03-09T12:00:00Z", "2026-03-16T12:00:00Z"}},   // Quartz 2 = Monday
		{"0 0 12 ? * 1,7", "UTC", []string{"2026-03-07T12:00:00Z", "2026-03-08T12:00:00Z"}}, // Quartz 1 = Sunday, 7 = Saturday
		{"30 0 10 ? JUL-AUG WED", "UTC", []string{"2026-07-01T10:00:30Z", "2026-07-08T10:00:30Z"}},
		{"0 30 1 * * ?", "America/New_York", []string{"2026-03-04T01:30:00-05:00", "2026-03-05T01:30:00-05:00"}},
		{"0 0 3 8 3 ?", "America/New_York", []string{"2026-03-08T03:00:00-04:00", "2027-03-08T03:00:00-05:00"}}, // across the DST change
	}
	for _, tt := range tests {
		s, err := ParseCron(tt.expr, tt.tz)
		if err != nil {
			t.Errorf("ParseCron(%q, %q): %v", tt.expr, tt.tz, err)
			continue
		}
		at := from
		for i, want := range tt.want {
			at = s.Next(at)
			if got := at.Format(time.RFC3339); got != want {
				t.Errorf("%q in %q: fire %d = %s, want %s", tt.expr, tt.tz, i, got, want)
				break
			}
		}
		if s.String() != tt.expr {
			t.Errorf("String() = %q", s.String())
		}
	}
}

func TestParseCronErrors(t *testing.T) {
	tests := []struct{ expr, tz, want string }{
		{"0 30 * * *", "", `cron "0 30 * * *": end of range (30) above maximum (23): 30`},
		{"* * *", "", `cron "* * *" has 3 fields; want 5 (unix) or 6-7 (Quartz, with seconds)`},
		{"0 0 12 * * *", "", `cron "0 0 12 * * *": one of day-of-month ("*") and day-of-week ("*") must be '?'`},
		{"0 0 12 ? * ?", "", `cron "0 0 12 ? * ?": only one of day-of-month and day-of-week may be '?'`},
		{"0 0 12 L * ?", "", `cron "0 0 12 L * ?": field 4 "L": Quartz 'L', 'W' and '#' are not supported`},
		{"0 0 12 ? * MON#2", "", `cron "0 0 12 ? * MON#2": field 6 "MON#2": Quartz 'L', 'W' and '#' are not supported`},
		{"0 0 12 15W * ?", "", `cron "0 0 12 15W * ?": field 4 "15W": Quartz 'L', 'W' and '#' are not supported`},
		{"0 0 12 * * ? 2030", "", `cron "0 0 12 * * ? 2030": the year field "2030" is not supported (use * or leave it out)`},
		{"0 0 12 ? * 8", "", `cron "0 0 12 ? * 8": day-of-week 8 is out of range 1-7`},
		{"0 0 12 ? * 0", "", `cron "0 0 12 ? * 0": day-of-week 0 is out of range 1-7`},
		{"CRON_TZ=UTC 0 * * * *", "", "time zone prefixes are not supported"},
		{"@daily", "", `cron "@daily" has 1 fields`},
		{"0 0 * * *", "Mars/Olympus", `unknown timezone "Mars/Olympus"`},
		{"0 0 * * *", "Local", `unknown timezone "Local"`},
		{"0 0 * * 8-9", "", "above maximum"},
	}
	for _, tt := range tests {
		_, err := ParseCron(tt.expr, tt.tz)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseCron(%q, %q) = %v, want %q", tt.expr, tt.tz, err, tt.want)
		}
	}
}

func TestTimeTriggerSchedules(t *testing.T) {
	for expr, want := range map[string]string{
		"@hourly": "2026-03-04T06:00:00Z", "@DAILY": "2026-03-05T00:00:00Z", "@weekly": "2026-03-08T00:00:00Z",
		"@monthly": "2026-04-01T00:00:00Z", "@yearly": "2027-01-01T00:00:00Z",
	} {
		tt := TimeTrigger{Type: TriggerPredefined, Expression: expr}
		s, err := tt.Schedule()
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		if got := s.Next(fixedNow()).Format(time.RFC3339); got != want {
			t.Errorf("%s: next = %s, want %s", expr, got, want)
		}
	}
	tokyo := TimeTrigger{Type: TriggerPredefined, Expression: "@daily", Timezone: "Asia/Tokyo"}
	s, err := tokyo.Schedule()
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Next(fixedNow()).Format(time.RFC3339); got != "2026-03-05T00:00:00+09:00" || s.Location().String() != "Asia/Tokyo" {
		t.Errorf("Tokyo daily next = %s in %s", got, s.Location())
	}
	if _, err := (&TimeTrigger{Type: TriggerPredefined, Expression: "@midnight"}).Schedule(); err == nil {
		t.Error("@midnight must be rejected")
	}
	if _, err := (&TimeTrigger{Type: TriggerInterval}).Schedule(); err == nil {
		t.Error("INTERVAL has no schedule")
	}
	if !(CronSchedule{}).Next(fixedNow()).IsZero() || (CronSchedule{}).Location() != time.UTC {
		t.Error("the zero schedule never fires and is in UTC")
	}
}

func TestCronFiresEachWallClockTimeOnce(t *testing.T) {
	tests := []struct {
		expr, tz string
		from     time.Time
		want     []string // UTC
	}{
		// US/Pacific falls back at 02:00 PDT on 2026-11-01: 01:30 happens
		// twice (08:30Z and 09:30Z) and fires at the first only.
		{"30 1 * * *", "US/Pacific", time.Date(2026, 10, 31, 12, 0, 0, 0, time.UTC),
			[]string{"2026-11-01T08:30:00Z", "2026-11-02T09:30:00Z"}},
		// Spring forward (2026-03-08): 02:30 does not exist and is skipped.
		{"30 2 * * *", "US/Pacific", time.Date(2026, 3, 7, 0, 0, 0, 0, time.UTC),
			[]string{"2026-03-07T10:30:00Z", "2026-03-09T09:30:00Z"}},
		// Sydney falls back on 2026-04-05 at 03:00 AEDT to 02:00 AEST:
		// 02:00 fires at 15:00Z, not again at 16:00Z.
		{"0 * * * *", "Australia/Sydney", time.Date(2026, 4, 4, 14, 30, 0, 0, time.UTC),
			[]string{"2026-04-04T15:00:00Z", "2026-04-04T17:00:00Z", "2026-04-04T18:00:00Z"}},
	}
	for _, tc := range tests {
		c, err := ParseCron(tc.expr, tc.tz)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		at := tc.from
		for range tc.want {
			at = c.Next(at)
			got = append(got, at.UTC().Format(time.RFC3339))
		}
		if strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("%s %s: got %v, want %v", tc.expr, tc.tz, got, tc.want)
		}
	}
}
