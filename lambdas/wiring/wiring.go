// Package wiring builds the orchestrator and its handlers from one
// configuration. The Lambda entry points read the configuration from the
// environment; the local stack passes what it provisioned. Both run the very
// same handlers.
package wiring

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/batch"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/maestro-serverless/maestro/definition"
	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/images"
	"github.com/maestro-serverless/maestro/lambdas/decider"
	"github.com/maestro-serverless/maestro/lambdas/ingest"
	"github.com/maestro-serverless/maestro/lambdas/router"
	"github.com/maestro-serverless/maestro/lambdas/worker"
	"github.com/maestro-serverless/maestro/logctx"
	"github.com/maestro-serverless/maestro/loopitems"
	"github.com/maestro-serverless/maestro/metering/awsmeter"
	"github.com/maestro-serverless/maestro/metrics"
	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/orchestrator"
	"github.com/maestro-serverless/maestro/resources"
	"github.com/maestro-serverless/maestro/schedules"
	"github.com/maestro-serverless/maestro/signals"
	"github.com/maestro-serverless/maestro/steps/batchstep"
	"github.com/maestro-serverless/maestro/steps/callbackstep"
	"github.com/maestro-serverless/maestro/steps/ecsstep"
	"github.com/maestro-serverless/maestro/steps/httpstep"
	"github.com/maestro-serverless/maestro/steps/lambdastep"
	"github.com/maestro-serverless/maestro/steps/steprights"
	"github.com/maestro-serverless/maestro/store"
	"github.com/maestro-serverless/maestro/teamrights"
)

// Config names the resources the handlers use.
type Config struct {
	Table            string
	DecisionQueueURL string
	WorkQueueURL     string
	WorkQueueARN     string
	ScheduleGroup    string
	SchedulerRoleARN string
	// EventsTopicARN is the SNS topic change events are published to.
	EventsTopicARN string
	// SignalDLQURL is the signal-ingest dead-letter queue, where the
	// ingest handler sends malformed messages.
	SignalDLQURL string
	// SignalRules name the signals of S3 objects (see signals.FromS3).
	SignalRules []signals.Rule
	// MaestroEvents publishes Maestro's *_CHANGE_EVENT messages beside the
	// runtime's own change events; ClusterName is their cluster_name.
	MaestroEvents bool
	ClusterName   string
}

// Environment variable names read by ConfigFromEnv.
const (
	EnvTable            = "MAESTRO_TABLE"
	EnvDecisionQueueURL = "MAESTRO_DECISION_QUEUE_URL"
	EnvWorkQueueURL     = "MAESTRO_WORK_QUEUE_URL"
	EnvWorkQueueARN     = "MAESTRO_WORK_QUEUE_ARN"
	EnvScheduleGroup    = "MAESTRO_SCHEDULE_GROUP"
	EnvSchedulerRoleARN = "MAESTRO_SCHEDULER_ROLE_ARN"
	EnvEventsTopicARN   = "MAESTRO_EVENTS_TOPIC_ARN"
	EnvSignalDLQURL     = "MAESTRO_SIGNAL_DLQ_URL"
	// EnvMaestroEvents, "true", turns Config.MaestroEvents on;
	// EnvClusterName is Config.ClusterName.
	EnvMaestroEvents = "MAESTRO_CHANGE_EVENTS_MAESTRO"
	EnvClusterName   = "MAESTRO_CLUSTER_NAME"
	// EnvSignalRules holds the S3 signal rules as a JSON array of
	// {"bucket", "prefix", "suffix", "name"} objects (see ParseSignalRules).
	EnvSignalRules = "MAESTRO_SIGNAL_RULES"
	// EnvHTTPAllow lists the hosts Http steps may call, comma-separated
	// (exact names or IPs, "*.example.com", or "loopback", which only the
	// local stack uses: the CDK app refuses it, see
	// httpstep.CheckDeployable); unset or empty allows none.
	EnvHTTPAllow = "MAESTRO_HTTP_ALLOW"
	// EnvForeachEstimateOver is how many iterations a foreach step attempt
	// has past which its view carries an estimate of its duration and
	// cost: unset or 0 is 1,000, a negative number never.
	EnvForeachEstimateOver = "MAESTRO_FOREACH_ESTIMATE_OVER"
	// EnvLambdaFunctions lists the functions Lambda steps may invoke
	// (names or ARNs), EnvCallbackQueues the SQS queue URLs and
	// EnvCallbackTopics the SNS topic ARNs Callback steps may send their
	// task tokens to, comma-separated; unset or empty allows none.
	EnvLambdaFunctions = "MAESTRO_LAMBDA_FUNCTIONS"
	EnvCallbackQueues  = "MAESTRO_CALLBACK_QUEUES"
	EnvCallbackTopics  = "MAESTRO_CALLBACK_TOPICS"
	// ECS steps (and Maestro's Kubernetes steps): the cluster, the
	// comma-separated subnets and security groups of their tasks, whether
	// they get public IPs ("true"), the roles and log group of the task
	// definitions the worker registers, the family prefix (also the
	// tasks' startedBy) and the task definition families steps may name.
	// Unset EnvECSCluster leaves ECS steps unsupported.
	EnvECSCluster = "MAESTRO_ECS_CLUSTER"
	// EnvNotebookBucket, EnvNotebookPrefix and EnvNotebookTaskRoleARN
	// are where Notebook steps write executed notebooks and the role
	// their tasks run with (see ecsstep.Config).
	EnvNotebookBucket      = "MAESTRO_NOTEBOOK_BUCKET"
	EnvNotebookPrefix      = "MAESTRO_NOTEBOOK_PREFIX"
	EnvNotebookTaskRoleARN = "MAESTRO_NOTEBOOK_TASK_ROLE_ARN"
	EnvECSSubnets          = "MAESTRO_ECS_SUBNETS"
	EnvECSSecurityGroups   = "MAESTRO_ECS_SECURITY_GROUPS"
	EnvECSAssignPublicIP   = "MAESTRO_ECS_ASSIGN_PUBLIC_IP"
	EnvECSExecutionRoleARN = "MAESTRO_ECS_EXECUTION_ROLE_ARN"
	EnvECSTaskRoleARN      = "MAESTRO_ECS_TASK_ROLE_ARN"
	EnvECSLogGroup         = "MAESTRO_ECS_LOG_GROUP"
	EnvECSFamily           = "MAESTRO_ECS_FAMILY"
	EnvECSTaskDefinitions  = "MAESTRO_ECS_TASK_DEFINITIONS"
	// EnvECSImages lists the images Ecs and Kubernetes steps may run,
	// comma-separated entries of package images (registry/path prefixes,
	// registry/path@sha256:... pins); unset or empty allows none. The API
	// refuses a pushed definition that names another image as a literal,
	// and the worker fails a step that would run one.
	EnvECSImages = "MAESTRO_ECS_IMAGES"
	// EnvBatchJobQueues and EnvBatchJobDefinitions list the Batch job
	// queues (names or ARNs) and job definition names Batch steps may use.
	EnvBatchJobQueues      = "MAESTRO_BATCH_JOB_QUEUES"
	EnvBatchJobDefinitions = "MAESTRO_BATCH_JOB_DEFINITIONS"
	// EnvBatchGPUJobQueue is the Batch job queue (an ARN) of GPU capacity
	// where Kubernetes steps that request GPUs run; unset refuses them.
	EnvBatchGPUJobQueue = "MAESTRO_BATCH_GPU_JOB_QUEUE"
	// EnvItemsBuckets lists the S3 buckets foreach steps may read their
	// items from (items_from), comma-separated: the stack's signals bucket
	// and its attached buckets; unset or empty allows none.
	EnvItemsBuckets = "MAESTRO_ITEMS_BUCKETS"
	// EnvStage is the stage the metrics (EMF lines on stdout) are
	// dimensioned by; unset emits none.
	EnvStage = "MAESTRO_STAGE"
)

// ConfigFromEnv reads Config from the environment; every variable named in
// required must be set.
func ConfigFromEnv(required ...string) (Config, error) {
	c := Config{
		Table:            os.Getenv(EnvTable),
		DecisionQueueURL: os.Getenv(EnvDecisionQueueURL),
		WorkQueueURL:     os.Getenv(EnvWorkQueueURL),
		WorkQueueARN:     os.Getenv(EnvWorkQueueARN),
		ScheduleGroup:    os.Getenv(EnvScheduleGroup),
		SchedulerRoleARN: os.Getenv(EnvSchedulerRoleARN),
		EventsTopicARN:   os.Getenv(EnvEventsTopicARN),
		SignalDLQURL:     os.Getenv(EnvSignalDLQURL),
		MaestroEvents:    os.Getenv(EnvMaestroEvents) == "true",
		ClusterName:      os.Getenv(EnvClusterName),
	}
	for _, name := range required {
		if os.Getenv(name) == "" {
			return c, fmt.Errorf("wiring: environment variable %s is not set", name)
		}
	}
	rules, err := ParseSignalRules(os.Getenv(EnvSignalRules))
	if err != nil {
		return c, fmt.Errorf("wiring: environment variable %s: %w", EnvSignalRules, err)
	}
	c.SignalRules = rules
	return c, nil
}

// signalRule is the JSON form of a signals.Rule.
type signalRule struct {
	Bucket string `json:"bucket,omitempty"`
	Prefix string `json:"prefix,omitempty"`
	Suffix string `json:"suffix,omitempty"`
	Name   string `json:"name,omitempty"`
}

// ParseSignalRules reads S3 signal rules from their JSON form, an array of
// {"bucket", "prefix", "suffix", "name"} objects (every field optional; see
// signals.Rule), in the order they apply. Blank text means no rules; an
// unknown field or anything but such an array is an error.
func ParseSignalRules(text string) ([]signals.Rule, error) {
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.DisallowUnknownFields()
	var list []signalRule
	if err := dec.Decode(&list); err != nil {
		return nil, fmt.Errorf("signal rules: want a JSON array of {bucket, prefix, suffix, name}: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("signal rules: unexpected data after the JSON array")
	}
	if list == nil {
		return nil, fmt.Errorf("signal rules: want a JSON array, got null")
	}
	rules := make([]signals.Rule, len(list))
	for i, r := range list {
		rules[i] = signals.Rule{Bucket: r.Bucket, Prefix: r.Prefix, Suffix: r.Suffix, Name: r.Name}
	}
	return rules, nil
}

// FormatSignalRules writes rules in the JSON form ParseSignalRules reads.
func FormatSignalRules(rules []signals.Rule) (string, error) {
	list := make([]signalRule, len(rules))
	for i, r := range rules {
		list[i] = signalRule{Bucket: r.Bucket, Prefix: r.Prefix, Suffix: r.Suffix, Name: r.Name}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(list); err != nil {
		return "", fmt.Errorf("signal rules: %w", err)
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// Options are optional parts of the build.
type Options struct {
	Now        func() time.Time
	Logger     *slog.Logger
	HealthInfo orchestrator.HealthView
	// Runners execute step types that need a worker; nil means the
	// built-in ones: Http (limited to HTTPAllow), Lambda (to
	// LambdaFunctions) and Callback (to CallbackQueues and CallbackTopics).
	Runners map[model.StepType]orchestrator.StepRunner
	// HTTPAllow is the Http step allow-list (see EnvHTTPAllow).
	HTTPAllow []string
	// LambdaFunctions, CallbackQueues and CallbackTopics are the Lambda
	// and Callback steps' allow-lists (see EnvLambdaFunctions).
	LambdaFunctions, CallbackQueues, CallbackTopics []string
	// ECS configures ECS and Kubernetes steps (its clients are built
	// here); an empty Cluster leaves them unsupported.
	ECS ecsstep.Config
	// ECSImages is the image allow-list of Ecs and Kubernetes steps (see
	// EnvECSImages): pushed definitions are checked against it, and the
	// ECS runner gets it (in place of ECS.AllowImages). nil admits none.
	ECSImages *images.AllowList
	// Batch configures Batch steps (its clients are built here).
	Batch batchstep.Config
	// ItemsBuckets are the buckets foreach steps may take their items
	// from (see EnvItemsBuckets); nil admits none.
	ItemsBuckets []string
	// Metrics receives the handlers' EMF metric lines, dimensioned by
	// Stage; nil emits none.
	Metrics io.Writer
	Stage   string
	// Emulator relaxes client checks emulators fail: moto computes the
	// DynamoDB response CRC32 differently from AWS for binary attributes.
	Emulator bool
	// ClaimLease, EventSweepAfter and SweepGrace tune recovery (defaults:
	// orchestrator.DefaultClaimLease, store.DefaultEventSweepAfter,
	// orchestrator.DefaultSweepGrace); tests shorten them.
	ClaimLease, EventSweepAfter, SweepGrace time.Duration
	// Access are the authorization settings (AccessFromEnv in Lambda);
	// Build adds TeamRights to them.
	Access orchestrator.AccessSettings
	// TeamRights maps teams to the AWS rights their workflows' Ecs,
	// Kubernetes, Notebook, Batch and Lambda steps launch with (see
	// EnvTeamRights); empty: the stack's. Pushes are checked against them
	// too.
	TeamRights teamrights.Config
	// GrantsFrom, when set, replaces the source of workflows' grants
	// whose owners pick the team rights of a launch (a test's table); nil
	// reads each workflow's stored grant (headGrants).
	GrantsFrom func(*store.Store) steprights.GrantSource
	// ForeachEstimateOver is how many iterations a foreach attempt has past
	// which its view carries an estimate (orchestrator.Config's; see
	// EnvForeachEstimateOver).
	ForeachEstimateOver int64
	// FunctionMemoryMB is the memory of the function running a handler
	// ("api", "decider", "worker"), at which runs are billed their share of
	// its invocations (see package metering); nil: what the stack deploys
	// (resources.FunctionMemoryMB). MustBuildFromEnv reads Lambda's.
	FunctionMemoryMB func(handler string) int
}

// Deps is everything built.
type Deps struct {
	Orchestrator *orchestrator.Orchestrator
	Router       *router.Router
	Decider      *decider.Handler
	Worker       *worker.Handler
	// Ingest consumes the signal-ingest queue.
	Ingest *ingest.Handler
	Logger *slog.Logger
	// Metrics keeps the handlers' EMF values; every invocation ends with
	// its Flush (metrics.FlushAfter). Nil without Options.Metrics.
	Metrics *metrics.Emitter
}

// Build creates the orchestrator and the handlers over AWS clients made from
// awsCfg. It fails on an invalid Http allow-list.
func Build(cfg Config, awsCfg aws.Config, opts Options) (*Deps, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.FunctionMemoryMB == nil {
		opts.FunctionMemoryMB = resources.FunctionMemoryMB
	}
	// Every AWS call made for a run is billed to it (package metering).
	awsCfg.APIOptions = append(slices.Clone(awsCfg.APIOptions), awsmeter.Middleware())
	// Lines logged with a handler's context carry the ids it put in its
	// log scope (workflow, instance, run, step, attempt, trace).
	opts.Logger = logctx.Wrap(opts.Logger)
	ddb := dynamodb.NewFromConfig(awsCfg, func(o *dynamodb.Options) {
		o.DisableValidateResponseChecksum = opts.Emulator
	})
	sqsClient := sqs.NewFromConfig(awsCfg)
	sched := scheduler.NewFromConfig(awsCfg)
	checker := definition.NewChecker(definition.WithClock(opts.Now), definition.WithImagePolicy(opts.ECSImages))
	st := store.New(ddb, cfg.Table, store.Options{Now: opts.Now, EventSweepAfter: opts.EventSweepAfter})
	if opts.Runners == nil {
		rights := stepRights(opts, st).Scope
		httpRunner, err := httpstep.New(httpstep.Config{AllowHosts: opts.HTTPAllow, Language: checker.Language()})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", EnvHTTPAllow, err)
		}
		lambdaRunner, err := lambdastep.New(lambdastep.Config{Client: lambda.NewFromConfig(awsCfg), AllowFunctions: opts.LambdaFunctions, Rights: rights})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", EnvLambdaFunctions, err)
		}
		callbackRunner, err := callbackstep.New(callbackstep.Config{SQS: sqsClient, SNS: sns.NewFromConfig(awsCfg),
			AllowQueues: opts.CallbackQueues, AllowTopics: opts.CallbackTopics, HTTP: httpRunner})
		if err != nil {
			return nil, err
		}
		logs := cloudwatchlogs.NewFromConfig(awsCfg)
		batchCfg := opts.Batch
		batchCfg.Batch, batchCfg.Logs, batchCfg.Rights = batch.NewFromConfig(awsCfg), logs, rights
		if batchCfg.GPUJobQueue != "" {
			// GPU jobs run with the ECS tasks' role, in definitions named
			// after their family.
			batchCfg.GPUJobRoleARN = opts.ECS.TaskRoleARN
			if opts.ECS.Family != "" {
				batchCfg.GPUFamily = opts.ECS.Family + "-gpu"
			}
		}
		batchRunner, err := batchstep.New(batchCfg)
		if err != nil {
			return nil, err
		}
		opts.Runners = map[model.StepType]orchestrator.StepRunner{
			model.StepHTTP: httpRunner, model.StepLambda: lambdaRunner, model.StepCallback: callbackRunner, model.StepBatch: batchRunner,
		}
		var ecsRunner orchestrator.StepRunner = unconfigured{what: "ECS, Kubernetes and Notebook steps need the stack's ECS settings " +
			"(CDK context ecsCluster and ecsSubnets; " + EnvECSCluster + ")"}
		if opts.ECS.Cluster != "" {
			ecsCfg := opts.ECS
			ecsCfg.ECS, ecsCfg.Logs, ecsCfg.Region = ecs.NewFromConfig(awsCfg), logs, awsCfg.Region
			ecsCfg.AllowImages, ecsCfg.Rights = opts.ECSImages, rights
			if batchCfg.GPUJobQueue != "" {
				ecsCfg.GPU = batchRunner
			}
			if ecsRunner, err = ecsstep.New(ecsCfg); err != nil {
				return nil, fmt.Errorf("%s: %w", EnvECSCluster, err)
			}
		}
		opts.Runners[model.StepECS], opts.Runners[model.StepKubernetes] = ecsRunner, ecsRunner
		opts.Runners[model.StepNotebook] = ecsRunner
	}
	var trig orchestrator.TriggerSchedules
	if cfg.ScheduleGroup != "" && cfg.WorkQueueARN != "" {
		trig = schedules.New(sched, cfg.ScheduleGroup, cfg.SchedulerRoleARN, cfg.WorkQueueARN)
	}
	var backstops func(context.Context, []store.Message) ([]bool, error)
	if cfg.Table != "" {
		backstops = func(ctx context.Context, msgs []store.Message) ([]bool, error) {
			return orchestrator.BackstopsNeeded(ctx, st.Attempts, msgs)
		}
	}
	rt := router.New(router.Config{
		SQS:       sqsClient,
		Scheduler: sched,
		QueueURLs: map[string]string{
			store.QueueDecision: cfg.DecisionQueueURL,
			store.QueueWork:     cfg.WorkQueueURL,
		},
		WorkQueueARN:     cfg.WorkQueueARN,
		SNS:              sns.NewFromConfig(awsCfg),
		EventsTopicARN:   cfg.EventsTopicARN,
		MaestroEvents:    cfg.MaestroEvents,
		ClusterName:      cfg.ClusterName,
		ScheduleGroup:    cfg.ScheduleGroup,
		SchedulerRoleARN: cfg.SchedulerRoleARN,
		BackstopsNeeded:  backstops,
		Now:              opts.Now,
		Logger:           opts.Logger,
	})
	var dispatcher orchestrator.Dispatcher
	if cfg.WorkQueueURL != "" {
		// Direct dispatch: committers send the steps they start to the
		// work queue themselves, with the router's code.
		dispatcher = rt
	}
	var emf *metrics.Emitter
	if opts.Metrics != nil {
		emf = metrics.New(opts.Metrics, opts.Stage, opts.Now)
	}
	orch := orchestrator.New(orchestrator.Config{
		Schedules:  trig,
		Store:      st,
		Checker:    checker,
		Now:        opts.Now,
		Logger:     opts.Logger,
		HealthInfo: opts.HealthInfo,
		ClaimLease: opts.ClaimLease,
		SweepGrace: opts.SweepGrace,
		Dispatcher: dispatcher,
		Metrics:    emf,
		Access:     accessWith(opts.Access, opts.TeamRights),

		ForeachEstimateOver: opts.ForeachEstimateOver,
		Items: loopitems.NewReader(loopitems.NewS3Objects(s3.NewFromConfig(awsCfg, func(o *s3.Options) {
			o.UsePathStyle = opts.Emulator
		})), opts.ItemsBuckets),
	})
	return &Deps{
		Orchestrator: orch,
		Logger:       opts.Logger,
		Router:       rt,
		Decider:      decider.New(orch.Rounds, opts.Logger).WithMetrics(emf).WithMemory(opts.FunctionMemoryMB("decider")),
		Worker: worker.New(worker.Config{
			Processor: orch.Worker, SQS: sqsClient, WorkQueueURL: cfg.WorkQueueURL,
			Runners: opts.Runners, Logger: opts.Logger, Metrics: emf, MemoryMB: opts.FunctionMemoryMB("worker"),
		}),
		Ingest: ingest.New(ingest.Config{
			Announcer: orch.Signals, SQS: sqsClient, DLQURL: cfg.SignalDLQURL, Rules: cfg.SignalRules, Logger: opts.Logger,
		}),
		Metrics: emf,
	}, nil
}

// MustBuildFromEnv is the start of every Lambda entry point: it reads the
// configuration from the environment and the AWS configuration from the
// Lambda runtime, logs JSON to stdout, and exits on a missing setting.
func MustBuildFromEnv(required ...string) *Deps {
	log := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	cfg, err := ConfigFromEnv(required...)
	if err != nil {
		log.Error("bad configuration", "error", err)
		os.Exit(1)
	}
	awsCfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		log.Error("load AWS configuration", "error", err)
		os.Exit(1)
	}
	opts, err := optionsFromEnv()
	if err != nil {
		log.Error("bad configuration", "error", err)
		os.Exit(1)
	}
	opts.Logger = log
	opts.FunctionMemoryMB = LambdaMemoryMB
	deps, err := Build(cfg, awsCfg, opts)
	if err != nil {
		log.Error("bad configuration", "error", err)
		os.Exit(1)
	}
	return deps
}

// optionsFromEnv reads the step runners' settings from a Lambda
// function's environment. An Http allow-list that admits the function's
// own host (loopback: Lambda's runtime API) stops it from starting, as it
// stops synth: the environment may have been edited after deploying.
func optionsFromEnv() (Options, error) {
	allowImages, err := images.ParseAllowList(envList(EnvECSImages))
	if err != nil {
		return Options{}, fmt.Errorf("%s: %w", EnvECSImages, err)
	}
	teamRights, err := teamRightsFromEnv()
	if err != nil {
		return Options{}, err
	}
	if err := httpstep.CheckDeployable(envList(EnvHTTPAllow)); err != nil {
		return Options{}, fmt.Errorf("%s: %w", EnvHTTPAllow, err)
	}
	acc, err := AccessFromEnv()
	if err != nil {
		return Options{}, err
	}
	var estimateOver int64
	if v := os.Getenv(EnvForeachEstimateOver); v != "" {
		if estimateOver, err = strconv.ParseInt(v, 10, 64); err != nil {
			return Options{}, fmt.Errorf("%s: %q is not a whole number", EnvForeachEstimateOver, v)
		}
	}
	return Options{HTTPAllow: envList(EnvHTTPAllow), Access: acc, ForeachEstimateOver: estimateOver,
		LambdaFunctions: envList(EnvLambdaFunctions), CallbackQueues: envList(EnvCallbackQueues), CallbackTopics: envList(EnvCallbackTopics),
		ECS: ecsstep.Config{
			Cluster: os.Getenv(EnvECSCluster), Subnets: envList(EnvECSSubnets), SecurityGroups: envList(EnvECSSecurityGroups),
			AssignPublicIP: os.Getenv(EnvECSAssignPublicIP) == "true", ExecutionRoleARN: os.Getenv(EnvECSExecutionRoleARN),
			TaskRoleARN: os.Getenv(EnvECSTaskRoleARN), LogGroup: os.Getenv(EnvECSLogGroup),
			Family: os.Getenv(EnvECSFamily), StartedBy: os.Getenv(EnvECSFamily), AllowTaskDefinitions: envList(EnvECSTaskDefinitions),
			NotebookBucket: os.Getenv(EnvNotebookBucket), NotebookPrefix: os.Getenv(EnvNotebookPrefix),
			NotebookTaskRoleARN: os.Getenv(EnvNotebookTaskRoleARN),
		},
		ECSImages: allowImages,
		Batch: batchstep.Config{AllowQueues: envList(EnvBatchJobQueues), AllowDefinitions: envList(EnvBatchJobDefinitions),
			GPUJobQueue: os.Getenv(EnvBatchGPUJobQueue)},
		Metrics: metricsOut(os.Getenv(EnvStage)), Stage: os.Getenv(EnvStage),
		ItemsBuckets: envList(EnvItemsBuckets), TeamRights: teamRights,
	}, nil
}

// envList reads a comma-separated list from environment variable name.
func envList(name string) []string {
	var out []string
	for _, h := range strings.Split(os.Getenv(name), ",") {
		if h = strings.TrimSpace(h); h != "" {
			out = append(out, h)
		}
	}
	return out
}

// metricsOut is where a Lambda function prints its EMF lines: stdout, which
// CloudWatch Logs reads; nil (none) without a stage.
func metricsOut(stage string) io.Writer {
	if stage == "" {
		return nil
	}
	return os.Stdout
}

// unconfigured runs steps of a type the deployment has not set up: each
// fails, saying what setting it needs.
type unconfigured struct{ what string }

// RunStep fails the step (not retried: retrying does not configure it).
func (u unconfigured) RunStep(_ context.Context, m orchestrator.StepWork) (engine.StepFinished, error) {
	return engine.StepFinished{StepID: m.StepID, Attempt: m.Attempt, Outcome: engine.OutcomeFatalError, Message: u.what}, nil
}

// LambdaMemoryMB is the memory of the running Lambda function
// (AWS_LAMBDA_FUNCTION_MEMORY_SIZE), or, outside Lambda, what the stack
// deploys handler with.
func LambdaMemoryMB(handler string) int {
	if n, err := strconv.Atoi(os.Getenv("AWS_LAMBDA_FUNCTION_MEMORY_SIZE")); err == nil && n > 0 {
		return n
	}
	return resources.FunctionMemoryMB(handler)
}
