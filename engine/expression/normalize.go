package expression

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file turns SEL source (Java syntax) into expr source. It accepts the
// forms that differ from expr only cosmetically and rejects Java object syntax
// and statements with an error that says what is unsupported. It works on
// tokens, so string literals are never mistaken for code.

type tokenKind int

const (
	tokIdent tokenKind = iota
	tokNumber
	tokString
	tokPunct
)

type token struct {
	kind  tokenKind
	text  string
	start int // byte offset of the first byte in the source
	end   int // byte offset just past the token
	// repl, when set, replaces text in the normalised source.
	repl *string
}

// lexError is a lexing failure with a message for a person.
type lexError struct{ msg string }

func (e *lexError) Error() string { return e.msg }

// twoCharPuncts are the two-character operators the lexer keeps together.
var twoCharPuncts = map[string]bool{
	"==": true, "!=": true, "<=": true, ">=": true, "&&": true, "||": true,
	"++": true, "--": true, "+=": true, "-=": true, "*=": true, "/=": true,
	"%=": true, "&=": true, "|=": true, "^=": true, "..": true, "?.": true,
	"??": true, "->": true, "**": true, "::": true, "<<": true, ">>": true,
}

// lex splits src into tokens, skipping whitespace and Java comments.
func lex(src string) ([]token, error) {
	var toks []token
	i := 0
	for i < len(src) {
		r, size := utf8.DecodeRuneInString(src[i:])
		switch {
		case unicode.IsSpace(r):
			i += size
		case strings.HasPrefix(src[i:], "//"):
			j := strings.IndexByte(src[i:], '\n')
			if j < 0 {
				i = len(src)
			} else {
				i += j + 1
			}
		case strings.HasPrefix(src[i:], "/*"):
			j := strings.Index(src[i+2:], "*/")
			if j < 0 {
				return nil, &lexError{"unterminated comment"}
			}
			i += 2 + j + 2
		case isIdentStart(r):
			j := i + size
			for j < len(src) {
				r2, s2 := utf8.DecodeRuneInString(src[j:])
				if !isIdentPart(r2) {
					break
				}
				j += s2
			}
			toks = append(toks, token{kind: tokIdent, text: src[i:j], start: i, end: j})
			i = j
		case isDigit(r) || (r == '.' && i+1 < len(src) && isDigit(rune(src[i+1]))):
			j := lexNumber(src, i)
			toks = append(toks, token{kind: tokNumber, text: src[i:j], start: i, end: j})
			i = j
		case r == '\'' || r == '"' || r == '`':
			j, err := lexString(src, i)
			if err != nil {
				return nil, err
			}
			toks = append(toks, token{kind: tokString, text: src[i:j], start: i, end: j})
			i = j
		default:
			if i+2 <= len(src) && twoCharPuncts[src[i:i+2]] {
				toks = append(toks, token{kind: tokPunct, text: src[i : i+2], start: i, end: i + 2})
				i += 2
				continue
			}
			toks = append(toks, token{kind: tokPunct, text: src[i : i+size], start: i, end: i + size})
			i += size
		}
	}
	return toks, nil
}

func isDigit(r rune) bool { return r >= '0' && r <= '9' }

func isIdentStart(r rune) bool { return r == '_' || r == '$' || unicode.IsLetter(r) }

func isIdentPart(r rune) bool { return isIdentStart(r) || unicode.IsDigit(r) }

// lexNumber returns the end of the number literal starting at i, including
// a Java type suffix (L, l, D, d, F, f).
func lexNumber(src string, i int) int {
	j := i
	if strings.HasPrefix(src[j:], "0x") || strings.HasPrefix(src[j:], "0X") {
		j += 2
		for j < len(src) && (isHex(src[j]) || src[j] == '_') {
			j++
		}
		if j < len(src) && (src[j] == 'L' || src[j] == 'l') {
			j++
		}
		return j
	}
	for j < len(src) && (isDigit(rune(src[j])) || src[j] == '_') {
		j++
	}
	// A fraction, but not the range operator "..".
	if j+1 < len(src) && src[j] == '.' && isDigit(rune(src[j+1])) {
		j++
		for j < len(src) && (isDigit(rune(src[j])) || src[j] == '_') {
			j++
		}
	} else if j < len(src) && src[j] == '.' && (j+1 == len(src) || src[j+1] != '.') && j > i {
		// "1." is a Java double literal.
		j++
	}
	if j < len(src) && (src[j] == 'e' || src[j] == 'E') {
		k := j + 1
		if k < len(src) && (src[k] == '+' || src[k] == '-') {
			k++
		}
		if k < len(src) && isDigit(rune(src[k])) {
			j = k
			for j < len(src) && isDigit(rune(src[j])) {
				j++
			}
		}
	}
	if j < len(src) && strings.IndexByte("LlDdFf", src[j]) >= 0 {
		j++
	}
	return j
}

func isHex(b byte) bool {
	return isDigit(rune(b)) || (b >= 'a' && b <= 'f') || (b >= 'A' && b <= 'F')
}

// lexString returns the end of the string literal starting at i.
func lexString(src string, i int) (int, error) {
	q := src[i]
	j := i + 1
	for j < len(src) {
		switch src[j] {
		case '\\':
			if q == '`' {
				j++
				continue
			}
			j += 2
			continue
		case q:
			return j + 1, nil
		}
		j++
	}
	return 0, &lexError{"unterminated string literal"}
}

// Words that expr reads as operators; an identifier next to them is not a
// Java declaration.
var operatorWords = map[string]bool{
	"in": true, "not": true, "and": true, "or": true, "contains": true,
	"matches": true, "startsWith": true, "endsWith": true,
}

// Java statement keywords (and expr's own statement forms) that have no
// place in a single expression.
var statementWords = map[string]bool{
	"if": true, "else": true, "for": true, "while": true, "do": true,
	"switch": true, "case": true, "default": true, "throw": true, "try": true,
	"catch": true, "finally": true, "break": true, "continue": true,
	"class": true, "interface": true, "import": true, "package": true,
	"let": true, "final": true, "static": true, "public": true,
	"private": true, "synchronized": true, "return": true, "assert": true,
}

// Java type names that, in parentheses before an operand, form a cast.
var castTypes = map[string]bool{
	"int": true, "long": true, "double": true, "float": true, "short": true,
	"byte": true, "char": true, "boolean": true, "String": true, "Integer": true,
	"Long": true, "Double": true, "Float": true, "Boolean": true, "Object": true,
}

// Methods that may be called on any value; the patcher maps them.
var valueMethods = map[string]bool{"toString": true, "size": true, "length": true}

// Joda-Time names, to give a pointed hint.
var jodaNames = map[string]bool{
	"DateTime": true, "DateTimeZone": true, "DateTimeFormat": true,
	"DateTimeFormatter": true, "Days": true, "withZone": true, "forID": true,
	"forPattern": true, "parseDateTime": true, "minusDays": true,
	"minusHours": true, "plusDays": true, "plusHours": true, "monthOfYear": true,
	"getAsText": true, "getMillis": true, "dayOfWeek": true,
}

// Problem classes, in the order of priority used when a source has several.
const (
	probNew = iota
	probStatement
	probDeclaration
	probAssignment
	probStatements
	probIncrement
	probLambda
	probCast
	probMethod
	probCount
)

// normalize checks src for unsupported Java constructs and returns the
// equivalent expr source and the identifiers it contains. Problems are
// reported with the *Error of kind ErrUnsupported (or ErrSyntax for lexing
// failures).
func normalize(src string) (string, []string, error) {
	toks, err := lex(src)
	if err != nil {
		return "", nil, newError(src, ErrSyntax, nil, "%s", err.Error())
	}
	// Trailing semicolons end the statement in Java; they carry nothing.
	for len(toks) > 0 && toks[len(toks)-1].text == ";" {
		toks = toks[:len(toks)-1]
	}
	// A leading return yields the value of what follows.
	if len(toks) > 0 && toks[0].kind == tokIdent && toks[0].text == "return" {
		toks = toks[1:]
	}
	if len(toks) == 0 {
		return "", nil, newError(src, ErrSyntax, nil, "empty expression")
	}

	if msg := javaProblem(toks); msg != "" {
		return "", nil, newError(src, ErrUnsupported, nil, "%s", msg)
	}
	out, idents := render(src, toks)
	return out, idents, nil
}

// render writes toks back as the expression language's source, with each
// token's replacement and a comment's gap as one space, and returns the
// identifiers it left as they were.
func render(src string, toks []token) (string, []string) {
	var idents []string
	var b strings.Builder
	b.Grow(len(src))
	prev := toks[0].start
	for i, t := range toks {
		if i > 0 {
			gap := src[prev:t.start]
			if strings.Contains(gap, "/") {
				gap = " " // the gap held a comment
			}
			b.WriteString(gap)
		}
		if t.repl != nil {
			b.WriteString(*t.repl)
		} else {
			b.WriteString(t.text)
		}
		if t.kind == tokIdent && t.repl == nil {
			idents = append(idents, t.text)
		}
		prev = t.end
	}
	return b.String(), idents
}

// javaProblem returns the message of the first class of Java construct
// (in problem-class order) that toks use and the expression language does
// not support, or "" when there is none. It marks the tokens it rewrites
// (null, number suffixes) through their repl.
func javaProblem(toks []token) string {
	var probs [probCount]string
	note := func(class int, msg string) {
		if probs[class] == "" {
			probs[class] = msg
		}
	}
	nilText := "nil"
	for i := range toks {
		t := &toks[i]
		next := func(k int) *token {
			if i+k < len(toks) {
				return &toks[i+k]
			}
			return nil
		}
		switch t.kind {
		case tokIdent:
			switch {
			case t.text == "new":
				note(probNew, newMessage(toks[i+1:]))
			case statementWords[t.text]:
				note(probStatement, "Java statement \""+t.text+
					"\" is not supported; write one expression (use cond ? a : b to choose a value)")
			case t.text == "instanceof":
				note(probStatement, "instanceof is not supported")
			case t.text == "null":
				t.repl = &nilText
			default:
				if n := next(1); n != nil && n.kind == tokIdent && !operatorWords[t.text] &&
					!operatorWords[n.text] && !isLiteralWord(t.text) && !isLiteralWord(n.text) &&
					n.text != "instanceof" {
					note(probDeclaration, "variable declaration ("+t.text+" "+n.text+
						") is not supported; write one expression")
				}
			}
		case tokNumber:
			if r := numberWithoutSuffix(t.text); r != t.text {
				t.repl = &r
			}
		case tokPunct:
			switch t.text {
			case ";":
				note(probStatements, "multiple statements (;) are not supported; write one expression")
			case "=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=":
				note(probAssignment, "assignment ("+t.text+") is not supported; write one expression")
			case "++", "--":
				note(probIncrement, "increment/decrement ("+t.text+") is not supported")
			case "->", "::":
				note(probLambda, "Java lambdas and method references ("+t.text+") are not supported")
			case "(":
				if n, c, o := next(1), next(2), next(3); n != nil && c != nil && o != nil &&
					n.kind == tokIdent && castTypes[n.text] && c.text == ")" && isOperandStart(o) {
					note(probCast, "Java cast (("+n.text+")) is not supported; use int(x) or float(x)")
				}
			case ".":
				if m, p := next(1), next(2); m != nil && p != nil && m.kind == tokIdent && p.text == "(" {
					if msg := methodProblem(toks, i); msg != "" {
						note(probMethod, msg)
					}
				}
			}
		}
	}
	for _, msg := range probs {
		if msg != "" {
			return msg
		}
	}
	return ""

}

func isLiteralWord(s string) bool {
	return s == "true" || s == "false" || s == "null" || s == "nil"
}

func isOperandStart(t *token) bool {
	return t.kind == tokIdent || t.kind == tokNumber || t.kind == tokString || t.text == "("
}

// newMessage describes a Java "new" construction given the tokens after it.
func newMessage(rest []token) string {
	if len(rest) >= 2 && rest[0].kind == tokIdent && rest[1].text == "[" {
		return "Java array construction (new " + rest[0].text +
			"[]{...}) is not supported; use an array literal such as [1, 2, 3]"
	}
	return "Java object construction (new) is not supported; use a literal or a helper function"
}

// methodProblem checks the method call whose "." is toks[i]; it returns ""
// when the call is allowed.
func methodProblem(toks []token, i int) string {
	method := toks[i+1].text
	recv := ""
	if i > 0 && toks[i-1].kind == tokIdent && (i < 2 || toks[i-2].text != ".") {
		recv = toks[i-1].text
		if namespaces[recv] {
			return "" // params.*, Util.*, UUID.*, Math.*: checked by the patcher
		}
	}
	if valueMethods[method] {
		return ""
	}
	call := "." + method + "(..)"
	if recv != "" {
		call = recv + call
	}
	msg := "method call " + call + " is not supported"
	if jodaNames[method] || jodaNames[recv] {
		return msg + "; Joda-Time objects are not available, use Util.dateIntToTs, " +
			"Util.dateIntHourToTs, Util.incrementDateInt or Util.tsToDateInt"
	}
	return msg + "; use a helper function (params.*, Util.*, Math.*, UUID.randomUUID())"
}

// numberWithoutSuffix drops a Java type suffix from a number literal: 123L
// becomes 123 and 1d becomes 1.0.
func numberWithoutSuffix(s string) string {
	if strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") {
		return strings.TrimRight(s, "Ll")
	}
	last := s[len(s)-1]
	switch last {
	case 'L', 'l':
		return s[:len(s)-1]
	case 'D', 'd', 'F', 'f':
		s = s[:len(s)-1]
		if !strings.ContainsAny(s, ".eE") {
			s += ".0"
		}
		return s
	}
	if strings.HasSuffix(s, ".") {
		return s + "0"
	}
	return s
}
