package sel

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // zones load the same on machines without a zone database
)

// The Joda-Time types SEL exposes (SelJodaDateTime, SelJodaDateTimeZone,
// SelJodaDateTimeFormatter, SelJodaDateTimeProperty, SelJodaDateTimeDays),
// with Joda's semantics: ISO chronology (proleptic Gregorian, ISO weeks),
// millisecond instants, zones from Go's zone database (time/tzdata when the
// machine has none) and Joda's rules for local times in DST gaps and
// overlaps. The default zone (new DateTime(), a formatter without a zone)
// is UTC. Formatting and parsing (DateTimeFormat.forPattern, toString) are
// in jodaformat.go.

// Joda's durations in milliseconds; months and years are its averages,
// which only order fields when a parsed date is put together.
const (
	jMsSecond  int64 = 1000
	jMsMinute        = 60 * jMsSecond
	jMsHour          = 60 * jMsMinute
	jMsHalfday       = 12 * jMsHour
	jMsDay           = 24 * jMsHour
	jMsWeek          = 7 * jMsDay
	jMsMonth   int64 = 2629746000
	jMsYear    int64 = 31556952000
	jMsCentury       = 100 * jMsYear
	// jUnsupported is the duration of eras, and the range of fields that
	// have none (year, weekyear, era): longer than any other.
	jUnsupported int64 = math.MaxInt64

	// Joda's ISO chronology's years.
	jMinYear int64 = -292275054
	jMaxYear int64 = 292278993

	// jCallCost is what a Joda method call charges, in CPU units.
	jCallCost = 40
	// jZoneLoadCost is what loading a zone from the zone database charges.
	jZoneLoadCost = 20000
)

// jField is one of Joda's date-time fields (DateTimeFieldType).
type jField uint8

// The fields; jFrac* are parsed fractions of a second, minute or hour,
// which Joda saves as a millisecond field over that range.
const (
	jEra jField = iota
	jCenturyOfEra
	jYearOfEra
	jYear
	jWeekyear
	jMonthOfYear
	jWeekOfWeekyear
	jDayOfYear
	jDayOfMonth
	jDayOfWeek
	jHalfdayOfDay
	jHourOfHalfday
	jClockhourOfHalfday
	jClockhourOfDay
	jHourOfDay
	jMinuteOfDay
	jMinuteOfHour
	jSecondOfDay
	jSecondOfMinute
	jMillisOfDay
	jMillisOfSecond
	jFracOfSecond
	jFracOfMinute
	jFracOfHour
)

// jFieldInfo is a field's name, its duration (unit) and range (span) in
// milliseconds, and its overall bounds.
type jFieldInfo struct {
	name       string
	unit, span int64
	min, max   int64
}

var jFields = [...]jFieldInfo{
	jEra:                {"era", jUnsupported, jUnsupported, 0, 1},
	jCenturyOfEra:       {"centuryOfEra", jMsCentury, jUnsupported, 0, jMaxYear / 100},
	jYearOfEra:          {"yearOfEra", jMsYear, jUnsupported, 1, jMaxYear},
	jYear:               {"year", jMsYear, jUnsupported, jMinYear, jMaxYear},
	jWeekyear:           {"weekyear", jMsYear, jUnsupported, jMinYear, jMaxYear},
	jMonthOfYear:        {"monthOfYear", jMsMonth, jMsYear, 1, 12},
	jWeekOfWeekyear:     {"weekOfWeekyear", jMsWeek, jMsYear, 1, 53},
	jDayOfYear:          {"dayOfYear", jMsDay, jMsYear, 1, 366},
	jDayOfMonth:         {"dayOfMonth", jMsDay, jMsMonth, 1, 31},
	jDayOfWeek:          {"dayOfWeek", jMsDay, jMsWeek, 1, 7},
	jHalfdayOfDay:       {"halfdayOfDay", jMsHalfday, jMsDay, 0, 1},
	jHourOfHalfday:      {"hourOfHalfday", jMsHour, jMsHalfday, 0, 11},
	jClockhourOfHalfday: {"clockhourOfHalfday", jMsHour, jMsHalfday, 1, 12},
	jClockhourOfDay:     {"clockhourOfDay", jMsHour, jMsDay, 1, 24},
	jHourOfDay:          {"hourOfDay", jMsHour, jMsDay, 0, 23},
	jMinuteOfDay:        {"minuteOfDay", jMsMinute, jMsDay, 0, 1439},
	jMinuteOfHour:       {"minuteOfHour", jMsMinute, jMsHour, 0, 59},
	jSecondOfDay:        {"secondOfDay", jMsSecond, jMsDay, 0, 86399},
	jSecondOfMinute:     {"secondOfMinute", jMsSecond, jMsMinute, 0, 59},
	jMillisOfDay:        {"millisOfDay", 1, jMsDay, 0, jMsDay - 1},
	jMillisOfSecond:     {"millisOfSecond", 1, jMsSecond, 0, 999},
	jFracOfSecond:       {"millisOfSecond", 1, jMsSecond, 0, jMsSecond - 1},
	jFracOfMinute:       {"millisOfSecond", 1, jMsMinute, 0, jMsMinute - 1},
	jFracOfHour:         {"millisOfSecond", 1, jMsHour, 0, jMsHour - 1},
}

// English texts (Locale.US) of months, days of the week, halfdays, eras.
var (
	jMonthNames = [...]string{"January", "February", "March", "April", "May", "June", "July", "August",
		"September", "October", "November", "December"}
	jDayNames = [...]string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}
)

// ---- arithmetic

func jFloorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func jFloorMod(a, b int64) int64 { return a - jFloorDiv(a, b)*b }

var errJOverflow = errors.New("the result is outside the range of a millisecond instant")

// jAdd is a + b, or an error when it overflows.
func jAdd(a, b int64) (int64, error) {
	s := a + b
	if (a > 0 && b > 0 && s < 0) || (a < 0 && b < 0 && s >= 0) {
		return 0, errJOverflow
	}
	return s, nil
}

// jMul is a * b, or an error when it overflows.
func jMul(a, b int64) (int64, error) {
	if a == 0 || b == 0 {
		return 0, nil
	}
	p := a * b
	if p/b != a || (a == -1 && b == math.MinInt64) || (b == -1 && a == math.MinInt64) {
		return 0, errJOverflow
	}
	return p, nil
}

// ---- the ISO calendar on local milliseconds (a local time read as UTC)

// jDaysFromCivil is the day number (0 = 1970-01-01) of y-m-d.
func jDaysFromCivil(y, m, d int64) int64 {
	if m <= 2 {
		y--
	}
	era := jFloorDiv(y, 400)
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// jCivilFromDays is the year, month and day of day number z.
func jCivilFromDays(z int64) (y, m, d int64) {
	z += 719468
	era := jFloorDiv(z, 146097)
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = doy - (153*mp+2)/5 + 1
	if mp < 10 {
		m = mp + 3
	} else {
		m = mp - 9
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}

func jLeap(y int64) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

func jDaysInMonth(y, m int64) int64 {
	switch m {
	case 2:
		if jLeap(y) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

func jDaysInYear(y int64) int64 {
	if jLeap(y) {
		return 366
	}
	return 365
}

// jDow is the ISO day of the week (1 = Monday) of day number z.
func jDow(z int64) int64 { return jFloorMod(z+3, 7) + 1 }

// jWeeksInYear is the number of ISO weeks of week-year y.
func jWeeksInYear(y int64) int64 {
	dow := jDow(jDaysFromCivil(y, 1, 1))
	if dow == 4 || (dow == 3 && jLeap(y)) {
		return 53
	}
	return 52
}

// jCivil is a local time split into its calendar fields.
type jCivil struct {
	y, m, d, days, ms int64
}

func jSplit(local int64) jCivil {
	days := jFloorDiv(local, jMsDay)
	y, m, d := jCivilFromDays(days)
	return jCivil{y: y, m: m, d: d, days: days, ms: local - days*jMsDay}
}

// week is the ISO week-year and week of c.
func (c jCivil) week() (weekyear, week int64) {
	thursday := c.days - (jDow(c.days) - 1) + 3
	wy, _, _ := jCivilFromDays(thursday)
	return wy, (thursday-jDaysFromCivil(wy, 1, 1))/7 + 1
}

// jFieldError is Joda's IllegalFieldValueException.
type jFieldError struct {
	f        jField
	v        int64
	min, max int64
	explain  string
	gap      bool // the value falls in a DST gap (IllegalInstantException)
}

func (e *jFieldError) Error() string {
	name := jFields[e.f].name
	if e.explain != "" {
		return fmt.Sprintf("Value %d for %s is not supported: %s", e.v, name, e.explain)
	}
	return fmt.Sprintf("Value %d for %s must be in the range [%d,%d]", e.v, name, e.min, e.max)
}

func jBounds(f jField, v, min, max int64) error {
	if v < min || v > max {
		return &jFieldError{f: f, v: v, min: min, max: max}
	}
	return nil
}

// jYMD is the local time of y-m-d at ms into the day.
func jYMD(y, m, d, ms int64) (int64, error) {
	if err := jBounds(jYear, y, jMinYear, jMaxYear); err != nil {
		return 0, err
	}
	t, err := jMul(jDaysFromCivil(y, m, d), jMsDay)
	if err != nil {
		return 0, err
	}
	return jAdd(t, ms)
}

// get is f's value at local time local.
func (f jField) get(local int64) int64 {
	switch f {
	case jClockhourOfHalfday, jClockhourOfDay:
		h := jHourOfHalfday.get(local)
		if f == jClockhourOfDay {
			h = jHourOfDay.get(local)
		}
		if h == 0 {
			return jFields[f].max
		}
		return h
	}
	info := jFields[f]
	if f >= jHalfdayOfDay {
		return jFloorMod(jFloorDiv(local, info.unit), info.span/info.unit)
	}
	c := jSplit(local)
	switch f {
	case jEra:
		if c.y > 0 {
			return 1
		}
		return 0
	case jCenturyOfEra:
		return absInt64(c.y) / 100 // ISO's century drops the year's sign
	case jYearOfEra:
		if c.y > 0 {
			return c.y
		}
		return 1 - c.y
	case jYear:
		return c.y
	case jMonthOfYear:
		return c.m
	case jDayOfYear:
		return c.days - jDaysFromCivil(c.y, 1, 1) + 1
	case jDayOfMonth:
		return c.d
	case jDayOfWeek:
		return jDow(c.days)
	}
	wy, w := c.week()
	if f == jWeekyear {
		return wy
	}
	return w
}

// maxAt is f's largest value at local time local.
func (f jField) maxAt(local int64) int64 {
	c := jSplit(local)
	switch f {
	case jWeekOfWeekyear:
		wy, _ := c.week()
		return jWeeksInYear(wy)
	case jDayOfYear:
		return jDaysInYear(c.y)
	case jDayOfMonth:
		return jDaysInMonth(c.y, c.m)
	}
	return jFields[f].max
}

// set is Joda's field set on a local time: v must be within the field's
// bounds at local (getMaximumValueForSet).
func (f jField) set(local, v int64) (int64, error) {
	info := jFields[f]
	switch f {
	case jClockhourOfHalfday, jClockhourOfDay:
		if err := jBounds(f, v, info.min, info.max); err != nil {
			return 0, err
		}
		if v == info.max {
			v = 0
		}
		if f == jClockhourOfDay {
			return jHourOfDay.set(local, v)
		}
		return jHourOfHalfday.set(local, v)
	case jWeekOfWeekyear, jDayOfYear, jDayOfMonth:
		// getMaximumValueForSet: the instant's maximum only past 52, 365, 28.
		max := int64(28)
		switch f {
		case jWeekOfWeekyear:
			max = 52
		case jDayOfYear:
			max = 365
		}
		if v > max || (v < 1 && f != jWeekOfWeekyear) {
			max = f.maxAt(local)
		}
		if err := jBounds(f, v, 1, max); err != nil {
			return 0, err
		}
		return jAdd(local, (v-f.get(local))*info.unit)
	}
	if f >= jDayOfWeek {
		if err := jBounds(f, v, info.min, info.max); err != nil {
			return 0, err
		}
		return jAdd(local, (v-f.get(local))*info.unit)
	}
	return f.setDate(local, v)
}

// setDate sets the era, century, year and month fields.
func (f jField) setDate(local, v int64) (int64, error) {
	c := jSplit(local)
	switch f {
	case jEra:
		if err := jBounds(f, v, 0, 1); err != nil {
			return 0, err
		}
		if f.get(local) == v {
			return local, nil
		}
		return jSetYear(c, -c.y)
	case jCenturyOfEra:
		if err := jBounds(f, v, 0, jFields[f].max); err != nil {
			return 0, err
		}
		return jSetAbsYear(c, v*100+absInt64(c.y)%100)
	case jYearOfEra:
		if err := jBounds(f, v, 1, jMaxYear); err != nil {
			return 0, err
		}
		if c.y <= 0 {
			v = 1 - v
		}
		return jSetYear(c, v)
	case jYear:
		return jSetYear(c, v)
	case jWeekyear:
		return jSetWeekyear(local, v)
	}
	// jMonthOfYear
	if err := jBounds(f, v, 1, 12); err != nil {
		return 0, err
	}
	return jYMD(c.y, v, min(c.d, jDaysInMonth(c.y, v)), c.ms)
}

// jSetAbsYear sets the year's absolute value, keeping its sign (ISO's
// year of era under its century field).
func jSetAbsYear(c jCivil, y int64) (int64, error) {
	if err := jBounds(jYearOfEra, y, 0, jMaxYear); err != nil {
		return 0, err
	}
	if c.y < 0 {
		y = -y
	}
	return jSetYear(c, y)
}

// jSetYear moves c to year y, Feb 29 to Feb 28 in a common year.
func jSetYear(c jCivil, y int64) (int64, error) {
	if err := jBounds(jYear, y, jMinYear, jMaxYear); err != nil {
		return 0, err
	}
	d := c.d
	if c.m == 2 && d == 29 && !jLeap(y) {
		d = 28
	}
	return jYMD(y, c.m, d, c.ms)
}

// jSetWeekyear is Joda's BasicWeekyearDateTimeField.set: the same week
// (at most the last of the new week-year) and day of the week.
func jSetWeekyear(local, y int64) (int64, error) {
	if err := jBounds(jWeekyear, absInt64(y), jMinYear, jMaxYear); err != nil {
		return 0, err
	}
	c := jSplit(local)
	thisWY, week := c.week()
	if thisWY == y {
		return local, nil
	}
	dow := jDow(c.days)
	week = min(week, jWeeksInYear(thisWY), jWeeksInYear(y))
	work, err := jSetYear(c, y)
	if err != nil {
		return 0, err
	}
	if wy := jWeekyear.get(work); wy < y {
		work += jMsWeek
	} else if wy > y {
		work -= jMsWeek
	}
	work += (week - jWeekOfWeekyear.get(work)) * jMsWeek
	return jDayOfWeek.set(work, dow)
}

func absInt64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// roundFloor is the start of f's unit containing local.
func (f jField) roundFloor(local int64) (int64, error) {
	info := jFields[f]
	c := jSplit(local)
	switch {
	case f >= jHalfdayOfDay:
		return jMul(jFloorDiv(local, info.unit), info.unit)
	case f >= jDayOfYear:
		return jMul(c.days, jMsDay)
	case f == jWeekOfWeekyear:
		return jMul(c.days-jDow(c.days)+1, jMsDay)
	case f == jMonthOfYear:
		return jYMD(c.y, c.m, 1, 0)
	case f == jWeekyear:
		t, err := jWeekOfWeekyear.roundFloor(local)
		if err != nil {
			return 0, err
		}
		return t - (jWeekOfWeekyear.get(t)-1)*jMsWeek, nil
	case f == jCenturyOfEra:
		t, err := jSetAbsYear(c, jCenturyOfEra.get(local)*100)
		if err != nil {
			return 0, err
		}
		return jYear.roundFloor(t)
	case f == jEra && c.y > 0:
		return jYMD(1, 1, 1, 0)
	}
	// year, year of era; a BC era floors to its year (Joda: Long.MIN_VALUE)
	return jYMD(c.y, 1, 1, 0)
}

// jLocalString is a local time as yyyy-MM-dd'T'HH:mm:ss.SSS.
func jLocalString(local int64) string {
	c := jSplit(local)
	var b strings.Builder
	jPadInt(&b, c.y, 4)
	fmt.Fprintf(&b, "-%02d-%02dT%02d:%02d:%02d.%03d", c.m, c.d, c.ms/jMsHour, c.ms/jMsMinute%60,
		c.ms/jMsSecond%60, c.ms%1000)
	return b.String()
}

// ---- zones

// DateTimeZone is Joda's DateTimeZone: a zone of Go's zone database under
// its Joda id (links resolved as Joda resolves them: US/Pacific is
// America/Los_Angeles), or a fixed offset in milliseconds (UTC, +05:30).
type DateTimeZone struct {
	id    string
	loc   *time.Location // nil for a fixed offset
	fixed int64          // the offset in milliseconds when loc is nil
}

// UTCZone is DateTimeZone.UTC, also the default zone.
func UTCZone() DateTimeZone { return DateTimeZone{id: "UTC"} }

// ZoneForID is DateTimeZone.forID(id): a zone id Joda knows, "UTC", or an
// offset ("+05:30", "-08", "UTC+01:00"); any other id is an error.
func ZoneForID(m *Machine, id string) (DateTimeZone, error) { return jZoneForID(m, id) }

// Kind is KindDateTimeZone.
func (DateTimeZone) Kind() Kind { return KindDateTimeZone }

// JavaString is the zone's id, as DateTimeZone.toString.
func (z DateTimeZone) JavaString() string { return z.id }

// ID is the zone's id.
func (z DateTimeZone) ID() string { return z.id }

// Offset is the zone's offset from UTC at instant ms, in milliseconds.
func (z DateTimeZone) Offset(ms int64) int64 { return z.offset(ms) }

func (z DateTimeZone) call(m *Machine, name string, args []Value) (Value, error) {
	return jZoneCall(m, &z, name, args)
}

func (z DateTimeZone) offset(ms int64) int64 {
	if z.loc == nil {
		return z.fixed
	}
	_, off := time.UnixMilli(ms).In(z.loc).Zone()
	return int64(off) * jMsSecond
}

// nextTransition is the first instant after ms where the zone changes,
// ms when it never does.
func (z DateTimeZone) nextTransition(ms int64) int64 {
	if z.loc == nil {
		return ms
	}
	_, end := time.UnixMilli(ms).In(z.loc).ZoneBounds()
	if end.IsZero() {
		return ms
	}
	return end.UnixMilli()
}

// previousTransition is the last millisecond before the zone's change at
// or before ms, ms when there is none.
func (z DateTimeZone) previousTransition(ms int64) int64 {
	if z.loc == nil {
		return ms
	}
	start, _ := time.UnixMilli(ms).In(z.loc).ZoneBounds()
	if start.IsZero() {
		return ms
	}
	return start.UnixMilli() - 1
}

// toLocal is instant ms as local time.
func (z DateTimeZone) toLocal(ms int64) (int64, error) {
	off := z.offset(ms)
	l := ms + off
	if (ms^l) < 0 && (ms^off) >= 0 {
		return 0, errors.New("adding the time zone offset caused an overflow")
	}
	return l, nil
}

// offsetFromLocal is Joda's getOffsetFromLocal: in an overlap the earlier
// (summer) offset, in a gap the offset before it, so that the local time
// moves forward past the gap.
func (z DateTimeZone) offsetFromLocal(local int64) int64 {
	offLocal := z.offset(local)
	adjusted := local - offLocal
	offAdjusted := z.offset(adjusted)
	if offLocal != offAdjusted {
		if offLocal-offAdjusted < 0 {
			nextLocal := z.nextTransition(adjusted)
			if nextLocal == local-offLocal {
				nextLocal = math.MaxInt64
			}
			nextAdjusted := z.nextTransition(local - offAdjusted)
			if nextAdjusted == local-offAdjusted {
				nextAdjusted = math.MaxInt64
			}
			if nextLocal != nextAdjusted {
				return offLocal
			}
		}
	} else if offLocal >= 0 {
		prev := z.previousTransition(adjusted)
		if prev < adjusted {
			offPrev := z.offset(prev)
			if adjusted-prev <= offPrev-offLocal {
				return offPrev
			}
		}
	}
	return offAdjusted
}

// fromLocal is local time local as an instant (Joda's local to UTC with
// getOffsetFromLocal), an error on overflow.
func (z DateTimeZone) fromLocal(local int64) (int64, error) {
	off := z.offsetFromLocal(local)
	r := local - off
	if (local^r) < 0 && (local^off) < 0 {
		return 0, errors.New("subtracting the time zone offset caused an overflow")
	}
	return r, nil
}

// convertLocalToUTC is Joda's convertLocalToUTC(local, false): a local time
// in a gap takes the offset before it.
func (z DateTimeZone) convertLocalToUTC(local int64) (int64, error) {
	offLocal := z.offset(local)
	off := z.offset(local - offLocal)
	if offLocal != off && offLocal < 0 {
		nextLocal := z.nextTransition(local - offLocal)
		if nextLocal == local-offLocal {
			nextLocal = math.MaxInt64
		}
		nextAdjusted := z.nextTransition(local - off)
		if nextAdjusted == local-off {
			nextAdjusted = math.MaxInt64
		}
		if nextLocal != nextAdjusted {
			off = offLocal
		}
	}
	r := local - off
	if (local^r) < 0 && (local^off) < 0 {
		return 0, errors.New("subtracting the time zone offset caused an overflow")
	}
	return r, nil
}

// convertLocalToUTCKeep is Joda's convertLocalToUTC(local, false,
// original): the original instant's offset when it still holds.
func (z DateTimeZone) convertLocalToUTCKeep(local, original int64) (int64, error) {
	off := z.offset(original)
	if r := local - off; z.offset(r) == off {
		return r, nil
	}
	return z.convertLocalToUTC(local)
}

// adjustOffset is Joda's adjustOffset(instant, false): in an overlap, the
// earlier of the two instants of the same local time.
func (z DateTimeZone) adjustOffset(instant int64) int64 {
	before, after := instant-3*jMsHour, instant+3*jMsHour
	offBefore, offAfter := z.offset(before), z.offset(after)
	if offBefore <= offAfter {
		return instant
	}
	diff := offBefore - offAfter
	transition := z.nextTransition(before)
	start, end := transition-diff, transition+diff
	if instant < start || instant >= end {
		return instant
	}
	if instant-start >= diff {
		return instant - diff
	}
	return instant
}

// jPrintOffset is Joda's printOffset: +05:30, -07:52:58, +01:00:00.500.
func jPrintOffset(off int64) string {
	var b strings.Builder
	if off >= 0 {
		b.WriteByte('+')
	} else {
		b.WriteByte('-')
		off = -off
	}
	h := off / jMsHour
	jPadInt(&b, h, 2)
	off -= h * jMsHour
	mi := off / jMsMinute
	b.WriteByte(':')
	jPadInt(&b, mi, 2)
	off -= mi * jMsMinute
	if off == 0 {
		return b.String()
	}
	s := off / jMsSecond
	b.WriteByte(':')
	jPadInt(&b, s, 2)
	off -= s * jMsSecond
	if off == 0 {
		return b.String()
	}
	b.WriteByte('.')
	jPadInt(&b, off, 3)
	return b.String()
}

// jValidZoneName reports whether id may be looked up in the zone database:
// it looks like a zone name (Area/Location, EST5EDT, Etc/GMT+5), never a
// path ("..", a leading "/"), "Local" or a lower-case file of the database.
func jValidZoneName(id string) bool {
	if id == "" || len(id) > 64 || id[0] < 'A' || id[0] > 'Z' || id == "Local" ||
		strings.HasSuffix(id, "/") || strings.Contains(id, "//") {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '/' || c == '_' ||
			c == '-' || c == '+') {
			return false
		}
	}
	return true
}

// jProviderZone is the zone of Joda's zone provider named id, ok false when
// there is none.
func jProviderZone(m *Machine, id string) (DateTimeZone, bool, error) {
	if !jValidZoneName(id) {
		return DateTimeZone{}, false, nil
	}
	if err := m.Charge(jZoneLoadCost, 512); err != nil {
		return DateTimeZone{}, false, err
	}
	canonical := id
	if a, ok := jZoneAliases[id]; ok {
		canonical = a // Joda's link: the target's id and rules
	}
	loc, err := time.LoadLocation(canonical)
	if err != nil && canonical != id {
		loc, err = time.LoadLocation(id)
	}
	if err != nil {
		return DateTimeZone{}, false, nil
	}
	return DateTimeZone{id: canonical, loc: loc}, true, nil
}

// jZoneForID is DateTimeZone.forID.
func jZoneForID(m *Machine, id string) (DateTimeZone, error) {
	if id == "UTC" {
		return UTCZone(), nil
	}
	if z, ok, err := jProviderZone(m, id); ok || err != nil {
		return z, err
	}
	if id == "UT" || id == "GMT" || id == "Z" {
		return UTCZone(), nil
	}
	rest := id
	for _, p := range [...]string{"UTC+", "UTC-", "GMT+", "GMT-", "UT+", "UT-"} {
		if strings.HasPrefix(id, p) {
			rest = id[len(p)-1:]
			break
		}
	}
	if strings.HasPrefix(rest, "+") || strings.HasPrefix(rest, "-") {
		off, err := jParseOffsetID(rest)
		if err != nil {
			return DateTimeZone{}, err
		}
		if off == 0 {
			return UTCZone(), nil
		}
		return DateTimeZone{id: jPrintOffset(off), fixed: off}, nil
	}
	shown := id
	if len(shown) > 80 {
		shown = shown[:80] + "..."
	}
	return DateTimeZone{}, fmt.Errorf("The datetime zone id '%s' is not recognised", shown)
}

// jShortNames are Joda's default short zone names, which 'z' parses.
var jShortNames = [...][2]string{
	{"UT", "UTC"}, {"UTC", "UTC"}, {"GMT", "UTC"}, {"EST", "America/New_York"}, {"EDT", "America/New_York"},
	{"CST", "America/Chicago"}, {"CDT", "America/Chicago"}, {"MST", "America/Denver"}, {"MDT", "America/Denver"},
	{"PST", "America/Los_Angeles"}, {"PDT", "America/Los_Angeles"},
}

// shortName is the zone's short name at instant ms ('z'): the database's
// abbreviation when it is a name (PST, CET), else the offset.
func (z DateTimeZone) shortName(ms int64) string {
	if z.loc == nil {
		return z.id
	}
	name, off := time.UnixMilli(ms).In(z.loc).Zone()
	if n, ok := jZoneNames[z.id+"|"+strconv.Itoa(off)]; ok {
		return n[0]
	}
	if jAlphaName(name) {
		return name
	}
	return jPrintOffset(int64(off) * jMsSecond)
}

// longName is the zone's long name at instant ms ('zzzz'), as Java's
// English names have it for the zones of jLongNames, else the offset.
func (z DateTimeZone) longName(ms int64) string {
	if z.loc == nil {
		if z.id == "UTC" {
			return "Coordinated Universal Time"
		}
		return z.id
	}
	name, off := time.UnixMilli(ms).In(z.loc).Zone()
	if n, ok := jZoneNames[z.id+"|"+strconv.Itoa(off)]; ok {
		return n[1]
	}
	if n, ok := jLongNames[name+strconv.Itoa(off)]; ok {
		return n
	}
	return jPrintOffset(int64(off) * jMsSecond)
}

func jAlphaName(s string) bool {
	if len(s) < 2 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 'A' || c > 'Z' {
			return false
		}
	}
	return true
}

// jLongNames are English long zone names by abbreviation and offset in
// seconds.
var jLongNames = map[string]string{
	"UTC0": "Coordinated Universal Time", "GMT0": "Greenwich Mean Time", "BST3600": "British Summer Time",
	"IST3600": "Irish Standard Time", "WET0": "Western European Standard Time",
	"WEST3600": "Western European Summer Time", "CET3600": "Central European Standard Time",
	"CEST7200": "Central European Summer Time", "EET7200": "Eastern European Standard Time",
	"EEST10800": "Eastern European Summer Time", "MSK10800": "Moscow Standard Time",
	"IST7200": "Israel Standard Time", "IDT10800": "Israel Daylight Time", "IST19800": "India Standard Time",
	"PKT18000": "Pakistan Standard Time", "WIB25200": "Western Indonesia Time", "CST28800": "China Standard Time",
	"HKT28800": "Hong Kong Standard Time", "PST28800": "Philippine Standard Time", "JST32400": "Japan Standard Time",
	"KST32400": "Korean Standard Time", "AWST28800": "Australian Western Standard Time",
	"ACST34200": "Australian Central Standard Time", "ACDT37800": "Australian Central Daylight Time",
	"AEST36000": "Australian Eastern Standard Time", "AEDT39600": "Australian Eastern Daylight Time",
	"NZST43200": "New Zealand Standard Time", "NZDT46800": "New Zealand Daylight Time",
	"SAST7200": "South Africa Standard Time", "CAT7200": "Central Africa Time", "EAT10800": "East Africa Time",
	"WAT3600": "West Africa Standard Time", "NST-12600": "Newfoundland Standard Time",
	"NDT-9000": "Newfoundland Daylight Time", "AST-14400": "Atlantic Standard Time",
	"ADT-10800": "Atlantic Daylight Time", "EST-18000": "Eastern Standard Time", "EDT-14400": "Eastern Daylight Time",
	"CST-21600": "Central Standard Time", "CDT-18000": "Central Daylight Time", "MST-25200": "Mountain Standard Time",
	"MDT-21600": "Mountain Daylight Time", "PST-28800": "Pacific Standard Time", "PDT-25200": "Pacific Daylight Time",
	"AKST-32400": "Alaska Standard Time", "AKDT-28800": "Alaska Daylight Time",
	"HST-36000": "Hawaii-Aleutian Standard Time", "CST-18000": "Cuba Standard Time",
	"CDT-14400": "Cuba Daylight Time", "SST-39600": "Samoa Standard Time", "WIT32400": "Eastern Indonesia Time",
	"WITA28800": "Central Indonesia Time",
}

// jZoneNames are Java's English short and long names of zones whose
// abbreviation in the zone database is an offset (+08), by zone id and
// offset in seconds.
var jZoneNames = map[string][2]string{
	"Asia/Singapore|28800":                  {"SGT", "Singapore Standard Time"},
	"America/Sao_Paulo|-10800":              {"BRT", "Brasilia Standard Time"},
	"America/Sao_Paulo|-7200":               {"BRST", "Brasilia Summer Time"},
	"America/Argentina/Buenos_Aires|-10800": {"ART", "Argentina Standard Time"},
	"Asia/Dubai|14400":                      {"GST", "Gulf Standard Time"},
	"Asia/Kathmandu|20700":                  {"NPT", "Nepal Time"},
	"Asia/Tehran|12600":                     {"IRST", "Iran Standard Time"},
	"Asia/Tehran|16200":                     {"IRDT", "Iran Daylight Time"},
	"Asia/Bangkok|25200":                    {"ICT", "Indochina Time"},
	"Asia/Ho_Chi_Minh|25200":                {"ICT", "Indochina Time"},
	"Asia/Riyadh|10800":                     {"AST", "Arabian Standard Time"},
	"Europe/Istanbul|10800":                 {"TRT", "Turkey Time"},
	"America/Bogota|-18000":                 {"COT", "Colombia Standard Time"},
	"America/Lima|-18000":                   {"PET", "Peru Standard Time"},
	"America/Santiago|-14400":               {"CLT", "Chile Standard Time"},
	"America/Santiago|-10800":               {"CLST", "Chile Summer Time"},
	"Asia/Dhaka|21600":                      {"BDT", "Bangladesh Standard Time"},
	"Asia/Yangon|23400":                     {"MMT", "Myanmar Time"},
	"Asia/Colombo|19800":                    {"IST", "India Standard Time"},
	"Asia/Taipei|28800":                     {"CST", "Taipei Standard Time"},
	"Asia/Kabul|16200":                      {"AFT", "Afghanistan Time"},
	"America/Caracas|-14400":                {"VET", "Venezuela Time"},
	"Pacific/Chatham|45900":                 {"CHAST", "Chatham Standard Time"},
	"Pacific/Chatham|49500":                 {"CHADT", "Chatham Daylight Time"},
}

// jZoneAliases are the links of Joda's zone data (global-tz, as
// joda-time 2.13 compiles it): a link's zone has its target's id.
var jZoneAliases = map[string]string{
	"Africa/Asmera":                    "Africa/Asmara",
	"Africa/Timbuktu":                  "Africa/Bamako",
	"America/Argentina/ComodRivadavia": "America/Argentina/Catamarca",
	"America/Atka":                     "America/Adak",
	"America/Buenos_Aires":             "America/Argentina/Buenos_Aires",
	"America/Catamarca":                "America/Argentina/Catamarca",
	"America/Coral_Harbour":            "America/Atikokan",
	"America/Cordoba":                  "America/Argentina/Cordoba",
	"America/Ensenada":                 "America/Tijuana",
	"America/Fort_Wayne":               "America/Indiana/Indianapolis",
	"America/Godthab":                  "America/Nuuk",
	"America/Indianapolis":             "America/Indiana/Indianapolis",
	"America/Jujuy":                    "America/Argentina/Jujuy",
	"America/Knox_IN":                  "America/Indiana/Knox",
	"America/Kralendijk":               "America/Curacao",
	"America/Louisville":               "America/Kentucky/Louisville",
	"America/Lower_Princes":            "America/Curacao",
	"America/Marigot":                  "America/Port_of_Spain",
	"America/Mendoza":                  "America/Argentina/Mendoza",
	"America/Montreal":                 "America/Toronto",
	"America/Nipigon":                  "America/Toronto",
	"America/Pangnirtung":              "America/Iqaluit",
	"America/Porto_Acre":               "America/Rio_Branco",
	"America/Rainy_River":              "America/Winnipeg",
	"America/Rosario":                  "America/Argentina/Cordoba",
	"America/Santa_Isabel":             "America/Tijuana",
	"America/Shiprock":                 "America/Denver",
	"America/St_Barthelemy":            "America/Port_of_Spain",
	"America/Thunder_Bay":              "America/Toronto",
	"America/Virgin":                   "America/St_Thomas",
	"America/Yellowknife":              "America/Edmonton",
	"Antarctica/South_Pole":            "Antarctica/McMurdo",
	"Arctic/Longyearbyen":              "Europe/Oslo",
	"Asia/Ashkhabad":                   "Asia/Ashgabat",
	"Asia/Calcutta":                    "Asia/Kolkata",
	"Asia/Choibalsan":                  "Asia/Ulaanbaatar",
	"Asia/Chongqing":                   "Asia/Shanghai",
	"Asia/Chungking":                   "Asia/Shanghai",
	"Asia/Dacca":                       "Asia/Dhaka",
	"Asia/Harbin":                      "Asia/Shanghai",
	"Asia/Istanbul":                    "Europe/Istanbul",
	"Asia/Kashgar":                     "Asia/Urumqi",
	"Asia/Katmandu":                    "Asia/Kathmandu",
	"Asia/Macao":                       "Asia/Macau",
	"Asia/Rangoon":                     "Asia/Yangon",
	"Asia/Saigon":                      "Asia/Ho_Chi_Minh",
	"Asia/Tel_Aviv":                    "Asia/Jerusalem",
	"Asia/Thimbu":                      "Asia/Thimphu",
	"Asia/Ujung_Pandang":               "Asia/Makassar",
	"Asia/Ulan_Bator":                  "Asia/Ulaanbaatar",
	"Atlantic/Faeroe":                  "Atlantic/Faroe",
	"Atlantic/Jan_Mayen":               "Europe/Oslo",
	"Australia/ACT":                    "Australia/Sydney",
	"Australia/Canberra":               "Australia/Sydney",
	"Australia/Currie":                 "Australia/Hobart",
	"Australia/LHI":                    "Australia/Lord_Howe",
	"Australia/NSW":                    "Australia/Sydney",
	"Australia/North":                  "Australia/Darwin",
	"Australia/Queensland":             "Australia/Brisbane",
	"Australia/South":                  "Australia/Adelaide",
	"Australia/Tasmania":               "Australia/Hobart",
	"Australia/Victoria":               "Australia/Melbourne",
	"Australia/West":                   "Australia/Perth",
	"Australia/Yancowinna":             "Australia/Broken_Hill",
	"Brazil/Acre":                      "America/Rio_Branco",
	"Brazil/DeNoronha":                 "America/Noronha",
	"Brazil/East":                      "America/Sao_Paulo",
	"Brazil/West":                      "America/Manaus",
	"CET":                              "Europe/Brussels",
	"CST6CDT":                          "America/Chicago",
	"Canada/Atlantic":                  "America/Halifax",
	"Canada/Central":                   "America/Winnipeg",
	"Canada/Eastern":                   "America/Toronto",
	"Canada/Mountain":                  "America/Edmonton",
	"Canada/Newfoundland":              "America/St_Johns",
	"Canada/Pacific":                   "America/Vancouver",
	"Canada/Saskatchewan":              "America/Regina",
	"Canada/Yukon":                     "America/Whitehorse",
	"Chile/Continental":                "America/Santiago",
	"Chile/EasterIsland":               "Pacific/Easter",
	"Cuba":                             "America/Havana",
	"EET":                              "Europe/Athens",
	"EST":                              "America/Panama",
	"EST5EDT":                          "America/New_York",
	"Egypt":                            "Africa/Cairo",
	"Eire":                             "Europe/Dublin",
	"Etc/GMT+0":                        "Etc/GMT",
	"Etc/GMT-0":                        "Etc/GMT",
	"Etc/GMT0":                         "Etc/GMT",
	"Etc/Greenwich":                    "Etc/GMT",
	"Etc/UCT":                          "Etc/UTC",
	"Etc/Universal":                    "Etc/UTC",
	"Etc/Zulu":                         "Etc/UTC",
	"Europe/Belfast":                   "Europe/London",
	"Europe/Bratislava":                "Europe/Prague",
	"Europe/Busingen":                  "Europe/Zurich",
	"Europe/Kiev":                      "Europe/Kyiv",
	"Europe/Mariehamn":                 "Europe/Helsinki",
	"Europe/Nicosia":                   "Asia/Nicosia",
	"Europe/Podgorica":                 "Europe/Belgrade",
	"Europe/San_Marino":                "Europe/Rome",
	"Europe/Tiraspol":                  "Europe/Chisinau",
	"Europe/Uzhgorod":                  "Europe/Kyiv",
	"Europe/Vatican":                   "Europe/Rome",
	"Europe/Zaporozhye":                "Europe/Kyiv",
	"GB":                               "Europe/London",
	"GB-Eire":                          "Europe/London",
	"GMT":                              "Etc/GMT",
	"GMT+0":                            "Etc/GMT",
	"GMT-0":                            "Etc/GMT",
	"GMT0":                             "Etc/GMT",
	"Greenwich":                        "Etc/GMT",
	"HST":                              "Pacific/Honolulu",
	"Hongkong":                         "Asia/Hong_Kong",
	"Iceland":                          "Atlantic/Reykjavik",
	"Iran":                             "Asia/Tehran",
	"Israel":                           "Asia/Jerusalem",
	"Jamaica":                          "America/Jamaica",
	"Japan":                            "Asia/Tokyo",
	"Kwajalein":                        "Pacific/Kwajalein",
	"Libya":                            "Africa/Tripoli",
	"MET":                              "Europe/Brussels",
	"MST":                              "America/Phoenix",
	"MST7MDT":                          "America/Denver",
	"Mexico/BajaNorte":                 "America/Tijuana",
	"Mexico/BajaSur":                   "America/Mazatlan",
	"Mexico/General":                   "America/Mexico_City",
	"NZ":                               "Pacific/Auckland",
	"NZ-CHAT":                          "Pacific/Chatham",
	"Navajo":                           "America/Denver",
	"PRC":                              "Asia/Shanghai",
	"PST8PDT":                          "America/Los_Angeles",
	"Pacific/Enderbury":                "Pacific/Kanton",
	"Pacific/Johnston":                 "Pacific/Honolulu",
	"Pacific/Ponape":                   "Pacific/Pohnpei",
	"Pacific/Samoa":                    "Pacific/Pago_Pago",
	"Pacific/Truk":                     "Pacific/Chuuk",
	"Pacific/Yap":                      "Pacific/Chuuk",
	"Poland":                           "Europe/Warsaw",
	"Portugal":                         "Europe/Lisbon",
	"ROC":                              "Asia/Taipei",
	"ROK":                              "Asia/Seoul",
	"Singapore":                        "Asia/Singapore",
	"Turkey":                           "Europe/Istanbul",
	"UCT":                              "Etc/UTC",
	"US/Alaska":                        "America/Anchorage",
	"US/Aleutian":                      "America/Adak",
	"US/Arizona":                       "America/Phoenix",
	"US/Central":                       "America/Chicago",
	"US/East-Indiana":                  "America/Indiana/Indianapolis",
	"US/Eastern":                       "America/New_York",
	"US/Hawaii":                        "Pacific/Honolulu",
	"US/Indiana-Starke":                "America/Indiana/Knox",
	"US/Michigan":                      "America/Detroit",
	"US/Mountain":                      "America/Denver",
	"US/Pacific":                       "America/Los_Angeles",
	"US/Samoa":                         "Pacific/Pago_Pago",
	"UTC":                              "Etc/UTC",
	"Universal":                        "Etc/UTC",
	"W-SU":                             "Europe/Moscow",
	"WET":                              "Europe/Lisbon",
	"Zulu":                             "Etc/UTC",
}

// ---- DateTime

// DateTime is Joda's DateTime: an instant in milliseconds in a zone.
type DateTime struct {
	ms   int64
	zone DateTimeZone
}

// NewDateTime is the DateTime of instant ms (milliseconds since the epoch)
// in zone.
func NewDateTime(ms int64, zone DateTimeZone) DateTime { return DateTime{ms: ms, zone: zone} }

// Kind is KindDateTime.
func (DateTime) Kind() Kind { return KindDateTime }

// Millis is the instant in milliseconds since 1970-01-01T00:00:00Z.
func (d DateTime) Millis() int64 { return d.ms }

// Zone is the zone the DateTime's fields are read in.
func (d DateTime) Zone() DateTimeZone { return d.zone }

// JavaString is DateTime.toString: ISO 8601 with the zone's offset,
// 2021-01-01T00:00:00.000Z.
func (d DateTime) JavaString() string { return jISOString(d.ms, d.zone) }

func (d DateTime) call(m *Machine, name string, args []Value) (Value, error) {
	return jDateTimeCall(m, &d, name, args)
}

func (d DateTime) local() (int64, error) { return d.zone.toLocal(d.ms) }

// get is field f in the DateTime's zone.
func (d DateTime) get(f jField) (int64, error) {
	l, err := d.local()
	if err != nil {
		return 0, err
	}
	return f.get(l), nil
}

// set is Joda's zoned field set (ZonedDateTimeField.set): f is set in
// local time, which goes back to an instant keeping the offset when it
// can; a local time in a DST gap fails.
func (d DateTime) set(f jField, v int64) (DateTime, error) {
	l, err := d.local()
	if err != nil {
		return d, err
	}
	nl, err := f.set(l, v)
	if err != nil {
		return d, err
	}
	r, err := d.zone.convertLocalToUTCKeep(nl, d.ms)
	if err != nil {
		return d, err
	}
	if rl, err := d.zone.toLocal(r); err != nil || f.get(rl) != v {
		return d, &jFieldError{f: f, v: v, gap: true, explain: jGapMessage(nl, d.zone)}
	}
	return DateTime{ms: r, zone: d.zone}, nil
}

func jGapMessage(local int64, z DateTimeZone) string {
	return "Illegal instant due to time zone offset transition (daylight savings time 'gap'): " +
		jLocalString(local) + " (" + z.id + ")"
}

// jUnit is a unit of plusX and minusX.
type jUnit uint8

const (
	jYears jUnit = iota
	jMonths
	jWeeks
	jDays
	jHours
	jMinutes
	jSeconds
	jMillis
)

var jUnitMillis = [...]int64{jWeeks: jMsWeek, jDays: jMsDay, jHours: jMsHour, jMinutes: jMsMinute,
	jSeconds: jMsSecond, jMillis: 1}

// plus adds n units as Joda's duration fields do: hours and smaller to
// the instant; days and larger to the local time, which goes back to an
// instant with getOffsetFromLocal; months clamp the day to the month's
// last.
func (d DateTime) plus(u jUnit, n int64) (DateTime, error) {
	if n == 0 {
		return d, nil
	}
	if u >= jHours {
		ms, err := jMul(n, jUnitMillis[u])
		if err == nil {
			ms, err = jAdd(d.ms, ms)
		}
		return DateTime{ms: ms, zone: d.zone}, err
	}
	l, err := d.local()
	if err != nil {
		return d, err
	}
	c := jSplit(l)
	switch u {
	case jYears:
		var y int64
		if y, err = jAdd(c.y, n); err == nil {
			l, err = jSetYear(c, y)
		}
	case jMonths:
		total := c.y*12 + c.m - 1 + n
		y, mo := jFloorDiv(total, 12), jFloorMod(total, 12)+1
		if err := jBounds(jYear, y, jMinYear, jMaxYear); err != nil {
			return d, err
		}
		l, err = jYMD(y, mo, min(c.d, jDaysInMonth(y, mo)), c.ms)
	default:
		var delta int64
		if delta, err = jMul(n, jUnitMillis[u]); err == nil {
			l, err = jAdd(l, delta)
		}
	}
	if err != nil {
		return d, err
	}
	ms, err := d.zone.fromLocal(l)
	return DateTime{ms: ms, zone: d.zone}, err
}

// startOfDay is withTimeAtStartOfDay: the first instant of the local day
// (01:00 where midnight is in a gap), the earlier one in an overlap.
func (d DateTime) startOfDay() (DateTime, error) {
	l, err := d.local()
	if err != nil {
		return d, err
	}
	day := jFloorDiv(l, jMsDay) * jMsDay
	inst, err := d.zone.convertLocalToUTC(day + 6*jMsHour)
	if err != nil {
		return d, err
	}
	l2, err := d.zone.toLocal(inst)
	if err != nil {
		return d, err
	}
	inst2, err := d.zone.convertLocalToUTCKeep(jFloorDiv(l2, jMsDay)*jMsDay, inst)
	if err != nil {
		return d, err
	}
	return DateTime{ms: d.zone.adjustOffset(inst2), zone: d.zone}, nil
}

// The DateTime methods SEL calls (SelJodaDateTime.SUPPORTED_METHODS).
var (
	jDTGetters = map[string]jField{
		"getYear": jYear, "getHourOfDay": jHourOfDay, "getWeekOfWeekyear": jWeekOfWeekyear,
		"getWeekyear": jWeekyear, "getDayOfWeek": jDayOfWeek, "getDayOfMonth": jDayOfMonth,
		"getDayOfYear": jDayOfYear, "getMillisOfDay": jMillisOfDay, "getMillisOfSecond": jMillisOfSecond,
		"getMinuteOfDay": jMinuteOfDay, "getMinuteOfHour": jMinuteOfHour, "getSecondOfMinute": jSecondOfMinute,
		"getMonthOfYear": jMonthOfYear, "getSecondOfDay": jSecondOfDay,
	}
	jDTProperties = map[string]jField{
		"monthOfYear": jMonthOfYear, "weekyear": jWeekyear, "weekOfWeekyear": jWeekOfWeekyear,
		"dayOfYear": jDayOfYear, "dayOfMonth": jDayOfMonth, "dayOfWeek": jDayOfWeek, "hourOfDay": jHourOfDay,
		"minuteOfDay": jMinuteOfDay, "minuteOfHour": jMinuteOfHour, "secondOfDay": jSecondOfDay,
		"secondOfMinute": jSecondOfMinute, "millisOfDay": jMillisOfDay, "millisOfSecond": jMillisOfSecond,
	}
	jDTWithers = map[string]jField{
		"withYear": jYear, "withWeekyear": jWeekyear, "withMonthOfYear": jMonthOfYear,
		"withWeekOfWeekyear": jWeekOfWeekyear, "withDayOfYear": jDayOfYear, "withDayOfMonth": jDayOfMonth,
		"withDayOfWeek": jDayOfWeek, "withHourOfDay": jHourOfDay, "withMinuteOfHour": jMinuteOfHour,
		"withSecondOfMinute": jSecondOfMinute, "withMillisOfSecond": jMillisOfSecond,
		"withMillisOfDay": jMillisOfDay,
	}
	jDTPlus = map[string]jUnit{
		"Years": jYears, "Months": jMonths, "Weeks": jWeeks, "Days": jDays, "Hours": jHours,
		"Minutes": jMinutes, "Seconds": jSeconds, "Millis": jMillis,
	}
)

// jDTPlusUnit is the unit and sign of plusX and minusX.
func jDTPlusUnit(name string) (jUnit, int64, bool) {
	sign, rest := int64(1), ""
	switch {
	case strings.HasPrefix(name, "plus"):
		rest = name[4:]
	case strings.HasPrefix(name, "minus"):
		sign, rest = -1, name[5:]
	default:
		return 0, 0, false
	}
	u, ok := jDTPlus[rest]
	return u, sign, ok
}

// jDTSupported reports whether SEL has DateTime method name with n
// arguments.
func jDTSupported(name string, n int) bool {
	switch n {
	case 0:
		_, g := jDTGetters[name]
		_, p := jDTProperties[name]
		return g || p || name == "getMillis" || name == "toString" || name == "withTimeAtStartOfDay"
	case 1:
		_, w := jDTWithers[name]
		_, _, p := jDTPlusUnit(name)
		switch name {
		case "toString", "withZone", "toDateTime", "isAfter", "isBefore", "isEqual":
			return true
		}
		return w || p
	case 2:
		return name == "parse"
	}
	return false
}

// jDateTimeCall calls DateTime method name on d, or on the class
// DateTime when d is nil (SEL's static DateTime holds null: only the
// static parse works on it).
func jDateTimeCall(m *Machine, d *DateTime, name string, args []Value) (Value, error) {
	if err := m.Charge(jCallCost, 0); err != nil {
		return nil, err
	}
	if !jDTSupported(name, len(args)) {
		return nil, jUnsupportedCall(KindDateTime, name, args)
	}
	if name == "parse" {
		if d != nil {
			return nil, errors.New("Failed calling method parse2: DateTime.parse is static, call it on the class")
		}
		return jStaticParse(m, args)
	}
	if d == nil {
		return nil, jNullReceiver("DateTime", name, len(args))
	}
	if len(args) == 0 {
		return d.call0(m, name)
	}
	v, err := d.call1(m, name, args[0])
	if err != nil {
		return nil, fmt.Errorf("Failed calling method %s1: %w", name, err)
	}
	return v, nil
}

// call0 is a DateTime method without arguments.
func (d DateTime) call0(m *Machine, name string) (Value, error) {
	if f, ok := jDTGetters[name]; ok {
		v, err := d.get(f)
		return Long(v), err
	}
	if f, ok := jDTProperties[name]; ok {
		return DateTimeProperty{dt: d, f: f}, nil
	}
	switch name {
	case "getMillis":
		return Long(d.ms), nil
	case "toString":
		return jStringResult(m, d.JavaString())
	}
	r, err := d.startOfDay()
	if err != nil {
		return nil, fmt.Errorf("Failed calling method withTimeAtStartOfDay0: %w", err)
	}
	return r, nil
}

// call1 is a DateTime method of one argument.
func (d DateTime) call1(m *Machine, name string, arg Value) (Value, error) {
	if f, ok := jDTWithers[name]; ok {
		n, err := jIntArg(arg)
		if err != nil {
			return nil, err
		}
		return d.set(f, n)
	}
	if u, sign, ok := jDTPlusUnit(name); ok {
		n, err := jIntArg(arg)
		if err != nil {
			return nil, err
		}
		return d.plus(u, sign*n)
	}
	switch name {
	case "toString":
		p, isNull, err := jUnboxString(arg)
		switch {
		case err != nil:
			return nil, err
		case isNull: // toString(null) is toString()
			return jStringResult(m, d.JavaString())
		}
		f, err := jCompile(m, p)
		if err != nil {
			return nil, err
		}
		return jPrintResult(m, f.elems, d.ms, d.zone)
	case "withZone", "toDateTime":
		z, err := jUnboxZone(arg)
		if err != nil {
			return nil, err
		}
		return DateTime{ms: d.ms, zone: z}, nil
	}
	other, err := jUnboxInstant(m, arg)
	if err != nil {
		return nil, err
	}
	switch name {
	case "isAfter":
		return Boolean(d.ms > other), nil
	case "isBefore":
		return Boolean(d.ms < other), nil
	}
	return Boolean(d.ms == other), nil
}

// jStaticParse is DateTime.parse(String, DateTimeFormatter).
func jStaticParse(m *Machine, args []Value) (Value, error) {
	s, isNull, err := jUnboxString(args[0])
	if err == nil && isNull {
		err = errors.New("the text to parse is null")
	}
	if err != nil {
		return nil, fmt.Errorf("Failed calling method parse2: %w", err)
	}
	f, ok := args[1].(DateTimeFormatter)
	if !ok {
		return nil, fmt.Errorf("Failed calling method parse2: the formatter must be a DateTimeFormatter, not %s",
			jKindName(args[1]))
	}
	return f.parseDateTime(m, s)
}

// jNewDateTime is new DateTime(args...) (SelJodaDateTime.create).
func jNewDateTime(m *Machine, args []Value) (Value, error) {
	if err := m.Charge(jCallCost, 64); err != nil {
		return nil, err
	}
	switch len(args) {
	case 0:
		return DateTime{ms: m.Now().UnixMilli(), zone: UTCZone()}, nil
	case 1:
		switch x := args[0].(type) {
		case Long:
			return DateTime{ms: int64(x), zone: UTCZone()}, nil
		case DateTime:
			return x, nil // Joda keeps the instant's chronology
		}
		return jDateTimeFromObject(m, args[0], UTCZone())
	case 2:
		z, err := jCastZone(args[1])
		if err != nil {
			return nil, err
		}
		return jDateTimeFromObject(m, args[0], z)
	case 8:
		return jDateTimeFromFields(m, args)
	}
	return nil, fmt.Errorf("Invalid input arguments (%s) for DateTime constructor", jArgsString(args))
}

// jDateTimeFromObject is new DateTime(Object, zone): a long, an ISO
// string, another DateTime, or null for now.
func jDateTimeFromObject(m *Machine, v Value, z DateTimeZone) (Value, error) {
	switch x := v.(type) {
	case Long:
		return DateTime{ms: int64(x), zone: z}, nil
	case String:
		ms, err := jParseISO(m, string(x), z)
		if err != nil {
			return nil, err
		}
		return DateTime{ms: ms, zone: z}, nil
	case DateTime:
		return DateTime{ms: x.ms, zone: z}, nil
	case Null, TypedNull:
		return DateTime{ms: m.Now().UnixMilli(), zone: z}, nil
	}
	return nil, fmt.Errorf("No instant converter found for type: %s", jKindName(v))
}

// jDateTimeFromFields is new DateTime(year, month, day, hour, minute,
// second, millis, zone); a local time in a DST gap fails.
func jDateTimeFromFields(m *Machine, args []Value) (Value, error) {
	var n [7]int64
	for i := range n {
		v, ok := args[i].(Long)
		if !ok {
			return nil, fmt.Errorf("DateTime argument %d must be an int, not %s", i+1, jKindName(args[i]))
		}
		if v < math.MinInt32 || v > math.MaxInt32 {
			return nil, fmt.Errorf("DateTime argument %d (%d) is outside Java's int range", i+1, int64(v))
		}
		n[i] = int64(v)
	}
	z, err := jCastZone(args[7])
	if err != nil {
		return nil, err
	}
	for i, f := range [...]jField{jHourOfDay, jMinuteOfHour, jSecondOfMinute, jMillisOfSecond} {
		if err := jBounds(f, n[3+i], jFields[f].min, jFields[f].max); err != nil {
			return nil, err
		}
	}
	if err := jBounds(jYear, n[0], jMinYear, jMaxYear); err != nil {
		return nil, err
	}
	if err := jBounds(jMonthOfYear, n[1], 1, 12); err != nil {
		return nil, err
	}
	if err := jBounds(jDayOfMonth, n[2], 1, jDaysInMonth(n[0], n[1])); err != nil {
		return nil, err
	}
	local, err := jYMD(n[0], n[1], n[2], n[3]*jMsHour+n[4]*jMsMinute+n[5]*jMsSecond+n[6])
	if err != nil {
		return nil, err
	}
	ms, err := z.fromLocal(local)
	if err != nil {
		return nil, err
	}
	if z.offset(ms) != z.offsetFromLocal(local) {
		return nil, errors.New(jGapMessage(local, z))
	}
	return DateTime{ms: ms, zone: z}, nil
}

// ---- DateTime.Property

// DateTimeProperty is Joda's DateTime.Property: one field of a DateTime.
type DateTimeProperty struct {
	dt DateTime
	f  jField
}

// Kind is KindDateTimeProperty.
func (DateTimeProperty) Kind() Kind { return KindDateTimeProperty }

// JavaString is Property[name], as Joda prints a property.
func (p DateTimeProperty) JavaString() string { return "Property[" + jFields[p.f].name + "]" }

func (p DateTimeProperty) call(m *Machine, name string, args []Value) (Value, error) {
	return jPropertyCall(m, &p, name, args)
}

// jPropertyCall calls a method of property p (nil for the class
// Property, which holds null).
func jPropertyCall(m *Machine, p *DateTimeProperty, name string, args []Value) (Value, error) {
	if err := m.Charge(jCallCost, 0); err != nil {
		return nil, err
	}
	switch {
	case len(args) != 0:
	case name == "getAsText", name == "get", name == "withMinimumValue", name == "withMaximumValue":
		if p == nil {
			return nil, jNullReceiver("Property", name, 0)
		}
		return p.call0(m, name)
	}
	return nil, jUnsupportedCall(KindDateTimeProperty, name, args)
}

func (p DateTimeProperty) call0(m *Machine, name string) (Value, error) {
	l, err := p.dt.local()
	if err != nil {
		return nil, err
	}
	v := p.f.get(l)
	switch name {
	case "get":
		return Long(v), nil
	case "getAsText":
		return jStringResult(m, jFieldText(p.f, v, false))
	}
	target := jFields[p.f].min
	if name == "withMaximumValue" {
		target = p.f.maxAt(l)
	}
	r, err := p.dt.set(p.f, target)
	var fe *jFieldError
	if err != nil && errors.As(err, &fe) && fe.gap {
		// Joda: just after (minimum) or before (maximum) the gap.
		if name == "withMaximumValue" {
			return DateTime{ms: p.dt.zone.previousTransition(p.dt.ms + jMsDay), zone: p.dt.zone}, nil
		}
		return DateTime{ms: p.dt.zone.nextTransition(p.dt.ms - jMsDay), zone: p.dt.zone}, nil
	}
	if err != nil {
		return nil, err
	}
	return r, nil
}

// jFieldText is the English text of value v of field f (getAsText,
// getAsShortText): names for months, days of the week, halfdays and eras,
// digits for the others.
func jFieldText(f jField, v int64, short bool) string {
	var s string
	switch {
	case f == jMonthOfYear && v >= 1 && v <= 12:
		s = jMonthNames[v-1]
	case f == jDayOfWeek && v >= 1 && v <= 7:
		s = jDayNames[v-1]
	case f == jHalfdayOfDay && (v == 0 || v == 1):
		return [...]string{"AM", "PM"}[v]
	case f == jEra && (v == 0 || v == 1):
		return [...]string{"BC", "AD"}[v]
	default:
		return strconv.FormatInt(v, 10)
	}
	if short {
		return s[:3]
	}
	return s
}

// ---- Days

// Days is Joda's Days: a number of days.
type Days struct{ n int64 }

// Kind is KindDays.
func (Days) Kind() Kind { return KindDays }

// Days is the number of days (getDays).
func (d Days) Days() int64 { return d.n }

// JavaString is the ISO period, P31D.
func (d Days) JavaString() string { return "P" + strconv.FormatInt(d.n, 10) + "D" }

func (d Days) call(m *Machine, name string, args []Value) (Value, error) {
	return jDaysCall(m, &d, name, args)
}

// jDaysCall calls a method of d (nil for the class Days, which holds null:
// daysBetween, a static method, works on both).
func jDaysCall(m *Machine, d *Days, name string, args []Value) (Value, error) {
	if err := m.Charge(jCallCost, 0); err != nil {
		return nil, err
	}
	switch {
	case len(args) == 0 && name == "getDays":
		if d == nil {
			return nil, jNullReceiver("Days", name, 0)
		}
		return Long(d.n), nil
	case len(args) == 2 && name == "daysBetween":
		return jDaysBetween(args[0], args[1])
	}
	return nil, jUnsupportedCall(KindDays, name, args)
}

// jDaysBetween is Days.daysBetween(start, end): whole days between the
// local times of both instants in start's zone.
func jDaysBetween(a, b Value) (Value, error) {
	var ends [2]DateTime
	for i, v := range [...]Value{a, b} {
		d, ok := v.(DateTime)
		if !ok {
			if n, isNull := v.(TypedNull); isNull && n.Of == KindDateTime {
				return nil, errors.New("ReadableInstant objects must not be null")
			}
			return nil, fmt.Errorf("%s cannot be cast to a DateTime", jKindName(v))
		}
		ends[i] = d
	}
	z := ends[0].zone
	ls, err := z.toLocal(ends[0].ms)
	if err != nil {
		return nil, err
	}
	le, err := z.toLocal(ends[1].ms)
	if err != nil {
		return nil, err
	}
	diff := le - ls
	if (le >= 0) != (ls >= 0) && (diff >= 0) != (le >= 0) {
		return nil, errJOverflow
	}
	n := diff / jMsDay
	if n < math.MinInt32 || n > math.MaxInt32 {
		return nil, fmt.Errorf("Value cannot fit in an int: %d", n)
	}
	return Days{n: n}, nil
}

// ---- the class-level entry points dispatch.go calls

// callStaticJoda calls a static method of DateTime, DateTimeZone,
// DateTimeFormat, DateTimeFormatter, Property or Days. As in SEL, a class
// stands for a null object of its type: the static methods (DateTime.parse,
// DateTimeZone.forID, DateTimeFormat.forPattern, Days.daysBetween) work,
// the others fail.
func callStaticJoda(m *Machine, class, name string, args []Value) (v Value, ok bool, err error) {
	switch class {
	case "DateTime":
		v, err = jDateTimeCall(m, nil, name, args)
	case "DateTimeZone":
		v, err = jZoneCall(m, nil, name, args)
	case "DateTimeFormat", "DateTimeFormatter":
		v, err = jFormatterCall(m, nil, name, args)
	case "Property":
		v, err = jPropertyCall(m, nil, name, args)
	case "Days":
		v, err = jDaysCall(m, nil, name, args)
	default:
		return nil, false, nil
	}
	return v, true, err
}

// jClassKinds are the kinds of the Joda classes.
var jClassKinds = map[string]Kind{
	"DateTime": KindDateTime, "DateTimeZone": KindDateTimeZone, "DateTimeFormat": KindDateTimeFormatter,
	"DateTimeFormatter": KindDateTimeFormatter, "Property": KindDateTimeProperty, "Days": KindDays,
}

// fieldStaticJoda reads a static field of a Joda class: DateTimeZone.UTC
// is the only one.
func fieldStaticJoda(m *Machine, class, name string) (v Value, ok bool, err error) {
	k, ok := jClassKinds[class]
	if !ok {
		return nil, false, nil
	}
	if err := m.Charge(1, 0); err != nil {
		return nil, true, err
	}
	if k == KindDateTimeZone && name == "UTC" {
		return UTCZone(), true, nil
	}
	return nil, true, Unsupported("%s DO NOT support accessing field: %s", k, name)
}

// constructJoda is new DateTime(...); SEL constructs no other Joda type.
func constructJoda(m *Machine, class string, args []Value) (v Value, ok bool, err error) {
	if class != "DateTime" {
		return nil, false, nil
	}
	v, err = jNewDateTime(m, args)
	return v, true, err
}

// jZoneCall calls a method of zone z (nil for the class DateTimeZone).
func jZoneCall(m *Machine, z *DateTimeZone, name string, args []Value) (Value, error) {
	if err := m.Charge(jCallCost, 0); err != nil {
		return nil, err
	}
	if len(args) == 1 {
		switch name {
		case "forID":
			id, isNull, err := jCastString(args[0])
			if err != nil {
				return nil, err
			}
			if isNull {
				return UTCZone(), nil // forID(null) is the default zone
			}
			return jZoneForID(m, id)
		case "getOffset":
			ms, err := jCastInstant(m, args[0])
			if err != nil {
				return nil, err
			}
			if z == nil {
				return nil, jNullReceiver("DateTimeZone", name, 1)
			}
			return Long(z.offset(ms)), nil
		}
	}
	return nil, jUnsupportedCall(KindDateTimeZone, name, args)
}

// ---- arguments

// jIntArg is an int parameter of a Joda method: a long within Java's int
// range (SEL passes a long above it as a Long, which fails, and truncates
// one below it; both fail here).
func jIntArg(v Value) (int64, error) {
	x, ok := v.(Long)
	if !ok {
		return 0, fmt.Errorf("the argument must be an int, not %s", jKindName(v))
	}
	if x < math.MinInt32 || x > math.MaxInt32 {
		return 0, fmt.Errorf("%d is outside Java's int range", int64(x))
	}
	return int64(x), nil
}

// jUnboxString is a String parameter SEL passes unboxed: null for null.
func jUnboxString(v Value) (s string, isNull bool, err error) {
	switch x := v.(type) {
	case String:
		return string(x), false, nil
	case Null, TypedNull:
		return "", true, nil
	}
	return "", false, fmt.Errorf("the argument must be a String, not %s", jKindName(v))
}

// jCastString is an argument SEL casts to a String (a bare null fails).
func jCastString(v Value) (s string, isNull bool, err error) {
	switch x := v.(type) {
	case String:
		return string(x), false, nil
	case TypedNull:
		if x.Of == KindString {
			return "", true, nil
		}
	}
	return "", false, fmt.Errorf("the argument must be a String, not %s", jKindName(v))
}

// jIsNull reports whether v is null: null itself or a variable of a
// reference type holding null (SEL unboxes both to Java's null).
func jIsNull(v Value) bool {
	switch v.(type) {
	case nil, Null, TypedNull:
		return true
	}
	return false
}

// jUnboxZone is a DateTimeZone parameter: null for the default zone.
func jUnboxZone(v Value) (DateTimeZone, error) {
	if z, ok := v.(DateTimeZone); ok {
		return z, nil
	}
	if jIsNull(v) {
		return UTCZone(), nil
	}
	return DateTimeZone{}, fmt.Errorf("the argument must be a DateTimeZone, not %s", jKindName(v))
}

// jCastZone is an argument SEL casts to a DateTimeZone: a DateTimeZone
// variable holding null is the default zone, a bare null fails.
func jCastZone(v Value) (DateTimeZone, error) {
	if z, ok := v.(DateTimeZone); ok {
		return z, nil
	}
	if n, ok := v.(TypedNull); ok && n.Of == KindDateTimeZone {
		return UTCZone(), nil
	}
	return DateTimeZone{}, fmt.Errorf("%s cannot be cast to a DateTimeZone", jKindName(v))
}

// jUnboxInstant is a ReadableInstant parameter: null is now.
func jUnboxInstant(m *Machine, v Value) (int64, error) {
	if d, ok := v.(DateTime); ok {
		return d.ms, nil
	}
	if jIsNull(v) {
		return m.Now().UnixMilli(), nil
	}
	return 0, fmt.Errorf("the argument must be a DateTime, not %s", jKindName(v))
}

// jCastInstant is an argument SEL casts to a DateTime: a DateTime variable
// holding null is now, a bare null fails.
func jCastInstant(m *Machine, v Value) (int64, error) {
	if d, ok := v.(DateTime); ok {
		return d.ms, nil
	}
	if n, ok := v.(TypedNull); ok && n.Of == KindDateTime {
		return m.Now().UnixMilli(), nil
	}
	return 0, fmt.Errorf("%s cannot be cast to a DateTime", jKindName(v))
}

func jKindName(v Value) string {
	if v == nil {
		return KindNull.String()
	}
	return v.Kind().String()
}

// jNullReceiver is Java's NullPointerException of a method called on a
// class standing for a null object.
func jNullReceiver(class, name string, n int) error {
	return fmt.Errorf("Failed calling method %s%d: %s.%s needs a %s object, not the class", name, n, class, name, class)
}

// jUnsupportedCall is SEL's UnsupportedOperationException for a method it
// does not have.
func jUnsupportedCall(k Kind, name string, args []Value) error {
	return Unsupported("%s DO NOT support calling method: %s with args: %s", k, name, "["+jArgsString(args)+"]")
}

// jArgsString lists args as Java's Arrays.toString would, each cut short.
func jArgsString(args []Value) string {
	parts := make([]string, len(args))
	for i, a := range args {
		s := JavaString(a)
		if len(s) > 40 {
			s = s[:40] + "..."
		}
		parts[i] = s
	}
	return strings.Join(parts, ", ")
}

// jStringResult is a string a method returns, checked against the length
// limit and charged.
func jStringResult(m *Machine, s string) (Value, error) {
	if err := m.CheckString(len(s)); err != nil {
		return nil, err
	}
	if err := m.Charge(int64(len(s)), int64(len(s))); err != nil {
		return nil, err
	}
	return String(s), nil
}
