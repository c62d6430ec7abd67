package model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
)

// The encoders write Maestro's JSON: snake_case keys, modelled fields first
// in a fixed order, then extra keys sorted; params, successors, signal names
// and map literals in definition order; enum values canonical; numbers that
// were read from JSON written back with their original text (Raw). Decoding
// the output gives back an equal model.

// jsonWriter appends JSON to a buffer, placing commas between members and
// elements. The first encoding problem is kept in err.
type jsonWriter struct {
	b     []byte
	comma []bool
	err   error
}

func (w *jsonWriter) fail(err error) {
	if w.err == nil {
		w.err = err
	}
}

func (w *jsonWriter) open(c byte) {
	w.b = append(w.b, c)
	w.comma = append(w.comma, false)
}

func (w *jsonWriter) close(c byte) {
	w.b = append(w.b, c)
	w.comma = w.comma[:len(w.comma)-1]
}

// sep writes a comma unless this is the first member or element.
func (w *jsonWriter) sep() {
	i := len(w.comma) - 1
	if w.comma[i] {
		w.b = append(w.b, ',')
	} else {
		w.comma[i] = true
	}
}

func (w *jsonWriter) key(k string) {
	w.sep()
	w.b = appendString(w.b, k)
	w.b = append(w.b, ':')
}

func (w *jsonWriter) str(s string) { w.b = appendString(w.b, s) }

// strField writes a string member when s is not empty.
func (w *jsonWriter) strField(k, s string) {
	if s != "" {
		w.key(k)
		w.str(s)
	}
}

func (w *jsonWriter) boolField(k string, v *bool) {
	if v != nil {
		w.key(k)
		w.b = strconv.AppendBool(w.b, *v)
	}
}

func (w *jsonWriter) intField(k string, v *int64) {
	if v != nil {
		w.key(k)
		w.b = strconv.AppendInt(w.b, *v, 10)
	}
}

// raw writes verbatim JSON, compacted; nil is written as null.
func (w *jsonWriter) raw(r RawJSON) {
	if len(r) == 0 {
		w.b = append(w.b, "null"...)
		return
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, r); err != nil {
		w.fail(fmt.Errorf("invalid raw JSON %.40q: %w", r, err))
		w.b = append(w.b, "null"...)
		return
	}
	w.b = append(w.b, buf.Bytes()...)
}

func (w *jsonWriter) rawField(k string, r RawJSON) {
	if r != nil {
		w.key(k)
		w.raw(r)
	}
}

// extras writes unmodelled members sorted by key.
func (w *jsonWriter) extras(m map[string]RawJSON) {
	if len(m) == 0 {
		return
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		w.key(k)
		w.raw(m[k])
	}
}

// generic writes a decoded-JSON value.
func (w *jsonWriter) generic(v any) {
	b, err := appendGeneric(w.b, v)
	if err != nil {
		w.fail(err)
		return
	}
	w.b = b
}

func (w *jsonWriter) strList(l []string) { writeList(w, l, w.str) }

// writeList writes the array of items, each written by write.
func writeList[T any](w *jsonWriter, items []T, write func(T)) {
	w.open('[')
	for _, e := range items {
		w.sep()
		write(e)
	}
	w.close(']')
}

// listField writes key k and the array of items, each written by write;
// a nil slice writes nothing.
func listField[T any](w *jsonWriter, k string, items []T, write func(*jsonWriter, *T)) {
	if items == nil {
		return
	}
	w.key(k)
	w.open('[')
	for i := range items {
		w.sep()
		write(w, &items[i])
	}
	w.close(']')
}

// finish returns the output or the first error.
func (w *jsonWriter) finish(what string) ([]byte, error) {
	if w.err != nil {
		return nil, fmt.Errorf("encode %s: %w", what, w.err)
	}
	return w.b, nil
}

// marshalPart writes v, a part of a definition, with write; what names it
// in the error.
func marshalPart[T any](v *T, write func(*jsonWriter, *T), what string) ([]byte, error) {
	w := &jsonWriter{}
	write(w, v)
	return w.finish(what)
}

// MarshalJSON writes the definition in the shape it was read: properties under
// "properties" or, for a stored definition, "properties_snapshot".
func (d *Definition) MarshalJSON() ([]byte, error) {
	w := &jsonWriter{b: make([]byte, 0, 4096)}
	w.definition(d)
	return w.finish("definition")
}

func (w *jsonWriter) definition(d *Definition) {
	if d == nil {
		w.b = append(w.b, "null"...)
		return
	}
	w.open('{')
	if d.Properties != nil {
		if d.PropertiesSnapshot {
			w.key("properties_snapshot")
		} else {
			w.key("properties")
		}
		w.properties(d.Properties)
	}
	if d.Workflow != nil {
		w.key("workflow")
		w.workflow(d.Workflow)
	}
	w.boolField("is_active", d.IsActive)
	if d.GitInfo != nil {
		w.key("git_info")
		w.open('{')
		w.extras(d.GitInfo)
		w.close('}')
	}
	w.extras(d.Extra)
	w.close('}')
}

// MarshalJSON writes the properties object.
func (p Properties) MarshalJSON() ([]byte, error) {
	return marshalPart(&p, (*jsonWriter).properties, "properties")
}

func (w *jsonWriter) properties(p *Properties) {
	w.open('{')
	if p.Owner != nil {
		w.key("owner")
		w.user(p.Owner)
	}
	w.rawField("access_control", p.AccessControl)
	if p.RunStrategy != nil {
		w.key("run_strategy")
		w.runStrategy(p.RunStrategy)
	}
	w.intField("step_concurrency", p.StepConcurrency)
	w.rawField("alerting", p.Alerting)
	w.boolField("alerting_disabled", p.AlertingDisabled)
	w.boolField("signal_trigger_disabled", p.SignalTriggerDisabled)
	w.boolField("time_trigger_disabled", p.TimeTriggerDisabled)
	w.strField("description", p.Description)
	listField(w, "tags", p.Tags, (*jsonWriter).tag)
	w.extras(p.Extra)
	w.close('}')
}

// MarshalJSON writes a bare name when the user was read as one, else an object.
func (u User) MarshalJSON() ([]byte, error) {
	return marshalPart(&u, (*jsonWriter).user, "user")
}

func (w *jsonWriter) user(u *User) {
	if u.Plain && len(u.Extra) == 0 {
		w.str(u.Name)
		return
	}
	w.open('{')
	w.strField("name", u.Name)
	w.extras(u.Extra)
	w.close('}')
}

// MarshalJSON writes the run strategy in the JSON form it was read in
// (Shape), falling back to the object form when that form cannot hold it.
func (r RunStrategy) MarshalJSON() ([]byte, error) {
	return marshalPart(&r, (*jsonWriter).runStrategy, "run strategy")
}

func (w *jsonWriter) runStrategy(r *RunStrategy) {
	plain := len(r.Extra) == 0
	switch {
	case r.Shape == "number" && r.Rule == RunParallel && plain:
		w.b = strconv.AppendInt(w.b, r.WorkflowConcurrency, 10)
		return
	case (r.Shape == "string" || r.Shape == "") && r.WorkflowConcurrency == 0 && plain:
		w.str(string(r.Rule))
		return
	}
	w.open('{')
	w.strField("rule", string(r.Rule))
	if r.WorkflowConcurrency != 0 {
		w.key("workflow_concurrency")
		w.b = strconv.AppendInt(w.b, r.WorkflowConcurrency, 10)
	}
	w.extras(r.Extra)
	w.close('}')
}

// MarshalJSON writes a bare name for a plain tag, else the object form.
func (t Tag) MarshalJSON() ([]byte, error) {
	return marshalPart(&t, (*jsonWriter).tag, "tag")
}

func (w *jsonWriter) tag(t *Tag) {
	if t.Plain && t.Namespace == "" && len(t.Extra) == 0 {
		w.str(t.Name)
		return
	}
	w.open('{')
	w.strField("name", t.Name)
	w.strField("namespace", t.Namespace)
	w.extras(t.Extra)
	w.close('}')
}

// MarshalJSON writes the workflow object.
func (wf Workflow) MarshalJSON() ([]byte, error) {
	return marshalPart(&wf, (*jsonWriter).workflow, "workflow")
}

func (w *jsonWriter) workflow(wf *Workflow) {
	w.open('{')
	w.strField("id", wf.ID)
	w.strField("name", wf.Name)
	w.strField("description", wf.Description)
	listField(w, "tags", wf.Tags, (*jsonWriter).tag)
	if wf.Timeout != nil {
		w.key("timeout")
		w.duration(wf.Timeout)
	}
	listField(w, "time_triggers", wf.TimeTriggers, (*jsonWriter).timeTrigger)
	listField(w, "signal_triggers", wf.SignalTriggers, (*jsonWriter).signalTrigger)
	w.strField("criticality", string(wf.Criticality))
	w.intField("instance_step_concurrency", wf.InstanceStepConcurrency)
	w.paramsField("params", &wf.Params)
	listField(w, "steps", wf.Steps, (*jsonWriter).step)
	w.extras(wf.Extra)
	w.close('}')
}

// MarshalJSON writes the params object in definition order.
func (ps Params) MarshalJSON() ([]byte, error) {
	return marshalPart(&ps, (*jsonWriter).params, "params")
}

func (w *jsonWriter) paramsField(k string, ps *Params) {
	if ps.Names == nil && len(ps.Defs) == 0 {
		return
	}
	w.key(k)
	w.params(ps)
}

func (w *jsonWriter) params(ps *Params) {
	w.open('{')
	for _, name := range ps.OrderedNames() {
		def := ps.Defs[name]
		w.key(name)
		w.paramDef(def)
	}
	w.close('}')
}

// OrderedNames returns the names of the defined params: those in Names first,
// in order and without repeats, then any other keys of Defs sorted. Names
// without a definition are left out.
func (ps *Params) OrderedNames() []string {
	out := make([]string, 0, len(ps.Defs))
	seen := make(map[string]bool, len(ps.Names))
	for _, n := range ps.Names {
		if seen[n] || ps.Defs[n] == nil {
			continue
		}
		seen[n] = true
		out = append(out, n)
	}
	if len(out) == len(ps.Defs) {
		return out
	}
	rest := make([]string, 0, len(ps.Defs)-len(out))
	for n, def := range ps.Defs {
		if !seen[n] && def != nil {
			rest = append(rest, n)
		}
	}
	sort.Strings(rest)
	return append(out, rest...)
}

// MarshalJSON writes the parameter definition.
func (p ParamDefinition) MarshalJSON() ([]byte, error) {
	return marshalPart(&p, (*jsonWriter).paramDef, "param definition")
}

func (w *jsonWriter) paramDef(p *ParamDefinition) {
	w.open('{')
	if p.HasValue {
		w.key("value")
		w.paramValue(p)
	}
	w.strField("expression", p.Expression)
	w.strField("type", string(p.Type))
	w.strField("validator", p.Validator)
	w.strField("mode", string(p.Mode))
	listField(w, "tags", p.Tags, (*jsonWriter).tag)
	w.extras(p.Meta)
	w.close('}')
}

// paramValue writes a literal per its Go type (see ParamDefinition).
func (w *jsonWriter) paramValue(p *ParamDefinition) {
	if p.Raw != nil && rawStillMatches(p) {
		w.raw(p.Raw)
		return
	}
	switch v := p.Value.(type) {
	case string:
		w.str(v)
	case bool:
		w.b = strconv.AppendBool(w.b, v)
	case int64:
		w.b = strconv.AppendInt(w.b, v, 10)
	case float64:
		w.float(v)
	case map[string]string:
		w.open('{')
		for _, k := range MapKeys(p.Keys, v) {
			w.key(k)
			w.str(v[k])
		}
		w.close('}')
	case map[string]*ParamDefinition:
		w.open('{')
		for _, k := range MapKeys(p.Keys, v) {
			if v[k] == nil {
				continue
			}
			w.key(k)
			w.paramDef(v[k])
		}
		w.close('}')
	case []string:
		w.strList(v)
	case []int64:
		writeList(w, v, func(e int64) { w.b = strconv.AppendInt(w.b, e, 10) })
	case []float64:
		writeList(w, v, w.float)
	case []bool:
		writeList(w, v, func(e bool) { w.b = strconv.AppendBool(w.b, e) })
	default:
		w.generic(v)
	}
}

// float writes a finite float in its shortest exact form.
func (w *jsonWriter) float(f float64) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		w.fail(fmt.Errorf("unsupported number %v", f))
		w.b = append(w.b, '0')
		return
	}
	w.b = strconv.AppendFloat(w.b, f, 'g', -1, 64)
}

// rawStillMatches reports whether p.Raw decodes to p.Value, i.e. whether the
// value was not changed since it was read.
func rawStillMatches(p *ParamDefinition) bool {
	var errs errorList
	n, err := parseJSON(p.Raw, &errs)
	if err != nil || len(errs.errs) > 0 {
		return false
	}
	probe := &ParamDefinition{Type: p.Type}
	var d decoder
	d.paramValue(probe, n, newRoot().here())
	return probe.Raw != nil && reflect.DeepEqual(probe.Value, p.Value)
}

// MapKeys returns the keys of m: those listed in order first (without
// repeats, skipping keys m lacks), then the rest sorted. It gives map
// literals (STRING_MAP, MAP) their definition order.
func MapKeys[V any](order []string, m map[string]V) []string {
	out := make([]string, 0, len(m))
	seen := make(map[string]bool, len(order))
	for _, k := range order {
		if _, ok := m[k]; ok && !seen[k] {
			seen[k] = true
			out = append(out, k)
		}
	}
	if len(out) == len(m) {
		return out
	}
	rest := make([]string, 0, len(m)-len(out))
	for k := range m {
		if !seen[k] {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	return append(out, rest...)
}

// MarshalJSON writes the duration as it was read, else as seconds or the
// unresolved string.
func (p ParsableDuration) MarshalJSON() ([]byte, error) {
	return marshalPart(&p, (*jsonWriter).duration, "duration")
}

func (w *jsonWriter) duration(p *ParsableDuration) {
	w.parsable(p.Raw, p.Expr, p.Seconds, func(n *node) bool {
		q, err := parsableDurationFrom(n)
		return err == nil && q.Seconds == p.Seconds && q.Expr == p.Expr
	})
}

// parsable writes a ParsableDuration or a ParsableLong: raw, the JSON it
// was read from, while same says raw still reads as the value; else the
// unresolved text expr, else the number n.
func (w *jsonWriter) parsable(raw RawJSON, expr string, n int64, same func(*node) bool) {
	if raw != nil {
		var errs errorList
		if node, err := parseJSON(raw, &errs); err == nil && same(node) {
			w.raw(raw)
			return
		}
	}
	if expr != "" {
		w.str(expr)
		return
	}
	w.b = strconv.AppendInt(w.b, n, 10)
}

// MarshalJSON writes the value as it was read, else as a number or the
// unresolved string.
func (p ParsableLong) MarshalJSON() ([]byte, error) {
	return marshalPart(&p, (*jsonWriter).long, "number")
}

func (w *jsonWriter) long(p *ParsableLong) {
	w.parsable(p.Raw, p.Expr, p.Value, func(n *node) bool {
		q, err := parsableLongFrom(n)
		return err == nil && q.Value == p.Value && q.Expr == p.Expr
	})
}

func (w *jsonWriter) longField(k string, p *ParsableLong) {
	if p != nil {
		w.key(k)
		w.long(p)
	}
}

// MarshalJSON writes the time trigger object.
func (t TimeTrigger) MarshalJSON() ([]byte, error) {
	return marshalPart(&t, (*jsonWriter).timeTrigger, "time trigger")
}

func (w *jsonWriter) timeTrigger(t *TimeTrigger) {
	w.open('{')
	w.strField("type", string(t.Type))
	w.strField("cron", t.Cron)
	w.strField("expression", t.Expression)
	w.strField("interval", t.Interval)
	w.strField("start", t.Start)
	w.strField("timezone", t.Timezone)
	if t.FuzzyMaxDelay != nil {
		w.key("fuzzy_max_delay")
		w.duration(t.FuzzyMaxDelay)
	}
	w.extras(t.Extra)
	w.close('}')
}

// MarshalJSON writes the signal trigger object.
func (t SignalTrigger) MarshalJSON() ([]byte, error) {
	return marshalPart(&t, (*jsonWriter).signalTrigger, "signal trigger")
}

func (w *jsonWriter) signalTrigger(t *SignalTrigger) {
	w.open('{')
	if t.Names != nil || t.Definitions != nil {
		w.key("definitions")
		w.open('{')
		for _, name := range MapKeys(t.Names, t.Definitions) {
			def := t.Definitions[name]
			if def == nil {
				continue
			}
			w.key(name)
			w.open('{')
			w.matchParamsField(def.MatchNames, def.MatchParams)
			if def.JoinKeys != nil {
				w.key("join_keys")
				w.strList(def.JoinKeys)
			}
			w.extras(def.Extra)
			w.close('}')
		}
		w.close('}')
	}
	w.strField("condition", t.Condition)
	w.strField("dedup_expr", t.DedupExpr)
	w.paramsField("params", &t.Params)
	w.extras(t.Extra)
	w.close('}')
}

func (w *jsonWriter) matchParamsField(names []string, mps map[string]*SignalMatchParam) {
	if names == nil && mps == nil {
		return
	}
	w.key("match_params")
	w.open('{')
	for _, name := range MapKeys(names, mps) {
		mp := mps[name]
		if mp == nil {
			continue
		}
		w.key(name)
		w.open('{')
		if mp.Value != nil {
			w.key("value")
			w.generic(mp.Value)
		}
		if mp.Param != nil {
			w.key("param")
			w.paramDef(mp.Param)
		}
		w.strField("operator", string(mp.Operator))
		w.extras(mp.Extra)
		w.close('}')
	}
	w.close('}')
}

// MarshalJSON writes the step in its wrapper object {"<kind>": {...}}.
func (s Step) MarshalJSON() ([]byte, error) {
	return marshalPart(&s, (*jsonWriter).step, "step")
}

func (w *jsonWriter) step(s *Step) {
	if _, ok := ParseStepKind(string(s.Kind)); !ok {
		w.fail(fmt.Errorf("step %q has unknown kind %q", s.ID, s.Kind))
	}
	w.open('{')
	w.key(string(s.Kind))
	w.open('{')
	w.strField("id", s.ID)
	w.strField("name", s.Name)
	w.strField("description", s.Description)
	switch s.Kind {
	case KindStep:
		w.strField("type", string(s.Type))
		w.strField("sub_type", s.SubType)
		w.strField("sub_type_version", s.SubTypeVersion)
	case KindSubworkflow:
		w.boolField("sync", s.Sync)
		w.boolField("explicit_params", s.ExplicitParams)
	case KindForeach:
		w.intField("concurrency", s.Concurrency)
		w.boolField("strict_ordering", s.StrictOrdering)
		if s.ItemsFrom != nil {
			w.key("items_from")
			w.itemsFrom(s.ItemsFrom)
		}
	case KindWhile:
		w.strField("condition", s.Condition)
	}
	w.transition(&s.Transition)
	w.strField("failure_mode", string(s.FailureMode))
	listField(w, "tags", s.Tags, (*jsonWriter).tag)
	if s.Timeout != nil {
		w.key("timeout")
		w.duration(s.Timeout)
	}
	if s.Kind == KindStep && s.RetryPolicy != nil {
		w.key("retry_policy")
		w.retryPolicy(s.RetryPolicy)
	}
	listField(w, "signal_dependencies", s.SignalDependencies, (*jsonWriter).signalDependency)
	listField(w, "signal_outputs", s.SignalOutputs, (*jsonWriter).signalOutput)
	w.paramsField("params", &s.Params)
	if s.Kind == KindForeach || s.Kind == KindWhile {
		listField(w, "steps", s.Steps, (*jsonWriter).step)
	}
	w.extras(s.Extra)
	w.close('}')
	w.close('}')
}

// itemsFrom writes a foreach step's items_from object.
func (w *jsonWriter) itemsFrom(f *ItemsFrom) {
	w.open('{')
	w.strField("s3_uri", f.S3URI)
	w.strField("format", f.Format)
	if len(f.FieldOrder) > 0 {
		w.key("fields")
		w.open('{')
		for _, k := range f.FieldOrder {
			w.strField(k, string(f.Fields[k]))
		}
		w.close('}')
	}
	w.close('}')
}

// MarshalJSON writes the transition object.
func (t Transition) MarshalJSON() ([]byte, error) {
	return marshalPart(&t, (*jsonWriter).transitionObject, "transition")
}

// transition writes the "transition" member unless the transition is empty.
func (w *jsonWriter) transition(t *Transition) {
	if t.Successors == nil && t.Predecessors == nil && len(t.Extra) == 0 {
		return
	}
	w.key("transition")
	w.transitionObject(t)
}

func (w *jsonWriter) transitionObject(t *Transition) {
	w.open('{')
	if t.Successors != nil {
		w.key("successors")
		w.open('{')
		for _, s := range t.Successors {
			w.key(s.StepID)
			w.str(s.Condition)
		}
		w.close('}')
	}
	if t.Predecessors != nil {
		w.key("predecessors")
		w.strList(t.Predecessors)
	}
	w.extras(t.Extra)
	w.close('}')
}

// MarshalJSON writes the retry policy object.
func (r RetryPolicy) MarshalJSON() ([]byte, error) {
	return marshalPart(&r, (*jsonWriter).retryPolicy, "retry policy")
}

func (w *jsonWriter) retryPolicy(r *RetryPolicy) {
	w.open('{')
	w.longField("error_retry_limit", r.ErrorRetryLimit)
	w.longField("platform_retry_limit", r.PlatformRetryLimit)
	w.longField("timeout_retry_limit", r.TimeoutRetryLimit)
	if r.Backoff != nil {
		w.key("backoff")
		w.backoff(r.Backoff)
	}
	w.extras(r.Extra)
	w.close('}')
}

// MarshalJSON writes the backoff object.
func (b Backoff) MarshalJSON() ([]byte, error) {
	return marshalPart(&b, (*jsonWriter).backoff, "backoff")
}

func (w *jsonWriter) backoff(b *Backoff) {
	w.open('{')
	w.strField("type", string(b.Type))
	for _, k := range backoffFieldNames() {
		w.longField(k, *b.field(k))
	}
	w.extras(b.Extra)
	w.close('}')
}

// MarshalJSON writes the signal dependency object.
func (s SignalDependency) MarshalJSON() ([]byte, error) {
	return marshalPart(&s, (*jsonWriter).signalDependency, "signal dependency")
}

func (w *jsonWriter) signalDependency(s *SignalDependency) {
	w.open('{')
	w.strField("name", s.Name)
	w.matchParamsField(s.MatchNames, s.MatchParams)
	w.extras(s.Extra)
	w.close('}')
}

// MarshalJSON writes the signal output object.
func (s SignalOutput) MarshalJSON() ([]byte, error) {
	return marshalPart(&s, (*jsonWriter).signalOutput, "signal output")
}

func (w *jsonWriter) signalOutput(s *SignalOutput) {
	w.open('{')
	w.strField("name", s.Name)
	w.paramsField("params", &s.Params)
	w.paramsField("payload", &s.Payload)
	w.extras(s.Extra)
	w.close('}')
}
