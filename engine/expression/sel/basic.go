package sel

// The methods, static methods, fields and constructors of SEL's basic
// types, as Maestro's netflix-sel defines them: SelString, SelLong,
// SelDouble, SelBoolean, SelArray, SelMap, SelJavaMath, SelJavaUUID,
// SelMiscFunc and SelTypes' constructors. SEL supports few methods on
// each type; everything else is refused with ErrUnsupported, as SEL's
// UnsupportedOperationException refuses it.
//
// SEL calls most String methods through Java method handles, passing a
// long argument as Java's int when it is at most Integer.MAX_VALUE
// (SelLong.unbox casts it, so a long below Integer.MIN_VALUE wraps) and as
// a long otherwise (which an int parameter then refuses): intParam and
// unboxLong keep that.
//
// Strings are Go strings (UTF-8) where Java's are UTF-16: lengths and
// indices (length, substring, lastIndexOf, compareTo, format widths) are
// counted in UTF-16 code units as Java counts them. A Go string cannot hold
// half of a surrogate pair, so where Java would produce one (substring
// through a pair) the half becomes U+FFFD.
//
// Every method charges the machine's meter before it works (at least one
// CPU unit a call, a unit per byte scanned or built, the bytes it
// allocates) and checks the strings, arrays and maps it builds against
// the machine's limits before building them.

import (
	"crypto/sha256"
	byteorder "encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Costs of the work the methods do, in the meter's CPU units (about a
// nanosecond each) and bytes, the same weights as the expression
// package's regular expressions.
const (
	// entryCost is the CPU units of an array element or map entry built.
	entryCost = 32
	// entryBytes is the memory of an array element or map entry.
	entryBytes = 16
	// maxRegexBytes is the longest pattern split and replaceAll accept.
	maxRegexBytes = 1000
	// maxRegexInsts is the largest compiled program a pattern may have.
	maxRegexInsts = 10_000
	// regexParseCost is charged per pattern byte to translate and parse it.
	regexParseCost = 16
	// regexCompileCost is charged per instruction to compile a program.
	regexCompileCost = 600
	// regexMatchCost is charged per subject byte and program instruction.
	regexMatchCost = 4
	// maxQuoted is how much of an input an error message quotes.
	maxQuoted = 100
)

// Names of the static objects that have no Kind of their own.
const (
	mathName = "MATH"
	miscName = "PRESET_MISC_FUNC_FIELDS"
)

// ---------------------------------------------------------------------
// Errors and arguments

// methodMissing is SEL's refusal of a method a type does not have.
func methodMissing(typ fmt.Stringer, name string) error {
	return Unsupported("%s has no method %s", typ, name)
}

// arityError refuses a method called with a number of arguments it does not
// take (SEL looks methods up by name and argument count).
func arityError(typ fmt.Stringer, name, takes string, got int) error {
	return Unsupported("%s.%s takes %s, given %d", typ, name, takes, got)
}

// argTypeError is an argument of the wrong type (SEL's ClassCastException).
func argTypeError(typ fmt.Stringer, name string, i int, want string, got Value) error {
	return fmt.Errorf("%s.%s: argument %d must be %s, not %s", typ, name, i+1, want, kindNameOf(got))
}

// orNull is v, or null for a missing value.
func orNull(v Value) Value {
	if v == nil {
		return Null{}
	}
	return v
}

// kindNameOf names v's kind, NULL for a missing value.
func kindNameOf(v Value) string {
	switch x := v.(type) {
	case nil:
		return KindNull.String()
	case TypedNull:
		return "a null " + x.Of.String()
	}
	return v.Kind().String()
}

// nullString reports whether v is a String box holding null (String s;
// an element of new String[n]), which SEL passes where a String goes and
// Java's String.valueOf prints "null".
func nullString(v Value) bool {
	t, ok := v.(TypedNull)
	return ok && t.Of == KindString
}

// staticName is a name that prints itself, for the static objects.
type staticName string

func (t staticName) String() string { return string(t) }

// quoteInput quotes s for an error message, cut to maxQuoted bytes.
func quoteInput(s string) string {
	if len(s) > maxQuoted {
		cut := maxQuoted
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "..."
	}
	return "\"" + s + "\""
}

// stringParam is argument i as a string parameter.
func stringParam(typ fmt.Stringer, name string, args []Value, i int) (string, error) {
	if s, ok := args[i].(String); ok {
		return string(s), nil
	}
	return "", argTypeError(typ, name, i, "a STRING", args[i])
}

// intParam is argument i as SEL passes a LONG to a Java int parameter
// (SelLong.unbox): a long over Integer.MAX_VALUE stays a long, which the
// parameter refuses; one below Integer.MIN_VALUE is cast, and wraps.
func intParam(typ fmt.Stringer, name string, args []Value, i int) (int, error) {
	v, ok := args[i].(Long)
	if !ok {
		return 0, argTypeError(typ, name, i, "an int", args[i])
	}
	if v > math.MaxInt32 {
		return 0, fmt.Errorf("%s.%s: argument %d (%d) is not an int", typ, name, i+1, v)
	}
	return int(int32(v)), nil
}

// unboxLong is v as SelLong.unbox hands it to Java: an Integer (the value
// cast to 32 bits) when v is at most Integer.MAX_VALUE, else a Long. isInt
// reports which.
func unboxLong(v Long) (n int64, isInt bool) {
	if v > math.MaxInt32 {
		return int64(v), false
	}
	return int64(int32(v)), true
}

// chargeBuilt checks a string of n bytes against the length limit and
// charges building it.
func chargeBuilt(m *Machine, n int) error {
	if err := m.CheckString(n); err != nil {
		return err
	}
	return m.Charge(int64(n)+1, int64(n))
}

// ---------------------------------------------------------------------
// String

// stringArities are the String methods SEL calls through method handles
// (SelString.SUPPORTED_METHODS), by the argument counts they take.
var stringArities = map[string]string{
	"split": "1 or 2 arguments", "toUpperCase": "no arguments", "toLowerCase": "no arguments",
	"replaceAll": "2 arguments", "replace": "2 arguments", "valueOf": "1 argument",
	"startsWith": "1 argument", "endsWith": "1 argument", "contains": "1 argument",
	"substring": "1 or 2 arguments", "lastIndexOf": "1 argument", "length": "no arguments",
	"isEmpty": "no arguments", "equals": "1 argument", "compareTo": "1 argument", "trim": "no arguments",
}

// stringTakes reports whether a String method of arity description takes n arguments.
func stringTakes(arity string, n int) bool {
	switch arity {
	case "no arguments":
		return n == 0
	case "1 argument":
		return n == 1
	case "2 arguments":
		return n == 2
	}
	return n == 1 || n == 2
}

// callString calls method name of s (SelString.call).
func callString(m *Machine, s String, name string, args []Value) (Value, error) {
	if err := m.Charge(1, 0); err != nil {
		return nil, err
	}
	switch name {
	case "format":
		return stringFormat(m, args)
	case "join":
		return stringJoin(m, args)
	case "escape":
		if len(args) == 0 {
			return escapeJava(m, string(s))
		}
		if len(args) == 1 {
			return escapeArg(m, args[0])
		}
		return nil, fmt.Errorf("STRING.escape takes no argument or a STRING, given %d arguments", len(args))
	}
	arity, ok := stringArities[name]
	switch {
	case !ok:
		return nil, methodMissing(KindString, name)
	case !stringTakes(arity, len(args)):
		return nil, arityError(KindString, name, arity, len(args))
	case name == "valueOf":
		// SEL binds valueOf as a static method handle, which fails when
		// invoked with a receiver.
		return nil, fmt.Errorf("STRING.valueOf is static: call String.valueOf(x)")
	}
	switch name {
	case "split", "toUpperCase", "toLowerCase", "replaceAll", "replace", "substring", "trim":
		return stringTransform(m, string(s), name, args)
	}
	return stringQuery(m, string(s), name, args)
}

// stringStatic calls method name on the class String, SEL's SelString
// holding null: the static methods work, the others fail on the null.
func stringStatic(m *Machine, name string, args []Value) (Value, error) {
	if err := m.Charge(1, 0); err != nil {
		return nil, err
	}
	switch name {
	case "format":
		return stringFormat(m, args)
	case "join":
		return stringJoin(m, args)
	case "escape":
		if len(args) == 1 {
			return escapeArg(m, args[0])
		}
		if len(args) == 0 {
			return nil, fmt.Errorf("String.escape() has no string to escape: call it on a string or pass one")
		}
		return nil, fmt.Errorf("STRING.escape takes no argument or a STRING, given %d arguments", len(args))
	}
	arity, ok := stringArities[name]
	switch {
	case !ok:
		return nil, methodMissing(KindString, name)
	case !stringTakes(arity, len(args)):
		return nil, arityError(KindString, name, arity, len(args))
	case name != "valueOf":
		return nil, fmt.Errorf("String.%s is not static: call it on a string", name)
	}
	s, err := javaValueOf(args[0])
	if err != nil {
		return nil, fmt.Errorf("String.valueOf: %w", err)
	}
	if err := chargeBuilt(m, len(s)); err != nil {
		return nil, err
	}
	return String(s), nil
}

// javaValueOf is String.valueOf(arg) of an argument SEL unboxed: longs
// as SelLong.unbox passes them. Arrays print as Arrays.toString where Java
// prints their identity ("[J@1b6d3586"), maps in insertion order where a
// HashMap prints in hash order, and a UUID prints where SEL fails to unbox
// it.
func javaValueOf(arg Value) (string, error) {
	switch x := arg.(type) {
	case Long:
		n, _ := unboxLong(x)
		return strconv.FormatInt(n, 10), nil
	case nil, Null, TypedNull, String, Double, Boolean, *Array, *Map, Stringer:
		return JavaString(x), nil
	}
	return "", fmt.Errorf("cannot convert a %s to a string", arg.Kind())
}

// stringQuery runs the String methods that read s and return a value
// that is not a string.
func stringQuery(m *Machine, s, name string, args []Value) (Value, error) {
	switch name {
	case "length":
		if err := m.Charge(int64(len(s))+1, 0); err != nil {
			return nil, err
		}
		return Long(utf16Len(s)), nil
	case "isEmpty":
		return Boolean(s == ""), nil
	case "equals":
		t, ok := args[0].(String)
		if err := m.Charge(int64(min(len(s), len(t)))+1, 0); err != nil {
			return nil, err
		}
		return Boolean(ok && string(t) == s), nil
	}
	t, err := stringParam(KindString, name, args, 0)
	if err != nil {
		return nil, err
	}
	if err := m.Charge(int64(len(s)+len(t))+1, 0); err != nil {
		return nil, err
	}
	switch name {
	case "compareTo":
		return Long(compareUTF16(s, t)), nil
	case "startsWith":
		return Boolean(strings.HasPrefix(s, t)), nil
	case "endsWith":
		return Boolean(strings.HasSuffix(s, t)), nil
	case "contains":
		return Boolean(strings.Contains(s, t)), nil
	}
	// lastIndexOf
	i := strings.LastIndex(s, t)
	if i < 0 {
		return Long(-1), nil
	}
	return Long(utf16Len(s[:i])), nil
}

// stringTransform runs the String methods that build a string or an
// array from s.
func stringTransform(m *Machine, s, name string, args []Value) (Value, error) {
	switch name {
	case "toUpperCase":
		return caseMap(m, s, true)
	case "toLowerCase":
		return caseMap(m, s, false)
	case "trim":
		if err := m.Charge(int64(len(s))+1, 0); err != nil {
			return nil, err
		}
		// Java's trim removes the characters up to U+0020 from both ends.
		return String(strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })), nil
	case "substring":
		return substringUTF16(m, s, args)
	case "split":
		re, err := stringParam(KindString, name, args, 0)
		if err != nil {
			return nil, err
		}
		limit := 0
		if len(args) == 2 {
			if limit, err = intParam(KindString, name, args, 1); err != nil {
				return nil, err
			}
		}
		return splitString(m, s, re, limit)
	}
	a, err := stringParam(KindString, name, args, 0)
	if err != nil {
		return nil, err
	}
	b, err := stringParam(KindString, name, args, 1)
	if err != nil {
		return nil, err
	}
	if name == "replace" {
		return replaceLiteral(m, s, a, b)
	}
	return replaceAll(m, s, a, b)
}

// substringUTF16 is String.substring(begin[, end]) in UTF-16 code units.
func substringUTF16(m *Machine, s string, args []Value) (Value, error) {
	begin, err := intParam(KindString, "substring", args, 0)
	if err != nil {
		return nil, err
	}
	if err := m.Charge(int64(len(s))+1, 0); err != nil {
		return nil, err
	}
	n := utf16Len(s)
	end := n
	if len(args) == 2 {
		if end, err = intParam(KindString, "substring", args, 1); err != nil {
			return nil, err
		}
	}
	if begin < 0 || end > n || begin > end {
		return nil, fmt.Errorf("STRING.substring: begin %d, end %d, length %d", begin, end, n)
	}
	if n == len(s) { // ASCII: code units are bytes
		return String(s[begin:end]), nil
	}
	if err := m.Charge(0, int64(4*n)); err != nil {
		return nil, err
	}
	u := utf16.Encode([]rune(s))
	return String(utf16.Decode(u[begin:end])), nil
}

// utf16Len is the length of s in UTF-16 code units, as Java's
// String.length counts it.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// compareUTF16 is Java's a.compareTo(b): the difference of the first
// UTF-16 code units that differ, else of the lengths.
func compareUTF16(a, b string) int {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		ra, wa := utf8.DecodeRuneInString(a[i:])
		rb, wb := utf8.DecodeRuneInString(b[j:])
		if ra != rb {
			ua, ub := utf16Units(ra), utf16Units(rb)
			if ua[0] != ub[0] {
				return int(ua[0]) - int(ub[0])
			}
			return int(ua[1]) - int(ub[1])
		}
		i, j = i+wa, j+wb
	}
	return utf16Len(a[i:]) - utf16Len(b[j:])
}

// utf16Units are r's UTF-16 code units (the second is 0 for a BMP rune).
func utf16Units(r rune) [2]uint16 {
	if r >= 0x10000 {
		hi, lo := utf16.EncodeRune(r)
		return [2]uint16{uint16(hi), uint16(lo)}
	}
	return [2]uint16{uint16(r), 0}
}

// replaceLiteral is String.replace(target, replacement): every occurrence,
// left to right; an empty target inserts the replacement around every
// character (every code point: Java's every UTF-16 unit would split a
// surrogate pair).
func replaceLiteral(m *Machine, s, target, repl string) (Value, error) {
	if err := m.Charge(int64(len(s))+1, 0); err != nil {
		return nil, err
	}
	var count int
	if target == "" {
		count = utf8.RuneCountInString(s) + 1
	} else {
		count = strings.Count(s, target)
	}
	if count == 0 {
		return String(s), nil
	}
	n := int64(len(s)) + int64(count)*(int64(len(repl))-int64(len(target)))
	if n > math.MaxInt32 {
		n = math.MaxInt32
	}
	if err := chargeBuilt(m, int(n)); err != nil {
		return nil, err
	}
	return String(strings.ReplaceAll(s, target, repl)), nil
}

// escapeArg is escape(arg): a string, or a null one, which escapes its
// print, "null".
func escapeArg(m *Machine, arg Value) (Value, error) {
	switch x := arg.(type) {
	case String:
		return escapeJava(m, string(x))
	case TypedNull:
		if x.Of == KindString {
			return escapeJava(m, "null")
		}
	}
	return nil, argTypeError(KindString, "escape", 0, "a STRING", arg)
}

// escapeJava is SelString.escape: backslashes, tabs, backspaces,
// newlines, carriage returns, form feeds and double quotes escaped as in
// a Java string literal.
func escapeJava(m *Machine, s string) (Value, error) {
	if err := m.Charge(int64(len(s))+1, 0); err != nil {
		return nil, err
	}
	const special = "\\\t\b\n\r\f\""
	extra := 0
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(special, s[i]) >= 0 {
			extra++
		}
	}
	if extra == 0 {
		return String(s), nil
	}
	if err := chargeBuilt(m, len(s)+extra); err != nil {
		return nil, err
	}
	var b strings.Builder
	b.Grow(len(s) + extra)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\', '"':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\f':
			b.WriteString(`\f`)
		default:
			b.WriteByte(c)
		}
	}
	return String(b.String()), nil
}

// stringJoin is String.join(delimiter, elements...) and
// String.join(delimiter, String[]).
func stringJoin(m *Machine, args []Value) (Value, error) {
	if len(args) == 0 {
		return nil, fmt.Errorf("STRING.join takes a delimiter and the strings to join, given no arguments")
	}
	delim, err := stringParam(KindString, "join", args, 0)
	if err != nil {
		return nil, err
	}
	var parts []string
	if a, ok := args[len(args)-1].(*Array); ok && len(args) == 2 {
		if a.Of != KindStringArray {
			return nil, argTypeError(KindString, "join", 1, "a STRING_ARRAY", a)
		}
		for _, it := range a.Items {
			parts = append(parts, JavaString(it))
		}
	} else {
		for i := 1; i < len(args); i++ {
			if nullString(args[i]) {
				parts = append(parts, "null")
				continue
			}
			p, err := stringParam(KindString, "join", args, i)
			if err != nil {
				return nil, err
			}
			parts = append(parts, p)
		}
	}
	n := int64(len(delim)) * int64(max(len(parts)-1, 0))
	for _, p := range parts {
		n += int64(len(p))
	}
	if err := chargeBuilt(m, int(min(n, math.MaxInt32))); err != nil {
		return nil, err
	}
	return String(strings.Join(parts, delim)), nil
}

// ---------------------------------------------------------------------
// Case mapping

// upperSpecial are the characters whose upper case is more than one
// character (Unicode's SpecialCasing.txt, unconditional mappings), which
// Java's toUpperCase applies and Go's unicode.ToUpper does not.
var upperSpecial = map[rune]string{
	0xDF: "SS", 0x149: "\u02BCN", 0x1F0: "J\u030C", 0x390: "\u0399\u0308\u0301", 0x3B0: "\u03A5\u0308\u0301",
	0x587: "\u0535\u0552", 0x1E96: "H\u0331", 0x1E97: "T\u0308", 0x1E98: "W\u030A", 0x1E99: "Y\u030A",
	0x1E9A: "A\u02BE", 0x1F50: "\u03A5\u0313", 0x1F52: "\u03A5\u0313\u0300", 0x1F54: "\u03A5\u0313\u0301",
	0x1F56: "\u03A5\u0313\u0342", 0x1F80: "\u1F08\u0399", 0x1F81: "\u1F09\u0399", 0x1F82: "\u1F0A\u0399",
	0x1F83: "\u1F0B\u0399", 0x1F84: "\u1F0C\u0399", 0x1F85: "\u1F0D\u0399", 0x1F86: "\u1F0E\u0399",
	0x1F87: "\u1F0F\u0399", 0x1F88: "\u1F08\u0399", 0x1F89: "\u1F09\u0399", 0x1F8A: "\u1F0A\u0399",
	0x1F8B: "\u1F0B\u0399", 0x1F8C: "\u1F0C\u0399", 0x1F8D: "\u1F0D\u0399", 0x1F8E: "\u1F0E\u0399",
	0x1F8F: "\u1F0F\u0399", 0x1F90: "\u1F28\u0399", 0x1F91: "\u1F29\u0399", 0x1F92: "\u1F2A\u0399",
	0x1F93: "\u1F2B\u0399", 0x1F94: "\u1F2C\u0399", 0x1F95: "\u1F2D\u0399", 0x1F96: "\u1F2E\u0399",
	0x1F97: "\u1F2F\u0399", 0x1F98: "\u1F28\u0399", 0x1F99: "\u1F29\u0399", 0x1F9A: "\u1F2A\u0399",
	0x1F9B: "\u1F2B\u0399", 0x1F9C: "\u1F2C\u0399", 0x1F9D: "\u1F2D\u0399", 0x1F9E: "\u1F2E\u0399",
	0x1F9F: "\u1F2F\u0399", 0x1FA0: "\u1F68\u0399", 0x1FA1: "\u1F69\u0399", 0x1FA2: "\u1F6A\u0399",
	0x1FA3: "\u1F6B\u0399", 0x1FA4: "\u1F6C\u0399", 0x1FA5: "\u1F6D\u0399", 0x1FA6: "\u1F6E\u0399",
	0x1FA7: "\u1F6F\u0399", 0x1FA8: "\u1F68\u0399", 0x1FA9: "\u1F69\u0399", 0x1FAA: "\u1F6A\u0399",
	0x1FAB: "\u1F6B\u0399", 0x1FAC: "\u1F6C\u0399", 0x1FAD: "\u1F6D\u0399", 0x1FAE: "\u1F6E\u0399",
	0x1FAF: "\u1F6F\u0399", 0x1FB2: "\u1FBA\u0399", 0x1FB3: "\u0391\u0399", 0x1FB4: "\u0386\u0399",
	0x1FB6: "\u0391\u0342", 0x1FB7: "\u0391\u0342\u0399", 0x1FBC: "\u0391\u0399", 0x1FC2: "\u1FCA\u0399",
	0x1FC3: "\u0397\u0399", 0x1FC4: "\u0389\u0399", 0x1FC6: "\u0397\u0342", 0x1FC7: "\u0397\u0342\u0399",
	0x1FCC: "\u0397\u0399", 0x1FD2: "\u0399\u0308\u0300", 0x1FD3: "\u0399\u0308\u0301", 0x1FD6: "\u0399\u0342",
	0x1FD7: "\u0399\u0308\u0342", 0x1FE2: "\u03A5\u0308\u0300", 0x1FE3: "\u03A5\u0308\u0301",
	0x1FE4: "\u03A1\u0313", 0x1FE6: "\u03A5\u0342", 0x1FE7: "\u03A5\u0308\u0342", 0x1FF2: "\u1FFA\u0399",
	0x1FF3: "\u03A9\u0399", 0x1FF4: "\u038F\u0399", 0x1FF6: "\u03A9\u0342", 0x1FF7: "\u03A9\u0342\u0399",
	0x1FFC: "\u03A9\u0399", 0xFB00: "FF", 0xFB01: "FI", 0xFB02: "FL", 0xFB03: "FFI", 0xFB04: "FFL",
	0xFB05: "ST", 0xFB06: "ST", 0xFB13: "\u0544\u0546", 0xFB14: "\u0544\u0535", 0xFB15: "\u0544\u053B",
	0xFB16: "\u054E\u0546", 0xFB17: "\u0544\u053D",
}

// caseMap is String.toUpperCase() or toLowerCase() as Java maps case in
// an English locale: full case mapping (ß to SS, İ to i̇, Σ to ς at the end
// of a word). The result's size is computed, and checked, before it is
// built.
func caseMap(m *Machine, s string, upper bool) (Value, error) {
	if err := m.Charge(2*int64(len(s))+1, 0); err != nil {
		return nil, err
	}
	n := caseMappedLen(s, upper)
	if err := chargeBuilt(m, n); err != nil {
		return nil, err
	}
	return String(caseMapped(s, upper, n)), nil
}

// isASCII reports whether s is all ASCII, where Java's case mapping is
// ASCII's.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// caseMappedLen is the length in bytes of s's case mapping.
func caseMappedLen(s string, upper bool) int {
	if isASCII(s) {
		return len(s)
	}
	n := 0
	for i, r := range s {
		if sp, mr := mapRune(s, i, r, upper); sp != "" {
			n += len(sp)
		} else {
			n += utf8.RuneLen(mr)
		}
	}
	return n
}

// caseMapped is s's case mapping, of size n.
func caseMapped(s string, upper bool, n int) string {
	if isASCII(s) {
		if upper {
			return strings.ToUpper(s)
		}
		return strings.ToLower(s)
	}
	var b strings.Builder
	b.Grow(n)
	for i, r := range s {
		if sp, mr := mapRune(s, i, r, upper); sp != "" {
			b.WriteString(sp)
		} else {
			b.WriteRune(mr)
		}
	}
	return b.String()
}

// mapRune is the case mapping of r, found at byte i of s: a string when
// it is more than one character, else a rune.
func mapRune(s string, i int, r rune, upper bool) (string, rune) {
	if upper {
		if sp, ok := upperSpecial[r]; ok {
			return sp, 0
		}
		return "", unicode.ToUpper(r)
	}
	switch {
	case r == 0x130:
		return "i\u0307", 0
	case r == 'Σ' && finalSigma(s, i):
		return "", 'ς'
	}
	return "", unicode.ToLower(r)
}

// finalSigma reports whether the Σ at byte i of s ends a word: a cased
// letter comes before it in its word and none after (Java's Final_Sigma,
// with a word approximated as a run of letters, marks and digits).
func finalSigma(s string, i int) bool {
	inWord := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsMark(r) || unicode.IsDigit(r) }
	cased := func(r rune) bool { return unicode.IsUpper(r) || unicode.IsLower(r) || unicode.IsTitle(r) }
	before := false
	for j := i; j > 0; {
		r, w := utf8.DecodeLastRuneInString(s[:j])
		if !inWord(r) {
			break
		}
		if cased(r) {
			before = true
			break
		}
		j -= w
	}
	if !before {
		return false
	}
	for j := i + len("Σ"); j < len(s); {
		r, w := utf8.DecodeRuneInString(s[j:])
		if !inWord(r) {
			break
		}
		if cased(r) {
			return false
		}
		j += w
	}
	return true
}

// ---------------------------------------------------------------------
// Regular expressions: split and replaceAll
//
// Java's patterns run on Go's regexp (RE2), translated where the syntax
// means the same and refused where it does not. Differences that remain:
// back references, lookaround, atomic groups, possessive quantifiers,
// octal escapes, \G, \Z, \R, \X and Java's named classes beyond the POSIX
// ones (\p{javaLowerCase}, \p{IsLatin}, \p{InGreek}) are refused; nested
// classes and intersections ([a[b]], [a-z&&[^c]]) and the flag (?U) are
// refused rather than read as RE2 reads them, and so is a { that does not
// start a repetition (Java's error, RE2's literal); (?i) folds Unicode case
// where Java folds ASCII only; \b sees ASCII word characters where Java's
// sees Unicode letters; $ matches only at the very end where Java's also
// matches before a final line terminator; (?m) lines end at \n only; a
// class [\S] also holds \x0B; and an empty match right after a match is
// skipped (RE2's rule: "abc".split("b*") gives [a, c], Java [a, , c]).

// compileJavaRegex translates, sizes and compiles a Java pattern, charged
// to m: its bytes to translate and parse it, its instructions to compile
// it. It returns the program and its size, what a subject byte costs to
// match.
func compileJavaRegex(m *Machine, method, pattern string) (*regexp.Regexp, int64, error) {
	if len(pattern) > maxRegexBytes {
		return nil, 0, fmt.Errorf("%w: STRING.%s: a regular expression of %d bytes is over the limit of %d",
			ErrLimit, method, len(pattern), maxRegexBytes)
	}
	if err := m.Charge(int64(len(pattern)+1)*regexParseCost, int64(len(pattern))); err != nil {
		return nil, 0, err
	}
	goPattern, err := translateRegex(pattern)
	if err != nil {
		return nil, 0, fmt.Errorf("STRING.%s: regular expression %s: %w", method, quoteInput(pattern), err)
	}
	tree, err := syntax.Parse(goPattern, syntax.Perl)
	if err != nil {
		var se *syntax.Error
		if errors.As(err, &se) && (se.Code == syntax.ErrNestingDepth || se.Code == syntax.ErrLarge ||
			se.Code == syntax.ErrInvalidRepeatSize) {
			// RE2 bounds nesting, repeat counts (1,000) and their products.
			return nil, 0, fmt.Errorf("%w: STRING.%s: regular expression %s is too large or too deep: %v",
				ErrLimit, method, quoteInput(pattern), err)
		}
		return nil, 0, fmt.Errorf("STRING.%s: invalid regular expression %s: %v", method, quoteInput(pattern), err)
	}
	insts := min(progSize(tree), sizeLimit) + 2
	if insts > maxRegexInsts {
		return nil, 0, fmt.Errorf("%w: STRING.%s: regular expression %s compiles to %d instructions, over the limit of %d",
			ErrLimit, method, quoteInput(pattern), insts, maxRegexInsts)
	}
	if err := m.Charge(insts*regexCompileCost, insts*40); err != nil {
		return nil, 0, err
	}
	re, err := regexp.Compile(goPattern)
	if err != nil {
		return nil, 0, fmt.Errorf("STRING.%s: invalid regular expression %s: %v", method, quoteInput(pattern), err)
	}
	return re, insts, nil
}

// chargeMatch charges matching a program of insts instructions over
// subject.
func chargeMatch(m *Machine, subject string, insts int64) error {
	return m.Charge(satMul(int64(len(subject)+1), insts*regexMatchCost), 0)
}

// sizeLimit is where program sizes saturate: far above the limit, far
// below overflow.
const sizeLimit = 1 << 40

func satMul(a, b int64) int64 {
	if a != 0 && b > sizeLimit/a {
		return sizeLimit
	}
	return min(a*b, sizeLimit)
}

// progSize is at least the number of instructions re compiles to once
// simplified (counted repeats expand into copies), computed from the parse
// tree without compiling it; sizes saturate at sizeLimit.
func progSize(re *syntax.Regexp) int64 {
	sum := func(extra int64) int64 {
		n := extra
		for _, s := range re.Sub {
			n = min(n+progSize(s), sizeLimit)
		}
		return n
	}
	switch re.Op {
	case syntax.OpLiteral:
		return max(int64(len(re.Rune)), 1)
	case syntax.OpCapture:
		return sum(2)
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest:
		return sum(1)
	case syntax.OpConcat:
		return max(sum(0), 1)
	case syntax.OpAlternate:
		return sum(int64(len(re.Sub) - 1))
	case syntax.OpRepeat:
		sub := progSize(re.Sub[0])
		switch {
		case re.Max < 0:
			n := min(satMul(int64(re.Min), sub)+1, sizeLimit)
			if re.Min == 0 {
				n = min(n+sub, sizeLimit)
			}
			return n
		case re.Max == 0:
			return 1
		}
		return min(satMul(int64(re.Min), sub)+satMul(int64(re.Max-re.Min), sub+1), sizeLimit)
	}
	return 1
}

// posixClasses are Java's \p{Name} POSIX classes (US-ASCII), as the
// contents of a class.
var posixClasses = map[string]string{
	"Lower": `a-z`, "Upper": `A-Z`, "ASCII": `\x00-\x7F`, "Alpha": `a-zA-Z`, "Digit": `0-9`,
	"Alnum": `a-zA-Z0-9`, "Punct": `!-/:-@\[-\x60{-~`, "Graph": `!-~`, "Print": ` -~`, "Blank": ` \t`,
	"Cntrl": `\x00-\x1F\x7F`, "XDigit": `0-9a-fA-F`, "Space": ` \t\n\x0B\f\r`,
}

// Java's predefined classes whose meaning RE2 spells otherwise, as the
// contents of a class.
const (
	javaSpace = `\t\n\x0B\f\r `
	javaVert  = `\n\x0B\f\r\x{85}\x{2028}\x{2029}`
	javaHoriz = ` \t\xA0\x{1680}\x{180E}\x{2000}-\x{200A}\x{202F}\x{205F}\x{3000}`
	javaDot   = `[^\n\r\x{85}\x{2028}\x{2029}]`
)

// translateRegex rewrites a Java pattern in RE2's syntax: \uXXXX, \e, \s,
// \v, \h, \p{Posix}, a backslash before a non-ASCII character, and the dot
// (which in Java stops at every line terminator, not only \n). It refuses
// what RE2 would read differently.
func translateRegex(p string) (string, error) {
	var b strings.Builder
	inClass := false
	dotAll := javaDotAll(p)
	for i := 0; i < len(p); {
		c := p[i]
		switch {
		case c == '\\' && i+1 < len(p):
			n, err := translateEscape(&b, p, i, inClass)
			if err != nil {
				return "", err
			}
			i = n
			continue
		case c == '[' && inClass:
			return "", Unsupported("nested character classes (union) are not supported")
		case c == '[':
			inClass = true
			b.WriteByte(c)
			i++
			// A ] first in a class is literal in RE2; so is it in Java.
			if i < len(p) && p[i] == '^' {
				b.WriteByte('^')
				i++
			}
			if i < len(p) && p[i] == ']' {
				b.WriteString(`\]`)
				i++
			}
			continue
		case c == ']' && inClass:
			inClass = false
		case c == '&' && inClass && strings.HasPrefix(p[i:], "&&"):
			return "", Unsupported("character class intersections (&&) are not supported")
		case c == '.' && !inClass && !dotAll:
			b.WriteString(javaDot)
			i++
			continue
		case c == '{' && !inClass && !javaRepeat(p[i:]):
			// Java reads every { outside a class as a repetition; RE2 reads
			// one that is not as a literal.
			return "", fmt.Errorf("illegal repetition %s", quoteInput(p[i:min(i+10, len(p))]))
		case c == '(' && !inClass && strings.HasPrefix(p[i:], "(?"):
			if flags := leadingFlags(p[i+2:]); strings.ContainsRune(flags, 'U') {
				return "", Unsupported("the flag U (UNICODE_CHARACTER_CLASS) is not supported")
			}
		}
		b.WriteByte(c)
		i++
	}
	return b.String(), nil
}

// javaRepeat reports whether s starts with a repetition: {n}, {n,} or
// {n,m}.
func javaRepeat(s string) bool {
	i := 1
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 1 || i >= len(s) {
		return false
	}
	if s[i] == ',' {
		i++
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	}
	return i < len(s) && s[i] == '}'
}

// leadingFlags are the flag letters at the start of s, after "(?".
func leadingFlags(s string) string {
	end := strings.IndexFunc(s, func(r rune) bool { return !(r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') })
	if end < 0 {
		return s
	}
	return s[:end]
}

// javaDotAll reports whether p turns DOTALL on anywhere ((?s), (?is:...)):
// then its dots are left to RE2, which honours the flag where it is set.
func javaDotAll(p string) bool {
	for i := strings.Index(p, "(?"); i >= 0; {
		flags, _, _ := strings.Cut(leadingFlags(p[i+2:]), "-")
		if strings.ContainsRune(flags, 's') {
			return true
		}
		next := strings.Index(p[i+2:], "(?")
		if next < 0 {
			break
		}
		i += 2 + next
	}
	return false
}

// translateEscape writes the RE2 form of the escape at p[i] (a backslash
// with a character after it) and returns the index after it.
func translateEscape(b *strings.Builder, p string, i int, inClass bool) (int, error) {
	n := p[i+1]
	wrap := func(class string, negate bool) {
		switch {
		case inClass:
			b.WriteString(class)
		case negate:
			b.WriteString("[^" + class + "]")
		default:
			b.WriteString("[" + class + "]")
		}
	}
	switch {
	case n >= '0' && n <= '9':
		return 0, Unsupported("back references and octal escapes (\\%c) are not supported", n)
	case n == 'Q':
		lit, rest, found := strings.Cut(p[i+2:], `\E`)
		for _, r := range lit {
			writeLiteral(b, r)
		}
		if !found {
			return len(p), nil
		}
		return len(p) - len(rest), nil
	case n == 'u':
		if i+6 > len(p) || !isHex(p[i+2:i+6]) {
			return 0, fmt.Errorf("illegal Unicode escape sequence")
		}
		b.WriteString(`\x{` + p[i+2:i+6] + `}`)
		return i + 6, nil
	case n == 'e':
		b.WriteString(`\x1B`)
	case n == 's', n == 'v', n == 'h':
		wrap(map[byte]string{'s': javaSpace, 'v': javaVert, 'h': javaHoriz}[n], false)
	case (n == 'S' || n == 'V' || n == 'H') && !inClass:
		wrap(map[byte]string{'S': javaSpace, 'V': javaVert, 'H': javaHoriz}[n], true)
	case n == 'V', n == 'H':
		return 0, Unsupported("\\%c inside a character class is not supported", n)
	case (n == 'p' || n == 'P') && strings.HasPrefix(p[i+2:], "{"):
		name, _, ok := strings.Cut(p[i+3:], "}")
		if !ok {
			return 0, fmt.Errorf("unclosed character family")
		}
		class, posix := posixClasses[name]
		if !posix {
			// RE2's own classes (\p{L}) pass; others fail to parse.
			b.WriteString(p[i : i+3+len(name)+1])
			return i + 3 + len(name) + 1, nil
		}
		if n == 'P' && inClass {
			return 0, Unsupported("\\P{%s} inside a character class is not supported", name)
		}
		wrap(class, n == 'P')
		return i + 3 + len(name) + 1, nil
	case n == 'x' && strings.HasPrefix(p[i+2:], "{"):
		code, _, ok := strings.Cut(p[i+3:], "}")
		if !ok {
			return 0, fmt.Errorf("unclosed hexadecimal escape sequence")
		}
		b.WriteString(`\x{` + code + `}`)
		return i + 3 + len(code) + 1, nil
	case n >= utf8.RuneSelf:
		r, w := utf8.DecodeRuneInString(p[i+1:])
		writeLiteral(b, r)
		return i + 1 + w, nil
	default:
		b.WriteString(p[i : i+2])
	}
	return i + 2, nil
}

// writeLiteral writes r so that it matches itself, in a class or out.
func writeLiteral(b *strings.Builder, r rune) {
	if r < utf8.RuneSelf && !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != ' ' && unicode.IsPrint(r) {
		b.WriteByte('\\')
		b.WriteRune(r)
		return
	}
	if r < ' ' || r == 0x7F {
		fmt.Fprintf(b, `\x{%X}`, r)
		return
	}
	b.WriteRune(r)
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if !strings.ContainsRune("0123456789abcdefABCDEF", rune(s[i])) {
			return false
		}
	}
	return true
}

// splitLiteral is the literal a pattern stands for when Java's
// String.split takes its fast path: one character that is not a regex
// metacharacter, or a backslash and one that is not an ASCII letter or
// digit.
func splitLiteral(p string) (string, bool) {
	r, w := utf8.DecodeRuneInString(p)
	switch {
	case p == "":
		return "", false
	case w == len(p) && r < 0x10000 && !strings.ContainsRune(".$|()[{^?*+\\", r):
		return p, true
	case r == '\\' && len(p) > 1:
		r2, w2 := utf8.DecodeRuneInString(p[1:])
		alnum := r2 < utf8.RuneSelf && (unicode.IsLetter(r2) || unicode.IsDigit(r2))
		if 1+w2 == len(p) && r2 < 0x10000 && !alnum {
			return p[1:], true
		}
	}
	return "", false
}

// splitString is String.split(regex, limit): Pattern.split's rules over the
// matches (a leading empty string only for a match of some width, at most
// limit strings when limit > 0, trailing empty strings dropped when it is
// 0). Matches past the array limit fail before they are collected.
func splitString(m *Machine, s, pattern string, limit int) (Value, error) {
	most := m.limits.Array + 2 // enough matches to know the array is over the limit
	if limit > 0 && int64(limit) <= m.limits.Array {
		most = int64(limit) + 1
	}
	var locs [][]int
	if lit, ok := splitLiteral(pattern); ok {
		if err := m.Charge(int64(len(s))+1, 0); err != nil {
			return nil, err
		}
		for off := 0; int64(len(locs)) < most; {
			i := strings.Index(s[off:], lit)
			if i < 0 {
				break
			}
			locs = append(locs, []int{off + i, off + i + len(lit)})
			off += i + len(lit)
		}
	} else {
		re, insts, err := compileJavaRegex(m, "split", pattern)
		if err != nil {
			return nil, err
		}
		if err := chargeMatch(m, s, insts); err != nil {
			return nil, err
		}
		locs = re.FindAllStringIndex(s, int(min(most, math.MaxInt32)))
	}
	if err := m.Charge(int64(len(locs))*entryCost, int64(len(locs))*40); err != nil {
		return nil, err
	}
	if int64(len(locs)) == most && most == m.limits.Array+2 {
		return nil, fmt.Errorf("STRING.split: %w", m.CheckArray(len(locs)))
	}
	parts := splitParts(s, locs, limit)
	if err := m.CheckArray(len(parts)); err != nil {
		return nil, err
	}
	if err := m.Charge(int64(len(parts))*entryCost+int64(len(s)), int64(len(parts))*entryBytes); err != nil {
		return nil, err
	}
	items := make([]Value, len(parts))
	for i, p := range parts {
		items[i] = String(p)
	}
	return &Array{Of: KindStringArray, Items: items}, nil
}

// splitParts is Pattern.split over the matches locs of s.
func splitParts(s string, locs [][]int, limit int) []string {
	index := 0
	limited := limit > 0
	var list []string
	for _, loc := range locs {
		switch {
		case !limited || len(list) < limit-1:
			if index == 0 && loc[0] == 0 && loc[1] == 0 {
				continue // no leading empty string for an empty match at 0
			}
			list = append(list, s[index:loc[0]])
			index = loc[1]
		case len(list) == limit-1:
			list = append(list, s[index:])
			index = loc[1]
		}
	}
	if index == 0 {
		return []string{s}
	}
	if !limited || len(list) < limit {
		list = append(list, s[index:])
	}
	if limit == 0 {
		for len(list) > 0 && list[len(list)-1] == "" {
			list = list[:len(list)-1]
		}
	}
	return list
}

// replaceAll is String.replaceAll(regex, replacement) with Java's
// replacement syntax ($n, ${name}, \ escapes). A first pass counts the
// matches and their bytes, so that the result's size is bounded — and
// checked — before the second builds it.
func replaceAll(m *Machine, s, pattern, repl string) (Value, error) {
	re, insts, err := compileJavaRegex(m, "replaceAll", pattern)
	if err != nil {
		return nil, err
	}
	if err := chargeMatch(m, s, insts); err != nil {
		return nil, err
	}
	if err := m.Charge(0, int64(len(s))); err != nil {
		return nil, err
	}
	count, matched := 0, 0
	re.ReplaceAllStringFunc(s, func(x string) string {
		count++
		matched += len(x)
		return ""
	})
	if count == 0 {
		return String(s), nil
	}
	tmpl, lit, refs, err := javaReplacement(re, repl)
	if err != nil {
		return nil, fmt.Errorf("STRING.replaceAll: %w", err)
	}
	// Each group a reference copies lies within its match.
	bound := int64(len(s)-matched) + int64(count)*int64(lit) + int64(refs)*int64(matched)
	if err := chargeBuilt(m, int(min(bound, math.MaxInt32))); err != nil {
		return nil, err
	}
	if err := chargeMatch(m, s, insts); err != nil {
		return nil, err
	}
	return String(re.ReplaceAllString(s, tmpl)), nil
}

// javaReplacement translates a Java replacement string into a Go template
// for re: a backslash quotes the next character, $n is the longest group
// number re has, ${name} a named group. It returns the template, the
// bytes of literal text and the number of group references.
func javaReplacement(re *regexp.Regexp, repl string) (tmpl string, lit, refs int, err error) {
	var b strings.Builder
	groups := re.NumSubexp()
	for i := 0; i < len(repl); {
		switch c := repl[i]; c {
		case '\\':
			if i+1 >= len(repl) {
				return "", 0, 0, fmt.Errorf("character to be escaped is missing")
			}
			_, w := utf8.DecodeRuneInString(repl[i+1:])
			esc := repl[i+1 : i+1+w]
			b.WriteString(strings.ReplaceAll(esc, "$", "$$"))
			lit += w
			i += 1 + w
		case '$':
			ref, n, err := groupRef(re, repl[i+1:], groups)
			if err != nil {
				return "", 0, 0, err
			}
			b.WriteString("${" + ref + "}")
			refs++
			i += 1 + n
		default:
			b.WriteByte(c)
			lit++
			i++
		}
	}
	return b.String(), lit, refs, nil
}

// groupRef reads the group reference after a $ in a replacement: the
// group's number or name, and the bytes read.
func groupRef(re *regexp.Regexp, s string, groups int) (string, int, error) {
	if s == "" {
		return "", 0, fmt.Errorf("Illegal group reference: group index is missing")
	}
	if s[0] == '{' {
		end := 1
		for end < len(s) && (s[end] >= 'a' && s[end] <= 'z' || s[end] >= 'A' && s[end] <= 'Z' || s[end] >= '0' && s[end] <= '9') {
			end++
		}
		name := s[1:end]
		switch {
		case name == "":
			return "", 0, fmt.Errorf("named capturing group has 0 length name")
		case end >= len(s) || s[end] != '}':
			return "", 0, fmt.Errorf("named capturing group is missing trailing '}'")
		case name[0] >= '0' && name[0] <= '9':
			return "", 0, fmt.Errorf("capturing group name {%s} starts with digit character", name)
		case re.SubexpIndex(name) < 0:
			return "", 0, fmt.Errorf("No group with name {%s}", name)
		}
		return name, end + 1, nil
	}
	if s[0] < '0' || s[0] > '9' {
		return "", 0, fmt.Errorf("Illegal group reference")
	}
	ref, n := int(s[0]-'0'), 1
	for n < len(s) && s[n] >= '0' && s[n] <= '9' && ref*10+int(s[n]-'0') <= groups {
		ref = ref*10 + int(s[n]-'0')
		n++
	}
	if ref > groups {
		return "", 0, fmt.Errorf("No group %d", ref)
	}
	return strconv.Itoa(ref), n, nil
}

// ---------------------------------------------------------------------
// String.format
//
// A faithful subset of java.util.Formatter in an English locale: the
// conversions b, h, s, c, d, o, x, e, f, g (and their upper-case forms),
// % and n, with argument indices (1$, <), the flags - # + space 0 , ( and
// widths and precisions, checked as Java checks them. Date/time (%t) and
// hexadecimal floating point (%a) are refused. Floating point rounds the
// shortest decimal form half up, as Java does ("%.2f" of 1.005 is 1.01).
// Widths and precisions count UTF-16 code units; a width or a
// floating-point precision longer than the length limit fails before
// anything is built.

// Formatter flags.
const (
	fLeft = 1 << iota
	fAlt
	fPlus
	fSpace
	fZero
	fGroup
	fParen
	fPrev
	fUpper
)

const fmtFlagChars = "-#+ 0,(<"

// fmtSpec is one format specifier.
type fmtSpec struct {
	index       int // 0: the next argument; -1: the previous (<); -2: none (%, n); else 1-based
	flags       int
	width, prec int // -1 when absent
	conv        byte
	text        string
	fixed       string // literal text, when conv is 0
}

// stringFormat is String.format(format, args...) as SEL calls it: a
// single String[] argument spreads into the arguments, as Java's varargs
// do; any other array is one argument.
func stringFormat(m *Machine, args []Value) (Value, error) {
	if len(args) == 0 {
		return nil, fmt.Errorf("STRING.format takes a format and its arguments, given no arguments")
	}
	format, err := stringParam(KindString, "format", args, 0)
	if err != nil {
		return nil, err
	}
	rest := args[1:]
	if len(args) == 2 {
		if a, ok := args[1].(*Array); ok && a.Of == KindStringArray {
			rest = a.Items
		}
	}
	if err := m.Charge(int64(len(format))+int64(len(rest))*entryCost+1, 0); err != nil {
		return nil, err
	}
	specs, err := parseFormat(format)
	if err != nil {
		return nil, fmt.Errorf("String.format: %w", err)
	}
	var b strings.Builder
	last, ordinary := -1, -1
	for _, sp := range specs {
		var arg Value
		switch {
		case sp.conv == 0 || sp.index == -2:
		case sp.index == -1:
			if last < 0 || last >= len(rest) {
				return nil, fmt.Errorf("String.format: missing format argument for specifier '%s'", sp.text)
			}
			arg = rest[last]
		default:
			if sp.index == 0 {
				ordinary++
				last = ordinary
			} else {
				last = sp.index - 1
			}
			if last >= len(rest) {
				return nil, fmt.Errorf("String.format: missing format argument for specifier '%s'", sp.text)
			}
			arg = rest[last]
		}
		piece, err := formatOne(m, sp, arg)
		if err != nil {
			return nil, fmt.Errorf("String.format: %w", err)
		}
		if err := m.CheckString(b.Len() + len(piece)); err != nil {
			return nil, err
		}
		if err := m.Charge(int64(len(piece))+1, int64(len(piece))); err != nil {
			return nil, err
		}
		b.WriteString(piece)
	}
	return String(b.String()), nil
}

// parseFormat splits a format into literal text and specifiers
// (Formatter.parse), checking each specifier's flags as Java does.
func parseFormat(f string) ([]fmtSpec, error) {
	var specs []fmtSpec
	for i := 0; i < len(f); {
		j := strings.IndexByte(f[i:], '%')
		if j < 0 {
			specs = append(specs, fmtSpec{fixed: f[i:]})
			break
		}
		if j > 0 {
			specs = append(specs, fmtSpec{fixed: f[i : i+j]})
		}
		i += j + 1
		if i >= len(f) {
			return nil, fmt.Errorf("unknown format conversion '%%'")
		}
		sp, next, err := parseSpec(f, i)
		if err != nil {
			return nil, err
		}
		specs = append(specs, sp)
		i = next
	}
	return specs, nil
}

// digitsAt is the run of ASCII digits at s[i:].
func digitsAt(s string, i int) string {
	j := i
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	return s[i:j]
}

// parseSpec parses the specifier after the % at f[i-1]: as Java's
// %(\d+\$)?([-#+ 0,(\<]*)?(\d+)?(\.\d+)?([tT])?([a-zA-Z%]).
func parseSpec(f string, i int) (fmtSpec, int, error) {
	start := i - 1
	sp := fmtSpec{width: -1, prec: -1}
	if d := digitsAt(f, i); d != "" && i+len(d) < len(f) && f[i+len(d)] == '$' {
		n, err := strconv.Atoi(d)
		if err != nil || n <= 0 || n > math.MaxInt32 {
			return sp, 0, fmt.Errorf("illegal format argument index %s", d)
		}
		sp.index = n
		i += len(d) + 1
	}
	for i < len(f) && strings.IndexByte(fmtFlagChars, f[i]) >= 0 {
		bit := 1 << strings.IndexByte(fmtFlagChars, f[i])
		if sp.flags&bit != 0 {
			return sp, 0, fmt.Errorf("duplicate format flag '%c'", f[i])
		}
		sp.flags |= bit
		i++
	}
	if sp.flags&fPrev != 0 {
		sp.index = -1
	}
	if d := digitsAt(f, i); d != "" {
		n, err := strconv.Atoi(d)
		if err != nil || n > math.MaxInt32 {
			return sp, 0, fmt.Errorf("illegal format width %s", d)
		}
		sp.width = n
		i += len(d)
	}
	if i < len(f) && f[i] == '.' {
		d := digitsAt(f, i+1)
		if d == "" {
			return sp, 0, fmt.Errorf("unknown format conversion '%c'", f[start+1])
		}
		n, err := strconv.Atoi(d)
		if err != nil || n > math.MaxInt32 {
			return sp, 0, fmt.Errorf("illegal format precision %s", d)
		}
		sp.prec = n
		i += 1 + len(d)
	}
	if i >= len(f) || !(f[i] == '%' || f[i] >= 'a' && f[i] <= 'z' || f[i] >= 'A' && f[i] <= 'Z') {
		return sp, 0, fmt.Errorf("unknown format conversion '%c'", f[start+1])
	}
	sp.conv = f[i]
	sp.text = f[start : i+1]
	switch {
	case sp.conv == 't' || sp.conv == 'T':
		return sp, 0, Unsupported("date/time format conversions (%s) are not supported", sp.text)
	case strings.IndexByte("bBhHsScCdoxXeEfgGaA%n", sp.conv) < 0:
		return sp, 0, fmt.Errorf("unknown format conversion '%c'", sp.conv)
	}
	if sp.conv >= 'A' && sp.conv <= 'Z' {
		sp.flags |= fUpper
		sp.conv += 'a' - 'A'
	}
	return sp, i + 1, checkSpec(&sp)
}

// checkSpec checks a specifier's conversion, flags, width and precision
// (FormatSpecifier's checkGeneral, checkCharacter, checkInteger,
// checkFloat and checkText).
func checkSpec(sp *fmtSpec) error {
	has := func(fl int) bool { return sp.flags&fl != 0 }
	bad := func(fls ...int) error {
		for _, fl := range fls {
			if has(fl) {
				return fmt.Errorf("conversion = %c, flags = %c: the flag does not apply", sp.conv, fmtFlagChars[flagIndex(fl)])
			}
		}
		return nil
	}
	missingWidth := fmt.Errorf("format specifier '%s' needs a width", sp.text)
	numeric := func() error {
		switch {
		case sp.width == -1 && (has(fLeft) || has(fZero)):
			return missingWidth
		case has(fPlus) && has(fSpace), has(fLeft) && has(fZero):
			return fmt.Errorf("illegal format flags in '%s'", sp.text)
		}
		return nil
	}
	switch sp.conv {
	case 'b', 'h', 's':
		if sp.conv != 's' && has(fAlt) {
			return bad(fAlt)
		}
		if sp.width == -1 && has(fLeft) {
			return missingWidth
		}
		return bad(fPlus, fSpace, fZero, fGroup, fParen)
	case 'c':
		if sp.prec != -1 {
			return fmt.Errorf("illegal format precision %d for %%c", sp.prec)
		}
		if sp.width == -1 && has(fLeft) {
			return missingWidth
		}
		return bad(fAlt, fPlus, fSpace, fZero, fGroup, fParen)
	case 'd', 'o', 'x':
		if sp.prec != -1 {
			return fmt.Errorf("illegal format precision %d for %%%c", sp.prec, sp.conv)
		}
		if err := numeric(); err != nil {
			return err
		}
		if sp.conv == 'd' {
			return bad(fAlt)
		}
		return bad(fGroup)
	case 'e', 'f', 'g':
		if err := numeric(); err != nil {
			return err
		}
		switch sp.conv {
		case 'e':
			return bad(fGroup)
		case 'g':
			return bad(fAlt)
		}
		return nil
	case 'a':
		return Unsupported("hexadecimal floating-point format conversions (%s) are not supported", sp.text)
	case '%', 'n':
		return checkText(sp)
	}
	return fmt.Errorf("unknown format conversion '%c'", sp.text[len(sp.text)-1])
}

// checkText checks %% and %n, which take no argument.
func checkText(sp *fmtSpec) error {
	sp.index = -2
	if sp.prec != -1 {
		return fmt.Errorf("illegal format precision %d for %s", sp.prec, sp.text)
	}
	if sp.conv == 'n' {
		if sp.width != -1 {
			return fmt.Errorf("illegal format width %d for %%n", sp.width)
		}
		if sp.flags != 0 && sp.flags != fUpper {
			return fmt.Errorf("illegal format flags in '%s'", sp.text)
		}
		return nil
	}
	if sp.flags&^(fLeft|fUpper) != 0 {
		return fmt.Errorf("illegal format flags in '%s'", sp.text)
	}
	if sp.width == -1 && sp.flags&fLeft != 0 {
		return fmt.Errorf("format specifier '%s' needs a width", sp.text)
	}
	return nil
}

// flagIndex is the index of the single bit set in fl.
func flagIndex(fl int) int {
	n := 0
	for fl > 1 {
		fl >>= 1
		n++
	}
	return n
}

// javaClass names v's class as Java's IllegalFormatConversionException
// does.
func javaClass(v Value) string {
	switch x := v.(type) {
	case String:
		return "java.lang.String"
	case Long:
		if _, isInt := unboxLong(x); isInt {
			return "java.lang.Integer"
		}
		return "java.lang.Long"
	case Double:
		return "java.lang.Double"
	case Boolean:
		return "java.lang.Boolean"
	case *Map:
		return "java.util.HashMap"
	case *Array:
		return map[Kind]string{KindStringArray: "[Ljava.lang.String;", KindLongArray: "[J",
			KindDoubleArray: "[D", KindBooleanArray: "[Z"}[x.Of]
	}
	return kindNameOf(v)
}

// formatOne formats one specifier (or literal text) with its argument.
func formatOne(m *Machine, sp fmtSpec, arg Value) (string, error) {
	if sp.conv == 0 {
		return sp.fixed, nil
	}
	if int64(sp.width) > m.limits.Length {
		return "", fmt.Errorf("%w: format width %d is over the length limit of %d", ErrLimit, sp.width, m.limits.Length)
	}
	mismatch := func() (string, error) {
		return "", fmt.Errorf("illegal format conversion: %c != %s", sp.conv, javaClass(arg))
	}
	if sp.conv == 's' && sp.flags&fAlt != 0 {
		return "", fmt.Errorf("conversion = s, flags = #: %s is not Formattable", javaClass(arg))
	}
	if isNull(arg) {
		if sp.conv == 'b' {
			return fmtJustify(sp, "false", true), nil
		}
		if sp.conv != '%' && sp.conv != 'n' {
			return fmtJustify(sp, "null", true), nil
		}
	}
	switch sp.conv {
	case '%':
		return fmtJustify(sp, "%", false), nil
	case 'n':
		return "\n", nil
	case 'b':
		b, ok := arg.(Boolean)
		return fmtJustify(sp, strconv.FormatBool(bool(b) || !ok), true), nil
	case 'h':
		h, err := javaHash(arg)
		if err != nil {
			return "", err
		}
		return fmtJustify(sp, strconv.FormatUint(uint64(uint32(h)), 16), true), nil
	case 's':
		s, err := javaValueOf(arg)
		if err != nil {
			return "", err
		}
		if sp.flags&fUpper != 0 {
			if err := m.CheckString(caseMappedLen(s, true)); err != nil {
				return "", err
			}
		}
		return fmtJustify(sp, s, true), nil
	case 'c':
		x, ok := arg.(Long)
		n, isInt := unboxLong(x)
		switch {
		case !ok || !isInt:
			return mismatch()
		case n < 0 || n > unicode.MaxRune:
			return "", fmt.Errorf("illegal code point 0x%x for %%c", uint32(n))
		}
		return fmtJustify(sp, string(rune(n)), true), nil
	case 'd', 'o', 'x':
		x, ok := arg.(Long)
		if !ok {
			return mismatch()
		}
		if sp.conv != 'd' && sp.flags&(fParen|fSpace|fPlus) != 0 {
			return "", fmt.Errorf("conversion = %c: the flags ( + and space do not apply to an integer", sp.conv)
		}
		return fmtJustify(sp, formatInteger(sp, x), false), nil
	}
	x, ok := arg.(Double)
	if !ok {
		return mismatch()
	}
	if sp.conv != 'f' && int64(sp.prec) > m.limits.Length || sp.conv == 'f' && int64(sp.prec)+310 > m.limits.Length {
		return "", fmt.Errorf("%w: format precision %d is over the length limit of %d", ErrLimit, sp.prec, m.limits.Length)
	}
	return fmtJustify(sp, formatFloat(sp, float64(x)), false), nil
}

// fmtJustify applies a general conversion's precision (a maximum length)
// and upper case when general, then pads to the width with spaces.
func fmtJustify(sp fmtSpec, s string, general bool) string {
	if general && sp.prec != -1 && sp.prec < utf16Len(s) {
		u := utf16.Encode([]rune(s))
		s = string(utf16.Decode(u[:sp.prec]))
	}
	if general && sp.flags&fUpper != 0 {
		s = caseMapped(s, true, caseMappedLen(s, true))
	}
	pad := sp.width - utf16Len(s)
	if sp.width == -1 || pad <= 0 {
		return s
	}
	if sp.flags&fLeft != 0 {
		return s + strings.Repeat(" ", pad)
	}
	return strings.Repeat(" ", pad) + s
}

// javaHash is arg's Java hashCode, as %h prints it.
func javaHash(arg Value) (int32, error) {
	switch x := arg.(type) {
	case String:
		var h int32
		for _, r := range string(x) {
			u := utf16Units(r)
			h = 31*h + int32(u[0])
			if u[1] != 0 {
				h = 31*h + int32(u[1])
			}
		}
		return h, nil
	case Long:
		n, isInt := unboxLong(x)
		if isInt {
			return int32(n), nil
		}
		return int32(n ^ int64(uint64(n)>>32)), nil
	case Double:
		bits := math.Float64bits(float64(x))
		if x != x {
			bits = 0x7ff8000000000000
		}
		return int32(bits ^ bits>>32), nil
	case Boolean:
		if x {
			return 1231, nil
		}
		return 1237, nil
	}
	return 0, Unsupported("%%h of a %s is not supported", kindNameOf(arg))
}

// numSign returns the leading and trailing sign of a number (Formatter's
// leadingSign and trailingSign).
func numSign(sp fmtSpec, neg bool) (lead, trail string) {
	switch {
	case neg && sp.flags&fParen != 0:
		return "(", ")"
	case neg:
		return "-", ""
	case sp.flags&fPlus != 0:
		return "+", ""
	case sp.flags&fSpace != 0:
		return " ", ""
	}
	return "", ""
}

// fmtMagnitude groups the integer part of digits by thousands when asked
// and pads it with zeros to width (which counts lead, already written).
func fmtMagnitude(sp fmtSpec, lead, digits string, width int) string {
	if sp.flags&fGroup != 0 {
		intPart, frac, hasDot := strings.Cut(digits, ".")
		var b strings.Builder
		for i := 0; i < len(intPart); i++ {
			if i > 0 && (len(intPart)-i)%3 == 0 {
				b.WriteByte(',')
			}
			b.WriteByte(intPart[i])
		}
		if hasDot {
			b.WriteString("." + frac)
		}
		digits = b.String()
	}
	if width != -1 && sp.flags&fZero != 0 && len(lead)+len(digits) < width {
		digits = strings.Repeat("0", width-len(lead)-len(digits)) + digits
	}
	return lead + digits
}

// adjustWidth leaves room for a trailing parenthesis.
func adjustWidth(sp fmtSpec, width int, neg bool) int {
	if width != -1 && neg && sp.flags&fParen != 0 {
		return width - 1
	}
	return width
}

// formatInteger formats %d, %o and %x of a long as SEL passes it (an
// Integer when it fits, whose %o and %x are of its 32 bits).
func formatInteger(sp fmtSpec, x Long) string {
	v, isInt := unboxLong(x)
	if sp.conv == 'd' {
		neg := v < 0
		digits := strings.TrimPrefix(strconv.FormatInt(v, 10), "-")
		lead, trail := numSign(sp, neg)
		return fmtMagnitude(sp, lead, digits, adjustWidth(sp, sp.width, neg)) + trail
	}
	u := uint64(v)
	if isInt {
		u = uint64(uint32(int32(v)))
	}
	var s, prefix string
	if sp.conv == 'o' {
		s = strconv.FormatUint(u, 8)
		if sp.flags&fAlt != 0 {
			prefix = "0"
		}
	} else {
		s = strconv.FormatUint(u, 16)
		if sp.flags&fAlt != 0 {
			prefix = "0x"
		}
		if sp.flags&fUpper != 0 {
			s, prefix = strings.ToUpper(s), strings.ToUpper(prefix)
		}
	}
	if sp.flags&fZero != 0 && len(prefix)+len(s) < sp.width {
		prefix += strings.Repeat("0", sp.width-len(prefix)-len(s))
	}
	return prefix + s
}

// formatFloat formats %e, %f and %g of a double.
func formatFloat(sp fmtSpec, v float64) string {
	if math.IsNaN(v) {
		if sp.flags&fUpper != 0 {
			return "NAN"
		}
		return "NaN"
	}
	neg := v < 0 || v == 0 && math.Signbit(v)
	lead, trail := numSign(sp, neg)
	v = math.Abs(v)
	if math.IsInf(v, 0) {
		if sp.flags&fUpper != 0 {
			return lead + "INFINITY" + trail
		}
		return lead + "Infinity" + trail
	}
	prec := sp.prec
	if prec == -1 {
		prec = 6
	}
	digits, exp := shortestDigits(v)
	var mant, expPart string
	switch sp.conv {
	case 'f':
		digits, exp = roundDigits(digits, exp, exp+prec)
		mant = fixedForm(digits, exp, prec)
	case 'e':
		digits, exp = roundDigits(digits, exp, prec+1)
		mant, expPart = sciForm(digits, exp, prec, v == 0)
	default:
		mant, expPart = generalForm(digits, exp, max(prec, 1), v == 0)
	}
	if sp.flags&fAlt != 0 && !strings.Contains(mant, ".") {
		mant += "."
	}
	width := sp.width
	if width != -1 && expPart != "" {
		width -= len(expPart)
	}
	if sp.flags&fUpper != 0 {
		expPart = strings.ToUpper(expPart)
	}
	return fmtMagnitude(sp, lead, mant, adjustWidth(sp, width, neg)) + expPart + trail
}

// shortestDigits are the shortest decimal digits that read back as v > 0
// or 0, and the exponent e with v = 0.digits × 10^e.
func shortestDigits(v float64) (string, int) {
	if v == 0 {
		return "0", 0
	}
	s := strconv.FormatFloat(v, 'e', -1, 64) // d.ddde±x
	mant, e, _ := strings.Cut(s, "e")
	exp, _ := strconv.Atoi(e)
	return strings.Replace(mant, ".", "", 1), exp + 1
}

// roundDigits rounds 0.digits × 10^exp half up to keep significant
// digits (FormattedFloatingDecimal.applyPrecision).
func roundDigits(digits string, exp, keep int) (string, int) {
	switch {
	case keep < 0 || keep >= len(digits):
		if keep < 0 {
			return "0", exp
		}
		return digits, exp
	case keep == 0:
		if digits[0] >= '5' {
			return "1", exp + 1
		}
		return "0", exp
	}
	if digits[keep] < '5' {
		return digits[:keep], exp
	}
	b := []byte(digits[:keep])
	i := keep - 1
	for i >= 0 && b[i] == '9' {
		i--
	}
	if i < 0 {
		return "1", exp + 1
	}
	b[i]++
	return string(b[:i+1]), exp
}

// fixedForm writes 0.digits × 10^exp with prec digits after the point.
func fixedForm(digits string, exp, prec int) string {
	if strings.Trim(digits, "0") == "" {
		digits, exp = "", 0
	}
	var intPart, frac string
	switch {
	case exp <= 0:
		intPart = "0"
		frac = strings.Repeat("0", min(-exp, prec)) + digits
	case len(digits) <= exp:
		intPart = digits + strings.Repeat("0", exp-len(digits))
	default:
		intPart, frac = digits[:exp], digits[exp:]
	}
	if len(frac) > prec {
		frac = frac[:prec]
	}
	frac += strings.Repeat("0", prec-len(frac))
	if prec == 0 {
		return intPart
	}
	return intPart + "." + frac
}

// sciForm writes 0.digits × 10^exp as d.ddd (prec digits after the
// point) and its exponent part, "e+05".
func sciForm(digits string, exp, prec int, zero bool) (string, string) {
	frac := digits[1:]
	if len(frac) > prec {
		frac = frac[:prec]
	}
	frac += strings.Repeat("0", prec-len(frac))
	mant := digits[:1]
	if prec > 0 {
		mant += "." + frac
	}
	e := exp - 1
	if zero {
		e = 0
	}
	es := "+"
	if e < 0 {
		es, e = "-", -e
	}
	if e < 10 {
		es += "0"
	}
	return mant, "e" + es + strconv.Itoa(e)
}

// generalForm is %g: prec significant digits, in scientific form when the
// rounded value is under 10^-4 or at least 10^prec.
func generalForm(digits string, exp, prec int, zero bool) (string, string) {
	if zero {
		return fixedForm("0", 0, prec-1), ""
	}
	digits, exp = roundDigits(digits, exp, prec)
	if exp-1 < -4 || exp-1 >= prec {
		return sciForm(digits, exp, prec-1, false)
	}
	return fixedForm(digits, exp, prec-exp), ""
}

// ---------------------------------------------------------------------
// Long, Double, Boolean, arrays

// callLong calls method name of v (SelLong.call): toString, valueOf,
// parseLong and intValue (which returns the long itself). The classes
// Long, Integer, int and long are SEL's long 0.
func callLong(m *Machine, v Long, name string, args []Value) (Value, error) {
	if err := m.Charge(1, 0); err != nil {
		return nil, err
	}
	switch {
	case name == "toString" && len(args) == 0:
		return String(strconv.FormatInt(int64(v), 10)), nil
	case name == "toString" && len(args) == 1:
		x, ok := args[0].(Long)
		if !ok {
			return nil, argTypeError(KindLong, name, 0, "a LONG", args[0])
		}
		return String(strconv.FormatInt(int64(x), 10)), nil
	case name == "valueOf" && len(args) == 1 && nullString(args[0]):
		return nil, fmt.Errorf("LONG.valueOf: Cannot parse null string: null")
	case name == "valueOf" && len(args) == 1:
		switch x := args[0].(type) {
		case Long:
			return x, nil
		case String:
			return javaParseLong(m, "valueOf", string(x))
		}
		return nil, Unsupported("LONG.valueOf takes a STRING or a LONG, given %s", kindNameOf(args[0]))
	case name == "parseLong" && len(args) == 1:
		s, err := stringParam(KindLong, name, args, 0)
		if err != nil {
			return nil, err
		}
		return javaParseLong(m, name, s)
	case name == "intValue" && len(args) == 0:
		return v, nil
	}
	switch name {
	case "toString":
		return nil, arityError(KindLong, name, "no argument or 1", len(args))
	case "valueOf", "parseLong":
		return nil, arityError(KindLong, name, "1 argument", len(args))
	case "intValue":
		return nil, arityError(KindLong, name, "no arguments", len(args))
	}
	return nil, methodMissing(KindLong, name)
}

// callDouble calls method name of v (SelDouble.call): toString, valueOf,
// parseDouble, intValue and longValue (both a long, cast as Java casts).
// The classes Double, Float, double and float are SEL's double 0.0.
func callDouble(m *Machine, v Double, name string, args []Value) (Value, error) {
	if err := m.Charge(1, 0); err != nil {
		return nil, err
	}
	switch {
	case name == "toString" && len(args) == 0:
		return String(JavaDouble(float64(v))), nil
	case name == "toString" && len(args) == 1:
		x, ok := args[0].(Double)
		if !ok {
			return nil, argTypeError(KindDouble, name, 0, "a DOUBLE", args[0])
		}
		return String(JavaDouble(float64(x))), nil
	case name == "valueOf" && len(args) == 1 && nullString(args[0]):
		return nil, fmt.Errorf("DOUBLE.valueOf: cannot parse a null string")
	case name == "valueOf" && len(args) == 1:
		switch x := args[0].(type) {
		case Double:
			return x, nil
		case String:
			return javaParseDouble(m, "valueOf", string(x))
		}
		return nil, Unsupported("DOUBLE.valueOf takes a STRING or a DOUBLE, given %s", kindNameOf(args[0]))
	case name == "parseDouble" && len(args) == 1:
		s, err := stringParam(KindDouble, name, args, 0)
		if err != nil {
			return nil, err
		}
		return javaParseDouble(m, name, s)
	case (name == "intValue" || name == "longValue") && len(args) == 0:
		return Long(javaLongCast(float64(v))), nil
	}
	switch name {
	case "toString":
		return nil, arityError(KindDouble, name, "no argument or 1", len(args))
	case "valueOf", "parseDouble":
		return nil, arityError(KindDouble, name, "1 argument", len(args))
	case "intValue", "longValue":
		return nil, arityError(KindDouble, name, "no arguments", len(args))
	}
	return nil, methodMissing(KindDouble, name)
}

// javaLongCast is Java's (long) f: NaN is 0, out-of-range values saturate.
func javaLongCast(f float64) int64 {
	switch {
	case math.IsNaN(f):
		return 0
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}

// callBoolean calls method name of v: SelBoolean has no methods.
func callBoolean(m *Machine, v Boolean, name string, args []Value) (Value, error) {
	if err := m.Charge(1, 0); err != nil {
		return nil, err
	}
	return nil, methodMissing(KindBoolean, name)
}

// callArray calls method name of a: SelArray has no methods (its length
// is a field).
func callArray(m *Machine, a *Array, name string, args []Value) (Value, error) {
	if err := m.Charge(1, 0); err != nil {
		return nil, err
	}
	return nil, methodMissing(a.Kind(), name)
}

// javaParseLong is Java's Long.parseLong(s): an optional sign and decimal
// digits (any Unicode decimal digits, as Character.digit reads them),
// within the long range.
func javaParseLong(m *Machine, method, s string) (Value, error) {
	if err := m.Charge(int64(len(s))+1, 0); err != nil {
		return nil, err
	}
	bad := fmt.Errorf("LONG.%s: For input string: %s", method, quoteInput(s))
	digits := s
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg, digits = s[0] == '-', s[1:]
	}
	if digits == "" {
		return nil, bad
	}
	var n uint64 // the magnitude, at most 2^63
	for _, r := range digits {
		d := decimalDigit(r)
		if d < 0 || n > (1<<63)/10 {
			return nil, bad
		}
		n = n*10 + uint64(d)
		if n > 1<<63 || n == 1<<63 && !neg {
			return nil, bad
		}
	}
	if neg {
		return Long(-int64(n-1) - 1), nil
	}
	return Long(int64(n)), nil
}

// decimalDigit is the value of r as a decimal digit (Character.digit(r,
// 10)): the BMP's Unicode decimal digits, which come in runs of ten from
// a zero; -1 for others.
func decimalDigit(r rune) int {
	if r >= '0' && r <= '9' {
		return int(r - '0')
	}
	if r < 0x80 || r > 0xFFFF {
		return -1
	}
	for _, rg := range unicode.Nd.R16 {
		if uint16(r) >= rg.Lo && uint16(r) <= rg.Hi {
			return int(uint16(r)-rg.Lo) % 10
		}
	}
	return -1
}

// javaParseDouble is Java's Double.parseDouble(s): surrounding characters up
// to U+0020 trimmed, then an optional sign and NaN, Infinity, a decimal
// number with an optional exponent, or a hexadecimal one with a binary
// exponent, each with an optional f, F, d or D suffix.
func javaParseDouble(m *Machine, method, s string) (Value, error) {
	if err := m.Charge(int64(len(s))+1, int64(len(s))); err != nil {
		return nil, err
	}
	t := strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
	if t == "" {
		return nil, fmt.Errorf("DOUBLE.%s: empty String", method)
	}
	body := t
	if body[0] == '+' || body[0] == '-' {
		body = body[1:]
	}
	switch body {
	case "NaN":
		return Double(math.NaN()), nil
	case "Infinity":
		if t[0] == '-' {
			return Double(math.Inf(-1)), nil
		}
		return Double(math.Inf(1)), nil
	}
	if n := len(t); strings.IndexByte("fFdD", t[n-1]) >= 0 && javaFloatSyntax(body[:len(body)-1]) {
		t = t[:n-1]
	} else if !javaFloatSyntax(body) {
		return nil, fmt.Errorf("DOUBLE.%s: For input string: %s", method, quoteInput(s))
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil && !isRangeErr(err) {
		return nil, fmt.Errorf("DOUBLE.%s: For input string: %s", method, quoteInput(s))
	}
	return Double(f), nil
}

// isRangeErr reports an out-of-range value, which Java rounds to zero or
// infinity as ParseFloat does.
func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// javaFloatSyntax reports whether s (no sign, no suffix) is a Java
// floating-point literal: digits with an optional point and exponent, or
// 0x hexadecimal digits with an optional point and a p exponent.
func javaFloatSyntax(s string) bool {
	run := func(i int, ok func(byte) bool) int {
		for i < len(s) && ok(s[i]) {
			i++
		}
		return i
	}
	dec := func(c byte) bool { return c >= '0' && c <= '9' }
	hexDigit := func(c byte) bool { return dec(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }
	exponent := func(i int, marks string) bool {
		if i >= len(s) || strings.IndexByte(marks, s[i]) < 0 {
			return false
		}
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := run(i, dec)
		return j > i && j == len(s)
	}
	digits, isHex := dec, len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')
	if isHex {
		s, digits = s[2:], hexDigit
	}
	i := run(0, digits)
	n := i
	if i < len(s) && s[i] == '.' {
		j := run(i+1, digits)
		n += j - i - 1
		i = j
	}
	switch {
	case n == 0:
		return false
	case isHex:
		return exponent(i, "pP")
	}
	return i == len(s) || exponent(i, "eE")
}

// ---------------------------------------------------------------------
// Map

// callMap calls method name of mp (SelMap.call): size, get, containsKey,
// put and getOrDefault. Keys are strings; values any value (put's null
// stores null).
func callMap(m *Machine, mp *Map, name string, args []Value) (Value, error) {
	if err := m.Charge(1, 0); err != nil {
		return nil, err
	}
	switch {
	case name == "size" && len(args) == 0:
		return Long(mp.Len()), nil
	case name == "get" && len(args) == 1, name == "containsKey" && len(args) == 1,
		name == "getOrDefault" && len(args) == 2:
		if nullString(args[0]) { // a null key, which put refuses
			return mapMiss(name, args), nil
		}
		k, err := stringParam(KindMap, name, args, 0)
		if err != nil {
			return nil, err
		}
		if err := m.Charge(int64(len(k)), 0); err != nil {
			return nil, err
		}
		v, ok := mp.Get(k)
		switch {
		case name == "containsKey":
			return Boolean(ok), nil
		case ok:
			return v, nil
		}
		return mapMiss(name, args), nil
	case name == "put" && len(args) == 2:
		return mapPut(m, mp, args)
	}
	return nil, mapArity(name, len(args))
}

// mapMiss is get, containsKey or getOrDefault of a key the map does not
// hold.
func mapMiss(name string, args []Value) Value {
	switch name {
	case "containsKey":
		return Boolean(false)
	case "getOrDefault":
		return orNull(args[1])
	}
	return Null{}
}

// mapArity refuses a Map method: unknown, or given the wrong number of
// arguments.
func mapArity(name string, n int) error {
	switch name {
	case "size":
		return arityError(KindMap, name, "no arguments", n)
	case "get", "containsKey":
		return arityError(KindMap, name, "1 argument", n)
	case "put", "getOrDefault":
		return arityError(KindMap, name, "2 arguments", n)
	}
	return methodMissing(KindMap, name)
}

// mapPut is Map.put(key, value): the previous value, or null.
func mapPut(m *Machine, mp *Map, args []Value) (Value, error) {
	if nullString(args[0]) {
		return nil, Unsupported("MAP.put: a null key is not supported")
	}
	k, err := stringParam(KindMap, "put", args, 0)
	if err != nil {
		return nil, err
	}
	v := orNull(args[1])
	if _, ok := mp.Get(k); !ok {
		if err := m.CheckMap(mp.Len() + 1); err != nil {
			return nil, err
		}
	}
	if err := m.Charge(int64(len(k))+entryCost, int64(len(k))+3*entryBytes); err != nil {
		return nil, err
	}
	return mp.Put(k, v), nil
}

// nullMapCall calls method name on the classes Map, HashMap and
// LinkedHashMap: SEL's map holding null, whose size is 0 and which holds
// no key; its other methods fail on the null.
func nullMapCall(m *Machine, name string, args []Value) (Value, error) {
	if err := m.Charge(1, 0); err != nil {
		return nil, err
	}
	switch {
	case name == "size" && len(args) == 0:
		return Long(0), nil
	case name == "containsKey" && len(args) == 1:
		return Boolean(false), nil
	case name == "get" && len(args) == 1, name == "put" && len(args) == 2, name == "getOrDefault" && len(args) == 2:
		return nil, fmt.Errorf("MAP.%s: the map is null: create one with new HashMap()", name)
	}
	return nil, mapArity(name, len(args))
}

// ---------------------------------------------------------------------
// Classes: static methods, fields and constructors

// callStaticBasic calls a static method of a class SEL names (its
// STATIC_OBJECTS): ok is false for a class this file does not handle.
func callStaticBasic(m *Machine, class, name string, args []Value) (v Value, ok bool, err error) {
	switch class {
	case "String":
		v, err = stringStatic(m, name, args)
	case "Long", "Integer", "int", "long":
		v, err = callLong(m, 0, name, args)
	case "Double", "Float", "double", "float":
		v, err = callDouble(m, 0, name, args)
	case "Boolean", "boolean":
		v, err = callBoolean(m, false, name, args)
	case "Map", "HashMap", "LinkedHashMap":
		v, err = nullMapCall(m, name, args)
	case "UUID":
		v, err = uuidCall(m, nil, name, args)
	case "Math":
		v, err = mathCall(m, name, args)
	case "Arrays", "System", "DateTimeConstants":
		v, err = miscCall(m, name, args)
	default:
		return nil, false, nil
	}
	return v, true, err
}

// basicClassNames are the kinds SEL names in the errors of the classes
// this file handles.
var basicClassNames = map[string]string{
	"String": "STRING", "Long": "LONG", "Integer": "LONG", "int": "LONG", "long": "LONG",
	"Double": "DOUBLE", "Float": "DOUBLE", "double": "DOUBLE", "float": "DOUBLE",
	"Boolean": "BOOLEAN", "boolean": "BOOLEAN", "Map": "MAP", "HashMap": "MAP", "LinkedHashMap": "MAP",
	"UUID": "UUID", "Math": mathName, "Arrays": miscName, "System": miscName, "DateTimeConstants": miscName,
}

// fieldStaticBasic reads a static field: SEL has one, SUNDAY (7), which
// DateTimeConstants, System and Arrays all answer (SelMiscFunc.field).
func fieldStaticBasic(m *Machine, class, name string) (v Value, ok bool, err error) {
	kind, ok := basicClassNames[class]
	if !ok {
		return nil, false, nil
	}
	if err := m.Charge(1, 0); err != nil {
		return nil, true, err
	}
	if kind == miscName && name == "SUNDAY" {
		return Long(7), true, nil
	}
	return nil, true, Unsupported("%s has no field %s", kind, name)
}

// constructBasic evaluates new class(args...) for the classes SEL
// constructs (SelTypes.call(CONSTRUCTOR)): String, the longs, the
// doubles, the booleans and the maps.
func constructBasic(m *Machine, class string, args []Value) (v Value, ok bool, err error) {
	kind, ok := basicClassNames[class]
	if !ok {
		return nil, false, nil
	}
	if err := m.Charge(1, 0); err != nil {
		return nil, true, err
	}
	switch kind {
	case "STRING", "LONG", "DOUBLE", "BOOLEAN":
		v, err = constructScalar(m, kind, args)
		return v, true, err
	case "MAP":
		if len(args) != 0 {
			return nil, true, fmt.Errorf("invalid arguments for the Map constructor: it takes none, given %d", len(args))
		}
		if err := m.Charge(entryCost, 3*entryBytes); err != nil {
			return nil, true, err
		}
		return NewMap(), true, nil
	}
	return nil, true, Unsupported("cannot create a new %s", class)
}

// constructScalar is new String(..), new Long(..), new Double(..) and new
// Boolean(..): each takes one argument of its own type or a string to
// parse; new String() is "" and new String(long) its decimal digits.
func constructScalar(m *Machine, kind string, args []Value) (Value, error) {
	if kind == "STRING" && len(args) == 0 {
		return String(""), nil
	}
	if len(args) != 1 {
		return nil, fmt.Errorf("invalid arguments for the %s constructor: it takes 1, given %d", kind, len(args))
	}
	if nullString(args[0]) {
		switch kind {
		case "STRING":
			return args[0], nil
		case "BOOLEAN":
			return Boolean(false), nil // Boolean.parseBoolean(null)
		}
		return nil, fmt.Errorf("the %s constructor cannot parse a null string", kind)
	}
	switch x := args[0].(type) {
	case String:
		switch kind {
		case "STRING":
			return x, nil
		case "LONG":
			return javaParseLong(m, "constructor", string(x))
		case "DOUBLE":
			return javaParseDouble(m, "constructor", string(x))
		}
		if err := m.Charge(int64(len(x)), 0); err != nil {
			return nil, err
		}
		return Boolean(strings.EqualFold(string(x), "true")), nil // Boolean.parseBoolean
	case Long:
		switch kind {
		case "STRING":
			return String(strconv.FormatInt(int64(x), 10)), nil
		case "LONG":
			return x, nil
		}
	case Double:
		if kind == "DOUBLE" {
			return x, nil
		}
	case Boolean:
		if kind == "BOOLEAN" {
			return x, nil
		}
	}
	return nil, fmt.Errorf("invalid argument (%s) for the %s constructor", kindNameOf(args[0]), kind)
}

// mathCall calls a method of Math (SelJavaMath): min and max of two
// longs, pow of two numbers, random.
func mathCall(m *Machine, name string, args []Value) (Value, error) {
	if err := m.Charge(1, 0); err != nil {
		return nil, err
	}
	switch {
	case (name == "min" || name == "max") && len(args) == 2:
		a, ok1 := args[0].(Long)
		b, ok2 := args[1].(Long)
		switch {
		case !ok1:
			return nil, argTypeError(staticName(mathName), name, 0, "a LONG", args[0])
		case !ok2:
			return nil, argTypeError(staticName(mathName), name, 1, "a LONG", args[1])
		case name == "min":
			return min(a, b), nil
		}
		return max(a, b), nil
	case name == "pow" && len(args) == 2:
		x, err := mathNumber(name, args, 0)
		if err != nil {
			return nil, err
		}
		y, err := mathNumber(name, args, 1)
		if err != nil {
			return nil, err
		}
		return Double(javaPow(x, y)), nil
	case name == "random" && len(args) == 0:
		sum, err := nextRandom(m, "random")
		if err != nil {
			return nil, err
		}
		return Double(float64(byteorder.BigEndian.Uint64(sum[:8])>>11) / (1 << 53)), nil
	}
	return nil, methodMissing(staticName(mathName), name)
}

// mathNumber is argument i as a Java Number: a long or a double.
func mathNumber(name string, args []Value, i int) (float64, error) {
	switch x := args[i].(type) {
	case Long:
		return float64(x), nil
	case Double:
		return float64(x), nil
	}
	return 0, argTypeError(staticName(mathName), name, i, "a number", args[i])
}

// javaPow is Java's Math.pow where it differs from Go's math.Pow: a NaN
// exponent gives NaN, and so does ±1 to an infinite power.
func javaPow(x, y float64) float64 {
	if math.IsNaN(y) || math.IsInf(y, 0) && math.Abs(x) == 1 {
		return math.NaN()
	}
	return math.Pow(x, y)
}

// miscCall calls a method of DateTimeConstants, System or Arrays, one
// object in SEL (SelMiscFunc): currentTimeMillis() (the evaluation's
// instant) and asList(x), which returns x.
func miscCall(m *Machine, name string, args []Value) (Value, error) {
	if err := m.Charge(1, 0); err != nil {
		return nil, err
	}
	switch {
	case name == "currentTimeMillis" && len(args) == 0:
		return Long(m.Now().UnixMilli()), nil
	case name == "asList" && len(args) == 1:
		return orNull(args[0]), nil
	}
	return nil, methodMissing(staticName(miscName), name)
}

// ---------------------------------------------------------------------
// UUID

// UUID is a java.util.UUID, made by UUID.randomUUID(): deterministic per
// evaluation, from the machine's seed and a counter, in the shape of a
// version-4 (random) UUID.
type UUID [16]byte

// Kind is KindUUID.
func (UUID) Kind() Kind { return KindUUID }

// JavaString is the UUID as Java prints it:
// xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx, in lower case.
func (u UUID) JavaString() string {
	h := hex.EncodeToString(u[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// call calls method name of u (SelJavaUUID.call).
func (u UUID) call(m *Machine, name string, args []Value) (Value, error) {
	return uuidCall(m, &u, name, args)
}

// uuidCall is SelJavaUUID.call on u, nil for the class UUID (SEL's UUID
// holding null): randomUUID() and toString().
func uuidCall(m *Machine, u *UUID, name string, args []Value) (Value, error) {
	if err := m.Charge(1, 0); err != nil {
		return nil, err
	}
	switch {
	case name == "randomUUID" && len(args) == 0:
		sum, err := nextRandom(m, "uuid")
		if err != nil {
			return nil, err
		}
		var r UUID
		copy(r[:], sum[:16])
		r[6] = r[6]&0x0f | 0x40 // version 4
		r[8] = r[8]&0x3f | 0x80 // IETF variant
		return r, nil
	case name == "toString" && len(args) == 0:
		if u == nil {
			return String("null"), nil
		}
		return String(u.JavaString()), nil
	case name == "randomUUID", name == "toString":
		return nil, arityError(KindUUID, name, "no arguments", len(args))
	}
	return nil, methodMissing(KindUUID, name)
}

// nextRandom returns the next 32 random bytes of the evaluation: a
// SHA-256 of its seed, purpose and counter, so that the same seed gives
// the same values in the same order.
func nextRandom(m *Machine, purpose string) ([32]byte, error) {
	if err := m.Charge(int64(len(m.seed))+64, 32); err != nil {
		return [32]byte{}, err
	}
	m.uuids++
	h := sha256.New()
	h.Write([]byte(m.seed))
	h.Write([]byte{0})
	h.Write([]byte(purpose))
	var ctr [8]byte
	byteorder.BigEndian.PutUint64(ctr[:], uint64(m.uuids))
	h.Write(ctr[:])
	var sum [32]byte
	copy(sum[:], h.Sum(nil))
	return sum, nil
}
