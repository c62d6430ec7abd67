package ecsstep

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/images"
	"github.com/maestro-serverless/maestro/orchestrator"
	"github.com/maestro-serverless/maestro/steps/batchstep"
	"github.com/maestro-serverless/maestro/steps/handover"
)

// dispatchGPU runs Kubernetes step t, which requests GPUs, as a Batch job
// on GPU capacity.
func (r *Runner) dispatchGPU(ctx context.Context, m orchestrator.StepWork, t task) (orchestrator.Handover, *engine.StepFinished, error) {
	if r.cfg.GPU == nil {
		return handover.Refuse("gpu: this stack has no GPU capacity (Fargate has none); set " + batchstep.GPUQueueSetting)
	}
	if err := r.cfg.AllowImages.Check(t.image); errors.Is(err, images.ErrNotAllowed) {
		return handover.Refuse(fmt.Sprintf("%v; add its repository (or a prefix of it) to %s", err, ImagesSetting))
	} else if err != nil {
		return handover.Refuse(err.Error())
	}
	c := gpuContainer(t)
	if err := c.Check(); err != nil {
		return handover.Refuse(fmt.Sprintf("param %s.%v", ParamKubernetes, err))
	}
	return r.cfg.GPU.SubmitGPU(ctx, m, c)
}

// gpuContainer maps a Kubernetes step's task to a Batch GPU job: cpu (ECS
// units) rounded up to whole vCPUs, memory in MiB, command and args as the
// command, and a team's task role (t.role, when its rights apply) as its job
// role.
func gpuContainer(t task) batchstep.Container {
	var command []string
	if t.entryPoint != nil || t.command != nil {
		command = append(slices.Clone(t.entryPoint), t.command...)
	}
	return batchstep.Container{Image: t.image, Command: command, Env: t.env,
		VCPUs: (t.cpu + 1023) / 1024, MemoryMiB: t.memory, GPUs: t.gpu, JobRoleARN: t.role}
}

// gpuCount reads a Kubernetes step's gpu: a whole number of GPUs, 1 to
// batchstep.MaxGPUs; an empty string asks for none.
func gpuCount(s string) (int, error) {
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	switch {
	case err != nil:
		return 0, fmt.Errorf("%q is not a whole number of GPUs", s)
	case n < 1:
		return 0, fmt.Errorf("%d GPUs: request at least 1, or leave gpu out to run without one", n)
	case n > batchstep.MaxGPUs:
		return 0, fmt.Errorf("%d GPUs is more than %d (a Batch job runs on one instance; the largest have %d)", n, batchstep.MaxGPUs, batchstep.MaxGPUs)
	}
	return n, nil
}
