package expression

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/builtin"
	"github.com/expr-lang/expr/conf"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/types"
	"github.com/expr-lang/expr/vm"

	"github.com/maestro-serverless/maestro/engine/expression/sel"
	"github.com/maestro-serverless/maestro/model"
)

// allowedBuiltins are the expr builtins expressions may use, each a single
// step whose cost is bounded by its operands. The others are disabled: the
// predicate builtins are loops (map, filter, all, reduce, ...), some build
// unbounded strings or arrays (repeat, join, replace, string, toJSON,
// concat, ...), and now/date read the clock, which would break determinism.
var allowedBuiltins = map[string]bool{
	"len": true, "type": true, "abs": true, "ceil": true, "floor": true,
	"round": true, "int": true, "float": true, "trim": true, "trimPrefix": true,
	"trimSuffix": true, "upper": true, "lower": true, "indexOf": true,
	"lastIndexOf": true, "hasPrefix": true, "hasSuffix": true, "max": true,
	"min": true, "first": true, "last": true, "get": true, "keys": true,
	"values": true,
}

// Language compiles and evaluates expressions. It is immutable after New and
// safe for concurrent use.
type Language struct {
	limits  Limits
	helpers map[string]*helper
	options []expr.Option
	// varTypes maps each ParamType to the expr type of its Go value.
	varTypes map[model.ParamType]types.Type
	cache    *compileCache
}

// New returns a Language with the given limits; zero fields take their
// defaults (see DefaultLimits).
func New(limits Limits) *Language {
	l := &Language{limits: limits.withDefaults(), helpers: helpers(), varTypes: map[model.ParamType]types.Type{}, cache: newCompileCache()}
	for _, t := range model.ParamTypes {
		l.varTypes[t] = types.TypeOf(sampleValue(t))
	}
	l.options = append(l.options, expr.MaxNodes(l.limits.MaxNodes))
	for _, b := range builtin.Builtins {
		if !allowedBuiltins[b.Name] {
			l.options = append(l.options, expr.DisableBuiltin(b.Name))
		}
	}
	for _, h := range l.helpers {
		l.options = append(l.options, functionOption(h))
	}
	return l
}

// Limits returns the limits in force.
func (l *Language) Limits() Limits { return l.limits }

// functionOption registers a helper as an expr function whose first
// argument is the hidden *evalState.
func functionOption(h *helper) expr.Option {
	fn := &builtin.Function{
		Name: h.name,
		Func: func(args ...any) (any, error) {
			st, ok := args[0].(*evalState)
			if !ok {
				return nil, fmt.Errorf("%s: internal error: no evaluation state", h.name)
			}
			v, err := h.fn(st, args[1:])
			if err != nil {
				return nil, err
			}
			// What a helper returns is read by the node above it: a param
			// read (params.get) or a built string costs its size.
			if err := st.chargeCPU(valueCost(v)); err != nil {
				return nil, err
			}
			return v, nil
		},
		Validate: func(args []reflect.Type) (reflect.Type, error) {
			n := len(args) - 1
			if n < h.min || n > h.max {
				return nil, fmt.Errorf("%s takes %s, got %d", h.usage, argCount(h.min, h.max), n)
			}
			return h.result(args[1:])
		},
	}
	return func(c *conf.Config) { c.Functions[h.name] = fn }
}

// Program is a compiled expression. It is immutable and safe for concurrent
// evaluation.
type Program struct {
	lang    *Language
	source  string
	program *vm.Program
	// sel is the program when the source is SEL (program is nil then).
	sel       *sel.Program
	want      model.ParamType
	identRefs []string
	// identUses counts the occurrences of each of identRefs in the source:
	// each occurrence reads the value once.
	identUses []int64
	refs      []string
	dynamic   bool
	// checkCost is the CPU units compiling the expression costs, mostly its
	// literal regular expressions' programs (see Checker).
	checkCost int64
	// bytes estimates the memory the program holds (see programBytes).
	bytes int64
}

// Bytes estimates the memory the compiled program holds.
func (p *Program) Bytes() int64 { return p.bytes }

// Source returns the expression as written.
func (p *Program) Source() string { return p.source }

// Refs returns the parameters the expression reads by a name known at
// compile time (identifiers and params.get('x') / params['x'] with a
// literal name), in first-use order.
func (p *Program) Refs() []string { return append([]string(nil), p.refs...) }

// HasDynamicRefs reports whether the expression reads parameters whose names
// are computed at run time (params.get(a + b)).
func (p *Program) HasDynamicRefs() bool { return p.dynamic }

// CheckExpression implements model.ExpressionChecker.
func (l *Language) CheckExpression(src string, want model.ParamType, scope model.Scope) error {
	_, err := l.Compile(src, want, scope)
	return err
}

var _ model.ExpressionChecker = (*Language)(nil)

// Compile compiles src, an SEL expression, whose result must fit want ("" for
// any result), in a scope that lists the parameters it may read.
func (l *Language) Compile(src string, want model.ParamType, scope model.Scope) (*Program, error) {
	if len(src) > l.limits.MaxSourceLen {
		return nil, newError(src, ErrLimit, nil, "expression is %d bytes long, more than the limit of %d", len(src), l.limits.MaxSourceLen)
	}
	want, err := normalizeType(want)
	if err != nil {
		return nil, newError(src, ErrType, err, "%v", err)
	}
	key := cacheKey(src, want)
	if prog := l.cache.get(key, scope); prog != nil {
		return prog, nil
	}
	rec := &recordingScope{scope: scope}
	prog, err := l.compile(src, want, rec)
	if err != nil {
		return nil, err
	}
	l.cache.put(key, rec.seen, prog)
	return prog, nil
}

// compile compiles src without the cache; every scope lookup goes through
// scope. Source the expr dialect compiles is read in it, as before SEL:
// everything the project accepted then gives the same results. Other
// source — Java syntax the dialect refuses, or what its parser cannot
// read — is SEL (Maestro's language: statements, Java objects, Joda).
// Source neither reads gets SEL's syntax error, which names the line and
// column; the dialect's other errors (an unknown parameter, a disabled
// builtin, a bad pattern, a wrong argument count) are its verdict.
func (l *Language) compile(src string, want model.ParamType, scope *recordingScope) (*Program, error) {
	prog, err := l.compileExpr(src, want, scope)
	if err == nil || !errors.Is(err, errJavaSyntax) && !errors.Is(err, errExprParse) {
		return prog, err
	}
	prog, parsed, selErr := l.compileSEL(src, want, scope)
	if parsed {
		return prog, selErr
	}
	kind := ErrSyntax
	if errors.Is(selErr, sel.ErrUnsupported) {
		kind = ErrUnsupported
	}
	return nil, newError(src, kind, selErr, "syntax error: %v", selErr)
}

// errJavaSyntax marks the expr dialect's refusals of Java syntax
// (normalize), and errExprParse its parser's failures: on such source
// SEL's verdict is the one to give.
var (
	errJavaSyntax = errors.New("java syntax")
	errExprParse  = errors.New("not in the expr dialect")
)

// javaSyntax is an error of normalize, marked errJavaSyntax.
type javaSyntax struct{ err error }

func (e javaSyntax) Error() string   { return e.err.Error() }
func (e javaSyntax) Unwrap() []error { return []error{e.err, errJavaSyntax} }

// compileExpr compiles src in the expr dialect.
func (l *Language) compileExpr(src string, want model.ParamType, scope *recordingScope) (*Program, error) {
	norm, idents, err := normalize(src)
	if err != nil {
		return nil, javaSyntax{err}
	}
	// expr's type checker compiles a literal pattern of matches before any
	// patcher runs, so literal patterns are sized first.
	regexInsts, err := literalPatterns(src, norm)
	if err != nil {
		return nil, err
	}

	// The type environment holds only the scope variables the source names.
	env := make(types.Map, len(idents)+1)
	for _, name := range idents {
		if t, ok := scope.Lookup(name); ok {
			env[name] = l.varType(t)
		}
	}
	env[stateVar] = types.TypeOf((*evalState)(nil))

	p := newPatcher(l.helpers, scope, src)
	p.maxArray = l.limits.MaxArrayLen
	opts := make([]expr.Option, 0, len(l.options)+2)
	opts = append(opts, expr.Env(env))
	opts = append(opts, l.options...)
	opts = append(opts, expr.Patch(p))
	prog, cerr := expr.Compile(norm, opts...)
	identRefs, identUses := p.finish()
	if p.err != nil {
		return nil, p.err
	}
	if cerr != nil {
		return nil, l.compileError(src, cerr, p.visited)
	}

	rt := prog.Node().Type()
	if msg := staticMismatch(rt, want); msg != "" {
		return nil, newError(src, ErrType, nil, "%s", msg)
	}
	refs := append([]string(nil), identRefs...)
	for _, r := range p.constRefs {
		if !contains(refs, r) {
			refs = append(refs, r)
		}
	}
	return &Program{
		lang: l, source: src, program: prog, want: want,
		identRefs: identRefs, identUses: identUses, refs: refs, dynamic: p.dynamic,
		checkCost: int64(len(src)) + regexInsts*regexCompileCost,
		bytes:     programBytes(src, prog),
	}, nil
}

// varType returns the expr type of a parameter of type t (Any when unknown).
func (l *Language) varType(t model.ParamType) types.Type {
	if vt, ok := l.varTypes[t]; ok {
		return vt
	}
	if nt, err := normalizeType(t); err == nil && nt != "" {
		return l.varTypes[nt]
	}
	return types.Any
}

// compileError classifies an error from expr.Compile.
func (l *Language) compileError(src string, err error, patched bool) error {
	msg := err.Error()
	var fe *file.Error
	if errors.As(err, &fe) {
		msg = fe.Message
	}
	switch {
	case strings.Contains(msg, "maximum allowed nodes"):
		return newError(src, ErrLimit, err, "expression has more than %d syntax nodes", l.limits.MaxNodes)
	case !patched:
		return newError(src, ErrSyntax, errors.Join(err, errExprParse), "syntax error: %s", msg)
	}
	return newError(src, ErrType, err, "%s", msg)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Eval evaluates the program. The result is converted to the canonical Go
// type of the wanted ParamType (see Coerce); with no wanted type, integers
// become int64 and floats float64.
func (p *Program) Eval(ctx context.Context, env *Env) (any, error) {
	return p.eval(ctx, env, nil)
}

// eval evaluates with lookup resolving parameter names (nil: env's Vars).
func (p *Program) eval(ctx context.Context, env *Env, lookup func(string) (any, error)) (any, error) {
	if err := ctx.Err(); err != nil {
		return nil, newError(p.source, ErrEval, err, "not evaluated: %v", err)
	}
	if env == nil {
		env = &Env{}
	}
	st := &evalState{ctx: ctx, env: env, limits: &p.lang.limits, lookup: lookup, budget: BudgetFrom(ctx)}
	if st.budget == nil {
		st.budget = NewBudget(0, 0)
	}
	if st.lookup == nil {
		st.lookup = func(name string) (any, error) { return env.lookupVar(ctx, name) }
	}
	if p.sel != nil {
		out, err := p.evalSEL(st)
		if err != nil {
			return nil, err
		}
		return p.result(out)
	}
	vars := make(map[string]any, len(p.identRefs)+1)
	for i, name := range p.identRefs {
		v, err := st.lookup(name)
		if err != nil {
			return nil, p.evalError(err)
		}
		// Every operation reads each operand once, and an operand is
		// used by one operation: charging each occurrence of a variable its
		// size bounds the work on it (=, <, in, ...).
		if err := st.chargeCPU(valueCost(v) * p.identUses[i]); err != nil {
			return nil, p.evalError(err)
		}
		vars[name] = v
	}
	vars[stateVar] = st

	// The VM charges the arrays and maps it builds to its own budget: what
	// is left of the unit of work's, at most the evaluation's limit.
	machine := vm.VM{MemoryBudget: uint(max(min(st.budget.MemoryLeft(), int64(p.lang.limits.MemoryBudget)), 1))}
	out, err := machine.Run(p.program, vars)
	if err != nil {
		return nil, p.evalError(err)
	}
	return p.result(out)
}

// result converts out to the wanted type and checks its size.
func (p *Program) result(out any) (any, error) {
	var err error
	if p.want != "" {
		out, err = Coerce(out, p.want)
		if err != nil {
			return nil, newError(p.source, ErrType, err, "result: %v", err)
		}
	} else {
		out = normalizeValue(out)
	}
	if err := p.lang.checkSize(out); err != nil {
		return nil, newError(p.source, ErrLimit, err, "result: %v", err)
	}
	return out, nil
}

// evalError wraps an error raised while evaluating.
func (p *Program) evalError(err error) error {
	var ee *evalError
	if errors.As(err, &ee) {
		return newError(p.source, ee.kind, err, "%s", ee.msg)
	}
	msg := err.Error()
	var fe *file.Error
	if errors.As(err, &fe) {
		msg = fe.Message
	}
	if strings.Contains(msg, "memory budget exceeded") {
		return newError(p.source, ErrLimit, err, "memory budget exceeded (more than %d units allocated)", p.lang.limits.MemoryBudget)
	}
	return newError(p.source, ErrEval, err, "evaluation failed: %s", msg)
}

// checkSize enforces MaxStringLen and MaxArrayLen on a result.
func (l *Language) checkSize(v any) error {
	if s, ok := v.(string); ok {
		if len(s) > l.limits.MaxStringLen {
			return fmt.Errorf("string of %d bytes exceeds the limit of %d bytes", len(s), l.limits.MaxStringLen)
		}
		return nil
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Array:
		if rv.Len() > l.limits.MaxArrayLen {
			return fmt.Errorf("array of %d elements exceeds the limit of %d", rv.Len(), l.limits.MaxArrayLen)
		}
	case reflect.Map:
		if rv.Len() > l.limits.MaxArrayLen {
			return fmt.Errorf("map of %d entries exceeds the limit of %d", rv.Len(), l.limits.MaxArrayLen)
		}
	}
	return nil
}
