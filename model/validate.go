package model

import (
	"encoding/json"
	"fmt"
	"iter"
	"math"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// ValidateOptions configures Validate.
type ValidateOptions struct {
	// Expressions compiles and type-checks every expression of the
	// definition; nil skips expression checks.
	Expressions ExpressionChecker
	// Now is the clock for time trigger checks (the next two fire times are
	// computed from it); nil means time.Now.
	Now func() time.Time
}

// Validate applies Maestro's create-time rules to a decoded definition and
// returns every violation at once, each with the JSON path of the field and a
// message naming the rule and the value. It returns nil when the definition
// is valid. See the package documentation for the list of rules.
func Validate(d *Definition, opts ValidateOptions) Errors {
	v := &validator{opts: opts, ids: make(map[string]loc)}
	if v.opts.Now == nil {
		v.opts.Now = time.Now
	}
	root := newRoot().here()
	if d == nil {
		v.fail(root, "definition is required")
		return v.errs.errs
	}
	if d.Properties != nil {
		key := "properties"
		if d.PropertiesSnapshot {
			key = "properties_snapshot"
		}
		v.properties(d.Properties, root.key(key))
	}
	if d.Workflow == nil {
		v.fail(root.key("workflow"), "required")
		return v.errs.errs
	}
	v.workflow(d.Workflow, root.key("workflow"))
	return v.errs.errs
}

// validator walks a definition and collects rule violations.
type validator struct {
	opts  ValidateOptions
	errs  errorList
	ids   map[string]loc // step id -> where it was first defined
	total int            // steps seen, nested ones included
	// stepBase holds what every step expression may name: system params,
	// workflow params and <step>__<param> references. Only built when
	// expressions are checked.
	stepBase map[string]ParamType
}

// stepCtx is what a step inherits from the loops that enclose it.
type stepCtx struct {
	depth     int                  // loop nesting depth of the step's list
	loopNames map[string]loc       // loop param names of enclosing loops
	loopVars  map[string]ParamType // variables enclosing loops provide (expressions only)
}

// fail records msg at l.
func (v *validator) fail(l loc, msg string) { v.errs.add(l.get(), msg) }

// failf records a formatted message at l.
func (v *validator) failf(l loc, format string, args ...any) {
	v.errs.addf(l.get(), format, args...)
}

func (v *validator) checking() bool { return v.opts.Expressions != nil }

// expr checks one expression with the configured checker.
func (v *validator) expr(src string, want ParamType, sc Scope, p loc) {
	if !v.checking() || src == "" {
		return
	}
	if err := v.opts.Expressions.CheckExpression(src, want, sc); err != nil {
		v.fail(p, err.Error())
	}
}

// maxLen checks a length limit counted in characters.
func (v *validator) maxLen(s string, limit int, p loc, what string) {
	if len(s) <= limit {
		return
	}
	if n := utf8.RuneCountInString(s); n > limit {
		v.failf(p, "%s is %d characters long; the limit is %d", what, n, limit)
	}
}

// rangeCheck checks lo <= x <= hi.
func (v *validator) rangeCheck(x, lo, hi int64, p loc, what string) {
	if x < lo || x > hi {
		v.failf(p, "%s %d is out of range %d..%d", what, x, lo, hi)
	}
}

func (v *validator) properties(pr *Properties, p loc) {
	p = p.fix()
	if pr.RunStrategy != nil {
		v.runStrategy(pr.RunStrategy, p.key("run_strategy"))
	}
	if pr.StepConcurrency != nil {
		v.rangeCheck(*pr.StepConcurrency, 1, StepConcurrencyMaxLimit, p.key("step_concurrency"), "step_concurrency")
	}
	v.maxLen(pr.Description, FieldSizeLimit, p.key("description"), "description")
	v.tags(pr.Tags, p.key("tags"))
}

func (v *validator) runStrategy(rs *RunStrategy, p loc) {
	p = p.fix()
	rule := rs.Rule
	rulePath := p
	if rs.Shape == "object" {
		rulePath = p.key("rule")
	}
	if rule == "" {
		rule = RunSequential
	} else if !oneOf(rule, RunSequential, RunStrictSequential, RunFirstOnly, RunLastOnly, RunParallel, RunSerialLatestOnly) {
		v.failf(rulePath, "unknown run strategy rule %q (want SEQUENTIAL, STRICT_SEQUENTIAL, FIRST_ONLY, LAST_ONLY, PARALLEL or SERIAL_LATEST_ONLY)", rs.Rule)
		return
	}
	wc := rs.WorkflowConcurrency
	wcPath := p
	if rs.Shape == "object" {
		wcPath = p.key("workflow_concurrency")
	}
	if rs.Shape != "number" && wc == 0 {
		return // the rule's default
	}
	switch {
	case wc < 1 || wc > WorkflowConcurrencyMaxLimit:
		v.failf(wcPath, "workflow_concurrency %d is out of range 1..%d", wc, WorkflowConcurrencyMaxLimit)
	case wc > 1 && rule != RunParallel:
		v.failf(wcPath, "workflow_concurrency %d > 1 is only allowed with the PARALLEL rule, not %s", wc, rule)
	}
}

// oneOf reports whether x equals one of the values.
func oneOf[T comparable](x T, values ...T) bool {
	for _, v := range values {
		if x == v {
			return true
		}
	}
	return false
}

func (v *validator) workflow(w *Workflow, p loc) {
	p = p.fix()
	if w.ID == "" {
		v.fail(p.key("id"), "required")
	} else {
		v.workflowID(w.ID, p.key("id"))
	}
	v.maxLen(w.Name, NameLengthLimit, p.key("name"), "name")
	v.maxLen(w.Description, FieldSizeLimit, p.key("description"), "description")
	v.tags(w.Tags, p.key("tags"))
	v.timeout(w.Timeout, p.key("timeout"), "timeout")
	if w.Criticality != "" && !oneOf(w.Criticality, CriticalityCritical, CriticalityHigh, CriticalityMedium, CriticalityLow) {
		v.failf(p.key("criticality"), "unknown criticality %q (want CRITICAL, HIGH, MEDIUM or LOW)", w.Criticality)
	}
	if w.InstanceStepConcurrency != nil {
		v.rangeCheck(*w.InstanceStepConcurrency, 1, InstanceStepConcurrencyMaxLimit-1,
			p.key("instance_step_concurrency"), "instance_step_concurrency")
	}

	var wfScope Scope
	if v.checking() {
		wfParams := paramTypes(&w.Params)
		wfScope = newScope(SystemParams(), wfParams)
		refs := make(map[string]ParamType)
		collectStepRefs(w.Steps, refs)
		v.stepBase = flatten(SystemParams(), wfParams, refs)
	}
	v.params(&w.Params, p.key("params"), wfScope, true)
	for i := range w.TimeTriggers {
		v.timeTrigger(&w.TimeTriggers[i], p.key("time_triggers").at(i))
	}
	for i := range w.SignalTriggers {
		v.signalTrigger(&w.SignalTriggers[i], p.key("signal_triggers").at(i), wfScope)
	}
	if n := distinctSignalNames(w.SignalTriggers); n > MaxSignalTriggerNames {
		v.failf(p.key("signal_triggers"), "use %d distinct signal names; at most %d are allowed across a workflow's signal triggers", n, MaxSignalTriggerNames)
	}
	if len(w.Steps) == 0 {
		v.fail(p.key("steps"), "must have at least one step")
		return
	}
	v.level(w.Steps, p.key("steps"), stepCtx{})
	if v.total > StepListSizeLimit {
		v.failf(p.key("steps"), "the definition has %d steps, nested foreach/while steps included; the limit is %d",
			v.total, StepListSizeLimit)
	}
}

// collectStepRefs adds <step>__<param> for every param of every step.
func collectStepRefs(steps []Step, refs map[string]ParamType) {
	for i := range steps {
		s := &steps[i]
		for name, def := range s.Params.Defs {
			if def != nil {
				refs[s.ID+StepParamSeparator+name] = def.Type
			}
		}
		collectStepRefs(s.Steps, refs)
	}
}

// level validates one list of steps (the workflow's or a loop body) and its DAG.
func (v *validator) level(steps []Step, p loc, ctx stepCtx) {
	p = p.fix()
	index := make(map[string]int, len(steps))
	for i := range steps {
		if id := steps[i].ID; id != "" {
			if _, dup := index[id]; !dup {
				index[id] = i
			}
		}
	}
	for i := range steps {
		v.step(&steps[i], p.at(i).key(string(steps[i].Kind)), ctx)
	}
	v.dag(steps, p, index)
}

// dag checks successors, given predecessors and cycles of one step list.
func (v *validator) dag(steps []Step, p loc, index map[string]int) {
	adj := make([][]int, len(steps))
	preds := make([][]string, len(steps))
	for i := range steps {
		s := &steps[i]
		sp := p.at(i).key(string(s.Kind)).key("transition")
		for _, e := range s.Transition.Successors {
			j, ok := index[e.StepID]
			if !ok {
				v.failf(sp.key("successors"), "unknown step %q", e.StepID)
				continue
			}
			adj[i] = append(adj[i], j)
			preds[j] = append(preds[j], s.ID)
		}
	}
	for i := range steps {
		given := steps[i].Transition.Predecessors
		if given == nil {
			continue
		}
		if !sameSet(given, preds[i]) {
			v.failf(p.at(i).key(string(steps[i].Kind)).key("transition").key("predecessors"),
				"predecessors %s do not match the computed predecessors %s", listString(given), listString(preds[i]))
		}
	}
	for _, c := range findCycles(adj) {
		ids := make([]string, len(c))
		for k, i := range c {
			ids[k] = steps[i].ID
		}
		v.failf(p, "cycle: %s", strings.Join(ids, " -> "))
	}
}

// sameSet reports whether a and b hold the same strings, ignoring order and repeats.
func sameSet(a, b []string) bool {
	set := make(map[string]bool, len(a))
	for _, s := range a {
		set[s] = true
	}
	other := make(map[string]bool, len(b))
	for _, s := range b {
		if !set[s] {
			return false
		}
		other[s] = true
	}
	return len(other) == len(set)
}

// listString renders ids as [a, b].
func listString(ids []string) string {
	sorted := append([]string(nil), ids...)
	sort.Strings(sorted)
	return "[" + strings.Join(sorted, ", ") + "]"
}

// findCycles returns one cycle per back edge found by a depth-first search in
// definition order; each cycle lists node indexes and repeats its first node
// at the end.
func findCycles(adj [][]int) [][]int {
	const (
		white = iota
		grey
		black
	)
	color := make([]int, len(adj))
	var stack []int
	var cycles [][]int
	var visit func(i int)
	visit = func(i int) {
		color[i] = grey
		stack = append(stack, i)
		for _, j := range adj[i] {
			switch color[j] {
			case white:
				visit(j)
			case grey:
				start := len(stack) - 1
				for stack[start] != j {
					start--
				}
				c := append(append([]int(nil), stack[start:]...), j)
				cycles = append(cycles, c)
			}
		}
		stack = stack[:len(stack)-1]
		color[i] = black
	}
	for i := range adj {
		if color[i] == white {
			visit(i)
		}
	}
	return cycles
}

// stepScope returns what the expressions of step s may name.
func (v *validator) stepScope(s *Step, ctx stepCtx) Scope {
	return newScope(v.stepBase, ctx.loopVars, kindParams(s.Kind), paramTypes(&s.Params))
}

func (v *validator) step(s *Step, p loc, ctx stepCtx) {
	p = p.fix()
	v.total++
	idPath := p.key("id")
	if s.ID == "" {
		v.fail(idPath, "required")
	} else {
		v.stepID(s.ID, idPath)
		if first, dup := v.ids[s.ID]; dup {
			v.failf(idPath, "duplicate step id %q (also defined at %s); step ids must be unique across all nesting levels", s.ID, first.get())
		} else {
			v.ids[s.ID] = idPath
		}
	}
	v.maxLen(s.Name, NameLengthLimit, p.key("name"), "name")
	v.maxLen(s.Description, FieldSizeLimit, p.key("description"), "description")
	if s.FailureMode != "" && !oneOf(s.FailureMode, FailImmediately, FailAfterRunning, IgnoreFailure) {
		v.failf(p.key("failure_mode"), "unknown failure mode %q (want FAIL_IMMEDIATELY, FAIL_AFTER_RUNNING or IGNORE_FAILURE)", s.FailureMode)
	}
	v.tags(s.Tags, p.key("tags"))
	v.timeout(s.Timeout, p.key("timeout"), "timeout")

	var sc Scope
	if v.checking() {
		sc = v.stepScope(s, ctx)
	}
	v.params(&s.Params, p.key("params"), sc, true)
	v.signalDependencies(s.SignalDependencies, p.key("signal_dependencies"), sc)
	v.signalOutputs(s.SignalOutputs, p.key("signal_outputs"), sc)
	for _, e := range s.Transition.Successors {
		if c := strings.TrimSpace(e.Condition); c != "true" && c != "false" {
			v.expr(e.Condition, TypeBoolean, sc, p.key("transition").key("successors").key(e.StepID))
		}
	}

	switch s.Kind {
	case KindStep:
		switch {
		case s.Type == "":
			v.fail(p.key("type"), "required")
		case !oneOf(s.Type, StepNoOp, StepSleep, StepTitus, StepNotebook, StepKubernetes, StepHTTP, StepJoin, StepLambda, StepCallback, StepECS, StepBatch):
			v.failf(p.key("type"), "unknown step type %q (want NoOp, Sleep, Titus, Notebook, Kubernetes, Http, Join, Lambda, Callback, Ecs or Batch)", s.Type)
		}
		if s.RetryPolicy != nil {
			v.retryPolicy(s.RetryPolicy, p.key("retry_policy"))
		}
	case KindSubworkflow:
		v.requiredStringParam(&s.Params, "subworkflow_id", p.key("params"), true)
		v.requiredStringParam(&s.Params, "subworkflow_version", p.key("params"), false)
	case KindForeach, KindWhile:
		v.loop(s, p, ctx, sc)
	case KindTemplate:
		// A placeholder Maestro resolves elsewhere; nothing more to check.
	default:
		v.failf(p, "unknown step kind %q", s.Kind)
	}
}

// itemsFrom checks a foreach step's items_from and returns the loop params
// its declared fields give the body.
func (v *validator) itemsFrom(f *ItemsFrom, p loc, ctx stepCtx) map[string]ParamType {
	if f.S3URI == "" {
		v.fail(p.key("s3_uri"), "required: the s3://bucket/key of the object whose items are the iterations")
	} else if _, _, err := ParseS3URI(f.S3URI); err != nil {
		v.failf(p.key("s3_uri"), "%v", err)
	}
	format := f.ItemsFormat(f.S3URI)
	switch {
	case f.Format != "" && format != ItemsJSONL && format != ItemsCSV && format != ItemsJSON:
		v.failf(p.key("format"), "unknown format %q (want jsonl, csv or json)", f.Format)
	case format == "" && f.S3URI != "":
		v.fail(p.key("format"), "required (jsonl, csv or json) when the key does not end in .jsonl, .ndjson, .csv or .json")
	}
	entries := make(map[string]ParamType, len(f.Fields))
	for _, name := range f.FieldOrder {
		fp := p.key("fields").key(name)
		t := f.Fields[name]
		v.paramName(name, fp)
		if ReservedItemField(name) {
			v.failf(fp, "%q is a name the loop gives each iteration itself; an item field may not take it", name)
		}
		if outer, dup := ctx.loopNames[name]; dup {
			v.failf(fp, "loop param %q is already defined by an enclosing loop at %s", name, outer.get())
		}
		if format == ItemsCSV && t != TypeString {
			v.failf(fp, "a CSV item's fields are STRING, got %q", t)
		}
		entries[name] = t
	}
	return entries
}

// ReservedItemField reports whether an items_from item's field may not be
// named name: the loop (loop_index) or the runtime gives every iteration
// that param (ChildOwnParam).
func ReservedItemField(name string) bool {
	return name == "loop_index" || ChildOwnParam(name)
}

// ChildOwnParam reports whether param name is one a child run (an
// iteration, a subworkflow's instance) computes for itself rather than
// takes from its parent: its identity and how it was started.
func ChildOwnParam(name string) bool {
	switch name {
	case "workflow_id", "workflow_instance_id", "RUN_POLICY", "INITIATOR_TYPE", "INITIATOR_TIMEZONE",
		"INITIATOR_RUNNER_NAME", "FIRST_TIME_TRIGGER_TIMEZONE", "step_instance_uuid", "step_attempt_id", "step_id",
		"loop_params":
		return true
	}
	return false
}

// requiredStringParam checks that param name exists (when required) and is a STRING.
func (v *validator) requiredStringParam(ps *Params, name string, p loc, required bool) {
	def := ps.Defs[name]
	if def == nil {
		if required {
			v.failf(p.key(name), "required: a subworkflow step names the workflow to run in param %s (STRING)", name)
		}
		return
	}
	if def.Type != TypeString {
		v.failf(p.key(name).key("type"), "%s must be of type STRING, got %q", name, def.Type)
	}
}

// loop validates what foreach and while steps add and walks their body.
func (v *validator) loop(s *Step, p loc, ctx stepCtx, sc Scope) {
	foreach := s.Kind == KindForeach
	lpPath := p.key("params").key("loop_params")
	entries := map[string]ParamType{}
	lp := s.Params.Defs["loop_params"]
	switch {
	case foreach && s.ItemsFrom != nil:
		if lp != nil {
			v.fail(lpPath, "a foreach step takes its iterations from loop_params or from items_from, not both")
		}
		entries = v.itemsFrom(s.ItemsFrom, p.key("items_from"), ctx)
	case lp == nil:
		v.fail(lpPath, "required")
	case lp.Type != TypeMap:
		v.failf(lpPath.key("type"), "loop_params must be of type MAP, got %q", lp.Type)
	case lp.HasValue:
		m, ok := lp.Value.(map[string]*ParamDefinition)
		if !ok {
			break // reported by the param checks
		}
		iterations, known := int64(1), true
		for _, name := range MapKeys(lp.Keys, m) {
			def := m[name]
			ep := lpPath.key("value").key(name)
			if def == nil {
				continue
			}
			v.paramName(name, ep)
			if outer, dup := ctx.loopNames[name]; dup {
				v.failf(ep, "loop param %q is already defined by an enclosing loop at %s", name, outer.get())
			}
			switch {
			case foreach && !def.Type.IsArray():
				v.failf(ep.key("type"), "foreach loop param %q must be of an array type (STRING_ARRAY, LONG_ARRAY, DOUBLE_ARRAY or BOOLEAN_ARRAY), got %q", name, def.Type)
			case !foreach && !def.Type.IsScalar():
				v.failf(ep.key("type"), "while loop param %q must be of a scalar type (STRING, LONG, DOUBLE or BOOLEAN), got %q", name, def.Type)
			}
			if foreach {
				entries[name] = elementType(def.Type)
				if n, ok := literalLen(def); ok && known {
					iterations = min(iterations*max(n, 0), math.MaxInt32)
				} else {
					known = false
				}
			} else {
				entries[name] = def.Type
			}
		}
		if foreach && known && iterations > IterationLimit {
			v.failf(lpPath, "the loop params give %d iterations; the limit is %d", iterations, IterationLimit)
		}
	}
	if foreach {
		if s.Concurrency != nil {
			v.rangeCheck(*s.Concurrency, 1, ForeachConcurrencyMaxLimit, p.key("concurrency"), "concurrency")
		}
	} else if s.Condition == "" {
		v.fail(p.key("condition"), "required")
	}
	inner := stepCtx{depth: ctx.depth + 1, loopNames: make(map[string]loc, len(ctx.loopNames)+len(entries))}
	for k, q := range ctx.loopNames {
		inner.loopNames[k] = q
	}
	for k := range entries {
		if _, dup := inner.loopNames[k]; !dup {
			inner.loopNames[k] = lpPath.key("value").key(k)
		}
	}
	if v.checking() {
		inner.loopVars = flatten(ctx.loopVars, paramTypes(&s.Params), entries, map[string]ParamType{"loop_index": TypeLong})
		if !foreach {
			v.expr(s.Condition, TypeBoolean, sc.With(entries), p.key("condition"))
		}
	}
	if inner.depth == WorkflowDepthLimit+1 {
		v.failf(p, "loop nesting depth %d exceeds the limit of %d", inner.depth, WorkflowDepthLimit)
	}
	if len(s.Steps) == 0 {
		v.fail(p.key("steps"), "must have at least one step")
		return
	}
	v.level(s.Steps, p.key("steps"), inner)
}

// literalLen returns the length of an array literal.
func literalLen(def *ParamDefinition) (int64, bool) {
	if !def.HasValue {
		return 0, false
	}
	switch a := def.Value.(type) {
	case []string:
		return int64(len(a)), true
	case []int64:
		return int64(len(a)), true
	case []float64:
		return int64(len(a)), true
	case []bool:
		return int64(len(a)), true
	}
	return 0, false
}

func (v *validator) retryPolicy(r *RetryPolicy, p loc) {
	v.parsableLong(r.ErrorRetryLimit, 0, MaxRetryLimit, p.key("error_retry_limit"), "error_retry_limit")
	v.parsableLong(r.PlatformRetryLimit, 0, MaxRetryLimit, p.key("platform_retry_limit"), "platform_retry_limit")
	v.parsableLong(r.TimeoutRetryLimit, 0, MaxRetryLimit, p.key("timeout_retry_limit"), "timeout_retry_limit")
	b := r.Backoff
	if b == nil {
		return
	}
	bp := p.key("backoff")
	if b.Type != "" && !oneOf(b.Type, ExponentialBackoff, FixedBackoff) {
		v.failf(bp.key("type"), "unknown backoff type %q (want EXPONENTIAL_BACKOFF or FIXED_BACKOFF)", b.Type)
	}
	for _, k := range backoffFieldNames() {
		if strings.HasSuffix(k, "_exponent") {
			v.parsableLong(*b.field(k), 0, math.MaxInt32, bp.key(k), k)
		} else {
			v.parsableLong(*b.field(k), 1, MaxRetryBackoffSecs, bp.key(k), k)
		}
	}
}

// parsableLong checks a number's range; "$param" strings are checked at run time.
func (v *validator) parsableLong(pl *ParsableLong, lo, hi int64, p loc, what string) {
	if pl == nil || v.unresolved(pl.Expr, p, what, "a number") {
		return
	}
	v.rangeCheck(pl.Value, lo, hi, p, what)
}

// unresolved reports whether expr, the text of a number or duration left
// for run time, is set; when it has no "$param" reference it reports that
// it is neither want nor one.
func (v *validator) unresolved(expr string, p loc, what, want string) bool {
	if expr == "" {
		return false
	}
	if !strings.Contains(expr, "$") {
		v.failf(p, "%s %q is neither %s nor a $param reference", what, expr, want)
	}
	return true
}

// timeout checks a timeout or delay: > 0 and at most MaxTimeout.
func (v *validator) timeout(d *ParsableDuration, p loc, what string) {
	if d == nil || v.unresolved(d.Expr, p, what, "a duration (e.g. 100s, 20 minutes, 1d 2h)") {
		return
	}
	switch limit := int64(MaxTimeout / time.Second); {
	case d.Seconds <= 0:
		v.failf(p, "%s must be greater than 0 seconds, got %d", what, d.Seconds)
	case d.Seconds > limit:
		v.failf(p, "%s of %d seconds exceeds the limit of 120 days (%d seconds)", what, d.Seconds, limit)
	}
}

// params validates a param set; names says whether the names follow the
// step id rules.
func (v *validator) params(ps *Params, p loc, sc Scope, names bool) {
	if len(ps.Defs) == 0 {
		return
	}
	p = p.fix()
	for _, name := range ps.OrderedNames() {
		pp := p.key(name)
		if names {
			v.paramName(name, pp)
		}
		v.paramDef(ps.Defs[name], pp, sc)
	}
}

func (v *validator) paramDef(def *ParamDefinition, p loc, sc Scope) {
	typeOK := def.Type.Valid()
	switch {
	case def.Type == "":
		v.fail(p.key("type"), "required")
	case !typeOK:
		v.failf(p.key("type"), "unknown param type %q (want STRING, LONG, DOUBLE, BOOLEAN, STRING_MAP, STRING_ARRAY, LONG_ARRAY, DOUBLE_ARRAY, BOOLEAN_ARRAY or MAP)", def.Type)
	}
	if def.Mode != "" && !oneOf(def.Mode, ModeConstant, ModeImmutable, ModeMutable, ModeMutableOnStart, ModeMutableOnStartRestart) {
		v.failf(p.key("mode"), "unknown param mode %q (want CONSTANT, IMMUTABLE, MUTABLE, MUTABLE_ON_START or MUTABLE_ON_START_RESTART)", def.Mode)
	}
	switch {
	case def.HasValue && def.Expression != "":
		v.fail(p, "must be defined with either a literal value or an expression, not both")
	case !def.HasValue && def.Expression == "":
		v.fail(p, "must be defined with either a literal value or an expression")
	}
	v.tags(def.Tags, p.key("tags"))
	if def.HasValue && typeOK {
		v.literal(def, p.key("value"), sc)
	}
	if def.Expression != "" {
		want := def.Type
		if !typeOK {
			want = ""
		}
		v.expr(def.Expression, want, sc, p.key("expression"))
	}
}

// literal checks that a literal value fits its type.
func (v *validator) literal(def *ParamDefinition, p loc, sc Scope) {
	ok := false
	switch def.Type {
	case TypeString:
		_, ok = def.Value.(string)
	case TypeLong:
		_, ok = def.Value.(int64)
	case TypeDouble:
		_, ok = def.Value.(float64)
	case TypeBoolean:
		_, ok = def.Value.(bool)
	case TypeStringMap:
		_, ok = def.Value.(map[string]string)
	case TypeStringArray:
		_, ok = def.Value.([]string)
	case TypeLongArray:
		_, ok = def.Value.([]int64)
	case TypeDoubleArray:
		_, ok = def.Value.([]float64)
	case TypeBooleanArray:
		_, ok = def.Value.([]bool)
	case TypeMap:
		var m map[string]*ParamDefinition
		if m, ok = def.Value.(map[string]*ParamDefinition); ok {
			p = p.fix()
			inner := sc
			if v.checking() {
				siblings := make(map[string]ParamType, len(m))
				for k, e := range m {
					if e != nil {
						siblings[k] = e.Type
					}
				}
				inner = sc.With(siblings)
			}
			for _, k := range MapKeys(def.Keys, m) {
				if m[k] == nil {
					v.fail(p.key(k), "must be a param definition, got null")
					continue
				}
				v.paramDef(m[k], p.key(k), inner)
			}
		}
	}
	if ok {
		return
	}
	// Name the first offending element or entry when there is one.
	switch val := def.Value.(type) {
	case []any:
		if elem := elementType(def.Type); elem != "" {
			for i, e := range val {
				if !genericFits(elem, e) {
					v.failf(p.at(i), "%s elements must be %s, got %s", def.Type, typeNoun(elem), describe(e))
					return
				}
			}
		}
	case map[string]any:
		if def.Type == TypeStringMap {
			keys := make([]string, 0, len(val))
			for k := range val {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				if _, isStr := val[k].(string); !isStr {
					v.failf(p.key(k), "STRING_MAP values must be strings, got %s", describe(val[k]))
					return
				}
			}
		}
	}
	v.failf(p, "%s value must be %s, got %s", def.Type, typeNoun(def.Type), describe(def.Value))
}

// genericFits reports whether a decoded-JSON value is a valid literal of a
// scalar type, as the decoder reads literals.
func genericFits(t ParamType, val any) bool {
	switch t {
	case TypeString:
		_, ok := val.(string)
		return ok
	case TypeBoolean:
		_, ok := val.(bool)
		return ok
	case TypeLong, TypeDouble:
		var n *node
		switch x := val.(type) {
		case string:
			n = &node{kind: kindString, s: x}
		case json.Number:
			n = &node{kind: kindNumber, s: string(x)}
		default:
			return false
		}
		if t == TypeLong {
			_, ok := longLiteral(n)
			return ok
		}
		_, ok := doubleLiteral(n)
		return ok
	}
	return false
}

// typeNoun says what a literal of type t must be.
func typeNoun(t ParamType) string {
	switch t {
	case TypeString:
		return "a string"
	case TypeLong:
		return "a whole number (64-bit)"
	case TypeDouble:
		return "a number"
	case TypeBoolean:
		return "a boolean"
	case TypeStringMap:
		return "an object of strings"
	case TypeStringArray:
		return "an array of strings"
	case TypeLongArray:
		return "an array of whole numbers"
	case TypeDoubleArray:
		return "an array of numbers"
	case TypeBooleanArray:
		return "an array of booleans"
	case TypeMap:
		return "an object of param definitions"
	}
	return "a value"
}

// describe names the JSON shape of a decoded value for messages.
func describe(val any) string {
	switch x := val.(type) {
	case nil:
		return "null"
	case string:
		return fmt.Sprintf("the string %.40q", x)
	case bool:
		return fmt.Sprintf("the boolean %t", x)
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	case json.Number:
		return "the number " + string(x)
	}
	return fmt.Sprintf("a %T", val)
}

// timeTrigger checks one time trigger.
func (v *validator) timeTrigger(t *TimeTrigger, p loc) {
	v.timeout(t.FuzzyMaxDelay, p.key("fuzzy_max_delay"), "fuzzy_max_delay")
	switch t.Type {
	case TriggerCron, TriggerPredefined:
	case TriggerInterval:
		v.fail(p.key("type"), "INTERVAL time triggers are not supported")
		return
	case "":
		v.fail(p.key("type"), "required")
		return
	default:
		v.failf(p.key("type"), "unknown time trigger type %q (want CRON or PREDEFINED)", t.Type)
		return
	}
	tz := t.Timezone
	if _, err := loadLocation(tz); err != nil {
		v.fail(p.key("timezone"), err.Error())
		tz = ""
	}
	expr, exprPath := t.Cron, p.key("cron")
	if t.Type == TriggerPredefined {
		exprPath = p.key("expression")
		var ok bool
		if expr, ok = PredefinedCron(t.Expression); !ok {
			v.failf(exprPath, "unknown predefined expression %q (want @hourly, @daily, @weekly, @monthly or @yearly)", t.Expression)
			return
		}
	} else if strings.TrimSpace(expr) == "" {
		v.fail(exprPath, "required")
		return
	}
	sched, err := ParseCron(expr, tz)
	if err != nil {
		v.fail(exprPath, err.Error())
		return
	}
	first := sched.Next(v.opts.Now())
	if first.IsZero() {
		v.failf(exprPath, "cron %q never fires", expr)
		return
	}
	second := sched.Next(first)
	if second.IsZero() {
		return // fires once more at most; no interval to check
	}
	if gap := second.Sub(first); gap < TimeTriggerMinimumInterval {
		v.failf(exprPath, "cron %q fires %s apart (at %s and %s); time triggers must be at least %s apart",
			expr, gap, first.Format(time.RFC3339), second.Format(time.RFC3339), TimeTriggerMinimumInterval)
	}
}

// distinctSignalNames counts the signal names a workflow's triggers use.
func distinctSignalNames(ts []SignalTrigger) int {
	seen := map[string]bool{}
	for i := range ts {
		for _, n := range MapKeys(ts[i].Names, ts[i].Definitions) {
			seen[n] = true
		}
	}
	return len(seen)
}

// signalTrigger checks one signal trigger.
func (v *validator) signalTrigger(t *SignalTrigger, p loc, wfScope Scope) {
	p = p.fix()
	dp := p.key("definitions")
	names := MapKeys(t.Names, t.Definitions)
	switch {
	case len(names) == 0:
		v.fail(dp, "must name at least one signal")
	case len(names) > MaxSignalNamesInATrigger:
		v.failf(dp, "has %d signals; at most %d are allowed", len(names), MaxSignalNamesInATrigger)
	}
	joinLen := -1
	var joinFirst string
	for _, name := range names {
		def := t.Definitions[name]
		sp := dp.key(name)
		v.signalName(name, sp, "signal name")
		if def == nil {
			continue
		}
		if joinLen < 0 {
			joinLen, joinFirst = len(def.JoinKeys), name
		} else if len(def.JoinKeys) != joinLen {
			v.failf(sp.key("join_keys"), "has %d join keys but signal %q has %d; all signals of a trigger need the same number", len(def.JoinKeys), joinFirst, joinLen)
		}
		for i, k := range def.JoinKeys {
			if _, clash := def.MatchParams[k]; clash {
				v.failf(sp.key("join_keys").at(i), "join key %q may not also be a match param", k)
			}
		}
		for mp := range v.matchParams(def.MatchNames, def.MatchParams, sp) {
			switch mp.Value.(type) {
			case int64, string:
			case nil:
				v.fail(mp.p.key("value"), "required")
			default:
				v.failf(mp.p.key("value"), "must be a whole number or a string, got %s", describe(mp.Value))
			}
		}
	}
	var sc Scope
	if v.checking() {
		sc = wfScope.With(paramTypes(&t.Params))
	}
	v.params(&t.Params, p.key("params"), sc, true)
	v.expr(t.Condition, TypeBoolean, sc, p.key("condition"))
	v.expr(t.DedupExpr, TypeString, sc, p.key("dedup_expr"))
}

// matchParam is one of a signal's match params, with its name and path.
type matchParam struct {
	*SignalMatchParam
	name string
	p    loc
}

// matchParams yields the match params of a signal at p in name order,
// passing over nil ones, each once its operator is checked.
func (v *validator) matchParams(names []string, params map[string]*SignalMatchParam, p loc) iter.Seq[matchParam] {
	return func(yield func(matchParam) bool) {
		for _, name := range MapKeys(names, params) {
			mp := params[name]
			if mp == nil {
				continue
			}
			mpp := p.key("match_params").key(name)
			v.operator(mp.Operator, mpp.key("operator"))
			if !yield(matchParam{SignalMatchParam: mp, name: name, p: mpp}) {
				return
			}
		}
	}
}

// operator checks a signal match operator.
func (v *validator) operator(op SignalOperator, p loc) {
	switch {
	case op == "":
		v.fail(p, "required (one of =, >, >=, <, <=)")
	case !validSignalOperator(op):
		v.failf(p, "unknown operator %q (want =, >, >=, <, <=)", op)
	}
}

func (v *validator) signalDependencies(deps []SignalDependency, p loc, sc Scope) {
	if deps == nil {
		return
	}
	p = p.fix()
	if deps != nil && len(deps) == 0 {
		v.fail(p, "must not be empty when given")
	}
	for i := range deps {
		d := &deps[i]
		dp := p.at(i)
		v.requiredSignalName(d.Name, dp.key("name"))
		var ranges []string
		for mp := range v.matchParams(d.MatchNames, d.MatchParams, dp) {
			if mp.Operator.IsRange() {
				ranges = append(ranges, mp.name)
			}
			if mp.Param == nil {
				v.fail(mp.p.key("param"), "required")
				continue
			}
			if mp.Param.Type.Valid() && mp.Param.Type != TypeString && mp.Param.Type != TypeLong {
				v.failf(mp.p.key("param").key("type"), "signal dependency params must be STRING or LONG, got %s", mp.Param.Type)
			}
			v.paramDef(mp.Param, mp.p.key("param"), sc)
		}
		if len(ranges) > 1 {
			v.failf(dp.key("match_params"), "at most one range operator (>, >=, <, <=) is allowed per signal dependency; found %d (%s)",
				len(ranges), strings.Join(ranges, ", "))
		}
	}
}

func (v *validator) signalOutputs(outs []SignalOutput, p loc, sc Scope) {
	if len(outs) == 0 {
		return
	}
	p = p.fix()
	for i := range outs {
		o := &outs[i]
		op := p.at(i)
		v.requiredSignalName(o.Name, op.key("name"))
		for _, name := range o.Params.OrderedNames() {
			def := o.Params.Defs[name]
			pp := op.key("params").key(name)
			if def.Type.Valid() && def.Type != TypeString && def.Type != TypeLong {
				v.failf(pp.key("type"), "signal output params must be STRING or LONG, got %s", def.Type)
			}
			v.paramDef(def, pp, sc)
		}
		v.params(&o.Payload, op.key("payload"), sc, false)
	}
}

// tags checks names, namespaces and duplicates of a tag list.
func (v *validator) tags(tags TagList, p loc) {
	if len(tags) == 0 {
		return
	}
	p = p.fix()
	seen := make(map[string]bool, len(tags))
	for i := range tags {
		t := &tags[i]
		tp := p.at(i)
		if !t.Plain {
			tp = tp.key("name")
		}
		v.signalName(t.Name, tp, "tag name")
		if seen[t.Name] {
			v.failf(tp, "duplicate tag %q", t.Name)
		}
		seen[t.Name] = true
		if t.Namespace != "" && !oneOf(t.Namespace, NamespaceSystem, NamespaceRuntime, NamespaceJobTemplate,
			NamespaceNotebookTemplate, NamespaceUserDefined, NamespacePlatform) {
			v.failf(p.at(i).key("namespace"), "unknown tag namespace %q (want SYSTEM, RUNTIME, JOB_TEMPLATE, NOTEBOOK_TEMPLATE, USER_DEFINED or PLATFORM)", t.Namespace)
		}
	}
}

// workflowID checks the workflow id rules.
func (v *validator) workflowID(id string, p loc) {
	for _, msg := range WorkflowIDProblems(id) {
		v.failf(p, "%s", msg)
	}
}

// stepID checks the step id rules.
func (v *validator) stepID(id string, p loc) { v.name(id, p, "step id") }

// paramName checks a param name; it follows the step id rules. Reserved names
// (AUTH_*, ...) are allowed in definitions.
func (v *validator) paramName(name string, p loc) { v.name(name, p, "param name") }

// name applies the step id / param name rules.
func (v *validator) name(s string, p loc, what string) {
	for _, msg := range NameProblems(s, what) {
		v.failf(p, "%s", msg)
	}
}

// requiredSignalName checks the signal name of a dependency or an output,
// which is required.
func (v *validator) requiredSignalName(name string, p loc) {
	if name == "" {
		v.fail(p, "required")
		return
	}
	v.signalName(name, p, "signal name")
}

// signalName applies the tag / signal name rules.
func (v *validator) signalName(s string, p loc, what string) {
	if strings.TrimSpace(s) == "" {
		v.failf(p, "%s must not be blank", what)
		return
	}
	for _, r := range s {
		if !signalNameChar(r) {
			v.failf(p, `%s %q contains %q; allowed are letters, digits and _ .,:@&='(){}$+[]-/\ and space`, what, s, r)
			break
		}
	}
	if strings.HasPrefix(s, ReservedPrefix) || strings.HasSuffix(s, ReservedSuffix) {
		v.failf(p, "%s %q must not start with %q or end with %q (reserved)", what, s, ReservedPrefix, ReservedSuffix)
	}
}

// idChars reports whether s matches [_a-zA-Z0-9][.\-_a-zA-Z0-9]* (leadDigit)
// or [_a-zA-Z][.\-_a-zA-Z0-9]*.
func idChars(s string, leadDigit bool) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		case c >= '0' && c <= '9':
			if i == 0 && !leadDigit {
				return false
			}
		case c == '.' || c == '-':
			if i == 0 {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// signalNameChar reports whether r may appear in a tag or signal name:
// [\w \.,:@&='(){}$+\[\]\-\/\\] with Java's ASCII \w.
func signalNameChar(r rune) bool {
	switch {
	case r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9':
		return true
	}
	return strings.ContainsRune(" .,:@&='(){}$+[]-/\\", r)
}
