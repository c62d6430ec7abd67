package triggers

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/robfig/cron/v3"

	"github.com/maestro-serverless/maestro/model"
)

// Expression is one EventBridge Scheduler schedule expression with the time
// zone Scheduler evaluates it in (ScheduleExpression and
// ScheduleExpressionTimezone of CreateSchedule).
type Expression struct {
	// Cron is the schedule expression, such as "cron(0 12 * * ? *)".
	Cron string
	// Timezone is an IANA time zone name; "UTC" when the trigger names none.
	Timezone string
}

// maxExpressionLength is the longest ScheduleExpression Scheduler accepts.
const maxExpressionLength = 256

// SchedulerCron returns the EventBridge Scheduler expressions that together
// fire exactly when the trigger's model schedule (model.ParseCron) does. A
// CRON trigger may be a unix 5-field or a Quartz 6- or 7-field expression; a
// PREDEFINED one is translated through model.PredefinedCron. INTERVAL
// triggers, and anything model.ParseCron rejects, are errors.
//
// Scheduler has minute resolution, so a Quartz seconds field other than 0 is
// an error. Days of the week are renumbered to Scheduler's 1 (Sunday) to 7
// (Saturday) and written as explicit values and ranges; minutes and hours may
// be written with steps ("0/15"). Every field is rewritten from the set of
// values it matches, so the expression may differ in form from the input.
//
// The result usually has one expression. A unix expression that restricts
// both day-of-month and day-of-week (neither is '*') fires on a day that
// matches either; Scheduler needs '?' in one of the two fields, so such a
// trigger yields two expressions, one for the days of the month and one for
// the days of the week, whose union is the trigger's schedule. On a day
// matching both, both fire at the same instant with the same scheduled time:
// the runtime dedups firings by (workflow, trigger, scheduled time), which
// makes that one start. When either field alone already matches every day,
// one expression is returned.
func SchedulerCron(t *model.TimeTrigger) ([]Expression, error) {
	if t == nil {
		return nil, errors.New("nil time trigger")
	}
	var expr string
	switch t.Type {
	case model.TriggerCron:
		expr = t.Cron
	case model.TriggerPredefined:
		var ok bool
		if expr, ok = model.PredefinedCron(t.Expression); !ok {
			return nil, fmt.Errorf("time trigger: unknown predefined expression %q (want @hourly, @daily, @weekly, @monthly or @yearly)", t.Expression)
		}
	default:
		return nil, fmt.Errorf("time trigger: %s triggers cannot be expressed as an EventBridge Scheduler cron schedule; only CRON and PREDEFINED can", t.Type)
	}
	// model.ParseCron decides what is a valid trigger (and checks the zone);
	// parseSpec then computes the values each field matches.
	if _, err := model.ParseCron(expr, t.Timezone); err != nil {
		return nil, fmt.Errorf("time trigger: %w", err)
	}
	s, err := parseSpec(expr)
	if err != nil {
		return nil, fmt.Errorf("time trigger: cron %q: %w", expr, err)
	}
	tz := t.Timezone
	if tz == "" {
		tz = "UTC"
	}
	var out []Expression
	for _, days := range s.dayFields() {
		c := "cron(" + strings.Join([]string{
			formatField(s.minute, 0, 59, true),
			formatField(s.hour, 0, 23, true),
			days[0],
			formatField(s.month, 1, 12, false),
			days[1],
			"*",
		}, " ") + ")"
		if len(c) > maxExpressionLength {
			return nil, fmt.Errorf("time trigger: cron %q becomes %q, longer than the %d characters EventBridge Scheduler accepts", expr, c, maxExpressionLength)
		}
		out = append(out, Expression{Cron: c, Timezone: tz})
	}
	return out, nil
}

// spec is a cron expression as the sets of values its fields match, bit v
// set for value v. Days of the week are numbered 0 (Sunday) to 6.
type spec struct {
	minute, hour, dom, month, dow uint64
	// domStar and dowStar record a '*' or '?' day field: a day then
	// matches when both fields match, and otherwise when either does.
	domStar, dowStar bool
}

// Full sets of the day fields.
const (
	allDaysOfMonth = uint64(1<<32 - 2) // 1-31
	allDaysOfWeek  = uint64(1<<7 - 1)  // 0-6
)

// dayFields returns the day-of-month and day-of-week fields of the
// Scheduler expressions that together match the days s matches.
func (s spec) dayFields() [][2]string {
	dom := s.dom & allDaysOfMonth
	dow := s.dow & allDaysOfWeek
	domField := formatField(dom, 1, 31, false)
	dowField := formatField(dow<<1, 1, 7, false) // Scheduler numbers Sunday 1
	everyDay := [][2]string{{"*", "?"}}
	switch {
	case s.domStar && s.dowStar:
		return everyDay
	case s.dowStar: // the days of the month decide
		return [][2]string{{domField, "?"}}
	case s.domStar && dow == allDaysOfWeek:
		return everyDay
	case s.domStar: // the days of the week decide
		return [][2]string{{"?", dowField}}
	case dom == allDaysOfMonth || dow == allDaysOfWeek:
		// Either field matching every day makes their union every day.
		return everyDay
	}
	return [][2]string{{domField, "?"}, {"?", dowField}}
}

// parseSpec reads an expression model.ParseCron accepts: unix (minute hour
// day-of-month month day-of-week) or Quartz (second minute hour day-of-month
// month day-of-week [year]). Minutes, hours, days of the month and months are
// parsed by robfig/cron, as model does; days of the week are parsed here to
// apply model's numbering (unix 0-7 with 7 Sunday, Quartz 1-7 from Sunday).
func parseSpec(expr string) (spec, error) {
	f := strings.Fields(expr)
	var (
		rest  []string // minute hour day-of-month month
		dow   string
		parse func(string) (uint64, bool, error)
	)
	switch len(f) {
	case 5:
		rest, dow, parse = f[:4], f[4], unixWeekdays
	case 6, 7:
		sec, err := cron.NewParser(cron.Second).Parse(f[0])
		if err != nil {
			return spec{}, fmt.Errorf("seconds field %q: %w", f[0], err)
		}
		if sec.(*cron.SpecSchedule).Second&(1<<60-1) != 1 {
			return spec{}, fmt.Errorf("seconds field %q: EventBridge Scheduler fires on whole minutes, so the seconds field must be 0", f[0])
		}
		rest, dow, parse = f[1:5], f[5], quartzWeekdays
	default:
		return spec{}, fmt.Errorf("%d fields; want 5 (unix) or 6-7 (Quartz)", len(f))
	}
	sched, err := cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow).
		Parse(strings.Join(append(append([]string(nil), rest...), "*"), " "))
	if err != nil {
		return spec{}, err
	}
	ss, ok := sched.(*cron.SpecSchedule)
	if !ok {
		return spec{}, fmt.Errorf("unexpected schedule type %T", sched)
	}
	s := spec{minute: ss.Minute, hour: ss.Hour, dom: ss.Dom, month: ss.Month, domStar: isStar(rest[2])}
	if s.dow, s.dowStar, err = parse(dow); err != nil {
		return spec{}, fmt.Errorf("day-of-week %q: %w", dow, err)
	}
	return s, nil
}

// isStar reports whether robfig/cron reads field as '*': some item of it
// starts with '*' or '?' and has no step above 1.
func isStar(field string) bool {
	for _, item := range strings.Split(field, ",") {
		rng, step, hasStep := strings.Cut(item, "/")
		lo, _, _ := strings.Cut(rng, "-")
		if (lo == "*" || lo == "?") && (!hasStep || step == "1") {
			return true
		}
	}
	return false
}

// weekdayNames numbers the days of the week from Sunday 0.
var weekdayNames = map[string]int{"SUN": 0, "MON": 1, "TUE": 2, "WED": 3, "THU": 4, "FRI": 5, "SAT": 6}

// dayItem is one item of a day-of-week field: '*' or '?', a value or a
// range, with an optional step.
type dayItem struct {
	star, isRange, hasStep bool
	from, to, step         int
}

// parseDayItem parses an item whose numbers run from lo to hi; names count
// from lo for Sunday.
func parseDayItem(item string, lo, hi int) (dayItem, error) {
	rng, stepText, hasStep := strings.Cut(item, "/")
	it := dayItem{hasStep: hasStep, step: 1}
	if hasStep {
		var err error
		if it.step, err = strconv.Atoi(stepText); err != nil || it.step <= 0 {
			return dayItem{}, fmt.Errorf("step %q is not a positive number", stepText)
		}
	}
	a, b, isRange := strings.Cut(rng, "-")
	if a == "*" || a == "?" {
		it.star = true
		return it, nil
	}
	value := func(s string) (int, error) {
		if n, ok := weekdayNames[strings.ToUpper(s)]; ok {
			return n + lo, nil
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < lo || n > hi {
			return 0, fmt.Errorf("%q is not a day from %d to %d or SUN-SAT", s, lo, hi)
		}
		return n, nil
	}
	var err error
	if it.from, err = value(a); err != nil {
		return dayItem{}, err
	}
	it.to, it.isRange = it.from, isRange
	if isRange {
		if it.to, err = value(b); err != nil {
			return dayItem{}, err
		}
	}
	return it, nil
}

// unixWeekdays parses a unix day-of-week field as model.ParseCron does: 0-6
// from Sunday, or SUN-SAT; 7 is Sunday too, and a range ending at 7 (5-7,
// 1-7/2) runs to Sunday.
func unixWeekdays(field string) (uint64, bool, error) {
	return weekdays(field, 0, func(it dayItem) (from, to int) {
		switch {
		case it.star:
			return 0, 6
		case !it.isRange && it.hasStep: // "N/step" runs to Saturday
			return it.from % 7, 6
		case !it.isRange:
			return it.from % 7, it.from % 7
		case it.to == 7: // counted to 7, which is Sunday
			return it.from, it.to
		}
		return it.from % 7, it.to
	})
}

// quartzWeekdays parses a Quartz day-of-week field: 1-7 from Sunday, or
// SUN-SAT.
func quartzWeekdays(field string) (uint64, bool, error) {
	return weekdays(field, 1, func(it dayItem) (from, to int) {
		switch {
		case it.star:
			it.from, it.to = 1, 7
		case !it.isRange && it.hasStep: // "N/step" runs to Saturday
			it.to = 7
		}
		return it.from - 1, it.to - 1
	})
}

// weekdays collects the days (0-6, 7 wrapping to Sunday) of a day-of-week
// field whose numbers count from sunday, and whether robfig/cron reads the
// field as '*'. days places an item's days: from and to of 0-7.
func weekdays(field string, sunday int, days func(dayItem) (from, to int)) (uint64, bool, error) {
	var set uint64
	for _, item := range strings.Split(field, ",") {
		it, err := parseDayItem(item, sunday, 7)
		if err != nil {
			return 0, false, err
		}
		from, to := days(it)
		if from > to {
			return 0, false, fmt.Errorf("range %q runs backwards", item)
		}
		for d := from; d <= to; d += it.step {
			set |= 1 << (d % 7)
		}
	}
	return set, isStar(field), nil
}

// formatField writes the values of set between lo and hi as a Scheduler
// cron field: '*' for all of them, "start/step" for a progression that runs
// to hi (when steps are allowed), or a list of values and ranges.
func formatField(set uint64, lo, hi int, steps bool) string {
	var vals []int
	for v := lo; v <= hi; v++ {
		if set&(1<<v) != 0 {
			vals = append(vals, v)
		}
	}
	if len(vals) == hi-lo+1 {
		return "*"
	}
	if steps && len(vals) >= 3 {
		k := vals[1] - vals[0]
		progression := k > 1 && vals[len(vals)-1]+k > hi
		for i := 2; progression && i < len(vals); i++ {
			progression = vals[i]-vals[i-1] == k
		}
		if progression {
			return strconv.Itoa(vals[0]) + "/" + strconv.Itoa(k)
		}
	}
	var parts []string
	for i := 0; i < len(vals); {
		j := i
		for j+1 < len(vals) && vals[j+1] == vals[j]+1 {
			j++
		}
		switch {
		case j-i >= 2:
			parts = append(parts, strconv.Itoa(vals[i])+"-"+strconv.Itoa(vals[j]))
		default:
			for _, v := range vals[i : j+1] {
				parts = append(parts, strconv.Itoa(v))
			}
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}
