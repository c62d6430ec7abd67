package engine

import (
	"errors"
	"fmt"
	"strings"

	"github.com/maestro-serverless/maestro/model"
)

// Graph is a compiled workflow definition: its top-level steps, their edges
// with compiled conditions, roots and a topological order. A Graph is
// immutable and safe for concurrent use by many Decide calls.
type Graph struct {
	workflow *model.Workflow
	eval     Evaluator
	// scope types what expressions outside a step's own params can see.
	scope map[string]model.ParamType
	// wfParams is the compiled definition's workflow params (nil: none);
	// wfParamsErr its compile error, reported when a run starts.
	wfParams    ParamSet
	wfParamsErr error
	nodes       []node
	edges       []edge
	index       map[string]int
	roots       []int
	topo        []int
}

type node struct {
	step *model.Step
	// params is the compiled step params (nil: none); paramsErr its compile
	// error, which fails the step when it runs.
	params    ParamSet
	paramsErr error
	// deps are the compiled match params of the step's signal
	// dependencies, outputs the params and payloads of its signal outputs
	// (an entry's error fails the step when it is needed).
	deps    []compiledSet
	outputs []compiledOutput
	// whileCond is a while step's compiled condition; whileErr its
	// compile error, which fails the step when it runs.
	whileCond Condition
	whileErr  error
	preds     []int // indexes into Graph.edges, ordered by predecessor definition order
	succs     []int // indexes into Graph.edges, in the step's successor order
}

type edge struct {
	from, to int
	src      string
	cond     Condition // nil: always true
}

// Edge is a successor edge between two steps.
type Edge struct {
	From string
	To   string
	// Condition is the edge's condition expression ("true" when always taken).
	Condition string
}

// Compile builds the graph of wf's top-level steps. It rejects duplicate step
// ids, unknown or duplicate successors and cycles, and compiles with ev every
// edge condition (a condition that does not compile is an error) and every
// set of params (a set that does not compile fails its step, or for workflow
// params the run, when it starts). Expressions see model.SystemParams, the
// workflow params, every step's params as <stepid>__<param> and, for a
// condition, the predecessor's params. The graph keeps wf, which must not be
// modified afterwards.
func Compile(wf *model.Workflow, ev Evaluator) (*Graph, error) {
	if wf == nil {
		return nil, errors.New("compile workflow: nil workflow")
	}
	if ev == nil {
		return nil, fmt.Errorf("compile workflow %q: nil evaluator", wf.ID)
	}
	if len(wf.Steps) == 0 {
		return nil, fmt.Errorf("compile workflow %q: no steps", wf.ID)
	}
	g := &Graph{
		workflow: wf,
		eval:     ev,
		nodes:    make([]node, len(wf.Steps)),
		index:    make(map[string]int, len(wf.Steps)),
	}
	for i := range wf.Steps {
		s := &wf.Steps[i]
		if s.ID == "" {
			return nil, fmt.Errorf("compile workflow %q: steps[%d] has no id", wf.ID, i)
		}
		if _, dup := g.index[s.ID]; dup {
			return nil, fmt.Errorf("compile workflow %q: duplicate step id %q", wf.ID, s.ID)
		}
		g.index[s.ID] = i
		g.nodes[i].step = s
	}
	g.scope = baseScope(wf)
	if len(wf.Params.Names) > 0 {
		g.wfParams, g.wfParamsErr = ev.CompileParams(wf.Params, g.systemScope())
	}
	// Edges, collected per target in predecessor definition order.
	predEdges := make([][]int, len(wf.Steps))
	for i := range wf.Steps {
		s := &wf.Steps[i]
		if len(s.Params.Names) > 0 {
			g.nodes[i].params, g.nodes[i].paramsErr = ev.CompileParams(s.Params, model.Scope{Vars: g.scope})
		}
		g.compileSignals(ev, i)
		if s.Kind == model.KindWhile {
			g.nodes[i].whileCond, g.nodes[i].whileErr = compileWhileCondition(ev, g.scope, s)
		}
		var scope *model.Scope // the step's condition scope, built on first use
		seen := make(map[string]bool, len(s.Transition.Successors))
		for _, succ := range s.Transition.Successors {
			to, ok := g.index[succ.StepID]
			if !ok {
				return nil, fmt.Errorf("compile workflow %q: step %q: unknown successor %q", wf.ID, s.ID, succ.StepID)
			}
			if seen[succ.StepID] {
				return nil, fmt.Errorf("compile workflow %q: step %q: duplicate successor %q", wf.ID, s.ID, succ.StepID)
			}
			seen[succ.StepID] = true
			e := edge{from: i, to: to, src: succ.Condition}
			if !isTrueCondition(succ.Condition) {
				if scope == nil {
					sc := stepScope(g.scope, s)
					scope = &sc
				}
				cond, err := ev.CompileCondition(succ.Condition, *scope)
				if err != nil {
					return nil, fmt.Errorf("compile workflow %q: step %q: condition of successor %q: %w", wf.ID, s.ID, succ.StepID, err)
				}
				e.cond = cond
			}
			g.edges = append(g.edges, e)
			k := len(g.edges) - 1
			g.nodes[i].succs = append(g.nodes[i].succs, k)
			predEdges[to] = append(predEdges[to], k)
		}
	}
	for i := range g.nodes {
		g.nodes[i].preds = predEdges[i]
		if len(predEdges[i]) == 0 {
			g.roots = append(g.roots, i)
		}
	}
	if err := g.sort(); err != nil {
		return nil, fmt.Errorf("compile workflow %q: %w", wf.ID, err)
	}
	return g, nil
}

// Bytes estimates the memory the graph holds: its compiled expressions
// (those of an Evaluator that can tell their size) and the nodes and edges
// around them, not the workflow definition it keeps. Runtimes bound their
// caches of graphs with it.
func (g *Graph) Bytes() int64 {
	n := int64(256 + 200*len(g.nodes) + 64*len(g.edges))
	n += compiledBytes(g.wfParams)
	for i := range g.nodes {
		nd := &g.nodes[i]
		n += compiledBytes(nd.params) + compiledBytes(nd.whileCond)
		for _, d := range nd.deps {
			n += compiledBytes(d.set)
		}
		for _, o := range nd.outputs {
			n += compiledBytes(o.params.set) + compiledBytes(o.payload.set)
		}
	}
	for _, e := range g.edges {
		n += compiledBytes(e.cond)
	}
	return n
}

// compiledBytes is the size of a compiled form whose evaluator tells it.
func compiledBytes(c any) int64 {
	if s, ok := c.(interface{ Bytes() int64 }); ok && c != nil {
		return s.Bytes()
	}
	return 0
}

// systemScope is the scope of workflow params: model.SystemParams.
func (g *Graph) systemScope() model.Scope {
	return model.Scope{Vars: model.SystemParams()}
}

// isTrueCondition reports whether a condition is the constant true ("" is
// treated as true: a successor listed without a condition is always taken).
func isTrueCondition(src string) bool {
	s := strings.TrimSpace(src)
	s = strings.TrimSpace(strings.TrimSuffix(s, ";"))
	return s == "" || s == "true"
}

// sort computes the topological order (Kahn's algorithm, ties broken by
// definition order) and rejects cycles naming the steps on one.
func (g *Graph) sort() error {
	indeg := make([]int, len(g.nodes))
	for i := range g.nodes {
		indeg[i] = len(g.nodes[i].preds)
	}
	queue := append([]int(nil), g.roots...)
	g.topo = make([]int, 0, len(g.nodes))
	for head := 0; head < len(queue); head++ {
		i := queue[head]
		g.topo = append(g.topo, i)
		for _, k := range g.nodes[i].succs {
			to := g.edges[k].to
			indeg[to]--
			if indeg[to] == 0 {
				queue = append(queue, to)
			}
		}
	}
	if len(g.topo) == len(g.nodes) {
		return nil
	}
	return fmt.Errorf("DAG contains a cycle: %s", strings.Join(g.findCycle(indeg), " -> "))
}

// findCycle returns the step ids of one cycle among the nodes Kahn's algorithm
// could not order (indeg > 0), first step repeated at the end.
func (g *Graph) findCycle(indeg []int) []string {
	const (
		white = iota
		grey
		black
	)
	color := make([]int, len(g.nodes))
	var stack []int
	var cycle []string
	var visit func(i int) bool
	visit = func(i int) bool {
		color[i] = grey
		stack = append(stack, i)
		for _, k := range g.nodes[i].succs {
			to := g.edges[k].to
			if indeg[to] == 0 {
				continue
			}
			switch color[to] {
			case grey:
				start := len(stack) - 1
				for stack[start] != to {
					start--
				}
				for _, j := range stack[start:] {
					cycle = append(cycle, g.nodes[j].step.ID)
				}
				cycle = append(cycle, g.nodes[to].step.ID)
				return true
			case white:
				if visit(to) {
					return true
				}
			}
		}
		stack = stack[:len(stack)-1]
		color[i] = black
		return false
	}
	for i := range g.nodes {
		if indeg[i] > 0 && color[i] == white && visit(i) {
			return cycle
		}
	}
	return nil
}

// Workflow returns the compiled definition.
func (g *Graph) Workflow() *model.Workflow { return g.workflow }

// Evaluator returns the evaluator the graph was compiled with.
func (g *Graph) Evaluator() Evaluator { return g.eval }

// StepIDs returns the top-level step ids in definition order.
func (g *Graph) StepIDs() []string {
	out := make([]string, len(g.nodes))
	for i := range g.nodes {
		out[i] = g.nodes[i].step.ID
	}
	return out
}

// Roots returns the ids of the steps without predecessors, in definition order.
func (g *Graph) Roots() []string { return g.ids(g.roots) }

// TopologicalOrder returns every step id so that each step comes after all its
// predecessors; ties are broken by definition order.
func (g *Graph) TopologicalOrder() []string { return g.ids(g.topo) }

func (g *Graph) ids(idx []int) []string {
	out := make([]string, len(idx))
	for i, j := range idx {
		out[i] = g.nodes[j].step.ID
	}
	return out
}

// Step returns the definition of the step with the given id, or nil.
func (g *Graph) Step(id string) *model.Step {
	i, ok := g.index[id]
	if !ok {
		return nil
	}
	return g.nodes[i].step
}

// OnWorker reports whether the step with the given id runs its attempts on a
// worker (RunStep commands): not a NoOp/Join, Sleep, foreach, while or
// subworkflow step, which the decisions themselves carry out.
func (g *Graph) OnWorker(id string) bool {
	s := g.Step(id)
	return s != nil && onWorker(s)
}

// onWorker reports whether step s runs on a worker.
func onWorker(s *model.Step) bool {
	return !isNoWork(s) && !isSleep(s) && !isForeach(s) && !isWhile(s) && !isSubworkflow(s)
}

// Successors returns the outgoing edges of a step in definition order (nil for
// an unknown step).
func (g *Graph) Successors(id string) []Edge {
	i, ok := g.index[id]
	if !ok {
		return nil
	}
	return g.exportEdges(g.nodes[i].succs)
}

// Predecessors returns the incoming edges of a step, ordered by the
// predecessors' definition order (nil for an unknown step).
func (g *Graph) Predecessors(id string) []Edge {
	i, ok := g.index[id]
	if !ok {
		return nil
	}
	return g.exportEdges(g.nodes[i].preds)
}

func (g *Graph) exportEdges(ks []int) []Edge {
	if len(ks) == 0 {
		return nil
	}
	out := make([]Edge, len(ks))
	for n, k := range ks {
		e := g.edges[k]
		src := e.src
		if isTrueCondition(src) {
			src = "true"
		}
		out[n] = Edge{From: g.nodes[e.from].step.ID, To: g.nodes[e.to].step.ID, Condition: src}
	}
	return out
}
