// Package bench measures the orchestrator on the local stack: a sequential
// chain and a wide fan-out of NoOp steps, and a DAG of Http steps calling a
// loopback server, are pushed and started over the HTTP API, and the step timelines, the AWS requests the system makes and
// the Lambda invocations it would take give the step-launch and start
// overheads, the throughput and an estimate of the AWS cost per step.
package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go/middleware"
	"github.com/google/uuid"

	"github.com/maestro-serverless/maestro/localstack"
	"github.com/maestro-serverless/maestro/localstack/sigv4"
	"github.com/maestro-serverless/maestro/localstack/stack"
	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/orchestrator"
)

// Defaults of Config.
const (
	DefaultRuns       = 5
	DefaultSteps      = 100
	DefaultHTTPSteps  = 300
	DefaultHTTPChain  = 10
	DefaultHTTPChains = 200
	DefaultHTTPFan    = 250
	// DefaultJoinWidth is the width of the Http join DAG's layers.
	DefaultJoinWidth = 4
	// DefaultForeach is the foreach workload's iterations, and
	// DefaultForeachConcurrency its concurrency.
	DefaultForeach            = 5000
	DefaultForeachConcurrency = 500
	DefaultStreamInterval     = 250 * time.Millisecond
	DefaultTimeout            = 2 * time.Minute
	DefaultPollInterval       = 100 * time.Millisecond
	// settleLimit bounds the wait for the system to fall quiet after a
	// workload.
	settleLimit = 30 * time.Second
)

// Config sets what the benchmark runs. Zero fields take the defaults.
type Config struct {
	// Runs is how many instances of each workload are started, one after
	// the other.
	Runs int
	// Steps is the chain's length and the fan-out's width.
	Steps int
	// HTTPSteps is the size of the Http DAG: ten chains of HTTPSteps/10 Http
	// steps calling a loopback server (default 300; negative skips it).
	HTTPSteps int
	// HTTPChain is the length of the Http chains (default 10): Config.Runs
	// instances of one run one after the other ("httpchain"), and
	// HTTPChains instances of it run at once ("httpchains", one round;
	// default 200). HTTPFan is the width of the Http fan (default 250).
	// Negative skips the workload.
	HTTPChain, HTTPChains, HTTPFan int
	// HTTPJoins is the layers of the Http join DAG ("httpjoins": layers of
	// JoinWidth Http steps, every step waiting for every step of the layer
	// before, default width 4); 0 (the default) skips it.
	HTTPJoins, JoinWidth int
	// Foreach is the iterations of the foreach workload (a NoOp body,
	// ForeachConcurrency at once, default 500); 0 skips it. ForeachHTTP is
	// the iterations of the foreachhttp workload (an Http body calling the
	// loopback server, ForeachConcurrency at once); 0 (the default) skips it.
	Foreach, ForeachConcurrency, ForeachHTTP int
	// ForeachItems is the iterations of the foreachitems workload: a NoOp
	// body, ForeachConcurrency at once, fed by a JSONL object of that many
	// items in the stack's bucket (items_from); 0 (the default) skips it.
	ForeachItems int
	// StreamInterval is the DynamoDB stream poll period (Lambda's is 250 ms).
	StreamInterval time.Duration
	// Timeout bounds each instance, from its start request to its end.
	Timeout time.Duration
	// PollInterval is the period of the instance status reads.
	PollInterval time.Duration
	// Stage names the provisioned resources (default "bench").
	Stage string
	// WorkPollers sizes the work queue's local event source mapping: how
	// many batches of up to ten messages the workers take at once (0: the
	// local stack's default, 4). Lambda's own mapping scales out as a
	// queue backs up.
	WorkPollers int
	// Emulator, when set, is used instead of discovering one; Run does not
	// close it.
	Emulator *localstack.Emulator
	// Logger receives the system's logs; nil discards them.
	Logger *slog.Logger
	// SingleStarts starts a concurrent workload's instances with a start
	// request each, as before start-batch; by default they are started
	// 100 to a request.
	SingleStarts bool
	// Trace, when set, receives one line per AWS call the system makes
	// (see NewTracingMeter), for finding where time goes.
	Trace io.Writer

	// calls is the Http steps' server's log, set by Run.
	calls *CallLog
}

func (c *Config) defaults() {
	c.Runs = positiveOr(c.Runs, DefaultRuns)
	c.Steps = positiveOr(c.Steps, DefaultSteps)
	c.HTTPSteps = cmp.Or(c.HTTPSteps, DefaultHTTPSteps)
	c.HTTPChain = cmp.Or(c.HTTPChain, DefaultHTTPChain)
	c.HTTPChains = cmp.Or(c.HTTPChains, DefaultHTTPChains)
	c.HTTPFan = cmp.Or(c.HTTPFan, DefaultHTTPFan)
	c.JoinWidth = positiveOr(c.JoinWidth, DefaultJoinWidth)
	c.ForeachConcurrency = positiveOr(c.ForeachConcurrency, DefaultForeachConcurrency)
	c.StreamInterval = positiveOr(c.StreamInterval, DefaultStreamInterval)
	c.Timeout = positiveOr(c.Timeout, DefaultTimeout)
	c.PollInterval = positiveOr(c.PollInterval, DefaultPollInterval)
	c.Stage = cmp.Or(c.Stage, "bench")
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}

// positiveOr is v when it is positive, else d.
func positiveOr[T int | time.Duration](v, d T) T {
	if v > 0 {
		return v
	}
	return d
}

// Run starts a local stack, runs the chain and the fan-out workloads and
// returns their figures. An error means the benchmark could not run; runs
// that did not succeed are listed in the report's failures instead.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg.defaults()
	chain, err := Chain(fmt.Sprintf("bench-chain-%d", cfg.Steps), cfg.Steps)
	if err != nil {
		return nil, err
	}
	fan, err := FanOut(fmt.Sprintf("bench-fanout-%d", cfg.Steps), cfg.Steps)
	if err != nil {
		return nil, err
	}
	workloads := []*Workload{chain, fan}
	if cfg.Foreach > 0 {
		fe, err := Foreach(fmt.Sprintf("bench-foreach-%d", cfg.Foreach), cfg.Foreach, cfg.ForeachConcurrency)
		if err != nil {
			return nil, err
		}
		workloads = append(workloads, fe)
	}
	if cfg.ForeachItems > 0 {
		fi, err := ForeachItems(fmt.Sprintf("bench-foreachitems-%d", cfg.ForeachItems), cfg.ForeachItems, cfg.ForeachConcurrency)
		if err != nil {
			return nil, err
		}
		workloads = append(workloads, fi)
	}
	if cfg.HTTPSteps > 0 || cfg.HTTPChain > 0 || cfg.HTTPFan > 0 || cfg.ForeachHTTP > 0 || cfg.HTTPJoins > 0 {
		// The server the Http steps call: on loopback, which the local
		// stack's allow-list admits.
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("bench: listen for the Http steps: %w", err)
		}
		cfg.calls = NewCallLog()
		srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: cfg.calls}
		go func() { _ = srv.Serve(ln) }()
		defer srv.Close()
		url := "http://" + ln.Addr().String() + "/"
		http, err := httpWorkloads(cfg, url)
		if err != nil {
			return nil, err
		}
		workloads = append(workloads, http...)
	}
	meter, calls, logs := NewTracingMeter(cfg.Trace), NewInvocations(), NewLogMeter()
	rep := &Report{Runs: cfg.Runs, Steps: cfg.Steps, StreamInterval: cfg.StreamInterval.String()}
	for _, w := range workloads {
		res, err := runOnStack(ctx, cfg, w, meters{aws: meter, calls: calls, logs: logs}, rep)
		if err != nil {
			return nil, err
		}
		rep.Workloads = append(rep.Workloads, res)
	}
	rep.Overall = combine(rep.Workloads)
	return rep, nil
}

// meters are what runOnStack measures a workload with: the AWS calls,
// the handlers' invocations and their logs.
type meters struct {
	aws   *Meter
	calls *Invocations
	logs  *LogMeter
}

// runOnStack runs workload w on a local stack of its own — the same stack
// as `maestro local`, with every AWS client metered and every handler
// counted as the Lambda function it is in AWS — and returns its figures.
// Its own stack means its own emulators, where the stack starts them (not
// when cfg.Emulator or AWS_ENDPOINT_URL names one, which all share):
// DynamoDB Local keeps every stream record it was sent and reads through
// them on every write, so a workload run after the 5,000-iteration foreach
// found each write slower than one run first (see docs/benchmarks.md).
// Notes on its settling go to rep, which also gets the emulator's name.
// benchPrincipal is the role the benchmark's client calls the API as.
const benchPrincipal = "arn:aws:iam::000000000000:role/maestro-bench"

func runOnStack(ctx context.Context, cfg Config, w *Workload, m meters, rep *Report) (*WorkloadResult, error) {
	meter, calls := m.aws, m.calls
	// The handlers log as deployed (JSON at Info, EMF lines) into the log
	// meter, but for the benchmark's own reads, and to cfg.Logger as well.
	logger := slog.New(slog.NewMultiHandler(cfg.Logger.Handler(), meteredLogs{slog.NewJSONHandler(m.logs, nil)}))
	// The client signs as a caller of the deployed API, whose every
	// request is authorized (a team lookup and the workflow's grant), as
	// the local stack does with credentials.
	benchKey := sigv4.Credential{AccessKey: "AKIDBENCH", Secret: uuid.NewString(), Principal: benchPrincipal}
	st, err := stack.Start(ctx, stack.Options{
		Credentials: []sigv4.Credential{benchKey},
		Addr:        "127.0.0.1:0", Stage: cfg.Stage, StreamInterval: cfg.StreamInterval, Emulator: cfg.Emulator,
		WorkPollers: cfg.WorkPollers, Logger: logger, Metrics: m.logs, APIOptions: []func(*middleware.Stack) error{meter.Middleware()},
		Hooks: stack.Hooks{
			HTTP:    func(h http.Handler) http.Handler { return calls.HTTP(FunctionAPI, h) },
			Router:  func(h localstack.StreamHandler) localstack.StreamHandler { return calls.Stream(FunctionRouter, h) },
			Decider: func(h localstack.SQSHandler) localstack.SQSHandler { return calls.SQS(FunctionDecider, h) },
			Worker:  func(h localstack.SQSHandler) localstack.SQSHandler { return calls.SQS(FunctionWorker, h) },
		},
	})
	if err != nil {
		return nil, fmt.Errorf("bench: start the local stack for %s: %w", w.Name, err)
	}
	defer st.Close()
	reported := reportsCapacity(st.Emulator)
	if reported {
		meter.UseReportedCapacity()
	}
	rep.Emulator, rep.Assumptions = emulatorName(st.Emulator), Assumptions(reported)

	pending, err := queueDepth(ctx, st)
	if err != nil {
		return nil, err
	}
	// The client keeps a connection per request in flight (hundreds of
	// starts and status reads at once): with net/http's default of two
	// idle connections per host it dialled most of them anew, CPU taken
	// from the stack it measures.
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns, tr.MaxIdleConnsPerHost = 0, 512
	defer tr.CloseIdleConnections()
	c := &client{base: st.URL, http: &http.Client{Transport: tr}, region: st.Emulator.Region, signer: v4.NewSigner(),
		creds: aws.Credentials{AccessKeyID: benchKey.AccessKey, SecretAccessKey: benchKey.Secret}}
	def := w.Definition
	if w.Items > 0 {
		if def, err = putItems(ctx, st, w); err != nil {
			return nil, err
		}
	}
	version, err := c.push(ctx, def)
	if err != nil {
		return nil, fmt.Errorf("bench: push the %s definition: %w", w.Name, err)
	}
	if err := settle(ctx, meter, calls, cfg.StreamInterval, pending); err != nil {
		rep.Notes = append(rep.Notes, fmt.Sprintf("before %s: %v; its figures include earlier work", w.Name, err))
	}
	meter.Reset()
	calls.Reset()
	m.logs.Reset()
	heap := sampleHeap()
	var paths, repeats int
	if cfg.calls != nil {
		paths, repeats = cfg.calls.Count()
	}
	res := runWorkload(ctx, c, w, version, cfg)
	res.PeakHeapBytes = heap()
	if cfg.calls != nil && w.Iterations > 0 {
		p, r := cfg.calls.Count()
		res.CalledSteps, res.RepeatedCalls = p-paths, r-repeats
	}
	if err := settle(ctx, meter, calls, cfg.StreamInterval, pending); err != nil {
		rep.Notes = append(rep.Notes, fmt.Sprintf("after %s: %v; work after that is not counted", w.Name, err))
	}
	res.AWS = meter.Usage()
	res.Lambda = calls.Usage()
	res.Logs = m.logs.Usage()
	res.Cost = EstimateCost(res.AWS, res.Logs, res.Lambda, FunctionAPI, res.StepsCompleted)
	if res.RecordedCost, err = recordedCost(ctx, c, w.WorkflowID, res.instances, meteredOrchestration(res.AWS, res.Lambda, FunctionAPI)); err != nil {
		return nil, fmt.Errorf("bench: %s: %w", w.Name, err)
	}
	return res, nil
}

// httpWorkloads returns the workloads of Http steps calling url that cfg
// asks for.
func httpWorkloads(cfg Config, url string) ([]*Workload, error) {
	var ws []*Workload
	if cfg.HTTPChain > 0 {
		w, err := HTTPChain("httpchain", fmt.Sprintf("bench-httpchain-%d", cfg.HTTPChain), url, cfg.HTTPChain)
		if err != nil {
			return nil, err
		}
		ws = append(ws, w)
		if cfg.HTTPChains > 0 {
			many, err := HTTPChain("httpchains", fmt.Sprintf("bench-httpchains-%d", cfg.HTTPChain), url, cfg.HTTPChain)
			if err != nil {
				return nil, err
			}
			if err := many.Concurrently(cfg.HTTPChains); err != nil {
				return nil, err
			}
			ws = append(ws, many)
		}
	}
	if cfg.HTTPFan > 0 {
		w, err := HTTPFan(fmt.Sprintf("bench-httpfan-%d", cfg.HTTPFan), url, cfg.HTTPFan)
		if err != nil {
			return nil, err
		}
		ws = append(ws, w)
	}
	if cfg.ForeachHTTP > 0 {
		w, err := ForeachHTTP(fmt.Sprintf("bench-foreachhttp-%d", cfg.ForeachHTTP), url, cfg.ForeachHTTP, cfg.ForeachConcurrency)
		if err != nil {
			return nil, err
		}
		ws = append(ws, w)
	}
	if cfg.HTTPJoins > 0 {
		w, err := HTTPJoins(fmt.Sprintf("bench-httpjoins-%dx%d", cfg.HTTPJoins, cfg.JoinWidth), url, cfg.HTTPJoins, cfg.JoinWidth)
		if err != nil {
			return nil, err
		}
		ws = append(ws, w)
	}
	if cfg.HTTPSteps > 0 {
		width := min(10, cfg.HTTPSteps)
		w, err := HTTPDAG(fmt.Sprintf("bench-httpdag-%d", cfg.HTTPSteps), url, width, cfg.HTTPSteps/width)
		if err != nil {
			return nil, err
		}
		ws = append(ws, w)
	}
	return ws, nil
}

// runWorkload starts cfg.Runs instances of w one after the other (or, for
// a concurrent workload, one round of w.Concurrent instances at once) and
// measures each.
func runWorkload(ctx context.Context, c *client, w *Workload, version int64, cfg Config) *WorkloadResult {
	runs, at := cfg.Runs, 1
	if w.Concurrent > 1 {
		runs, at = w.Concurrent, w.Concurrent
	}
	if w.Iterations > 0 {
		// One loop is the measure: its iterations are the units.
		runs = 1
		cfg.Timeout = max(cfg.Timeout, time.Duration(w.Iterations)*50*time.Millisecond)
	}
	res := &WorkloadResult{Name: w.Name, WorkflowID: w.WorkflowID, StepsPerRun: w.Steps, Runs: runs}
	type outcome struct {
		m   *instanceFigures
		err error
	}
	outcomes := make([]outcome, runs)
	firstSent := time.Now()
	for i := 0; i < runs; i += at {
		var wg sync.WaitGroup
		// The round's start requests go out now: its batches at once, or
		// each instance's own request as its goroutine begins.
		sent := time.Now()
		starts := startsOf(ctx, c, w, version, i, min(i+at, runs), at > 1 && !cfg.SingleStarts)
		for j := i; j < min(i+at, runs); j++ {
			wg.Go(func() {
				if ctx.Err() != nil {
					outcomes[j].err = ctx.Err()
					return
				}
				icfg := cfg
				if at > 1 {
					// Every instance waits for the others' steps too.
					icfg.Timeout = cfg.Timeout * time.Duration(max(1, at/40))
					// and reads its status less often: the instances' status
					// reads together stay near 20 a second, so the
					// benchmark's own polling does not take the machine's
					// cores from the system it measures (ends are the
					// server's timestamps, not when a poll saw them).
					icfg.PollInterval = max(cfg.PollInterval, time.Duration(at)*50*time.Millisecond)
				}
				outcomes[j].m, outcomes[j].err = runInstance(ctx, c, w, version, sent, icfg, starts[j-i])
			})
		}
		wg.Wait()
	}
	var lastEnd int64
	var flight []interval
	for i, o := range outcomes {
		if o.err != nil {
			res.Failures = append(res.Failures, fmt.Sprintf("run %d: %v", i+1, o.err))
			continue
		}
		m := o.m
		res.instances = append(res.instances, m.id)
		res.Succeeded++
		if w.Iterations > 0 {
			res.StepsCompleted += int64(w.Iterations)
		} else {
			res.StepsCompleted += int64(w.Steps)
		}
		res.launch = append(res.launch, m.launch...)
		res.start = append(res.start, m.start)
		res.startReq = append(res.startReq, m.startRequest)
		res.makespan = append(res.makespan, m.makespan)
		res.gap = append(res.gap, m.gaps...)
		if m.firstCall > 0 {
			res.firstCall = append(res.firstCall, m.firstCall)
		}
		lastEnd = max(lastEnd, m.end)
		flight = append(flight, interval{from: m.sent, to: float64(m.end)})
	}
	if res.Succeeded > 0 {
		res.WallSeconds = (float64(lastEnd) - float64(firstSent.UnixMicro())/1000) / 1000
		res.BusySeconds = covered(flight) / 1000
	}
	res.summarize()
	return res
}

// instanceFigures are one instance's measurements, in milliseconds.
type instanceFigures struct {
	id           int64
	launch       []float64
	start        float64
	startRequest float64
	makespan     float64
	// sent is when the start request was sent and end the instance's end
	// time (unix ms).
	sent float64
	end  int64
	// gaps and firstCall are measured at the Http steps' server (ms): see
	// CallLog; firstCall is start request sent -> first call arrived.
	gaps      []float64
	firstCall float64
}

// startFunc starts an instance, or waits for the batch that starts it.
type startFunc func(ctx context.Context) (*orchestrator.StartResponse, error)

// startsOf are the starts of instances from to to (exclusive) of w: each
// its own start request, or, with batch, start-batch requests of up to
// orchestrator.MaxBatchStarts instances, sent at once as the deployed
// stage's throttle (50 requests a second) requires of a client starting
// hundreds.
func startsOf(ctx context.Context, c *client, w *Workload, version int64, from, to int, batch bool) []startFunc {
	starts := make([]startFunc, to-from)
	if !batch {
		for k := range starts {
			starts[k] = func(ctx context.Context) (*orchestrator.StartResponse, error) {
				return c.start(ctx, w.WorkflowID, version)
			}
		}
		return starts
	}
	for lo := 0; lo < len(starts); lo += orchestrator.MaxBatchStarts {
		hi := min(lo+orchestrator.MaxBatchStarts, len(starts))
		done := make(chan struct{})
		var resps []*orchestrator.StartResponse
		var err error
		go func() {
			defer close(done)
			resps, err = c.startBatch(ctx, w.WorkflowID, version, hi-lo)
		}()
		for k := lo; k < hi; k++ {
			starts[k] = func(ctx context.Context) (*orchestrator.StartResponse, error) {
				select {
				case <-done:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
				if err != nil {
					return nil, err
				}
				return resps[k-lo], nil
			}
		}
	}
	return starts
}

// runInstance starts one instance with start (its request sent at sent),
// waits for it to end and measures it.
func runInstance(ctx context.Context, c *client, w *Workload, version int64, sent time.Time, cfg Config, start startFunc) (*instanceFigures, error) {
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	resp, err := start(ctx)
	if err != nil {
		return nil, err
	}
	startRequest := msSince(sent)
	var status model.WorkflowStatus
	var end int64
	for {
		inst, err := c.instance(ctx, w.WorkflowID, resp.WorkflowInstanceID)
		if err != nil {
			return nil, fmt.Errorf("instance %d: %w", resp.WorkflowInstanceID, err)
		}
		status, end = model.WorkflowStatus(inst.Status), inst.EndTime
		if status.IsTerminal() {
			break
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("instance %d still %s after %v (%s): %w", resp.WorkflowInstanceID, status, cfg.Timeout,
				stuckSteps(c, w.WorkflowID, resp.WorkflowInstanceID), ctx.Err())
		case <-time.After(cfg.PollInterval):
		}
	}
	if status != model.WorkflowSucceeded {
		return nil, fmt.Errorf("instance %d ended %s", resp.WorkflowInstanceID, status)
	}
	steps, err := c.steps(ctx, w.WorkflowID, resp.WorkflowInstanceID)
	if err != nil {
		return nil, fmt.Errorf("instance %d: %w", resp.WorkflowInstanceID, err)
	}
	if len(steps) != w.Steps {
		return nil, fmt.Errorf("instance %d has %d steps, want %d", resp.WorkflowInstanceID, len(steps), w.Steps)
	}
	times, err := TimesFromSteps(steps)
	if err != nil {
		return nil, fmt.Errorf("instance %d: %w", resp.WorkflowInstanceID, err)
	}
	launch, err := LaunchOverheads(times, w.Upstreams)
	if err != nil {
		return nil, fmt.Errorf("instance %d: %w", resp.WorkflowInstanceID, err)
	}
	overhead, err := StartOverhead(sent, times)
	if err != nil {
		return nil, fmt.Errorf("instance %d: %w", resp.WorkflowInstanceID, err)
	}
	f := &instanceFigures{
		id:     resp.WorkflowInstanceID,
		launch: launch, start: overhead, startRequest: startRequest, end: end, sent: float64(sent.UnixMicro()) / 1000,
		makespan: float64(end) - float64(sent.UnixMicro())/1000,
	}
	if w.CallsServer && cfg.calls != nil {
		gaps, first, err := cfg.calls.Gaps(w.WorkflowID, resp.WorkflowInstanceID, w.Upstreams)
		if err != nil {
			return nil, err
		}
		f.gaps, f.firstCall = gaps, float64(first.Sub(sent).Microseconds())/1000
	}
	return f, nil
}

func msSince(t time.Time) float64 {
	return float64(time.Since(t).Microseconds()) / 1000
}

// errNotQuiet is returned by settle when the system keeps working.
var errNotQuiet = errors.New("the system did not fall quiet within " + settleLimit.String())

// settle waits until the system has done no billable work (DynamoDB
// writes, SQS requests other than empty receives, handler invocations)
// for a while and its queues hold no message (pending: visible, in flight
// or delayed), so that the work an instance causes after it ends (the
// stream copies of its last writes, the delayed wakes that back up its
// commits) is counted with it, not with the next workload.
func settle(ctx context.Context, m *Meter, calls *Invocations, streamInterval time.Duration, pending func(context.Context) (int, error)) error {
	quiet := 2*streamInterval + sqsWaitTime + 500*time.Millisecond
	sig := func() float64 {
		u := m.Usage()
		s := u.DynamoDBWriteUnits + float64(u.SQSBilledRequests)
		for _, f := range calls.Usage() {
			s += float64(f.Invocations)
		}
		return s
	}
	deadline := time.Now().Add(settleLimit)
	last, changed := sig(), time.Now()
	empty := func() bool {
		if pending == nil {
			return true
		}
		n, err := pending(ctx)
		return err == nil && n == 0
	}
	for time.Since(changed) < quiet || !empty() {
		if time.Now().After(deadline) {
			return errNotQuiet
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for the system to fall quiet: %w", ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
		if s := sig(); s != last {
			last, changed = s, time.Now()
		}
	}
	return nil
}

// queueDepth returns a function counting the messages the stack's work and
// decision queues hold, visible, in flight or delayed; its SQS client is
// not metered.
func queueDepth(ctx context.Context, st *stack.Stack) (func(context.Context) (int, error), error) {
	cfg, err := st.Emulator.AWSConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("bench: queue client: %w", err)
	}
	client := sqs.NewFromConfig(cfg)
	urls := []string{st.Resources.Queues.Work.URL, st.Resources.Queues.Decision.URL}
	names := []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessages,
		sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible, sqstypes.QueueAttributeNameApproximateNumberOfMessagesDelayed}
	return func(ctx context.Context) (int, error) {
		total := 0
		for _, url := range urls {
			out, err := client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url), AttributeNames: names})
			if err != nil {
				return 0, fmt.Errorf("bench: queue depth: %w", err)
			}
			for _, n := range names {
				v, _ := strconv.Atoi(out.Attributes[string(n)])
				total += v
			}
		}
		return total, nil
	}, nil
}

// sampleHeap samples the process's Go heap in use every 100 ms until the
// returned function is called, which returns the peak: the memory the
// local stack's handlers (all in this process) needed at once.
func sampleHeap() func() uint64 {
	var peak atomic.Uint64
	done := make(chan struct{})
	stopped := make(chan struct{})
	read := func() {
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		if m.HeapInuse > peak.Load() {
			peak.Store(m.HeapInuse)
		}
	}
	go func() {
		defer close(stopped)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			read()
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-stopped
		return peak.Load()
	}
}

// reportsCapacity says whether e's DynamoDB reports the capacity writes
// consume as AWS bills it (but transactions): DynamoDB Local does; moto
// does not.
func reportsCapacity(e *localstack.Emulator) bool {
	return e != nil && e.DynamoDBEndpoint != ""
}

// emulatorName says which emulator serves the stack, and DynamoDB Local
// when it serves DynamoDB.
func emulatorName(e *localstack.Emulator) string {
	name := fmt.Sprintf("%s %s", e.Kind, e.Endpoint)
	if e.DynamoDBEndpoint != "" {
		name += fmt.Sprintf(" (DynamoDB: DynamoDB Local %s)", e.DynamoDBEndpoint)
	}
	return name
}

// stuckSteps says where an instance that did not end stands: its steps
// counted by status, and the first few not ended with their last timeline
// entry, read afresh (its own context ran out).
func stuckSteps(c *client, wf string, inst int64) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	steps, err := c.steps(ctx, wf, inst)
	if err != nil {
		return "steps unread: " + err.Error()
	}
	counts := map[string]int{}
	var open []string
	for _, st := range steps {
		status := st.RuntimeState.Status
		counts[status]++
		if model.StepStatus(status).IsTerminal() || len(open) >= 3 {
			continue
		}
		last := "no timeline"
		if n := len(st.Timeline); n > 0 {
			e := st.Timeline[n-1]
			last = fmt.Sprintf("%q at %s", e.Message, time.UnixMilli(e.Time).UTC().Format("15:04:05.000"))
		}
		open = append(open, fmt.Sprintf("%s/%d %s since %s, last %s", st.StepID, st.StepAttemptID, status,
			time.UnixMilli(st.RuntimeState.ModifyTime).UTC().Format("15:04:05.000"), last))
	}
	keys := slices.Sorted(maps.Keys(counts))
	parts := make([]string, 0, len(keys)+len(open))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%d %s", counts[k], k))
	}
	return strings.Join(append(parts, open...), "; ")
}
