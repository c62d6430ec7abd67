package store

import (
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/maestro-serverless/maestro/store/internal/layout"
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

// ChildRun is a child run (a foreach or while iteration) created in its
// parent's commit: its instance summary, its run item and its first event —
// or, born, its first decision's writes (see Born).
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
	// Born is set for a child whose first decision its parent made in the
	// commit that creates it (an iteration): State is its state after that
	// decision, Attempts and Timeline the step attempts and instance
	// timeline entries it wrote (the first entries held in the run item, as
	// a commit holds them), StartTime and EndTime its times, and no
	// FirstEvent is written. A child born with a terminal Status ran to its
	// end (its parent applies its end in the same commit); one born
	// IN_PROGRESS awaits the work its Outbox sends, in the sweep index from
	// SweepAt (unix ms, 0: not), as any run after a decision.
	Born               bool
	Attempts           []Attempt
	Timeline           []TimelineItem
	StartTime, EndTime int64
	SweepAt            int64
}

// Items is how many transaction items the child's creation writes.
func (c ChildRun) Items() int {
	if c.Born {
		_, spilled := SplitTimeline(nil, c.Timeline)
		return 2 + len(c.Attempts) + len(spilled)
	}
	return 3
}

// inlineDefinitionItem is the version item of an inline workflow. Written
// unconditionally: a step attempt's inline definition never changes.
func (s *base) inlineDefinitionItem(d InlineDefinition) (types.TransactWriteItem, error) {
	body, err := s.encodeBody(d.Definition)
	if err != nil {
		return types.TransactWriteItem{}, err
	}
	item := merge(key(layout.WorkflowPK(d.WorkflowID), layout.VersionSK(1)), map[string]types.AttributeValue{
		"create_time": num(millis(d.Now)),
	})
	merge(item, body)
	return types.TransactWriteItem{Put: &types.Put{TableName: aws.String(s.table), Item: item}}, nil
}

// childItems are the writes that create a child run: its instance summary
// and run item, each conditioned on not existing so that a child is created
// once, and its first event — or, born, its step attempts and the timeline
// entries its run item does not hold.
func (s *base) childItems(c ChildRun) ([]types.TransactWriteItem, error) {
	rec := &InstanceRecord{
		WorkflowID: c.WorkflowID, InstanceID: c.InstanceID, Version: c.Version, RunID: 1, UUID: c.UUID,
		Status: c.Status, Initiator: c.Initiator, CreateTime: millis(c.Now), ModifyTime: millis(c.Now),
		StartTime: c.StartTime, EndTime: c.EndTime,
	}
	runItem, err := s.runItem(c.WorkflowID, c.InstanceID, 1, 1, c.Status, c.State, c.Outbox, c.SweepAt)
	if err != nil {
		return nil, err
	}
	var spilled []TimelineItem
	if c.Born {
		var held []TimelineItem
		if held, spilled = SplitTimeline(nil, c.Timeline); len(held) > 0 {
			if runItem[attrInlineTimeline], err = s.encodeInlineTimeline(held); err != nil {
				return nil, err
			}
		}
	}
	if n := ItemSize(runItem); n > MaxItemBytes {
		return nil, fmt.Errorf("store: create %s/%d: %w", c.WorkflowID, c.InstanceID, &ItemTooLargeError{Item: "run state", Bytes: n})
	}
	notExists := aws.String("attribute_not_exists(pk)")
	items := []types.TransactWriteItem{
		{Put: &types.Put{TableName: aws.String(s.table), Item: instanceItem(rec), ConditionExpression: notExists}},
		{Put: &types.Put{TableName: aws.String(s.table), Item: runItem, ConditionExpression: notExists}},
	}
	if !c.Born {
		evItem, err := s.eventItem(c.WorkflowID, c.InstanceID, 1, c.FirstEvent)
		if err != nil {
			return nil, err
		}
		return append(items, types.TransactWriteItem{Put: &types.Put{TableName: aws.String(s.table), Item: evItem}}), nil
	}
	for _, a := range c.Attempts {
		item, err := s.attemptWrite(c.WorkflowID, c.InstanceID, 1, a)
		if err != nil {
			return nil, err
		}
		items = append(items, item)
	}
	pk := layout.RunPK(c.WorkflowID, c.InstanceID)
	for _, t := range spilled {
		items = append(items, s.timelineWrite(pk, 1, t))
	}
	return items, nil
}
