package model

import (
	"os"
	"strings"
	"testing"
)

func TestParseJobTemplate(t *testing.T) {
	sample, err := os.ReadFile("../test/testdata/sample-job-template-1.json")
	if err != nil {
		t.Fatal(err)
	}
	jt, err := ParseJobTemplate(sample)
	if err != nil {
		t.Fatalf("sample-job-template-1: %v", err)
	}
	d := jt.Definition
	if d.JobType != "shell" || d.StepType != StepNotebook || d.Version != "v1" || jt.Owner.Name != "tester" || string(jt.Extra["foo"]) != "10" {
		t.Fatalf("parsed %+v %+v", jt, d)
	}
	if mode, _ := ParamInternalMode(d.Params.Defs["script"]); mode != InternalRequired {
		t.Fatalf("script internal mode %q", mode)
	}

	const ok = `{"owner":"o","status":"s","support":"s","definition":{"job_type":"j","step_type":"kubernetes","params":{%s}}}`
	for _, c := range []struct{ name, doc, want string }{
		{"bad internal_mode", strings.Replace(ok, "%s", `"p":{"type":"STRING","value":"x","internal_mode":"SOMETIMES"}`, 1),
			`definition.params.p.internal_mode: unknown internal mode "SOMETIMES"`},
		{"internal_mode not a string", strings.Replace(ok, "%s", `"p":{"type":"STRING","value":"x","internal_mode":1}`, 1),
			`definition.params.p.internal_mode: must be a string`},
		{"nested bad internal_mode", strings.Replace(ok, "%s", `"m":{"type":"MAP","value":{"p":{"type":"STRING","internal_mode":"x"}}}`, 1),
			`definition.params.m.value.p.internal_mode: unknown internal mode "x"`},
		{"an expression", strings.Replace(ok, "%s", `"p":{"type":"LONG","expression":"1+1"}`, 1),
			`definition.params.p.expression: a job template's params are literals`},
		{"a value of another type", strings.Replace(ok, "%s", `"p":{"type":"LONG","value":"one"}`, 1),
			`definition.params.p.value: LONG value must be`},
		{"unknown step type", `{"owner":"o","status":"s","support":"s","definition":{"job_type":"j","step_type":"Spark"}}`,
			`definition.step_type: unknown step type "Spark"`},
		{"Join", `{"owner":"o","status":"s","support":"s","definition":{"job_type":"j","step_type":"Join"}}`,
			`definition.step_type: a Join step runs no job`},
		{"no job type", `{"owner":"o","status":"s","support":"s","definition":{"step_type":"Http"}}`,
			`definition.job_type: required`},
		{"a job type with #", `{"owner":"o","status":"s","support":"s","definition":{"job_type":"a#b","step_type":"Http"}}`,
			`definition.job_type: job type "a#b" is invalid`},
		{"missing owner", `{"status":"s","support":"s","definition":{"job_type":"j","step_type":"Http"}}`, `owner: required`},
		{"inherits from itself", `{"owner":"o","status":"s","support":"s","definition":{"job_type":"j","step_type":"Http","inherit_from":{"j":"default"}}}`,
			`definition.inherit_from.j: a job template cannot inherit from itself`},
		{"unknown definition field", `{"owner":"o","status":"s","support":"s","definition":{"job_type":"j","step_type":"Http","steps":[]}}`,
			`definition.steps: unknown field`},
		{"not JSON", `{"owner":`, `invalid`},
	} {
		_, err := ParseJobTemplate([]byte(c.doc))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
	jt, err = ParseJobTemplate([]byte(strings.Replace(ok, "%s", `"gpu":{"type":"STRING","internal_mode":"optional"}`, 1)))
	if err != nil || jt.Definition.Version != DefaultJobTemplateVersion || jt.Definition.StepType != StepKubernetes {
		t.Fatalf("a param without a value, no version: %+v %v", jt, err)
	}
}
