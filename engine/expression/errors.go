package expression

import (
	"errors"
	"fmt"
)

// Sentinel errors; every error of this package wraps one of them, so callers
// can tell the classes apart with errors.Is.
var (
	// ErrSyntax marks source that does not parse.
	ErrSyntax = errors.New("syntax error")
	// ErrUnsupported marks SEL (Java) constructs this language does not offer.
	ErrUnsupported = errors.New("unsupported syntax")
	// ErrUnknownParam marks a reference to a parameter that does not exist.
	ErrUnknownParam = errors.New("unknown parameter")
	// ErrType marks a value or result of the wrong type.
	ErrType = errors.New("type mismatch")
	// ErrLimit marks an expression that exceeds one of the Limits.
	ErrLimit = errors.New("limit exceeded")
	// ErrCycle marks parameters that reference each other in a cycle.
	ErrCycle = errors.New("reference cycle")
	// ErrEval marks a failure while evaluating (a helper failed, a value is
	// missing, division by zero, ...).
	ErrEval = errors.New("evaluation failed")
)

// quoteLimit is how many characters of an expression an error quotes.
const quoteLimit = 80

// Error is an error about one expression. Its message quotes the expression
// (truncated to about 80 characters) and says what is wrong.
type Error struct {
	// Source is the expression as written.
	Source string
	// Kind is one of the sentinel errors of this package.
	Kind error
	// Msg says what is wrong, for a person.
	Msg string
	// Cause is the underlying error, if any.
	Cause error
}

// Error implements error.
func (e *Error) Error() string {
	return fmt.Sprintf("expression %q: %s", truncate(e.Source, quoteLimit), e.Msg)
}

// Unwrap returns the kind and the cause, so errors.Is matches both.
func (e *Error) Unwrap() []error {
	errs := []error{e.Kind}
	if e.Cause != nil {
		errs = append(errs, e.Cause)
	}
	return errs
}

// newError builds an *Error of the given kind.
func newError(src string, kind error, cause error, format string, args ...any) *Error {
	return &Error{Source: src, Kind: kind, Msg: fmt.Sprintf(format, args...), Cause: cause}
}

// truncate shortens s to at most n runes, marking a cut with "...".
func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-3]) + "..."
}

// evalError is returned by helper functions while an expression runs. It
// carries a kind so the wrapping *Error can be classified.
type evalError struct {
	kind error
	msg  string
	err  error
}

func (e *evalError) Error() string { return e.msg }

func (e *evalError) Unwrap() []error {
	if e.err != nil {
		return []error{e.kind, e.err}
	}
	return []error{e.kind}
}

// failf returns an evaluation error of the given kind.
func failf(kind error, format string, args ...any) error {
	return &evalError{kind: kind, msg: fmt.Sprintf(format, args...)}
}

// wrapf returns an evaluation error of kind ErrEval that wraps err.
func wrapf(err error, format string, args ...any) error {
	return &evalError{kind: ErrEval, msg: fmt.Sprintf(format, args...) + ": " + err.Error(), err: err}
}
