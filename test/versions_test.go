package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/maestro-serverless/maestro/localstack/stack"
)

func TestVersionsAndProperties(t *testing.T) {
	t.Parallel()
	s := startSystem(t, stack.Options{})
	def := func(name string, active bool) []byte {
		return []byte(fmt.Sprintf(`{"properties":{"owner":"alice","step_concurrency":5},"is_active":%t,
		  "workflow":{"id":"versions-wf","name":%q,"steps":[{"step":{"id":"a","type":"NoOp"}}]}}`, active, name))
	}
	s.push(def("one", true))
	s.push(def("two", false)) // latest, not active
	// GET .../versions/{v} answers the WorkflowDefinition itself.
	type defView struct {
		Metadata struct {
			Version int64 `json:"workflow_version_id"`
		} `json:"metadata"`
		IsActive bool            `json:"is_active"`
		Props    json.RawMessage `json:"properties_snapshot"`
	}
	version := func(sel string) (int64, bool, int) {
		var v defView
		code := s.do("GET", "/api/v3/workflows/versions-wf/versions/"+sel, nil, &v)
		return v.Metadata.Version, v.IsActive, code
	}
	if v, active, _ := version("active"); v != 1 || !active {
		t.Fatalf("active is %d", v)
	}
	if v, active, _ := version("latest"); v != 2 || active {
		t.Fatalf("latest is %d active=%v", v, active)
	}
	if code := s.do("PUT", "/api/v3/workflows/versions-wf/versions/2/actions/activate", nil, nil); code != http.StatusOK {
		t.Fatalf("activate: HTTP %d", code)
	}
	if v, _, _ := version("active"); v != 2 {
		t.Fatalf("after activate, active is %d", v)
	}
	if code := s.do("PUT", "/api/v3/workflows/versions-wf/actions/deactivate", nil, nil); code != http.StatusOK {
		t.Fatalf("deactivate: HTTP %d", code)
	}
	if _, _, code := version("active"); code != http.StatusNotFound {
		t.Fatalf("after deactivate, GET active: HTTP %d", code)
	}
	if code := s.do("POST", "/api/v3/workflows/versions-wf/versions/active/actions/start", []byte(`{}`), nil); code != http.StatusNotFound {
		t.Errorf("start of the active version of an inactive workflow: HTTP %d", code)
	}
	if v, _, _ := version("default"); v != 2 {
		t.Errorf("default (no active: latest) is %d", v)
	}

	// Properties: updated in place, kept across a new version; bad values named.
	var out struct {
		Props map[string]any `json:"properties_snapshot"`
	}
	code := s.do("POST", "/api/v3/workflows/versions-wf/properties",
		[]byte(`{"owner":"bob","run_strategy":{"rule":"parallel","workflow_concurrency":7},"reset_step_concurrency":true}`), &out)
	if code != http.StatusOK || out.Props["owner"] != "bob" || out.Props["step_concurrency"] != nil {
		t.Fatalf("update: HTTP %d %v", code, out.Props)
	}
	s.push([]byte(`{"workflow":{"id":"versions-wf","steps":[{"step":{"id":"a","type":"NoOp"}}]}}`))
	var latest defView
	s.do("GET", "/api/v3/workflows/versions-wf/versions/latest", nil, &latest)
	if !strings.Contains(string(latest.Props), `"bob"`) || !strings.Contains(string(latest.Props), `"workflow_concurrency":7`) {
		t.Errorf("properties not kept across versions: %s", latest.Props)
	}
	var bad struct {
		Errors []string `json:"errors"`
	}
	code = s.do("POST", "/api/v3/workflows/versions-wf/properties", []byte(`{"run_strategy":{"rule":"sequential","workflow_concurrency":3}}`), &bad)
	if code != http.StatusBadRequest || !strings.Contains(strings.Join(bad.Errors, " "), "properties.run_strategy") {
		t.Errorf("bad run strategy: HTTP %d %v", code, bad.Errors)
	}
	code = s.do("POST", "/api/v3/workflows/versions-wf/properties", []byte(`{"step_concurrency":3,"reset_step_concurrency":true}`), &bad)
	if code != http.StatusBadRequest {
		t.Errorf("set and reset together: HTTP %d", code)
	}
}
