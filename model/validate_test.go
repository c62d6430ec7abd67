package model

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// baseDoc is a small valid definition that the rule tests mutate.
const baseDoc = `{
  "properties": {"owner": "me", "run_strategy": "parallel", "step_concurrency": 10},
  "workflow": {
    "id": "wf",
    "params": {"x": {"value": 5, "type": "LONG"}},
    "steps": [
      {"step": {"id": "a", "type": "NoOp", "transition": {"successors": {"b": "true", "c": "x > 1"}}}},
      {"step": {"id": "b", "type": "Sleep", "params": {"sleep_seconds": {"value": 1, "type": "LONG"}},
                "transition": {"successors": {"c": "true"}}}},
      {"step": {"id": "c", "type": "NoOp"}}
    ]
  }
}`

// mustStep decodes one step wrapper.
func mustStep(t testing.TB, doc string) Step {
	t.Helper()
	var s Step
	if err := s.UnmarshalJSON([]byte(doc)); err != nil {
		t.Fatalf("step %s: %v", doc, err)
	}
	return s
}

// mustParam decodes one param definition.
func mustParam(t testing.TB, doc string) *ParamDefinition {
	t.Helper()
	var p ParamDefinition
	if err := p.UnmarshalJSON([]byte(doc)); err != nil {
		t.Fatalf("param %s: %v", doc, err)
	}
	return &p
}

// errorStrings renders errors sorted.
func errorStrings(errs Errors) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	sort.Strings(out)
	return out
}

func TestBaseDefinitionIsValid(t *testing.T) {
	if errs := Validate(mustParse(t, baseDoc), ValidateOptions{}); errs != nil {
		t.Fatalf("base definition: %v", errs)
	}
}

func TestValidateRules(t *testing.T) {
	long := func(n int) string { return strings.Repeat("x", n) }
	loopStep := func(kind, id, inner string, loopParams string) string {
		return fmt.Sprintf(`{"%s":{"id":"%s","condition":"true","params":{"loop_params":{"type":"MAP","value":{%s}}},"steps":[%s]}}`,
			kind, id, loopParams, inner)
	}
	tests := []struct {
		name   string
		mutate func(t *testing.T, d *Definition)
		want   []string
	}{
		// Workflow fields.
		{"workflow id required", func(t *testing.T, d *Definition) { d.Workflow.ID = "" },
			[]string{"workflow.id: required"}},
		{"workflow id pattern", func(t *testing.T, d *Definition) { d.Workflow.ID = "bad id" },
			[]string{`workflow.id: workflow id "bad id" is invalid: it must match [_a-zA-Z0-9][.\-_a-zA-Z0-9]*`}},
		{"workflow id may start with a digit", func(t *testing.T, d *Definition) { d.Workflow.ID = "1st.wf-x_y" }, nil},
		{"workflow id may not start with a dot", func(t *testing.T, d *Definition) { d.Workflow.ID = ".wf" },
			[]string{`workflow.id: workflow id ".wf" is invalid: it must match [_a-zA-Z0-9][.\-_a-zA-Z0-9]*`}},
		{"workflow id length", func(t *testing.T, d *Definition) { d.Workflow.ID = long(129) },
			[]string{"workflow.id: workflow id is 129 characters long; the limit is 128"}},
		{"workflow id reserved prefix", func(t *testing.T, d *Definition) { d.Workflow.ID = "Maestro_wf" },
			[]string{`workflow.id: workflow id "Maestro_wf" must not start with "maestro_" or end with "_maestro" (reserved, case-insensitive)`}},
		{"workflow id reserved suffix", func(t *testing.T, d *Definition) { d.Workflow.ID = "wf_MAESTRO" },
			[]string{`workflow.id: workflow id "wf_MAESTRO" must not start with "maestro_" or end with "_maestro" (reserved, case-insensitive)`}},
		{"workflow name length", func(t *testing.T, d *Definition) { d.Workflow.Name = long(257) },
			[]string{"workflow.name: name is 257 characters long; the limit is 256"}},
		{"workflow description length", func(t *testing.T, d *Definition) { d.Workflow.Description = long(16385) },
			[]string{"workflow.description: description is 16385 characters long; the limit is 16384"}},
		{"description counts characters", func(t *testing.T, d *Definition) { d.Workflow.Name = strings.Repeat("é", 256) }, nil},
		{"steps required", func(t *testing.T, d *Definition) { d.Workflow.Steps = nil },
			[]string{"workflow.steps: must have at least one step"}},
		{"criticality", func(t *testing.T, d *Definition) { d.Workflow.Criticality = "URGENT" },
			[]string{`workflow.criticality: unknown criticality "URGENT" (want CRITICAL, HIGH, MEDIUM or LOW)`}},
		{"instance_step_concurrency 1000", func(t *testing.T, d *Definition) { d.Workflow.InstanceStepConcurrency = ptr(int64(1000)) },
			[]string{"workflow.instance_step_concurrency: instance_step_concurrency 1000 is out of range 1..999"}},
		{"instance_step_concurrency 0", func(t *testing.T, d *Definition) { d.Workflow.InstanceStepConcurrency = ptr(int64(0)) },
			[]string{"workflow.instance_step_concurrency: instance_step_concurrency 0 is out of range 1..999"}},

		// Properties.
		{"workflow_concurrency range", func(t *testing.T, d *Definition) {
			d.Properties.RunStrategy = &RunStrategy{Rule: RunParallel, WorkflowConcurrency: 1001, Shape: "object"}
		}, []string{"properties.run_strategy.workflow_concurrency: workflow_concurrency 1001 is out of range 1..1000"}},
		{"workflow_concurrency only for PARALLEL", func(t *testing.T, d *Definition) {
			d.Properties.RunStrategy = &RunStrategy{Rule: RunSequential, WorkflowConcurrency: 2, Shape: "object"}
		}, []string{"properties.run_strategy.workflow_concurrency: workflow_concurrency 2 > 1 is only allowed with the PARALLEL rule, not SEQUENTIAL"}},
		{"number form needs 1..1000", func(t *testing.T, d *Definition) {
			d.Properties.RunStrategy = &RunStrategy{Rule: RunParallel, Shape: "number"}
		}, []string{"properties.run_strategy: workflow_concurrency 0 is out of range 1..1000"}},
		{"unknown rule", func(t *testing.T, d *Definition) {
			d.Properties.RunStrategy = &RunStrategy{Rule: "RANDOM", Shape: "string"}
		},
			[]string{`properties.run_strategy: unknown run strategy rule "RANDOM" (want SEQUENTIAL, STRICT_SEQUENTIAL, FIRST_ONLY, LAST_ONLY, PARALLEL or SERIAL_LATEST_ONLY)`}},
		{"step_concurrency", func(t *testing.T, d *Definition) { d.Properties.StepConcurrency = ptr(int64(1001)) },
			[]string{"properties.step_concurrency: step_concurrency 1001 is out of range 1..1000"}},
		{"snapshot path", func(t *testing.T, d *Definition) {
			d.PropertiesSnapshot = true
			d.Properties.StepConcurrency = ptr(int64(0))
		}, []string{"properties_snapshot.step_concurrency: step_concurrency 0 is out of range 1..1000"}},

		// Tags.
		{"duplicate tags", func(t *testing.T, d *Definition) {
			d.Workflow.Tags = TagList{{Name: "t", Plain: true}, {Name: "t"}}
		}, []string{`workflow.tags[1].name: duplicate tag "t"`}},
		{"tag name characters", func(t *testing.T, d *Definition) { d.Workflow.Tags = TagList{{Name: "a|b", Plain: true}} },
			[]string{`workflow.tags[0]: tag name "a|b" contains '|'; allowed are letters, digits and _ .,:@&='(){}$+[]-/\ and space`}},
		{"tag name allowed characters", func(t *testing.T, d *Definition) {
			d.Workflow.Tags = TagList{{Name: `a b.c,d:e@f&g='(h){i}$j+[k]-l/m\n_0`, Plain: true}}
		}, nil},
		{"blank tag", func(t *testing.T, d *Definition) { d.Workflow.Tags = TagList{{Name: " ", Plain: true}} },
			[]string{"workflow.tags[0]: tag name must not be blank"}},
		{"reserved tag", func(t *testing.T, d *Definition) { d.Workflow.Tags = TagList{{Name: "maestro_x", Plain: true}} },
			[]string{`workflow.tags[0]: tag name "maestro_x" must not start with "maestro_" or end with "_maestro" (reserved)`}},
		{"tag namespace", func(t *testing.T, d *Definition) { d.Workflow.Tags = TagList{{Name: "t", Namespace: "MINE"}} },
			[]string{`workflow.tags[0].namespace: unknown tag namespace "MINE" (want SYSTEM, RUNTIME, JOB_TEMPLATE, NOTEBOOK_TEMPLATE, USER_DEFINED or PLATFORM)`}},

		// Steps and the DAG.
		{"step id pattern", func(t *testing.T, d *Definition) { d.Workflow.Steps[2].ID = "1c" },
			[]string{
				`workflow.steps[0].step.transition.successors: unknown step "c"`,
				`workflow.steps[1].step.transition.successors: unknown step "c"`,
				`workflow.steps[2].step.id: step id "1c" is invalid: it must match [_a-zA-Z][.\-_a-zA-Z0-9]*`,
			}},
		{"step id separator", func(t *testing.T, d *Definition) {
			d.Workflow.Steps[2].ID = "c__d"
			d.Workflow.Steps[1].Transition.Successors = nil
			d.Workflow.Steps[0].Transition.Successors = d.Workflow.Steps[0].Transition.Successors[:1]
		},
			[]string{`workflow.steps[2].step.id: step id "c__d" must not contain "__" (the step param separator)`}},
		{"step id reserved", func(t *testing.T, d *Definition) {
			d.Workflow.Steps = d.Workflow.Steps[2:]
			d.Workflow.Steps[0].ID = "maestro_c"
		},
			[]string{`workflow.steps[0].step.id: step id "maestro_c" must not start with "maestro_" (reserved)`}},
		{"step id length", func(t *testing.T, d *Definition) {
			d.Workflow.Steps = d.Workflow.Steps[2:]
			d.Workflow.Steps[0].ID = long(129)
		},
			[]string{"workflow.steps[0].step.id: step id is 129 characters long; the limit is 128"}},
		{"step id required", func(t *testing.T, d *Definition) {
			d.Workflow.Steps = d.Workflow.Steps[2:]
			d.Workflow.Steps[0].ID = ""
		},
			[]string{"workflow.steps[0].step.id: required"}},
		{"duplicate step id at the same level", func(t *testing.T, d *Definition) { d.Workflow.Steps[2].ID = "b" },
			[]string{
				`workflow.steps[0].step.transition.successors: unknown step "c"`,
				`workflow.steps[1].step.transition.successors: unknown step "c"`,
				`workflow.steps[2].step.id: duplicate step id "b" (also defined at workflow.steps[1].step.id); step ids must be unique across all nesting levels`,
			}},
		{"duplicate step id across levels", func(t *testing.T, d *Definition) {
			d.Workflow.Steps = append(d.Workflow.Steps, mustStep(t, loopStep("foreach", "f", `{"step":{"id":"a","type":"NoOp"}}`, `"i":{"value":[1],"type":"LONG_ARRAY"}`)))
		}, []string{`workflow.steps[3].foreach.steps[0].step.id: duplicate step id "a" (also defined at workflow.steps[0].step.id); step ids must be unique across all nesting levels`}},
		{"step name length", func(t *testing.T, d *Definition) { d.Workflow.Steps[0].Name = long(257) },
			[]string{"workflow.steps[0].step.name: name is 257 characters long; the limit is 256"}},
		{"successor must exist", func(t *testing.T, d *Definition) {
			d.Workflow.Steps[2].Transition.Successors = []Successor{{StepID: "ghost", Condition: "true"}}
		}, []string{`workflow.steps[2].step.transition.successors: unknown step "ghost"`}},
		{"successor must be at the same level", func(t *testing.T, d *Definition) {
			d.Workflow.Steps = append(d.Workflow.Steps, mustStep(t, loopStep("foreach", "f",
				`{"step":{"id":"in","type":"NoOp","transition":{"successors":{"a":"true"}}}}`, `"i":{"value":[1],"type":"LONG_ARRAY"}`)))
		}, []string{`workflow.steps[3].foreach.steps[0].step.transition.successors: unknown step "a"`}},
		{"predecessors that match", func(t *testing.T, d *Definition) {
			d.Workflow.Steps[2].Transition.Predecessors = []string{"b", "a"}
		}, nil},
		{"predecessors that do not match", func(t *testing.T, d *Definition) {
			d.Workflow.Steps[2].Transition.Predecessors = []string{"a"}
			d.Workflow.Steps[0].Transition.Predecessors = []string{"c"}
		}, []string{
			"workflow.steps[0].step.transition.predecessors: predecessors [c] do not match the computed predecessors []",
			"workflow.steps[2].step.transition.predecessors: predecessors [a] do not match the computed predecessors [a, b]",
		}},
		{"cycle", func(t *testing.T, d *Definition) {
			d.Workflow.Steps[2].Transition.Successors = []Successor{{StepID: "b", Condition: "true"}}
		}, []string{"workflow.steps: cycle: b -> c -> b"}},
		{"self loop", func(t *testing.T, d *Definition) {
			d.Workflow.Steps[2].Transition.Successors = []Successor{{StepID: "c", Condition: "true"}}
		}, []string{"workflow.steps: cycle: c -> c"}},
		{"step type required", func(t *testing.T, d *Definition) { d.Workflow.Steps[2].Type = "" },
			[]string{"workflow.steps[2].step.type: required"}},
		{"step type known", func(t *testing.T, d *Definition) { d.Workflow.Steps[2].Type = "Spark" },
			[]string{`workflow.steps[2].step.type: unknown step type "Spark" (want NoOp, Sleep, Titus, Notebook, Kubernetes, Http, Join, Lambda, Callback, Ecs or Batch)`}},
		{"join is a valid type", func(t *testing.T, d *Definition) { d.Workflow.Steps[2].Type = StepJoin }, nil},
		{"failure mode", func(t *testing.T, d *Definition) { d.Workflow.Steps[2].FailureMode = "PANIC" },
			[]string{`workflow.steps[2].step.failure_mode: unknown failure mode "PANIC" (want FAIL_IMMEDIATELY, FAIL_AFTER_RUNNING or IGNORE_FAILURE)`}},
		{"too many steps with nesting", func(t *testing.T, d *Definition) {
			var inner []string
			for i := 0; i < 297; i++ {
				inner = append(inner, fmt.Sprintf(`{"step":{"id":"n%d","type":"NoOp"}}`, i))
			}
			d.Workflow.Steps = append(d.Workflow.Steps, mustStep(t, loopStep("foreach", "f", strings.Join(inner, ","), `"i":{"value":[1],"type":"LONG_ARRAY"}`)))
		}, []string{"workflow.steps: the definition has 301 steps, nested foreach/while steps included; the limit is 300"}},
		{"nesting depth", func(t *testing.T, d *Definition) {
			inner := `{"step":{"id":"leaf","type":"NoOp"}}`
			for i := 11; i >= 1; i-- {
				inner = loopStep("foreach", fmt.Sprintf("l%d", i), inner, fmt.Sprintf(`"i%d":{"value":[1],"type":"LONG_ARRAY"}`, i))
			}
			d.Workflow.Steps = append(d.Workflow.Steps, mustStep(t, inner))
		}, []string{"workflow.steps[3].foreach" + strings.Repeat(".steps[0].foreach", 10) + ": loop nesting depth 11 exceeds the limit of 10"}},
		{"nesting depth 10 is fine", func(t *testing.T, d *Definition) {
			inner := `{"step":{"id":"leaf","type":"NoOp"}}`
			for i := 10; i >= 1; i-- {
				inner = loopStep("while", fmt.Sprintf("l%d", i), inner, fmt.Sprintf(`"i%d":{"value":1,"type":"LONG"}`, i))
			}
			d.Workflow.Steps = append(d.Workflow.Steps, mustStep(t, inner))
		}, nil},

		// Loops and subworkflows.
		{"foreach needs loop_params", func(t *testing.T, d *Definition) {
			d.Workflow.Steps = append(d.Workflow.Steps, mustStep(t, `{"foreach":{"id":"f","steps":[{"step":{"id":"g","type":"NoOp"}}]}}`))
		}, []string{"workflow.steps[3].foreach.params.loop_params: required"}},
		{"loop_params must be a MAP", func(t *testing.T, d *Definition) {
			d.Workflow.Steps = append(d.Workflow.Steps, mustStep(t, `{"foreach":{"id":"f","params":{"loop_params":{"value":["x"],"type":"STRING_ARRAY"}},"steps":[{"step":{"id":"g","type":"NoOp"}}]}}`))
		}, []string{`workflow.steps[3].foreach.params.loop_params.type: loop_params must be of type MAP, got "STRING_ARRAY"`}},
		{"foreach loop params are arrays", func(t *testing.T, d *Definition) {
			d.Workflow.Steps = append(d.Workflow.Steps, mustStep(t, loopStep("foreach", "f", `{"step":{"id":"g","type":"NoOp"}}`,
				`"i":{"value":1,"type":"LONG"},"j":{"expression":"x","type":"STRING_ARRAY"}`)))
		}, []string{`workflow.steps[3].foreach.params.loop_params.value.i.type: foreach loop param "i" must be of an array type (STRING_ARRAY, LONG_ARRAY, DOUBLE_ARRAY or BOOLEAN_ARRAY), got "LONG"`}},
		{"foreach iterations", func(t *testing.T, d *Definition) {
			arr := "[" + strings.TrimSuffix(strings.Repeat("1,", 200), ",") + "]"
			d.Workflow.Steps = append(d.Workflow.Steps, mustStep(t, loopStep("foreach", "f", `{"step":{"id":"g","type":"NoOp"}}`,
				`"i":{"value":`+arr+`,"type":"LONG_ARRAY"},"j":{"value":`+arr+`,"type":"LONG_ARRAY"}`)))
		}, []string{"workflow.steps[3].foreach.params.loop_params: the loop params give 40000 iterations; the limit is 25000"}},
		{"foreach concurrency", func(t *testing.T, d *Definition) {
			s := mustStep(t, loopStep("foreach", "f", `{"step":{"id":"g","type":"NoOp"}}`, `"i":{"value":[1],"type":"LONG_ARRAY"}`))
			s.Concurrency = ptr(int64(501))
			d.Workflow.Steps = append(d.Workflow.Steps, s)
		}, []string{"workflow.steps[3].foreach.concurrency: concurrency 501 is out of range 1..500"}},
		{"loop body required", func(t *testing.T, d *Definition) {
			d.Workflow.Steps = append(d.Workflow.Steps, mustStep(t, loopStep("foreach", "f", ``, `"i":{"value":[1],"type":"LONG_ARRAY"}`)))
		}, []string{"workflow.steps[3].foreach.steps: must have at least one step"}},
		{"while needs a condition", func(t *testing.T, d *Definition) {
			s := mustStep(t, loopStep("while", "w", `{"step":{"id":"g","type":"NoOp"}}`, `"i":{"value":1,"type":"LONG"}`))
			s.Condition = ""
			d.Workflow.Steps = append(d.Workflow.Steps, s)
		}, []string{"workflow.steps[3].while.condition: required"}},
		{"while loop params are scalars", func(t *testing.T, d *Definition) {
			d.Workflow.Steps = append(d.Workflow.Steps, mustStep(t, loopStep("while", "w", `{"step":{"id":"g","type":"NoOp"}}`, `"i":{"value":[1],"type":"LONG_ARRAY"}`)))
		}, []string{`workflow.steps[3].while.params.loop_params.value.i.type: while loop param "i" must be of a scalar type (STRING, LONG, DOUBLE or BOOLEAN), got "LONG_ARRAY"`}},
		{"loop param names unique across levels", func(t *testing.T, d *Definition) {
			inner := loopStep("while", "w", `{"step":{"id":"g","type":"NoOp"}}`, `"i":{"value":1,"type":"LONG"}`)
			d.Workflow.Steps = append(d.Workflow.Steps, mustStep(t, loopStep("foreach", "f", inner, `"i":{"value":[1],"type":"LONG_ARRAY"}`)))
		}, []string{`workflow.steps[3].foreach.steps[0].while.params.loop_params.value.i: loop param "i" is already defined by an enclosing loop at workflow.steps[3].foreach.params.loop_params.value.i`}},
		{"subworkflow needs subworkflow_id", func(t *testing.T, d *Definition) {
			d.Workflow.Steps = append(d.Workflow.Steps, mustStep(t, `{"subworkflow":{"id":"s","params":{"subworkflow_version":{"value":1,"type":"LONG"}}}}`))
		}, []string{
			"workflow.steps[3].subworkflow.params.subworkflow_id: required: a subworkflow step names the workflow to run in param subworkflow_id (STRING)",
			`workflow.steps[3].subworkflow.params.subworkflow_version.type: subworkflow_version must be of type STRING, got "LONG"`,
		}},

		// Params.
		{"value xor expression: both", func(t *testing.T, d *Definition) {
			d.Workflow.Params.Defs["x"].Expression = "1"
		}, []string{"workflow.params.x: must be defined with either a literal value or an expression, not both"}},
		{"value xor expression: neither", func(t *testing.T, d *Definition) {
			d.Workflow.Params.Defs["x"] = &ParamDefinition{Type: TypeLong}
		}, []string{"workflow.params.x: must be defined with either a literal value or an expression"}},
		{"param type required", func(t *testing.T, d *Definition) { d.Workflow.Params.Defs["x"].Type = "" },
			[]string{"workflow.params.x.type: required"}},
		{"param type known", func(t *testing.T, d *Definition) {
			d.Workflow.Params.Defs["x"] = mustParam(t, `{"value":5,"type":"INTEGER"}`)
		}, []string{`workflow.params.x.type: unknown param type "INTEGER" (want STRING, LONG, DOUBLE, BOOLEAN, STRING_MAP, STRING_ARRAY, LONG_ARRAY, DOUBLE_ARRAY, BOOLEAN_ARRAY or MAP)`}},
		{"param mode", func(t *testing.T, d *Definition) { d.Workflow.Params.Defs["x"].Mode = "SOMETIMES" },
			[]string{`workflow.params.x.mode: unknown param mode "SOMETIMES" (want CONSTANT, IMMUTABLE, MUTABLE, MUTABLE_ON_START or MUTABLE_ON_START_RESTART)`}},
		{"LONG literal", func(t *testing.T, d *Definition) {
			d.Workflow.Params.Defs["x"] = mustParam(t, `{"value":1.5,"type":"LONG"}`)
		},
			[]string{"workflow.params.x.value: LONG value must be a whole number (64-bit), got the number 1.5"}},
		{"LONG out of range", func(t *testing.T, d *Definition) {
			d.Workflow.Params.Defs["x"] = mustParam(t, `{"value":9223372036854775808,"type":"LONG"}`)
		}, []string{"workflow.params.x.value: LONG value must be a whole number (64-bit), got the number 9223372036854775808"}},
		{"STRING literal", func(t *testing.T, d *Definition) {
			d.Workflow.Params.Defs["x"] = mustParam(t, `{"value":15,"type":"STRING"}`)
		},
			[]string{"workflow.params.x.value: STRING value must be a string, got the number 15"}},
		{"BOOLEAN literal", func(t *testing.T, d *Definition) {
			d.Workflow.Params.Defs["x"] = mustParam(t, `{"value":"true","type":"BOOLEAN"}`)
		},
			[]string{`workflow.params.x.value: BOOLEAN value must be a boolean, got the string "true"`}},
		{"DOUBLE literal", func(t *testing.T, d *Definition) {
			d.Workflow.Params.Defs["x"] = mustParam(t, `{"value":"1.2.3","type":"DOUBLE"}`)
		},
			[]string{`workflow.params.x.value: DOUBLE value must be a number, got the string "1.2.3"`}},
		{"array element", func(t *testing.T, d *Definition) {
			d.Workflow.Params.Defs["x"] = mustParam(t, `{"value":[1,"2","x"],"type":"LONG_ARRAY"}`)
		}, []string{`workflow.params.x.value[2]: LONG_ARRAY elements must be a whole number (64-bit), got the string "x"`}},
		{"array expected", func(t *testing.T, d *Definition) {
			d.Workflow.Params.Defs["x"] = mustParam(t, `{"value":"a","type":"STRING_ARRAY"}`)
		}, []string{`workflow.params.x.value: STRING_ARRAY value must be an array of strings, got the string "a"`}},
		{"boolean array element", func(t *testing.T, d *Definition) {
			d.Workflow.Params.Defs["x"] = mustParam(t, `{"value":[true,null],"type":"BOOLEAN_ARRAY"}`)
		}, []string{`workflow.params.x.value[1]: BOOLEAN_ARRAY elements must be a boolean, got null`}},
		{"STRING_MAP values", func(t *testing.T, d *Definition) {
			d.Workflow.Params.Defs["x"] = mustParam(t, `{"value":{"a":"1","b":2},"type":"STRING_MAP"}`)
		}, []string{`workflow.params.x.value.b: STRING_MAP values must be strings, got the number 2`}},
		{"nested MAP entries", func(t *testing.T, d *Definition) {
			d.Workflow.Params.Defs["x"] = mustParam(t, `{"value":{"ok":{"value":"s","type":"STRING"},"bad":{"value":"s","expression":"t","type":"STRING"}},"type":"MAP"}`)
		}, []string{"workflow.params.x.value.bad: must be defined with either a literal value or an expression, not both"}},
		{"MAP literal", func(t *testing.T, d *Definition) {
			d.Workflow.Params.Defs["x"] = mustParam(t, `{"value":[],"type":"MAP"}`)
		},
			[]string{"workflow.params.x.value: MAP value must be an object of param definitions, got an array"}},
		{"param names", func(t *testing.T, d *Definition) {
			d.Workflow.Params.Defs["bad name"] = mustParam(t, `{"value":1,"type":"LONG"}`)
			d.Workflow.Params.Defs["a__b"] = mustParam(t, `{"value":1,"type":"LONG"}`)
			d.Workflow.Params.Defs["AUTH_BLOB"] = mustParam(t, `{"value":"x","type":"STRING"}`)
		}, []string{
			`workflow.params.a__b: param name "a__b" must not contain "__" (the step param separator)`,
			`workflow.params["bad name"]: param name "bad name" is invalid: it must match [_a-zA-Z][.\-_a-zA-Z0-9]*`,
		}},
		{"param tags", func(t *testing.T, d *Definition) {
			d.Workflow.Params.Defs["x"].Tags = TagList{{Name: "a", Plain: true}, {Name: "a", Plain: true}}
		},
			[]string{`workflow.params.x.tags[1]: duplicate tag "a"`}},

		// Retries and timeouts.
		{"retry limits", func(t *testing.T, d *Definition) {
			s := mustStep(t, `{"step":{"id":"r","type":"NoOp","retry_policy":{"error_retry_limit":100,"platform_retry_limit":-1,"timeout_retry_limit":"$n",
				"backoff":{"type":"fixed","error_retry_backoff_in_secs":0,"platform_retry_backoff_in_secs":86401,"timeout_retry_backoff_in_secs":"1d",
				"error_retry_exponent":-1,"timeout_retry_exponent":"bar","platform_retry_limit_in_secs":"${x}"}}}}`)
			d.Workflow.Steps = append(d.Workflow.Steps, s)
		}, []string{
			`workflow.steps[3].step.retry_policy.backoff.error_retry_backoff_in_secs: error_retry_backoff_in_secs 0 is out of range 1..86400`,
			`workflow.steps[3].step.retry_policy.backoff.error_retry_exponent: error_retry_exponent -1 is out of range 0..2147483647`,
			`workflow.steps[3].step.retry_policy.backoff.platform_retry_backoff_in_secs: platform_retry_backoff_in_secs 86401 is out of range 1..86400`,
			`workflow.steps[3].step.retry_policy.backoff.timeout_retry_exponent: timeout_retry_exponent "bar" is neither a number nor a $param reference`,
			`workflow.steps[3].step.retry_policy.backoff.type: unknown backoff type "fixed" (want EXPONENTIAL_BACKOFF or FIXED_BACKOFF)`,
			`workflow.steps[3].step.retry_policy.error_retry_limit: error_retry_limit 100 is out of range 0..99`,
			`workflow.steps[3].step.retry_policy.platform_retry_limit: platform_retry_limit -1 is out of range 0..99`,
		}},
		{"timeouts", func(t *testing.T, d *Definition) {
			d.Workflow.Timeout = &ParsableDuration{Seconds: 0}
			d.Workflow.Steps[0].Timeout = &ParsableDuration{Seconds: 120*86400 + 1}
			d.Workflow.Steps[1].Timeout = &ParsableDuration{Expr: "soon"}
			d.Workflow.Steps[2].Timeout = &ParsableDuration{Expr: "${t}"}
		}, []string{
			"workflow.steps[0].step.timeout: timeout of 10368001 seconds exceeds the limit of 120 days (10368000 seconds)",
			`workflow.steps[1].step.timeout: timeout "soon" is neither a duration (e.g. 100s, 20 minutes, 1d 2h) nor a $param reference`,
			"workflow.timeout: timeout must be greater than 0 seconds, got 0",
		}},
		{"timeout of 120 days is fine", func(t *testing.T, d *Definition) { d.Workflow.Timeout = &ParsableDuration{Seconds: 120 * 86400} }, nil},

		// Time triggers.
		{"cron must parse", func(t *testing.T, d *Definition) {
			d.Workflow.TimeTriggers = []TimeTrigger{{Type: TriggerCron, Cron: "0 30 * * *", Timezone: "US/Pacific"}}
		}, []string{`workflow.time_triggers[0].cron: cron "0 30 * * *": end of range (30) above maximum (23): 30`}},
		{"cron required", func(t *testing.T, d *Definition) { d.Workflow.TimeTriggers = []TimeTrigger{{Type: TriggerCron}} },
			[]string{"workflow.time_triggers[0].cron: required"}},
		{"cron too frequent", func(t *testing.T, d *Definition) {
			d.Workflow.TimeTriggers = []TimeTrigger{{Type: TriggerCron, Cron: "* * * * *"}}
		}, []string{`workflow.time_triggers[0].cron: cron "* * * * *" fires 1m0s apart (at 2026-03-04T05:07:00Z and 2026-03-04T05:08:00Z); time triggers must be at least 2m0s apart`}},
		{"quartz seconds too frequent", func(t *testing.T, d *Definition) {
			d.Workflow.TimeTriggers = []TimeTrigger{{Type: TriggerCron, Cron: "*/30 * * * * ?", Timezone: "UTC"}}
		}, []string{`workflow.time_triggers[0].cron: cron "*/30 * * * * ?" fires 30s apart (at 2026-03-04T05:06:30Z and 2026-03-04T05:07:00Z); time triggers must be at least 2m0s apart`}},
		{"two minutes apart is fine", func(t *testing.T, d *Definition) {
			d.Workflow.TimeTriggers = []TimeTrigger{{Type: TriggerCron, Cron: "*/2 * * * *", Timezone: "US/Pacific"},
				{Type: TriggerCron, Cron: "0 0 12 1/1 * ? *", Timezone: "Asia/Tokyo"}, {Type: TriggerPredefined, Expression: "@hourly"}}
		}, nil},
		{"quartz year", func(t *testing.T, d *Definition) {
			d.Workflow.TimeTriggers = []TimeTrigger{{Type: TriggerCron, Cron: "0 0 12 * * ? 2030"}}
		}, []string{`workflow.time_triggers[0].cron: cron "0 0 12 * * ? 2030": the year field "2030" is not supported (use * or leave it out)`}},
		{"timezone", func(t *testing.T, d *Definition) {
			d.Workflow.TimeTriggers = []TimeTrigger{{Type: TriggerPredefined, Expression: "@daily", Timezone: "Mars/Olympus"}}
		}, []string{`workflow.time_triggers[0].timezone: unknown timezone "Mars/Olympus": unknown time zone Mars/Olympus`}},
		{"predefined expressions", func(t *testing.T, d *Definition) {
			d.Workflow.TimeTriggers = []TimeTrigger{{Type: TriggerPredefined, Expression: "@midnight"}}
		}, []string{`workflow.time_triggers[0].expression: unknown predefined expression "@midnight" (want @hourly, @daily, @weekly, @monthly or @yearly)`}},
		{"interval unsupported", func(t *testing.T, d *Definition) {
			d.Workflow.TimeTriggers = []TimeTrigger{{Type: TriggerInterval, Interval: "3H"}}
		}, []string{"workflow.time_triggers[0].type: INTERVAL time triggers are not supported"}},
		{"unknown trigger type", func(t *testing.T, d *Definition) { d.Workflow.TimeTriggers = []TimeTrigger{{Type: "RATE"}} },
			[]string{`workflow.time_triggers[0].type: unknown time trigger type "RATE" (want CRON or PREDEFINED)`}},
		{"fuzzy delay", func(t *testing.T, d *Definition) {
			d.Workflow.TimeTriggers = []TimeTrigger{{Type: TriggerPredefined, Expression: "@daily", FuzzyMaxDelay: &ParsableDuration{Seconds: -5}}}
		}, []string{"workflow.time_triggers[0].fuzzy_max_delay: fuzzy_max_delay must be greater than 0 seconds, got -5"}},

		// Signal triggers, dependencies and outputs.
		{"signal trigger rules", func(t *testing.T, d *Definition) {
			var st SignalTrigger
			if err := st.UnmarshalJSON([]byte(`{"definitions":{
				"a":{"match_params":{"k":{"value":"v","operator":"="},"j":{"value":1,"operator":"~"}},"join_keys":["k"]},
				"b":{"match_params":{"w":{"value":1.5,"operator":">="},"z":{"operator":"<"}},"join_keys":["x","y"]},
				"bad|name":{}}}`)); err != nil {
				t.Fatal(err)
			}
			d.Workflow.SignalTriggers = []SignalTrigger{st}
		}, []string{
			`workflow.signal_triggers[0].definitions.a.join_keys[0]: join key "k" may not also be a match param`,
			`workflow.signal_triggers[0].definitions.a.match_params.j.operator: unknown operator "~" (want =, >, >=, <, <=)`,
			`workflow.signal_triggers[0].definitions.b.join_keys: has 2 join keys but signal "a" has 1; all signals of a trigger need the same number`,
			`workflow.signal_triggers[0].definitions.b.match_params.w.value: must be a whole number or a string, got the number 1.5`,
			`workflow.signal_triggers[0].definitions.b.match_params.z.value: required`,
			`workflow.signal_triggers[0].definitions.bad|name: signal name "bad|name" contains '|'; allowed are letters, digits and _ .,:@&='(){}$+[]-/\ and space`,
			`workflow.signal_triggers[0].definitions.bad|name.join_keys: has 0 join keys but signal "a" has 1; all signals of a trigger need the same number`,
		}},
		{"signal trigger size", func(t *testing.T, d *Definition) {
			st := SignalTrigger{Definitions: map[string]*SignalTriggerDef{}}
			for i := 0; i < 9; i++ {
				st.Definitions[fmt.Sprintf("s%d", i)] = &SignalTriggerDef{}
			}
			d.Workflow.SignalTriggers = []SignalTrigger{st, {}}
		}, []string{
			"workflow.signal_triggers[0].definitions: has 9 signals; at most 8 are allowed",
			"workflow.signal_triggers[1].definitions: must name at least one signal",
		}},
		{"signal trigger names across a workflow", func(t *testing.T, d *Definition) {
			for i := 0; i < 7; i++ {
				st := SignalTrigger{Definitions: map[string]*SignalTriggerDef{}}
				for j := 0; j < 7; j++ {
					st.Definitions[fmt.Sprintf("s%d", i*7+j)] = &SignalTriggerDef{}
				}
				d.Workflow.SignalTriggers = append(d.Workflow.SignalTriggers, st)
			}
		}, []string{"workflow.signal_triggers: use 49 distinct signal names; at most 48 are allowed across a workflow's signal triggers"}},
		{"signal dependencies", func(t *testing.T, d *Definition) {
			s := mustStep(t, `{"step":{"id":"g","type":"NoOp","signal_dependencies":[
				{"match_params":{"a":{"param":{"value":1,"type":"LONG"},"operator":">"},"b":{"param":{"value":"x","type":"STRING"},"operator":"<="}}},
				{"name":"db/t","match_params":{"c":{"param":{"value":1.5,"type":"DOUBLE"},"operator":"="},"d":{"operator":"="}}}]}}`)
			d.Workflow.Steps = append(d.Workflow.Steps, s)
			d.Workflow.Steps[2].SignalDependencies = []SignalDependency{}
		}, []string{
			"workflow.steps[2].step.signal_dependencies: must not be empty when given",
			"workflow.steps[3].step.signal_dependencies[0].match_params: at most one range operator (>, >=, <, <=) is allowed per signal dependency; found 2 (a, b)",
			"workflow.steps[3].step.signal_dependencies[0].name: required",
			"workflow.steps[3].step.signal_dependencies[1].match_params.c.param.type: signal dependency params must be STRING or LONG, got DOUBLE",
			"workflow.steps[3].step.signal_dependencies[1].match_params.d.param: required",
		}},
		{"signal outputs", func(t *testing.T, d *Definition) {
			s := mustStep(t, `{"step":{"id":"g","type":"NoOp","signal_outputs":[{"params":{"p":{"value":true,"type":"BOOLEAN"}},
				"payload":{"q":{"value":true,"type":"BOOLEAN"},"r":{"type":"STRING"}}}]}}`)
			d.Workflow.Steps = append(d.Workflow.Steps, s)
		}, []string{
			"workflow.steps[3].step.signal_outputs[0].name: required",
			"workflow.steps[3].step.signal_outputs[0].params.p.type: signal output params must be STRING or LONG, got BOOLEAN",
			"workflow.steps[3].step.signal_outputs[0].payload.r: must be defined with either a literal value or an expression",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := mustParse(t, baseDoc)
			tt.mutate(t, d)
			got := errorStrings(Validate(d, ValidateOptions{Now: fixedNow}))
			want := append([]string(nil), tt.want...)
			sort.Strings(want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("errors:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestErrorsFormatting(t *testing.T) {
	errs := Errors{{Path: "workflow.steps[3].step.transition.successors", Msg: `unknown step "ghost"`}, {Msg: "whole document"}}
	if got, want := errs.Error(), "workflow.steps[3].step.transition.successors: unknown step \"ghost\"\nwhole document"; got != want {
		t.Errorf("Error() = %q", got)
	}
	if Errors(nil).Err() != nil || errs.Err() == nil {
		t.Error("Err() must be nil exactly when there are no errors")
	}
	var target Errors
	if !errors.As(fmt.Errorf("wrapped: %w", errs), &target) || len(target) != 2 {
		t.Error("Errors must be reachable through wrapping")
	}
}

// call is one request to the recording checker.
type call struct {
	src   string
	want  ParamType
	scope Scope
}

// recordingChecker records what it is asked and fails the expressions in fail.
type recordingChecker struct {
	calls []call
	fail  map[string]string
}

func (c *recordingChecker) CheckExpression(src string, want ParamType, scope Scope) error {
	c.calls = append(c.calls, call{src, want, scope})
	if msg, ok := c.fail[src]; ok {
		return errors.New(msg)
	}
	return nil
}

// exprDoc names every expression by what it should see.
const exprDoc = `{
  "workflow": {
    "id": "wf",
    "params": {
      "wp": {"value": 1, "type": "LONG"},
      "we": {"expression": "wp + 1", "type": "LONG"},
      "e5": {"expression": "broken(", "type": "STRING_MAP"},
      "wm": {"type": "MAP", "value": {"inner": {"expression": "sibling + wp", "type": "DOUBLE"}, "sibling": {"value": 2, "type": "LONG"}}}
    },
    "signal_triggers": [{"definitions": {"sig": {"match_params": {"k": {"value": "v", "operator": "="}}}},
      "condition": "trigger_cond", "dedup_expr": "trigger_dedup", "params": {"tp": {"expression": "trigger_param", "type": "STRING"}}}],
    "steps": [
      {"step": {"id": "s1", "type": "NoOp",
        "params": {"own": {"value": "x", "type": "STRING"}, "se": {"expression": "own + s2__other", "type": "STRING"}},
        "signal_dependencies": [{"name": "db/t", "match_params": {"m": {"param": {"expression": "dep_param", "type": "LONG"}, "operator": "="}}}],
        "signal_outputs": [{"name": "out", "params": {"o": {"expression": "out_param", "type": "STRING"}}}],
        "transition": {"successors": {"s2": "own == 'x'", "f": "true"}}}},
      {"step": {"id": "s2", "type": "NoOp", "params": {"other": {"value": 3, "type": "LONG"}}}},
      {"foreach": {"id": "f",
        "params": {"fp": {"value": ["a"], "type": "STRING_ARRAY"},
                   "loop_params": {"type": "MAP", "value": {"i": {"expression": "fp", "type": "STRING_ARRAY"}}}},
        "steps": [
          {"while": {"id": "w", "condition": "while_cond",
            "params": {"loop_params": {"type": "MAP", "value": {"n": {"value": 0, "type": "LONG"}}}},
            "steps": [{"step": {"id": "inner", "type": "NoOp", "params": {"ip": {"expression": "inner_param", "type": "BOOLEAN"}}}}]}}
        ]}}
    ]
  }
}`

func TestExpressionChecks(t *testing.T) {
	d := mustParse(t, exprDoc)
	c := &recordingChecker{fail: map[string]string{"broken(": "unexpected end of expression", "own == 'x'": "bad condition"}}
	errs := Validate(d, ValidateOptions{Expressions: c, Now: fixedNow})
	want := []string{
		"workflow.params.e5.expression: unexpected end of expression",
		"workflow.steps[0].step.transition.successors.s2: bad condition",
	}
	if got := errorStrings(errs); !reflect.DeepEqual(got, want) {
		t.Errorf("errors %q, want %q", got, want)
	}

	byExpr := make(map[string]call)
	for _, cl := range c.calls {
		if _, dup := byExpr[cl.src]; dup {
			t.Errorf("expression %q checked twice", cl.src)
		}
		byExpr[cl.src] = cl
	}
	if _, ok := byExpr["true"]; ok {
		t.Error(`the condition "true" needs no check`)
	}
	tests := []struct {
		src     string
		want    ParamType
		sees    map[string]ParamType // variables that must be in scope, with their types
		notSees []string             // variables that must not be
	}{
		{"wp + 1", TypeLong, map[string]ParamType{"wp": TypeLong, "we": TypeLong, "RUN_TS": TypeLong, "TARGET_RUN_HOUR": TypeString}, []string{"own", "s1__own"}},
		{"broken(", TypeStringMap, map[string]ParamType{"wp": TypeLong}, nil},
		{"sibling + wp", TypeDouble, map[string]ParamType{"sibling": TypeLong, "inner": TypeDouble, "wp": TypeLong}, nil},
		{"trigger_cond", TypeBoolean, map[string]ParamType{"wp": TypeLong, "tp": TypeString}, []string{"own"}},
		{"trigger_dedup", TypeString, map[string]ParamType{"tp": TypeString}, nil},
		{"trigger_param", TypeString, map[string]ParamType{"wp": TypeLong}, nil},
		{"own + s2__other", TypeString, map[string]ParamType{"own": TypeString, "se": TypeString, "wp": TypeLong,
			"s2__other": TypeLong, "inner__ip": TypeBoolean, "f__fp": TypeStringArray, "step_id": TypeString, "workflow_instance_id": TypeLong},
			[]string{"other", "i", "loop_index"}},
		{"dep_param", TypeLong, map[string]ParamType{"own": TypeString}, nil},
		{"out_param", TypeString, map[string]ParamType{"own": TypeString}, nil},
		{"own == 'x'", TypeBoolean, map[string]ParamType{"own": TypeString, "wp": TypeLong}, nil},
		{"fp", TypeStringArray, map[string]ParamType{"fp": TypeStringArray, "i": TypeStringArray, "loop_params": TypeMap, "loop_index": TypeLong}, nil},
		{"while_cond", TypeBoolean, map[string]ParamType{"n": TypeLong, "i": TypeString, "fp": TypeStringArray, "loop_index": TypeLong, "wp": TypeLong}, []string{"own"}},
		{"inner_param", TypeBoolean, map[string]ParamType{"ip": TypeBoolean, "n": TypeLong, "i": TypeString, "fp": TypeStringArray,
			"loop_index": TypeLong, "wp": TypeLong, "s1__own": TypeString}, []string{"own", "condition"}},
	}
	for _, tt := range tests {
		cl, ok := byExpr[tt.src]
		if !ok {
			t.Errorf("%q was not checked", tt.src)
			continue
		}
		if cl.want != tt.want {
			t.Errorf("%q checked for %q, want %q", tt.src, cl.want, tt.want)
		}
		for name, typ := range tt.sees {
			if got, ok := cl.scope.Lookup(name); !ok || got != typ {
				t.Errorf("%q: scope[%q] = %q (present %v), want %q", tt.src, name, got, ok, typ)
			}
		}
		for _, name := range tt.notSees {
			if _, ok := cl.scope.Lookup(name); ok {
				t.Errorf("%q: scope must not hold %q", tt.src, name)
			}
		}
	}
	if len(c.calls) != len(tests) {
		t.Errorf("checker was asked %d times, want %d: %v", len(c.calls), len(tests), c.calls)
	}
}

func TestLiteralInterpolationIsNotChecked(t *testing.T) {
	d := mustParse(t, wf(`"params":{"s":{"value":"${fat} and $other","type":"STRING"}},"steps":[{"step":{"id":"a","type":"NoOp"}}]`))
	c := &recordingChecker{}
	if errs := Validate(d, ValidateOptions{Expressions: c}); errs != nil || len(c.calls) != 0 {
		t.Errorf("errs %v, calls %v", errs, c.calls)
	}
}

func TestSystemParams(t *testing.T) {
	sp := SystemParams()
	for name, want := range map[string]ParamType{
		"RUN_TS": TypeLong, "TARGET_RUN_DATE": TypeLong, "TARGET_RUN_HOUR": TypeString, "owner": TypeString,
		"workflow_id": TypeString, "workflow_instance_id": TypeLong, "step_attempt_id": TypeLong, "RUN_POLICY": TypeString,
	} {
		if got, ok := sp[name]; !ok || got != want {
			t.Errorf("SystemParams()[%q] = %q, %v; want %q", name, got, ok, want)
		}
	}
	sp["RUN_TS"] = TypeString
	if SystemParams()["RUN_TS"] != TypeLong {
		t.Error("SystemParams must return a fresh map")
	}
}
