// Package dsl translates Maestro's YAML DSL (maestro-dsl) into the JSON
// structure of a workflow definition, so that a DSL document and its JSON
// twin decode to the same model.
//
// The DSL is the form most Maestro users write: a top-level Workflow (or
// workflow) mapping with a jobs list, transitions written as "job_id",
// "IF cond THEN job_id" or "OTHERWISE job_id", params as plain keys with
// optional "!" (expression), "<type>" and "(mode)" annotations, and an
// optional dag (an order, or a map of transitions). Translate follows
// Maestro's WorkflowParser, TransitionParser and ParamParser.
//
// Every error names the YAML line and the DSL field. Translation and the
// limits it enforces (depth, aliases, expanded nodes) are pure: the package
// reads bytes and writes bytes.
package dsl

import (
	"fmt"

	yaml "go.yaml.in/yaml/v3"

	"github.com/maestro-serverless/maestro/model"
)

// TypeResolver resolves a job type that is not one of the built-in step
// types, as Maestro's job templates do: it returns the step type the job
// runs as (the job's type becomes the step's sub_type). ok is false when
// the type is unknown.
type TypeResolver func(jobType, version string) (stepType model.StepType, ok bool)

// Limits bound the work a document may cause before it is translated.
type Limits struct {
	// MaxDepth is the deepest nesting of mappings and sequences.
	MaxDepth int
	// MaxAliases is how many times aliases (*name) may be used.
	MaxAliases int
	// MaxNodes is how many nodes the document may have once every alias is
	// expanded (an alias counts its whole anchored value each time).
	MaxNodes int
}

// DefaultLimits returns the limits the API applies: nesting 100 deep, 100
// alias uses and 200,000 expanded nodes (a 256 KB document without aliases
// has fewer than 130,000).
func DefaultLimits() Limits {
	return Limits{MaxDepth: 100, MaxAliases: 100, MaxNodes: 200_000}
}

// Options configure Translate.
type Options struct {
	// Resolve resolves job types that are not built-in step types; nil
	// means only built-in types are accepted.
	Resolve TypeResolver
	// Limits; a zero field takes its DefaultLimits value.
	Limits Limits
}

// Document is a parsed YAML document whose size has been checked against
// the limits.
type Document struct {
	root *yaml.Node
}

// Parse parses data as one YAML document and checks it against lim (the
// zero fields take their DefaultLimits values). Errors are model.Errors
// naming the line.
func Parse(data []byte, lim Limits) (*Document, error) {
	def := DefaultLimits()
	if lim.MaxDepth <= 0 {
		lim.MaxDepth = def.MaxDepth
	}
	if lim.MaxAliases <= 0 {
		lim.MaxAliases = def.MaxAliases
	}
	if lim.MaxNodes <= 0 {
		lim.MaxNodes = def.MaxNodes
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, model.Errors{{Path: "$", Msg: fmt.Sprintf("invalid YAML: %v", err)}}
	}
	doc := &Document{root: &root}
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		doc.root = root.Content[0]
	}
	if err := checkLimits(doc.root, lim); err != nil {
		return nil, err
	}
	return doc, nil
}

// IsDSL reports whether the document uses Maestro's DSL: a top-level
// Workflow key, or a workflow mapping with jobs and no steps. Other YAML
// is read as the JSON structure written in YAML.
func (d *Document) IsDSL() bool {
	top := deref(d.root)
	if top == nil || top.Kind != yaml.MappingNode {
		return false
	}
	if lookup(top, "Workflow") != nil {
		return true
	}
	wf := deref(lookup(top, "workflow"))
	if wf == nil || wf.Kind != yaml.MappingNode {
		return false
	}
	return lookup(wf, "jobs") != nil && lookup(wf, "steps") == nil
}

// Translate converts a DSL document into the JSON form of a workflow
// create request. The returned SourceMap maps JSON paths of the output to
// the YAML lines and DSL fields they came from, so errors found later in
// the JSON can be reported against the YAML. On failure the error is a
// model.Errors listing every problem, each naming "line N" and its field.
func (d *Document) Translate(opts Options) ([]byte, *SourceMap, error) {
	t := &translator{opts: opts, src: &SourceMap{lines: map[string]origin{}}}
	out := t.document(deref(d.root))
	if len(t.errs) > 0 {
		return nil, nil, t.errs
	}
	b, err := out.appendJSON(nil)
	if err != nil {
		return nil, nil, model.Errors{{Path: "$", Msg: err.Error()}}
	}
	return b, t.src, nil
}

// Translate parses data and translates it; see Document.Translate.
func Translate(data []byte, opts Options) ([]byte, *SourceMap, error) {
	doc, err := Parse(data, opts.Limits)
	if err != nil {
		return nil, nil, err
	}
	if !doc.IsDSL() {
		return nil, nil, model.Errors{{Path: "$", Msg: "not Maestro's YAML DSL: want a top-level Workflow (or workflow) mapping with a jobs list"}}
	}
	return doc.Translate(opts)
}

// checkLimits walks n as the translation will, following aliases, and
// fails at the first limit crossed.
func checkLimits(n *yaml.Node, lim Limits) error {
	w := limitWalk{lim: lim}
	if err := w.walk(n, 1); err != nil {
		return model.Errors{{Path: "$", Msg: err.Error()}}
	}
	return nil
}

// limitWalk counts what a walk of the document would visit.
type limitWalk struct {
	lim     Limits
	nodes   int
	aliases int
}

// walk visits n at depth, following aliases, and fails at the first limit.
func (w *limitWalk) walk(n *yaml.Node, depth int) error {
	if n == nil {
		return nil
	}
	w.nodes++
	if w.nodes > w.lim.MaxNodes {
		return fmt.Errorf("line %d: the YAML expands to more than %d nodes (limit; an alias counts its anchored value each time it is used)", n.Line, w.lim.MaxNodes)
	}
	if depth > w.lim.MaxDepth {
		return fmt.Errorf("line %d: the YAML nests deeper than %d levels (limit)", n.Line, w.lim.MaxDepth)
	}
	switch n.Kind {
	case yaml.AliasNode:
		w.aliases++
		if w.aliases > w.lim.MaxAliases {
			return fmt.Errorf("line %d: the YAML uses aliases more than %d times (limit)", n.Line, w.lim.MaxAliases)
		}
		return w.walk(n.Alias, depth)
	case yaml.DocumentNode, yaml.MappingNode, yaml.SequenceNode:
		for _, c := range n.Content {
			if err := w.walk(c, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// deref follows aliases.
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 1000; i++ {
		n = n.Alias
	}
	return n
}

// lookup returns the value of key k in mapping m, or nil.
func lookup(m *yaml.Node, k string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if key := deref(m.Content[i]); key.Kind == yaml.ScalarNode && key.Value == k {
			return m.Content[i+1]
		}
	}
	return nil
}
