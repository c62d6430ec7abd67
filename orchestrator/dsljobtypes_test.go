package orchestrator

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/maestro-serverless/maestro/store"
	"github.com/maestro-serverless/maestro/store/memstore"
)

// countedTemplates is the memstore's job template registry, counting its
// reads.
type countedTemplates struct {
	TemplateStore
	gets int
}

func newCountedTemplates() *countedTemplates {
	return &countedTemplates{TemplateStore: memstore.New(memstore.Options{}).Templates}
}

func (s *countedTemplates) GetJobTemplate(ctx context.Context, jobType, version string) (*store.JobTemplate, error) {
	s.gets++
	return s.TemplateStore.GetJobTemplate(ctx, jobType, version)
}

func (s *countedTemplates) ListJobTemplates(context.Context, string) ([]store.JobTemplate, error) {
	panic("the DSL's job types are read one by one")
}

// TestDSLJobTypesResolveThroughTemplates: Maestro's sample-dsl-wf-1.yaml
// names job types spark (type_version v1) and shell (no version: the
// "default" one). Without templates it is refused naming line 21 and the
// missing template, and nothing is stored; with them (spark -> Notebook,
// shell -> Kubernetes, as Maestro's WorkflowParserTest maps them) it is
// stored with those step types and the job types as sub_types, each
// (type, version) read once.
func TestDSLJobTypesResolveThroughTemplates(t *testing.T) {
	doc, err := os.ReadFile("../test/testdata/sample-dsl-wf-1.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tpl := newCountedTemplates()
	r := newRoleRig(t, func(c *Config) { c.Stores.Templates = tpl })
	ctx := r.ctx

	err = r.o.Definitions.ValidateWorkflow(ctx, doc, FormatYAML)
	wantRefusal(t, err, http.StatusBadRequest, `workflow.jobs[0].job.type: line 21: unknown job type "spark"`, `no job template "spark" (version "v1") is registered`)
	_, err = r.o.Definitions.CreateWorkflow(ctx, doc, FormatYAML)
	wantRefusal(t, err, http.StatusBadRequest, `line 21: unknown job type "spark"`, `no job template "shell" (version "default") is registered`)
	if _, err := r.o.Definitions.GetWorkflowVersion(ctx, "sample-dsl-wf-1", "latest"); rigErrStatus(err) != http.StatusNotFound {
		t.Fatalf("after a refused push: %v, want 404", err)
	}

	for _, tp := range []string{
		`{"owner": "tester", "status": "alpha", "support": "team", "definition": {"job_type": "spark", "step_type": "Notebook", "version": "v1"}}`,
		`{"owner": "tester", "status": "alpha", "support": "team", "definition": {"job_type": "shell", "step_type": "Kubernetes"}}`,
		`{"owner": "tester", "status": "alpha", "support": "team", "definition": {"job_type": "spark", "step_type": "Kubernetes"}}`, // another version: not the one asked for
	} {
		if _, err := r.o.Definitions.PutJobTemplate(ctx, []byte(tp), FormatJSON); err != nil {
			t.Fatalf("put %s: %v", tp, err)
		}
	}
	tpl.gets = 0
	v, err := r.o.Definitions.CreateWorkflow(ctx, doc, FormatYAML)
	if err != nil {
		t.Fatalf("create with the templates: %v", err)
	}
	if tpl.gets != 2 {
		t.Errorf("%d template reads, want 2 (one per type and version)", tpl.gets)
	}
	got := map[string]string{}
	var walk func(steps []map[string]map[string]any)
	walk = func(steps []map[string]map[string]any) {
		for _, wrap := range steps {
			for _, st := range wrap {
				got[fmt.Sprint(st["id"])] = fmt.Sprintf("%v/%v", st["type"], st["sub_type"])
				if inner, ok := st["steps"]; ok {
					var in []map[string]map[string]any
					b, _ := json.Marshal(inner)
					if err := json.Unmarshal(b, &in); err != nil {
						t.Fatal(err)
					}
					walk(in)
				}
			}
		}
	}
	var wf struct {
		Steps []map[string]map[string]any `json:"steps"`
	}
	if err := json.Unmarshal(v.Workflow, &wf); err != nil {
		t.Fatal(err)
	}
	walk(wf.Steps)
	if got["extract_data"] != "Notebook/spark" || got["process_data"] != "Kubernetes/shell" {
		t.Errorf("steps %v, want extract_data Notebook/spark and process_data Kubernetes/shell", got)
	}
}

// TestDSLJobTypeLookupsAreBounded: a document naming more distinct
// (type, version) pairs than maxDSLJobTypeLookups causes that many
// registry reads; the jobs past the bound are refused as unregistered.
func TestDSLJobTypeLookupsAreBounded(t *testing.T) {
	tpl := newCountedTemplates()
	r := newRoleRig(t, func(c *Config) { c.Stores.Templates = tpl })
	doc := "Workflow:\n  id: many-types\n  jobs:\n"
	for i := 0; i <= maxDSLJobTypeLookups; i++ {
		jt := fmt.Sprintf("t%d", i)
		req := fmt.Sprintf(`{"owner": "o", "status": "alpha", "support": "s", "definition": {"job_type": %q, "step_type": "NoOp"}}`, jt)
		if _, err := r.o.Definitions.PutJobTemplate(r.ctx, []byte(req), FormatJSON); err != nil {
			t.Fatal(err)
		}
		doc += fmt.Sprintf("    - job: {id: j%d, type: %s}\n", i, jt)
	}
	err := r.o.Definitions.ValidateWorkflow(r.ctx, []byte(doc), FormatYAML)
	last := fmt.Sprintf("t%d", maxDSLJobTypeLookups)
	wantRefusal(t, err, http.StatusBadRequest, fmt.Sprintf(`no job template %q (version "default") is registered`, last))
	if strings.Contains(err.Error(), `no job template "t0"`) {
		t.Errorf("a job within the bound was refused: %v", err)
	}
	if tpl.gets != maxDSLJobTypeLookups {
		t.Errorf("%d registry reads, want %d", tpl.gets, maxDSLJobTypeLookups)
	}
}
