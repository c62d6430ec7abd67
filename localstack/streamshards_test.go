package localstack

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// fakeShard is one shard of fakeStream.
type fakeShard struct {
	id, parent string
	seqs       []int // sequence numbers of its records
	closed     bool  // no more records will come
}

// fakeStream is an in-memory DynamoDB stream with shard lineage, which no
// local emulator produces: it lists shards in the order given and can make
// the next GetRecords call fail with an expired iterator.
type fakeStream struct {
	mu           sync.Mutex
	shards       []*fakeShard
	expireNext   bool
	iteratorReqs []string // "shard:type[:seq]"
}

func (f *fakeStream) DescribeStream(_ context.Context, in *dynamodbstreams.DescribeStreamInput, _ ...func(*dynamodbstreams.Options)) (*dynamodbstreams.DescribeStreamOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var shards []types.Shard
	for _, s := range f.shards {
		sh := types.Shard{ShardId: aws.String(s.id)}
		if s.parent != "" {
			sh.ParentShardId = aws.String(s.parent)
		}
		shards = append(shards, sh)
	}
	return &dynamodbstreams.DescribeStreamOutput{StreamDescription: &types.StreamDescription{StreamArn: in.StreamArn, Shards: shards}}, nil
}

func (f *fakeStream) shard(id string) *fakeShard {
	for _, s := range f.shards {
		if s.id == id {
			return s
		}
	}
	return nil
}

// Iterators are "shard|position", position being the index of the next record.
func (f *fakeStream) GetShardIterator(_ context.Context, in *dynamodbstreams.GetShardIteratorInput, _ ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetShardIteratorOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.shard(aws.ToString(in.ShardId))
	req := s.id + ":" + string(in.ShardIteratorType)
	pos := 0
	switch in.ShardIteratorType {
	case types.ShardIteratorTypeLatest:
		pos = len(s.seqs)
	case types.ShardIteratorTypeAfterSequenceNumber:
		req += ":" + aws.ToString(in.SequenceNumber)
		seq, _ := strconv.Atoi(aws.ToString(in.SequenceNumber))
		for pos < len(s.seqs) && s.seqs[pos] <= seq {
			pos++
		}
	}
	f.iteratorReqs = append(f.iteratorReqs, req)
	return &dynamodbstreams.GetShardIteratorOutput{ShardIterator: aws.String(fmt.Sprintf("%s|%d", s.id, pos))}, nil
}

func (f *fakeStream) GetRecords(_ context.Context, in *dynamodbstreams.GetRecordsInput, _ ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetRecordsOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.expireNext {
		f.expireNext = false
		return nil, &types.ExpiredIteratorException{Message: aws.String("expired")}
	}
	id, posText, _ := strings.Cut(aws.ToString(in.ShardIterator), "|")
	pos, _ := strconv.Atoi(posText)
	s := f.shard(id)
	end := min(len(s.seqs), pos+int(aws.ToInt32(in.Limit)))
	out := &dynamodbstreams.GetRecordsOutput{}
	for _, seq := range s.seqs[pos:end] {
		out.Records = append(out.Records, types.Record{
			EventName: types.OperationTypeInsert,
			Dynamodb: &types.StreamRecord{
				SequenceNumber: aws.String(strconv.Itoa(seq)),
				Keys:           map[string]types.AttributeValue{"sk": &types.AttributeValueMemberS{Value: fmt.Sprintf("%s/%d", id, seq)}},
			},
		})
	}
	if !(s.closed && end == len(s.seqs)) {
		out.NextShardIterator = aws.String(fmt.Sprintf("%s|%d", id, end))
	}
	return out, nil
}

func (f *fakeStream) add(shard string, seqs ...int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.shard(shard)
	s.seqs = append(s.seqs, seqs...)
}

func TestStreamPumpShardLineage(t *testing.T) {
	// The child is listed first, yet its records must wait for the parent's.
	fake := &fakeStream{shards: []*fakeShard{
		{id: "child", parent: "parent", seqs: []int{30, 31}},
		{id: "parent", seqs: []int{10, 11, 12}, closed: true},
	}}
	var rec recorder
	pump := NewStreamPump(fake, "arn:fake", func(_ context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		rec.add(ev)
		return events.DynamoDBEventResponse{}, nil
	}, StreamPumpOptions{Interval: 10 * time.Millisecond, BatchSize: 2, ShardRefresh: time.Hour})
	runPump(t, pump.Run)

	eventually(t, 5*time.Second, "the child's records", func() bool { return rec.seen("child/31") })
	calls, _ := rec.snapshot()
	if got, want := fmt.Sprint(calls), "[[parent/10 parent/11] [parent/12] [child/30 child/31]]"; got != want {
		t.Fatalf("calls = %s, want %s", got, want)
	}

	// A shard created later (a split) is found and read from its start.
	fake.mu.Lock()
	fake.shards = append(fake.shards, &fakeShard{id: "grandchild", parent: "child", seqs: []int{50}})
	fake.shards[0].closed = true
	fake.mu.Unlock()
	eventually(t, 5*time.Second, "the new shard's record", func() bool { return rec.seen("grandchild/50") })

	// An expired iterator is replaced by one after the last record read.
	fake.mu.Lock()
	fake.expireNext = true
	fake.mu.Unlock()
	fake.add("grandchild", 51)
	eventually(t, 5*time.Second, "the record after the expired iterator", func() bool { return rec.seen("grandchild/51") })
	fake.mu.Lock()
	reqs := strings.Join(fake.iteratorReqs, " ")
	fake.mu.Unlock()
	if !strings.Contains(reqs, "grandchild:AFTER_SEQUENCE_NUMBER:50") {
		t.Errorf("iterator requests %s lack a re-acquire after 50", reqs)
	}
	_, recs := rec.snapshot()
	if len(recs) != 7 {
		t.Errorf("%d records delivered, want 7 (each once)", len(recs))
	}
}

func TestStreamPumpStartAtLatest(t *testing.T) {
	fake := &fakeStream{shards: []*fakeShard{{id: "s1", seqs: []int{1, 2}}}}
	var rec recorder
	pump := NewStreamPump(fake, "arn:fake", func(_ context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		rec.add(ev)
		return events.DynamoDBEventResponse{}, nil
	}, StreamPumpOptions{Interval: 10 * time.Millisecond, StartAtLatest: true})
	if err := pump.Prime(context.Background()); err != nil {
		t.Fatalf("Prime: %v", err)
	}
	fake.add("s1", 3) // written after Prime, before Run: delivered
	runPump(t, pump.Run)
	eventually(t, 5*time.Second, "the new record", func() bool { return rec.seen("s1/3") })
	if calls, _ := rec.snapshot(); fmt.Sprint(calls) != "[[s1/3]]" {
		t.Errorf("calls = %v, want only the record written after start", calls)
	}
}
