package localstack

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

func TestLambdaStreamRecordConvertsEveryType(t *testing.T) {
	created := time.Unix(1767225600, 0)
	rec := types.Record{
		EventID:   aws.String("e1"),
		EventName: types.OperationTypeModify,
		Dynamodb: &types.StreamRecord{
			ApproximateCreationDateTime: &created,
			SequenceNumber:              aws.String("100"),
			SizeBytes:                   aws.Int64(42),
			StreamViewType:              types.StreamViewTypeNewAndOldImages,
			Keys:                        map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "k"}},
			NewImage: map[string]types.AttributeValue{
				"s":    &types.AttributeValueMemberS{Value: "x"},
				"n":    &types.AttributeValueMemberN{Value: "12.5"},
				"b":    &types.AttributeValueMemberB{Value: []byte{1, 2}},
				"t":    &types.AttributeValueMemberBOOL{Value: true},
				"null": &types.AttributeValueMemberNULL{Value: true},
				"ss":   &types.AttributeValueMemberSS{Value: []string{"a", "b"}},
				"ns":   &types.AttributeValueMemberNS{Value: []string{"1", "2"}},
				"bs":   &types.AttributeValueMemberBS{Value: [][]byte{{3}}},
				"m": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
					"inner": &types.AttributeValueMemberL{Value: []types.AttributeValue{
						&types.AttributeValueMemberN{Value: "7"},
						&types.AttributeValueMemberM{Value: map[string]types.AttributeValue{}},
					}},
				}},
			},
		},
	}
	got, err := lambdaStreamRecord(rec, "arn:stream", "eu-west-1")
	if err != nil {
		t.Fatalf("convert: %v", err)
	}
	if got.EventSource != "aws:dynamodb" || got.EventVersion != "1.1" || got.AWSRegion != "eu-west-1" ||
		got.EventSourceArn != "arn:stream" || got.EventName != "MODIFY" || got.EventID != "e1" {
		t.Errorf("envelope = %+v", got)
	}
	c := got.Change
	if c.SequenceNumber != "100" || c.SizeBytes != 42 || c.StreamViewType != "NEW_AND_OLD_IMAGES" || !c.ApproximateCreationDateTime.Equal(created) {
		t.Errorf("change = %+v", c)
	}
	if c.OldImage != nil {
		t.Errorf("old image = %v, want nil", c.OldImage)
	}
	// The Lambda JSON form is what a handler would see in AWS.
	raw, err := json.Marshal(c.NewImage)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	var back map[string]any
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	want := `{"b":{"B":"AQI="},"bs":{"BS":["Aw=="]},"m":{"M":{"inner":{"L":[{"N":"7"},{"M":{}}]}}},"n":{"N":"12.5"},"ns":{"NS":["1","2"]},"null":{"NULL":true},"s":{"S":"x"},"ss":{"SS":["a","b"]},"t":{"BOOL":true}}`
	norm, _ := json.Marshal(back)
	if string(norm) != want {
		t.Errorf("new image JSON =\n%s\nwant\n%s", norm, want)
	}
	if got := c.NewImage["n"].Number(); got != "12.5" {
		t.Errorf("number = %q", got)
	}
	if k := c.Keys["pk"].String(); k != "k" {
		t.Errorf("key = %q", k)
	}
}

func TestNewImageHas(t *testing.T) {
	f := NewImageHas("ob")
	with := events.DynamoDBEventRecord{Change: events.DynamoDBStreamRecord{NewImage: map[string]events.DynamoDBAttributeValue{"ob": events.NewListAttribute(nil)}}}
	oldOnly := events.DynamoDBEventRecord{Change: events.DynamoDBStreamRecord{OldImage: map[string]events.DynamoDBAttributeValue{"ob": events.NewNullAttribute()}}}
	if !f(with) || f(oldOnly) || f(events.DynamoDBEventRecord{}) {
		t.Errorf("NewImageHas: with=%v oldOnly=%v empty=%v", f(with), f(oldOnly), f(events.DynamoDBEventRecord{}))
	}
}

func TestFirstFailed(t *testing.T) {
	batch := []events.DynamoDBEventRecord{
		{Change: events.DynamoDBStreamRecord{SequenceNumber: "10"}},
		{Change: events.DynamoDBStreamRecord{SequenceNumber: "20"}},
		{Change: events.DynamoDBStreamRecord{SequenceNumber: "30"}},
	}
	fail := func(ids ...string) []events.DynamoDBBatchItemFailure {
		var out []events.DynamoDBBatchItemFailure
		for _, id := range ids {
			out = append(out, events.DynamoDBBatchItemFailure{ItemIdentifier: id})
		}
		return out
	}
	tests := []struct {
		name     string
		failures []events.DynamoDBBatchItemFailure
		want     int
	}{
		{"one", fail("20"), 1},
		{"lowest wins", fail("30", "20"), 1},
		{"last", fail("30"), 2},
		{"unknown id retries all", fail("30", "99"), 0},
		{"empty id retries all", fail(""), 0},
	}
	for _, tt := range tests {
		if got := firstFailed(batch, tt.failures); got != tt.want {
			t.Errorf("%s: firstFailed = %d, want %d", tt.name, got, tt.want)
		}
	}
}

func TestHoldBackGroups(t *testing.T) {
	msg := func(id, group string) events.SQSMessage {
		return events.SQSMessage{MessageId: id, Attributes: map[string]string{"MessageGroupId": group}}
	}
	records := []events.SQSMessage{msg("a1", "a"), msg("b1", "b"), msg("a2", "a"), msg("b2", "b"), msg("a3", "a")}
	failed := map[string]bool{"a2": true}
	holdBackGroups(records, failed)
	for id, want := range map[string]bool{"a1": false, "b1": false, "a2": true, "b2": false, "a3": true} {
		if failed[id] != want {
			t.Errorf("failed[%s] = %v, want %v", id, failed[id], want)
		}
	}
}

func TestChunks(t *testing.T) {
	var sizes []int
	for c := range chunks(make([]int, 23), 10) {
		sizes = append(sizes, len(c))
	}
	if len(sizes) != 3 || sizes[0] != 10 || sizes[1] != 10 || sizes[2] != 3 {
		t.Errorf("chunk sizes = %v, want [10 10 3]", sizes)
	}
}

func TestManualClock(t *testing.T) {
	before := time.Now()
	c := NewManualClock()
	start := c.Now()
	if start.Before(before) || start.After(time.Now()) {
		t.Fatalf("clock starts at %v, want the real time", start)
	}
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			c.Advance(time.Minute)
			_ = c.Now()
		})
	}
	wg.Wait()
	if got := c.Now().Sub(start); got != 50*time.Minute {
		t.Errorf("advanced %v, want 50m", got)
	}
	fixed := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	c.Set(fixed)
	if !c.Now().Equal(fixed) {
		t.Errorf("Set: now = %v", c.Now())
	}
}

func TestCallHandlerTurnsPanicIntoError(t *testing.T) {
	h := func(_ context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		if len(ev.Records) == 0 {
			panic("no records")
		}
		return events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{{ItemIdentifier: "x"}}}, nil
	}
	_, err := callHandler(context.Background(), h, events.SQSEvent{})
	if err == nil || !strings.Contains(err.Error(), "handler panicked: no records") {
		t.Fatalf("err = %v, want the panic as an error", err)
	}
	resp, err := callHandler(context.Background(), h, events.SQSEvent{Records: []events.SQSMessage{{}}})
	if err != nil || len(resp.BatchItemFailures) != 1 {
		t.Fatalf("normal call = %+v, %v", resp, err)
	}
}
