// Package stack runs the whole orchestrator on one machine: it finds or
// starts an AWS emulator, provisions the stage's resources from
// resources.Spec, builds the same handlers the Lambda functions run, and
// drives them with pumps that play Lambda's event source mappings (the
// DynamoDB stream at Lambda's 250 ms cadence, the SQS queues — decision,
// work and signal ingest — and EventBridge Scheduler's schedule firing).
// The API is served over HTTP, only to requests addressed to its listener
// and, for writes, from its own origin (siteGuard).
package stack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/maestro-serverless/maestro/caller"
	"github.com/maestro-serverless/maestro/images"
	"github.com/maestro-serverless/maestro/lambdas/api"
	"github.com/maestro-serverless/maestro/lambdas/wiring"
	"github.com/maestro-serverless/maestro/localstack"
	"github.com/maestro-serverless/maestro/localstack/sigv4"
	"github.com/maestro-serverless/maestro/metrics"
	"github.com/maestro-serverless/maestro/orchestrator"
	"github.com/maestro-serverless/maestro/resources"
	"github.com/maestro-serverless/maestro/signals"
	"github.com/maestro-serverless/maestro/steps/batchstep"
	"github.com/maestro-serverless/maestro/steps/ecsstep"
	"github.com/maestro-serverless/maestro/steps/steprights"
	"github.com/maestro-serverless/maestro/store"
	"github.com/maestro-serverless/maestro/teamrights"
)

// Options configures a local stack. The zero value serves on 127.0.0.1:8080.
type Options struct {
	// Addr is the API's listen address; "" means 127.0.0.1:8080 and
	// "127.0.0.1:0" picks a free port. The API answers only requests whose
	// Host names it (see siteGuard): on a loopback address, that address,
	// localhost, 127.0.0.1 or [::1] with its port; on 0.0.0.0 or ::, an IP
	// address or localhost with its port; a host name given here too.
	Addr string
	// Stage names the resources (default "local").
	Stage string
	// Emulator, when set, is used instead of discovering one; the stack
	// does not close it.
	Emulator *localstack.Emulator
	// StreamInterval is the stream poll period (default 250 ms, Lambda's).
	StreamInterval time.Duration
	// Clock is the stack's notion of now (default the system clock, which
	// POST /local/clock can move forward). A clock with an Advance method
	// gets that route and Stack.AdvanceClock; advance it through those,
	// which move the queues' message delays too, rather than directly.
	Clock localstack.Clock
	// Counter, when set, counts every AWS request the stack makes.
	Counter *localstack.RequestCounter
	// APIOptions are extra SDK middleware for every AWS client (metering).
	APIOptions []func(*middleware.Stack) error
	// Hooks wrap the handlers, e.g. to count invocations as Lambda would.
	Hooks Hooks
	// Faults inject failures into the SQS pumps (tests only).
	Faults Faults
	// VisibilityTimeout, when set, overrides every queue's visibility
	// timeout, so tests see crashed messages again within seconds.
	VisibilityTimeout time.Duration
	// MaestroEvents publishes Maestro's *_CHANGE_EVENT messages to the
	// events topic beside the runtime's own (cluster_name "local-<stage>").
	MaestroEvents bool
	// HTTPAllow is the Http step allow-list; nil means loopback only.
	HTTPAllow []string
	// Functions are the Lambda functions Lambda steps may invoke, by name
	// (see localstack.FunctionServer); every one is on the step's
	// allow-list.
	Functions map[string]localstack.LocalFunction
	// CallbackQueues (SQS queue URLs) and CallbackTopics (SNS topic ARNs)
	// are where Callback steps may send their task tokens.
	CallbackQueues, CallbackTopics []string
	// ECS provisions a cluster, a network and a log group on the emulator
	// and runs ECS and Kubernetes steps on them (ECSTaskDefinitions: the
	// families steps may name). BatchJobQueues and BatchJobDefinitions are
	// what Batch steps may use. Jobs end through the state-change events
	// EventBridge would send, posted to POST /local/job-events.
	ECS                                 bool
	ECSTaskDefinitions                  []string
	BatchJobQueues, BatchJobDefinitions []string
	// BatchGPUJobQueue is the Batch job queue where Kubernetes steps that
	// request GPUs run (with ECS); empty refuses them.
	BatchGPUJobQueue string
	// ECSImages is the image allow-list of Ecs and Kubernetes steps
	// (entries of package images), checked at push and at launch as in
	// AWS; empty allows any image, the local stack's default (its tasks run
	// no container).
	ECSImages []string
	// ForeachEstimateOver is the iterations past which a foreach
	// attempt's view carries an estimate (0: the orchestrator's default,
	// 1,000).
	ForeachEstimateOver int64
	// TeamRights and GrantsFrom: the AWS rights each team's steps launch
	// with, and where workflows' grants are read (see wiring.Options).
	TeamRights teamrights.Config
	GrantsFrom func(*store.Store) steprights.GrantSource
	// Metrics receives the handlers' EMF metric lines (as Lambda prints
	// them to CloudWatch Logs), dimensioned by the stage; nil emits none.
	Metrics io.Writer
	// WorkPollers and DecisionPollers size the SQS pumps (defaults 4 and 2).
	WorkPollers, DecisionPollers int
	// StateDir, when set, keeps the local stack's own state across
	// restarts: the stream pump's checkpoints, so a stack restarted against
	// a surviving emulator resumes where it stopped (as Lambda's event
	// source mapping does). Empty keeps nothing.
	StateDir string
	// SignalRules name the signals of S3 objects (MAESTRO_SIGNAL_RULES of
	// the signals function; see signals.FromS3).
	SignalRules []signals.Rule
	// SweepEvery is how often the recovery sweeper runs (default a minute,
	// the deployed schedule's rate): the stack hands its work message to
	// the worker handler, as EventBridge Scheduler and the work queue do in
	// AWS.
	SweepEvery time.Duration
	// ClaimLease, EventSweepAfter and SweepGrace tune recovery (see
	// wiring.Options); zero keeps the defaults.
	ClaimLease, EventSweepAfter, SweepGrace time.Duration
	Logger                                  *slog.Logger
	// Credentials, when any, make the API verify every request's SigV4
	// signature (service execute-api, the emulator's region) as API
	// Gateway's IAM authorization does, and record the principal of the
	// key that signed it (normalised, package principal) as its caller;
	// an unsigned or badly signed request gets a 403. GET /health stays
	// open. Without credentials the API is open and records LocalPrincipal.
	Credentials []sigv4.Credential
	// Admins are principal ARN patterns of the stack's admins; with
	// Credentials every route checks the caller's role (package access)
	// as the deployed stack does. Without Credentials nothing is checked.
	Admins []string
	// PrivateWorkflows and SignalPrefixes are the stack's authorization
	// settings (orchestrator.AccessSettings), used with Credentials.
	PrivateWorkflows bool
	SignalPrefixes   map[string][]string
}

// Hooks wrap the handlers the stack runs; nil hooks leave them as they are.
type Hooks struct {
	HTTP    func(http.Handler) http.Handler
	Router  func(localstack.StreamHandler) localstack.StreamHandler
	Decider func(localstack.SQSHandler) localstack.SQSHandler
	Worker  func(localstack.SQSHandler) localstack.SQSHandler
	Ingest  func(localstack.SQSHandler) localstack.SQSHandler
}

func wrap[H any](hook func(H) H, h H) H {
	if hook == nil {
		return h
	}
	return hook(h)
}

// Faults are failure injections for the decision and work pumps.
type Faults struct {
	// DuplicateDelivery hands every SQS batch to its handler twice.
	DuplicateDelivery bool
	// CrashAfterHandler skips the delete of chosen messages after the
	// handler succeeded, as if the worker died after its commit.
	CrashAfterHandler func(queue string, m events.SQSMessage) bool
}

// imageAllowList is the local stack's image allow-list: entries when there
// are some, else any image.
func imageAllowList(entries []string) (*images.AllowList, error) {
	if len(entries) == 0 {
		return images.AnyImage(), nil
	}
	return images.ParseAllowList(entries)
}

// Stack is a running local system.
type Stack struct {
	// URL is the API's base URL, e.g. http://127.0.0.1:8080.
	URL       string
	Emulator  *localstack.Emulator
	Resources *localstack.Resources
	Deps      *wiring.Deps
	// Functions serves Lambda's Invoke API for Options.Functions.
	Functions *localstack.FunctionServer
	// ECS is what ECS steps run on (Options.ECS), nil otherwise.
	ECS *localstack.ECSResources

	ownEmulator bool
	clock       localstack.AdvancingClock // nil when the clock cannot move
	gate        handlerGate               // see AdvanceClock
	sqs         *sqs.Client
	stream      *localstack.StreamPump
	schedules   *localstack.SchedulePump
	sqsPumps    []*localstack.SQSPump
	queueURLs   []string
	server      *http.Server
	cancel      context.CancelFunc
	wg          sync.WaitGroup
	log         *slog.Logger
}

// Start brings the stack up and returns once the API answers /health.
func Start(ctx context.Context, opts Options) (*Stack, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Stage == "" {
		opts.Stage = "local"
	}
	if _, err := resources.ParseStage(opts.Stage); err != nil {
		return nil, err
	}
	var err error
	if opts.Credentials, opts.Admins, err = checkPrincipals(opts.Credentials, opts.Admins); err != nil {
		return nil, err
	}
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:8080"
	}
	if opts.Clock == nil {
		opts.Clock = &localstack.OffsetClock{}
	}
	if opts.HTTPAllow == nil {
		opts.HTTPAllow = []string{"loopback"}
	}
	if opts.WorkPollers <= 0 {
		opts.WorkPollers = 4
	}
	if opts.DecisionPollers <= 0 {
		opts.DecisionPollers = 2
	}
	if opts.SweepEvery <= 0 {
		opts.SweepEvery = time.Minute
	}
	s := &Stack{Emulator: opts.Emulator, log: opts.Logger}
	s.clock, _ = opts.Clock.(localstack.AdvancingClock)
	if s.Emulator == nil {
		em, err := localstack.Discover(ctx, localstack.DiscoverOptions{Logger: opts.Logger})
		if err != nil {
			return nil, err
		}
		s.Emulator, s.ownEmulator = em, true
	}
	fail := func(err error) (*Stack, error) {
		s.Close()
		return nil, err
	}
	apiOpts := append([]func(*middleware.Stack) error{}, opts.APIOptions...)
	if opts.Counter != nil {
		apiOpts = append(apiOpts, opts.Counter.Middleware())
	}
	awsCfg, err := s.Emulator.AWSConfig(ctx, config.WithAPIOptions(apiOpts))
	if err != nil {
		return fail(err)
	}
	s.Functions, err = localstack.StartFunctionServer(opts.Functions, opts.Logger)
	if err != nil {
		return fail(err)
	}
	localstack.WithServiceEndpoint(&awsCfg, "Lambda", s.Functions.URL)
	functionNames := make([]string, 0, len(opts.Functions))
	for name := range opts.Functions {
		functionNames = append(functionNames, name)
	}
	sort.Strings(functionNames)
	spec := resources.ForStage(opts.Stage)
	if v := opts.VisibilityTimeout; v > 0 {
		for _, q := range []*resources.Queue{&spec.Queues.Decision, &spec.Queues.Work, &spec.Queues.SignalIngest} {
			q.VisibilityTimeout = v
		}
	}
	res, err := localstack.Provision(ctx, awsCfg, spec)
	if err != nil {
		return fail(fmt.Errorf("provision stage %s: %w", opts.Stage, err))
	}
	s.Resources = res
	resJSON, err := json.Marshal(res)
	if err != nil {
		return fail(err)
	}
	allowImages, err := imageAllowList(opts.ECSImages)
	if err != nil {
		return fail(err)
	}
	var ecsCfg ecsstep.Config
	if opts.ECS {
		if s.ECS, err = localstack.ProvisionECS(ctx, awsCfg, opts.Stage); err != nil {
			return fail(err)
		}
		ecsCfg = ecsstep.Config{Cluster: s.ECS.Cluster, Subnets: []string{s.ECS.Subnet}, SecurityGroups: []string{s.ECS.SecurityGroup},
			ExecutionRoleARN: s.ECS.ExecutionRole, LogGroup: s.ECS.LogGroup, Family: s.ECS.Family, StartedBy: s.ECS.Family,
			AllowTaskDefinitions: opts.ECSTaskDefinitions,
			NotebookBucket:       res.Bucket.Name, NotebookPrefix: NotebookPrefix}
	}
	s.Deps, err = wiring.Build(wiring.Config{
		Table:            res.Table.Name,
		DecisionQueueURL: res.Queues.Decision.URL,
		WorkQueueURL:     res.Queues.Work.URL,
		WorkQueueARN:     res.Queues.Work.ARN,
		ScheduleGroup:    res.SchedulerGroup.Name,
		// The emulator does not check roles; in AWS the CDK app passes the
		// role Scheduler assumes to send to the work queue.
		SchedulerRoleARN: "arn:aws:iam::000000000000:role/maestro-" + opts.Stage + "-scheduler",
		EventsTopicARN:   res.Topics.Events.ARN,
		SignalDLQURL:     res.Queues.SignalIngestDLQ.URL,
		SignalRules:      opts.SignalRules,
		MaestroEvents:    opts.MaestroEvents,
		ClusterName:      "local-" + opts.Stage,
	}, awsCfg, wiring.Options{
		Now:             opts.Clock.Now,
		Logger:          opts.Logger,
		Emulator:        true,
		HTTPAllow:       opts.HTTPAllow,
		LambdaFunctions: functionNames, CallbackQueues: opts.CallbackQueues, CallbackTopics: opts.CallbackTopics,
		ECS: ecsCfg, ECSImages: allowImages,
		Batch: batchstep.Config{AllowQueues: opts.BatchJobQueues, AllowDefinitions: opts.BatchJobDefinitions, GPUJobQueue: opts.BatchGPUJobQueue},
		// Foreach steps read their items from the stack's bucket, as the
		// deployed stack's read from its signals bucket.
		ItemsBuckets: []string{res.Bucket.Name},
		Metrics:      opts.Metrics, Stage: opts.Stage,
		ClaimLease: opts.ClaimLease, EventSweepAfter: opts.EventSweepAfter, SweepGrace: opts.SweepGrace,
		Access: orchestrator.AccessSettings{Enforce: len(opts.Credentials) > 0, Admins: opts.Admins,
			PrivateWorkflows: opts.PrivateWorkflows, SignalPrefixes: opts.SignalPrefixes},
		TeamRights: opts.TeamRights, GrantsFrom: opts.GrantsFrom, ForeachEstimateOver: opts.ForeachEstimateOver,
		HealthInfo: orchestrator.HealthView{
			Endpoint: s.Emulator.Endpoint, Emulator: string(s.Emulator.Kind),
			DynamoDBEndpoint: s.Emulator.DynamoDBEndpoint, Resources: resJSON,
		},
	})
	if err != nil {
		return fail(err)
	}

	apiOptions := api.Options{Logger: opts.Logger, MemoryMB: resources.FunctionMemoryMB("api")}
	jobEvents := jobEventRoutes(sqs.NewFromConfig(awsCfg), res.Queues.Work.URL)
	apiOptions.ExtraRoutes = func(mux *http.ServeMux) {
		if s.clock != nil {
			clockRoutes(s)(mux)
		}
		jobEvents(mux)
	}
	verifier, err := newVerifier(opts.Credentials, s.Emulator.Region)
	if err != nil {
		return fail(fmt.Errorf("credentials: %w", err))
	}
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return fail(fmt.Errorf("listen on %s: %w", opts.Addr, err))
	}
	s.URL = "http://" + ln.Addr().String()
	tcpAddr, ok := ln.Addr().(*net.TCPAddr)
	if !ok {
		ln.Close()
		return fail(fmt.Errorf("listen on %s: not a TCP address: %s", opts.Addr, ln.Addr()))
	}
	callerOf := localCaller
	if verifier != nil {
		callerOf = func(h http.Handler) http.Handler { return signedCaller(verifier, opts.Logger, h) }
	}
	s.server = &http.Server{
		Handler: wrap(opts.Hooks.HTTP, guardSite(callerOf(flushing(s.Deps.Metrics, api.NewHandler(api.ServicesOf(s.Deps.Orchestrator), apiOptions))),
			opts.Addr, tcpAddr, opts.Logger)),
		ReadHeaderTimeout: 10 * time.Second,
	}

	runCtx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	sqsClient := sqs.NewFromConfig(awsCfg)
	crash := func(queue string) func(m events.SQSMessage) bool {
		if opts.Faults.CrashAfterHandler == nil {
			return nil
		}
		return func(m events.SQSMessage) bool { return opts.Faults.CrashAfterHandler(queue, m) }
	}
	var checkpoints localstack.Checkpoints
	if opts.StateDir != "" {
		cp, err := localstack.OpenFileCheckpoints(filepath.Join(opts.StateDir, opts.Stage+"-stream-checkpoints.json"))
		if err != nil {
			return fail(err)
		}
		checkpoints = cp
	}
	// Every handler the pumps and the sweep call holds the gate that
	// AdvanceClock closes; the hooks wrap the gated handlers.
	// Each invocation ends with a flush of its metric values, as in Lambda
	// (metrics.FlushAfter).
	emf := s.Deps.Metrics
	router := wrap(opts.Hooks.Router, gated(&s.gate, metrics.FlushAfter(emf, s.Deps.Router.Handle)))
	decider := wrap(opts.Hooks.Decider, gated(&s.gate, metrics.FlushAfter(emf, s.Deps.Decider.Handle)))
	worker := wrap(opts.Hooks.Worker, gated(&s.gate, metrics.FlushAfter(emf, s.Deps.Worker.Handle)))
	ingest := wrap(opts.Hooks.Ingest, gated(&s.gate, metrics.FlushAfter(emf, s.Deps.Ingest.Handle)))
	streamPump := localstack.NewStreamPump(dynamodbstreams.NewFromConfig(awsCfg), res.Table.StreamARN, router,
		localstack.StreamPumpOptions{
			Interval: opts.StreamInterval, Filter: localstack.NewImageHas(store.OutboxAttribute),
			Region: s.Emulator.Region, Logger: opts.Logger, StartAtLatest: true, Checkpoints: checkpoints,
		})
	// Take the stream's positions before the API accepts writes, so no
	// record written from here on is skipped: a shard with a checkpoint
	// (a restart against a surviving emulator) resumes after it; others
	// start at their latest record, so older records (a reused LocalStack
	// table) are not replayed.
	if err := streamPump.Prime(ctx); err != nil {
		return fail(fmt.Errorf("prime stream pump: %w", err))
	}
	s.sqs, s.stream = sqsClient, streamPump
	s.sqsPumps = []*localstack.SQSPump{
		localstack.NewSQSPump(sqsClient, res.Queues.Decision.URL, decider, localstack.SQSPumpOptions{
			Pollers: opts.DecisionPollers, QueueARN: res.Queues.Decision.ARN, Region: s.Emulator.Region, Logger: opts.Logger,
			WaitTime: time.Second, DuplicateDelivery: opts.Faults.DuplicateDelivery, CrashAfterHandler: crash(store.QueueDecision),
		}),
		localstack.NewSQSPump(sqsClient, res.Queues.Work.URL, worker, localstack.SQSPumpOptions{
			Pollers: opts.WorkPollers, QueueARN: res.Queues.Work.ARN, Region: s.Emulator.Region, Logger: opts.Logger,
			WaitTime: time.Second, DuplicateDelivery: opts.Faults.DuplicateDelivery, CrashAfterHandler: crash(store.QueueWork),
		}),
		localstack.NewSQSPump(sqsClient, res.Queues.SignalIngest.URL, ingest, localstack.SQSPumpOptions{
			QueueARN: res.Queues.SignalIngest.ARN, Region: s.Emulator.Region, Logger: opts.Logger, WaitTime: time.Second,
		}),
	}
	s.queueURLs = []string{res.Queues.Decision.URL, res.Queues.Work.URL, res.Queues.SignalIngest.URL}
	s.schedules = localstack.NewSchedulePump(scheduler.NewFromConfig(awsCfg), sqsClient, res.SchedulerGroup.Name,
		localstack.SchedulePumpOptions{Clock: opts.Clock, Logger: opts.Logger})
	pumps := []interface{ Run(context.Context) error }{streamPump, s.schedules}
	for _, p := range s.sqsPumps {
		pumps = append(pumps, p)
	}
	for _, p := range pumps {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			if err := p.Run(runCtx); err != nil && !errors.Is(err, context.Canceled) {
				opts.Logger.Error("pump stopped", "error", err)
			}
		}()
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.sweepSchedule(runCtx, worker, opts.SweepEvery)
	}()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := s.server.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			opts.Logger.Error("API server stopped", "error", err)
		}
	}()
	if err := waitHealthy(ctx, s.URL); err != nil {
		return fail(err)
	}
	return s, nil
}

// sweepSchedule plays the deployed stack's sweep schedule and the work
// queue's delivery of its message: every period it hands the recovery
// sweeper's work message to the worker handler, one at a time. (Through the
// queue, a fast test cadence would keep the queue busy for good, and
// WaitIdle would never see it idle.)
func (s *Stack) sweepSchedule(ctx context.Context, worker localstack.SQSHandler, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for n := 1; ; n++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		resp, err := worker(ctx, events.SQSEvent{Records: []events.SQSMessage{{
			MessageId: fmt.Sprintf("sweep-%d", n), Body: orchestrator.SweepBody, EventSource: "aws:sqs",
		}}})
		if ctx.Err() != nil {
			return
		}
		if err != nil || len(resp.BatchItemFailures) > 0 {
			s.log.Error("sweep failed; the next one runs in a period", "error", err)
		}
	}
}

// LocalPrincipal is the caller the local stack records for its API's
// requests: it authenticates no one (API Gateway's IAM authorization does in
// AWS).
const LocalPrincipal = "local"

// localCaller records LocalPrincipal as every request's caller.
func localCaller(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(caller.With(r.Context(), LocalPrincipal)))
	})
}

func waitHealthy(ctx context.Context, url string) error {
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/health", nil)
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("API at %s did not become healthy within 10s", url)
}

// WaitIdle returns once the stack has nothing left to do now: no message
// visible or in flight on its queues, no batch being handled, and two
// stream poll rounds completed since, the last of which read nothing — so
// everything written before WaitIdle was called has been delivered and
// handled, and whatever that caused too. Delayed messages (timers, retry
// backoffs) and schedules not yet due are not work to do now. Tests use it
// to assert that something did not happen.
func (s *Stack) WaitIdle(ctx context.Context) error {
	// pause is between looks at the stream pump's progress (no request);
	// busyPause between looks at the queues while they hold work, three
	// requests to the emulator each (moto answers them on the CPU the
	// stack's handlers need).
	const pause, busyPause = 20 * time.Millisecond, 100 * time.Millisecond
	for {
		busy, err := s.busy(ctx)
		if err != nil {
			return err
		}
		if !busy {
			start, _ := s.stream.Progress()
			for {
				rounds, idle := s.stream.Progress()
				if rounds >= start+2 {
					if !idle {
						break
					}
					if busy, err = s.busy(ctx); err != nil {
						return err
					}
					if !busy {
						return nil
					}
					break
				}
				if err := sleepCtx(ctx, pause); err != nil {
					return err
				}
			}
		}
		if err := sleepCtx(ctx, busyPause); err != nil {
			return err
		}
	}
}

// WaitSchedulesSeen returns once the schedule pump (the stack's
// EventBridge Scheduler) has seen every schedule that exists now: as
// Scheduler, it fires a schedule's times only from when it first saw it.
func (s *Stack) WaitSchedulesSeen(ctx context.Context) error {
	start := s.schedules.Rounds()
	for s.schedules.Rounds() < start+2 {
		if err := sleepCtx(ctx, 20*time.Millisecond); err != nil {
			return err
		}
	}
	return nil
}

// busy reports whether a queue holds visible or in-flight messages or a
// pump is handling a batch.
func (s *Stack) busy(ctx context.Context) (bool, error) {
	for _, p := range s.sqsPumps {
		if p.InFlight() > 0 {
			return true, nil
		}
	}
	for _, url := range s.queueURLs {
		out, err := s.sqs.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
			QueueUrl: aws.String(url),
			AttributeNames: []sqstypes.QueueAttributeName{
				sqstypes.QueueAttributeNameApproximateNumberOfMessages,
				sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible,
			},
		})
		if err != nil {
			return false, fmt.Errorf("wait idle: queue attributes of %s: %w", url, err)
		}
		for _, v := range out.Attributes {
			if v != "0" {
				return true, nil
			}
		}
	}
	return false, nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Close stops the API, the pumps and (if the stack started it) the emulator.
func (s *Stack) Close() error {
	if s.server != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = s.server.Shutdown(ctx)
		cancel()
	}
	if s.cancel != nil {
		s.cancel()
	}
	s.wg.Wait()
	if s.Functions != nil {
		_ = s.Functions.Close()
	}
	if s.ownEmulator && s.Emulator != nil {
		return s.Emulator.Close()
	}
	return nil
}

// flushing ends each request h serves with a flush of its metric values,
// as the API Lambda's invocations end (metrics.FlushAfter).
func flushing(e *metrics.Emitter, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer e.Flush()
		h.ServeHTTP(w, r)
	})
}

// NotebookPrefix is where, in the stack's bucket, Notebook steps write
// the notebooks they executed (the CDK app uses the same).
const NotebookPrefix = ecsstep.DefaultNotebookPrefix
