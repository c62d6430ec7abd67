package store

import (
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// InlineDefinition is the definition of an inline workflow (a foreach step
// attempt's body), written as version 1 of that workflow so that its
// iterations load it as any run loads its definition.
type InlineDefinition struct {
	WorkflowID string
	// Definition is the definition's JSON.
	Definition []byte
	Now        time.Time
}

// ChildRun is a child run (a foreach iteration) created in its parent's
// commit: its instance summary, its run item and its first event.
type ChildRun struct {
	WorkflowID string
	InstanceID int64
	Version    int64
	UUID       string
	// Initiator is JSON.
	Initiator []byte
	Status    string
	// State is the initial run state (JSON), written with version 1.
	State []byte
	// FirstEvent is put into the child's inbox and wakes its decider.
	FirstEvent Event
	// Outbox is forwarded by the router from the new run item.
	Outbox []Message
	Now    time.Time
}

// inlineDefinitionItem is the version item of an inline workflow. Written
// unconditionally: a step attempt's inline definition never changes.
func (s *Store) inlineDefinitionItem(d InlineDefinition) (types.TransactWriteItem, error) {
	body, err := s.encodeBody(d.Definition)
	if err != nil {
		return types.TransactWriteItem{}, err
	}
	item := merge(key(wfPK(d.WorkflowID), versionSK(1)), map[string]types.AttributeValue{
		"create_time": num(millis(d.Now)),
	})
	merge(item, body)
	return types.TransactWriteItem{Put: &types.Put{TableName: aws.String(s.table), Item: item}}, nil
}

// childItems are the three writes that create a child run; each is
// conditioned on not existing, so a child is created once.
func (s *Store) childItems(c ChildRun) ([]types.TransactWriteItem, error) {
	rec := &InstanceRecord{
		WorkflowID: c.WorkflowID, InstanceID: c.InstanceID, Version: c.Version, RunID: 1, UUID: c.UUID,
		Status: c.Status, Initiator: c.Initiator, CreateTime: millis(c.Now), ModifyTime: millis(c.Now),
	}
	runItem, err := s.runItem(c.WorkflowID, c.InstanceID, 1, 1, c.Status, c.State, c.Outbox, 0)
	if err != nil {
		return nil, err
	}
	evItem, err := s.eventItem(c.WorkflowID, c.InstanceID, 1, c.FirstEvent)
	if err != nil {
		return nil, err
	}
	notExists := aws.String("attribute_not_exists(pk)")
	return []types.TransactWriteItem{
		{Put: &types.Put{TableName: aws.String(s.table), Item: instanceItem(rec), ConditionExpression: notExists}},
		{Put: &types.Put{TableName: aws.String(s.table), Item: runItem, ConditionExpression: notExists}},
		{Put: &types.Put{TableName: aws.String(s.table), Item: evItem}},
	}, nil
}
