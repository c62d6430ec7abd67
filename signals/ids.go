package signals

import (
	"sort"
	"strconv"

	"github.com/google/uuid"
)

// Names of the UUID namespaces the deterministic ids live in, each hashed
// into uuid.NameSpaceURL. Different purposes get different namespaces so
// that their ids never collide.
const (
	triggerNamespaceName = "urn:maestro-serverless:signals:trigger-start"
	s3NamespaceName      = "urn:maestro-serverless:signals:s3-notification"
)

// namespace returns the UUID namespace of the given name.
func namespace(name string) uuid.UUID {
	return uuid.NewSHA1(uuid.NameSpaceURL, []byte(name))
}

// TriggerRequestID returns the request id of the workflow start that trigger
// number triggerIndex of workflow workflowID makes for match: a name-based
// (version 5) UUID, so that every worker that completes the same match, in
// any order and any number of times, derives the same id and a conditional
// write on it lets exactly one start through. With a dedup value (the
// evaluated dedup_expr) the id depends on it alone, so matches with equal
// dedup values start once; without one it depends on the matched signals
// (name and sequence number of each).
func TriggerRequestID(workflowID string, triggerIndex int, match map[string]Signal, dedup string) string {
	b := appendField(nil, workflowID)
	b = appendField(b, strconv.Itoa(triggerIndex))
	if dedup != "" {
		b = appendField(b, "dedup")
		b = appendField(b, dedup)
	} else {
		b = appendField(b, "signals")
		names := make([]string, 0, len(match))
		for name := range match {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			b = appendField(b, name)
			b = appendField(b, strconv.FormatInt(match[name].Seq, 10))
		}
	}
	return uuid.NewSHA1(namespace(triggerNamespaceName), b).String()
}

// appendField appends s length-prefixed ("<len>:<s>"), so that no two
// different field lists give the same bytes.
func appendField(b []byte, s string) []byte {
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, ':')
	return append(b, s...)
}
