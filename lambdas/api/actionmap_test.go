package api

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/maestro-serverless/maestro/model"
)

func TestActionMaps(t *testing.T) {
	h := NewHandler((&fakeService{}).services(), Options{})
	for _, tc := range []struct {
		path  string
		check func(map[string][]string) bool
	}{
		{"/api/v3/workflows/instances/action-map", func(m map[string][]string) bool {
			return len(m) == len(model.WorkflowStatuses()) && slices.Equal(m["FAILED"], []string{"RESTART", "UNBLOCK"})
		}},
		{"/api/v3/workflows/steps/instances/action-map", func(m map[string][]string) bool {
			return len(m) == len(model.StepStatuses()) && slices.Contains(m["WAITING_FOR_SIGNALS"], "BYPASS_STEP_DEPENDENCIES") &&
				len(m["NOT_CREATED"]) == 0
		}},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tc.path, nil))
		var m map[string][]string
		if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &m) != nil || !tc.check(m) {
			t.Errorf("GET %s: %d %s", tc.path, rec.Code, rec.Body.String())
		}
	}
}
