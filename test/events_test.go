package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/maestro-serverless/maestro/events"
	"github.com/maestro-serverless/maestro/localstack/stack"
)

// subscriber is an SQS queue subscribed to the events topic with a filter
// policy, as a consumer would set it up.
type subscriber struct {
	t   *testing.T
	sys *system
	sqs *sqs.Client
	url string
}

func subscribe(t *testing.T, s *system, name, filterPolicy string) *subscriber {
	t.Helper()
	ctx := context.Background()
	cfg := s.st.Emulator.TestConfig(t)
	sq, sn := sqs.NewFromConfig(cfg), sns.NewFromConfig(cfg)
	q, err := sq.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(s.st.Resources.Table.Name + "-" + name)})
	if err != nil {
		t.Fatal(err)
	}
	attrs, err := sq.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: q.QueueUrl, AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = sn.Subscribe(ctx, &sns.SubscribeInput{
		TopicArn: aws.String(s.st.Resources.Topics.Events.ARN), Protocol: aws.String("sqs"),
		Endpoint:   aws.String(attrs.Attributes["QueueArn"]),
		Attributes: map[string]string{"RawMessageDelivery": "true", "FilterPolicy": filterPolicy},
	})
	if err != nil {
		t.Fatal(err)
	}
	return &subscriber{t: t, sys: s, sqs: sq, url: aws.ToString(q.QueueUrl)}
}

// drain waits until the stack is idle — every change is published, and the
// emulator delivers a publish to its subscribed queues before answering it —
// then receives everything the queue holds.
func (s *subscriber) drain() []events.Event {
	s.t.Helper()
	s.sys.idle(s.t)
	ctx := context.Background()
	var out []events.Event
	for {
		res, err := s.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(s.url), MaxNumberOfMessages: 10})
		if err != nil {
			s.t.Fatal(err)
		}
		for _, m := range res.Messages {
			var e events.Event
			if err := json.Unmarshal([]byte(aws.ToString(m.Body)), &e); err != nil {
				s.t.Fatalf("event %q: %v", aws.ToString(m.Body), err)
			}
			out = append(out, e)
			if _, err := s.sqs.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(s.url), ReceiptHandle: m.ReceiptHandle}); err != nil {
				s.t.Fatal(err)
			}
		}
		if len(res.Messages) == 0 {
			return out
		}
	}
}

func TestEventsReachSubscribers(t *testing.T) {
	t.Parallel()
	s := startSystem(t, stack.Options{})
	def := readFile(t, "sample-dag-test-7.json")
	runs := subscribe(t, s, "runs", `{"workflow_id": ["sample-dag-test-7"], "event_type": ["instance_status_changed", "step_status_changed"]}`)
	defs := subscribe(t, s, "defs", `{"event_type": [{"prefix": "definition_"}, "version_activated", "properties_changed"]}`)
	done := subscribe(t, s, "done", `{"event_type": ["instance_status_changed"], "status": ["SUCCEEDED", "FAILED"]}`)

	wf := s.push(def)
	r := s.start(wf, "")
	if v := s.wait(wf, r.WorkflowInstanceID, 30*time.Second); v.Status != "SUCCEEDED" {
		t.Fatalf("instance %s", v.Status)
	}
	got := runs.drain()

	// Each event once; their transitions, flattened, are every change
	// exactly once with sequences 0..N without a gap.
	seen := map[string]bool{}
	type change struct {
		step     string
		inst     bool
		from, to string
		seq      int64
	}
	var all []change
	for _, e := range got {
		if seen[e.ID] {
			t.Fatalf("event %s delivered twice", e.ID)
		}
		seen[e.ID] = true
		if e.WorkflowID != wf || e.InstanceID != r.WorkflowInstanceID || e.RunID != 1 || len(e.Transitions) == 0 {
			t.Fatalf("event %+v is not of the run", e)
		}
		if e.Sequence != e.Transitions[0].Sequence || e.LastSequence != e.Transitions[len(e.Transitions)-1].Sequence ||
			e.NewStatus != e.Transitions[len(e.Transitions)-1].NewStatus {
			t.Fatalf("event %+v does not summarise its transitions", e)
		}
		for _, c := range e.Transitions {
			all = append(all, change{e.StepID, e.Type == events.InstanceStatusChanged, c.OldStatus, c.NewStatus, c.Sequence})
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].seq < all[j].seq })
	for i, c := range all {
		if c.seq != int64(i) {
			t.Fatalf("sequence %d at position %d: a gap or a duplicate (%v)", c.seq, i, ids(got))
		}
	}
	// The instance's own changes, in order; each step's changes chain.
	var inst []string
	last := map[string]string{}
	for _, c := range all {
		if c.inst {
			inst = append(inst, c.from+">"+c.to)
			continue
		}
		prev, ok := last[c.step]
		if !ok {
			prev = "NOT_CREATED"
		}
		if prev != c.from {
			t.Fatalf("step %s: change from %s follows %s", c.step, c.from, prev)
		}
		last[c.step] = c.to
	}
	if fmt.Sprint(inst) != "[>CREATED CREATED>IN_PROGRESS IN_PROGRESS>SUCCEEDED]" {
		t.Errorf("instance transitions %v", inst)
	}
	// Every step of the definition ends SUCCEEDED in the stream.
	steps := s.steps(wf, r.WorkflowInstanceID)
	if len(last) != len(steps) {
		t.Errorf("events for %d steps, the instance has %d", len(last), len(steps))
	}
	for id, st := range last {
		if st != steps[id].RuntimeState.Status {
			t.Errorf("step %s: last event %s, status %s", id, st, steps[id].RuntimeState.Status)
		}
	}
	t.Logf("%d events carrying %d status changes for one run of %s", len(got), len(all), wf)

	// Filter policies: definition events only on one queue, terminal
	// instance events only on the other.
	d := defs.drain()
	if len(d) != 2 || d[0].Type == d[1].Type {
		t.Fatalf("definition events %v, want created and activated", d)
	}
	for _, e := range d {
		if e.Type != events.DefinitionCreated && e.Type != events.VersionActivated {
			t.Errorf("unexpected definition event %+v", e)
		}
		if e.Principal != stack.LocalPrincipal {
			t.Errorf("definition event %s: principal %q, want the caller %q", e.Type, e.Principal, stack.LocalPrincipal)
		}
	}
	// The run's creation was the start request's: it names the caller.
	for _, e := range got {
		if e.Sequence == 0 && e.Principal != stack.LocalPrincipal {
			t.Errorf("the run's creation event names principal %q, want the caller %q", e.Principal, stack.LocalPrincipal)
		}
	}
	if fin := done.drain(); len(fin) != 1 || fin[0].NewStatus != "SUCCEEDED" {
		t.Fatalf("terminal events %v", fin)
	}
}

func ids(evs []events.Event) string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.ID
	}
	return strings.Join(out, " ")
}
