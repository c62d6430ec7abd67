package orchestrator

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/maestro-serverless/maestro/store"
)

// Error is an error with an HTTP status, a message and optional per-field
// details. The API writes it as {"status", "message", "errors": [...]}.
type Error struct {
	Status  int      `json:"status"`
	Message string   `json:"message"`
	Errors  []string `json:"errors,omitempty"`
	cause   error
}

func (e *Error) Error() string {
	if len(e.Errors) == 0 {
		return e.Message
	}
	return fmt.Sprintf("%s: %v", e.Message, e.Errors)
}

// Unwrap returns the underlying cause, if any.
func (e *Error) Unwrap() error { return e.cause }

// NotFound builds a 404 error.
func NotFound(format string, args ...any) *Error {
	return &Error{Status: http.StatusNotFound, Message: fmt.Sprintf(format, args...)}
}

// Invalid builds a 400 error listing field errors (each "path: rule").
func Invalid(msg string, details ...string) *Error {
	return &Error{Status: http.StatusBadRequest, Message: msg, Errors: details}
}

// Conflict builds a 409 error.
func Conflict(format string, args ...any) *Error {
	return &Error{Status: http.StatusConflict, Message: fmt.Sprintf(format, args...)}
}

// Internal wraps an unexpected error as a 500 without leaking its text to callers.
func Internal(cause error) *Error {
	return &Error{Status: http.StatusInternalServerError, Message: "internal error", cause: cause}
}

// notFoundOr answers err, a store read's or change's error: a 404 saying
// format's message when the item is not there (store.ErrNotFound), else
// Internal.
func notFoundOr(err error, format string, args ...any) *Error {
	if errors.Is(err, store.ErrNotFound) {
		return NotFound(format, args...)
	}
	return Internal(err)
}

// AsError converts any error to an *Error, treating unknown errors as internal.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return Internal(err)
}

// refusedIfTooLarge is the caller's error (a 400 naming field and the
// limit) when err is an item the caller's input made too large for
// DynamoDB (store.ErrItemTooLarge), and an internal error otherwise:
// retrying the same input could only fail the same way.
func refusedIfTooLarge(err error, msg, field string) *Error {
	var tl *store.ItemTooLargeError
	if !errors.As(err, &tl) {
		return Internal(err)
	}
	return Invalid(msg, fmt.Sprintf("%s: too large to store: the item would be %d bytes, more than DynamoDB's item size limit of %d bytes", field, tl.Bytes, store.MaxItemBytes))
}
