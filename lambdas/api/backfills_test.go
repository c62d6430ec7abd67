package api

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/maestro-serverless/maestro/orchestrator"
)

var _ BackfillService = (*fakeService)(nil)

func (f *fakeService) CreateBackfill(_ context.Context, wf string, req orchestrator.BackfillRequest) (*orchestrator.BackfillView, error) {
	return reply(f, &orchestrator.BackfillView{WorkflowID: wf, BackfillID: "bf-1", Status: orchestrator.BackfillRunning}, "CreateBackfill", wf, req)
}

func (f *fakeService) EstimateBackfill(_ context.Context, wf string, req orchestrator.BackfillRequest) (*orchestrator.BackfillEstimate, error) {
	return reply(f, &orchestrator.BackfillEstimate{WorkflowID: wf, DryRun: true, Instances: 24}, "EstimateBackfill", wf, req)
}

func (f *fakeService) GetBackfill(_ context.Context, wf, id string) (*orchestrator.BackfillView, error) {
	return reply(f, &orchestrator.BackfillView{WorkflowID: wf, BackfillID: id}, "GetBackfill", wf, id)
}

func (f *fakeService) ListBackfills(_ context.Context, wf string) (*orchestrator.BackfillList, error) {
	return reply(f, &orchestrator.BackfillList{Backfills: []orchestrator.BackfillView{}}, "ListBackfills", wf)
}

func (f *fakeService) ActOnBackfill(_ context.Context, wf, id, action string) (*orchestrator.BackfillView, error) {
	return reply(f, &orchestrator.BackfillView{WorkflowID: wf, BackfillID: id}, "ActOnBackfill", wf, id, action)
}

func (f *fakeService) SetBackfillPriority(_ context.Context, wf, id, priority string) (*orchestrator.BackfillView, error) {
	return reply(f, &orchestrator.BackfillView{WorkflowID: wf, BackfillID: id}, "SetBackfillPriority", wf, id, priority)
}

// TestBackfillRoutes: a create answers 201 with the backfill, a dry run
// goes to the estimate (200), concurrency defaults to 1; the reads,
// actions and priority update reach their service methods.
func TestBackfillRoutes(t *testing.T) {
	svc := &fakeService{}
	h := NewHandler(svc.services(), Options{})
	do := func(method, target, body string) *httptest.ResponseRecorder {
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(body)
		}
		req := httptest.NewRequest(method, "http://api"+target, rd)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	const p = "/api/v3/workflows/wf/backfills"
	rec := do("POST", p, `{"from":"2026-11-01T00:00:00Z","to":"2026-11-02T00:00:00Z"}`)
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	assert.Contains(t, rec.Body.String(), `"backfill_id":"bf-1"`)
	rec = do("POST", p, `{"from":"2026-11-01T00:00:00Z","to":"2026-11-02T00:00:00Z","concurrency":4,"priority":"low","dry_run":true}`)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	assert.Contains(t, rec.Body.String(), `"instances":24`)
	require.Equal(t, http.StatusOK, do("GET", p, "").Code)
	require.Equal(t, http.StatusOK, do("GET", p+"/bf-1", "").Code)
	require.Equal(t, http.StatusOK, do("PUT", p+"/bf-1/actions/pause", "").Code)
	require.Equal(t, http.StatusOK, do("PUT", p+"/bf-1", `{"priority":"low"}`).Code)
	want := []call{
		{"CreateBackfill", []any{"wf", orchestrator.BackfillRequest{From: "2026-11-01T00:00:00Z", To: "2026-11-02T00:00:00Z", Concurrency: 1}}},
		{"EstimateBackfill", []any{"wf", orchestrator.BackfillRequest{From: "2026-11-01T00:00:00Z", To: "2026-11-02T00:00:00Z", Concurrency: 4, Priority: "low", DryRun: true}}},
		{"ListBackfills", []any{"wf"}},
		{"GetBackfill", []any{"wf", "bf-1"}},
		{"ActOnBackfill", []any{"wf", "bf-1", "pause"}},
		{"SetBackfillPriority", []any{"wf", "bf-1", "low"}},
	}
	assert.Equal(t, want, svc.recorded())
}

// TestBackfillRequestsAreChecked: malformed bodies and ids answer 400
// naming the field and the rule, and reach no service.
func TestBackfillRequestsAreChecked(t *testing.T) {
	const p = "/api/v3/workflows/wf/backfills"
	tests := []struct {
		name, method, target, body, field, rule string
	}{
		{"empty", "POST", p, "", "request body", "must not be empty"},
		{"missing to", "POST", p, `{"from":"2026-11-01T00:00:00Z"}`, "to", "required"},
		{"unknown field", "POST", p, `{"from":"a","to":"b","speed":1}`, "speed", "unknown field"},
		{"concurrency type", "POST", p, `{"from":"a","to":"b","concurrency":"4"}`, "concurrency", "must be an integer from 1 to 100"},
		{"concurrency fraction", "POST", p, `{"from":"a","to":"b","concurrency":1.5}`, "concurrency", "must be an integer"},
		{"from type", "POST", p, `{"from":1,"to":"b"}`, "from", "must be a string"},
		{"dry_run type", "POST", p, `{"from":"a","to":"b","dry_run":"yes"}`, "dry_run", "must be a boolean"},
		{"priority body", "PUT", p + "/bf-1", `{"priority":"low","x":1}`, "x", "unknown field"},
		{"priority missing", "PUT", p + "/bf-1", `{}`, "priority", "required"},
		{"backfill id", "GET", p + "/nope", "", "bid", "is not a backfill id"},
		{"backfill id long", "PUT", p + "/bf-" + strings.Repeat("a", 61) + "/actions/pause", "", "bid", "is not a backfill id"},
		{"workflow id", "GET", "/api/v3/workflows/" + strings.Repeat("w", 200) + "/backfills", "", "id", "the limit is 128"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			svc := &fakeService{}
			h := NewHandler(svc.services(), Options{})
			var body io.Reader
			if tc.body != "" {
				body = strings.NewReader(tc.body)
			}
			req := httptest.NewRequest(tc.method, "http://api"+tc.target, body)
			if tc.body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			require.Equal(t, http.StatusBadRequest, rec.Code, rec.Body.String())
			e := decodeError(t, http.StatusBadRequest, rec.Body.Bytes())
			joined := strings.Join(e.Errors, "\n")
			assert.Contains(t, joined, tc.field+": ")
			assert.Contains(t, joined, tc.rule)
			assert.Empty(t, svc.recorded(), "nothing may reach the service")
		})
	}
}
