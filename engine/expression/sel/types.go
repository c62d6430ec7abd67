package sel

import "fmt"

// Static types: what can be known of a program's result without running
// it, so that a definition gets a type error when it is created rather
// than when the expression runs.

// kindUnknown marks a kind not known statically.
const kindUnknown Kind = 255

// ResultKind returns the kind of p's result when it can be known without
// running it — the program is one expression, or one return, whose
// operands' kinds are known (inputs' from kindOf) — and an error when an
// operator of it is certain to fail at run time (true + 1). ok is false
// when the kind is not known.
func (p *Program) ResultKind(kindOf func(name string) (Kind, bool)) (k Kind, ok bool, err error) {
	if len(p.stmts) != 1 {
		return 0, false, nil
	}
	var x node
	switch s := p.stmts[0].(type) {
	case *exprStmt:
		x = s.x
	case *returnStmt:
		x = s.x
	default:
		return 0, false, nil
	}
	t := typer{kindOf: kindOf}
	k = t.kind(x)
	if t.err != nil {
		return 0, false, t.err
	}
	return k, k != kindUnknown, nil
}

type typer struct {
	kindOf func(string) (Kind, bool)
	err    error
}

func (t *typer) kind(x node) Kind {
	if t.err != nil {
		return kindUnknown
	}
	switch x := x.(type) {
	case *literal:
		if x.v.Kind() == KindNull {
			return kindUnknown
		}
		return x.v.Kind()
	case *name:
		if k, ok := t.kindOf(x.id); ok {
			return k
		}
	case *unary:
		k := t.kind(x.x)
		switch {
		case k == kindUnknown:
		case x.op == "!" && k == KindBoolean, x.op != "!" && (k == KindLong || k == KindDouble):
			return k
		default:
			t.err = &EvalError{Pos: x.pos, Err: noOp(k, x.op)}
		}
	case *binary:
		return t.binary(x)
	case *ternary:
		c, a, b := t.kind(x.cond), t.kind(x.a), t.kind(x.b)
		if c != kindUnknown && c != KindBoolean {
			t.err = &EvalError{Pos: x.cond.at(), Err: fmt.Errorf("a condition must be a BOOLEAN, not %s", c)}
		}
		if a == b {
			return a
		}
	case *newArray:
		return x.of
	case *newObject:
		if k, ok := typeKinds[x.class]; ok && k != KindDateTime {
			return k
		}
		if x.class == "DateTime" {
			return KindDateTime
		}
	}
	return kindUnknown
}

// binary is the kind of a op b as binaryOp would compute it, or an error
// where binaryOp certainly fails.
func (t *typer) binary(x *binary) Kind {
	a, b := t.kind(x.x), t.kind(x.y)
	if a == kindUnknown || b == kindUnknown {
		switch x.op {
		case "==", "!=", "<", ">", "<=", ">=", "&&", "||":
			return KindBoolean
		case "+":
			if a == KindString || b == KindString {
				return KindString
			}
		}
		return kindUnknown
	}
	fail := func(err error) Kind {
		t.err = &EvalError{Pos: x.pos, Err: err}
		return kindUnknown
	}
	switch a {
	case KindLong, KindDouble:
		switch {
		case b == KindString:
			return t.stringKind(x, b)
		case b != KindLong && b != KindDouble:
			return fail(mismatch(a, b))
		}
		switch x.op {
		case "==", "!=", "<", ">", "<=", ">=":
			return KindBoolean
		case "+", "-", "*", "/", "%":
			if a == KindDouble || b == KindDouble {
				return KindDouble
			}
			return KindLong
		}
		return fail(noOp(a, x.op))
	case KindString:
		return t.stringKind(x, b)
	case KindBoolean:
		if b != KindBoolean {
			return fail(mismatch(a, b))
		}
		switch x.op {
		case "&&", "||", "==", "!=":
			return KindBoolean
		}
		return fail(noOp(a, x.op))
	}
	return fail(noOp(a, x.op))
}

func (t *typer) stringKind(x *binary, b Kind) Kind {
	switch x.op {
	case "+":
		return KindString
	case "==", "!=":
		if b != KindString {
			t.err = &EvalError{Pos: x.pos, Err: mismatch(KindString, b)}
			return kindUnknown
		}
		return KindBoolean
	}
	t.err = &EvalError{Pos: x.pos, Err: noOp(KindString, x.op)}
	return kindUnknown
}
