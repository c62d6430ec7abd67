package sel

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// tokKind is a token's kind.
type tokKind uint8

const (
	tEOF tokKind = iota
	tIdent
	tKeyword
	tInt
	tFloat
	tString
	tOp // operators and separators
)

// token is one token of an expression, with its position (1-based line
// and column, columns counted in characters).
type token struct {
	kind tokKind
	text string // the source text; for strings, the unquoted value
	pos  Pos
}

// Pos is a position in an expression's source.
type Pos struct{ Line, Col int }

func (p Pos) String() string { return fmt.Sprintf("line %d, column %d", p.Line, p.Col) }

// keywords are Java's reserved words, as SEL's grammar reserves them.
var keywords = map[string]bool{
	"abstract": true, "boolean": true, "break": true, "byte": true, "case": true, "catch": true, "char": true,
	"class": true, "const": true, "continue": true, "default": true, "do": true, "double": true, "else": true,
	"extends": true, "false": true, "final": true, "finally": true, "float": true, "for": true, "goto": true,
	"if": true, "implements": true, "import": true, "instanceof": true, "int": true, "interface": true,
	"long": true, "native": true, "new": true, "null": true, "package": true, "private": true,
	"protected": true, "public": true, "return": true, "short": true, "static": true, "super": true,
	"switch": true, "synchronized": true, "this": true, "throw": true, "throws": true, "transient": true,
	"true": true, "try": true, "void": true, "volatile": true, "while": true,
}

// operators, longest first within each leading character.
var operators = []string{
	">>>=", "<<=", ">>=", ">>>",
	"==", "<=", ">=", "!=", "||", "&&", "++", "--", "+=", "-=", "*=", "/=", "&=", "|=", "^=", "%=", "<<", ">>",
	"(", ")", "{", "}", "[", "]", ";", ",", ".", "=", ">", "<", "!", "~", "?", ":", "+", "-", "*", "/", "&",
	"|", "^", "%",
}

// SyntaxError is an expression that does not parse, with where.
type SyntaxError struct {
	Pos Pos
	Msg string
}

func (e *SyntaxError) Error() string { return e.Pos.String() + ": " + e.Msg }

// lexer splits an expression into tokens.
type lexer struct {
	src       string
	off       int
	line, col int
}

// lex returns src's tokens, ending with tEOF. Unicode escapes (\u0041)
// are read first, anywhere in the source, as Java reads them
// (JAVA_UNICODE_ESCAPE).
func lex(src string) ([]token, error) {
	src, err := unicodeEscapes(src)
	if err != nil {
		return nil, err
	}
	l := &lexer{src: src, line: 1, col: 1}
	var out []token
	for {
		if err := l.skip(); err != nil {
			return nil, err
		}
		t, err := l.next()
		if err != nil {
			return nil, err
		}
		out = append(out, t)
		if t.kind == tEOF {
			return out, nil
		}
	}
}

func (l *lexer) pos() Pos { return Pos{l.line, l.col} }

func (l *lexer) errorf(p Pos, format string, args ...any) error {
	return &SyntaxError{Pos: p, Msg: fmt.Sprintf(format, args...)}
}

// advance moves past n bytes, counting lines and columns.
func (l *lexer) advance(n int) {
	end := l.off + n
	for l.off < end {
		r, size := utf8.DecodeRuneInString(l.src[l.off:])
		l.off += size
		if r == '\n' {
			l.line++
			l.col = 1
		} else {
			l.col++
		}
	}
}

// skip passes over white space and comments.
func (l *lexer) skip() error {
	for l.off < len(l.src) {
		rest := l.src[l.off:]
		switch {
		case rest[0] == ' ' || rest[0] == '\t' || rest[0] == '\n' || rest[0] == '\r' || rest[0] == '\f':
			l.advance(1)
		case strings.HasPrefix(rest, "//"):
			n := strings.IndexAny(rest, "\r\n")
			if n < 0 {
				n = len(rest)
			}
			l.advance(n)
		case strings.HasPrefix(rest, "/*"):
			n := strings.Index(rest[2:], "*/")
			if n < 0 {
				return l.errorf(l.pos(), "a comment /* is not closed")
			}
			l.advance(n + 4)
		default:
			return nil
		}
	}
	return nil
}

func isLetter(r rune) bool {
	return r == '$' || r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' ||
		r >= 0xc0 && r != 0xd7 && r != 0xf7 && unicode.IsLetter(r)
}

func isDigit(r rune) bool { return r >= '0' && r <= '9' }

// next reads one token at the current offset.
func (l *lexer) next() (token, error) {
	p := l.pos()
	if l.off >= len(l.src) {
		return token{kind: tEOF, pos: p}, nil
	}
	rest := l.src[l.off:]
	r, _ := utf8.DecodeRuneInString(rest)
	switch {
	case isLetter(r):
		n := 0
		for n < len(rest) {
			c, size := utf8.DecodeRuneInString(rest[n:])
			if !isLetter(c) && !isDigit(c) {
				break
			}
			n += size
		}
		text := rest[:n]
		l.advance(n)
		if keywords[text] {
			return token{kind: tKeyword, text: text, pos: p}, nil
		}
		return token{kind: tIdent, text: text, pos: p}, nil
	case isDigit(r) || r == '.' && len(rest) > 1 && isDigit(rune(rest[1])):
		return l.number(p)
	case r == '"' || r == '\'':
		return l.str(p, byte(r))
	}
	for _, op := range operators {
		if strings.HasPrefix(rest, op) {
			l.advance(len(op))
			return token{kind: tOp, text: op, pos: p}, nil
		}
	}
	return token{}, l.errorf(p, "unexpected character %q", r)
}

// number reads an integer or floating-point literal as the grammar has
// them: INTEGER_LITERAL (decimal, hex, octal, optional L) and
// FLOATING_POINT_LITERAL (digits, point, exponent, optional f/d).
func (l *lexer) number(p Pos) (token, error) {
	rest := l.src[l.off:]
	n := 0
	digits := func() {
		for n < len(rest) && isDigit(rune(rest[n])) {
			n++
		}
	}
	if strings.HasPrefix(rest, "0x") || strings.HasPrefix(rest, "0X") {
		n = 2
		for n < len(rest) && strings.IndexByte("0123456789abcdefABCDEF", rest[n]) >= 0 {
			n++
		}
		if n == 2 {
			return token{}, l.errorf(p, "a hex literal needs digits")
		}
		if n < len(rest) && (rest[n] == 'l' || rest[n] == 'L') {
			n++
		}
		l.advance(n)
		return token{kind: tInt, text: rest[:n], pos: p}, nil
	}
	digits()
	if n > 1 && rest[0] == '0' && strings.ContainsAny(rest[1:n], "89") && !(n < len(rest) && strings.IndexByte(".eEfFdD", rest[n]) >= 0) {
		// An octal literal stops at its first 8 or 9: "08" is two
		// literals, which do not parse.
		return token{}, l.errorf(p, "%s is not a valid octal literal", rest[:n])
	}
	float := false
	if n < len(rest) && rest[n] == '.' {
		float = true
		n++
		digits()
	}
	if n < len(rest) && (rest[n] == 'e' || rest[n] == 'E') {
		k := n + 1
		if k < len(rest) && (rest[k] == '+' || rest[k] == '-') {
			k++
		}
		if k < len(rest) && isDigit(rune(rest[k])) {
			n = k
			digits()
			float = true
		}
	}
	if n < len(rest) && strings.IndexByte("fFdD", rest[n]) >= 0 {
		n++
		float = true
	} else if !float && n < len(rest) && (rest[n] == 'l' || rest[n] == 'L') {
		n++
	}
	text := rest[:n]
	l.advance(n)
	if float {
		return token{kind: tFloat, text: text, pos: p}, nil
	}
	return token{kind: tInt, text: text, pos: p}, nil
}

// str reads a string literal in quote q, unescaping it as
// SelTypeUtil.preprocess does (\b \n \t \f \r \\ \" \'; no octal or
// unicode escapes).
func (l *lexer) str(p Pos, q byte) (token, error) {
	rest := l.src[l.off:]
	var b strings.Builder
	for i := 1; i < len(rest); i++ {
		c := rest[i]
		switch c {
		case q:
			l.advance(i + 1)
			return token{kind: tString, text: b.String(), pos: p}, nil
		case '\n', '\r':
			return token{}, l.errorf(p, "a string literal is not closed on its line")
		case '\\':
			if i+1 >= len(rest) {
				return token{}, l.errorf(p, "a string literal is not closed")
			}
			i++
			switch rest[i] {
			case 'b':
				b.WriteByte('\b')
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'f':
				b.WriteByte('\f')
			case 'r':
				b.WriteByte('\r')
			case '\\', '"', '\'':
				b.WriteByte(rest[i])
			default:
				return token{}, l.errorf(p, "invalid escape \\%c in a string literal", rest[i])
			}
		default:
			b.WriteByte(c)
		}
	}
	return token{}, l.errorf(p, "a string literal is not closed")
}

// unicodeEscapes replaces Java's \uXXXX escapes (any number of u's) by
// the characters they stand for; a backslash escaped by another is not
// one.
func unicodeEscapes(src string) (string, error) {
	if !strings.Contains(src, "\\u") {
		return src, nil
	}
	var b strings.Builder
	for i := 0; i < len(src); i++ {
		c := src[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		// Count the backslashes in a row: an even run is escaped ones.
		j := i
		for j < len(src) && src[j] == '\\' {
			j++
		}
		run := j - i
		if run%2 == 0 || j >= len(src) || src[j] != 'u' {
			b.WriteString(src[i:j])
			i = j - 1
			continue
		}
		b.WriteString(src[i : j-1])
		k := j
		for k < len(src) && src[k] == 'u' {
			k++
		}
		if k+4 > len(src) {
			return "", &SyntaxError{Pos: Pos{1, 1}, Msg: "an incomplete unicode escape"}
		}
		v, err := strconv.ParseUint(src[k:k+4], 16, 32)
		if err != nil {
			return "", &SyntaxError{Pos: Pos{1, 1}, Msg: fmt.Sprintf("invalid unicode escape \\u%s", src[k:k+4])}
		}
		b.WriteRune(rune(v))
		i = k + 3
	}
	return b.String(), nil
}
