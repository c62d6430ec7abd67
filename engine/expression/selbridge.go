package expression

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/maestro-serverless/maestro/engine/expression/sel"
	"github.com/maestro-serverless/maestro/model"
)

// SEL programs: an expression that parses as SEL (Maestro's Java-syntax
// language, package sel) is compiled and run as SEL; one that does not is
// read in the expr dialect this package accepted before SEL (see doc.go).

// selHosts are the names of the host objects SEL expressions reach:
// Maestro's params (params.get, params.getFromStep, params['x'], ...) and
// Util, both served by this package's helpers.
var selHosts = map[string]bool{"params": true, "Util": true}

// sanitizeSEL appends the ";" SEL requires after a final statement, as
// Maestro's ExprEvaluator.sanitize does: not after a ";", nor after a "}"
// unless the expression starts with `{"`.
func sanitizeSEL(src string) string {
	s := strings.TrimSpace(src)
	if s == "" || strings.HasSuffix(s, ";") || !strings.HasPrefix(s, `{"`) && strings.HasSuffix(s, "}") {
		return s
	}
	return s + ";"
}

// selSyntaxError reports whether err is SEL's verdict that the source is
// not SEL, so that the expr dialect may read it.
func selSyntaxError(err error) bool {
	var se *sel.SyntaxError
	return errors.As(err, &se) || errors.Is(err, sel.ErrUnsupported)
}

// compileSEL compiles src as SEL: its inputs are the names it reads that
// it does not assign, each in scope, and those it assigns that are in
// scope (SEL boxes an input it assigns). parsed is false when src is not
// SEL.
func (l *Language) compileSEL(src string, want model.ParamType, scope *recordingScope) (prog *Program, parsed bool, err error) {
	sp, perr := sel.Parse(sanitizeSEL(src))
	if perr != nil {
		if errors.Is(perr, sel.ErrLimit) {
			return nil, true, newError(src, ErrLimit, perr, "%v", perr)
		}
		return nil, false, perr
	}
	info := sp.Info()
	if err := l.checkSEL(src, want, scope, sp, info); err != nil {
		return nil, true, err
	}
	for _, n := range info.News {
		if !selConstructible[n] {
			return nil, true, newError(src, ErrUnsupported, nil, "new %s(...): the class %s is not available in SEL", n, n)
		}
	}
	var inputs []string
	for _, name := range info.Reads {
		if selHosts[name] {
			continue
		}
		if _, ok := scope.Lookup(name); ok {
			inputs = append(inputs, name)
			continue
		}
		if !slices.Contains(info.Locals, name) {
			return nil, true, newError(src, ErrUnknownParam, nil, "unknown parameter %q", name)
		}
	}
	for _, name := range info.Locals {
		if _, ok := scope.Lookup(name); ok && !slices.Contains(inputs, name) {
			inputs = append(inputs, name)
		}
	}
	refs := slices.Clone(inputs)
	for _, k := range info.Keys["params"] {
		if !slices.Contains(refs, k) {
			refs = append(refs, k)
		}
	}
	return &Program{
		lang: l, source: src, sel: sp, want: want, identRefs: inputs, refs: refs, dynamic: info.Dynamic["params"],
		checkCost: int64(len(src)), bytes: int64(8 * len(src)),
	}, true, nil
}

// checkSEL finds at create time what would certainly fail at run time: a
// class or host object used as a value, a host method that does not exist
// or is given the wrong number of arguments, params.get of a parameter not
// in scope, a result of the wrong type, an operator on operands it does not
// take.
func (l *Language) checkSEL(src string, want model.ParamType, scope *recordingScope, sp *sel.Program, info sel.Info) error {
	for _, v := range info.Values {
		if sel.IsClass(v) || selHosts[v] && !slices.Contains(info.Locals, v) {
			return newError(src, ErrUnsupported, nil, "%s is not a value", v)
		}
	}
	for _, f := range info.Fields {
		if f.Recv == "Util" && !slices.Contains(info.Locals, f.Recv) {
			return newError(src, ErrUnsupported, nil, "Util is not a value: Util.%s is not one of its functions (%s)", f.Name, f.Pos)
		}
	}
	for _, m := range info.Methods {
		if !selHosts[m.Recv] || slices.Contains(info.Locals, m.Recv) {
			continue
		}
		h, ok := l.helpers[m.Recv+"."+m.Name]
		if !ok {
			return newError(src, ErrUnsupported, nil, "%s.%s(..) is not a supported function (%s)", m.Recv, m.Name, m.Pos)
		}
		if m.Args < h.min || m.Args > h.max {
			return newError(src, ErrSyntax, nil, "%s takes %s, got %d (%s)", h.name, argCount(h.min, h.max), m.Args, m.Pos)
		}
	}
	for _, k := range info.Keys["params"] {
		if _, ok := scope.Lookup(k); !ok && !slices.Contains(info.Checked["params"], k) {
			return newError(src, ErrUnknownParam, nil, "unknown parameter %q", k)
		}
	}
	kind, known, err := sp.ResultKind(func(name string) (sel.Kind, bool) {
		if slices.Contains(info.Locals, name) {
			return 0, false
		}
		t, ok := scope.Lookup(name)
		if !ok {
			return 0, false
		}
		return selKindOf(t)
	})
	if err != nil {
		// An operator given operands it does not take.
		return newError(src, ErrType, err, "%v", err)
	}
	if known && want != "" {
		if rt, ok := goTypeOf(kind); ok {
			if msg := staticMismatch(rt, want); msg != "" {
				return newError(src, ErrType, nil, "%s", msg)
			}
		}
	}
	return nil
}

// selKindOf is the SEL kind of a parameter of type t.
func selKindOf(t model.ParamType) (sel.Kind, bool) {
	nt, err := normalizeType(t)
	if err != nil {
		return 0, false
	}
	switch nt {
	case model.TypeLong:
		return sel.KindLong, true
	case model.TypeDouble:
		return sel.KindDouble, true
	case model.TypeString:
		return sel.KindString, true
	case model.TypeBoolean:
		return sel.KindBoolean, true
	case model.TypeStringArray:
		return sel.KindStringArray, true
	case model.TypeLongArray:
		return sel.KindLongArray, true
	case model.TypeDoubleArray:
		return sel.KindDoubleArray, true
	case model.TypeBooleanArray:
		return sel.KindBooleanArray, true
	case model.TypeMap, model.TypeStringMap:
		return sel.KindMap, true
	}
	return 0, false
}

// goTypeOf is the Go type a result of SEL kind k converts to.
func goTypeOf(k sel.Kind) (reflect.Type, bool) {
	var v any
	switch k {
	case sel.KindLong:
		v = int64(0)
	case sel.KindDouble:
		v = float64(0)
	case sel.KindString:
		v = ""
	case sel.KindBoolean:
		v = false
	case sel.KindStringArray:
		v = []string(nil)
	case sel.KindLongArray:
		v = []int64(nil)
	case sel.KindDoubleArray:
		v = []float64(nil)
	case sel.KindBooleanArray:
		v = []bool(nil)
	case sel.KindMap:
		v = map[string]any(nil)
	default:
		return nil, false
	}
	return reflect.TypeOf(v), true
}

// selConstructible are the classes SEL creates with new.
var selConstructible = map[string]bool{"String": true, "Long": true, "Integer": true, "Double": true, "Float": true,
	"Boolean": true, "Map": true, "HashMap": true, "LinkedHashMap": true, "DateTime": true}

// evalSEL runs a SEL program under st.
func (p *Program) evalSEL(st *evalState) (any, error) {
	vars := make(map[string]sel.Value, len(p.identRefs))
	for _, name := range p.identRefs {
		v, err := st.lookup(name)
		if err != nil {
			return nil, p.evalError(err)
		}
		if err := st.chargeCPU(valueCost(v)); err != nil {
			return nil, p.evalError(err)
		}
		sv, err := toSEL(v)
		if err != nil {
			return nil, newError(p.source, ErrType, err, "parameter %q: %v", name, err)
		}
		vars[name] = sv
	}
	lim := p.lang.limits
	cfg := sel.Config{
		Limits: sel.Limits{Array: int64(lim.MaxArrayLen), Length: int64(lim.MaxStringLen)},
		Meter:  selMeter{st},
		Vars:   vars,
		Hosts:  map[string]sel.Host{"params": &selHost{name: "params", st: st, p: p}, "Util": &selHost{name: "Util", st: st, p: p}},
		Now:    st.env.Now,
		Seed:   st.env.Seed,
	}
	out, err := p.sel.Eval(cfg)
	if err != nil {
		return nil, p.selError(err)
	}
	switch v := out.(type) {
	case sel.Error:
		return nil, newError(p.source, ErrEval, nil, "the expression threw an error: %s", v.Message)
	case sel.Void:
		return nil, newError(p.source, ErrType, nil, "the expression has no value (its last statement is a declaration, an if or a loop)")
	}
	v, err := fromSEL(out)
	if err != nil {
		return nil, newError(p.source, ErrType, err, "result: %v (a param holds a string, a number, a boolean, their arrays or a map)", err)
	}
	return v, nil
}

// selError classifies an error of a SEL evaluation.
func (p *Program) selError(err error) error {
	var ee *evalError
	if errors.As(err, &ee) {
		return newError(p.source, ee.kind, err, "%v", err)
	}
	switch {
	case errors.Is(err, sel.ErrLimit), errors.Is(err, ErrLimit):
		return newError(p.source, ErrLimit, err, "%v", err)
	case errors.Is(err, sel.ErrUnsupported):
		return newError(p.source, ErrUnsupported, err, "%v", err)
	}
	return newError(p.source, ErrEval, err, "%v", err)
}

// selMeter charges a SEL evaluation's work to the evaluation's budget: its
// CPU units as they are, its bytes as memory units (one per 16 bytes, as
// the helpers count strings), and checks the context as the helpers do.
type selMeter struct{ st *evalState }

func (m selMeter) Charge(cpu, mem int64) error {
	if err := m.st.chargeCPU(cpu); err != nil {
		return err
	}
	return m.st.budget.chargeMemory((mem + stringBytesPerUnit - 1) / stringBytesPerUnit)
}

// selHost serves a host object (params, Util) to SEL from this package's
// helpers: params.get(..) is the helper params.get, and so on.
type selHost struct {
	name string
	st   *evalState
	p    *Program
}

// Kind implements sel.Value.
func (h *selHost) Kind() sel.Kind { return sel.KindHost }

// Call calls the helper named name.method.
func (h *selHost) Call(_ *sel.Machine, method string, args []sel.Value) (sel.Value, error) {
	fn, ok := h.p.lang.helpers[h.name+"."+method]
	if !ok {
		return nil, sel.Unsupported("%s has no method %s", h.name, method)
	}
	if len(args) < fn.min || len(args) > fn.max {
		return nil, fmt.Errorf("%s takes %s, got %d", fn.usage, argCount(fn.min, fn.max), len(args))
	}
	in := make([]any, len(args))
	for i, a := range args {
		v, err := fromSEL(a)
		if err != nil {
			return nil, fmt.Errorf("%s: argument %d: %w", fn.usage, i+1, err)
		}
		in[i] = v
	}
	out, err := fn.fn(h.st, in)
	if err != nil {
		return nil, err
	}
	if err := h.st.chargeCPU(valueCost(out)); err != nil {
		return nil, err
	}
	return toSEL(out)
}

// Field reads params.name as params.get('name'); Util has no fields.
func (h *selHost) Field(m *sel.Machine, name string) (sel.Value, error) {
	if h.name != "params" {
		return nil, sel.Unsupported("%s has no field %s", h.name, name)
	}
	return h.Call(m, "get", []sel.Value{sel.String(name)})
}

// Index reads params['name'].
func (h *selHost) Index(m *sel.Machine, key sel.Value) (sel.Value, error) {
	if h.name != "params" {
		return nil, sel.Unsupported("%s cannot be indexed", h.name)
	}
	return h.Call(m, "get", []sel.Value{key})
}

// toSEL converts a parameter value (model.ParamDefinition's canonical Go
// types) to a SEL value.
func toSEL(v any) (sel.Value, error) {
	switch x := v.(type) {
	case nil:
		return sel.Null{}, nil
	case string:
		return sel.String(x), nil
	case bool:
		return sel.Boolean(x), nil
	case int64:
		return sel.Long(x), nil
	case int:
		return sel.Long(x), nil
	case float64:
		return sel.Double(x), nil
	case []string:
		return selArray(sel.KindStringArray, x, func(s string) sel.Value { return sel.String(s) }), nil
	case []int64:
		return selArray(sel.KindLongArray, x, func(n int64) sel.Value { return sel.Long(n) }), nil
	case []float64:
		return selArray(sel.KindDoubleArray, x, func(f float64) sel.Value { return sel.Double(f) }), nil
	case []bool:
		return selArray(sel.KindBooleanArray, x, func(b bool) sel.Value { return sel.Boolean(b) }), nil
	case map[string]string:
		m := sel.NewMap()
		for _, k := range sortedKeys(x) {
			m.Put(k, sel.String(x[k]))
		}
		return m, nil
	case map[string]any:
		m := sel.NewMap()
		for _, k := range sortedKeys(x) {
			e, err := toSEL(x[k])
			if err != nil {
				return nil, err
			}
			m.Put(k, e)
		}
		return m, nil
	case []any:
		return anyArray(x)
	}
	if n, ok := toFloat64(v); ok {
		if isFloat(v) {
			return sel.Double(n), nil
		}
		return sel.Long(int64(n)), nil
	}
	return nil, fmt.Errorf("a %T has no SEL type", v)
}

func selArray[T any](k sel.Kind, xs []T, f func(T) sel.Value) *sel.Array {
	a := &sel.Array{Of: k, Items: make([]sel.Value, len(xs))}
	for i, x := range xs {
		a.Items[i] = f(x)
	}
	return a
}

// anyArray converts an array of mixed Go values whose elements share one
// SEL type.
func anyArray(xs []any) (sel.Value, error) {
	a := &sel.Array{Of: sel.KindStringArray, Items: make([]sel.Value, len(xs))}
	var elem sel.Kind
	for i, x := range xs {
		v, err := toSEL(x)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			elem = v.Kind()
		} else if v.Kind() != elem {
			return nil, fmt.Errorf("an array mixing %s and %s has no SEL type", elem, v.Kind())
		}
		a.Items[i] = v
	}
	switch elem {
	case sel.KindLong:
		a.Of = sel.KindLongArray
	case sel.KindDouble:
		a.Of = sel.KindDoubleArray
	case sel.KindBoolean:
		a.Of = sel.KindBooleanArray
	case sel.KindString:
	default:
		if len(xs) > 0 {
			return nil, fmt.Errorf("an array of %s has no SEL type", elem)
		}
	}
	return a, nil
}

// fromSEL converts a SEL value to the Go types of parameter values, as
// Maestro's ExprEvaluator unboxes a result: strings, longs, doubles,
// booleans, their arrays and maps; other types are refused.
func fromSEL(v sel.Value) (any, error) {
	switch x := v.(type) {
	case sel.Null, sel.TypedNull:
		// null, or a String, Map, ... box holding null (String s;).
		return nil, nil
	case sel.String:
		return string(x), nil
	case sel.Long:
		return int64(x), nil
	case sel.Double:
		return float64(x), nil
	case sel.Boolean:
		return bool(x), nil
	case *sel.Array:
		return fromSELArray(x)
	case *sel.Map:
		out := make(map[string]any, x.Len())
		for _, k := range x.Keys() {
			e, _ := x.Get(k)
			ev, err := fromSEL(e)
			if err != nil {
				return nil, fmt.Errorf("map entry %q: %w", k, err)
			}
			out[k] = ev
		}
		return out, nil
	}
	return nil, fmt.Errorf("invalid return type %s", v.Kind())
}

func fromSELArray(a *sel.Array) (any, error) {
	switch a.Of {
	case sel.KindStringArray:
		return unboxAll(a, func(v sel.Value) (string, bool) {
			switch v.(type) {
			case sel.Null, sel.TypedNull:
				// An element never set (new String[n]) is Java's null.
				return "null", true
			}
			s, ok := v.(sel.String)
			return string(s), ok
		})
	case sel.KindLongArray:
		return unboxAll(a, func(v sel.Value) (int64, bool) { n, ok := v.(sel.Long); return int64(n), ok })
	case sel.KindDoubleArray:
		return unboxAll(a, func(v sel.Value) (float64, bool) { f, ok := v.(sel.Double); return float64(f), ok })
	case sel.KindBooleanArray:
		return unboxAll(a, func(v sel.Value) (bool, bool) { b, ok := v.(sel.Boolean); return bool(b), ok })
	}
	return nil, fmt.Errorf("invalid return type %s", a.Of)
}

// unboxAll converts every element of a with f, which reports whether an
// element has the array's type.
func unboxAll[T any](a *sel.Array, f func(sel.Value) (T, bool)) ([]T, error) {
	out := make([]T, len(a.Items))
	for i, it := range a.Items {
		v, ok := f(it)
		if !ok {
			return nil, fmt.Errorf("element %d of a %s is a %s", i, a.Of, it.Kind())
		}
		out[i] = v
	}
	return out, nil
}
