package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/orchestrator"
)

// readAPI serves Maestro's read routes (runs, steps, versions, overview, timeline, snapshot, inline lookups); its handlers reach the
// server through the embedded *server.
type readAPI struct{ *server }

// Maestro's read endpoints of its WorkflowController,
// WorkflowInstanceController and StepInstanceController that the core
// routes (routes.go) do not serve, and its paged lists: ?first=N or
// ?last=N (1 to 200, one of them) with an optional cursor, answered as
// Maestro's PaginationResult (page_info, total_count, elements), newest
// first.

// registerReads adds the read routes.
func (s readAPI) register(route func(string, apiFunc)) {
	wf := workflowsPath
	route("GET "+wf+"/{id}/versions", s.listVersions)
	route("GET "+wf+"/{id}/versions/pagination", s.listVersions)
	route("GET "+wf+"/{id}/overview", s.workflowOverview)
	route("GET "+wf+"/{id}/timeline", s.workflowTimeline)
	route("GET "+wf+"/{id}/properties-snapshot/{snapshotId}", s.propertiesSnapshot)
	route("GET "+wf+"/{id}/instances/{instanceId}/runs", s.listRuns)
	route("GET "+wf+"/{id}/instances/{instanceId}/runs/{runId}/steps", s.listRunSteps)
	route("GET "+wf+"/{id}/instances/{instanceId}/steps/{stepId}", s.getStepView)
	route("GET "+wf+"/{id}/instances/{instanceId}/inline-path", s.inlinePath)
	route("GET "+wf+"/instances/inline-workflow-id", s.inlineWorkflowID)
}

// readSummaries are the OpenAPI summaries of the read routes
// (routeSummaries).
func readSummaries() map[string]string {
	wf := workflowsPath
	return map[string]string{
		"GET " + wf + "/{id}/versions":                                  "The workflow's versions, newest first, a Maestro page (first or last 1..200, cursor)",
		"GET " + wf + "/{id}/versions/pagination":                       "Maestro's path of the versions page: newest first (first or last 1..200, cursor)",
		"GET " + wf + "/{id}/overview":                                  "Versions, properties snapshot, step concurrency and the instances not ended by status",
		"GET " + wf + "/{id}/timeline":                                  "The workflow's change history (its newest 300 version pushes), newest first",
		"GET " + wf + "/{id}/properties-snapshot/{snapshotId}":          "The properties snapshot: latest, or the current one's create_time",
		"GET " + wf + "/{id}/instances/{instanceId}/runs":               "An instance's runs, newest first, a Maestro page (first or last 1..200, cursor)",
		"GET " + wf + "/{id}/instances/{instanceId}/runs/{runId}/steps": "The latest attempt of each step of one run",
		"GET " + wf + "/{id}/instances/{instanceId}/steps/{stepId}":     "A step across the instance's runs: its latest attempt",
		"GET " + wf + "/{id}/instances/{instanceId}/inline-path":        "From the run above a loop iteration's loops down to the iteration",
		"GET " + wf + "/instances/inline-workflow-id":                   "The inline workflow of the loop around a step, from a JSON node path in the body",
	}
}

// readQueryParams are the query parameters of the paged read routes
// (queryParams).
func readQueryParams() map[string][]string {
	page := []string{"first", "last", "cursor"}
	return map[string][]string{
		"GET " + workflowsPath + "/{id}/versions":                    page,
		"GET " + workflowsPath + "/{id}/versions/pagination":         page,
		"GET " + workflowsPath + "/{id}/instances/{instanceId}/runs": page,
	}
}

// paginationResult is Maestro's PaginationResult.
type paginationResult[T any] struct {
	PageInfo   pageInfo `json:"page_info"`
	TotalCount int64    `json:"total_count"`
	Elements   []T      `json:"elements"`
}

// pageInfo is Maestro's PaginationResult.PageInfo: the cursors of the
// page's first and last elements (null when it is empty), whether newer
// (previous) and older (next) elements exist, and the 1-based position
// of the first element counted from the newest.
type pageInfo struct {
	StartCursor     *string `json:"start_cursor"`
	EndCursor       *string `json:"end_cursor"`
	HasPreviousPage bool    `json:"has_previous_page"`
	HasNextPage     bool    `json:"has_next_page"`
	StartIndex      *int64  `json:"start_index"`
}

// pagedQuery reports whether q asks for a Maestro-style page (first or
// last is present).
func pagedQuery(q url.Values) bool { return q.Has("first") || q.Has("last") }

// pageRequest reads first, last and cursor: exactly one of first and last,
// an integer from 1 to orchestrator.MaxPageSize, and a cursor of the list
// scope, or none.
func pageRequest(q url.Values, scope string, now time.Time) (orchestrator.PageRequest, error) {
	var req orchestrator.PageRequest
	var err error
	if req.Prev, req.Size, err = pageSize(q); err != nil {
		return req, err
	}
	if raw := q.Get("cursor"); raw != "" {
		if req.Cursor, err = decodeCursor(raw, scope, now); err != nil {
			return req, err
		}
	}
	return req, nil
}

// pageSize reads first and last: exactly one of them, an integer from 1
// to orchestrator.MaxPageSize; prev is set for last.
func pageSize(q url.Values) (prev bool, size int64, err error) {
	switch {
	case q.Has("first") && q.Has("last"):
		return false, 0, orchestrator.Invalid("invalid page", "first, last: either first or last need to be provided, but not both")
	case !q.Has("first") && !q.Has("last"):
		return false, 0, orchestrator.Invalid("invalid page", "first, last: either first or last need to be provided")
	}
	name := "first"
	if q.Has("last") {
		name, prev = "last", true
	}
	n, err := strconv.ParseInt(q.Get(name), 10, 64)
	if err != nil || n < 1 || n > orchestrator.MaxPageSize {
		return false, 0, invalidParam(name, fmt.Sprintf("must be an integer from 1 to %d", orchestrator.MaxPageSize))
	}
	return prev, n, nil
}

// workflowsScope is the scope of the workflow listing's cursors.
const workflowsScope = "workflows"

// listWorkflowPage answers GET /api/v3/workflows?first=|last= as a
// Maestro-style page of workflows in id order: cursors stand at workflow
// ids; total_count and start_index are not known (counting would read the
// whole directory) and are 0 and null.
func (s readAPI) listWorkflowPage(w http.ResponseWriter, r *http.Request) error {
	q, now := r.URL.Query(), time.Now()
	if q.Has("limit") {
		return orchestrator.Invalid("invalid page", "limit: is a parameter of the cursor/limit listing; a first/last page takes first or last and cursor")
	}
	var req orchestrator.WorkflowPageRequest
	var err error
	if req.Prev, req.Size, err = pageSize(q); err != nil {
		return err
	}
	if raw := q.Get("cursor"); raw != "" {
		if req.Cursor, err = decodeCursorAt(raw, workflowsScope, now); err != nil {
			return err
		}
	}
	page, err := s.svc.Definitions.ListWorkflowPage(r.Context(), req)
	if err != nil {
		return err
	}
	if err := present(page, "ListWorkflowPage"); err != nil {
		return err
	}
	out := paginationResult[orchestrator.WorkflowSummary]{Elements: nonNil(page.Workflows)}
	out.PageInfo.HasNextPage, out.PageInfo.HasPreviousPage = page.HasNext, page.HasPrev
	if n := len(page.Workflows); n > 0 {
		start := encodeCursorAt(workflowsScope, page.Workflows[0].WorkflowID, now)
		end := encodeCursorAt(workflowsScope, page.Workflows[n-1].WorkflowID, now)
		out.PageInfo.StartCursor, out.PageInfo.EndCursor = &start, &end
	}
	return writeJSON(w, http.StatusOK, out)
}

// answerPage writes page as Maestro's PaginationResult, its cursors of
// the list scope.
func answerPage[T any](w http.ResponseWriter, page *orchestrator.Page[T], err error, scope string, now time.Time, op string) error {
	if err != nil {
		return err
	}
	if err := present(page, op); err != nil {
		return err
	}
	out := paginationResult[T]{Elements: nonNil(page.Elements)}
	if page.Latest > 0 {
		out.TotalCount = page.Latest - page.Earliest + 1
	}
	if len(page.Elements) > 0 {
		start, end := encodeCursor(scope, page.High, now), encodeCursor(scope, page.Low, now)
		index := page.Latest + 1 - page.High
		out.PageInfo = pageInfo{
			StartCursor: &start, EndCursor: &end, StartIndex: &index,
			HasPreviousPage: page.High < page.Latest, HasNextPage: page.Low > page.Earliest,
		}
	}
	return writeJSON(w, http.StatusOK, out)
}

// Scopes of the paged lists' cursors.
func runsScope(wf string, inst int64) string { return fmt.Sprintf("runs/%s/%d", wf, inst) }
func instancesScope(wf string) string        { return "instances/" + wf }
func versionsScope(wf string) string         { return "versions/" + wf }

// listVersions serves GET .../{id}/versions/pagination (Maestro's path) and
// GET .../{id}/versions: a page of versions, newest first.
func (s readAPI) listVersions(w http.ResponseWriter, r *http.Request) error {
	wf, now := r.PathValue("id"), time.Now()
	req, err := pageRequest(r.URL.Query(), versionsScope(wf), now)
	if err != nil {
		return err
	}
	page, err := s.svc.Definitions.ListVersions(r.Context(), wf, req)
	return answerPage(w, page, err, versionsScope(wf), now, "ListVersions")
}

// listRuns serves GET .../instances/{instanceId}/runs: a page of runs,
// newest first.
func (s readAPI) listRuns(w http.ResponseWriter, r *http.Request) error {
	inst, err := positiveInt(r, "instanceId")
	if err != nil {
		return err
	}
	wf, now := r.PathValue("id"), time.Now()
	req, err := pageRequest(r.URL.Query(), runsScope(wf, inst), now)
	if err != nil {
		return err
	}
	page, err := s.svc.Runs.ListRuns(r.Context(), wf, inst, req)
	return answerPage(w, page, err, runsScope(wf, inst), now, "ListRuns")
}

// listInstancePage answers GET .../{id}/instances?first=|last= as
// Maestro's paged list.
func (s readAPI) listInstancePage(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	if q.Has("limit") || q.Has("status") {
		return orchestrator.Invalid("invalid page", "limit, status: are parameters of the cursor/limit listing; a first/last page takes first or last and cursor")
	}
	wf, now := r.PathValue("id"), time.Now()
	req, err := pageRequest(q, instancesScope(wf), now)
	if err != nil {
		return err
	}
	if q.Has("aggregated") {
		if _, err := strconv.ParseBool(q.Get("aggregated")); err != nil {
			return invalidParam("aggregated", "must be true or false")
		}
	}
	page, err := s.svc.Runs.ListInstancePage(r.Context(), wf, req)
	return answerPage(w, page, err, instancesScope(wf), now, "ListInstancePage")
}

// listRunSteps serves GET .../runs/{runId}/steps: the latest attempt of
// each step of one run.
func (s readAPI) listRunSteps(w http.ResponseWriter, r *http.Request) error {
	inst, run, err := instanceAndRun(r)
	if err != nil {
		return err
	}
	steps, err := s.svc.Runs.ListRunSteps(r.Context(), r.PathValue("id"), inst, run)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, nonNil(steps))
}

// getStepView serves GET .../instances/{instanceId}/steps/{stepId}: a step
// across the instance's runs.
func (s readAPI) getStepView(w http.ResponseWriter, r *http.Request) error {
	inst, err := positiveInt(r, "instanceId")
	if err != nil {
		return err
	}
	view, err := s.svc.Runs.GetStepView(r.Context(), r.PathValue("id"), inst, r.PathValue("stepId"))
	return answer(w, view, err, "GetStepView")
}

// workflowOverview serves GET .../{id}/overview.
func (s readAPI) workflowOverview(w http.ResponseWriter, r *http.Request) error {
	view, err := s.svc.Definitions.GetWorkflowOverview(r.Context(), r.PathValue("id"))
	return answer(w, view, err, "GetWorkflowOverview")
}

// workflowTimeline serves GET .../{id}/timeline.
func (s readAPI) workflowTimeline(w http.ResponseWriter, r *http.Request) error {
	view, err := s.svc.Definitions.GetWorkflowTimeline(r.Context(), r.PathValue("id"))
	return answer(w, view, err, "GetWorkflowTimeline")
}

// propertiesSnapshot serves GET .../{id}/properties-snapshot/{snapshotId}.
func (s readAPI) propertiesSnapshot(w http.ResponseWriter, r *http.Request) error {
	snap, err := s.svc.Definitions.GetPropertiesSnapshot(r.Context(), r.PathValue("id"), r.PathValue("snapshotId"))
	if err != nil {
		return err
	}
	if len(snap) == 0 {
		return orchestrator.Internal(errors.New("orchestrator.Service.GetPropertiesSnapshot returned neither a result nor an error"))
	}
	return writeJSON(w, http.StatusOK, snap)
}

// inlinePath serves GET .../instances/{instanceId}/inline-path.
func (s readAPI) inlinePath(w http.ResponseWriter, r *http.Request) error {
	inst, err := positiveInt(r, "instanceId")
	if err != nil {
		return err
	}
	path, err := s.svc.Runs.GetInlinePath(r.Context(), r.PathValue("id"), inst)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, nonNil(path))
}

// maxNodePath bounds the node path of an inline workflow id lookup.
const maxNodePath = 64

// inlineWorkflowID serves GET /api/v3/workflows/instances/inline-workflow-id:
// its JSON body (as Maestro's) is the node path, from the run above the
// loops to the step; the answer is the inline workflow id as a JSON string.
func (s readAPI) inlineWorkflowID(w http.ResponseWriter, r *http.Request) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	nodes, err := parseNodePath(body)
	if err != nil {
		return err
	}
	if err := s.authorizeNamed(r, nodes[0].WorkflowID); err != nil {
		return err
	}
	id, err := s.svc.Runs.GetInlineWorkflowID(r.Context(), nodes)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, id)
}

// parseNodePath reads a node path: 2 to maxNodePath nodes, the first
// naming a workflow and a positive instance, each next one a positive
// instance (the iteration), the last one a step id.
func parseNodePath(body []byte) ([]orchestrator.UpstreamInfo, error) {
	invalid := func(details ...string) error { return orchestrator.Invalid("invalid node path", details...) }
	var nodes []orchestrator.UpstreamInfo
	if len(body) == 0 {
		return nil, invalid("request body: must be a JSON array of nodes, from the run above the loops to the step")
	}
	if err := json.Unmarshal(body, &nodes); err != nil {
		return nil, invalid("request body: must be a JSON array of nodes with workflow_id, instance_id and step_id")
	}
	if len(nodes) < 2 || len(nodes) > maxNodePath {
		return nil, invalid(fmt.Sprintf("request body: must hold from 2 to %d nodes", maxNodePath))
	}
	if err := model.CheckWorkflowID(nodes[0].WorkflowID); err != nil {
		return nil, invalid("[0].workflow_id: " + err.Error())
	}
	for i, n := range nodes[:len(nodes)-1] {
		if n.InstanceID < 1 {
			return nil, invalid(fmt.Sprintf("[%d].instance_id: must be a positive integer", i))
		}
	}
	last := len(nodes) - 1
	if err := model.CheckStepID(nodes[last].StepID); err != nil {
		return nil, invalid(fmt.Sprintf("[%d].step_id: %s", last, err.Error()))
	}
	return nodes, nil
}
