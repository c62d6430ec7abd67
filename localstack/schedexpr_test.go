package localstack

import (
	"strings"
	"testing"
	"time"
)

func mustTime(t *testing.T, loc *time.Location, s string) time.Time {
	t.Helper()
	v, err := time.ParseInLocation("2006-01-02T15:04", s, loc)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestScheduleExpressionFires(t *testing.T) {
	start := mustTime(t, time.UTC, "2026-03-01T10:00")
	tests := []struct {
		name  string
		expr  string
		tz    string
		after string // UTC
		want  []string
	}{
		{"at utc", "at(2026-03-05T08:30:00)", "", "2026-03-01T00:00", []string{"2026-03-05T08:30"}},
		{"at zone", "at(2026-07-05T08:30:00)", "America/New_York", "2026-03-01T00:00", []string{"2026-07-05T12:30"}},
		{"at passed", "at(2026-03-05T08:30:00)", "", "2026-03-05T08:30", nil},
		{"rate first at start", "rate(5 minutes)", "", "2026-03-01T09:00", []string{"2026-03-01T10:00", "2026-03-01T10:05", "2026-03-01T10:10"}},
		{"rate mid", "rate(1 hour)", "", "2026-03-01T12:30", []string{"2026-03-01T13:00", "2026-03-01T14:00"}},
		{"rate days", "rate(2 days)", "", "2026-03-01T10:00", []string{"2026-03-03T10:00", "2026-03-05T10:00"}},
		{"cron daily", "cron(0 12 * * ? *)", "", "2026-03-01T12:00", []string{"2026-03-02T12:00", "2026-03-03T12:00"}},
		{"cron steps", "cron(0/15 * * * ? *)", "", "2026-03-01T10:07", []string{"2026-03-01T10:15", "2026-03-01T10:30", "2026-03-01T10:45"}},
		{"cron weekdays", "cron(0 9 ? * MON-FRI *)", "", "2026-03-06T10:00", []string{"2026-03-09T09:00", "2026-03-10T09:00"}}, // Fri → Mon
		{"cron numeric dow sunday is 1", "cron(30 8 ? * 1 *)", "", "2026-03-01T09:00", []string{"2026-03-08T08:30", "2026-03-15T08:30"}},
		{"cron last day", "cron(0 0 L * ? *)", "", "2026-01-15T00:00", []string{"2026-01-31T00:00", "2026-02-28T00:00", "2026-03-31T00:00"}},
		{"cron nearest weekday", "cron(0 0 15W * ? *)", "", "2026-02-01T00:00", []string{"2026-02-16T00:00", "2026-03-16T00:00", "2026-04-15T00:00"}}, // Feb 15 and Mar 15 2026 are Sundays
		{"cron 1W on a saturday", "cron(0 0 1W * ? *)", "", "2025-10-15T00:00", []string{"2025-11-03T00:00"}},                                         // Nov 1 2025 is a Saturday
		{"cron last weekday", "cron(0 0 LW * ? *)", "", "2026-05-01T00:00", []string{"2026-05-29T00:00"}},                                             // May 31 2026 is a Sunday
		{"cron last friday", "cron(0 18 ? * 6L *)", "", "2026-03-01T00:00", []string{"2026-03-27T18:00", "2026-04-24T18:00"}},
		{"cron third monday", "cron(0 10 ? * MON#3 *)", "", "2026-03-01T00:00", []string{"2026-03-16T10:00", "2026-04-20T10:00"}},
		{"cron L in dow is saturday", "cron(0 0 ? * L *)", "", "2026-03-01T00:00", []string{"2026-03-07T00:00"}},
		{"cron year list", "cron(0 0 1 1 ? 2027,2029)", "", "2026-03-01T00:00", []string{"2027-01-01T00:00", "2029-01-01T00:00"}},
		{"cron years end", "cron(0 0 1 1 ? 2027)", "", "2027-01-01T00:00", nil},
		{"cron month names", "cron(0 0 1 JAN,JUL ? *)", "", "2026-03-01T00:00", []string{"2026-07-01T00:00", "2027-01-01T00:00"}},
		{"cron zone", "cron(0 9 * * ? *)", "America/New_York", "2026-03-07T00:00", []string{"2026-03-07T14:00", "2026-03-08T13:00"}}, // DST starts Mar 8
		{"cron never", "cron(0 0 30 2 ? *)", "", "2026-01-01T00:00", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := parseScheduleExpression(tt.expr, tt.tz, start)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			cur := mustTime(t, time.UTC, tt.after)
			var got []string
			for range len(tt.want) + 1 {
				n, ok := e.next(cur)
				if !ok {
					break
				}
				if !n.After(cur) {
					t.Fatalf("next(%v) = %v, not after it", cur, n)
				}
				got = append(got, n.UTC().Format("2006-01-02T15:04"))
				cur = n
			}
			if len(got) > len(tt.want) {
				got = got[:len(tt.want)]
				if _, ok := e.next(cur); !ok {
					t.Errorf("expected more fires")
				}
			}
			if strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("fires = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestScheduleExpressionRecurring(t *testing.T) {
	for expr, want := range map[string]bool{
		"at(2026-01-01T00:00:00)": false,
		"rate(1 minute)":          true,
		"cron(0 0 * * ? *)":       true,
	} {
		e, err := parseScheduleExpression(expr, "", time.Now())
		if err != nil {
			t.Fatalf("%s: %v", expr, err)
		}
		if e.recurring() != want {
			t.Errorf("%s recurring = %v, want %v", expr, e.recurring(), want)
		}
	}
}

func TestScheduleExpressionRejects(t *testing.T) {
	tests := []struct {
		expr, tz, want string
	}{
		{"every(5 minutes)", "", "want at(...)"},
		{"rate(5 minutes", "", "want at(...)"},
		{"at(2026-01-01 00:00:00)", "", "yyyy-mm-dd"},
		{"rate(0 minutes)", "", "positive integer"},
		{"rate(5 weeks)", "", "rate unit"},
		{"rate(5)", "", "rate(value unit)"},
		{"cron(0 0 * * *)", "", "6 cron fields"},
		{"cron(0 0 ? * ? *)", "", "both be '?'"},
		{"cron(0 0 1 * MON *)", "", "must be '?'"},
		{"cron(61 0 * * ? *)", "", "minutes, hours or month"},
		{"cron(0 0 32 * ? *)", "", "day-of-month"},
		{"cron(0 0 L-2 * ? *)", "", "not supported"},
		{"cron(0 0 ? * 8 *)", "", "day-of-week"},
		{"cron(0 0 ? * MON#6 *)", "", "k from 1 to 5"},
		{"cron(0 0 ? * 2W *)", "", "not supported"},
		{"cron(0 0 * 13 ? *)", "", "month"},
		{"cron(0 0 * * ? 1969)", "", "year"},
		{"at(2026-01-01T00:00:00)", "Mars/Olympus", "time zone"},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			_, err := parseScheduleExpression(tt.expr, tt.tz, time.Now())
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestParseFieldWrapsAndSteps(t *testing.T) {
	tests := []struct {
		field  string
		lo, hi int
		want   []int
	}{
		{"*/20", 0, 59, []int{0, 20, 40}},
		{"5/20", 0, 59, []int{5, 25, 45}},
		{"10-20/5", 0, 59, []int{10, 15, 20}},
		{"1,3,5", 1, 7, []int{1, 3, 5}},
		{"FRI-MON", 1, 7, []int{1, 2, 6, 7}},
	}
	for _, tt := range tests {
		set, err := parseField(tt.field, tt.lo, tt.hi, dayNames)
		if err != nil {
			t.Fatalf("%s: %v", tt.field, err)
		}
		var got []int
		for v := tt.lo; v <= tt.hi; v++ {
			if set[v] {
				got = append(got, v)
			}
		}
		if len(got) != len(tt.want) {
			t.Errorf("%s = %v, want %v", tt.field, got, tt.want)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("%s = %v, want %v", tt.field, got, tt.want)
				break
			}
		}
	}
}
