package model

import "slices"

// Statuses, actions and run policies, as Maestro defines them
// (WorkflowInstance.Status, StepInstance.Status, Actions, RunPolicy).

// WorkflowStatus is the status of a workflow instance run.
type WorkflowStatus string

// Workflow instance statuses.
const (
	WorkflowCreated    WorkflowStatus = "CREATED"     // queued, params evaluated
	WorkflowInProgress WorkflowStatus = "IN_PROGRESS" // running
	WorkflowPaused     WorkflowStatus = "PAUSED"
	WorkflowTimedOut   WorkflowStatus = "TIMED_OUT"
	WorkflowStopped    WorkflowStatus = "STOPPED"
	WorkflowFailed     WorkflowStatus = "FAILED"
	WorkflowSucceeded  WorkflowStatus = "SUCCEEDED"
)

// WorkflowStatuses lists every workflow instance status.
func WorkflowStatuses() []WorkflowStatus {
	return []WorkflowStatus{
		WorkflowCreated, WorkflowInProgress, WorkflowPaused,
		WorkflowTimedOut, WorkflowStopped, WorkflowFailed, WorkflowSucceeded,
	}
}

// Valid reports whether s is a known workflow status.
func (s WorkflowStatus) Valid() bool {
	return slices.Contains(WorkflowStatuses(), s)
}

// IsTerminal reports whether the run has ended: TIMED_OUT, STOPPED, FAILED or
// SUCCEEDED.
func (s WorkflowStatus) IsTerminal() bool {
	switch s {
	case WorkflowTimedOut, WorkflowStopped, WorkflowFailed, WorkflowSucceeded:
		return true
	}
	return false
}

// WorkflowAction is an action on a workflow instance.
type WorkflowAction string

// Workflow instance actions.
const (
	WorkflowActionStop    WorkflowAction = "STOP"
	WorkflowActionKill    WorkflowAction = "KILL"
	WorkflowActionRestart WorkflowAction = "RESTART"
	WorkflowActionUnblock WorkflowAction = "UNBLOCK"
)

// WorkflowActions lists every workflow instance action.
func WorkflowActions() []WorkflowAction {
	return []WorkflowAction{WorkflowActionStop, WorkflowActionKill, WorkflowActionRestart, WorkflowActionUnblock}
}

// AllowedWorkflowActions returns the actions a workflow instance in status s
// accepts: STOP and KILL while it runs; RESTART once terminal; FAILED also
// UNBLOCK (for STRICT_SEQUENTIAL). Unknown statuses allow nothing.
func AllowedWorkflowActions(s WorkflowStatus) []WorkflowAction {
	switch s {
	case WorkflowCreated, WorkflowInProgress, WorkflowPaused:
		return []WorkflowAction{WorkflowActionStop, WorkflowActionKill}
	case WorkflowTimedOut, WorkflowStopped, WorkflowSucceeded:
		return []WorkflowAction{WorkflowActionRestart}
	case WorkflowFailed:
		return []WorkflowAction{WorkflowActionRestart, WorkflowActionUnblock}
	}
	return nil
}

// WorkflowActionResult returns the status an instance takes when action a
// is applied: STOP -> STOPPED, KILL -> FAILED, RESTART -> CREATED,
// UNBLOCK -> IN_PROGRESS. It returns "" for an unknown action.
func WorkflowActionResult(a WorkflowAction) WorkflowStatus {
	switch a {
	case WorkflowActionStop:
		return WorkflowStopped
	case WorkflowActionKill:
		return WorkflowFailed
	case WorkflowActionRestart:
		return WorkflowCreated
	case WorkflowActionUnblock:
		return WorkflowInProgress
	}
	return ""
}

// StepStatus is the status of a step instance attempt.
type StepStatus string

// Step instance statuses, in lifecycle order, then the terminal ones.
const (
	StepNotCreated         StepStatus = "NOT_CREATED"
	StepCreated            StepStatus = "CREATED"
	StepInitialized        StepStatus = "INITIALIZED"
	StepPaused             StepStatus = "PAUSED" // at a breakpoint
	StepWaitingForSignals  StepStatus = "WAITING_FOR_SIGNALS"
	StepEvaluatingParams   StepStatus = "EVALUATING_PARAMS"
	StepWaitingForPermits  StepStatus = "WAITING_FOR_PERMITS"
	StepStarting           StepStatus = "STARTING"
	StepRunning            StepStatus = "RUNNING"
	StepFinishing          StepStatus = "FINISHING"
	StepDisabled           StepStatus = "DISABLED"
	StepUnsatisfied        StepStatus = "UNSATISFIED" // no incoming edge was taken
	StepSkipped            StepStatus = "SKIPPED"
	StepSucceeded          StepStatus = "SUCCEEDED"
	StepCompletedWithError StepStatus = "COMPLETED_WITH_ERROR" // failed with IGNORE_FAILURE
	StepUserFailed         StepStatus = "USER_FAILED"          // retried per error_retry_limit
	StepPlatformFailed     StepStatus = "PLATFORM_FAILED"      // retried per platform_retry_limit
	StepFatallyFailed      StepStatus = "FATALLY_FAILED"       // fails the workflow
	StepInternallyFailed   StepStatus = "INTERNALLY_FAILED"    // no retry; ignores the failure mode
	StepStopped            StepStatus = "STOPPED"
	StepTimeoutFailed      StepStatus = "TIMEOUT_FAILED" // retried per timeout_retry_limit
	StepTimedOut           StepStatus = "TIMED_OUT"
)

// StepStatuses lists every step status.
func StepStatuses() []StepStatus {
	return []StepStatus{
		StepNotCreated, StepCreated, StepInitialized, StepPaused, StepWaitingForSignals,
		StepEvaluatingParams, StepWaitingForPermits, StepStarting, StepRunning, StepFinishing,
		StepDisabled, StepUnsatisfied, StepSkipped, StepSucceeded, StepCompletedWithError,
		StepUserFailed, StepPlatformFailed, StepFatallyFailed, StepInternallyFailed,
		StepStopped, StepTimeoutFailed, StepTimedOut,
	}
}

// stepFlags holds the four flags Maestro attaches to each step status.
type stepFlags struct {
	terminal, complete, overview, retryable bool
}

// flags returns the flags of s; unknown statuses have none set.
func (s StepStatus) flags() stepFlags {
	switch s {
	case StepPaused, StepWaitingForSignals, StepEvaluatingParams, StepWaitingForPermits, StepRunning:
		return stepFlags{overview: true}
	case StepDisabled, StepUnsatisfied, StepSkipped, StepSucceeded, StepCompletedWithError:
		return stepFlags{terminal: true, complete: true}
	case StepUserFailed, StepPlatformFailed, StepTimeoutFailed:
		return stepFlags{terminal: true, overview: true, retryable: true}
	case StepFatallyFailed, StepInternallyFailed:
		return stepFlags{terminal: true, overview: true}
	case StepStopped, StepTimedOut:
		return stepFlags{terminal: true}
	}
	return stepFlags{}
}

// Valid reports whether s is a known step status.
func (s StepStatus) Valid() bool {
	return slices.Contains(StepStatuses(), s)
}

// IsTerminal reports whether the attempt has ended.
func (s StepStatus) IsTerminal() bool { return s.flags().terminal }

// IsComplete reports whether the step is done for good and lets the DAG go
// on: DISABLED, UNSATISFIED, SKIPPED, SUCCEEDED, COMPLETED_WITH_ERROR.
func (s StepStatus) IsComplete() bool { return s.flags().complete }

// IsOverview reports whether the status is kept in the instance's rollup
// overview.
func (s StepStatus) IsOverview() bool { return s.flags().overview }

// IsRetryable reports whether the failure is retried automatically:
// USER_FAILED, PLATFORM_FAILED and TIMEOUT_FAILED.
func (s StepStatus) IsRetryable() bool { return s.flags().retryable }

// IsRestartable reports whether the step can be restarted by a user:
// terminal, not complete and not retryable.
func (s StepStatus) IsRestartable() bool {
	f := s.flags()
	return f.terminal && !f.complete && !f.retryable
}

// ShouldWakeup reports whether the step still needs the engine's attention:
// not terminal, or failed and about to be retried.
func (s StepStatus) ShouldWakeup() bool {
	f := s.flags()
	return !f.terminal || f.retryable
}

// StepAction is an action on a step instance.
type StepAction string

// Step instance actions.
const (
	StepActionPause                  StepAction = "PAUSE"
	StepActionResume                 StepAction = "RESUME"
	StepActionBypassStepDependencies StepAction = "BYPASS_STEP_DEPENDENCIES"
	StepActionStop                   StepAction = "STOP"
	StepActionTimeOut                StepAction = "TIME_OUT" // internal: a timeout, never user-requested
	StepActionKill                   StepAction = "KILL"
	StepActionSkip                   StepAction = "SKIP"
	StepActionRestart                StepAction = "RESTART"
)

// StepActions lists every step action.
func StepActions() []StepAction {
	return []StepAction{
		StepActionPause, StepActionResume, StepActionBypassStepDependencies, StepActionStop,
		StepActionTimeOut, StepActionKill, StepActionSkip, StepActionRestart,
	}
}

// AllowedStepActions returns the actions a step in status s accepts, in
// Maestro's order. NOT_CREATED and unknown statuses allow nothing.
func AllowedStepActions(s StepStatus) []StepAction {
	switch s {
	case StepCreated:
		return []StepAction{StepActionPause, StepActionStop, StepActionKill}
	case StepInitialized:
		return []StepAction{StepActionPause, StepActionStop, StepActionKill, StepActionSkip}
	case StepPaused:
		return []StepAction{StepActionResume, StepActionStop, StepActionKill, StepActionSkip}
	case StepWaitingForSignals:
		return []StepAction{StepActionStop, StepActionKill, StepActionSkip, StepActionBypassStepDependencies}
	case StepEvaluatingParams, StepWaitingForPermits, StepStarting, StepRunning, StepFinishing,
		StepUserFailed, StepPlatformFailed, StepTimeoutFailed:
		return []StepAction{StepActionStop, StepActionKill, StepActionSkip}
	case StepDisabled, StepUnsatisfied:
		return []StepAction{StepActionRestart}
	case StepSkipped, StepSucceeded, StepCompletedWithError, StepFatallyFailed,
		StepInternallyFailed, StepStopped, StepTimedOut:
		return []StepAction{StepActionRestart, StepActionSkip}
	}
	return nil
}

// StepActionResult returns the status a step takes when action a is applied:
// PAUSE -> PAUSED, RESUME -> WAITING_FOR_SIGNALS, BYPASS_STEP_DEPENDENCIES ->
// EVALUATING_PARAMS, STOP -> STOPPED, TIME_OUT -> TIMED_OUT, KILL ->
// FATALLY_FAILED, SKIP -> SKIPPED, RESTART -> CREATED. It returns "" for an
// unknown action.
func StepActionResult(a StepAction) StepStatus {
	switch a {
	case StepActionPause:
		return StepPaused
	case StepActionResume:
		return StepWaitingForSignals
	case StepActionBypassStepDependencies:
		return StepEvaluatingParams
	case StepActionStop:
		return StepStopped
	case StepActionTimeOut:
		return StepTimedOut
	case StepActionKill:
		return StepFatallyFailed
	case StepActionSkip:
		return StepSkipped
	case StepActionRestart:
		return StepCreated
	}
	return ""
}

// UsesUpstream reports Maestro's usingUpstream flag of the action: true for
// the terminating actions (STOP, TIME_OUT, KILL, SKIP), whose resulting status
// is terminal and which end the step rather than move it along its lifecycle.
func (a StepAction) UsesUpstream() bool {
	switch a {
	case StepActionStop, StepActionTimeOut, StepActionKill, StepActionSkip:
		return true
	}
	return false
}

// RunPolicy says how a workflow run was started; it is visible to
// expressions as params.getFromInstance('RUN_POLICY').
type RunPolicy string

// Run policies.
const (
	StartFreshNewRun      RunPolicy = "START_FRESH_NEW_RUN"  // a normal start
	StartCustomizedRun    RunPolicy = "START_CUSTOMIZED_RUN" // a start with run params
	RestartFromIncomplete RunPolicy = "RESTART_FROM_INCOMPLETE"
	RestartFromBeginning  RunPolicy = "RESTART_FROM_BEGINNING"
	RestartFromSpecific   RunPolicy = "RESTART_FROM_SPECIFIC" // a step restart
	RestartCustomizedRun  RunPolicy = "RESTART_CUSTOMIZED_RUN"
)

// RunPolicies lists every run policy.
func RunPolicies() []RunPolicy {
	return []RunPolicy{
		StartFreshNewRun, StartCustomizedRun, RestartFromIncomplete,
		RestartFromBeginning, RestartFromSpecific, RestartCustomizedRun,
	}
}

// IsFreshRun reports whether the policy starts a new instance.
func (p RunPolicy) IsFreshRun() bool {
	return p == StartFreshNewRun || p == StartCustomizedRun
}

// IsRestart reports whether the policy restarts an existing instance.
func (p RunPolicy) IsRestart() bool {
	switch p {
	case RestartFromIncomplete, RestartFromBeginning, RestartFromSpecific, RestartCustomizedRun:
		return true
	}
	return false
}

// ParseRunPolicy returns the canonical run policy for s, matched case-insensitively.
func ParseRunPolicy(s string) (RunPolicy, bool) { return canonical(s, RunPolicies()...) }

// ParseWorkflowStatus returns the canonical workflow status for s.
func ParseWorkflowStatus(s string) (WorkflowStatus, bool) {
	return canonical(s, WorkflowStatuses()...)
}

// ParseStepStatus returns the canonical step status for s.
func ParseStepStatus(s string) (StepStatus, bool) { return canonical(s, StepStatuses()...) }

// ParseWorkflowAction returns the canonical workflow action for s.
func ParseWorkflowAction(s string) (WorkflowAction, bool) {
	return canonical(s, WorkflowActions()...)
}

// ParseStepAction returns the canonical step action for s.
func ParseStepAction(s string) (StepAction, bool) { return canonical(s, StepActions()...) }

// RestartPolicy is the restart mode a restart request asks for.
type RestartPolicy string

// Restart policies accepted by the restart APIs; RESTART_FROM_INCOMPLETE is the default.
const (
	RestartPolicyFromIncomplete RestartPolicy = "RESTART_FROM_INCOMPLETE"
	RestartPolicyFromBeginning  RestartPolicy = "RESTART_FROM_BEGINNING"
)

// UpstreamRestartMode says where a step restart inside a foreach/while starts.
type UpstreamRestartMode string

// Upstream restart modes; RESTART_FROM_STEP is the default.
const (
	RestartFromInlineRoot UpstreamRestartMode = "RESTART_FROM_INLINE_ROOT"
	RestartFromStep       UpstreamRestartMode = "RESTART_FROM_STEP"
)
