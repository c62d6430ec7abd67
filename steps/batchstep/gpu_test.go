package batchstep

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/orchestrator"
)

func TestGPUJobInput(t *testing.T) {
	m := orchestrator.StepWork{StepRef: orchestrator.StepRef{WorkflowID: "wf.1", InstanceID: 2, RunID: 1, StepID: "train", Attempt: 3}}
	in := gpuJobInput(m, Container{Image: "cuda", Command: []string{"python", "train.py"}, Env: map[string]string{"MODEL": "m1"}, GPUs: 1},
		"arn:aws:batch:us-east-1:1:job-definition/maestro-gpu-ab:1", "gpu")
	env := map[string]string{}
	for _, kv := range in.ContainerOverrides.Environment {
		env[aws.ToString(kv.Name)] = aws.ToString(kv.Value)
	}
	if aws.ToString(in.JobName) != "maestro-wf-1-train" || aws.ToString(in.JobQueue) != "gpu" || !strings.HasSuffix(aws.ToString(in.JobDefinition), "maestro-gpu-ab:1") ||
		!slices.Equal(in.ContainerOverrides.Command, []string{"python", "train.py"}) || env["MODEL"] != "m1" || env["MAESTRO_STEP_ATTEMPT_ID"] != "3" ||
		env["MAESTRO_OUTPUT_END"] != "MAESTRO_OUTPUT_END_TOKEN" {
		t.Fatalf("%+v %v", in, env)
	}
}

func TestGPUContainerCheck(t *testing.T) {
	for _, tc := range []struct {
		c    Container
		want string
	}{
		{Container{GPUs: 0}, "gpu: 0 GPUs is outside 1-8"},
		{Container{GPUs: -1}, "gpu: -1 GPUs is outside 1-8"},
		{Container{GPUs: 9}, "gpu: 9 GPUs is outside 1-8"},
		{Container{GPUs: 1, VCPUs: 193}, "cpu: 193 vCPUs is more than a GPU job's 192"},
		{Container{GPUs: 1, MemoryMiB: MaxGPUMemoryMiB + 1}, "memory: 2097153 MiB is more than"},
		{Container{GPUs: 8, VCPUs: 192, MemoryMiB: 2 << 20}, ""},
	} {
		err := tc.c.Check()
		if (tc.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.c, err, tc.want)
		}
	}
}

func TestSubmitGPUWithoutAQueue(t *testing.T) {
	r := &Runner{}
	_, end, err := r.SubmitGPU(context.Background(), orchestrator.StepWork{}, Container{Image: "cuda", GPUs: 1})
	if err != nil || end == nil || end.Outcome != engine.OutcomeFatalError || !strings.Contains(end.Message, "batchGpuJobQueue") {
		t.Fatalf("end %+v, err %v", end, err)
	}
}
