package api

import (
	"context"
	"encoding/json"

	"github.com/maestro-serverless/maestro/orchestrator"
	"github.com/maestro-serverless/maestro/signals"
)

// Services are the orchestrator's roles the API serves, each declared here
// as what the routes need of it. Every method returns *orchestrator.Error
// for failures a caller can act on (4xx) and wraps others.
type Services struct {
	Definitions DefinitionService
	Runs        RunService
	Actions     ActionService
	Gates       GateService
	Signals     SignalService
	Health      HealthService
	// Diffs compares versions (diff.go).
	Diffs DiffService
	// Access authorizes every route (routeGuards) and keeps grants and
	// teams.
	Access AccessService
	// Backfills creates, reads and operates backfills.
	Backfills BackfillService
}

// ServicesOf returns the roles of o the API serves.
func ServicesOf(o *orchestrator.Orchestrator) Services {
	return Services{Definitions: o.Definitions, Runs: o.Runs, Actions: o.Actions, Gates: o.Gates, Signals: o.Signals, Health: o.Runs, Access: o.Access,
		Diffs: o.Definitions, Backfills: o.Backfills}
}

// DefinitionService pushes, reads, activates and deletes workflow definitions.
type DefinitionService interface {
	// CreateWorkflow validates and stores a new version of a definition.
	// A rejected definition stores nothing.
	CreateWorkflow(ctx context.Context, body []byte, f orchestrator.Format) (*orchestrator.DefinitionView, error)

	// ValidateWorkflow checks a definition without storing it.
	ValidateWorkflow(ctx context.Context, body []byte, f orchestrator.Format) error

	// GetWorkflowVersion returns a version chosen by selector:
	// "active", "latest", "default" (active, else latest) or a number.
	GetWorkflowVersion(ctx context.Context, workflowID, selector string) (*orchestrator.DefinitionView, error)

	// ActivateVersion makes a version the active one; DeactivateWorkflow
	// leaves none active.
	ActivateVersion(ctx context.Context, workflowID, selector string) (*orchestrator.DefinitionView, error)

	DeactivateWorkflow(ctx context.Context, workflowID string) (*orchestrator.DefinitionView, error)

	// UpdateProperties changes the properties shared by every version.
	UpdateProperties(ctx context.Context, workflowID string, body []byte) (json.RawMessage, error)

	// DeleteWorkflow deletes a workflow with its versions and instances.
	DeleteWorkflow(ctx context.Context, workflowID string) (*orchestrator.DeleteResult, error)

	// ListWorkflows pages through the stored workflows in id order.
	ListWorkflows(ctx context.Context, cursor string, limit int) (*orchestrator.WorkflowList, error)

	// AddWorkflowTag and DeleteWorkflowTag add (or replace) and remove a
	// tag of a workflow's properties; both return the properties snapshot.
	AddWorkflowTag(ctx context.Context, workflowID string, tag json.RawMessage) (json.RawMessage, error)

	DeleteWorkflowTag(ctx context.Context, workflowID, tagName string) (json.RawMessage, error)

	// PutJobTemplate, GetJobTemplate, ListJobTemplates and
	// DeleteJobTemplate manage job templates.
	PutJobTemplate(ctx context.Context, body []byte, f orchestrator.Format) (json.RawMessage, error)

	GetJobTemplate(ctx context.Context, jobType, version string) (json.RawMessage, error)

	ListJobTemplates(ctx context.Context, version string) ([]json.RawMessage, error)

	DeleteJobTemplate(ctx context.Context, jobType, version string) (*orchestrator.JobTemplateDeleted, error)

	// ListVersions, GetWorkflowOverview, GetWorkflowTimeline and
	// GetPropertiesSnapshot serve Maestro's workflow reads (reads.go).
	ListVersions(ctx context.Context, workflowID string, req orchestrator.PageRequest) (*orchestrator.Page[*orchestrator.DefinitionView], error)

	GetWorkflowOverview(ctx context.Context, workflowID string) (*orchestrator.WorkflowOverview, error)

	GetWorkflowTimeline(ctx context.Context, workflowID string) (*orchestrator.WorkflowTimeline, error)

	GetPropertiesSnapshot(ctx context.Context, workflowID, snapshotID string) (orchestrator.PropertiesSnapshot, error)

	// ListWorkflowPage pages through the stored workflows in id order,
	// forwards or backwards (GET /workflows with first or last).
	ListWorkflowPage(ctx context.Context, req orchestrator.WorkflowPageRequest) (*orchestrator.WorkflowPage, error)
}

// RunService starts instances and reads instances, runs and steps.
type RunService interface {
	// StartWorkflow starts an instance of the selected version; a repeated
	// request_id returns the instance the first request created.
	StartWorkflow(ctx context.Context, workflowID, selector string, req orchestrator.StartRequest) (*orchestrator.StartResponse, error)

	// StartBatch starts an instance for each request (each with a
	// request_id) and answers each one's outcome in request order; a batch
	// with a request the start would refuse starts nothing.
	StartBatch(ctx context.Context, workflowID, selector string, reqs []orchestrator.StartRequest) (*orchestrator.BatchStartResult, error)

	// GetInstance returns an instance's latest run with aggregated step statuses.
	GetInstance(ctx context.Context, workflowID string, instanceID int64) (*orchestrator.InstanceView, error)

	// GetRun returns one run of an instance.
	GetRun(ctx context.Context, workflowID string, instanceID, runID int64) (*orchestrator.InstanceView, error)

	// ListSteps returns the latest attempt of every step of an instance's latest run.
	ListSteps(ctx context.Context, workflowID string, instanceID int64) ([]*orchestrator.StepView, error)

	// GetStepAttempt returns one attempt; attempt 0 means the latest.
	GetStepAttempt(ctx context.Context, workflowID string, instanceID, runID int64, stepID string, attempt int64) (*orchestrator.StepView, error)

	// FlattenIterations, FlattenIteration and FlattenSummary are Maestro's
	// flatten views of a step inside foreach loops (see flatten.go).
	FlattenIterations(ctx context.Context, workflowID string, instanceID, runID int64, stepID string, q orchestrator.FlattenQuery) (*orchestrator.StepIterationPage, error)

	FlattenIteration(ctx context.Context, workflowID string, instanceID, runID int64, stepID, iterationID string) (*orchestrator.StepIteration, error)

	FlattenSummary(ctx context.Context, workflowID string, instanceID, runID int64, stepID string, q orchestrator.SummaryQuery) (*orchestrator.StepIterationsSummary, error)

	// ListInstances pages through a workflow's instances, newest first;
	// a non-empty status keeps only the instances in that status.
	ListInstances(ctx context.Context, workflowID, status, cursor string, limit int) (*orchestrator.InstanceList, error)

	// ListInstancePage, ListRuns, ListRunSteps, GetStepView, GetInlinePath
	// and GetInlineWorkflowID serve Maestro's instance and step reads
	// (reads.go).
	ListInstancePage(ctx context.Context, workflowID string, req orchestrator.PageRequest) (*orchestrator.Page[*orchestrator.InstanceView], error)

	ListRuns(ctx context.Context, workflowID string, instanceID int64, req orchestrator.PageRequest) (*orchestrator.Page[*orchestrator.InstanceView], error)

	ListRunSteps(ctx context.Context, workflowID string, instanceID, runID int64) ([]*orchestrator.StepView, error)

	GetStepView(ctx context.Context, workflowID string, instanceID int64, stepID string) (*orchestrator.StepView, error)

	GetInlinePath(ctx context.Context, workflowID string, instanceID int64) ([]orchestrator.UpstreamInfo, error)

	GetInlineWorkflowID(ctx context.Context, nodes []orchestrator.UpstreamInfo) (string, error)
}

// ActionService acts on runs and steps and takes external reports.
type ActionService interface {
	// ActOnInstance applies a workflow action (stop, kill) to run runID of
	// an instance (0: its latest run) and returns the run afterwards. An
	// action the run's status does not allow is a 409 naming the status.
	ActOnInstance(ctx context.Context, workflowID string, instanceID, runID int64, action string) (*orchestrator.InstanceView, error)

	// ActOnStep applies a step action (stop, kill, skip) to a step's current
	// attempt in the instance's latest run and returns the run afterwards.
	ActOnStep(ctx context.Context, workflowID string, instanceID int64, stepID, action string) (*orchestrator.InstanceView, error)

	// ActOnWorkflow stops or kills every active run (running or queued) of
	// a workflow and returns how many it acted on.
	ActOnWorkflow(ctx context.Context, workflowID, action string) (int, error)

	// RestartInstance starts a new run of an ended instance.
	RestartInstance(ctx context.Context, workflowID string, instanceID int64, req orchestrator.RestartRequest) (*orchestrator.InstanceView, error)

	// PutOutputData records an external job's output params for a running
	// step attempt.
	PutOutputData(ctx context.Context, od orchestrator.OutputData) (*orchestrator.OutputDataResult, error)

	// CompleteTask applies a task token holder's report (success, failure,
	// heartbeat) to the step attempt the token belongs to.
	CompleteTask(ctx context.Context, token string, c orchestrator.TaskCompletion) (*orchestrator.TaskView, error)

	// RestartStep restarts a step that has ended, and everything downstream
	// of it: a new attempt in a run in progress, a new run otherwise.
	RestartStep(ctx context.Context, workflowID string, instanceID int64, stepID string, req orchestrator.StepRestartRequest) (*orchestrator.InstanceView, error)

	ResumeAttempt(ctx context.Context, workflowID string, instanceID, runID int64, stepID string, attempt int64) (*orchestrator.InstanceView, error)
}

// GateService keeps breakpoints, tag permits and job queues.
type GateService interface {
	// AddBreakpoint, ListBreakpoints and RemoveBreakpoints manage step
	// breakpoints; PausedAttempts lists the attempts they hold and
	// ResumeAttempt lets one go on.
	AddBreakpoint(ctx context.Context, b orchestrator.Breakpoint) (*orchestrator.Breakpoint, error)

	ListBreakpoints(ctx context.Context, workflowID, stepID string) ([]orchestrator.Breakpoint, error)

	RemoveBreakpoints(ctx context.Context, workflowID, stepID string, resume bool) (int, error)

	PausedAttempts(ctx context.Context, workflowID, stepID string) ([]orchestrator.PausedAttempt, error)

	// PutTagPermit, GetTagPermit and DeleteTagPermit manage tag permits.
	PutTagPermit(ctx context.Context, tag string, maxAllowed int64) (*orchestrator.TagPermit, error)

	// PutTagPermitInfo is PutTagPermit that also replaces the permit's
	// extra info (Maestro's extra_info).
	PutTagPermitInfo(ctx context.Context, tag string, maxAllowed int64, extraInfo map[string]json.RawMessage) (*orchestrator.TagPermit, error)

	GetTagPermit(ctx context.Context, tag string) (*orchestrator.TagPermit, error)

	DeleteTagPermit(ctx context.Context, tag string) (*orchestrator.TagPermit, error)

	// PutJobQueue, GetJobQueue and DeleteJobQueue manage job queues.
	PutJobQueue(ctx context.Context, r orchestrator.JobQueueRequest) (*orchestrator.JobQueue, error)

	GetJobQueue(ctx context.Context, name string) (*orchestrator.JobQueue, error)

	DeleteJobQueue(ctx context.Context, name string) (*orchestrator.JobQueue, error)
}

// SignalService announces and reads signals.
type SignalService interface {
	// AnnounceSignal, GetSignal and SignalLineage serve the signal API.
	AnnounceSignal(ctx context.Context, a signals.Announce, src orchestrator.SignalSource) (*orchestrator.SignalView, error)

	GetSignal(ctx context.Context, name string, seq int64) (*orchestrator.SignalView, error)

	SignalLineage(ctx context.Context, name string, seq int64) (*orchestrator.LineageView, error)
}

// HealthService reports readiness.
type HealthService interface {
	// Health reports readiness and the resources in use.
	Health(ctx context.Context) (*orchestrator.HealthView, error)
}
