// Package diff compares two stored versions of a workflow definition: the
// steps added, removed and changed (matched by step id at every nesting
// level), the edges of the DAG added, removed and re-conditioned, the
// workflow params and workflow-level fields changed, and the properties
// pushed with each version, each change named by its JSON path in the
// stored document (workflow.steps[2].step.params.sleep_seconds.value).
//
// It is pure: it reads two JSON documents and imports nothing from AWS.
// Its output is sorted and bounded: at most Options.MaxChanges entries are
// listed, and Diff.Truncated says when more were left out.
package diff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// DefaultMaxChanges is the number of entries a diff lists when
// Options.MaxChanges is not set.
const DefaultMaxChanges = 2000

// Options tune Compare.
type Options struct {
	// MaxChanges caps the entries listed (steps added or removed, fields
	// changed, edges, params); 0 means DefaultMaxChanges.
	MaxChanges int
}

// Diff is what changed from version From to version To of a workflow.
type Diff struct {
	WorkflowID string `json:"workflow_id"`
	From       int64  `json:"from"`
	To         int64  `json:"to"`
	// Steps are the steps added, removed and changed.
	Steps Steps `json:"steps"`
	// Edges are the DAG's edges (transition successors) added, removed
	// and whose condition changed, at every nesting level.
	Edges Edges `json:"edges"`
	// Params are the workflow params added, removed and changed.
	Params Params `json:"params"`
	// Workflow lists the changed workflow-level fields (timeout,
	// triggers, criticality, instance_step_concurrency, tags, ...) and
	// the document's other top-level fields (git_info, is_active),
	// leaving out the steps and params listed above.
	Workflow []Change `json:"workflow"`
	// Properties lists the changes between the properties pushed with
	// each version (the stored document's "properties"): the workflow's
	// properties snapshot is one for all versions, not kept per version.
	Properties []Change `json:"properties"`
	// Truncated is true when more than the limit's entries changed: the
	// lists hold the first ones, in the order the documents are walked.
	Truncated bool `json:"truncated"`
	// Limit is the most entries the diff lists.
	Limit int `json:"limit"`
}

// Steps are the step entries of a Diff, each list sorted by step id.
type Steps struct {
	Added   []Step `json:"added"`
	Removed []Step `json:"removed"`
	Changed []Step `json:"changed"`
}

// Step is one step of a Diff. A step whose kind changed (a step that
// became a foreach) is removed and added; a step moved into or out of a
// loop keeps its id and is changed, with Moved set and FromPath and
// FromParents telling where it was. A step only reordered in its list is
// not changed: the DAG is its transitions, not its position.
type Step struct {
	ID string `json:"step_id"`
	// Kind is step, foreach, while, subworkflow or template; Type the
	// step type of a plain step.
	Kind string `json:"kind"`
	Type string `json:"type,omitempty"`
	// Path is the step's body in the version it is in (To, or From for a
	// removed step), e.g. workflow.steps[1].foreach.steps[0].step.
	Path string `json:"path"`
	// Parents are the ids of the loops enclosing the step, outermost first.
	Parents []string `json:"parents,omitempty"`
	// FromPath and FromParents are the step's place in From when it
	// differs from its place in To.
	FromPath    string   `json:"from_path,omitempty"`
	FromParents []string `json:"from_parents,omitempty"`
	Moved       bool     `json:"moved,omitempty"`
	// Changes are the step's changed fields (a loop's body steps are
	// steps of their own, not fields of the loop).
	Changes []Change `json:"changes,omitempty"`
}

// Change is one changed value. From is absent when the value was added,
// To when it was removed.
type Change struct {
	// Path is the value's JSON path in To's document (in From's when it
	// was removed).
	Path string `json:"path"`
	// Field is the path relative to the step body, for a step's change.
	Field string          `json:"field,omitempty"`
	From  json.RawMessage `json:"from,omitempty"`
	To    json.RawMessage `json:"to,omitempty"`
}

// Edges are the edge entries of a Diff, each list sorted by (from, to).
type Edges struct {
	Added   []Edge `json:"added"`
	Removed []Edge `json:"removed"`
	// Changed are the edges in both versions whose condition changed.
	Changed []Edge `json:"changed"`
}

// Edge is a transition from one step to a successor under a condition.
type Edge struct {
	From      string `json:"from"`
	To        string `json:"to"`
	Condition string `json:"condition"`
	// FromCondition is a changed edge's condition in From.
	FromCondition string `json:"from_condition,omitempty"`
}

// Params are the workflow param entries of a Diff, sorted by name.
type Params struct {
	Added   []Param `json:"added"`
	Removed []Param `json:"removed"`
	Changed []Param `json:"changed"`
}

// Param is one workflow param of a Diff: an added or removed param's
// definition, or a changed one's changes.
type Param struct {
	Name    string          `json:"name"`
	Path    string          `json:"path"`
	Value   json.RawMessage `json:"value,omitempty"`
	Changes []Change        `json:"changes,omitempty"`
}

// Version is one side of a comparison: a version number and its stored
// definition document.
type Version struct {
	Number   int64
	Document []byte
}

// Compare diffs version from against version to of workflow wf. The
// documents are stored definitions: JSON objects with a "workflow"
// object holding "steps"; a document that is not is an error.
func Compare(wf string, from, to Version, opt Options) (*Diff, error) {
	limit := opt.MaxChanges
	if limit <= 0 {
		limit = DefaultMaxChanges
	}
	a, err := decode(from.Document)
	if err != nil {
		return nil, fmt.Errorf("diff: version %d: %w", from.Number, err)
	}
	b, err := decode(to.Document)
	if err != nil {
		return nil, fmt.Errorf("diff: version %d: %w", to.Number, err)
	}
	d := &Diff{WorkflowID: wf, From: from.Number, To: to.Number, Limit: limit}
	c := &comparer{d: d, left: limit}
	c.steps(a, b)
	c.params(a, b)
	c.workflow(a, b)
	c.properties(a, b)
	d.sort()
	d.nonNil()
	return d, nil
}

// comparer fills a Diff while its budget lasts.
type comparer struct {
	d    *Diff
	left int
}

// take spends one entry of the budget; false (and Truncated) when it is
// spent.
func (c *comparer) take() bool {
	if c.left <= 0 {
		c.d.Truncated = true
		return false
	}
	c.left--
	return true
}

// document is a decoded definition: its top-level object and its
// workflow object.
type document struct {
	top      map[string]any
	workflow map[string]any
}

func decode(doc []byte) (*document, error) {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var top map[string]any
	if err := dec.Decode(&top); err != nil {
		return nil, fmt.Errorf("decode definition: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("decode definition: data after the document")
	}
	wf, ok := top["workflow"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("definition has no workflow object")
	}
	return &document{top: top, workflow: wf}, nil
}

// located is a step found in a document.
type located struct {
	kind    string
	body    map[string]any
	path    string
	parents []string
	order   int
}

// collectSteps indexes the steps of list (at path) and of every loop
// body inside it, by id.
func collectSteps(list any, path string, parents []string, into map[string]*located) {
	entries, _ := list.([]any)
	for i, e := range entries {
		entry, _ := e.(map[string]any)
		if len(entry) != 1 {
			continue
		}
		for kind, v := range entry {
			body, _ := v.(map[string]any)
			id, _ := body["id"].(string)
			if body == nil || id == "" {
				continue
			}
			at := fmt.Sprintf("%s[%d].%s", path, i, kind)
			if _, dup := into[id]; !dup { // ids are unique in a valid definition
				into[id] = &located{kind: kind, body: body, path: at, parents: parents, order: len(into)}
			}
			if inner, ok := body["steps"]; ok {
				collectSteps(inner, at+".steps", append(slices.Clip(parents), id), into)
			}
		}
	}
}

// ordered returns the ids of m in document order.
func ordered(m map[string]*located) []string {
	ids := make([]string, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return m[ids[i]].order < m[ids[j]].order })
	return ids
}

func (c *comparer) steps(a, b *document) {
	as, bs := map[string]*located{}, map[string]*located{}
	collectSteps(a.workflow["steps"], "workflow.steps", nil, as)
	collectSteps(b.workflow["steps"], "workflow.steps", nil, bs)
	for _, id := range ordered(as) {
		if s, ok := bs[id]; !ok || s.kind != as[id].kind {
			if c.take() {
				c.d.Steps.Removed = append(c.d.Steps.Removed, stepEntry(id, as[id]))
			}
		}
	}
	for _, id := range ordered(bs) {
		to := bs[id]
		from, ok := as[id]
		if !ok || from.kind != to.kind {
			if c.take() {
				c.d.Steps.Added = append(c.d.Steps.Added, stepEntry(id, to))
			}
			continue
		}
		c.step(id, from, to)
	}
	c.edges(as, bs)
}

func stepEntry(id string, s *located) Step {
	typ, _ := s.body["type"].(string)
	return Step{ID: id, Kind: s.kind, Type: typ, Path: s.path, Parents: s.parents}
}

// step compares the fields of a step in both versions (its loop body
// aside) and lists it when they or its place changed.
func (c *comparer) step(id string, from, to *located) {
	var changes []Change
	add := func(ch Change) {
		if c.take() {
			rel, ok := strings.CutPrefix(ch.Path, to.path)
			if !ok {
				rel = strings.TrimPrefix(ch.Path, from.path)
			}
			ch.Field = strings.TrimPrefix(rel, ".")
			changes = append(changes, ch)
		}
	}
	moved := !slices.Equal(from.parents, to.parents)
	if moved && !c.take() {
		return
	}
	compareObjects(to.path, withoutKey(from.body, "steps"), withoutKey(to.body, "steps"), from.path, add)
	if !moved && len(changes) == 0 {
		return
	}
	e := stepEntry(id, to)
	e.Changes = changes
	if from.path != to.path {
		e.FromPath = from.path
	}
	if moved {
		e.Moved, e.FromParents = true, from.parents
	}
	c.d.Steps.Changed = append(c.d.Steps.Changed, e)
}

func withoutKey(m map[string]any, key string) map[string]any {
	if _, ok := m[key]; !ok {
		return m
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		if k != key {
			out[k] = v
		}
	}
	return out
}

// successors reads a step body's transition successors.
func successors(body map[string]any) map[string]string {
	t, _ := body["transition"].(map[string]any)
	s, _ := t["successors"].(map[string]any)
	out := make(map[string]string, len(s))
	for to, cond := range s {
		str, ok := cond.(string)
		if !ok {
			str = string(mustJSON(cond))
		}
		out[to] = str
	}
	return out
}

func (c *comparer) edges(as, bs map[string]*located) {
	for _, id := range ordered(as) {
		was := successors(as[id].body)
		var now map[string]string
		if s, ok := bs[id]; ok {
			now = successors(s.body)
		}
		for _, to := range sortedKeys(was) {
			if _, ok := now[to]; !ok && c.take() {
				c.d.Edges.Removed = append(c.d.Edges.Removed, Edge{From: id, To: to, Condition: was[to]})
			}
		}
	}
	for _, id := range ordered(bs) {
		now := successors(bs[id].body)
		var was map[string]string
		if s, ok := as[id]; ok {
			was = successors(s.body)
		}
		for _, to := range sortedKeys(now) {
			old, ok := was[to]
			switch {
			case !ok:
				if c.take() {
					c.d.Edges.Added = append(c.d.Edges.Added, Edge{From: id, To: to, Condition: now[to]})
				}
			case old != now[to]:
				if c.take() {
					c.d.Edges.Changed = append(c.d.Edges.Changed, Edge{From: id, To: to, Condition: now[to], FromCondition: old})
				}
			}
		}
	}
}

func (c *comparer) params(a, b *document) {
	ap, _ := a.workflow["params"].(map[string]any)
	bp, _ := b.workflow["params"].(map[string]any)
	for _, name := range sortedKeys(ap) {
		if _, ok := bp[name]; !ok && c.take() {
			c.d.Params.Removed = append(c.d.Params.Removed, Param{Name: name, Path: join("workflow.params", name), Value: mustJSON(ap[name])})
		}
	}
	for _, name := range sortedKeys(bp) {
		path := join("workflow.params", name)
		old, ok := ap[name]
		if !ok {
			if c.take() {
				c.d.Params.Added = append(c.d.Params.Added, Param{Name: name, Path: path, Value: mustJSON(bp[name])})
			}
			continue
		}
		var changes []Change
		compareValues(path, old, bp[name], path, func(ch Change) {
			if c.take() {
				changes = append(changes, ch)
			}
		})
		if len(changes) > 0 {
			c.d.Params.Changed = append(c.d.Params.Changed, Param{Name: name, Path: path, Changes: changes})
		}
	}
}

// workflow compares the workflow object's own fields and the document's
// other top-level fields.
func (c *comparer) workflow(a, b *document) {
	add := func(ch Change) {
		if c.take() {
			c.d.Workflow = append(c.d.Workflow, ch)
		}
	}
	strip := func(m map[string]any) map[string]any { return withoutKey(withoutKey(m, "steps"), "params") }
	compareObjects("workflow", strip(a.workflow), strip(b.workflow), "workflow", add)
	other := func(m map[string]any) map[string]any {
		return withoutKey(withoutKey(withoutKey(m, "workflow"), "properties"), "properties_snapshot")
	}
	compareObjects("", other(a.top), other(b.top), "", add)
}

func (c *comparer) properties(a, b *document) {
	props := func(d *document) (any, string) {
		if p, ok := d.top["properties"]; ok {
			return p, "properties"
		}
		if p, ok := d.top["properties_snapshot"]; ok {
			return p, "properties_snapshot"
		}
		return map[string]any{}, "properties"
	}
	pa, na := props(a)
	pb, nb := props(b)
	compareValues(nb, pa, pb, na, func(ch Change) {
		if c.take() {
			c.d.Properties = append(c.d.Properties, ch)
		}
	})
}

// compareValues reports, through add, how x (at fromPath in From) became
// y (at path in To): objects key by key, arrays index by index, any other
// difference as one change.
func compareValues(path string, x, y any, fromPath string, add func(Change)) {
	switch xv := x.(type) {
	case map[string]any:
		if yv, ok := y.(map[string]any); ok {
			compareObjects(path, xv, yv, fromPath, add)
			return
		}
	case []any:
		if yv, ok := y.([]any); ok {
			for i := range max(len(xv), len(yv)) {
				p, fp := fmt.Sprintf("%s[%d]", path, i), fmt.Sprintf("%s[%d]", fromPath, i)
				switch {
				case i >= len(yv):
					add(Change{Path: fp, From: mustJSON(xv[i])})
				case i >= len(xv):
					add(Change{Path: p, To: mustJSON(yv[i])})
				default:
					compareValues(p, xv[i], yv[i], fp, add)
				}
			}
			return
		}
	}
	if fx, fy := mustJSON(x), mustJSON(y); !bytes.Equal(fx, fy) {
		add(Change{Path: path, From: fx, To: fy})
	}
}

// compareObjects is compareValues of two objects, keys in sorted order.
func compareObjects(path string, x, y map[string]any, fromPath string, add func(Change)) {
	keys := sortedKeys(x)
	for _, k := range sortedKeys(y) {
		if _, ok := x[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		xv, inX := x[k]
		yv, inY := y[k]
		switch {
		case !inY:
			add(Change{Path: join(fromPath, k), From: mustJSON(xv)})
		case !inX:
			add(Change{Path: join(path, k), To: mustJSON(yv)})
		default:
			compareValues(join(path, k), xv, yv, join(fromPath, k), add)
		}
	}
}

var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// join appends key to a JSON path: .key for an identifier, ["key"] for
// anything else.
func join(path, key string) string {
	switch {
	case !identifier.MatchString(key):
		return path + "[" + string(mustJSON(key)) + "]"
	case path == "":
		return key
	}
	return path + "." + key
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// mustJSON encodes a decoded JSON value (which cannot fail), leaving <,
// > and & as they are.
func mustJSON(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(fmt.Sprintf("diff: re-encode a decoded value: %v", err))
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// sort orders every list: steps by id, edges by (from, to), params by
// name; changes stay in document order (sorted keys, array order).
func (d *Diff) sort() {
	for _, l := range [][]Step{d.Steps.Added, d.Steps.Removed, d.Steps.Changed} {
		sort.Slice(l, func(i, j int) bool { return l[i].ID < l[j].ID })
	}
	for _, l := range [][]Edge{d.Edges.Added, d.Edges.Removed, d.Edges.Changed} {
		sort.Slice(l, func(i, j int) bool {
			if l[i].From != l[j].From {
				return l[i].From < l[j].From
			}
			return l[i].To < l[j].To
		})
	}
}

// nonNil makes every list an array in JSON, never null.
func (d *Diff) nonNil() {
	for _, l := range []*[]Step{&d.Steps.Added, &d.Steps.Removed, &d.Steps.Changed} {
		if *l == nil {
			*l = []Step{}
		}
	}
	for _, l := range []*[]Edge{&d.Edges.Added, &d.Edges.Removed, &d.Edges.Changed} {
		if *l == nil {
			*l = []Edge{}
		}
	}
	for _, l := range []*[]Param{&d.Params.Added, &d.Params.Removed, &d.Params.Changed} {
		if *l == nil {
			*l = []Param{}
		}
	}
	for _, l := range []*[]Change{&d.Workflow, &d.Properties} {
		if *l == nil {
			*l = []Change{}
		}
	}
}

// Empty reports whether the two versions are the same.
func (d *Diff) Empty() bool {
	return len(d.Steps.Added)+len(d.Steps.Removed)+len(d.Steps.Changed)+len(d.Edges.Added)+len(d.Edges.Removed)+len(d.Edges.Changed)+
		len(d.Params.Added)+len(d.Params.Removed)+len(d.Params.Changed)+len(d.Workflow)+len(d.Properties) == 0 && !d.Truncated
}
