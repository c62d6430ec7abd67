package router_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/maestro-serverless/maestro/lambdas/router"
	"github.com/maestro-serverless/maestro/localstack"
	"github.com/maestro-serverless/maestro/pricing"
	"github.com/maestro-serverless/maestro/resources"
	"github.com/maestro-serverless/maestro/store"
)

var emulator *localstack.Emulator

func TestMain(m *testing.M) {
	os.Exit(localstack.RunWithEmulator(m, func(e *localstack.Emulator) { emulator = e }))
}

// record builds a stream record whose new image carries msgs as its outbox.
func record(seq int, msgs ...store.Message) events.DynamoDBEventRecord {
	ob, _ := json.Marshal(msgs)
	return events.DynamoDBEventRecord{
		EventName:      "INSERT",
		EventSourceArn: "arn:aws:dynamodb:us-east-1:000000000000:table/t/stream/x",
		Change: events.DynamoDBStreamRecord{
			SequenceNumber: fmt.Sprint(1000 + seq),
			NewImage: map[string]events.DynamoDBAttributeValue{
				"pk":                  events.NewStringAttribute("R#wf#1"),
				"sk":                  events.NewStringAttribute(fmt.Sprintf("E#000001#e-%d", seq)),
				store.OutboxAttribute: events.NewStringAttribute(string(ob)),
			},
		},
	}
}

// sendShare is the "ops" field the router puts first in a body it sends:
// the message's share of its batch's send (store.WithSendShare).
var sendShare = regexp.MustCompile(`^\{"ops":\{[^{}]*\},?`)

// drain receives every message of queue url, and returns their bodies
// as sent to the router (without their share of the send).
func drain(t *testing.T, c *sqs.Client, url string) []string {
	t.Helper()
	bodies := drainRaw(t, c, url)
	for i, b := range bodies {
		if loc := sendShare.FindStringIndex(b); loc != nil {
			bodies[i] = "{" + b[loc[1]:]
			if bodies[i] == "{" {
				bodies[i] = "{}"
			}
		}
	}
	return bodies
}

// drainRaw receives every message of queue url and returns their bodies.
func drainRaw(t *testing.T, c *sqs.Client, url string) []string {
	t.Helper()
	var bodies []string
	for {
		out, err := c.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{
			QueueUrl: aws.String(url), MaxNumberOfMessages: 10, WaitTimeSeconds: 0,
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Messages) == 0 {
			return bodies
		}
		for _, m := range out.Messages {
			bodies = append(bodies, aws.ToString(m.Body))
			c.DeleteMessage(context.Background(), &sqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: m.ReceiptHandle})
		}
	}
}

func TestRouterForwardsAndCoalescesWakes(t *testing.T) {
	ctx := context.Background()
	cfg, res := provision(t, "rt")
	client := sqs.NewFromConfig(cfg)
	r := router.New(router.Config{
		SQS:       client,
		QueueURLs: map[string]string{store.QueueDecision: res.Queues.Decision.URL, store.QueueWork: res.Queues.Work.URL},
	})
	wakeA := store.Message{Queue: store.QueueDecision, Body: `{"run":"a"}`, GroupID: "wf#1"}
	wakeB := store.Message{Queue: store.QueueDecision, Body: `{"run":"b"}`, GroupID: "wf#2"}
	work := store.Message{Queue: store.QueueWork, Body: "step"}
	resp, err := r.Handle(ctx, events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{
		record(1, wakeA), record(2, wakeA, work), record(3, wakeB), record(4, wakeA),
		{EventName: "REMOVE", Change: events.DynamoDBStreamRecord{SequenceNumber: "1005"}},
	}})
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("handle: %v %v", err, resp.BatchItemFailures)
	}
	// Three records wake run a: one message. Work messages are never coalesced.
	if got := drain(t, client, res.Queues.Decision.URL); len(got) != 2 {
		t.Errorf("decision queue got %v, want one wake for a and one for b", got)
	}
	if got := drain(t, client, res.Queues.Work.URL); len(got) != 1 || got[0] != "step" {
		t.Errorf("work queue got %v", got)
	}

	// A send that fails reports that record and every later one.
	broken := router.New(router.Config{SQS: client, QueueURLs: map[string]string{
		store.QueueDecision: res.Queues.Decision.URL, store.QueueWork: res.Queues.Work.URL + "-missing"}})
	resp, err = broken.Handle(ctx, events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{
		record(1, wakeB), record(2, work), record(3, wakeA),
	}})
	if err != nil {
		t.Fatal(err)
	}
	failed := failedRecords(resp)
	if fmt.Sprint(failed) != "[1002 1003]" {
		t.Errorf("failures %v, want [1002 1003]", failed)
	}
}

// countingSQS counts the SendMessageBatch calls made through a real client
// (the router sends a standard queue's batches side by side).
type countingSQS struct {
	*sqs.Client
	calls atomic.Int64
}

func (c *countingSQS) SendMessageBatch(ctx context.Context, in *sqs.SendMessageBatchInput, opts ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error) {
	c.calls.Add(1)
	return c.Client.SendMessageBatch(ctx, in, opts...)
}

// TestRouterSendsABatchsMessagesTogether: the messages of many records go
// out ten per call, not one call per record (a kill of 300 steps writes 300
// records; one call each put the router tens of seconds behind).
func TestRouterSendsABatchsMessagesTogether(t *testing.T) {
	ctx := context.Background()
	cfg, res := provision(t, "rb")
	client := &countingSQS{Client: sqs.NewFromConfig(cfg)}
	r := router.New(router.Config{SQS: client, QueueURLs: map[string]string{
		store.QueueDecision: res.Queues.Decision.URL, store.QueueWork: res.Queues.Work.URL}})
	var recs []events.DynamoDBEventRecord
	for i := range 30 {
		recs = append(recs, record(i, store.Message{Queue: store.QueueWork, Body: fmt.Sprintf("step-%02d", i)}))
	}
	recs = append(recs, record(30, store.Message{Queue: store.QueueDecision, Body: `{"run":"a"}`, GroupID: "wf#1"}))
	resp, err := r.Handle(ctx, events.DynamoDBEvent{Records: recs})
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("handle: %v %v", err, resp.BatchItemFailures)
	}
	if n := client.calls.Load(); n != 4 {
		t.Errorf("%d SendMessageBatch calls for 30 work messages and a wake, want 4", n)
	}
	if got := drain(t, client.Client, res.Queues.Work.URL); len(got) != 30 {
		t.Errorf("work queue got %d messages, want 30", len(got))
	}
	if got := drain(t, client.Client, res.Queues.Decision.URL); len(got) != 1 {
		t.Errorf("decision queue got %v, want one wake", got)
	}
}

// TestRouterMergesTheAttemptsWakesName: the wakes workers' ends carry name
// their attempts (store.FinishedWakeMessage); a batch's wakes of one run go
// out as one wake naming every attempt, and a plain wake of the run merges
// into it too. Should sending it fail, the batch is retried from the first
// record that named one of them, so no attempt is dropped.
func TestRouterMergesTheAttemptsWakesName(t *testing.T) {
	ctx := context.Background()
	cfg, res := provision(t, "rm")
	client := sqs.NewFromConfig(cfg)
	queues := map[string]string{store.QueueDecision: res.Queues.Decision.URL, store.QueueWork: res.Queues.Work.URL}
	r := router.New(router.Config{SQS: client, QueueURLs: queues})
	ended := func(step string) store.Message {
		return store.FinishedWakeMessage(store.AttemptRef{WorkflowID: "wf", InstanceID: 1, RunID: 1, StepID: step, Attempt: 1})
	}
	other := store.FinishedWakeMessage(store.AttemptRef{WorkflowID: "wf", InstanceID: 2, RunID: 1, StepID: "a", Attempt: 1})
	resp, err := r.Handle(ctx, events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{
		record(1, ended("a")), record(2, other), record(3, ended("b")), record(4, store.WakeMessage("wf", 1, 1)), record(5, ended("a")),
	}})
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("handle: %v %v", err, resp.BatchItemFailures)
	}
	got := map[string]bool{}
	for _, b := range drain(t, client, res.Queues.Decision.URL) {
		got[b] = true
	}
	want := map[string]bool{
		`{"workflow_id":"wf","workflow_instance_id":1,"workflow_run_id":1,"finished":[{"step_id":"a","step_attempt_id":1},{"step_id":"b","step_attempt_id":1}]}`: true,
		other.Body: true,
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("decision queue got %v, want %v", got, want)
	}

	broken := router.New(router.Config{SQS: client, QueueURLs: map[string]string{
		store.QueueDecision: res.Queues.Decision.URL + "-missing", store.QueueWork: res.Queues.Work.URL}})
	resp, err = broken.Handle(ctx, events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{
		record(1, store.Message{Queue: store.QueueWork, Body: "step"}), record(2, ended("a")), record(3, ended("b")),
	}})
	if err != nil {
		t.Fatal(err)
	}
	failed := failedRecords(resp)
	if fmt.Sprint(failed) != "[1002 1003]" {
		t.Errorf("failures %v, want [1002 1003]: from the first record naming an attempt of the merged wake", failed)
	}
}

// provision makes a stage of the system's resources on the emulator, named
// from prefix, and returns the emulator's config with them.
func provision(t *testing.T, prefix string) (aws.Config, *localstack.Resources) {
	t.Helper()
	ctx := context.Background()
	cfg := emulator.TestConfig(t)
	res, err := localstack.Provision(ctx, cfg, resources.ForStage(fmt.Sprintf("%s%d", prefix, time.Now().UnixNano()%1_000_000)))
	if err != nil {
		t.Fatal(err)
	}
	return cfg, res
}

// failedRecords lists the records a response reports as failed.
func failedRecords(resp events.DynamoDBEventResponse) []string {
	var failed []string
	for _, f := range resp.BatchItemFailures {
		failed = append(failed, f.ItemIdentifier)
	}
	return failed
}

// recordingSQS keeps the bodies sent through a real client.
type recordingSQS struct {
	*sqs.Client
	mu     sync.Mutex
	bodies []string
}

func (c *recordingSQS) SendMessageBatch(ctx context.Context, in *sqs.SendMessageBatchInput, opts ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error) {
	c.mu.Lock()
	for _, e := range in.Entries {
		c.bodies = append(c.bodies, aws.ToString(e.MessageBody))
	}
	c.mu.Unlock()
	return c.Client.SendMessageBatch(ctx, in, opts...)
}

// TestRouterDropsBackstopsOfTakenSteps: the backstop copy of a directly
// dispatched step goes out only when Config.BackstopsNeeded says it is
// still needed, and every copy goes out when it cannot tell.
func TestRouterDropsBackstopsOfTakenSteps(t *testing.T) {
	ctx := context.Background()
	cfg, res := provision(t, "rk")
	taken := store.Message{Queue: store.QueueWork, Body: `{"step_id":"taken"}`, Direct: true}
	fresh := store.Message{Queue: store.QueueWork, Body: `{"step_id":"fresh"}`, Direct: true}
	plain := store.Message{Queue: store.QueueWork, Body: `{"step_id":"plain"}`}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"checked", nil, "fresh plain"},
		{"unknown", errors.New("no table"), "taken fresh plain"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client := &recordingSQS{Client: sqs.NewFromConfig(cfg)}
			var asked []string
			r := router.New(router.Config{SQS: client, QueueURLs: map[string]string{
				store.QueueDecision: res.Queues.Decision.URL, store.QueueWork: res.Queues.Work.URL},
				BackstopsNeeded: func(ctx context.Context, msgs []store.Message) ([]bool, error) {
					needed := make([]bool, len(msgs))
					for i, m := range msgs {
						asked = append(asked, m.Body)
						needed[i] = !strings.Contains(m.Body, "taken")
					}
					return needed, tc.err
				}})
			resp, err := r.Handle(ctx, events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{
				record(1, taken), record(2, fresh, plain),
			}})
			if err != nil || len(resp.BatchItemFailures) != 0 {
				t.Fatalf("handle: %v %v", err, resp.BatchItemFailures)
			}
			if len(asked) != 2 {
				t.Errorf("asked about %v, want the two backstop copies only", asked)
			}
			var sent []string
			for _, b := range client.bodies {
				var m struct {
					StepID   string `json:"step_id"`
					Backstop bool   `json:"backstop"`
				}
				if err := json.Unmarshal([]byte(b), &m); err != nil {
					t.Fatal(err)
				}
				if m.Backstop != (m.StepID != "plain") {
					t.Errorf("%s: backstop %v", m.StepID, m.Backstop)
				}
				sent = append(sent, m.StepID)
			}
			if got := strings.Join(sent, " "); got != tc.want {
				t.Errorf("sent %q, want %q", got, tc.want)
			}
		})
	}
}

// TestRouterDeletesARunsTimeoutSchedule: a timer named for a run's
// workflow timeout becomes a schedule of that name, and the run's end
// (store.QueueUnschedule) deletes it; deleting it again is no error, and a
// schedule that is no run's timeout is never deleted.
func TestRouterDeletesARunsTimeoutSchedule(t *testing.T) {
	ctx := context.Background()
	cfg, res := provision(t, "rs")
	sched := scheduler.NewFromConfig(cfg)
	r := router.New(router.Config{
		SQS:       sqs.NewFromConfig(cfg),
		QueueURLs: map[string]string{store.QueueDecision: res.Queues.Decision.URL, store.QueueWork: res.Queues.Work.URL},
		Scheduler: sched, ScheduleGroup: res.SchedulerGroup.Name, WorkQueueARN: res.Queues.Work.ARN,
		SchedulerRoleARN: "arn:aws:iam::000000000000:role/scheduler",
	})
	at := time.Now().Add(240 * time.Hour).UnixMilli()
	name := store.RunTimeoutSchedule("wf", 1, 1)
	timeout := store.Message{Queue: store.QueueWork, Body: `{"kind":"timer"}`, At: at, Schedule: name}
	other := store.Message{Queue: store.QueueWork, Body: `{"kind":"timer","step_id":"nap"}`, At: at}
	handle := func(recs ...events.DynamoDBEventRecord) {
		t.Helper()
		resp, err := r.Handle(ctx, events.DynamoDBEvent{Records: recs})
		if err != nil || len(resp.BatchItemFailures) != 0 {
			t.Fatalf("handle: %v %v", err, resp.BatchItemFailures)
		}
	}
	names := func() []string {
		t.Helper()
		out, err := sched.ListSchedules(ctx, &scheduler.ListSchedulesInput{GroupName: aws.String(res.SchedulerGroup.Name)})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, s := range out.Schedules {
			got = append(got, aws.ToString(s.Name))
		}
		slices.Sort(got)
		return got
	}
	handle(record(1, timeout, other), record(2, timeout))
	got := names()
	if len(got) != 2 || !slices.Contains(got, name) {
		t.Fatalf("schedules %v, want %s and one more (a redelivered timer is created once)", got, name)
	}
	otherName := got[0]
	if otherName == name {
		otherName = got[1]
	}
	unschedule := func(n string) store.Message { return store.Message{Queue: store.QueueUnschedule, Body: n} }
	handle(record(3, unschedule(name)), record(4, unschedule(name)), record(5, unschedule(otherName)))
	if got := names(); len(got) != 1 || got[0] != otherName {
		t.Fatalf("schedules after the run's end %v, want only %s", got, otherName)
	}
}

// TestRouterDispatchesWakesDirectly: a committer's or a worker's direct
// dispatch puts a wake on the FIFO decision queue at once, in its run's
// group; a process given no decision queue (its function has none
// configured) gets an error naming the queue, and nothing is sent, so that
// its caller falls back to the stream.
func TestRouterDispatchesWakesDirectly(t *testing.T) {
	ctx := context.Background()
	cfg, res := provision(t, "rtd")
	client := sqs.NewFromConfig(cfg)
	wake := store.FinishedWakeMessage(store.AttemptRef{WorkflowID: "wf", InstanceID: 1, RunID: 1, StepID: "a", Attempt: 1})
	r := router.New(router.Config{SQS: client, QueueURLs: map[string]string{
		store.QueueDecision: res.Queues.Decision.URL, store.QueueWork: res.Queues.Work.URL}})
	if err := r.Dispatch(ctx, []store.Message{wake}); err != nil {
		t.Fatal(err)
	}
	// The wake carries the send to its run: a FIFO request of its own.
	if got := drainRaw(t, client, res.Queues.Decision.URL); len(got) != 1 || got[0] != `{"ops":{"sqs_fifo_requests":1},`+wake.Body[1:] ||
		store.MessageOps([]byte(got[0]))[pricing.SQSFIFORequests] != 1 {
		t.Fatalf("decision queue %q, want the wake with its send", got)
	}
	// Three work messages in one batch share its request.
	work := []store.Message{{Queue: store.QueueWork, Body: `{"kind":"a"}`}, {Queue: store.QueueWork, Body: `{}`}, {Queue: store.QueueWork, Body: `{"kind":"c"}`}}
	if err := r.Dispatch(ctx, work); err != nil {
		t.Fatal(err)
	}
	var shares float64
	for _, b := range drainRaw(t, client, res.Queues.Work.URL) {
		shares += store.MessageOps([]byte(b))[pricing.SQSRequests]
	}
	if math.Abs(shares-1) > 1e-9 {
		t.Errorf("three messages of one batch carry %v requests, want 1", shares)
	}
	none := router.New(router.Config{SQS: client, QueueURLs: map[string]string{
		store.QueueDecision: "", store.QueueWork: res.Queues.Work.URL}})
	err := none.Dispatch(ctx, []store.Message{wake})
	if err == nil || !strings.Contains(err.Error(), store.QueueDecision) {
		t.Fatalf("dispatch without a decision queue: %v, want an error naming it", err)
	}
	if got := drain(t, client, res.Queues.Decision.URL); len(got) != 0 {
		t.Fatalf("decision queue %q after a refused dispatch", got)
	}
}
