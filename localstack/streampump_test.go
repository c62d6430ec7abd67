package localstack

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// recorder collects handler calls.
type recorder struct {
	mu    sync.Mutex
	calls [][]string // per call, the sk of each record
	recs  []events.DynamoDBEventRecord
}

func (r *recorder) add(ev events.DynamoDBEvent) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	var keys []string
	for _, rec := range ev.Records {
		keys = append(keys, rec.Change.Keys["sk"].String())
	}
	r.calls = append(r.calls, keys)
	r.recs = append(r.recs, ev.Records...)
	return len(r.calls)
}

func (r *recorder) snapshot() ([][]string, []events.DynamoDBEventRecord) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls), slices.Clone(r.recs)
}

// pump is a stream pump on res's table stream whose handler records each
// batch and then answers as answer does, given the batch's number (1 for
// the first); a nil answer succeeds.
func (r *recorder) pump(cfg aws.Config, res *Resources, opts StreamPumpOptions, answer func(n int, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error)) *StreamPump {
	return NewStreamPump(dynamodbstreams.NewFromConfig(cfg), res.Table.StreamARN,
		func(_ context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
			n := r.add(ev)
			if answer == nil {
				return events.DynamoDBEventResponse{}, nil
			}
			return answer(n, ev)
		}, opts)
}

// wantCalls fails t unless the handler's calls so far had the records of
// want, call by call.
func (r *recorder) wantCalls(t *testing.T, want [][]string) {
	t.Helper()
	if calls, _ := r.snapshot(); fmt.Sprint(calls) != fmt.Sprint(want) {
		t.Errorf("handler calls = %v, want %v", calls, want)
	}
}

func (r *recorder) seen(sk string) bool {
	_, recs := r.snapshot()
	for _, rec := range recs {
		if rec.Change.Keys["sk"].String() == sk {
			return true
		}
	}
	return false
}

func putItem(t *testing.T, ddb *dynamodb.Client, table, sk string, extra map[string]ddbtypes.AttributeValue) {
	t.Helper()
	item := map[string]ddbtypes.AttributeValue{
		"pk": &ddbtypes.AttributeValueMemberS{Value: "wf#1"},
		"sk": &ddbtypes.AttributeValueMemberS{Value: sk},
	}
	for k, v := range extra {
		item[k] = v
	}
	if _, err := ddb.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(table), Item: item}); err != nil {
		t.Fatalf("PutItem %s: %v", sk, err)
	}
}

// streamStage provisions a stage for t and returns its config, its
// resources and put, which writes an item with sort key sk and an outbox
// to its table.
func streamStage(t *testing.T) (cfg aws.Config, res *Resources, put func(sk string)) {
	t.Helper()
	cfg = testConfig(t)
	res, _ = provisionStage(t, cfg)
	ddb := dynamodb.NewFromConfig(cfg)
	return cfg, res, func(sk string) {
		t.Helper()
		putItem(t, ddb, res.Table.Name, sk, outbox)
	}
}

// outbox is an item attribute the stream filter passes.
var outbox = map[string]ddbtypes.AttributeValue{
	"ob": &ddbtypes.AttributeValueMemberL{Value: []ddbtypes.AttributeValue{
		&ddbtypes.AttributeValueMemberM{Value: map[string]ddbtypes.AttributeValue{
			"kind": &ddbtypes.AttributeValueMemberS{Value: "decide"},
			"n":    &ddbtypes.AttributeValueMemberN{Value: "3"},
			"blob": &ddbtypes.AttributeValueMemberB{Value: []byte("hi")},
		}},
	}},
}

func TestStreamPumpDeliversFilteredRecords(t *testing.T) {
	cfg := testConfig(t)
	res, spec := provisionStage(t, cfg)
	ddb := dynamodb.NewFromConfig(cfg)
	var rec recorder
	pump := rec.pump(cfg, res, StreamPumpOptions{Filter: NewImageHas(spec.StreamFilterAttribute), Region: cfg.Region, Logger: testLogger(t)}, nil)
	runPump(t, pump.Run)

	putItem(t, ddb, res.Table.Name, "with-outbox", outbox)
	putItem(t, ddb, res.Table.Name, "plain", nil)
	putItem(t, ddb, res.Table.Name, "later", outbox)
	eventually(t, 10*time.Second, "the later item", func() bool { return rec.seen("later") })

	_, recs := rec.snapshot()
	var keys []string
	for _, r := range recs {
		keys = append(keys, r.Change.Keys["sk"].String())
	}
	if strings.Join(keys, ",") != "with-outbox,later" {
		t.Fatalf("delivered %v, want [with-outbox later] (plain filtered out, order kept)", keys)
	}
	r := recs[0]
	if r.EventName != "INSERT" || r.EventSourceArn != res.Table.StreamARN || r.EventSource != "aws:dynamodb" || r.Change.SequenceNumber == "" {
		t.Errorf("record envelope = %+v", r)
	}
	ob := r.Change.NewImage["ob"].List()
	if len(ob) != 1 {
		t.Fatalf("ob = %+v", r.Change.NewImage["ob"])
	}
	m := ob[0].Map()
	if m["kind"].String() != "decide" || m["n"].Number() != "3" || string(m["blob"].Binary()) != "hi" {
		t.Errorf("converted outbox entry = %+v", m)
	}
}

func TestStreamPumpRetriesFromFirstFailedRecord(t *testing.T) {
	cfg, res, put := streamStage(t)
	for _, sk := range []string{"k1", "k2", "k3"} {
		put(sk)
	}

	var rec recorder
	pump := rec.pump(cfg, res, StreamPumpOptions{Interval: 50 * time.Millisecond, RetryBackoff: 20 * time.Millisecond, Logger: testLogger(t)},
		func(n int, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
			if n == 1 {
				// Fail the second record: Lambda retries from it.
				return events.DynamoDBEventResponse{BatchItemFailures: []events.DynamoDBBatchItemFailure{
					{ItemIdentifier: ev.Records[1].Change.SequenceNumber},
				}}, nil
			}
			return events.DynamoDBEventResponse{}, nil
		})
	runPump(t, pump.Run)

	eventually(t, 10*time.Second, "the retry", func() bool { calls, _ := rec.snapshot(); return len(calls) >= 2 })
	put("k4")
	eventually(t, 10*time.Second, "k4", func() bool { return rec.seen("k4") })
	rec.wantCalls(t, [][]string{{"k1", "k2", "k3"}, {"k2", "k3"}, {"k4"}})
}

func TestStreamPumpRetriesWholeBatchOnError(t *testing.T) {
	cfg, res, put := streamStage(t)
	put("e1")
	put("e2")

	var rec recorder
	pump := rec.pump(cfg, res, StreamPumpOptions{Interval: 50 * time.Millisecond, RetryBackoff: 20 * time.Millisecond, Logger: testLogger(t)},
		func(n int, _ events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
			if n <= 2 {
				return events.DynamoDBEventResponse{}, errors.New("transient")
			}
			return events.DynamoDBEventResponse{}, nil
		})
	runPump(t, pump.Run)

	eventually(t, 10*time.Second, "three calls", func() bool { calls, _ := rec.snapshot(); return len(calls) >= 3 })
	time.Sleep(300 * time.Millisecond) // no fourth call: the batch succeeded
	rec.wantCalls(t, [][]string{{"e1", "e2"}, {"e1", "e2"}, {"e1", "e2"}})
}

func TestStreamPumpSkipsAfterMaxRetries(t *testing.T) {
	cfg, res, put := streamStage(t)
	put("poison")

	var rec recorder
	pump := rec.pump(cfg, res, StreamPumpOptions{Interval: 50 * time.Millisecond, RetryBackoff: 10 * time.Millisecond, MaxRetryAttempts: 2, Logger: testLogger(t)},
		func(_ int, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
			if ev.Records[0].Change.Keys["sk"].String() == "poison" {
				return events.DynamoDBEventResponse{}, errors.New("always fails")
			}
			return events.DynamoDBEventResponse{}, nil
		})
	runPump(t, pump.Run)

	eventually(t, 10*time.Second, "the poison record's attempts", func() bool { calls, _ := rec.snapshot(); return len(calls) >= 3 })
	put("next")
	eventually(t, 10*time.Second, "the next record", func() bool { return rec.seen("next") })
	rec.wantCalls(t, [][]string{{"poison"}, {"poison"}, {"poison"}, {"next"}})
}

func TestStreamPumpPrimedAtLatest(t *testing.T) {
	cfg, res, put := streamStage(t)
	put("before")

	var rec recorder
	pump := rec.pump(cfg, res, StreamPumpOptions{StartAtLatest: true, Logger: testLogger(t)}, nil)
	if err := pump.Prime(context.Background()); err != nil {
		t.Fatalf("Prime: %v", err)
	}
	put("after")
	runPump(t, pump.Run)
	eventually(t, 10*time.Second, "the record written after Prime", func() bool { return rec.seen("after") })
	if calls, _ := rec.snapshot(); fmt.Sprint(calls) != "[[after]]" {
		t.Errorf("calls = %v, want only the record written after Prime", calls)
	}
}

// trimOnce is the emulator's Streams client but for one GetRecords, the
// first after a read that returned records, which fails with
// TrimmedDataAccessException, as DynamoDB Local's sometimes does of a
// shard seconds old.
type trimOnce struct {
	StreamsAPI
	mu            sync.Mutex
	read, trimmed bool
}

func (c *trimOnce) GetRecords(ctx context.Context, in *dynamodbstreams.GetRecordsInput, opts ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetRecordsOutput, error) {
	c.mu.Lock()
	if c.read && !c.trimmed {
		c.trimmed = true
		c.mu.Unlock()
		return nil, &streamtypes.TrimmedDataAccessException{Message: aws.String("The operation attempted to read past the oldest stream record in a shard.")}
	}
	c.mu.Unlock()
	out, err := c.StreamsAPI.GetRecords(ctx, in, opts...)
	if err == nil && len(out.Records) > 0 {
		c.mu.Lock()
		c.read = true
		c.mu.Unlock()
	}
	return out, err
}

func (c *trimOnce) done() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.trimmed
}

func TestStreamPumpGoesOnAfterTrimmedData(t *testing.T) {
	cfg, res, put := streamStage(t)
	put("t1")
	put("t2")

	var rec recorder
	client := &trimOnce{StreamsAPI: dynamodbstreams.NewFromConfig(cfg)}
	pump := NewStreamPump(client, res.Table.StreamARN, func(_ context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		rec.add(ev)
		return events.DynamoDBEventResponse{}, nil
	}, StreamPumpOptions{Interval: 50 * time.Millisecond, Logger: testLogger(t)})
	runPump(t, pump.Run)

	eventually(t, 10*time.Second, "the first records, then the trimmed read", func() bool { return rec.seen("t2") && client.done() })
	put("t3")
	eventually(t, 10*time.Second, "the record written after", func() bool { return rec.seen("t3") })
	// Read again from the shard's oldest record, t1 and t2 are passed over.
	rec.wantCalls(t, [][]string{{"t1", "t2"}, {"t3"}})
}

func TestSeqAfter(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"2", "1", true},
		{"1", "2", false},
		{"1", "1", false},
		{"10", "9", true},
		{"9", "10", false},
		{"0000200", "199", true},
		{"0010", "9", true},
		{"49668461390498472185862066283513380066474512128620757026", "49668461390498472185862066283513380066474512128620757025", true},
	} {
		if got := seqAfter(c.a, c.b); got != c.want {
			t.Errorf("seqAfter(%s, %s) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}
