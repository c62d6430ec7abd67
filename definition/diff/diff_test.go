package diff

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// base is version 1 of the workflow most cases change.
const base = `{
  "properties": {"owner": "data", "run_strategy": "sequential"},
  "workflow": {
    "id": "wf",
    "timeout": "1h",
    "params": {"day": {"value": "2026-01-01", "type": "STRING"}},
    "steps": [
      {"step": {"id": "extract", "type": "NoOp", "transition": {"successors": {"wait": "true"}}}},
      {"step": {"id": "wait", "type": "Sleep", "params": {"sleep_seconds": {"value": 60, "type": "LONG"}}, "transition": {"successors": {"load": "true"}}}},
      {"foreach": {"id": "each", "steps": [{"step": {"id": "inner", "type": "NoOp"}}]}},
      {"step": {"id": "load", "type": "NoOp", "retry_policy": {"user_limit": 2}}}
    ]
  }
}`

// edit returns base with the replacements applied, each old string once.
func edit(t *testing.T, pairs ...string) string {
	t.Helper()
	out := base
	for i := 0; i < len(pairs); i += 2 {
		if strings.Count(out, pairs[i]) != 1 {
			t.Fatalf("%q is not once in base", pairs[i])
		}
		out = strings.Replace(out, pairs[i], pairs[i+1], 1)
	}
	return out
}

func compare(t *testing.T, to string) *Diff {
	t.Helper()
	d, err := Compare("wf", Version{1, []byte(base)}, Version{2, []byte(to)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// render is a diff's entries, one line each, for comparison.
func render(d *Diff) []string {
	var out []string
	ch := func(prefix string, c Change) string {
		return fmt.Sprintf("%s%s %s -> %s", prefix, c.Path, c.From, c.To)
	}
	for _, s := range d.Steps.Added {
		out = append(out, fmt.Sprintf("+step %s %s %s %v", s.ID, s.Kind, s.Path, s.Parents))
	}
	for _, s := range d.Steps.Removed {
		out = append(out, fmt.Sprintf("-step %s %s %s %v", s.ID, s.Kind, s.Path, s.Parents))
	}
	for _, s := range d.Steps.Changed {
		line := fmt.Sprintf("~step %s %s", s.ID, s.Path)
		if s.Moved {
			line += fmt.Sprintf(" moved from %s %v", s.FromPath, s.FromParents)
		}
		out = append(out, line)
		for _, c := range s.Changes {
			out = append(out, ch("  "+c.Field+" @", c))
		}
	}
	for _, e := range d.Edges.Added {
		out = append(out, fmt.Sprintf("+edge %s->%s %s", e.From, e.To, e.Condition))
	}
	for _, e := range d.Edges.Removed {
		out = append(out, fmt.Sprintf("-edge %s->%s %s", e.From, e.To, e.Condition))
	}
	for _, e := range d.Edges.Changed {
		out = append(out, fmt.Sprintf("~edge %s->%s %s => %s", e.From, e.To, e.FromCondition, e.Condition))
	}
	for _, p := range d.Params.Added {
		out = append(out, fmt.Sprintf("+param %s %s %s", p.Name, p.Path, p.Value))
	}
	for _, p := range d.Params.Removed {
		out = append(out, fmt.Sprintf("-param %s %s %s", p.Name, p.Path, p.Value))
	}
	for _, p := range d.Params.Changed {
		for _, c := range p.Changes {
			out = append(out, ch("~param "+p.Name+" ", c))
		}
	}
	for _, c := range d.Workflow {
		out = append(out, ch("~workflow ", c))
	}
	for _, c := range d.Properties {
		out = append(out, ch("~properties ", c))
	}
	return out
}

func TestCompare(t *testing.T) {
	cases := []struct {
		name string
		to   func(t *testing.T) string
		want []string
	}{
		{"identical", func(t *testing.T) string { return base }, nil},
		{"a step param's value", func(t *testing.T) string { return edit(t, `"value": 60`, `"value": 120`) }, []string{
			"~step wait workflow.steps[1].step",
			"  params.sleep_seconds.value @workflow.steps[1].step.params.sleep_seconds.value 60 -> 120",
		}},
		{"a step type, a retry policy, a failure mode and tags", func(t *testing.T) string {
			return edit(t, `"type": "Sleep"`, `"type": "NoOp", "failure_mode": "IGNORE_FAILURE", "tags": ["a"]`, `{"user_limit": 2}`, `{"user_limit": 3, "backoff": {"type": "FIXED"}}`)
		}, []string{
			"~step load workflow.steps[3].step",
			"  retry_policy.backoff @workflow.steps[3].step.retry_policy.backoff  -> {\"type\":\"FIXED\"}",
			"  retry_policy.user_limit @workflow.steps[3].step.retry_policy.user_limit 2 -> 3",
			"~step wait workflow.steps[1].step",
			"  failure_mode @workflow.steps[1].step.failure_mode  -> \"IGNORE_FAILURE\"",
			"  tags @workflow.steps[1].step.tags  -> [\"a\"]",
			"  type @workflow.steps[1].step.type \"Sleep\" -> \"NoOp\"",
		}},
		{"a step added with its edge", func(t *testing.T) string {
			return edit(t, `"retry_policy": {"user_limit": 2}}}`, `"retry_policy": {"user_limit": 2}, "transition": {"successors": {"notify": "true"}}}}, {"step": {"id": "notify", "type": "Notebook"}}`)
		}, []string{
			"+step notify step workflow.steps[4].step []",
			"~step load workflow.steps[3].step",
			"  transition @workflow.steps[3].step.transition  -> {\"successors\":{\"notify\":\"true\"}}",
			"+edge load->notify true",
		}},
		{"a step removed and its edges rewired", func(t *testing.T) string {
			return edit(t,
				`{"step": {"id": "wait", "type": "Sleep", "params": {"sleep_seconds": {"value": 60, "type": "LONG"}}, "transition": {"successors": {"load": "true"}}}},`, ``,
				`"successors": {"wait": "true"}`, `"successors": {"load": "params.day != ''"}`)
		}, []string{
			"-step wait step workflow.steps[1].step []",
			"~step extract workflow.steps[0].step",
			"  transition.successors.load @workflow.steps[0].step.transition.successors.load  -> \"params.day != ''\"",
			"  transition.successors.wait @workflow.steps[0].step.transition.successors.wait \"true\" -> ",
			"+edge extract->load params.day != ''",
			"-edge extract->wait true",
			"-edge wait->load true",
		}},
		{"an edge's condition", func(t *testing.T) string { return edit(t, `{"load": "true"}`, `{"load": "1 > 0"}`) }, []string{
			"~step wait workflow.steps[1].step",
			"  transition.successors.load @workflow.steps[1].step.transition.successors.load \"true\" -> \"1 > 0\"",
			"~edge wait->load true => 1 > 0",
		}},
		{"a step moved into a loop", func(t *testing.T) string {
			return edit(t,
				`{"step": {"id": "extract", "type": "NoOp", "transition": {"successors": {"wait": "true"}}}},`, ``,
				`[{"step": {"id": "inner", "type": "NoOp"}}]`, `[{"step": {"id": "inner", "type": "NoOp"}}, {"step": {"id": "extract", "type": "NoOp"}}]`)
		}, []string{
			"~step extract workflow.steps[1].foreach.steps[1].step moved from workflow.steps[0].step []",
			"  transition @workflow.steps[0].step.transition {\"successors\":{\"wait\":\"true\"}} -> ",
			"-edge extract->wait true",
		}},
		{"a loop body's step changed, the loop not", func(t *testing.T) string {
			return edit(t, `{"step": {"id": "inner", "type": "NoOp"}}`, `{"step": {"id": "inner", "type": "Sleep"}}`)
		}, []string{
			"~step inner workflow.steps[2].foreach.steps[0].step",
			"  type @workflow.steps[2].foreach.steps[0].step.type \"NoOp\" -> \"Sleep\"",
		}},
		{"a step that became a loop", func(t *testing.T) string {
			return edit(t, `{"step": {"id": "load", "type": "NoOp", "retry_policy": {"user_limit": 2}}}`, `{"while": {"id": "load", "condition": "false", "steps": []}}`)
		}, []string{
			"+step load while workflow.steps[3].while []",
			"-step load step workflow.steps[3].step []",
		}},
		{"workflow params", func(t *testing.T) string {
			return edit(t, `"params": {"day": {"value": "2026-01-01", "type": "STRING"}}`, `"params": {"day": {"value": "2026-02-01", "type": "STRING"}, "run-mode": {"value": "full", "type": "STRING"}}`)
		}, []string{
			"+param run-mode workflow.params[\"run-mode\"] {\"type\":\"STRING\",\"value\":\"full\"}",
			"~param day workflow.params.day.value \"2026-01-01\" -> \"2026-02-01\"",
		}},
		{"a param removed", func(t *testing.T) string {
			return edit(t, `"params": {"day": {"value": "2026-01-01", "type": "STRING"}},`, ``)
		}, []string{
			"-param day workflow.params.day {\"type\":\"STRING\",\"value\":\"2026-01-01\"}",
		}},
		{"workflow fields and triggers", func(t *testing.T) string {
			return edit(t, `"timeout": "1h",`, `"timeout": "2h", "criticality": "HIGH", "instance_step_concurrency": 4, "time_triggers": [{"cron": "0 * * * *", "timezone": "UTC"}],`)
		}, []string{
			"~workflow workflow.criticality  -> \"HIGH\"",
			"~workflow workflow.instance_step_concurrency  -> 4",
			"~workflow workflow.time_triggers  -> [{\"cron\":\"0 * * * *\",\"timezone\":\"UTC\"}]",
			"~workflow workflow.timeout \"1h\" -> \"2h\"",
		}},
		{"properties pushed with the version", func(t *testing.T) string {
			return edit(t, `"properties": {"owner": "data", "run_strategy": "sequential"},`, `"properties": {"owner": "ml", "step_concurrency": 3}, "git_info": {"commit": "abc"},`)
		}, []string{
			"~workflow git_info  -> {\"commit\":\"abc\"}",
			"~properties properties.owner \"data\" -> \"ml\"",
			"~properties properties.run_strategy \"sequential\" -> ",
			"~properties properties.step_concurrency  -> 3",
		}},
		{"array elements", func(t *testing.T) string {
			return edit(t, `"type": "Sleep"`, `"type": "Sleep", "tags": ["a", "b"]`)
		}, []string{
			"~step wait workflow.steps[1].step",
			"  tags @workflow.steps[1].step.tags  -> [\"a\",\"b\"]",
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := compare(t, c.to(t))
			got := render(d)
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
			if d.Empty() != (len(c.want) == 0) || d.Truncated || d.From != 1 || d.To != 2 || d.WorkflowID != "wf" {
				t.Fatalf("empty %v, truncated %v, %s %d..%d", d.Empty(), d.Truncated, d.WorkflowID, d.From, d.To)
			}
		})
	}
}

// TestCompareJSONShape: every list is an array, never null, and a change's
// absent side is left out.
func TestCompareJSONShape(t *testing.T) {
	out, err := json.Marshal(compare(t, edit(t, `"timeout": "1h",`, ``)))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"workflow_id":"wf","from":1,"to":2,"steps":{"added":[],"removed":[],"changed":[]},"edges":{"added":[],"removed":[],"changed":[]},` +
		`"params":{"added":[],"removed":[],"changed":[]},"workflow":[{"path":"workflow.timeout","from":"1h"}],"properties":[],"truncated":false,"limit":2000}`
	if string(out) != want {
		t.Fatalf("got\n%s\nwant\n%s", out, want)
	}
}

// chain is a definition of n steps in a line, each with a param p.
func chain(n int, p string) []byte {
	var b strings.Builder
	b.WriteString(`{"workflow": {"id": "big", "steps": [`)
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"step": {"id": "s%d", "type": "NoOp", "params": {"p": {"value": %q, "type": "STRING"}}`, i, p)
		if i+1 < n {
			fmt.Fprintf(&b, `, "transition": {"successors": {"s%d": "true"}}`, i+1)
		}
		b.WriteString("}}")
	}
	b.WriteString("]}}")
	return []byte(b.String())
}

// TestCompareHugeIsBounded: two 1,000-step definitions that differ in
// every step list at most the limit's entries, say they were truncated,
// and take well under a second (the time bound is generous: it catches a
// quadratic walk, not a slow machine).
func TestCompareHugeIsBounded(t *testing.T) {
	from, to := chain(1000, "a"), chain(1000, "b")
	start := time.Now()
	d, err := Compare("big", Version{1, from}, Version{2, to}, Options{MaxChanges: 100})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("took %v", took)
	}
	n := 0
	for _, s := range d.Steps.Changed {
		n += len(s.Changes)
	}
	if !d.Truncated || d.Limit != 100 || n != 100 || len(d.Steps.Changed) != 100 {
		t.Fatalf("truncated %v limit %d: %d changes in %d steps", d.Truncated, d.Limit, n, len(d.Steps.Changed))
	}
	out, _ := json.Marshal(d)
	if len(out) > 64<<10 {
		t.Fatalf("a diff of 100 entries is %d bytes", len(out))
	}
	// Below the limit nothing is truncated.
	d, err = Compare("big", Version{1, from}, Version{2, to}, Options{})
	if err != nil || d.Truncated || len(d.Steps.Changed) != 1000 {
		t.Fatalf("default limit: %v truncated %v, %d changed", err, d.Truncated, len(d.Steps.Changed))
	}
}

func TestCompareRejectsNonDefinitions(t *testing.T) {
	for _, doc := range []string{``, `[]`, `{"workflow": 3}`, `{"properties": {}}`, `{"workflow": {}} trailing`} {
		if _, err := Compare("wf", Version{1, []byte(base)}, Version{2, []byte(doc)}, Options{}); err == nil {
			t.Errorf("%q: no error", doc)
		}
	}
}
