package expression

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/maestro-serverless/maestro/jsonnum"
	"github.com/maestro-serverless/maestro/model"
)

// ParamSet is a compiled set of parameter definitions whose expressions and
// interpolated literals may reference each other by name. It is immutable
// and safe for concurrent evaluation.
type ParamSet struct {
	lang     *Language
	params   map[string]*compiledParam
	order    []string // evaluation order: dependencies first
	external []string // names read from outside the set
}

type compiledParam struct {
	name string
	typ  model.ParamType
	// Exactly one of prog, nested, literal (with interpolation) applies.
	prog    *Program
	nested  *ParamSet
	literal any
	// deps are the set members this param reads (not itself).
	deps []string
	// shadows is set when the param's own name also names an outer value,
	// which is what a self-reference (i = i + 1) reads.
	shadows bool
	dynamic bool
}

// Bytes estimates the memory the set's compiled programs hold.
func (s *ParamSet) Bytes() int64 {
	var n int64
	for name, cp := range s.params {
		n += 64 + int64(len(name))
		switch {
		case cp.prog != nil:
			n += cp.prog.bytes
		case cp.nested != nil:
			n += cp.nested.Bytes()
		default:
			n += constBytes(cp.literal)
		}
	}
	return n
}

// Order returns the evaluation order of the set: every param after the
// params it references.
func (s *ParamSet) Order() []string { return append([]string(nil), s.order...) }

// ExternalRefs returns the names the set reads from outside itself, in
// first-use order.
func (s *ParamSet) ExternalRefs() []string { return append([]string(nil), s.external...) }

// EvalParams evaluates a set of parameter definitions against env: the
// definitions may reference each other and everything in env.Vars (the set
// shadows env.Vars, except that a param's reference to its own name reads
// the outer value, as in i = i + 1). Expressions are compiled with a scope
// typed from env.Vars; to evaluate the same set many times, use
// CompileParams once and ParamSet.Eval.
func (l *Language) EvalParams(ctx context.Context, params model.Params, env *Env) (map[string]any, error) {
	scope := model.Scope{Vars: map[string]model.ParamType{}}
	if env != nil {
		for name, v := range env.Vars {
			scope.Vars[name] = InferType(v)
		}
	}
	set, err := l.CompileParams(params, scope)
	if err != nil {
		return nil, err
	}
	return set.Eval(ctx, env)
}

// CompileParams compiles a set of parameter definitions. scope lists the
// values outside the set that they may read (workflow params, upstream step
// params, ...). It fails on expressions that do not compile, literals that
// do not fit their type, references to unknown names and reference cycles
// (naming the cycle).
func (l *Language) CompileParams(params model.Params, scope model.Scope) (*ParamSet, error) {
	return l.compileParams(params, scope, "")
}

func (l *Language) compileParams(params model.Params, scope model.Scope, path string) (*ParamSet, error) {
	names := params.Names
	if len(names) == 0 && len(params.Defs) > 0 {
		names = sortedKeys(params.Defs)
	}
	own := make(map[string]model.ParamType, len(names))
	for _, name := range names {
		def := params.Defs[name]
		if def == nil {
			return nil, fmt.Errorf("parameter %q: %w: no definition", path+name, ErrType)
		}
		t, err := normalizeType(def.Type)
		if err != nil || t == "" {
			return nil, fmt.Errorf("parameter %q: %w: invalid type %q", path+name, ErrType, string(def.Type))
		}
		own[name] = t
	}
	combined := scope.With(own)
	set := &ParamSet{lang: l, params: make(map[string]*compiledParam, len(names))}
	index := make(map[string]int, len(names))
	for i, name := range names {
		index[name] = i
	}
	for _, name := range names {
		cp, refs, err := l.compileParam(name, params.Defs[name], scope, combined, path)
		if err != nil {
			return nil, err
		}
		for _, r := range refs {
			if _, inSet := index[r]; inSet && !(r == name && cp.shadows) {
				cp.deps = append(cp.deps, r)
			} else if !contains(set.external, r) {
				set.external = append(set.external, r)
			}
		}
		slices.SortFunc(cp.deps, func(a, b string) int { return index[a] - index[b] })
		set.params[name] = cp
	}
	order, err := evalOrder(names, set.params, path)
	if err != nil {
		return nil, err
	}
	set.order = order
	return set, nil
}

// compileParam compiles one definition and returns the names it reads.
func (l *Language) compileParam(name string, def *model.ParamDefinition, outer model.Scope,
	combined model.Scope, path string) (*compiledParam, []string, error) {
	typ, _ := combined.Lookup(name)
	cp := &compiledParam{name: name, typ: typ}
	outerType, shadows := outer.Lookup(name)
	cp.shadows = shadows
	scope := combined
	if shadows {
		// A self-reference reads the outer value, so type it as that.
		scope = combined.With(map[string]model.ParamType{name: outerType})
	}
	full := path + name
	switch {
	case def.Expression != "":
		prog, err := l.Compile(def.Expression, typ, scope)
		if err != nil {
			return nil, nil, fmt.Errorf("parameter %q: %w", full, err)
		}
		cp.prog = prog
		cp.dynamic = prog.HasDynamicRefs()
		return cp, prog.Refs(), nil
	case def.HasValue:
		return l.compileLiteral(cp, def.Value, scope, full)
	}
	return nil, nil, fmt.Errorf("parameter %q: %w: it has neither a value nor an expression", full, ErrType)
}

// compileLiteral checks a literal value and collects its interpolation
// references; a MAP of nested definitions compiles into a nested set.
func (l *Language) compileLiteral(cp *compiledParam, value any, scope model.Scope,
	full string) (*compiledParam, []string, error) {
	if cp.typ == model.TypeMap {
		if defs, ok := value.(map[string]*model.ParamDefinition); ok {
			nested, err := l.compileParams(model.Params{Names: sortedKeys(defs), Defs: defs},
				scope, full+".")
			if err != nil {
				return nil, nil, err
			}
			cp.nested = nested
			return cp, nested.external, nil
		}
	}
	v, err := Coerce(value, cp.typ)
	if err != nil {
		return nil, nil, fmt.Errorf("parameter %q: literal value: %w", full, err)
	}
	cp.literal = v
	var refs []string
	add := func(s string) {
		for _, r := range InterpolationRefs(s) {
			if !contains(refs, r) {
				refs = append(refs, r)
			}
		}
	}
	switch x := v.(type) {
	case string:
		add(x)
	case []string:
		for _, e := range x {
			add(e)
		}
	case map[string]string:
		for _, k := range sortedKeys(x) {
			add(k)
			add(x[k])
		}
	}
	for _, r := range refs {
		if _, ok := scope.Lookup(r); !ok {
			return nil, nil, fmt.Errorf("parameter %q: %w", full,
				failf(ErrUnknownParam, "cannot interpolate %q: unknown parameter %q", truncate(fmt.Sprint(v), quoteLimit), r))
		}
	}
	return cp, refs, nil
}

// evalOrder sorts the set so that every param follows its dependencies;
// params with run-time computed references go as late as possible. A cycle
// is an error naming it.
func evalOrder(names []string, params map[string]*compiledParam, path string) ([]string, error) {
	const (
		unvisited = iota
		visiting
		done
	)
	state := make(map[string]int, len(names))
	order := make([]string, 0, len(names))
	var stack []string
	var visit func(name string) error
	visit = func(name string) error {
		switch state[name] {
		case done:
			return nil
		case visiting:
			i := slices.Index(stack, name)
			cycle := append(append([]string(nil), stack[i:]...), name)
			for j := range cycle {
				cycle[j] = path + cycle[j]
			}
			return fmt.Errorf("%w among parameters: %s", ErrCycle, strings.Join(cycle, " -> "))
		}
		state[name] = visiting
		stack = append(stack, name)
		for _, d := range params[name].deps {
			if err := visit(d); err != nil {
				return err
			}
		}
		stack = stack[:len(stack)-1]
		state[name] = done
		order = append(order, name)
		return nil
	}
	for _, dynamicPass := range []bool{false, true} {
		for _, name := range names {
			if params[name].dynamic == dynamicPass {
				if err := visit(name); err != nil {
					return nil, err
				}
			}
		}
	}
	return order, nil
}

// Eval evaluates the set against env and returns every param's value in
// the canonical Go type of its declared type (MAP params as map[string]any).
func (s *ParamSet) Eval(ctx context.Context, env *Env) (map[string]any, error) {
	if env == nil {
		env = &Env{}
	}
	outer := func(name string) (any, error) { return env.lookupVar(ctx, name) }
	return s.eval(ctx, env, outer, "")
}

func (s *ParamSet) eval(ctx context.Context, env *Env, outer func(string) (any, error), path string) (map[string]any, error) {
	results := make(map[string]any, len(s.params))
	for _, name := range s.order {
		cp := s.params[name]
		lookup := func(ref string) (any, error) {
			if ref == name && cp.shadows {
				return outer(ref)
			}
			if _, inSet := s.params[ref]; inSet {
				if v, ok := results[ref]; ok {
					return v, nil
				}
				return nil, failf(ErrEval, "parameter %q is not evaluated yet", path+ref)
			}
			return outer(ref)
		}
		full := path + name
		v, err := cp.eval(ctx, env, lookup, full)
		if err != nil {
			return nil, fmt.Errorf("parameter %q: %w", full, err)
		}
		results[name] = v
	}
	return results, nil
}

func (cp *compiledParam) eval(ctx context.Context, env *Env, lookup func(string) (any, error), full string) (any, error) {
	switch {
	case cp.prog != nil:
		pe := *env
		if env.Seed != "" {
			pe.Seed = env.Seed + "/" + full
		}
		return cp.prog.eval(ctx, &pe, lookup)
	case cp.nested != nil:
		m, err := cp.nested.eval(ctx, env, lookup, full+".")
		if err != nil {
			return nil, err
		}
		out := make(map[string]any, len(m))
		for k, v := range m {
			out[k] = v
		}
		return out, nil
	}
	var lookupErr error
	interp := func(s string) (string, error) {
		out, err := Interpolate(s, func(name string) (any, bool) {
			v, err := lookup(name)
			if err != nil {
				lookupErr = err
				return nil, false
			}
			return v, true
		})
		if err != nil && lookupErr != nil {
			return "", lookupErr
		}
		return out, err
	}
	switch x := cp.literal.(type) {
	case string:
		return interp(x)
	case []string:
		out := make([]string, len(x))
		for i, e := range x {
			s, err := interp(e)
			if err != nil {
				return nil, err
			}
			out[i] = s
		}
		return out, nil
	case map[string]string:
		out := make(map[string]string, len(x))
		for _, k := range sortedKeys(x) {
			ik, err := interp(k)
			if err != nil {
				return nil, err
			}
			iv, err := interp(x[k])
			if err != nil {
				return nil, err
			}
			out[ik] = iv
		}
		return out, nil
	}
	return cp.literal, nil
}

// InferType returns the ParamType of a value of a canonical Go type, or ""
// when the value's type is not one of them.
func InferType(v any) model.ParamType {
	switch v.(type) {
	case string:
		return model.TypeString
	case bool:
		return model.TypeBoolean
	case float64, float32:
		return model.TypeDouble
	case []string:
		return model.TypeStringArray
	case []int64:
		return model.TypeLongArray
	case []float64:
		return model.TypeDoubleArray
	case []bool:
		return model.TypeBooleanArray
	case map[string]string:
		return model.TypeStringMap
	case map[string]any:
		return model.TypeMap
	}
	if _, ok := jsonnum.Int64(v); ok {
		return model.TypeLong
	}
	return ""
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
