package model

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// durationUnit returns the length of the unit named u (case-insensitive).
func durationUnit(u string) (time.Duration, bool) {
	switch strings.ToLower(u) {
	case "ms", "msec", "msecs", "milli", "millis", "millisecond", "milliseconds":
		return time.Millisecond, true
	case "s", "sec", "secs", "second", "seconds":
		return time.Second, true
	case "m", "min", "mins", "minute", "minutes":
		return time.Minute, true
	case "h", "hr", "hrs", "hour", "hours":
		return time.Hour, true
	case "d", "day", "days":
		return 24 * time.Hour, true
	}
	return 0, false
}

// ParseDuration parses a Maestro duration string: a bare whole number of
// seconds ("3600"), or one or more terms of a whole number and a unit, with or
// without spaces between them, added up: "100s", "20 minutes", "2h", "1d 2h",
// "30min", "500ms", "10 minutes 5 seconds 1 day". Units are days (d, day,
// days), hours (h, hr, hrs, hour, hours), minutes (m, min, mins, minute,
// minutes), seconds (s, sec, secs, second, seconds) and milliseconds (ms,
// msec, millis, millisecond, milliseconds), matched case-insensitively.
// Negative values and values beyond time.Duration's range are rejected.
func ParseDuration(s string) (time.Duration, error) {
	in := strings.TrimSpace(s)
	if in == "" {
		return 0, fmt.Errorf("empty duration")
	}
	if n, ok := parseInteger(in); ok {
		if n < 0 {
			return 0, fmt.Errorf("duration %q is negative", s)
		}
		if n > math.MaxInt64/int64(time.Second) {
			return 0, fmt.Errorf("duration %q is too large", s)
		}
		return time.Duration(n) * time.Second, nil
	}
	var total time.Duration
	rest := in
	for rest != "" {
		i := 0
		for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
			i++
		}
		if i == 0 {
			return 0, fmt.Errorf("duration %q: expected a number at %q", s, rest)
		}
		n, err := strconv.ParseInt(rest[:i], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("duration %q: number %q out of range", s, rest[:i])
		}
		rest = strings.TrimLeft(rest[i:], " \t")
		j := 0
		for j < len(rest) && isLetter(rest[j]) {
			j++
		}
		if j == 0 {
			return 0, fmt.Errorf("duration %q: number %d has no unit (use d, h, min, s or ms)", s, n)
		}
		unit, ok := durationUnit(rest[:j])
		if !ok {
			return 0, fmt.Errorf("duration %q: unknown unit %q (use d, h, min, s or ms)", s, rest[:j])
		}
		if n > math.MaxInt64/int64(unit) || total > math.MaxInt64-time.Duration(n)*unit {
			return 0, fmt.Errorf("duration %q is too large", s)
		}
		total += time.Duration(n) * unit
		rest = strings.TrimLeft(rest[j:], " \t,")
	}
	return total, nil
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// ceilSeconds converts d to whole seconds, rounding a partial second up so
// that a positive duration never becomes zero.
func ceilSeconds(d time.Duration) int64 {
	s := int64(d / time.Second)
	if d%time.Second != 0 {
		s++
	}
	return s
}
