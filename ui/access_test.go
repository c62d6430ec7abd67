package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/access"
)

// TestNeedsMatchAccess: the UI's table of the role each action needs
// (web/src/access.ts, needs) names every workflow action of package access
// with the role access.Needs gives it, and nothing else.
func TestNeedsMatchAccess(t *testing.T) {
	src, err := os.ReadFile("web/src/access.ts")
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile(`(?s)export const needs = \{\n(.*?)\n\}`).FindSubmatch(src)
	if block == nil {
		t.Fatal("no `export const needs = {...}` in web/src/access.ts")
	}
	entry := regexp.MustCompile(`^\s*"?([a-z ]+?)"?: "(reader|operator|owner)",$`)
	got := map[string]string{}
	for _, line := range strings.Split(string(block[1]), "\n") {
		m := entry.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("a line of needs is not `action: \"role\",`: %q", line)
		}
		got[m[1]] = m[2]
	}
	want := map[string]string{}
	for _, a := range access.WorkflowActions() {
		r, _ := access.Needs(a)
		want[string(a)] = r.String()
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("the UI's needs\n%v\nwant access.Needs\n%v", got, want)
	}
}

// fakeWorkflowAPI serves the routes the workflow and instance pages read,
// in the API's shapes, for workflows named after the access they answer:
// wf-reader, wf-operator and wf-owner (enforced, that role), wf-open (role
// reader, not enforced) and wf-old (no access route: 404, as an API before
// access answers). Each has instance 1 IN_PROGRESS with step a RUNNING and
// step b PAUSED. Every definition validates. It records every write.
type fakeWorkflowAPI struct {
	mu     sync.Mutex
	writes []string
}

func (f *fakeWorkflowAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	answer := func(v any) { _ = json.NewEncoder(w).Encode(v) }
	p := strings.TrimPrefix(r.URL.Path, "/api/v3/workflows/")
	parts := strings.Split(p, "/")
	if r.URL.Path == "/api/v3/workflows/actions/validate" {
		answer(map[string]any{})
		return
	}
	if r.Method != http.MethodGet {
		f.mu.Lock()
		f.writes = append(f.writes, r.Method+" "+r.URL.Path)
		f.mu.Unlock()
		answer(map[string]any{"workflow_id": parts[0], "workflow_instance_id": 1, "workflow_run_id": 1, "status": "IN_PROGRESS"})
		return
	}
	const now = 1795000000000
	instance := func(id string) map[string]any {
		return map[string]any{"workflow_id": id, "workflow_instance_id": 1, "workflow_run_id": 1, "workflow_version_id": 1, "status": "IN_PROGRESS",
			"create_time": now, "start_time": now, "step_statuses": map[string]string{"a": "RUNNING", "b": "PAUSED"},
			"runtime_overview": map[string]any{"total_step_count": 2, "step_overview": map[string]int{"RUNNING": 1, "PAUSED": 1}}, "timeline": []any{}}
	}
	step := func(id, sid, status string) map[string]any {
		return map[string]any{"workflow_id": id, "workflow_instance_id": 1, "workflow_run_id": 1, "step_id": sid, "step_attempt_id": 1, "step_type": "Sleep",
			"runtime_state": map[string]any{"status": status, "start_time": now}, "timeline": []any{}}
	}
	backfill := func(id string) map[string]any {
		return map[string]any{"workflow_id": id, "backfill_id": "bf-1", "workflow_version_id": 1, "from": "2026-01-01T00:00:00Z", "to": "2026-01-02T00:00:00Z",
			"concurrency": 2, "priority": "normal", "status": "RUNNING", "total": 24, "admitted": 2, "running": 2, "pending": 22, "counts": map[string]int{},
			"next_firing": "2026-01-01T02:00:00Z", "create_time": now}
	}
	switch {
	case r.URL.Path == "/api/v3/workflows/instances/action-map":
		answer(map[string][]string{"IN_PROGRESS": {"STOP", "KILL"}})
	case r.URL.Path == "/api/v3/workflows/steps/instances/action-map":
		answer(map[string][]string{"RUNNING": {"STOP", "KILL", "SKIP"}, "PAUSED": {"RESUME"}})
	case len(parts) == 2 && parts[1] == "access":
		role, ok := strings.CutPrefix(parts[0], "wf-")
		switch {
		case !ok || role == "old":
			w.WriteHeader(http.StatusNotFound)
			answer(map[string]any{"status": 404, "message": "no route", "errors": []string{}})
			return
		case role == "open":
			role = "reader"
		}
		answer(map[string]any{"workflow_id": parts[0], "owners": []string{"team:data"}, "operators": []string{"team:data", "team:ml"},
			"readers": []string{}, "role": role, "enforced": parts[0] != "wf-open"})
	case len(parts) == 3 && parts[1] == "versions":
		answer(map[string]any{"metadata": map[string]any{"workflow_id": parts[0], "workflow_version_id": 1, "create_time": now},
			"workflow":  map[string]any{"id": parts[0], "steps": []any{map[string]any{"step": map[string]any{"id": "a", "type": "Sleep"}}, map[string]any{"step": map[string]any{"id": "b", "type": "Sleep"}}}},
			"is_active": true, "is_latest": true, "is_default": true, "properties_snapshot": map[string]any{"owner": "data"}})
	case len(parts) == 2 && parts[1] == "backfills":
		answer(map[string]any{"backfills": []any{backfill(parts[0])}})
	case len(parts) == 3 && parts[1] == "backfills":
		answer(backfill(parts[0]))
	case len(parts) == 2 && parts[1] == "instances":
		answer(map[string]any{"workflow_instances": []any{instance(parts[0])}})
	case len(parts) == 3 && parts[1] == "instances":
		answer(instance(parts[0]))
	case len(parts) == 4 && parts[3] == "steps":
		answer([]any{step(parts[0], "a", "RUNNING"), step(parts[0], "b", "PAUSED")})
	default:
		w.WriteHeader(http.StatusNotFound)
		answer(map[string]any{"status": 404, "message": "no route " + r.URL.Path, "errors": []string{}})
	}
}

// TestAccessInBrowser runs web/e2e/access.e2e.mjs (playwright-core,
// headless Chromium) against the embedded UI and a fake of the API's
// workflow routes: a reader sees its role and finds Start, Stop, Kill and
// the step actions disabled, each titled with the role it needs, and a
// click on them sends nothing; an operator's are enabled and its Stop
// reaches the API; an owner's too; a stack that does not enforce access
// says so and disables nothing; an API without the access route leaves
// everything enabled and shows no role. On the preview page, Push is
// disabled once a validated definition names a workflow the caller does
// not own, and enabled again when the text changes. The writes the fake received are
// exactly the operator's Stop.
//
// It needs Node.js, web/node_modules (make ui-deps) and Chromium
// (/usr/bin/chromium or $CHROMIUM; make chromium), and fails, naming what
// is missing, without them — as test/TestWebUI does.
func TestAccessInBrowser(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not on PATH: the UI's browser tests run playwright-core on Node.js")
	}
	browser := os.Getenv("CHROMIUM")
	if browser == "" {
		browser = "/usr/bin/chromium"
	}
	if _, err := os.Stat(browser); err != nil {
		t.Fatalf("no Chromium at %s (make chromium installs Debian's chromium): %v", browser, err)
	}
	script, err := filepath.Abs("web/e2e/access.e2e.mjs")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join("web", "node_modules", "playwright-core")); err != nil {
		t.Fatalf("playwright-core is not installed in ui/web (make ui-deps): %v", err)
	}
	api := &fakeWorkflowAPI{}
	mux := http.NewServeMux()
	mux.Handle("/ui/", Handler())
	mux.Handle("/api/v3/", api)
	srv := httptest.NewServer(mux)
	defer srv.Close()

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script)
	cmd.Env = append(os.Environ(), "MAESTRO_UI_URL="+srv.URL, "CHROMIUM="+browser)
	out, err := cmd.CombinedOutput()
	t.Logf("access.e2e.mjs:\n%s", out)
	if err != nil {
		t.Fatalf("the UI access test failed: %v", err)
	}
	api.mu.Lock()
	defer api.mu.Unlock()
	want := []string{fmt.Sprintf("PUT %s", "/api/v3/workflows/wf-operator/instances/1/actions/stop")}
	if !slices.Equal(api.writes, want) {
		t.Fatalf("writes %q, want %q", api.writes, want)
	}
}
