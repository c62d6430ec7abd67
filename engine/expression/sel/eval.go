package sel

import (
	"errors"
	"fmt"
)

// visitCost is what visiting one syntax tree node charges the meter, in
// CPU units (0.3 to 3 ns each, as the host's budget weighs them): a loop
// of variable reads, assignments and a method call measured 430-700 ns an
// iteration for about ten nodes visited, so 40 units a node keeps a unit
// under 3 ns (2026-11-29, 2 cores).
const visitCost = 40

// slot is a variable: the kind of its box, as SEL's symbol table holds a
// typed box per name, and its value (Null for a String, Map, DateTime, ...
// box holding null).
type slot struct {
	kind Kind
	v    Value
}

// result is how a statement ended (SelResult).
type result uint8

const (
	rNone result = iota
	rData
	rReturn
	rBreak
	rContinue
)

// EvalError is an evaluation that failed, with where in the source.
type EvalError struct {
	Pos Pos
	Err error
}

func (e *EvalError) Error() string { return e.Pos.String() + ": " + e.Err.Error() }
func (e *EvalError) Unwrap() error { return e.Err }

// at wraps err with n's position unless it already has one.
func at(n node, err error) error {
	if err == nil {
		return nil
	}
	var ee *EvalError
	if errors.As(err, &ee) {
		return err
	}
	return &EvalError{Pos: n.at(), Err: err}
}

// Eval evaluates the program under cfg. Its value is its return
// statement's, else its last statement's (Void when that has none, a
// declaration or an if); a `throw "message"` ends it with an Error value.
func (p *Program) Eval(cfg Config) (Value, error) {
	m := newMachine(cfg)
	var last Value = Void{}
	for _, s := range p.stmts {
		res, v, err := m.exec(s)
		if err != nil {
			return nil, err
		}
		switch res {
		case rData:
			last = v
		case rNone:
			last = Void{}
		case rReturn:
			return v, nil
		default:
			return nil, at(s, errors.New("break or continue outside a loop"))
		}
	}
	return last, nil
}

// visit counts a node against the visit limit and charges it.
func (m *Machine) visit(n node) error {
	m.visits++
	if m.visits >= m.limits.Visits {
		return at(n, fmt.Errorf("%w: the evaluation visited %d nodes, the limit", ErrLimit, m.limits.Visits))
	}
	if m.visits%64 == 0 {
		return at(n, m.Charge(64*visitCost, 0))
	}
	return nil
}

// exec runs a statement.
func (m *Machine) exec(s node) (result, Value, error) {
	if err := m.visit(s); err != nil {
		return 0, nil, err
	}
	switch s := s.(type) {
	case *declare:
		return rNone, nil, m.declare(s)
	case *exprStmt:
		v, err := m.eval(s.x)
		return rData, v, err
	case *block:
		res, v := rNone, Value(nil)
		for _, st := range s.stmts {
			var err error
			if res, v, err = m.exec(st); err != nil {
				return 0, nil, err
			}
			if res == rReturn || res == rBreak || res == rContinue {
				return res, v, nil
			}
		}
		return res, v, nil
	case *ifStmt:
		c, err := m.condition(s.cond)
		if err != nil {
			return 0, nil, err
		}
		branch := s.then
		if !c {
			branch = s.els
		}
		if branch == nil {
			return rNone, nil, nil
		}
		res, v, err := m.exec(branch)
		if res == rData {
			res, v = rNone, nil
		}
		return res, v, err
	case *loop:
		return m.loop(s)
	case *jump:
		if s.kind == "break" {
			return rBreak, nil, nil
		}
		return rContinue, nil, nil
	case *returnStmt:
		v, err := m.eval(s.x)
		return rReturn, v, err
	case *throwStmt:
		v, err := m.eval(s.x)
		if err != nil {
			return 0, nil, err
		}
		msg, ok := v.(String)
		if !ok {
			return 0, nil, at(s, fmt.Errorf("can only throw a string error message, not %s", v.Kind()))
		}
		return rReturn, Error{Message: string(msg)}, nil
	}
	return 0, nil, at(s, fmt.Errorf("cannot run %T", s))
}

// condition evaluates a condition, which must be a boolean.
func (m *Machine) condition(x node) (bool, error) {
	v, err := m.eval(x)
	if err != nil {
		return false, err
	}
	b, ok := v.(Boolean)
	if !ok {
		return false, at(x, fmt.Errorf("a condition must be a BOOLEAN, not %s", v.Kind()))
	}
	return bool(b), nil
}

// loop runs a while or for loop, at most Limits.Loop-1 iterations as
// SEL counts them (it fails once the count reaches the limit).
func (m *Machine) loop(s *loop) (result, Value, error) {
	if s.init != nil {
		if d, ok := s.init.(*declare); ok {
			if err := m.declare(d); err != nil {
				return 0, nil, err
			}
		} else if _, err := m.eval(s.init); err != nil {
			return 0, nil, err
		}
	}
	for n := int64(0); ; {
		if s.cond != nil {
			c, err := m.condition(s.cond)
			if err != nil {
				return 0, nil, err
			}
			if !c {
				return rNone, nil, nil
			}
		}
		res, v, err := m.exec(s.body)
		if err != nil {
			return 0, nil, err
		}
		switch res {
		case rReturn:
			return rReturn, v, nil
		case rBreak:
			return rNone, nil, nil
		}
		if s.update != nil {
			if _, err := m.eval(s.update); err != nil {
				return 0, nil, err
			}
		}
		n++
		if n >= m.limits.Loop {
			return 0, nil, at(s, fmt.Errorf("%w: the loop ran %d iterations, the loop limit", ErrLimit, m.limits.Loop))
		}
	}
}

// zero is the value of a variable of kind k declared without an
// initializer (SelTypes.newSelTypeObj).
func zero(k Kind) (Value, error) {
	switch k {
	case KindLong:
		return Long(0), nil
	case KindDouble:
		return Double(0), nil
	case KindBoolean:
		return Boolean(false), nil
	case KindStringArray, KindLongArray, KindDoubleArray, KindBooleanArray:
		return &Array{Of: k}, nil
	case KindString, KindMap, KindDateTime, KindDateTimeZone, KindDateTimeFormatter, KindDateTimeProperty, KindDays, KindUUID:
		return TypedNull{Of: k}, nil
	}
	return nil, Unsupported("cannot declare a variable of type %s", k)
}

// declare runs a local variable declaration: the initializer's type must
// be the declared one.
func (m *Machine) declare(d *declare) error {
	for i, id := range d.names {
		var v Value
		var err error
		if d.inits[i] == nil {
			v, err = zero(d.kind)
			if err != nil {
				return at(d, err)
			}
		} else {
			if v, err = m.eval(d.inits[i]); err != nil {
				return err
			}
			if v.Kind() != d.kind {
				return &EvalError{Pos: d.poses[i], Err: fmt.Errorf("type mismatch: %s is declared %s, given %s", id, d.kind, v.Kind())}
			}
			if n, ok := d.inits[i].(*name); ok {
				if s, ok := m.vars[n.id]; ok {
					// SEL's declaration keeps the initializer's box: after
					// long y = x, an assignment to x changes y too.
					m.vars[id] = s
					continue
				}
			}
		}
		m.vars[id] = &slot{kind: d.kind, v: v}
	}
	return nil
}

// lookup is the value of a name: a variable, a class, a host object, an
// input, else null (as in SEL, an unknown name is null).
func (m *Machine) lookup(id string) (Value, error) {
	if s, ok := m.vars[id]; ok {
		return s.v, nil
	}
	if classes[id] {
		return Class{Name: id}, nil
	}
	if h, ok := m.hosts[id]; ok {
		return h, nil
	}
	if s, ok, err := m.input(id); ok || err != nil {
		return s.v, err
	}
	return Null{}, nil
}

// input copies input id into the variables, where assignments change
// the copy (SEL boxes an input on first use).
func (m *Machine) input(id string) (*slot, bool, error) {
	v, ok := m.inputs[id]
	if !ok {
		return nil, false, nil
	}
	c, err := m.copyValue(v)
	if err != nil {
		return nil, true, err
	}
	s := &slot{kind: c.Kind(), v: c}
	m.vars[id] = s
	return s, true, nil
}

// copyValue copies an array or map, as SEL's box does an input's.
func (m *Machine) copyValue(v Value) (Value, error) {
	switch x := v.(type) {
	case *Array:
		if err := m.Charge(int64(32*len(x.Items)), int64(16*len(x.Items))); err != nil {
			return nil, err
		}
		return &Array{Of: x.Of, Items: append([]Value(nil), x.Items...)}, nil
	case *Map:
		if err := m.Charge(int64(32*x.Len()), int64(48*x.Len())); err != nil {
			return nil, err
		}
		c := NewMap()
		for _, k := range x.keys {
			c.Put(k, deref(x.vals[k]))
		}
		return c, nil
	}
	return v, nil
}

// eval evaluates an expression.
func (m *Machine) eval(x node) (Value, error) {
	if err := m.visit(x); err != nil {
		return nil, err
	}
	switch x := x.(type) {
	case *literal:
		return x.v, nil
	case *name:
		v, err := m.lookup(x.id)
		return v, at(x, err)
	case *unary:
		v, err := m.eval(x.x)
		if err != nil {
			return nil, err
		}
		r, err := unaryOp(x.op, v)
		return r, at(x, err)
	case *binary:
		a, err := m.eval(x.x)
		if err != nil {
			return nil, err
		}
		b, err := m.eval(x.y)
		if err != nil {
			return nil, err
		}
		r, err := m.binaryOp(x.op, a, b)
		return r, at(x, err)
	case *ternary:
		c, err := m.condition(x.cond)
		if err != nil {
			return nil, err
		}
		if c {
			return m.eval(x.a)
		}
		return m.eval(x.b)
	case *assign:
		return m.assign(x)
	case *index:
		return m.index(x)
	case *selector:
		v, err := m.eval(x.x)
		if err != nil {
			return nil, err
		}
		r, err := m.field(v, x.name)
		return r, at(x, err)
	case *call:
		return m.callNode(x)
	case *newObject:
		args, err := m.evalAll(x.args)
		if err != nil {
			return nil, err
		}
		r, err := m.construct(x.class, args)
		return r, at(x, err)
	case *newArray:
		return m.newArray(x)
	}
	return nil, at(x, fmt.Errorf("cannot evaluate %T", x))
}

func (m *Machine) evalAll(xs []node) ([]Value, error) {
	out := make([]Value, len(xs))
	for i, x := range xs {
		v, err := m.eval(x)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

func (m *Machine) callNode(x *call) (Value, error) {
	recv, err := m.eval(x.x)
	if err != nil {
		return nil, err
	}
	args, err := m.evalAll(x.args)
	if err != nil {
		return nil, err
	}
	if _, isMap := recv.(*Map); isMap && x.name == "put" && len(args) == 2 {
		// SEL's put keeps the variable's box itself.
		if n, ok := x.args[1].(*name); ok {
			if s, ok := m.vars[n.id]; ok {
				args[1] = &ref{s: s}
			}
		}
	}
	r, err := m.call(recv, x.name, args)
	if err != nil {
		return nil, at(x, err)
	}
	if _, void := r.(Void); void || r == nil {
		return nil, at(x, Unsupported("void return method %s is not supported", x.name))
	}
	return r, nil
}

func (m *Machine) index(x *index) (Value, error) {
	v, err := m.eval(x.x)
	if err != nil {
		return nil, err
	}
	i, err := m.eval(x.i)
	if err != nil {
		return nil, err
	}
	switch i := i.(type) {
	case Long:
		a, ok := v.(*Array)
		if !ok {
			return nil, at(x, fmt.Errorf("cannot index %s with a LONG", v.Kind()))
		}
		if i < 0 || int64(i) >= int64(len(a.Items)) {
			return nil, at(x, fmt.Errorf("index %d out of bounds for length %d", i, len(a.Items)))
		}
		return a.Items[i], nil
	case String:
		h, ok := v.(Host)
		if !ok {
			return nil, at(x, fmt.Errorf("cannot index %s with a STRING", v.Kind()))
		}
		r, err := h.Index(m, i)
		return r, at(x, err)
	}
	return nil, at(x, fmt.Errorf("invalid index type: %s", i.Kind()))
}

func (m *Machine) newArray(x *newArray) (Value, error) {
	elem := x.of.elem()
	if x.size != nil {
		v, err := m.eval(x.size)
		if err != nil {
			return nil, err
		}
		n, ok := v.(Long)
		if !ok {
			return nil, at(x, fmt.Errorf("an array's size must be a LONG, not %s", v.Kind()))
		}
		if int64(n) >= m.limits.Array {
			return nil, at(x, fmt.Errorf("%w: new array size %d is over the array limit of %d", ErrLimit, n, m.limits.Array))
		}
		if n < 0 {
			return nil, at(x, fmt.Errorf("negative array size %d", n))
		}
		if err := m.Charge(int64(n)*8, int64(n)*16); err != nil {
			return nil, at(x, err)
		}
		z, err := zero(elem)
		if err != nil {
			return nil, at(x, err)
		}
		a := &Array{Of: x.of, Items: make([]Value, n)}
		for i := range a.Items {
			a.Items[i] = z
		}
		return a, nil
	}
	if int64(len(x.items)) >= m.limits.Array {
		return nil, at(x, fmt.Errorf("%w: new array size %d is over the array limit of %d", ErrLimit, len(x.items), m.limits.Array))
	}
	a := &Array{Of: x.of, Items: make([]Value, len(x.items))}
	for i, it := range x.items {
		v, err := m.eval(it)
		if err != nil {
			return nil, err
		}
		if v.Kind() != elem {
			return nil, at(it, fmt.Errorf("type mismatch: an element of a %s cannot be %s", x.of, v.Kind()))
		}
		a.Items[i] = v
	}
	return a, nil
}

// assign runs id op= x and id[i] op= x; its value is the variable's (or
// the element's) after.
func (m *Machine) assign(x *assign) (Value, error) {
	if x.index != nil {
		return m.assignElement(x)
	}
	s, ok := m.vars[x.id]
	if !ok && classes[x.id] {
		return nil, at(x, Unsupported("cannot assign to the class %s", x.id))
	}
	if !ok {
		var err error
		if s, ok, err = m.input(x.id); err != nil {
			return nil, at(x, err)
		}
	}
	rhs, err := m.eval(x.x)
	if err != nil {
		return nil, err
	}
	if !ok {
		if x.op != "=" {
			return nil, at(x, Unsupported("NULL does not support the assignment %s (%s has no value)", x.op, x.id))
		}
		if _, err := zero(rhs.Kind()); err != nil {
			// SEL creates the variable as an empty box of the value's
			// type: there is none of NULL, a class, ...
			return nil, at(x, fmt.Errorf("cannot create the variable %s: %w", x.id, err))
		}
		s = &slot{kind: rhs.Kind()}
		m.vars[x.id] = s
	}
	v, err := m.assignOp(s.kind, s.v, x.op, rhs)
	if err != nil {
		return nil, at(x, err)
	}
	s.v = v
	return v, nil
}

func (m *Machine) assignElement(x *assign) (Value, error) {
	av, err := m.lookup(x.id)
	if err != nil {
		return nil, at(x, err)
	}
	iv, err := m.eval(x.index)
	if err != nil {
		return nil, err
	}
	rhs, err := m.eval(x.x)
	if err != nil {
		return nil, err
	}
	a, ok := av.(*Array)
	if !ok {
		return nil, at(x, fmt.Errorf("%s is a %s, not an array", x.id, av.Kind()))
	}
	i, ok := iv.(Long)
	if !ok {
		return nil, at(x, fmt.Errorf("an array index must be a LONG, not %s", iv.Kind()))
	}
	if i < 0 || int64(i) >= int64(len(a.Items)) {
		return nil, at(x, fmt.Errorf("index %d out of bounds for length %d", i, len(a.Items)))
	}
	v, err := m.assignOp(a.Of.elem(), a.Items[i], x.op, rhs)
	if err != nil {
		return nil, at(x, err)
	}
	a.Items[i] = v
	return v, nil
}
