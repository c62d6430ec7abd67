package model

import (
	"reflect"
	"testing"
)

func TestWorkflowStatuses(t *testing.T) {
	tests := []struct {
		status   WorkflowStatus
		terminal bool
		actions  []WorkflowAction
	}{
		{WorkflowCreated, false, []WorkflowAction{WorkflowActionStop, WorkflowActionKill}},
		{WorkflowInProgress, false, []WorkflowAction{WorkflowActionStop, WorkflowActionKill}},
		{WorkflowPaused, false, []WorkflowAction{WorkflowActionStop, WorkflowActionKill}},
		{WorkflowTimedOut, true, []WorkflowAction{WorkflowActionRestart}},
		{WorkflowStopped, true, []WorkflowAction{WorkflowActionRestart}},
		{WorkflowFailed, true, []WorkflowAction{WorkflowActionRestart, WorkflowActionUnblock}},
		{WorkflowSucceeded, true, []WorkflowAction{WorkflowActionRestart}},
	}
	if len(tests) != len(WorkflowStatuses()) {
		t.Fatalf("table covers %d statuses, there are %d", len(tests), len(WorkflowStatuses()))
	}
	for i, tt := range tests {
		if WorkflowStatuses()[i] != tt.status || !tt.status.Valid() {
			t.Errorf("status %d: %q", i, tt.status)
		}
		if tt.status.IsTerminal() != tt.terminal {
			t.Errorf("%s.IsTerminal() = %v", tt.status, !tt.terminal)
		}
		if got := AllowedWorkflowActions(tt.status); !reflect.DeepEqual(got, tt.actions) {
			t.Errorf("AllowedWorkflowActions(%s) = %v, want %v", tt.status, got, tt.actions)
		}
	}
	if AllowedWorkflowActions("FAILED_1") != nil || WorkflowStatus("DONE").Valid() {
		t.Error("unknown statuses allow nothing and are not valid")
	}
	results := map[WorkflowAction]WorkflowStatus{
		WorkflowActionStop: WorkflowStopped, WorkflowActionKill: WorkflowFailed,
		WorkflowActionRestart: WorkflowCreated, WorkflowActionUnblock: WorkflowInProgress, "PAUSE": "",
	}
	for a, want := range results {
		if got := WorkflowActionResult(a); got != want {
			t.Errorf("WorkflowActionResult(%s) = %q, want %q", a, got, want)
		}
	}
}

func TestStepStatuses(t *testing.T) {
	const (
		pause  = StepActionPause
		resume = StepActionResume
		stop   = StepActionStop
		kill   = StepActionKill
		skip   = StepActionSkip
		bypass = StepActionBypassStepDependencies
		rst    = StepActionRestart
	)
	tests := []struct {
		status                                  StepStatus
		terminal, complete, overview, retryable bool
		actions                                 []StepAction
	}{
		{StepNotCreated, false, false, false, false, nil},
		{StepCreated, false, false, false, false, []StepAction{pause, stop, kill}},
		{StepInitialized, false, false, false, false, []StepAction{pause, stop, kill, skip}},
		{StepPaused, false, false, true, false, []StepAction{resume, stop, kill, skip}},
		{StepWaitingForSignals, false, false, true, false, []StepAction{stop, kill, skip, bypass}},
		{StepEvaluatingParams, false, false, true, false, []StepAction{stop, kill, skip}},
		{StepWaitingForPermits, false, false, true, false, []StepAction{stop, kill, skip}},
		{StepStarting, false, false, false, false, []StepAction{stop, kill, skip}},
		{StepRunning, false, false, true, false, []StepAction{stop, kill, skip}},
		{StepFinishing, false, false, false, false, []StepAction{stop, kill, skip}},
		{StepDisabled, true, true, false, false, []StepAction{rst}},
		{StepUnsatisfied, true, true, false, false, []StepAction{rst}},
		{StepSkipped, true, true, false, false, []StepAction{rst, skip}},
		{StepSucceeded, true, true, false, false, []StepAction{rst, skip}},
		{StepCompletedWithError, true, true, false, false, []StepAction{rst, skip}},
		{StepUserFailed, true, false, true, true, []StepAction{stop, kill, skip}},
		{StepPlatformFailed, true, false, true, true, []StepAction{stop, kill, skip}},
		{StepFatallyFailed, true, false, true, false, []StepAction{rst, skip}},
		{StepInternallyFailed, true, false, true, false, []StepAction{rst, skip}},
		{StepStopped, true, false, false, false, []StepAction{rst, skip}},
		{StepTimeoutFailed, true, false, true, true, []StepAction{stop, kill, skip}},
		{StepTimedOut, true, false, false, false, []StepAction{rst, skip}},
	}
	if len(tests) != len(StepStatuses()) {
		t.Fatalf("table covers %d statuses, there are %d", len(tests), len(StepStatuses()))
	}
	for i, tt := range tests {
		s := tt.status
		if StepStatuses()[i] != s || !s.Valid() {
			t.Errorf("status %d: %q", i, s)
		}
		got := [4]bool{s.IsTerminal(), s.IsComplete(), s.IsOverview(), s.IsRetryable()}
		if want := [4]bool{tt.terminal, tt.complete, tt.overview, tt.retryable}; got != want {
			t.Errorf("%s flags (terminal, complete, overview, retryable) = %v, want %v", s, got, want)
		}
		if want := tt.terminal && !tt.complete && !tt.retryable; s.IsRestartable() != want {
			t.Errorf("%s.IsRestartable() = %v, want %v", s, !want, want)
		}
		if want := !tt.terminal || tt.retryable; s.ShouldWakeup() != want {
			t.Errorf("%s.ShouldWakeup() = %v, want %v", s, !want, want)
		}
		if got := AllowedStepActions(s); !reflect.DeepEqual(got, tt.actions) {
			t.Errorf("AllowedStepActions(%s) = %v, want %v", s, got, tt.actions)
		}
	}
	// The derived flags, spelled out for the statuses where they matter.
	for _, s := range []StepStatus{StepFatallyFailed, StepInternallyFailed, StepStopped, StepTimedOut} {
		if !s.IsRestartable() {
			t.Errorf("%s must be restartable", s)
		}
	}
	for _, s := range []StepStatus{StepUserFailed, StepSucceeded, StepRunning} {
		if s.IsRestartable() {
			t.Errorf("%s must not be restartable", s)
		}
	}
	if StepStatus("BOGUS").Valid() || AllowedStepActions("BOGUS") != nil || StepStatus("BOGUS").IsTerminal() {
		t.Error("unknown step status")
	}
}

func TestStepActionResults(t *testing.T) {
	tests := []struct {
		action   StepAction
		result   StepStatus
		upstream bool
	}{
		{StepActionPause, StepPaused, false},
		{StepActionResume, StepWaitingForSignals, false},
		{StepActionBypassStepDependencies, StepEvaluatingParams, false},
		{StepActionStop, StepStopped, true},
		{StepActionTimeOut, StepTimedOut, true},
		{StepActionKill, StepFatallyFailed, true},
		{StepActionSkip, StepSkipped, true},
		{StepActionRestart, StepCreated, false},
	}
	if len(tests) != len(StepActions()) {
		t.Fatalf("table covers %d actions, there are %d", len(tests), len(StepActions()))
	}
	for _, tt := range tests {
		if got := StepActionResult(tt.action); got != tt.result {
			t.Errorf("StepActionResult(%s) = %s, want %s", tt.action, got, tt.result)
		}
		if tt.action.UsesUpstream() != tt.upstream {
			t.Errorf("%s.UsesUpstream() = %v", tt.action, !tt.upstream)
		}
		// Terminating actions lead to terminal statuses, the others do not.
		if StepActionResult(tt.action).IsTerminal() != tt.upstream {
			t.Errorf("%s: result terminal = %v", tt.action, !tt.upstream)
		}
	}
	if StepActionResult("UNBLOCK") != "" {
		t.Error("unknown action")
	}
}

func TestRunPolicies(t *testing.T) {
	fresh := map[RunPolicy]bool{
		StartFreshNewRun: true, StartCustomizedRun: true, RestartFromIncomplete: false,
		RestartFromBeginning: false, RestartFromSpecific: false, RestartCustomizedRun: false,
	}
	if len(fresh) != len(RunPolicies()) {
		t.Fatal("table does not cover every policy")
	}
	for _, p := range RunPolicies() {
		if p.IsFreshRun() != fresh[p] || p.IsRestart() == fresh[p] {
			t.Errorf("%s: fresh %v restart %v", p, p.IsFreshRun(), p.IsRestart())
		}
	}
	if RunPolicy("X").IsRestart() || RunPolicy("X").IsFreshRun() {
		t.Error("unknown policy")
	}
}

func TestParseStatusNames(t *testing.T) {
	if s, ok := ParseStepStatus("waiting_for_signals"); !ok || s != StepWaitingForSignals {
		t.Errorf("ParseStepStatus = %q, %v", s, ok)
	}
	if s, ok := ParseWorkflowStatus("In_Progress"); !ok || s != WorkflowInProgress {
		t.Errorf("ParseWorkflowStatus = %q, %v", s, ok)
	}
	if a, ok := ParseStepAction("bypass_step_dependencies"); !ok || a != StepActionBypassStepDependencies {
		t.Errorf("ParseStepAction = %q, %v", a, ok)
	}
	if a, ok := ParseWorkflowAction("unblock"); !ok || a != WorkflowActionUnblock {
		t.Errorf("ParseWorkflowAction = %q, %v", a, ok)
	}
	if p, ok := ParseRunPolicy("restart_from_beginning"); !ok || p != RestartFromBeginning {
		t.Errorf("ParseRunPolicy = %q, %v", p, ok)
	}
	if _, ok := ParseStepStatus("nope"); ok {
		t.Error("unknown name accepted")
	}
}
