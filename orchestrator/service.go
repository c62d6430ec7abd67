// Package orchestrator provides the operations of the orchestrator — push and
// read definitions, start and inspect instances, apply decisions — over the
// store, the engine and the definition checker. The API handler, the stream
// router and the workers are thin adapters over it.
package orchestrator

import (
	"encoding/json"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/pricing"
)

// Format is the encoding of a pushed definition.
type Format string

// Definition encodings accepted by the API.
const (
	FormatJSON Format = "json"
	FormatYAML Format = "yaml"
)

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
	// Backfill names the backfill that started a BACKFILL run; never
	// taken from a request.
	Backfill string `json:"backfill,omitempty"`
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
	// RestartPolicy is RESTART_FROM_INCOMPLETE (the default) or
	// RESTART_FROM_BEGINNING; this runtime uses it with
	// RESTART_FROM_INLINE_ROOT, as the policy the root run restarts with.
	RestartPolicy string `json:"restart_policy,omitempty"`
	// UpstreamRestartMode is RESTART_FROM_STEP (the default) or
	// RESTART_FROM_INLINE_ROOT.
	UpstreamRestartMode string `json:"upstream_restart_mode,omitempty"`
	// StepRunParams are merged over the step's params for the restarted
	// attempt (at most MaxStepRunParamsBytes of JSON).
	StepRunParams map[string]json.RawMessage `json:"step_run_params,omitempty"`
	RequestID     string                     `json:"request_id,omitempty"`
	RequestTime   int64                      `json:"request_time,omitempty"`
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
	// RunConfig holds the run's runtime tags.
	RunConfig *RunConfig `json:"run_config,omitempty"`
	// Cost is what the run was billed for, priced: its steps' compute and
	// that of its ended iterations and subworkflow instances (their
	// trees'). Its covers field names the kinds of cost it includes.
	Cost *pricing.Cost `json:"cost,omitempty"`
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
	// Cost is what the attempt's compute was billed for, priced; absent
	// when it was billed nothing the runtime records.
	Cost *pricing.Cost `json:"cost,omitempty"`
	// While is a while step attempt's iterations: their inline workflow,
	// how many started, the loop params' current values and counts.
	While *engine.LoopSummary `json:"while_overview,omitempty"`
	// Estimate is a foreach attempt's expected duration and cost, when it
	// has more iterations than the stack's threshold (LoopEstimate).
	Estimate *LoopEstimate `json:"foreach_estimate,omitempty"`
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
