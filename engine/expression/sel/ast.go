package sel

// The syntax tree of an expression, as SEL's grammar (sel.jjt) builds it.

// node is a syntax tree node.
type node interface{ at() Pos }

// Expressions.
type (
	// literal is a constant: Long, Double, String, Boolean or Null.
	literal struct {
		pos Pos
		v   Value
	}
	// name is an identifier: a variable, a class or a host object.
	name struct {
		pos Pos
		id  string
	}
	// unary is -x, +x or !x.
	unary struct {
		pos Pos
		op  string
		x   node
	}
	// binary is x op y; SEL evaluates both sides, && and || included.
	binary struct {
		pos  Pos
		op   string
		x, y node
	}
	// ternary is cond ? a : b.
	ternary struct {
		pos        Pos
		cond, a, b node
	}
	// assign is id = x, id += x, ..., or id[index] op x.
	assign struct {
		pos   Pos
		id    string
		index node // nil unless an array element
		op    string
		x     node
	}
	// index is x[i]: an array's element, or a host object's by name
	// (params['x']).
	index struct {
		pos Pos
		x   node
		i   node
	}
	// selector is x.name: a field.
	selector struct {
		pos  Pos
		x    node
		name string
	}
	// call is x.name(args).
	call struct {
		pos  Pos
		x    node
		name string
		args []node
	}
	// newObject is new Class(args).
	newObject struct {
		pos   Pos
		class string
		args  []node
	}
	// newArray is new T[n] or new T[]{items}.
	newArray struct {
		pos   Pos
		of    Kind // the array's kind
		size  node // nil when items are given
		items []node
	}
)

// Statements.
type (
	// declare is T a = x, b, ...; (a local variable declaration).
	declare struct {
		pos   Pos
		kind  Kind
		names []string
		inits []node // nil where a name has no initializer
		poses []Pos
	}
	// exprStmt is an expression followed by ;.
	exprStmt struct {
		pos Pos
		x   node
	}
	// block is { statements }.
	block struct {
		pos   Pos
		stmts []node
	}
	// ifStmt is if (cond) then [else els].
	ifStmt struct {
		pos  Pos
		cond node
		then node
		els  node
	}
	// loop is while (cond) body, or for (init; cond; update) body.
	loop struct {
		pos    Pos
		init   node // nil for while
		cond   node // nil: true
		update node
		body   node
	}
	// jump is break or continue.
	jump struct {
		pos  Pos
		kind string
	}
	// returnStmt is return x; throwStmt is throw x.
	returnStmt struct {
		pos Pos
		x   node
	}
	throwStmt struct {
		pos Pos
		x   node
	}
)

func (n *literal) at() Pos    { return n.pos }
func (n *name) at() Pos       { return n.pos }
func (n *unary) at() Pos      { return n.pos }
func (n *binary) at() Pos     { return n.pos }
func (n *ternary) at() Pos    { return n.pos }
func (n *assign) at() Pos     { return n.pos }
func (n *index) at() Pos      { return n.pos }
func (n *selector) at() Pos   { return n.pos }
func (n *call) at() Pos       { return n.pos }
func (n *newObject) at() Pos  { return n.pos }
func (n *newArray) at() Pos   { return n.pos }
func (n *declare) at() Pos    { return n.pos }
func (n *exprStmt) at() Pos   { return n.pos }
func (n *block) at() Pos      { return n.pos }
func (n *ifStmt) at() Pos     { return n.pos }
func (n *loop) at() Pos       { return n.pos }
func (n *jump) at() Pos       { return n.pos }
func (n *returnStmt) at() Pos { return n.pos }
func (n *throwStmt) at() Pos  { return n.pos }
