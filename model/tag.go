package model

import "encoding/json"

// RawJSON is verbatim JSON kept for fields the model carries but does not interpret.
type RawJSON = json.RawMessage

// Tag is a workflow, step or param tag. In JSON a tag is either a bare string
// (its name) or an object {"name", "namespace", "permit", ...attributes}.
type Tag struct {
	Name      string
	Namespace string // SYSTEM, RUNTIME, JOB_TEMPLATE, NOTEBOOK_TEMPLATE, USER_DEFINED, PLATFORM or empty
	// Plain is true when the tag was written as a bare string.
	Plain bool
	// Extra holds every other key of the object form, kept for the round trip.
	Extra map[string]RawJSON
}

// TagList is an ordered list of tags; names must be unique.
type TagList []Tag
