package e2e

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/localstack/stack"
	"github.com/maestro-serverless/maestro/orchestrator"
)

// TestFlattenViews: Maestro's flatten views of a step two foreach loops
// deep list it in every (outer, inner) iteration in rank order, page
// forwards and backwards with cursors, filter by status and loop params,
// read one iteration by its ids, and sum them up; bad requests are 400s
// naming the parameter, unknown steps and iterations 404s.
func TestFlattenViews(t *testing.T) {
	t.Parallel()
	s := startSystem(t, stack.Options{})
	wf := s.push([]byte(`{"properties":{"owner":"flat"},"workflow":{"id":"flat-nested","steps":[
	  {"foreach":{"id":"outer","failure_mode":"IGNORE_FAILURE",
	    "params":{"loop_params":{"type":"MAP","value":{"a":{"type":"STRING_ARRAY","value":["x","y"]}}}},
	    "steps":[{"foreach":{"id":"inner","failure_mode":"IGNORE_FAILURE",
	      "params":{"loop_params":{"type":"MAP","value":{"b":{"type":"LONG_ARRAY","value":[1,2,3]}}}},
	      "steps":[{"step":{"id":"leaf","type":"NoOp","params":{"v":{"type":"LONG","expression":"10 / (b - 2)"}}}}]}}]}},
	  {"step":{"id":"top","type":"NoOp"}}]}}`))
	r := s.start(wf, "")
	if v := s.wait(wf, r.WorkflowInstanceID, 90*time.Second); v.Status != "SUCCEEDED" {
		t.Fatalf("instance %s %v", v.Status, v.StepStatuses)
	}
	base := fmt.Sprintf("/api/v3/views/flatten/workflows/%s/instances/%d/runs/1/steps/leaf", wf, r.WorkflowInstanceID)
	list := func(query string) orchestrator.StepIterationPage {
		t.Helper()
		var p orchestrator.StepIterationPage
		if code := s.do("GET", base+"?"+query, nil, &p); code != http.StatusOK {
			t.Fatalf("GET ?%s: %d", query, code)
		}
		return p
	}
	ranks := func(p orchestrator.StepIterationPage) string {
		var out []string
		for _, it := range p.Elements {
			out = append(out, fmt.Sprintf("%s:%s:%s%s", it.IterationRank, it.StepRuntimeState.Status, it.LoopParams["a"], it.LoopParams["b"]))
		}
		return strings.Join(out, " ")
	}
	const (
		x1, x2, x3 = "11-11:SUCCEEDED:x1", "11-12:FATALLY_FAILED:x2", "11-13:SUCCEEDED:x3"
		y1, y2, y3 = "12-11:SUCCEEDED:y1", "12-12:FATALLY_FAILED:y2", "12-13:SUCCEEDED:y3"
	)
	check := func(what string, p orchestrator.StepIterationPage, want string, next, prev bool) {
		t.Helper()
		if got := ranks(p); got != want || p.TotalCount != len(p.Elements) || p.PageInfo.HasNextPage != next || p.PageInfo.HasPreviousPage != prev {
			t.Errorf("%s: %s (total %d) next=%v prev=%v; want %s next=%v prev=%v", what, got, p.TotalCount,
				p.PageInfo.HasNextPage, p.PageInfo.HasPreviousPage, want, next, prev)
		}
	}
	first := list("first=4")
	check("first 4", first, strings.Join([]string{x1, x2, x3, y1}, " "), true, false)
	check("the next page", list("first=4&cursor="+first.PageInfo.EndCursor), strings.Join([]string{y2, y3}, " "), false, true)
	last := list("last=2")
	check("last 2", last, strings.Join([]string{y2, y3}, " "), false, true)
	check("the page before", list("last=3&cursor="+last.PageInfo.StartCursor), strings.Join([]string{x2, x3, y1}, " "), true, true)
	check("failed ones", list("first=10&statuses=FATALLY_FAILED"), strings.Join([]string{x2, y2}, " "), false, false)
	loopParams := base64.URLEncoding.EncodeToString([]byte(`{"a":"y"}`))
	check("a = y", list("first=10&loopParams="+loopParams), strings.Join([]string{y1, y2, y3}, " "), false, false)

	it := first.Elements[1]
	if it.WorkflowID != wf || it.WorkflowInstanceID != r.WorkflowInstanceID || it.WorkflowRunID != 1 || it.StepID != "leaf" ||
		it.StepAttemptSeq != "11-11-11-11-11-11" || it.LeafStepInstanceRef == nil || it.LeafStepInstanceRef.WorkflowInstanceID != 2 ||
		!strings.HasPrefix(it.LeafStepInstanceRef.WorkflowID, "maestro_foreach_") || it.LeafStepInstanceRef.StepAttemptID != 1 {
		t.Errorf("iteration 1-2: %+v ref %+v", it, it.LeafStepInstanceRef)
	}
	var one orchestrator.StepIteration
	if code := s.do("GET", base+"/iterations/2-3", nil, &one); code != http.StatusOK || one.IterationRank != "12-13" ||
		one.LoopParams["a"] != "y" || one.LoopParams["b"] != "3" || one.StepRuntimeState.Status != "SUCCEEDED" {
		t.Errorf("iteration 2-3: %d %+v", code, one)
	}
	var leafView orchestrator.StepView
	ref := one.LeafStepInstanceRef
	if code := s.do("GET", fmt.Sprintf("/api/v3/workflows/%s/instances/%d/runs/%d/steps/leaf/attempts/%d", ref.WorkflowID,
		ref.WorkflowInstanceID, ref.WorkflowRunID, ref.StepAttemptID), nil, &leafView); code != http.StatusOK || fmt.Sprint(leafView.Params["v"]) != "10" {
		t.Errorf("the leaf step the reference names: %d %+v", code, leafView.Params)
	}

	var sum orchestrator.StepIterationsSummary
	if code := s.do("GET", base+"/summary?statusCount=true&valueCount=2", nil, &sum); code != http.StatusOK {
		t.Fatalf("summary: %d", code)
	}
	if fmt.Sprint(sum.CountByStatus) != "map[FATALLY_FAILED:2 SUCCEEDED:4]" || sum.RepresentativeIteration == nil ||
		sum.RepresentativeIteration.IterationRank != "11-12" || fmt.Sprint(sum.LoopParamValues) != "map[a:[x y] b:[1 2]]" {
		t.Errorf("summary: counts %v, representative %+v, values %v", sum.CountByStatus, sum.RepresentativeIteration, sum.LoopParamValues)
	}

	var e struct {
		Message string   `json:"message"`
		Errors  []string `json:"errors"`
	}
	for _, c := range []struct {
		path string
		code int
		says string
	}{
		{base + "?first=0", 400, "first"},
		{base + "?first=2&last=2", 400, "first"},
		{base, 400, "first"},
		{base + "?first=201", 400, "first"},
		{base + "?first=2&cursor=bm9wZQ==", 400, "cursor"},
		{base + "?first=2&loopParams=!!", 400, "loopParams"},
		{base + "/summary?valueCount=-1", 400, "valueCount"},
		{base + "/iterations/2-x", 400, "iterationId"},
		{base + "/iterations/3-1", 404, "not found"},
		{fmt.Sprintf("/api/v3/views/flatten/workflows/%s/instances/%d/runs/1/steps/top?first=1", wf, r.WorkflowInstanceID), 404, "inside a foreach"},
		{fmt.Sprintf("/api/v3/views/flatten/workflows/%s/instances/%d/runs/2/steps/leaf?first=1", wf, r.WorkflowInstanceID), 404, "no run 2"},
	} {
		e.Message, e.Errors = "", nil
		if code := s.do("GET", c.path, nil, &e); code != c.code || !strings.Contains(e.Message+strings.Join(e.Errors, " "), c.says) {
			t.Errorf("GET %s: %d %q %v; want %d naming %q", c.path, code, e.Message, e.Errors, c.code, c.says)
		}
	}
}
