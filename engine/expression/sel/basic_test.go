package sel

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The cases of Maestro's SelStringTest, SelLongTest, SelDoubleTest,
// SelBooleanTest, SelArrayTest, SelMap*Test, SelJavaMathTest,
// SelJavaUUIDTest, SelMiscFuncTest and SelTypesTest that concern calls,
// fields and constructors, and tables of String.format, split,
// replaceAll, case mapping and number parsing whose expected values
// OpenJDK 17 computed.

// errWant marks a case that must fail.
const errWant = "\x00error"

func basicMachine() *Machine { return newMachine(Config{}) }

// vals builds arguments from descriptors: L:n a long, D:x a double, S:s a
// string, B:b a boolean, N null.
func vals(t *testing.T, descs ...string) []Value {
	t.Helper()
	out := make([]Value, 0, len(descs))
	for _, d := range descs {
		if d == "N" {
			out = append(out, Null{})
			continue
		}
		v := d[2:]
		switch d[0] {
		case 'L':
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, Long(n))
		case 'D':
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, Double(f))
		case 'S':
			out = append(out, String(v))
		case 'B':
			out = append(out, Boolean(v == "true"))
		default:
			t.Fatalf("bad descriptor %q", d)
		}
	}
	return out
}

// show prints a value as SEL's tests do: "TYPE: value".
func show(v Value) string {
	if v == nil {
		return "<nil>"
	}
	if _, ok := v.(Null); ok {
		return "NULL: NULL"
	}
	return v.Kind().String() + ": " + JavaString(v)
}

func strArray(items ...string) *Array {
	a := &Array{Of: KindStringArray}
	for _, s := range items {
		a.Items = append(a.Items, String(s))
	}
	return a
}

func longArray(items ...int64) *Array {
	a := &Array{Of: KindLongArray}
	for _, n := range items {
		a.Items = append(a.Items, Long(n))
	}
	return a
}

// callCase is a method call through the dispatcher, as an expression makes it.
type callCase struct {
	recv Value
	name string
	args []Value
	want string // show() of the result, or errWant
}

func runCalls(t *testing.T, m *Machine, cases []callCase) {
	t.Helper()
	for _, c := range cases {
		got, err := m.call(c.recv, c.name, c.args)
		label := fmt.Sprintf("%s.%s%v", show(c.recv), c.name, c.args)
		switch {
		case c.want == errWant && err == nil:
			t.Errorf("%s = %s, want an error", label, show(got))
		case c.want != errWant && err != nil:
			t.Errorf("%s: %v", label, err)
		case c.want != errWant && show(got) != c.want:
			t.Errorf("%s = %q, want %q", label, show(got), c.want)
		}
	}
}

// wantUnsupported checks that err wraps ErrUnsupported.
func wantUnsupported(t *testing.T, label string, err error) {
	t.Helper()
	if !errors.Is(err, ErrUnsupported) {
		t.Errorf("%s: error %v, want one wrapping ErrUnsupported", label, err)
	}
}

func TestBasicStringCalls(t *testing.T) {
	m := basicMachine()
	s := String("FooBar ")
	runCalls(t, m, []callCase{
		// SelStringTest.testSupportedNoArgCalls
		{s, "toUpperCase", nil, "STRING: FOOBAR "},
		{s, "toLowerCase", nil, "STRING: foobar "},
		{s, "length", nil, "LONG: 7"},
		{s, "isEmpty", nil, "BOOLEAN: false"},
		{s, "trim", nil, "STRING: FooBar"},
		// testSupportedOneArgCalls
		{s, "lastIndexOf", vals(t, "S:oBa"), "LONG: 2"},
		{s, "equals", vals(t, "S:oBa"), "BOOLEAN: false"},
		{s, "compareTo", vals(t, "S:oBa"), "LONG: -41"},
		{s, "startsWith", vals(t, "S:oBa"), "BOOLEAN: false"},
		{s, "endsWith", vals(t, "S:oBa"), "BOOLEAN: false"},
		{s, "contains", vals(t, "S:oBa"), "BOOLEAN: true"},
		// testSupportedCallReplaceAll, testSupportedCallReplace
		{String("a-B- c"), "replaceAll", vals(t, "S: b", "S:-B-"), "STRING: a-B- c"},
		{String("a-B- c"), "replace", vals(t, "S: b", "S:-B-"), "STRING: a-B- c"},
		// testSupportedStaticCalls
		{Class{"String"}, "valueOf", vals(t, "S:abc"), "STRING: abc"},
		{Class{"String"}, "valueOf", vals(t, "L:123"), "STRING: 123"},
		{Class{"String"}, "valueOf", vals(t, "B:true"), "STRING: true"},
		{Class{"String"}, "valueOf", vals(t, "D:1.1"), "STRING: 1.1"},
		{Class{"String"}, "valueOf", vals(t, "L:9223372036854775807"), "STRING: 9223372036854775807"},
		// testSupportedCallSplits
		{String("a b c"), "split", vals(t, `S:\ `), "STRING_ARRAY: [a, b, c]"},
		{String("a b c"), "split", vals(t, `S:\ `, "L:2"), "STRING_ARRAY: [a, b c]"},
		// testSupportedCallSubstrings, testInvalidArgs
		{String("a b c"), "substring", vals(t, "L:3"), "STRING:  c"},
		{String("a b c"), "substring", vals(t, "L:1", "L:3"), "STRING:  b"},
		{String("a b c"), "substring", vals(t, "L:4", "L:3"), errWant},
		// testInvalidCallStatic
		{Class{"String"}, "split", vals(t, `S:\ `), errWant},
		// testFormat
		{Class{"String"}, "format", vals(t, "S:%s-%s", "S:ab", "S:c"), "STRING: ab-c"},
		{Class{"String"}, "format", vals(t, "S:%s-%d", "S:ab", "L:123"), "STRING: ab-123"},
		// testJoin
		{Class{"String"}, "join", vals(t, "S:,", "S:ab", "S:c"), "STRING: ab,c"},
		{Class{"String"}, "join", vals(t, "S:,"), "STRING: "},
		{String("abc"), "join", vals(t, "S:,", "S:ab", "S:c"), "STRING: ab,c"},
		{String("abc"), "join", []Value{String(","), strArray("z", "ab", "c")}, "STRING: z,ab,c"},
		// testEscape, testInvalidEscapeArgLengthCall, testInvalidEscapeArgTypeCall
		{Class{"String"}, "escape", vals(t, `S:{"foo"}`), `STRING: {\"foo\"}`},
		{String(`{"foo"}`), "escape", nil, `STRING: {\"foo\"}`},
		{String(`{"foo"}`), "escape", vals(t, `S:{"bar"}`), `STRING: {\"bar\"}`},
		{String(`{"foo"}`), "escape", vals(t, `S:{"foo"}`, `S:{"bar"}`), errWant},
		{String(`{"foo"}`), "escape", vals(t, "L:123"), errWant},
		// Beyond SEL's tests.
		{String("a\tb\\c\n\"d\b\f\r'"), "escape", nil, `STRING: a\tb\\c\n\"d\b\f\r'`},
		{Class{"String"}, "escape", nil, errWant},
		{Class{"String"}, "valueOf", vals(t, "L:-5000000000"), "STRING: -705032704"}, // SelLong.unbox's int cast
		{Class{"String"}, "valueOf", vals(t, "N"), "STRING: null"},
		{Class{"String"}, "valueOf", []Value{longArray(1, 2)}, "STRING: [1, 2]"},
		{String("abc"), "valueOf", vals(t, "L:1"), errWant},
		{String("abc"), "equals", vals(t, "L:1"), "BOOLEAN: false"},
		{String("abc"), "equals", vals(t, "N"), "BOOLEAN: false"},
		{String("abc"), "equals", vals(t, "S:abc"), "BOOLEAN: true"},
		{String("abc"), "startsWith", vals(t, "N"), errWant},
		{String("abc"), "startsWith", vals(t, "L:1"), errWant},
		{String("abc"), "contains", vals(t, "S:"), "BOOLEAN: true"},
		{String(""), "isEmpty", nil, "BOOLEAN: true"},
		{String("abc"), "substring", vals(t, "L:4294967297"), errWant},       // a long an int refuses
		{String("abc"), "substring", vals(t, "L:-4294967295"), "STRING: bc"}, // cast to int: 1
		{String("abc"), "substring", vals(t, "D:1.0"), errWant},
		{String("abc"), "substring", vals(t, "L:3"), "STRING: "},
		{String("abc"), "substring", vals(t, "L:-1"), errWant},
		{String("a,b"), "split", vals(t, "S:,", "S:2"), errWant},
		{String("abc"), "replace", vals(t, "S:", "S:-"), "STRING: -a-b-c-"},
		{String("aaa"), "replace", vals(t, "S:aa", "S:b"), "STRING: ba"},
		{String(" \t\x01x \u00a0"), "trim", nil, "STRING: x \u00a0"},
		{Class{"String"}, "join", vals(t, "S:,", "N"), errWant},
		{Class{"String"}, "join", []Value{String(","), longArray(1)}, errWant},
		{Class{"String"}, "join", []Value{String("-"), &Array{Of: KindStringArray, Items: []Value{Null{}, String("x")}}}, "STRING: null-x"},
		{Class{"String"}, "join", nil, errWant},
		{Class{"String"}, "format", []Value{String("%s+%s"), strArray("x", "y")}, "STRING: x+y"},
		{Class{"String"}, "format", []Value{String("%s"), longArray(1, 2)}, "STRING: [1, 2]"},
		{Class{"String"}, "format", vals(t, "L:1"), errWant},
		{Class{"String"}, "format", nil, errWant},
	})
}

func TestBasicStringUnsupported(t *testing.T) {
	m := basicMachine()
	for _, c := range []struct {
		recv Value
		name string
		args []Value
	}{
		{String("a b c"), "splits", vals(t, `S:\ `)},  // testInvalidNotImplementedCall
		{String("a b c"), "isEmpty", vals(t, `S:\ `)}, // testInvalidWrongArgsCall
		{String("abc"), "getClass", nil},
		{String("abc"), "toString", nil},
		{String("abc"), "indexOf", vals(t, "S:b")},
		{String("abc"), "charAt", vals(t, "L:0")},
		{String("abc"), "substring", vals(t, "L:0", "L:1", "L:2")},
		{Class{"String"}, "nonExist", nil}, // SelTypesTest.testFailedCall
		{Class{"String"}, "valueOf", nil},
	} {
		_, err := m.call(c.recv, c.name, c.args)
		wantUnsupported(t, show(c.recv)+"."+c.name, err)
	}
	_, err := m.call(String("abc"), "foo", nil)
	if err == nil || !strings.Contains(err.Error(), "STRING has no method foo") {
		t.Errorf("error %v, want STRING has no method foo", err)
	}
}

// TestBasicNullString covers a String box holding null (String s; an
// element of new String[n]), which SEL passes as a SelString holding null.
func TestBasicNullString(t *testing.T) {
	m := basicMachine()
	null := TypedNull{Of: KindString}
	runCalls(t, m, []callCase{
		{Class{"String"}, "valueOf", []Value{null}, "STRING: null"},
		{Class{"String"}, "join", []Value{String(","), null, String("a")}, "STRING: null,a"},
		{Class{"String"}, "join", []Value{String(","), &Array{Of: KindStringArray, Items: []Value{null, String("b")}}}, "STRING: null,b"},
		{Class{"String"}, "escape", []Value{null}, "STRING: null"},
		{Class{"String"}, "format", []Value{String("%s|%b|%d"), null, null, null}, "STRING: null|false|null"},
		{Class{"String"}, "format", []Value{null}, errWant},
		{String("abc"), "equals", []Value{null}, "BOOLEAN: false"},
		{String("abc"), "startsWith", []Value{null}, errWant},
		{String("abc"), "split", []Value{null}, errWant},
		{Long(1), "valueOf", []Value{null}, errWant},
		{Long(1), "parseLong", []Value{null}, errWant},
		{Double(1), "valueOf", []Value{null}, errWant},
		{fooMap(), "get", []Value{null}, "NULL: NULL"},
		{fooMap(), "containsKey", []Value{null}, "BOOLEAN: false"},
		{fooMap(), "getOrDefault", []Value{null, Long(5)}, "LONG: 5"},
		{fooMap(), "put", []Value{null, Long(5)}, errWant},
		{fooMap(), "put", []Value{String("k"), null}, "NULL: NULL"},
	})
	for _, c := range []struct {
		class string
		want  string
	}{{"String", "STRING: null"}, {"Boolean", "BOOLEAN: false"}, {"Long", errWant}, {"Double", errWant}} {
		v, _, err := constructBasic(m, c.class, []Value{null})
		if c.want == errWant && err == nil || c.want != errWant && (err != nil || show(v) != c.want) {
			t.Errorf("new %s(null) = %s, %v; want %s", c.class, show(v), err, c.want)
		}
	}
}

func TestBasicStringUTF16(t *testing.T) {
	m := basicMachine()
	s := String("a\U0001F600bc\u00e9")
	runCalls(t, m, []callCase{
		{s, "length", nil, "LONG: 6"},
		{s, "substring", vals(t, "L:1", "L:3"), "STRING: \U0001F600"},
		{s, "substring", vals(t, "L:2"), "STRING: \ufffdbc\u00e9"}, // Java: a lone low surrogate
		{s, "lastIndexOf", vals(t, "S:b"), "LONG: 3"},
		{s, "lastIndexOf", vals(t, "S:"), "LONG: 6"},
		{s, "lastIndexOf", vals(t, "S:z"), "LONG: -1"},
		{s, "compareTo", []Value{String("a\U0001F601")}, "LONG: -1"},
		{String("\uffff"), "compareTo", []Value{String("\U0001F600")}, "LONG: 10178"},
		{String("ab"), "compareTo", vals(t, "S:abcd"), "LONG: -2"},
		{String("b"), "compareTo", vals(t, "S:a"), "LONG: 1"},
	})
}

// formatCases are String.format's cases: the format, the arguments
// descriptors and what OpenJDK 17 prints (errWant: it throws).
var formatCases = []struct {
	format string
	args   []string
	want   string
}{
	{"%s-%s", []string{"S:ab", "S:c"}, "ab-c"},
	{"%s-%d", []string{"S:ab", "L:123"}, "ab-123"},
	{"%5d|%-5d|%05d", []string{"L:42", "L:42", "L:42"}, "   42|42   |00042"},
	{"%,d", []string{"L:1234567"}, "1,234,567"},
	{"%,d", []string{"L:-1234567"}, "-1,234,567"},
	{"%+d % d %(d", []string{"L:5", "L:5", "L:-5"}, "+5  5 (5)"},
	{"%(08d", []string{"L:-42"}, "(000042)"},
	{"%,010d", []string{"L:1234"}, "000001,234"},
	{"%x %X %o", []string{"L:255", "L:255", "L:8"}, "ff FF 10"},
	{"%x", []string{"L:-1"}, "ffffffff"},
	{"%x", []string{"L:-3000000000"}, "4d2fa200"},
	{"%x", []string{"L:3000000000"}, "b2d05e00"},
	{"%#x %#o %#X", []string{"L:255", "L:8", "L:255"}, "0xff 010 0XFF"},
	{"%08x|%#08x", []string{"L:255", "L:255"}, "000000ff|0x0000ff"},
	{"%d", []string{"L:-5000000000"}, "-705032704"},
	{"%s", []string{"L:-5000000000"}, "-705032704"},
	{"%d", []string{"L:9223372036854775807"}, "9223372036854775807"},
	{"%f", []string{"D:3.14159"}, "3.141590"},
	{"%.2f", []string{"D:1.005"}, "1.01"},
	{"%.1f", []string{"D:0.25"}, "0.3"},
	{"%.0f", []string{"D:2.5"}, "3"},
	{"%.0f", []string{"D:0.5"}, "1"},
	{"%.3f", []string{"D:0.0005"}, "0.001"},
	{"%.2f", []string{"D:0.009"}, "0.01"},
	{"%.2f", []string{"D:0.0001"}, "0.00"},
	{"%.20f", []string{"D:0.1"}, "0.10000000000000000000"},
	{"%10.3f|%-10.3f|%010.3f", []string{"D:-3.14159", "D:3.14159", "D:-3.14159"}, "    -3.142|3.142     |-00003.142"},
	{"%,.2f", []string{"D:1234567.891"}, "1,234,567.89"},
	{"%e", []string{"D:12345.678"}, "1.234568e+04"},
	{"%.2e", []string{"D:0.000123456"}, "1.23e-04"},
	{"%E", []string{"D:1e100"}, "1.000000E+100"},
	{"%e", []string{"D:0.0"}, "0.000000e+00"},
	{"%.0e", []string{"D:5.5"}, "6e+00"},
	{"%12.4e|%-12.4e|%012.4e", []string{"D:-1.5", "D:1.5", "D:-1.5"}, " -1.5000e+00|1.5000e+00  |-01.5000e+00"},
	{"%#.0e|%#.0f", []string{"D:3.0", "D:3.0"}, "3.e+00|3."},
	{"%g", []string{"D:123456789.0"}, "1.23457e+08"},
	{"%g", []string{"D:0.0001"}, "0.000100000"},
	{"%g", []string{"D:0.00001"}, "1.00000e-05"},
	{"%g", []string{"D:0.0"}, "0.00000"},
	{"%.3g", []string{"D:1234.5"}, "1.23e+03"},
	{"%G", []string{"D:1e-10"}, "1.00000E-10"},
	{"%g", []string{"D:100000.0"}, "100000"},
	{"%g", []string{"D:999999.5"}, "1.00000e+06"},
	{"%.0g", []string{"D:12.0"}, "1e+01"},
	{"%,g", []string{"D:1234567.0"}, "1.23457e+06"},
	{"%f|%e|%g", []string{"D:NaN", "D:Infinity", "D:-Infinity"}, "NaN|Infinity|-Infinity"},
	{"%08.2f|%+f|%(f", []string{"D:Infinity", "D:Infinity", "D:-Infinity"}, "Infinity|+Infinity|(Infinity)"},
	{"%f", []string{"D:-0.0"}, "-0.000000"},
	{"%.2f", []string{"D:1e20"}, "100000000000000000000.00"},
	{"%f", []string{"D:1e-320"}, "0.000000"},
	{"%.3f", []string{"D:9.9995"}, "10.000"},
	{"%.3f", []string{"D:123.4565"}, "123.457"},
	{"%b %b %b %B", []string{"B:true", "N", "S:x", "B:false"}, "true false true FALSE"},
	{"%5b|%-6b|%.2b", []string{"B:true", "B:false", "B:true"}, " true|false |tr"},
	{"%h %h %h %h %h", []string{"S:hello", "L:-1", "D:1.5", "B:true", "L:5000000000"}, "5e918d2 ffffffff 3ff80000 4cf 2a05f201"},
	{"%H", []string{"S:hello"}, "5E918D2"},
	{"%c%c%C", []string{"L:65", "L:128512", "L:97"}, "A\U0001F600A"},
	{"%3c|%-3c", []string{"L:120", "L:120"}, "  x|x  "},
	{"%S %s", []string{"S:stra\u00dfe", "N"}, "STRASSE null"},
	{"%.3s|%10s|%-10s|", []string{"S:abcdef", "S:abc", "S:abc"}, "abc|       abc|abc       |"},
	{"%.1s", []string{"S:\U0001F600x"}, "\ufffd"},
	{"%5s|", []string{"S:\U0001F600"}, "   \U0001F600|"},
	{"%2$s %1$s %<s %s", []string{"S:a", "S:b"}, "b a a a"},
	{"%s %<s %s", []string{"S:a", "S:b"}, "a a b"},
	{"100%% %n%5%|%-5%|", []string{}, "100% \n    %|%    |"},
	{"%d %d", []string{"L:1"}, errWant},
	{"%q", []string{}, errWant},
	{"%", []string{}, errWant},
	{"%-d", []string{"L:1"}, errWant},
	{"%0s", []string{"S:a"}, errWant},
	{"%#s", []string{"S:a"}, errWant},
	{"%+s", []string{"S:a"}, errWant},
	{"%.2d", []string{"L:1"}, errWant},
	{"%d", []string{"D:1.5"}, errWant},
	{"%f", []string{"L:1"}, errWant},
	{"%c", []string{"S:a"}, errWant},
	{"%c", []string{"L:5000000000"}, errWant},
	{"%c", []string{"L:1114112"}, errWant},
	{"%,x", []string{"L:1"}, errWant},
	{"%+x", []string{"L:1"}, errWant},
	{"%#d", []string{"L:1"}, errWant},
	{"%#g", []string{"D:1.0"}, errWant},
	{"%,e", []string{"D:1.0"}, errWant},
	{"%-05d", []string{"L:1"}, errWant},
	{"%+ d", []string{"L:1"}, errWant},
	{"%--5d", []string{"L:1"}, errWant},
	{"%0$s", []string{"S:a"}, errWant},
	{"%<s", []string{"S:a"}, errWant},
	{"%5n", []string{}, errWant},
	{"%.2n", []string{}, errWant},
	{"%.2%", []string{}, errWant},
	{"%D", []string{"L:1"}, errWant},
	{"%N", []string{}, errWant},
	{"%s %s %s", []string{"N", "S:", "B:false"}, "null  false"},
	{"%d %s", []string{"N", "N"}, "null null"},
	{"%E %X %.2e", []string{"N", "N", "N"}, "NULL NULL nu"},
	{"%-8s|%8.3S|", []string{"S:ab", "S:abcdef"}, "ab      |     ABC|"},
	{"%.f", []string{"D:1.0"}, errWant},
	{"%1$s %1$s", []string{"S:z"}, "z z"},
	{"%3$s", []string{"S:a"}, errWant},
	{"%s", []string{"D:1.0E7"}, "1.0E7"},
	{"%s", []string{"D:0.001"}, "0.001"},
	{"%.15g", []string{"D:0.1"}, "0.100000000000000"},
	{"%o", []string{"L:-8"}, "37777777770"},
	{"%x", []string{"L:-2147483648"}, "80000000"},
	{"%d", []string{"L:-2147483649"}, "2147483647"},
	{"%(,.2f", []string{"D:-1234.5"}, "(1,234.50)"},
	{"% ,d", []string{"L:1234"}, " 1,234"},
	{"%+,.3e", []string{"D:123.0"}, errWant},
	{"%0,10.1f", []string{"D:-12345.67"}, "-012,345.7"},
}

func TestBasicStringFormat(t *testing.T) {
	for _, c := range formatCases {
		m := basicMachine()
		got, err := m.call(Class{"String"}, "format", append([]Value{String(c.format)}, vals(t, c.args...)...))
		switch {
		case c.want == errWant && err == nil:
			t.Errorf("format(%q, %v) = %q, want an error", c.format, c.args, JavaString(got))
		case c.want != errWant && err != nil:
			t.Errorf("format(%q, %v): %v", c.format, c.args, err)
		case c.want != errWant && got != String(c.want):
			t.Errorf("format(%q, %v) = %q, want %q", c.format, c.args, JavaString(got), c.want)
		}
	}
}

func TestBasicStringSplit(t *testing.T) {
	for _, c := range []struct {
		s, re string
		limit int
		want  []string // nil: an error
	}{
		{"a b c", "\\ ", 0, []string{"a", "b", "c"}},
		{"a,b,,c,,", ",", 0, []string{"a", "b", "", "c"}},
		{"a,b,,c,,", ",", -1, []string{"a", "b", "", "c", "", ""}},
		{"a,b,c", ",", 2, []string{"a", "b,c"}},
		{",a,b", ",", 0, []string{"", "a", "b"}},
		{"", ",", 0, []string{""}},
		{"abc", "", 0, []string{"a", "b", "c"}},
		{"abc", "", 2, []string{"a", "bc"}},
		{"a1b22c333", "\\d+", 0, []string{"a", "b", "c"}},
		{"a1b22c333", "\\d+", -1, []string{"a", "b", "c", ""}},
		{"boo:and:foo", "o", 0, []string{"b", "", ":and:f"}},
		{"boo:and:foo", "o", -2, []string{"b", "", ":and:f", "", ""}},
		{"boo:and:foo", "o", 5, []string{"b", "", ":and:f", "", ""}},
		{"boo:and:foo", ":", 2, []string{"boo", "and:foo"}},
		{"a.b.c", ".", 0, []string{}},
		{"a.b.c", "\\.", 0, []string{"a", "b", "c"}},
		{"a|b|c", "|", 0, []string{"a", "|", "b", "|", "c"}},
		{"a|b|c", "\\|", 0, []string{"a", "b", "c"}},
		{"  a  b ", "\\s+", 0, []string{"", "a", "b"}},
		{"a\u000bb", "\\s", 0, []string{"a", "b"}},
		{"aXbxc", "(?i)x", 0, []string{"a", "b", "c"}},
		{"a1b2", "[0-9]", 0, []string{"a", "b"}},
		{"x", "x", 0, []string{}},
		{"xx", "x", 0, []string{}},
		{"x", "x", -1, []string{"", ""}},
		{"a\u00e9b", "\\\u00e9", 0, []string{"a", "b"}},
		{"ab", "(?=b)", 0, nil}, // Java: [a, b]; RE2 has no lookahead
		{"a:b", "\\Q:\\E", 0, []string{"a", "b"}},
		{"a\nb\rc\u2028d", ".", 0, []string{"", "\n", "\r", "\u2028"}},
		{"tab\tsep", "\\t", 0, []string{"tab", "sep"}},
		{"aa", "a*", 0, []string{}},
		{"a,b;c", "[,;]", 0, []string{"a", "b", "c"}},
		{"a1b", "\\p{Alpha}", 0, []string{"", "1"}},
		{"abc", "b", 1, []string{"abc"}},
		{"abc", "x", 1, []string{"abc"}},
		{"abc", "(b)", 0, []string{"a", "c"}},
		{"a b", "\\h", 0, []string{"a", "b"}},
		{"a\u00e9b", "\u00e9", 0, []string{"a", "b"}},
		{"a[b]c", "[[]", 0, nil},    // Java's nested class: refused
		{"abc", "[a-c&&b]", 0, nil}, // intersection: refused
		{"abc", "(?U)b", 0, nil},    // Java's UNICODE_CHARACTER_CLASS, RE2's ungreedy: refused
		{"a1b", `\1`, 0, nil},       // back reference: refused
		{"abab", `\u0062`, 0, []string{"a", "a"}},
		{"a\x1bb", `\e`, 0, []string{"a", "b"}},
		{"a1b2c", `\P{Alpha}`, 0, []string{"a", "b", "c"}},
		{"a.b", `\Q.\E`, 0, []string{"a", "b"}},
		{"a-b]c", `[\Q-]\E]`, 0, []string{"a", "b", "c"}},
		{"a\nb", "(?s).", 0, []string{}},
		{"aXb", "[^\\s]", 0, []string{}},
	} {
		m := basicMachine()
		args := []Value{String(c.re)}
		if c.limit != 0 {
			args = append(args, Long(c.limit))
		}
		got, err := m.call(String(c.s), "split", args)
		if c.want == nil {
			if err == nil {
				t.Errorf("%q.split(%q, %d) = %s, want an error", c.s, c.re, c.limit, JavaString(got))
			}
			continue
		}
		if err != nil {
			t.Errorf("%q.split(%q, %d): %v", c.s, c.re, c.limit, err)
			continue
		}
		a := got.(*Array)
		var parts []string
		for _, it := range a.Items {
			parts = append(parts, string(it.(String)))
		}
		if a.Of != KindStringArray || fmt.Sprintf("%q", parts) != fmt.Sprintf("%q", c.want) && len(parts)+len(c.want) > 0 {
			t.Errorf("%q.split(%q, %d) = %q, want %q", c.s, c.re, c.limit, parts, c.want)
		}
	}
}

func TestBasicStringReplaceAll(t *testing.T) {
	for _, c := range []struct{ s, re, repl, want string }{
		{"a-B- c", " b", "-B-", "a-B- c"},
		{"hello world", "o", "0", "hell0 w0rld"},
		{"hello world", "(\\w+) (\\w+)", "$2 $1", "world hello"},
		{"abc", "b", "\\$", "a$c"},
		{"abc", "b", "$0$0", "abbc"},
		{"abc", "(b)", "$10", "ab0c"},
		{"abc", "(?<x>b)", "[${x}]", "a[b]c"},
		{"abc", "x", "$", "abc"},
		{"abc", "b", "$", errWant},
		{"abc", "b", "\\", errWant},
		{"abc", "b", "$2", errWant},
		{"abc", "b", "${y}", errWant},
		{"abc", "", "-", "-a-b-c-"},
		{"  trim me  ", "^\\s+|\\s+$", "", "trim me"},
		{"a.b.c", ".", "x", "xxxxx"},
		{"a.b.c", "\\.", "x", "axbxc"},
		{"2024-01-15", "(\\d+)-(\\d+)-(\\d+)", "$3/$2/$1", "15/01/2024"},
		{"aaa", "a", "\\\\", "\\\\\\"},
		{"x1y22", "\\d", "#", "x#y##"},
		{"abc", "B", "x", "abc"},
		{"abc", "(?i)B", "x", "axc"},
		{"a\u00e9c", "\u00e9", "e", "aec"},
		{"abc", "(a)(b)(c)", "$3$2$1$11", "cbaa1"},
		{"ab cd,ef", "[\\p{Lower}]+", "#", "# #,#"},
		{"ab  cd\u000bef", "\\S+", "#", "#  #\u000b#"},
		{"a, b ,c", "[\\s,]+", "|", "a|b|c"},
		{"a\nb\u2028c", "\\v", "|", "a|b|c"},
		{"a\u00a0b\tc", "\\h", "|", "a|b|c"},
		{"foo food foo", "\\bfoo\\b", "X", "X food X"},
		{"aaa", "^a", "b", "baa"},
		{"aaa", "a$", "b", "aab"},
		{"a\nb\nc", "(?m)^b", "X", "a\nX\nc"},
		{"a_1 b-2", "\\w+", "W", "W W-W"},
		{"abcdef", "[^abc]", "-", "abc---"},
		{"xa.by", "\\Qa.b\\E", "!", "x!y"},
		{"xxxxxx", "x{2,3}", "y", "yy"},
		{"ab", "(a)|b", "[$1]", "[a][]"},
		{"e\u00e9", "\\u00e9", "E", "eE"},
		{"ABC", "\\x41", "a", "aBC"},
		{"A\U0001F600", "\\x{1F600}", "s", "As"},
		{"a\tb", "\\t", " ", "a b"},
		{"a1b2", "\\D", "", "12"},
		{"AbC", "(?i)b", "x", "AxC"},
		{"a.b", "[.]", "!", "a!b"},
		{"a-b", "[a\\-]", "x", "xxb"},
		{"a^b", "[\\^]", "x", "axb"},
		{"abc", "(?<first>a)(?<rest>.*)", "${rest}${first}", "bca"},
		{"a{b", "\\{", "(", "a(b"},
		{"aXbXc", "X", "\\\\", "a\\b\\c"},
		{"path/to/file", "/", "\\\\", "path\\to\\file"},
		{"cost: $5", "\\$(\\d)", "USD$1", "cost: USD5"},
		{"a\r\nb", "\\R", "|", errWant}, // Java: "a|b"; \R is refused
		{"abc", "a(?=b)", "x", errWant}, // Java: "xbc"; lookahead is refused
		{"tel: 555-1234", "\\d{3}-\\d{4}", "XXX-XXXX", "tel: XXX-XXXX"},
		{"Hello World", "[A-Z]", "_$0", "_Hello _World"},
		{"a b", "\\s", "\\$", "a$b"},
		{"x", "\\p{L}", "L", "L"},
		{"\u00e9", "\\p{IsLatin}", "L", errWant}, // Java: "L"; Java-only class names are refused
		{"\u00c9", "(?i)\u00e9", "e", "e"},       // Java: "\u00c9"; RE2 folds Unicode case
		{"a|b", "a|b", "-", "-|-"},
		{"[x]", "\\[x\\]", "y", "y"},
		{"aaa", "a*?", "-", "-a-a-a-"},
		{"aaa", "a+?", "-", "---"},
		{"a\u0085b", ".", "x", "x\u0085x"},
		{"ab", "(?s).", "x", "xx"},
		{"AB", "(?i:a)B", "x", "x"},
		{"a1", "[\\d]", "D", "aD"},
		{"a1 ", "[^\\s\\d]", "X", "X1 "},
		{"12:30", "(\\d+):(\\d+)", "$2:$1", "30:12"},
		{"abc", "[]a]", "x", "xbc"},
		{"abc", "a{,2}", "x", errWant},
		{"aa", "a{2}+", "x", errWant},    // Java: "x"; possessive quantifiers are refused
		{"abc", "(?<=a)b", "x", errWant}, // lookbehind: RE2 has none
		{"a\nb", ".", "x", "x\nx"},
		{"a$b", `\$`, "\\$$0", "a$$b"},
	} {
		m := basicMachine()
		got, err := m.call(String(c.s), "replaceAll", []Value{String(c.re), String(c.repl)})
		switch {
		case c.want == errWant && err == nil:
			t.Errorf("%q.replaceAll(%q, %q) = %q, want an error", c.s, c.re, c.repl, JavaString(got))
		case c.want != errWant && err != nil:
			t.Errorf("%q.replaceAll(%q, %q): %v", c.s, c.re, c.repl, err)
		case c.want != errWant && got != String(c.want):
			t.Errorf("%q.replaceAll(%q, %q) = %q, want %q", c.s, c.re, c.repl, JavaString(got), c.want)
		}
	}
}

func TestBasicStringCase(t *testing.T) {
	m := basicMachine()
	for _, c := range []struct{ s, upper, lower string }{
		{"FooBar ", "FOOBAR ", "foobar "},
		{"stra\u00dfe", "STRASSE", "stra\u00dfe"},
		{"\u03a3\u0391\u03a3", "\u03a3\u0391\u03a3", "\u03c3\u03b1\u03c2"},
		{"\u0391\u03a3 \u0392", "\u0391\u03a3 \u0392", "\u03b1\u03c2 \u03b2"},
		{"\u03a3", "\u03a3", "\u03c3"},
		{"\u0391\u03a3\u0391", "\u0391\u03a3\u0391", "\u03b1\u03c3\u03b1"},
		{"\u0130stanbul", "\u0130STANBUL", "i\u0307stanbul"},
		{"\ufb01ne", "FINE", "\ufb01ne"},
		{"\u01c5", "\u01c4", "\u01c6"},
		{"1\u03a3", "1\u03a3", "1\u03c3"},
		{"\u0391\u03a31", "\u0391\u03a31", "\u03b1\u03c21"},
		{"\u038c\u03a3\u039f\u03a3.", "\u038c\u03a3\u039f\u03a3.", "\u03cc\u03c3\u03bf\u03c2."},
		{"a\U00010400b", "A\U00010400B", "a\U00010428b"},
		{"\u03a9\u0308\u03a3", "\u03a9\u0308\u03a3", "\u03c9\u0308\u03c2"},
	} {
		for _, x := range []struct{ method, want string }{{"toUpperCase", c.upper}, {"toLowerCase", c.lower}} {
			got, err := m.call(String(c.s), x.method, nil)
			if err != nil || got != String(x.want) {
				t.Errorf("%q.%s() = %q, %v; want %q", c.s, x.method, JavaString(got), err, x.want)
			}
		}
	}
}

func TestBasicLongCalls(t *testing.T) {
	m := basicMachine()
	one := Long(1)
	runCalls(t, m, []callCase{
		// SelLongTest.testCalls
		{one, "toString", nil, "STRING: 1"},
		{one, "toString", vals(t, "L:12"), "STRING: 12"},
		{one, "valueOf", vals(t, "L:123"), "LONG: 123"},
		{one, "valueOf", vals(t, "S:123"), "LONG: 123"},
		{one, "parseLong", vals(t, "S:123"), "LONG: 123"},
		{one, "intValue", nil, "LONG: 1"},
		// testInvalidCall
		{one, "valueOf", vals(t, "S:foo"), errWant},
		// The classes are SEL's long 0.
		{Class{"Long"}, "valueOf", vals(t, "S:-42"), "LONG: -42"},
		{Class{"Integer"}, "parseLong", vals(t, "S:7"), "LONG: 7"},
		{Class{"int"}, "toString", nil, "STRING: 0"},
		{Class{"Long"}, "toString", vals(t, "L:-9223372036854775808"), "STRING: -9223372036854775808"},
		{Class{"Long"}, "toString", vals(t, "S:1"), errWant},
		{Class{"Long"}, "parseLong", vals(t, "L:1"), errWant},
		{one, "intValue", vals(t, "L:1"), errWant},
		{Long(5000000000), "intValue", nil, "LONG: 5000000000"},
	})
	for _, c := range []struct {
		recv Value
		name string
		args []Value
	}{
		{one, "parse", vals(t, "L:1")}, // testNotSupportedCall
		{one, "longValue", nil},
		{Class{"Integer"}, "parseInt", vals(t, "S:1")},
		{one, "valueOf", vals(t, "D:1.5")},
		{one, "toString", vals(t, "L:1", "L:2")},
	} {
		_, err := m.call(c.recv, c.name, c.args)
		wantUnsupported(t, "LONG."+c.name, err)
	}
	_, err := m.call(one, "valueOf", vals(t, "S:foo"))
	if err == nil || !strings.Contains(err.Error(), `For input string: "foo"`) {
		t.Errorf("Long.valueOf(\"foo\") error %v, want one naming the input", err)
	}
}

func TestBasicLongParse(t *testing.T) {
	for _, c := range []struct{ s, want string }{
		{"123", "123"},
		{"-123", "-123"},
		{"+7", "7"},
		{"", "err"},
		{"-", "err"},
		{"+", "err"},
		{"9223372036854775807", "9223372036854775807"},
		{"-9223372036854775808", "-9223372036854775808"},
		{"9223372036854775808", "err"},
		{"-9223372036854775809", "err"},
		{" 1", "err"},
		{"1 ", "err"},
		{"1.0", "err"},
		{"0x10", "err"},
		{"\u0661\u0662", "12"},
		{"\uff11", "1"},
		{"00012", "12"},
		{"1_000", "err"},
	} {
		m := basicMachine()
		got, err := m.call(Class{"Long"}, "parseLong", []Value{String(c.s)})
		switch {
		case c.want == "err" && err == nil:
			t.Errorf("Long.parseLong(%q) = %s, want an error", c.s, JavaString(got))
		case c.want != "err" && (err != nil || JavaString(got) != c.want):
			t.Errorf("Long.parseLong(%q) = %v, %v; want %s", c.s, got, err, c.want)
		}
	}
}

func TestBasicDoubleCalls(t *testing.T) {
	m := basicMachine()
	one := Double(1.1)
	runCalls(t, m, []callCase{
		// SelDoubleTest.testCalls
		{one, "toString", nil, "STRING: 1.1"},
		{one, "toString", vals(t, "D:2.2"), "STRING: 2.2"},
		{one, "valueOf", vals(t, "D:12.3"), "DOUBLE: 12.3"},
		{one, "valueOf", vals(t, "S:12.3"), "DOUBLE: 12.3"},
		{one, "intValue", nil, "LONG: 1"},
		{one, "longValue", nil, "LONG: 1"},
		// testInvalidCall
		{one, "valueOf", vals(t, "S:foo"), errWant},
		{Class{"Double"}, "parseDouble", vals(t, "S:1e7"), "DOUBLE: 1.0E7"},
		{Class{"float"}, "toString", nil, "STRING: 0.0"},
		{Double(-1.9), "intValue", nil, "LONG: -1"},
		{Double(1e300), "longValue", nil, "LONG: 9223372036854775807"},
		{Double(-1e300), "longValue", nil, "LONG: -9223372036854775808"},
		{Class{"Double"}, "parseDouble", vals(t, "L:1"), errWant},
		{one, "toString", vals(t, "L:1"), errWant},
	})
	nan, _ := m.call(Class{"Double"}, "valueOf", vals(t, "S:NaN"))
	if got, err := m.call(nan, "intValue", nil); err != nil || got != Long(0) {
		t.Errorf("NaN.intValue() = %v, %v; want 0", got, err)
	}
	for _, c := range []struct {
		name string
		args []Value
	}{
		{"parse", vals(t, "L:1")}, // testNotSupportedCall
		{"valueOf", vals(t, "L:1")},
		{"doubleValue", nil},
	} {
		_, err := m.call(one, c.name, c.args)
		wantUnsupported(t, "DOUBLE."+c.name, err)
	}
}

func TestBasicDoubleParse(t *testing.T) {
	for _, c := range []struct{ s, want string }{
		{"12.3", "12.3"},
		{"-1.5e3", "-1500.0"},
		{"  4.5  ", "4.5"},
		{".5", "0.5"},
		{"5.", "5.0"},
		{"1e", "err"},
		{"1e+", "err"},
		{"1.5f", "1.5"},
		{"2D", "2.0"},
		{"NaN", "NaN"},
		{"-Infinity", "-Infinity"},
		{"+Infinity", "Infinity"},
		{"inf", "err"},
		{"nan", "err"},
		{"0x1.8p1", "3.0"},
		{"0x10", "err"},
		{"0x1p-2d", "0.25"},
		{"1_0", "err"},
		{"", "err"},
		{"  ", "err"},
		{".", "err"},
		{"e5", "err"},
		{"1e400", "Infinity"},
		{"-1e-400", "-0.0"},
		{"\u0661", "err"},
		{"1.5e-3", "0.0015"},
		{"0.1", "0.1"},
		{"1,5", "err"},
		{"0X1P4f", "16.0"},
	} {
		m := basicMachine()
		got, err := m.call(Class{"Double"}, "parseDouble", []Value{String(c.s)})
		switch {
		case c.want == "err" && err == nil:
			t.Errorf("Double.parseDouble(%q) = %s, want an error", c.s, JavaString(got))
		case c.want != "err" && (err != nil || JavaString(got) != c.want):
			t.Errorf("Double.parseDouble(%q) = %v, %v; want %s", c.s, got, err, c.want)
		}
	}
}

func TestBasicBooleanAndArrayCalls(t *testing.T) {
	m := basicMachine()
	for _, c := range []struct {
		recv Value
		name string
	}{
		{Boolean(true), "toString"},
		{Boolean(false), "booleanValue"},
		{Class{"Boolean"}, "valueOf"},
		{Class{"boolean"}, "parseBoolean"},
		{strArray("foo", "bar"), "size"},
		{longArray(1), "length"},
	} {
		_, err := m.call(c.recv, c.name, nil)
		wantUnsupported(t, show(c.recv)+"."+c.name, err)
	}
	// SelArrayTest.field and invalidField, through the dispatcher.
	if got, err := m.field(strArray("foo", "bar"), "length"); err != nil || got != Long(2) {
		t.Errorf("length = %v, %v; want 2", got, err)
	}
	_, err := m.field(strArray("foo"), "size")
	wantUnsupported(t, "STRING_ARRAY.size", err)
}

// fooMap is SelMapTest's map: {foo=bar, num=123}.
func fooMap() *Map {
	mp := NewMap()
	mp.Put("foo", String("bar"))
	mp.Put("num", Long(123))
	return mp
}

func TestBasicMapCalls(t *testing.T) {
	m := basicMachine()
	orig := fooMap()
	if JavaString(orig) != "{foo=bar, num=123}" {
		t.Fatalf("map = %s", JavaString(orig))
	}
	runCalls(t, m, []callCase{
		{orig, "size", nil, "LONG: 2"},
		{orig, "containsKey", vals(t, "S:num"), "BOOLEAN: true"},
		{orig, "containsKey", vals(t, "S:not-existing"), "BOOLEAN: false"},
		{orig, "get", vals(t, "S:num"), "LONG: 123"},
		{orig, "get", vals(t, "S:fuu"), "NULL: NULL"},
		{orig, "getOrDefault", vals(t, "S:num", "L:1"), "LONG: 123"},
		{orig, "getOrDefault", vals(t, "S:fuu", "L:1"), "LONG: 1"},
		{orig, "get", vals(t, "N"), errWant},   // testCallGetNullKey
		{orig, "get", vals(t, "L:1"), errWant}, // testCallGetInvalidTypeKey
		{orig, "containsKey", vals(t, "L:1"), errWant},
		// testCallPut
		{orig, "put", vals(t, "S:foo", "B:true"), "STRING: bar"},
		{orig, "get", vals(t, "S:foo"), "BOOLEAN: true"},
		{orig, "put", vals(t, "S:foo", "N"), "BOOLEAN: true"},
		{orig, "get", vals(t, "S:foo"), "NULL: NULL"},
		{orig, "put", vals(t, "S:fuu", "S:bat"), "NULL: NULL"},
		{orig, "get", vals(t, "S:fuu"), "STRING: bat"},
		{orig, "put", vals(t, "L:1", "L:1"), errWant}, // testCallPutInvalidTypeKey
		{orig, "containsKey", vals(t, "S:foo"), "BOOLEAN: true"},
		// The classes are SEL's map holding null.
		{Class{"Map"}, "size", nil, "LONG: 0"},
		{Class{"HashMap"}, "containsKey", vals(t, "L:1"), "BOOLEAN: false"},
		{Class{"LinkedHashMap"}, "get", vals(t, "S:a"), errWant},
		{Class{"Map"}, "put", vals(t, "S:a", "L:1"), errWant},
	})
	if JavaString(orig) != "{foo=null, num=123, fuu=bat}" {
		t.Errorf("map = %s", JavaString(orig))
	}
	for _, c := range []struct {
		recv Value
		name string
		args []Value
	}{
		{orig, "get", nil},            // testCallGetInvalidArgs
		{orig, "put", vals(t, "L:1")}, // testCallPutInvalidArgs
		{orig, "remove", vals(t, "S:a")},
		{orig, "keySet", nil},
		{Class{"HashMap"}, "entrySet", nil},
		{Class{"Map"}, "size", vals(t, "L:1")},
	} {
		_, err := m.call(c.recv, c.name, c.args)
		wantUnsupported(t, "MAP."+c.name, err)
	}
}

func TestBasicMapValues(t *testing.T) {
	m := basicMachine()
	// SelMapStringTest, SelMapLongArrayTest, SelMapMapTest: testCallGet and testCallPut.
	arr := NewMap()
	arr.Put("foo", longArray(123, 111))
	inner := NewMap()
	inner.Put("bar", Double(1.23))
	nested := NewMap()
	nested.Put("foo", inner)
	baz := NewMap()
	baz.Put("baz", Boolean(true))
	str := NewMap()
	str.Put("foo", String("bar"))
	runCalls(t, m, []callCase{
		{str, "get", vals(t, "S:foo"), "STRING: bar"},
		{str, "put", vals(t, "S:foo", "S:baz"), "STRING: bar"},
		{str, "get", vals(t, "S:foo"), "STRING: baz"},
		{str, "put", vals(t, "S:foo", "N"), "STRING: baz"},
		{str, "get", vals(t, "S:foo"), "NULL: NULL"},
		{arr, "get", vals(t, "S:foo"), "LONG_ARRAY: [123, 111]"},
		{arr, "get", vals(t, "S:fuu"), "NULL: NULL"},
		{arr, "put", []Value{String("foo"), longArray(222, 333)}, "LONG_ARRAY: [123, 111]"},
		{arr, "get", vals(t, "S:foo"), "LONG_ARRAY: [222, 333]"},
		{arr, "put", vals(t, "S:foo", "N"), "LONG_ARRAY: [222, 333]"},
		{arr, "put", vals(t, "S:fuu", "S:bat"), "NULL: NULL"},
		{arr, "get", vals(t, "S:fuu"), "STRING: bat"},
		{nested, "get", vals(t, "S:foo"), "MAP: {bar=1.23}"},
		{nested, "put", []Value{String("foo"), baz}, "MAP: {bar=1.23}"},
		{nested, "get", vals(t, "S:foo"), "MAP: {baz=true}"},
		{nested, "put", vals(t, "S:foo", "N"), "MAP: {baz=true}"},
		{nested, "put", vals(t, "S:fuu", "B:true"), "NULL: NULL"},
		{nested, "get", vals(t, "S:fuu"), "BOOLEAN: true"},
	})
	if JavaString(nested) != "{foo=null, fuu=true}" {
		t.Errorf("map = %s", JavaString(nested))
	}
}

func TestBasicConstructors(t *testing.T) {
	m := basicMachine()
	for _, c := range []struct {
		class string
		args  []Value
		want  string
	}{
		{"String", vals(t, "S:foo"), "STRING: foo"}, // SelStringTest.testCreateValid
		{"String", nil, "STRING: "},                 // and SelTypesTest.testCallConstructor
		{"String", vals(t, "S:foo", "S:bar"), errWant},
		{"String", vals(t, "D:123.2"), errWant},
		{"String", vals(t, "L:-5000000000"), "STRING: -5000000000"},
		{"Long", vals(t, "L:5"), "LONG: 5"},
		{"Integer", vals(t, "S:12"), "LONG: 12"},
		{"long", vals(t, "S:x"), errWant},
		{"int", vals(t, "D:1.0"), errWant},
		{"Long", nil, errWant},
		{"Double", vals(t, "D:1.5"), "DOUBLE: 1.5"},
		{"Float", vals(t, "S:2.5f"), "DOUBLE: 2.5"},
		{"double", vals(t, "L:1"), errWant},
		{"Boolean", vals(t, "B:true"), "BOOLEAN: true"},
		{"boolean", vals(t, "S:TRUE"), "BOOLEAN: true"},
		{"Boolean", vals(t, "S:yes"), "BOOLEAN: false"},
		{"Boolean", vals(t, "L:1"), errWant},
		{"Map", nil, "MAP: {}"},
		{"HashMap", nil, "MAP: {}"},
		{"LinkedHashMap", nil, "MAP: {}"},
		{"HashMap", vals(t, "L:16"), errWant},
		{"UUID", nil, errWant},
		{"Math", nil, errWant},
	} {
		got, ok, err := constructBasic(m, c.class, c.args)
		switch {
		case !ok:
			t.Errorf("new %s: not handled", c.class)
		case c.want == errWant && err == nil:
			t.Errorf("new %s%v = %s, want an error", c.class, c.args, show(got))
		case c.want != errWant && (err != nil || show(got) != c.want):
			t.Errorf("new %s%v = %s, %v; want %s", c.class, c.args, show(got), err, c.want)
		}
	}
	for _, class := range []string{"DateTime", "DateTimeZone", "Days", "Runtime", "Util"} {
		if _, ok, err := constructBasic(m, class, nil); ok || err != nil {
			t.Errorf("new %s: ok %v, err %v; want it left to others", class, ok, err)
		}
		if _, ok, err := callStaticBasic(m, class, "x", nil); ok || err != nil {
			t.Errorf("%s.x(): ok %v, err %v; want it left to others", class, ok, err)
		}
		if _, ok, err := fieldStaticBasic(m, class, "x"); ok || err != nil {
			t.Errorf("%s.x: ok %v, err %v; want it left to others", class, ok, err)
		}
	}
}

func TestBasicMathCalls(t *testing.T) {
	m := basicMachine()
	math := Class{"Math"}
	runCalls(t, m, []callCase{
		// SelJavaMathTest.call
		{math, "min", vals(t, "L:1", "L:2"), "LONG: 1"},
		{math, "max", vals(t, "L:1", "L:2"), "LONG: 2"},
		{math, "pow", vals(t, "L:3", "L:2"), "DOUBLE: 9.0"},
		{math, "min", vals(t, "N", "N"), errWant}, // testInvalidCallArgType
		{math, "min", vals(t, "D:1.5", "L:2"), errWant},
		{math, "pow", vals(t, "D:2.0", "D:0.5"), "DOUBLE: 1.4142135623730951"},
		{math, "pow", vals(t, "D:1.0", "D:NaN"), "DOUBLE: NaN"},
		{math, "pow", vals(t, "D:-1.0", "D:Infinity"), "DOUBLE: NaN"},
		{math, "pow", vals(t, "S:2", "L:1"), errWant},
	})
	r, err := m.call(math, "random", nil)
	if err != nil || r.Kind() != KindDouble || r.(Double) < 0 || r.(Double) >= 1 {
		t.Errorf("Math.random() = %v, %v", r, err)
	}
	for _, c := range []struct {
		name string
		args []Value
	}{
		{"random", vals(t, "N")}, // testInvalidCallArg
		{"invalid", nil},         // testInvalidCallMethod
		{"sqrt", vals(t, "D:2.0")},
		{"abs", vals(t, "L:-1")},
	} {
		_, err := m.call(math, c.name, c.args)
		wantUnsupported(t, "Math."+c.name, err)
	}
	_, err = m.call(math, "sqrt", vals(t, "D:2.0"))
	if err == nil || !strings.Contains(err.Error(), "MATH has no method sqrt") {
		t.Errorf("Math.sqrt error %v", err)
	}
}

var uuidShape = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestBasicUUIDCalls(t *testing.T) {
	gen := func(seed string, n int) []string {
		m := newMachine(Config{Seed: seed})
		var out []string
		for i := 0; i < n; i++ {
			u, err := m.call(Class{"UUID"}, "randomUUID", nil) // SelJavaUUIDTest.testCalls
			if err != nil || u.Kind() != KindUUID {
				t.Fatalf("randomUUID() = %v, %v", u, err)
			}
			s, err := m.call(u, "toString", nil)
			if err != nil || s.Kind() != KindString || JavaString(u) != string(s.(String)) {
				t.Fatalf("toString() = %v, %v", s, err)
			}
			out = append(out, string(s.(String)))
		}
		return out
	}
	a, b, c := gen("seed", 3), gen("seed", 3), gen("other", 3)
	for i := range a {
		if !uuidShape.MatchString(a[i]) {
			t.Errorf("UUID %s is not shaped as a version-4 UUID", a[i])
		}
		if a[i] != b[i] || a[i] == c[i] {
			t.Errorf("UUIDs %s %s %s: want the same per seed, different across seeds", a[i], b[i], c[i])
		}
	}
	if a[0] == a[1] || a[1] == a[2] {
		t.Errorf("UUIDs repeat: %v", a)
	}
	m := basicMachine()
	runCalls(t, m, []callCase{{Class{"UUID"}, "toString", nil, "STRING: null"}})
	u, _ := m.call(Class{"UUID"}, "randomUUID", nil)
	for _, c := range []struct {
		recv Value
		name string
		args []Value
	}{
		{Class{"UUID"}, "randomUUID", vals(t, "N")}, // testInvalidCallArg
		{Class{"UUID"}, "uuid", nil},                // testInvalidCallMethod
		{Class{"UUID"}, "nameUUIDFromBytes", vals(t, "S:x")},
		{Class{"UUID"}, "fromString", vals(t, "S:x")},
		{u, "getMostSignificantBits", nil},
	} {
		_, err := m.call(c.recv, c.name, c.args)
		wantUnsupported(t, "UUID."+c.name, err)
	}
	if v, err := m.call(u, "randomUUID", nil); err != nil || v.Kind() != KindUUID || v == u {
		t.Errorf("u.randomUUID() = %v, %v", v, err)
	}
}

func TestBasicMiscCalls(t *testing.T) {
	m := newMachine(Config{Now: time.UnixMilli(12345)})
	arr := longArray(1)
	runCalls(t, m, []callCase{
		{Class{"System"}, "currentTimeMillis", nil, "LONG: 12345"},   // testCallCurrentTimeMillis
		{Class{"Arrays"}, "asList", []Value{arr}, "LONG_ARRAY: [1]"}, // testCallArraysAsList
		{Class{"DateTimeConstants"}, "currentTimeMillis", nil, "LONG: 12345"},
	})
	if v, _ := m.call(Class{"Arrays"}, "asList", []Value{arr}); v != arr {
		t.Errorf("Arrays.asList(a) is not a")
	}
	for _, c := range []struct {
		class, name string
		args        []Value
	}{
		{"System", "currentTimeMillis", vals(t, "N")}, // testCallCurrentTimeMillisWithWrongArgs
		{"System", "nonExisting", nil},                // testCallOtherMethods
		{"System", "exit", vals(t, "L:1")},
		{"System", "getenv", vals(t, "S:PATH")},
		{"System", "getProperty", vals(t, "S:user.home")},
		{"System", "nanoTime", nil},
		{"Arrays", "sort", []Value{arr}},
	} {
		_, err := m.call(Class{c.class}, c.name, c.args)
		wantUnsupported(t, c.class+"."+c.name, err)
	}
	_, err := m.call(Class{"System"}, "exit", vals(t, "L:1"))
	if err == nil || !strings.Contains(err.Error(), "PRESET_MISC_FUNC_FIELDS has no method exit") {
		t.Errorf("System.exit error %v", err)
	}
	// testSundayField, testInvalidField
	for _, class := range []string{"DateTimeConstants", "System", "Arrays"} {
		if v, err := m.field(Class{class}, "SUNDAY"); err != nil || v != Long(7) {
			t.Errorf("%s.SUNDAY = %v, %v; want 7", class, v, err)
		}
		_, err := m.field(Class{class}, "Tomorrow")
		wantUnsupported(t, class+".Tomorrow", err)
	}
	for _, f := range []struct{ class, name string }{{"Long", "MAX_VALUE"}, {"Math", "PI"}, {"UUID", "x"}, {"String", "CASE_INSENSITIVE_ORDER"}, {"System", "out"}} {
		_, err := m.field(Class{f.class}, f.name)
		wantUnsupported(t, f.class+"."+f.name, err)
	}
}

// capMeter is a meter with a CPU and memory allowance.
type capMeter struct{ cpu, mem, maxCPU, maxMem int64 }

func (c *capMeter) Charge(cpu, mem int64) error {
	c.cpu += cpu
	c.mem += mem
	if c.cpu > c.maxCPU || c.mem > c.maxMem {
		return errors.New("over budget")
	}
	return nil
}

func TestBasicAbuseHitsLimits(t *testing.T) {
	big := strings.Repeat("x", 1000)
	long := strings.Repeat("\u0149", 500_000) // 1,000,000 bytes; its upper case is 1,500,000
	commas := strings.Repeat("a,", 30_000)
	quotes := strings.Repeat(`"`, 700_000)
	for _, c := range []struct {
		label string
		recv  Value
		name  string
		args  []Value
	}{
		{"format width", Class{"String"}, "format", vals(t, "S:%999999999s", "S:x")},
		{"format width 2^31", Class{"String"}, "format", vals(t, "S:%2147483647d", "L:1")},
		{"format precision", Class{"String"}, "format", vals(t, "S:%.999999999f", "D:1.0")},
		{"format precision e", Class{"String"}, "format", vals(t, "S:%.2000000e", "D:1.0")},
		{"format pieces", Class{"String"}, "format", vals(t, "S:%1000000s%1000000s", "S:a", "S:b")},
		{"format upper", Class{"String"}, "format", []Value{String("%S"), String(long)}},
		{"replace empty target", String(big), "replace", []Value{String(""), String(big + big)}},
		{"replace growth", String(big), "replace", []Value{String("x"), String(big + big)}},
		{"replaceAll growth", String(big), "replaceAll", []Value{String("x"), String(big + big)}},
		{"replaceAll empty matches", String(big), "replaceAll", []Value{String("y*"), String(big + big)}},
		{"join", Class{"String"}, "join", []Value{String(big), strArray(make([]string, 2000)...)}},
		{"upper case", String(long), "toUpperCase", nil},
		{"escape", String(quotes), "escape", nil},
		{"split literal", String(commas), "split", vals(t, "S:,")},
		{"split regex", String(commas), "split", vals(t, "S:[,]", "L:-1")},
		{"split limit", String(commas), "split", vals(t, "S:,", "L:2147483647")},
		{"split empty", String(commas), "split", vals(t, "S:")},
		{"regex instructions", String("aaa"), "split", vals(t, "S:(a{999}){10}")},
		{"regex nested repeats", String("aaa"), "replaceAll", vals(t, "S:((a{100}){100}){100}", "S:")},
		{"regex alternation repeat", String("aaa"), "split", vals(t, "S:(ab|cd|ef|gh|ij){1000}")},
		{"regex depth", String("aaa"), "split", []Value{String(strings.Repeat("(", 600) + "a" + strings.Repeat(")", 600))}},
		{"regex length", String("aaa"), "split", []Value{String(strings.Repeat("a", 1001))}},
	} {
		m := basicMachine()
		_, err := m.call(c.recv, c.name, c.args)
		if !errors.Is(err, ErrLimit) {
			t.Errorf("%s: error %v, want one wrapping ErrLimit", c.label, err)
		}
	}

	// Map growth past the array limit.
	m := newMachine(Config{Limits: Limits{Array: 10}})
	mp := NewMap()
	var err error
	for i := 0; i < 11 && err == nil; i++ {
		_, err = m.call(mp, "put", []Value{String(strconv.Itoa(i)), Long(i)})
	}
	if !errors.Is(err, ErrLimit) || mp.Len() != 10 {
		t.Errorf("map of %d entries, error %v; want 10 and ErrLimit", mp.Len(), err)
	}
	if _, err := m.call(mp, "put", []Value{String("0"), Long(1)}); err != nil {
		t.Errorf("replacing a key of a full map: %v", err)
	}

	// Matching is charged: a large subject against a large program runs
	// out of a small budget before it runs.
	meter := &capMeter{maxCPU: 10_000_000, maxMem: 1 << 30}
	m = newMachine(Config{Meter: meter})
	_, err = m.call(String(strings.Repeat("ab", 200_000)), "replaceAll", vals(t, "S:(a|b){50}c", "S:x"))
	if !errors.Is(err, ErrLimit) {
		t.Errorf("costly replaceAll: error %v, want ErrLimit", err)
	}
}

// TestBasicEveryCallCharges calls each method with arguments of every
// kind: none may panic, each must charge the meter.
func TestBasicEveryCallCharges(t *testing.T) {
	args := []Value{Null{}, TypedNull{Of: KindString}, TypedNull{Of: KindMap}, String("a,b"), String("%s"), Long(1), Long(-5000000000), Double(1.5), Boolean(true),
		strArray("x"), longArray(1), NewMap(), UUID{}, Class{"Math"}, nil}
	recvs := []Value{String("a,b"), Long(3), Double(2.5), Boolean(false), strArray("x"), fooMap(), UUID{},
		Class{"String"}, Class{"Long"}, Class{"Double"}, Class{"Boolean"}, Class{"Map"}, Class{"UUID"},
		Class{"Math"}, Class{"System"}}
	names := []string{"split", "toUpperCase", "toLowerCase", "replaceAll", "replace", "valueOf", "startsWith",
		"endsWith", "contains", "substring", "lastIndexOf", "length", "isEmpty", "equals", "compareTo", "trim",
		"format", "join", "escape", "toString", "parseLong", "intValue", "parseDouble", "longValue", "size", "get",
		"containsKey", "put", "getOrDefault", "min", "max", "pow", "random", "randomUUID", "currentTimeMillis",
		"asList", "getClass"}
	for _, recv := range recvs {
		for _, name := range names {
			for n := 0; n <= 3; n++ {
				for _, a := range args {
					meter := &capMeter{maxCPU: 1 << 60, maxMem: 1 << 60}
					m := newMachine(Config{Meter: meter})
					cargs := make([]Value, n)
					for i := range cargs {
						cargs[i] = args[(i*5+len(name))%len(args)]
					}
					if n > 0 {
						cargs[0] = a
					}
					func() {
						defer func() {
							if r := recover(); r != nil {
								t.Fatalf("%s.%s%v panicked: %v", show(recv), name, cargs, r)
							}
						}()
						v, err := m.call(recv, name, cargs)
						if err == nil && v == nil {
							t.Errorf("%s.%s%v returned no value and no error", show(recv), name, cargs)
						}
					}()
					if meter.cpu < 1 {
						t.Errorf("%s.%s%v charged nothing", show(recv), name, cargs)
					}
				}
			}
		}
	}
}

// FuzzBasicRegex feeds patterns and replacements to split and replaceAll:
// they may fail, never panic.
func FuzzBasicRegex(f *testing.F) {
	for _, seed := range []string{`\p{`, `\x{41`, `[a\Q]`, `\Q`, `\`, `a{`, `a{1,`, `(?`, `[`, `[^`, `[]`, `\u12`, `\p{Lower`,
		`(?i)(?s).`, `\P{Alpha}[\P{Alpha}]`, `[\V]`, `$1\`, `${`, `${a`, `\0`, `(?U)`, `[&&]`, `\e\h\v\H\V\S\s`} {
		f.Add("a,b.c{d}", seed, "$0")
	}
	f.Fuzz(func(t *testing.T, s, re, repl string) {
		m := basicMachine()
		_, _ = m.call(String(s), "split", []Value{String(re)})
		_, _ = m.call(String(s), "replaceAll", []Value{String(re), String(repl)})
		_, _ = m.call(Class{"String"}, "format", []Value{String(re), String(s), Long(len(s)), Double(1.5)})
	})
}
