package engine

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/maestro-serverless/maestro/model"
)

// KindAction tags the JSON form of an Action event.
const KindAction EventKind = "action"

// Action is a user's action on the run (StepID empty: a model.WorkflowAction)
// or on a step's current attempt (a model.StepAction).
type Action struct {
	StepID string `json:"step_id,omitempty"`
	Action string `json:"action"`
	// Principal is the IAM principal whose request it is, recorded in the
	// timeline; empty for actions the system takes (a run strategy's stop).
	Principal string `json:"principal,omitempty"`
	// By, when set, names who acts in the timeline instead of a user: the
	// system acting for a reason (a foreach step stopping its iterations).
	By string `json:"by,omitempty"`
	// FromParent marks a parent's stop of its child run: the parent no
	// longer counts the child, so the child's end is not reported to it.
	FromParent bool `json:"from_parent,omitempty"`
	// Restart, on a RESTART, is what the restart asks of the step (its
	// step run params, a skip); nil asks nothing.
	Restart *StepRestart `json:"restart,omitempty"`
}

// byWhom is how a timeline message names who acted.
func (e Action) byWhom() string {
	if e.By != "" {
		return e.By
	}
	if e.Principal == "" {
		return "a user action"
	}
	return "a user action of " + e.Principal
}

// Kind returns KindAction.
func (Action) Kind() EventKind { return KindAction }

func (Action) isEvent() {}

// MarshalJSON writes the event with its "kind".
func (e Action) MarshalJSON() ([]byte, error) {
	type plain Action
	return withKind(e.Kind(), plain(e))
}

// ErrActionNotAllowed is wrapped by the *ActionError of an action that the
// current status does not allow (Maestro's status -> action table).
var ErrActionNotAllowed = errors.New("action not allowed")

// ErrActionNotSupported is wrapped by the *ActionError of an action the
// table allows but this runtime does not carry out yet.
var ErrActionNotSupported = errors.New("action not supported")

// ActionError says why an action cannot be applied.
type ActionError struct {
	Action string
	// StepID is empty for an action on the instance.
	StepID  string
	Status  string
	Allowed []string
	// Reason, when set, says why an action the table allows cannot apply.
	Reason string
	err    error
}

func (e *ActionError) Error() string {
	target := "workflow instance"
	if e.StepID != "" {
		target = fmt.Sprintf("step %q", e.StepID)
	}
	if errors.Is(e.err, ErrActionNotSupported) {
		return fmt.Sprintf("action %s on %s (status %s) is not supported by this runtime yet", e.Action, target, e.Status)
	}
	if e.Reason != "" {
		return fmt.Sprintf("action %s is not allowed on %s in status %s: %s", e.Action, target, e.Status, e.Reason)
	}
	allowed := "none"
	if len(e.Allowed) > 0 {
		allowed = strings.Join(e.Allowed, ", ")
	}
	return fmt.Sprintf("action %s is not allowed on %s in status %s (allowed: %s)", e.Action, target, e.Status, allowed)
}

// Unwrap returns ErrActionNotAllowed or ErrActionNotSupported.
func (e *ActionError) Unwrap() error { return e.err }

// Actions this runtime carries out.
var (
	supportedWorkflowActions = []model.WorkflowAction{model.WorkflowActionStop, model.WorkflowActionKill}
	supportedStepActions     = []model.StepAction{model.StepActionStop, model.StepActionKill, model.StepActionSkip, model.StepActionResume, model.StepActionRestart, model.StepActionBypassStepDependencies}
)

// CheckAction reports whether action may be applied to the run (stepID
// empty) or to step stepID's current attempt in state st: nil, an
// *ActionError wrapping ErrActionNotAllowed (the status does not allow it)
// or ErrActionNotSupported, or another error for an unknown step or action.
func CheckAction(st *Instance, stepID, action string) error {
	if stepID == "" {
		a, ok := model.ParseWorkflowAction(action)
		if !ok {
			return fmt.Errorf("unknown workflow action %q", action)
		}
		allowed := model.AllowedWorkflowActions(st.Status)
		if !slices.Contains(allowed, a) {
			return &ActionError{Action: string(a), Status: string(st.Status), Allowed: names(allowed), err: ErrActionNotAllowed}
		}
		if !slices.Contains(supportedWorkflowActions, a) {
			return &ActionError{Action: string(a), Status: string(st.Status), err: ErrActionNotSupported}
		}
		return nil
	}
	a, ok := model.ParseStepAction(action)
	if !ok || a == model.StepActionTimeOut {
		return fmt.Errorf("unknown step action %q", action)
	}
	s := st.Step(stepID)
	if s == nil {
		return fmt.Errorf("unknown step %q", stepID)
	}
	status := s.Status
	if status == "" {
		status = model.StepNotCreated
	}
	allowed := model.AllowedStepActions(status)
	if !slices.Contains(allowed, a) {
		return &ActionError{Action: string(a), StepID: stepID, Status: string(status), Allowed: names(allowed), err: ErrActionNotAllowed}
	}
	// RESTART applies to a step that has ended, in a run in progress (the
	// restart of an ended run is a new run: see RestartFromStep). The other
	// actions apply to a step in flight; on a step that already ended,
	// Maestro restarts it first, which this runtime does not do.
	inFlight := st.Status == model.WorkflowInProgress && !s.settled()
	if a == model.StepActionRestart {
		inFlight = st.Status == model.WorkflowInProgress && s.settled()
	}
	if !slices.Contains(supportedStepActions, a) || !inFlight {
		return &ActionError{Action: string(a), StepID: stepID, Status: string(status), err: ErrActionNotSupported}
	}
	return nil
}

func names[T ~string](xs []T) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = string(x)
	}
	return out
}

// act applies an Action. An action the state no longer allows (a race with
// the run moving on) changes nothing.
func (d *decider) act(e Action) error {
	if err := CheckAction(d.st, e.StepID, e.Action); err != nil {
		var ae *ActionError
		if errors.As(err, &ae) {
			return nil
		}
		return err
	}
	if e.StepID == "" {
		if e.FromParent {
			d.st.ParentGone = true
		}
		return d.actOnInstance(model.WorkflowAction(strings.ToUpper(e.Action)), e.byWhom())
	}
	if err := d.checkSteps(); err != nil {
		return err
	}
	i := d.g.index[e.StepID]
	s := &d.st.Steps[i]
	if model.StepAction(strings.ToUpper(e.Action)) == model.StepActionRestart {
		return d.restartStep(i, e.Restart)
	}
	d.startCounting()
	s.RetryAt = 0
	switch model.StepAction(strings.ToUpper(e.Action)) {
	case model.StepActionStop:
		d.endStep(i, model.StepStopped, "stopped by "+e.byWhom())
	case model.StepActionKill:
		d.endStep(i, model.StepFatallyFailed, "killed by "+e.byWhom())
	case model.StepActionSkip:
		d.endStep(i, model.StepSkipped, "skipped by "+e.byWhom())
	case model.StepActionResume:
		d.resumePaused(i)
	case model.StepActionBypassStepDependencies:
		d.bypassSignals(i)
	}
	return d.advance()
}

// actOnInstance stops (STOPPED) or kills (FAILED) the run: every step in
// flight ends with the action's step status.
func (d *decider) actOnInstance(a model.WorkflowAction, byWhom string) error {
	stepStatus, runStatus := model.StepStopped, model.WorkflowStopped
	if a == model.WorkflowActionKill {
		stepStatus, runStatus = model.StepFatallyFailed, model.WorkflowFailed
	}
	msg := fmt.Sprintf("workflow instance %s by %s", strings.ToLower(string(runStatus)), byWhom)
	return d.endRun(Ending{StepStatus: stepStatus, StepMessage: msg, RunStatus: runStatus, Message: msg})
}

// endRun ends the run early: every step in flight ends as e says, then the
// run. With more steps in flight than WithMaxEnds allows, it ends them over
// several decisions (see continueEnding).
func (d *decider) endRun(e Ending) error {
	d.st.Ending = &e
	return d.continueEnding()
}

// continueEnding ends the steps still in flight of a run being ended, at
// most maxEnds of them in this decision, and the run once none is left.
func (d *decider) continueEnding() error {
	e := d.st.Ending
	for j := range d.st.Steps {
		s := &d.st.Steps[j]
		if s.Status == model.StepNotCreated || s.Status == "" || s.settled() {
			continue
		}
		if d.maxEnds > 0 && d.ends >= d.maxEnds {
			d.out.Continue = true
			return nil
		}
		d.ends++
		s.RetryAt = 0
		s.Message = e.StepMessage
		d.setStepStatus(j, e.StepStatus, e.StepMessage)
	}
	d.st.Ending = nil
	d.st.Message = e.Message
	d.setInstanceStatus(e.RunStatus, e.Message)
	d.out.Commands = append(d.out.Commands, InstanceDone{Status: e.RunStatus})
	return nil
}
