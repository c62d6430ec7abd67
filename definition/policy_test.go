package definition

import (
	"errors"
	"strings"
	"testing"

	"github.com/maestro-serverless/maestro/images"
)

// imageWorkflow is a definition whose steps are given as JSON.
func imageWorkflow(steps string) []byte {
	return []byte(`{"properties": {"owner": "tester"}, "workflow": {"id": "images", "params": {"img": {"value": "etl:1", "type": "STRING"}},
	  "steps": [` + steps + `]}}`)
}

// ecsStep is an Ecs step whose ecs MAP holds fields (JSON members).
func ecsStep(id, fields string) string {
	return `{"step": {"id": "` + id + `", "type": "Ecs", "params": {"ecs": {"type": "MAP", "value": {` + fields + `}}}}}`
}

func k8sStep(id, image string) string {
	return `{"step": {"id": "` + id + `", "type": "kubernetes", "params": {"kubernetes": {"type": "MAP", "value": {
	  "image": {"type": "STRING", "value": "` + image + `"}}}}}}`
}

func TestImagePolicyRefusesLiteralImagesOffTheList(t *testing.T) {
	allow, err := images.ParseAllowList([]string{"123456789012.dkr.ecr.us-east-1.amazonaws.com/etl/", "docker.io/library/busybox"})
	if err != nil {
		t.Fatal(err)
	}
	c := NewChecker(WithImagePolicy(allow))
	for _, tc := range []struct {
		name  string
		steps string
		// want lists "path: image" pairs, one per expected problem.
		want []string
	}{
		{"an Ecs image off the list", ecsStep("a", `"image": {"type": "STRING", "value": "evil.example.com/miner:1"}`),
			[]string{`workflow.steps[0].step.params.ecs.value.image.value: image "evil.example.com/miner:1"`}},
		{"a repository whose name only starts like an allowed one", ecsStep("a", `"image": {"type": "STRING", "value": "123456789012.dkr.ecr.us-east-1.amazonaws.com/etl-evil/job"}`),
			[]string{`workflow.steps[0].step.params.ecs.value.image.value: image "123456789012.dkr.ecr.us-east-1.amazonaws.com/etl-evil/job"`}},
		{"a Kubernetes step in a loop body", `{"foreach": {"id": "loop", "params": {"loop_params": {"type": "MAP", "value": {"i": {"type": "LONG_ARRAY", "value": [1, 2]}}}},
		  "steps": [` + k8sStep("k", "busybox") + `, ` + k8sStep("k2", "busybox-evil") + `]}}`,
			[]string{`workflow.steps[0].foreach.steps[1].step.params.kubernetes.value.image.value: image "busybox-evil"`}},
		{"every bad step is reported", ecsStep("a", `"image": {"type": "STRING", "value": "python:3"}`) + `, ` + k8sStep("b", "python:3"),
			[]string{`workflow.steps[0].step.params.ecs.value.image.value: image "python:3"`,
				`workflow.steps[1].step.params.kubernetes.value.image.value: image "python:3"`}},
		{"a Notebook step's kubernetes image", strings.Replace(k8sStep("n", "python:3"), `"type": "kubernetes"`, `"type": "notebook"`, 1),
			[]string{`workflow.steps[0].step.params.kubernetes.value.image.value: image "python:3"`}},
		{"an invalid reference", k8sStep("a", "etl/../busybox"),
			[]string{`workflow.steps[0].step.params.kubernetes.value.image.value: image "etl/../busybox" is not a valid image reference`}},
		// "$$" is a literal "$" once interpolated: the image is "busybox$x", not a reference.
		{"an escaped dollar is read as it runs", k8sStep("a", "busybox$$x"),
			[]string{`workflow.steps[0].step.params.kubernetes.value.image.value: image "busybox$x"`}},
		{"spaces are trimmed as the worker trims them", k8sStep("a", " busybox "), nil},
		{"allowed images", ecsStep("a", `"image": {"type": "STRING", "value": "123456789012.dkr.ecr.us-east-1.amazonaws.com/etl/job:2"}`) + `, ` +
			k8sStep("b", "busybox:1.36"), nil},
		{"a task definition is not an image", ecsStep("a", `"task_definition": {"type": "STRING", "value": "spark-submit"}`), nil},
		{"an empty image is not an image", ecsStep("a", `"image": {"type": "STRING", "value": ""}, "task_definition": {"type": "STRING", "value": "spark-submit"}`), nil},
		// Known only when the step runs: the worker checks them.
		{"an image from an expression", ecsStep("a", `"image": {"type": "STRING", "expression": "img + '-evil'"}`), nil},
		{"an image interpolating a param", k8sStep("a", "${img}-evil"), nil},
		{"a whole MAP from an expression", `{"step": {"id": "a", "type": "Ecs", "params": {"ecs": {"type": "MAP", "expression": "{'image': img + '-evil'}"}}}}`, nil},
		{"other step types", `{"step": {"id": "a", "type": "NoOp", "params": {"ecs": {"type": "MAP", "value": {"image": {"type": "STRING", "value": "evil"}}}}}}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Check(imageWorkflow(tc.steps), JSON)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var list Errors
			if !errors.As(err, &list) {
				t.Fatalf("Check = %v, want Errors", err)
			}
			if len(list) != len(tc.want) {
				t.Fatalf("%d problems, want %d:\n%v", len(list), len(tc.want), err)
			}
			for i, w := range tc.want {
				if got := list[i].Error(); !strings.HasPrefix(got, w) || !strings.Contains(got, "ecsImages") {
					t.Errorf("problem %d = %q\nwant it to start %q and name the ecsImages setting", i, got, w)
				}
			}
		})
	}
}

func TestImagePolicyYAML(t *testing.T) {
	allow, err := images.ParseAllowList([]string{"docker.io/library/busybox"})
	if err != nil {
		t.Fatal(err)
	}
	doc := `workflow:
  id: images
  steps:
    - step:
        id: a
        type: Kubernetes
        params:
          kubernetes:
            type: MAP
            value:
              image: {type: STRING, value: "evil.example.com/x"}
`
	_, err = NewChecker(WithImagePolicy(allow)).Check([]byte(doc), YAML)
	if err == nil || !strings.Contains(err.Error(), `workflow.steps[0].step.params.kubernetes.value.image.value: image "evil.example.com/x"`) {
		t.Fatalf("Check = %v", err)
	}
}

func TestImagePolicyEmptyOrAbsent(t *testing.T) {
	def := imageWorkflow(k8sStep("a", "busybox"))
	// A nil list admits nothing: a deployment without the setting.
	if _, err := NewChecker(WithImagePolicy(nil)).Check(def, JSON); err == nil || !strings.Contains(err.Error(), "no image may run") {
		t.Errorf("nil list: %v", err)
	}
	if _, err := NewChecker(WithImagePolicy(images.AnyImage())).Check(def, JSON); err != nil {
		t.Errorf("any image: %v", err)
	}
	// Without the option (maestro validate, offline) images are not checked.
	if _, err := NewChecker().Check(def, JSON); err != nil {
		t.Errorf("no policy: %v", err)
	}
}
