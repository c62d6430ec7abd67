package engine

import (
	"fmt"
	"time"

	"github.com/maestro-serverless/maestro/engine/expression"
	"github.com/maestro-serverless/maestro/model"
)

// Timer purposes of timeouts.
const (
	// PurposeTimeout ends a step attempt that ran longer than its timeout.
	PurposeTimeout TimerPurpose = "timeout"
	// PurposeWorkflowTimeout ends a run that ran longer than the
	// workflow's timeout; its TimerFired has an empty StepID.
	PurposeWorkflowTimeout TimerPurpose = "workflow_timeout"
)

// DefaultTimeoutRetryLimit is Maestro's default timeout_retry_limit.
const DefaultTimeoutRetryLimit = 0

// timeoutOf resolves a timeout: its seconds, or its string form after
// interpolating params ("${base_workflow_timeout}", "${bar}s") and parsing
// it as a duration. ok is false when none is set; err reports a timeout
// that does not resolve to a duration in (0, 120 days].
func (d *decider) timeoutOf(pd *model.ParsableDuration, lookup func(string) (any, bool)) (time.Duration, bool, error) {
	if pd == nil {
		return 0, false, nil
	}
	t := time.Duration(pd.Seconds) * time.Second
	if pd.Expr != "" {
		s, err := expression.Interpolate(pd.Expr, lookup)
		if err != nil {
			return 0, true, fmt.Errorf("timeout %q: %w", pd.Expr, err)
		}
		if t, err = model.ParseDuration(s); err != nil {
			return 0, true, fmt.Errorf("timeout %q = %q: %w", pd.Expr, s, err)
		}
	}
	if t <= 0 || t > model.MaxTimeout {
		return 0, true, fmt.Errorf("timeout %s is outside (0, %s]", t, model.MaxTimeout)
	}
	return t, true, nil
}

// startStepTimeout arms step i's timeout as it starts running: its own, or
// the default (10 days) unless the run's deadline comes first, which then
// bounds the step too. It reports false when the timeout cannot be resolved
// (the step has then failed).
func (d *decider) startStepTimeout(i int) bool {
	t, ok, err := d.stepTimeoutTimer(i, d.now)
	if err != nil {
		d.endStep(i, model.StepFatallyFailed, err.Error())
		return false
	}
	if ok {
		d.out.Commands = append(d.out.Commands, t)
	}
	return true
}

// stepTimeoutTimer is the timeout timer of step i's attempt started at
// from (unix ms); ok is false when it needs none (the default timeout,
// which the run's deadline comes before).
func (d *decider) stepTimeoutTimer(i int, from int64) (StartTimer, bool, error) {
	s := &d.st.Steps[i]
	t, ok, err := d.timeoutOf(d.g.nodes[i].step.Timeout, d.stepLookup(s))
	if err != nil {
		return StartTimer{}, false, err
	}
	if !ok {
		t = model.DefaultTimeout
		if d.st.TimeoutAt != 0 && from+t.Milliseconds() >= d.st.TimeoutAt {
			return StartTimer{}, false, nil
		}
	}
	return StartTimer{
		StepID: s.StepID, Attempt: s.Attempt, Purpose: PurposeTimeout,
		FireAt: time.UnixMilli(from + t.Milliseconds()).UTC(),
	}, true, nil
}

// startWorkflowTimeout sets the run's deadline: the workflow's timeout, or
// the default of 10 days. armWorkflowTimeout starts its timer.
func (d *decider) startWorkflowTimeout() error {
	t, ok, err := d.timeoutOf(d.g.workflow.Timeout, func(name string) (any, bool) {
		v, ok := d.st.Params[name]
		return v, ok
	})
	if err != nil {
		return err
	}
	if !ok {
		t = model.DefaultTimeout
	}
	d.st.TimeoutAt = d.now + t.Milliseconds()
	return nil
}

// armWorkflowTimeout starts the timer of the run's deadline once the
// starting decision is done, and only when the run is still going: a run
// that ended at once needs none.
func (d *decider) armWorkflowTimeout() {
	if d.st.Status != model.WorkflowInProgress || !OwnWorkflowTimer(d.st) {
		return
	}
	d.out.Commands = append(d.out.Commands, StartTimer{
		Purpose: PurposeWorkflowTimeout, FireAt: time.UnixMilli(d.st.TimeoutAt).UTC(),
	})
}

// OwnWorkflowTimer reports whether run st has a timer of its own for its
// deadline (its workflow timeout). An iteration of a foreach or while step
// whose deadline is not earlier than its parent's needs none: the parent's
// workflow timeout fires first and ends the loop step, which stops the
// iteration. (An iteration of the default ten days starts after its
// parent, so its deadline is later: a timer — a schedule created and
// deleted — for each of a million iterations, none of which could ever
// fire first.)
func OwnWorkflowTimer(st *Instance) bool {
	if st.TimeoutAt == 0 {
		return false
	}
	p := st.Parent
	return p == nil || p.Subworkflow || p.Deadline == 0 || st.TimeoutAt < p.Deadline
}

// stepTimedOut fails a step attempt still running when its timeout fires:
// TIMEOUT_FAILED, retried per timeout_retry_limit, then TIMED_OUT.
func (d *decider) stepTimedOut(e TimerFired) error {
	i, ok, err := d.current(e.StepID, e.Attempt)
	if err != nil || !ok {
		return err
	}
	d.startCounting()
	d.fail(i, model.StepTimeoutFailed, "step timed out")
	return d.advance()
}

// workflowTimedOut ends a run still in progress when the workflow's timeout
// fires: every step in flight ends TIMED_OUT, as Maestro's (since 2025-09),
// and so does the instance.
func (d *decider) workflowTimedOut() error {
	if d.st.Status != model.WorkflowInProgress {
		return nil
	}
	msg := "workflow instance timed out"
	return d.endRun(Ending{StepStatus: model.StepTimedOut, StepMessage: msg, RunStatus: model.WorkflowTimedOut, Message: msg})
}
