package definition_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/maestro-serverless/maestro/definition"
)

// TestDSLErrorsNameTheLine checks that errors found after the DSL is
// translated (decoding, expressions, the DAG) are reported against the
// DSL field and YAML line they come from.
func TestDSLErrorsNameTheLine(t *testing.T) {
	doc := `Workflow:
  id: dsl-errors
  jobs:
    - job:
        id: job.1
        type: NoOp
        '!param5<long>': "params.get('param0'"
        failure_mode: sometimes
        transition:
          - IF x >>> 1 THEN job.9
`
	_, err := definition.NewChecker().Check([]byte(doc), definition.YAML)
	var list definition.Errors
	if !errors.As(err, &list) {
		t.Fatalf("got %v", err)
	}
	for _, want := range []string{
		`Workflow.jobs[0].job.!param5<long>: line 7: expression "params.get('param0'"`,
		`Workflow.jobs[0].job.failure_mode: line 8: unknown failure mode "sometimes"`,
		`Workflow.jobs[0].job.transition[0]: line 10: expression "x >>> 1"`,
		`Workflow.jobs[0].job.transition[0]: line 10: unknown step "job.9"`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("no error saying %q in:\n%v", want, err)
		}
	}
}

// TestYAMLLimitsApplyToBothForms checks that YAML with the JSON structure
// is held to the same limits as the DSL before it is decoded.
func TestYAMLLimitsApplyToBothForms(t *testing.T) {
	laughs := "workflow:\n  id: w\n  a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
	prev := "a0"
	for _, n := range []string{"a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8"} {
		laughs += "  " + n + ": &" + n + " [" + strings.TrimSuffix(strings.Repeat("*"+prev+", ", 10), ", ") + "]\n"
		prev = n
	}
	for name, doc := range map[string]string{
		"JSON structure, alias bomb": laughs + "  steps: []\n",
		"DSL, alias bomb":            strings.Replace(laughs, "workflow:", "Workflow:", 1) + "  jobs: []\n",
		"JSON structure, deep":       "workflow:\n  id: w\n  steps: " + strings.Repeat("[", 200) + strings.Repeat("]", 200) + "\n",
	} {
		_, err := definition.NewChecker().Check([]byte(doc), definition.YAML)
		if err == nil || !strings.Contains(err.Error(), "(limit") {
			t.Errorf("%s: want a limit error, got %v", name, err)
		}
	}
}
