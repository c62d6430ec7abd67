package sel

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// maxNesting bounds how deeply a source may nest expressions and
// statements, so that parsing and evaluating it cannot exhaust the stack.
const maxNesting = 200

// Program is a parsed expression.
type Program struct {
	src   string
	stmts []node
}

// Source is the program's source text.
func (p *Program) Source() string { return p.src }

// Parse parses src, a SEL program: optional imports (ignored, as SEL
// ignores them), then statements. Maestro's driver appends a ";" to an
// expression that ends in neither ";" nor "}" (ExprEvaluator.sanitize);
// Parse does not.
func Parse(src string) (*Program, error) {
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	for p.isKeyword("import") {
		if err := p.skipImport(); err != nil {
			return nil, err
		}
	}
	var stmts []node
	for p.peek().kind != tEOF {
		s, err := p.blockStatement()
		if err != nil {
			return nil, err
		}
		stmts = append(stmts, s)
	}
	return &Program{src: src, stmts: stmts}, nil
}

type parser struct {
	toks  []token
	i     int
	depth int
}

func (p *parser) peek() token { return p.toks[p.i] }

func (p *parser) peekAt(k int) token {
	if p.i+k < len(p.toks) {
		return p.toks[p.i+k]
	}
	return p.toks[len(p.toks)-1]
}

func (p *parser) advance() token {
	t := p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}

func (p *parser) isOp(op string) bool {
	t := p.peek()
	return t.kind == tOp && t.text == op
}

func (p *parser) isKeyword(kw string) bool {
	t := p.peek()
	return t.kind == tKeyword && t.text == kw
}

func (p *parser) errorf(t token, format string, args ...any) error {
	return &SyntaxError{Pos: t.pos, Msg: fmt.Sprintf(format, args...)}
}

// describe names a token for an error.
func describe(t token) string {
	switch t.kind {
	case tEOF:
		return "the end of the expression"
	case tString:
		return strconv.Quote(t.text)
	}
	return "'" + t.text + "'"
}

func (p *parser) expectOp(op string) (token, error) {
	t := p.peek()
	if t.kind != tOp || t.text != op {
		return t, p.errorf(t, "expected '%s', found %s", op, describe(t))
	}
	return p.advance(), nil
}

func (p *parser) ident() (token, error) {
	t := p.peek()
	if t.kind != tIdent {
		return t, p.errorf(t, "expected a name, found %s", describe(t))
	}
	return p.advance(), nil
}

// nest counts one more level of nesting; the caller calls p.depth-- when
// done.
func (p *parser) nest() error {
	p.depth++
	if p.depth > maxNesting {
		return fmt.Errorf("%w: %v", ErrLimit, p.errorf(p.peek(), "nested more than %d deep", maxNesting))
	}
	return nil
}

// skipImport passes over import [static] a.b.c[.*];
func (p *parser) skipImport() error {
	p.advance()
	if p.isKeyword("static") {
		p.advance()
	}
	if _, err := p.ident(); err != nil {
		return err
	}
	for p.isOp(".") {
		p.advance()
		if p.isOp("*") {
			p.advance()
			break
		}
		if _, err := p.ident(); err != nil {
			return err
		}
	}
	_, err := p.expectOp(";")
	return err
}

// primitives are the primitive type keywords SEL has.
var primitives = map[string]bool{"boolean": true, "int": true, "long": true, "float": true, "double": true}

// isDeclaration reports whether a local variable declaration starts here:
// Type() IDENTIFIER, where Type is a primitive or a class name with an
// optional [].
func (p *parser) isDeclaration() bool {
	t := p.peek()
	if !(t.kind == tKeyword && primitives[t.text] || t.kind == tIdent) {
		return false
	}
	k := 1
	if n := p.peekAt(1); n.kind == tOp && n.text == "[" {
		if n2 := p.peekAt(2); !(n2.kind == tOp && n2.text == "]") {
			return false
		}
		k = 3
	}
	return p.peekAt(k).kind == tIdent
}

// typeName parses Type(): a primitive or class name, optionally [].
func (p *parser) typeName() (Kind, Pos, error) {
	t := p.advance()
	if !(t.kind == tKeyword && primitives[t.text] || t.kind == tIdent) {
		return 0, t.pos, p.errorf(t, "expected a type, found %s", describe(t))
	}
	k, ok := typeKinds[t.text]
	if !ok {
		return 0, t.pos, fmt.Errorf("%w: %v", ErrUnsupported, p.errorf(t, "class %s is not supported", t.text))
	}
	if p.isOp("[") {
		p.advance()
		if _, err := p.expectOp("]"); err != nil {
			return 0, t.pos, err
		}
		a := arrayOf(k)
		if a == KindNull {
			return 0, t.pos, fmt.Errorf("%w: %v", ErrUnsupported, p.errorf(t, "cannot create an array of %s", t.text))
		}
		k = a
	}
	return k, t.pos, nil
}

// blockStatement parses a declaration followed by ";", or a statement.
func (p *parser) blockStatement() (node, error) {
	if p.isDeclaration() {
		d, err := p.declaration()
		if err != nil {
			return nil, err
		}
		if _, err := p.expectOp(";"); err != nil {
			return nil, err
		}
		return d, nil
	}
	return p.statement()
}

// declaration parses Type a [= x], b [= y], ...
func (p *parser) declaration() (*declare, error) {
	k, pos, err := p.typeName()
	if err != nil {
		return nil, err
	}
	d := &declare{pos: pos, kind: k}
	for {
		id, err := p.ident()
		if err != nil {
			return nil, err
		}
		var init node
		if p.isOp("=") {
			p.advance()
			if init, err = p.expression(); err != nil {
				return nil, err
			}
		}
		d.names, d.inits, d.poses = append(d.names, id.text), append(d.inits, init), append(d.poses, id.pos)
		if !p.isOp(",") {
			return d, nil
		}
		p.advance()
	}
}

// statement parses one statement.
func (p *parser) statement() (node, error) {
	if err := p.nest(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	t := p.peek()
	if t.kind == tOp && t.text == "{" {
		return p.block()
	}
	if t.kind == tKeyword {
		switch t.text {
		case "if":
			return p.ifStatement()
		case "while":
			return p.whileStatement()
		case "for":
			return p.forStatement()
		case "break", "continue":
			p.advance()
			if _, err := p.expectOp(";"); err != nil {
				return nil, err
			}
			return &jump{pos: t.pos, kind: t.text}, nil
		case "return", "throw":
			p.advance()
			x, err := p.expression()
			if err != nil {
				return nil, err
			}
			if _, err := p.expectOp(";"); err != nil {
				return nil, err
			}
			if t.text == "return" {
				return &returnStmt{pos: t.pos, x: x}, nil
			}
			return &throwStmt{pos: t.pos, x: x}, nil
		case "new", "true", "false", "null":
		default:
			return nil, fmt.Errorf("%w: %v", ErrUnsupported, p.errorf(t, "'%s' is not supported in SEL", t.text))
		}
	}
	x, err := p.expression()
	if err != nil {
		return nil, err
	}
	if _, err := p.expectOp(";"); err != nil {
		return nil, err
	}
	return &exprStmt{pos: t.pos, x: x}, nil
}

func (p *parser) block() (node, error) {
	open := p.advance()
	b := &block{pos: open.pos}
	for !p.isOp("}") {
		if p.peek().kind == tEOF {
			return nil, p.errorf(p.peek(), "the block opened at %s is not closed", open.pos)
		}
		s, err := p.blockStatement()
		if err != nil {
			return nil, err
		}
		b.stmts = append(b.stmts, s)
	}
	p.advance()
	return b, nil
}

// parenthesized parses ( expression ).
func (p *parser) parenthesized() (node, error) {
	if _, err := p.expectOp("("); err != nil {
		return nil, err
	}
	x, err := p.expression()
	if err != nil {
		return nil, err
	}
	_, err = p.expectOp(")")
	return x, err
}

func (p *parser) ifStatement() (node, error) {
	t := p.advance()
	cond, err := p.parenthesized()
	if err != nil {
		return nil, err
	}
	then, err := p.statement()
	if err != nil {
		return nil, err
	}
	s := &ifStmt{pos: t.pos, cond: cond, then: then}
	if p.isKeyword("else") {
		p.advance()
		if s.els, err = p.statement(); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (p *parser) whileStatement() (node, error) {
	t := p.advance()
	cond, err := p.parenthesized()
	if err != nil {
		return nil, err
	}
	body, err := p.statement()
	if err != nil {
		return nil, err
	}
	return &loop{pos: t.pos, cond: cond, body: body}, nil
}

func (p *parser) forStatement() (node, error) {
	t := p.advance()
	if _, err := p.expectOp("("); err != nil {
		return nil, err
	}
	l := &loop{pos: t.pos}
	var err error
	if !p.isOp(";") {
		if p.isDeclaration() {
			l.init, err = p.declaration()
		} else {
			l.init, err = p.statementExpression()
		}
		if err != nil {
			return nil, err
		}
	}
	if _, err := p.expectOp(";"); err != nil {
		return nil, err
	}
	if !p.isOp(";") {
		if l.cond, err = p.expression(); err != nil {
			return nil, err
		}
	}
	if _, err := p.expectOp(";"); err != nil {
		return nil, err
	}
	if !p.isOp(")") {
		if l.update, err = p.statementExpression(); err != nil {
			return nil, err
		}
	}
	if _, err := p.expectOp(")"); err != nil {
		return nil, err
	}
	if l.body, err = p.statement(); err != nil {
		return nil, err
	}
	return l, nil
}

// statementExpression is an assignment or a primary expression (a for
// loop's init and update).
func (p *parser) statementExpression() (node, error) {
	if p.isAssignment() {
		return p.assignment()
	}
	return p.primary()
}

// assignOps are SEL's assignment operators; the others Java has are
// refused.
var assignOps = map[string]bool{"=": true, "+=": true, "-=": true, "*=": true, "/=": true, "%=": true}

// refusedAssignOps are Java's that SEL does not have.
var refusedAssignOps = map[string]bool{"&=": true, "|=": true, "^=": true, "<<=": true, ">>=": true, ">>>=": true}

// isAssignment looks ahead for IDENTIFIER ["[" Expression "]"]
// AssignmentOperator.
func (p *parser) isAssignment() bool {
	if p.peek().kind != tIdent {
		return false
	}
	k := 1
	if t := p.peekAt(1); t.kind == tOp && t.text == "[" {
		// Skip a balanced [ ... ].
		depth := 0
		for ; p.i+k < len(p.toks); k++ {
			t := p.toks[p.i+k]
			if t.kind == tEOF {
				return false
			}
			if t.kind == tOp && t.text == "[" {
				depth++
			} else if t.kind == tOp && t.text == "]" {
				depth--
				if depth == 0 {
					k++
					break
				}
			}
		}
	}
	t := p.peekAt(k)
	return t.kind == tOp && (assignOps[t.text] || refusedAssignOps[t.text])
}

func (p *parser) assignment() (node, error) {
	id := p.advance()
	a := &assign{pos: id.pos, id: id.text}
	if p.isOp("[") {
		p.advance()
		var err error
		if a.index, err = p.expression(); err != nil {
			return nil, err
		}
		if _, err := p.expectOp("]"); err != nil {
			return nil, err
		}
	}
	op := p.advance()
	if !assignOps[op.text] {
		return nil, fmt.Errorf("%w: %v", ErrUnsupported, p.errorf(op, "the operator %s is not supported in SEL", op.text))
	}
	a.op = op.text
	x, err := p.expression()
	if err != nil {
		return nil, err
	}
	a.x = x
	return a, nil
}

// expression parses an assignment or a conditional expression.
func (p *parser) expression() (node, error) {
	if err := p.nest(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	if p.isAssignment() {
		return p.assignment()
	}
	return p.conditional()
}

func (p *parser) conditional() (node, error) {
	cond, err := p.binary(0)
	if err != nil {
		return nil, err
	}
	if !p.isOp("?") {
		return cond, nil
	}
	q := p.advance()
	a, err := p.expression()
	if err != nil {
		return nil, err
	}
	if _, err := p.expectOp(":"); err != nil {
		return nil, err
	}
	b, err := p.expression()
	if err != nil {
		return nil, err
	}
	return &ternary{pos: q.pos, cond: cond, a: a, b: b}, nil
}

// levels are the binary operators by precedence, lowest first, all left
// associative.
var levels = [][]string{{"||"}, {"&&"}, {"==", "!="}, {"<", ">", "<=", ">="}, {"+", "-"}, {"*", "/", "%"}}

// refusedOps are Java's binary and unary operators SEL does not have.
var refusedOps = map[string]bool{"|": true, "^": true, "&": true, "<<": true, ">>": true, ">>>": true,
	"++": true, "--": true, "~": true, "instanceof": true}

func (p *parser) binary(level int) (node, error) {
	if level == len(levels) {
		return p.unaryExpr()
	}
	x, err := p.binary(level + 1)
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		if t.kind == tOp && refusedOps[t.text] || t.kind == tKeyword && t.text == "instanceof" {
			return nil, fmt.Errorf("%w: %v", ErrUnsupported, p.errorf(t, "the operator %s is not supported in SEL", t.text))
		}
		if t.kind != tOp || !slices.Contains(levels[level], t.text) {
			return x, nil
		}
		p.advance()
		y, err := p.binary(level + 1)
		if err != nil {
			return nil, err
		}
		x = &binary{pos: t.pos, op: t.text, x: x, y: y}
	}
}

func (p *parser) unaryExpr() (node, error) {
	t := p.peek()
	if t.kind == tOp && (t.text == "-" || t.text == "+" || t.text == "!") {
		if err := p.nest(); err != nil {
			return nil, err
		}
		defer func() { p.depth-- }()
		p.advance()
		x, err := p.unaryExpr()
		if err != nil {
			return nil, err
		}
		return &unary{pos: t.pos, op: t.text, x: x}, nil
	}
	if t.kind == tOp && refusedOps[t.text] {
		return nil, fmt.Errorf("%w: %v", ErrUnsupported, p.errorf(t, "the operator %s is not supported in SEL", t.text))
	}
	return p.primary()
}

// primary parses PrimaryPrefix PrimarySuffix*.
func (p *parser) primary() (node, error) {
	x, err := p.prefix()
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		switch {
		case t.kind == tOp && t.text == "[":
			p.advance()
			i, err := p.expression()
			if err != nil {
				return nil, err
			}
			if _, err := p.expectOp("]"); err != nil {
				return nil, err
			}
			x = &index{pos: t.pos, x: x, i: i}
		case t.kind == tOp && t.text == ".":
			p.advance()
			id, err := p.ident()
			if err != nil {
				return nil, err
			}
			if !p.isOp("(") {
				x = &selector{pos: id.pos, x: x, name: id.text}
				continue
			}
			args, err := p.arguments()
			if err != nil {
				return nil, err
			}
			x = &call{pos: id.pos, x: x, name: id.text, args: args}
		default:
			return x, nil
		}
	}
}

func (p *parser) arguments() ([]node, error) {
	p.advance() // (
	var args []node
	if p.isOp(")") {
		p.advance()
		return args, nil
	}
	for {
		a, err := p.expression()
		if err != nil {
			return nil, err
		}
		args = append(args, a)
		if p.isOp(")") {
			p.advance()
			return args, nil
		}
		if _, err := p.expectOp(","); err != nil {
			return nil, err
		}
	}
}

func (p *parser) prefix() (node, error) {
	t := p.peek()
	switch t.kind {
	case tInt:
		p.advance()
		s := strings.TrimRight(t.text, "lL")
		// SEL reads the literal with Long.parseLong: decimal only (a
		// leading 0 is not octal), and a hex literal is refused.
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, p.errorf(t, "%s is not a valid long literal", t.text)
		}
		return &literal{pos: t.pos, v: Long(v)}, nil
	case tFloat:
		p.advance()
		v, err := strconv.ParseFloat(strings.TrimRight(t.text, "fFdD"), 64)
		if err != nil {
			return nil, p.errorf(t, "%s is not a valid double literal", t.text)
		}
		return &literal{pos: t.pos, v: Double(v)}, nil
	case tString:
		p.advance()
		return &literal{pos: t.pos, v: String(t.text)}, nil
	case tIdent:
		p.advance()
		return &name{pos: t.pos, id: t.text}, nil
	case tKeyword:
		switch t.text {
		case "true", "false":
			p.advance()
			return &literal{pos: t.pos, v: Boolean(t.text == "true")}, nil
		case "null":
			p.advance()
			return &literal{pos: t.pos, v: Null{}}, nil
		case "new":
			return p.allocation()
		}
		return nil, fmt.Errorf("%w: %v", ErrUnsupported, p.errorf(t, "'%s' is not supported in SEL", t.text))
	case tOp:
		if t.text == "(" {
			return p.parenthesized()
		}
	}
	return nil, p.errorf(t, "expected an expression, found %s", describe(t))
}

// allocation parses new T[n], new T[]{...} or new Class(args).
func (p *parser) allocation() (node, error) {
	nw := p.advance()
	t := p.advance()
	if !(t.kind == tKeyword && primitives[t.text] || t.kind == tIdent) {
		return nil, p.errorf(t, "expected a type after new, found %s", describe(t))
	}
	if t.kind == tIdent && p.isOp(".") {
		return nil, fmt.Errorf("%w: %v", ErrUnsupported, p.errorf(t, "qualified class names (%s.…) are not supported in SEL", t.text))
	}
	if p.isOp("(") && t.kind == tIdent {
		args, err := p.arguments()
		if err != nil {
			return nil, err
		}
		return &newObject{pos: nw.pos, class: t.text, args: args}, nil
	}
	if !p.isOp("[") {
		return nil, p.errorf(p.peek(), "expected '[' or '(' after new %s, found %s", t.text, describe(p.peek()))
	}
	k, ok := typeKinds[t.text]
	if !ok {
		return nil, fmt.Errorf("%w: %v", ErrUnsupported, p.errorf(t, "class %s is not supported", t.text))
	}
	a := &newArray{pos: nw.pos, of: arrayOf(k)}
	if a.of == KindNull {
		return nil, fmt.Errorf("%w: %v", ErrUnsupported, p.errorf(t, "cannot create an array of %s", t.text))
	}
	p.advance() // [
	if !p.isOp("]") {
		size, err := p.expression()
		if err != nil {
			return nil, err
		}
		if _, err := p.expectOp("]"); err != nil {
			return nil, err
		}
		// A further [i] indexes the new array (SEL's grammar has one
		// dimension): new int[3][1] is 0.
		a.size = size
		return a, nil
	}
	p.advance() // ]
	if p.isOp("[") {
		return nil, fmt.Errorf("%w: %v", ErrUnsupported, p.errorf(p.peek(), "multi-dimensional arrays are not supported in SEL"))
	}
	if _, err := p.expectOp("{"); err != nil {
		return nil, err
	}
	for !p.isOp("}") {
		x, err := p.expression()
		if err != nil {
			return nil, err
		}
		a.items = append(a.items, x)
		if p.isOp(",") {
			p.advance()
			continue
		}
		if !p.isOp("}") {
			return nil, p.errorf(p.peek(), "expected ',' or '}' in an array initializer, found %s", describe(p.peek()))
		}
	}
	p.advance()
	return a, nil
}
