package api

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/maestro-serverless/maestro/definition/diff"
	"github.com/maestro-serverless/maestro/orchestrator"
)

var _ DiffService = (*fakeService)(nil)

func (f *fakeService) DiffVersions(_ context.Context, wf, from, to string) (*diff.Diff, error) {
	return reply(f, &diff.Diff{WorkflowID: wf, From: 1, To: 2, Limit: diff.DefaultMaxChanges,
		Steps: diff.Steps{Added: []diff.Step{{ID: "b", Kind: "step", Type: "NoOp", Path: "workflow.steps[1].step"}}}}, "DiffVersions", wf, from, to)
}

// TestDiffRoute: the diff route passes both selectors (numbers, names
// lowercased) to the service and answers its diff; a bad selector or
// workflow id is a 400 naming the path parameter and the rule, and
// reaches no service; the service's 404 passes through.
func TestDiffRoute(t *testing.T) {
	cases := []struct {
		target     string
		svcErr     error
		wantStatus int
		wantArgs   []any // nil: no call
		wantText   string
	}{
		{"/api/v3/workflows/wf1/versions/1/diff/2", nil, 200, []any{"wf1", "1", "2"}, `"added":[{"step_id":"b","kind":"step","type":"NoOp","path":"workflow.steps[1].step"}]`},
		{"/api/v3/workflows/wf1/versions/Active/diff/latest", nil, 200, []any{"wf1", "active", "latest"}, `"workflow_id":"wf1"`},
		{"/api/v3/workflows/wf1/versions/default/diff/007", nil, 200, []any{"wf1", "default", "7"}, `"from":1`},
		{"/api/v3/workflows/wf1/versions/0/diff/2", nil, 400, nil, "version: must be active, latest, default or a positive version number"},
		{"/api/v3/workflows/wf1/versions/1/diff/newest", nil, 400, nil, "other: must be active, latest, default or a positive version number"},
		{"/api/v3/workflows/wf1/versions/1/diff/-2", nil, 400, nil, "other: must be"},
		{"/api/v3/workflows/wf1/versions/1/diff/99999999999999999999", nil, 400, nil, "other: must be"},
		{"/api/v3/workflows/" + strings.Repeat("w", 3000) + "/versions/1/diff/2", nil, 400, nil, "id: workflow id is 3000 characters long; the limit is 128"},
		{"/api/v3/workflows/maestro_x/versions/1/diff/2", nil, 400, nil, "must not start with"},
		{"/api/v3/workflows/wf1/versions/1/diff/9", orchestrator.NotFound("workflow wf1 has no version 9 (latest is 2)"), 404, []any{"wf1", "1", "9"}, "no version 9"},
	}
	for _, c := range cases {
		t.Run(c.target[:min(len(c.target), 80)], func(t *testing.T) {
			f := &fakeService{err: c.svcErr}
			rec := httptest.NewRecorder()
			NewHandler(f.services(), Options{}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, c.target, nil))
			if rec.Code != c.wantStatus || !strings.Contains(rec.Body.String(), c.wantText) {
				t.Fatalf("status %d, body %s; want %d with %q", rec.Code, rec.Body, c.wantStatus, c.wantText)
			}
			calls := f.recorded()
			if c.wantArgs == nil {
				if len(calls) != 0 {
					t.Fatalf("calls %v, want none", calls)
				}
				decodeError(t, c.wantStatus, rec.Body.Bytes())
				return
			}
			if len(calls) != 1 || calls[0].Method != "DiffVersions" || !slices.Equal(calls[0].Args, c.wantArgs) {
				t.Fatalf("calls %v, want DiffVersions %v", calls, c.wantArgs)
			}
			if c.wantStatus == 200 {
				var d diff.Diff
				if err := json.Unmarshal(rec.Body.Bytes(), &d); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
