package bench

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// reportedWriteUnits returns the write units a successful write's response
// reports, and whether it reported any. For a transaction DynamoDB Local
// reports the doubled sum AWS bills — but items of equal content only once
// (25 puts of the same 3 KB value: 6 units): est, the request's estimate
// (exact for puts, a lower bound for updates), is then the larger.
func reportedWriteUnits(result any, est float64) (float64, bool) {
	one := func(c *ddbtypes.ConsumedCapacity) (float64, bool) {
		if c == nil || c.CapacityUnits == nil {
			return 0, false
		}
		return aws.ToFloat64(c.CapacityUnits), true
	}
	all := func(cs []ddbtypes.ConsumedCapacity, scale float64) (float64, bool) {
		var n float64
		for i := range cs {
			u, ok := one(&cs[i])
			if !ok {
				return 0, false
			}
			n += u
		}
		return n * scale, len(cs) > 0
	}
	switch out := result.(type) {
	case *dynamodb.PutItemOutput:
		return one(out.ConsumedCapacity)
	case *dynamodb.UpdateItemOutput:
		return one(out.ConsumedCapacity)
	case *dynamodb.DeleteItemOutput:
		return one(out.ConsumedCapacity)
	case *dynamodb.BatchWriteItemOutput:
		return all(out.ConsumedCapacity, 1)
	case *dynamodb.TransactWriteItemsOutput:
		n, ok := all(out.ConsumedCapacity, 1)
		return max(n, est), ok
	}
	return 0, false
}
