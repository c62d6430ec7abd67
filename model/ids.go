package model

import (
	"errors"
	"fmt"
	"strings"
)

// WorkflowIDProblems returns why id is not a valid workflow id, one entry a
// broken rule; none when it is valid. The validator and the API both use it,
// so an id the API takes is one a definition could have.
func WorkflowIDProblems(id string) []string {
	var out []string
	if len(id) > IDLengthLimit {
		// Checked first and without quoting id: it may be megabytes long.
		return append(out, fmt.Sprintf("workflow id is %d characters long; the limit is %d", len(id), IDLengthLimit))
	}
	if !idChars(id, true) {
		out = append(out, fmt.Sprintf(`workflow id %q is invalid: it must match [_a-zA-Z0-9][.\-_a-zA-Z0-9]*`, id))
	}
	lower := strings.ToLower(id)
	if strings.HasPrefix(lower, ReservedPrefix) || strings.HasSuffix(lower, ReservedSuffix) {
		out = append(out, fmt.Sprintf("workflow id %q must not start with %q or end with %q (reserved, case-insensitive)", id, ReservedPrefix, ReservedSuffix))
	}
	return out
}

// NameProblems returns why s is not a valid step id or param name (what
// names which, for messages); none when it is valid.
func NameProblems(s, what string) []string {
	var out []string
	if len(s) > IDLengthLimit {
		return append(out, fmt.Sprintf("%s is %d characters long; the limit is %d", what, len(s), IDLengthLimit))
	}
	if !idChars(s, false) {
		out = append(out, fmt.Sprintf(`%s %q is invalid: it must match [_a-zA-Z][.\-_a-zA-Z0-9]*`, what, s))
	}
	if strings.Contains(s, StepParamSeparator) {
		out = append(out, fmt.Sprintf("%s %q must not contain %q (the step param separator)", what, s, StepParamSeparator))
	}
	if strings.HasPrefix(s, ReservedPrefix) {
		out = append(out, fmt.Sprintf("%s %q must not start with %q (reserved)", what, s, ReservedPrefix))
	}
	return out
}

// InlineForeachPrefix and InlineWhilePrefix start the id of an inline
// workflow: the workflow whose instances are the iterations of one foreach
// or while step attempt. Only the engine creates such workflows (the
// prefix is reserved for users).
const (
	InlineForeachPrefix = "maestro_foreach_"
	InlineWhilePrefix   = "maestro_while_"
)

// IsInlineWorkflowID reports whether id names an inline workflow: one of
// the prefixes and then lower-case hexadecimal digits.
func IsInlineWorkflowID(id string) bool {
	rest, ok := strings.CutPrefix(id, InlineForeachPrefix)
	if !ok {
		rest, ok = strings.CutPrefix(id, InlineWhilePrefix)
	}
	if !ok || rest == "" || len(id) > IDLengthLimit {
		return false
	}
	for _, c := range rest {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// CheckWorkflowID reports the workflow id rules id breaks, or nil.
func CheckWorkflowID(id string) error { return joinProblems(WorkflowIDProblems(id)) }

// CheckStepID reports the step id rules id breaks, or nil.
func CheckStepID(id string) error { return joinProblems(NameProblems(id, "step id")) }

func joinProblems(ps []string) error {
	if len(ps) == 0 {
		return nil
	}
	return errors.New(strings.Join(ps, "; "))
}
