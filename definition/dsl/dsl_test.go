package dsl_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/maestro-serverless/maestro/definition/dsl"
	"github.com/maestro-serverless/maestro/model"
)

// translate runs Translate and decodes its JSON for comparison.
func translate(t *testing.T, doc string, opts dsl.Options) (map[string]any, error) {
	t.Helper()
	out, _, err := dsl.Translate([]byte(doc), opts)
	if err != nil {
		return nil, err
	}
	var v map[string]any
	if jerr := json.Unmarshal(out, &v); jerr != nil {
		t.Fatalf("Translate wrote invalid JSON %s: %v", out, jerr)
	}
	return v, nil
}

// at walks v by keys and indexes.
func at(t *testing.T, v any, path ...any) any {
	t.Helper()
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("at %v: %T is not an object", path, v)
			}
			v = m[k]
		case int:
			l, ok := v.([]any)
			if !ok || k >= len(l) {
				t.Fatalf("at %v: no element %d in %v", path, k, v)
			}
			v = l[k]
		}
	}
	return v
}

// asJSON parses a JSON literal for comparisons.
func asJSON(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("bad JSON in test: %s: %v", s, err)
	}
	return v
}

func step(i int) []any { return []any{"workflow", "steps", i, "step"} }

func TestTranslate(t *testing.T) {
	resolver := func(jobType, version string) (model.StepType, bool) {
		if jobType == "spark" && version == "v2" {
			return model.StepNotebook, true
		}
		return "", false
	}
	cases := []struct {
		name string
		doc  string
		path []any
		want string // JSON
	}{
		{"defaults", "Workflow:\n  id: w\n  jobs:\n    - job: {id: a, type: noop}\n",
			[]any{"properties"}, `{"run_strategy":"SEQUENTIAL","step_concurrency":20}`},
		{"lower-case workflow key, type canonical", "workflow:\n  id: w\n  jobs:\n    - job: {id: a, type: SLEEP}\n",
			append(step(0), "type"), `"Sleep"`},
		{"run strategy with concurrency", "Workflow:\n  id: w\n  owner: me\n  run_strategy: parallel\n  workflow_concurrency: 5\n  jobs: [{job: {id: a, type: NoOp}}]\n",
			[]any{"properties"}, `{"owner":"me","run_strategy":{"rule":"parallel","workflow_concurrency":5},"step_concurrency":20}`},
		{"workflow fields", "Workflow:\n  id: w\n  name: n\n  description: d\n  tags: [a, b]\n  timeout: 2h\n  criticality: high\n  jobs: [{job: {id: a, type: NoOp}}]\n",
			[]any{"workflow"}, `{"id":"w","name":"n","description":"d","tags":["a","b"],"timeout":"2h","criticality":"high",
				"steps":[{"step":{"id":"a","type":"NoOp"}}]}`},
		{"integer timeout stays a number", "Workflow:\n  id: w\n  timeout: 3600\n  jobs: [{job: {id: a, type: NoOp, timeout: 60}}]\n",
			append(step(0), "timeout"), `60`},
		{"transitions", `Workflow:
  id: w
  jobs:
    - job:
        id: a
        type: NoOp
        transition:
          - b
          - if x > 1 then c
          - IF y == 'IF z THEN q' Then d
          - ""
          - otherwise e
`, append(step(0), "transition"), `{"successors":{"b":"true","c":"x > 1","d":"y == 'IF z THEN q'",
			"e":"!((x > 1) || (y == 'IF z THEN q'))"}}`},
		{"otherwise alone is unconditional", "Workflow:\n  id: w\n  jobs: [{job: {id: a, type: NoOp, transition: [OTHERWISE b]}}, {job: {id: b, type: NoOp}}]\n",
			append(step(0), "transition", "successors"), `{"b":"true"}`},
		{"dag sequential keeps written transitions", `Workflow:
  id: w
  dag: Sequential
  jobs:
    - job: {id: a, type: NoOp}
    - job: {id: b, type: NoOp, transition: [d]}
    - job: {id: c, type: NoOp}
    - job: {id: d, type: NoOp}
`, []any{"workflow", "steps"}, `[{"step":{"id":"a","type":"NoOp","transition":{"successors":{"b":"true"}}}},
			{"step":{"id":"b","type":"NoOp","transition":{"successors":{"d":"true"}}}},
			{"step":{"id":"c","type":"NoOp","transition":{"successors":{"d":"true"}}}},
			{"step":{"id":"d","type":"NoOp"}}]`},
		{"dag parallel adds nothing", "Workflow:\n  id: w\n  dag: parallel\n  jobs: [{job: {id: a, type: NoOp}}, {job: {id: b, type: NoOp}}]\n",
			append(step(0), "transition"), `null`},
		{"dag map", "Workflow:\n  id: w\n  dag:\n    a: [IF p THEN b, OTHERWISE c]\n  jobs: [{job: {id: a, type: NoOp}}, {job: {id: b, type: NoOp}}, {job: {id: c, type: NoOp}}]\n",
			append(step(0), "transition", "successors"), `{"b":"p","c":"!((p))"}`},
		{"params", `Workflow:
  id: w
  plain_str: foo
  '!expr_str': 1 + 1
  typed_long<long>: 100
  typed_double: 1.23
  typed_bool: true
  mode_param(constant): bar
  combo<long>(immutable): 100
  '!expr_typed<long>(constant)': 1 * 2
  str_array: [a, b]
  long_array: [1, 2]
  double_array: [1.5, 2]
  bool_array: [true, false]
  typed_array<array<string>>: [x]
  empty_long<array<long>>: []
  empty_default: []
  string_map: {k1: v1}
  empty_map: {}
  map: {foo: {bar: 123, baz: bat}}
  pmap<pmap>: {k1: v1}
  smap<map>: {k1: v1}
  date: 2020-01-01
  jobs: [{job: {id: a, type: NoOp}}]
`, []any{"workflow", "params"}, `{
			"plain_str":{"value":"foo","type":"STRING"},
			"expr_str":{"expression":"1 + 1","type":"STRING"},
			"typed_long":{"value":100,"type":"LONG"},
			"typed_double":{"value":1.23,"type":"DOUBLE"},
			"typed_bool":{"value":true,"type":"BOOLEAN"},
			"mode_param":{"value":"bar","type":"STRING","mode":"CONSTANT"},
			"combo":{"value":100,"type":"LONG","mode":"IMMUTABLE"},
			"expr_typed":{"expression":"1 * 2","type":"LONG","mode":"CONSTANT"},
			"str_array":{"value":["a","b"],"type":"STRING_ARRAY"},
			"long_array":{"value":[1,2],"type":"LONG_ARRAY"},
			"double_array":{"value":[1.5,2],"type":"DOUBLE_ARRAY"},
			"bool_array":{"value":[true,false],"type":"BOOLEAN_ARRAY"},
			"typed_array":{"value":["x"],"type":"STRING_ARRAY"},
			"empty_long":{"value":[],"type":"LONG_ARRAY"},
			"empty_default":{"value":[],"type":"STRING_ARRAY"},
			"string_map":{"value":{"k1":"v1"},"type":"STRING_MAP"},
			"empty_map":{"value":{},"type":"MAP"},
			"map":{"value":{"foo":{"value":{"bar":{"value":123,"type":"LONG"},"baz":{"value":"bat","type":"STRING"}},"type":"MAP"}},"type":"MAP"},
			"pmap":{"value":{"k1":{"value":"v1","type":"STRING"}},"type":"MAP"},
			"smap":{"value":{"k1":"v1"},"type":"STRING_MAP"},
			"date":{"value":"2020-01-01","type":"STRING"}}`},
		{"subworkflow", "Workflow:\n  id: w\n  jobs:\n    - subworkflow: {id: s, subworkflow_id: other, subworkflow_version: '3', sync: false, explicit_params: true, foo: 1}\n",
			[]any{"workflow", "steps", 0, "subworkflow"}, `{"id":"s","sync":false,"explicit_params":true,"params":{
			"foo":{"value":1,"type":"LONG"},"subworkflow_id":{"value":"other","type":"STRING"},"subworkflow_version":{"value":"3","type":"STRING"}}}`},
		{"subworkflow id defaults to the job id", "Workflow:\n  id: w\n  jobs: [{subworkflow: {id: s}}]\n",
			[]any{"workflow", "steps", 0, "subworkflow", "params"}, `{"subworkflow_id":{"value":"s","type":"STRING"}}`},
		{"foreach", `Workflow:
  id: w
  jobs:
    - foreach:
        id: f
        job_concurrency: 3
        params: {d: [1, 2]}
        ranges: {h: {to: 24}, m: {from: 60, to: 0, increment: -15}}
        dag: sequential
        jobs: [{job: {id: a, type: NoOp}}, {job: {id: b, type: NoOp}}]
`, []any{"workflow", "steps", 0, "foreach"}, `{"id":"f","concurrency":3,
			"steps":[{"step":{"id":"a","type":"NoOp","transition":{"successors":{"b":"true"}}}},{"step":{"id":"b","type":"NoOp"}}],
			"params":{"loop_params":{"type":"MAP","value":{
				"d":{"value":[1,2],"type":"LONG_ARRAY"},
				"h":{"expression":"Util.intsBetween(0, 24, 1);","type":"LONG_ARRAY"},
				"m":{"expression":"Util.intsBetween(60, 0, -15);","type":"LONG_ARRAY"}}}}}`},
		{"foreach without params has empty loop_params", "Workflow:\n  id: w\n  jobs: [{foreach: {id: f, jobs: [{job: {id: a, type: NoOp}}]}}]\n",
			[]any{"workflow", "steps", 0, "foreach", "params"}, `{"loop_params":{"value":{},"type":"MAP"}}`},
		{"while", "Workflow:\n  id: w\n  jobs: [{while: {id: l, condition: 'i < 3', jobs: [{job: {id: a, type: NoOp}}]}}]\n",
			[]any{"workflow", "steps", 0, "while"}, `{"id":"l","condition":"i < 3","steps":[{"step":{"id":"a","type":"NoOp"}}]}`},
		{"resolved job type becomes the sub_type", "Workflow:\n  id: w\n  jobs: [{job: {id: a, type: spark, type_version: v2}}]\n",
			step(0), `{"id":"a","type":"Notebook","sub_type":"spark"}`},
		{"failure mode and tags", "Workflow:\n  id: w\n  jobs: [{job: {id: a, type: NoOp, failure_mode: ignore_failure, tags: [t]}}]\n",
			step(0), `{"id":"a","type":"NoOp","failure_mode":"ignore_failure","tags":["t"]}`},
		{"anchors and aliases are expanded", "Workflow:\n  id: w\n  shared: &s {k: v}\n  jobs: [{job: {id: a, type: NoOp, p: *s}}]\n",
			append(step(0), "params"), `{"p":{"value":{"k":"v"},"type":"STRING_MAP"}}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v, err := translate(t, tc.doc, dsl.Options{Resolve: resolver})
			if err != nil {
				t.Fatal(err)
			}
			got := at(t, v, tc.path...)
			if want := asJSON(t, tc.want); !reflect.DeepEqual(got, want) {
				g, _ := json.Marshal(got)
				t.Errorf("at %v:\n got %s\nwant %s", tc.path, g, tc.want)
			}
		})
	}
}

// TestUnresolvedJobTypeNamesTheTemplate: with a resolver, a job type it
// does not know is refused naming the template and version asked for; a
// job without type_version asks for the "default" version, as Maestro's
// JobTemplateManager.loadStepType does.
func TestUnresolvedJobTypeNamesTheTemplate(t *testing.T) {
	var asked []string
	resolve := func(jobType, version string) (model.StepType, bool) {
		asked = append(asked, jobType+"@"+version)
		return "", false
	}
	doc := "Workflow:\n  id: w\n  jobs:\n    - job: {id: a, type: spark}\n    - job: {id: b, type: shell, type_version: v3}\n"
	_, _, err := dsl.Translate([]byte(doc), dsl.Options{Resolve: resolve})
	for _, want := range []string{
		`Workflow.jobs[0].job.type: line 4: unknown job type "spark": it is not a built-in step type`,
		`no job template "spark" (version "default") is registered`,
		`Workflow.jobs[1].job.type: line 5: unknown job type "shell"`,
		`no job template "shell" (version "v3") is registered`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want it to say %q", err, want)
		}
	}
	if got := strings.Join(asked, " "); got != "spark@default shell@v3" {
		t.Errorf("resolver asked for %q, want \"spark@default shell@v3\"", got)
	}
}

func TestTranslateKeepsParamOrder(t *testing.T) {
	out, _, err := dsl.Translate([]byte("Workflow:\n  id: w\n  z: 1\n  a: 2\n  m: 3\n  jobs: []\n"), dsl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s := string(out); !(strings.Index(s, `"z"`) < strings.Index(s, `"a"`) && strings.Index(s, `"a"`) < strings.Index(s, `"m"`)) {
		t.Errorf("param order lost: %s", s)
	}
}

func TestTranslateErrors(t *testing.T) {
	const head = "Workflow:\n  id: w\n  jobs:\n" // jobs start on line 4
	cases := []struct {
		name, doc, path, msg string
	}{
		{"unknown job kind", head + "    - task: {id: a}\n", "Workflow.jobs[0].task", `line 4: unknown job kind "task"`},
		{"two keys in a jobs entry", head + "    - job: {id: a, type: NoOp}\n      while: {id: b}\n", "Workflow.jobs[0]", "line 4: a jobs entry has one key"},
		{"unknown job type", head + "    - job:\n        id: a\n        type: spark\n", "Workflow.jobs[0].job.type", `line 6: unknown job type "spark" (want NoOp, Sleep, Titus, Notebook, Kubernetes, Http, Join, Lambda, Callback, Ecs or Batch; it may be a job template's type, which only the server's job template registry resolves)`},
		{"missing type", head + "    - job: {id: a}\n", "Workflow.jobs[0].job.type", "line 4: required"},
		{"bad transition", head + "    - job:\n        id: a\n        type: NoOp\n        transition:\n          - GOTO b\n", "Workflow.jobs[0].job.transition[0]", `line 8: invalid transition "GOTO b"`},
		{"IF without THEN", head + "    - job: {id: a, type: NoOp, transition: [IF x > 1 b]}\n", "Workflow.jobs[0].job.transition[0]", "line 4: invalid transition"},
		{"OTHERWISE not last", head + "    - job:\n        id: a\n        type: NoOp\n        transition: [OTHERWISE b, c]\n", "Workflow.jobs[0].job.transition[0]", "line 7: 'OTHERWISE' must be the last row"},
		{"duplicate successor", head + "    - job: {id: a, type: NoOp, transition: [b, IF x THEN b]}\n", "Workflow.jobs[0].job.transition[1]", `successor "b" appears twice`},
		{"transition not a list", head + "    - job: {id: a, type: NoOp, transition: b}\n", "Workflow.jobs[0].job.transition", "want a list of strings"},
		{"bad param mode", head + "    - job:\n        id: a\n        type: NoOp\n        p(forever): 1\n", "Workflow.jobs[0].job.p(forever)", "line 7: invalid param mode [forever]"},
		{"bad param type", "Workflow:\n  id: w\n  p<unknown>: 1\n  jobs: []\n", "Workflow.p<unknown>", "line 3: invalid param type [UNKNOWN]"},
		{"bad array element type", "Workflow:\n  id: w\n  p<array<map>>: []\n  jobs: []\n", "Workflow.p<array<map>>", "line 3: unsupported type [ARRAY<MAP>]"},
		{"type mismatch", "Workflow:\n  id: w\n  num<long>: invalid\n  jobs: []\n", "Workflow.num<long>", "line 3: type mismatch for param [num]: the type given is LONG but its value is a STRING"},
		{"double for long", "Workflow:\n  id: w\n  n<long>: 1.5\n  jobs: []\n", "Workflow.n<long>", "type mismatch"},
		{"null param", "Workflow:\n  id: w\n  p: ~\n  jobs: []\n", "Workflow.p", "line 3: param value for param [p] cannot be null"},
		{"expression not a string", "Workflow:\n  id: w\n  '!p': [1]\n  jobs: []\n", "Workflow.!p", "line 3: the expression of param [p] must be a string"},
		{"empty expression", "Workflow:\n  id: w\n  '!p': ''\n  jobs: []\n", "Workflow.!p", "is empty"},
		{"empty param name", "Workflow:\n  id: w\n  '!': '1'\n  jobs: []\n", "Workflow.!", "param name cannot be empty"},
		{"mixed array", "Workflow:\n  id: w\n  p: [a, 1]\n  jobs: []\n", "Workflow.p[1]", "line 3: want a string value"},
		{"array of maps", "Workflow:\n  id: w\n  p: [{a: 1}]\n  jobs: []\n", "Workflow.p", "invalid element for an array param"},
		{"same param twice", "Workflow:\n  id: w\n  p: a\n  p<string>: b\n  jobs: []\n", "Workflow.p<string>", `line 4: param "p" is defined twice`},
		{"reserved workflow_params", "Workflow:\n  id: w\n  workflow_params: {}\n  jobs: []\n", "Workflow.workflow_params", "reserved field"},
		{"reserved job_params", head + "    - job: {id: a, type: NoOp, job_params: {}}\n", "Workflow.jobs[0].job.job_params", "reserved field"},
		{"alias and field together", head + "    - foreach: {id: f, params: {}, loop_params: {}, jobs: []}\n", "Workflow.jobs[0].foreach.loop_params", "params and loop_params are the same field"},
		{"dag names an unknown job", "Workflow:\n  id: w\n  dag:\n    x: [a]\n  jobs: [{job: {id: a, type: NoOp}}]\n", "Workflow.dag.x", `line 4: the dag names an unknown job id "x"`},
		{"bad dag order", "Workflow:\n  id: w\n  dag: random\n  jobs: [{job: {id: a, type: NoOp}}]\n", "Workflow.dag", `line 3: invalid dag order "random"`},
		{"dag as a list", "Workflow:\n  id: w\n  dag: [a]\n  jobs: [{job: {id: a, type: NoOp}}]\n", "Workflow.dag", "a dag is an order"},
		{"range without to", head + "    - foreach: {id: f, ranges: {h: {from: 1}}, jobs: []}\n", "Workflow.jobs[0].foreach.ranges.h.to", "required"},
		{"unknown range field", head + "    - foreach: {id: f, ranges: {h: {to: 2, step: 1}}, jobs: []}\n", "Workflow.jobs[0].foreach.ranges.h.step", "unknown range field"},
		{"range and param share a name", head + "    - foreach: {id: f, params: {h: [1]}, ranges: {h: {to: 2}}, jobs: []}\n", "Workflow.jobs[0].foreach.ranges.h", "both in params and in ranges"},
		{"concurrency not a number", head + "    - foreach: {id: f, concurrency: lots, jobs: []}\n", "Workflow.jobs[0].foreach.concurrency", "want an integer"},
		{"sync not a boolean", head + "    - subworkflow: {id: s, sync: maybe}\n", "Workflow.jobs[0].subworkflow.sync", "want true or false"},
		{"both Workflow and workflow", "Workflow: {id: a, jobs: []}\nworkflow: {id: b, jobs: []}\n", "workflow", "line 2: both Workflow and workflow"},
		{"unknown top-level field", "Workflow: {id: a, jobs: []}\nproperties: {}\n", "properties", `line 2: unknown top-level field "properties"`},
		{"duplicate key", "Workflow:\n  id: a\n  id: b\n  jobs: []\n", "Workflow.id", `line 3: key "id" appears twice`},
		{"merge key", "Workflow:\n  base: &b {x: 1}\n  m:\n    <<: *b\n  jobs: []\n", "Workflow.m", "line 4: YAML merge keys"},
		{"jobs not a list", "Workflow:\n  id: w\n  jobs: {a: 1}\n", "Workflow.jobs", "line 3: want a list of jobs"},
		{"workflow not a mapping", "Workflow: [1]\n", "Workflow", "line 1: want a mapping"},
		{"not the DSL", "workflow: {id: w, steps: []}\n", "$", "not Maestro's YAML DSL"},
		{"invalid YAML", "Workflow: [\n", "$", "invalid YAML"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := dsl.Translate([]byte(tc.doc), dsl.Options{})
			var list model.Errors
			if !errors.As(err, &list) || len(list) == 0 {
				t.Fatalf("want model.Errors, got %v", err)
			}
			for _, e := range list {
				if e.Path == tc.path && strings.Contains(e.Msg, tc.msg) {
					return
				}
			}
			t.Errorf("no error at %s saying %q in:\n%v", tc.path, tc.msg, err)
		})
	}
}

func TestTranslateReportsEveryError(t *testing.T) {
	doc := "Workflow:\n  id: w\n  jobs:\n    - job: {id: a, type: bogus}\n    - job: {id: b, type: NoOp, transition: [NOPE NOPE]}\n"
	_, _, err := dsl.Translate([]byte(doc), dsl.Options{})
	var list model.Errors
	if !errors.As(err, &list) || len(list) != 2 {
		t.Fatalf("want 2 errors, got %v", err)
	}
}

// TestLimits feeds documents built to exhaust a parser: each must stop at
// an explicit limit with a message naming it.
func TestLimits(t *testing.T) {
	laughs := "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"
	for i := 1; i <= 9; i++ {
		laughs += "a" + string(rune('0'+i)) + ": &a" + string(rune('0'+i)) + " ["
		for j := 0; j < 10; j++ {
			if j > 0 {
				laughs += ", "
			}
			laughs += "*a" + string(rune('0'+i-1))
		}
		laughs += "]\n"
	}
	manyAliases := "Workflow:\n  x: &x 1\n  l: [" + strings.Repeat("*x, ", 200) + "*x]\n"
	deep := "Workflow:\n  p: " + strings.Repeat("[", 150) + strings.Repeat("]", 150) + "\n"
	wide := "Workflow:\n  a: &a [" + strings.Repeat("1,", 5000) + "1]\n  b: &b [" + strings.Repeat("*a,", 50) + "*a]\n"
	cases := []struct{ name, doc, msg string }{
		{"billion laughs", laughs, "more than 100 times"},
		{"alias uses", manyAliases, "uses aliases more than 100 times"},
		{"deep nesting", deep, "nests deeper than 100 levels"},
		{"expansion", wide, "expands to more than 200000 nodes"},
		{"self reference", "Workflow: &w\n  jobs: *w\n", "limit"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := dsl.Parse([]byte(tc.doc), dsl.DefaultLimits())
			if err == nil || !strings.Contains(err.Error(), tc.msg) || !strings.Contains(err.Error(), "limit") {
				t.Fatalf("want an error saying %q and naming the limit, got %v", tc.msg, err)
			}
		})
	}
	small := dsl.Limits{MaxDepth: 5, MaxAliases: 100, MaxNodes: 1000}
	if _, err := dsl.Parse([]byte("a: [[[[[[1]]]]]]\n"), small); err == nil {
		t.Error("a custom depth limit is not applied")
	}
}

func TestIsDSL(t *testing.T) {
	for doc, want := range map[string]bool{
		"Workflow: {id: w}\n":                      true,
		"workflow: {id: w, jobs: []}\n":            true,
		"workflow: {id: w, steps: []}\n":           false,
		"workflow: {id: w, jobs: [], steps: []}\n": false,
		"properties: {}\nworkflow: {id: w}\n":      false,
		"[1, 2]\n":                                 false,
	} {
		d, err := dsl.Parse([]byte(doc), dsl.Limits{})
		if err != nil {
			t.Fatal(err)
		}
		if got := d.IsDSL(); got != want {
			t.Errorf("IsDSL(%q) = %v", doc, got)
		}
	}
}

func TestSourceMapLocates(t *testing.T) {
	doc := "Workflow:\n  id: w\n  jobs:\n    - job:\n        id: a\n        type: NoOp\n        '!p<long>': x +\n"
	_, src, err := dsl.Translate([]byte(doc), dsl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	line, field, ok := src.Locate("workflow.steps[0].step.params.p.expression")
	if !ok || line != 7 || field != "Workflow.jobs[0].job.!p<long>" {
		t.Errorf("Locate = %d %q %v", line, field, ok)
	}
	line, field, ok = src.Locate(`workflow.steps[0].step.unknown["a.b"]`)
	if !ok || line != 4 || field != "Workflow.jobs[0].job" {
		t.Errorf("Locate of an unrecorded child = %d %q %v", line, field, ok)
	}
}
