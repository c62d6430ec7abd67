package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/localstack/stack"
	"github.com/maestro-serverless/maestro/orchestrator"
)

// TestBackfillPage backfills four hourly firings of the backfill test's
// napping workflow at concurrency 2 on a local stack and lets the first two
// runs end: the instance list then carries each run's BACKFILL initiator
// (its backfill and scheduled time) from the summary item. Then it drives
// the backfill page in headless Chromium (ui/web/e2e/backfill.e2e.mjs):
// the workflow page's backfills table links to the page, which shows the
// counts (4 firings, 4 admitted, 2 running, 0 pending, 2 succeeded), one
// timeline bar per run in firing order, coloured by status and linking to
// its instance, pause then resume change the status shown, and cancel
// shows CANCELLED and the napping runs STOPPED on the timeline. Like
// TestWebUI it needs Node.js, ui/web/node_modules and Chromium.
func TestBackfillPage(t *testing.T) {
	t.Parallel()
	node, browser, script := browserScript(t, "backfill.e2e.mjs")

	s := startSystem(t, stack.Options{})
	wf := s.push([]byte(strings.Replace(backfillWF, `"bf-hourly"`, `"bf-ui"`, 1)))
	base := "/api/v3/workflows/" + wf + "/backfills"
	var v orchestrator.BackfillView
	if code := s.do("POST", base, []byte(`{"from":"2026-01-01T00:00:00Z","to":"2026-01-01T04:00:00Z","concurrency":2}`), &v); code != http.StatusCreated {
		t.Fatalf("create: HTTP %d", code)
	}
	id := v.BackfillID
	poll(t, 20*time.Second, "2 backfill runs napping", func() (bool, string) {
		got, running := s.workflowRuns(t, wf, nil)
		return len(got) == 2 && running == 2, fmt.Sprint(len(got), running)
	})
	s.advance(t, 11*time.Minute)
	poll(t, 30*time.Second, "2 runs ended, the next 2 napping", func() (bool, string) {
		v = s.backfill(t, wf, id)
		got, running := s.workflowRuns(t, wf, nil)
		return v.Counts["SUCCEEDED"] == 2 && v.Running == 2 && v.Admitted == 4 && len(got) == 4 && running == 2,
			fmt.Sprintf("%+v; %d runs, %d running", v, len(got), running)
	})

	// The list carries each run's initiator: the page needs no per-run read.
	var runs []string
	for _, r := range s.instances(t, wf) {
		ini := r.Initiator
		if ini == nil || ini.Type != "BACKFILL" || ini.Backfill != id || ini.ScheduledTime == 0 {
			t.Fatalf("instance %d in the list: initiator %+v", r.WorkflowInstanceID, ini)
		}
		runs = append(runs, fmt.Sprintf("%s=%d=%s", time.UnixMilli(ini.ScheduledTime).UTC().Format(time.RFC3339), r.WorkflowInstanceID, r.Status))
	}
	sort.Strings(runs)
	if !strings.HasPrefix(runs[0], "2026-01-01T00:00:00Z=") || !strings.HasPrefix(runs[3], "2026-01-01T03:00:00Z=") {
		t.Fatalf("the runs' firings: %v", runs)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script)
	cmd.Env = append(os.Environ(), "MAESTRO_UI_URL="+s.st.URL, "MAESTRO_BACKFILL_WORKFLOW="+wf, "MAESTRO_BACKFILL_ID="+id,
		"MAESTRO_BACKFILL_RUNS="+strings.Join(runs, ","), "CHROMIUM="+browser)
	if shots := os.Getenv("MAESTRO_UI_SCREENSHOTS"); shots != "" {
		cmd.Env = append(cmd.Env, "MAESTRO_SCREENSHOTS="+shots)
	}
	out, err := cmd.CombinedOutput()
	t.Logf("backfill.e2e.mjs:\n%s", out)
	if err != nil {
		t.Fatalf("the backfill page test failed: %v", err)
	}
	if v = s.backfill(t, wf, id); v.Status != "CANCELLED" || v.Priority != "low" {
		t.Fatalf("after the page's pause, resume, priority and cancel: %+v", v)
	}
}
