package dsl

import (
	"fmt"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/maestro-serverless/maestro/model"
)

// Job kinds: the wrapper key of a job in a jobs list.
const (
	kindJob         = "job"
	kindSubworkflow = "subworkflow"
	kindForeach     = "foreach"
	kindWhile       = "while"
)

// job is one entry of a jobs list, read enough to wire the dag.
type job struct {
	kind    string
	node    *yaml.Node // the job's mapping
	dp      jpath      // DSL path of the job's mapping
	line    int
	id      string
	members []member
	// trans are the job's transition strings (from its transition field,
	// or from the dag when it has none).
	trans []transition
}

// transition is one DSL transition string and where it was written.
type transition struct {
	text string
	node *yaml.Node
	dp   jpath
}

// jobs translates a jobs list (and the dag beside it) into a steps list.
func (t *translator) jobs(n, dag *yaml.Node, dp, dagDP, jp jpath) []any {
	n = deref(n)
	if isNull(n) {
		return []any{}
	}
	if n.Kind != yaml.SequenceNode {
		t.failf(n, dp, "want a list of jobs, got %s", describe(n))
		return nil
	}
	list := make([]*job, 0, len(n.Content))
	for i, e := range n.Content {
		if j := t.readJob(e, dp.at(i)); j != nil {
			list = append(list, j)
		}
	}
	if dag != nil {
		t.applyDag(list, dag, dagDP)
	}
	steps := make([]any, 0, len(list))
	for i, j := range list {
		steps = append(steps, t.step(j, jp.at(i)))
	}
	return steps
}

// readJob reads the wrapper {kind: {...}} of one jobs entry.
func (t *translator) readJob(e *yaml.Node, dp jpath) *job {
	ms := t.members(e, dp)
	if ms == nil {
		return nil
	}
	if len(ms) != 1 {
		t.failf(deref(e), dp, "a jobs entry has one key (job, subworkflow, foreach or while), got %d", len(ms))
		return nil
	}
	w := ms[0]
	switch w.key {
	case kindJob, kindSubworkflow, kindForeach, kindWhile:
	default:
		t.failf(w.k, w.dp, "unknown job kind %q (want job, subworkflow, foreach or while)", w.key)
		return nil
	}
	j := &job{kind: w.key, node: deref(w.v), dp: w.dp, line: w.k.Line}
	j.members = t.members(w.v, w.dp)
	for _, m := range j.members {
		switch m.key {
		case "id":
			j.id, _ = t.str(m.v, m.dp)
		case "transition":
			texts, nodes, ok := t.strList(m.v, m.dp)
			if !ok {
				continue
			}
			for i, s := range texts {
				j.trans = append(j.trans, transition{text: s, node: nodes[i], dp: m.dp.at(i)})
			}
		}
	}
	return j
}

// applyDag gives the jobs without transitions the ones the dag names, as
// WorkflowParser.addTransitionsToJobs: "sequential" chains the jobs in
// order, "parallel" adds nothing, a map gives transitions by job id.
func (t *translator) applyDag(jobs []*job, dag *yaml.Node, dp jpath) {
	dag = deref(dag)
	switch {
	case isNull(dag):
	case dag.Kind == yaml.ScalarNode:
		switch strings.ToUpper(strings.TrimSpace(dag.Value)) {
		case "SEQUENTIAL":
			for i := 0; i+1 < len(jobs); i++ {
				if len(jobs[i].trans) > 0 {
					continue
				}
				next := jobs[i+1]
				if next.id == "" {
					t.failf(next.node, next.dp.key("id"), "required: a sequential dag chains jobs by id")
					continue
				}
				jobs[i].trans = []transition{{text: next.id, node: dag, dp: dp}}
			}
		case "PARALLEL":
		default:
			t.failf(dag, dp, "invalid dag order %q (want sequential or parallel, or a map of transitions)", dag.Value)
		}
	case dag.Kind == yaml.MappingNode:
		byID := make(map[string]*job, len(jobs))
		for _, j := range jobs {
			if j.id != "" {
				byID[j.id] = j
			}
		}
		for _, m := range t.members(dag, dp) {
			j := byID[m.key]
			if j == nil {
				t.failf(m.k, m.dp, "the dag names an unknown job id %q", m.key)
				continue
			}
			texts, nodes, ok := t.strList(m.v, m.dp)
			if !ok || len(j.trans) > 0 {
				continue
			}
			for i, s := range texts {
				j.trans = append(j.trans, transition{text: s, node: nodes[i], dp: m.dp.at(i)})
			}
		}
	default:
		t.failf(dag, dp, "a dag is an order (sequential or parallel) or a map of transitions, got %s", describe(dag))
	}
}

// kindField reports whether key is a field of the job kind rather than
// one of the job's params (Maestro's jobParams take every other key).
func kindField(kind, key string) bool {
	switch kind {
	case kindJob:
		return key == "type" || key == "type_version"
	case kindSubworkflow:
		switch key {
		case "workflow_id", "subworkflow_id", "version", "subworkflow_version", "sync", "explicit_params":
			return true
		}
	case kindForeach:
		switch key {
		case "concurrency", "job_concurrency", "loop_params", "params", "ranges", "jobs", "dag":
			return true
		}
	case kindWhile:
		switch key {
		case "loop_params", "params", "condition", "jobs", "dag":
			return true
		}
	}
	return false
}

// step translates one job into {"step"|"subworkflow"|"foreach"|"while": {...}}.
func (t *translator) step(j *job, jp jpath) *object {
	wrapper := j.kind
	if wrapper == kindJob {
		wrapper = string(model.KindStep)
	}
	sp := jp.key(wrapper)
	t.src.record(jp, j.line, j.dp)
	t.src.record(sp, j.line, j.dp)
	s := &object{}
	var params []member
	kf := map[string]member{} // kind-specific fields, by canonical name
	for _, m := range j.members {
		switch m.key {
		case "id", "name", "description", "failure_mode":
			if v, ok := t.str(m.v, m.dp); ok {
				s.set(m.key, v)
				t.src.record(sp.key(m.key), m.k.Line, m.dp)
			}
		case "tags", "timeout":
			t.tagsOrTimeout(s, sp, m)
		case "transition":
		case "job_params":
			t.failf(m.k, m.dp, "[job_params] is a reserved field and cannot be set within job params")
		default:
			if !kindField(j.kind, m.key) {
				params = append(params, m)
				continue
			}
			name := canonicalField(m.key)
			if prev, dup := kf[name]; dup {
				t.failf(m.k, m.dp, "%s and %s are the same field; give one", prev.key, m.key)
				continue
			}
			kf[name] = m
		}
	}
	p := t.params(params, sp.key("params"))
	switch j.kind {
	case kindJob:
		t.typedJob(j, kf, s, sp)
	case kindSubworkflow:
		t.subworkflow(j, kf, s, p, sp)
	case kindForeach:
		t.loop(j, kf, s, p, sp, true)
	case kindWhile:
		t.loop(j, kf, s, p, sp, false)
	}
	if len(p.keys) > 0 {
		s.set("params", p)
	}
	if len(j.trans) > 0 {
		first := j.trans[0]
		t.src.record(sp.key("transition"), first.node.Line, first.dp)
		t.src.record(sp.key("transition").key("successors"), first.node.Line, first.dp)
		if tr := t.transitions(j.trans, sp.key("transition").key("successors")); len(tr.keys) > 0 {
			o := &object{}
			o.set("successors", tr)
			s.set("transition", o)
		}
	}
	out := &object{}
	out.set(wrapper, s)
	return out
}

// canonicalField maps a field's alias to its name (Jackson's @JsonAlias).
func canonicalField(k string) string {
	switch k {
	case "subworkflow_id":
		return "workflow_id"
	case "subworkflow_version":
		return "version"
	case "job_concurrency":
		return "concurrency"
	case "params":
		return "loop_params"
	}
	return k
}

// typedJob sets a job's type: a built-in step type, matched without case,
// or one the resolver knows (the job's type then becomes the sub_type).
func (t *translator) typedJob(j *job, kf map[string]member, s *object, sp jpath) {
	tm, ok := kf["type"]
	var typ string
	if ok {
		typ, ok = t.str(tm.v, tm.dp)
	}
	if !ok {
		if _, given := kf["type"]; !given {
			t.failf(j.node, j.dp.key("type"), "required: the job's type (e.g. NoOp, Sleep, Notebook, Kubernetes, Http)")
		}
		return
	}
	var version string
	if vm, given := kf["type_version"]; given {
		version, _ = t.str(vm.v, vm.dp)
	}
	if version == "" {
		version = model.DefaultJobTemplateVersion // Maestro's JobTemplateManager.loadStepType
	}
	t.src.record(sp.key("type"), tm.k.Line, tm.dp)
	if st, known := model.ParseStepType(typ); known {
		s.set("type", string(st))
		return
	}
	const builtIn = "NoOp, Sleep, Titus, Notebook, Kubernetes, Http, Join, Lambda, Callback, Ecs or Batch"
	if t.opts.Resolve == nil {
		t.failf(deref(tm.v), tm.dp, "unknown job type %q (want %s; it may be a job template's type, which only the server's job template registry resolves)", typ, builtIn)
		return
	}
	if st, known := t.opts.Resolve(typ, version); known {
		s.set("type", string(st))
		s.set("sub_type", typ)
		t.src.record(sp.key("sub_type"), tm.k.Line, tm.dp)
		return
	}
	t.failf(deref(tm.v), tm.dp, "unknown job type %q: it is not a built-in step type (%s) and no job template %q (version %q) is registered", typ, builtIn, typ, version)
}

// subworkflow sets sync and explicit_params and adds the subworkflow_id
// (the workflow_id, or the job's id) and subworkflow_version params.
func (t *translator) subworkflow(j *job, kf map[string]member, s, p *object, sp jpath) {
	for _, k := range []string{"sync", "explicit_params"} {
		if m, given := kf[k]; given {
			if v, ok := t.boolean(m.v, m.dp); ok {
				s.set(k, v)
				t.src.record(sp.key(k), m.k.Line, m.dp)
			}
		}
	}
	id, line, field := j.id, j.line, j.dp.key("id")
	if m, given := kf["workflow_id"]; given {
		if v, ok := t.str(m.v, m.dp); ok {
			id, line, field = v, m.k.Line, m.dp
		}
	}
	p.set("subworkflow_id", stringParam(id))
	t.src.record(sp.key("params").key("subworkflow_id"), line, field)
	if m, given := kf["version"]; given {
		if v, ok := t.str(m.v, m.dp); ok {
			p.set("subworkflow_version", stringParam(v))
			t.src.record(sp.key("params").key("subworkflow_version"), m.k.Line, m.dp)
		}
	}
}

// stringParam is a literal STRING param definition.
func stringParam(v string) *object {
	o := &object{}
	o.set("value", v)
	o.set("type", string(model.TypeString))
	return o
}

// loop translates a foreach or while job's body, condition, concurrency,
// loop params and (foreach) ranges.
func (t *translator) loop(j *job, kf map[string]member, s, p *object, sp jpath, foreach bool) {
	if m, given := kf["concurrency"]; given {
		if v, ok := t.integer(m.v, m.dp); ok {
			s.set("concurrency", number(strconv.FormatInt(v, 10)))
			t.src.record(sp.key("concurrency"), m.k.Line, m.dp)
		}
	}
	if m, given := kf["condition"]; given {
		if v, ok := t.str(m.v, m.dp); ok {
			s.set("condition", v)
			t.src.record(sp.key("condition"), m.k.Line, m.dp)
		}
	}
	lp := sp.key("params").key("loop_params")
	var loopParams *object
	if m, given := kf["loop_params"]; given {
		loopParams = t.params(t.members(m.v, m.dp), lp.key("value"))
		t.src.record(lp, m.k.Line, m.dp)
	}
	if m, given := kf["ranges"]; given && foreach {
		if loopParams == nil {
			loopParams = &object{}
			t.src.record(lp, m.k.Line, m.dp)
		}
		t.ranges(m, loopParams, lp.key("value"))
	}
	// A foreach always has loop_params (possibly empty); a while only when
	// the DSL gives them.
	if loopParams == nil && foreach {
		loopParams = &object{}
		t.src.record(lp, j.line, j.dp)
	}
	if loopParams != nil {
		o := &object{}
		o.set("value", loopParams)
		o.set("type", string(model.TypeMap))
		p.set("loop_params", o)
	}
	var dag *yaml.Node
	dagDP := j.dp.key("dag")
	if m, given := kf["dag"]; given {
		dag, dagDP = m.v, m.dp
	}
	if m, given := kf["jobs"]; given {
		s.set("steps", t.jobs(m.v, dag, m.dp, dagDP, sp.key("steps")))
		t.src.record(sp.key("steps"), m.k.Line, m.dp)
	} else if dag != nil {
		t.failf(deref(dag), dagDP, "a dag needs a jobs list")
	}
}

// ranges adds a foreach's ranges to its loop params, each as the LONG_ARRAY
// expression Util.intsBetween(from, to, increment) that Maestro writes.
func (t *translator) ranges(m member, loopParams *object, vp jpath) {
	for _, r := range t.members(m.v, m.dp) {
		from, inc := int64(0), int64(1)
		var to int64
		var hasTo bool
		for _, f := range t.members(r.v, r.dp) {
			v, ok := t.integer(f.v, f.dp)
			if !ok {
				continue
			}
			switch f.key {
			case "from":
				from = v
			case "to":
				to, hasTo = v, true
			case "increment":
				inc = v
			default:
				t.failf(f.k, f.dp, "unknown range field %q (want from, to, increment)", f.key)
			}
		}
		if !hasTo {
			t.failf(deref(r.v), r.dp.key("to"), "required: the exclusive end of the range")
			continue
		}
		if loopParams.has(r.key) {
			t.failf(r.k, r.dp, "loop param %q is given both in params and in ranges", r.key)
			continue
		}
		o := &object{}
		o.set("expression", fmt.Sprintf("Util.intsBetween(%d, %d, %d);", from, to, inc))
		o.set("type", string(model.TypeLongArray))
		loopParams.set(r.key, o)
		t.src.record(vp.key(r.key), r.k.Line, r.dp)
	}
}
