package model

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Limits of the tags a caller adds at runtime: a start's runtime_tags and
// the tags added to a workflow through its tag endpoints.
const (
	// TagNameLengthLimit bounds a tag name (Maestro's name length limit).
	TagNameLengthLimit = NameLengthLimit
	// RuntimeTagsLimit bounds the runtime_tags of one start.
	RuntimeTagsLimit = 16
	// WorkflowTagsLimit bounds the tags of a workflow's properties.
	WorkflowTagsLimit = 64
	// TagSizeLimit bounds one tag's JSON (its name, namespace and
	// attributes).
	TagSizeLimit = 4096
	// RuntimeTagsSizeLimit bounds the JSON of all the runtime_tags of one
	// start: they are kept in the run's state, written by every decision.
	RuntimeTagsSizeLimit = 4096
	// WorkflowTagsSizeLimit bounds the JSON of all the tags of a
	// workflow's properties, kept in the workflow's head item (DynamoDB:
	// 400 KB an item).
	WorkflowTagsSizeLimit = 32768
)

// TagNameProblems lists what is wrong with a tag name, each message
// naming the rule: Maestro's name rules (not blank, at most
// TagNameLengthLimit characters, letters, digits and _ .,:@&='(){}$+[]-/\
// and space, no reserved prefix or suffix).
func TagNameProblems(name string) []string {
	if strings.TrimSpace(name) == "" {
		return []string{"tag name must not be blank"}
	}
	if n := utf8.RuneCountInString(name); n > TagNameLengthLimit {
		return []string{fmt.Sprintf("tag name is %d characters long; the limit is %d", n, TagNameLengthLimit)}
	}
	var out []string
	for _, r := range name {
		if !signalNameChar(r) {
			out = append(out, fmt.Sprintf(`tag name %q contains %q; allowed are letters, digits and _ .,:@&='(){}$+[]-/\ and space`, name, r))
			break
		}
	}
	lower := strings.ToLower(name)
	if strings.HasPrefix(lower, ReservedPrefix) || strings.HasSuffix(lower, ReservedSuffix) {
		out = append(out, fmt.Sprintf("tag name %q must not start with %q or end with %q (reserved)", name, ReservedPrefix, ReservedSuffix))
	}
	return out
}

// TagNamespaceProblem says what is wrong with a tag namespace; "" when it
// is empty or one of Maestro's namespaces.
func TagNamespaceProblem(ns string) string {
	if ns == "" || oneOf(ns, NamespaceSystem, NamespaceRuntime, NamespaceJobTemplate,
		NamespaceNotebookTemplate, NamespaceUserDefined, NamespacePlatform) {
		return ""
	}
	return fmt.Sprintf("unknown tag namespace %q (want SYSTEM, RUNTIME, JOB_TEMPLATE, NOTEBOOK_TEMPLATE, USER_DEFINED or PLATFORM)", ns)
}

// Names returns the names of the tags, in order.
func (l TagList) Names() []string {
	if len(l) == 0 {
		return nil
	}
	out := make([]string, len(l))
	for i, t := range l {
		out[i] = t.Name
	}
	return out
}
