// Package orchestrator provides the operations of the orchestrator — push and
// read definitions, start and inspect instances, apply decisions — over the
// store, the engine and the definition checker. The API handler, the stream
// router and the workers are thin adapters over it.
package orchestrator

import (
	"context"
	"encoding/json"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/signals"
)

// Format is the encoding of a pushed definition.
type Format string

// Definition encodings accepted by the API.
const (
	FormatJSON Format = "json"
	FormatYAML Format = "yaml"
)

// Service is what the HTTP API needs from the orchestrator. Every method
// returns *Error for failures a caller can act on (4xx) and wraps others.
type Service interface {
	// CreateWorkflow validates and stores a new version of a definition.
	// A rejected definition stores nothing.
	CreateWorkflow(ctx context.Context, body []byte, f Format) (*DefinitionView, error)
	// ValidateWorkflow checks a definition without storing it.
	ValidateWorkflow(ctx context.Context, body []byte, f Format) error
	// GetWorkflowVersion returns a version chosen by selector:
	// "active", "latest", "default" (active, else latest) or a number.
	GetWorkflowVersion(ctx context.Context, workflowID, selector string) (*DefinitionView, error)
	// ActivateVersion makes a version the active one; DeactivateWorkflow
	// leaves none active.
	ActivateVersion(ctx context.Context, workflowID, selector string) (*DefinitionView, error)
	DeactivateWorkflow(ctx context.Context, workflowID string) (*DefinitionView, error)
	// UpdateProperties changes the properties shared by every version.
	UpdateProperties(ctx context.Context, workflowID string, body []byte) (json.RawMessage, error)
	// StartWorkflow starts an instance of the selected version; a repeated
	// request_id returns the instance the first request created.
	StartWorkflow(ctx context.Context, workflowID, selector string, req StartRequest) (*StartResponse, error)
	// GetInstance returns an instance's latest run with aggregated step statuses.
	GetInstance(ctx context.Context, workflowID string, instanceID int64) (*InstanceView, error)
	// GetRun returns one run of an instance.
	GetRun(ctx context.Context, workflowID string, instanceID, runID int64) (*InstanceView, error)
	// ListSteps returns the latest attempt of every step of an instance's latest run.
	ListSteps(ctx context.Context, workflowID string, instanceID int64) ([]*StepView, error)
	// GetStepAttempt returns one attempt; attempt 0 means the latest.
	GetStepAttempt(ctx context.Context, workflowID string, instanceID, runID int64, stepID string, attempt int64) (*StepView, error)
	// FlattenIterations, FlattenIteration and FlattenSummary are Maestro's
	// flatten views of a step inside foreach loops (see flatten.go).
	FlattenIterations(ctx context.Context, workflowID string, instanceID, runID int64, stepID string, q FlattenQuery) (*StepIterationPage, error)
	FlattenIteration(ctx context.Context, workflowID string, instanceID, runID int64, stepID, iterationID string) (*StepIteration, error)
	FlattenSummary(ctx context.Context, workflowID string, instanceID, runID int64, stepID string, q SummaryQuery) (*StepIterationsSummary, error)
	// ActOnInstance applies a workflow action (stop, kill) to run runID of
	// an instance (0: its latest run) and returns the run afterwards. An
	// action the run's status does not allow is a 409 naming the status.
	ActOnInstance(ctx context.Context, workflowID string, instanceID, runID int64, action string) (*InstanceView, error)
	// ActOnStep applies a step action (stop, kill, skip) to a step's current
	// attempt in the instance's latest run and returns the run afterwards.
	ActOnStep(ctx context.Context, workflowID string, instanceID int64, stepID, action string) (*InstanceView, error)
	// ActOnWorkflow stops or kills every active run (running or queued) of
	// a workflow and returns how many it acted on.
	ActOnWorkflow(ctx context.Context, workflowID, action string) (int, error)
	// RestartInstance starts a new run of an ended instance.
	RestartInstance(ctx context.Context, workflowID string, instanceID int64, req RestartRequest) (*InstanceView, error)
	// DeleteWorkflow deletes a workflow with its versions and instances.
	DeleteWorkflow(ctx context.Context, workflowID string) (*DeleteResult, error)
	// AnnounceSignal, GetSignal and SignalLineage serve the signal API.
	AnnounceSignal(ctx context.Context, a signals.Announce, src SignalSource) (*SignalView, error)
	GetSignal(ctx context.Context, name string, seq int64) (*SignalView, error)
	SignalLineage(ctx context.Context, name string, seq int64) (*LineageView, error)
	// PutOutputData records an external job's output params for a running
	// step attempt.
	PutOutputData(ctx context.Context, od OutputData) (*OutputDataResult, error)
	// CompleteTask applies a task token holder's report (success, failure,
	// heartbeat) to the step attempt the token belongs to.
	CompleteTask(ctx context.Context, token string, c TaskCompletion) (*TaskView, error)
	// RestartStep restarts a step that has ended, and everything downstream
	// of it: a new attempt in a run in progress, a new run otherwise.
	RestartStep(ctx context.Context, workflowID string, instanceID int64, stepID string, req StepRestartRequest) (*InstanceView, error)
	// ListInstances pages through a workflow's instances, newest first;
	// a non-empty status keeps only the instances in that status.
	ListInstances(ctx context.Context, workflowID, status, cursor string, limit int) (*InstanceList, error)
	// ListWorkflows pages through the stored workflows in id order.
	ListWorkflows(ctx context.Context, cursor string, limit int) (*WorkflowList, error)
	// Health reports readiness and the resources in use.
	Health(ctx context.Context) (*HealthView, error)

	// AddBreakpoint, ListBreakpoints and RemoveBreakpoints manage step
	// breakpoints; PausedAttempts lists the attempts they hold and
	// ResumeAttempt lets one go on.
	AddBreakpoint(ctx context.Context, b Breakpoint) (*Breakpoint, error)
	ListBreakpoints(ctx context.Context, workflowID, stepID string) ([]Breakpoint, error)
	RemoveBreakpoints(ctx context.Context, workflowID, stepID string, resume bool) (int, error)
	PausedAttempts(ctx context.Context, workflowID, stepID string) ([]PausedAttempt, error)
	ResumeAttempt(ctx context.Context, workflowID string, instanceID, runID int64, stepID string, attempt int64) (*InstanceView, error)

	// PutTagPermit, GetTagPermit and DeleteTagPermit manage tag permits.
	PutTagPermit(ctx context.Context, tag string, maxAllowed int64) (*TagPermit, error)
	GetTagPermit(ctx context.Context, tag string) (*TagPermit, error)
	DeleteTagPermit(ctx context.Context, tag string) (*TagPermit, error)

	// PutJobQueue, GetJobQueue and DeleteJobQueue manage job queues.
	PutJobQueue(ctx context.Context, r JobQueueRequest) (*JobQueue, error)
	GetJobQueue(ctx context.Context, name string) (*JobQueue, error)
	DeleteJobQueue(ctx context.Context, name string) (*JobQueue, error)
}

// StartRequest is Maestro's WorkflowStartRequest.
type StartRequest struct {
	Initiator   *Initiator                 `json:"initiator,omitempty"`
	RequestTime int64                      `json:"request_time,omitempty"`
	RequestID   string                     `json:"request_id,omitempty"`
	RunParams   map[string]json.RawMessage `json:"run_params,omitempty"`
	RuntimeTags []json.RawMessage          `json:"runtime_tags,omitempty"`
	Artifacts   map[string]json.RawMessage `json:"artifacts,omitempty"`
}

// Initiator says who or what started an instance (type MANUAL, TIME, SIGNAL, ...).
type Initiator struct {
	Type string `json:"type"`
	User string `json:"user,omitempty"`
	// Timezone and ScheduledTime (unix ms) describe the time trigger that
	// started a TIME run; they are never taken from a request.
	Timezone      string `json:"timezone,omitempty"`
	ScheduledTime int64  `json:"scheduled_time,omitempty"`
	// Principal is the IAM principal whose API request started the run
	// (see package caller); never taken from a request body.
	Principal string `json:"principal,omitempty"`
	// Parent is the step attempt that started a SUBWORKFLOW, FOREACH or
	// WHILE run, with its depth and the root of its tree.
	Parent *engine.ParentRef `json:"parent,omitempty"`
}

// RestartRequest is Maestro's WorkflowInstanceRestartRequest.
type RestartRequest struct {
	// RestartPolicy is RESTART_FROM_INCOMPLETE (default) or RESTART_FROM_BEGINNING.
	RestartPolicy string                     `json:"restart_policy,omitempty"`
	RunParams     map[string]json.RawMessage `json:"run_params,omitempty"`
	RequestID     string                     `json:"request_id,omitempty"`
	RequestTime   int64                      `json:"request_time,omitempty"`
}

// StepRestartRequest is Maestro's StepInstanceRestartRequest, as far as
// this runtime carries it out.
type StepRestartRequest struct {
	// RestartPolicy is RESTART_FROM_INCOMPLETE (the default): the steps not
	// downstream of the restarted one are restarted from incomplete.
	RestartPolicy string `json:"restart_policy,omitempty"`
	// UpstreamRestartMode is RESTART_FROM_STEP (the default).
	UpstreamRestartMode string `json:"upstream_restart_mode,omitempty"`
	RequestID           string `json:"request_id,omitempty"`
	RequestTime         int64  `json:"request_time,omitempty"`
}

// StartResponse is Maestro's RunResponse for a start.
type StartResponse struct {
	WorkflowID         string `json:"workflow_id"`
	WorkflowVersionID  int64  `json:"workflow_version_id"`
	WorkflowInstanceID int64  `json:"workflow_instance_id"`
	WorkflowRunID      int64  `json:"workflow_run_id"`
	WorkflowUUID       string `json:"workflow_uuid"`
	Status             string `json:"status"`
	// Created is false when the request_id matched an earlier start.
	Created bool `json:"created"`
}

// DefinitionView is Maestro's WorkflowDefinition as returned by the API.
type DefinitionView struct {
	PropertiesSnapshot json.RawMessage `json:"properties_snapshot,omitempty"`
	Metadata           DefinitionMeta  `json:"metadata"`
	Workflow           json.RawMessage `json:"workflow"`
	IsActive           bool            `json:"is_active"`
	IsLatest           bool            `json:"is_latest"`
	IsDefault          bool            `json:"is_default"`
	ActivateTime       int64           `json:"activate_time,omitempty"`
}

// DefinitionMeta is the metadata of a stored version.
type DefinitionMeta struct {
	WorkflowID        string          `json:"workflow_id"`
	WorkflowVersionID int64           `json:"workflow_version_id"`
	CreateTime        int64           `json:"create_time"`
	GitInfo           json.RawMessage `json:"git_info,omitempty"`
	// VersionAuthor is who pushed the version: {"name": <IAM principal>},
	// as Maestro's version_author.
	VersionAuthor *User `json:"version_author,omitempty"`
}

// User names a person or principal, as Maestro's User.
type User struct {
	Name string `json:"name"`
}

// InstanceView is a workflow instance run (Maestro's WorkflowInstance, the
// fields this runtime fills).
type InstanceView struct {
	WorkflowID         string     `json:"workflow_id"`
	WorkflowInstanceID int64      `json:"workflow_instance_id"`
	WorkflowRunID      int64      `json:"workflow_run_id"`
	WorkflowUUID       string     `json:"workflow_uuid"`
	WorkflowVersionID  int64      `json:"workflow_version_id"`
	Status             string     `json:"status"`
	Initiator          *Initiator `json:"initiator,omitempty"`
	// TraceID is the run's X-Ray trace id (the request that started it),
	// which its messages and log lines carry.
	TraceID         string           `json:"trace_id,omitempty"`
	Params          map[string]any   `json:"params,omitempty"`
	CreateTime      int64            `json:"create_time"`
	StartTime       int64            `json:"start_time,omitempty"`
	EndTime         int64            `json:"end_time,omitempty"`
	ModifyTime      int64            `json:"modify_time,omitempty"`
	RuntimeOverview *RuntimeOverview `json:"runtime_overview,omitempty"`
	// RollupOverview counts the leaf steps of the instance's tree by
	// status: its own steps, and those of its iterations and
	// subworkflow instances that have ended.
	RollupOverview *engine.Rollup    `json:"rollup_overview,omitempty"`
	Timeline       []TimelineEntry   `json:"timeline,omitempty"`
	StepStatuses   map[string]string `json:"step_statuses,omitempty"`
}

// RuntimeOverview summarises step statuses of a run.
type RuntimeOverview struct {
	TotalStepCount int64            `json:"total_step_count"`
	StepOverview   map[string]int64 `json:"step_overview"`
	RunStatus      string           `json:"run_status"`
}

// StepView is a step attempt (Maestro's StepInstance, the fields this runtime fills).
type StepView struct {
	WorkflowID         string          `json:"workflow_id"`
	WorkflowInstanceID int64           `json:"workflow_instance_id"`
	WorkflowRunID      int64           `json:"workflow_run_id"`
	StepID             string          `json:"step_id"`
	StepAttemptID      int64           `json:"step_attempt_id"`
	StepUUID           string          `json:"step_uuid,omitempty"`
	StepType           string          `json:"step_type,omitempty"`
	Params             map[string]any  `json:"params,omitempty"`
	Outputs            map[string]any  `json:"outputs,omitempty"`
	RuntimeState       StepRuntimeView `json:"runtime_state"`
	// Foreach is a foreach step attempt's iterations: their inline
	// workflow (whose instance n is iteration n), counts and those in
	// flight.
	Foreach *engine.LoopSummary `json:"foreach_overview,omitempty"`
	// While is a while step attempt's iterations: their inline workflow,
	// how many started, the loop params' current values and counts.
	While *engine.LoopSummary `json:"while_overview,omitempty"`
	// Subworkflow is the instance a subworkflow step attempt started.
	Subworkflow *engine.ChildRef `json:"subworkflow_overview,omitempty"`
	Timeline    []TimelineEntry  `json:"timeline,omitempty"`
}

// setLoop shows loop l (nil: none) as the view's foreach or while
// overview.
func (v *StepView) setLoop(l *engine.LoopState) {
	switch {
	case l == nil:
	case l.While:
		v.While = l.Summary()
	default:
		v.Foreach = l.Summary()
	}
}

// StepRuntimeView is a step attempt's status and times (unix ms).
type StepRuntimeView struct {
	Status     string `json:"status"`
	CreateTime int64  `json:"create_time,omitempty"`
	StartTime  int64  `json:"start_time,omitempty"`
	EndTime    int64  `json:"end_time,omitempty"`
	ModifyTime int64  `json:"modify_time,omitempty"`
}

// TimelineEntry is one line of an instance's or a step's timeline.
type TimelineEntry struct {
	Time    int64  `json:"timestamp"`
	Status  string `json:"status,omitempty"`
	Message string `json:"message"`
}

// InstanceList is one page of instances.
type InstanceList struct {
	Instances  []*InstanceView `json:"workflow_instances"`
	NextCursor string          `json:"next_cursor,omitempty"`
}

// WorkflowList is one page of GET /api/v3/workflows.
type WorkflowList struct {
	Workflows  []WorkflowSummary `json:"workflows"`
	NextCursor string            `json:"next_cursor,omitempty"`
}

// WorkflowSummary is a workflow's head: its versions and properties.
type WorkflowSummary struct {
	WorkflowID    string `json:"workflow_id"`
	LatestVersion int64  `json:"latest_version_id"`
	// ActiveVersion is 0 when the workflow is inactive.
	ActiveVersion      int64           `json:"active_version_id"`
	InstanceCount      int64           `json:"instance_count"`
	PropertiesSnapshot json.RawMessage `json:"properties_snapshot,omitempty"`
	CreateTime         int64           `json:"create_time"`
	ModifyTime         int64           `json:"modify_time"`
}

// HealthView is the body of GET /health.
type HealthView struct {
	Status   string `json:"status"`
	Endpoint string `json:"aws_endpoint,omitempty"`
	Emulator string `json:"emulator,omitempty"`
	// DynamoDBEndpoint is where DynamoDB and its streams are served when
	// that is not Endpoint (DynamoDB Local beside moto).
	DynamoDBEndpoint string          `json:"dynamodb_endpoint,omitempty"`
	Resources        json.RawMessage `json:"resources,omitempty"`
}
