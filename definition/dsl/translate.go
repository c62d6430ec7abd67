package dsl

import (
	"fmt"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/maestro-serverless/maestro/model"
)

// defaultStepConcurrency is Maestro's Defaults.DEFAULT_STEP_CONCURRENCY,
// which WorkflowParser writes into every translated definition.
const defaultStepConcurrency = 20

// defaultRunStrategy is Maestro's Defaults.DEFAULT_RUN_STRATEGY, used when
// the DSL names no run_strategy.
const defaultRunStrategy = "SEQUENTIAL"

// translator carries one translation's options, source map and errors.
type translator struct {
	opts Options
	src  *SourceMap
	errs model.Errors
}

// failf records an error at field dp, found on the line of n.
func (t *translator) failf(n *yaml.Node, dp jpath, format string, args ...any) {
	line := 0
	if n != nil {
		line = n.Line
	}
	path := string(dp)
	if path == "" {
		path = "$"
	}
	t.errs = append(t.errs, &model.FieldError{Path: path, Msg: fmt.Sprintf("line %d: ", line) + fmt.Sprintf(format, args...)})
}

// member is one key/value pair of a mapping.
type member struct {
	key string
	k   *yaml.Node
	v   *yaml.Node
	dp  jpath
}

// members returns the pairs of mapping n (aliases followed), reporting
// duplicate and non-string keys and YAML merge keys.
func (t *translator) members(n *yaml.Node, dp jpath) []member {
	n = deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		t.failf(n, dp, "want a mapping, got %s", describe(n))
		return nil
	}
	out := make([]member, 0, len(n.Content)/2)
	seen := make(map[string]bool, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := deref(n.Content[i])
		if k.Kind != yaml.ScalarNode {
			t.failf(k, dp, "a mapping key must be a scalar, got %s", describe(k))
			continue
		}
		if k.ShortTag() == "!!merge" {
			t.failf(k, dp, "YAML merge keys (<<) are not supported; write the fields out")
			continue
		}
		if seen[k.Value] {
			t.failf(k, dp.key(k.Value), "key %q appears twice", k.Value)
			continue
		}
		seen[k.Value] = true
		out = append(out, member{key: k.Value, k: k, v: n.Content[i+1], dp: dp.key(k.Value)})
	}
	return out
}

// describe names the YAML kind of n for messages.
func describe(n *yaml.Node) string {
	n = deref(n)
	switch {
	case n == nil:
		return "nothing"
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	case n.ShortTag() == "!!null":
		return "null"
	}
	return fmt.Sprintf("the scalar %q", n.Value)
}

// isNull reports whether n is absent or a YAML null.
func isNull(n *yaml.Node) bool {
	n = deref(n)
	return n == nil || (n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null")
}

// str reads a string field; scalars of other types are taken as written,
// as Jackson coerces them. ok is false for null or on error.
func (t *translator) str(n *yaml.Node, dp jpath) (string, bool) {
	n = deref(n)
	if isNull(n) {
		return "", false
	}
	if n.Kind != yaml.ScalarNode {
		t.failf(n, dp, "want a string, got %s", describe(n))
		return "", false
	}
	return n.Value, true
}

// integer reads an integer field (an int, or a string holding one).
func (t *translator) integer(n *yaml.Node, dp jpath) (int64, bool) {
	n = deref(n)
	if isNull(n) {
		return 0, false
	}
	if n.Kind == yaml.ScalarNode {
		if v, ok := scalarInt(n); ok {
			return v, true
		}
		if v, err := strconv.ParseInt(strings.TrimSpace(n.Value), 10, 64); err == nil {
			return v, true
		}
	}
	t.failf(n, dp, "want an integer, got %s", describe(n))
	return 0, false
}

// boolean reads a boolean field (true/false, or a string holding one).
func (t *translator) boolean(n *yaml.Node, dp jpath) (bool, bool) {
	n = deref(n)
	if isNull(n) {
		return false, false
	}
	if n.Kind == yaml.ScalarNode {
		switch strings.ToLower(strings.TrimSpace(n.Value)) {
		case "true":
			return true, true
		case "false":
			return false, true
		}
	}
	t.failf(n, dp, "want true or false, got %s", describe(n))
	return false, false
}

// strList reads a list of strings and the nodes they came from; a null
// element is an empty string.
func (t *translator) strList(n *yaml.Node, dp jpath) ([]string, []*yaml.Node, bool) {
	n = deref(n)
	if isNull(n) {
		return nil, nil, false
	}
	if n.Kind != yaml.SequenceNode {
		t.failf(n, dp, "want a list of strings, got %s", describe(n))
		return nil, nil, false
	}
	out := make([]string, 0, len(n.Content))
	nodes := make([]*yaml.Node, 0, len(n.Content))
	for i, e := range n.Content {
		e = deref(e)
		if isNull(e) {
			out = append(out, "")
			nodes = append(nodes, e)
			continue
		}
		s, ok := t.str(e, dp.at(i))
		if !ok {
			return nil, nil, false
		}
		out = append(out, s)
		nodes = append(nodes, e)
	}
	return out, nodes, true
}

// scalarInt returns the value of an integer scalar.
func scalarInt(n *yaml.Node) (int64, bool) {
	if n.ShortTag() != "!!int" {
		return 0, false
	}
	var v int64
	if err := n.Decode(&v); err != nil {
		return 0, false
	}
	return v, true
}

// duration returns a timeout as JSON: an integer stays a number, anything
// else is the string as written (Maestro's ParsableLong).
func (t *translator) duration(n *yaml.Node, dp jpath) (any, bool) {
	n = deref(n)
	if v, ok := scalarInt(n); ok {
		return number(strconv.FormatInt(v, 10)), true
	}
	s, ok := t.str(n, dp)
	if !ok {
		return nil, false
	}
	return s, true
}

// tagsOrTimeout sets a workflow's or a step's tags or timeout, which the
// DSL writes as the JSON does, at path p of the JSON.
func (t *translator) tagsOrTimeout(o *object, p jpath, m member) {
	var v any
	var ok bool
	if m.key == "tags" {
		v, ok = t.tagList(m.v, m.dp)
	} else {
		v, ok = t.duration(m.v, m.dp)
	}
	if ok {
		o.set(m.key, v)
		t.src.record(p.key(m.key), m.k.Line, m.dp)
	}
}

// tagList returns a tags field as JSON.
func (t *translator) tagList(n *yaml.Node, dp jpath) ([]any, bool) {
	names, _, ok := t.strList(n, dp)
	if !ok {
		return nil, false
	}
	out := make([]any, len(names))
	for i, s := range names {
		out[i] = s
	}
	return out, true
}

// document translates the top of a DSL document: one Workflow (or
// workflow) key and nothing else, as Maestro's DslWorkflowDef.
func (t *translator) document(top *yaml.Node) *object {
	var wf *member
	for _, m := range t.members(top, "") {
		switch m.key {
		case "Workflow", "workflow":
			if wf != nil {
				t.failf(m.k, m.dp, "both %s and %s are given; write one", wf.key, m.key)
				continue
			}
			wf = &m
		default:
			t.failf(m.k, m.dp, "unknown top-level field %q: Maestro's DSL has only Workflow (or workflow)", m.key)
		}
	}
	if wf == nil {
		t.failf(top, "Workflow", "required")
		return &object{}
	}
	return t.workflow(wf.v, wf.dp)
}

// workflow translates a DslWorkflow into {"properties", "workflow"}.
func (t *translator) workflow(n *yaml.Node, dp jpath) *object {
	props := &object{}
	wf := &object{}
	const wp = jpath("workflow")
	t.src.record(wp, deref(n).Line, dp)
	var rule, concurrency any
	var ruleNode, jobs, dag *yaml.Node
	var params []member
	var ruleDP jpath
	for _, m := range t.members(n, dp) {
		switch m.key {
		case "id", "name", "description", "criticality":
			if s, ok := t.str(m.v, m.dp); ok {
				wf.set(m.key, s)
				t.src.record(wp.key(m.key), m.k.Line, m.dp)
			}
		case "owner":
			if s, ok := t.str(m.v, m.dp); ok {
				props.set("owner", s)
				t.src.record(jpath("properties.owner"), m.k.Line, m.dp)
			}
		case "run_strategy":
			if s, ok := t.str(m.v, m.dp); ok {
				rule, ruleNode, ruleDP = s, m.k, m.dp
			}
		case "workflow_concurrency":
			if v, ok := t.integer(m.v, m.dp); ok {
				concurrency = number(strconv.FormatInt(v, 10))
			}
		case "tags", "timeout":
			t.tagsOrTimeout(wf, wp, m)
		case "jobs":
			jobs = m.v
		case "dag":
			dag = m.v
		case "workflow_params":
			t.failf(m.k, m.dp, "[workflow_params] is a reserved field and cannot be set within workflow params")
		default:
			params = append(params, m)
		}
	}
	// WorkflowParser.buildProperties: the rule (and its concurrency) when
	// given, Maestro's default run strategy otherwise; step concurrency 20.
	switch {
	case rule == nil:
		props.set("run_strategy", defaultRunStrategy)
	case concurrency == nil:
		props.set("run_strategy", rule)
		t.src.record(jpath("properties.run_strategy"), ruleNode.Line, ruleDP)
	default:
		rs := &object{}
		rs.set("rule", rule)
		rs.set("workflow_concurrency", concurrency)
		props.set("run_strategy", rs)
		t.src.record(jpath("properties.run_strategy"), ruleNode.Line, ruleDP)
	}
	props.set("step_concurrency", number(strconv.Itoa(defaultStepConcurrency)))
	if p := t.params(params, wp.key("params")); len(p.keys) > 0 {
		wf.set("params", p)
	}
	if jobs != nil {
		wf.set("steps", t.jobs(jobs, dag, dp.key("jobs"), dp.key("dag"), wp.key("steps")))
	} else if dag != nil {
		t.failf(dag, dp.key("dag"), "a dag needs a jobs list")
	}
	out := &object{}
	out.set("properties", props)
	out.set("workflow", wf)
	return out
}
