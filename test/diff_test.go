package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/definition/diff"
	"github.com/maestro-serverless/maestro/localstack/stack"
)

// diffVersion is version v of the workflow TestVersionDiff compares:
// extract -> wait -> load, extract -> cleanup, a foreach each around
// step inner, and audit, the same in both. Version 2 removes cleanup, adds notify after load, sleeps 2
// s instead of 1 and names inner.
func diffVersion(wf string, v int) []byte {
	if v == 1 {
		return fmt.Appendf(nil, `{"properties": {"owner": "diff-e2e"}, "workflow": {"id": %q, "steps": [
  {"step": {"id": "extract", "type": "NoOp", "transition": {"successors": {"wait": "true", "cleanup": "true"}}}},
  {"step": {"id": "wait", "type": "Sleep", "params": {"sleep_seconds": {"value": 1, "type": "LONG"}}, "transition": {"successors": {"load": "true"}}}},
  {"step": {"id": "load", "type": "NoOp"}},
  {"foreach": {"id": "each", "params": {"loop_params": {"value": {"i": {"value": [1, 2], "type": "LONG_ARRAY"}}, "type": "MAP"}},
    "steps": [{"step": {"id": "inner", "type": "NoOp"}}]}},
  {"step": {"id": "cleanup", "type": "NoOp"}},
  {"step": {"id": "audit", "type": "NoOp"}}]}}`, wf)
	}
	return fmt.Appendf(nil, `{"properties": {"owner": "diff-e2e"}, "workflow": {"id": %q, "steps": [
  {"step": {"id": "extract", "type": "NoOp", "transition": {"successors": {"wait": "true"}}}},
  {"step": {"id": "wait", "type": "Sleep", "params": {"sleep_seconds": {"value": 2, "type": "LONG"}}, "transition": {"successors": {"load": "true"}}}},
  {"step": {"id": "load", "type": "NoOp", "transition": {"successors": {"notify": "true"}}}},
  {"foreach": {"id": "each", "params": {"loop_params": {"value": {"i": {"value": [1, 2], "type": "LONG_ARRAY"}}, "type": "MAP"}},
    "steps": [{"step": {"id": "inner", "name": "Inner", "type": "NoOp"}}]}},
  {"step": {"id": "notify", "type": "NoOp"}},
  {"step": {"id": "audit", "type": "NoOp"}}]}}`, wf)
}

// TestVersionDiff pushes two versions of a workflow to a local stack and
// asks the API for their diff: the changed step's JSON path, the added
// and removed steps and edges; a version compared with itself (one
// DynamoDB key read once) is empty; a missing version is a 404 naming it,
// a bad selector a 400 naming the path parameter. Then it drives the diff
// page in headless Chromium (ui/web/e2e/diff.e2e.mjs): from the workflow
// page's "compare with previous" link to both DAGs with their highlights
// and the list of changes, then a missing version's 404 and a bad
// selector's 400 on the page. Like TestWebUI it needs Node.js,
// ui/web/node_modules and Chromium, and fails naming what is missing.
func TestVersionDiff(t *testing.T) {
	t.Parallel()
	node, browser, script := browserScript(t, "diff.e2e.mjs")

	s := startSystem(t, stack.Options{})
	wf := fmt.Sprintf("diff-e2e-%d", time.Now().UnixNano())
	s.push(diffVersion(wf, 1))
	s.push(diffVersion(wf, 2))
	base := "/api/v3/workflows/" + wf + "/versions/"

	var d diff.Diff
	if code := s.do(http.MethodGet, base+"1/diff/latest", nil, &d); code != http.StatusOK {
		t.Fatalf("diff 1..latest: %d", code)
	}
	got := fmt.Sprintf("from %d to %d; added %v; removed %v; edges +%v -%v", d.From, d.To, stepIDs(d.Steps.Added), stepIDs(d.Steps.Removed), d.Edges.Added, d.Edges.Removed)
	want := "from 1 to 2; added [notify]; removed [cleanup]; edges +[{load notify true }] -[{extract cleanup true }]"
	if got != want {
		t.Fatalf("diff 1..latest:\n%s\nwant\n%s", got, want)
	}
	var paths []string
	for _, st := range d.Steps.Changed {
		for _, c := range st.Changes {
			paths = append(paths, c.Path)
		}
	}
	if want := "workflow.steps[0].step.transition.successors.cleanup workflow.steps[3].foreach.steps[0].step.name " +
		"workflow.steps[2].step.transition workflow.steps[1].step.params.sleep_seconds.value"; strings.Join(paths, " ") != want { // by step id: extract, inner, load, wait
		t.Fatalf("changed paths %v, want %s", paths, want)
	}
	var same diff.Diff
	if code := s.do(http.MethodGet, base+"2/diff/latest", nil, &same); code != http.StatusOK || !same.Empty() || same.From != 2 || same.To != 2 {
		t.Fatalf("diff 2..latest: %d %+v", code, same)
	}
	var e struct {
		Message string   `json:"message"`
		Errors  []string `json:"errors"`
	}
	if code := s.do(http.MethodGet, base+"1/diff/3", nil, &e); code != http.StatusNotFound || !strings.Contains(e.Message, "has no version 3") {
		t.Fatalf("diff 1..3: %d %+v", code, e)
	}
	if code := s.do(http.MethodGet, base+"first/diff/2", nil, &e); code != http.StatusBadRequest || !strings.Contains(strings.Join(e.Errors, " "), "version: must be active, latest, default or a positive version number") {
		t.Fatalf("diff first..2: %d %+v", code, e)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script)
	cmd.Env = append(os.Environ(), "MAESTRO_UI_URL="+s.st.URL, "MAESTRO_DIFF_WORKFLOW="+wf, "CHROMIUM="+browser)
	if shots := os.Getenv("MAESTRO_UI_SCREENSHOTS"); shots != "" {
		cmd.Env = append(cmd.Env, "MAESTRO_SCREENSHOTS="+shots)
	}
	out, err := cmd.CombinedOutput()
	t.Logf("diff.e2e.mjs:\n%s", out)
	if err != nil {
		t.Fatalf("the diff page test failed: %v", err)
	}
}

func stepIDs(steps []diff.Step) []string {
	ids := make([]string, len(steps))
	for i, s := range steps {
		ids[i] = s.ID
	}
	return ids
}
