package model

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // time zones load on machines without a zone database

	"github.com/robfig/cron/v3"
)

// CronSchedule is a parsed cron expression bound to a time zone. The zero
// value never fires.
type CronSchedule struct {
	expr  string
	loc   *time.Location
	sched cron.Schedule
}

// Next returns the first fire time strictly after t, expressed in the
// schedule's time zone, or the zero time when the expression never fires.
//
// Each wall-clock time fires once: when clocks go back, the second pass
// through the repeated hour does not fire again (as EventBridge Scheduler
// documents); when they go forward, the skipped times do not fire.
func (c CronSchedule) Next(t time.Time) time.Time {
	if c.sched == nil {
		return time.Time{}
	}
	n := c.sched.Next(t.In(c.loc))
	for !n.IsZero() && RepeatedWallClock(n) {
		n = c.sched.Next(n)
	}
	return n
}

// RepeatedWallClock reports whether t's wall-clock time in its location
// already occurred earlier the same day: t is in the second pass through
// the hour that repeats when clocks go back (by 30 minutes, 1 or 2 hours).
func RepeatedWallClock(t time.Time) bool {
	y, mo, d := t.Date()
	h, mi, s := t.Clock()
	for _, back := range []time.Duration{30 * time.Minute, time.Hour, 2 * time.Hour} {
		e := t.Add(-back)
		ey, emo, ed := e.Date()
		eh, emi, es := e.Clock()
		if ey == y && emo == mo && ed == d && eh == h && emi == mi && es == s {
			return true
		}
	}
	return false
}

// Location returns the schedule's time zone.
func (c CronSchedule) Location() *time.Location {
	if c.loc == nil {
		return time.UTC
	}
	return c.loc
}

// String returns the expression as it was given.
func (c CronSchedule) String() string { return c.expr }

// ParseCron parses a time trigger's cron expression the way Maestro does:
// first as a 5-field unix expression (minute hour day-of-month month
// day-of-week, day-of-week 0-7 with 0 and 7 both Sunday), then as a Quartz
// expression of 6 or 7 fields (second minute hour day-of-month month
// day-of-week [year], day-of-week 1-7 from Sunday, '?' for "no specific
// value" in exactly one of the two day fields). Ranges (1-5), lists (1,3),
// steps (*/15, 1/1) and month/day names are accepted. The Quartz year field
// may only be '*'; Quartz 'L', 'W' and '#' are not supported. tz is an IANA
// zone name ("US/Pacific"); empty means UTC. Fire times are computed in tz,
// so daylight saving shifts move them as they would a wall clock.
func ParseCron(expr, tz string) (CronSchedule, error) {
	loc, err := loadLocation(tz)
	if err != nil {
		return CronSchedule{}, err
	}
	fields := strings.Fields(expr)
	for _, f := range fields {
		if strings.Contains(f, "=") {
			return CronSchedule{}, fmt.Errorf("cron %q: time zone prefixes are not supported; use the timezone field", expr)
		}
	}
	var spec string
	var parser cron.Parser
	switch len(fields) {
	case 5:
		dow, err := unixDayOfWeek(fields[4])
		if err != nil {
			return CronSchedule{}, fmt.Errorf("cron %q: %w", expr, err)
		}
		fields[4] = dow
		spec = strings.Join(fields, " ")
		parser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow)
	case 6, 7:
		if spec, err = quartzToSpec(fields); err != nil {
			return CronSchedule{}, fmt.Errorf("cron %q: %w", expr, err)
		}
		parser = cron.NewParser(cron.Second | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow)
	default:
		return CronSchedule{}, fmt.Errorf("cron %q has %d fields; want 5 (unix) or 6-7 (Quartz, with seconds)", expr, len(fields))
	}
	sched, err := parser.Parse(spec)
	if err != nil {
		return CronSchedule{}, fmt.Errorf("cron %q: %w", expr, err)
	}
	if ss, ok := sched.(*cron.SpecSchedule); ok {
		ss.Location = loc
	}
	return CronSchedule{expr: expr, loc: loc, sched: sched}, nil
}

// PredefinedCron returns the unix cron expression a PREDEFINED time trigger
// stands for: @hourly, @daily, @weekly, @monthly or @yearly, matched
// case-insensitively. @midnight is not one of Maestro's predefined
// expressions and is rejected.
func PredefinedCron(expression string) (string, bool) {
	switch strings.ToLower(strings.TrimSpace(expression)) {
	case "@hourly":
		return "0 * * * *", true
	case "@daily":
		return "0 0 * * *", true
	case "@weekly":
		return "0 0 * * 0", true
	case "@monthly":
		return "0 0 1 * *", true
	case "@yearly":
		return "0 0 1 1 *", true
	}
	return "", false
}

// Schedule returns the schedule of a CRON or PREDEFINED time trigger.
func (t *TimeTrigger) Schedule() (CronSchedule, error) {
	switch t.Type {
	case TriggerCron:
		return ParseCron(t.Cron, t.Timezone)
	case TriggerPredefined:
		expr, ok := PredefinedCron(t.Expression)
		if !ok {
			return CronSchedule{}, fmt.Errorf("unknown predefined expression %q (want @hourly, @daily, @weekly, @monthly or @yearly)", t.Expression)
		}
		return ParseCron(expr, t.Timezone)
	}
	return CronSchedule{}, fmt.Errorf("%s time triggers have no cron schedule", t.Type)
}

// loadLocation loads an IANA time zone; empty means UTC. The zone database is
// embedded (time/tzdata), so this works on machines without one.
func loadLocation(tz string) (*time.Location, error) {
	if tz == "" {
		return time.UTC, nil
	}
	if tz == "Local" {
		return nil, fmt.Errorf("unknown timezone %q: name an IANA zone such as UTC or US/Pacific", tz)
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return nil, fmt.Errorf("unknown timezone %q: %w", tz, err)
	}
	return loc, nil
}

// quartzToSpec turns Quartz fields into a 6-field spec robfig/cron accepts.
func quartzToSpec(fields []string) (string, error) {
	if len(fields) == 7 && fields[6] != "*" {
		return "", fmt.Errorf("the year field %q is not supported (use * or leave it out)", fields[6])
	}
	for i, f := range fields[:6] {
		if strings.ContainsAny(strings.ToUpper(f), "LW#") && !isDayName(f) {
			return "", fmt.Errorf("field %d %q: Quartz 'L', 'W' and '#' are not supported", i+1, f)
		}
	}
	dom, dow := fields[3], fields[5]
	switch {
	case dom == "?" && dow == "?":
		return "", fmt.Errorf("only one of day-of-month and day-of-week may be '?'")
	case dom != "?" && dow != "?":
		return "", fmt.Errorf("one of day-of-month (%q) and day-of-week (%q) must be '?'", dom, dow)
	}
	conv, err := quartzDayOfWeek(dow)
	if err != nil {
		return "", err
	}
	out := append([]string(nil), fields[:6]...)
	out[5] = conv
	return strings.Join(out, " "), nil
}

// isDayName reports whether f is built only from day and month names
// (which may contain L, W: "WED", "JUL"), separators and digits.
func isDayName(f string) bool {
	for _, tok := range strings.FieldsFunc(strings.ToUpper(f), func(r rune) bool {
		return r == ',' || r == '-' || r == '/'
	}) {
		if _, err := strconv.Atoi(tok); err == nil || tok == "*" || tok == "?" {
			continue
		}
		switch tok {
		case "SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT",
			"JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC":
			continue
		}
		return false
	}
	return true
}

// quartzDayOfWeek renumbers a Quartz day-of-week field (1-7 from Sunday) to
// robfig/cron's (0-6 from Sunday). Names, '*' and '?' are kept.
func quartzDayOfWeek(field string) (string, error) {
	return mapDayNumbers(field, func(n int) (int, error) {
		if n < 1 || n > 7 {
			return 0, fmt.Errorf("day-of-week %d is out of range 1-7", n)
		}
		return n - 1, nil
	})
}

// unixDayOfWeek maps the unix day-of-week 7 (Sunday) to 0, which is all
// robfig/cron accepts.
func unixDayOfWeek(field string) (string, error) {
	if !strings.Contains(field, "7") {
		return field, nil
	}
	// A range ending at 7 cannot be written with 0; expand it into a list.
	var parts []string
	for _, item := range strings.Split(field, ",") {
		rangePart, stepPart, hasStep := strings.Cut(item, "/")
		lo, hi, isRange := strings.Cut(rangePart, "-")
		a, errA := strconv.Atoi(lo)
		b, errB := strconv.Atoi(hi)
		if !isRange || errA != nil || errB != nil || b != 7 {
			mapped, err := mapDayNumbers(item, func(n int) (int, error) {
				if n == 7 {
					return 0, nil
				}
				return n, nil
			})
			if err != nil {
				return "", err
			}
			parts = append(parts, mapped)
			continue
		}
		step := 1
		if hasStep {
			s, err := strconv.Atoi(stepPart)
			if err != nil || s <= 0 {
				return "", fmt.Errorf("day-of-week step %q is not a positive number", stepPart)
			}
			step = s
		}
		if a < 0 || a > 7 {
			return "", fmt.Errorf("day-of-week %d is out of range 0-7", a)
		}
		for n := a; n <= b; n += step {
			parts = append(parts, strconv.Itoa(n%7))
		}
	}
	return strings.Join(parts, ","), nil
}

// mapDayNumbers applies fn to every number of a cron field except steps.
func mapDayNumbers(field string, fn func(int) (int, error)) (string, error) {
	items := strings.Split(field, ",")
	for i, item := range items {
		rangePart, stepPart, hasStep := strings.Cut(item, "/")
		bounds := strings.Split(rangePart, "-")
		for j, bnd := range bounds {
			n, err := strconv.Atoi(bnd)
			if err != nil {
				continue // a name, '*' or '?'
			}
			m, err := fn(n)
			if err != nil {
				return "", err
			}
			bounds[j] = strconv.Itoa(m)
		}
		items[i] = strings.Join(bounds, "-")
		if hasStep {
			items[i] += "/" + stepPart
		}
	}
	return strings.Join(items, ","), nil
}
