// Package awsmeter is the AWS SDK middleware that bills each call the
// orchestrator makes to the ledger (package metering) of the context it is
// made with: DynamoDB read and write request units, SQS requests and SNS
// publishes as AWS bills them. Calls made without a ledger are not
// counted. It is independent of the benchmark's meter (package bench),
// which checks it.
package awsmeter

import (
	"context"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/maestro-serverless/maestro/metering"
	"github.com/maestro-serverless/maestro/pricing"
	"github.com/maestro-serverless/maestro/store"
)

// Billing granularities.
const (
	writeUnitBytes = 1024
	readUnitBytes  = 4096
	chunkBytes     = 64 * 1024
)

// middlewareID names the middleware in a client's stack.
const middlewareID = "maestro.metering.awsmeter"

// Middleware returns an API option (config.WithAPIOptions,
// aws.Config.APIOptions) that adds the meter to a client's stack. It asks
// DynamoDB for the capacity each write consumes (ReturnConsumedCapacity
// TOTAL) when the call is metered.
func Middleware() func(*middleware.Stack) error {
	return func(stack *middleware.Stack) error {
		return stack.Initialize.Add(middleware.InitializeMiddlewareFunc(middlewareID,
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				l := metering.From(ctx)
				if l == nil || metering.IsUnmetered(ctx) {
					return next.HandleInitialize(ctx, in)
				}
				AskCapacity(in.Parameters)
				out, md, err := next.HandleInitialize(ctx, in)
				u := Billed(awsmiddleware.GetServiceID(ctx), in.Parameters, out.Result, err)
				if pre, ok := metering.PrechargedFrom(ctx); ok {
					for k, v := range pre {
						u[k] -= v
					}
				}
				for k, v := range u {
					l.Add(k, v)
				}
				return out, md, err
			}), middleware.After)
	}
}

// AskCapacity has a DynamoDB write (the typed input of a call) report the
// capacity it consumes, unless its caller asked already: the runtime's
// meter and the benchmark's ask alike.
func AskCapacity(params any) {
	var rc *ddbtypes.ReturnConsumedCapacity
	switch in := params.(type) {
	case *dynamodb.PutItemInput:
		rc = &in.ReturnConsumedCapacity
	case *dynamodb.UpdateItemInput:
		rc = &in.ReturnConsumedCapacity
	case *dynamodb.DeleteItemInput:
		rc = &in.ReturnConsumedCapacity
	case *dynamodb.BatchWriteItemInput:
		rc = &in.ReturnConsumedCapacity
	case *dynamodb.TransactWriteItemsInput:
		rc = &in.ReturnConsumedCapacity
	}
	if rc != nil && *rc == "" {
		*rc = ddbtypes.ReturnConsumedCapacityTotal
	}
}

// Billed returns what one call of service (an SDK service ID) is billed,
// by pricing part: a DynamoDB write what it reports it consumed (a failed
// one, which DynamoDB charges as if made, estimated from the request), a
// read by the bytes it returned, SQS and SNS requests by 64 KB chunk.
// Receives that return nothing, and calls of other services, are billed
// nothing here.
func Billed(service string, params, result any, err error) pricing.Usage {
	u := pricing.Usage{}
	switch service {
	case dynamodb.ServiceID:
		if w := writeUnits(params, result, err); w > 0 {
			u[pricing.DynamoDBWriteUnits] = w
		}
		if err == nil {
			if r := readUnits(params, result); r > 0 {
				u[pricing.DynamoDBReadUnits] = r
			}
		}
	case sqs.ServiceID:
		if n, fifo := sqsRequests(params, result, err); n > 0 {
			if fifo {
				u[pricing.SQSFIFORequests] = n
			} else {
				u[pricing.SQSRequests] = n
			}
		}
	case sns.ServiceID:
		if err == nil {
			if n := snsRequests(params); n > 0 {
				u[pricing.SNSRequests] = n
			}
		}
	}
	return u
}

// writeUnits is a write's billed units: as reported, but at least the
// estimate from the request (exact for puts, a lower bound otherwise:
// DynamoDB Local reports a transaction's items of equal content once).
func writeUnits(params, result any, err error) float64 {
	est := estimatedWriteUnits(params)
	if err == nil {
		if n, ok := reported(result); ok {
			return max(n, est)
		}
	}
	return est
}

func reported(result any) (float64, bool) {
	sum := func(cs []ddbtypes.ConsumedCapacity) (float64, bool) {
		var n float64
		for _, c := range cs {
			if c.CapacityUnits == nil {
				return 0, false
			}
			n += aws.ToFloat64(c.CapacityUnits)
		}
		return n, len(cs) > 0
	}
	one := func(c *ddbtypes.ConsumedCapacity) (float64, bool) {
		if c == nil || c.CapacityUnits == nil {
			return 0, false
		}
		return aws.ToFloat64(c.CapacityUnits), true
	}
	switch out := result.(type) {
	case *dynamodb.PutItemOutput:
		return one(out.ConsumedCapacity)
	case *dynamodb.UpdateItemOutput:
		return one(out.ConsumedCapacity)
	case *dynamodb.DeleteItemOutput:
		return one(out.ConsumedCapacity)
	case *dynamodb.BatchWriteItemOutput:
		return sum(out.ConsumedCapacity)
	case *dynamodb.TransactWriteItemsOutput:
		return sum(out.ConsumedCapacity)
	}
	return 0, false
}

// estimatedWriteUnits sizes a write from its request: ceil(bytes / 1 KB)
// an item (a put's whole item; an update's or delete's key and values, a
// lower bound), doubled in a transaction.
func estimatedWriteUnits(params any) float64 {
	var n int64
	switch in := params.(type) {
	case *dynamodb.PutItemInput:
		n = units(store.ItemSize(in.Item), writeUnitBytes)
	case *dynamodb.UpdateItemInput:
		n = units(updateBytes(in.Key, in.ExpressionAttributeValues), writeUnitBytes)
	case *dynamodb.DeleteItemInput:
		n = units(store.ItemSize(in.Key), writeUnitBytes)
	case *dynamodb.BatchWriteItemInput:
		for _, reqs := range in.RequestItems {
			for _, r := range reqs {
				switch {
				case r.PutRequest != nil:
					n += units(store.ItemSize(r.PutRequest.Item), writeUnitBytes)
				case r.DeleteRequest != nil:
					n += units(store.ItemSize(r.DeleteRequest.Key), writeUnitBytes)
				}
			}
		}
	case *dynamodb.TransactWriteItemsInput:
		for _, it := range in.TransactItems {
			switch {
			case it.Put != nil:
				n += 2 * units(store.ItemSize(it.Put.Item), writeUnitBytes)
			case it.Update != nil:
				n += 2 * units(updateBytes(it.Update.Key, it.Update.ExpressionAttributeValues), writeUnitBytes)
			case it.Delete != nil:
				n += 2 * units(store.ItemSize(it.Delete.Key), writeUnitBytes)
			case it.ConditionCheck != nil:
				n += 2 * units(store.ItemSize(it.ConditionCheck.Key), writeUnitBytes)
			}
		}
	}
	return float64(n)
}

func updateBytes(key, values map[string]ddbtypes.AttributeValue) int {
	n := store.ItemSize(key)
	for _, v := range values {
		n += store.AttributeValueSize(v)
	}
	return n
}

// readUnits is a read's billed units from what it returned: ceil(bytes /
// 4 KB), at least 1, a GetItem or a Query or Scan page (each item of a
// batch), halved when eventually consistent, doubled in a transaction.
func readUnits(params, result any) float64 {
	scale := func(consistent *bool) float64 {
		if aws.ToBool(consistent) {
			return 1
		}
		return 0.5
	}
	size := func(items []map[string]ddbtypes.AttributeValue) int {
		n := 0
		for _, it := range items {
			n += store.ItemSize(it)
		}
		return n
	}
	switch in := params.(type) {
	case *dynamodb.GetItemInput:
		if out, ok := result.(*dynamodb.GetItemOutput); ok && out != nil {
			return float64(units(store.ItemSize(out.Item), readUnitBytes)) * scale(in.ConsistentRead)
		}
	case *dynamodb.QueryInput:
		if out, ok := result.(*dynamodb.QueryOutput); ok && out != nil {
			return float64(units(size(out.Items), readUnitBytes)) * scale(in.ConsistentRead)
		}
	case *dynamodb.ScanInput:
		if out, ok := result.(*dynamodb.ScanOutput); ok && out != nil {
			return float64(units(size(out.Items), readUnitBytes)) * scale(in.ConsistentRead)
		}
	case *dynamodb.BatchGetItemInput:
		var n float64
		if out, ok := result.(*dynamodb.BatchGetItemOutput); ok && out != nil {
			for table, items := range out.Responses {
				s := scale(in.RequestItems[table].ConsistentRead)
				for _, it := range items {
					n += float64(units(store.ItemSize(it), readUnitBytes)) * s
				}
			}
		}
		return n
	case *dynamodb.TransactGetItemsInput:
		var n float64
		if out, ok := result.(*dynamodb.TransactGetItemsOutput); ok && out != nil {
			for _, r := range out.Responses {
				n += 2 * float64(units(store.ItemSize(r.Item), readUnitBytes))
			}
		}
		return n
	}
	return 0
}

// sqsRequests is an SQS call's billed requests and whether its queue is
// a FIFO queue.
func sqsRequests(params, result any, err error) (float64, bool) {
	fifo := func(url *string) bool { return strings.HasSuffix(aws.ToString(url), ".fifo") }
	switch in := params.(type) {
	case *sqs.SendMessageInput:
		return float64(units(len(aws.ToString(in.MessageBody))+attrBytes(in.MessageAttributes), chunkBytes)), fifo(in.QueueUrl)
	case *sqs.SendMessageBatchInput:
		n := 0
		for _, e := range in.Entries {
			n += len(aws.ToString(e.MessageBody)) + attrBytes(e.MessageAttributes)
		}
		return float64(units(n, chunkBytes)), fifo(in.QueueUrl)
	case *sqs.ReceiveMessageInput:
		out, _ := result.(*sqs.ReceiveMessageOutput)
		if err != nil || out == nil || len(out.Messages) == 0 {
			return 0, false
		}
		n := 0
		for _, m := range out.Messages {
			n += len(aws.ToString(m.Body)) + attrBytes(m.MessageAttributes)
		}
		return float64(units(n, chunkBytes)), fifo(in.QueueUrl)
	case *sqs.DeleteMessageInput:
		return 1, fifo(in.QueueUrl)
	case *sqs.DeleteMessageBatchInput:
		return 1, fifo(in.QueueUrl)
	case *sqs.ChangeMessageVisibilityInput:
		return 1, fifo(in.QueueUrl)
	case *sqs.ChangeMessageVisibilityBatchInput:
		return 1, fifo(in.QueueUrl)
	}
	return 0, false
}

// attrBytes sizes SQS message attributes as SQS counts them towards a
// message's payload: name, type and value.
func attrBytes(attrs map[string]sqstypes.MessageAttributeValue) int {
	n := 0
	for name, v := range attrs {
		n += len(name) + len(aws.ToString(v.DataType)) + len(aws.ToString(v.StringValue)) + len(v.BinaryValue)
	}
	return n
}

// snsRequests is a publish's billed requests: a 64 KB chunk of its
// message, or of a batch's whole payload.
func snsRequests(params any) float64 {
	switch in := params.(type) {
	case *sns.PublishInput:
		return float64(units(len(aws.ToString(in.Message)), chunkBytes))
	case *sns.PublishBatchInput:
		n := 0
		for _, e := range in.PublishBatchRequestEntries {
			n += len(aws.ToString(e.Message))
		}
		return float64(units(n, chunkBytes))
	}
	return 0
}

// units is ceil(size / per), at least 1.
func units(size, per int) int64 {
	return max(1, int64((size+per-1)/per))
}
