package model

// Scope lists the variables an expression may name, with their types.
// A type of "" means the variable exists but its type is only known at run time.
type Scope struct {
	Vars map[string]ParamType
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
