package expression

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNormalizeAccepts(t *testing.T) {
	tests := []struct {
		src, want string
	}{
		{"1 > 0;", "1 > 0"},
		{"1 > 0 ;  ;\n", "1 > 0"},
		{"return 100;", "100"},
		{"return(1 + 2);", "(1 + 2)"},
		{"'bar';", "'bar'"},
		{`"bar"`, `"bar"`},
		{`"a;b=c" + 'new Map()'`, `"a;b=c" + 'new Map()'`},
		{"x == null", "x == nil"},
		{"x != null && y", "x != nil && y"},
		{"123L + 1l", "123 + 1"},
		{"0xFFL", "0xFF"},
		{"1.5d + 2f + 3D", "1.5 + 2.0 + 3.0"},
		{"1. + 2", "1.0 + 2"},
		{"!(1 > 0)", "!(1 > 0)"},
		{"a || b && !c", "a || b && !c"},
		{"x > 3 ? 'a' : 'b'", "x > 3 ? 'a' : 'b'"},
		{"1 /* one */ + // plus\n 2", "1 + 2"},
		{"params.get('x')", "params.get('x')"},
		{"UUID.randomUUID().toString()", "UUID.randomUUID().toString()"},
		{"x.size() + s.length()", "x.size() + s.length()"},
		{"x in [1, 2] && y not in [3]", "x in [1, 2] && y not in [3]"},
		{"1..5", "1..5"},
		{"returned + 1", "returned + 1"},
		{"'héllo' + 'wörld'", "'héllo' + 'wörld'"},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			got, _, err := normalize(tt.src)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestNormalizeRejects(t *testing.T) {
	tests := []struct {
		src  string
		msg  string
		kind error
	}{
		{"new Map()", "Java object construction (new) is not supported; use a literal or a helper function", ErrUnsupported},
		{"new int[]{1,2,3};", "Java array construction (new int[]{...}) is not supported; use an array literal such as [1, 2, 3]", ErrUnsupported},
		{"m = 1", "assignment (=) is not supported", ErrUnsupported},
		{"x += 1", "assignment (+=) is not supported", ErrUnsupported},
		{"x++", "increment/decrement (++) is not supported", ErrUnsupported},
		{"1; 2", "multiple statements (;) are not supported", ErrUnsupported},
		{"if (x) 1 else 2", `Java statement "if" is not supported`, ErrUnsupported},
		{"for (i : x) i", `Java statement "for" is not supported`, ErrUnsupported},
		{"while (true) 1", `Java statement "while" is not supported`, ErrUnsupported},
		{"throw 'x'", `Java statement "throw" is not supported`, ErrUnsupported},
		{"1 + return 2", `Java statement "return" is not supported`, ErrUnsupported},
		{"let x = 1; x", `Java statement "let" is not supported`, ErrUnsupported},
		{"DateTime dt", "variable declaration (DateTime dt) is not supported", ErrUnsupported},
		{"'a,b'.split(',')", "method call .split(..) is not supported", ErrUnsupported},
		{"m.put('a', 1)", "method call m.put(..) is not supported", ErrUnsupported},
		{"e1.get('bar')", "method call e1.get(..) is not supported", ErrUnsupported},
		{"params.get('a').get('b')", "method call .get(..) is not supported", ErrUnsupported},
		{"d.withZone(z)", "method call d.withZone(..) is not supported; Joda-Time objects are not available", ErrUnsupported},
		{"DateTimeZone.forID('UTC')", "method call DateTimeZone.forID(..) is not supported", ErrUnsupported},
		{"(int) x", "Java cast ((int)) is not supported", ErrUnsupported},
		{"x -> x", "Java lambdas and method references (->) are not supported", ErrUnsupported},
		{"x instanceof String", "instanceof is not supported", ErrUnsupported},
		{"'abc", "unterminated string literal", ErrSyntax},
		{"1 /* x", "unterminated comment", ErrSyntax},
		{";", "empty expression", ErrSyntax},
		{"return;", "empty expression", ErrSyntax},
		{"   ", "empty expression", ErrSyntax},
		// With several problems, the most fundamental one is reported.
		{"m = new Map(); m.put('foo', 'bar'); return m;", "Java object construction (new)", ErrUnsupported},
		{"x = 1; if (x) 2", `Java statement "if"`, ErrUnsupported},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			_, _, err := normalize(tt.src)
			requireErrorOf(t, err, tt.kind, tt.msg)
			assert.True(t, strings.HasPrefix(err.Error(), "expression \""), err.Error())
		})
	}
}

func TestErrorQuotesAndTruncates(t *testing.T) {
	_, _, err := normalize("new Map()")
	require.Error(t, err)
	assert.Equal(t, `expression "new Map()": Java object construction (new) is not supported; use a literal or a helper function`, err.Error())

	long := "new Map(" + strings.Repeat("1 + ", 40) + "1)"
	_, _, err = normalize(long)
	require.Error(t, err)
	quoted := strings.TrimPrefix(err.Error(), "expression ")
	quoted = quoted[:strings.Index(quoted, `": `)+1]
	assert.Equal(t, `"`+long[:77]+`..."`, quoted)

	_, _, err = normalize("\nDateTime dt = x;\n")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `expression "\nDateTime dt = x;\n"`, "newlines are escaped in the quote")
}

func TestLexStringsHideCode(t *testing.T) {
	toks, err := lex(`'it''s' + "say \"new\"; x = 1" + ` + "`raw \\ new`")
	require.NoError(t, err)
	var kinds []tokenKind
	for _, tk := range toks {
		kinds = append(kinds, tk.kind)
	}
	assert.Equal(t, []tokenKind{tokString, tokString, tokPunct, tokString, tokPunct, tokString}, kinds)
}
