package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/maestro-serverless/maestro/caller"
	"github.com/maestro-serverless/maestro/events"
	"github.com/maestro-serverless/maestro/store/internal/layout"
)

// WorkflowHead is the per-workflow summary item.
type WorkflowHead struct {
	WorkflowID string
	// Latest is the newest version number; Active the active one (0 = none).
	Latest, Active int64
	// NextInstance is the id the next started instance gets.
	NextInstance int64
	// Properties is the current properties snapshot (JSON), kept across versions.
	Properties []byte
	CreateTime int64
	ModifyTime int64
	// Access is the workflow's grant as JSON (an access.Grant); nil for a
	// head written before grants existed.
	Access []byte
	v      int64
}

// VersionRecord is one stored definition version.
type VersionRecord struct {
	WorkflowID string
	Version    int64
	// Definition is the whole definition document as JSON.
	Definition []byte
	CreateTime int64
	// Principal is who pushed the version (caller.From of the push).
	Principal string
}

// attrPrincipal holds the caller who wrote an item (see package caller).
const attrPrincipal = "principal"

// GetHead returns a workflow's head item, ErrNotFound when the workflow does not exist.
func (s *Definitions) GetHead(ctx context.Context, workflowID string) (*WorkflowHead, error) {
	head, _, err := s.readHead(ctx, workflowID)
	return head, err
}

// readHead reads a workflow's head and the item it was read from,
// ErrNotFound when the workflow does not exist.
func (s *Definitions) readHead(ctx context.Context, workflowID string) (*WorkflowHead, map[string]types.AttributeValue, error) {
	item, err := s.getItem(ctx, key(layout.WorkflowPK(workflowID), layout.HeadSK), "get workflow %s", workflowID)
	if err != nil {
		return nil, nil, err
	}
	head, err := headFromItem(workflowID, item)
	if err != nil {
		return nil, nil, err
	}
	return head, item, nil
}

// headFromItem decodes a head item.
func headFromItem(workflowID string, item map[string]types.AttributeValue) (*WorkflowHead, error) {
	props, err := decodeBody(item)
	if err != nil {
		return nil, err
	}
	h := &WorkflowHead{
		WorkflowID:   workflowID,
		Latest:       getN(item, "latest"),
		Active:       getN(item, "active"),
		NextInstance: getN(item, "next_instance"),
		Properties:   props,
		CreateTime:   getN(item, "create_time"),
		ModifyTime:   getN(item, "modify_time"),
		v:            getN(item, attrVersion),
	}
	if acl, ok := item[attrACL].(*types.AttributeValueMemberS); ok {
		h.Access = []byte(acl.Value)
	}
	return h, nil
}

// The workflow directory. Every head item carries gsi1pk "WORKFLOWS" and
// gsi1sk its workflow id, which lists it in the table's keys-only index
// GSI1 (beside the sweep index's "SWEEP#<shard>" partitions) in id order:
// ListWorkflows reads it, so listing never scans the table. The attributes
// are set by every version's head update, so a head costs the index one
// write when it is created and none after; a deleted head leaves it
// (layout.DirectoryPK).

// ListWorkflows returns up to limit workflow heads in id order, starting
// after the workflow id cursor, and the cursor of the next page ("" when
// this one is the last). The index is eventually consistent: a workflow
// pushed a moment ago may be missing from the list.
func (s *Definitions) ListWorkflows(ctx context.Context, cursor string, limit int) ([]*WorkflowHead, string, error) {
	return s.listDirectory(ctx, cursor, limit, false)
}

// listDirectory is ListWorkflows, in descending id order (before cursor)
// when backward is set.
func (s *Definitions) listDirectory(ctx context.Context, cursor string, limit int, backward bool) ([]*WorkflowHead, string, error) {
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		IndexName:                 aws.String(sweepIndex),
		ScanIndexForward:          aws.Bool(!backward),
		KeyConditionExpression:    aws.String("#p = :p"),
		ExpressionAttributeNames:  map[string]string{"#p": attrSweepPK},
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": str(layout.DirectoryPK)},
		Limit:                     aws.Int32(int32(limit)),
	}
	if cursor != "" {
		in.ExclusiveStartKey = map[string]types.AttributeValue{
			attrSweepPK: str(layout.DirectoryPK), attrSweepSK: str(cursor),
			attrPK: str(layout.WorkflowPK(cursor)), attrSK: str(layout.HeadSK),
		}
	}
	out, err := s.db.Query(ctx, in)
	if err != nil {
		return nil, "", fmt.Errorf("store: list workflows: %w", err)
	}
	keys := make([]map[string]types.AttributeValue, 0, len(out.Items))
	ids := make([]string, 0, len(out.Items))
	for _, it := range out.Items {
		ids = append(ids, getS(it, attrSweepSK))
		keys = append(keys, key(getS(it, attrPK), layout.HeadSK))
	}
	got, err := s.batchGet(ctx, keys)
	if err != nil {
		return nil, "", fmt.Errorf("store: list workflows: %w", err)
	}
	items := make(map[string]map[string]types.AttributeValue, len(got))
	for _, it := range got {
		items[getS(it, attrPK)] = it
	}
	heads := make([]*WorkflowHead, 0, len(ids))
	for _, id := range ids {
		item, ok := items[layout.WorkflowPK(id)]
		if !ok {
			continue // deleted since the index listed it
		}
		h, err := headFromItem(id, item)
		if err != nil {
			return nil, "", err
		}
		heads = append(heads, h)
	}
	next := ""
	if out.LastEvaluatedKey != nil && len(ids) > 0 {
		next = ids[len(ids)-1]
	}
	return heads, next, nil
}

// NewVersion is a definition version to store.
type NewVersion struct {
	// Outbox holds extra messages the change sends (besides its events).
	Outbox     []Message
	WorkflowID string
	Definition []byte // JSON
	// Properties, when non-nil, replaces the properties snapshot (JSON).
	Properties []byte
	Activate   bool
	Now        time.Time
	// Subscriptions, when set, says which signal names the workflow's
	// triggers use once the version is stored; the change writes them.
	Subscriptions SubscriptionsFunc
	// Access is the grant (JSON, an access.Grant) of a new workflow: the
	// head gets it when this version creates it (no head existed). A push
	// over an existing head never changes its grant; PutAccess does.
	Access []byte
	// Check, when set, is asked before each write attempt — the first and
	// every retry after losing a race — whether the version may be written
	// over head, the head as read (exists true) or the head it would
	// create (exists false, its Access the one above). Its error is
	// returned as it is, and nothing is written.
	Check func(head *WorkflowHead, exists bool) error
}

// CreateVersion stores the next version of a workflow and, if asked, makes it
// active, in one transaction conditioned on the head it read. It retries on
// conflict with concurrent pushes and returns the new version number. A
// head past MaxItemBytes is refused (*ItemTooLargeError) before any write.
func (s *Definitions) CreateVersion(ctx context.Context, nv NewVersion) (int64, error) {
	var created int64
	err := retryConditional(ctx, "create version of "+nv.WorkflowID, func() (write, err error) {
		head, item, exists, err := s.headForVersion(ctx, nv)
		if err != nil {
			return nil, err
		}
		if nv.Check != nil {
			read := *head
			if err := nv.Check(&read, exists); err != nil {
				return nil, err
			}
		}
		version, txn, err := s.versionWrites(ctx, nv, head, item, exists)
		if err != nil {
			return nil, err
		}
		if len(txn) > MaxTransactItems {
			return nil, fmt.Errorf("store: create version of %s needs %d writes, more than DynamoDB's %d per transaction", nv.WorkflowID, len(txn), MaxTransactItems)
		}
		_, write = s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: txn})
		reasons := cancelReasons(write)
		failed := func(i int) bool { return i < len(reasons) && reasons[i] == "ConditionalCheckFailed" }
		switch {
		case failed(2):
			return nil, fmt.Errorf("store: create version of %s: %w", nv.WorkflowID, ErrDeleting)
		case failed(1) && !failed(0):
			// The version exists under a head that did not move: no retry
			// can succeed (an inline workflow's id has versions, no head).
			return nil, fmt.Errorf("store: create version of %s: version %d exists without a head to match: %w", nv.WorkflowID, head.Latest+1, ErrConflict)
		}
		created = version
		return write, nil
	})
	if err != nil {
		return 0, err
	}
	return created, nil
}

// headForVersion reads the head a new version is written over: the stored
// one and its item, or a new one (exists false, item nil) that continues a
// deleted workflow's version and instance sequences, with nv's grant.
func (s *Definitions) headForVersion(ctx context.Context, nv NewVersion) (head *WorkflowHead, item map[string]types.AttributeValue, exists bool, err error) {
	head, item, err = s.readHead(ctx, nv.WorkflowID)
	if err == nil {
		return head, item, true, nil
	}
	if err != ErrNotFound {
		return nil, nil, false, err
	}
	head = &WorkflowHead{WorkflowID: nv.WorkflowID, NextInstance: 1, CreateTime: millis(nv.Now), Access: nv.Access}
	latest, next, ok, err := s.tombstone(ctx, nv.WorkflowID)
	if err != nil {
		return nil, nil, false, err
	}
	if ok {
		head.Latest, head.NextInstance = latest, max(next, 1)
	}
	return head, nil, false, nil
}

// versionWrites are the writes of version nv over head: the head's update,
// the version item, for a new workflow the check that its id is not being
// deleted (third, so its cancellation reason says ErrDeleting), and the
// signal subscriptions the new head has.
func (s *Definitions) versionWrites(ctx context.Context, nv NewVersion, head *WorkflowHead, item map[string]types.AttributeValue, exists bool) (int64, []types.TransactWriteItem, error) {
	version := head.Latest + 1
	active := head.Active
	if nv.Activate {
		active = version
	}
	props := head.Properties
	if nv.Properties != nil {
		props = nv.Properties
	}
	headUpdate, err := s.versionHeadUpdate(ctx, nv, head, item, version, active, props)
	if err != nil {
		return 0, nil, err
	}
	defBody, err := s.encodeBody(nv.Definition)
	if err != nil {
		return 0, nil, err
	}
	verItem := merge(key(layout.WorkflowPK(nv.WorkflowID), layout.VersionSK(version)), map[string]types.AttributeValue{
		"create_time": num(millis(nv.Now)),
	})
	if p := caller.From(ctx); p != "" {
		verItem[attrPrincipal] = str(p)
	}
	merge(verItem, defBody)
	txn := []types.TransactWriteItem{
		{Update: headUpdate},
		{Put: &types.Put{TableName: aws.String(s.table), Item: verItem, ConditionExpression: aws.String("attribute_not_exists(pk)")}},
	}
	if !exists {
		// A workflow id being deleted cannot be reused until its purge is
		// done.
		txn = append(txn, types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
			TableName: aws.String(s.table), Key: key(layout.WorkflowPK(nv.WorkflowID), layout.PurgeSK),
			ConditionExpression: aws.String("attribute_not_exists(pk)"),
		}})
	}
	after := *head
	after.Latest, after.Active, after.Properties = version, active, props
	subs, err := s.headSubscriptions(ctx, nv.WorkflowID, &after, nv.Subscriptions)
	if err != nil {
		return 0, nil, err
	}
	return version, append(txn, subs...), nil
}

// versionHeadUpdate is the head's update for a new version: field-wise,
// since next_instance is owned by the atomic counter of CreateInstance and
// must never be overwritten here, conditioned on the head read (item; nil
// when it is to be created), with the change events in its outbox. A new
// head gets nv's grant; an existing one keeps its own.
func (s *Definitions) versionHeadUpdate(ctx context.Context, nv NewVersion, head *WorkflowHead, item map[string]types.AttributeValue, version, active int64, props []byte) (*types.Update, error) {
	u := newItemUpdate(key(layout.WorkflowPK(nv.WorkflowID), layout.HeadSK), item)
	now := num(millis(nv.Now))
	u.set("latest", num(version))
	u.set("active", num(active))
	u.set("modify_time", now)
	u.setIfAbsent("create_time", now)
	u.setIfAbsent("next_instance", num(head.NextInstance))
	u.set(attrVersion, num(head.v+1))
	u.set(attrSweepPK, str(layout.DirectoryPK))
	u.set(attrSweepSK, str(nv.WorkflowID))
	evs := []events.Event{events.Definition(events.DefinitionCreated, nv.WorkflowID, version, head.v+1, millis(nv.Now))}
	if nv.Activate {
		evs = append(evs, events.Definition(events.VersionActivated, nv.WorkflowID, version, head.v+1, millis(nv.Now)))
		evs[1].ID += "/activated"
	}
	ob, err := headOutbox(ctx, nv.Outbox, evs...)
	if err != nil {
		return nil, err
	}
	u.set(attrOutbox, ob)
	if len(props) > 0 {
		body, err := s.encodeBody(props)
		if err != nil {
			return nil, err
		}
		u.set(attrBody, body[attrBody])
		u.set(attrEnc, body[attrEnc])
	}
	if item == nil && len(nv.Access) > 0 {
		u.set(attrACL, str(string(nv.Access)))
	}
	if err := u.checkSize(); err != nil {
		return nil, fmt.Errorf("store: create version of %s: %w", nv.WorkflowID, err)
	}
	if item != nil {
		return u.update(s.table, "#v = :v", map[string]types.AttributeValue{":v": num(head.v)}), nil
	}
	return u.update(s.table, "attribute_not_exists(pk)", nil), nil
}

// GetVersion returns one stored version, ErrNotFound if it does not exist.
func (s *Definitions) GetVersion(ctx context.Context, workflowID string, version int64) (*VersionRecord, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table),
		Key:       key(layout.WorkflowPK(workflowID), layout.VersionSK(version)),
	})
	if err != nil {
		return nil, fmt.Errorf("store: get %s version %d: %w", workflowID, version, err)
	}
	if out.Item == nil {
		return nil, ErrNotFound
	}
	def, err := decodeBody(out.Item)
	if err != nil {
		return nil, err
	}
	return &VersionRecord{
		WorkflowID: workflowID,
		Version:    version,
		Definition: def,
		CreateTime: getN(out.Item, "create_time"),
		Principal:  getS(out.Item, attrPrincipal),
	}, nil
}

// SetActive makes version the active one (0: none active). It fails with
// ErrNotFound when the workflow or the version does not exist. The change's
// event rides in the head's outbox.
func (s *Definitions) SetActive(ctx context.Context, workflowID string, version int64, now time.Time, subs SubscriptionsFunc, extra ...Message) error {
	return retryConditional(ctx, "set active version of "+workflowID, func() (write, err error) {
		head, err := s.GetHead(ctx, workflowID)
		if err != nil {
			return nil, err
		}
		if version > head.Latest {
			return nil, ErrNotFound
		}
		ev := events.Definition(events.VersionActivated, workflowID, version, head.v+1, millis(now))
		if version == 0 {
			ev = events.Definition(events.WorkflowDeactivated, workflowID, 0, head.v+1, millis(now))
		}
		ob, err := headOutbox(ctx, extra, ev)
		if err != nil {
			return nil, err
		}
		after := *head
		after.Active = version
		items, err := s.headSubscriptions(ctx, workflowID, &after, subs)
		if err != nil {
			return nil, err
		}
		return s.updateHead(ctx, &types.Update{
			TableName:                aws.String(s.table),
			Key:                      key(layout.WorkflowPK(workflowID), layout.HeadSK),
			UpdateExpression:         aws.String("SET active = :a, modify_time = :now, #v = :nv, #ob = :ob"),
			ConditionExpression:      aws.String("#v = :v"),
			ExpressionAttributeNames: map[string]string{"#v": attrVersion, "#ob": attrOutbox},
			ExpressionAttributeValues: map[string]types.AttributeValue{
				":a": num(version), ":now": num(millis(now)), ":v": num(head.v), ":nv": num(head.v + 1), ":ob": ob,
			},
		}, items), nil
	})
}

// headOutbox is the outbox attribute of a head change: its definition
// events and the caller's extra messages.
func headOutbox(ctx context.Context, extra []Message, evs ...events.Event) (types.AttributeValue, error) {
	for i := range evs {
		evs[i].Principal = caller.From(ctx)
	}
	body, err := events.EncodeBatch(evs)
	if err != nil {
		return nil, err
	}
	ob, err := json.Marshal(append([]Message{{Queue: QueueEvents, Body: body}}, extra...))
	if err != nil {
		return nil, fmt.Errorf("store: outbox: %w", err)
	}
	return str(string(ob)), nil
}

// UpdateProperties replaces a workflow's properties snapshot, conditioned on
// the head version the caller read (ErrConflict when it moved on).
func (s *Definitions) UpdateProperties(ctx context.Context, head *WorkflowHead, props []byte, now time.Time, subs SubscriptionsFunc, extra ...Message) error {
	body, err := s.encodeBody(props)
	if err != nil {
		return err
	}
	ob, err := headOutbox(ctx, extra, events.Definition(events.PropertiesChanged, head.WorkflowID, 0, head.v+1, millis(now)))
	if err != nil {
		return err
	}
	after := *head
	after.Properties = props
	items, err := s.headSubscriptions(ctx, head.WorkflowID, &after, subs)
	if err != nil {
		return err
	}
	err = s.updateHead(ctx, &types.Update{
		TableName:                aws.String(s.table),
		Key:                      key(layout.WorkflowPK(head.WorkflowID), layout.HeadSK),
		UpdateExpression:         aws.String("SET #b = :b, #e = :e, modify_time = :now, #v = :nv, #ob = :ob"),
		ConditionExpression:      aws.String("#v = :v"),
		ExpressionAttributeNames: map[string]string{"#b": attrBody, "#e": attrEnc, "#v": attrVersion, "#ob": attrOutbox},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":b": body[attrBody], ":e": body[attrEnc], ":now": num(millis(now)), ":v": num(head.v), ":nv": num(head.v + 1), ":ob": ob,
		},
	}, items)
	if isConflict(err) {
		return fmt.Errorf("store: properties of %s: %w", head.WorkflowID, ErrConflict)
	}
	if err != nil {
		return fmt.Errorf("store: properties of %s: %w", head.WorkflowID, err)
	}
	return nil
}

// updateHead applies a conditional update of a head item together with
// other writes of the same change: one UpdateItem when there are none, else
// one transaction.
func (s *Definitions) updateHead(ctx context.Context, upd *types.Update, with []types.TransactWriteItem) error {
	if len(with) == 0 {
		return s.updateItem(ctx, upd)
	}
	items := append([]types.TransactWriteItem{{Update: upd}}, with...)
	if len(items) > MaxTransactItems {
		return fmt.Errorf("store: a change of %s needs %d writes, more than DynamoDB's %d per transaction", getS(upd.Key, attrPK), len(items), MaxTransactItems)
	}
	_, err := s.db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
	return err
}
