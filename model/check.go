package model

// Scope lists the variables an expression may name, with their types.
// A type of "" means the variable exists but its type is only known at run time.
//
// A scope is layered so that building one per step or per param costs
// nothing: Lookup consults Vars, then the Outer maps from the last to the
// first. The maps are shared and never modified through a Scope.
type Scope struct {
	Vars  map[string]ParamType
	Outer []map[string]ParamType
}

// Lookup returns the type of name and whether it is in scope.
func (s Scope) Lookup(name string) (ParamType, bool) {
	if t, ok := s.Vars[name]; ok {
		return t, true
	}
	for i := len(s.Outer) - 1; i >= 0; i-- {
		if t, ok := s.Outer[i][name]; ok {
			return t, true
		}
	}
	return "", false
}

// With returns a scope in which vars shadow everything in s.
func (s Scope) With(vars map[string]ParamType) Scope {
	outer := make([]map[string]ParamType, 0, len(s.Outer)+1)
	outer = append(outer, s.Outer...)
	if len(s.Vars) > 0 {
		outer = append(outer, s.Vars)
	}
	return Scope{Vars: vars, Outer: outer}
}

// ExpressionChecker compiles and type-checks the expressions of a definition.
// The model package does not know the expression language; the engine's
// expression package implements this interface and validation takes it as a
// dependency.
type ExpressionChecker interface {
	// CheckExpression compiles src in scope and reports an error when it does
	// not compile, uses unsupported syntax, or its result cannot be the type
	// want. want is "" when any result type is acceptable.
	CheckExpression(src string, want ParamType, scope Scope) error
}
