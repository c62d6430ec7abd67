package bench

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go/middleware"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bigItem returns an item of exactly n bytes.
func bigItem(n int) map[string]ddbtypes.AttributeValue {
	return map[string]ddbtypes.AttributeValue{"b": &ddbtypes.AttributeValueMemberB{Value: make([]byte, n-1)}}
}

func TestWriteUnits(t *testing.T) {
	key := map[string]ddbtypes.AttributeValue{"pk": &ddbtypes.AttributeValueMemberS{Value: "k"}} // 3 bytes
	tests := []struct {
		name   string
		params any
		want   float64
	}{
		{"small put", &dynamodb.PutItemInput{Item: bigItem(10)}, 1},
		{"exactly 1 KB", &dynamodb.PutItemInput{Item: bigItem(1024)}, 1},
		{"just over 1 KB", &dynamodb.PutItemInput{Item: bigItem(1025)}, 2},
		{"delete", &dynamodb.DeleteItemInput{Key: key}, 1},
		{"update sized from key, names and values", &dynamodb.UpdateItemInput{
			Key:                       key,
			ExpressionAttributeNames:  map[string]string{"#b": "body"},
			ExpressionAttributeValues: map[string]ddbtypes.AttributeValue{":b": &ddbtypes.AttributeValueMemberB{Value: make([]byte, 2048)}},
		}, 3},
		{"transaction doubles every action", &dynamodb.TransactWriteItemsInput{TransactItems: []ddbtypes.TransactWriteItem{
			{Put: &ddbtypes.Put{Item: bigItem(3000)}},            // 3 -> 6
			{Delete: &ddbtypes.Delete{Key: key}},                 // 1 -> 2
			{Update: &ddbtypes.Update{Key: key}},                 // 1 -> 2
			{ConditionCheck: &ddbtypes.ConditionCheck{Key: key}}, // 1 -> 2
		}}, 12},
		{"batch write", &dynamodb.BatchWriteItemInput{RequestItems: map[string][]ddbtypes.WriteRequest{
			"t": {{PutRequest: &ddbtypes.PutRequest{Item: bigItem(2000)}}, {DeleteRequest: &ddbtypes.DeleteRequest{Key: key}}},
		}}, 3},
		{"a read writes nothing", &dynamodb.GetItemInput{Key: key}, 0},
		{"not DynamoDB", &sqs.SendMessageInput{}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, writeUnits(tt.params))
		})
	}
}

func TestEachWriteSplitsByItemKind(t *testing.T) {
	key := func(sk string) map[string]ddbtypes.AttributeValue {
		return map[string]ddbtypes.AttributeValue{
			"pk": &ddbtypes.AttributeValueMemberS{Value: "R#wf#1"}, "sk": &ddbtypes.AttributeValueMemberS{Value: sk},
		}
	}
	run := key("RUN#000001")
	run["state"] = &ddbtypes.AttributeValueMemberB{Value: make([]byte, 1500)}
	in := &dynamodb.TransactWriteItemsInput{TransactItems: []ddbtypes.TransactWriteItem{
		{Put: &ddbtypes.Put{Item: run}},
		{Update: &ddbtypes.Update{Key: key("S#000001#s1#0001")}},
		{Update: &ddbtypes.Update{Key: key("S#000001#s2#0001")}},
		{Delete: &ddbtypes.Delete{Key: key("E#000001#f-s1-1")}},
		{Put: &ddbtypes.Put{Item: map[string]ddbtypes.AttributeValue{"pk": &ddbtypes.AttributeValueMemberS{Value: "x"}}}},
	}}
	got := map[string]int64{}
	eachWrite(in, func(kind string, units int64) { got[kind] += units })
	assert.Equal(t, map[string]int64{"RUN": 4, "S": 4, "E": 2, "other": 2}, got)

	// A page of a run's state is a kind of its own, and no run item.
	page := key("RUN#000001#PG#0000#a1b2")
	page["body"] = &ddbtypes.AttributeValueMemberB{Value: make([]byte, 500)}
	in.TransactItems = append(in.TransactItems, ddbtypes.TransactWriteItem{Put: &ddbtypes.Put{Item: page}})
	got = map[string]int64{}
	eachWrite(in, func(kind string, units int64) { got[kind] += units })
	assert.Equal(t, int64(2), got["PG"])
	var runItems []int
	eachRunItem(in, func(size int) { runItems = append(runItems, size) })
	require.Len(t, runItems, 1)
	assert.Equal(t, int64(2), itemWriteUnits(runItems[0]), "the run item's own units, not doubled")
}

func TestUnitQuantiles(t *testing.T) {
	_, _, _, ok := unitQuantiles(nil)
	assert.False(t, ok)
	p50, p90, most, ok := unitQuantiles(map[int64]int64{4: 58, 2: 2, 7: 1})
	assert.True(t, ok)
	assert.Equal(t, []int64{4, 4, 7}, []int64{p50, p90, most})
	p50, p90, most, _ = unitQuantiles(map[int64]int64{1: 5, 3: 5})
	assert.Equal(t, []int64{1, 3, 3}, []int64{p50, p90, most})
}

func TestReadUnits(t *testing.T) {
	strong := aws.Bool(true)
	items := func(sizes ...int) []map[string]ddbtypes.AttributeValue {
		var out []map[string]ddbtypes.AttributeValue
		for _, n := range sizes {
			out = append(out, bigItem(n))
		}
		return out
	}
	tests := []struct {
		name           string
		params, result any
		want           float64
	}{
		{"strong get of a small item", &dynamodb.GetItemInput{ConsistentRead: strong}, &dynamodb.GetItemOutput{Item: bigItem(100)}, 1},
		{"get of a missing item still costs", &dynamodb.GetItemInput{ConsistentRead: strong}, &dynamodb.GetItemOutput{}, 1},
		{"eventually consistent get", &dynamodb.GetItemInput{}, &dynamodb.GetItemOutput{Item: bigItem(5000)}, 1},
		{"strong query sums the page", &dynamodb.QueryInput{ConsistentRead: strong}, &dynamodb.QueryOutput{Items: items(3000, 3000, 3000)}, 3},
		{"empty query", &dynamodb.QueryInput{}, &dynamodb.QueryOutput{}, 0.5},
		{"transactional get doubles", &dynamodb.TransactGetItemsInput{}, &dynamodb.TransactGetItemsOutput{
			Responses: []ddbtypes.ItemResponse{{Item: bigItem(10)}, {Item: bigItem(5000)}},
		}, 2 + 4},
		{"a write reads nothing", &dynamodb.PutItemInput{}, &dynamodb.PutItemOutput{}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, readUnits(tt.params, tt.result))
		})
	}
}

// cannedTransport answers every request with the body answer returns.
type cannedTransport struct {
	answer func(target string) string
}

func (c cannedTransport) Do(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
	}
	body := c.answer(r.Header.Get("X-Amz-Target"))
	return &http.Response{
		StatusCode: http.StatusOK, Request: r,
		Header: http.Header{"Content-Type": []string{"application/x-amz-json-1.0"}},
		Body:   io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body)),
	}, nil
}

func meteredConfig(m *Meter, answer func(string) string) aws.Config {
	return aws.Config{
		Region:       "us-east-1",
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
		HTTPClient:   cannedTransport{answer: answer},
		BaseEndpoint: aws.String("http://127.0.0.1:1"),
		APIOptions:   []func(*middleware.Stack) error{m.Middleware()},
	}
}

func TestMeterMiddleware(t *testing.T) {
	m := NewMeter()
	cfg := meteredConfig(m, func(target string) string {
		switch {
		case strings.HasSuffix(target, ".Query"):
			return `{"Count":1,"Items":[{"pk":{"S":"abc"}}]}`
		case strings.HasSuffix(target, ".ReceiveMessage"):
			return `{"Messages":[{"MessageId":"1","ReceiptHandle":"r","Body":"hello"}]}`
		}
		return `{}`
	})
	ctx := context.Background()
	db := dynamodb.NewFromConfig(cfg)
	q := sqs.NewFromConfig(cfg)

	_, err := db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []ddbtypes.TransactWriteItem{
		{Put: &ddbtypes.Put{TableName: aws.String("t"), Item: bigItem(1500)}},
	}})
	require.NoError(t, err)
	_, err = db.Query(ctx, &dynamodb.QueryInput{TableName: aws.String("t"), ConsistentRead: aws.Bool(true)})
	require.NoError(t, err)
	_, err = q.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String("http://q/decision.fifo")})
	require.NoError(t, err)
	_, err = q.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String("http://q/work"), MessageBody: aws.String(strings.Repeat("x", 70*1024))})
	require.NoError(t, err)
	// The benchmark's own reads are not metered.
	_, err = db.Query(withoutMetering(ctx), &dynamodb.QueryInput{TableName: aws.String("t")})
	require.NoError(t, err)

	u := m.Usage()
	assert.Equal(t, map[string]int64{
		"DynamoDB.TransactWriteItems": 1, "DynamoDB.Query": 1, "SQS.ReceiveMessage": 1, "SQS.SendMessage": 1,
	}, u.Requests)
	assert.Equal(t, 4.0, u.DynamoDBWriteUnits, "a 1.5 KB item in a transaction is 2 units, doubled")
	assert.Equal(t, 1.0, u.DynamoDBReadUnits)
	assert.Equal(t, int64(1+2), u.SQSBilledRequests, "a 70 KB message is two 64 KB chunks")
	assert.Equal(t, int64(1), u.SQSFIFOBilledRequests)
	assert.Zero(t, u.SQSEmptyReceives)
	assert.Len(t, u.RequestMillis, 4)
	assert.Equal(t, map[string]float64{"other": 4}, u.WriteUnitsByKind)
	assert.Zero(t, u.FailedWriteUnits)

	m.Reset()
	assert.Equal(t, newUsage(), m.Usage())
}

func TestMeterChargesFailedWrites(t *testing.T) {
	m := NewMeter()
	cfg := meteredConfig(m, func(string) string { return `{}` })
	cfg.HTTPClient = failingTransport{}
	cfg.RetryMaxAttempts = 1
	_, err := dynamodb.NewFromConfig(cfg).PutItem(context.Background(), &dynamodb.PutItemInput{
		TableName: aws.String("t"), Item: bigItem(2000), ConditionExpression: aws.String("attribute_not_exists(pk)"),
	})
	require.Error(t, err)
	u := m.Usage()
	assert.Equal(t, 2.0, u.DynamoDBWriteUnits)
	assert.Equal(t, 2.0, u.FailedWriteUnits)
}

// failingTransport answers every request with DynamoDB's conditional
// check failure.
type failingTransport struct{}

func (failingTransport) Do(r *http.Request) (*http.Response, error) {
	body := `{"__type":"com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException","message":"The conditional request failed"}`
	return &http.Response{
		StatusCode: http.StatusBadRequest, Request: r,
		Header: http.Header{"Content-Type": []string{"application/x-amz-json-1.0"}},
		Body:   io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body)),
	}, nil
}

func TestMeterEmptyReceiveIsNotBilled(t *testing.T) {
	m := NewMeter()
	q := sqs.NewFromConfig(meteredConfig(m, func(string) string { return `{}` }))
	_, err := q.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: aws.String("http://q/work")})
	require.NoError(t, err)
	u := m.Usage()
	assert.Equal(t, int64(1), u.Requests["SQS.ReceiveMessage"])
	assert.Equal(t, int64(1), u.SQSEmptyReceives)
	assert.Zero(t, u.SQSBilledRequests)
}

// TestIndexWritesFollowTheSweepIndex: an item written with a sweep-index
// key costs one index write, a new due time two (a removal and an
// addition), the same due time none, and a delete or a rewrite without it
// one.
func TestIndexWritesFollowTheSweepIndex(t *testing.T) {
	s := func(v string) ddbtypes.AttributeValue { return &ddbtypes.AttributeValueMemberS{Value: v} }
	item := func(sk, due string) map[string]ddbtypes.AttributeValue {
		it := map[string]ddbtypes.AttributeValue{"pk": s("R#wf#1"), "sk": s(sk)}
		if due != "" {
			it["gsi1pk"], it["gsi1sk"] = s("SWEEP#1"), s(due)
		}
		return it
	}
	m := NewMeter()
	txn := func(items ...ddbtypes.TransactWriteItem) float64 {
		return m.indexWrites(&dynamodb.TransactWriteItemsInput{TransactItems: items})
	}
	put := func(it map[string]ddbtypes.AttributeValue) ddbtypes.TransactWriteItem {
		return ddbtypes.TransactWriteItem{Put: &ddbtypes.Put{Item: it}}
	}
	assert.Equal(t, 1.0, m.indexWrites(&dynamodb.PutItemInput{Item: item("E#000001#f-a", "1")}), "an indexed event")
	assert.Equal(t, 0.0, m.indexWrites(&dynamodb.PutItemInput{Item: item("E#000001#f-b", "")}), "a covered event")
	assert.Equal(t, 1.0, txn(put(item("RUN#000001", "5"))), "a run enters the index")
	assert.Equal(t, 0.0, txn(put(item("RUN#000001", "5"))), "same due time")
	assert.Equal(t, 3.0, txn(put(item("RUN#000001", "9")),
		ddbtypes.TransactWriteItem{Delete: &ddbtypes.Delete{Key: item("E#000001#f-a", "")}},
		ddbtypes.TransactWriteItem{Delete: &ddbtypes.Delete{Key: item("E#000001#f-b", "")}}), "a new due time and a consumed indexed event")
	assert.Equal(t, 1.0, txn(put(item("RUN#000001", ""))), "the run ends")
}

func TestMeterBillsAnSNSBatchPerRequest(t *testing.T) {
	m := NewMeter()
	entry := func(n int) snstypes.PublishBatchRequestEntry {
		return snstypes.PublishBatchRequestEntry{Id: aws.String("x"), Message: aws.String(strings.Repeat("e", n))}
	}
	small := &sns.PublishBatchInput{PublishBatchRequestEntries: []snstypes.PublishBatchRequestEntry{}}
	for range 10 {
		small.PublishBatchRequestEntries = append(small.PublishBatchRequestEntries, entry(1024))
	}
	m.record("SNS", "PublishBatch", time.Millisecond, small, &sns.PublishBatchOutput{}, nil)
	assert.Equal(t, int64(1), m.Usage().SNSBilledMessages, "ten 1 KB events in one batch are one request")
	big := &sns.PublishBatchInput{PublishBatchRequestEntries: []snstypes.PublishBatchRequestEntry{entry(40 << 10), entry(40 << 10)}}
	m.record("SNS", "PublishBatch", time.Millisecond, big, &sns.PublishBatchOutput{}, nil)
	assert.Equal(t, int64(1+2), m.Usage().SNSBilledMessages, "an 80 KB batch is two 64 KB chunks")
	m.record("SNS", "Publish", time.Millisecond, &sns.PublishInput{Message: aws.String("one")}, &sns.PublishOutput{}, nil)
	assert.Equal(t, int64(1+2+1), m.Usage().SNSBilledMessages)
}

// TestMeterUsesReportedCapacity: with UseReportedCapacity the meter asks
// every write for its consumed capacity and bills what the response
// reports (an update by its whole item; a transaction as reported, doubled
// already, but never under the request's estimate); a write whose response
// reports nothing is billed by the estimate, and the estimate is kept
// beside.
func TestMeterUsesReportedCapacity(t *testing.T) {
	m := NewMeter()
	m.UseReportedCapacity()
	var asked []string
	transactions := 0
	cfg := meteredConfig(m, func(target string) string {
		switch {
		case strings.HasSuffix(target, ".UpdateItem"):
			return `{"ConsumedCapacity":{"TableName":"t","CapacityUnits":3}}`
		case strings.HasSuffix(target, ".TransactWriteItems"):
			if transactions++; transactions == 1 {
				return `{"ConsumedCapacity":[{"TableName":"t","CapacityUnits":6}]}`
			}
			return `{"ConsumedCapacity":[{"TableName":"t","CapacityUnits":2}]}`
		}
		return `{}`
	})
	cfg.HTTPClient = recordingTransport{next: cfg.HTTPClient.(cannedTransport), asked: &asked}
	ctx := context.Background()
	db := dynamodb.NewFromConfig(cfg)
	key := map[string]ddbtypes.AttributeValue{"pk": &ddbtypes.AttributeValueMemberS{Value: "k"}}
	_, err := db.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String("t"), Key: key, UpdateExpression: aws.String("SET x = :x"),
		ExpressionAttributeValues: map[string]ddbtypes.AttributeValue{":x": &ddbtypes.AttributeValueMemberS{Value: "y"}}})
	require.NoError(t, err)
	for range 2 { // reported 6, then 2 (under the estimate)
		_, err = db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []ddbtypes.TransactWriteItem{
			{Put: &ddbtypes.Put{TableName: aws.String("t"), Item: bigItem(1500)}},
		}})
		require.NoError(t, err)
	}
	_, err = db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("t"), Item: bigItem(1500)})
	require.NoError(t, err)
	u := m.Usage()
	assert.True(t, u.ReportedCapacity)
	assert.Equal(t, 3.0+6.0+4.0+2.0, u.DynamoDBWriteUnits, "update and transaction as reported, but not under the estimate; put unreported, estimated")
	assert.Equal(t, 1.0+4.0+4.0+2.0, u.EstimatedWriteUnits)
	for _, body := range asked {
		assert.Contains(t, body, `"ReturnConsumedCapacity":"TOTAL"`)
	}
	assert.Len(t, asked, 4)
	m.Reset()
	assert.True(t, m.Usage().ReportedCapacity, "a reset keeps the meter's mode")
}

// recordingTransport records request bodies before a canned answer.
type recordingTransport struct {
	next  cannedTransport
	asked *[]string
}

func (r recordingTransport) Do(req *http.Request) (*http.Response, error) {
	b, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err
	}
	*r.asked = append(*r.asked, string(b))
	req.Body = io.NopCloser(strings.NewReader(string(b)))
	return r.next.Do(req)
}
