package store

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// sizedDB is the one place every put the store sends is held to DynamoDB's
// item size limit: a PutItem, or a Put in a TransactWriteItems, whose item
// is past MaxItemBytes fails with an *ItemTooLargeError naming the item's
// key, and nothing is sent. DynamoDB would refuse it as a ValidationException
// that names no item; this error lets callers tell the caller's input from
// a fault (a start whose run params make its start event too large is a
// 400, not a 500). Writes whose size the store checks itself first (a
// commit's run state and step attempts) fail there, under their own names.
// UpdateItem is not checked: its result's size is only known to DynamoDB.
type sizedDB struct{ DynamoDB }

// PutItem refuses an item past MaxItemBytes.
func (d sizedDB) PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	if err := checkItemSize(in.Item); err != nil {
		return nil, err
	}
	return d.DynamoDB.PutItem(ctx, in, opts...)
}

// TransactWriteItems refuses a transaction with a Put past MaxItemBytes.
func (d sizedDB) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	for _, it := range in.TransactItems {
		if it.Put != nil {
			if err := checkItemSize(it.Put.Item); err != nil {
				return nil, err
			}
		}
	}
	return d.DynamoDB.TransactWriteItems(ctx, in, opts...)
}

// checkItemSize returns an *ItemTooLargeError naming item by its key when
// it is past MaxItemBytes.
func checkItemSize(item map[string]types.AttributeValue) error {
	n := ItemSize(item)
	if n <= MaxItemBytes {
		return nil
	}
	return &ItemTooLargeError{Item: fmt.Sprintf("%s %s", getS(item, attrPK), getS(item, attrSK)), Bytes: n}
}
