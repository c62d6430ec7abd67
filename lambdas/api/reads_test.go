package api

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/maestro-serverless/maestro/orchestrator"
)

// TestCursorChecks: a cursor decodes only as the list that issued it,
// unaltered and younger than maxCursorAge; every refusal is a 400 naming
// the cursor and the rule.
func TestCursorChecks(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	good := encodeCursor("runs/wf/1", 7, now)
	raw, err := base64.RawURLEncoding.DecodeString(good)
	require.NoError(t, err)
	edited := []byte(strings.Replace(string(raw), "\x007\x00", "\x009\x00", 1))
	otherWF := []byte(strings.Replace(string(raw), "runs/wf/1", "runs/xx/1", 1))
	tests := []struct {
		name, cursor, scope string
		at                  time.Time
		want                int64
		rule                string
	}{
		{"round trip", good, "runs/wf/1", now, 7, ""},
		{"a day old", good, "runs/wf/1", now.Add(maxCursorAge), 7, ""},
		{"expired", good, "runs/wf/1", now.Add(maxCursorAge + time.Second), 0, "has expired"},
		{"another instance's list", good, "runs/wf/2", now, 0, "belongs to another list"},
		{"another workflow's list", good, "runs/other/1", now, 0, "belongs to another list"},
		{"id edited", base64.RawURLEncoding.EncodeToString(edited), "runs/wf/1", now, 0, "has been altered"},
		{"scope edited to fit", base64.RawURLEncoding.EncodeToString(otherWF), "runs/xx/1", now, 0, "has been altered"},
		{"Maestro's bare id", "7", "runs/wf/1", now, 0, "is not a cursor this API returned"},
		{"not base64", "%%%", "runs/wf/1", now, 0, "is not a cursor this API returned"},
		{"too long", strings.Repeat("A", maxCursorLen+1), "runs/wf/1", now, 0, "is longer than 1024 characters"},
		{"zero id", encodeCursor("runs/wf/1", 0, now), "runs/wf/1", now, 0, "is not a cursor this API returned"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			id, err := decodeCursor(tc.cursor, tc.scope, tc.at)
			if tc.rule == "" {
				require.NoError(t, err)
				assert.Equal(t, tc.want, id)
				return
			}
			e := orchestrator.AsError(err)
			require.NotNil(t, err)
			assert.Equal(t, http.StatusBadRequest, e.Status)
			require.Len(t, e.Errors, 1)
			assert.Contains(t, e.Errors[0], "cursor: "+tc.rule)
		})
	}
}

// get serves one GET through the handler over svc.
func get(t *testing.T, svc *fakeService, target, body string) *httptest.ResponseRecorder {
	t.Helper()
	h := NewHandler(svc.services(), Options{})
	req := httptest.NewRequest("GET", "http://api"+target, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// TestPagedListsAnswerMaestrosShape: first/last pages are Maestro's
// PaginationResult, with cursors that the same list takes back and the
// service sees as the ids they stand at.
func TestPagedListsAnswerMaestrosShape(t *testing.T) {
	for _, path := range []string{
		"/api/v3/workflows/wf/instances", "/api/v3/workflows/wf/instances/4/runs",
		"/api/v3/workflows/wf/versions", "/api/v3/workflows/wf/versions/pagination",
	} {
		t.Run(path, func(t *testing.T) {
			svc := &fakeService{}
			rec := get(t, svc, path+"?first=2", "")
			require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
			var top map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &top))
			assert.ElementsMatch(t, []string{"page_info", "total_count", "elements"}, keys(top))
			var page struct {
				PageInfo map[string]any    `json:"page_info"`
				Total    int64             `json:"total_count"`
				Elements []json.RawMessage `json:"elements"`
			}
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &page))
			assert.Len(t, page.Elements, 2)
			assert.Equal(t, int64(3), page.Total)
			info := page.PageInfo
			assert.Equal(t, true, info["has_previous_page"], "the fake's page is ids 2..1 of 3")
			assert.Equal(t, false, info["has_next_page"])
			assert.Equal(t, float64(2), info["start_index"])
			end, _ := info["end_cursor"].(string)
			require.NotEmpty(t, end)

			svc.reset()
			rec = get(t, svc, path+"?last=5&cursor="+url.QueryEscape(end), "")
			require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
			calls := svc.recorded()
			require.Len(t, calls, 1)
			req := calls[0].Args[len(calls[0].Args)-1].(orchestrator.PageRequest)
			assert.Equal(t, orchestrator.PageRequest{Prev: true, Size: 5, Cursor: 1}, req)
		})
	}
}

func keys(m map[string]json.RawMessage) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestPagedListsRefuseBadPages: page sizes out of bounds, first with last,
// a cursor of another list or workflow, and the old listing's parameters
// mixed in are 400s naming the parameter; the service is not called.
func TestPagedListsRefuseBadPages(t *testing.T) {
	runs := "/api/v3/workflows/wf/instances/4/runs"
	otherWF := encodeCursor(runsScope("other", 4), 2, time.Now())
	otherInst := encodeCursor(runsScope("wf", 5), 2, time.Now())
	instances := encodeCursor(instancesScope("wf"), 2, time.Now())
	tests := []struct{ target, field string }{
		{runs, "first, last: either first or last need to be provided"},
		{runs + "?first=0", "first: must be an integer from 1 to 200"},
		{runs + "?first=201", "first: must be an integer from 1 to 200"},
		{runs + "?last=99999999999999999999", "last: must be an integer from 1 to 200"},
		{runs + "?first=-1", "first: must be an integer from 1 to 200"},
		{runs + "?first=abc", "first: must be an integer from 1 to 200"},
		{runs + "?first=2&last=2", "first, last: either first or last need to be provided, but not both"},
		{runs + "?first=2&cursor=" + otherWF, "cursor: belongs to another list"},
		{runs + "?first=2&cursor=" + otherInst, "cursor: belongs to another list"},
		{runs + "?first=2&cursor=" + instances, "cursor: belongs to another list"},
		{runs + "?first=2&cursor=2", "cursor: is not a cursor this API returned"},
		{"/api/v3/workflows/wf/versions?last=0", "last: must be an integer from 1 to 200"},
		{"/api/v3/workflows/wf/instances?first=2&limit=5", "limit, status: are parameters of the cursor/limit listing"},
		{"/api/v3/workflows/wf/instances?first=2&aggregated=maybe", "aggregated: must be true or false"},
		{"/api/v3/workflows/other/instances?first=2&cursor=" + instances, "cursor: belongs to another list"},
		{"/api/v3/workflows/wf/instances/0/runs?first=2", "instanceId: must be a positive integer"},
	}
	for _, tc := range tests {
		t.Run(tc.target, func(t *testing.T) {
			svc := &fakeService{}
			rec := get(t, svc, tc.target, "")
			require.Equal(t, http.StatusBadRequest, rec.Code, rec.Body.String())
			e := decodeError(t, http.StatusBadRequest, rec.Body.Bytes())
			require.NotEmpty(t, e.Errors)
			assert.Contains(t, e.Errors[0], tc.field)
			assert.Empty(t, svc.recorded(), "the service must not be called")
		})
	}
}

// TestInstancesKeepTheirListing: GET .../instances without first or last
// is the cursor/limit listing it was.
func TestInstancesKeepTheirListing(t *testing.T) {
	svc := &fakeService{}
	rec := get(t, svc, "/api/v3/workflows/wf/instances?limit=5&status=failed", "")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	assert.Contains(t, rec.Body.String(), `"workflow_instances"`)
	assert.Equal(t, []call{{Method: "ListInstances", Args: []any{"wf", "failed", "", 5}}}, svc.recorded())
}

// TestReadRoutes: the single-item reads reach the service with their path
// parameters, and bad ones are 400s before it.
func TestReadRoutes(t *testing.T) {
	const wf = "/api/v3/workflows/wf"
	ok := []struct {
		target, body string
		want         call
	}{
		{wf + "/instances/3/steps/job1", "", call{"GetStepView", []any{"wf", int64(3), "job1"}}},
		{wf + "/instances/3/runs/2/steps", "", call{"ListRunSteps", []any{"wf", int64(3), int64(2)}}},
		{wf + "/instances/3/runs/latest", "", call{"GetInstance", []any{"wf", int64(3)}}},
		{wf + "/instances/3/runs/LATEST", "", call{"GetInstance", []any{"wf", int64(3)}}},
		{wf + "/instances/3/runs/2", "", call{"GetRun", []any{"wf", int64(3), int64(2)}}},
		{wf + "/overview", "", call{"GetWorkflowOverview", []any{"wf"}}},
		{wf + "/timeline", "", call{"GetWorkflowTimeline", []any{"wf"}}},
		{wf + "/properties-snapshot/latest", "", call{"GetPropertiesSnapshot", []any{"wf", "latest"}}},
		{"/api/v3/workflows/maestro_foreach_0123abcd/instances/2/inline-path", "", call{"GetInlinePath", []any{"maestro_foreach_0123abcd", int64(2)}}},
		{"/api/v3/workflows/instances/inline-workflow-id", `[{"workflow_id":"wf","instance_id":1},{"step_id":"job1"}]`,
			call{"GetInlineWorkflowID", []any{`[{"workflow_id":"wf","instance_id":1},{"workflow_id":"","instance_id":0,"step_id":"job1"}]`}}},
	}
	for _, tc := range ok {
		t.Run(tc.target, func(t *testing.T) {
			svc := &fakeService{}
			rec := get(t, svc, tc.target, tc.body)
			require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
			assert.Equal(t, []call{tc.want}, svc.recorded())
		})
	}
	bad := []struct{ target, body, field string }{
		{wf + "/instances/x/steps/job1", "", "instanceId: must be a positive integer"},
		{wf + "/instances/3/steps/" + strings.Repeat("s", 300), "", "stepId:"},
		{wf + "/instances/3/runs/0/steps", "", "runId: must be a positive integer"},
		{wf + "/instances/3/runs/newest", "", "runId: must be a positive integer"},
		{"/api/v3/workflows/" + strings.Repeat("w", 200) + "/timeline", "", "id:"},
		{"/api/v3/workflows/instances/inline-workflow-id", "", "request body: must be a JSON array"},
		{"/api/v3/workflows/instances/inline-workflow-id", `{}`, "request body: must be a JSON array"},
		{"/api/v3/workflows/instances/inline-workflow-id", `[{"workflow_id":"wf","instance_id":1}]`, "must hold from 2 to 64 nodes"},
		{"/api/v3/workflows/instances/inline-workflow-id", `[{"workflow_id":"wf","instance_id":0},{"step_id":"a"}]`, "[0].instance_id: must be a positive integer"},
		{"/api/v3/workflows/instances/inline-workflow-id", `[{"workflow_id":"w#f","instance_id":1},{"step_id":"a"}]`, "[0].workflow_id:"},
		{"/api/v3/workflows/instances/inline-workflow-id", `[{"workflow_id":"wf","instance_id":1},{"step_id":""}]`, "[1].step_id:"},
		{"/api/v3/workflows/instances/inline-workflow-id", "[" + strings.Repeat(`{"workflow_id":"wf","instance_id":1},`, 64) + `{"step_id":"a"}]`, "must hold from 2 to 64 nodes"},
	}
	for _, tc := range bad {
		t.Run(tc.target+tc.body, func(t *testing.T) {
			svc := &fakeService{}
			rec := get(t, svc, tc.target, tc.body)
			require.Equal(t, http.StatusBadRequest, rec.Code, rec.Body.String())
			e := decodeError(t, http.StatusBadRequest, rec.Body.Bytes())
			require.NotEmpty(t, e.Errors)
			assert.Contains(t, e.Errors[0], tc.field)
			assert.Empty(t, svc.recorded(), "the service must not be called")
		})
	}
}

// TestStepActionSummaryMatchesTheRoute: the step action route takes stop,
// kill, skip and bypass; its summary promises no other action.
func TestStepActionSummaryMatchesTheRoute(t *testing.T) {
	summary := routeSummaries()["PUT "+workflowsPath+"/{id}/instances/{instanceId}/steps/{stepId}/actions/{action}"]
	require.NotEmpty(t, summary)
	assert.NotContains(t, strings.ToLower(strings.SplitN(summary, ";", 2)[0]), "resume")
	svc := &fakeService{}
	h := NewHandler(svc.services(), Options{})
	req := httptest.NewRequest("PUT", "http://api/api/v3/workflows/wf/instances/1/steps/a/actions/resume", nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	assert.Equal(t, http.StatusBadRequest, rec.Code, "resume is not a step action: %s", rec.Body)
}

// TestWorkflowPages: GET /workflows with first or last is a page of
// workflows whose cursors stand at workflow ids and go back to the
// service as such; a cursor of another list is refused.
func TestWorkflowPages(t *testing.T) {
	svc := &fakeService{}
	rec := get(t, svc, "/api/v3/workflows?first=2", "")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var page struct {
		PageInfo struct {
			StartCursor *string `json:"start_cursor"`
			EndCursor   *string `json:"end_cursor"`
			HasNext     bool    `json:"has_next_page"`
			HasPrev     bool    `json:"has_previous_page"`
		} `json:"page_info"`
		Elements []struct {
			ID string `json:"workflow_id"`
		} `json:"elements"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &page))
	require.Len(t, page.Elements, 2)
	assert.True(t, page.PageInfo.HasNext)
	assert.False(t, page.PageInfo.HasPrev)
	require.NotNil(t, page.PageInfo.EndCursor)
	svc.reset()
	rec = get(t, svc, "/api/v3/workflows?last=3&cursor="+url.QueryEscape(*page.PageInfo.EndCursor), "")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	assert.Equal(t, []call{{Method: "ListWorkflowPage", Args: []any{orchestrator.WorkflowPageRequest{Prev: true, Size: 3, Cursor: "b"}}}}, svc.recorded())

	for target, rule := range map[string]string{
		"/api/v3/workflows?first=2&cursor=" + encodeCursor(runsScope("wf", 1), 2, time.Now()): "cursor: belongs to another list",
		"/api/v3/workflows?first=2&cursor=b":                                                  "cursor: is not a cursor this API returned",
		"/api/v3/workflows?first=2&limit=2":                                                   "limit: is a parameter of the cursor/limit listing",
		"/api/v3/workflows?last=201":                                                          "last: must be an integer from 1 to 200",
	} {
		svc.reset()
		rec := get(t, svc, target, "")
		require.Equal(t, http.StatusBadRequest, rec.Code, rec.Body.String())
		e := decodeError(t, http.StatusBadRequest, rec.Body.Bytes())
		assert.Contains(t, e.Errors[0], rule, target)
		assert.Empty(t, svc.recorded())
	}
}

// TestOpenAPIListsTheReads: the served OpenAPI document has every read
// route, the paged ones with first, last and cursor.
func TestOpenAPIListsTheReads(t *testing.T) {
	rec := get(t, &fakeService{}, openAPIPath, "")
	require.Equal(t, http.StatusOK, rec.Code)
	var doc struct {
		Paths map[string]map[string]struct {
			Summary    string `json:"summary"`
			Parameters []struct {
				Name string `json:"name"`
				In   string `json:"in"`
			} `json:"parameters"`
		} `json:"paths"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &doc))
	wf := workflowsPath
	paged := map[string]bool{
		wf:                                       true,
		wf + "/{id}/instances":                   true,
		wf + "/{id}/versions":                    true,
		wf + "/{id}/versions/pagination":         true,
		wf + "/{id}/instances/{instanceId}/runs": true,
		wf + "/{id}/overview":                    false,
		wf + "/{id}/timeline":                    false,
		wf + "/{id}/properties-snapshot/{snapshotId}":          false,
		wf + "/{id}/instances/{instanceId}/runs/{runId}/steps": false,
		wf + "/{id}/instances/{instanceId}/steps/{stepId}":     false,
		wf + "/{id}/instances/{instanceId}/inline-path":        false,
		wf + "/instances/inline-workflow-id":                   false,
	}
	for path, isPaged := range paged {
		op, ok := doc.Paths[path]["get"]
		if !assert.True(t, ok, "GET %s is not in the document", path) {
			continue
		}
		assert.NotEmpty(t, op.Summary, path)
		var query []string
		for _, p := range op.Parameters {
			if p.In == "query" {
				query = append(query, p.Name)
			}
		}
		if isPaged {
			assert.Subset(t, query, []string{"first", "last", "cursor"}, path)
		}
	}
}
