package sel

import (
	"errors"
	"fmt"
	"math"
)

// The operators, as SEL's types define them (binaryOps and assignOps of
// SelLong, SelDouble, SelString, SelBoolean, SelArray, SelMap and NULL).

var errDivByZero = errors.New("/ by zero")

func mismatch(a, b Kind) error {
	return fmt.Errorf("type mismatch, lhs type: %s, rhs object type: %s", a, b)
}

func noOp(k Kind, op string) error {
	return Unsupported("%s does not support the operator %s", k, op)
}

// isNull reports whether v is null (SEL's NULL, or a box holding null).
func isNull(v Value) bool {
	switch v.(type) {
	case nil, Null, TypedNull:
		return true
	}
	return false
}

// unaryOp is -x, +x or !x.
func unaryOp(op string, v Value) (Value, error) {
	switch x := v.(type) {
	case Long:
		switch op {
		case "-":
			return -x, nil
		case "+":
			return x, nil
		}
	case Double:
		switch op {
		case "-":
			return -x, nil
		case "+":
			return x, nil
		}
	case Boolean:
		if op == "!" {
			return !x, nil
		}
	}
	return nil, noOp(v.Kind(), op)
}

// binaryOp is a op b, both evaluated (SEL's && and || do not short-circuit).
func (m *Machine) binaryOp(op string, a, b Value) (Value, error) {
	switch x := a.(type) {
	case Null, TypedNull:
		return m.nullOp(op, b)
	case Long:
		if isNull(b) && (op == "==" || op == "!=") {
			return m.nullOp(op, x)
		}
		switch y := b.(type) {
		case Double:
			return doubleOp(op, Double(x), y)
		case String:
			return m.stringOp(op, String(JavaString(x)), y)
		case Long:
			return longOp(op, x, y)
		}
		return nil, mismatch(KindLong, b.Kind())
	case Double:
		if isNull(b) {
			if op == "==" || op == "!=" {
				return m.nullOp(op, x)
			}
			return nil, Unsupported("DOUBLE does not support %s with null", op)
		}
		switch y := b.(type) {
		case String:
			return m.stringOp(op, String(JavaString(x)), y)
		case Long:
			return doubleOp(op, x, Double(y))
		case Double:
			return doubleOp(op, x, y)
		}
		return nil, fmt.Errorf("%s cannot be converted to a number", b.Kind())
	case String:
		return m.stringOp(op, x, b)
	case Boolean:
		if isNull(b) && (op == "==" || op == "!=") {
			return m.nullOp(op, x)
		}
		y, ok := b.(Boolean)
		if !ok {
			return nil, mismatch(KindBoolean, b.Kind())
		}
		switch op {
		case "&&":
			return x && y, nil
		case "||":
			return x || y, nil
		case "==":
			return Boolean(x == y), nil
		case "!=":
			return Boolean(x != y), nil
		}
		return nil, noOp(KindBoolean, op)
	}
	return nil, noOp(a.Kind(), op)
}

// nullOp is null op b: == and != compare with null, < and > are false,
// + concatenates "null".
func (m *Machine) nullOp(op string, b Value) (Value, error) {
	switch op {
	case "==":
		return Boolean(isNull(b)), nil
	case "!=":
		return Boolean(!isNull(b)), nil
	case "<", ">":
		return Boolean(false), nil
	case "+":
		return m.concat("null", b)
	}
	return nil, noOp(KindNull, op)
}

// concat is s + b as Java concatenates, checked against the length limit.
func (m *Machine) concat(s string, b Value) (Value, error) {
	t := JavaString(b)
	n := len(s) + len(t)
	if err := m.CheckString(n); err != nil {
		return nil, err
	}
	if err := m.Charge(int64(n), int64(n)); err != nil {
		return nil, err
	}
	return String(s + t), nil
}

func (m *Machine) stringOp(op string, x String, b Value) (Value, error) {
	if (op == "==" || op == "!=") && !isNull(b) && b.Kind() != KindString {
		return nil, mismatch(KindString, b.Kind())
	}
	switch op {
	case "+":
		return m.concat(string(x), b)
	case "==", "!=":
		y, ok := b.(String)
		eq := ok && x == y
		if err := m.Charge(int64(min(len(x), len(y))), 0); err != nil {
			return nil, err
		}
		return Boolean(eq == (op == "==")), nil
	}
	return nil, noOp(KindString, op)
}

// number is a SEL long or double.
type number interface {
	Long | Double
	Kind() Kind
}

// numberOp is x op y for the operators longs and doubles share: the
// comparisons, +, - and *. ok is false for another operator.
func numberOp[T number](op string, x, y T) (v Value, ok bool) {
	switch op {
	case "==":
		return Boolean(x == y), true
	case "!=":
		return Boolean(x != y), true
	case "<":
		return Boolean(x < y), true
	case ">":
		return Boolean(x > y), true
	case "<=":
		return Boolean(x <= y), true
	case ">=":
		return Boolean(x >= y), true
	case "+":
		return x + y, true
	case "-":
		return x - y, true
	case "*":
		return x * y, true
	}
	return nil, false
}

func longOp(op string, x, y Long) (Value, error) {
	if v, ok := numberOp(op, x, y); ok {
		return v, nil
	}
	switch op {
	case "/":
		if y == 0 {
			return nil, errDivByZero
		}
		return x / y, nil
	case "%":
		if y == 0 {
			return nil, errDivByZero
		}
		return x % y, nil
	}
	return nil, noOp(KindLong, op)
}

func doubleOp(op string, x, y Double) (Value, error) {
	if v, ok := numberOp(op, x, y); ok {
		return v, nil
	}
	switch op {
	case "/":
		return x / y, nil
	case "%":
		return Double(math.Mod(float64(x), float64(y))), nil
	}
	return nil, noOp(KindDouble, op)
}

// assignOp applies op= rhs to a box of kind k holding cur, returning its
// new value: = requires rhs of the box's kind (SEL's checkTypeMatch), the
// arithmetic ones a long or double box and the same kind, += a string box
// anything (concatenated).
func (m *Machine) assignOp(k Kind, cur Value, op string, rhs Value) (Value, error) {
	if op == "=" {
		if rhs.Kind() != k {
			return nil, mismatch(k, rhs.Kind())
		}
		return rhs, nil
	}
	bin := op[:1]
	switch k {
	case KindLong:
		y, ok := rhs.(Long)
		if !ok {
			return nil, mismatch(k, rhs.Kind())
		}
		return longOp(bin, cur.(Long), y)
	case KindDouble:
		y, ok := rhs.(Double)
		if !ok {
			return nil, mismatch(k, rhs.Kind())
		}
		return doubleOp(bin, cur.(Double), y)
	case KindString:
		if op != "+=" {
			return nil, noOp(k, op)
		}
		s := "null"
		if c, ok := cur.(String); ok {
			s = string(c)
		}
		return m.concat(s, rhs)
	}
	return nil, Unsupported("%s does not support the assignment %s", k, op)
}
