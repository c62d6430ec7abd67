package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/localstack/stack"
)

// sendYAML sends a YAML body and decodes the JSON answer into out.
func (s *system) sendYAML(method, path string, body []byte, out any) int {
	s.t.Helper()
	return s.sendAs(method, path, "application/yaml", body, out)
}

// TestMaestroYAMLDSLSampleRuns pushes Maestro's sample-conditional-wf.yaml
// (the DSL: jobs, IF/THEN/OTHERWISE transitions, a '!' param) through
// POST /workflows/yaml and runs it to the outcome expected-outcomes.txt
// gives its JSON twin: job.4 and job.5 UNSATISFIED, the rest SUCCEEDED,
// job.7's param5 = params.get('param0') = 15. Then bad DSL documents are
// refused with a 400 naming the line and field, and none is stored.
func TestMaestroYAMLDSLSampleRuns(t *testing.T) {
	t.Parallel()
	s := startSystem(t, stack.Options{})
	doc := readFile(t, "sample-conditional-wf.yaml")

	var valid map[string]any
	if code := s.sendYAML("PUT", "/api/v3/workflows/actions/validate/yaml", doc, &valid); code != http.StatusOK {
		t.Fatalf("validate: %d %v", code, valid)
	}
	var created struct {
		WorkflowDefinition struct {
			Metadata struct {
				WorkflowID string `json:"workflow_id"`
			} `json:"metadata"`
		} `json:"workflow_definition"`
	}
	if code := s.sendYAML("POST", "/api/v3/workflows/yaml", doc, &created); code != http.StatusOK {
		t.Fatalf("create: status %d", code)
	}
	wf := created.WorkflowDefinition.Metadata.WorkflowID
	if wf != "sample-conditional-wf" {
		t.Fatalf("created %q", wf)
	}
	if code := s.do("GET", "/api/v3/workflows/"+wf+"/versions/latest", nil, nil); code != http.StatusOK {
		t.Fatalf("GET the created workflow: %d", code)
	}
	r := s.start(wf, `{"initiator":{"type":"manual"}}`)
	if v := s.wait(wf, r.WorkflowInstanceID, 30*time.Second); v.Status != "SUCCEEDED" {
		t.Fatalf("instance %s, want SUCCEEDED; steps %v", v.Status, v.StepStatuses)
	}
	expectSteps(t, s, wf, r.WorkflowInstanceID, map[string]string{
		"job.1": "SUCCEEDED", "job.2": "SUCCEEDED", "job.3": "SUCCEEDED", "job.4": "UNSATISFIED",
		"job.5": "UNSATISFIED", "job.6": "SUCCEEDED", "job.7": "SUCCEEDED",
	})
	// '!param5' has no type: the DSL makes it a STRING expression.
	if got := fmt.Sprint(s.steps(wf, r.WorkflowInstanceID)["job.7"].Params["param5"]); got != "15" {
		t.Errorf("job.7 param5 = %q, want \"15\"", got)
	}

	laughs := "Workflow:\n  id: yaml-bomb\n  a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
	for i := 1; i <= 9; i++ {
		laughs += fmt.Sprintf("  a%d: &a%d [%s]\n", i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d, ", i-1), 10), ", "))
	}
	laughs += "  jobs: [{job: {id: a, type: NoOp}}]\n"
	bad := []struct {
		name, id, doc, errText string
		code                   int
	}{
		{"unknown job type", "yaml-bad-type", "Workflow:\n  id: yaml-bad-type\n  jobs:\n    - job:\n        id: a\n        type: Teleport\n",
			`Workflow.jobs[0].job.type: line 6: unknown job type "Teleport"`, http.StatusBadRequest},
		{"bad transition", "yaml-bad-transition", "Workflow:\n  id: yaml-bad-transition\n  jobs:\n    - job:\n        id: a\n        type: NoOp\n        transition: [WHEN x GOTO b]\n",
			`Workflow.jobs[0].job.transition[0]: line 7: invalid transition "WHEN x GOTO b"`, http.StatusBadRequest},
		{"malformed expression", "yaml-bad-expr", "Workflow:\n  id: yaml-bad-expr\n  jobs:\n    - job:\n        id: a\n        type: NoOp\n        '!p<long>': \"params.get('x'\"\n",
			`Workflow.jobs[0].job.!p<long>: line 7: expression "params.get('x'"`, http.StatusBadRequest},
		{"alias bomb", "yaml-bomb", laughs, "limit", http.StatusBadRequest},
		{"deep nesting", "yaml-deep", "Workflow:\n  id: yaml-deep\n  p: " + strings.Repeat("[", 300) + strings.Repeat("]", 300) + "\n  jobs: []\n",
			"nests deeper than 100 levels (limit)", http.StatusBadRequest},
		{"huge document", "yaml-huge", "Workflow:\n  id: yaml-huge\n  p: '" + strings.Repeat("x", 300<<10) + "'\n  jobs: []\n",
			"request body is larger than 262144 bytes", http.StatusRequestEntityTooLarge},
	}
	for _, b := range bad {
		for _, path := range []string{"/api/v3/workflows/actions/validate/yaml", "/api/v3/workflows/yaml"} {
			method := "POST"
			if strings.Contains(path, "validate") {
				method = "PUT"
			}
			var body struct {
				Status  int      `json:"status"`
				Message string   `json:"message"`
				Errors  []string `json:"errors"`
			}
			code := s.sendYAML(method, path, []byte(b.doc), &body)
			if code != b.code || !strings.Contains(strings.Join(body.Errors, "\n")+body.Message, b.errText) {
				t.Errorf("%s %s: %d %+v, want %d saying %q", b.name, path, code, body, b.code, b.errText)
			}
		}
		if code := s.do("GET", "/api/v3/workflows/"+b.id+"/versions/latest", nil, nil); code != http.StatusNotFound {
			t.Errorf("%s: GET /workflows/%s/versions/latest = %d after a refused push, want 404", b.name, b.id, code)
		}
	}

	dslJobTemplates(t, s)
}

// dslJobTemplates pushes Maestro's sample-dsl-wf-1.yaml, whose jobs have
// the job types spark (type_version v1) and shell (the "default"
// version): refused naming line 21 and the missing template while no
// template is registered, nothing stored; accepted once templates map
// spark to Notebook and shell to Kubernetes (as Maestro's
// WorkflowParserTest does), the stored steps having those types and the
// job types as sub_types.
func dslJobTemplates(t *testing.T, s *system) {
	doc := readFile(t, "sample-dsl-wf-1.yaml")
	for _, path := range []string{"/api/v3/workflows/actions/validate/yaml", "/api/v3/workflows/yaml"} {
		method := "POST"
		if strings.Contains(path, "validate") {
			method = "PUT"
		}
		var body struct {
			Errors []string `json:"errors"`
		}
		code := s.sendYAML(method, path, doc, &body)
		got := strings.Join(body.Errors, "\n")
		if code != http.StatusBadRequest || !strings.Contains(got, `line 21: unknown job type "spark"`) || !strings.Contains(got, `no job template "spark" (version "v1") is registered`) {
			t.Errorf("%s %s without templates: %d %q, want 400 naming line 21 and the spark v1 template", method, path, code, got)
		}
	}
	if code := s.do("GET", "/api/v3/workflows/sample-dsl-wf-1/versions/latest", nil, nil); code != http.StatusNotFound {
		t.Fatalf("GET sample-dsl-wf-1 after a refused push = %d, want 404", code)
	}
	for _, tp := range []string{
		`{"owner": "tester", "status": "alpha", "support": "team", "definition": {"job_type": "spark", "step_type": "Notebook", "version": "v1"}}`,
		`{"owner": "tester", "status": "alpha", "support": "team", "definition": {"job_type": "shell", "step_type": "Kubernetes"}}`,
	} {
		var out map[string]any
		if code := s.do("POST", "/api/v3/job-templates", []byte(tp), &out); code != http.StatusOK {
			t.Fatalf("POST job template %s: %d %v", tp, code, out)
		}
	}
	var created map[string]any
	if code := s.sendYAML("POST", "/api/v3/workflows/yaml", doc, &created); code != http.StatusOK {
		t.Fatalf("POST sample-dsl-wf-1.yaml with the templates: %d %v", code, created)
	}
	var version struct {
		Workflow struct {
			Steps []map[string]json.RawMessage `json:"steps"`
		} `json:"workflow"`
	}
	if code := s.do("GET", "/api/v3/workflows/sample-dsl-wf-1/versions/latest", nil, &version); code != http.StatusOK {
		t.Fatalf("GET sample-dsl-wf-1: %d", code)
	}
	got := map[string]string{}
	var walk func(steps []map[string]json.RawMessage)
	walk = func(steps []map[string]json.RawMessage) {
		for _, wrap := range steps {
			for _, raw := range wrap {
				var st struct {
					ID      string                       `json:"id"`
					Type    string                       `json:"type"`
					SubType string                       `json:"sub_type"`
					Steps   []map[string]json.RawMessage `json:"steps"`
				}
				if err := json.Unmarshal(raw, &st); err != nil {
					t.Fatal(err)
				}
				got[st.ID] = st.Type + "/" + st.SubType
				walk(st.Steps)
			}
		}
	}
	walk(version.Workflow.Steps)
	if got["extract_data"] != "Notebook/spark" || got["process_data"] != "Kubernetes/shell" {
		t.Errorf("stored steps %v, want extract_data Notebook/spark and process_data Kubernetes/shell", got)
	}
}
