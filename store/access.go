package store

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/maestro-serverless/maestro/events"
	"github.com/maestro-serverless/maestro/store/internal/layout"
)

// attrACL holds a workflow head's grant (JSON, an access.Grant).
const attrACL = "acl"

// PutAccess replaces a workflow's grant (JSON, an access.Grant), conditioned
// on the head as read and retried on a lost race, with an access_changed
// event (and the caller's extra messages) in the head's outbox. It fails
// with ErrNotFound when the workflow does not exist, and with an
// *ItemTooLargeError, writing nothing, when the head would pass
// MaxItemBytes. An empty grant is refused: a grant is replaced, never
// removed.
func (s *Definitions) PutAccess(ctx context.Context, workflowID string, grant []byte, now time.Time, extra ...Message) error {
	if len(grant) == 0 {
		return fmt.Errorf("store: access of %s: an empty grant", workflowID)
	}
	return retryConditional(ctx, "access of "+workflowID, func() (write, err error) {
		head, item, err := s.readHead(ctx, workflowID)
		if err != nil {
			return nil, err
		}
		ob, err := headOutbox(ctx, extra, events.Definition(events.AccessChanged, workflowID, 0, head.v+1, millis(now)))
		if err != nil {
			return nil, err
		}
		u := newItemUpdate(key(layout.WorkflowPK(workflowID), layout.HeadSK), item)
		u.set(attrACL, str(string(grant)))
		u.set("modify_time", num(millis(now)))
		u.set(attrVersion, num(head.v+1))
		u.set(attrOutbox, ob)
		if err := u.checkSize(); err != nil {
			return nil, fmt.Errorf("store: access of %s: %w", workflowID, err)
		}
		return s.updateItem(ctx, u.update(s.table, "#v = :v", map[string]types.AttributeValue{":v": num(head.v)})), nil
	})
}

// itemUpdate builds an UpdateItem's SET clause together with the item it
// leaves, so that the item's size is known before it is sent: sizedDB
// cannot size an update, DynamoDB alone knows what it is applied to.
type itemUpdate struct {
	key    map[string]types.AttributeValue
	sets   []string
	names  map[string]string
	values map[string]types.AttributeValue
	// image is the item as the update leaves it.
	image map[string]types.AttributeValue
}

// newItemUpdate starts an update of the item at k, read as item (nil: the
// update creates it).
func newItemUpdate(k, item map[string]types.AttributeValue) *itemUpdate {
	image := maps.Clone(item)
	if image == nil {
		image = maps.Clone(k)
	}
	return &itemUpdate{key: k, names: map[string]string{"#v": attrVersion}, values: map[string]types.AttributeValue{}, image: image}
}

// placeholders returns the name and value placeholders of the update's
// next attribute.
func (u *itemUpdate) placeholders(attr string) (name, value string) {
	n := strconv.Itoa(len(u.sets))
	name, value = "#a"+n, ":a"+n
	u.names[name] = attr
	return name, value
}

// set sets attr to v.
func (u *itemUpdate) set(attr string, v types.AttributeValue) {
	n, val := u.placeholders(attr)
	u.sets = append(u.sets, n+" = "+val)
	u.values[val] = v
	u.image[attr] = v
}

// setIfAbsent sets attr to v unless the item has it.
func (u *itemUpdate) setIfAbsent(attr string, v types.AttributeValue) {
	n, val := u.placeholders(attr)
	u.sets = append(u.sets, n+" = if_not_exists("+n+", "+val+")")
	u.values[val] = v
	if _, ok := u.image[attr]; !ok {
		u.image[attr] = v
	}
}

// checkSize returns an *ItemTooLargeError naming the item by its key when
// the item the update leaves is past MaxItemBytes.
func (u *itemUpdate) checkSize() error {
	return checkItemSize(u.image)
}

// update returns the update of table, conditioned on cond, whose values
// (besides the SET clause's) are condValues; "#v" in cond names the item's
// version attribute.
func (u *itemUpdate) update(table, cond string, condValues map[string]types.AttributeValue) *types.Update {
	names := maps.Clone(u.names)
	if !strings.Contains(cond, "#v") {
		delete(names, "#v")
	}
	values := maps.Clone(u.values)
	maps.Copy(values, condValues)
	return &types.Update{
		TableName:                 aws.String(table),
		Key:                       u.key,
		UpdateExpression:          aws.String("SET " + strings.Join(u.sets, ", ")),
		ConditionExpression:       aws.String(cond),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
	}
}
