// Package ecsstep runs Ecs steps, and Maestro's Kubernetes steps, as ECS
// tasks on Fargate. The step is handed over as a job: the task runs, the
// step waits RUNNING (nothing polls), and EventBridge's "ECS Task State
// Change" event for the stopped task ends it; stopping the step stops the
// task.
//
// An Ecs step's `ecs` MAP param:
//
//	image            a container image, or
//	task_definition  a task definition family (on the allow-list), family:revision or ARN
//	entry_point      the container's entry point (STRING_ARRAY; image only)
//	command          the container's command (STRING_ARRAY)
//	env              environment variables (STRING_MAP)
//	cpu, memory      Fargate CPU units and MiB ("1024", "2048"; "1 vCPU", "2 GB" also read)
//	disk             ephemeral storage in GiB (21-200)
//	container_name   the container the overrides apply to (task_definition; default its first)
//
// A Kubernetes step's `kubernetes` MAP param has Maestro's meaning: image,
// command (the entry point) and args (its arguments), env, cpu ("2",
// "500m") and memory ("4Gi", "512Mi") as Kubernetes quantities, disk; the
// task gets the smallest Fargate size that holds the request. app_name,
// owner_email, job_deduplication_key and pre_stop are not used.
//
// Fargate has no GPUs: a Kubernetes step with gpu (a whole number, 1-8)
// runs as an AWS Batch job on the stack's GPU job queue instead
// (Config.GPU, see batchstep.Runner.SubmitGPU), its cpu rounded up to whole
// vCPUs; command and args become the job's command (Batch cannot override
// an image's entry point), and disk is refused (a Batch job on EC2 takes
// its instance's storage). The job's end arrives as the Batch job state
// change event, which the Batch runner reads.
//
// An image must be on Config.AllowImages (see package images): a step whose
// image is not fails fatally, naming the image and the setting, before
// anything is registered or run. An image runs in a task definition the
// runner registers (one per image and entry point, family
// <Family>-<hash>), logging to Config.LogGroup; when it ends, its log's
// tail is read for Maestro's output marker (see joboutput). Exit code 0
// succeeds; another is a user error (retried per the retry policy, unless
// the output says it is not retryable); a task that failed to start
// (capacity, image pull) or was interrupted is a platform error.
package ecsstep

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	"github.com/aws/aws-sdk-go-v2/service/ecs/types"
	"github.com/aws/smithy-go"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/images"
	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/orchestrator"
	"github.com/maestro-serverless/maestro/pricing"
	"github.com/maestro-serverless/maestro/steps/batchstep"
	"github.com/maestro-serverless/maestro/steps/handover"
	"github.com/maestro-serverless/maestro/steps/joboutput"
	"github.com/maestro-serverless/maestro/steps/stepparam"
	"github.com/maestro-serverless/maestro/teamrights"
)

// Step params this runner reads.
const (
	ParamECS        = "ecs"
	ParamKubernetes = "kubernetes"
)

// ContainerName is the container of the task definitions the runner
// registers.
const ContainerName = "main"

// JobPrefix starts the job names of ECS tasks ("ecs:<task arn>").
const JobPrefix = "ecs:"

// ImagesSetting names, in messages, where the image allow-list is set.
const ImagesSetting = "the stack's ecsImages setting (MAESTRO_ECS_IMAGES; maestro local: -ecs-image)"

// Client is the part of the ECS client the runner uses.
type Client interface {
	RunTask(ctx context.Context, in *ecs.RunTaskInput, opts ...func(*ecs.Options)) (*ecs.RunTaskOutput, error)
	StopTask(ctx context.Context, in *ecs.StopTaskInput, opts ...func(*ecs.Options)) (*ecs.StopTaskOutput, error)
	RegisterTaskDefinition(ctx context.Context, in *ecs.RegisterTaskDefinitionInput, opts ...func(*ecs.Options)) (*ecs.RegisterTaskDefinitionOutput, error)
	DescribeTaskDefinition(ctx context.Context, in *ecs.DescribeTaskDefinitionInput, opts ...func(*ecs.Options)) (*ecs.DescribeTaskDefinitionOutput, error)
}

// Config configures a Runner: where tasks run and what they may use.
type Config struct {
	ECS  Client
	Logs joboutput.Logs
	// Cluster is the cluster tasks run in (name or ARN).
	Cluster string
	// Subnets and SecurityGroups place the tasks' network interfaces;
	// AssignPublicIP gives them public addresses (public subnets without
	// a NAT gateway need it to pull images).
	Subnets, SecurityGroups []string
	AssignPublicIP          bool
	// ExecutionRoleARN (pulls images, writes logs) and TaskRoleARN (what
	// the container may call) are the roles of registered task
	// definitions.
	ExecutionRoleARN, TaskRoleARN string
	// LogGroup receives the registered task definitions' logs.
	LogGroup string
	// Region is the log group's region (the awslogs driver needs it).
	Region string
	// Family prefixes the task definitions the runner registers; StartedBy
	// marks its tasks (the EventBridge rule selects on it).
	Family, StartedBy string
	// AllowTaskDefinitions lists the task definition families steps may
	// name.
	AllowTaskDefinitions []string
	// NotebookBucket and NotebookPrefix are where Notebook steps write
	// the executed notebooks (s3://<bucket>/<prefix><workflow>/...);
	// NotebookTaskRoleARN is the role of their tasks, which may write
	// there only. Without a bucket Notebook steps fail, saying so.
	NotebookBucket, NotebookPrefix, NotebookTaskRoleARN string
	// AllowImages admits the images steps may run in the task definitions
	// the runner registers (with the roles above, in the subnets above);
	// nil admits none. See package images.
	AllowImages *images.AllowList
	// GPU runs the Kubernetes steps that request GPUs; nil refuses them.
	GPU GPUJobs
	// Rights returns the team rights a step attempt launches with
	// (steprights.Resolver.Scope); nil, or a Scope not Enforced, runs
	// every step with the roles above. See rights.go.
	Rights func(ctx context.Context, m orchestrator.StepWork) (teamrights.Scope, error)
}

// GPUJobs runs containers on GPU capacity: the Batch runner
// (batchstep.Runner).
type GPUJobs interface {
	SubmitGPU(ctx context.Context, m orchestrator.StepWork, c batchstep.Container) (orchestrator.Handover, *engine.StepFinished, error)
	CancelJob(ctx context.Context, job, reason string) error
}

// Runner executes Ecs and Kubernetes steps. It implements
// orchestrator.JobRunner.
type Runner struct {
	handover.Always
	cfg Config
	// families caches the task definitions registered or found, by
	// family.
	families sync.Map
}

var _ orchestrator.JobRunner = (*Runner)(nil)

// New returns a Runner.
func New(cfg Config) (*Runner, error) {
	switch {
	case cfg.ECS == nil || cfg.Logs == nil:
		return nil, errors.New("ecsstep: ECS and CloudWatch Logs clients are required")
	case cfg.Cluster == "" || len(cfg.Subnets) == 0:
		return nil, errors.New("ecsstep: a cluster and subnets are required")
	case cfg.Family == "" || cfg.StartedBy == "" || cfg.LogGroup == "" || cfg.Region == "":
		return nil, errors.New("ecsstep: Family, StartedBy, LogGroup and Region are required")
	}
	return &Runner{Always: handover.Always{Why: "an ECS step runs as a task, handed over"}, cfg: cfg}, nil
}

// task is the task a step's params describe.
type task struct {
	image          string
	taskDefinition string
	entryPoint     []string
	command        []string
	env            map[string]string
	cpu, memory    int // Fargate CPU units and MiB; 0: unset
	disk           int // GiB; 0: unset
	container      string
	role           string // the task role; "" is Config.TaskRoleARN
	gpu            int    // GPUs; 0: none
}

// Dispatch runs the step's task.
func (r *Runner) Dispatch(ctx context.Context, m orchestrator.StepWork, _ string) (orchestrator.Handover, *engine.StepFinished, error) {
	var t task
	var notebookOut string
	var err error
	if m.StepType == model.StepNotebook {
		t, notebookOut, err = r.parseNotebook(m)
	} else {
		t, err = parseTask(m.StepType, m.Params)
	}
	if err != nil {
		return handover.Refuse(err.Error())
	}
	scope, err := r.teamScope(ctx, m, &t)
	if msg, refused := teamrights.IsRefusal(err); refused {
		return handover.Refuse(msg)
	} else if err != nil {
		return orchestrator.Handover{}, nil, err
	}
	if t.gpu > 0 {
		return r.dispatchGPU(ctx, m, t)
	}
	if t.cpu, t.memory, err = fargateSize(t.cpu, t.memory); err != nil {
		return handover.Refuse(err.Error())
	}
	def := t.taskDefinition
	container := t.container
	if t.image != "" {
		if err := r.cfg.AllowImages.Check(t.image); errors.Is(err, images.ErrNotAllowed) {
			return handover.Refuse(fmt.Sprintf("%v; add its repository (or a prefix of it) to %s", err, ImagesSetting))
		} else if err != nil {
			return handover.Refuse(err.Error())
		}
		def, err = r.imageDefinition(ctx, t)
		container = ContainerName
	} else {
		if !r.allowedDefinition(def) {
			return handover.Refuse(fmt.Sprintf("task definition %q is not on the ECS step allow-list (%s); add its family to the stack's ecsTaskDefinitions setting",
				def, strings.Join(r.cfg.AllowTaskDefinitions, ", ")))
		}
		if container == "" {
			container, err = r.firstContainer(ctx, def)
		}
	}
	if err != nil {
		return failed(err)
	}
	override := types.ContainerOverride{Name: aws.String(container), Environment: joboutput.Env(m, t.env, keyValue)}
	if t.command != nil {
		override.Command = t.command
	}
	over := &types.TaskOverride{ContainerOverrides: []types.ContainerOverride{override}}
	if t.cpu > 0 {
		over.Cpu, over.Memory = aws.String(strconv.Itoa(t.cpu)), aws.String(strconv.Itoa(t.memory))
		if t.image != "" {
			over.ContainerOverrides[0].Memory = aws.Int32(int32(t.memory))
		}
	}
	if t.disk > 0 {
		over.EphemeralStorage = &types.EphemeralStorage{SizeInGiB: int32(t.disk)}
	}
	if scope.Enforced {
		// A named task definition's own role gives way to the team's.
		over.TaskRoleArn = aws.String(t.role)
	}
	public := types.AssignPublicIpDisabled
	if r.cfg.AssignPublicIP {
		public = types.AssignPublicIpEnabled
	}
	out, err := r.cfg.ECS.RunTask(ctx, &ecs.RunTaskInput{
		Cluster: aws.String(r.cfg.Cluster), TaskDefinition: aws.String(def), LaunchType: types.LaunchTypeFargate,
		Count: aws.Int32(1), StartedBy: aws.String(r.cfg.StartedBy), Overrides: over,
		NetworkConfiguration: &types.NetworkConfiguration{AwsvpcConfiguration: &types.AwsVpcConfiguration{
			Subnets: r.cfg.Subnets, SecurityGroups: r.cfg.SecurityGroups, AssignPublicIp: public,
		}},
	})
	if err != nil {
		return failed(err)
	}
	if len(out.Tasks) == 0 {
		reason := "no task started"
		if len(out.Failures) > 0 {
			reason = aws.ToString(out.Failures[0].Reason) + " " + aws.ToString(out.Failures[0].Detail)
		}
		// Capacity and placement failures: retried as a platform error.
		return orchestrator.Handover{}, nil, fmt.Errorf("run ECS task: %s", strings.TrimSpace(reason))
	}
	arn := aws.ToString(out.Tasks[0].TaskArn)
	target := "ECS task " + arn
	if t.image != "" {
		target += "; logs: " + LogsURL(r.cfg.Region, r.cfg.LogGroup, "maestro/"+ContainerName+"/"+arn[strings.LastIndex(arn, "/")+1:])
	}
	if notebookOut != "" {
		target += "; notebook: " + notebookOut
	}
	return orchestrator.Handover{Target: target, Job: JobPrefix + arn}, nil, nil
}

// LogsURL is the CloudWatch console's page of a log stream.
func LogsURL(region, group, stream string) string {
	// The console escapes path parts twice, '%' as '$25'.
	esc := func(s string) string { return strings.ReplaceAll(url.QueryEscape(url.QueryEscape(s)), "%", "$") }
	return fmt.Sprintf("https://%s.console.aws.amazon.com/cloudwatch/home?region=%s#logsV2:log-groups/log-group/%s/log-events/%s",
		region, region, esc(group), esc(stream))
}

// failed sorts an ECS error: a request ECS refuses is fatal, the rest
// (throttling, service errors) platform errors.
func failed(err error) (orchestrator.Handover, *engine.StepFinished, error) {
	var api smithy.APIError
	if errors.As(err, &api) {
		switch api.ErrorCode() {
		case "ClientException", "InvalidParameterException", "AccessDeniedException", "ClusterNotFoundException",
			"PlatformUnknownException", "PlatformTaskDefinitionIncompatibilityException", "UnsupportedFeatureException":
			return orchestrator.Handover{}, &engine.StepFinished{Outcome: engine.OutcomeFatalError,
				Message: fmt.Sprintf("ECS: %s: %s", api.ErrorCode(), api.ErrorMessage())}, nil
		}
	}
	return orchestrator.Handover{}, nil, fmt.Errorf("ECS: %w", err)
}

// imageDefinition returns the task definition that runs t's image and
// entry point, registering it when it does not exist.
func (r *Runner) imageDefinition(ctx context.Context, t task) (string, error) {
	sum := sha256.New()
	role := r.cfg.TaskRoleARN
	if t.role != "" {
		role = t.role
	}
	for _, part := range append([]string{t.image, r.cfg.ExecutionRoleARN, role, r.cfg.LogGroup}, t.entryPoint...) {
		sum.Write([]byte(part))
		sum.Write([]byte{0})
	}
	family := r.cfg.Family + "-" + hex.EncodeToString(sum.Sum(nil))[:16]
	if arn, ok := r.families.Load(family); ok {
		return arn.(string), nil
	}
	got, err := r.cfg.ECS.DescribeTaskDefinition(ctx, &ecs.DescribeTaskDefinitionInput{TaskDefinition: aws.String(family)})
	if err == nil && got.TaskDefinition != nil && got.TaskDefinition.Status == types.TaskDefinitionStatusActive {
		arn := aws.ToString(got.TaskDefinition.TaskDefinitionArn)
		r.families.Store(family, arn)
		return arn, nil
	}
	container := types.ContainerDefinition{
		Name: aws.String(ContainerName), Image: aws.String(t.image), Essential: aws.Bool(true), EntryPoint: t.entryPoint,
		Memory: aws.Int32(512), // the smallest task's; each run overrides it with its task's memory
		LogConfiguration: &types.LogConfiguration{LogDriver: types.LogDriverAwslogs, Options: map[string]string{
			"awslogs-group": r.cfg.LogGroup, "awslogs-region": r.cfg.Region, "awslogs-stream-prefix": "maestro",
		}},
	}
	in := &ecs.RegisterTaskDefinitionInput{
		Family: aws.String(family), ContainerDefinitions: []types.ContainerDefinition{container},
		RequiresCompatibilities: []types.Compatibility{types.CompatibilityFargate}, NetworkMode: types.NetworkModeAwsvpc,
		Cpu: aws.String("256"), Memory: aws.String("512"),
	}
	if r.cfg.ExecutionRoleARN != "" {
		in.ExecutionRoleArn = aws.String(r.cfg.ExecutionRoleARN)
	}
	if role != "" {
		in.TaskRoleArn = aws.String(role)
	}
	reg, err := r.cfg.ECS.RegisterTaskDefinition(ctx, in)
	if err != nil {
		return "", fmt.Errorf("register task definition %s: %w", family, err)
	}
	arn := aws.ToString(reg.TaskDefinition.TaskDefinitionArn)
	r.families.Store(family, arn)
	return arn, nil
}

// firstContainer names the first container of task definition def.
func (r *Runner) firstContainer(ctx context.Context, def string) (string, error) {
	if name, ok := r.families.Load("container:" + def); ok {
		return name.(string), nil
	}
	got, err := r.cfg.ECS.DescribeTaskDefinition(ctx, &ecs.DescribeTaskDefinitionInput{TaskDefinition: aws.String(def)})
	if err != nil {
		return "", fmt.Errorf("describe task definition %s: %w", def, err)
	}
	if got.TaskDefinition == nil || len(got.TaskDefinition.ContainerDefinitions) == 0 {
		return "", fmt.Errorf("task definition %s has no container", def)
	}
	name := aws.ToString(got.TaskDefinition.ContainerDefinitions[0].Name)
	r.families.Store("container:"+def, name)
	return name, nil
}

// allowedDefinition reports whether task definition def (family,
// family:revision or ARN) is of an allowed family.
func (r *Runner) allowedDefinition(def string) bool {
	family := def
	if i := strings.LastIndex(family, "task-definition/"); i >= 0 {
		family = family[i+len("task-definition/"):]
	}
	family, _, _ = strings.Cut(family, ":")
	return slices.Contains(r.cfg.AllowTaskDefinitions, family)
}

// keyValue is an environment variable of a task's container.
func keyValue(name, value string) types.KeyValuePair {
	return types.KeyValuePair{Name: aws.String(name), Value: aws.String(value)}
}

// CancelJob stops the task, or terminates the Batch job of a step that
// requested GPUs.
func (r *Runner) CancelJob(ctx context.Context, job, reason string) error {
	if strings.HasPrefix(job, batchstep.JobPrefix) && r.cfg.GPU != nil {
		return r.cfg.GPU.CancelJob(ctx, job, reason)
	}
	arn, ok := strings.CutPrefix(job, JobPrefix)
	if !ok {
		return fmt.Errorf("ecsstep: %q is not an ECS task", job)
	}
	if len(reason) > 255 {
		reason = reason[:255]
	}
	_, err := r.cfg.ECS.StopTask(ctx, &ecs.StopTaskInput{Cluster: aws.String(r.cfg.Cluster), Task: aws.String(arn), Reason: aws.String(reason)})
	return handover.Cancelled(err, "stop ECS task "+arn, "InvalidParameterException", "ClientException")
}

// taskStateChange is the part of an "ECS Task State Change" event's detail
// the runner reads.
type taskStateChange struct {
	TaskArn       string `json:"taskArn"`
	LastStatus    string `json:"lastStatus"`
	StartedBy     string `json:"startedBy"`
	StopCode      string `json:"stopCode"`
	StoppedReason string `json:"stoppedReason"`
	Group         string `json:"group"`
	Containers    []struct {
		Name     string `json:"name"`
		ExitCode *int   `json:"exitCode"`
		Reason   string `json:"reason"`
	} `json:"containers"`
	// What Fargate bills: the task's size, launch type, architecture and
	// the span from its image pull's start to its end.
	LaunchType       string `json:"launchType"`
	CPU              string `json:"cpu"`
	Memory           string `json:"memory"`
	PullStartedAt    string `json:"pullStartedAt"`
	StartedAt        string `json:"startedAt"`
	StoppedAt        string `json:"stoppedAt"`
	EphemeralStorage struct {
		SizeInGiB int `json:"sizeInGiB"`
	} `json:"ephemeralStorage"`
	Attributes []struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	} `json:"attributes"`
	Overrides struct {
		ContainerOverrides []struct {
			Name        string `json:"name"`
			Environment []struct {
				Name  string `json:"name"`
				Value string `json:"value"`
			} `json:"environment"`
		} `json:"containerOverrides"`
	} `json:"overrides"`
}

// compute returns what Fargate billed a stopped task for: its vCPU and
// memory (and ephemeral storage past the free 20 GiB) from the start of its
// image pull (or its start, when it pulled nothing) to its stop, at least a
// minute. A task on EC2 (its instances are billed, not the task) or one
// that never started is billed nothing.
func (d taskStateChange) compute() pricing.Usage {
	if d.LaunchType != "FARGATE" {
		return nil
	}
	cpu, err1 := strconv.Atoi(d.CPU)
	mem, err2 := strconv.Atoi(d.Memory)
	start, err3 := time.Parse(time.RFC3339Nano, d.PullStartedAt)
	if err3 != nil {
		start, err3 = time.Parse(time.RFC3339Nano, d.StartedAt)
	}
	stop, err4 := time.Parse(time.RFC3339Nano, d.StoppedAt)
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
		return nil
	}
	arm := false
	for _, a := range d.Attributes {
		arm = arm || (a.Name == "ecs.cpu-architecture" && a.Value == "arm64")
	}
	return pricing.Fargate(cpu, mem, d.EphemeralStorage.SizeInGiB, arm, start.UnixMilli(), stop.UnixMilli())
}

// notebook returns the executed notebook's URI a Notebook step's task
// was given (EnvNotebookOutput), or "".
func (d taskStateChange) notebook() string {
	for _, c := range d.Overrides.ContainerOverrides {
		for _, e := range c.Environment {
			if c.Name == ContainerName && e.Name == EnvNotebookOutput {
				return e.Value
			}
		}
	}
	return ""
}

// JobEnded reads an "ECS Task State Change" event of a stopped task this
// runner started.
func (r *Runner) JobEnded(ctx context.Context, ev orchestrator.JobEvent) (string, orchestrator.TaskCompletion, bool, error) {
	d, ok, err := handover.Detail[taskStateChange](ev, "aws.ecs", "ECS Task State Change")
	if !ok || d.LastStatus != "STOPPED" || d.StartedBy != r.cfg.StartedBy || d.TaskArn == "" {
		return "", orchestrator.TaskCompletion{}, false, err
	}
	job := JobPrefix + d.TaskArn
	compute := d.compute()
	fail := func(kind engine.Outcome, msg string) (string, orchestrator.TaskCompletion, bool, error) {
		return job, orchestrator.TaskCompletion{Action: orchestrator.TaskFailure, Error: kind, Message: msg, Compute: compute}, true, nil
	}
	switch d.StopCode {
	case "TaskFailedToStart", "SpotInterruption", "TerminationNotice", "ServiceSchedulerInitiated":
		return fail(engine.OutcomePlatformError, fmt.Sprintf("ECS task %s: %s", d.StopCode, d.StoppedReason))
	}
	var exit *int
	reason := d.StoppedReason
	for i, c := range d.Containers {
		if i == 0 || c.Name == ContainerName {
			exit = c.ExitCode
			if c.Reason != "" {
				reason = c.Reason
			}
		}
	}
	if exit == nil {
		return fail(engine.OutcomePlatformError, "ECS task stopped without an exit code: "+d.StoppedReason)
	}
	out, found, err := r.output(ctx, d.TaskArn, d.Containers)
	if err != nil && *exit == 0 {
		return fail(engine.OutcomeFatalError, err.Error())
	}
	nb := d.notebook()
	if *exit != 0 {
		msg := joboutput.ExitMessage(*exit, reason)
		if d.StopCode == "UserInitiated" {
			msg = "ECS task stopped: " + d.StoppedReason
		}
		if nb != "" {
			msg += "; executed notebook: " + nb
		}
		c := joboutput.ExitFailure(out, found, msg)
		c.Compute = compute
		return job, c, true, nil
	}
	done := orchestrator.TaskCompletion{Action: orchestrator.TaskSuccess, Outputs: out.Params, Signals: out.Signals, Compute: compute}
	if nb != "" {
		done.Message = "executed notebook: " + nb
	}
	return job, done, true, nil
}

// output reads the output a task of a registered definition printed: the
// tail of its log stream (maestro/<container>/<task id>).
func (r *Runner) output(ctx context.Context, taskARN string, containers []struct {
	Name     string `json:"name"`
	ExitCode *int   `json:"exitCode"`
	Reason   string `json:"reason"`
}) (joboutput.Output, bool, error) {
	ours := false
	for _, c := range containers {
		ours = ours || c.Name == ContainerName
	}
	if !ours {
		return joboutput.Output{}, false, nil // a user's task definition: its logs are its own
	}
	id := taskARN[strings.LastIndex(taskARN, "/")+1:]
	return joboutput.Tail(ctx, r.cfg.Logs, r.cfg.LogGroup, "maestro/"+ContainerName+"/"+id)
}

// parseTask reads an Ecs step's `ecs` param or a Kubernetes step's
// `kubernetes` param.
func parseTask(typ model.StepType, params engine.Values) (task, error) {
	name := ParamECS
	if typ == model.StepKubernetes {
		name = ParamKubernetes
	}
	f, err := stepparam.Read(params, name)
	if err != nil {
		return task{}, err
	}
	var t task
	t.image = f.Str("image")
	t.env = f.Env("env")
	if typ == model.StepKubernetes {
		t.entryPoint, t.command = f.Strs("command"), f.Strs("args")
		t.cpu = f.Quantity("cpu", cpuUnits)
		t.memory = f.Quantity("memory", mebibytes)
		t.disk = f.Quantity("disk", gibibytes)
		t.gpu = f.Quantity("gpu", gpuCount)
		if t.gpu > 0 && t.disk > 0 {
			f.Fail("disk: a step with gpu runs as a Batch job on EC2, which has no per-job disk size (it takes its instance's storage); drop disk")
		}
		f.Only("not a field of this step", "image", "command", "args", "env", "cpu", "memory", "disk", "gpu", "app_name", "owner_email", "job_deduplication_key", "pre_stop")
		if t.image == "" {
			f.Fail("image: required")
		}
	} else {
		t.taskDefinition = f.Str("task_definition")
		t.entryPoint, t.command = f.Strs("entry_point"), f.Strs("command")
		t.cpu = f.Quantity("cpu", ecsCPU)
		t.memory = f.Quantity("memory", ecsMemory)
		t.disk = f.Quantity("disk", gibibytes)
		t.container = f.Str("container_name")
		f.Only("not a field of this step", "image", "task_definition", "entry_point", "command", "env", "cpu", "memory", "disk", "container_name")
		switch {
		case (t.image == "") == (t.taskDefinition == ""):
			f.Fail("needs exactly one of image and task_definition")
		case t.taskDefinition != "" && t.entryPoint != nil:
			f.Fail("entry_point: only with image (a task definition's entry point is its own)")
		}
	}
	if t.disk != 0 && t.gpu == 0 && (t.disk < 21 || t.disk > 200) {
		f.Fail(fmt.Sprintf("disk: %d GiB is outside Fargate's 21-200", t.disk))
	}
	return t, f.Err()
}

// cpuUnits reads a Kubernetes CPU quantity ("2", "0.5", "500m") as ECS CPU
// units (1024 per vCPU), rounded up.
func cpuUnits(s string) (int, error) {
	if n, ok := strings.CutSuffix(s, "m"); ok {
		v, err := strconv.ParseFloat(n, 64)
		if err != nil || v <= 0 {
			return 0, fmt.Errorf("%q is not a CPU quantity", s)
		}
		return int(math.Ceil(v * 1024 / 1000)), nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("%q is not a CPU quantity", s)
	}
	return int(math.Ceil(v * 1024)), nil
}

// quantitySuffixes are Kubernetes' memory suffixes and their bytes.
var quantitySuffixes = []struct {
	suffix string
	bytes  float64
}{
	{"Ki", 1 << 10}, {"Mi", 1 << 20}, {"Gi", 1 << 30}, {"Ti", 1 << 40},
	{"k", 1e3}, {"K", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12},
}

// bytesOf reads a Kubernetes memory quantity ("4Gi", "512Mi", "1G",
// "1073741824") in bytes.
func bytesOf(s string) (float64, error) {
	mult := 1.0
	for _, q := range quantitySuffixes {
		if n, ok := strings.CutSuffix(s, q.suffix); ok {
			s, mult = n, q.bytes
			break
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("%q is not a memory quantity", s)
	}
	return v * mult, nil
}

func mebibytes(s string) (int, error) {
	b, err := bytesOf(s)
	return int(math.Ceil(b / (1 << 20))), err
}

func gibibytes(s string) (int, error) {
	b, err := bytesOf(s)
	return int(math.Ceil(b / (1 << 30))), err
}

// ecsCPU reads ECS CPU: units ("1024") or vCPUs ("1 vCPU", "0.5 vcpu").
func ecsCPU(s string) (int, error) { return ecsSize(s, "vcpu", "CPU", "units, or N vCPU") }

// ecsMemory reads ECS memory: MiB ("2048") or GB ("2 GB").
func ecsMemory(s string) (int, error) { return ecsSize(s, "gb", "memory", "MiB, or N GB") }

// ecsSize reads an ECS size: a whole number of units, or a number of
// 1024 units followed by suffix (in any case). what names the size in
// errors, forms its forms.
func ecsSize(s, suffix, what, forms string) (int, error) {
	l := strings.ToLower(s)
	if n, ok := strings.CutSuffix(l, suffix); ok {
		v, err := strconv.ParseFloat(strings.TrimSpace(n), 64)
		if err != nil || v <= 0 {
			return 0, fmt.Errorf("%q is not an ECS %s size", s, what)
		}
		return int(math.Ceil(v * 1024)), nil
	}
	n, err := strconv.Atoi(l)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%q is not an ECS %s size (%s)", s, what, forms)
	}
	return n, nil
}

// fargateSizes are Fargate's CPU sizes and, for each, its memory range
// and step in MiB.
var fargateSizes = []struct{ cpu, minMem, maxMem, step int }{
	{256, 512, 2048, 512}, // 512, 1024, 2048 (1536 is not offered; rounded up below)
	{512, 1024, 4096, 1024},
	{1024, 2048, 8192, 1024},
	{2048, 4096, 16384, 1024},
	{4096, 8192, 30720, 1024},
	{8192, 16384, 61440, 4096},
	{16384, 32768, 122880, 8192},
}

// fargateSize is the smallest Fargate size with at least cpu units and
// memory MiB; 0, 0 when neither is set (the task definition's own).
func fargateSize(cpu, memory int) (int, int, error) {
	if cpu == 0 && memory == 0 {
		return 0, 0, nil
	}
	for _, s := range fargateSizes {
		if s.cpu < cpu || s.maxMem < memory {
			continue
		}
		m := max(memory, s.minMem)
		m = (m + s.step - 1) / s.step * s.step
		if s.cpu == 256 && m == 1536 {
			m = 2048
		}
		return s.cpu, m, nil
	}
	return 0, 0, fmt.Errorf("no Fargate size has %d CPU units and %d MiB (at most 16 vCPU and 120 GiB)", cpu, memory)
}
