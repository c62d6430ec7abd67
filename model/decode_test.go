package model

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// fixedNow is the clock of tests that check time triggers.
func fixedNow() time.Time { return time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC) }

func asErrors(err error, out *Errors) bool { return errors.As(err, out) }

// mustParse decodes a definition or fails the test.
func mustParse(t testing.TB, doc string) *Definition {
	t.Helper()
	d, err := ParseDefinition([]byte(doc))
	if err != nil {
		t.Fatalf("ParseDefinition: %v\n%s", err, doc)
	}
	return d
}

// mustMarshal encodes a definition or fails the test.
func mustMarshal(t testing.TB, d *Definition) string {
	t.Helper()
	out, err := d.MarshalJSON()
	if err != nil {
		t.Fatalf("MarshalJSON: %v", err)
	}
	return string(out)
}

// wf wraps workflow members into a definition document.
func wf(members string) string {
	return `{"workflow":{"id":"wf",` + members + `}}`
}

// paramDoc wraps one workflow param definition into a definition document.
func paramDoc(def string) string {
	return wf(`"params":{"p":` + def + `},"steps":[{"step":{"id":"s","type":"NoOp"}}]`)
}

func TestParamTypesDecodeAndEncode(t *testing.T) {
	tests := []struct {
		name      string
		def       string
		wantValue any
		wantOut   string // the param as written back
	}{
		{"string", `{"value":"a\u00e9\n","type":"string"}`, "aé\n", `{"value":"aé\n","type":"STRING"}`},
		{"long", `{"value":15,"type":"lonG"}`, int64(15), `{"value":15,"type":"LONG"}`},
		{"long from string", `{"value":"-7","type":"LONG"}`, int64(-7), `{"value":"-7","type":"LONG"}`},
		{"long max", `{"value":9223372036854775807,"type":"LONG"}`, int64(9223372036854775807), `{"value":9223372036854775807,"type":"LONG"}`},
		{"double", `{"value":10.2,"type":"double"}`, 10.2, `{"value":10.2,"type":"DOUBLE"}`},
		{"double keeps text", `{"value":1.00000000000001,"type":"DOUBLE"}`, 1.00000000000001, `{"value":1.00000000000001,"type":"DOUBLE"}`},
		{"double from string", `{"value":"10.229999999999","type":"DOUBLE"}`, 10.229999999999, `{"value":"10.229999999999","type":"DOUBLE"}`},
		{"double exponent", `{"value":1.5E3,"type":"DOUBLE"}`, 1500.0, `{"value":1.5E3,"type":"DOUBLE"}`},
		{"double from integer", `{"value":2,"type":"DOUBLE"}`, 2.0, `{"value":2,"type":"DOUBLE"}`},
		{"boolean", `{"value":true,"type":"Boolean"}`, true, `{"value":true,"type":"BOOLEAN"}`},
		{"string map keeps order", `{"value":{"z":"1","a":"2"},"type":"string_map"}`, map[string]string{"z": "1", "a": "2"}, `{"value":{"z":"1","a":"2"},"type":"STRING_MAP"}`},
		{"empty string map", `{"value":{},"type":"STRING_MAP"}`, map[string]string{}, `{"value":{},"type":"STRING_MAP"}`},
		{"string array", `{"value":["a","b"],"type":"String_array"}`, []string{"a", "b"}, `{"value":["a","b"],"type":"STRING_ARRAY"}`},
		{"empty string array", `{"value":[],"type":"STRING_ARRAY"}`, []string{}, `{"value":[],"type":"STRING_ARRAY"}`},
		{"long array", `{"value":[1,2,3],"type":"long_array"}`, []int64{1, 2, 3}, `{"value":[1,2,3],"type":"LONG_ARRAY"}`},
		{"double array mixed", `{"value":["10.229999999999",1.00000000000001,15],"type":"DOUBLE_ARRAY"}`, []float64{10.229999999999, 1.00000000000001, 15}, `{"value":["10.229999999999",1.00000000000001,15],"type":"DOUBLE_ARRAY"}`},
		{"boolean array", `{"value":[true,false],"type":"boolean_array"}`, []bool{true, false}, `{"value":[true,false],"type":"BOOLEAN_ARRAY"}`},
		{"expression", `{"expression":"1 + 1;","type":"LONG","validator":"@Positive","mode":"mutable_on_start"}`, nil, `{"expression":"1 + 1;","type":"LONG","validator":"@Positive","mode":"MUTABLE_ON_START"}`},
		{"meta and tags", `{"value":"x","type":"STRING","source":"user","internal_mode":"REQUIRED","tags":["a",{"name":"b","namespace":"runtime"}]}`, "x", `{"value":"x","type":"STRING","tags":["a",{"name":"b","namespace":"RUNTIME"}],"internal_mode":"REQUIRED","source":"user"}`},
		{"mismatch kept as JSON", `{"value":"abc","type":"LONG"}`, "abc", `{"value":"abc","type":"LONG"}`},
		{"unknown type kept", `{"value":[1,{"a":null}],"type":"INTEGER"}`, []any{json.Number("1"), map[string]any{"a": nil}}, `{"value":[1,{"a":null}],"type":"INTEGER"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := mustParse(t, paramDoc(tt.def))
			p := d.Workflow.Params.Defs["p"]
			if !reflect.DeepEqual(p.Value, tt.wantValue) {
				t.Errorf("Value = %#v (%T), want %#v (%T)", p.Value, p.Value, tt.wantValue, tt.wantValue)
			}
			out, err := json.Marshal(p)
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != tt.wantOut {
				t.Errorf("encoded %s\nwant    %s", out, tt.wantOut)
			}
			// The whole definition survives a round trip.
			d2 := mustParse(t, mustMarshal(t, d))
			if !reflect.DeepEqual(d, d2) {
				t.Errorf("round trip changed the model")
			}
		})
	}
}

func TestParamModesAreCanonicalised(t *testing.T) {
	for in, want := range map[string]ParamMode{
		"constant": ModeConstant, "Immutable": ModeImmutable, "MUTABLE": ModeMutable,
		"mutable_on_start": ModeMutableOnStart, "mutable_on_start_restart": ModeMutableOnStartRestart,
		"sometimes": "sometimes",
	} {
		d := mustParse(t, paramDoc(`{"value":"x","type":"STRING","mode":"`+in+`"}`))
		if got := d.Workflow.Params.Defs["p"].Mode; got != want {
			t.Errorf("mode %q decoded as %q, want %q", in, got, want)
		}
	}
}

func TestMapParamsAreNestedDefinitionsInOrder(t *testing.T) {
	d := mustParse(t, paramDoc(`{"type":"MAP","value":{
		"z":{"value":1,"type":"LONG"},
		"a":{"type":"MAP","value":{"inner":{"expression":"z + 1","type":"LONG"}}},
		"m":{"value":"x","type":"STRING"}}}`))
	p := d.Workflow.Params.Defs["p"]
	m, ok := p.Value.(map[string]*ParamDefinition)
	if !ok {
		t.Fatalf("Value is %T", p.Value)
	}
	if !reflect.DeepEqual(p.Keys, []string{"z", "a", "m"}) {
		t.Errorf("Keys = %v", p.Keys)
	}
	inner := m["a"].Value.(map[string]*ParamDefinition)["inner"]
	if inner.Expression != "z + 1" || inner.Type != TypeLong {
		t.Errorf("nested param = %+v", inner)
	}
	out, _ := json.Marshal(p)
	want := `{"value":{"z":{"value":1,"type":"LONG"},"a":{"value":{"inner":{"expression":"z + 1","type":"LONG"}},"type":"MAP"},"m":{"value":"x","type":"STRING"}},"type":"MAP"}`
	if string(out) != want {
		t.Errorf("encoded %s\nwant    %s", out, want)
	}
}

func TestParamsKeepDefinitionOrder(t *testing.T) {
	d := mustParse(t, wf(`"params":{"b":{"value":1,"type":"LONG"},"a":{"value":2,"type":"LONG"},"c":{"value":3,"type":"LONG"}},"steps":[]`))
	if got := d.Workflow.Params.Names; !reflect.DeepEqual(got, []string{"b", "a", "c"}) {
		t.Errorf("Names = %v", got)
	}
	out := mustMarshal(t, d)
	if !strings.Contains(out, `"params":{"b":{"value":1,"type":"LONG"},"a":{"value":2,"type":"LONG"},"c":{"value":3,"type":"LONG"}}`) {
		t.Errorf("params out of order: %s", out)
	}
}

func TestEditedValueIsWrittenFromValueNotRaw(t *testing.T) {
	d := mustParse(t, paramDoc(`{"value":"10.229999999999","type":"DOUBLE"}`))
	p := d.Workflow.Params.Defs["p"]
	p.Value = 2.5
	out, _ := json.Marshal(p)
	if string(out) != `{"value":2.5,"type":"DOUBLE"}` {
		t.Errorf("encoded %s", out)
	}
}

func TestEnumsAndTypeTagsAreCaseInsensitive(t *testing.T) {
	d := mustParse(t, `{"properties":{"run_strategy":{"rule":"strict_sequential"}},
		"workflow":{"id":"wf","criticality":"high","tags":[{"name":"t","namespace":"job_template"}],
		"time_triggers":[{"type":"cron","cron":"0 0 * * *"}],
		"steps":[{"Step":{"id":"a","type":"noop","failure_mode":"fail_after_running",
			"retry_policy":{"backoff":{"type":"fixed_backoff"}}}},
		{"step":{"id":"b","type":"HTTP"}},{"step":{"id":"c","type":"kubernetes"}},
		{"foreach":{"id":"f","params":{"loop_params":{"type":"map","value":{"i":{"type":"long_array","value":[1]}}}},
			"steps":[{"step":{"id":"g","type":"sleep"}}]}}]}}`)
	w := d.Workflow
	checks := []struct {
		got, want any
	}{
		{d.Properties.RunStrategy.Rule, RunStrictSequential},
		{w.Criticality, CriticalityHigh},
		{w.Tags[0].Namespace, NamespaceJobTemplate},
		{w.TimeTriggers[0].Type, TriggerCron},
		{w.Steps[0].Kind, KindStep},
		{w.Steps[0].Type, StepNoOp},
		{w.Steps[0].FailureMode, FailAfterRunning},
		{w.Steps[0].RetryPolicy.Backoff.Type, FixedBackoff},
		{w.Steps[1].Type, StepHTTP},
		{w.Steps[2].Type, StepKubernetes},
		{w.Steps[3].Params.Defs["loop_params"].Type, TypeMap},
		{w.Steps[3].Params.Defs["loop_params"].Value.(map[string]*ParamDefinition)["i"].Type, TypeLongArray},
		{w.Steps[3].Steps[0].Type, StepSleep},
	}
	for i, c := range checks {
		if c.got != c.want {
			t.Errorf("check %d: got %v, want %v", i, c.got, c.want)
		}
	}
	out := mustMarshal(t, d)
	for _, want := range []string{`"rule":"STRICT_SEQUENTIAL"`, `"criticality":"HIGH"`, `"namespace":"JOB_TEMPLATE"`,
		`"type":"CRON"`, `{"step":{"id":"a","type":"NoOp"`, `"failure_mode":"FAIL_AFTER_RUNNING"`, `"type":"FIXED_BACKOFF"`,
		`"type":"Http"`, `"type":"Kubernetes"`, `"type":"Sleep"`, `"type":"LONG_ARRAY"`} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %s:\n%s", want, out)
		}
	}
}

func TestSuccessorsKeepOrderAndBooleanConditions(t *testing.T) {
	d := mustParse(t, wf(`"steps":[{"step":{"id":"a","type":"NoOp","transition":{"successors":{"z":true,"b":"x > 1","c":false}}}},
		{"step":{"id":"z","type":"NoOp"}},{"step":{"id":"b","type":"NoOp"}},{"step":{"id":"c","type":"NoOp"}}]`))
	got := d.Workflow.Steps[0].Transition.Successors
	want := []Successor{{"z", "true"}, {"b", "x > 1"}, {"c", "false"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Successors = %v, want %v", got, want)
	}
	if out := mustMarshal(t, d); !strings.Contains(out, `"transition":{"successors":{"z":"true","b":"x > 1","c":"false"}}`) {
		t.Errorf("output: %s", out)
	}
}

func TestRunStrategyShapes(t *testing.T) {
	tests := []struct {
		in   string
		want RunStrategy
		out  string
	}{
		{`"sequential"`, RunStrategy{Rule: RunSequential, Shape: "string"}, `"SEQUENTIAL"`},
		{`15`, RunStrategy{Rule: RunParallel, WorkflowConcurrency: 15, Shape: "number"}, `15`},
		{`{"rule":"parallel","workflow_concurrency":5}`, RunStrategy{Rule: RunParallel, WorkflowConcurrency: 5, Shape: "object"}, `{"rule":"PARALLEL","workflow_concurrency":5}`},
		{`{"rule":"last_only","x":1}`, RunStrategy{Rule: RunLastOnly, Shape: "object", Extra: map[string]RawJSON{"x": RawJSON("1")}}, `{"rule":"LAST_ONLY","x":1}`},
		{`"serial_latest_only"`, RunStrategy{Rule: RunSerialLatestOnly, Shape: "string"}, `"SERIAL_LATEST_ONLY"`},
	}
	for _, tt := range tests {
		var rs RunStrategy
		if err := json.Unmarshal([]byte(tt.in), &rs); err != nil {
			t.Fatalf("%s: %v", tt.in, err)
		}
		if !reflect.DeepEqual(rs, tt.want) {
			t.Errorf("%s: decoded %+v, want %+v", tt.in, rs, tt.want)
		}
		out, err := json.Marshal(rs)
		if err != nil || string(out) != tt.out {
			t.Errorf("%s: encoded %s (%v), want %s", tt.in, out, err, tt.out)
		}
	}
	// A strategy built in code without a shape takes the shortest form.
	for _, c := range []struct {
		rs   RunStrategy
		want string
	}{
		{RunStrategy{Rule: RunFirstOnly}, `"FIRST_ONLY"`},
		{RunStrategy{Rule: RunParallel, WorkflowConcurrency: 3}, `{"rule":"PARALLEL","workflow_concurrency":3}`},
	} {
		if out, _ := json.Marshal(c.rs); string(out) != c.want {
			t.Errorf("%+v encoded %s, want %s", c.rs, out, c.want)
		}
	}
}

func TestUserAndTagShapes(t *testing.T) {
	d := mustParse(t, `{"properties":{"owner":{"name":"me","team":"x"}},"workflow":{"id":"w","tags":["plain",{"name":"obj"},{"name":"full","namespace":"system","permit":{"max":1}}],"steps":[]}}`)
	if u := d.Properties.Owner; u.Name != "me" || u.Plain || string(u.Extra["team"]) != `"x"` {
		t.Errorf("owner = %+v", u)
	}
	tags := d.Workflow.Tags
	if !tags[0].Plain || tags[0].Name != "plain" || tags[1].Plain || tags[2].Namespace != NamespaceSystem || string(tags[2].Extra["permit"]) != `{"max":1}` {
		t.Errorf("tags = %+v", tags)
	}
	out := mustMarshal(t, d)
	for _, want := range []string{`"owner":{"name":"me","team":"x"}`, `"tags":["plain",{"name":"obj"},{"name":"full","namespace":"SYSTEM","permit":{"max":1}}]`} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %s: %s", want, out)
		}
	}
	d = mustParse(t, `{"properties":{"owner":"me"},"workflow":{"id":"w","steps":[]}}`)
	if u := d.Properties.Owner; u.Name != "me" || !u.Plain {
		t.Errorf("owner = %+v", u)
	}
	if out := mustMarshal(t, d); !strings.Contains(out, `"owner":"me"`) {
		t.Errorf("output: %s", out)
	}
}

func TestParsableDurationAndLong(t *testing.T) {
	durations := []struct {
		in      string
		seconds int64
		expr    string
	}{
		{`300`, 300, ""},
		{`"3600"`, 3600, ""},
		{`"100s"`, 100, ""},
		{`"20 minutes"`, 1200, ""},
		{`"1d 2h"`, 93600, ""},
		{`"500ms"`, 1, ""},
		{`"${base_workflow_timeout}"`, 0, "${base_workflow_timeout}"},
		{`"${bar}s"`, 0, "${bar}s"},
		{`"soon"`, 0, "soon"},
	}
	for _, tt := range durations {
		var d ParsableDuration
		if err := json.Unmarshal([]byte(tt.in), &d); err != nil {
			t.Fatalf("%s: %v", tt.in, err)
		}
		if d.Seconds != tt.seconds || d.Expr != tt.expr {
			t.Errorf("%s: got %+v", tt.in, d)
		}
		if out, _ := json.Marshal(d); string(out) != tt.in {
			t.Errorf("%s: written back as %s", tt.in, out)
		}
	}
	longs := []struct {
		in    string
		value int64
		expr  string
	}{
		{`5`, 5, ""}, {`"3"`, 3, ""}, {`"$foo"`, 0, "$foo"}, {`"${far}"`, 0, "${far}"},
		{`"1 min 40 s"`, 100, ""}, {`"2hours"`, 7200, ""}, {`"1+4"`, 0, "1+4"},
	}
	for _, tt := range longs {
		var l ParsableLong
		if err := json.Unmarshal([]byte(tt.in), &l); err != nil {
			t.Fatalf("%s: %v", tt.in, err)
		}
		if l.Value != tt.value || l.Expr != tt.expr {
			t.Errorf("%s: got %+v", tt.in, l)
		}
	}
	for _, bad := range []string{`1.5`, `true`, `{}`} {
		var l ParsableLong
		if err := json.Unmarshal([]byte(bad), &l); err == nil {
			t.Errorf("%s: want an error", bad)
		}
	}
}

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		err  string
	}{
		{"100s", 100 * time.Second, ""},
		{"20 minutes", 20 * time.Minute, ""},
		{"2h", 2 * time.Hour, ""},
		{"1d 2h", 26 * time.Hour, ""},
		{"30min", 30 * time.Minute, ""},
		{"500ms", 500 * time.Millisecond, ""},
		{"10 minutes 5 seconds 1 day", 24*time.Hour + 10*time.Minute + 5*time.Second, ""},
		{"1 min 40 s", 100 * time.Second, ""},
		{"3600", time.Hour, ""},
		{" 2 Hours ", 2 * time.Hour, ""},
		{"", 0, "empty duration"},
		{"1d 5", 0, "has no unit"},
		{"5 fortnights", 0, "unknown unit"},
		{"-5s", 0, "expected a number"},
		{"-5", 0, "negative"},
		{"99999999999999999999s", 0, "out of range"},
		{"9999999999d", 0, "too large"},
	}
	for _, tt := range tests {
		got, err := ParseDuration(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseDuration(%q) error = %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestStoredDefinitionShape(t *testing.T) {
	in := `{"properties_snapshot":{"owner":"tester","run_strategy":"SERIAL_LATEST_ONLY"},"is_active":true,
		"activate_time":1598399975650,"metadata":{"workflow_id":"w","create_time":1598399975650},
		"workflow":{"id":"w","steps":[{"step":{"id":"job1","type":"Sleep"}}]}}`
	d := mustParse(t, in)
	if !d.PropertiesSnapshot || d.Properties.RunStrategy.Rule != RunSerialLatestOnly {
		t.Errorf("properties = %+v", d.Properties)
	}
	if string(d.Extra["metadata"]) != `{"workflow_id":"w","create_time":1598399975650}` || string(d.Extra["activate_time"]) != "1598399975650" {
		t.Errorf("extras = %v", d.Extra)
	}
	out := mustMarshal(t, d)
	if !strings.HasPrefix(out, `{"properties_snapshot":{"owner":"tester","run_strategy":"SERIAL_LATEST_ONLY"},`) {
		t.Errorf("output: %s", out)
	}
	if _, err := ParseDefinition([]byte(`{"properties":{},"properties_snapshot":{},"workflow":{"id":"w"}}`)); err == nil ||
		!strings.Contains(err.Error(), "properties_snapshot: only one of properties and properties_snapshot") {
		t.Errorf("both shapes: err = %v", err)
	}
}

func TestUnknownKeysAreKept(t *testing.T) {
	in := `{"workflow":{"id":"w","owner_team":"x","steps":[
		{"step":{"id":"a","type":"NoOp","predecessors":[],"transition":{"successors":{"b":"true"},"extra":1},"future":{"k":[1,2]}}},
		{"subworkflow":{"id":"b","type":"ignored","params":{"subworkflow_id":{"value":"x","type":"STRING"}}}}]},
		"source":"s3://x","dsl_lang":"java"}`
	d := mustParse(t, in)
	if string(d.Extra["source"]) != `"s3://x"` || string(d.Workflow.Extra["owner_team"]) != `"x"` {
		t.Errorf("extras: %v %v", d.Extra, d.Workflow.Extra)
	}
	a := d.Workflow.Steps[0]
	if string(a.Extra["predecessors"]) != `[]` || string(a.Extra["future"]) != `{"k":[1,2]}` || string(a.Transition.Extra["extra"]) != "1" {
		t.Errorf("step extras: %v %v", a.Extra, a.Transition.Extra)
	}
	// "type" does not apply to a subworkflow step: kept, not interpreted.
	if b := d.Workflow.Steps[1]; b.Type != "" || string(b.Extra["type"]) != `"ignored"` {
		t.Errorf("subworkflow step: %+v", b)
	}
	if errs := Validate(d, ValidateOptions{}); errs != nil {
		t.Errorf("unknown keys must not be reported: %v", errs)
	}
	if !reflect.DeepEqual(semantic(t, []byte(in)), semantic(t, []byte(mustMarshal(t, d)))) {
		t.Errorf("extras not written back: %s", mustMarshal(t, d))
	}
}

func TestShapeErrorsAreAllReportedWithPaths(t *testing.T) {
	in := `{"properties":{"owner":5,"step_concurrency":"20","alerting_disabled":"yes","run_strategy":[1]},
	"is_active":"true",
	"workflow":{"id":7,"tags":[1],"timeout":true,"time_triggers":[{"cron":"* * * * *"}],"params":{"x":{"value":1},"y":3},
	"steps":[{"step":{"id":"a","type":"NoOp","transition":{"successors":{"b":1}},"retry_policy":{"error_retry_limit":1.5}}},
		{"step":{"id":"b"},"foreach":{}},{"bogus":{}},5,{"foreach":{"id":"f","steps":{}}}]}}`
	_, err := ParseDefinition([]byte(in))
	var errs Errors
	if !asErrors(err, &errs) {
		t.Fatalf("err = %v", err)
	}
	want := []string{
		"is_active: must be a boolean, got a string",
		"properties.alerting_disabled: must be a boolean, got a string",
		"properties.owner: must be a string or an object, got a number",
		"properties.run_strategy: must be a rule name, a number or an object, got an array",
		"properties.step_concurrency: must be a whole number, got a string",
		"workflow.id: must be a string, got a number",
		"workflow.params.x.type: required",
		"workflow.params.y: must be a param definition object, got a number",
		"workflow.steps[0].step.retry_policy.error_retry_limit: must be a whole number, got 1.5",
		"workflow.steps[0].step.transition.successors.b: must be a condition string or a boolean, got a number",
		"workflow.steps[1]: a step wrapper must have exactly one key (step, subworkflow, foreach, while or template), got 2",
		`workflow.steps[2]: unknown step kind "bogus" (want step, subworkflow, foreach, while or template)`,
		"workflow.steps[3]: must be a step wrapper object {\"<kind>\": {...}} with kind step, subworkflow, foreach, while or template, got a number",
		"workflow.steps[4].foreach.steps: must be an array of steps, got an object",
		"workflow.tags[0]: must be a tag name or a tag object, got a number",
		"workflow.time_triggers[0].type: required",
		"workflow.timeout: must be a number of seconds or a duration string, got a boolean",
	}
	var got []string
	for _, e := range errs.Sorted() {
		got = append(got, e.Error())
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestSyntaxAndDuplicateKeyErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"{\n  \"workflow\": {\"id\": \"w\",}\n}", "invalid JSON at line 2, column 26: unexpected character '}' looking for an object key"},
		{`{"workflow": {"id": "w"}} x`, "invalid JSON at line 1, column 27: unexpected character 'x' after the top-level value"},
		{`{"workflow": {"id": "w"`, "invalid JSON at line 1, column 24: unexpected end of input in an object"},
		{`{"a": "\x"}`, `invalid JSON at line 1, column 9: invalid escape 'x' in a string`},
		{`{"a": 01}`, "invalid JSON at line 1, column 8: unexpected character '1' after an object member; expected ',' or '}'"},
		{`{"a": tru}`, "invalid JSON at line 1, column 7: invalid literal; expected true"},
		{`[1, 2]`, "a workflow definition must be a JSON object, got an array"},
		{`{"workflow":{"id":"a","id":"b","params":{"p.q":{"type":"LONG","value":1,"type":"LONG"}}}}`,
			"workflow.id: duplicate key\nworkflow.params[\"p.q\"].type: duplicate key"},
	}
	for _, tt := range tests {
		_, err := ParseDefinition([]byte(tt.in))
		if err == nil || err.Error() != tt.want {
			t.Errorf("%s:\n got %v\nwant %s", tt.in, err, tt.want)
		}
	}
	deep := strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1)
	if _, err := ParseDefinition([]byte(deep)); err == nil || !strings.Contains(err.Error(), "nesting deeper than") {
		t.Errorf("deep nesting: %v", err)
	}
}

func TestStringEscapes(t *testing.T) {
	d := mustParse(t, paramDoc(`{"value":"q\"b\\s\/t\t\u00e9\ud83d\ude00\ud800x<&>","type":"STRING"}`))
	if got, want := d.Workflow.Params.Defs["p"].Value, "q\"b\\s/t\té😀\ufffdx<&>"; got != want {
		t.Errorf("value = %q, want %q", got, want)
	}
	// MarshalJSON leaves <, > and & alone (json.Marshal would escape them again).
	out, _ := d.Workflow.Params.Defs["p"].MarshalJSON()
	if want := `{"value":"q\"b\\s/t\té😀�x<&>","type":"STRING"}`; string(out) != want {
		t.Errorf("encoded %s, want %s", out, want)
	}
}

func TestUnmarshalFragments(t *testing.T) {
	var step Step
	err := json.Unmarshal([]byte(`{"step":{"id":"job1","transition":{"successors":{"job.2":"true","job3":"true"}},"type":"Sleep","timeout":"10 minutes",
		"retry_policy":{"error_retry_limit":5,"platform_retry_limit":"3","timeout_retry_limit":"1",
		"backoff":{"error_retry_backoff_in_secs":"1 min 40 s","error_retry_exponent":2,"error_retry_limit_in_secs":"350",
		"platform_retry_backoff_in_secs":"5mins","platform_retry_exponent":3,"platform_retry_limit_in_secs":1000,
		"timeout_retry_backoff_in_secs":200,"timeout_retry_exponent":5,"timeout_retry_limit_in_secs":"2hours","type":"EXPONENTIAL_BACKOFF"}}}}`), &step)
	if err != nil {
		t.Fatal(err)
	}
	rp := step.RetryPolicy
	if step.Timeout.Seconds != 600 || rp.ErrorRetryLimit.Value != 5 || rp.PlatformRetryLimit.Value != 3 ||
		rp.Backoff.ErrorRetryBackoffInSecs.Value != 100 || rp.Backoff.PlatformRetryBackoffInSecs.Value != 300 ||
		rp.Backoff.TimeoutRetryLimitInSecs.Value != 7200 || rp.Backoff.Type != ExponentialBackoff {
		t.Errorf("step = %+v, retry = %+v, backoff = %+v", step, rp, rp.Backoff)
	}

	var trig SignalTrigger
	if err := json.Unmarshal([]byte(`{"definitions":{"signal_b":{"match_params":{"w":{"value":12345,"operator":">="}},"join_keys":["k"]},
		"signal_a":{"match_params":{"foo":{"value":"bar","operator":"="}},"join_keys":["k"]}},
		"condition":"245 > 123","dedup_expr":"'x'","params":{"foo":{"value":"bar","type":"STRING"}}}`), &trig); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(trig.Names, []string{"signal_b", "signal_a"}) || trig.Definitions["signal_b"].MatchParams["w"].Value != int64(12345) ||
		trig.Definitions["signal_b"].MatchParams["w"].Operator != OpGreaterEqual || trig.Condition != "245 > 123" {
		t.Errorf("trigger = %+v", trig)
	}

	var deps []SignalDependency
	if err := json.Unmarshal([]byte(`[{"name":"signal_a","match_params":{"param_a":{"param":{"value":"test123","type":"STRING"},"operator":"="}}}]`), &deps); err != nil {
		t.Fatal(err)
	}
	if deps[0].Name != "signal_a" || deps[0].MatchParams["param_a"].Param.Value != "test123" {
		t.Errorf("deps = %+v", deps)
	}

	var tt TimeTrigger
	if err := json.Unmarshal([]byte(`{"interval":"3H","start":"2021-03-26 16:00:18.089PST","type":"INTERVAL"}`), &tt); err != nil {
		t.Fatal(err)
	}
	if tt.Type != TriggerInterval || tt.Interval != "3H" {
		t.Errorf("trigger = %+v", tt)
	}

	var bad Step
	err = json.Unmarshal([]byte(`{"step":{"id":3}}`), &bad)
	var errs Errors
	if !asErrors(err, &errs) || errs.Error() != "step.id: must be a string, got a number" {
		t.Errorf("err = %v", err)
	}
}

func TestMarshalCodeBuiltDefinition(t *testing.T) {
	sync := false
	d := &Definition{
		Properties: &Properties{Owner: &User{Name: "me", Plain: true}, RunStrategy: &RunStrategy{Rule: RunParallel, WorkflowConcurrency: 4}},
		Workflow: &Workflow{
			ID: "built",
			Params: Params{Defs: map[string]*ParamDefinition{
				"b": {Type: TypeLong, Value: int64(2), HasValue: true},
				"a": {Type: TypeStringMap, Value: map[string]string{"y": "1", "x": "2"}, HasValue: true},
			}},
			Steps: []Step{
				{Kind: KindStep, ID: "s1", Type: StepNoOp, Transition: Transition{Successors: []Successor{{StepID: "s2", Condition: "true"}}},
					Timeout: &ParsableDuration{Seconds: 60}, RetryPolicy: &RetryPolicy{ErrorRetryLimit: &ParsableLong{Expr: "$n"}}},
				{Kind: KindSubworkflow, ID: "s2", Sync: &sync},
			},
		},
	}
	want := `{"properties":{"owner":"me","run_strategy":{"rule":"PARALLEL","workflow_concurrency":4}},` +
		`"workflow":{"id":"built","params":{"a":{"value":{"x":"2","y":"1"},"type":"STRING_MAP"},"b":{"value":2,"type":"LONG"}},` +
		`"steps":[{"step":{"id":"s1","type":"NoOp","transition":{"successors":{"s2":"true"}},"timeout":60,"retry_policy":{"error_retry_limit":"$n"}}},` +
		`{"subworkflow":{"id":"s2","sync":false}}]}}`
	if got := mustMarshal(t, d); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	d.Workflow.Steps[1].Kind = "loop"
	if _, err := d.MarshalJSON(); err == nil || !strings.Contains(err.Error(), `unknown kind "loop"`) {
		t.Errorf("unknown kind: err = %v", err)
	}
}

func TestParseDefinitionYAML(t *testing.T) {
	yml := `
properties:
  owner: tester
  run_strategy: parallel
workflow:
  id: yaml-wf
  params:
    zeta: {value: 15, type: long}
    alpha: {value: [1.5, 2], type: double_array}
    when: {value: "2h", type: STRING}
  steps:
    - step:
        id: job.1
        type: noop
        transition:
          successors:
            job.3: "true"
            job.2: true
    - step: {id: job.2, type: NoOp}
    - step: {id: job.3, type: NoOp, timeout: 1h}
`
	d, err := ParseDefinitionYAML([]byte(yml))
	if err != nil {
		t.Fatal(err)
	}
	jsonForm := `{"properties":{"owner":"tester","run_strategy":"parallel"},"workflow":{"id":"yaml-wf",
		"params":{"zeta":{"value":15,"type":"long"},"alpha":{"value":[1.5,2],"type":"double_array"},"when":{"value":"2h","type":"STRING"}},
		"steps":[{"step":{"id":"job.1","type":"noop","transition":{"successors":{"job.3":"true","job.2":true}}}},
		{"step":{"id":"job.2","type":"NoOp"}},{"step":{"id":"job.3","type":"NoOp","timeout":"1h"}}]}}`
	if want := mustParse(t, jsonForm); !reflect.DeepEqual(d, want) {
		t.Errorf("YAML model differs:\n got %s\nwant %s", mustMarshal(t, d), mustMarshal(t, want))
	}
	if !reflect.DeepEqual(d.Workflow.Params.Names, []string{"zeta", "alpha", "when"}) {
		t.Errorf("param order lost: %v", d.Workflow.Params.Names)
	}
	for in, want := range map[string]string{
		"workflow: [unclosed":             "invalid YAML",
		"workflow:\n  id: 5\n  steps: []": "workflow.id: must be a string, got a number",
		"- a\n- b":                        "a workflow definition must be a JSON object, got an array",
		"workflow: {x: .nan}":             "cannot be written as JSON",
	} {
		if _, err := ParseDefinitionYAML([]byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err = %v, want %q", in, err, want)
		}
	}
}
