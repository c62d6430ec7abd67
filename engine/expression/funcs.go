package expression

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"time"
	// Embed the time zone database, so Util.* give the same results on
	// every host (Lambda images need not ship /usr/share/zoneinfo).
	_ "time/tzdata"

	"github.com/google/uuid"

	"github.com/maestro-serverless/maestro/jsonnum"
)

// evalState is the per-evaluation context handed to every helper function as
// its hidden first argument.
type evalState struct {
	ctx    context.Context
	env    *Env
	limits *Limits
	// lookup resolves a parameter name (params.get, identifiers).
	lookup func(name string) (any, error)
	uuids  int
	used   uint
	// budget is shared by every evaluation of the unit of work (a
	// decision); see Budget.
	budget *Budget
}

// charge adds units to the helpers' memory use and fails past the
// evaluation's or the unit of work's budget.
func (st *evalState) charge(units uint) error {
	st.used += units
	if st.used > st.limits.MemoryBudget {
		return failf(ErrLimit, "memory budget exceeded (more than %d units allocated)", st.limits.MemoryBudget)
	}
	return st.budget.chargeMemory(int64(units))
}

// chargeCPU spends n CPU units of the unit of work's budget; it also checks
// the context, so a cancelled decision stops at its next costly step.
func (st *evalState) chargeCPU(n int64) error {
	if err := st.ctx.Err(); err != nil {
		return err
	}
	return st.budget.chargeCPU(n)
}

// checkStringLen fails when a string of n bytes would exceed MaxStringLen,
// and charges it otherwise.
func (st *evalState) checkStringLen(n int) error {
	if n > st.limits.MaxStringLen {
		return failf(ErrLimit, "string of %d bytes exceeds the limit of %d bytes", n, st.limits.MaxStringLen)
	}
	return st.charge(uint(n/stringBytesPerUnit + 1))
}

// checkArrayLen fails when an array of n elements would exceed MaxArrayLen,
// and charges it otherwise.
func (st *evalState) checkArrayLen(fn string, n uint64) error {
	if n > uint64(st.limits.MaxArrayLen) {
		return failf(ErrLimit, "%s would produce %d values, more than the limit of %d", fn, n, st.limits.MaxArrayLen)
	}
	return st.charge(uint(n))
}

// helper is one function offered to expressions.
type helper struct {
	// name is the function's internal name, also how users call it
	// (params.get, Util.intsBetween); internal helpers start with "java.".
	name     string
	min, max int // accepted argument counts
	usage    string
	fn       func(st *evalState, args []any) (any, error)
	// result returns the static result type for the static argument types
	// (anyType for unknown ones), or an error for impossible arguments.
	result func(args []reflect.Type) (reflect.Type, error)
}

var (
	anyType        = reflect.TypeOf((*any)(nil)).Elem()
	int64Type      = reflect.TypeOf(int64(0))
	float64Type    = reflect.TypeOf(float64(0))
	stringType     = reflect.TypeOf("")
	boolType       = reflect.TypeOf(false)
	int64SliceType = reflect.TypeOf([]int64(nil))
)

func fixed(t reflect.Type) func([]reflect.Type) (reflect.Type, error) {
	return func([]reflect.Type) (reflect.Type, error) { return t, nil }
}

// helpers returns the table of functions, keyed by internal name.
func helpers() map[string]*helper {
	list := []*helper{
		// params.*
		{name: "params.get", min: 1, max: 1, usage: "params.get(name)", fn: paramsGet, result: fixed(anyType)},
		{name: "params.containsKey", min: 1, max: 1, usage: "params.containsKey(name)", fn: paramsContainsKey, result: fixed(boolType)},
		{name: "params.getFromStep", min: 1, max: 2, usage: "params.getFromStep(stepId, name) or params.getFromStep(field)", fn: getFromStep, result: fixed(anyType)},
		{name: "params.getFromSignal", min: 1, max: 2, usage: "params.getFromSignal(name) or params.getFromSignal(signalName, name)", fn: getFromSignal, result: fixed(anyType)},
		{name: "params.getFromSignalOrDefault", min: 3, max: 3, usage: "params.getFromSignalOrDefault(signalName, name, default)", fn: getFromSignalOrDefault, result: fixed(anyType)},
		{name: "params.getFromSignalDependency", min: 2, max: 2, usage: "params.getFromSignalDependency(index, name)", fn: getFromSignalDependency, result: fixed(anyType)},
		{name: "params.getFromForeach", min: 3, max: 3, usage: "params.getFromForeach(foreachStepId, stepId, name)", fn: getFromForeach, result: fixed(anyType)},
		{name: "params.getFromSubworkflow", min: 3, max: 3, usage: "params.getFromSubworkflow(subworkflowStepId, stepId, name)", fn: getFromSubworkflow, result: fixed(anyType)},
		{name: "params.getFromInstance", min: 1, max: 1, usage: "params.getFromInstance(field)", fn: getFromInstance, result: fixed(anyType)},
		// Util.*
		{name: "Util.dateIntsBetween", min: 3, max: 3, usage: "Util.dateIntsBetween(fromDateInt, toDateInt, stepDays)", fn: dateIntsBetween, result: fixed(int64SliceType)},
		{name: "Util.intsBetween", min: 3, max: 3, usage: "Util.intsBetween(from, to, step)", fn: intsBetween, result: fixed(int64SliceType)},
		{name: "Util.dateIntToTs", min: 1, max: 2, usage: "Util.dateIntToTs(dateInt[, timezone])", fn: dateIntToTs, result: fixed(int64Type)},
		{name: "Util.dateIntHourToTs", min: 5, max: 5, usage: "Util.dateIntHourToTs(dateInt, hour, timezone, dayOffset, hourOffset)", fn: dateIntHourToTs, result: fixed(int64Type)},
		{name: "Util.incrementDateInt", min: 2, max: 2, usage: "Util.incrementDateInt(dateInt, days)", fn: incrementDateInt, result: fixed(stringType)},
		{name: "Util.tsToDateInt", min: 1, max: 2, usage: "Util.tsToDateInt(tsMillis[, timezone])", fn: tsToDateInt, result: fixed(stringType)},
		// UUID.*
		{name: "UUID.randomUUID", min: 0, max: 0, usage: "UUID.randomUUID()", fn: randomUUID, result: fixed(stringType)},
		// Math.*
		{name: "Math.min", min: 2, max: 2, usage: "Math.min(a, b)", fn: mathMin, result: numericResult("Math.min")},
		{name: "Math.max", min: 2, max: 2, usage: "Math.max(a, b)", fn: mathMax, result: numericResult("Math.max")},
		{name: "Math.abs", min: 1, max: 1, usage: "Math.abs(a)", fn: mathAbs, result: numericResult("Math.abs")},
		// Java operators and value methods the patcher maps onto.
		{name: "java.add", min: 2, max: 2, usage: "a + b", fn: javaAdd, result: addResult},
		{name: "java.div", min: 2, max: 2, usage: "a / b", fn: javaDiv, result: numericResult("operator /")},
		{name: "java.mod", min: 2, max: 2, usage: "a % b", fn: javaMod, result: numericResult("operator %")},
		{name: "java.toString", min: 1, max: 1, usage: "x.toString()", fn: javaToString, result: fixed(stringType)},
		{name: "java.size", min: 1, max: 1, usage: "x.size() or x.length()", fn: javaSize, result: fixed(int64Type)},
		{name: "java.range", min: 2, max: 2, usage: "from..to", fn: javaRange, result: fixed(int64SliceType)},
	}
	list = append(list, stringHelpers()...)
	m := make(map[string]*helper, len(list))
	for _, h := range list {
		m[h.name] = h
	}
	return m
}

// Static type helpers.

func isUnknownType(t reflect.Type) bool { return t == nil || t.Kind() == reflect.Interface }

func isIntType(t reflect.Type) bool {
	if t == nil {
		return false
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	}
	return false
}

func isFloatType(t reflect.Type) bool {
	return t != nil && (t.Kind() == reflect.Float64 || t.Kind() == reflect.Float32)
}

func isNumberType(t reflect.Type) bool { return isIntType(t) || isFloatType(t) }

func isScalarType(t reflect.Type) bool {
	return isNumberType(t) || (t != nil && (t.Kind() == reflect.String || t.Kind() == reflect.Bool))
}

// typeName names a static type for messages, using Maestro's type names.
func typeName(t reflect.Type) string {
	switch {
	case isUnknownType(t):
		return "unknown"
	case isIntType(t):
		return "LONG"
	case isFloatType(t):
		return "DOUBLE"
	}
	switch t.Kind() {
	case reflect.String:
		return "STRING"
	case reflect.Bool:
		return "BOOLEAN"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Map:
		return "map"
	}
	return t.String()
}

// numericResult types arithmetic like Java: long with long gives long, any
// double gives double, unknown operands give an unknown result.
func numericResult(op string) func([]reflect.Type) (reflect.Type, error) {
	return func(args []reflect.Type) (reflect.Type, error) {
		allInt := true
		unknown := false
		for _, a := range args {
			switch {
			case isUnknownType(a):
				unknown = true
			case isIntType(a):
			case isFloatType(a):
				allInt = false
			default:
				return nil, fmt.Errorf("%s needs numbers, got %s", op, typeName(a))
			}
		}
		switch {
		case unknown:
			return anyType, nil
		case allInt:
			return int64Type, nil
		}
		return float64Type, nil
	}
}

// addResult types Java's +: string concatenation when either side is a
// string, arithmetic otherwise.
func addResult(args []reflect.Type) (reflect.Type, error) {
	l, r := args[0], args[1]
	if (l != nil && l.Kind() == reflect.String) || (r != nil && r.Kind() == reflect.String) {
		for _, t := range []reflect.Type{l, r} {
			if !isUnknownType(t) && !isScalarType(t) {
				return nil, fmt.Errorf("cannot concatenate %s to a string", typeName(t))
			}
		}
		return stringType, nil
	}
	for _, t := range []reflect.Type{l, r} {
		if !isUnknownType(t) && !isNumberType(t) {
			return nil, fmt.Errorf("operator + is not defined for %s and %s", typeName(l), typeName(r))
		}
	}
	if isUnknownType(l) || isUnknownType(r) {
		return anyType, nil
	}
	return numericResult("operator +")(args)
}

// Argument helpers.

func argString(fn string, args []any, i int) (string, error) {
	s, ok := args[i].(string)
	if !ok {
		return "", failf(ErrType, "%s: argument %d must be a string, got %s", fn, i+1, describe(args[i]))
	}
	return s, nil
}

// argInt accepts an integer or a string holding one, as SEL does.
func argInt(fn string, args []any, i int) (int64, error) {
	if n, ok := jsonnum.Int64(args[i]); ok {
		return n, nil
	}
	if s, ok := args[i].(string); ok {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n, nil
		}
	}
	return 0, failf(ErrType, "%s: argument %d must be an integer, got %s", fn, i+1, describe(args[i]))
}

func argTimezone(fn string, args []any, i int) (*time.Location, error) {
	if i >= len(args) {
		return time.UTC, nil
	}
	name, err := argString(fn, args, i)
	if err != nil {
		return nil, err
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, failf(ErrEval, "%s: unknown time zone %q", fn, name)
	}
	return loc, nil
}

const dateIntLayout = "20060102"

// argDateInt reads a dateInt (yyyyMMdd as a number or a string) as midnight
// of that day in loc.
func argDateInt(fn string, args []any, i int, loc *time.Location) (time.Time, error) {
	var s string
	if n, ok := jsonnum.Int64(args[i]); ok {
		s = strconv.FormatInt(n, 10)
	} else if str, ok := args[i].(string); ok {
		s = str
	} else {
		return time.Time{}, failf(ErrType, "%s: argument %d must be a dateInt (yyyyMMdd), got %s", fn, i+1, describe(args[i]))
	}
	if len(s) != len(dateIntLayout) {
		return time.Time{}, failf(ErrEval, "%s: %q is not a dateInt (yyyyMMdd)", fn, s)
	}
	t, err := time.ParseInLocation(dateIntLayout, s, loc)
	if err != nil {
		return time.Time{}, failf(ErrEval, "%s: %q is not a valid date (yyyyMMdd)", fn, s)
	}
	return t, nil
}

// params.* functions.

func paramsGet(st *evalState, args []any) (any, error) {
	name, err := argString("params.get", args, 0)
	if err != nil {
		return nil, err
	}
	return st.lookup(name)
}

// paramsContainsKey is Java's Map.containsKey on params: whether a param of
// that name has a value here (unlike params.get, an unknown name is not an
// error).
func paramsContainsKey(st *evalState, args []any) (any, error) {
	name, err := argString("params.containsKey", args, 0)
	if err != nil {
		return nil, err
	}
	if err := st.ctx.Err(); err != nil {
		return nil, err
	}
	_, err = st.lookup(name)
	return err == nil, nil
}

// argStrings returns the arguments of helper fn as strings.
func argStrings(fn string, args []any) ([]string, error) {
	out := make([]string, len(args))
	for i := range args {
		s, err := argString(fn, args, i)
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

func getFromStep(st *evalState, args []any) (any, error) {
	const fn = "params.getFromStep"
	a, err := argStrings(fn, args)
	if err != nil {
		return nil, err
	}
	if len(a) == 1 {
		v, ok := st.env.StepFields[a[0]]
		if !ok {
			return nil, failf(ErrEval, "%s(%q): no such field of the current step", fn, a[0])
		}
		return v, nil
	}
	stepID, name := a[0], a[1]
	if st.env.Step == nil {
		return nil, failf(ErrEval, "%s(%q, %q): step params are not available here", fn, stepID, name)
	}
	v, err := st.env.Step(st.ctx, stepID, name)
	if err != nil {
		return nil, wrapf(err, "%s(%q, %q)", fn, stepID, name)
	}
	return v, nil
}

func getFromSignal(st *evalState, args []any) (any, error) {
	const fn = "params.getFromSignal"
	a, err := argStrings(fn, args)
	if err != nil {
		return nil, err
	}
	if len(a) == 1 {
		v, ok := st.env.SignalParams[a[0]]
		if !ok {
			return nil, failf(ErrEval, "%s(%q): the triggering signal has no such param", fn, a[0])
		}
		return v, nil
	}
	signal, name := a[0], a[1]
	params, ok := st.env.Signals[signal]
	if !ok {
		return nil, failf(ErrEval, "%s(%q, %q): signal %q did not trigger this instance", fn, signal, name, signal)
	}
	v, ok := params[name]
	if !ok {
		return nil, failf(ErrEval, "%s(%q, %q): signal %q has no such param", fn, signal, name, signal)
	}
	return v, nil
}

func getFromSignalOrDefault(st *evalState, args []any) (any, error) {
	v, err := getFromSignal(st, args[:2])
	if err != nil {
		return args[2], nil
	}
	return v, nil
}

func getFromSignalDependency(st *evalState, args []any) (any, error) {
	const fn = "params.getFromSignalDependency"
	idx, err := argInt(fn, args, 0)
	if err != nil {
		return nil, err
	}
	name, err := argString(fn, args, 1)
	if err != nil {
		return nil, err
	}
	deps := st.env.SignalDependencies
	if idx < 0 || idx >= int64(len(deps)) {
		return nil, failf(ErrEval, "%s(%d, %q): index out of range, the step has %d signal dependencies", fn, idx, name, len(deps))
	}
	v, ok := deps[idx][name]
	if !ok {
		return nil, failf(ErrEval, "%s(%d, %q): the matched signal has no such param", fn, idx, name)
	}
	return v, nil
}

func getFromForeach(st *evalState, args []any) (any, error) {
	const fn = "params.getFromForeach"
	v, call, err := lookupChild(st, fn, args, "foreach", st.env.Foreach)
	if err != nil {
		return nil, err
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Slice && rv.Kind() != reflect.Array {
		return nil, failf(ErrType, "%s must return an array, got %s", call, describe(v))
	}
	if err := st.checkArrayLen(fn, uint64(rv.Len())); err != nil {
		return nil, err
	}
	return v, nil
}

func getFromSubworkflow(st *evalState, args []any) (any, error) {
	v, _, err := lookupChild(st, "params.getFromSubworkflow", args, "subworkflow", st.env.Subworkflow)
	return v, err
}

// lookupChild calls look, the environment's lookup of a param in the
// steps a foreach or subworkflow step (what) ran, with helper fn's three
// string arguments; call is the call as errors name it.
func lookupChild(st *evalState, fn string, args []any, what string, look func(ctx context.Context, parentID, stepID, name string) (any, error)) (v any, call string, err error) {
	ids, err := argStrings(fn, args)
	if err != nil {
		return nil, "", err
	}
	call = fmt.Sprintf("%s(%q, %q, %q)", fn, ids[0], ids[1], ids[2])
	if look == nil {
		return nil, call, failf(ErrEval, "%s: %s results are not available here", call, what)
	}
	if v, err = look(st.ctx, ids[0], ids[1], ids[2]); err != nil {
		return nil, call, wrapf(err, "%s", call)
	}
	return v, call, nil
}

func getFromInstance(st *evalState, args []any) (any, error) {
	const fn = "params.getFromInstance"
	field, err := argString(fn, args, 0)
	if err != nil {
		return nil, err
	}
	v, ok := st.env.Instance[field]
	if !ok {
		return nil, failf(ErrEval, "%s(%q): invalid field name", fn, field)
	}
	if v == nil {
		return "", nil // Maestro reports an unset field as ""
	}
	return v, nil
}

// Util.* functions.

func dateIntsBetween(st *evalState, args []any) (any, error) {
	const fn = "Util.dateIntsBetween"
	inc, err := argInt(fn, args, 2)
	if err != nil {
		return nil, err
	}
	if inc == 0 {
		return nil, failf(ErrEval, "%s: step must not be 0", fn)
	}
	fromIdx, toIdx := 0, 1
	if inc < 0 {
		fromIdx, toIdx = 1, 0
	}
	from, err := argDateInt(fn, args, fromIdx, time.UTC)
	if err != nil {
		return nil, err
	}
	to, err := argDateInt(fn, args, toIdx, time.UTC)
	if err != nil {
		return nil, err
	}
	step := inc
	if step < 0 {
		step = -step
	}
	var count uint64
	if days := int64(to.Sub(from) / (24 * time.Hour)); days > 0 {
		count = uint64((days + step - 1) / step)
	}
	if err := st.checkArrayLen(fn, count); err != nil {
		return nil, err
	}
	out := make([]int64, count)
	for i := range out {
		d := from.AddDate(0, 0, int(int64(i)*step))
		out[i] = int64(d.Year())*10000 + int64(d.Month())*100 + int64(d.Day())
	}
	if inc < 0 {
		for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
			out[i], out[j] = out[j], out[i]
		}
	}
	return out, nil
}

// javaRange is expr's from..to: the integers from from to to, both
// included (none when to < from), charged like any array a helper builds
// and refused past MaxArrayLen before it is built.
func javaRange(st *evalState, args []any) (any, error) {
	from, err := argInt("from..to", args, 0)
	if err != nil {
		return nil, err
	}
	to, err := argInt("from..to", args, 1)
	if err != nil {
		return nil, err
	}
	var count uint64
	if to >= from {
		count = uint64(to) - uint64(from) + 1 // exact: unsigned arithmetic
	}
	if err := st.checkArrayLen(fmt.Sprintf("range %d..%d", from, to), count); err != nil {
		return nil, err
	}
	out := make([]int64, 0, count)
	for i := uint64(0); i < count; i++ {
		out = append(out, from+int64(i))
	}
	return out, nil
}

func intsBetween(st *evalState, args []any) (any, error) {
	const fn = "Util.intsBetween"
	var n [3]int64
	for i := range n {
		v, err := argInt(fn, args, i)
		if err != nil {
			return nil, err
		}
		n[i] = v
	}
	from, to, inc := n[0], n[1], n[2]
	if inc == 0 {
		return nil, failf(ErrEval, "%s: step must not be 0", fn)
	}
	// Count with unsigned arithmetic: exact for any int64 operands.
	var count uint64
	switch {
	case inc > 0 && to > from:
		diff, step := uint64(to)-uint64(from), uint64(inc)
		count = diff / step
		if diff%step != 0 {
			count++
		}
	case inc < 0 && from > to:
		diff, step := uint64(from)-uint64(to), uint64(-(inc+1))+1
		count = diff / step
		if diff%step != 0 {
			count++
		}
	}
	if err := st.checkArrayLen(fn, count); err != nil {
		return nil, err
	}
	out := make([]int64, count)
	for i := range out {
		out[i] = from + int64(i)*inc
	}
	return out, nil
}

func dateIntToTs(_ *evalState, args []any) (any, error) {
	const fn = "Util.dateIntToTs"
	loc, err := argTimezone(fn, args, 1)
	if err != nil {
		return nil, err
	}
	t, err := argDateInt(fn, args, 0, loc)
	if err != nil {
		return nil, err
	}
	return t.UnixMilli(), nil
}

func dateIntHourToTs(_ *evalState, args []any) (any, error) {
	const fn = "Util.dateIntHourToTs"
	loc, err := argTimezone(fn, args, 2)
	if err != nil {
		return nil, err
	}
	day, err := argDateInt(fn, args, 0, loc)
	if err != nil {
		return nil, err
	}
	hour, err := argInt(fn, args, 1)
	if err != nil {
		return nil, err
	}
	if hour < 0 || hour > 23 {
		return nil, failf(ErrEval, "%s: hour %d is not in 0..23", fn, hour)
	}
	dayOffset, err := argInt(fn, args, 3)
	if err != nil {
		return nil, err
	}
	hourOffset, err := argInt(fn, args, 4)
	if err != nil {
		return nil, err
	}
	const maxOffsetDays = 1 << 20 // keeps the arithmetic far from overflow
	if dayOffset < -maxOffsetDays || dayOffset > maxOffsetDays || hourOffset < -24*maxOffsetDays || hourOffset > 24*maxOffsetDays {
		return nil, failf(ErrEval, "%s: offset out of range", fn)
	}
	// As Maestro: the offsets are subtracted, days on the local calendar.
	t := time.Date(day.Year(), day.Month(), day.Day(), int(hour), 0, 0, 0, loc).
		AddDate(0, 0, -int(dayOffset)).
		Add(-time.Duration(hourOffset) * time.Hour)
	return t.UnixMilli(), nil
}

func incrementDateInt(_ *evalState, args []any) (any, error) {
	const fn = "Util.incrementDateInt"
	t, err := argDateInt(fn, args, 0, time.UTC)
	if err != nil {
		return nil, err
	}
	days, err := argInt(fn, args, 1)
	if err != nil {
		return nil, err
	}
	if days < -10000000 || days > 10000000 {
		return nil, failf(ErrEval, "%s: %d days is out of range", fn, days)
	}
	return t.AddDate(0, 0, int(days)).Format(dateIntLayout), nil
}

func tsToDateInt(_ *evalState, args []any) (any, error) {
	const fn = "Util.tsToDateInt"
	ts, err := argInt(fn, args, 0)
	if err != nil {
		return nil, err
	}
	loc, err := argTimezone(fn, args, 1)
	if err != nil {
		return nil, err
	}
	return time.UnixMilli(ts).In(loc).Format(dateIntLayout), nil
}

// uuidNamespace scopes the deterministic UUIDs of UUID.randomUUID().
var uuidNamespace = uuid.MustParse("6d61e573-7472-4f2d-8578-707265737369")

func randomUUID(st *evalState, _ []any) (any, error) {
	if st.env == nil || st.env.Seed == "" {
		return nil, failf(ErrEval, "UUID.randomUUID(): the evaluation has no seed (Env.Seed), so it cannot be deterministic")
	}
	st.uuids++
	id := uuid.NewSHA1(uuidNamespace, []byte(st.env.Seed+"\x00"+strconv.Itoa(st.uuids)))
	return id.String(), nil
}

// Math.* functions.

func mathMin(_ *evalState, args []any) (any, error) { return minMax("Math.min", args, true) }

func mathMax(_ *evalState, args []any) (any, error) { return minMax("Math.max", args, false) }

func minMax(fn string, args []any, min bool) (any, error) {
	a, aok := jsonnum.Int64(args[0])
	b, bok := jsonnum.Int64(args[1])
	if aok && bok {
		if (a < b) == min {
			return a, nil
		}
		return b, nil
	}
	fa, aok := toFloat64(args[0])
	fb, bok := toFloat64(args[1])
	if !aok || !bok {
		return nil, failf(ErrType, "%s needs numbers, got %s and %s", fn, describe(args[0]), describe(args[1]))
	}
	if min {
		return math.Min(fa, fb), nil
	}
	return math.Max(fa, fb), nil
}

func mathAbs(_ *evalState, args []any) (any, error) {
	if a, ok := jsonnum.Int64(args[0]); ok {
		if a < 0 {
			return -a, nil
		}
		return a, nil
	}
	if f, ok := toFloat64(args[0]); ok {
		return math.Abs(f), nil
	}
	return nil, failf(ErrType, "Math.abs needs a number, got %s", describe(args[0]))
}

// Java operators.

func javaAdd(st *evalState, args []any) (any, error) {
	a, b := args[0], args[1]
	_, as := a.(string)
	_, bs := b.(string)
	if as || bs {
		sa, ok1 := scalarString(a)
		sb, ok2 := scalarString(b)
		if !ok1 || !ok2 {
			return nil, failf(ErrType, "cannot concatenate %s and %s", describe(a), describe(b))
		}
		if err := st.checkStringLen(len(sa) + len(sb)); err != nil {
			return nil, err
		}
		return sa + sb, nil
	}
	if x, ok := jsonnum.Int64(a); ok {
		if y, ok := jsonnum.Int64(b); ok {
			return x + y, nil // wraps on overflow, as Java's long does
		}
	}
	x, ok1 := toFloat64(a)
	y, ok2 := toFloat64(b)
	if !ok1 || !ok2 {
		return nil, failf(ErrType, "operator + is not defined for %s and %s", describe(a), describe(b))
	}
	return x + y, nil
}

func javaDiv(_ *evalState, args []any) (any, error) {
	a, b := args[0], args[1]
	if x, ok := jsonnum.Int64(a); ok {
		if y, ok := jsonnum.Int64(b); ok {
			if y == 0 {
				return nil, failf(ErrEval, "division by zero")
			}
			return x / y, nil // truncates toward zero, as Java does
		}
	}
	x, ok1 := toFloat64(a)
	y, ok2 := toFloat64(b)
	if !ok1 || !ok2 {
		return nil, failf(ErrType, "operator / is not defined for %s and %s", describe(a), describe(b))
	}
	return x / y, nil
}

func javaMod(_ *evalState, args []any) (any, error) {
	a, b := args[0], args[1]
	if x, ok := jsonnum.Int64(a); ok {
		if y, ok := jsonnum.Int64(b); ok {
			if y == 0 {
				return nil, failf(ErrEval, "division by zero")
			}
			if y == -1 {
				return int64(0), nil // avoids MinInt64 % -1 overflow
			}
			return x % y, nil
		}
	}
	x, ok1 := toFloat64(a)
	y, ok2 := toFloat64(b)
	if !ok1 || !ok2 {
		return nil, failf(ErrType, "operator %% is not defined for %s and %s", describe(a), describe(b))
	}
	return math.Mod(x, y), nil
}

func javaToString(st *evalState, args []any) (any, error) {
	s, err := formatValue(args[0])
	if err != nil {
		return nil, failf(ErrType, "toString(): %v", err)
	}
	if err := st.checkStringLen(len(s)); err != nil {
		return nil, err
	}
	return s, nil
}

func javaSize(_ *evalState, args []any) (any, error) {
	if s, ok := args[0].(string); ok {
		// Java counts UTF-16 code units.
		n := 0
		for _, r := range s {
			if r >= 0x10000 {
				n += 2
			} else {
				n++
			}
		}
		return int64(n), nil
	}
	rv := reflect.ValueOf(args[0])
	switch rv.Kind() {
	case reflect.Slice, reflect.Array, reflect.Map:
		return int64(rv.Len()), nil
	}
	return nil, failf(ErrType, "size()/length() needs a string, array or map, got %s", describe(args[0]))
}
