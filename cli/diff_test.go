package cli

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/maestro-serverless/maestro/definition/diff"
)

// diffV1 and diffV2 are two versions the fake diff API compares with the
// real package diff: v2 changes wait's sleep, drops extract, adds notify
// after load, moves inner out of its loop, adds a param and a timeout.
const (
	diffV1 = `{"properties": {"owner": "data"}, "workflow": {"id": "wf", "params": {"day": {"value": "a", "type": "STRING"}}, "steps": [
  {"step": {"id": "extract", "type": "NoOp", "transition": {"successors": {"wait": "true"}}}},
  {"step": {"id": "wait", "type": "Sleep", "params": {"sleep_seconds": {"value": 60, "type": "LONG"}}, "transition": {"successors": {"load": "true"}}}},
  {"foreach": {"id": "each", "steps": [{"step": {"id": "inner", "type": "NoOp"}}]}},
  {"step": {"id": "load", "type": "NoOp"}}]}}`
	diffV2 = `{"properties": {"owner": "data"}, "workflow": {"id": "wf", "timeout": "2h", "params": {"day": {"value": "a", "type": "STRING"}, "mode": {"value": "full", "type": "STRING"}}, "steps": [
  {"step": {"id": "wait", "type": "Sleep", "params": {"sleep_seconds": {"value": 120, "type": "LONG"}}, "transition": {"successors": {"load": "x > 1"}}}},
  {"foreach": {"id": "each", "steps": []}},
  {"step": {"id": "inner", "type": "NoOp"}},
  {"step": {"id": "load", "type": "NoOp", "transition": {"successors": {"notify": "true"}}}},
  {"step": {"id": "notify", "type": "Notebook"}}]}}`
)

// fakeDiffAPI answers GET .../versions/{a}/diff/{b} for workflow wf and
// versions 1 and 2 (latest) with package diff's comparison, a 404 for
// anything else; it records the paths asked.
func fakeDiffAPI(t *testing.T) (string, *[]string) {
	var paths []string
	docs := map[string]diff.Version{"1": {Number: 1, Document: []byte(diffV1)}, "2": {Number: 2, Document: []byte(diffV2)}, "latest": {Number: 2, Document: []byte(diffV2)}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths = append(paths, r.Method+" "+r.URL.EscapedPath())
		w.Header().Set("Content-Type", "application/json")
		rest, ok := strings.CutPrefix(r.URL.Path, "/api/v3/workflows/wf/versions/")
		a, b, _ := strings.Cut(rest, "/diff/")
		from, okA := docs[a]
		to, okB := docs[b]
		if !ok || !okA || !okB {
			w.WriteHeader(http.StatusNotFound)
			_ = json.NewEncoder(w).Encode(map[string]any{"status": 404, "message": "workflow wf has no version 9 (latest is 2)", "errors": []string{}})
			return
		}
		d, err := diff.Compare("wf", from, to, diff.Options{})
		if err != nil {
			t.Error(err)
		}
		_ = json.NewEncoder(w).Encode(d)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &paths
}

// TestDiffCommand: maestro diff prints one line per change — steps added
// (+), removed (-), changed (~ with the field, old and new value), a
// step's move between loops, edges, params, workflow fields; --json prints
// the API's diff; a missing version is the API's 404 message and exit 1;
// a version compared with itself says "no changes".
func TestDiffCommand(t *testing.T) {
	url, paths := fakeDiffAPI(t)
	code, out, errOut := runCLI(t, url, "diff", "wf", "1", "latest")
	want := `wf: version 1 -> version 2
+ step notify (Notebook) at workflow.steps[4].step
- step extract (NoOp)
~ step inner: moved from loop each to the top level
~ step load: transition (none) -> {"successors":{"notify":"true"}}
~ step wait: params.sleep_seconds.value 60 -> 120
~ step wait: transition.successors.load "true" -> "x > 1"
+ edge load -> notify
- edge extract -> wait
~ edge wait -> load: when true -> when x > 1
+ param mode = {"type":"STRING","value":"full"}
~ workflow.timeout (none) -> "2h"
`
	if code != ExitOK || out != want || errOut != "" {
		t.Fatalf("exit %d\n%s\nwant\n%s\n%s", code, out, want, errOut)
	}
	if (*paths)[0] != "GET /api/v3/workflows/wf/versions/1/diff/latest" {
		t.Fatalf("asked %v", *paths)
	}
	code, out, _ = runCLI(t, url, "diff", "wf", "2", "2")
	if code != ExitOK || out != "wf: version 2 -> version 2\nno changes\n" {
		t.Fatalf("same version: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, url, "diff", "--json", "wf", "1", "2")
	var d diff.Diff
	if code != ExitOK || json.Unmarshal([]byte(out), &d) != nil || len(d.Steps.Added) != 1 || d.Steps.Added[0].ID != "notify" || d.Limit != diff.DefaultMaxChanges {
		t.Fatalf("--json: exit %d\n%s", code, out)
	}
	code, _, errOut = runCLI(t, url, "diff", "wf", "1", "9")
	if code != ExitFailed || !strings.Contains(errOut, "no version 9") {
		t.Fatalf("missing version: exit %d, %s", code, errOut)
	}
	if code, _, errOut = runCLI(t, url, "diff", "wf", "1"); code != ExitUsage || !strings.Contains(errOut, "usage: maestro diff WF A B") {
		t.Fatalf("two args: exit %d, %s", code, errOut)
	}
}

// TestWriteDiffTruncated: a truncated diff says so, with its limit.
func TestWriteDiffTruncated(t *testing.T) {
	var b strings.Builder
	writeDiff(&b, &diff.Diff{WorkflowID: "wf", From: 1, To: 2, Truncated: true, Limit: 3,
		Workflow: []diff.Change{{Path: "workflow.description", From: json.RawMessage(`"` + strings.Repeat("x", 200) + `"`)}}})
	want := "wf: version 1 -> version 2\n~ workflow.description \"" + strings.Repeat("x", 119) + "… -> (none)\n(truncated: more than 3 entries changed; the first 3 are listed)\n"
	if b.String() != want {
		t.Fatalf("%q\nwant %q", b.String(), want)
	}
}
