package store

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/maestro-serverless/maestro/store/internal/layout"
)

// attrExtraInfo holds a tag permit's extra info: a JSON object, as a string.
const attrExtraInfo = "extra_info"

// PutTagPermitInfo is PutTagPermit that also replaces the permit's extra
// info (Maestro's extra_info: a JSON object the runtime keeps and returns
// but does not read); an empty extraInfo removes it.
func (s *Gates) PutTagPermitInfo(ctx context.Context, tag string, maxAllowed, now int64, extraInfo []byte) (*TagPermit, error) {
	expr := "SET #m = :m, #h = if_not_exists(#h, :empty), #w = if_not_exists(#w, :empty), " +
		"create_time = if_not_exists(create_time, :now), modify_time = :now"
	values := map[string]types.AttributeValue{
		":m": num(maxAllowed), ":empty": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{}},
		":now": num(now), ":one": num(1),
	}
	if len(extraInfo) > 0 {
		expr += ", #x = :x ADD #v :one"
		values[":x"] = &types.AttributeValueMemberS{Value: string(extraInfo)}
	} else {
		expr += " ADD #v :one REMOVE #x"
	}
	out, err := s.db.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:        aws.String(s.table),
		Key:              key(layout.PermitPK(tag), layout.PermitSK),
		UpdateExpression: aws.String(expr),
		ExpressionAttributeNames: map[string]string{"#m": attrMaxAllowed, "#h": attrHolders, "#w": attrWaiters,
			"#v": attrVersion, "#x": attrExtraInfo},
		ExpressionAttributeValues: values,
		ReturnValues:              types.ReturnValueAllNew,
	})
	if err != nil {
		return nil, fmt.Errorf("store: put tag permit %q: %w", tag, err)
	}
	return permitFromItem(tag, out.Attributes), nil
}
