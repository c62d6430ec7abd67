package awsmeter

import (
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/maestro-serverless/maestro/pricing"
)

func s(v string) ddbtypes.AttributeValue { return &ddbtypes.AttributeValueMemberS{Value: v} }

func item(bytes int) map[string]ddbtypes.AttributeValue {
	return map[string]ddbtypes.AttributeValue{"pk": s("p"), "sk": s("s"), "b": s(strings.Repeat("x", bytes))}
}

func TestBilled(t *testing.T) {
	consumed := func(n float64) *ddbtypes.ConsumedCapacity {
		return &ddbtypes.ConsumedCapacity{CapacityUnits: aws.Float64(n)}
	}
	failed := errors.New("ConditionalCheckFailed")
	for _, tc := range []struct {
		name    string
		service string
		in, out any
		err     error
		want    pricing.Usage
	}{
		{"a put as reported", dynamodb.ServiceID, &dynamodb.PutItemInput{Item: item(100)},
			&dynamodb.PutItemOutput{ConsumedCapacity: consumed(3)}, nil, pricing.Usage{pricing.DynamoDBWriteUnits: 3}},
		{"a put reported below its size", dynamodb.ServiceID, &dynamodb.PutItemInput{Item: item(2500)},
			&dynamodb.PutItemOutput{ConsumedCapacity: consumed(1)}, nil, pricing.Usage{pricing.DynamoDBWriteUnits: 3}},
		{"a put not reported", dynamodb.ServiceID, &dynamodb.PutItemInput{Item: item(1500)},
			&dynamodb.PutItemOutput{}, nil, pricing.Usage{pricing.DynamoDBWriteUnits: 2}},
		{"a failed put is charged", dynamodb.ServiceID, &dynamodb.PutItemInput{Item: item(100)},
			nil, failed, pricing.Usage{pricing.DynamoDBWriteUnits: 1}},
		{"a transaction at least doubled", dynamodb.ServiceID, &dynamodb.TransactWriteItemsInput{TransactItems: []ddbtypes.TransactWriteItem{
			{Put: &ddbtypes.Put{Item: item(100)}}, {Put: &ddbtypes.Put{Item: item(100)}}, {Delete: &ddbtypes.Delete{Key: item(0)}}}},
			&dynamodb.TransactWriteItemsOutput{ConsumedCapacity: []ddbtypes.ConsumedCapacity{*consumed(2)}}, nil,
			pricing.Usage{pricing.DynamoDBWriteUnits: 6}},
		{"a consistent get", dynamodb.ServiceID, &dynamodb.GetItemInput{ConsistentRead: aws.Bool(true)},
			&dynamodb.GetItemOutput{Item: item(5000)}, nil, pricing.Usage{pricing.DynamoDBReadUnits: 2}},
		{"an eventually consistent query page", dynamodb.ServiceID, &dynamodb.QueryInput{},
			&dynamodb.QueryOutput{Items: []map[string]ddbtypes.AttributeValue{item(100), item(100)}}, nil,
			pricing.Usage{pricing.DynamoDBReadUnits: 0.5}},
		{"a batch get by item", dynamodb.ServiceID, &dynamodb.BatchGetItemInput{RequestItems: map[string]ddbtypes.KeysAndAttributes{"t": {ConsistentRead: aws.Bool(true)}}},
			&dynamodb.BatchGetItemOutput{Responses: map[string][]map[string]ddbtypes.AttributeValue{"t": {item(10), item(10), item(5000)}}}, nil,
			pricing.Usage{pricing.DynamoDBReadUnits: 4}},
		{"a failed read is free", dynamodb.ServiceID, &dynamodb.GetItemInput{}, nil, failed, pricing.Usage{}},
		{"a FIFO send", sqs.ServiceID, &sqs.SendMessageInput{QueueUrl: aws.String("https://q/x.fifo"), MessageBody: aws.String("b")},
			&sqs.SendMessageOutput{}, nil, pricing.Usage{pricing.SQSFIFORequests: 1}},
		{"a batch send by 64 KB", sqs.ServiceID, &sqs.SendMessageBatchInput{QueueUrl: aws.String("https://q/x"), Entries: []sqstypes.SendMessageBatchRequestEntry{
			{MessageBody: aws.String(strings.Repeat("x", 40_000))}, {MessageBody: aws.String(strings.Repeat("x", 40_000))}}},
			&sqs.SendMessageBatchOutput{}, nil, pricing.Usage{pricing.SQSRequests: 2}},
		{"an empty receive is free", sqs.ServiceID, &sqs.ReceiveMessageInput{QueueUrl: aws.String("https://q/x")},
			&sqs.ReceiveMessageOutput{}, nil, pricing.Usage{}},
		{"a delete", sqs.ServiceID, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String("https://q/x")},
			&sqs.DeleteMessageBatchOutput{}, nil, pricing.Usage{pricing.SQSRequests: 1}},
		{"a publish batch is one request", sns.ServiceID, &sns.PublishBatchInput{PublishBatchRequestEntries: []snstypes.PublishBatchRequestEntry{
			{Message: aws.String("a")}, {Message: aws.String("b")}}}, &sns.PublishBatchOutput{}, nil, pricing.Usage{pricing.SNSRequests: 1}},
		{"other services are not the orchestration's", "Lambda", &struct{}{}, nil, nil, pricing.Usage{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Billed(tc.service, tc.in, tc.out, tc.err)
			if len(got) != len(tc.want) {
				t.Fatalf("Billed = %v, want %v", got, tc.want)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("%s = %v, want %v (all %v)", k, got[k], v, got)
				}
			}
		})
	}
}

func TestAskCapacity(t *testing.T) {
	in := &dynamodb.PutItemInput{}
	AskCapacity(in)
	if in.ReturnConsumedCapacity != ddbtypes.ReturnConsumedCapacityTotal {
		t.Errorf("put asks %q", in.ReturnConsumedCapacity)
	}
	idx := &dynamodb.UpdateItemInput{ReturnConsumedCapacity: ddbtypes.ReturnConsumedCapacityIndexes}
	AskCapacity(idx)
	if idx.ReturnConsumedCapacity != ddbtypes.ReturnConsumedCapacityIndexes {
		t.Error("a caller's own setting was overwritten")
	}
}
