package worker_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/maestro-serverless/maestro/lambdas/worker"
	"github.com/maestro-serverless/maestro/localstack"
	"github.com/maestro-serverless/maestro/logctx"
	"github.com/maestro-serverless/maestro/metrics"
	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/orchestrator"
	"github.com/maestro-serverless/maestro/resources"
	"github.com/maestro-serverless/maestro/trace"
)

// emulator serves the work queue the worker re-queues timers to.
var emulator *localstack.Emulator

func TestMain(m *testing.M) {
	os.Exit(localstack.RunWithEmulator(m, func(e *localstack.Emulator) { emulator = e }))
}

var discard = slog.New(slog.DiscardHandler)

// outcome is what the scripted processor does with one message body.
type outcome struct {
	wait  time.Duration
	err   error
	panic bool
}

// scripted is a Processor (the orchestrator's side, not AWS) that answers
// each body as told and counts the calls per body.
type scripted struct {
	mu       sync.Mutex
	outcomes map[string]outcome
	calls    map[string]int
	traces   map[string]trace.ID
}

func newScripted(outcomes map[string]outcome) *scripted {
	return &scripted{outcomes: outcomes, calls: map[string]int{}, traces: map[string]trace.ID{}}
}

func (p *scripted) HandleWork(ctx context.Context, body []byte, _ map[model.StepType]orchestrator.StepRunner) (time.Duration, error) {
	p.mu.Lock()
	p.calls[string(body)]++
	p.traces[string(body)] = trace.From(ctx)
	o, ok := p.outcomes[string(body)]
	p.mu.Unlock()
	if !ok {
		return 0, fmt.Errorf("unscripted body %q", body)
	}
	if o.panic {
		panic("scripted panic")
	}
	return o.wait, o.err
}

// sends records the SendMessage requests a client makes to the emulator.
type sends struct {
	mu  sync.Mutex
	ins []sqs.SendMessageInput
}

func (s *sends) record(stack *middleware.Stack) error {
	return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("record-sends",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			if p, ok := in.Parameters.(*sqs.SendMessageInput); ok {
				s.mu.Lock()
				s.ins = append(s.ins, *p)
				s.mu.Unlock()
			}
			return next.HandleInitialize(ctx, in)
		}), middleware.Before)
}

// byBody returns the recorded sends' delays by message body.
func (s *sends) byBody() map[string][]int32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string][]int32{}
	for _, in := range s.ins {
		out[aws.ToString(in.MessageBody)] = append(out[aws.ToString(in.MessageBody)], in.DelaySeconds)
	}
	return out
}

// queue is a work queue of its own on the emulator, and a client that
// records what is sent to it.
type queue struct {
	url    string
	client *sqs.Client
	sent   *sends
}

func newQueue(t *testing.T) *queue {
	t.Helper()
	ctx := context.Background()
	cfg := emulator.TestConfig(t)
	q := &queue{sent: &sends{}}
	q.client = sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.APIOptions = append(o.APIOptions, q.sent.record) })
	out, err := q.client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(fmt.Sprintf("worker-test-%08x", rand.Uint32()))})
	if err != nil {
		t.Fatal(err)
	}
	q.url = aws.ToString(out.QueueUrl)
	return q
}

// attribute reads one of the queue's approximate counts.
func (q *queue) count(t *testing.T, name sqstypes.QueueAttributeName) int {
	t.Helper()
	out, err := q.client.GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String(q.url), AttributeNames: []sqstypes.QueueAttributeName{name},
	})
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(out.Attributes[string(name)])
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return n
}

func message(id, body string) events.SQSMessage {
	return events.SQSMessage{MessageId: id, Body: body, EventSource: "aws:sqs"}
}

func failedIDs(resp events.SQSEventResponse) []string {
	var out []string
	for _, f := range resp.BatchItemFailures {
		out = append(out, f.ItemIdentifier)
	}
	slices.Sort(out)
	return out
}

// TestHandleReportsTheFailedMessagesOfABatch: in one batch, the messages
// whose processing fails or panics — once or in every copy of a duplicate —
// are reported as the batch's item failures, and only those; a timer that
// is not due is sent back to the work queue with its remaining wait
// (rounded up to whole seconds, at most SQS's 15 minutes) and acknowledged.
func TestHandleReportsTheFailedMessagesOfABatch(t *testing.T) {
	q := newQueue(t)
	tests := []struct {
		body       string
		ids        []string // its copies in the batch
		outcome    outcome
		wantFailed bool
		wantDelays []int32 // of the copies sent back to the queue
	}{
		{body: "done", ids: []string{"done-1"}},
		{body: "done twice", ids: []string{"dup-1", "dup-2"}},
		{body: "poison", ids: []string{"poison-1"}, outcome: outcome{err: fmt.Errorf("%w: bad body", orchestrator.ErrPoison)}, wantFailed: true},
		{body: "poison twice", ids: []string{"poison-dup-1", "poison-dup-2"}, outcome: outcome{err: orchestrator.ErrPoison}, wantFailed: true},
		{body: "throttled", ids: []string{"err-1"}, outcome: outcome{err: errors.New("ProvisionedThroughputExceededException")}, wantFailed: true},
		{body: "panics", ids: []string{"panic-1"}, outcome: outcome{panic: true}, wantFailed: true},
		{body: "timer in 90s", ids: []string{"timer-1"}, outcome: outcome{wait: 90 * time.Second}, wantDelays: []int32{90}},
		{body: "timer in 30.2s", ids: []string{"timer-2"}, outcome: outcome{wait: 30200 * time.Millisecond}, wantDelays: []int32{31}},
		{body: "timer in 3h", ids: []string{"timer-3"}, outcome: outcome{wait: 3 * time.Hour}, wantDelays: []int32{900}},
		{body: "timer twice", ids: []string{"timer-dup-1", "timer-dup-2"}, outcome: outcome{wait: time.Minute}, wantDelays: []int32{60, 60}},
	}
	outcomes := map[string]outcome{}
	var ev events.SQSEvent
	var wantFailed []string
	for _, tt := range tests {
		outcomes[tt.body] = tt.outcome
		for _, id := range tt.ids {
			ev.Records = append(ev.Records, message(id, tt.body))
			if tt.wantFailed {
				wantFailed = append(wantFailed, id)
			}
		}
	}
	// Copies of one body arrive apart, as SQS redelivers.
	rand.Shuffle(len(ev.Records), func(i, j int) { ev.Records[i], ev.Records[j] = ev.Records[j], ev.Records[i] })
	slices.Sort(wantFailed)

	p := newScripted(outcomes)
	h := worker.New(worker.Config{Processor: p, SQS: q.client, WorkQueueURL: q.url, Parallelism: 4, Logger: discard})
	resp, err := h.Handle(context.Background(), ev)
	if err != nil {
		t.Fatalf("Handle: %v (a batch error would make SQS redeliver every message)", err)
	}
	if got := failedIDs(resp); !slices.Equal(got, wantFailed) {
		t.Errorf("failed %v, want %v", got, wantFailed)
	}
	delays := q.sent.byBody()
	for _, tt := range tests {
		if got := p.calls[tt.body]; got != len(tt.ids) {
			t.Errorf("%q processed %d times, want %d", tt.body, got, len(tt.ids))
		}
		if got := delays[tt.body]; !slices.Equal(got, tt.wantDelays) {
			t.Errorf("%q sent back with delays %v, want %v", tt.body, got, tt.wantDelays)
		}
	}
	// The timers are on the queue, not yet visible.
	if n := q.count(t, sqstypes.QueueAttributeNameApproximateNumberOfMessagesDelayed); n != 5 {
		t.Errorf("%d delayed messages on the work queue, want 5", n)
	}
}

// TestHandleRequeuesATimerWithItsTrace: a timer sent back to the work
// queue keeps the X-Ray trace of the message it came from (the
// AWSTraceHeader system attribute), which the processor saw in its
// context; it arrives again once its delay has passed.
func TestHandleRequeuesATimerWithItsTrace(t *testing.T) {
	q := newQueue(t)
	id := trace.New(time.Now())
	const body = `{"kind":"timer","step_id":"s"}`
	p := newScripted(map[string]outcome{body: {wait: time.Second}})
	h := worker.New(worker.Config{Processor: p, SQS: q.client, WorkQueueURL: q.url, Logger: discard})
	m := message("m-1", body)
	m.Attributes = map[string]string{"AWSTraceHeader": id.Header() + ";Parent=53995c3f42cd8ad8;Sampled=1"}
	start := time.Now()
	resp, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{m}})
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("Handle: %v, failures %v", err, resp.BatchItemFailures)
	}
	if got := p.traces[body]; got != id {
		t.Errorf("the processor's context carries trace %q, want %q", got, id)
	}
	deadline := time.Now().Add(15 * time.Second)
	var got []sqstypes.Message
	for len(got) == 0 && time.Now().Before(deadline) {
		out, err := q.client.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{
			QueueUrl: aws.String(q.url), WaitTimeSeconds: 1,
			MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAWSTraceHeader},
		})
		if err != nil {
			t.Fatal(err)
		}
		got = out.Messages
	}
	if len(got) != 1 {
		t.Fatalf("received %d messages, want the timer once", len(got))
	}
	if elapsed := time.Since(start); elapsed < time.Second {
		t.Errorf("the timer came back after %v, before its 1 s delay", elapsed)
	}
	if b := aws.ToString(got[0].Body); b != body {
		t.Errorf("body %q, want %q", b, body)
	}
	if h := got[0].Attributes["AWSTraceHeader"]; h != id.Header() {
		t.Errorf("AWSTraceHeader %q, want %q", h, id.Header())
	}
}

// TestHandleFailsATimerItCannotRequeue: when the timer cannot be sent back
// (here the queue does not exist), its message is a failure, so SQS
// redelivers it rather than lose the timer.
func TestHandleFailsATimerItCannotRequeue(t *testing.T) {
	q := newQueue(t)
	if _, err := q.client.DeleteQueue(context.Background(), &sqs.DeleteQueueInput{QueueUrl: aws.String(q.url)}); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	p := newScripted(map[string]outcome{"timer": {wait: time.Minute}, "done": {}})
	// As wiring.Build does, so that log lines name their message.
	log := logctx.Wrap(slog.New(slog.NewTextHandler(&logs, nil)))
	h := worker.New(worker.Config{Processor: p, SQS: q.client, WorkQueueURL: q.url, Logger: log})
	resp, err := h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{message("t", "timer"), message("d", "done")}})
	if err != nil {
		t.Fatal(err)
	}
	if got := failedIDs(resp); !slices.Equal(got, []string{"t"}) {
		t.Errorf("failed %v, want [t]", got)
	}
	if !strings.Contains(logs.String(), "worker: re-queue timer") || !strings.Contains(logs.String(), "message_id=t") {
		t.Errorf("the failure's log line does not name the re-queue and the message:\n%s", logs.String())
	}
}

// gate is a Processor that holds every call until want calls have been in
// flight at once, and records the peak.
type gate struct {
	want    int
	mu      sync.Mutex
	in      int
	peak    int
	opened  bool
	release chan struct{}
}

func (g *gate) HandleWork(ctx context.Context, _ []byte, _ map[model.StepType]orchestrator.StepRunner) (time.Duration, error) {
	g.mu.Lock()
	g.in++
	g.peak = max(g.peak, g.in)
	if g.in == g.want && !g.opened {
		g.opened = true
		close(g.release)
	}
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		g.in--
		g.mu.Unlock()
	}()
	select {
	case <-g.release:
		return 0, nil
	case <-time.After(20 * time.Second):
		return 0, errors.New("fewer calls in flight than the parallelism")
	}
}

// TestHandleParallelism: a batch is processed Parallelism messages at a
// time (10 when unset): that many are in flight at once, never more.
func TestHandleParallelism(t *testing.T) {
	tests := []struct {
		parallelism, want int
	}{
		{parallelism: 0, want: 10},
		{parallelism: 3, want: 3},
		{parallelism: 1, want: 1},
	}
	for _, tt := range tests {
		t.Run(strconv.Itoa(tt.parallelism), func(t *testing.T) {
			g := &gate{want: tt.want, release: make(chan struct{})}
			var ev events.SQSEvent
			for i := range 25 {
				ev.Records = append(ev.Records, message(strconv.Itoa(i), "{}"))
			}
			h := worker.New(worker.Config{Processor: g, Parallelism: tt.parallelism, Logger: discard})
			resp, err := h.Handle(context.Background(), ev)
			if err != nil || len(resp.BatchItemFailures) != 0 {
				t.Fatalf("Handle: %v, %d failures", err, len(resp.BatchItemFailures))
			}
			if g.peak != tt.want {
				t.Errorf("peak %d in flight, want %d", g.peak, tt.want)
			}
		})
	}
}

// TestHandleEmitsQueueLag: every message of a batch with a SentTimestamp
// gives one QueueLag value of the work queue, the invocation's values in
// one line once it flushes.
func TestHandleEmitsQueueLag(t *testing.T) {
	now := time.UnixMilli(1_800_000_000_000)
	var out bytes.Buffer
	emf := metrics.New(&out, "test", func() time.Time { return now })
	h := worker.New(worker.Config{Processor: newScripted(map[string]outcome{"{}": {}}), Logger: discard, Metrics: emf})
	ev := events.SQSEvent{}
	for i, lag := range []int64{250, 4000} {
		m := message(strconv.Itoa(i), "{}")
		m.Attributes = map[string]string{"SentTimestamp": strconv.FormatInt(now.UnixMilli()-lag, 10)}
		ev.Records = append(ev.Records, m)
	}
	if _, err := metrics.FlushAfter(emf, h.Handle)(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	var lags []float64
	lines := 0
	dec := json.NewDecoder(&out)
	for {
		var line struct {
			QueueLag []float64
			Queue    string
		}
		if err := dec.Decode(&line); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if line.QueueLag != nil && line.Queue == "work" {
			lags = append(lags, line.QueueLag...)
			lines++
		}
	}
	if lines != 1 {
		t.Errorf("%d QueueLag lines, want the invocation's values in one", lines)
	}
	slices.Sort(lags)
	if !slices.Equal(lags, []float64{250, 4000}) {
		t.Errorf("QueueLag of queue work: %v, want [250 4000]", lags)
	}
}

// stage provisions a stage of its own on the emulator.
func stage(t *testing.T) *localstack.Resources {
	t.Helper()
	ctx := context.Background()
	name := localstack.RandomStage(t, "w")
	res, err := localstack.Provision(ctx, emulator.TestConfig(t), resources.ForStage(name))
	if err != nil {
		t.Fatalf("provision %s: %v", name, err)
	}
	return res
}
