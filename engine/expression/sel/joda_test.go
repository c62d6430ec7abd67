package sel

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

// The cases of Maestro's SelJodaDateTimeTest, SelJodaDateTimeZoneTest,
// SelJodaDateTimeFormatterTest, SelJodaDateTimePropertyTest and
// SelJodaDateTimeDaysTest, the Joda calls of Maestro's samples and SEL's
// docs, and Joda-Time's own semantics (patterns, parsing, DST, ranges),
// called through the package's dispatch (Machine.call, construct, field).
// The expected values beyond SEL's tests were computed with joda-time
// 2.13.0 on OpenJDK 17 (-Duser.timezone=UTC, Locale.US); where its zone
// data and Go's differ (historic abbreviations), the cases avoid them.

// jtNow is the clock of SEL's Joda tests: DateTimeUtils.setCurrentMillisFixed(12345L).
var jtNow = time.UnixMilli(12345).UTC()

func jtMachine() *Machine { return newMachine(Config{Now: jtNow}) }

// jtShow prints a value as SEL's tests do: "TYPE: value".
func jtShow(v Value) string { return v.Kind().String() + ": " + JavaString(v) }

func jtZone(t *testing.T, m *Machine, id string) DateTimeZone {
	t.Helper()
	z, err := ZoneForID(m, id)
	if err != nil {
		t.Fatalf("forID(%q): %v", id, err)
	}
	return z
}

// jtCall calls method name of recv (a value, or a Class for statics).
func jtCall(t *testing.T, m *Machine, recv Value, name string, args ...Value) Value {
	t.Helper()
	v, err := m.call(recv, name, args)
	if err != nil {
		t.Fatalf("%s.%s%v: %v", JavaString(recv), name, args, err)
	}
	return v
}

func jtNew(t *testing.T, m *Machine, args ...Value) DateTime {
	t.Helper()
	v, err := m.construct("DateTime", args)
	if err != nil {
		t.Fatalf("new DateTime%v: %v", args, err)
	}
	return v.(DateTime)
}

func jtFormatter(t *testing.T, m *Machine, pattern string) DateTimeFormatter {
	t.Helper()
	return jtCall(t, m, Class{"DateTimeFormat"}, "forPattern", String(pattern)).(DateTimeFormatter)
}

// jtFields is new DateTime(y, mo, d, h, mi, s, ms, zone).
func jtFields(t *testing.T, m *Machine, zone string, f ...int64) DateTime {
	t.Helper()
	args := make([]Value, 0, 8)
	for _, n := range f {
		args = append(args, Long(n))
	}
	return jtNew(t, m, append(args, jtZone(t, m, zone))...)
}

// ---- SelJodaDateTimeTest

func TestJodaDateTimeIntArgCalls(t *testing.T) {
	m := jtMachine()
	one := DateTime{ms: 12345, zone: UTCZone()} // Java's new DateTime(DateTimeZone.UTC) at 12345
	cases := [][2]string{
		{"minusYears", "DATETIME: 1969-01-01T00:00:12.345Z"},
		{"plusYears", "DATETIME: 1971-01-01T00:00:12.345Z"},
		{"minusMonths", "DATETIME: 1969-12-01T00:00:12.345Z"},
		{"plusMonths", "DATETIME: 1970-02-01T00:00:12.345Z"},
		{"minusWeeks", "DATETIME: 1969-12-25T00:00:12.345Z"},
		{"plusWeeks", "DATETIME: 1970-01-08T00:00:12.345Z"},
		{"minusDays", "DATETIME: 1969-12-31T00:00:12.345Z"},
		{"plusDays", "DATETIME: 1970-01-02T00:00:12.345Z"},
		{"minusHours", "DATETIME: 1969-12-31T23:00:12.345Z"},
		{"plusHours", "DATETIME: 1970-01-01T01:00:12.345Z"},
		{"minusMinutes", "DATETIME: 1969-12-31T23:59:12.345Z"},
		{"plusMinutes", "DATETIME: 1970-01-01T00:01:12.345Z"},
		{"minusSeconds", "DATETIME: 1970-01-01T00:00:11.345Z"},
		{"plusSeconds", "DATETIME: 1970-01-01T00:00:13.345Z"},
		{"minusMillis", "DATETIME: 1970-01-01T00:00:12.344Z"},
		{"plusMillis", "DATETIME: 1970-01-01T00:00:12.346Z"},
		{"withYear", "DATETIME: 0001-01-01T00:00:12.345Z"},
		{"withWeekyear", "DATETIME: 0001-01-04T00:00:12.345Z"},
		{"withMonthOfYear", "DATETIME: 1970-01-01T00:00:12.345Z"},
		{"withWeekOfWeekyear", "DATETIME: 1970-01-01T00:00:12.345Z"},
		{"withDayOfYear", "DATETIME: 1970-01-01T00:00:12.345Z"},
		{"withDayOfMonth", "DATETIME: 1970-01-01T00:00:12.345Z"},
		{"withDayOfWeek", "DATETIME: 1969-12-29T00:00:12.345Z"},
		{"withHourOfDay", "DATETIME: 1970-01-01T01:00:12.345Z"},
		{"withMinuteOfHour", "DATETIME: 1970-01-01T00:01:12.345Z"},
		{"withSecondOfMinute", "DATETIME: 1970-01-01T00:00:01.345Z"},
		{"withMillisOfSecond", "DATETIME: 1970-01-01T00:00:12.001Z"},
		{"withMillisOfDay", "DATETIME: 1970-01-01T00:00:00.001Z"},
	}
	for _, c := range cases {
		if got := jtShow(jtCall(t, m, one, c[0], Long(1))); got != c[1] {
			t.Errorf("%s(1) = %q, want %q", c[0], got, c[1])
		}
	}
}

func TestJodaDateTimeOneArgCalls(t *testing.T) {
	m := jtMachine()
	one := DateTime{ms: 12345, zone: UTCZone()}
	another := jtNew(t, m, String("2019-01-01"), UTCZone())
	fmtUTC := jtCall(t, m, jtFormatter(t, m, "yyyyMMdd"), "withZone", UTCZone())
	cases := []struct {
		recv Value
		name string
		args []Value
		want string
	}{
		{one, "toString", []Value{String("yyyy")}, "STRING: 1970"},
		{Class{"DateTime"}, "parse", []Value{String("20190101"), fmtUTC}, "DATETIME: 2019-01-01T00:00:00.000Z"},
		{one, "withZone", []Value{jtZone(t, m, "UTC")}, "DATETIME: 1970-01-01T00:00:12.345Z"},
		{one, "isAfter", []Value{another}, "BOOLEAN: false"},
		{one, "isBefore", []Value{another}, "BOOLEAN: true"},
		{one, "isEqual", []Value{another}, "BOOLEAN: false"},
		{one, "withTimeAtStartOfDay", nil, "DATETIME: 1970-01-01T00:00:00.000Z"},
		{one, "toDateTime", []Value{jtZone(t, m, "UTC")}, "DATETIME: 1970-01-01T00:00:12.345Z"},
		// beyond SelJodaDateTimeTest
		{one, "isEqual", []Value{jtNew(t, m, Long(12345))}, "BOOLEAN: true"},
		{one, "isAfter", []Value{Null{}}, "BOOLEAN: false"}, // Joda: null is now (12345)
		{one, "toString", []Value{Null{}}, "STRING: 1970-01-01T00:00:12.345Z"},
		{one, "withZone", []Value{TypedNull{Of: KindDateTimeZone}}, "DATETIME: 1970-01-01T00:00:12.345Z"},
		{one, "toDateTime", []Value{jtZone(t, m, "Asia/Tokyo")}, "DATETIME: 1970-01-01T09:00:12.345+09:00"},
	}
	for _, c := range cases {
		if got := jtShow(jtCall(t, m, c.recv, c.name, c.args...)); got != c.want {
			t.Errorf("%s%v = %q, want %q", c.name, c.args, got, c.want)
		}
	}
}

func TestJodaDateTimeNoArgCalls(t *testing.T) {
	m := jtMachine()
	one := DateTime{ms: 12345, zone: UTCZone()}
	cases := [][2]string{
		{"monthOfYear", "DATETIME_PROPERTY: Property[monthOfYear]"},
		{"weekyear", "DATETIME_PROPERTY: Property[weekyear]"},
		{"weekOfWeekyear", "DATETIME_PROPERTY: Property[weekOfWeekyear]"},
		{"dayOfYear", "DATETIME_PROPERTY: Property[dayOfYear]"},
		{"dayOfMonth", "DATETIME_PROPERTY: Property[dayOfMonth]"},
		{"dayOfWeek", "DATETIME_PROPERTY: Property[dayOfWeek]"},
		{"hourOfDay", "DATETIME_PROPERTY: Property[hourOfDay]"},
		{"minuteOfDay", "DATETIME_PROPERTY: Property[minuteOfDay]"},
		{"minuteOfHour", "DATETIME_PROPERTY: Property[minuteOfHour]"},
		{"secondOfDay", "DATETIME_PROPERTY: Property[secondOfDay]"},
		{"secondOfMinute", "DATETIME_PROPERTY: Property[secondOfMinute]"},
		{"millisOfDay", "DATETIME_PROPERTY: Property[millisOfDay]"},
		{"millisOfSecond", "DATETIME_PROPERTY: Property[millisOfSecond]"},
		{"getMillis", "LONG: 12345"},
		{"getYear", "LONG: 1970"},
		{"getHourOfDay", "LONG: 0"},
		{"getWeekOfWeekyear", "LONG: 1"},
		{"getWeekyear", "LONG: 1970"},
		{"getDayOfWeek", "LONG: 4"},
		{"getDayOfMonth", "LONG: 1"},
		{"getDayOfYear", "LONG: 1"},
		{"getMillisOfDay", "LONG: 12345"},
		{"getMillisOfSecond", "LONG: 345"},
		{"getMinuteOfDay", "LONG: 0"},
		{"getMinuteOfHour", "LONG: 0"},
		{"getSecondOfMinute", "LONG: 12"},
		{"getMonthOfYear", "LONG: 1"},
		{"getSecondOfDay", "LONG: 12"},
		{"toString", "STRING: 1970-01-01T00:00:12.345Z"},
	}
	for _, c := range cases {
		if got := jtShow(jtCall(t, m, one, c[0])); got != c[1] {
			t.Errorf("%s() = %q, want %q", c[0], got, c[1])
		}
	}
}

func TestJodaDateTimeInvalidCalls(t *testing.T) {
	m := jtMachine()
	one := DateTime{ms: 12345, zone: UTCZone()}
	// SelJodaDateTimeTest.testInvalidCallArg: an error, not ErrUnsupported
	if _, err := m.call(one, "minusYears", []Value{Null{}}); err == nil || errors.Is(err, ErrUnsupported) {
		t.Errorf("minusYears(null): want a call error, got %v", err)
	}
	unsupported := []struct {
		recv Value
		name string
		args []Value
	}{
		{one, "invalid", nil}, // SelJodaDateTimeTest.testInvalidCallMethod
		{one, "getClass", nil},
		{one, "hashCode", nil},
		{one, "plusDays", nil},
		{one, "plusDays", []Value{Long(1), Long(2)}},
		{one, "getMonthOfYear", []Value{Long(1)}},
		{Class{"DateTime"}, "now", nil}, // SEL has no DateTime.now(): new DateTime()
		{Class{"DateTime"}, "parse", []Value{String("2019")}},
		{one, "getAsShortText", nil},
	}
	for _, c := range unsupported {
		if _, err := m.call(c.recv, c.name, c.args); !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s%v: want ErrUnsupported, got %v", c.name, c.args, err)
		}
	}
	failing := []struct {
		recv Value
		name string
		args []Value
	}{
		{Class{"DateTime"}, "getMillis", nil}, // the class holds null
		{Class{"DateTime"}, "plusDays", []Value{Long(1)}},
		{one, "parse", []Value{String("2019"), jtFormatter(t, m, "yyyy")}}, // static only
		{one, "plusDays", []Value{Double(1)}},
		{one, "plusDays", []Value{String("1")}},
		{one, "plusDays", []Value{Long(math.MaxInt32 + 1)}},
		{one, "plusDays", []Value{Long(math.MinInt32 - 1)}},
		{one, "withZone", []Value{String("UTC")}},
		{one, "isAfter", []Value{Long(1)}},
		{one, "toString", []Value{Long(1)}},
		{one, "withMonthOfYear", []Value{Long(13)}},
		{one, "withDayOfMonth", []Value{Long(32)}},
		{one, "withHourOfDay", []Value{Long(24)}},
		{Class{"DateTime"}, "parse", []Value{Long(2019), jtFormatter(t, m, "yyyy")}},
		{Class{"DateTime"}, "parse", []Value{String("2019"), String("yyyy")}},
	}
	for _, c := range failing {
		_, err := m.call(c.recv, c.name, c.args)
		if err == nil || errors.Is(err, ErrUnsupported) {
			t.Errorf("%s%v: want a call error, got %v", c.name, c.args, err)
		}
	}
}

func TestJodaDateTimeConstructors(t *testing.T) {
	m := newMachine(Config{Now: time.Date(2021, 3, 4, 5, 6, 7, 89_000_000, time.UTC)})
	la := jtZone(t, m, "America/Los_Angeles")
	cases := []struct {
		args []Value
		want string
	}{
		{nil, "2021-03-04T05:06:07.089Z"}, // now, in the default zone UTC
		{[]Value{Long(0)}, "1970-01-01T00:00:00.000Z"},
		{[]Value{Long(-1)}, "1969-12-31T23:59:59.999Z"},
		{[]Value{String("2019-01-01")}, "2019-01-01T00:00:00.000Z"},
		{[]Value{Null{}}, "2021-03-04T05:06:07.089Z"},
		{[]Value{TypedNull{Of: KindString}}, "2021-03-04T05:06:07.089Z"},
		{[]Value{String("2019-01-01T10:00:00Z"), la}, "2019-01-01T02:00:00.000-08:00"},
		{[]Value{String("2019-01-01"), la}, "2019-01-01T00:00:00.000-08:00"},
		{[]Value{Long(0), la}, "1969-12-31T16:00:00.000-08:00"},
		{[]Value{Null{}, la}, "2021-03-03T21:06:07.089-08:00"},
		{[]Value{Long(0), TypedNull{Of: KindDateTimeZone}}, "1970-01-01T00:00:00.000Z"},
		{[]Value{DateTime{ms: 0, zone: la}}, "1969-12-31T16:00:00.000-08:00"},
		{[]Value{DateTime{ms: 0, zone: la}, UTCZone()}, "1970-01-01T00:00:00.000Z"},
		{[]Value{Long(2019), Long(1), Long(2), Long(3), Long(4), Long(5), Long(6), UTCZone()}, "2019-01-02T03:04:05.006Z"},
		{[]Value{Long(2019), Long(7), Long(4), Long(15), Long(6), Long(7), Long(89), la}, "2019-07-04T15:06:07.089-07:00"},
		{[]Value{Long(-1), Long(1), Long(1), Long(0), Long(0), Long(0), Long(0), UTCZone()}, "-0001-01-01T00:00:00.000Z"},
		{[]Value{Long(12345), Long(1), Long(1), Long(0), Long(0), Long(0), Long(0), UTCZone()}, "12345-01-01T00:00:00.000Z"},
		// ISO strings as Joda's dateTimeParser reads them
		{[]Value{String("2019-01-01T10:00:00.123+05:30")}, "2019-01-01T04:30:00.123Z"},
		{[]Value{String("2019-01-01T10:00:00,5Z")}, "2019-01-01T10:00:00.500Z"},
		{[]Value{String("2019-01-01T10:30.5")}, "2019-01-01T10:30:30.000Z"},
		{[]Value{String("2019-01-01T10.25")}, "2019-01-01T10:15:00.000Z"},
		{[]Value{String("2019-01-01T10")}, "2019-01-01T10:00:00.000Z"},
		{[]Value{String("2019-01-01T")}, "2019-01-01T00:00:00.000Z"},
		{[]Value{String("2019-01-01T10:00-08")}, "2019-01-01T18:00:00.000Z"},
		{[]Value{String("2019-01")}, "2019-01-01T00:00:00.000Z"},
		{[]Value{String("2019")}, "2019-01-01T00:00:00.000Z"},
		{[]Value{String("2019-032")}, "2019-02-01T00:00:00.000Z"},
		{[]Value{String("2019-W01-1")}, "2018-12-31T00:00:00.000Z"},
		{[]Value{String("2020-W53")}, "2020-12-28T00:00:00.000Z"},
		{[]Value{String("T10:30")}, "1970-01-01T10:30:00.000Z"},
		{[]Value{String("t10:30z")}, "1970-01-01T10:30:00.000Z"},
		{[]Value{String("-0044-03-15")}, "-0044-03-15T00:00:00.000Z"},
	}
	for _, c := range cases {
		if got := JavaString(jtNew(t, m, c.args...)); got != c.want {
			t.Errorf("new DateTime%v = %q, want %q", c.args, got, c.want)
		}
	}
	bad := [][]Value{
		{String("2019-13-01")}, {String("2019-02-30")}, {String("abc")}, {String("2019-01-01T25:00")},
		{String("2019-01-01 10:00")}, {String("")}, {Double(1.5)}, {Boolean(true)}, {Long(0), Null{}},
		{Long(0), String("UTC")}, {Long(0), UTCZone(), UTCZone()},
		{UTCZone()}, // SEL's new DateTime(Object): no instant converter for a zone
		{Long(2019), Long(13), Long(1), Long(0), Long(0), Long(0), Long(0), UTCZone()},
		{Long(2019), Long(2), Long(29), Long(0), Long(0), Long(0), Long(0), UTCZone()},
		{Long(2019), Long(1), Long(1), Long(24), Long(0), Long(0), Long(0), UTCZone()},
		{Long(2019), Long(1), Long(1), Long(0), Long(0), Long(0), Long(1000), UTCZone()},
		{Long(1 << 40), Long(1), Long(1), Long(0), Long(0), Long(0), Long(0), UTCZone()},
		{Long(2019), Long(1), Long(1), Long(0), Long(0), Long(0), Double(0), UTCZone()},
		// a local time in the DST gap (IllegalInstantException)
		{Long(2019), Long(3), Long(10), Long(2), Long(30), Long(0), Long(0), la},
	}
	for _, args := range bad {
		if v, err := m.construct("DateTime", args); err == nil {
			t.Errorf("new DateTime%v = %s, want an error", args, JavaString(v))
		}
	}
	if _, err := m.construct("DateTime", []Value{String("2019-13-01")}); err == nil ||
		!strings.Contains(err.Error(), "Value 13 for monthOfYear must be in the range [1,12]") {
		t.Errorf("new DateTime('2019-13-01'): %v", err)
	}
	if _, err := m.construct("DateTime", []Value{String("abc")}); err == nil ||
		err.Error() != `Invalid format: "abc"` {
		t.Errorf("new DateTime('abc'): %v", err)
	}
	for _, class := range []string{"DateTimeZone", "DateTimeFormat", "DateTimeFormatter", "Property", "Days", "Foo"} {
		if _, ok, _ := constructJoda(m, class, nil); ok {
			t.Errorf("new %s(): constructJoda should leave it to dispatch (unsupported)", class)
		}
	}
}

// ---- SelJodaDateTimeZoneTest

func TestJodaZone(t *testing.T) {
	m := jtMachine()
	one := UTCZone()
	another := jtZone(t, m, "America/Los_Angeles")
	if got := jtShow(another); got != "DATETIME_ZONE: America/Los_Angeles" {
		t.Errorf("zone = %q", got)
	}
	at0 := DateTime{ms: 0, zone: another}
	cases := []struct {
		recv Value
		name string
		args []Value
		want string
	}{
		{one, "forID", []Value{String("UTC")}, "DATETIME_ZONE: UTC"},
		{one, "getOffset", []Value{at0}, "LONG: 0"},
		{another, "getOffset", []Value{at0}, "LONG: -28800000"},
		{Class{"DateTimeZone"}, "forID", []Value{String("UTC")}, "DATETIME_ZONE: UTC"},
		{Class{"DateTimeZone"}, "forID", []Value{TypedNull{Of: KindString}}, "DATETIME_ZONE: UTC"},
		{another, "getOffset", []Value{DateTime{ms: 1562277600000, zone: one}}, "LONG: -25200000"},
		{another, "getOffset", []Value{TypedNull{Of: KindDateTime}}, "LONG: -28800000"}, // now
	}
	for _, c := range cases {
		if got := jtShow(jtCall(t, m, c.recv, c.name, c.args...)); got != c.want {
			t.Errorf("%s.%s%v = %q, want %q", JavaString(c.recv), c.name, c.args, got, c.want)
		}
	}
	if v, err := m.field(Class{"DateTimeZone"}, "UTC"); err != nil || jtShow(v) != "DATETIME_ZONE: UTC" {
		t.Errorf("DateTimeZone.UTC = %v, %v", v, err)
	}
	for _, f := range [][2]string{{"DateTimeZone", "ABC"}, {"DateTime", "UTC"}, {"Days", "ZERO"}} {
		if _, err := m.field(Class{f[0]}, f[1]); !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s.%s: want ErrUnsupported, got %v", f[0], f[1], err)
		}
	}
	if _, err := m.call(one, "invalid", []Value{Long(123)}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("invalid(123): want ErrUnsupported, got %v", err)
	}
	for _, c := range []struct {
		recv Value
		name string
		args []Value
	}{
		{Class{"DateTimeZone"}, "getOffset", []Value{at0}}, // the class holds null
		{one, "forID", []Value{Null{}}},
		{one, "forID", []Value{Long(1)}},
		{one, "getOffset", []Value{Null{}}},
		{one, "getOffset", []Value{Long(0)}},
	} {
		if _, err := m.call(c.recv, c.name, c.args); err == nil || errors.Is(err, ErrUnsupported) {
			t.Errorf("%s%v: want a call error, got %v", c.name, c.args, err)
		}
	}
}

func TestJodaZoneIDs(t *testing.T) {
	m := jtMachine()
	ids := [][2]string{
		{"UTC", "UTC"}, {"Z", "UTC"}, {"UT", "UTC"}, {"+00:00", "UTC"}, {"+00", "UTC"}, {"-00:00", "UTC"},
		{"GMT", "Etc/GMT"}, {"Etc/UTC", "Etc/UTC"}, {"Zulu", "Etc/UTC"}, {"Europe/London", "Europe/London"},
		{"US/Pacific", "America/Los_Angeles"}, {"Asia/Calcutta", "Asia/Kolkata"}, {"Asia/Kolkata", "Asia/Kolkata"},
		{"Europe/Kiev", "Europe/Kyiv"}, {"EST5EDT", "America/New_York"}, {"EST", "America/Panama"}, {"Etc/GMT+5", "Etc/GMT+5"},
		{"+01:23", "+01:23"}, {"GMT+01:23", "+01:23"}, {"UTC+01:23", "+01:23"}, {"UT+01:23", "+01:23"},
		{"-02:00", "-02:00"}, {"-07:05:34.0", "-07:05:34"}, {"+0530", "+05:30"}, {"-08", "-08:00"},
		{"+23:59:59.999", "+23:59:59.999"}, {"+01:00:00.5", "+01:00:00.500"},
	}
	for _, c := range ids {
		if got := jtZone(t, m, c[0]).ID(); got != c[1] {
			t.Errorf("forID(%q) = %q, want %q", c[0], got, c[1])
		}
	}
	if off := jtZone(t, m, "-07:05:34.0").Offset(0); off != -(7*3600000 + 5*60000 + 34000) {
		t.Errorf("offset of -07:05:34 = %d", off)
	}
	bad := []string{
		"", "SST", "europe/london", "Europe/UK", "+", "+0", "+5", "+24:00", "+99:00", "-23:60", "+05:30x",
		"../../etc/passwd", "/etc/passwd", "Europe/../../etc/passwd", "America/../../../etc/passwd", "Local",
		"localtime", "posixrules", "posix/America/New_York", "right/UTC", "zone.tab", "Europe//London",
		"Europe/", "America/Los_Angeles\x00", "C:\\Windows", strings.Repeat("A", 100), strings.Repeat("Europe/", 40),
		"America/Los Angeles", "\u00dcTC",
	}
	for _, id := range bad {
		z, err := ZoneForID(m, id)
		if err == nil {
			t.Errorf("forID(%q) = %q, want an error", id, z.ID())
			continue
		}
		if !strings.Contains(err.Error(), "is not recognised") && !strings.HasPrefix(err.Error(), "Invalid format: ") {
			t.Errorf("forID(%q): %v", id, err)
		}
	}
}

// ---- SelJodaDateTimeFormatterTest

func TestJodaFormatterCalls(t *testing.T) {
	m := jtMachine()
	one := jtCall(t, m, jtFormatter(t, m, "yyyy"), "withZone", UTCZone()).(DateTimeFormatter) // withZoneUTC()
	another := jtFormatter(t, m, "yyyyMMdd")
	res := jtCall(t, m, one, "withZone", UTCZone()).(DateTimeFormatter)
	if z, ok := res.Zone(); !ok || z.ID() != "UTC" {
		t.Errorf("withZone(UTC).getZone() = %v, %v", z.ID(), ok)
	}
	cases := []struct {
		recv Value
		name string
		arg  Value
		want string
	}{
		{one, "parseDateTime", String("2019"), "DATETIME: 2019-01-01T00:00:00.000Z"},
		{one, "parseDateTime", Long(2019), "DATETIME: 2019-01-01T00:00:00.000Z"},
		{one, "parseMillis", String("2019"), "LONG: 1546300800000"},
		{one, "print", Long(12345), "STRING: 1970"},
		{another, "print", DateTime{ms: 12345, zone: UTCZone()}, "STRING: 19700101"},
		{another, "print", TypedNull{Of: KindDateTime}, "STRING: 19700101"}, // null prints now
	}
	for _, c := range cases {
		if got := jtShow(jtCall(t, m, c.recv, c.name, c.arg)); got != c.want {
			t.Errorf("%s(%v) = %q, want %q", c.name, c.arg, got, c.want)
		}
	}
	if p := jtCall(t, m, one, "forPattern", String("yyyyMMdd")).(DateTimeFormatter); p.Pattern() != another.Pattern() {
		t.Errorf("forPattern on an instance = %q", p.Pattern())
	}
	// SelJodaDateTimeFormatterTest.testInvalidCallArg: ClassCastException
	if _, err := m.call(one, "withZone", []Value{Null{}}); err == nil || errors.Is(err, ErrUnsupported) {
		t.Errorf("withZone(null): want a call error, got %v", err)
	}
	for _, c := range []struct {
		name string
		args []Value
	}{{"invalid", nil}, {"print", []Value{Double(1)}}, {"parseDateTime", []Value{Double(2019)}},
		{"print", nil}, {"withZone", []Value{UTCZone(), UTCZone()}}} {
		if _, err := m.call(one, c.name, c.args); !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s%v: want ErrUnsupported, got %v", c.name, c.args, err)
		}
	}
	for _, c := range []struct {
		recv Value
		name string
		args []Value
	}{
		{Class{"DateTimeFormat"}, "print", []Value{Long(0)}}, // the class holds null
		{Class{"DateTimeFormatter"}, "parseDateTime", []Value{String("2019")}},
		{Class{"DateTimeFormat"}, "withZone", []Value{UTCZone()}},
		{one, "parseMillis", []Value{Long(2019)}},
		{one, "parseMillis", []Value{TypedNull{Of: KindString}}},
		{one, "parseDateTime", []Value{TypedNull{Of: KindString}}},
		{one, "forPattern", []Value{Null{}}},
		{one, "forPattern", []Value{String("")}},
		{one, "withZone", []Value{String("UTC")}},
	} {
		if _, err := m.call(c.recv, c.name, c.args); err == nil || errors.Is(err, ErrUnsupported) {
			t.Errorf("%s%v: want a call error, got %v", c.name, c.args, err)
		}
	}
	// A formatter's zone: a DateTimeZone variable holding null clears it.
	cleared := jtCall(t, m, one, "withZone", TypedNull{Of: KindDateTimeZone}).(DateTimeFormatter)
	if _, ok := cleared.Zone(); ok {
		t.Errorf("withZone(null zone) kept a zone")
	}
	if got := JavaString(jtCall(t, m, cleared, "parseDateTime", String("2019"))); got != "2019-01-01T00:00:00.000Z" {
		t.Errorf("parse in the default zone = %q", got)
	}
	if !strings.HasPrefix(JavaString(one), "com.netflix.sel.type.SelJodaDateTimeFormatter@") {
		t.Errorf("formatter prints %q", JavaString(one))
	}
}

// ---- SelJodaDateTimePropertyTest

func TestJodaProperty(t *testing.T) {
	m := jtMachine()
	now := DateTime{ms: 12345, zone: UTCZone()}
	one := jtCall(t, m, now, "dayOfWeek")
	another := jtCall(t, m, now, "dayOfMonth")
	if jtShow(one) != "DATETIME_PROPERTY: Property[dayOfWeek]" || jtShow(another) != "DATETIME_PROPERTY: Property[dayOfMonth]" {
		t.Errorf("properties print %q, %q", jtShow(one), jtShow(another))
	}
	cases := [][2]string{
		{"getAsText", "STRING: Thursday"},
		{"withMinimumValue", "DATETIME: 1969-12-29T00:00:12.345Z"},
		{"withMaximumValue", "DATETIME: 1970-01-04T00:00:12.345Z"},
		{"get", "LONG: 4"},
	}
	for _, c := range cases {
		if got := jtShow(jtCall(t, m, one, c[0])); got != c[1] {
			t.Errorf("dayOfWeek().%s() = %q, want %q", c[0], got, c[1])
		}
	}
	for _, c := range []struct {
		name string
		args []Value
	}{{"getAsText", []Value{Null{}}}, {"getAsString", nil}, {"getAsShortText", nil}, {"set", []Value{Long(1)}}} {
		if _, err := m.call(one, c.name, c.args); !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s%v: want ErrUnsupported, got %v", c.name, c.args, err)
		}
	}
	if _, err := m.call(Class{"Property"}, "get", nil); err == nil || errors.Is(err, ErrUnsupported) {
		t.Errorf("Property.get(): want a call error, got %v", err)
	}
	// every property SEL has, on 2020-02-10T13:14:15.678Z (a Monday)
	d := DateTime{ms: 1581340455678, zone: UTCZone()}
	props := []struct{ name, text, get, min, max string }{
		{"monthOfYear", "February", "2", "2020-01-10T13:14:15.678Z", "2020-12-10T13:14:15.678Z"},
		{"weekOfWeekyear", "7", "7", "2019-12-30T13:14:15.678Z", "2020-12-28T13:14:15.678Z"},
		{"dayOfYear", "41", "41", "2020-01-01T13:14:15.678Z", "2020-12-31T13:14:15.678Z"},
		{"dayOfMonth", "10", "10", "2020-02-01T13:14:15.678Z", "2020-02-29T13:14:15.678Z"},
		{"dayOfWeek", "Monday", "1", "2020-02-10T13:14:15.678Z", "2020-02-16T13:14:15.678Z"},
		{"hourOfDay", "13", "13", "2020-02-10T00:14:15.678Z", "2020-02-10T23:14:15.678Z"},
		{"minuteOfDay", "794", "794", "2020-02-10T00:00:15.678Z", "2020-02-10T23:59:15.678Z"},
		{"minuteOfHour", "14", "14", "2020-02-10T13:00:15.678Z", "2020-02-10T13:59:15.678Z"},
		{"secondOfDay", "47655", "47655", "2020-02-10T00:00:00.678Z", "2020-02-10T23:59:59.678Z"},
		{"secondOfMinute", "15", "15", "2020-02-10T13:14:00.678Z", "2020-02-10T13:14:59.678Z"},
		{"millisOfDay", "47655678", "47655678", "2020-02-10T00:00:00.000Z", "2020-02-10T23:59:59.999Z"},
		{"millisOfSecond", "678", "678", "2020-02-10T13:14:15.000Z", "2020-02-10T13:14:15.999Z"},
		{"weekyear", "2020", "2020", "", ""},
	}
	for _, p := range props {
		prop := jtCall(t, m, d, p.name)
		for _, c := range [][2]string{{"getAsText", p.text}, {"get", p.get}, {"withMinimumValue", p.min},
			{"withMaximumValue", p.max}} {
			if c[1] == "" {
				continue
			}
			if got := JavaString(jtCall(t, m, prop, c[0])); got != c[1] {
				t.Errorf("%s().%s() = %q, want %q", p.name, c[0], got, c[1])
			}
		}
	}
}

// ---- SelJodaDateTimeDaysTest

func TestJodaDays(t *testing.T) {
	m := jtMachine()
	one, another := Days{n: 2}, Days{n: 5}
	if jtShow(another) != "DATETIME_DAYS: P5D" {
		t.Errorf("Days(5) = %q", jtShow(another))
	}
	if got := jtShow(jtCall(t, m, one, "getDays")); got != "LONG: 2" {
		t.Errorf("getDays() = %q", got)
	}
	jan := jtNew(t, m, String("2019-01-01"), UTCZone())
	feb := jtNew(t, m, String("2019-02-01"), UTCZone())
	if got := jtShow(jtCall(t, m, one, "daysBetween", jan, feb)); got != "DATETIME_DAYS: P31D" {
		t.Errorf("daysBetween = %q", got)
	}
	for _, name := range []string{"getDays", "getWeeks"} {
		args := []Value{}
		if name == "getDays" {
			args = []Value{Null{}}
		}
		if _, err := m.call(one, name, args); !errors.Is(err, ErrUnsupported) {
			t.Errorf("%s%v: want ErrUnsupported, got %v", name, args, err)
		}
	}
	la := jtZone(t, m, "America/Los_Angeles")
	cases := []struct {
		a, b Value
		want string
	}{
		{jan, feb, "P31D"},
		{feb, jan, "P-31D"},
		{jan, jan, "P0D"},
		{DateTime{ms: 1546336800000, zone: UTCZone()}, DateTime{ms: 1546419600000, zone: UTCZone()}, "P0D"}, // 23h
		// across the DST start, whole local days in the first's zone
		{jtFields(t, m, "America/Los_Angeles", 2019, 3, 9, 0, 0, 0, 0), jtFields(t, m, "America/Los_Angeles", 2019, 3, 11, 0, 0, 0, 0), "P2D"},
		{DateTime{ms: 0, zone: la}, DateTime{ms: 8 * 3600000, zone: UTCZone()}, "P0D"},
		{DateTime{ms: 0, zone: la}, DateTime{ms: 32 * 3600000, zone: UTCZone()}, "P1D"},
		{DateTime{ms: 0, zone: UTCZone()}, DateTime{ms: math.MaxInt64, zone: UTCZone()}, ""},
	}
	for _, c := range cases {
		v, err := m.call(Class{"Days"}, "daysBetween", []Value{c.a, c.b})
		if c.want == "" {
			if err == nil {
				t.Errorf("daysBetween(%s, %s) = %s, want an error", JavaString(c.a), JavaString(c.b), JavaString(v))
			}
			continue
		}
		if err != nil || JavaString(v) != c.want {
			t.Errorf("daysBetween(%s, %s) = %v, %v, want %s", JavaString(c.a), JavaString(c.b), v, err, c.want)
		}
	}
	for _, args := range [][]Value{{Null{}, jan}, {jan, TypedNull{Of: KindDateTime}}, {jan, Long(0)}, {String("x"), jan}} {
		if _, err := m.call(Class{"Days"}, "daysBetween", args); err == nil || errors.Is(err, ErrUnsupported) {
			t.Errorf("daysBetween%v: want a call error, got %v", args, err)
		}
	}
	if _, err := m.call(Class{"Days"}, "getDays", nil); err == nil || errors.Is(err, ErrUnsupported) {
		t.Errorf("Days.getDays(): want a call error, got %v", err)
	}
}

// ---- Maestro's samples and SEL's docs

func TestJodaCorpus(t *testing.T) {
	m := jtMachine()
	utc := jtCall(t, m, Class{"DateTimeZone"}, "forID", String("UTC"))
	// new DateTime(1569018000000).withZone(DateTimeZone.forID('UTC')).monthOfYear().getAsText();
	d := jtCall(t, m, jtNew(t, m, Long(1569018000000)), "withZone", utc)
	if got := JavaString(jtCall(t, m, jtCall(t, m, d, "monthOfYear"), "getAsText")); got != "September" {
		t.Errorf("monthOfYear().getAsText() = %q", got)
	}
	// DateTimeFormat.forPattern("yyyyMMddHH").withZone(DateTimeZone.forID("UTC"))
	//     .parseDateTime(TARGET_RUN_DATE + "00").minusDays(0).minusHours(0);
	// dt.withZone(DateTimeZone.forID("UTC")).toString("yyyyMMdd") and .toString("HH")
	f := jtCall(t, m, jtFormatter(t, m, "yyyyMMddHH"), "withZone", utc)
	for _, c := range []struct{ date, hours, ymd, hh string }{
		{"20210101", "00", "20210101", "00"}, {"20200229", "00", "20200229", "00"}, {"20210101", "23", "20210101", "23"},
	} {
		dt := jtCall(t, m, f, "parseDateTime", String(c.date+c.hours))
		dt = jtCall(t, m, jtCall(t, m, dt, "minusDays", Long(0)), "minusHours", Long(0))
		dt = jtCall(t, m, dt, "withZone", jtCall(t, m, Class{"DateTimeZone"}, "forID", String("UTC")))
		if got := JavaString(jtCall(t, m, dt, "toString", String("yyyyMMdd"))); got != c.ymd {
			t.Errorf("%s: yyyyMMdd = %q, want %q", c.date, got, c.ymd)
		}
		if got := JavaString(jtCall(t, m, dt, "toString", String("HH"))); got != c.hh {
			t.Errorf("%s: HH = %q, want %q", c.date, got, c.hh)
		}
	}
	// brief: forPattern('yyyyMMdd').withZone(forID('UTC')).parseDateTime('20210101').minusDays(1).toString('yyyyMMdd')
	dt := jtCall(t, m, jtCall(t, m, jtFormatter(t, m, "yyyyMMdd"), "withZone", utc), "parseDateTime", String("20210101"))
	if got := JavaString(jtCall(t, m, jtCall(t, m, dt, "minusDays", Long(1)), "toString", String("yyyyMMdd"))); got != "20201231" {
		t.Errorf("minusDays(1) = %q", got)
	}
	// class-function.md: DateTimeZone.UTC.getOffset(new DateTime()); Days.daysBetween(dt1, dt2).getDays()
	if got := JavaString(jtCall(t, m, UTCZone(), "getOffset", jtNew(t, m))); got != "0" {
		t.Errorf("UTC.getOffset(now) = %q", got)
	}
	dt1 := jtNew(t, m, String("2019-01-01"), UTCZone())
	dt2 := jtNew(t, m, String("2019-02-01"), UTCZone())
	if got := JavaString(jtCall(t, m, jtCall(t, m, Class{"Days"}, "daysBetween", dt1, dt2), "getDays")); got != "31" {
		t.Errorf("daysBetween(...).getDays() = %q", got)
	}
	// example.md 4 and 5
	m2 := newMachine(Config{Now: time.Date(2021, 3, 4, 5, 6, 7, 89_000_000, time.UTC)})
	now := jtCall(t, m2, jtNew(t, m2, Long(m2.Now().UnixMilli())), "withZone", UTCZone())
	if got := JavaString(jtCall(t, m2, now, "toString", String("yyyy-MM-dd HH:mm:ss.SSSSSS"))); got != "2021-03-04 05:06:07.089000" {
		t.Errorf("example 4 = %q", got)
	}
	pacific := jtCall(t, m2, jtNew(t, m2), "withZone", jtCall(t, m2, Class{"DateTimeZone"}, "forID", String("US/Pacific")))
	if mo, y := jtCall(t, m2, pacific, "getMonthOfYear"), jtCall(t, m2, pacific, "getYear"); mo != Long(3) || y != Long(2021) {
		t.Errorf("example 5: month %v year %v", mo, y)
	}
}

// TestJodaCorpusEval runs the corpus's Joda expressions whole, as Maestro
// evaluates them.
func TestJodaCorpusEval(t *testing.T) {
	cases := []struct {
		src  string
		vars map[string]Value
		want string
	}{
		{"new DateTime(1569018000000).withZone(DateTimeZone.forID('UTC')).monthOfYear().getAsText();", nil, "September"},
		{"\nDateTimeFormatter tz_dateint_hour_formatter = DateTimeFormat\n    .forPattern(\"yyyyMMddHH\")\n    .withZone(DateTimeZone.forID(\"UTC\"));\n\nDateTime dt = tz_dateint_hour_formatter\n    .parseDateTime(TARGET_RUN_DATE + \"00\")\n    .minusDays(0)\n    .minusHours(0);\n\ndt.withZone(DateTimeZone.forID(\"UTC\")).toString(\"yyyyMMdd\");\n",
			map[string]Value{"TARGET_RUN_DATE": Long(20210101)}, "20210101"},
		{"\nDateTimeFormatter tz_dateint_hour_formatter = DateTimeFormat\n    .forPattern(\"yyyyMMddHH\")\n    .withZone(DateTimeZone.forID(\"UTC\"));\n\nDateTime dt = tz_dateint_hour_formatter\n    .parseDateTime(TARGET_RUN_DATE + \"00\")\n    .minusDays(0)\n    .minusHours(0);\n\ndt.withZone(DateTimeZone.forID(\"UTC\")).toString(\"HH\");\n",
			map[string]Value{"TARGET_RUN_DATE": String("20210101")}, "00"},
		{"d = new DateTime(12345).withZone(DateTimeZone.UTC); d = new DateTime('2019-01-01', DateTimeZone.UTC); d;", nil, "2019-01-01T00:00:00.000Z"},
		{"z = DateTimeZone.UTC; z = DateTimeZone.forID('America/Los_Angeles'); z;", nil, "America/Los_Angeles"},
		{"Days d = Days.daysBetween(new DateTime(0), new DateTime(86400000L * 5)); d;", nil, "P5D"},
		{"p = new DateTime(12345).dayOfWeek(); p = new DateTime(12345).dayOfMonth(); p;", nil, "Property[dayOfMonth]"},
	}
	for _, c := range cases {
		p, err := Parse(c.src)
		if err != nil {
			t.Fatalf("%q: %v", c.src, err)
		}
		v, err := p.Eval(Config{Now: jtNow, Vars: c.vars})
		if err != nil || JavaString(v) != c.want {
			t.Errorf("%q = %v, %v, want %q", c.src, v, err, c.want)
		}
	}
	// SelJoda*Test.testInvalidAssignType / testInvalidAssignOps
	for _, src := range []string{"d = new DateTime(0); d = 'foo';", "d = new DateTime(0); d += 1;",
		"z = DateTimeZone.UTC; z = 'foo';", "z = DateTimeZone.UTC; z += 1;",
		"f = DateTimeFormat.forPattern('yyyy'); f = 'foo';", "d = Days.daysBetween(new DateTime(0), new DateTime(0)); d = 'foo';",
		"p = new DateTime(0).dayOfWeek(); p = 'foo';"} {
		p, err := Parse(src)
		if err != nil {
			continue
		}
		if v, err := p.Eval(Config{Now: jtNow}); err == nil {
			t.Errorf("%q = %v, want an error", src, JavaString(v))
		}
	}
}

// ---- patterns

// jtPrint is formatter pattern's print of d (DateTime.toString(pattern)).
func jtPrint(t *testing.T, m *Machine, d DateTime, pattern string) string {
	t.Helper()
	return JavaString(jtCall(t, m, d, "toString", String(pattern)))
}

func TestJodaPatternPrint(t *testing.T) {
	m := newMachine(Config{Now: time.Date(2021, 3, 4, 5, 6, 7, 89_000_000, time.UTC)})
	la := jtZone(t, m, "America/Los_Angeles")
	d := DateTime{ms: time.Date(2019, 7, 4, 22, 6, 7, 89_000_000, time.UTC).UnixMilli(), zone: la}
	cases := [][2]string{
		{"yyyy-MM-dd'T'HH:mm:ss.SSSZZ", "2019-07-04T15:06:07.089-07:00"},
		{"yyyy-MM-dd HH:mm:ss.SSS Z", "2019-07-04 15:06:07.089 -0700"},
		{"EEE, d MMM yyyy hh:mm a z", "Thu, 4 Jul 2019 03:06 PM PDT"},
		{"EEEE MMMM", "Thursday July"},
		{"E EE M MM MMM", "Thu Thu 7 07 Jul"},
		{"ZZZ", "America/Los_Angeles"},
		{"zzzz", "Pacific Daylight Time"},
		{"D DDDD w ww x xx e ee G C Y YY yy yyyyyy", "185 0185 27 27 2019 19 4 04 AD 20 2019 19 19 002019"},
		{"H k K h HH kk KK hh", "15 15 3 3 15 15 03 03"},
		{"m s mm ss", "6 7 06 07"},
		{"S SS SSS SSSS SSSSSS SSSSSSSSSSSSSSSSSSSS", "0 08 089 0890 089000 089000000000000"},
		{"''yyyy''", "'2019'"},
		{"'T'HH'h' 'o''clock'", "T15h o'clock"},
		{"yyyy'年'MM'月'dd'日'", "2019年07月04日"},
		{"yyyy/MM/dd @ HH.mm", "2019/07/04 @ 15.06"},
		{"'", "'"[:0]},
		{"yyyy'", "2019"},
		{"yyyyMMdd'T'HHmmssZ", "20190704T150607-0700"},
	}
	for _, c := range cases {
		if got := jtPrint(t, m, d, c[0]); got != c[1] {
			t.Errorf("toString(%q) = %q, want %q", c[0], got, c[1])
		}
	}
	utc := DateTime{ms: 0, zone: UTCZone()}
	for _, c := range [][2]string{
		{"Z ZZ ZZZ z zzzz", "+0000 +00:00 UTC UTC Coordinated Universal Time"},
		{"k K h a", "24 0 12 AM"},
		{"S SSS", "0 000"},
		{"G yyyy", "AD 1970"},
	} {
		if got := jtPrint(t, m, utc, c[0]); got != c[1] {
			t.Errorf("toString(%q) at 0 = %q, want %q", c[0], got, c[1])
		}
	}
	bc := jtFields(t, m, "UTC", -43, 3, 15, 0, 0, 0, 0)
	if got := jtPrint(t, m, bc, "G y Y yy C"); got != "BC -43 44 43 0" {
		t.Errorf("BC = %q", got)
	}
	// ISO's century drops the year's sign
	for _, c := range []struct {
		y    int64
		want string
	}{{-150, "1 -150 151"}, {-99, "0 -99 100"}, {0, "0 0 1"}, {1999, "19 1999 1999"}, {2000, "20 2000 2000"}} {
		if got := jtPrint(t, m, jtFields(t, m, "UTC", c.y, 1, 1, 0, 0, 0, 0), "C y Y"); got != c.want {
			t.Errorf("year %d: C y Y = %q, want %q", c.y, got, c.want)
		}
	}
	// zone names: the database's abbreviation, Java's names where it has
	// only an offset, Java's English long names
	jan, jul := time.Date(2019, 1, 15, 12, 0, 0, 0, time.UTC).UnixMilli(), time.Date(2019, 7, 15, 12, 0, 0, 0, time.UTC).UnixMilli()
	for _, c := range []struct {
		zone string
		ms   int64
		want string
	}{
		{"Europe/Paris", jan, "CET|Central European Standard Time|Europe/Paris"},
		{"Europe/Paris", jul, "CEST|Central European Summer Time|Europe/Paris"},
		{"Europe/London", jul, "BST|British Summer Time|Europe/London"},
		{"Asia/Tokyo", jul, "JST|Japan Standard Time|Asia/Tokyo"},
		{"Asia/Shanghai", jul, "CST|China Standard Time|Asia/Shanghai"},
		{"America/Chicago", jan, "CST|Central Standard Time|America/Chicago"},
		{"Australia/Sydney", jan, "AEDT|Australian Eastern Daylight Time|Australia/Sydney"},
		{"Asia/Singapore", jan, "SGT|Singapore Standard Time|Asia/Singapore"},
		{"America/Sao_Paulo", jan, "BRST|Brasilia Summer Time|America/Sao_Paulo"},
		{"Pacific/Chatham", jul, "CHAST|Chatham Standard Time|Pacific/Chatham"},
		{"Etc/GMT+5", jan, "-05:00|-05:00|Etc/GMT+5"},
		{"US/Pacific", jan, "PST|Pacific Standard Time|America/Los_Angeles"},
		{"CET", jan, "CET|Central European Standard Time|Europe/Brussels"},
		{"Asia/Kathmandu", jan, "NPT|Nepal Time|Asia/Kathmandu"},
	} {
		if got := jtPrint(t, m, DateTime{ms: c.ms, zone: jtZone(t, m, c.zone)}, "z|zzzz|ZZZ"); got != c.want {
			t.Errorf("%s: z|zzzz|ZZZ = %q, want %q", c.zone, got, c.want)
		}
	}
	kolkata := DateTime{ms: 0, zone: jtZone(t, m, "Asia/Kolkata")}
	if got := jtPrint(t, m, kolkata, "Z ZZ z zzzz"); got != "+0530 +05:30 IST India Standard Time" {
		t.Errorf("Kolkata = %q", got)
	}
	fixed := DateTime{ms: 0, zone: jtZone(t, m, "+05:30")}
	if got := jtPrint(t, m, fixed, "Z ZZ ZZZ z zzzz"); got != "+0530 +05:30 +05:30 +05:30 +05:30" {
		t.Errorf("fixed = %q", got)
	}
	// Los Angeles' local mean time before 1883 has seconds in its offset.
	lmt := DateTime{ms: time.Date(1870, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli(), zone: la}
	if got := JavaString(lmt); got != "1869-12-31T16:07:02.000-07:52:58" {
		t.Errorf("LMT = %q", got)
	}
	if got := jtPrint(t, m, lmt, "Z ZZ"); got != "-0752 -07:52" {
		t.Errorf("LMT offset = %q", got)
	}
}

func TestJodaPatternErrors(t *testing.T) {
	m := jtMachine()
	cases := []struct{ pattern, has string }{
		{"", "Invalid pattern specification"},
		{"yyyy-qq", "Illegal pattern component: qq"},
		{"yyyy-MM-dd u", "Illegal pattern component: u"},
		{"L", "'L'"}, {"Q", "Q"}, {"A", "A"}, {"c", "c"}, {"F", "F"}, {"W", "W"}, {"n", "n"}, {"V", "V"},
		{"X", "X"}, {"O", "O"}, {"B", "B"}, {"b", "b"}, {"g", "g"}, {"i", "i"}, {"j", "j"}, {"l", "l"},
		{"o", "o"}, {"p", "p"}, {"q", "q"}, {"r", "r"}, {"t", "t"}, {"v", "v"}, {"I", "I"}, {"J", "J"},
		{"N", "N"}, {"P", "P"}, {"R", "R"}, {"T", "T"}, {"U", "U"},
		{strings.Repeat("y", 257), "over the limit"},
		{strings.Repeat("'a'", 100), "over the limit"},
	}
	for _, c := range cases {
		_, err := m.call(Class{"DateTimeFormat"}, "forPattern", []Value{String(c.pattern)})
		if err == nil || !strings.Contains(err.Error(), c.has) {
			t.Errorf("forPattern(%.20q): %v, want an error with %q", c.pattern, err, c.has)
		}
		d := DateTime{ms: 0, zone: UTCZone()}
		if _, err := m.call(d, "toString", []Value{String(c.pattern)}); err == nil && c.pattern != "" {
			t.Errorf("toString(%.20q): want an error", c.pattern)
		}
	}
	if _, err := m.call(Class{"DateTimeFormat"}, "forPattern", []Value{String(strings.Repeat("y", 256))}); err != nil {
		t.Errorf("a pattern of 256 bytes: %v", err)
	}
}

func TestJodaPatternParse(t *testing.T) {
	m := newMachine(Config{Now: time.Date(2021, 3, 4, 5, 6, 7, 89_000_000, time.UTC)})
	cases := []struct{ pattern, zone, text, want string }{
		{"yyyyMMdd", "", "20190101", "2019-01-01T00:00:00.000Z"},
		{"yyyyMMdd", "", "2019011", "2019-01-01T00:00:00.000Z"},
		{"yyyy-MM-dd", "", "2019-1-5", "2019-01-05T00:00:00.000Z"},
		{"yyyy-MM-dd", "", "+2019-01-05", "2019-01-05T00:00:00.000Z"},
		{"yyyy-MM-dd", "", "-0001-01-05", "-0001-01-05T00:00:00.000Z"},
		{"yyyy-MM-dd", "", "123456789-01-05", "123456789-01-05T00:00:00.000Z"},
		{"yyyy", "", "2019", "2019-01-01T00:00:00.000Z"},
		{"yyyyMMddHH", "UTC", "2021010123", "2021-01-01T23:00:00.000Z"},
		{"yyyy-MM-dd HH:mm:ss.SSS", "", "2019-07-04 15:06:07.5", "2019-07-04T15:06:07.500Z"},
		{"yyyy-MM-dd HH:mm:ss.SSS", "", "2019-07-04 15:06:07.089", "2019-07-04T15:06:07.089Z"},
		{"dd/MM/yy", "", "01/02/21", "2021-02-01T00:00:00.000Z"},
		{"dd/MM/yy", "", "01/02/41", "1941-02-01T00:00:00.000Z"},
		{"dd/MM/yy", "", "01/02/40", "2040-02-01T00:00:00.000Z"},
		{"dd/MM/yy", "", "01/02/1999", "1999-02-01T00:00:00.000Z"},
		{"dd/MM/yy", "", "01/02/5", "0005-02-01T00:00:00.000Z"},
		{"yyMMdd", "", "210102", "2021-01-02T00:00:00.000Z"},
		{"MM-dd", "", "02-29", "2000-02-29T00:00:00.000Z"},
		{"HH:mm", "", "13:45", "1970-01-01T13:45:00.000Z"},
		{"D yyyy", "", "60 2020", "2020-02-29T00:00:00.000Z"},
		{"xxxx-'W'ww-e", "", "2019-W01-1", "2018-12-31T00:00:00.000Z"},
		{"EEE MMM dd yyyy", "", "Thu Jul 04 2019", "2019-07-04T00:00:00.000Z"},
		{"EEE MMM dd yyyy", "", "thu jul 04 2019", "2019-07-04T00:00:00.000Z"},
		{"EEEE MMMM dd yyyy", "", "THURSDAY JULY 04 2019", "2019-07-04T00:00:00.000Z"},
		{"MMM yyyy", "", "September 2019", "2019-09-01T00:00:00.000Z"},
		{"MMMM yyyy", "", "Sep 2019", "2019-09-01T00:00:00.000Z"},
		{"hh:mm a", "", "03:06 PM", "1970-01-01T15:06:00.000Z"},
		{"hh:mm a", "", "12:06 am", "1970-01-01T00:06:00.000Z"},
		{"kk:mm", "", "24:00", "1970-01-01T00:00:00.000Z"},
		{"G yyyy", "", "AD 2019", "2019-01-01T00:00:00.000Z"},
		{"yyyy-MM-dd HH:mm Z", "", "2019-07-04 15:06 -0700", "2019-07-04T22:06:00.000Z"},
		{"yyyy-MM-dd HH:mm Z", "", "2019-07-04 15:06 Z", "2019-07-04T15:06:00.000Z"},
		{"yyyy-MM-dd HH:mm ZZ", "", "2019-07-04 15:06 +05:30", "2019-07-04T09:36:00.000Z"},
		{"yyyy-MM-dd HH:mm ZZ", "America/Los_Angeles", "2019-07-04 15:06 +00:00", "2019-07-04T08:06:00.000-07:00"},
		{"yyyy-MM-dd HH:mm ZZZ", "", "2019-07-04 15:06 America/Los_Angeles", "2019-07-04T15:06:00.000-07:00"},
		{"yyyy-MM-dd HH:mm ZZZ", "", "2019-07-04 15:06 US/Pacific", "2019-07-04T15:06:00.000-07:00"},
		{"yyyy-MM-dd HH:mm ZZZ", "", "2019-07-04 15:06 UTC", "2019-07-04T15:06:00.000Z"},
		{"ZZZyyyy", "", "Asia/Tokyo2019", "2019-01-01T00:00:00.000+09:00"},
		{"yyyy-MM-dd HH:mm z", "", "2019-07-04 15:06 PDT", "2019-07-04T15:06:00.000-07:00"},
		{"yyyy-MM-dd HH:mm z", "", "2019-07-04 15:06 GMT", "2019-07-04T15:06:00.000Z"},
		{"yyyy-MM-dd HH:mm", "America/Los_Angeles", "2019-07-04 15:06", "2019-07-04T15:06:00.000-07:00"},
		{"yyyy-MM-dd HH:mm", "America/Los_Angeles", "2019-11-03 01:30", "2019-11-03T01:30:00.000-07:00"},
		{"yyyy-MM-dd HH:mm", "Europe/London", "2019-10-27 01:30", "2019-10-27T01:30:00.000+01:00"},
		{"yyyy-MM-dd'T'HH:mm:ss.SSSZZ", "", "2019-07-04T15:06:07.089-07:00", "2019-07-04T22:06:07.089Z"},
		{"yyyy-MM-dd HH:mm:ss.SSSSSS", "", "2019-07-04 15:06:07.123456", "2019-07-04T15:06:07.123Z"},
		{"G yyyy", "", "BC 2019", "2019-01-01T00:00:00.000Z"}, // the year, set after the era, wins
		{"Y G", "", "2019 BC", "-2018-01-01T00:00:00.000Z"},
		{"G Y", "", "bce 2019", "-2018-01-01T00:00:00.000Z"},
		{"e yyyy w", "", "7 2020 53", "2021-01-03T00:00:00.000Z"},
		{"ww yyyy", "", "53 2020", "2020-12-28T00:00:00.000Z"},
		{"yy", "", "-5", "-0005-01-01T00:00:00.000Z"},
		{"yy", "", "+5", "0005-01-01T00:00:00.000Z"},
		{"CCyyyyy'at'", "", "002014at", "2014-01-01T00:00:00.000Z"},
		{"CC", "", "0", "0000-01-01T00:00:00.000Z"},
		{"CC yy", "", "19 99", "1999-01-01T00:00:00.000Z"},
		{"ZZZ", "", "EST5EDT", "1970-01-01T00:00:00.000-05:00"},
		{"ZZZ'!'", "", "Etc/GMT+5!", "1970-01-01T00:00:00.000-05:00"},
	}
	for _, c := range cases {
		f := jtFormatter(t, m, c.pattern)
		if c.zone != "" {
			f = jtCall(t, m, f, "withZone", jtZone(t, m, c.zone)).(DateTimeFormatter)
		}
		v, err := m.call(f, "parseDateTime", []Value{String(c.text)})
		if err != nil || JavaString(v) != c.want {
			t.Errorf("forPattern(%q).parseDateTime(%q) = %v, %v, want %q", c.pattern, c.text, v, err, c.want)
		}
	}
}

func TestJodaPatternParseErrors(t *testing.T) {
	m := newMachine(Config{Now: time.Date(2021, 3, 4, 5, 6, 7, 89_000_000, time.UTC)})
	cases := []struct{ pattern, zone, text, has string }{
		{"yyyyMMdd", "", "2019x101", `Invalid format: "2019x101" is malformed at "x101" (pattern "yyyyMMdd")`},
		{"yyyyMMdd", "", "201901", `Invalid format: "201901" is too short (pattern "yyyyMMdd")`},
		{"yyyyMMdd", "", "", `Invalid format: "" (pattern "yyyyMMdd")`},
		{"yyyyMMdd", "", "x", `Invalid format: "x" (pattern "yyyyMMdd")`},
		{"yyyyMMdd", "", "201901011", `is malformed at "1"`},
		{"yyyyMMdd", "", "20190230", `Cannot parse "20190230": Value 30 for dayOfMonth must be in the range [1,28]`},
		{"yyyyMMdd", "", "20191301", `Value 13 for monthOfYear must be in the range [1,12]`},
		{"yyyyMMdd", "", "20190229", `Value 29 for dayOfMonth must be in the range [1,28]`},
		{"HH:mm", "", "24:00", `Value 24 for hourOfDay must be in the range [0,23]`},
		{"yyyy", "", "99999999999", `Invalid format: "99999999999" is malformed at "99" (pattern "yyyy")`},
		{"yyyyyyyyyyMM", "", "999999999901", `outside Java's int range`},
		{"yyyy-MM-dd HH:mm", "America/Los_Angeles", "2019-03-10 02:30", `Illegal instant due to time zone offset transition (America/Los_Angeles)`},
		{"yyyy zzzz", "", "2019 UTC", "Parsing not supported"},
		{"EEE yyyy", "", "tHU 2019", `Invalid format: "tHU 2019" (pattern "EEE yyyy")`},
		{"yyyy-MM-dd ZZZ", "", "2019-01-01 Mars/Olympus", `malformed at "Mars/Olympus"`},
		{"yyyy-MM-dd ZZZ", "", "2019-01-01 ../../etc/passwd", `malformed at "../../etc/passwd"`},
		{"yyyy Z", "", "2019 +24:00", `malformed at "24:00"`},
		{"yyyy Z", "", "2019 +0560", `malformed at "60"`},
		{"yyyyMMdd", "", strings.Repeat("9", 100), `is malformed at`},
		{"yyyy-MM-dd HH:mm:ss.S", "", "2019-07-04 15:06:07.12", `is malformed at "2"`},
		{"xxxx'at'kkCyyyyyyy", "", "1934at191900019349", `Value 900019349 for year must be in the range [-292275055,292278994]`},
		{"ZZZ/d", "", "UTC/5", `Invalid format: "UTC/5" (pattern "ZZZ/d")`},
		{"MMMMyyyyyyyyhC", "", "October00002064220", `Value 22 for clockhourOfHalfday must be in the range [1,12]`},
		{"yyyyyyyyyyMM", "", "+999999999901", `For input string: "9999999999"`},
	}
	for _, c := range cases {
		f := jtFormatter(t, m, c.pattern)
		if c.zone != "" {
			f = jtCall(t, m, f, "withZone", jtZone(t, m, c.zone)).(DateTimeFormatter)
		}
		v, err := m.call(f, "parseDateTime", []Value{String(c.text)})
		if err == nil || !strings.Contains(err.Error(), c.has) {
			t.Errorf("forPattern(%q).parseDateTime(%.40q) = %v, %v, want an error with %q", c.pattern, c.text, v, err, c.has)
		}
		if len(fmt.Sprint(err)) > 400 {
			t.Errorf("error of %d bytes", len(err.Error()))
		}
	}
}

// ---- Joda's calendar and zone semantics

func TestJodaArithmetic(t *testing.T) {
	m := jtMachine()
	type op struct {
		name string
		n    int64
	}
	cases := []struct {
		zone  string
		start []int64 // y, mo, d, h, mi, s, ms
		ops   []op
		want  string
	}{
		{"UTC", []int64{2019, 1, 31, 0, 0, 0, 0}, []op{{"plusMonths", 1}}, "2019-02-28T00:00:00.000Z"},
		{"UTC", []int64{2020, 1, 31, 0, 0, 0, 0}, []op{{"plusMonths", 1}}, "2020-02-29T00:00:00.000Z"},
		{"UTC", []int64{2020, 3, 31, 0, 0, 0, 0}, []op{{"minusMonths", 1}}, "2020-02-29T00:00:00.000Z"},
		{"UTC", []int64{2020, 5, 31, 0, 0, 0, 0}, []op{{"plusMonths", -3}}, "2020-02-29T00:00:00.000Z"},
		{"UTC", []int64{2020, 1, 31, 0, 0, 0, 0}, []op{{"plusMonths", 25}}, "2022-02-28T00:00:00.000Z"},
		{"UTC", []int64{2020, 1, 15, 0, 0, 0, 0}, []op{{"minusMonths", 13}}, "2018-12-15T00:00:00.000Z"},
		{"UTC", []int64{2020, 2, 29, 0, 0, 0, 0}, []op{{"plusYears", 1}}, "2021-02-28T00:00:00.000Z"},
		{"UTC", []int64{2020, 2, 29, 0, 0, 0, 0}, []op{{"plusYears", 4}}, "2024-02-29T00:00:00.000Z"},
		{"UTC", []int64{2020, 2, 29, 0, 0, 0, 0}, []op{{"withYear", 2019}}, "2019-02-28T00:00:00.000Z"},
		{"UTC", []int64{2019, 3, 31, 0, 0, 0, 0}, []op{{"withMonthOfYear", 2}}, "2019-02-28T00:00:00.000Z"},
		{"UTC", []int64{2021, 1, 1, 0, 0, 0, 0}, []op{{"withWeekOfWeekyear", 53}}, "2021-01-01T00:00:00.000Z"},
		{"UTC", []int64{2021, 1, 1, 0, 0, 0, 0}, []op{{"withWeekOfWeekyear", 1}}, "2020-01-03T00:00:00.000Z"},
		{"UTC", []int64{2021, 1, 3, 0, 0, 0, 0}, []op{{"withWeekyear", 2021}}, "2022-01-02T00:00:00.000Z"},
		{"UTC", []int64{2020, 12, 31, 0, 0, 0, 0}, []op{{"withDayOfYear", 366}}, "2020-12-31T00:00:00.000Z"},
		{"UTC", []int64{2019, 5, 5, 10, 0, 0, 0}, []op{{"plusWeeks", 2}, {"minusHours", 34}}, "2019-05-18T00:00:00.000Z"},
		{"UTC", []int64{2019, 5, 5, 10, 0, 0, 0}, []op{{"plusDays", 2147483647}}, "5881629-11-12T10:00:00.000Z"},
		{"UTC", []int64{1970, 1, 1, 0, 0, 0, 0}, []op{{"plusMonths", 2147483647}}, "178958940-08-01T00:00:00.000Z"},
		{"UTC", []int64{1970, 1, 1, 0, 0, 0, 0}, []op{{"minusMonths", 2147483647}}, "-178955001-06-01T00:00:00.000Z"},
		{"UTC", []int64{2019, 5, 5, 10, 0, 0, 0}, []op{{"plusMillis", 2147483647}}, "2019-05-30T06:31:23.647Z"},
		{"UTC", []int64{2019, 5, 5, 10, 0, 0, 0}, []op{{"minusYears", 2019}}, "0000-05-05T10:00:00.000Z"},
		{"UTC", []int64{2019, 5, 5, 10, 0, 0, 0}, []op{{"withYear", jMaxYear}}, "292278993-05-05T10:00:00.000Z"},
		{"UTC", []int64{2019, 5, 5, 10, 0, 0, 0}, []op{{"withYear", jMinYear}}, "-292275054-05-05T10:00:00.000Z"},
		// DST: hours are exact, days keep the local time
		{"America/Los_Angeles", []int64{2019, 3, 9, 12, 0, 0, 0}, []op{{"plusDays", 1}}, "2019-03-10T12:00:00.000-07:00"},
		{"America/Los_Angeles", []int64{2019, 3, 9, 12, 0, 0, 0}, []op{{"plusHours", 24}}, "2019-03-10T13:00:00.000-07:00"},
		// into the gap: the local time moves past it
		{"America/Los_Angeles", []int64{2019, 3, 9, 2, 30, 0, 0}, []op{{"plusDays", 1}}, "2019-03-10T03:30:00.000-07:00"},
		// into the overlap: the earlier offset
		{"America/Los_Angeles", []int64{2019, 11, 2, 1, 30, 0, 0}, []op{{"plusDays", 1}}, "2019-11-03T01:30:00.000-07:00"},
		{"America/Los_Angeles", []int64{2019, 11, 3, 1, 30, 0, 0}, []op{{"plusHours", 1}}, "2019-11-03T01:30:00.000-08:00"},
		{"America/Los_Angeles", []int64{2019, 11, 3, 1, 30, 0, 0}, []op{{"plusHours", 1}, {"withMinuteOfHour", 0}}, "2019-11-03T01:00:00.000-08:00"},
		{"Europe/London", []int64{2019, 10, 26, 1, 30, 0, 0}, []op{{"plusDays", 1}}, "2019-10-27T01:30:00.000+01:00"},
		{"Europe/London", []int64{2019, 3, 30, 1, 30, 0, 0}, []op{{"plusDays", 1}}, "2019-03-31T02:30:00.000+01:00"},
		{"America/Los_Angeles", []int64{2019, 7, 4, 15, 0, 0, 0}, []op{{"withHourOfDay", 0}}, "2019-07-04T00:00:00.000-07:00"},
		{"Asia/Kolkata", []int64{2019, 7, 4, 15, 0, 0, 0}, []op{{"plusMonths", 1}}, "2019-08-04T15:00:00.000+05:30"},
	}
	for _, c := range cases {
		d := Value(jtFields(t, m, c.zone, c.start...))
		for _, o := range c.ops {
			d = jtCall(t, m, d, o.name, Long(o.n))
		}
		if got := JavaString(d); got != c.want {
			t.Errorf("%v %v in %s = %q, want %q", c.start, c.ops, c.zone, got, c.want)
		}
	}
}

func TestJodaDST(t *testing.T) {
	m := jtMachine()
	la := func(f ...int64) DateTime { return jtFields(t, m, "America/Los_Angeles", f...) }
	// withHourOfDay into the gap fails, naming it
	_, err := m.call(la(2019, 3, 10, 12, 0, 0, 0), "withHourOfDay", []Value{Long(2)})
	if err == nil || !strings.Contains(err.Error(), "Value 2 for hourOfDay is not supported: Illegal instant due to time zone offset transition (daylight savings time 'gap'): 2019-03-10T02:00:00.000 (America/Los_Angeles)") {
		t.Errorf("withHourOfDay(2) in the gap: %v", err)
	}
	cases := []struct {
		d    Value
		call []string
		want string
	}{
		{la(2019, 3, 10, 12, 0, 0, 0), []string{"withTimeAtStartOfDay"}, "2019-03-10T00:00:00.000-08:00"},
		{la(2019, 11, 3, 12, 0, 0, 0), []string{"withTimeAtStartOfDay"}, "2019-11-03T00:00:00.000-07:00"},
		{jtFields(t, m, "America/Sao_Paulo", 2018, 11, 4, 12, 0, 0, 0), []string{"withTimeAtStartOfDay"}, "2018-11-04T01:00:00.000-02:00"},
		{jtFields(t, m, "Asia/Tokyo", 2019, 7, 4, 5, 0, 0, 0), []string{"withTimeAtStartOfDay"}, "2019-07-04T00:00:00.000+09:00"},
		{la(2019, 3, 10, 12, 0, 0, 0), []string{"hourOfDay", "withMinimumValue"}, "2019-03-10T00:00:00.000-08:00"},
		{la(2019, 3, 10, 12, 0, 0, 0), []string{"hourOfDay", "withMaximumValue"}, "2019-03-10T23:00:00.000-07:00"},
		{la(2019, 3, 10, 12, 0, 0, 0), []string{"getHourOfDay"}, "12"},
		{la(2019, 3, 10, 12, 0, 0, 0), []string{"getMillis"}, "1552244400000"},
		{la(2019, 3, 10, 12, 0, 0, 0), []string{"hourOfDay", "getAsText"}, "12"},
	}
	for _, c := range cases {
		v := c.d
		for _, name := range c.call {
			v = jtCall(t, m, v, name)
		}
		if got := JavaString(v); got != c.want {
			t.Errorf("%s.%v = %q, want %q", JavaString(c.d), c.call, got, c.want)
		}
	}
}

// ---- the sandbox

func TestJodaLimits(t *testing.T) {
	m := jtMachine()
	d := DateTime{ms: 0, zone: UTCZone()}
	overflow := []struct {
		name string
		n    int64
	}{
		{"plusYears", math.MaxInt32}, {"minusYears", math.MaxInt32}, {"plusYears", math.MinInt32},
		{"plusYears", 292278994},
		{"withYear", 292278994}, {"withYear", -292275055}, {"withWeekyear", math.MaxInt32},
		{"plusYears", 1 << 40}, {"plusDays", 1 << 40}, {"plusMillis", math.MaxInt64},
	}
	// Each is arithmetic, not a loop of 2^40 days: the test would not end.
	for _, o := range overflow {
		v, err := m.call(d, o.name, []Value{Long(o.n)})
		if err == nil {
			t.Errorf("%s(%d) = %s, want an error", o.name, o.n, JavaString(v))
		}
	}
	if _, err := m.call(d, "withYear", []Value{Long(292278994)}); err == nil ||
		!strings.Contains(err.Error(), "Value 292278994 for year must be in the range [-292275054,292278993]") {
		t.Errorf("withYear out of range: %v", err)
	}
	// the extremes of a millisecond instant print; reading them in a zone
	// whose offset overflows fails
	for _, c := range []struct {
		ms   int64
		want string
	}{{math.MaxInt64, "292278994-08-17T07:12:55.807Z"}, {math.MinInt64, "-292275055-05-16T16:47:04.192Z"}} {
		if got := JavaString(DateTime{ms: c.ms, zone: UTCZone()}); got != c.want {
			t.Errorf("DateTime(%d) = %q, want %q", c.ms, got, c.want)
		}
	}
	tokyo := DateTime{ms: math.MaxInt64, zone: jtZone(t, m, "Asia/Tokyo")}
	if _, err := m.call(tokyo, "getYear", nil); err == nil {
		t.Errorf("getYear past the end of time: want an error")
	}
	if got := JavaString(tokyo); got != "292278994-08-17T07:12:55.807Z" {
		t.Errorf("toString past the end of time = %q (Joda prints in UTC)", got)
	}
	for _, name := range []string{"plusHours", "plusDays", "plusMonths", "plusYears", "withTimeAtStartOfDay"} {
		args := []Value{Long(1)}
		if name == "withTimeAtStartOfDay" {
			args = nil
		}
		if _, err := m.call(tokyo, name, args); err == nil {
			t.Errorf("%s past the end of time: want an error", name)
		}
	}
}

// jtMeter refuses once more than budget units are charged.
type jtMeter struct{ used, budget int64 }

func (m *jtMeter) Charge(cpu, mem int64) error {
	m.used += cpu + mem
	if m.used > m.budget {
		return fmt.Errorf("over the budget of %d", m.budget)
	}
	return nil
}

func TestJodaMeter(t *testing.T) {
	calls := []struct {
		recv Value
		name string
		args []Value
	}{
		{Class{"DateTimeFormat"}, "forPattern", []Value{String("yyyy-MM-dd")}},
		{Class{"DateTimeZone"}, "forID", []Value{String("America/Los_Angeles")}},
		{DateTime{zone: UTCZone()}, "toString", nil},
		{DateTime{zone: UTCZone()}, "plusDays", []Value{Long(1)}},
		{DateTime{zone: UTCZone()}, "toString", []Value{String("yyyy")}},
		{Class{"Days"}, "daysBetween", []Value{DateTime{zone: UTCZone()}, DateTime{zone: UTCZone()}}},
	}
	for _, c := range calls {
		meter := &jtMeter{budget: 0}
		m := newMachine(Config{Now: jtNow, Meter: meter})
		if _, err := m.call(c.recv, c.name, c.args); !errors.Is(err, ErrLimit) {
			t.Errorf("%s with no budget: want ErrLimit, got %v", c.name, err)
		}
		if meter.used < 1 {
			t.Errorf("%s charged nothing", c.name)
		}
	}
	if _, err := newMachine(Config{Now: jtNow}).construct("DateTime", nil); err != nil {
		t.Fatal(err)
	}
	m := newMachine(Config{Now: jtNow, Meter: &jtMeter{budget: 0}})
	if _, err := m.construct("DateTime", []Value{String("2019-01-01")}); !errors.Is(err, ErrLimit) {
		t.Errorf("new DateTime with no budget: want ErrLimit, got %v", err)
	}
	// charges grow with the text parsed
	small, big := &jtMeter{budget: math.MaxInt64}, &jtMeter{budget: math.MaxInt64}
	for _, c := range []struct {
		meter *jtMeter
		text  string
	}{{small, "2019"}, {big, strings.Repeat("9", 100000)}} {
		m := newMachine(Config{Now: jtNow, Meter: c.meter})
		f := jtFormatter(t, m, "yyyy")
		_, _ = m.call(f, "parseDateTime", []Value{String(c.text)})
	}
	if big.used < 100000 || small.used > 1000 {
		t.Errorf("parsing 100000 bytes charged %d, 4 bytes %d", big.used, small.used)
	}
	// a string over the length limit
	m = newMachine(Config{Now: jtNow, Limits: Limits{Length: 10}})
	if _, err := m.call(DateTime{zone: UTCZone()}, "toString", nil); !errors.Is(err, ErrLimit) {
		t.Errorf("toString over the length limit: want ErrLimit, got %v", err)
	}
	if _, err := m.call(DateTime{zone: UTCZone()}, "toString", []Value{String("yyyyyyyyyyyyyyyyyyyy")}); !errors.Is(err, ErrLimit) {
		t.Errorf("toString(pattern) over the length limit: want ErrLimit, got %v", err)
	}
}

// TestJodaNoPanics formats and parses pattern and text fragments in every
// combination: each ends in a value or an error, never a panic.
func TestJodaNoPanics(t *testing.T) {
	m := newMachine(Config{Now: jtNow})
	patterns := []string{"y", "yy", "yyyy", "Y", "YY", "x", "xx", "M", "MM", "MMM", "MMMM", "d", "D", "e", "E",
		"EEEE", "a", "h", "H", "k", "K", "m", "s", "S", "SSS", "S" + strings.Repeat("S", 30), "z", "zzzz", "Z",
		"ZZ", "ZZZ", "G", "C", "w", "'", "''", "'x", "-", " ", "é", "\xff", "q"}
	texts := []string{"", "0", "-", "+", "--1", "+-", "2019", "-2019", "+2019", "99999999999999999999", "Jan",
		"january", "AM", "bc", "BCE", "Z", "+05", "+05:3", "+05:30:", "+05:30:00.", "UTC", "America/", "US/Pacific",
		"Etc/GMT+5", "../x", "é", "\xff", "PST", "12:60", "24", "00"}
	d := DateTime{ms: 1562277600000, zone: jtZone(t, m, "America/Los_Angeles")}
	for _, p1 := range patterns {
		for _, p2 := range patterns {
			p := p1 + p2
			func() {
				defer func() {
					if r := recover(); r != nil {
						t.Fatalf("pattern %q: panic %v", p, r)
					}
				}()
				fv, err := m.call(Class{"DateTimeFormat"}, "forPattern", []Value{String(p)})
				if err != nil {
					return
				}
				_, _ = m.call(d, "toString", []Value{String(p)})
				for _, t1 := range texts {
					for _, t2 := range texts[:8] {
						_, _ = m.call(fv, "parseDateTime", []Value{String(t1 + t2)})
					}
				}
			}()
		}
	}
	for _, s := range texts {
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("new DateTime(%q): panic %v", s, r)
				}
			}()
			_, _ = m.construct("DateTime", []Value{String(s)})
			_, _ = m.construct("DateTime", []Value{String("2019-01-01T" + s)})
			_, _ = ZoneForID(m, s)
		}()
	}
}
