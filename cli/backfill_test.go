package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestBackfillCommand: maestro backfill posts the interval and follows the
// backfill with a progress bar until it completes (exit 0 when every run
// succeeded); --dry-run prints the estimate; status and the actions call
// their routes; missing flags are usage errors.
func TestBackfillCommand(t *testing.T) {
	var mu sync.Mutex
	var posted map[string]any
	var calls []string
	gets := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, r.Method+" "+r.URL.Path)
		body, _ := io.ReadAll(r.Body)
		switch {
		case r.Method == "POST":
			posted = nil
			_ = json.Unmarshal(body, &posted)
			if posted["dry_run"] == true {
				io.WriteString(w, `{"instances":24,"steps":48,"concurrency":4,"waves":6,"first_firing":"2026-01-01T00:00:00Z","last_firing":"2026-01-01T23:00:00Z",`+
					`"duration":{"sample":3,"p50_ms":60000,"p90_ms":90000},"cost":{"sample":3,"run_p50_usd":0.0001,"run_p90_usd":0.0002,"p50_usd":0.0024,"p90_usd":0.0048,"covers":["fargate","lambda_steps"],"prices_of":"2026-11-28"}}`)
				return
			}
			w.WriteHeader(http.StatusCreated)
			io.WriteString(w, `{"workflow_id":"wf","backfill_id":"bf-1","status":"RUNNING","total":24,"admitted":4,"running":4,"pending":20,"counts":{},"concurrency":4,"priority":"normal"}`)
		case r.Method == "GET" && gets == 0:
			gets++
			io.WriteString(w, `{"workflow_id":"wf","backfill_id":"bf-1","status":"RUNNING","total":24,"admitted":16,"running":4,"pending":8,"counts":{"SUCCEEDED":12},"next_firing":"2026-01-01T16:00:00Z","eta_seconds":120}`)
		default:
			io.WriteString(w, `{"workflow_id":"wf","backfill_id":"bf-1","status":"COMPLETED","total":24,"admitted":24,"running":0,"pending":0,"counts":{"SUCCEEDED":24}}`)
		}
	}))
	defer srv.Close()
	run := func(args ...string) (int, string, string) {
		var out, errb bytes.Buffer
		code := Run(t.Context(), append(args, "--endpoint", srv.URL), Options{Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }, Poll: time.Millisecond})
		return code, out.String(), errb.String()
	}

	code, out, errs := run("backfill", "wf", "--from", "2026-01-01T00:00:00Z", "--to", "2026-01-02T00:00:00Z", "--concurrency", "4")
	if code != ExitOK {
		t.Fatalf("backfill: exit %d: %s %s", code, out, errs)
	}
	if posted["from"] != "2026-01-01T00:00:00Z" || posted["to"] != "2026-01-02T00:00:00Z" || posted["concurrency"] != 4.0 || posted["priority"] != "normal" || posted["dry_run"] != false {
		t.Errorf("posted %v", posted)
	}
	for _, want := range []string{
		"backfill bf-1 of wf: 24 firings, concurrency 4, priority normal",
		"bf-1 RUNNING [###############>>>>>..........] 12/24 ended, 4 running, 8 pending (12 succeeded), next 2026-01-01T16:00:00Z, ETA 2m0s",
		"bf-1 COMPLETED [##############################] 24/24 ended, 0 running, 0 pending (24 succeeded)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	code, out, _ = run("backfill", "wf", "--from", "2026-01-01T00:00:00Z", "--to", "2026-01-02T00:00:00Z", "--concurrency", "4", "--dry-run")
	if code != ExitOK || !strings.Contains(out, "dry run: 24 instances (2026-01-01T00:00:00Z to 2026-01-01T23:00:00Z), 48 steps, 6 waves at concurrency 4") ||
		!strings.Contains(out, "duration: p50 1m0s, p90 1m30s (from 3 recent runs)") || !strings.Contains(out, "cost: p50 $0.002400, p90 $0.004800 (from 3 recent runs; covers fargate, lambda_steps)") {
		t.Errorf("dry run: exit %d:\n%s", code, out)
	}

	mu.Lock()
	calls = nil
	mu.Unlock()
	for _, a := range []string{"status", "pause", "resume", "cancel"} {
		if code, out, errs := run("backfill", a, "wf", "bf-1"); code != ExitOK || !strings.Contains(out, "bf-1 COMPLETED") {
			t.Errorf("backfill %s: exit %d %s %s", a, code, out, errs)
		}
	}
	mu.Lock()
	want := []string{"GET /api/v3/workflows/wf/backfills/bf-1", "PUT /api/v3/workflows/wf/backfills/bf-1/actions/pause",
		"PUT /api/v3/workflows/wf/backfills/bf-1/actions/resume", "PUT /api/v3/workflows/wf/backfills/bf-1/actions/cancel"}
	if strings.Join(calls, "\n") != strings.Join(want, "\n") {
		t.Errorf("calls %v, want %v", calls, want)
	}
	mu.Unlock()

	for _, args := range [][]string{{"backfill", "wf"}, {"backfill", "wf", "--from", "x"}, {"backfill", "pause", "wf"}} {
		if code, _, errs := run(args...); code != ExitUsage || !strings.Contains(errs, "usage: maestro backfill") {
			t.Errorf("%v: exit %d %s", args, code, errs)
		}
	}
}
