package ecsstep

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/orchestrator"
	"github.com/maestro-serverless/maestro/steps/batchstep"
)

func TestGPUContainer(t *testing.T) {
	for _, tc := range []struct {
		fields map[string]any
		want   batchstep.Container
		reqs   []string // GPU, VCPU, MEMORY
	}{
		{map[string]any{"image": "cuda:12", "gpu": "2", "cpu": "1500m", "memory": "3Gi", "command": []any{"python"}, "args": []any{"train.py", "--epochs=3"}, "env": map[string]any{"A": "1"}},
			batchstep.Container{Image: "cuda:12", Command: []string{"python", "train.py", "--epochs=3"}, Env: map[string]string{"A": "1"}, VCPUs: 2, MemoryMiB: 3072, GPUs: 2},
			[]string{"2", "2", "3072"}},
		{map[string]any{"image": "cuda:12", "gpu": int64(1), "args": []any{"run"}},
			batchstep.Container{Image: "cuda:12", Command: []string{"run"}, GPUs: 1}, []string{"1", "1", "2048"}},
		{map[string]any{"image": "cuda:12", "gpu": "8", "cpu": "96", "memory": "1Ti"},
			batchstep.Container{Image: "cuda:12", VCPUs: 96, MemoryMiB: 1 << 20, GPUs: 8}, []string{"8", "96", "1048576"}},
	} {
		tk, err := parseTask(model.StepKubernetes, engine.Values{ParamKubernetes: tc.fields})
		if err != nil {
			t.Fatalf("%v: %v", tc.fields, err)
		}
		c := gpuContainer(tk)
		if c.Image != tc.want.Image || !slices.Equal(c.Command, tc.want.Command) || c.VCPUs != tc.want.VCPUs || c.MemoryMiB != tc.want.MemoryMiB ||
			c.GPUs != tc.want.GPUs || len(c.Env) != len(tc.want.Env) || c.Check() != nil {
			t.Errorf("%v: %+v, want %+v (check %v)", tc.fields, c, tc.want, c.Check())
		}
		var got []string
		for _, rr := range c.ResourceRequirements() {
			got = append(got, string(rr.Type)+"="+aws.ToString(rr.Value))
		}
		want := []string{"GPU=" + tc.reqs[0], "VCPU=" + tc.reqs[1], "MEMORY=" + tc.reqs[2]}
		if !slices.Equal(got, want) {
			t.Errorf("%v: resource requirements %v, want %v", tc.fields, got, want)
		}
	}
	// Past a GPU instance's size.
	for fields, want := range map[string]map[string]any{
		"cpu: 1000 vCPUs is more than a GPU job's 192":         {"image": "x", "gpu": "1", "cpu": "1000"},
		"memory: 3145728 MiB is more than a GPU job's 2097152": {"image": "x", "gpu": "1", "memory": "3Ti"},
	} {
		tk, err := parseTask(model.StepKubernetes, engine.Values{ParamKubernetes: want})
		if err != nil {
			t.Fatal(err)
		}
		if err := gpuContainer(tk).Check(); err == nil || !strings.Contains(err.Error(), fields) {
			t.Errorf("%v: %v, want %q", want, err, fields)
		}
	}
}

func TestGPUStepWithoutGPUCapacity(t *testing.T) {
	r, f := newTestRunner(t, nil)
	m := orchestrator.StepWork{StepRef: orchestrator.StepRef{WorkflowID: "wf", InstanceID: 1, RunID: 1, StepID: "job", Attempt: 1}, StepType: model.StepKubernetes,
		Params: engine.Values{ParamKubernetes: map[string]any{"image": "busybox", "gpu": "1"}}}
	_, end, err := r.Dispatch(context.Background(), m, "")
	if err != nil || end == nil || end.Outcome != engine.OutcomeFatalError || !strings.Contains(end.Message, "no GPU capacity") ||
		!strings.Contains(end.Message, "batchGpuJobQueue") || len(f.ran) != 0 {
		t.Fatalf("end %+v, err %v, ran %v", end, err, f.ran)
	}
}
