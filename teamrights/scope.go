package teamrights

import (
	"errors"
	"fmt"
)

// Scope is what the launch of one step attempt is bound by.
type Scope struct {
	// Enforced is false when the stack maps no team: the step runs with
	// the stack's roles and allow-lists, as without team rights.
	Enforced bool
	// Team is the owners' team whose Rights apply.
	Team   string
	Rights Rights
}

// Refusal is the error of a launch that may never run: the step fails
// (fatally, not retried) with its message.
type Refusal struct{ Msg string }

func (r *Refusal) Error() string { return r.Msg }

// Refused returns a Refusal with a formatted message.
func Refused(format string, args ...any) error {
	return &Refusal{Msg: fmt.Sprintf(format, args...)}
}

// IsRefusal reports whether err is (or wraps) a Refusal, and its message.
func IsRefusal(err error) (string, bool) {
	var r *Refusal
	if errors.As(err, &r) {
		return r.Msg, true
	}
	return "", false
}
