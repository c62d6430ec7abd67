package localstack

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/maestro-serverless/maestro/model"
)

// scheduleExpr is a parsed EventBridge Scheduler schedule expression.
type scheduleExpr interface {
	// next returns the first fire time strictly after t, or false when
	// there is none.
	next(t time.Time) (time.Time, bool)
	// recurring reports whether the expression fires more than once.
	recurring() bool
}

// parseScheduleExpression parses at(...), rate(...) or cron(...) evaluated
// in the IANA time zone tz (UTC when empty). start is the first fire of a
// rate expression.
func parseScheduleExpression(expr, tz string, start time.Time) (scheduleExpr, error) {
	loc := time.UTC
	if tz != "" {
		var err error
		if loc, err = time.LoadLocation(tz); err != nil {
			return nil, fmt.Errorf("schedule time zone %q: %w", tz, err)
		}
	}
	expr = strings.TrimSpace(expr)
	body, ok := func() (string, bool) {
		open, close := strings.IndexByte(expr, '('), strings.LastIndexByte(expr, ')')
		if open < 0 || close != len(expr)-1 {
			return "", false
		}
		return strings.TrimSpace(expr[open+1 : close]), true
	}()
	if !ok {
		return nil, fmt.Errorf("schedule expression %q: want at(...), rate(...) or cron(...)", expr)
	}
	switch {
	case strings.HasPrefix(expr, "at("):
		t, err := time.ParseInLocation("2006-01-02T15:04:05", body, loc)
		if err != nil {
			return nil, fmt.Errorf("schedule expression %q: want at(yyyy-mm-ddThh:mm:ss): %w", expr, err)
		}
		return atExpr{at: t}, nil
	case strings.HasPrefix(expr, "rate("):
		period, err := parseRate(body)
		if err != nil {
			return nil, fmt.Errorf("schedule expression %q: %w", expr, err)
		}
		return rateExpr{start: start, period: period}, nil
	case strings.HasPrefix(expr, "cron("):
		c, err := parseCron(body, loc)
		if err != nil {
			return nil, fmt.Errorf("schedule expression %q: %w", expr, err)
		}
		return c, nil
	}
	return nil, fmt.Errorf("schedule expression %q: want at(...), rate(...) or cron(...)", expr)
}

// atExpr fires once.
type atExpr struct{ at time.Time }

func (a atExpr) next(t time.Time) (time.Time, bool) { return a.at, a.at.After(t) }
func (atExpr) recurring() bool                      { return false }

// rateExpr fires at start and every period after it.
type rateExpr struct {
	start  time.Time
	period time.Duration
}

func (r rateExpr) next(t time.Time) (time.Time, bool) {
	if t.Before(r.start) {
		return r.start, true
	}
	k := t.Sub(r.start)/r.period + 1
	return r.start.Add(k * r.period), true
}

func (rateExpr) recurring() bool { return true }

// parseRate parses "value unit" with unit minute(s), hour(s) or day(s).
func parseRate(s string) (time.Duration, error) {
	fields := strings.Fields(s)
	if len(fields) != 2 {
		return 0, fmt.Errorf("want rate(value unit)")
	}
	n, err := strconv.Atoi(fields[0])
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("rate value %q: want a positive integer", fields[0])
	}
	var unit time.Duration
	switch fields[1] {
	case "minute", "minutes":
		unit = time.Minute
	case "hour", "hours":
		unit = time.Hour
	case "day", "days":
		unit = 24 * time.Hour
	default:
		return 0, fmt.Errorf("rate unit %q: want minute(s), hour(s) or day(s)", fields[1])
	}
	return time.Duration(n) * unit, nil
}

// cronExpr is an EventBridge cron expression: minutes hours day-of-month
// month day-of-week year. Minutes, hours and months are matched by a
// robfig/cron schedule; days (with EventBridge's ?, L, W and #) and years
// are matched here.
type cronExpr struct {
	inner cron.Schedule
	loc   *time.Location
	day   func(time.Time) bool
	years map[int]bool // nil: every year
}

// Year bounds of EventBridge cron expressions.
const (
	cronMinYear = 1970
	cronMaxYear = 2199
)

var monthNames = map[string]int{
	"JAN": 1, "FEB": 2, "MAR": 3, "APR": 4, "MAY": 5, "JUN": 6,
	"JUL": 7, "AUG": 8, "SEP": 9, "OCT": 10, "NOV": 11, "DEC": 12,
}

// dayNames numbers the week days as EventBridge does: 1 is Sunday.
var dayNames = map[string]int{"SUN": 1, "MON": 2, "TUE": 3, "WED": 4, "THU": 5, "FRI": 6, "SAT": 7}

func parseCron(s string, loc *time.Location) (*cronExpr, error) {
	f := strings.Fields(s)
	if len(f) != 6 {
		return nil, fmt.Errorf("want 6 cron fields (minutes hours day-of-month month day-of-week year), got %d", len(f))
	}
	minutes, hours, dom, month, dow, year := f[0], f[1], f[2], f[3], f[4], f[5]
	// Check months here so names and ranges follow EventBridge's rules.
	if _, err := parseField(month, 1, 12, monthNames); err != nil {
		return nil, fmt.Errorf("month %q: %w", month, err)
	}
	inner, err := cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow).
		Parse(strings.Join([]string{minutes, hours, "*", month, "*"}, " "))
	if err != nil {
		return nil, fmt.Errorf("minutes, hours or month: %w", err)
	}
	c := &cronExpr{inner: inner, loc: loc}

	// EventBridge requires '?' in exactly one of day-of-month and
	// day-of-week; a '*' beside a specific value is read as '?'.
	switch {
	case dom == "?" && dow == "?":
		return nil, fmt.Errorf("day-of-month and day-of-week cannot both be '?'")
	case dom == "?" || (dom == "*" && dow != "*" && dow != "?"):
		c.day, err = parseDayOfWeek(dow)
		if err != nil {
			return nil, fmt.Errorf("day-of-week %q: %w", dow, err)
		}
	case dow == "?" || dow == "*":
		c.day, err = parseDayOfMonth(dom)
		if err != nil {
			return nil, fmt.Errorf("day-of-month %q: %w", dom, err)
		}
	default:
		return nil, fmt.Errorf("one of day-of-month %q and day-of-week %q must be '?'", dom, dow)
	}
	if year != "*" {
		set, err := parseField(year, cronMinYear, cronMaxYear, nil)
		if err != nil {
			return nil, fmt.Errorf("year %q: %w", year, err)
		}
		c.years = set
	}
	return c, nil
}

func (c *cronExpr) recurring() bool { return true }

func (c *cronExpr) next(t time.Time) (time.Time, bool) {
	t = t.In(c.loc)
	// Each round skips at least a day, so this bounds the search to a
	// few centuries of days, past the last year a cron expression allows.
	for range 100000 {
		n := c.inner.Next(t)
		if n.IsZero() || n.Year() > cronMaxYear {
			return time.Time{}, false
		}
		if c.years != nil && !c.years[n.Year()] {
			t = time.Date(n.Year()+1, time.January, 1, 0, 0, 0, 0, c.loc).Add(-time.Second)
			continue
		}
		if !c.day(n) {
			t = time.Date(n.Year(), n.Month(), n.Day()+1, 0, 0, 0, 0, c.loc).Add(-time.Second)
			continue
		}
		if model.RepeatedWallClock(n) {
			// Scheduler fires a wall-clock time once: not again in the
			// hour repeated when clocks go back.
			t = n
			continue
		}
		return n, true
	}
	return time.Time{}, false
}

// parseField parses a list of values, ranges and steps (5, 1-5, */10, 3/5,
// 1-20/2, names) between lo and hi into the set of matching values.
func parseField(field string, lo, hi int, names map[string]int) (map[int]bool, error) {
	set := map[int]bool{}
	for _, part := range strings.Split(field, ",") {
		rng, stepText, hasStep := strings.Cut(part, "/")
		step := 1
		if hasStep {
			var err error
			if step, err = strconv.Atoi(stepText); err != nil || step <= 0 {
				return nil, fmt.Errorf("step %q: want a positive integer", stepText)
			}
		}
		var from, to int
		switch {
		case rng == "*":
			from, to = lo, hi
		case strings.Contains(rng, "-"):
			a, b, _ := strings.Cut(rng, "-")
			var err error
			if from, err = fieldValue(a, lo, hi, names); err != nil {
				return nil, err
			}
			if to, err = fieldValue(b, lo, hi, names); err != nil {
				return nil, err
			}
		default:
			v, err := fieldValue(rng, lo, hi, names)
			if err != nil {
				return nil, err
			}
			from, to = v, v
			if hasStep {
				to = hi
			}
		}
		if from > to {
			// A wrapping range such as FRI-MON or NOV-FEB.
			for v := from; v <= hi; v += step {
				set[v] = true
			}
			for v := lo + (step-(hi-from+1)%step)%step; v <= to; v += step {
				set[v] = true
			}
			continue
		}
		for v := from; v <= to; v += step {
			set[v] = true
		}
	}
	return set, nil
}

func fieldValue(s string, lo, hi int, names map[string]int) (int, error) {
	if v, ok := names[strings.ToUpper(s)]; ok {
		return v, nil
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("value %q: want a number from %d to %d", s, lo, hi)
	}
	if v < lo || v > hi {
		return 0, fmt.Errorf("value %d: want %d to %d", v, lo, hi)
	}
	return v, nil
}

// parseDayOfMonth parses a day-of-month field: values, ranges and steps
// from 1 to 31, L (the month's last day), NW (the weekday nearest day N,
// within the month) and LW (the month's last weekday).
func parseDayOfMonth(field string) (func(time.Time) bool, error) {
	return dayField(field, 1, 31, nil, time.Time.Day, func(part string) (func(time.Time) bool, error) {
		switch {
		case part == "L":
			return func(t time.Time) bool { return t.Day() == daysIn(t) }, nil
		case part == "LW":
			return func(t time.Time) bool { return t.Day() == nearestWeekday(t, daysIn(t)) }, nil
		case strings.HasSuffix(part, "W"):
			n, err := fieldValue(strings.TrimSuffix(part, "W"), 1, 31, nil)
			if err != nil {
				return nil, err
			}
			return func(t time.Time) bool { return n <= daysIn(t) && t.Day() == nearestWeekday(t, n) }, nil
		case strings.ContainsAny(part, "L#?"):
			return nil, fmt.Errorf("%q is not supported in day-of-month", part)
		}
		return nil, nil
	})
}

// parseDayOfWeek parses a day-of-week field: values, ranges and steps from
// 1 (SUN) to 7 (SAT), L (Saturday), DL (the month's last day D) and D#k
// (the month's k-th day D).
func parseDayOfWeek(field string) (func(time.Time) bool, error) {
	return dayField(field, 1, 7, dayNames, weekday, func(part string) (func(time.Time) bool, error) {
		switch {
		case part == "L":
			return func(t time.Time) bool { return weekday(t) == 7 }, nil
		case strings.HasSuffix(part, "L"):
			d, err := fieldValue(strings.TrimSuffix(part, "L"), 1, 7, dayNames)
			if err != nil {
				return nil, err
			}
			return func(t time.Time) bool {
				return weekday(t) == d && t.Day()+7 > daysIn(t)
			}, nil
		case strings.Contains(part, "#"):
			ds, ks, _ := strings.Cut(part, "#")
			d, err := fieldValue(ds, 1, 7, dayNames)
			if err != nil {
				return nil, err
			}
			k, err := strconv.Atoi(ks)
			if err != nil || k < 1 || k > 5 {
				return nil, fmt.Errorf("%q: want D#k with k from 1 to 5", part)
			}
			return func(t time.Time) bool {
				return weekday(t) == d && (t.Day()-1)/7+1 == k
			}, nil
		case strings.ContainsAny(part, "W?"):
			return nil, fmt.Errorf("%q is not supported in day-of-week", part)
		}
		return nil, nil
	})
}

// dayField is the test of a day field: any of the tests special gives its
// parts, or a day whose number (day returns it) is among the field's plain
// parts, those special gives no test (values, ranges and steps from lo to
// hi, see parseField).
func dayField(field string, lo, hi int, names map[string]int, day func(time.Time) int,
	special func(part string) (func(time.Time) bool, error)) (func(time.Time) bool, error) {
	var preds []func(time.Time) bool
	var plain []string
	for _, part := range strings.Split(field, ",") {
		pred, err := special(part)
		switch {
		case err != nil:
			return nil, err
		case pred != nil:
			preds = append(preds, pred)
		default:
			plain = append(plain, part)
		}
	}
	if len(plain) > 0 {
		set, err := parseField(strings.Join(plain, ","), lo, hi, names)
		if err != nil {
			return nil, err
		}
		preds = append(preds, func(t time.Time) bool { return set[day(t)] })
	}
	return anyOf(preds), nil
}

func anyOf(preds []func(time.Time) bool) func(time.Time) bool {
	return func(t time.Time) bool {
		for _, p := range preds {
			if p(t) {
				return true
			}
		}
		return false
	}
}

// weekday numbers t's day of the week as EventBridge does: 1 is Sunday.
func weekday(t time.Time) int { return int(t.Weekday()) + 1 }

// daysIn returns the number of days in t's month.
func daysIn(t time.Time) int {
	return time.Date(t.Year(), t.Month()+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// nearestWeekday returns the weekday (Monday to Friday) nearest to day n
// of t's month without leaving the month, as cron's W does.
func nearestWeekday(t time.Time, n int) int {
	d := time.Date(t.Year(), t.Month(), n, 0, 0, 0, 0, time.UTC)
	last := daysIn(t)
	switch d.Weekday() {
	case time.Saturday:
		if n == 1 {
			return 3 // the Monday after
		}
		return n - 1
	case time.Sunday:
		if n == last {
			return n - 2 // the Friday before
		}
		return n + 1
	}
	return n
}
