package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"
)

// backfillUsage is the backfill command's usage.
const backfillUsage = "WF --from T --to T [--concurrency N] [--priority low|normal] [--dry-run] | backfill status|pause|resume|cancel WF BACKFILL"

// backfillFlags are the backfill command's flags.
type backfillFlags struct {
	from, to, priority string
	concurrency        int
	dryRun             bool
}

// backfillView is the part of the API's backfill the CLI shows.
type backfillView struct {
	WorkflowID  string         `json:"workflow_id"`
	BackfillID  string         `json:"backfill_id"`
	Status      string         `json:"status"`
	Total       int            `json:"total"`
	Admitted    int            `json:"admitted"`
	Running     int            `json:"running"`
	Pending     int            `json:"pending"`
	Counts      map[string]int `json:"counts"`
	NextFiring  string         `json:"next_firing"`
	ETASeconds  *int64         `json:"eta_seconds"`
	Concurrency int            `json:"concurrency"`
	Priority    string         `json:"priority"`
}

// backfill runs maestro backfill: with an action (status, pause, resume,
// cancel) on backfill rest[2] of workflow rest[1]; else it creates a
// backfill of workflow rest[0] (or, with --dry-run, estimates one) and
// follows it to its end with a progress bar.
func (r *runner) backfill(ctx context.Context, rest []string, f backfillFlags) int {
	switch rest[0] {
	case "status", "pause", "resume", "cancel":
		if len(rest) != 3 {
			fmt.Fprintf(r.o.Stderr, "usage: maestro backfill %s WF BACKFILL\n", rest[0])
			return ExitUsage
		}
		return r.backfillAction(ctx, rest[0], rest[1], rest[2])
	}
	if len(rest) != 1 || f.from == "" || f.to == "" {
		fmt.Fprintf(r.o.Stderr, "usage: maestro backfill %s\n", backfillUsage)
		return ExitUsage
	}
	body, _ := json.Marshal(map[string]any{ // strings, an int and a bool: cannot fail
		"from": f.from, "to": f.to, "concurrency": f.concurrency, "priority": f.priority, "dry_run": f.dryRun,
	})
	path := "/api/v3/workflows/" + url.PathEscape(rest[0]) + "/backfills"
	var raw json.RawMessage
	if err := r.c.Do(ctx, http.MethodPost, path, body, &raw); err != nil {
		return r.fail("backfill", err)
	}
	if f.dryRun {
		return r.printEstimate(raw)
	}
	var v backfillView
	if err := json.Unmarshal(raw, &v); err != nil {
		return r.fail("backfill", err)
	}
	if !r.json {
		fmt.Fprintf(r.o.Stdout, "backfill %s of %s: %d firings, concurrency %d, priority %s\n", v.BackfillID, v.WorkflowID, v.Total, v.Concurrency, v.Priority)
	}
	return r.followBackfill(ctx, v.WorkflowID, v.BackfillID)
}

// printEstimate prints a dry run's answer.
func (r *runner) printEstimate(raw json.RawMessage) int {
	if r.json {
		fmt.Fprintln(r.o.Stdout, string(raw))
		return ExitOK
	}
	var e struct {
		Instances      int    `json:"instances"`
		Steps          int    `json:"steps"`
		Concurrency    int    `json:"concurrency"`
		Waves          int    `json:"waves"`
		FirstFiring    string `json:"first_firing"`
		LastFiring     string `json:"last_firing"`
		DurationReason string `json:"duration_reason"`
		CostReason     string `json:"cost_reason"`
		Duration       *struct {
			Sample    int   `json:"sample"`
			P50Millis int64 `json:"p50_ms"`
			P90Millis int64 `json:"p90_ms"`
		} `json:"duration"`
		Cost *struct {
			Sample int      `json:"sample"`
			P50    float64  `json:"p50_usd"`
			P90    float64  `json:"p90_usd"`
			Covers []string `json:"covers"`
			Model  string   `json:"model"`
		} `json:"cost"`
	}
	if err := json.Unmarshal(raw, &e); err != nil {
		return r.fail("backfill", err)
	}
	fmt.Fprintf(r.o.Stdout, "dry run: %d instances (%s to %s), %d steps, %d waves at concurrency %d\n",
		e.Instances, e.FirstFiring, e.LastFiring, e.Steps, e.Waves, e.Concurrency)
	if e.Duration != nil {
		fmt.Fprintf(r.o.Stdout, "duration: p50 %s, p90 %s (from %d recent runs)\n",
			time.Duration(e.Duration.P50Millis)*time.Millisecond, time.Duration(e.Duration.P90Millis)*time.Millisecond, e.Duration.Sample)
	} else {
		fmt.Fprintf(r.o.Stdout, "duration: unknown (%s)\n", e.DurationReason)
	}
	switch {
	case e.Cost != nil && e.Cost.Model != "":
		fmt.Fprintf(r.o.Stdout, "cost: $%.6f (no run to take it from: modelled from %s)\n", e.Cost.P50, e.Cost.Model)
	case e.Cost != nil:
		fmt.Fprintf(r.o.Stdout, "cost: p50 $%.6f, p90 $%.6f (from %d recent runs; covers %s)\n",
			e.Cost.P50, e.Cost.P90, e.Cost.Sample, strings.Join(e.Cost.Covers, ", "))
	default:
		fmt.Fprintf(r.o.Stdout, "cost: unknown (%s)\n", e.CostReason)
	}
	return ExitOK
}

// backfillAction shows (status) or pauses, resumes or cancels a backfill.
func (r *runner) backfillAction(ctx context.Context, action, wf, id string) int {
	path := "/api/v3/workflows/" + url.PathEscape(wf) + "/backfills/" + url.PathEscape(id)
	method := http.MethodGet
	if action != "status" {
		path, method = path+"/actions/"+action, http.MethodPut
	}
	var raw json.RawMessage
	if err := r.c.Do(ctx, method, path, nil, &raw); err != nil {
		return r.fail("backfill "+action, err)
	}
	if r.json {
		fmt.Fprintln(r.o.Stdout, string(raw))
		return ExitOK
	}
	var v backfillView
	if err := json.Unmarshal(raw, &v); err != nil {
		return r.fail("backfill "+action, err)
	}
	fmt.Fprintln(r.o.Stdout, backfillLine(v))
	return ExitOK
}

// followBackfill polls a backfill until it ends, printing its progress bar
// when it changes; it exits 0 only if every instance succeeded.
func (r *runner) followBackfill(ctx context.Context, wf, id string) int {
	path := "/api/v3/workflows/" + url.PathEscape(wf) + "/backfills/" + url.PathEscape(id)
	ticker := time.NewTicker(r.o.Poll)
	defer ticker.Stop()
	last := ""
	for {
		var raw json.RawMessage
		if err := r.c.Do(ctx, http.MethodGet, path, nil, &raw); err != nil {
			return r.fail("backfill", err)
		}
		var v backfillView
		if err := json.Unmarshal(raw, &v); err != nil {
			return r.fail("backfill", err)
		}
		done := (v.Status == "COMPLETED" || v.Status == "CANCELLED") && v.Running == 0
		if line := backfillLine(v); line != last && !r.json {
			fmt.Fprintln(r.o.Stdout, line)
			last = line
		}
		if done {
			if r.json {
				fmt.Fprintln(r.o.Stdout, string(raw))
			}
			if v.Status == "COMPLETED" && v.Counts["SUCCEEDED"] == v.Total {
				return ExitOK
			}
			return ExitFailed
		}
		select {
		case <-ctx.Done():
			return r.fail("backfill", ctx.Err())
		case <-ticker.C:
		}
	}
}

// barWidth is the progress bar's width in characters.
const barWidth = 30

// backfillLine is a backfill's progress: a bar of its ended instances
// (#) and running ones (>) out of its firings, its counts by status, what
// is next and the ETA.
func backfillLine(v backfillView) string {
	ended := 0
	var counts []string
	for status, n := range v.Counts {
		ended += n
		counts = append(counts, fmt.Sprintf("%d %s", n, strings.ToLower(status)))
	}
	sort.Strings(counts)
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s [", v.BackfillID, v.Status)
	if v.Total > 0 {
		hashes := ended * barWidth / v.Total
		arrows := min(barWidth-hashes, (ended+v.Running)*barWidth/v.Total-hashes)
		b.WriteString(strings.Repeat("#", hashes) + strings.Repeat(">", arrows) + strings.Repeat(".", barWidth-hashes-arrows))
	}
	fmt.Fprintf(&b, "] %d/%d ended, %d running, %d pending", ended, v.Total, v.Running, v.Pending)
	if len(counts) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(counts, ", "))
	}
	if v.NextFiring != "" {
		fmt.Fprintf(&b, ", next %s", v.NextFiring)
	}
	if v.ETASeconds != nil {
		fmt.Fprintf(&b, ", ETA %s", time.Duration(*v.ETASeconds)*time.Second)
	}
	return b.String()
}
