package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/localstack/stack"
)

// Maestro's read APIs over HTTP on the local stack: paged lists of
// instances, runs and versions walked through their cursors both ways,
// a step across runs and the steps of one run, the workflow's overview,
// timeline and properties snapshot, the inline path and id lookups of a
// loop's iterations, and the abuse of each (forged and misplaced cursors,
// page sizes out of bounds, ids of another workflow).

// readsWorkflow is a workflow whose foreach "loop" runs two NoOp
// iterations, then "after".
func readsWorkflow(id, name string) []byte {
	return []byte(fmt.Sprintf(`{"properties":{"owner":"reads","run_strategy":{"rule":"parallel","workflow_concurrency":10}},
	  "workflow":{"id":%q,"name":%q,"steps":[
	  {"foreach":{"id":"loop","params":{"loop_params":{"type":"MAP","value":{"i":{"type":"LONG_ARRAY","value":[1,2]}}}},
	    "steps":[{"step":{"id":"x","type":"NoOp"}}],"transition":{"successors":{"after":"true"}}}},
	  {"step":{"id":"after","type":"NoOp"}}]}}`, id, name))
}

// page is Maestro's PaginationResult, its elements reduced to their ids.
type page struct {
	PageInfo struct {
		StartCursor *string `json:"start_cursor"`
		EndCursor   *string `json:"end_cursor"`
		HasPrev     bool    `json:"has_previous_page"`
		HasNext     bool    `json:"has_next_page"`
		StartIndex  *int64  `json:"start_index"`
	} `json:"page_info"`
	TotalCount int64             `json:"total_count"`
	Elements   []json.RawMessage `json:"elements"`
}

// ids prints the page's element ids (the field named by key, nested in
// metadata for versions), its flags and its total.
func (p page) ids(t *testing.T, key string) string {
	t.Helper()
	var out []string
	for _, e := range p.Elements {
		var v map[string]json.RawMessage
		if err := json.Unmarshal(e, &v); err != nil {
			t.Fatal(err)
		}
		if key == "workflow_version_id" {
			_ = json.Unmarshal(v["metadata"], &v)
		}
		out = append(out, string(v[key]))
	}
	return fmt.Sprintf("%s prev=%v next=%v total=%d", strings.Join(out, ","), p.PageInfo.HasPrev, p.PageInfo.HasNext, p.TotalCount)
}

func TestMaestroReadsAndPaging(t *testing.T) {
	t.Parallel()
	s := startSystem(t, stack.Options{})
	const wf = "reads-wf"
	for i := 1; i <= 3; i++ {
		s.push(readsWorkflow(wf, fmt.Sprintf("v%d", i)))
	}
	for range 5 {
		s.start(wf, `{}`)
	}
	for id := int64(1); id <= 5; id++ {
		wantEnd(t, s.wait(wf, id, 60*time.Second), "SUCCEEDED", nil)
	}
	s.push(readsWorkflow("reads-other", "other"))
	s.start("reads-other", `{}`)
	wantEnd(t, s.wait("reads-other", 1, 60*time.Second), "SUCCEEDED", nil)
	for run := int64(2); run <= 3; run++ {
		s.restart(t, wf, 1, "RESTART_FROM_BEGINNING", "restart instance 1")
		poll(t, 60*time.Second, "instance 1 run "+fmt.Sprint(run)+" succeeded", func() (bool, string) {
			v := s.instance(wf, 1)
			return v.WorkflowRunID == run && v.Status == "SUCCEEDED", fmt.Sprintf("run %d %s", v.WorkflowRunID, v.Status)
		})
	}

	get := func(path string) page {
		t.Helper()
		var p page
		if code := s.do("GET", path, nil, &p); code != http.StatusOK {
			t.Fatalf("GET %s: HTTP %d", path, code)
		}
		return p
	}
	cur := func(c *string) string {
		t.Helper()
		if c == nil {
			t.Fatal("no cursor")
		}
		return url.QueryEscape(*c)
	}

	// Instances: forwards to the oldest, then backwards to the newest.
	base := "/api/v3/workflows/" + wf + "/instances"
	p := get(base + "?first=2")
	if got := p.ids(t, "workflow_instance_id"); got != "5,4 prev=false next=true total=5" || *p.PageInfo.StartIndex != 1 {
		t.Fatalf("instances page 1: %s (start_index %v)", got, p.PageInfo.StartIndex)
	}
	p = get(base + "?first=2&cursor=" + cur(p.PageInfo.EndCursor))
	if got := p.ids(t, "workflow_instance_id"); got != "3,2 prev=true next=true total=5" || *p.PageInfo.StartIndex != 3 {
		t.Fatalf("instances page 2: %s", got)
	}
	p = get(base + "?first=2&cursor=" + cur(p.PageInfo.EndCursor))
	if got := p.ids(t, "workflow_instance_id"); got != "1 prev=true next=false total=5" {
		t.Fatalf("instances page 3: %s", got)
	}
	oldest := p
	p = get(base + "?last=2&cursor=" + cur(p.PageInfo.StartCursor))
	if got := p.ids(t, "workflow_instance_id"); got != "3,2 prev=true next=true total=5" {
		t.Fatalf("instances back to page 2: %s", got)
	}
	p = get(base + "?last=2&cursor=" + cur(p.PageInfo.StartCursor))
	if got := p.ids(t, "workflow_instance_id"); got != "5,4 prev=false next=true total=5" {
		t.Fatalf("instances back to page 1: %s", got)
	}
	p = get(base + "?last=2&cursor=" + cur(p.PageInfo.StartCursor))
	if got := p.ids(t, "workflow_instance_id"); got != " prev=false next=false total=5" || p.PageInfo.StartCursor != nil || p.Elements == nil {
		t.Fatalf("instances above the newest: %s", got)
	}
	// The cursor/limit listing is as it was.
	var old struct {
		Instances []struct {
			ID int64 `json:"workflow_instance_id"`
		} `json:"workflow_instances"`
		Next string `json:"next_cursor"`
	}
	if code := s.do("GET", base+"?limit=2", nil, &old); code != http.StatusOK || len(old.Instances) != 2 || old.Instances[0].ID != 5 || old.Next == "" {
		t.Fatalf("limit listing: HTTP %d %+v", code, old)
	}
	if code := s.do("GET", base+"?limit=2&cursor="+old.Next, nil, &old); code != http.StatusOK || old.Instances[0].ID != 3 {
		t.Fatalf("limit listing page 2: HTTP %d %+v", code, old)
	}

	// Runs of instance 1, newest first, both ways.
	runs := base + "/1/runs"
	p = get(runs + "?first=2")
	if got := p.ids(t, "workflow_run_id"); got != "3,2 prev=false next=true total=3" {
		t.Fatalf("runs page 1: %s", got)
	}
	p = get(runs + "?first=2&cursor=" + cur(p.PageInfo.EndCursor))
	if got := p.ids(t, "workflow_run_id"); got != "1 prev=true next=false total=3" {
		t.Fatalf("runs page 2: %s", got)
	}
	p = get(runs + "?last=1&cursor=" + cur(p.PageInfo.StartCursor))
	if got := p.ids(t, "workflow_run_id"); got != "2 prev=true next=true total=3" {
		t.Fatalf("runs back: %s", got)
	}
	if !strings.Contains(string(p.Elements[0]), `"status":"SUCCEEDED"`) {
		t.Errorf("run 2 is not shown SUCCEEDED: %s", p.Elements[0])
	}
	var latest struct {
		Run int64 `json:"workflow_run_id"`
	}
	if code := s.do("GET", runs+"/latest", nil, &latest); code != http.StatusOK || latest.Run != 3 {
		t.Errorf("GET .../runs/latest: HTTP %d run %d, want run 3", code, latest.Run)
	}

	// Versions, newest first, on both paths.
	p = get("/api/v3/workflows/" + wf + "/versions/pagination?first=2")
	if got := p.ids(t, "workflow_version_id"); got != "3,2 prev=false next=true total=3" {
		t.Fatalf("versions page 1: %s", got)
	}
	p = get("/api/v3/workflows/" + wf + "/versions?first=2&cursor=" + cur(p.PageInfo.EndCursor))
	if got := p.ids(t, "workflow_version_id"); got != "1 prev=true next=false total=3" || !strings.Contains(string(p.Elements[0]), `"name":"v1"`) {
		t.Fatalf("versions page 2: %s", got)
	}

	// The workflows, in id order, one a page both ways.
	type wfPage struct {
		PageInfo struct {
			StartCursor *string `json:"start_cursor"`
			EndCursor   *string `json:"end_cursor"`
			HasNext     bool    `json:"has_next_page"`
		} `json:"page_info"`
		Elements []struct {
			ID string `json:"workflow_id"`
		} `json:"elements"`
	}
	var wfs wfPage
	if code := s.do("GET", "/api/v3/workflows?first=1", nil, &wfs); code != http.StatusOK || len(wfs.Elements) != 1 || wfs.Elements[0].ID != "reads-other" {
		t.Fatalf("workflows page 1: HTTP %d %+v", code, wfs)
	}
	if code := s.do("GET", "/api/v3/workflows?first=1&cursor="+cur(wfs.PageInfo.EndCursor), nil, &wfs); code != http.StatusOK || len(wfs.Elements) != 1 || wfs.Elements[0].ID != wf {
		t.Fatalf("workflows page 2: HTTP %d %+v", code, wfs)
	}
	if code := s.do("GET", "/api/v3/workflows?last=5&cursor="+cur(wfs.PageInfo.StartCursor), nil, &wfs); code != http.StatusOK || len(wfs.Elements) != 1 || wfs.Elements[0].ID != "reads-other" {
		t.Fatalf("workflows back to page 1: HTTP %d %+v", code, wfs)
	}

	// Abuse: forged and misplaced cursors, sizes out of bounds, another
	// workflow's ids. Each is a 400 (or 404) naming the rule.
	forged := []byte(*oldest.PageInfo.EndCursor)
	forged[len(forged)/2] ^= 1
	var other page
	if code := s.do("GET", "/api/v3/workflows/reads-other/instances?first=1", nil, &other); code != http.StatusOK {
		t.Fatalf("other workflow's instances: HTTP %d", code)
	}
	runsCursor := get(runs + "?first=1").PageInfo.EndCursor
	for _, c := range []struct {
		path string
		code int
		rule string
	}{
		{base + "?first=2&cursor=" + url.QueryEscape(string(forged)), 400, "cursor:"},
		{base + "?first=2&cursor=" + cur(other.PageInfo.EndCursor), 400, "cursor: belongs to another list"},
		{base + "?first=2&cursor=" + cur(runsCursor), 400, "cursor: belongs to another list"},
		{"/api/v3/workflows/reads-other/instances/1/runs?first=2&cursor=" + cur(runsCursor), 400, "cursor: belongs to another list"},
		{base + "?first=2&cursor=3", 400, "cursor: is not a cursor this API returned"},
		{"/api/v3/workflows?first=1&cursor=" + cur(other.PageInfo.EndCursor), 400, "cursor: belongs to another list"},
		{base + "?first=0", 400, "first: must be an integer from 1 to 200"},
		{runs + "?last=100000", 400, "last: must be an integer from 1 to 200"},
		{runs, 400, "either first or last need to be provided"},
		{base + "?first=1&last=1", 400, "but not both"},
		{"/api/v3/workflows/reads-other/instances/5/runs?first=1", 404, "instance 5 not found"},
		{"/api/v3/workflows/reads-other/instances/5/steps/after", 404, "instance 5 not found"},
		{base + "/1/steps/nope", 404, "has no step nope"},
		{base + "/1/runs/9/steps", 404, "has no run 9"},
		{"/api/v3/workflows/" + wf + "/properties-snapshot/12345", 404, "only the current one"},
		{"/api/v3/workflows/" + wf + "/instances/1/inline-path", 400, "is not a loop's inline workflow"},
	} {
		var e struct {
			Errors  []string `json:"errors"`
			Message string   `json:"message"`
		}
		code := s.do("GET", c.path, nil, &e)
		if code != c.code || !strings.Contains(e.Message+" "+strings.Join(e.Errors, " "), c.rule) {
			t.Errorf("GET %s: HTTP %d %+v, want %d naming %q", c.path, code, e, c.code, c.rule)
		}
	}

	// A step across runs, and the steps of one run.
	var step struct {
		StepID  string                  `json:"step_id"`
		Run     int64                   `json:"workflow_run_id"`
		State   struct{ Status string } `json:"runtime_state"`
		Foreach *struct {
			WorkflowID string `json:"foreach_workflow_id"`
		} `json:"foreach_overview"`
	}
	if code := s.do("GET", base+"/1/steps/loop", nil, &step); code != http.StatusOK || step.Run != 3 || step.State.Status != "SUCCEEDED" || step.Foreach == nil {
		t.Fatalf("step loop across runs: HTTP %d %+v", code, step)
	}
	inline := step.Foreach.WorkflowID
	var runSteps []struct {
		StepID string `json:"step_id"`
		Run    int64  `json:"workflow_run_id"`
	}
	if code := s.do("GET", base+"/1/runs/2/steps", nil, &runSteps); code != http.StatusOK || len(runSteps) != 2 || runSteps[0].StepID != "after" || runSteps[0].Run != 2 {
		t.Fatalf("steps of run 2: HTTP %d %+v", code, runSteps)
	}

	// The iterations of the loop, a page of its inline workflow's instances.
	p = get("/api/v3/workflows/" + inline + "/instances?first=5")
	if got := p.ids(t, "workflow_instance_id"); got != "2,1 prev=false next=false total=2" {
		t.Errorf("iterations as a page: %s", got)
	}
	var succeeded struct {
		Instances []json.RawMessage `json:"workflow_instances"`
	}
	if code := s.do("GET", "/api/v3/workflows/"+inline+"/instances?status=SUCCEEDED&limit=5", nil, &succeeded); code != http.StatusOK || len(succeeded.Instances) != 2 {
		t.Errorf("iterations by status: HTTP %d %d", code, len(succeeded.Instances))
	}

	// The inline path of an iteration, and the inline workflow id back.
	var path []struct {
		WorkflowID string `json:"workflow_id"`
		InstanceID int64  `json:"instance_id"`
		RunID      int64  `json:"run_id"`
		StepID     string `json:"step_id"`
	}
	if code := s.do("GET", "/api/v3/workflows/"+inline+"/instances/2/inline-path", nil, &path); code != http.StatusOK || len(path) != 2 ||
		path[0].WorkflowID != wf || path[0].InstanceID != 1 || path[0].RunID != 3 || path[0].StepID != "loop" || path[1].WorkflowID != inline || path[1].InstanceID != 2 {
		t.Fatalf("inline path: HTTP %d %+v", code, path)
	}
	var id string
	body := fmt.Sprintf(`[{"workflow_id":%q,"instance_id":1},{"step_id":"x"}]`, wf)
	if code := s.do("GET", "/api/v3/workflows/instances/inline-workflow-id", []byte(body), &id); code != http.StatusOK || id != inline {
		t.Fatalf("inline workflow id: HTTP %d %q, want %s", code, id, inline)
	}

	// The workflow's overview, timeline and properties snapshot.
	var ov struct {
		Latest      int64            `json:"latest_version_id"`
		Active      int64            `json:"active_version_id"`
		LatestInst  int64            `json:"latest_instance_id"`
		Nonterminal map[string]int64 `json:"nonterminal_instances"`
		Snapshot    map[string]any   `json:"properties_snapshot"`
	}
	if code := s.do("GET", "/api/v3/workflows/"+wf+"/overview", nil, &ov); code != http.StatusOK || ov.Latest != 3 || ov.Active != 3 ||
		ov.LatestInst != 5 || ov.Nonterminal["IN_PROGRESS"] != 0 || ov.Snapshot["owner"] != "reads" {
		t.Fatalf("overview: HTTP %d %+v", code, ov)
	}
	var tl struct {
		Events []struct {
			Log       string `json:"log"`
			Timestamp int64  `json:"timestamp"`
		} `json:"timeline_events"`
	}
	if code := s.do("GET", "/api/v3/workflows/"+wf+"/timeline", nil, &tl); code != http.StatusOK || len(tl.Events) != 3 || !strings.Contains(tl.Events[0].Log, "[3]") {
		t.Fatalf("timeline: HTTP %d %+v", code, tl)
	}
	var snap map[string]any
	if code := s.do("GET", "/api/v3/workflows/"+wf+"/properties-snapshot/latest", nil, &snap); code != http.StatusOK || snap["workflow_id"] != wf || snap["owner"] != "reads" {
		t.Fatalf("properties snapshot: HTTP %d %v", code, snap)
	}
	byID := fmt.Sprintf("/api/v3/workflows/%s/properties-snapshot/%.0f", wf, snap["create_time"])
	if code := s.do("GET", byID, nil, &snap); code != http.StatusOK || snap["workflow_id"] != wf {
		t.Fatalf("properties snapshot by id: HTTP %d %v", code, snap)
	}
}
