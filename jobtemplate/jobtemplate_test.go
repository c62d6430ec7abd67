package jobtemplate

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/model"
)

// template parses a job template request's definition.
func template(t *testing.T, jobType, stepType, version, params string, inherit string) *model.JobTemplateDefinition {
	t.Helper()
	doc := `{"owner":"o","status":"s","support":"s","definition":{"job_type":"` + jobType + `","step_type":"` + stepType +
		`","version":"` + version + `","inherit_from":{` + inherit + `},"params":{` + params + `}}}`
	jt, err := model.ParseJobTemplate([]byte(doc))
	if err != nil {
		t.Fatalf("%s: %v", doc, err)
	}
	return jt.Definition
}

func TestMerge(t *testing.T) {
	const notebook = `"notebook":{"type":"MAP","internal_mode":"REQUIRED","value":{
	  "input_path":{"type":"STRING","internal_mode":"REQUIRED"},
	  "init_command":{"type":"STRING","value":"pip install papermill &&","internal_mode":"PROVIDED"},
	  "git_branch":{"type":"STRING","internal_mode":"OPTIONAL"}}}`
	for _, c := range []struct {
		name, params string
		step         engine.Values
		want         engine.Values
		err          string
	}{
		{name: "a step without the param gets the template's value",
			params: `"script":{"type":"STRING","value":"echo $$HOME","internal_mode":"REQUIRED"}`,
			step:   engine.Values{"foo": "x"}, want: engine.Values{"foo": "x", "script": "echo $HOME"}},
		{name: "the step's value wins over REQUIRED and PROVIDED",
			params: `"script":{"type":"STRING","value":"echo","internal_mode":"REQUIRED"},"image":{"type":"STRING","value":"a","internal_mode":"PROVIDED"}`,
			step:   engine.Values{"script": "ls", "image": "b"}, want: engine.Values{"script": "ls", "image": "b"}},
		{name: "REQUIRED without a value and not in the step",
			params: `"script":{"type":"STRING","internal_mode":"REQUIRED"}`,
			step:   engine.Values{}, err: "script: a required parameter (job template: REQUIRED) has no value"},
		{name: "OPTIONAL without a value is left out",
			params: `"gpu":{"type":"STRING","internal_mode":"OPTIONAL"}`,
			step:   engine.Values{}, want: engine.Values{}},
		{name: "RESERVED cannot be set by the step",
			params: `"run_id":{"type":"STRING","value":"r","internal_mode":"RESERVED"}`,
			step:   engine.Values{"run_id": "mine"}, err: "run_id: RESERVED by the job template: the step may not set it"},
		{name: "RESERVED the step leaves alone is the template's",
			params: `"run_id":{"type":"STRING","value":"r","internal_mode":"RESERVED"}`,
			step:   engine.Values{}, want: engine.Values{"run_id": "r"}},
		{name: "MAP params merge field by field", params: notebook,
			step: engine.Values{"notebook": map[string]any{"input_path": "s3://b/k.ipynb"}},
			want: engine.Values{"notebook": map[string]any{"input_path": "s3://b/k.ipynb", "init_command": "pip install papermill &&"}}},
		{name: "a required field of a MAP the step does not give", params: notebook,
			step: engine.Values{"notebook": map[string]any{"git_branch": "main"}},
			err:  "notebook.input_path: a required parameter"},
		{name: "a MAP the step gives as a string", params: notebook,
			step: engine.Values{"notebook": "s3://b/k"}, err: "notebook: the job template makes it a MAP; the step's is STRING"},
		{name: "another type", params: `"n":{"type":"LONG","value":1}`,
			step: engine.Values{"n": "one"}, err: "n: the job template makes it LONG; the step's is STRING"},
		{name: "a LONG for a DOUBLE", params: `"x":{"type":"DOUBLE","value":1.5}`,
			step: engine.Values{"x": int64(2)}, want: engine.Values{"x": int64(2)}},
		{name: "no internal mode and no value is required", params: `"n":{"type":"LONG"}`,
			step: engine.Values{}, err: "n: a required parameter (job template: without an internal mode, so required)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tpl := template(t, "shell", "Notebook", "v1", c.params, "")
			before := c.step.Clone()
			got, err := Merge([]*model.JobTemplateDefinition{tpl}, c.step)
			if !reflect.DeepEqual(c.step, before) {
				t.Errorf("the step's params changed: %v, were %v", c.step, before)
			}
			switch {
			case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
				t.Fatalf("error %v, want %q", err, c.err)
			case c.err == "" && err != nil:
				t.Fatal(err)
			case c.err == "" && !reflect.DeepEqual(got, c.want):
				t.Fatalf("got %#v, want %#v", got, c.want)
			}
		})
	}
}

func TestChain(t *testing.T) {
	base := template(t, "base", "Notebook", "v1", `"image":{"type":"STRING","value":"python:3"},"script":{"type":"STRING","value":"a"}`, "")
	shell := template(t, "shell", "Notebook", "v1", `"script":{"type":"STRING","value":"b"}`, `"base":"v1"`)
	loop := template(t, "loop", "Notebook", "v1", `"x":{"type":"STRING","value":"x"}`, `"shell":"v1"`)
	k8s := template(t, "k8s", "Kubernetes", "v1", ``, "")
	store := map[string]*model.JobTemplateDefinition{"base@v1": base, "shell@v1": shell, "loop@v1": loop, "k8s@v1": k8s}
	get := func(jobType, version string) (*model.JobTemplateDefinition, error) {
		return store[jobType+"@"+version], nil
	}

	chain, err := Chain(model.StepNotebook, "shell", "v1", get)
	if err != nil || len(chain) != 2 || chain[0] != base || chain[1] != shell {
		t.Fatalf("chain %v, %v: want base then shell", chain, err)
	}
	got, err := Merge(chain, engine.Values{})
	if err != nil || got["script"] != "b" || got["image"] != "python:3" {
		t.Fatalf("merged %v, %v: the child's script over the parent's", got, err)
	}
	if chain, err := Chain(model.StepNotebook, "none", "v1", get); err != nil || len(chain) != 0 {
		t.Fatalf("no template: %v, %v", chain, err)
	}
	if _, err := Chain(model.StepNotebook, "k8s", "v1", get); err == nil || !strings.Contains(err.Error(), "is for Kubernetes steps, not Notebook") {
		t.Fatalf("another step type: %v", err)
	}
	// A cycle: base inherits from loop.
	base.InheritFrom = map[string]string{"loop": "v1"}
	if _, err := Chain(model.StepNotebook, "loop", "v1", get); err == nil || !strings.Contains(err.Error(), "inherit_from cycle") {
		t.Fatalf("a cycle: %v", err)
	}
	boom := errors.New("read failed")
	if _, err := Chain(model.StepNotebook, "shell", "v1", func(string, string) (*model.JobTemplateDefinition, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Fatalf("a read error: %v", err)
	}
}

func TestCheckLiterals(t *testing.T) {
	ok := template(t, "shell", "Notebook", "v1", `"s":{"type":"STRING","value":"cost $$5"}`, "")
	if err := CheckLiterals(ok); err != nil {
		t.Fatal(err)
	}
	ref := template(t, "shell", "Notebook", "v1", `"m":{"type":"MAP","value":{"s":{"type":"STRING","value":"run ${foo}"}}}`, "")
	if err := CheckLiterals(ref); err == nil || !strings.Contains(err.Error(), "definition.params.m.value.s: a job template's literal cannot reference params (foo)") {
		t.Fatalf("a reference: %v", err)
	}
}
