package dsl_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/maestro-serverless/maestro/definition/dsl"
	"github.com/maestro-serverless/maestro/model"
)

// FuzzTranslate feeds arbitrary YAML to Parse and Translate: neither may
// panic, every failure is a model.Errors naming a line or the document,
// and every success is valid JSON that the model decoder takes without
// panicking.
func FuzzTranslate(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "yaml", "*.yaml"))
	for _, name := range files {
		if data, err := os.ReadFile(name); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("Workflow:\n  id: w\n  dag: sequential\n  jobs:\n    - job: {id: a, type: NoOp, transition: [IF x THEN b, OTHERWISE c]}\n    - foreach: {id: b, ranges: {h: {to: 3}}, jobs: [{while: {id: l, jobs: []}}]}\n"))
	f.Add([]byte("workflow:\n  id: w\n  '!p<array<long>>(constant)': '[1]'\n  m<pmap>: {a: {b: [1.5]}}\n  jobs: [{subworkflow: {id: s}}]\n"))
	f.Add([]byte("Workflow: &a {jobs: [*a]}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		out, _, err := dsl.Translate(data, dsl.Options{Resolve: func(string, string) (model.StepType, bool) { return model.StepNoOp, true }})
		if err != nil {
			var list model.Errors
			if !errors.As(err, &list) || len(list) == 0 {
				t.Fatalf("error is %T %v, want model.Errors", err, err)
			}
			for _, e := range list {
				if e.Path == "" || (e.Path != "$" && !strings.HasPrefix(e.Msg, "line ")) {
					t.Fatalf("error %q names no line", e)
				}
			}
			return
		}
		if !json.Valid(out) {
			t.Fatalf("invalid JSON %s", out)
		}
		_, _ = model.ParseDefinition(out)
	})
}
