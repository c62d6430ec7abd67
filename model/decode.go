package model

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ParseDefinition decodes a workflow definition from JSON: either a create
// request ({"properties", "workflow", "is_active", "git_info", ...extras}) or a
// stored WorkflowDefinition ({"properties_snapshot", "workflow", "metadata",
// ...}). Every shape error (a field of the wrong JSON type, a missing required
// field, a malformed step wrapper, a duplicate key) is reported, all at once,
// as Errors with the JSON path of each field. Enum values are read
// case-insensitively and canonicalised; unknown keys are kept in Extra/Meta
// fields. ParseDefinition does not apply the validation rules: call Validate.
func ParseDefinition(data []byte) (*Definition, error) {
	var d decoder
	n, err := parseJSON(data, &d.errs)
	if err != nil {
		return nil, Errors{{Msg: err.Error()}}
	}
	def := d.definition(n, newRoot().here())
	if len(d.errs.errs) > 0 {
		return nil, d.errs.errs
	}
	return def, nil
}

// UnmarshalJSON decodes a definition as ParseDefinition does.
func (d *Definition) UnmarshalJSON(data []byte) error {
	def, err := ParseDefinition(data)
	if err != nil {
		return err
	}
	*d = *def
	return nil
}

// decodeInto parses data and decodes it with fn, for the UnmarshalJSON
// methods of the model's parts. Paths in errors are relative to the value.
func decodeInto(data []byte, fn func(d *decoder, n *node, root loc)) error {
	var d decoder
	n, err := parseJSON(data, &d.errs)
	if err != nil {
		return Errors{{Msg: err.Error()}}
	}
	fn(&d, n, newRoot().here())
	return d.errs.errs.Err()
}

// decoder turns a JSON tree into the model, collecting shape errors.
type decoder struct {
	errs errorList
}

// fail records msg at l.
func (d *decoder) fail(l loc, msg string) { d.errs.add(l.get(), msg) }

// failf records a formatted message at l.
func (d *decoder) failf(l loc, format string, args ...any) {
	d.errs.addf(l.get(), format, args...)
}

// isNull reports whether a member is absent or JSON null; the model treats
// both alike.
func isNull(n *node) bool { return n == nil || n.kind == kindNull }

// wrongType records that n at p is not of the wanted kind.
func (d *decoder) wrongType(n *node, p loc, want string) {
	d.failf(p, "must be %s, got %s", want, n.kind)
}

// object reports whether n is an object, recording an error when it is not.
func (d *decoder) object(n *node, p loc) bool {
	if n.kind != kindObject {
		d.wrongType(n, p, "an object")
		return false
	}
	return true
}

// str decodes a string field; null gives "".
func (d *decoder) str(n *node, p loc) string {
	if isNull(n) {
		return ""
	}
	if n.kind != kindString {
		d.wrongType(n, p, "a string")
		return ""
	}
	return n.s
}

// boolPtr decodes an optional boolean.
func (d *decoder) boolPtr(n *node, p loc) *bool {
	if isNull(n) {
		return nil
	}
	if n.kind != kindBool {
		d.wrongType(n, p, "a boolean")
		return nil
	}
	b := n.b
	return &b
}

// int64Ptr decodes an optional whole number.
func (d *decoder) int64Ptr(n *node, p loc) *int64 {
	if isNull(n) {
		return nil
	}
	if n.kind != kindNumber {
		d.wrongType(n, p, "a whole number")
		return nil
	}
	v, ok := parseInteger(n.s)
	if !ok {
		d.failf(p, "must be a whole number, got %s", n.s)
		return nil
	}
	return &v
}

// strList decodes an optional array of strings; an empty array gives an empty,
// non-nil slice so that it is written back.
func (d *decoder) strList(n *node, p loc) []string {
	return list(d, n, p, "an array of strings", func(e *node, p loc) (string, bool) {
		if e.kind != kindString {
			d.wrongType(e, p, "a string")
			return "", false
		}
		return e.s, true
	})
}

// rawMap keeps every member of an object verbatim.
func (d *decoder) rawMap(n *node, p loc) map[string]RawJSON {
	if isNull(n) {
		return nil
	}
	if !d.object(n, p) {
		return nil
	}
	out := make(map[string]RawJSON, len(n.members))
	for _, m := range n.members {
		out[m.key] = m.val.raw()
	}
	return out
}

// setExtra keeps an unmodelled member.
func setExtra(extra *map[string]RawJSON, m member) {
	if *extra == nil {
		*extra = make(map[string]RawJSON)
	}
	(*extra)[m.key] = m.val.raw()
}

// definition decodes the top-level object.
func (d *decoder) definition(n *node, p loc) *Definition {
	if n.kind != kindObject {
		d.failf(p, "a workflow definition must be a JSON object, got %s", n.kind)
		return nil
	}
	def := &Definition{}
	p = p.fix()
	propsKey := ""
	sawWorkflow := false
	for _, m := range n.members {
		mp := p.key(m.key)
		switch m.key {
		case "properties", "properties_snapshot":
			if isNull(m.val) {
				continue
			}
			if propsKey != "" {
				d.failf(mp, "only one of properties and properties_snapshot may be given (found %s too)", propsKey)
				continue
			}
			propsKey = m.key
			def.PropertiesSnapshot = m.key == "properties_snapshot"
			def.Properties = d.properties(m.val, mp)
		case "workflow":
			if isNull(m.val) {
				continue
			}
			sawWorkflow = true
			def.Workflow = d.workflow(m.val, mp)
		case "is_active":
			def.IsActive = d.boolPtr(m.val, mp)
		case "git_info":
			def.GitInfo = d.rawMap(m.val, mp)
		default:
			setExtra(&def.Extra, m)
		}
	}
	if !sawWorkflow {
		d.fail(p.key("workflow"), "required")
	}
	return def
}

// properties decodes the workflow properties.
func (d *decoder) properties(n *node, p loc) *Properties {
	if !d.object(n, p) {
		return nil
	}
	pr := &Properties{}
	p = p.fix()
	for _, m := range n.members {
		mp := p.key(m.key)
		switch m.key {
		case "owner":
			pr.Owner = d.user(m.val, mp)
		case "access_control":
			if !isNull(m.val) {
				pr.AccessControl = m.val.raw()
			}
		case "run_strategy":
			pr.RunStrategy = d.runStrategy(m.val, mp)
		case "step_concurrency":
			pr.StepConcurrency = d.int64Ptr(m.val, mp)
		case "alerting":
			if !isNull(m.val) {
				pr.Alerting = m.val.raw()
			}
		case "alerting_disabled":
			pr.AlertingDisabled = d.boolPtr(m.val, mp)
		case "signal_trigger_disabled":
			pr.SignalTriggerDisabled = d.boolPtr(m.val, mp)
		case "time_trigger_disabled":
			pr.TimeTriggerDisabled = d.boolPtr(m.val, mp)
		case "description":
			pr.Description = d.str(m.val, mp)
		case "tags":
			pr.Tags = d.tags(m.val, mp)
		default:
			setExtra(&pr.Extra, m)
		}
	}
	return pr
}

// user decodes an owner: a bare name or {"name", ...}.
func (d *decoder) user(n *node, p loc) *User {
	switch {
	case isNull(n):
		return nil
	case n.kind == kindString:
		return &User{Name: n.s, Plain: true}
	case n.kind == kindObject:
		u := &User{}
		p = p.fix()
		for _, m := range n.members {
			if m.key == "name" {
				u.Name = d.str(m.val, p.key("name"))
				continue
			}
			setExtra(&u.Extra, m)
		}
		return u
	}
	d.wrongType(n, p, "a string or an object")
	return nil
}

// runStrategy decodes "rule", N (PARALLEL with concurrency N) or
// {"rule", "workflow_concurrency"}.
func (d *decoder) runStrategy(n *node, p loc) *RunStrategy {
	switch {
	case isNull(n):
		return nil
	case n.kind == kindString:
		rule, _ := ParseRunStrategyRule(n.s)
		return &RunStrategy{Rule: rule, Shape: "string"}
	case n.kind == kindNumber:
		v := d.int64Ptr(n, p)
		if v == nil {
			return nil
		}
		return &RunStrategy{Rule: RunParallel, WorkflowConcurrency: *v, Shape: "number"}
	case n.kind == kindObject:
		rs := &RunStrategy{Shape: "object"}
		p = p.fix()
		for _, m := range n.members {
			mp := p.key(m.key)
			switch m.key {
			case "rule":
				rs.Rule, _ = ParseRunStrategyRule(d.str(m.val, mp))
			case "workflow_concurrency":
				if v := d.int64Ptr(m.val, mp); v != nil {
					rs.WorkflowConcurrency = *v
				}
			default:
				setExtra(&rs.Extra, m)
			}
		}
		return rs
	}
	d.wrongType(n, p, "a rule name, a number or an object")
	return nil
}

// tags decodes a tag list.
func (d *decoder) tags(n *node, p loc) TagList {
	return list(d, n, p, "an array of tags", d.tag)
}

// tag decodes a bare tag name or {"name", "namespace", ...}.
func (d *decoder) tag(n *node, p loc) (Tag, bool) {
	switch n.kind {
	case kindString:
		return Tag{Name: n.s, Plain: true}, true
	case kindObject:
		t := Tag{}
		for _, m := range n.members {
			mp := p.key(m.key)
			switch m.key {
			case "name":
				t.Name = d.str(m.val, mp)
			case "namespace":
				t.Namespace, _ = ParseTagNamespace(d.str(m.val, mp))
			default:
				setExtra(&t.Extra, m)
			}
		}
		return t, true
	}
	d.wrongType(n, p, "a tag name or a tag object")
	return Tag{}, false
}

// workflow decodes the DAG definition.
func (d *decoder) workflow(n *node, p loc) *Workflow {
	if !d.object(n, p) {
		return nil
	}
	w := &Workflow{}
	p = p.fix()
	for _, m := range n.members {
		mp := p.key(m.key)
		switch m.key {
		case "id":
			w.ID = d.str(m.val, mp)
		case "name":
			w.Name = d.str(m.val, mp)
		case "description":
			w.Description = d.str(m.val, mp)
		case "tags":
			w.Tags = d.tags(m.val, mp)
		case "timeout":
			w.Timeout = d.duration(m.val, mp)
		case "time_triggers":
			w.TimeTriggers = d.timeTriggers(m.val, mp)
		case "signal_triggers":
			w.SignalTriggers = d.signalTriggers(m.val, mp)
		case "criticality":
			w.Criticality, _ = ParseCriticality(d.str(m.val, mp))
		case "instance_step_concurrency":
			w.InstanceStepConcurrency = d.int64Ptr(m.val, mp)
		case "params":
			w.Params = d.params(m.val, mp)
		case "steps":
			w.Steps = d.steps(m.val, mp)
		default:
			setExtra(&w.Extra, m)
		}
	}
	return w
}

// params decodes a name -> ParamDefinition object, keeping the order.
func (d *decoder) params(n *node, p loc) Params {
	if isNull(n) {
		return Params{}
	}
	if !d.object(n, p) {
		return Params{}
	}
	var ps Params
	ps.Names, ps.Defs = named(d, n, p, d.paramDef)
	return ps
}

// named decodes an object whose members one decodes, keeping their names
// in order; a member one rejects (nil) is left out.
func named[T any](d *decoder, n *node, p loc, one func(*node, loc) *T) (names []string, byName map[string]*T) {
	names = make([]string, 0, len(n.members))
	byName = make(map[string]*T, len(n.members))
	p = p.fix()
	for _, m := range n.members {
		if v := one(m.val, p.key(m.key)); v != nil {
			names = append(names, m.key)
			byName[m.key] = v
		}
	}
	return names, byName
}

// requiredType decodes the "type" member of a param definition or a time
// trigger, reporting whether it counts as given: an empty name does not
// (it is reported as required), one of the wrong JSON type does (it is
// reported as that).
func (d *decoder) requiredType(n *node, p loc) (name string, given bool) {
	name = d.str(n, p)
	return name, name != "" || (!isNull(n) && n.kind != kindString)
}

// paramDef decodes one parameter definition.
func (d *decoder) paramDef(n *node, p loc) *ParamDefinition {
	if isNull(n) {
		d.fail(p, "must be a param definition object, got null")
		return nil
	}
	if n.kind != kindObject {
		d.wrongType(n, p, "a param definition object")
		return nil
	}
	def := &ParamDefinition{}
	var value *node
	sawType := false
	for _, m := range n.members {
		mp := p.key(m.key)
		switch m.key {
		case "type":
			var name string
			name, sawType = d.requiredType(m.val, mp)
			def.Type, _ = ParseParamType(name)
		case "value":
			if !isNull(m.val) {
				value = m.val
			}
		case "expression":
			def.Expression = d.str(m.val, mp)
		case "validator":
			def.Validator = d.str(m.val, mp)
		case "mode":
			def.Mode, _ = ParseParamMode(d.str(m.val, mp))
		case "tags":
			def.Tags = d.tags(m.val, mp)
		default:
			setExtra(&def.Meta, m)
		}
	}
	if !sawType {
		d.fail(p.key("type"), "required")
	}
	if value != nil {
		def.HasValue = true
		d.paramValue(def, value, p.key("value"))
	}
	return def
}

// paramValue decodes a literal into the Go type of def.Type (see
// ParamDefinition). A literal whose JSON shape does not fit the type is kept
// as generic JSON for validation to report.
func (d *decoder) paramValue(def *ParamDefinition, n *node, p loc) {
	ok := false
	switch def.Type {
	case TypeString:
		if n.kind == kindString {
			def.Value, ok = n.s, true
		}
	case TypeBoolean:
		if n.kind == kindBool {
			def.Value, ok = n.b, true
		}
	case TypeLong:
		if v, good := longLiteral(n); good {
			def.Value, ok = v, true
			if !canonicalInt(n, v) {
				def.Raw = n.raw()
			}
		}
	case TypeDouble:
		if v, good := doubleLiteral(n); good {
			def.Value, ok = v, true
			if !canonicalFloat(n, v) {
				def.Raw = n.raw()
			}
		}
	case TypeStringMap:
		if n.kind == kindObject {
			def.Value, def.Keys, ok = stringMapLiteral(n)
		}
	case TypeStringArray:
		def.Value, ok = arrayLiteral(n, func(e *node) (string, bool) { return e.s, e.kind == kindString })
	case TypeLongArray:
		var vs []int64
		if vs, ok = arrayLiteral(n, longLiteral); ok {
			def.Value = vs
			for i, e := range n.elems {
				if !canonicalInt(e, vs[i]) {
					def.Raw = n.raw()
					break
				}
			}
		}
	case TypeDoubleArray:
		var vs []float64
		if vs, ok = arrayLiteral(n, doubleLiteral); ok {
			def.Value = vs
			for i, e := range n.elems {
				if !canonicalFloat(e, vs[i]) {
					def.Raw = n.raw()
					break
				}
			}
		}
	case TypeBooleanArray:
		def.Value, ok = arrayLiteral(n, func(e *node) (bool, bool) { return e.b, e.kind == kindBool })
	case TypeMap:
		if n.kind == kindObject {
			keys, m := named(d, n, p, d.paramDef)
			def.Value, def.Keys, ok = m, keys, true
		}
	}
	if !ok {
		def.Value = n.generic()
		def.Raw, def.Keys = nil, nil
	}
}

// longLiteral reads a LONG literal: a whole JSON number, or a string holding
// one (Jackson coerces both).
func longLiteral(n *node) (int64, bool) {
	if n.kind != kindNumber && n.kind != kindString {
		return 0, false
	}
	if n.kind == kindString && !isJSONNumber(n.s) {
		return 0, false
	}
	return parseInteger(n.s)
}

// parseInteger parses a decimal int64 with an optional minus sign, without
// the error allocation of strconv for the common non-integer case.
func parseInteger(s string) (int64, bool) {
	digits := strings.TrimPrefix(s, "-")
	if digits == "" || len(digits) > 19 {
		return 0, false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	return v, err == nil
}

// doubleLiteral reads a DOUBLE literal: a JSON number, or a string holding one
// (Maestro reads DOUBLE as BigDecimal, which accepts both).
func doubleLiteral(n *node) (float64, bool) {
	if n.kind != kindNumber && n.kind != kindString {
		return 0, false
	}
	if n.kind == kindString && !isJSONNumber(n.s) {
		return 0, false
	}
	v, err := strconv.ParseFloat(n.s, 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, false
	}
	return v, true
}

// canonicalInt reports whether n is the number v written as the encoder
// writes it, so that no Raw copy is needed to write it back.
func canonicalInt(n *node, v int64) bool {
	var buf [24]byte
	return n.kind == kindNumber && string(strconv.AppendInt(buf[:0], v, 10)) == n.s
}

// canonicalFloat is canonicalInt for DOUBLE values.
func canonicalFloat(n *node, v float64) bool {
	var buf [32]byte
	return n.kind == kindNumber && string(strconv.AppendFloat(buf[:0], v, 'g', -1, 64)) == n.s
}

// isJSONNumber reports whether s is a number in JSON syntax.
func isJSONNumber(s string) bool {
	if s == "" || !(s[0] == '-' || s[0] >= '0' && s[0] <= '9') {
		return false
	}
	return json.Valid([]byte(s))
}

// stringMapLiteral reads an object whose values are all strings.
func stringMapLiteral(n *node) (map[string]string, []string, bool) {
	m := make(map[string]string, len(n.members))
	keys := make([]string, 0, len(n.members))
	for _, mem := range n.members {
		if mem.val.kind != kindString {
			return nil, nil, false
		}
		m[mem.key] = mem.val.s
		keys = append(keys, mem.key)
	}
	return m, keys, true
}

// arrayLiteral reads an array whose elements all satisfy elem.
func arrayLiteral[T any](n *node, elem func(*node) (T, bool)) ([]T, bool) {
	if n.kind != kindArray {
		return nil, false
	}
	out := make([]T, 0, len(n.elems))
	for _, e := range n.elems {
		v, ok := elem(e)
		if !ok {
			return nil, false
		}
		out = append(out, v)
	}
	return out, true
}

// duration decodes a ParsableDuration: whole seconds, a duration string, or a
// string with "$" references resolved at run time.
func (d *decoder) duration(n *node, p loc) *ParsableDuration {
	return parsable(d, n, p, parsableDurationFrom)
}

// parsable decodes an optional value with from, reporting its error at p.
func parsable[T any](d *decoder, n *node, p loc, from func(*node) (*T, error)) *T {
	if isNull(n) {
		return nil
	}
	v, err := from(n)
	if err != nil {
		d.fail(p, err.Error())
		return nil
	}
	return v
}

// parsableDurationFrom reads a ParsableDuration from a node.
func parsableDurationFrom(n *node) (*ParsableDuration, error) {
	switch n.kind {
	case kindNumber:
		v, ok := parseInteger(n.s)
		if !ok {
			return nil, fmt.Errorf("must be a whole number of seconds or a duration string, got %s", n.s)
		}
		pd := &ParsableDuration{Seconds: v}
		if !canonicalInt(n, v) {
			pd.Raw = n.raw()
		}
		return pd, nil
	case kindString:
		if strings.Contains(n.s, "$") {
			return &ParsableDuration{Expr: n.s}, nil
		}
		dur, err := ParseDuration(n.s)
		if err != nil {
			// Kept unresolved: validation reports it with the rule that applies.
			return &ParsableDuration{Expr: n.s}, nil
		}
		return &ParsableDuration{Seconds: ceilSeconds(dur), Raw: n.raw()}, nil
	}
	return nil, fmt.Errorf("must be a number of seconds or a duration string, got %s", n.kind)
}

// long decodes a ParsableLong: a whole number, a string holding one or a
// duration (backoff fields), or a "$param" string resolved at run time.
func (d *decoder) long(n *node, p loc) *ParsableLong {
	return parsable(d, n, p, parsableLongFrom)
}

// parsableLongFrom reads a ParsableLong from a node.
func parsableLongFrom(n *node) (*ParsableLong, error) {
	switch n.kind {
	case kindNumber:
		v, ok := parseInteger(n.s)
		if !ok {
			return nil, fmt.Errorf("must be a whole number, got %s", n.s)
		}
		pl := &ParsableLong{Value: v}
		if !canonicalInt(n, v) {
			pl.Raw = n.raw()
		}
		return pl, nil
	case kindString:
		if v, ok := parseInteger(strings.TrimSpace(n.s)); ok {
			return &ParsableLong{Value: v, Raw: n.raw()}, nil
		}
		if !strings.Contains(n.s, "$") {
			if dur, err := ParseDuration(n.s); err == nil {
				return &ParsableLong{Value: ceilSeconds(dur), Raw: n.raw()}, nil
			}
		}
		// "$param" references, and anything else, stay unresolved; validation
		// rejects what is neither a number nor a reference.
		return &ParsableLong{Expr: n.s}, nil
	}
	return nil, fmt.Errorf("must be a whole number or a string, got %s", n.kind)
}

// list decodes an array whose elements one decodes, reporting a non-array
// as "must be <what>"; elements one rejects are left out (one reports them).
func list[T any](d *decoder, n *node, p loc, what string, one func(*node, loc) (T, bool)) []T {
	if isNull(n) {
		return nil
	}
	if n.kind != kindArray {
		d.wrongType(n, p, what)
		return nil
	}
	p = p.fix()
	out := make([]T, 0, len(n.elems))
	for i, e := range n.elems {
		if v, ok := one(e, p.at(i)); ok {
			out = append(out, v)
		}
	}
	return out
}

// timeTriggers decodes the time trigger list.
func (d *decoder) timeTriggers(n *node, p loc) []TimeTrigger {
	return list(d, n, p, "an array of time triggers", d.timeTrigger)
}

// timeTrigger decodes one time trigger; "type" selects its form.
func (d *decoder) timeTrigger(n *node, p loc) (TimeTrigger, bool) {
	if !d.object(n, p) {
		return TimeTrigger{}, false
	}
	t := TimeTrigger{}
	sawType := false
	for _, m := range n.members {
		mp := p.key(m.key)
		switch m.key {
		case "type":
			var name string
			name, sawType = d.requiredType(m.val, mp)
			t.Type, _ = ParseTimeTriggerType(name)
		case "cron":
			t.Cron = d.str(m.val, mp)
		case "expression":
			t.Expression = d.str(m.val, mp)
		case "interval":
			t.Interval = d.str(m.val, mp)
		case "start":
			t.Start = d.str(m.val, mp)
		case "timezone":
			t.Timezone = d.str(m.val, mp)
		case "fuzzy_max_delay":
			t.FuzzyMaxDelay = d.duration(m.val, mp)
		default:
			setExtra(&t.Extra, m)
		}
	}
	if !sawType {
		d.fail(p.key("type"), "required")
	}
	return t, true
}

// signalTriggers decodes the signal trigger list.
func (d *decoder) signalTriggers(n *node, p loc) []SignalTrigger {
	return list(d, n, p, "an array of signal triggers", d.signalTrigger)
}

// signalTrigger decodes one signal trigger.
func (d *decoder) signalTrigger(n *node, p loc) (SignalTrigger, bool) {
	if !d.object(n, p) {
		return SignalTrigger{}, false
	}
	t := SignalTrigger{}
	p = p.fix()
	for _, m := range n.members {
		mp := p.key(m.key)
		switch m.key {
		case "definitions":
			if isNull(m.val) || !d.object(m.val, mp) {
				continue
			}
			t.Names, t.Definitions = named(d, m.val, mp, d.signalTriggerDef)
		case "condition":
			t.Condition = d.str(m.val, mp)
		case "dedup_expr":
			t.DedupExpr = d.str(m.val, mp)
		case "params":
			t.Params = d.params(m.val, mp)
		default:
			setExtra(&t.Extra, m)
		}
	}
	return t, true
}

// signalTriggerDef decodes the matching rules for one signal name.
func (d *decoder) signalTriggerDef(n *node, p loc) *SignalTriggerDef {
	if isNull(n) {
		return &SignalTriggerDef{}
	}
	if !d.object(n, p) {
		return nil
	}
	def := &SignalTriggerDef{}
	p = p.fix()
	for _, m := range n.members {
		mp := p.key(m.key)
		switch m.key {
		case "match_params":
			def.MatchParams, def.MatchNames = d.matchParams(m.val, mp, false)
		case "join_keys":
			def.JoinKeys = d.strList(m.val, mp)
		default:
			setExtra(&def.Extra, m)
		}
	}
	return def
}

// matchParams decodes a name -> match condition object. Trigger conditions
// hold a literal "value"; step dependencies hold a "param" definition.
func (d *decoder) matchParams(n *node, p loc, dependency bool) (map[string]*SignalMatchParam, []string) {
	if isNull(n) || !d.object(n, p) {
		return nil, nil
	}
	names, out := named(d, n, p, func(n *node, p loc) *SignalMatchParam {
		return d.matchParam(n, p, dependency)
	})
	return out, names
}

// matchParam decodes one match condition of matchParams.
func (d *decoder) matchParam(n *node, p loc, dependency bool) *SignalMatchParam {
	if !d.object(n, p) {
		return nil
	}
	smp := &SignalMatchParam{}
	p = p.fix()
	for _, f := range n.members {
		fp := p.key(f.key)
		switch {
		case f.key == "operator":
			smp.Operator = SignalOperator(d.str(f.val, fp))
		case f.key == "value" && !dependency:
			if !isNull(f.val) {
				smp.Value = matchLiteral(f.val)
			}
		case f.key == "param" && dependency:
			if !isNull(f.val) {
				smp.Param = d.paramDef(f.val, fp)
			}
		default:
			setExtra(&smp.Extra, f)
		}
	}
	return smp
}

// matchLiteral reads a signal trigger match value: a whole number becomes an
// int64, a string stays a string, anything else is kept as generic JSON for
// validation to report.
func matchLiteral(n *node) any {
	switch n.kind {
	case kindString:
		return n.s
	case kindNumber:
		if v, ok := parseInteger(n.s); ok {
			return v
		}
	}
	return n.generic()
}

// steps decodes a list of step wrappers.
func (d *decoder) steps(n *node, p loc) []Step {
	return list(d, n, p, "an array of steps", d.stepWrapper)
}

// stepWrapper decodes {"<kind>": {...}}.
func (d *decoder) stepWrapper(n *node, p loc) (Step, bool) {
	const kinds = "step, subworkflow, foreach, while or template"
	if n.kind != kindObject {
		d.failf(p, "must be a step wrapper object {\"<kind>\": {...}} with kind %s, got %s", kinds, n.kind)
		return Step{}, false
	}
	if len(n.members) != 1 {
		d.failf(p, "a step wrapper must have exactly one key (%s), got %d", kinds, len(n.members))
		return Step{}, false
	}
	m := n.members[0]
	kind, ok := ParseStepKind(m.key)
	if !ok {
		d.failf(p, "unknown step kind %q (want %s)", m.key, kinds)
		return Step{}, false
	}
	mp := p.key(m.key)
	if !d.object(m.val, mp) {
		return Step{}, false
	}
	return d.step(kind, m.val, mp), true
}

// step decodes the body of a step of the given kind. Keys that do not apply
// to the kind are kept in Extra.
func (d *decoder) step(kind StepKind, n *node, p loc) Step {
	s := Step{Kind: kind}
	p = p.fix()
	for _, m := range n.members {
		mp := p.key(m.key)
		switch m.key {
		case "id":
			s.ID = d.str(m.val, mp)
			continue
		case "name":
			s.Name = d.str(m.val, mp)
			continue
		case "description":
			s.Description = d.str(m.val, mp)
			continue
		case "transition":
			s.Transition = d.transition(m.val, mp)
			continue
		case "failure_mode":
			s.FailureMode, _ = ParseFailureMode(d.str(m.val, mp))
			continue
		case "tags":
			s.Tags = d.tags(m.val, mp)
			continue
		case "timeout":
			s.Timeout = d.duration(m.val, mp)
			continue
		case "signal_dependencies":
			s.SignalDependencies = d.signalDependencies(m.val, mp)
			continue
		case "signal_outputs":
			s.SignalOutputs = d.signalOutputs(m.val, mp)
			continue
		case "params":
			s.Params = d.params(m.val, mp)
			continue
		}
		if d.kindField(&s, m, mp) {
			continue
		}
		setExtra(&s.Extra, m)
	}
	return s
}

// kindField decodes a member that belongs to the step's kind, reporting
// whether it did.
func (d *decoder) kindField(s *Step, m member, p loc) bool {
	switch s.Kind {
	case KindStep:
		switch m.key {
		case "type":
			if st := d.str(m.val, p); st != "" {
				s.Type, _ = ParseStepType(st)
			}
		case "sub_type":
			s.SubType = d.str(m.val, p)
		case "sub_type_version":
			s.SubTypeVersion = d.str(m.val, p)
		case "retry_policy":
			s.RetryPolicy = d.retryPolicy(m.val, p)
		default:
			return false
		}
	case KindSubworkflow:
		switch m.key {
		case "sync":
			s.Sync = d.boolPtr(m.val, p)
		case "explicit_params":
			s.ExplicitParams = d.boolPtr(m.val, p)
		default:
			return false
		}
	case KindForeach:
		switch m.key {
		case "concurrency":
			s.Concurrency = d.int64Ptr(m.val, p)
		case "strict_ordering":
			s.StrictOrdering = d.boolPtr(m.val, p)
		case "items_from":
			s.ItemsFrom = d.itemsFrom(m.val, p)
		case "steps":
			s.Steps = d.steps(m.val, p)
		default:
			return false
		}
	case KindWhile:
		switch m.key {
		case "condition":
			s.Condition = d.str(m.val, p)
		case "steps":
			s.Steps = d.steps(m.val, p)
		default:
			return false
		}
	default:
		return false
	}
	return true
}

// itemsFrom decodes a foreach step's items_from object. It is this
// project's, not Maestro's: an unknown key is an error, not kept.
func (d *decoder) itemsFrom(n *node, p loc) *ItemsFrom {
	if isNull(n) || !d.object(n, p) {
		return nil
	}
	f := &ItemsFrom{}
	for _, m := range n.members {
		mp := p.key(m.key)
		switch m.key {
		case "s3_uri":
			f.S3URI = d.str(m.val, mp)
		case "format":
			f.Format = d.str(m.val, mp)
		case "fields":
			if isNull(m.val) || !d.object(m.val, mp) {
				continue
			}
			f.Fields = make(map[string]ParamType, len(m.val.members))
			for _, fm := range m.val.members {
				t, ok := ParseParamType(d.str(fm.val, mp.key(fm.key)))
				if !ok {
					d.failf(mp.key(fm.key), "unknown param type %q", fm.val.s)
					continue
				}
				if _, dup := f.Fields[fm.key]; !dup {
					f.FieldOrder = append(f.FieldOrder, fm.key)
				}
				f.Fields[fm.key] = t
			}
		default:
			d.failf(mp, "unknown field %q of items_from (want s3_uri, format or fields)", m.key)
		}
	}
	return f
}

// transition decodes {"successors": {id: condition}, "predecessors": [...]}.
func (d *decoder) transition(n *node, p loc) Transition {
	t := Transition{}
	if isNull(n) || !d.object(n, p) {
		return t
	}
	for _, m := range n.members {
		mp := p.key(m.key)
		switch m.key {
		case "successors":
			if isNull(m.val) || !d.object(m.val, mp) {
				continue
			}
			t.Successors = make([]Successor, 0, len(m.val.members))
			for _, sm := range m.val.members {
				switch sm.val.kind {
				case kindString:
					t.Successors = append(t.Successors, Successor{StepID: sm.key, Condition: sm.val.s})
				case kindBool:
					t.Successors = append(t.Successors, Successor{StepID: sm.key, Condition: strconv.FormatBool(sm.val.b)})
				default:
					d.wrongType(sm.val, mp.key(sm.key), "a condition string or a boolean")
				}
			}
		case "predecessors":
			t.Predecessors = d.strList(m.val, mp)
		default:
			setExtra(&t.Extra, m)
		}
	}
	return t
}

// retryPolicy decodes a typed step's retry policy.
func (d *decoder) retryPolicy(n *node, p loc) *RetryPolicy {
	if isNull(n) || !d.object(n, p) {
		return nil
	}
	rp := &RetryPolicy{}
	for _, m := range n.members {
		mp := p.key(m.key)
		switch m.key {
		case "error_retry_limit":
			rp.ErrorRetryLimit = d.long(m.val, mp)
		case "platform_retry_limit":
			rp.PlatformRetryLimit = d.long(m.val, mp)
		case "timeout_retry_limit":
			rp.TimeoutRetryLimit = d.long(m.val, mp)
		case "backoff":
			rp.Backoff = d.backoff(m.val, mp)
		default:
			setExtra(&rp.Extra, m)
		}
	}
	return rp
}

// backoff decodes a retry backoff.
func (d *decoder) backoff(n *node, p loc) *Backoff {
	if isNull(n) || !d.object(n, p) {
		return nil
	}
	b := &Backoff{}
	for _, m := range n.members {
		mp := p.key(m.key)
		if f := b.field(m.key); f != nil {
			*f = d.long(m.val, mp)
			continue
		}
		if m.key == "type" {
			b.Type, _ = ParseBackoffType(d.str(m.val, mp))
			continue
		}
		setExtra(&b.Extra, m)
	}
	return b
}

// backoffFieldNames lists the JSON names of Backoff's numeric fields in the
// order they are written.
func backoffFieldNames() []string {
	return []string{
		"error_retry_backoff_in_secs", "error_retry_exponent", "error_retry_limit_in_secs",
		"platform_retry_backoff_in_secs", "platform_retry_exponent", "platform_retry_limit_in_secs",
		"timeout_retry_backoff_in_secs", "timeout_retry_exponent", "timeout_retry_limit_in_secs",
	}
}

// field returns the Backoff field with JSON name k, or nil.
func (b *Backoff) field(k string) **ParsableLong {
	switch k {
	case "error_retry_backoff_in_secs":
		return &b.ErrorRetryBackoffInSecs
	case "error_retry_exponent":
		return &b.ErrorRetryExponent
	case "error_retry_limit_in_secs":
		return &b.ErrorRetryLimitInSecs
	case "platform_retry_backoff_in_secs":
		return &b.PlatformRetryBackoffInSecs
	case "platform_retry_exponent":
		return &b.PlatformRetryExponent
	case "platform_retry_limit_in_secs":
		return &b.PlatformRetryLimitInSecs
	case "timeout_retry_backoff_in_secs":
		return &b.TimeoutRetryBackoffInSecs
	case "timeout_retry_exponent":
		return &b.TimeoutRetryExponent
	case "timeout_retry_limit_in_secs":
		return &b.TimeoutRetryLimitInSecs
	}
	return nil
}

// signalDependencies decodes a step's signal dependency list.
func (d *decoder) signalDependencies(n *node, p loc) []SignalDependency {
	return list(d, n, p, "an array of signal dependencies", d.signalDependency)
}

// signalDependency decodes one signal dependency.
func (d *decoder) signalDependency(n *node, p loc) (SignalDependency, bool) {
	if !d.object(n, p) {
		return SignalDependency{}, false
	}
	sd := SignalDependency{}
	p = p.fix()
	for _, m := range n.members {
		mp := p.key(m.key)
		switch m.key {
		case "name":
			sd.Name = d.str(m.val, mp)
		case "match_params":
			sd.MatchParams, sd.MatchNames = d.matchParams(m.val, mp, true)
		default:
			setExtra(&sd.Extra, m)
		}
	}
	return sd, true
}

// signalOutputs decodes a step's signal output list.
func (d *decoder) signalOutputs(n *node, p loc) []SignalOutput {
	return list(d, n, p, "an array of signal outputs", d.signalOutput)
}

// signalOutput decodes one signal output.
func (d *decoder) signalOutput(n *node, p loc) (SignalOutput, bool) {
	if !d.object(n, p) {
		return SignalOutput{}, false
	}
	so := SignalOutput{}
	p = p.fix()
	for _, m := range n.members {
		mp := p.key(m.key)
		switch m.key {
		case "name":
			so.Name = d.str(m.val, mp)
		case "params":
			so.Params = d.params(m.val, mp)
		case "payload":
			so.Payload = d.params(m.val, mp)
		default:
			setExtra(&so.Extra, m)
		}
	}
	return so, true
}
