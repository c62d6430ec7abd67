package signals

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/maestro-serverless/maestro/model"
)

// Compare reports whether got op want holds, got being a signal's param value
// and want the match value. Values are normalized first (see Normalize). LONG
// values compare numerically and STRING values byte-wise, which is Unicode
// code point order; a LONG never matches a STRING, nor does a value that is
// neither, nor an unknown operator.
func Compare(op model.SignalOperator, got, want any) bool {
	g, err := Normalize(got)
	if err != nil {
		return false
	}
	w, err := Normalize(want)
	if err != nil {
		return false
	}
	var c int
	switch g := g.(type) {
	case int64:
		w, ok := w.(int64)
		if !ok {
			return false
		}
		c = cmp.Compare(g, w)
	case string:
		w, ok := w.(string)
		if !ok {
			return false
		}
		c = strings.Compare(g, w)
	}
	switch op {
	case model.OpEqual:
		return c == 0
	case model.OpGreater:
		return c > 0
	case model.OpGreaterEqual:
		return c >= 0
	case model.OpLess:
		return c < 0
	case model.OpLessEqual:
		return c <= 0
	}
	return false
}

// MatchesTrigger reports whether s satisfies every match param of a trigger
// definition: each named param is present in s and compares true with the
// literal value (see Compare). A nil definition or one without match params
// matches any signal. Join keys are not looked at; Complete checks them.
func MatchesTrigger(def *model.SignalTriggerDef, s Signal) bool {
	if def == nil {
		return true
	}
	for name, mp := range def.MatchParams {
		if mp == nil {
			return false
		}
		got, ok := s.Params[name]
		if !ok || !Compare(mp.Operator, got, mp.Value) {
			return false
		}
	}
	return true
}

// Condition is one match condition whose value is known only at run time,
// such as a signal dependency's match param after its param definition has
// been evaluated.
type Condition struct {
	// Param names the signal param compared.
	Param string
	// Op is the comparison.
	Op model.SignalOperator
	// Value is the match value, a LONG (int64) or a STRING.
	Value any
}

// MatchesAll reports whether s satisfies every condition (see Compare); a
// param missing from s fails its condition. No conditions match any signal.
func MatchesAll(conds []Condition, s Signal) bool {
	for _, c := range conds {
		got, ok := s.Params[c.Param]
		if !ok || !Compare(c.Op, got, c.Value) {
			return false
		}
	}
	return true
}

// DependencyConditions builds the conditions of a signal dependency from the
// evaluated values of its match params (values, keyed by match param name),
// in the dependency's match param order. Every match param needs a value that
// Normalize accepts; the error names the first that does not.
func DependencyConditions(dep *model.SignalDependency, values map[string]any) ([]Condition, error) {
	names := model.MapKeys(dep.MatchNames, dep.MatchParams)
	conds := make([]Condition, 0, len(names))
	for _, name := range names {
		mp := dep.MatchParams[name]
		if mp == nil {
			return nil, fmt.Errorf("signal dependency %q: match param %q has no definition", dep.Name, name)
		}
		v, ok := values[name]
		if !ok {
			return nil, fmt.Errorf("signal dependency %q: match param %q has no evaluated value", dep.Name, name)
		}
		n, err := Normalize(v)
		if err != nil {
			return nil, fmt.Errorf("signal dependency %q: match param %q: %w", dep.Name, name, err)
		}
		conds = append(conds, Condition{Param: name, Op: mp.Operator, Value: n})
	}
	return conds, nil
}

// Complete tries to complete trigger t with a newly arrived signal. arrived
// must be one of t's names (the keys of t.Definitions, in t.Names order) and
// match its definition. candidates holds, for the
// other names, stored signals newest first; for each other name Complete
// picks the newest candidate that matches the name's definition and agrees
// with arrived on every join key: the value of arrived's i-th join key equals
// (same type and value) the candidate's i-th join key, and a missing join key
// never agrees. Definitions without join keys pair with any matching signal;
// were lengths to differ (validation rejects it), the common positions count.
//
// The result maps every name of t to its signal, arrived included; ok is
// false when arrived does not qualify or some name has no candidate. A
// trigger of one name completes with arrived alone.
func Complete(t *model.SignalTrigger, arrived Signal, candidates map[string][]Signal) (match map[string]Signal, ok bool) {
	if t == nil {
		return nil, false
	}
	names := model.MapKeys(t.Names, t.Definitions)
	if !slices.Contains(names, arrived.Name) {
		return nil, false
	}
	adef := t.Definitions[arrived.Name]
	if !MatchesTrigger(adef, arrived) {
		return nil, false
	}
	match = map[string]Signal{arrived.Name: arrived}
	for _, name := range names {
		if _, done := match[name]; done {
			continue
		}
		def := t.Definitions[name]
		found := false
		for _, c := range candidates[name] {
			if c.Name == name && MatchesTrigger(def, c) && joined(adef, arrived, def, c) {
				match[name] = c
				found = true
				break
			}
		}
		if !found {
			return nil, false
		}
	}
	return match, true
}

// joined reports whether a and b agree on their definitions' join keys,
// paired by position.
func joined(adef *model.SignalTriggerDef, a Signal, bdef *model.SignalTriggerDef, b Signal) bool {
	ak, bk := joinKeys(adef), joinKeys(bdef)
	for i := range min(len(ak), len(bk)) {
		av, ok := a.Params[ak[i]]
		if !ok {
			return false
		}
		bv, ok := b.Params[bk[i]]
		if !ok || !Compare(model.OpEqual, bv, av) {
			return false
		}
	}
	return true
}

func joinKeys(def *model.SignalTriggerDef) []string {
	if def == nil {
		return nil
	}
	return def.JoinKeys
}

// SignalsOfMatch returns what the params of an instance started by trigger t
// with match read: all is params.getFromSignal(name), every param of every
// matched signal, where a param present in several signals takes the value
// of the first name in t.Names order (names missing from t follow, sorted);
// byName is params.getFromSignal(signalName, name). Both are fresh maps.
func SignalsOfMatch(t *model.SignalTrigger, match map[string]Signal) (all map[string]any, byName map[string]map[string]any) {
	order := make([]string, 0, len(match))
	if t != nil {
		for _, name := range model.MapKeys(t.Names, t.Definitions) {
			if _, ok := match[name]; ok {
				order = append(order, name)
			}
		}
	}
	var rest []string
	for name := range match {
		if !slices.Contains(order, name) {
			rest = append(rest, name)
		}
	}
	sort.Strings(rest)
	order = append(order, rest...)

	all = make(map[string]any)
	byName = make(map[string]map[string]any, len(match))
	for _, name := range order {
		params := match[name].Params
		byName[name] = maps.Clone(params)
		if byName[name] == nil {
			byName[name] = map[string]any{}
		}
		for k, v := range params {
			if _, taken := all[k]; !taken {
				all[k] = v
			}
		}
	}
	return all, byName
}

// JoinConditions returns the conditions a stored signal of name must meet to
// complete trigger t together with arrived: equality with arrived's value on
// every join key, paired by position, then name's match params (see
// Complete). ok is false when arrived lacks one of its join keys, so that no
// signal can join it.
func JoinConditions(t *model.SignalTrigger, arrived Signal, name string) (conds []Condition, ok bool) {
	if t == nil {
		return nil, false
	}
	def := t.Definitions[name]
	// Join keys first: they are usually the most selective, and a lookup
	// is driven by the first equality.
	ak, bk := joinKeys(t.Definitions[arrived.Name]), joinKeys(def)
	for i := range min(len(ak), len(bk)) {
		v, ok := arrived.Params[ak[i]]
		if !ok {
			return nil, false
		}
		conds = append(conds, Condition{Param: bk[i], Op: model.OpEqual, Value: v})
	}
	if def != nil {
		for _, p := range model.MapKeys(def.MatchNames, def.MatchParams) {
			mp := def.MatchParams[p]
			if mp == nil {
				return nil, false
			}
			conds = append(conds, Condition{Param: p, Op: mp.Operator, Value: mp.Value})
		}
	}
	return conds, true
}

// Driving returns the condition a lookup of a signal's history reads its
// index by: the first equality (its matches are one key's), else the first
// condition (a range). conds must not be empty.
func Driving(conds []Condition) Condition {
	for _, c := range conds {
		if c.Op == model.OpEqual {
			return c
		}
	}
	return conds[0]
}
