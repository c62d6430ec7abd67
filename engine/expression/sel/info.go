package sel

import "slices"

// Info is what a program refers to, found without running it.
type Info struct {
	// Reads are the names the program reads that it neither declares nor
	// assigns, nor are classes, in first-use order: its inputs and the
	// host objects it uses.
	Reads []string
	// Locals are the names the program declares or assigns, in first-use
	// order (an input it assigns is among them too).
	Locals []string
	// Keys are, per host object, the keys it reads with a literal name:
	// params.get('x'), params['x'].
	Keys map[string][]string
	// Checked are, per host object, the literal keys the program asks
	// about with containsKey('x'): it may read them when they are there.
	Checked map[string][]string
	// Dynamic names the host objects read with a key computed at run time.
	Dynamic map[string]bool
	// Calls are the static methods called on classes, as "Class.method".
	Calls []string
	// News are the classes constructed with new Class(...).
	News []string
	// Values are the class names and read names used as values — not
	// as the receiver of a method, a field or an index.
	Values []string
	// Methods are the methods called on a name neither local nor a class
	// (params.getFromStep(..), Util.dateIntsBetween(..), m.get(..)).
	Methods []Method
	// Fields are the fields read on a name neither local nor a class
	// (params.x, Util.x), Args -1.
	Fields []Method
}

// Method is a method called on a name.
type Method struct {
	Recv, Name string
	Args       int
	Pos        Pos
}

// Info reports what p refers to.
func (p *Program) Info() Info {
	in := &inspector{info: Info{Keys: map[string][]string{}, Checked: map[string][]string{}, Dynamic: map[string]bool{}}, locals: map[string]bool{}}
	// Locals first: SEL's variables are global to the expression, so a
	// name assigned anywhere is a variable everywhere.
	for _, s := range p.stmts {
		in.collectLocals(s)
	}
	for _, s := range p.stmts {
		in.walk(s)
	}
	return in.info
}

type inspector struct {
	info   Info
	locals map[string]bool
}

func (in *inspector) local(id string) {
	if !in.locals[id] {
		in.locals[id] = true
		in.info.Locals = append(in.info.Locals, id)
	}
}

func (in *inspector) once(list *[]string, s string) {
	if !slices.Contains(*list, s) {
		*list = append(*list, s)
	}
}

// collectLocals records the names n declares or assigns.
func (in *inspector) collectLocals(n node) {
	switch n := n.(type) {
	case *declare:
		for _, id := range n.names {
			in.local(id)
		}
	case *assign:
		if n.index == nil {
			in.local(n.id)
		}
	}
	for _, c := range children(n) {
		in.collectLocals(c)
	}
}

// walk records reads, host keys, static calls and constructions.
func (in *inspector) walk(n node) {
	switch n := n.(type) {
	case *name:
		in.receiver(n)
		if !in.locals[n.id] {
			in.once(&in.info.Values, n.id)
		}
		return
	case *assign:
		if n.index != nil && !in.locals[n.id] && !classes[n.id] {
			in.once(&in.info.Reads, n.id)
		}
	case *call:
		if h, ok := n.x.(*name); ok {
			in.receiver(h)
			switch {
			case in.locals[h.id]:
			case classes[h.id]:
				in.once(&in.info.Calls, h.id+"."+n.name)
			default:
				in.info.Methods = append(in.info.Methods, Method{Recv: h.id, Name: n.name, Args: len(n.args), Pos: n.pos})
				switch {
				case n.name == "get" && len(n.args) == 1:
					in.key(h.id, n.args[0])
				case n.name == "containsKey" && len(n.args) == 1:
					if l, ok := n.args[0].(*literal); ok {
						if k, ok := l.v.(String); ok {
							keys := in.info.Checked[h.id]
							in.once(&keys, string(k))
							in.info.Checked[h.id] = keys
						}
					}
				}
			}
			for _, a := range n.args {
				in.walk(a)
			}
			return
		}
	case *selector:
		if h, ok := n.x.(*name); ok {
			in.receiver(h)
			if !in.locals[h.id] && !classes[h.id] {
				in.info.Fields = append(in.info.Fields, Method{Recv: h.id, Name: n.name, Args: -1, Pos: n.pos})
			}
			return
		}
	case *index:
		if h, ok := n.x.(*name); ok {
			in.receiver(h)
			if !in.locals[h.id] && !classes[h.id] {
				in.key(h.id, n.i)
			}
			in.walk(n.i)
			return
		}
	case *newObject:
		in.once(&in.info.News, n.class)
	}
	for _, c := range children(n) {
		in.walk(c)
	}
}

// receiver records a name used as a receiver (or a value): a read
// unless it is a local or a class.
func (in *inspector) receiver(n *name) {
	if !in.locals[n.id] && !classes[n.id] {
		in.once(&in.info.Reads, n.id)
	}
}

// key records a read of host h by key k.
func (in *inspector) key(h string, k node) {
	if l, ok := k.(*literal); ok {
		if s, ok := l.v.(String); ok {
			keys := in.info.Keys[h]
			in.once(&keys, string(s))
			in.info.Keys[h] = keys
			return
		}
	}
	in.info.Dynamic[h] = true
}

// children are n's child nodes.
func children(n node) []node {
	var out []node
	add := func(xs ...node) {
		for _, x := range xs {
			if x != nil {
				out = append(out, x)
			}
		}
	}
	switch n := n.(type) {
	case *unary:
		add(n.x)
	case *binary:
		add(n.x, n.y)
	case *ternary:
		add(n.cond, n.a, n.b)
	case *assign:
		add(n.index, n.x)
	case *index:
		add(n.x, n.i)
	case *selector:
		add(n.x)
	case *call:
		add(n.x)
		add(n.args...)
	case *newObject:
		add(n.args...)
	case *newArray:
		add(n.size)
		add(n.items...)
	case *declare:
		add(n.inits...)
	case *exprStmt:
		add(n.x)
	case *block:
		add(n.stmts...)
	case *ifStmt:
		add(n.cond, n.then, n.els)
	case *loop:
		add(n.init, n.cond, n.update, n.body)
	case *returnStmt:
		add(n.x)
	case *throwStmt:
		add(n.x)
	}
	return out
}
