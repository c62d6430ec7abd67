package dsl

import (
	"regexp"
	"strings"
)

// The three forms of a DSL transition, as Maestro's TransitionParser reads
// them: a bare successor id, "IF <condition> THEN <id>" and
// "OTHERWISE <id>" (keywords in any case).
var (
	simpleTransition      = regexp.MustCompile(`^\s*([_a-zA-Z][.\-_a-zA-Z0-9]*)\s*$`)
	conditionalTransition = regexp.MustCompile(`(?i)^\s*IF\s+(.+?)\s+THEN\s+([_a-zA-Z][.\-_a-zA-Z0-9]*)\s*$`)
	otherwiseTransition   = regexp.MustCompile(`(?i)^\s*OTHERWISE\s+([_a-zA-Z][.\-_a-zA-Z0-9]*)\s*$`)
)

// transitions turns a job's transition strings into its successors map:
// a bare id is unconditional ("true"), IF gives its condition, and
// OTHERWISE, which must come last, takes the negation of every IF before
// it ("!((c1) || (c2))"), or "true" when there is none. Empty strings are
// skipped.
func (t *translator) transitions(list []transition, jp jpath) *object {
	out := &object{}
	var ifs []string
	add := func(tr transition, id, cond string) {
		if out.has(id) {
			t.failf(tr.node, tr.dp, "successor %q appears twice in the transition list", id)
			return
		}
		out.set(id, cond)
		t.src.record(jp.key(id), tr.node.Line, tr.dp)
	}
	for i, tr := range list {
		if tr.text == "" {
			continue
		}
		if m := simpleTransition.FindStringSubmatch(tr.text); m != nil {
			add(tr, m[1], "true")
			continue
		}
		if m := conditionalTransition.FindStringSubmatch(tr.text); m != nil {
			add(tr, m[2], m[1])
			ifs = append(ifs, m[1])
			continue
		}
		if m := otherwiseTransition.FindStringSubmatch(tr.text); m != nil {
			if i != len(list)-1 {
				t.failf(tr.node, tr.dp, "'OTHERWISE' must be the last row in the transition list")
				continue
			}
			cond := "true"
			if len(ifs) > 0 {
				cond = "!((" + strings.Join(ifs, ") || (") + "))"
			}
			add(tr, m[1], cond)
			continue
		}
		t.failf(tr.node, tr.dp, "invalid transition %q: want 'job_id', 'IF condition THEN job_id' or 'OTHERWISE job_id'", tr.text)
	}
	return out
}
