package definition_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/definition"
)

// verdicts is the compatibility table of docs/compatibility.md: every file
// of Maestro's corpus and what Check says of it. "" is valid; otherwise the
// text names why it is rejected and must appear in the first error.
var verdicts = []struct{ file, reason string }{
	{"sample-conditional-wf.json", ""},
	{"sample-dag-test-1.json", ""},
	{"sample-dag-test-10.json", ""},
	{"sample-dag-test-2.json", ""},
	{"sample-dag-test-3.json", ""},
	{"sample-dag-test-4.json", ""},
	{"sample-dag-test-5.json", ""},
	{"sample-dag-test-6.json", ""},
	{"sample-dag-test-7.json", ""},
	{"sample-dag-test-8.json", ""},
	{"sample-dag-test-9.json", ""},
	{"sample-foreach-wf.json", ""},
	{"sample-large-foreach-wf.json", ""},
	{"sample-mixed-wf.json", ""},
	{"sample-nested-foreach-subworkflow-wf.json", ""},
	{"sample-nested-foreach-wf.json", ""},
	{"sample-nested-subworkflow-foreach-wf.json", ""},
	{"sample-nested-subworkflow-wf.json", ""},
	{"sample-signal-trigger-wf.json", ""},
	{"sample-subworkflow-wf.json", ""},
	{"sample-time-trigger-wf.json", ""},
	{"sample-while-wf.json", ""},
	{"fixtures/sample-active-wf-with-output-signals.json", ""},
	{"fixtures/sample-active-wf-with-props.json", ""},
	{"fixtures/sample-active-wf-with-signal-triggers.json", ""},
	{"fixtures/sample-active-wf-with-step-signal-dependencies.json", ""},
	{"fixtures/sample-active-wf-with-triggers.json", ""},
	{"fixtures/sample-conditional-wf.json", ""},
	{"fixtures/sample-dag-test-1-wf.json", ""},
	{"fixtures/sample-dag-test-2-wf.json", ""},
	{"fixtures/sample-dag-test-3-wf.json", ""},
	{"fixtures/sample-dag-with-cycle-wf.json", "cycle"},
	{"fixtures/sample-invalid-cron-wf-def.json", "cron"},
	{"fixtures/sample-invalid-wf.json", "workflow: required"},
	{"fixtures/sample-minimal-wf-run-strategy-serial-latest-only.json", ""},
	{"fixtures/sample-minimal-wf.json", ""},
	{"fixtures/sample-retry-strings.json", "workflow: required"},
	{"fixtures/sample-single-node-wf.json", ""},
	{"fixtures/sample-timeouts.json", "workflow: required"},
	{"fixtures/sample-wf-map-params.json", ""},
	{"fixtures/sample-wf-params.json", ""},
	{"extra/sample-job-template-1.json", "workflow: required"},
	{"extra/sample-kubernetes-env-wf.json", ""},
	{"extra/sample-kubernetes-nonretryable-wf.json", ""},
	{"extra/sample-kubernetes-output-wf.json", ""},
	{"extra/sample-kubernetes-wf.json", ""},
	{"extra/sample-notebook-git-wf.json", ""},
	{"extra/sample-notebook-wf.json", ""},
	{"extra/sample-shell-wf.json", ""},
	{"yaml/sample-conditional-wf.yaml", ""},
	{"yaml/sample-dsl-wf-1.yaml", "job template"},
	{"yaml/sample-http-wf.yaml", ""},
}

// reasonText maps the table's short reasons to text the error must contain.
var reasonText = map[string]string{
	"cycle":              "cycle: job.2 -> job.3 -> job.4 -> job.2",
	"cron":               `cron "0 30 * * *"`,
	"workflow: required": "workflow: required",
	"job template":       `line 21: unknown job type "spark" (want NoOp, Sleep, Titus, Notebook, Kubernetes, Http, Join, Lambda, Callback, Ecs or Batch; it may be a job template's type`,
}

func TestCorpusVerdicts(t *testing.T) {
	c := definition.NewChecker(definition.WithClock(func() time.Time { return time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC) }))
	valid, rejected := 0, 0
	for _, v := range verdicts {
		t.Run(v.file, func(t *testing.T) {
			path := filepath.Join("..", "model", "testdata", "corpus", v.file)
			if strings.HasPrefix(v.file, "yaml/") {
				path = filepath.Join("testdata", v.file)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Check(data, definition.FormatFromName(path))
			if v.reason == "" {
				valid++
				if err != nil {
					t.Fatalf("want valid, got:\n%v", err)
				}
				return
			}
			rejected++
			if err == nil {
				t.Fatalf("want rejected (%s), got valid", v.reason)
			}
			list, ok := err.(definition.Errors)
			if !ok || len(list) == 0 {
				t.Fatalf("error is %T, want definition.Errors", err)
			}
			if want := reasonText[v.reason]; !strings.Contains(list[0].Error(), want) {
				t.Errorf("first error %q does not say %q", list[0], want)
			}
		})
	}
	t.Logf("%d valid, %d rejected", valid, rejected)
}

func TestYAMLWithTheJSONStructureIsAccepted(t *testing.T) {
	data, err := os.ReadFile("testdata/sample-dag-test-8.yaml")
	if err != nil {
		t.Fatal(err)
	}
	def, err := definition.NewChecker().Check(data, definition.YAML)
	if err != nil {
		t.Fatal(err)
	}
	if def.Workflow.ID != "sample-dag-test-8" || len(def.Workflow.Steps) != 5 {
		t.Errorf("decoded %s with %d steps", def.Workflow.ID, len(def.Workflow.Steps))
	}
}

func TestOversizedDefinitionIsRejected(t *testing.T) {
	_, err := definition.NewChecker().Check(make([]byte, definition.MaxSize+1), definition.JSON)
	if err == nil || !strings.Contains(err.Error(), "limit") {
		t.Fatalf("got %v", err)
	}
}
