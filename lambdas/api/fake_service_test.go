package api

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/maestro-serverless/maestro/access"
	"github.com/maestro-serverless/maestro/orchestrator"
	"github.com/maestro-serverless/maestro/signals"
)

// call is one recorded call of the fake service: the method name and its
// arguments after the context (bodies as strings).
type call struct {
	Method string
	Args   []any
}

// fakeService is every service of Services: it records its calls and
// answers with canned views, or with err, a panic, or nil results when
// set.
type fakeService struct {
	mu    sync.Mutex
	calls []call

	err       error // returned by every method when non-nil
	panicWith any   // every method panics with it when non-nil
	nilResult bool  // every method returns a nil result and a nil error
}

var (
	_ DefinitionService = (*fakeService)(nil)
	_ RunService        = (*fakeService)(nil)
	_ ActionService     = (*fakeService)(nil)
	_ GateService       = (*fakeService)(nil)
	_ SignalService     = (*fakeService)(nil)
	_ HealthService     = (*fakeService)(nil)
)

// services serves every role from f.
func (f *fakeService) services() Services {
	return Services{Definitions: f, Runs: f, Actions: f, Gates: f, Signals: f, Health: f, Diffs: f, Access: &roleAccess{role: access.Owner, admin: true}, Backfills: f}
}

// record notes a call and returns what the call should do.
func (f *fakeService) record(method string, args ...any) (nilResult bool, err error) {
	f.mu.Lock()
	f.calls = append(f.calls, call{Method: method, Args: args})
	err, nilResult, p := f.err, f.nilResult, f.panicWith
	f.mu.Unlock()
	if p != nil {
		panic(p)
	}
	return nilResult, err
}

// reply records the call of method with args and answers v, or what the
// fake is set to answer instead: its error, or a nil result.
func reply[T any](f *fakeService, v T, method string, args ...any) (T, error) {
	if nilResult, err := f.record(method, args...); err != nil || nilResult {
		var none T
		return none, err
	}
	return v, nil
}

// recorded returns the calls made so far.
func (f *fakeService) recorded() []call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]call(nil), f.calls...)
}

// reset forgets the recorded calls.
func (f *fakeService) reset() {
	f.mu.Lock()
	f.calls = nil
	f.mu.Unlock()
}

func cannedDefinition() *orchestrator.DefinitionView {
	return &orchestrator.DefinitionView{
		Metadata: orchestrator.DefinitionMeta{WorkflowID: "sample-wf", WorkflowVersionID: 3, CreateTime: 1763776800000},
		Workflow: json.RawMessage(`{"id":"sample-wf","steps":[]}`),
		IsActive: true,
		IsLatest: true,
	}
}

func cannedInstance(workflowID string, instanceID, runID int64) *orchestrator.InstanceView {
	return &orchestrator.InstanceView{
		WorkflowID:         workflowID,
		WorkflowInstanceID: instanceID,
		WorkflowRunID:      runID,
		WorkflowUUID:       "5e4f1c2a-0000-4000-8000-000000000001",
		WorkflowVersionID:  3,
		Status:             "IN_PROGRESS",
		CreateTime:         1763776800000,
		StepStatuses:       map[string]string{"job1": "RUNNING"},
	}
}

func cannedStep(workflowID string, instanceID, runID int64, stepID string, attempt int64) *orchestrator.StepView {
	return &orchestrator.StepView{
		WorkflowID:         workflowID,
		WorkflowInstanceID: instanceID,
		WorkflowRunID:      runID,
		StepID:             stepID,
		StepAttemptID:      attempt,
		RuntimeState:       orchestrator.StepRuntimeView{Status: "RUNNING"},
	}
}

func (f *fakeService) CreateWorkflow(_ context.Context, body []byte, format orchestrator.Format) (*orchestrator.DefinitionView, error) {
	return reply(f, cannedDefinition(), "CreateWorkflow", string(body), format)
}

func (f *fakeService) ValidateWorkflow(_ context.Context, body []byte, format orchestrator.Format) error {
	_, err := f.record("ValidateWorkflow", string(body), format)
	return err
}

func (f *fakeService) GetWorkflowVersion(_ context.Context, workflowID, selector string) (*orchestrator.DefinitionView, error) {
	return reply(f, cannedDefinition(), "GetWorkflowVersion", workflowID, selector)
}

func (f *fakeService) StartWorkflow(_ context.Context, workflowID, selector string, req orchestrator.StartRequest) (*orchestrator.StartResponse, error) {
	if nilResult, err := f.record("StartWorkflow", workflowID, selector, req); err != nil || nilResult {
		return nil, err
	}
	return &orchestrator.StartResponse{
		WorkflowID:         workflowID,
		WorkflowVersionID:  3,
		WorkflowInstanceID: 7,
		WorkflowRunID:      1,
		WorkflowUUID:       "5e4f1c2a-0000-4000-8000-000000000001",
		Status:             "CREATED",
		Created:            true,
	}, nil
}

func (f *fakeService) StartBatch(_ context.Context, workflowID, selector string, reqs []orchestrator.StartRequest) (*orchestrator.BatchStartResult, error) {
	if nilResult, err := f.record("StartBatch", workflowID, selector, reqs); err != nil || nilResult {
		return nil, err
	}
	res := &orchestrator.BatchStartResult{Results: make([]orchestrator.BatchStart, len(reqs)), Started: len(reqs)}
	for i := range reqs {
		res.Results[i].StartResponse = &orchestrator.StartResponse{WorkflowID: workflowID, WorkflowVersionID: 3,
			WorkflowInstanceID: int64(i + 1), WorkflowRunID: 1, Status: "CREATED", Created: true}
	}
	return res, nil
}

func (f *fakeService) GetInstance(_ context.Context, workflowID string, instanceID int64) (*orchestrator.InstanceView, error) {
	return reply(f, cannedInstance(workflowID, instanceID, 1), "GetInstance", workflowID, instanceID)
}

func (f *fakeService) GetRun(_ context.Context, workflowID string, instanceID, runID int64) (*orchestrator.InstanceView, error) {
	return reply(f, cannedInstance(workflowID, instanceID, runID), "GetRun", workflowID, instanceID, runID)
}

func (f *fakeService) ListSteps(_ context.Context, workflowID string, instanceID int64) ([]*orchestrator.StepView, error) {
	if nilResult, err := f.record("ListSteps", workflowID, instanceID); err != nil || nilResult {
		return nil, err
	}
	return []*orchestrator.StepView{
		cannedStep(workflowID, instanceID, 1, "job1", 1),
		cannedStep(workflowID, instanceID, 1, "job2", 2),
	}, nil
}

func (f *fakeService) GetStepAttempt(_ context.Context, workflowID string, instanceID, runID int64, stepID string, attempt int64) (*orchestrator.StepView, error) {
	if nilResult, err := f.record("GetStepAttempt", workflowID, instanceID, runID, stepID, attempt); err != nil || nilResult {
		return nil, err
	}
	if attempt == 0 {
		attempt = 4 // the latest attempt of the canned step
	}
	return cannedStep(workflowID, instanceID, runID, stepID, attempt), nil
}

func (f *fakeService) FlattenIterations(_ context.Context, workflowID string, instanceID, runID int64, stepID string, q orchestrator.FlattenQuery) (*orchestrator.StepIterationPage, error) {
	return reply(f, &orchestrator.StepIterationPage{Elements: []orchestrator.StepIteration{}}, "FlattenIterations", workflowID, instanceID, runID, stepID, q)
}

func (f *fakeService) FlattenIteration(_ context.Context, workflowID string, instanceID, runID int64, stepID, iterationID string) (*orchestrator.StepIteration, error) {
	return reply(f, &orchestrator.StepIteration{WorkflowID: workflowID, WorkflowInstanceID: instanceID, WorkflowRunID: runID, StepID: stepID}, "FlattenIteration", workflowID, instanceID, runID, stepID, iterationID)
}

func (f *fakeService) FlattenSummary(_ context.Context, workflowID string, instanceID, runID int64, stepID string, q orchestrator.SummaryQuery) (*orchestrator.StepIterationsSummary, error) {
	return reply(f, &orchestrator.StepIterationsSummary{}, "FlattenSummary", workflowID, instanceID, runID, stepID, q)
}

func (f *fakeService) ListWorkflows(_ context.Context, cursor string, limit int) (*orchestrator.WorkflowList, error) {
	return &orchestrator.WorkflowList{Workflows: []orchestrator.WorkflowSummary{}}, nil
}

func (f *fakeService) ListInstances(_ context.Context, workflowID, status, cursor string, limit int) (*orchestrator.InstanceList, error) {
	if nilResult, err := f.record("ListInstances", workflowID, status, cursor, limit); err != nil || nilResult {
		return nil, err
	}
	if cursor == "empty" {
		return &orchestrator.InstanceList{}, nil
	}
	return &orchestrator.InstanceList{
		Instances:  []*orchestrator.InstanceView{cannedInstance(workflowID, 2, 1), cannedInstance(workflowID, 1, 1)},
		NextCursor: "next-page",
	}, nil
}

func (f *fakeService) Health(context.Context) (*orchestrator.HealthView, error) {
	return reply(f, &orchestrator.HealthView{Status: "ok", Endpoint: "http://127.0.0.1:5000", Emulator: "moto"}, "Health")
}

func (f *fakeService) ActOnInstance(_ context.Context, workflowID string, instanceID, runID int64, action string) (*orchestrator.InstanceView, error) {
	return reply(f, cannedInstance(workflowID, instanceID, max(runID, 1)), "ActOnInstance", workflowID, instanceID, runID, action)
}

func (f *fakeService) ActOnStep(_ context.Context, workflowID string, instanceID int64, stepID, action string) (*orchestrator.InstanceView, error) {
	return reply(f, cannedInstance(workflowID, instanceID, 1), "ActOnStep", workflowID, instanceID, stepID, action)
}

func (f *fakeService) RestartInstance(_ context.Context, workflowID string, instanceID int64, req orchestrator.RestartRequest) (*orchestrator.InstanceView, error) {
	return reply(f, cannedInstance(workflowID, instanceID, 2), "RestartInstance", workflowID, instanceID, req)
}

func (f *fakeService) ActivateVersion(_ context.Context, workflowID, selector string) (*orchestrator.DefinitionView, error) {
	return reply(f, &orchestrator.DefinitionView{Metadata: orchestrator.DefinitionMeta{WorkflowID: workflowID}, IsActive: true}, "ActivateVersion", workflowID, selector)
}

func (f *fakeService) DeactivateWorkflow(_ context.Context, workflowID string) (*orchestrator.DefinitionView, error) {
	return reply(f, &orchestrator.DefinitionView{Metadata: orchestrator.DefinitionMeta{WorkflowID: workflowID}}, "DeactivateWorkflow", workflowID)
}

func (f *fakeService) UpdateProperties(_ context.Context, workflowID string, body []byte) (json.RawMessage, error) {
	if _, err := f.record("UpdateProperties", workflowID, string(body)); err != nil {
		return nil, err
	}
	return json.RawMessage(`{"owner":"x"}`), nil
}

func (f *fakeService) ActOnWorkflow(_ context.Context, workflowID, action string) (int, error) {
	if _, err := f.record("ActOnWorkflow", workflowID, action); err != nil {
		return 0, err
	}
	return 1, nil
}

func (f *fakeService) AddBreakpoint(_ context.Context, b orchestrator.Breakpoint) (*orchestrator.Breakpoint, error) {
	if nilResult, err := f.record("AddBreakpoint", b); err != nil || nilResult {
		return nil, err
	}
	b.CreateTime = 1763776800000
	return &b, nil
}

func (f *fakeService) ListBreakpoints(_ context.Context, workflowID, stepID string) ([]orchestrator.Breakpoint, error) {
	if _, err := f.record("ListBreakpoints", workflowID, stepID); err != nil {
		return nil, err
	}
	return nil, nil
}

func (f *fakeService) RemoveBreakpoints(_ context.Context, workflowID, stepID string, resume bool) (int, error) {
	if _, err := f.record("RemoveBreakpoints", workflowID, stepID, resume); err != nil {
		return 0, err
	}
	return 2, nil
}

func (f *fakeService) PausedAttempts(_ context.Context, workflowID, stepID string) ([]orchestrator.PausedAttempt, error) {
	if _, err := f.record("PausedAttempts", workflowID, stepID); err != nil {
		return nil, err
	}
	return []orchestrator.PausedAttempt{{WorkflowID: workflowID, Instance: 1, Run: 1, StepID: "job1", Attempt: 1}}, nil
}

func (f *fakeService) ResumeAttempt(_ context.Context, workflowID string, instanceID, runID int64, stepID string, attempt int64) (*orchestrator.InstanceView, error) {
	return reply(f, cannedInstance(workflowID, instanceID, runID), "ResumeAttempt", workflowID, instanceID, runID, stepID, attempt)
}

func (f *fakeService) PutTagPermit(_ context.Context, tag string, maxAllowed int64) (*orchestrator.TagPermit, error) {
	return reply(f, &orchestrator.TagPermit{Tag: tag, MaxAllowed: maxAllowed}, "PutTagPermit", tag, maxAllowed)
}

func (f *fakeService) PutTagPermitInfo(_ context.Context, tag string, maxAllowed int64, extra map[string]json.RawMessage) (*orchestrator.TagPermit, error) {
	return reply(f, &orchestrator.TagPermit{Tag: tag, MaxAllowed: maxAllowed, ExtraInfo: extra}, "PutTagPermitInfo", tag, maxAllowed, extra)
}

func (f *fakeService) AddWorkflowTag(_ context.Context, workflowID string, tag json.RawMessage) (json.RawMessage, error) {
	if _, err := f.record("AddWorkflowTag", workflowID, string(tag)); err != nil {
		return nil, err
	}
	return json.RawMessage(`{"workflow_id":"` + workflowID + `","tags":[` + string(tag) + `]}`), nil
}

func (f *fakeService) DeleteWorkflowTag(_ context.Context, workflowID, tagName string) (json.RawMessage, error) {
	if _, err := f.record("DeleteWorkflowTag", workflowID, tagName); err != nil {
		return nil, err
	}
	return json.RawMessage(`{"workflow_id":"` + workflowID + `"}`), nil
}

func (f *fakeService) GetTagPermit(_ context.Context, tag string) (*orchestrator.TagPermit, error) {
	return reply(f, &orchestrator.TagPermit{Tag: tag, MaxAllowed: 2}, "GetTagPermit", tag)
}

func (f *fakeService) DeleteTagPermit(_ context.Context, tag string) (*orchestrator.TagPermit, error) {
	return reply(f, &orchestrator.TagPermit{Tag: tag, MaxAllowed: 2}, "DeleteTagPermit", tag)
}

func (f *fakeService) RestartStep(_ context.Context, workflowID string, instanceID int64, stepID string, req orchestrator.StepRestartRequest) (*orchestrator.InstanceView, error) {
	return reply(f, cannedInstance(workflowID, instanceID, 2), "RestartStep", workflowID, instanceID, stepID, req)
}

func (f *fakeService) PutOutputData(_ context.Context, od orchestrator.OutputData) (*orchestrator.OutputDataResult, error) {
	return reply(f, &orchestrator.OutputDataResult{WorkflowID: od.WorkflowID, InstanceID: od.InstanceID, RunID: 1, StepID: od.StepID, Attempt: 1, Params: []string{"answer"}}, "PutOutputData", od)
}

func (f *fakeService) CompleteTask(_ context.Context, token string, c orchestrator.TaskCompletion) (*orchestrator.TaskView, error) {
	return reply(f, &orchestrator.TaskView{WorkflowID: "wf", InstanceID: 1, RunID: 1, StepID: "s", Attempt: 1, Action: c.Action, Status: "SUCCEEDED", Recorded: true}, "CompleteTask", token, c)
}

func (f *fakeService) PutJobQueue(_ context.Context, r orchestrator.JobQueueRequest) (*orchestrator.JobQueue, error) {
	return reply(f, &orchestrator.JobQueue{Name: r.Name, CPU: r.CPU}, "PutJobQueue", r)
}

func (f *fakeService) GetJobQueue(_ context.Context, name string) (*orchestrator.JobQueue, error) {
	return reply(f, &orchestrator.JobQueue{Name: name, CPU: 4}, "GetJobQueue", name)
}

func (f *fakeService) DeleteJobQueue(_ context.Context, name string) (*orchestrator.JobQueue, error) {
	return reply(f, &orchestrator.JobQueue{Name: name}, "DeleteJobQueue", name)
}

func (f *fakeService) DeleteWorkflow(_ context.Context, workflowID string) (*orchestrator.DeleteResult, error) {
	return reply(f, &orchestrator.DeleteResult{WorkflowID: workflowID, Status: "DELETING"}, "DeleteWorkflow", workflowID)
}

func (f *fakeService) AnnounceSignal(_ context.Context, a signals.Announce, src orchestrator.SignalSource) (*orchestrator.SignalView, error) {
	return reply(f, &orchestrator.SignalView{Name: a.Name, SeqID: 1, Params: a.Params, CreateTime: 1763776800000, Created: true}, "AnnounceSignal", a.Name, a.RequestID, src.Kind)
}

func (f *fakeService) GetSignal(_ context.Context, name string, seq int64) (*orchestrator.SignalView, error) {
	return reply(f, &orchestrator.SignalView{Name: name, SeqID: max(seq, 1), CreateTime: 1763776800000, Created: true}, "GetSignal", name, seq)
}

func (f *fakeService) SignalLineage(_ context.Context, name string, seq int64) (*orchestrator.LineageView, error) {
	return reply(f, &orchestrator.LineageView{Signal: &orchestrator.SignalView{Name: name, SeqID: seq}}, "SignalLineage", name, seq)
}

func (f *fakeService) PutJobTemplate(_ context.Context, body []byte, _ orchestrator.Format) (json.RawMessage, error) {
	v, err := reply(f, &body, "PutJobTemplate", string(body))
	if v == nil {
		return nil, err
	}
	return json.RawMessage(`{"metadata":{},"definition":{}}`), err
}

func (f *fakeService) GetJobTemplate(_ context.Context, jobType, version string) (json.RawMessage, error) {
	v, err := reply(f, &jobType, "GetJobTemplate", jobType+"@"+version)
	if v == nil {
		return nil, err
	}
	return json.RawMessage(`{"metadata":{},"definition":{"job_type":"` + jobType + `"}}`), err
}

func (f *fakeService) ListJobTemplates(_ context.Context, version string) ([]json.RawMessage, error) {
	_, err := reply(f, &version, "ListJobTemplates", version)
	return nil, err
}

func (f *fakeService) DeleteJobTemplate(_ context.Context, jobType, version string) (*orchestrator.JobTemplateDeleted, error) {
	return reply(f, &orchestrator.JobTemplateDeleted{JobType: jobType, Version: version}, "DeleteJobTemplate", jobType+"@"+version)
}
