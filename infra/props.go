// Package infra is the AWS CDK app that deploys Maestro into an AWS account:
// the DynamoDB table, the SQS queues, the SNS topics, the signals bucket, the
// EventBridge Scheduler group and role, one Lambda function per handler of
// cmd/lambda, the IAM-authorized REST API, and the alarms and dashboard that
// watch them.
//
// Resource shapes (names, keys, indexes, queue attributes) come from
// [resources.ForStage], the definition the local stack provisions from too.
// [NewStack] builds the stack; [PropsFromContext] reads its settings from
// CDK context; the command infra/app is what cdk.json runs.
package infra

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"

	"github.com/maestro-serverless/maestro/images"
	"github.com/maestro-serverless/maestro/resources"
	"github.com/maestro-serverless/maestro/signals"
	"github.com/maestro-serverless/maestro/steps/httpstep"
)

// Handler names: each is a command under cmd/lambda and a directory of the
// asset directory holding its "bootstrap" binary (make build).
const (
	// HandlerAPI serves the REST API behind API Gateway.
	HandlerAPI = "api"
	// HandlerRouter forwards the table stream's outbox to the queues and
	// EventBridge Scheduler.
	HandlerRouter = "router"
	// HandlerDecider consumes the FIFO decision queue.
	HandlerDecider = "decider"
	// HandlerWorker consumes the work queue and runs steps.
	HandlerWorker = "worker"
	// HandlerSignals consumes the signal-ingest queue: S3 object events and
	// Signals topic messages become signals.
	HandlerSignals = "signals"
)

// Handlers returns the handler names in a fixed order.
func Handlers() []string {
	return []string{HandlerAPI, HandlerRouter, HandlerDecider, HandlerWorker, HandlerSignals}
}

// DefaultStage is the stage of a deployment that names none.
const DefaultStage = "dev"

// DefaultAssetDir is where make build puts <handler>/bootstrap, relative to
// the repository root (where cdk runs the app).
const DefaultAssetDir = "build/lambda"

// FunctionSettings are the knobs of one Lambda function.
type FunctionSettings struct {
	// MemoryMB is the function memory in MB (128 to 10240).
	MemoryMB int
	// Timeout is the function timeout (1s to 15m, whole seconds). A queue
	// consumer's timeout may not exceed its queue's visibility timeout.
	Timeout time.Duration
	// ReservedConcurrency reserves (and caps) concurrent executions, so a
	// burst of work (a bad definition, a flood of signals) cannot take the
	// account's whole Lambda concurrency, nor be starved by other
	// functions. Zero takes the handler's default (DefaultFunctionSettings);
	// NoReservedConcurrency reserves none (accounts whose concurrency limit
	// cannot spare it, such as new accounts limited to 10).
	ReservedConcurrency int
}

// NoReservedConcurrency is the FunctionSettings.ReservedConcurrency that
// reserves nothing: the function shares the account's unreserved pool.
const NoReservedConcurrency = -1

// DefaultFunctionSettings returns the settings of a handler that Props
// leaves unset. The queue consumers' timeouts equal their queues'
// visibility timeouts in resources.ForStage, the most Lambda accepts; the
// API stays under API Gateway's 29 s integration timeout. The reserved
// concurrencies (230 in all) leave an account with the default limit of
// 1,000 its required 100 unreserved, and more.
func DefaultFunctionSettings(handler string) FunctionSettings {
	mem := resources.FunctionMemoryMB(handler)
	switch handler {
	case HandlerAPI:
		return FunctionSettings{MemoryMB: mem, Timeout: 29 * time.Second, ReservedConcurrency: 50}
	case HandlerDecider:
		return FunctionSettings{MemoryMB: mem, Timeout: 30 * time.Second, ReservedConcurrency: 50}
	case HandlerSignals:
		return FunctionSettings{MemoryMB: mem, Timeout: 30 * time.Second, ReservedConcurrency: 20}
	case HandlerWorker:
		return FunctionSettings{MemoryMB: mem, Timeout: 60 * time.Second, ReservedConcurrency: 100}
	default: // HandlerRouter: one concurrent batch per stream shard
		return FunctionSettings{MemoryMB: mem, Timeout: 60 * time.Second, ReservedConcurrency: 10}
	}
}

// APISettings are the REST API's stage-wide throttling limits.
type APISettings struct {
	// RateLimit is the steady-state request rate per second.
	RateLimit float64
	// BurstLimit is the largest burst of requests.
	BurstLimit int
}

// DefaultAPISettings are the throttling limits Props leaves unset.
func DefaultAPISettings() APISettings { return APISettings{RateLimit: 50, BurstLimit: 100} }

// ECSSettings say where Ecs and Kubernetes steps run their tasks.
type ECSSettings struct {
	// Cluster is the ECS cluster's ARN; empty turns ECS steps off.
	Cluster string
	// Subnets and SecurityGroups place the tasks (awsvpc); AssignPublicIP
	// gives them public addresses (public subnets without a NAT gateway).
	Subnets, SecurityGroups []string
	AssignPublicIP          bool
	// TaskRoleARN is the role containers run with (optional): the worker
	// may pass it to ECS, and no other.
	TaskRoleARN string
	// TaskDefinitions are the task definition families steps may name
	// (images run in definitions the worker registers).
	TaskDefinitions []string
	// Images are the images steps may run (entries of package images:
	// registry/path prefixes and registry/path@sha256:... pins); none
	// allows no image. The API refuses a definition naming another image
	// as a literal, the worker a step that would run one, and the
	// execution role may pull from exactly the ECR repositories listed.
	Images []string
}

// DefaultLogRetentionDays is how long function and access logs are kept.
const DefaultLogRetentionDays = 30

// Props configures the stack. The zero value of every field but Stage means
// its default.
type Props struct {
	// StackProps are passed to the CDK stack (environment, description,
	// termination protection...). StackName defaults to "maestro-<stage>".
	StackProps awscdk.StackProps
	// Stage names the deployment; every physical name carries it, so
	// stages deploy side by side in one account. Empty means DefaultStage.
	Stage string
	// AssetDir holds <handler>/bootstrap for every handler; empty means
	// DefaultAssetDir.
	AssetDir string
	// HTTPAllow is the Http step's host allow-list (MAESTRO_HTTP_ALLOW of
	// the worker); empty allows no host. Entries that admit the worker's
	// own host (see httpstep.CheckDeployable: "loopback", loopback,
	// unspecified and link-local IPs and CIDRs) are refused.
	HTTPAllow []string
	// LambdaFunctions lists the functions Lambda steps may invoke: names
	// (in the stack's account and region) or ARNs; the worker may invoke
	// them, any version or alias, and nothing else. Empty allows none.
	LambdaFunctions []string
	// CallbackQueues (SQS queue ARNs) and CallbackTopics (SNS topic ARNs)
	// are where Callback steps may send their task tokens; the worker may
	// send to them and nothing else. Empty allows none.
	CallbackQueues, CallbackTopics []string
	// ECS configures Ecs and Kubernetes steps; without a cluster they are
	// not supported.
	ECS ECSSettings
	// BatchJobQueues (ARNs) and BatchJobDefinitions (names) are what Batch
	// steps may use; the worker may submit to and terminate on exactly
	// those. Empty allows none.
	BatchJobQueues, BatchJobDefinitions []string
	// BatchGPUJobQueue is the ARN of a Batch job queue on GPU capacity
	// (an EC2 compute environment of GPU instances, minvCpus 0, so that it
	// costs nothing while idle): Kubernetes steps that request GPUs run
	// there as Batch jobs, in job definitions the worker registers
	// (<stage>-task-gpu-*, with ECS.TaskRoleARN as their role). Empty
	// refuses them. It needs the ECS settings.
	BatchGPUJobQueue string
	// AttachBuckets names existing S3 buckets whose object events should
	// also reach the signal-ingest queue. Their notification configuration
	// is merged by CDK's notifications custom resource.
	AttachBuckets []string
	// BucketName is the signals bucket's name; empty means the Spec's name
	// followed by "-" and the account id (bucket names are global).
	BucketName string
	// SignalRules name the signals of S3 objects (MAESTRO_SIGNAL_RULES of
	// the signals function, see signals.FromS3); none means every object
	// gets the data-lake default name.
	SignalRules []signals.Rule
	// Retain keeps the table, bucket, queues and logs when the stack is
	// deleted and turns on the table's deletion protection; nil means on
	// for every stage but "dev".
	Retain *bool
	// Functions overrides the settings of some handlers, by handler name.
	Functions map[string]FunctionSettings
	// API sets the REST API's throttling; zero fields mean the defaults.
	API APISettings
	// LogRetentionDays is the retention of the function and access logs;
	// zero means DefaultLogRetentionDays. CloudWatch Logs accepts only
	// some values (1, 3, 5, 7, 14, 30, 60, 90, ...).
	LogRetentionDays int
	// AlarmTopicARN, when set, is the SNS topic every alarm notifies.
	AlarmTopicARN string
	// Access says who may do what, and with whose AWS rights steps run
	// (see access.go).
	Access AccessSettings
	// APIGatewayAccountRole creates the account-wide role API Gateway
	// writes logs with (one per account and region); nil means true. Set
	// it false when the account's API Gateway settings already name one.
	APIGatewayAccountRole *bool
	// Monitoring creates the alarms and the dashboard; nil means true.
	Monitoring *bool
	// MaestroChangeEvents publishes Maestro's *_CHANGE_EVENT messages to
	// the events topic beside the runtime's own (off by default).
	MaestroChangeEvents bool
}

// retentionDays lists the retention periods CloudWatch Logs accepts.
func retentionDays() []int {
	return []int{1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653}
}

// settings is Props with every default applied and checked.
type settings struct {
	Props
	spec      resources.Spec
	retain    bool
	accountCW bool
	monitor   bool
	functions map[string]FunctionSettings
}

// resolve applies the defaults and reports every invalid setting.
func (p Props) resolve() (settings, error) {
	if p.Stage == "" {
		p.Stage = DefaultStage
	}
	if p.AssetDir == "" {
		p.AssetDir = DefaultAssetDir
	}
	if p.LogRetentionDays == 0 {
		p.LogRetentionDays = DefaultLogRetentionDays
	}
	def := DefaultAPISettings()
	if p.API.RateLimit == 0 {
		p.API.RateLimit = def.RateLimit
	}
	if p.API.BurstLimit == 0 {
		p.API.BurstLimit = def.BurstLimit
	}
	s := settings{
		Props:     p,
		spec:      resources.ForStage(p.Stage),
		retain:    p.Stage != DefaultStage,
		accountCW: true,
		monitor:   true,
		functions: map[string]FunctionSettings{},
	}
	if p.Retain != nil {
		s.retain = *p.Retain
	}
	if p.APIGatewayAccountRole != nil {
		s.accountCW = *p.APIGatewayAccountRole
	}
	if p.Monitoring != nil {
		s.monitor = *p.Monitoring
	}
	var errs []error
	if err := s.spec.Validate(); err != nil {
		errs = append(errs, err)
	}
	for name := range p.Functions {
		if !slices.Contains(Handlers(), name) {
			errs = append(errs, fmt.Errorf("functions: unknown handler %q (want one of %s)", name, strings.Join(Handlers(), ", ")))
		}
	}
	visibility := map[string]time.Duration{
		HandlerDecider: s.spec.Queues.Decision.VisibilityTimeout,
		HandlerWorker:  s.spec.Queues.Work.VisibilityTimeout,
		HandlerSignals: s.spec.Queues.SignalIngest.VisibilityTimeout,
	}
	for _, name := range Handlers() {
		fs := DefaultFunctionSettings(name)
		if o, ok := p.Functions[name]; ok {
			if o.MemoryMB != 0 {
				fs.MemoryMB = o.MemoryMB
			}
			if o.Timeout != 0 {
				fs.Timeout = o.Timeout
			}
			if o.ReservedConcurrency != 0 {
				fs.ReservedConcurrency = o.ReservedConcurrency
			}
		}
		if fs.MemoryMB < 128 || fs.MemoryMB > 10240 {
			errs = append(errs, fmt.Errorf("%s: memory %d MB: want 128 to 10240", name, fs.MemoryMB))
		}
		if fs.Timeout < time.Second || fs.Timeout > 15*time.Minute || fs.Timeout%time.Second != 0 {
			errs = append(errs, fmt.Errorf("%s: timeout %v: want whole seconds from 1s to 15m", name, fs.Timeout))
		}
		if v, ok := visibility[name]; ok && fs.Timeout > v {
			errs = append(errs, fmt.Errorf("%s: timeout %v exceeds its queue's visibility timeout %v", name, fs.Timeout, v))
		}
		if fs.ReservedConcurrency < NoReservedConcurrency {
			errs = append(errs, fmt.Errorf("%s: reserved concurrency %d: want a positive number, or %d to reserve none", name, fs.ReservedConcurrency, NoReservedConcurrency))
		}
		s.functions[name] = fs
	}
	if p.API.RateLimit < 0 || p.API.BurstLimit < 0 {
		errs = append(errs, fmt.Errorf("api throttling %v/s burst %d: want positive limits", p.API.RateLimit, p.API.BurstLimit))
	}
	if !slices.Contains(retentionDays(), p.LogRetentionDays) {
		errs = append(errs, fmt.Errorf("log retention %d days: CloudWatch Logs accepts %v", p.LogRetentionDays, retentionDays()))
	}
	for _, b := range p.AttachBuckets {
		if err := resources.ValidateBucketName(b); err != nil {
			errs = append(errs, fmt.Errorf("attach bucket: %w", err))
		}
	}
	if p.BucketName != "" {
		if err := resources.ValidateBucketName(p.BucketName); err != nil {
			errs = append(errs, fmt.Errorf("bucket: %w", err))
		}
	}
	if p.AlarmTopicARN != "" && !strings.HasPrefix(p.AlarmTopicARN, "arn:") {
		errs = append(errs, fmt.Errorf("alarm topic %q is not an ARN", p.AlarmTopicARN))
	}
	for _, h := range Handlers() {
		if fi, err := os.Stat(filepath.Join(p.AssetDir, h, "bootstrap")); err != nil || fi.IsDir() {
			errs = append(errs, fmt.Errorf("%s: no %s/%s/bootstrap (run make build first)", h, p.AssetDir, h))
		}
	}
	for _, h := range p.HTTPAllow {
		if strings.TrimSpace(h) == "" || strings.Contains(h, ",") {
			errs = append(errs, fmt.Errorf("http allow-list entry %q: want a non-empty host without commas", h))
		}
	}
	if err := httpstep.CheckAllowList(p.HTTPAllow); err != nil {
		errs = append(errs, err)
	}
	// In Lambda, loopback is the runtime API: no entry may admit the
	// worker's own host ("loopback" is for the local stack).
	if err := httpstep.CheckDeployable(p.HTTPAllow); err != nil {
		errs = append(errs, err)
	}
	for _, f := range p.LambdaFunctions {
		if err := checkFunction(f); err != nil {
			errs = append(errs, err)
		}
	}
	for _, q := range p.CallbackQueues {
		if _, err := queueURLOf(q); err != nil {
			errs = append(errs, err)
		}
	}
	if e := p.ECS; e.Cluster != "" || len(e.Subnets) > 0 || len(e.TaskDefinitions) > 0 || len(e.Images) > 0 {
		if parts := strings.Split(e.Cluster, ":"); len(parts) != 6 || parts[0] != "arn" || parts[2] != "ecs" || !strings.HasPrefix(parts[5], "cluster/") {
			errs = append(errs, fmt.Errorf("ecs cluster %q: want a cluster ARN (arn:aws:ecs:region:account:cluster/name)", e.Cluster))
		}
		if len(e.Subnets) == 0 {
			errs = append(errs, errors.New("ecs subnets: at least one subnet is needed for Fargate tasks"))
		}
		for _, sn := range e.Subnets {
			if !strings.HasPrefix(sn, "subnet-") {
				errs = append(errs, fmt.Errorf("ecs subnet %q: want a subnet id (subnet-...)", sn))
			}
		}
		for _, sg := range e.SecurityGroups {
			if !strings.HasPrefix(sg, "sg-") {
				errs = append(errs, fmt.Errorf("ecs security group %q: want a security group id (sg-...)", sg))
			}
		}
		if e.TaskRoleARN != "" && !strings.HasPrefix(e.TaskRoleARN, "arn:") {
			errs = append(errs, fmt.Errorf("ecs task role %q: want a role ARN", e.TaskRoleARN))
		}
		for _, f := range e.TaskDefinitions {
			if !familyName.MatchString(f) {
				errs = append(errs, fmt.Errorf("ecs task definition %q: want a family name", f))
			}
		}
		for _, img := range e.Images {
			if strings.Contains(img, ",") {
				errs = append(errs, fmt.Errorf("ecs image %q: an entry has no commas", img))
			}
		}
		if _, err := images.ParseAllowList(e.Images); err != nil {
			errs = append(errs, fmt.Errorf("ecs images: %w", err))
		}
	}
	for _, q := range p.BatchJobQueues {
		if parts := strings.Split(q, ":"); len(parts) != 6 || parts[0] != "arn" || parts[2] != "batch" || !strings.HasPrefix(parts[5], "job-queue/") {
			errs = append(errs, fmt.Errorf("batch job queue %q: want a job queue ARN (arn:aws:batch:region:account:job-queue/name)", q))
		}
	}
	if q := p.BatchGPUJobQueue; q != "" {
		if parts := strings.Split(q, ":"); len(parts) != 6 || parts[0] != "arn" || parts[2] != "batch" || !strings.HasPrefix(parts[5], "job-queue/") {
			errs = append(errs, fmt.Errorf("batch GPU job queue %q: want a job queue ARN (arn:aws:batch:region:account:job-queue/name)", q))
		}
		if p.ECS.Cluster == "" {
			errs = append(errs, fmt.Errorf("batch GPU job queue: needs the ECS settings (ecsCluster, ecsSubnets): GPU steps are Kubernetes steps, which run through them"))
		}
	}
	for _, d := range p.BatchJobDefinitions {
		if !jobDefinitionName.MatchString(d) {
			errs = append(errs, fmt.Errorf("batch job definition %q: want a job definition name", d))
		}
	}
	for _, tp := range p.CallbackTopics {
		if parts := strings.Split(tp, ":"); len(parts) != 6 || parts[0] != "arn" || parts[2] != "sns" || parts[5] == "" {
			errs = append(errs, fmt.Errorf("callback topic %q: want an SNS topic ARN (arn:aws:sns:region:account:name)", tp))
		}
	}
	errs = append(errs, p.Access.check()...)
	return s, errors.Join(errs...)
}

// assetPath is the directory of a handler's bootstrap binary.
func (s settings) assetPath(handler string) string { return filepath.Join(s.AssetDir, handler) }

// name is a stage-prefixed physical name: maestro-<stage>-<suffix>.
func (s settings) name(suffix string) string { return resources.Prefix + "-" + s.Stage + "-" + suffix }

// Patterns of a Lambda function name, an ECS task definition family and a
// Batch job definition name.
var (
	functionName      = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	familyName        = regexp.MustCompile(`^[A-Za-z0-9_-]{1,255}$`)
	jobDefinitionName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`)
)

// checkFunction checks a Lambda step allow-list entry: a function name or
// an unqualified function ARN.
func checkFunction(f string) error {
	if parts := strings.Split(f, ":"); len(parts) > 1 {
		if len(parts) != 7 || parts[0] != "arn" || parts[2] != "lambda" || parts[5] != "function" || !functionName.MatchString(parts[6]) {
			return fmt.Errorf("lambda function %q: want a name or an unqualified function ARN (arn:aws:lambda:region:account:function:name)", f)
		}
		return nil
	}
	if !functionName.MatchString(f) {
		return fmt.Errorf("lambda function %q: want a name of 1 to 64 letters, digits, hyphens or underscores", f)
	}
	return nil
}

// queueURLOf is the URL of the SQS queue with ARN arn
// (arn:partition:sqs:region:account:name).
func queueURLOf(arn string) (string, error) {
	parts := strings.Split(arn, ":")
	if len(parts) != 6 || parts[0] != "arn" || parts[2] != "sqs" || parts[3] == "" || parts[4] == "" || parts[5] == "" {
		return "", fmt.Errorf("callback queue %q: want an SQS queue ARN (arn:aws:sqs:region:account:name)", arn)
	}
	domain := "amazonaws.com"
	if parts[1] == "aws-cn" {
		domain = "amazonaws.com.cn"
	}
	return fmt.Sprintf("https://sqs.%s.%s/%s/%s", parts[3], domain, parts[4], parts[5]), nil
}
