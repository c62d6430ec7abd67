package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/maestro-serverless/maestro/definition/diff"
)

// maxShownValue is the longest value the text rendering of a diff prints
// whole; a longer one is cut (--json prints it all).
const maxShownValue = 120

// diffVersions prints what changed from version a to version b of wf
// (maestro diff WF A B): the API's JSON with --json, else one line per
// change: "+ step x", "- step y", "~ step z: params.p.value 60 -> 120".
func (r *runner) diffVersions(ctx context.Context, wf, a, b string) int {
	path := fmt.Sprintf("/api/v3/workflows/%s/versions/%s/diff/%s", url.PathEscape(wf), url.PathEscape(a), url.PathEscape(b))
	var d diff.Diff
	if err := r.c.Do(ctx, http.MethodGet, path, nil, &d); err != nil {
		return r.fail("diff", err)
	}
	if r.json {
		r.printJSON(&d)
		return ExitOK
	}
	writeDiff(r.o.Stdout, &d)
	return ExitOK
}

// writeDiff renders d as text, one line per entry.
func writeDiff(w io.Writer, d *diff.Diff) {
	fmt.Fprintf(w, "%s: version %d -> version %d\n", d.WorkflowID, d.From, d.To)
	if d.Empty() {
		fmt.Fprintln(w, "no changes")
		return
	}
	for _, s := range d.Steps.Added {
		fmt.Fprintf(w, "+ step %s%s at %s\n", s.ID, kindOf(s), s.Path)
	}
	for _, s := range d.Steps.Removed {
		fmt.Fprintf(w, "- step %s%s\n", s.ID, kindOf(s))
	}
	for _, s := range d.Steps.Changed {
		if s.Moved {
			fmt.Fprintf(w, "~ step %s: moved from %s to %s\n", s.ID, where(s.FromParents), where(s.Parents))
		}
		for _, c := range s.Changes {
			fmt.Fprintf(w, "~ step %s: %s %s -> %s\n", s.ID, c.Field, shown(c.From), shown(c.To))
		}
	}
	for _, e := range d.Edges.Added {
		fmt.Fprintf(w, "+ edge %s -> %s%s\n", e.From, e.To, when(e.Condition))
	}
	for _, e := range d.Edges.Removed {
		fmt.Fprintf(w, "- edge %s -> %s%s\n", e.From, e.To, when(e.Condition))
	}
	for _, e := range d.Edges.Changed {
		fmt.Fprintf(w, "~ edge %s -> %s: when %s -> when %s\n", e.From, e.To, e.FromCondition, e.Condition)
	}
	for _, p := range d.Params.Added {
		fmt.Fprintf(w, "+ param %s = %s\n", p.Name, shown(p.Value))
	}
	for _, p := range d.Params.Removed {
		fmt.Fprintf(w, "- param %s\n", p.Name)
	}
	for _, p := range d.Params.Changed {
		for _, c := range p.Changes {
			fmt.Fprintf(w, "~ param %s: %s %s -> %s\n", p.Name, c.Path, shown(c.From), shown(c.To))
		}
	}
	for _, c := range append(d.Workflow, d.Properties...) {
		fmt.Fprintf(w, "~ %s %s -> %s\n", c.Path, shown(c.From), shown(c.To))
	}
	if d.Truncated {
		fmt.Fprintf(w, "(truncated: more than %d entries changed; the first %[1]d are listed)\n", d.Limit)
	}
}

func kindOf(s diff.Step) string {
	if s.Type != "" {
		return " (" + s.Type + ")"
	}
	return " (" + s.Kind + ")"
}

// where names a step's place: the top level or the loops around it.
func where(parents []string) string {
	if len(parents) == 0 {
		return "the top level"
	}
	return "loop " + strings.Join(parents, " / ")
}

func when(cond string) string {
	if strings.TrimSpace(cond) == "true" {
		return ""
	}
	return " when " + cond
}

// shown is a JSON value as the text rendering prints it: (none) when
// absent, <, > and & as they are (the API's JSON escapes them), cut past
// maxShownValue bytes.
func shown(v []byte) string {
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err == nil {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if enc.Encode(x) == nil {
			v = bytes.TrimSuffix(b.Bytes(), []byte("\n"))
		}
	}
	switch {
	case len(v) == 0:
		return "(none)"
	case len(v) > maxShownValue:
		return string(v[:maxShownValue]) + "…"
	}
	return string(v)
}
