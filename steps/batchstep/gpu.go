package batchstep

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/batch"
	"github.com/aws/aws-sdk-go-v2/service/batch/types"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/orchestrator"
	"github.com/maestro-serverless/maestro/steps/handover"
	"github.com/maestro-serverless/maestro/steps/joboutput"
)

// GPU jobs: a container a Kubernetes step with a gpu request runs (see
// package ecsstep), submitted to the stack's GPU job queue
// (Config.GPUJobQueue) in a job definition the runner registers, one per
// image and resource shape, named <GPUFamily>-<hash>. Its end arrives as
// any Batch job's does.

// Limits of a GPU job: one job runs on one instance, and the largest GPU
// instances (p5.48xlarge, g6e.48xlarge) have 8 GPUs, 192 vCPUs and 2 TiB.
const (
	MaxGPUs         = 8
	MaxGPUVCPUs     = 192
	MaxGPUMemoryMiB = 2 << 20
)

// Defaults of a GPU job that does not say.
const (
	DefaultGPUVCPUs     = 1
	DefaultGPUMemoryMiB = 2048
)

// GPUQueueSetting names, in messages, where the GPU job queue is set.
const GPUQueueSetting = "the stack's batchGpuJobQueue setting (MAESTRO_BATCH_GPU_JOB_QUEUE)"

// Container is a container job to run on GPU capacity.
type Container struct {
	// Image is the container image (checked against the allow-list by the
	// caller).
	Image string
	// Command is the container's command: Batch cannot override an
	// image's entry point, so a Kubernetes step's command and args run as
	// the command, after the image's ENTRYPOINT if it has one.
	Command []string
	// Env is the step's environment; the step attempt's ids and output
	// markers are added (joboutput.Env).
	Env map[string]string
	// VCPUs, MemoryMiB and GPUs are the job's resource requirements (0:
	// the defaults for vCPUs and memory).
	VCPUs, MemoryMiB, GPUs int
	// JobRoleARN is the job's role (a team's task role); empty:
	// Config.GPUJobRoleARN.
	JobRoleARN string
}

// Check reports the first of c's resources outside the limits of a GPU
// job, naming the field as a Kubernetes step writes it.
func (c Container) Check() error {
	switch {
	case c.GPUs < 1 || c.GPUs > MaxGPUs:
		return fmt.Errorf("gpu: %d GPUs is outside 1-%d (a Batch job runs on one instance)", c.GPUs, MaxGPUs)
	case c.VCPUs < 0 || c.VCPUs > MaxGPUVCPUs:
		return fmt.Errorf("cpu: %d vCPUs is more than a GPU job's %d", c.VCPUs, MaxGPUVCPUs)
	case c.MemoryMiB < 0 || c.MemoryMiB > MaxGPUMemoryMiB:
		return fmt.Errorf("memory: %d MiB is more than a GPU job's %d (2 TiB)", c.MemoryMiB, MaxGPUMemoryMiB)
	}
	return nil
}

// ResourceRequirements are the GPU, VCPU and MEMORY requirements of c,
// with the defaults for what it leaves unset.
func (c Container) ResourceRequirements() []types.ResourceRequirement {
	vcpus, memory := c.VCPUs, c.MemoryMiB
	if vcpus == 0 {
		vcpus = DefaultGPUVCPUs
	}
	if memory == 0 {
		memory = DefaultGPUMemoryMiB
	}
	return []types.ResourceRequirement{
		{Type: types.ResourceTypeGpu, Value: aws.String(strconv.Itoa(c.GPUs))},
		{Type: types.ResourceTypeVcpu, Value: aws.String(strconv.Itoa(vcpus))},
		{Type: types.ResourceTypeMemory, Value: aws.String(strconv.Itoa(memory))},
	}
}

// SubmitGPU runs container c for step attempt m as a Batch job on the GPU
// job queue, handing the step over as it.
func (r *Runner) SubmitGPU(ctx context.Context, m orchestrator.StepWork, c Container) (orchestrator.Handover, *engine.StepFinished, error) {
	if r.cfg.GPUJobQueue == "" {
		return handover.Refuse("gpu: this stack has no GPU capacity; set " + GPUQueueSetting)
	}
	if err := c.Check(); err != nil {
		return handover.Refuse(err.Error())
	}
	def, err := r.gpuDefinition(ctx, c)
	if err != nil {
		return failed(err, "register the GPU job definition")
	}
	return r.submit(ctx, gpuJobInput(m, c, def, r.cfg.GPUJobQueue), r.cfg.GPUJobQueue+" (GPU)")
}

// gpuJobInput is the submission of container c for step attempt m in job
// definition def (which holds c's image and resources) to queue.
func gpuJobInput(m orchestrator.StepWork, c Container, def, queue string) *batch.SubmitJobInput {
	return &batch.SubmitJobInput{
		JobName: aws.String(jobName("", m)), JobQueue: aws.String(queue), JobDefinition: aws.String(def),
		ContainerOverrides: &types.ContainerOverrides{Command: c.Command, Environment: joboutput.Env(m, c.Env, keyValue)},
	}
}

// gpuDefinition returns the job definition that runs c's image with its
// resources, registering it when it does not exist.
func (r *Runner) gpuDefinition(ctx context.Context, c Container) (string, error) {
	reqs := c.ResourceRequirements()
	role := r.cfg.GPUJobRoleARN
	if c.JobRoleARN != "" {
		role = c.JobRoleARN
	}
	sum := sha256.New()
	parts := []string{c.Image, role}
	for _, rr := range reqs {
		parts = append(parts, string(rr.Type)+"="+aws.ToString(rr.Value))
	}
	for _, p := range parts {
		sum.Write([]byte(p))
		sum.Write([]byte{0})
	}
	name := r.gpuFamily() + "-" + hex.EncodeToString(sum.Sum(nil))[:16]
	if arn, ok := r.definitions.Load(name); ok {
		return arn.(string), nil
	}
	got, err := r.cfg.Batch.DescribeJobDefinitions(ctx, &batch.DescribeJobDefinitionsInput{JobDefinitionName: aws.String(name), Status: aws.String("ACTIVE")})
	if err != nil {
		return "", fmt.Errorf("describe job definition %s: %w", name, err)
	}
	for _, d := range got.JobDefinitions {
		arn := aws.ToString(d.JobDefinitionArn)
		r.definitions.Store(name, arn)
		return arn, nil
	}
	props := &types.ContainerProperties{Image: aws.String(c.Image), ResourceRequirements: reqs}
	if role != "" {
		props.JobRoleArn = aws.String(role)
	}
	reg, err := r.cfg.Batch.RegisterJobDefinition(ctx, &batch.RegisterJobDefinitionInput{
		JobDefinitionName: aws.String(name), Type: types.JobDefinitionTypeContainer,
		PlatformCapabilities: []types.PlatformCapability{types.PlatformCapabilityEc2}, ContainerProperties: props,
	})
	if err != nil {
		return "", fmt.Errorf("register job definition %s: %w", name, err)
	}
	arn := aws.ToString(reg.JobDefinitionArn)
	r.definitions.Store(name, arn)
	return arn, nil
}

// gpuFamily prefixes the names of the GPU job definitions.
func (r *Runner) gpuFamily() string {
	if r.cfg.GPUFamily != "" {
		return r.cfg.GPUFamily
	}
	return "maestro-gpu"
}
