package localstack

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// deliveries counts handler deliveries per message body.
type deliveries struct {
	mu     sync.Mutex
	counts map[string]int
	order  []string
}

func (d *deliveries) add(body string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.counts == nil {
		d.counts = map[string]int{}
	}
	d.counts[body]++
	d.order = append(d.order, body)
	return d.counts[body]
}

func (d *deliveries) count(body string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.counts[body]
}

func (d *deliveries) all() map[string]int {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := map[string]int{}
	for k, v := range d.counts {
		out[k] = v
	}
	return out
}

func sendBodies(t *testing.T, client *sqs.Client, url string, bodies ...string) {
	t.Helper()
	for _, b := range bodies {
		_, err := client.SendMessage(context.Background(), &sqs.SendMessageInput{
			QueueUrl:    aws.String(url),
			MessageBody: aws.String(b),
			MessageAttributes: map[string]sqstypes.MessageAttributeValue{
				"kind": {DataType: aws.String("String"), StringValue: aws.String("test")},
			},
		})
		if err != nil {
			t.Fatalf("send %s: %v", b, err)
		}
	}
}

func TestSQSPumpDeletesHandledAndRedeliversFailed(t *testing.T) {
	cfg := testConfig(t)
	client := sqs.NewFromConfig(cfg)
	url := createQueue(t, client, false, time.Second)
	arn, err := queueARN(context.Background(), client, url)
	if err != nil {
		t.Fatal(err)
	}
	var got deliveries
	var badRecord atomic.Value
	pump := NewSQSPump(client, url, func(_ context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		var resp events.SQSEventResponse
		for _, m := range ev.Records {
			if m.EventSourceARN != arn || m.EventSource != "aws:sqs" || m.MessageAttributes["kind"].StringValue == nil ||
				m.Attributes["ApproximateReceiveCount"] == "" || m.ReceiptHandle == "" {
				badRecord.Store(fmt.Sprintf("%+v", m))
			}
			if got.add(m.Body) == 1 && m.Body == "B" {
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
			}
		}
		return resp, nil
	}, SQSPumpOptions{Pollers: 2, Region: cfg.Region, Logger: testLogger(t)})
	runPump(t, pump.Run)

	sendBodies(t, client, url, "A", "B", "C")
	eventually(t, 60*time.Second, "B's redelivery", func() bool { return got.count("B") == 2 })
	eventually(t, 30*time.Second, "an empty queue", func() bool { return queueDepth(t, client, url) == 0 })
	time.Sleep(1500 * time.Millisecond) // longer than the visibility timeout: nothing else comes back
	if c := got.all(); c["A"] != 1 || c["B"] != 2 || c["C"] != 1 || len(c) != 3 {
		t.Errorf("deliveries = %v, want A:1 B:2 C:1", c)
	}
	if v := badRecord.Load(); v != nil {
		t.Errorf("incomplete SQS record: %s", v)
	}
}

func TestSQSPumpHandlerErrorLeavesBatch(t *testing.T) {
	cfg := testConfig(t)
	client := sqs.NewFromConfig(cfg)
	url := createQueue(t, client, false, time.Second)
	var got deliveries
	pump := NewSQSPump(client, url, func(_ context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		fail := false
		for _, m := range ev.Records {
			if got.add(m.Body) == 1 {
				fail = true
			}
		}
		if fail {
			return events.SQSEventResponse{}, errors.New("function error")
		}
		return events.SQSEventResponse{}, nil
	}, SQSPumpOptions{Pollers: 1, Logger: testLogger(t)})
	runPump(t, pump.Run)

	sendBodies(t, client, url, "X")
	eventually(t, 60*time.Second, "X's redelivery", func() bool { return got.count("X") == 2 })
	eventually(t, 30*time.Second, "an empty queue", func() bool { return queueDepth(t, client, url) == 0 })
}

func TestSQSPumpFaultInjection(t *testing.T) {
	cfg := testConfig(t)
	client := sqs.NewFromConfig(cfg)

	t.Run("duplicate delivery", func(t *testing.T) {
		url := createQueue(t, client, false, time.Second)
		var got deliveries
		var batches atomic.Int32
		pump := NewSQSPump(client, url, func(_ context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
			batches.Add(1)
			for _, m := range ev.Records {
				got.add(m.Body)
			}
			return events.SQSEventResponse{}, nil
		}, SQSPumpOptions{Pollers: 1, DuplicateDelivery: true, Logger: testLogger(t)})
		runPump(t, pump.Run)
		sendBodies(t, client, url, "D1", "D2")
		eventually(t, 60*time.Second, "both messages twice", func() bool { return got.count("D1") == 2 && got.count("D2") == 2 })
		eventually(t, 30*time.Second, "an empty queue", func() bool { return queueDepth(t, client, url) == 0 })
		time.Sleep(1500 * time.Millisecond)
		if c := got.all(); c["D1"] != 2 || c["D2"] != 2 {
			t.Errorf("deliveries = %v, want each exactly twice", c)
		}
		if batches.Load()%2 != 0 {
			t.Errorf("%d handler calls, want pairs", batches.Load())
		}
	})

	t.Run("crash after handler", func(t *testing.T) {
		url := createQueue(t, client, false, time.Second)
		var got deliveries
		var crashed atomic.Int32
		pump := NewSQSPump(client, url, func(_ context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
			for _, m := range ev.Records {
				got.add(m.Body)
			}
			return events.SQSEventResponse{}, nil
		}, SQSPumpOptions{Pollers: 1, Logger: testLogger(t), CrashAfterHandler: func(m events.SQSMessage) bool {
			if m.Body == "K" && crashed.Load() == 0 {
				crashed.Add(1)
				return true
			}
			return false
		}})
		runPump(t, pump.Run)
		sendBodies(t, client, url, "K", "L")
		eventually(t, 60*time.Second, "K's redelivery", func() bool { return got.count("K") == 2 })
		eventually(t, 30*time.Second, "an empty queue", func() bool { return queueDepth(t, client, url) == 0 })
		if c := got.all(); c["K"] != 2 || c["L"] != 1 {
			t.Errorf("deliveries = %v, want K:2 L:1", c)
		}
	})
}

func TestSQSPumpFIFOKeepsGroupOrder(t *testing.T) {
	cfg := testConfig(t)
	client := sqs.NewFromConfig(cfg)
	url := createQueue(t, client, true, time.Second)
	const perGroup = 8
	groups := []string{"wf-a", "wf-b", "wf-c"}
	for i := range perGroup {
		for _, g := range groups {
			body := fmt.Sprintf("%s/%02d", g, i)
			_, err := client.SendMessage(context.Background(), &sqs.SendMessageInput{
				QueueUrl: aws.String(url), MessageBody: aws.String(body),
				MessageGroupId: aws.String(g), MessageDeduplicationId: aws.String(strings.ReplaceAll(body, "/", "-")),
			})
			if err != nil {
				t.Fatalf("send: %v", err)
			}
		}
	}

	var (
		mu        sync.Mutex
		handled   = map[string][]string{} // successfully handled bodies per group, in order
		inFlight  = map[string]bool{}
		overlaps  int
		failedOne bool
	)
	pump := NewSQSPump(client, url, func(_ context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		mu.Lock()
		batchGroups := map[string]bool{}
		for _, m := range ev.Records {
			g := m.Attributes["MessageGroupId"]
			if inFlight[g] && !batchGroups[g] {
				overlaps++
			}
			inFlight[g], batchGroups[g] = true, true
		}
		mu.Unlock()
		time.Sleep(20 * time.Millisecond)

		mu.Lock()
		defer mu.Unlock()
		var resp events.SQSEventResponse
		stopped := map[string]bool{} // as Lambda asks of FIFO handlers: stop a group at its first failure
		for _, m := range ev.Records {
			g := m.Attributes["MessageGroupId"]
			if !stopped[g] && m.Body == "wf-b/03" && !failedOne {
				failedOne = true
				stopped[g] = true
			}
			if stopped[g] {
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
				continue
			}
			handled[g] = append(handled[g], m.Body)
		}
		for g := range batchGroups {
			delete(inFlight, g)
		}
		return resp, nil
	}, SQSPumpOptions{Pollers: 3, BatchSize: 4, Logger: testLogger(t)})
	runPump(t, pump.Run)

	total := func() int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, h := range handled {
			n += len(h)
		}
		return n
	}
	eventually(t, 60*time.Second, "every message handled", func() bool { return total() >= perGroup*len(groups) })
	eventually(t, 30*time.Second, "an empty queue", func() bool { return queueDepth(t, client, url) == 0 })

	mu.Lock()
	defer mu.Unlock()
	if !failedOne {
		t.Error("the injected failure never happened")
	}
	if overlaps != 0 {
		t.Errorf("%d batches of a group ran while another batch of it was in the handler", overlaps)
	}
	for _, g := range groups {
		var want []string
		for i := range perGroup {
			want = append(want, fmt.Sprintf("%s/%02d", g, i))
		}
		if !slices.Equal(handled[g], want) {
			t.Errorf("group %s handled %v, want %v", g, handled[g], want)
		}
	}
}

// TestSQSBatchKeepsEachEntrysTraceHeader: the router sends a run's messages
// with SendMessageBatch, each with its run's AWSTraceHeader. Every message
// reaches its handler with its own entry's header (moto drops them on a
// batch; the launcher gives each its entry's before it is queued, so the
// pump's waiting receivers never take one without it) and an entry without
// one gets none.
func TestSQSBatchKeepsEachEntrysTraceHeader(t *testing.T) {
	cfg := testConfig(t)
	client := sqs.NewFromConfig(cfg)
	url := createQueue(t, client, false, 30*time.Second)
	var mu sync.Mutex
	got := map[string]string{} // body -> AWSTraceHeader
	pump := NewSQSPump(client, url, func(_ context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		mu.Lock()
		defer mu.Unlock()
		for _, m := range ev.Records {
			got[m.Body] = m.Attributes["AWSTraceHeader"]
		}
		return events.SQSEventResponse{}, nil
	}, SQSPumpOptions{Pollers: 4, Region: cfg.Region, Logger: testLogger(t)})
	runPump(t, pump.Run)

	want := map[string]string{}
	for round := range 5 {
		entries := make([]sqstypes.SendMessageBatchRequestEntry, 10)
		for k := range entries {
			body := fmt.Sprintf("m%d-%d", round, k)
			entries[k] = sqstypes.SendMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(k)), MessageBody: aws.String(body)}
			if k%3 == 2 {
				want[body] = "" // no trace
				continue
			}
			h := fmt.Sprintf("Root=1-6789%04d-%024d", round, k)
			want[body] = h
			entries[k].MessageSystemAttributes = map[string]sqstypes.MessageSystemAttributeValue{
				string(sqstypes.MessageSystemAttributeNameForSendsAWSTraceHeader): {DataType: aws.String("String"), StringValue: aws.String(h)},
			}
		}
		out, err := client.SendMessageBatch(context.Background(), &sqs.SendMessageBatchInput{QueueUrl: aws.String(url), Entries: entries})
		if err != nil || len(out.Failed) > 0 {
			t.Fatalf("send batch %d: %v %+v", round, err, out)
		}
	}
	eventually(t, 60*time.Second, "every message", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) == len(want)
	})
	mu.Lock()
	defer mu.Unlock()
	for body, h := range want {
		if got[body] != h {
			t.Errorf("message %s arrived with trace header %q, want %q", body, got[body], h)
		}
	}
}
