package api

import (
	"context"
	"encoding/json"

	"github.com/maestro-serverless/maestro/orchestrator"
)

// The fake service's answers to the reads of reads.go. A paged list
// answers ids 2 and 1 of a list of 3 (ids 1..3), whatever was asked.

func (f *fakeService) ListVersions(_ context.Context, workflowID string, req orchestrator.PageRequest) (*orchestrator.Page[*orchestrator.DefinitionView], error) {
	page := &orchestrator.Page[*orchestrator.DefinitionView]{
		Elements: []*orchestrator.DefinitionView{cannedDefinition(), cannedDefinition()}, High: 2, Low: 1, Latest: 3, Earliest: 1,
	}
	return reply(f, page, "ListVersions", workflowID, req)
}

func (f *fakeService) GetWorkflowOverview(_ context.Context, workflowID string) (*orchestrator.WorkflowOverview, error) {
	return reply(f, &orchestrator.WorkflowOverview{WorkflowID: workflowID, LatestVersionID: 1, NonterminalInstances: map[string]int64{}}, "GetWorkflowOverview", workflowID)
}

func (f *fakeService) GetWorkflowTimeline(_ context.Context, workflowID string) (*orchestrator.WorkflowTimeline, error) {
	return reply(f, &orchestrator.WorkflowTimeline{WorkflowID: workflowID, TimelineEvents: []orchestrator.WorkflowTimelineEvent{}}, "GetWorkflowTimeline", workflowID)
}

func (f *fakeService) GetPropertiesSnapshot(_ context.Context, workflowID, snapshotID string) (orchestrator.PropertiesSnapshot, error) {
	return reply(f, orchestrator.PropertiesSnapshot(`{"workflow_id":"`+workflowID+`","create_time":1}`), "GetPropertiesSnapshot", workflowID, snapshotID)
}

func (f *fakeService) ListInstancePage(_ context.Context, workflowID string, req orchestrator.PageRequest) (*orchestrator.Page[*orchestrator.InstanceView], error) {
	page := &orchestrator.Page[*orchestrator.InstanceView]{
		Elements: []*orchestrator.InstanceView{cannedInstance(workflowID, 2, 1), cannedInstance(workflowID, 1, 1)}, High: 2, Low: 1, Latest: 3, Earliest: 1,
	}
	return reply(f, page, "ListInstancePage", workflowID, req)
}

func (f *fakeService) ListRuns(_ context.Context, workflowID string, instanceID int64, req orchestrator.PageRequest) (*orchestrator.Page[*orchestrator.InstanceView], error) {
	page := &orchestrator.Page[*orchestrator.InstanceView]{
		Elements: []*orchestrator.InstanceView{cannedInstance(workflowID, instanceID, 2), cannedInstance(workflowID, instanceID, 1)}, High: 2, Low: 1, Latest: 3, Earliest: 1,
	}
	return reply(f, page, "ListRuns", workflowID, instanceID, req)
}

func (f *fakeService) ListRunSteps(_ context.Context, workflowID string, instanceID, runID int64) ([]*orchestrator.StepView, error) {
	if nilResult, err := f.record("ListRunSteps", workflowID, instanceID, runID); err != nil || nilResult {
		return nil, err
	}
	return []*orchestrator.StepView{cannedStep(workflowID, instanceID, runID, "job1", 1)}, nil
}

func (f *fakeService) GetStepView(_ context.Context, workflowID string, instanceID int64, stepID string) (*orchestrator.StepView, error) {
	return reply(f, cannedStep(workflowID, instanceID, 1, stepID, 1), "GetStepView", workflowID, instanceID, stepID)
}

func (f *fakeService) GetInlinePath(_ context.Context, workflowID string, instanceID int64) ([]orchestrator.UpstreamInfo, error) {
	if nilResult, err := f.record("GetInlinePath", workflowID, instanceID); err != nil || nilResult {
		return nil, err
	}
	return []orchestrator.UpstreamInfo{{WorkflowID: "root", InstanceID: 1, RunID: 1, StepID: "loop", StepAttemptID: 1}, {WorkflowID: workflowID, InstanceID: instanceID}}, nil
}

func (f *fakeService) GetInlineWorkflowID(_ context.Context, nodes []orchestrator.UpstreamInfo) (string, error) {
	b, _ := json.Marshal(nodes)
	return reply(f, "maestro_foreach_0123abcd", "GetInlineWorkflowID", string(b))
}

func (f *fakeService) ListWorkflowPage(_ context.Context, req orchestrator.WorkflowPageRequest) (*orchestrator.WorkflowPage, error) {
	page := &orchestrator.WorkflowPage{Workflows: []orchestrator.WorkflowSummary{{WorkflowID: "a"}, {WorkflowID: "b"}}, HasNext: true}
	return reply(f, page, "ListWorkflowPage", req)
}
