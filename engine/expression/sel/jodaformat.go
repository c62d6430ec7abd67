package sel

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Joda's DateTimeFormat patterns and its ISO format: a formatter is a
// sequence of elements, each printing one part of a date and parsing it
// back as Joda's DateTimeFormatterBuilder does; the parsed fields are put
// together as Joda's DateTimeParserBucket does.

// jPatternMax is the longest pattern DateTimeFormat.forPattern takes, in
// bytes.
const jPatternMax = 256

// jPrintCtx is what the elements print: an instant, its local time and
// its offset in a zone.
type jPrintCtx struct {
	local, instant, offset int64
	zone                   DateTimeZone
}

// jElem is an element of a formatter. parse returns the position after
// what it read, or the complement (^pos) of the position where it failed.
type jElem interface {
	print(b *strings.Builder, c *jPrintCtx)
	parse(k *jBucket, text string, pos int) int
}

// jPadInt writes v with at least size digits, as Joda's
// appendPaddedInteger ("-0001").
func jPadInt(b *strings.Builder, v int64, size int) {
	s := strconv.FormatInt(v, 10)
	if v < 0 {
		b.WriteByte('-')
		s = s[1:]
	}
	for i := len(s); i < size; i++ {
		b.WriteByte('0')
	}
	b.WriteString(s)
}

// ---- literals

// jLiteral is literal text; it parses case-insensitively.
type jLiteral struct{ s string }

func (l jLiteral) print(b *strings.Builder, _ *jPrintCtx) { b.WriteString(l.s) }

func (l jLiteral) parse(_ *jBucket, text string, pos int) int {
	i := pos
	for _, want := range l.s {
		if i >= len(text) {
			return ^pos
		}
		got, size := utf8.DecodeRuneInString(text[i:])
		if !jFoldEq(got, want) {
			return ^pos
		}
		i += size
	}
	return i
}

// jFoldEq compares two characters as Joda's literals do.
func jFoldEq(a, b rune) bool {
	if a == b {
		return true
	}
	ua, ub := unicode.ToUpper(a), unicode.ToUpper(b)
	return ua == ub || unicode.ToLower(ua) == unicode.ToLower(ub)
}

// ---- numbers

// jNumber is a decimal field: printed with at least minPrint digits,
// parsed with at most maxParse (a sign not counted when signed).
type jNumber struct {
	f        jField
	minPrint int
	maxParse int
	signed   bool
}

func jNum(f jField, minPrint, maxParse int, signed bool) jNumber {
	return jNumber{f: f, minPrint: minPrint, maxParse: max(maxParse, minPrint), signed: signed}
}

func (n jNumber) print(b *strings.Builder, c *jPrintCtx) {
	v := n.f.get(c.local)
	if n.minPrint <= 1 {
		b.WriteString(strconv.FormatInt(v, 10))
		return
	}
	jPadInt(b, v, n.minPrint)
}

func (n jNumber) parse(k *jBucket, text string, pos int) int {
	limit := min(n.maxParse, len(text)-pos)
	positive := false
	length := 0
	for length < limit {
		c := text[pos+length]
		if length == 0 && (c == '-' || c == '+') && n.signed {
			positive = c == '+'
			if length+1 >= limit || text[pos+length+1] < '0' || text[pos+length+1] > '9' {
				break
			}
			length++
			limit = min(limit+1, len(text)-pos)
			continue
		}
		if c < '0' || c > '9' {
			break
		}
		length++
	}
	if length == 0 {
		return ^pos
	}
	digits := text[pos : pos+length]
	if positive {
		digits = digits[1:]
	}
	v, err := strconv.ParseInt(digits, 10, 32)
	if err != nil {
		// Joda's Integer.parseInt of nine digits or more fails too.
		k.fail(fmt.Errorf("For input string: \"%s\" (outside Java's int range)", digits))
		return ^pos
	}
	k.save(n.f, v)
	return pos + length
}

// jTwoDigitYear is the yy of a year or week-year: printed as the year of
// the century; parsed into the hundred years from pivot-50, or, lenient,
// any other number of digits as the full year.
type jTwoDigitYear struct {
	f       jField
	pivot   int64
	lenient bool
}

func (t jTwoDigitYear) print(b *strings.Builder, c *jPrintCtx) {
	jPadInt(b, absInt64(t.f.get(c.local))%100, 2)
}

func (t jTwoDigitYear) parse(k *jBucket, text string, pos int) int {
	limit := len(text) - pos
	if !t.lenient {
		if limit < 2 {
			return ^pos
		}
	} else {
		start, length, signed := pos, 0, false
		for length < limit {
			c := text[start+length]
			if length == 0 && (c == '-' || c == '+') {
				signed = true
				if c == '-' {
					length++
				} else {
					start++
					limit--
				}
				continue
			}
			if c < '0' || c > '9' {
				break
			}
			length++
		}
		if length == 0 {
			return ^start
		}
		if signed || length != 2 {
			v, err := strconv.ParseInt(text[start:start+length], 10, 32)
			if err != nil {
				if length < 9 {
					return ^start // a lone '-'
				}
				k.fail(fmt.Errorf("For input string: \"%s\" (outside Java's int range)", text[start:start+length]))
				return ^start
			}
			k.save(t.f, v)
			return start + length
		}
		pos = start
	}
	c0, c1 := text[pos], text[pos+1]
	if c0 < '0' || c0 > '9' || c1 < '0' || c1 > '9' {
		return ^pos
	}
	year := int64(c0-'0')*10 + int64(c1-'0')
	low := t.pivot - 50
	var tt int64
	if low >= 0 {
		tt = low % 100
	} else {
		tt = 99 + (low+1)%100
	}
	if year < tt {
		year += 100
	}
	k.save(t.f, year+low-tt)
	return pos + 2
}

// ---- texts

// jText is a month, day of the week, halfday or era as English text.
type jText struct {
	f     jField
	short bool
}

func (t jText) print(b *strings.Builder, c *jPrintCtx) {
	b.WriteString(jFieldText(t.f, t.f.get(c.local), t.short))
}

// parse takes the longest text of the field's values, long or short, as
// written or all lower or upper case.
func (t jText) parse(k *jBucket, text string, pos int) int {
	maxLen := 9 // September, Wednesday
	switch t.f {
	case jHalfdayOfDay:
		maxLen = 2
	case jEra:
		maxLen = 3
	}
	for i := min(len(text), pos+maxLen); i > pos; i-- {
		if v, ok := jTextValue(t.f, text[pos:i]); ok {
			k.save(t.f, v)
			return i
		}
	}
	return ^pos
}

func jTextValue(f jField, s string) (int64, bool) {
	if f == jEra {
		switch s {
		case "BCE", "bce":
			return 0, true
		case "CE", "ce":
			return 1, true
		}
	}
	lo, hi := jFields[f].min, jFields[f].max
	for v := lo; v <= hi; v++ {
		for _, name := range [...]string{jFieldText(f, v, false), jFieldText(f, v, true)} {
			if s == name || s == strings.ToLower(name) || s == strings.ToUpper(name) {
				return v, true
			}
		}
	}
	return 0, false
}

// ---- fractions

// jFraction is the fraction of a second (or, parsing ISO, of a minute or
// hour): printed with min to max digits, parsed with up to max.
type jFraction struct {
	f        jField // jFracOfSecond, jFracOfMinute, jFracOfHour
	min, max int
}

func jFrac(f jField, minDigits, maxDigits int) jFraction {
	maxDigits = max(maxDigits, minDigits)
	return jFraction{f: f, min: minDigits, max: min(maxDigits, 18)}
}

// print is Joda's Fraction.printTo, digits past the millisecond zeros.
func (fr jFraction) print(b *strings.Builder, c *jPrintCtx) {
	unit := jFields[fr.f].span
	minDigits := fr.min
	fraction := jFloorMod(c.local, unit)
	if fraction == 0 {
		b.WriteString(strings.Repeat("0", minDigits))
		return
	}
	maxDigits := fr.max
	var scalar int64
	for {
		scalar = 1
		if maxDigits >= 1 && maxDigits <= 18 {
			scalar = int64(math.Pow10(maxDigits))
		}
		if (unit*scalar)/scalar == unit {
			break
		}
		maxDigits--
	}
	str := strconv.FormatInt(fraction*scalar/unit, 10)
	length, digits := len(str), maxDigits
	for length < digits {
		b.WriteByte('0')
		minDigits--
		digits--
	}
	if minDigits < digits {
		for minDigits < digits && length > 1 && str[length-1] == '0' {
			digits--
			length--
		}
		if length < len(str) {
			b.WriteString(str[:length])
			return
		}
	}
	b.WriteString(str)
}

func (fr jFraction) parse(k *jBucket, text string, pos int) int {
	unit := jFields[fr.f].span
	limit := min(fr.max, len(text)-pos)
	var value int64
	n := unit * 10
	length := 0
	for length < limit {
		c := text[pos+length]
		if c < '0' || c > '9' {
			break
		}
		length++
		n /= 10
		value += int64(c-'0') * n
	}
	value /= 10
	if length == 0 || value > math.MaxInt32 {
		return ^pos
	}
	k.save(fr.f, value)
	return pos + length
}

// ---- zones

// jOffset is a zone offset: +0800 (Z), +08:00 (ZZ), ISO's Z or +08:00.
type jOffset struct {
	zeroPrint string // printed for a zero offset, when set
	zeroParse string // parsed as a zero offset, when set
	sep       bool
	minF      int
	maxF      int
}

func (o jOffset) print(b *strings.Builder, c *jPrintCtx) {
	off := c.offset
	if off == 0 && o.zeroPrint != "" {
		b.WriteString(o.zeroPrint)
		return
	}
	if off >= 0 {
		b.WriteByte('+')
	} else {
		b.WriteByte('-')
		off = -off
	}
	units := [...]int64{jMsHour, jMsMinute, jMsSecond}
	for i, u := range units {
		v := off / u
		if i > 0 && o.sep {
			b.WriteByte(':')
		}
		jPadInt(b, v, 2)
		off -= v * u
		if o.maxF == i+1 || (off == 0 && o.minF <= i+1) {
			return
		}
	}
	if o.sep {
		b.WriteByte('.')
	}
	jPadInt(b, off, 3)
}

func (o jOffset) parse(k *jBucket, text string, pos int) int {
	if o.zeroParse != "" && jHasPrefixFold(text[pos:], o.zeroParse) {
		k.offset, k.hasOff = 0, true
		return pos + len(o.zeroParse)
	}
	if len(text)-pos <= 1 {
		return ^pos
	}
	negative := text[pos] == '-'
	if !negative && text[pos] != '+' {
		return ^pos
	}
	pos++
	if jDigitCount(text, pos, 2) < 2 {
		return ^pos
	}
	hours := jTwoDigits(text, pos)
	if hours > 23 {
		return ^pos
	}
	pos, off, ok := jOffsetRest(text, pos+2, hours*jMsHour)
	if !ok {
		return ^pos
	}
	if negative {
		off = -off
	}
	k.offset, k.hasOff = off, true
	return pos
}

// jOffsetRest parses what may follow an offset's hours: mm, mmss,
// mmssSSS, or with separators :mm, :mm:ss, :mm:ss.SSS. ok is false, with
// the failing position, when a part is malformed.
func jOffsetRest(text string, pos int, off int64) (int, int64, bool) {
	if pos >= len(text) {
		return pos, off, true
	}
	sep := text[pos] == ':'
	if sep {
		pos++
	} else if text[pos] < '0' || text[pos] > '9' {
		return pos, off, true
	}
	for i, u := range [...]int64{jMsMinute, jMsSecond} {
		if i > 0 {
			if pos >= len(text) {
				return pos, off, true
			}
			if sep {
				if text[pos] != ':' {
					return pos, off, true
				}
				pos++
			}
		}
		count := jDigitCount(text, pos, 2)
		if count == 0 && !sep {
			return pos, off, true
		}
		if count < 2 {
			return pos, off, false
		}
		v := jTwoDigits(text, pos)
		if v > 59 {
			return pos, off, false
		}
		off += v * u
		pos += 2
	}
	if pos >= len(text) {
		return pos, off, true
	}
	if sep {
		if text[pos] != '.' && text[pos] != ',' {
			return pos, off, true
		}
		pos++
	}
	count := jDigitCount(text, pos, 3)
	if count == 0 && !sep {
		return pos, off, true
	}
	if count < 1 {
		return pos, off, false
	}
	for i, scale := range []int64{100, 10, 1}[:count] {
		off += int64(text[pos+i]-'0') * scale
	}
	return pos + count, off, true
}

func jDigitCount(text string, pos, amount int) int {
	n := 0
	for n < amount && pos+n < len(text) && text[pos+n] >= '0' && text[pos+n] <= '9' {
		n++
	}
	return n
}

func jTwoDigits(text string, pos int) int64 {
	return int64(text[pos]-'0')*10 + int64(text[pos+1]-'0')
}

func jHasPrefixFold(s, prefix string) bool {
	if len(s) < len(prefix) {
		return false
	}
	return strings.EqualFold(s[:len(prefix)], prefix)
}

// jZoneName is the zone's short (z) or long (zzzz) name; only short names
// parse, and only Joda's default ones (UTC, GMT, EST, PST, ...).
type jZoneName struct{ long bool }

func (z jZoneName) print(b *strings.Builder, c *jPrintCtx) {
	if z.long {
		b.WriteString(c.zone.longName(c.instant))
		return
	}
	b.WriteString(c.zone.shortName(c.instant))
}

func (z jZoneName) parse(k *jBucket, text string, pos int) int {
	best := -1
	for i, n := range jShortNames {
		if strings.HasPrefix(text[pos:], n[0]) && (best < 0 || len(n[0]) > len(jShortNames[best][0])) {
			best = i
		}
	}
	if best < 0 {
		return ^pos
	}
	zone, err := jZoneForID(k.m, jShortNames[best][1])
	if err != nil {
		k.fail(err)
		return ^pos
	}
	k.zone = zone
	return pos + len(jShortNames[best][0])
}

// jZoneID is the zone's id (ZZZ); it parses the longest zone id the text
// starts with. As Joda's, an id with an area (Europe/London) is looked for
// only when a slash is within 11 characters, one without only when none is.
type jZoneID struct{}

// jZoneAreaMax is the longest area of a zone id with its slash
// (Antarctica/).
const jZoneAreaMax = 11

func (jZoneID) print(b *strings.Builder, c *jPrintCtx) { b.WriteString(c.zone.id) }

func (jZoneID) parse(k *jBucket, text string, pos int) int {
	slash := strings.IndexByte(text[pos:min(len(text), pos+jZoneAreaMax)], '/')
	end := pos
	for end < len(text) && end-pos < 64 && strings.IndexByte(
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/_+-", text[end]) >= 0 {
		end++
	}
	for ; end > pos; end-- {
		id := text[pos:end]
		if slash >= 0 && end <= pos+slash+1 {
			break
		}
		if slash < 0 && strings.Contains(id, "/") {
			continue
		}
		if id == "UTC" {
			k.zone = UTCZone()
			return end
		}
		zone, ok, err := jProviderZone(k.m, id)
		if err != nil {
			k.fail(err)
			return ^pos
		}
		if ok {
			k.zone = zone
			return end
		}
	}
	return ^pos
}

// ---- composition (ISO's parser)

// jSeq is elements one after the other.
type jSeq []jElem

func (s jSeq) print(b *strings.Builder, c *jPrintCtx) {
	for _, e := range s {
		e.print(b, c)
	}
}

func (s jSeq) parse(k *jBucket, text string, pos int) int {
	for _, e := range s {
		if pos < 0 || k.err != nil {
			break
		}
		pos = e.parse(k, text, pos)
	}
	return pos
}

// jAlt parses the longest of its alternatives; a nil alternative makes
// the whole optional (Joda's MatchingParser). It prints nothing.
type jAlt []jElem

func (jAlt) print(*strings.Builder, *jPrintCtx) {}

func (a jAlt) parse(k *jBucket, text string, pos int) int {
	orig := k.state()
	optional := false
	bestPos, bestInvalid := pos, pos
	var best *jState
	for i, p := range a {
		if p == nil {
			if bestPos <= pos {
				return pos
			}
			optional = true
			break
		}
		r := p.parse(k, text, pos)
		if k.err != nil {
			return ^pos
		}
		if r >= pos {
			if r > bestPos {
				if r >= len(text) || i+1 >= len(a) || a[i+1] == nil {
					return r
				}
				bestPos = r
				s := k.state()
				best = &s
			}
		} else if r < 0 && ^r > bestInvalid {
			bestInvalid = ^r
		}
		k.restore(orig)
	}
	if bestPos > pos || (bestPos == pos && optional) {
		if best != nil {
			k.restore(*best)
		}
		return bestPos
	}
	return ^bestInvalid
}

func jOpt(e jElem) jElem { return jAlt{e, nil} }

// ---- the parse bucket

// jSaved is a parsed field value.
type jSaved struct {
	f jField
	v int64
}

// jBucket collects what a parse reads: field values, a zone, an offset.
type jBucket struct {
	m      *Machine
	saved  []jSaved
	zone   DateTimeZone
	offset int64
	hasOff bool
	err    error // a failure that ends the parse (Java's exceptions)
}

// jState is a bucket's state to go back to; its saved slice is capped, so
// that later appends never write into it.
type jState struct {
	saved  []jSaved
	zone   DateTimeZone
	offset int64
	hasOff bool
}

func (k *jBucket) save(f jField, v int64) { k.saved = append(k.saved, jSaved{f: f, v: v}) }

func (k *jBucket) fail(err error) {
	if k.err == nil {
		k.err = err
	}
}

func (k *jBucket) state() jState {
	n := len(k.saved)
	return jState{saved: k.saved[:n:n], zone: k.zone, offset: k.offset, hasOff: k.hasOff}
}

func (k *jBucket) restore(s jState) {
	k.saved, k.zone, k.offset, k.hasOff = s.saved, s.zone, s.offset, s.hasOff
}

// computeMillis puts the saved fields together as Joda does: largest
// first from 1970-01-01T00:00 local, each resetting the smaller ones
// (year 2000 when the largest is a month, week or day), twice; then the
// offset parsed or the zone's.
func (k *jBucket) computeMillis(text string) (int64, error) {
	saved := append([]jSaved(nil), k.saved...)
	less := func(i, j int) bool {
		a, b := jFields[saved[i].f], jFields[saved[j].f]
		if a.span != b.span {
			return a.span > b.span
		}
		return a.unit > b.unit
	}
	sort.SliceStable(saved, less)
	if len(saved) > 0 {
		if u := jFields[saved[0].f].unit; u >= jMsDay && u <= jMsMonth {
			saved = append(saved, jSaved{f: jYear, v: 2000})
			sort.SliceStable(saved, less)
		}
	}
	var millis int64
	var err error
	for pass := 0; pass < 2 && err == nil; pass++ {
		for i, s := range saved {
			if s.f == jYear { // Joda's setExtended: a year past the range by one
				if err = jBounds(jYear, s.v, jMinYear-1, jMaxYear+1); err != nil {
					break
				}
			}
			if millis, err = s.f.set(millis, s.v); err != nil {
				break
			}
			if pass == 0 || i == len(saved)-1 {
				if millis, err = s.f.roundFloor(millis); err != nil {
					break
				}
			}
		}
	}
	if err != nil {
		return 0, fmt.Errorf("Cannot parse %q: %w", jSample(text), err)
	}
	if k.hasOff {
		return jAdd(millis, -k.offset)
	}
	off := k.zone.offsetFromLocal(millis)
	r, err := jAdd(millis, -off)
	if err == nil && off != k.zone.offset(r) {
		err = fmt.Errorf("Cannot parse %q: Illegal instant due to time zone offset transition (%s)",
			jSample(text), k.zone.id)
	}
	return r, err
}

// jSample is text cut short for an error message.
func jSample(text string) string {
	if len(text) <= 64 {
		return text
	}
	cut := 64
	for cut > 0 && !utf8.RuneStart(text[cut]) {
		cut--
	}
	return text[:cut] + "..."
}

// jInvalidFormat is Joda's message for text that does not match.
func jInvalidFormat(text string, errorPos int) string {
	sample := text
	if sampleLen := errorPos + 32; len(text) > sampleLen+3 {
		for sampleLen > 0 && !utf8.RuneStart(text[sampleLen]) {
			sampleLen--
		}
		sample = text[:sampleLen] + "..."
	}
	switch {
	case errorPos <= 0:
		return fmt.Sprintf("Invalid format: \"%s\"", sample)
	case errorPos >= len(text):
		return fmt.Sprintf("Invalid format: \"%s\" is too short", sample)
	}
	for errorPos > 0 && !utf8.RuneStart(sample[errorPos]) {
		errorPos--
	}
	return fmt.Sprintf("Invalid format: \"%s\" is malformed at \"%s\"", sample, sample[errorPos:])
}

// jParse runs parser p over all of text with zone as the bucket's zone.
// pattern, when set, is named in the error of text that does not match.
func jParse(m *Machine, p jElem, text string, zone DateTimeZone, pattern string) (*jBucket, error) {
	if err := m.Charge(100+int64(len(text)), 64); err != nil {
		return nil, err
	}
	k := &jBucket{m: m, zone: zone}
	pos := p.parse(k, text, 0)
	if k.err != nil {
		return nil, k.err
	}
	if pos >= 0 && pos >= len(text) {
		return k, nil
	}
	if pos < 0 {
		pos = ^pos
	}
	msg := jInvalidFormat(text, pos)
	if pattern != "" {
		msg += fmt.Sprintf(" (pattern \"%s\")", pattern)
	}
	return nil, errors.New(msg)
}

// ---- printing

// jPrint prints elems for instant ms in zone.
func jPrint(elems jElem, ms int64, zone DateTimeZone) string {
	off := zone.offset(ms)
	local := ms + off
	if (ms^local) < 0 && (ms^off) >= 0 {
		zone, off, local = UTCZone(), 0, ms
	}
	var b strings.Builder
	elems.print(&b, &jPrintCtx{local: local, instant: ms, offset: off, zone: zone})
	return b.String()
}

// jPrintResult prints elems for instant ms in zone as a method's result.
func jPrintResult(m *Machine, elems jSeq, ms int64, zone DateTimeZone) (Value, error) {
	if err := m.Charge(50+30*int64(len(elems)), 0); err != nil {
		return nil, err
	}
	return jStringResult(m, jPrint(elems, ms, zone))
}

// ---- ISO 8601 (DateTime.toString and new DateTime(String))

// jISOPrinter is ISODateTimeFormat.dateTime(): yyyy-MM-dd'T'HH:mm:ss.SSSZZ
// with Z for UTC.
var jISOPrinter = jSeq{
	jNum(jYear, 4, 9, true), jLiteral{"-"}, jNum(jMonthOfYear, 2, 2, false), jLiteral{"-"},
	jNum(jDayOfMonth, 2, 2, false), jLiteral{"T"}, jNum(jHourOfDay, 2, 2, false), jLiteral{":"},
	jNum(jMinuteOfHour, 2, 2, false), jLiteral{":"}, jNum(jSecondOfMinute, 2, 2, false), jLiteral{"."},
	jFrac(jFracOfSecond, 3, 9), jOffset{zeroPrint: "Z", zeroParse: "Z", sep: true, minF: 2, maxF: 4},
}

// jISOParser is ISODateTimeFormat.dateTimeParser(): a date
// (yyyy[-MM[-dd]], xxxx-Www[-e], yyyy-DDD) with an optional time, or a
// time alone ('T' HH[:mm[:ss[.SSS]]] with fractions of the last field),
// each with an optional offset.
var jISOParser = jBuildISOParser()

func jBuildISOParser() jElem {
	lit := func(s string) jElem { return jLiteral{s} }
	offset := jOffset{zeroPrint: "Z", zeroParse: "Z", sep: true, minF: 2, maxF: 4}
	point := jAlt{lit("."), lit(",")}
	timeElem := jSeq{jNum(jHourOfDay, 2, 2, false), jAlt{
		jSeq{lit(":"), jNum(jMinuteOfHour, 2, 2, false), jAlt{
			jSeq{lit(":"), jNum(jSecondOfMinute, 2, 2, false), jOpt(jSeq{point, jFrac(jFracOfSecond, 1, 9)})},
			jSeq{point, jFrac(jFracOfMinute, 1, 9)},
			nil,
		}},
		jSeq{point, jFrac(jFracOfHour, 1, 9)},
		nil,
	}}
	year := jNum(jYear, 4, 9, true)
	date := jAlt{
		jSeq{year, jOpt(jSeq{lit("-"), jNum(jMonthOfYear, 2, 2, false),
			jOpt(jSeq{lit("-"), jNum(jDayOfMonth, 2, 2, false)})})},
		jSeq{jNum(jWeekyear, 4, 9, true), lit("-W"), jNum(jWeekOfWeekyear, 2, 2, false),
			jOpt(jSeq{lit("-"), jNum(jDayOfWeek, 1, 1, false)})},
		jSeq{year, lit("-"), jNum(jDayOfYear, 3, 3, false)},
	}
	timeOnly := jSeq{lit("T"), timeElem, jOpt(offset)}
	dateOptTime := jSeq{date, jOpt(jSeq{lit("T"), jOpt(timeElem), jOpt(offset)})}
	return jAlt{timeOnly, dateOptTime}
}

// jISOString is DateTime.toString.
func jISOString(ms int64, zone DateTimeZone) string { return jPrint(jISOPrinter, ms, zone) }

// jParseISO is the instant of an ISO string, read in zone unless it has an
// offset (Joda's StringConverter).
func jParseISO(m *Machine, s string, zone DateTimeZone) (int64, error) {
	k, err := jParse(m, jISOParser, s, zone, "")
	if err != nil {
		return 0, err
	}
	return k.computeMillis(s)
}

// jParseOffsetID is the offset of a zone id such as +05:30 (Joda's
// parseOffset), or Joda's error for one that is not.
func jParseOffsetID(s string) (int64, error) {
	k := &jBucket{}
	pos := jOffset{sep: true, minF: 2, maxF: 4}.parse(k, s, 0)
	if pos < 0 || pos < len(s) {
		if pos < 0 {
			pos = ^pos
		}
		return 0, errors.New(jInvalidFormat(s, pos))
	}
	return k.offset, nil
}

// ---- patterns (DateTimeFormat.forPattern)

// jFormat is a compiled pattern.
type jFormat struct {
	pattern string
	elems   jSeq
	parser  bool // false when an element cannot parse (zzzz)
}

// jToken is the token of pattern at i (Joda's parseToken): a run of one
// letter, or literal text (quoted, or anything but letters) marked by a
// leading quote; end is the index of its last byte.
func jToken(pattern string, i int) (tok string, end int) {
	c := pattern[i]
	if jIsLetter(c) {
		j := i
		for j+1 < len(pattern) && pattern[j+1] == c {
			j++
		}
		return pattern[i : j+1], j
	}
	var b strings.Builder
	b.WriteByte('\'')
	inLiteral := false
	for ; i < len(pattern); i++ {
		c = pattern[i]
		switch {
		case c == '\'':
			if i+1 < len(pattern) && pattern[i+1] == '\'' {
				i++
				b.WriteByte(c)
			} else {
				inLiteral = !inLiteral
			}
		case !inLiteral && jIsLetter(c):
			return b.String(), i - 1
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), i
}

func jIsLetter(c byte) bool { return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' }

// jNumericToken reports whether a token is a number that a preceding
// year must leave the digits of (Joda's isNumericToken).
func jNumericToken(tok string) bool {
	switch tok[0] {
	case 'c', 'C', 'x', 'y', 'Y', 'd', 'h', 'H', 'm', 's', 'S', 'e', 'D', 'F', 'W', 'w', 'k', 'K':
		return true
	case 'M':
		return len(tok) <= 2
	}
	return false
}

// jCompile is DateTimeFormat.forPattern. Two-letter years pivot on the
// evaluation's clock (Machine.Now) as Joda's on the system clock.
func jCompile(m *Machine, pattern string) (*jFormat, error) {
	if pattern == "" {
		return nil, errors.New("Invalid pattern specification: Pattern is null or empty")
	}
	if len(pattern) > jPatternMax {
		return nil, fmt.Errorf("the DateTimeFormat pattern is %d bytes long, over the limit of %d", len(pattern),
			jPatternMax)
	}
	if err := m.Charge(100+20*int64(len(pattern)), 32*int64(len(pattern))); err != nil {
		return nil, err
	}
	now := m.Now().UnixMilli()
	f := &jFormat{pattern: pattern, parser: true}
	for i := 0; i < len(pattern); i++ {
		tok, end := jToken(pattern, i)
		i = end
		nextNumeric := false
		if i+1 < len(pattern) {
			next, _ := jToken(pattern, i+1)
			nextNumeric = jNumericToken(next)
		}
		e, err := jPatternElem(tok, nextNumeric, now)
		if err != nil {
			return nil, fmt.Errorf("%w (pattern \"%s\")", err, pattern)
		}
		if e == nil {
			continue
		}
		if z, ok := e.(jZoneName); ok && z.long {
			f.parser = false
		}
		f.elems = append(f.elems, e)
	}
	return f, nil
}

// jPatternElem is the element of one pattern token (Joda's
// parsePatternTo); nil for an empty literal.
func jPatternElem(tok string, nextNumeric bool, now int64) (jElem, error) {
	n := len(tok)
	switch c := tok[0]; c {
	case '\'':
		if n == 1 {
			return nil, nil
		}
		return jLiteral{tok[1:]}, nil
	case 'G':
		return jText{f: jEra}, nil
	case 'C':
		return jNum(jCenturyOfEra, n, n, true), nil
	case 'x', 'y', 'Y':
		return jYearElem(c, n, nextNumeric, now), nil
	case 'M':
		if n >= 3 {
			return jText{f: jMonthOfYear, short: n == 3}, nil
		}
		return jNum(jMonthOfYear, n, 2, false), nil
	case 'E':
		return jText{f: jDayOfWeek, short: n < 4}, nil
	case 'a':
		return jText{f: jHalfdayOfDay}, nil
	case 'S':
		return jFrac(jFracOfSecond, n, n), nil
	case 'z':
		return jZoneName{long: n >= 4}, nil
	case 'Z':
		switch n {
		case 1:
			return jOffset{zeroParse: "Z", minF: 2, maxF: 2}, nil
		case 2:
			return jOffset{zeroParse: "Z", sep: true, minF: 2, maxF: 2}, nil
		}
		return jZoneID{}, nil
	}
	if d, ok := jNumberLetters[tok[0]]; ok {
		return jNum(d.f, n, d.max, false), nil
	}
	return nil, fmt.Errorf("Illegal pattern component: %s (Joda has no pattern letter '%c')", tok, tok[0])
}

// jNumberLetters are the pattern letters of numbers: their field and the
// most digits they parse.
var jNumberLetters = map[byte]struct {
	f   jField
	max int
}{
	'd': {jDayOfMonth, 2}, 'h': {jClockhourOfHalfday, 2}, 'H': {jHourOfDay, 2}, 'k': {jClockhourOfDay, 2},
	'K': {jHourOfHalfday, 2}, 'm': {jMinuteOfHour, 2}, 's': {jSecondOfMinute, 2}, 'e': {jDayOfWeek, 1},
	'D': {jDayOfYear, 3}, 'w': {jWeekOfWeekyear, 2},
}

// jYearElem is a year (y), year of era (Y) or week-year (x): two letters
// are a two-digit year, more a year of up to nine digits (as many as the
// letters when a number follows).
func jYearElem(c byte, n int, nextNumeric bool, now int64) jElem {
	f := jYearOfEra
	switch c {
	case 'x':
		f = jWeekyear
	case 'y':
		f = jYear
	}
	if n == 2 {
		pf := jYear
		if c == 'x' {
			pf = jWeekyear
		}
		return jTwoDigitYear{f: pf, pivot: pf.get(now) - 30, lenient: !nextNumeric}
	}
	maxDigits := 9
	if nextNumeric {
		maxDigits = n
	}
	return jNum(f, n, maxDigits, c != 'Y')
}

// ---- DateTimeFormatter

// DateTimeFormatter is Joda's DateTimeFormatter from
// DateTimeFormat.forPattern, with the zone it prints and parses in (the
// default zone, UTC, until withZone).
type DateTimeFormatter struct {
	f       *jFormat
	zone    DateTimeZone
	hasZone bool
}

// Kind is KindDateTimeFormatter.
func (DateTimeFormatter) Kind() Kind { return KindDateTimeFormatter }

// JavaString is what Java prints for SEL's formatter, which has no
// toString: its class and a hash (of the pattern and zone here).
func (f DateTimeFormatter) JavaString() string {
	h := fnv.New32a()
	h.Write([]byte(f.f.pattern + "|" + f.zone.id))
	return fmt.Sprintf("com.netflix.sel.type.SelJodaDateTimeFormatter@%x", h.Sum32())
}

// Pattern is the formatter's pattern.
func (f DateTimeFormatter) Pattern() string { return f.f.pattern }

// Zone is the formatter's zone, ok false when it has none (the default).
func (f DateTimeFormatter) Zone() (DateTimeZone, bool) { return f.zone, f.hasZone }

func (f DateTimeFormatter) call(m *Machine, name string, args []Value) (Value, error) {
	return jFormatterCall(m, &f, name, args)
}

// printZone is the zone the formatter prints an instant of zone z in.
func (f DateTimeFormatter) printZone(z DateTimeZone) DateTimeZone {
	if f.hasZone {
		return f.zone
	}
	return z
}

// parseBucket parses text with the formatter.
func (f DateTimeFormatter) parseBucket(m *Machine, text string) (*jBucket, int64, error) {
	if !f.f.parser {
		return nil, 0, Unsupported("Parsing not supported (pattern \"%s\")", f.f.pattern)
	}
	if err := m.Charge(30*int64(len(f.f.elems)), 0); err != nil {
		return nil, 0, err
	}
	k, err := jParse(m, f.f.elems, text, f.printZone(UTCZone()), f.f.pattern)
	if err != nil {
		return nil, 0, err
	}
	ms, err := k.computeMillis(text)
	return k, ms, err
}

// parseDateTime is DateTimeFormatter.parseDateTime: in the formatter's
// zone, else the zone parsed (z, ZZZ), else the default.
func (f DateTimeFormatter) parseDateTime(m *Machine, text string) (Value, error) {
	k, ms, err := f.parseBucket(m, text)
	if err != nil {
		return nil, err
	}
	return DateTime{ms: ms, zone: f.printZone(k.zone)}, nil
}

// jFormatterCall calls a method of formatter f (nil for the classes
// DateTimeFormat and DateTimeFormatter, which hold null: only forPattern
// works on them).
func jFormatterCall(m *Machine, f *DateTimeFormatter, name string, args []Value) (Value, error) {
	if err := m.Charge(jCallCost, 0); err != nil {
		return nil, err
	}
	if len(args) != 1 {
		return nil, jUnsupportedCall(KindDateTimeFormatter, name, args)
	}
	a := args[0]
	switch name {
	case "forPattern":
		p, isNull, err := jCastString(a)
		if err == nil && isNull {
			err = errors.New("Invalid pattern specification: Pattern is null or empty")
		}
		if err != nil {
			return nil, err
		}
		jf, err := jCompile(m, p)
		if err != nil {
			return nil, err
		}
		return DateTimeFormatter{f: jf}, nil
	case "withZone":
		if a.Kind() != KindDateTimeZone {
			return nil, fmt.Errorf("%s cannot be cast to a DateTimeZone", jKindName(a))
		}
		if f == nil {
			return nil, jNullReceiver("DateTimeFormatter", name, 1)
		}
		z, isZone := a.(DateTimeZone)
		return DateTimeFormatter{f: f.f, zone: z, hasZone: isZone}, nil
	case "parseDateTime", "parseMillis", "print":
		return f.call1(m, name, a)
	}
	return nil, jUnsupportedCall(KindDateTimeFormatter, name, args)
}

// call1 is parseDateTime, parseMillis or print, as SEL types their
// argument: a String or long to parse, a String for parseMillis, a long or
// DateTime to print.
func (f *DateTimeFormatter) call1(m *Machine, name string, a Value) (Value, error) {
	switch name {
	case "print":
		ms, zone := m.Now().UnixMilli(), UTCZone() // print(null) prints now
		switch x := a.(type) {
		case Long:
			ms = int64(x)
		case DateTime:
			ms, zone = x.ms, x.zone
		default:
			if a.Kind() != KindDateTime {
				return nil, jUnsupportedCall(KindDateTimeFormatter, name, []Value{a})
			}
		}
		if f == nil {
			return nil, jNullReceiver("DateTimeFormatter", name, 1)
		}
		return jPrintResult(m, f.f.elems, ms, f.printZone(zone))
	case "parseMillis":
		s, isNull, err := jCastString(a)
		if err != nil {
			return nil, err
		}
		if f == nil || isNull {
			return nil, jNullReceiver("DateTimeFormatter", name, 1)
		}
		_, ms, err := f.parseBucket(m, s)
		if err != nil {
			return nil, err
		}
		return Long(ms), nil
	}
	var text string
	switch x := a.(type) {
	case String:
		text = string(x)
	case Long:
		text = strconv.FormatInt(int64(x), 10)
	default:
		if a.Kind() != KindString {
			return nil, jUnsupportedCall(KindDateTimeFormatter, name, []Value{a})
		}
		return nil, fmt.Errorf("Failed calling method %s1: the text to parse is null", name)
	}
	if f == nil {
		return nil, jNullReceiver("DateTimeFormatter", name, 1)
	}
	return f.parseDateTime(m, text)
}
