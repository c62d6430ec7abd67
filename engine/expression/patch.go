package expression

import (
	"fmt"
	"slices"
	"strings"

	"github.com/expr-lang/expr/ast"
)

// stateVar is the hidden variable that carries the *evalState into helper
// calls. It contains a dot, so no identifier in user source can name it.
const stateVar = "maestro.state"

// namespaces are the SEL objects whose methods are helper functions.
var namespaces = map[string]bool{"params": true, "Util": true, "UUID": true, "Math": true}

// patcher is the expr AST visitor (installed with expr.Patch) that maps SEL
// onto expr: it rewrites params.get(..), params['x'], Util.x(..), UUID.x(),
// Math.x(..), x.toString(), x.size() and the operators + / % into calls of
// the registered helper functions, and records the parameters the
// expression references. One patcher serves one compilation.
//
// expr walks the tree depth first and visits a node after its children, so
// a namespace identifier (params) is seen before the call that consumes it;
// identifiers are therefore judged only after the walk, in finish.
type patcher struct {
	helpers map[string]*helper
	// maxArray is the language's MaxArrayLen.
	maxArray int
	scope    *recordingScope
	src      string

	idents   []*ast.IdentifierNode
	consumed map[*ast.IdentifierNode]bool
	// constRefs are names read through params.get('x') / params['x'].
	constRefs []string
	// dynamic is set when params.get reads a name computed at run time.
	dynamic bool
	// unknownRefs are names read through params.get('x') that are not in
	// scope; they are an error unless guarded.
	unknownRefs []string
	// guarded are the names the expression tests with
	// params.containsKey('x'): reading them is legal even when they are not
	// in scope (SEL's "params.containsKey('x') ? params.get('x') : d").
	guarded map[string]bool
	// visited is set once the walk reached any node: the source parsed.
	visited bool
	err     error
}

func newPatcher(h map[string]*helper, scope *recordingScope, src string) *patcher {
	return &patcher{helpers: h, scope: scope, src: src, consumed: map[*ast.IdentifierNode]bool{}}
}

func (p *patcher) fail(kind error, format string, args ...any) {
	if p.err == nil {
		p.err = newError(p.src, kind, nil, format, args...)
	}
}

// Visit implements ast.Visitor.
func (p *patcher) Visit(node *ast.Node) {
	p.visited = true
	if p.patchStringOp(node) {
		return
	}
	switch n := (*node).(type) {
	case *ast.IdentifierNode:
		p.idents = append(p.idents, n)
	case *ast.MemberNode:
		p.visitMember(node, n)
	case *ast.CallNode:
		p.visitCall(node, n)
	case *ast.PredicateNode:
		// A predicate is a loop; nested loops over large arrays could run
		// for hours, and SEL has no closures.
		p.fail(ErrUnsupported, "predicates and closures ({...}, #) are not supported")
	case *ast.BinaryNode:
		switch n.Operator {
		case "+":
			p.replace(node, "java.add", n.Left, n.Right)
		case "/":
			p.replace(node, "java.div", n.Left, n.Right)
		case "%":
			p.replace(node, "java.mod", n.Left, n.Right)
		case "..":
			p.visitRange(node, n)
		}
	}
}

// visitRange rewrites from..to, which expr's VM builds without charging
// the unit of work, into the charged java.range; a range of literal bounds
// past MaxArrayLen is an error when the expression is compiled.
func (p *patcher) visitRange(node *ast.Node, n *ast.BinaryNode) {
	from, okFrom := n.Left.(*ast.IntegerNode)
	to, okTo := n.Right.(*ast.IntegerNode)
	if okFrom && okTo && to.Value >= from.Value && uint64(to.Value-from.Value) >= uint64(p.maxArray) {
		p.fail(ErrLimit, "range %d..%d would produce %d values, more than the limit of %d",
			from.Value, to.Value, uint64(to.Value-from.Value)+1, p.maxArray)
		return
	}
	p.replace(node, "java.range", n.Left, n.Right)
}

// replace puts a call of helper name, with the hidden state first, in place
// of *node.
func (p *patcher) replace(node *ast.Node, name string, args ...ast.Node) {
	call := &ast.CallNode{
		Callee:    &ast.IdentifierNode{Value: name},
		Arguments: append([]ast.Node{&ast.IdentifierNode{Value: stateVar}}, args...),
	}
	ast.Patch(node, call)
}

// namespaceOf returns the namespace identifier a member access starts
// from, or nil.
func namespaceOf(n ast.Node) *ast.IdentifierNode {
	id, ok := n.(*ast.IdentifierNode)
	if ok && namespaces[id.Value] {
		return id
	}
	return nil
}

// visitMember handles params['x'] and params.x (both read param x); method
// accesses are left to the enclosing call.
func (p *patcher) visitMember(node *ast.Node, n *ast.MemberNode) {
	if n.Method {
		return
	}
	ns := namespaceOf(n.Node)
	if ns == nil {
		return
	}
	p.consumed[ns] = true
	if ns.Value != "params" {
		p.fail(ErrUnsupported, "%s is not a value; call one of its functions, e.g. %s", ns.Value, p.example(ns.Value))
		return
	}
	p.noteParamName(n.Property)
	p.replace(node, "params.get", n.Property)
}

// noteParamName records the parameter read by params.get(arg).
func (p *patcher) noteParamName(arg ast.Node) {
	s, ok := arg.(*ast.StringNode)
	if !ok {
		p.dynamic = true
		return
	}
	if _, ok := p.scope.Lookup(s.Value); !ok {
		p.unknownRefs = append(p.unknownRefs, s.Value)
		return
	}
	p.constRefs = append(p.constRefs, s.Value)
}

func (p *patcher) visitCall(node *ast.Node, n *ast.CallNode) {
	switch callee := n.Callee.(type) {
	case *ast.MemberNode:
		prop, ok := callee.Property.(*ast.StringNode)
		if !ok {
			p.fail(ErrUnsupported, "computed method calls are not supported")
			return
		}
		if ns := namespaceOf(callee.Node); ns != nil {
			p.consumed[ns] = true
			p.namespaceCall(node, n, ns.Value, prop.Value)
			return
		}
		switch prop.Value {
		case "toString":
			p.valueCall(node, n, "java.toString", callee.Node)
		case "size", "length":
			p.valueCall(node, n, "java.size", callee.Node)
		default:
			p.fail(ErrUnsupported, "method call .%s(..) is not supported; use a helper function "+
				"(params.*, Util.*, Math.*, UUID.randomUUID())", prop.Value)
		}
	case *ast.IdentifierNode:
		p.consumed[callee] = true
		p.fail(ErrUnsupported, "function %s(..) is not supported", callee.Value)
	default:
		p.fail(ErrUnsupported, "calling a computed value is not supported")
	}
}

// namespaceCall rewrites ns.method(args) into a call of its helper.
func (p *patcher) namespaceCall(node *ast.Node, n *ast.CallNode, ns, method string) {
	name := ns + "." + method
	h, ok := p.helpers[name]
	if !ok || strings.HasPrefix(name, "java.") {
		p.fail(ErrUnsupported, "%s(..) is not a supported function; available: %s", name, p.example(ns))
		return
	}
	if len(n.Arguments) < h.min || len(n.Arguments) > h.max {
		p.fail(ErrSyntax, "%s takes %s, got %d; usage: %s", name, argCount(h.min, h.max), len(n.Arguments), h.usage)
		return
	}
	switch name {
	case "params.get":
		p.noteParamName(n.Arguments[0])
	case "params.containsKey":
		if s, ok := n.Arguments[0].(*ast.StringNode); ok {
			if p.guarded == nil {
				p.guarded = map[string]bool{}
			}
			p.guarded[s.Value] = true
		}
	}
	p.replace(node, name, n.Arguments...)
}

// valueCall rewrites recv.method() into helper(recv).
func (p *patcher) valueCall(node *ast.Node, n *ast.CallNode, helper string, recv ast.Node) {
	if len(n.Arguments) != 0 {
		p.fail(ErrSyntax, "%s takes no arguments", p.helpers[helper].usage)
		return
	}
	p.replace(node, helper, recv)
}

// example lists the functions of a namespace, for messages.
func (p *patcher) example(ns string) string {
	var names []string
	for name := range p.helpers {
		if strings.HasPrefix(name, ns+".") {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

func argCount(min, max int) string {
	switch {
	case min == max && min == 1:
		return "1 argument"
	case min == max:
		return fmt.Sprintf("%d arguments", min)
	}
	return fmt.Sprintf("%d to %d arguments", min, max)
}

// finish judges the identifiers left after the rewrite: each must be a
// parameter in scope. It returns the referenced parameters in first-use
// order.
func (p *patcher) finish() (identRefs []string, uses []int64) {
	for _, name := range p.unknownRefs {
		if !p.guarded[name] {
			p.fail(ErrUnknownParam, "unknown parameter %q", name)
		}
	}
	seen := map[string]int{}
	for _, id := range p.idents {
		if p.consumed[id] || id.Value == stateVar || strings.Contains(id.Value, ".") {
			continue
		}
		if _, ok := p.scope.Lookup(id.Value); !ok {
			if namespaces[id.Value] {
				p.fail(ErrUnsupported, "%s is not a value; call one of its functions, e.g. %s", id.Value, p.example(id.Value))
			} else {
				p.fail(ErrUnknownParam, "unknown parameter %q", id.Value)
			}
			continue
		}
		if i, ok := seen[id.Value]; ok {
			uses[i]++
			continue
		}
		seen[id.Value] = len(identRefs)
		identRefs = append(identRefs, id.Value)
		uses = append(uses, 1)
	}
	return identRefs, uses
}
