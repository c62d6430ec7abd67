package definition_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/maestro-serverless/maestro/definition"
	"github.com/maestro-serverless/maestro/model"
)

// maestroTestJobTypes resolves the job types of sample-dsl-wf-1.yaml as
// Maestro's own WorkflowParserTest does (spark runs as a Notebook, shell
// as a Kubernetes step); on Maestro's server they come from job templates.
func maestroTestJobTypes(jobType, _ string) (model.StepType, bool) {
	switch jobType {
	case "spark":
		return model.StepNotebook, true
	case "shell":
		return model.StepKubernetes, true
	}
	return "", false
}

func checkFile(t *testing.T, c *definition.Checker, path string) *model.Definition {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	def, err := c.Check(data, definition.FormatFromName(path))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return def
}

// TestDSLEqualsItsJSONTwin decodes each corpus DSL file that has a JSON
// twin and compares the two models field by field. The twins are not
// written from the DSL, so where Maestro's DSL semantics give a different
// (equivalent) definition the difference is named and applied to the twin
// first; everything else must be equal.
func TestDSLEqualsItsJSONTwin(t *testing.T) {
	c := definition.NewChecker()
	dslDef := checkFile(t, c, "testdata/yaml/sample-conditional-wf.yaml")
	twin := checkFile(t, c, filepath.Join("..", "model", "testdata", "corpus", "sample-conditional-wf.json"))

	// 1. OTHERWISE negates the IF rows before it (TransitionParser); the
	//    twin spells the same condition "param2 >= 0".
	job3 := &twin.Workflow.Steps[2]
	if got := job3.Transition.Successors[1]; got.StepID != "job.6" || got.Condition != "param2 >= 0" {
		t.Fatalf("twin's job.3 -> %+v, the test's premise changed", got)
	}
	job3.Transition.Successors[1].Condition = "!((param2 < 0))"
	// 2. '!param5' gives no type, and ParamParser types an untyped
	//    expression STRING; the twin declares it LONG.
	p5 := twin.Workflow.Steps[6].Params.Defs["param5"]
	if p5 == nil || p5.Type != model.TypeLong {
		t.Fatalf("twin's param5 is %+v, the test's premise changed", p5)
	}
	p5.Type = model.TypeString

	if !reflect.DeepEqual(dslDef, twin) {
		a, _ := json.MarshalIndent(dslDef, "", " ")
		b, _ := json.MarshalIndent(twin, "", " ")
		t.Fatalf("DSL and JSON twin differ:\nDSL:  %s\nJSON: %s", a, b)
	}
}

// TestDSLSampleOneMatchesMaestrosParserTest checks sample-dsl-wf-1.yaml
// (which has no JSON twin) against what Maestro's WorkflowParserTest
// asserts of it.
func TestDSLSampleOneMatchesMaestrosParserTest(t *testing.T) {
	c := definition.NewChecker(definition.WithJobTypes(maestroTestJobTypes))
	def := checkFile(t, c, "testdata/yaml/sample-dsl-wf-1.yaml")
	wf := def.Workflow
	rs := def.Properties.RunStrategy
	if rs.Rule != model.RunParallel || rs.WorkflowConcurrency != 5 || *def.Properties.StepConcurrency != 20 {
		t.Errorf("run strategy %+v, step concurrency %d", rs, *def.Properties.StepConcurrency)
	}
	if wf.ID != "sample-dsl-wf-1" || wf.Criticality != model.CriticalityCritical || len(wf.Tags) != 1 || wf.Timeout == nil {
		t.Errorf("workflow %+v", wf)
	}
	if got := strings.Join(wf.Params.Names, ","); got != "month,data_source,output_path,partition_count" {
		t.Errorf("workflow params %s", got)
	}
	pc := wf.Params.Defs["partition_count"]
	if pc.Type != model.TypeLong || pc.Expression != "1+9" || pc.Mode != model.ModeConstant {
		t.Errorf("partition_count %+v", pc)
	}
	if len(wf.Steps) != 2 {
		t.Fatalf("%d steps", len(wf.Steps))
	}
	s1, s2 := wf.Steps[0], wf.Steps[1]
	if s1.Type != model.StepNotebook || s1.SubType != "spark" || len(s1.Transition.Successors) != 1 ||
		s1.Transition.Successors[0] != (model.Successor{StepID: "process_partitions", Condition: "partition_count > 0"}) {
		t.Errorf("extract_data %+v", s1)
	}
	lp := s2.Params.Defs["loop_params"]
	if s2.Kind != model.KindForeach || lp == nil || lp.Type != model.TypeMap {
		t.Fatalf("process_partitions %+v", s2)
	}
	loop, _ := lp.Value.(map[string]*model.ParamDefinition)
	if d, h := loop["date"], loop["hour"]; d == nil || h == nil ||
		!reflect.DeepEqual(d.Value, []int64{20200101, 20200102, 20200103}) ||
		h.Type != model.TypeLongArray || h.Expression != "Util.intsBetween(0, 24, 1);" {
		t.Errorf("loop_params %+v", loop)
	}
	if s2.Params.Defs["foo"] == nil || len(s2.Transition.Successors) != 0 || len(s2.Steps) != 1 {
		t.Errorf("process_partitions %+v", s2)
	}
	w := s2.Steps[0]
	if w.Kind != model.KindWhile || w.Condition != "attempt_cnt < 10" || len(w.Steps) != 2 {
		t.Fatalf("retry_failed_partitions %+v", w)
	}
	if wl, _ := w.Params.Defs["loop_params"].Value.(map[string]*model.ParamDefinition); wl["attempt_cnt"] == nil || wl["attempt_cnt"].Value != int64(1) {
		t.Errorf("while loop_params %+v", wl)
	}
	pd, sw := w.Steps[0], w.Steps[1]
	if pd.Type != model.StepKubernetes || pd.SubType != "shell" ||
		pd.Transition.Successors[0] != (model.Successor{StepID: "validation_workflow", Condition: "foo == 'bar'"}) {
		t.Errorf("process_data %+v", pd)
	}
	if sw.Kind != model.KindSubworkflow || sw.ExplicitParams == nil || !*sw.ExplicitParams ||
		strings.Join(sw.Params.Names, ",") != "foo,subworkflow_id,subworkflow_version" {
		t.Errorf("validation_workflow %+v", sw)
	}
}
