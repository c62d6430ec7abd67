package localstack

import (
	"fmt"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// Values Lambda puts in every DynamoDB stream event record.
const (
	dynamoDBEventSource  = "aws:dynamodb"
	dynamoDBEventVersion = "1.1"
)

// lambdaStreamRecord converts a stream record as GetRecords returns it into
// the record Lambda hands a function.
func lambdaStreamRecord(r types.Record, streamARN, region string) (events.DynamoDBEventRecord, error) {
	out := events.DynamoDBEventRecord{
		AWSRegion:      aws.ToString(r.AwsRegion),
		EventID:        aws.ToString(r.EventID),
		EventName:      string(r.EventName),
		EventSource:    aws.ToString(r.EventSource),
		EventVersion:   aws.ToString(r.EventVersion),
		EventSourceArn: streamARN,
	}
	if out.AWSRegion == "" {
		out.AWSRegion = region
	}
	if out.EventSource == "" {
		out.EventSource = dynamoDBEventSource
	}
	if out.EventVersion == "" {
		out.EventVersion = dynamoDBEventVersion
	}
	if id := r.UserIdentity; id != nil {
		out.UserIdentity = &events.DynamoDBUserIdentity{Type: aws.ToString(id.Type), PrincipalID: aws.ToString(id.PrincipalId)}
	}
	if c := r.Dynamodb; c != nil {
		var err error
		if c.ApproximateCreationDateTime != nil {
			out.Change.ApproximateCreationDateTime = events.SecondsEpochTime{Time: *c.ApproximateCreationDateTime}
		}
		out.Change.SequenceNumber = aws.ToString(c.SequenceNumber)
		out.Change.SizeBytes = aws.ToInt64(c.SizeBytes)
		out.Change.StreamViewType = string(c.StreamViewType)
		if out.Change.Keys, err = lambdaImage(c.Keys); err != nil {
			return out, fmt.Errorf("record %s keys: %w", out.EventID, err)
		}
		if out.Change.NewImage, err = lambdaImage(c.NewImage); err != nil {
			return out, fmt.Errorf("record %s new image: %w", out.EventID, err)
		}
		if out.Change.OldImage, err = lambdaImage(c.OldImage); err != nil {
			return out, fmt.Errorf("record %s old image: %w", out.EventID, err)
		}
	}
	return out, nil
}

// lambdaImage converts an item image; nil stays nil.
func lambdaImage(m map[string]types.AttributeValue) (map[string]events.DynamoDBAttributeValue, error) {
	if m == nil {
		return nil, nil
	}
	out := make(map[string]events.DynamoDBAttributeValue, len(m))
	for k, v := range m {
		cv, err := lambdaAttributeValue(v)
		if err != nil {
			return nil, fmt.Errorf("attribute %q: %w", k, err)
		}
		out[k] = cv
	}
	return out, nil
}

// lambdaAttributeValue converts one attribute value, recursing into maps
// and lists.
func lambdaAttributeValue(v types.AttributeValue) (events.DynamoDBAttributeValue, error) {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return events.NewStringAttribute(v.Value), nil
	case *types.AttributeValueMemberN:
		return events.NewNumberAttribute(v.Value), nil
	case *types.AttributeValueMemberB:
		return events.NewBinaryAttribute(v.Value), nil
	case *types.AttributeValueMemberBOOL:
		return events.NewBooleanAttribute(v.Value), nil
	case *types.AttributeValueMemberNULL:
		return events.NewNullAttribute(), nil
	case *types.AttributeValueMemberSS:
		return events.NewStringSetAttribute(v.Value), nil
	case *types.AttributeValueMemberNS:
		return events.NewNumberSetAttribute(v.Value), nil
	case *types.AttributeValueMemberBS:
		return events.NewBinarySetAttribute(v.Value), nil
	case *types.AttributeValueMemberL:
		list := make([]events.DynamoDBAttributeValue, len(v.Value))
		for i, e := range v.Value {
			cv, err := lambdaAttributeValue(e)
			if err != nil {
				return events.DynamoDBAttributeValue{}, fmt.Errorf("[%d]: %w", i, err)
			}
			list[i] = cv
		}
		return events.NewListAttribute(list), nil
	case *types.AttributeValueMemberM:
		m, err := lambdaImage(v.Value)
		if err != nil {
			return events.DynamoDBAttributeValue{}, err
		}
		if m == nil {
			m = map[string]events.DynamoDBAttributeValue{}
		}
		return events.NewMapAttribute(m), nil
	default:
		return events.DynamoDBAttributeValue{}, fmt.Errorf("unsupported attribute value type %T", v)
	}
}
