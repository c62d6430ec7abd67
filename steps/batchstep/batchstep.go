// Package batchstep runs Batch steps: the step submits an AWS Batch job and
// is handed over as it; EventBridge's "Batch Job State Change" event for
// the job's end (SUCCEEDED or FAILED) ends the step, and stopping the step
// terminates the job. The step's `batch` MAP param:
//
//	job_queue       the queue (name or ARN, on the allow-list)
//	job_definition  the job definition (name, name:revision or ARN, of an allowed name)
//	command         the container's command (STRING_ARRAY)
//	env             environment variables (STRING_MAP)
//	vcpus, memory   resource overrides (vCPUs; MiB)
//	gpus            GPUs (EC2 compute environments)
//	array_size      run an array job of that many children (2-10000)
//	job_name        the job's name (default maestro-<workflow>-<step>)
//
// A job that succeeded succeeds; one that failed with an exit code is a user
// error (retried per the retry policy, unless its output says it is not
// retryable), one that failed without (it never ran: capacity, image pull)
// a platform error. When the job's container log stream is named in the
// event, its tail is read for Maestro's output marker (see joboutput).
package batchstep

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/batch"
	"github.com/aws/aws-sdk-go-v2/service/batch/types"
	"github.com/aws/smithy-go"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/orchestrator"
	"github.com/maestro-serverless/maestro/pricing"
	"github.com/maestro-serverless/maestro/steps/handover"
	"github.com/maestro-serverless/maestro/steps/joboutput"
	"github.com/maestro-serverless/maestro/steps/stepparam"
	"github.com/maestro-serverless/maestro/teamrights"
)

// ParamBatch is the step param this runner reads.
const ParamBatch = "batch"

// JobPrefix starts the job names of Batch jobs ("batch:<job id>").
const JobPrefix = "batch:"

// DefaultLogGroup is where Batch jobs log unless their definition says
// otherwise.
const DefaultLogGroup = "/aws/batch/job"

// Client is the part of the Batch client the runner uses.
type Client interface {
	SubmitJob(ctx context.Context, in *batch.SubmitJobInput, opts ...func(*batch.Options)) (*batch.SubmitJobOutput, error)
	TerminateJob(ctx context.Context, in *batch.TerminateJobInput, opts ...func(*batch.Options)) (*batch.TerminateJobOutput, error)
	RegisterJobDefinition(ctx context.Context, in *batch.RegisterJobDefinitionInput, opts ...func(*batch.Options)) (*batch.RegisterJobDefinitionOutput, error)
	DescribeJobDefinitions(ctx context.Context, in *batch.DescribeJobDefinitionsInput, opts ...func(*batch.Options)) (*batch.DescribeJobDefinitionsOutput, error)
}

// Config configures a Runner.
type Config struct {
	Batch Client
	Logs  joboutput.Logs
	// AllowQueues (names or ARNs) and AllowDefinitions (names) list what
	// steps may use; empty allows none.
	AllowQueues, AllowDefinitions []string
	// GPUJobQueue (a name or an ARN) is where Kubernetes steps that
	// request GPUs run (SubmitGPU); empty: nowhere. GPUJobRoleARN is the
	// role of their job definitions (the ECS task role), GPUFamily
	// prefixes those definitions' names (default maestro-gpu).
	GPUJobQueue, GPUJobRoleARN, GPUFamily string
	// Rights returns the team rights a step attempt launches with
	// (steprights.Resolver.Scope); nil, or a Scope not Enforced, submits
	// every job as its definition says. See rights.go.
	Rights func(ctx context.Context, m orchestrator.StepWork) (teamrights.Scope, error)
}

// Runner executes Batch steps. It implements orchestrator.JobRunner.
type Runner struct {
	handover.Always
	cfg Config
	// definitions caches the GPU job definitions registered or found, by
	// name.
	definitions sync.Map
}

var _ orchestrator.JobRunner = (*Runner)(nil)

// New returns a Runner.
func New(cfg Config) (*Runner, error) {
	if cfg.Batch == nil || cfg.Logs == nil {
		return nil, errors.New("batchstep: Batch and CloudWatch Logs clients are required")
	}
	return &Runner{Always: handover.Always{Why: "a Batch step runs as a job, handed over"}, cfg: cfg}, nil
}

type job struct {
	queue, definition, name string
	command                 []string
	env                     map[string]string
	vcpus, memory, gpus     int
	arraySize               int
}

var jobNameChars = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// Dispatch submits the step's job.
func (r *Runner) Dispatch(ctx context.Context, m orchestrator.StepWork, _ string) (orchestrator.Handover, *engine.StepFinished, error) {
	j, err := parseJob(m.Params)
	if err != nil {
		return handover.Refuse(err.Error())
	}
	if !allowedQueue(r.cfg.AllowQueues, j.queue) {
		return handover.Refuse(fmt.Sprintf("job queue %q is not on the Batch step allow-list; add it to the stack's batchJobQueues setting", j.queue))
	}
	if !slices.Contains(r.cfg.AllowDefinitions, definitionName(j.definition)) {
		return handover.Refuse(fmt.Sprintf("job definition %q is not on the Batch step allow-list; add its name to the stack's batchJobDefinitions setting", j.definition))
	}
	def, err := r.teamDefinition(ctx, m, j.definition)
	if msg, refused := teamrights.IsRefusal(err); refused {
		return handover.Refuse(msg)
	} else if err != nil {
		return failed(err, "describe the job definition")
	}
	j.definition = def
	over := &types.ContainerOverrides{Command: j.command, Environment: joboutput.Env(m, j.env, keyValue)}
	for _, rr := range []struct {
		t types.ResourceType
		n int
	}{{types.ResourceTypeVcpu, j.vcpus}, {types.ResourceTypeMemory, j.memory}, {types.ResourceTypeGpu, j.gpus}} {
		if rr.n > 0 {
			over.ResourceRequirements = append(over.ResourceRequirements, types.ResourceRequirement{Type: rr.t, Value: aws.String(strconv.Itoa(rr.n))})
		}
	}
	in := &batch.SubmitJobInput{JobName: aws.String(jobName(j.name, m)), JobQueue: aws.String(j.queue), JobDefinition: aws.String(j.definition),
		ContainerOverrides: over}
	if j.arraySize > 0 {
		in.ArrayProperties = &types.ArrayProperties{Size: aws.Int32(int32(j.arraySize))}
	}
	return r.submit(ctx, in, j.queue)
}

// jobName is a job's name: name, or maestro-<workflow>-<step>, in the
// characters and length Batch allows.
func jobName(name string, m orchestrator.StepWork) string {
	if name == "" {
		name = "maestro-" + m.WorkflowID + "-" + m.StepID
	}
	name = jobNameChars.ReplaceAllString(name, "-")
	if len(name) > 128 {
		name = name[:128]
	}
	return name
}

// submit submits a job and hands the step over as it; a request Batch
// refuses fails the step.
func (r *Runner) submit(ctx context.Context, in *batch.SubmitJobInput, queue string) (orchestrator.Handover, *engine.StepFinished, error) {
	out, err := r.cfg.Batch.SubmitJob(ctx, in)
	if err != nil {
		return failed(err, "submit job")
	}
	id := aws.ToString(out.JobId)
	return orchestrator.Handover{Target: "Batch job " + id + " on " + queue, Job: JobPrefix + id}, nil, nil
}

// failed sorts a Batch error: a request Batch refuses (ClientException)
// is fatal, the rest (throttling, service errors) platform errors.
func failed(err error, what string) (orchestrator.Handover, *engine.StepFinished, error) {
	var api smithy.APIError
	if errors.As(err, &api) && api.ErrorCode() == "ClientException" {
		return handover.Refuse(fmt.Sprintf("Batch: %s: %s", api.ErrorCode(), api.ErrorMessage()))
	}
	return orchestrator.Handover{}, nil, fmt.Errorf("Batch: %s: %w", what, err)
}

// allowedQueue reports whether queue (a name or an ARN) is allowed: an
// entry names it by the same form, or by its name.
func allowedQueue(allow []string, queue string) bool {
	name := queue[strings.LastIndex(queue, "/")+1:]
	for _, a := range allow {
		if a == queue || (!strings.HasPrefix(a, "arn:") && a == name) || (strings.HasPrefix(a, "arn:") && !strings.HasPrefix(queue, "arn:") && strings.HasSuffix(a, "/"+queue)) {
			return true
		}
	}
	return false
}

// definitionName is a job definition's name: "name", "name:3" or an ARN
// ending job-definition/name:3.
func definitionName(def string) string {
	if i := strings.LastIndex(def, "job-definition/"); i >= 0 {
		def = def[i+len("job-definition/"):]
	}
	name, _, _ := strings.Cut(def, ":")
	return name
}

// keyValue is an environment variable of a job.
func keyValue(name, value string) types.KeyValuePair {
	return types.KeyValuePair{Name: aws.String(name), Value: aws.String(value)}
}

// CancelJob terminates the job.
func (r *Runner) CancelJob(ctx context.Context, job, reason string) error {
	id, ok := strings.CutPrefix(job, JobPrefix)
	if !ok {
		return fmt.Errorf("batchstep: %q is not a Batch job", job)
	}
	_, err := r.cfg.Batch.TerminateJob(ctx, &batch.TerminateJobInput{JobId: aws.String(id), Reason: aws.String(reason)})
	return handover.Cancelled(err, "terminate Batch job "+id, "ClientException")
}

// jobStateChange is the part of a "Batch Job State Change" event's detail
// the runner reads.
type jobStateChange struct {
	JobID           string `json:"jobId"`
	Status          string `json:"status"`
	StatusReason    string `json:"statusReason"`
	ArrayProperties struct {
		Index *int `json:"index"`
	} `json:"arrayProperties"`
	Container struct {
		ExitCode      *int   `json:"exitCode"`
		Reason        string `json:"reason"`
		LogStreamName string `json:"logStreamName"`
		// What a job on Fargate is billed for: its size, storage and
		// architecture.
		ResourceRequirements []struct {
			Type  string `json:"type"`
			Value string `json:"value"`
		} `json:"resourceRequirements"`
		EphemeralStorage struct {
			SizeInGiB int `json:"sizeInGiB"`
		} `json:"ephemeralStorage"`
		RuntimePlatform struct {
			CPUArchitecture string `json:"cpuArchitecture"`
		} `json:"runtimePlatform"`
	} `json:"container"`
	// PlatformCapabilities says where the job ran: FARGATE or EC2.
	PlatformCapabilities []string `json:"platformCapabilities"`
	// StartedAt and StoppedAt are unix ms.
	StartedAt int64 `json:"startedAt"`
	StoppedAt int64 `json:"stoppedAt"`
}

// compute returns what Fargate billed a job on a Fargate compute
// environment for: its vCPUs and memory from its start to its stop, at
// least a minute. A job on EC2 is billed nothing of its own (its compute
// environment's instances are), nor is one that never started.
func (d jobStateChange) compute() pricing.Usage {
	if !slices.Contains(d.PlatformCapabilities, "FARGATE") || d.StartedAt <= 0 || d.StoppedAt < d.StartedAt {
		return nil
	}
	var vcpus float64
	var mem int
	for _, r := range d.Container.ResourceRequirements {
		switch r.Type {
		case "VCPU":
			vcpus, _ = strconv.ParseFloat(r.Value, 64)
		case "MEMORY":
			mem, _ = strconv.Atoi(r.Value)
		}
	}
	cpu := int(math.Round(vcpus * 1024))
	arm := strings.EqualFold(d.Container.RuntimePlatform.CPUArchitecture, "ARM64")
	return pricing.Fargate(cpu, mem, d.Container.EphemeralStorage.SizeInGiB, arm, d.StartedAt, d.StoppedAt)
}

// JobEnded reads a "Batch Job State Change" event of a job's end (an array
// job's children are left out: the parent's end is the step's).
func (r *Runner) JobEnded(ctx context.Context, ev orchestrator.JobEvent) (string, orchestrator.TaskCompletion, bool, error) {
	d, ok, err := handover.Detail[jobStateChange](ev, "aws.batch", "Batch Job State Change")
	if !ok || (d.Status != "SUCCEEDED" && d.Status != "FAILED") || d.JobID == "" || d.ArrayProperties.Index != nil {
		return "", orchestrator.TaskCompletion{}, false, err
	}
	job := JobPrefix + d.JobID
	c := d.ended(ctx, r.cfg.Logs)
	c.Compute = d.compute()
	return job, c, true, nil
}

// ended is how a job that ended ends its step.
func (d jobStateChange) ended(ctx context.Context, logs joboutput.Logs) orchestrator.TaskCompletion {
	var err error
	var out joboutput.Output
	found := false
	if d.Container.LogStreamName != "" {
		out, found, err = joboutput.Tail(ctx, logs, DefaultLogGroup, d.Container.LogStreamName)
		if err != nil && d.Status == "SUCCEEDED" {
			return orchestrator.TaskCompletion{Action: orchestrator.TaskFailure, Error: engine.OutcomeFatalError, Message: err.Error()}
		}
	}
	if d.Status == "SUCCEEDED" {
		return orchestrator.TaskCompletion{Action: orchestrator.TaskSuccess, Outputs: out.Params, Signals: out.Signals}
	}
	reason := strings.TrimSpace(d.StatusReason + " " + d.Container.Reason)
	if d.Container.ExitCode == nil {
		return orchestrator.TaskCompletion{Action: orchestrator.TaskFailure, Error: engine.OutcomePlatformError,
			Message: "Batch job failed without running: " + reason}
	}
	return joboutput.ExitFailure(out, found, joboutput.ExitMessage(*d.Container.ExitCode, reason))
}

// parseJob reads the step's `batch` param. Of several problems, the first
// in alphabetical order is reported.
func parseJob(params engine.Values) (job, error) {
	f, err := stepparam.Read(params, ParamBatch)
	if err != nil {
		return job{}, err
	}
	j := job{
		queue: f.Str("job_queue"), definition: f.Str("job_definition"), name: f.Str("job_name"),
		command: f.Strs("command"), env: f.StrMap("env"),
		vcpus: f.Int("vcpus", 1, 256), memory: f.Int("memory", 4, 4<<20), gpus: f.Int("gpus", 1, 64),
		arraySize: f.Int("array_size", 2, 10000),
	}
	if j.queue == "" {
		f.Fail("job_queue: required")
	}
	if j.definition == "" {
		f.Fail("job_definition: required")
	}
	f.Only("not a Batch step field", "job_queue", "job_definition", "job_name", "command", "env", "vcpus", "memory", "gpus", "array_size")
	if problems := f.Problems(); len(problems) > 0 {
		return job{}, fmt.Errorf("param %s.%s", ParamBatch, slices.Min(problems))
	}
	return j, nil
}
