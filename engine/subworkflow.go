package engine

import (
	"fmt"

	"github.com/maestro-serverless/maestro/model"
)

// A subworkflow step starts an instance of another workflow — a real one,
// with its own instance id, run strategy and views — and, with sync (the
// default), follows it to its end: Maestro's SubworkflowStepRuntime. The
// engine asks for the child with a StartSubworkflow command carrying a
// request id derived from the step attempt, so however often the command
// is sent (a redelivery, a re-drive) one child is created per parent
// attempt. Whoever starts it reports ChildStarted (the child's identity,
// or why it could not start) into the parent's inbox; the child's
// terminal commit reports ChildEnded, as an iteration does. Nesting of
// subworkflow, foreach and while is bounded by model.WorkflowDepthLimit,
// which also stops a workflow that calls itself.

// Subworkflow step params.
const (
	SubworkflowIDName      = "subworkflow_id"
	SubworkflowVersionName = "subworkflow_version"
	// DefaultSubworkflowVersion selects the child workflow's active
	// version.
	DefaultSubworkflowVersion = "active"
)

func isSubworkflow(s *model.Step) bool { return s.Kind == model.KindSubworkflow }

// ChildRef names the instance a subworkflow step attempt started.
type ChildRef struct {
	WorkflowID string `json:"subworkflow_id"`
	InstanceID int64  `json:"subworkflow_instance_id"`
	RunID      int64  `json:"subworkflow_run_id"`
	Version    int64  `json:"subworkflow_version_id"`
	UUID       string `json:"subworkflow_uuid,omitempty"`
	// Ended is set once the step no longer follows the child: it
	// reported its end, or the step does not wait for it (sync false).
	// A step that ends before sets stops the child.
	Ended bool `json:"ended,omitempty"`
	// Rollup is the child's rollup, once it reported its end.
	Rollup *Rollup `json:"rollup,omitempty"`
}

// KindStartSubworkflow is the kind of a StartSubworkflow command.
const KindStartSubworkflow CommandKind = "start_subworkflow"

// StartSubworkflow asks for an instance of workflow WorkflowID (Version:
// "active", "latest" or a number) to be started with Params as its run
// params and Parent as its parent, idempotently under RequestID, and for
// the outcome to be reported to the parent as a ChildStarted event.
type StartSubworkflow struct {
	StepID     string    `json:"step_id"`
	Attempt    int64     `json:"step_attempt_id"`
	WorkflowID string    `json:"subworkflow_id"`
	Version    string    `json:"subworkflow_version"`
	RequestID  string    `json:"request_id"`
	Params     Values    `json:"params,omitempty"`
	Parent     ParentRef `json:"parent"`
	// Restart, on a subworkflow step of a run restarted from incomplete
	// whose previous child did not succeed, names that child: it is
	// restarted from incomplete (a new run of the same instance) instead
	// of a new instance being started.
	Restart *ChildRef `json:"restart,omitempty"`
}

// Kind returns KindStartSubworkflow.
func (StartSubworkflow) Kind() CommandKind { return KindStartSubworkflow }

func (StartSubworkflow) isCommand() {}

// MarshalJSON writes the command with its "kind".
func (c StartSubworkflow) MarshalJSON() ([]byte, error) {
	type plain StartSubworkflow
	return withKind(c.Kind(), plain(c))
}

// KindChildStarted is the kind of a ChildStarted event.
const KindChildStarted EventKind = "child_started"

// ChildStarted reports the instance a StartSubworkflow command started —
// or, with Error, why none could be (no such workflow or version, run
// params the child rejects): the step then fails with that message.
type ChildStarted struct {
	StepID  string   `json:"step_id"`
	Attempt int64    `json:"step_attempt_id"`
	Child   ChildRef `json:"child"`
	Error   string   `json:"error,omitempty"`
}

// Kind returns KindChildStarted.
func (ChildStarted) Kind() EventKind { return KindChildStarted }

func (ChildStarted) isEvent() {}

// MarshalJSON writes the event with its "kind".
func (e ChildStarted) MarshalJSON() ([]byte, error) {
	type plain ChildStarted
	return withKind(e.Kind(), plain(e))
}

// SubworkflowRequestID is the start request id of the child of a step
// attempt: the step attempt's uuid, the same however often it is asked for.
func SubworkflowRequestID(st *Instance, stepID string, attempt int64) string {
	return "subworkflow-" + stepUUID(st.UUID, stepID, attempt)
}

// startSubworkflow begins subworkflow step i, which has just reached
// RUNNING.
func (d *decider) startSubworkflow(i int) {
	c, err := d.subworkflowCommand(i)
	if err != nil {
		d.fail(i, model.StepFatallyFailed, "subworkflow: "+err.Error())
		return
	}
	d.out.Commands = append(d.out.Commands, c)
}

// subworkflowCommand is the start of subworkflow step i's child: the
// workflow and version its params name, the depth check, and the run
// params — every workflow param (identity aside) unless explicit_params,
// then the step's own params, subworkflow_id and subworkflow_version
// aside, as Maestro passes them.
func (d *decider) subworkflowCommand(i int) (StartSubworkflow, error) {
	s := &d.st.Steps[i]
	step := d.g.nodes[i].step
	if d.st.Parent != nil && d.st.Parent.Depth >= model.WorkflowDepthLimit {
		return StartSubworkflow{}, fmt.Errorf("nesting deeper than the limit of %d levels (a workflow that starts itself?)", model.WorkflowDepthLimit)
	}
	wf, _ := s.Params[SubworkflowIDName].(string)
	if wf == "" {
		return StartSubworkflow{}, fmt.Errorf("param %s must name a workflow (a non-empty STRING)", SubworkflowIDName)
	}
	version := DefaultSubworkflowVersion
	if v, ok := s.Params[SubworkflowVersionName]; ok {
		str, isStr := v.(string)
		if !isStr {
			return StartSubworkflow{}, fmt.Errorf("param %s is %T, want a STRING (active, latest or a version number)", SubworkflowVersionName, v)
		}
		if str != "" {
			version = str
		}
	}
	out := d.passedDown(i, step.ExplicitParams == nil || !*step.ExplicitParams)
	delete(out, SubworkflowIDName)
	delete(out, SubworkflowVersionName)
	p := d.childParent(i)
	p.Subworkflow = true
	p.Async = step.Sync != nil && !*step.Sync
	c := StartSubworkflow{
		StepID: s.StepID, Attempt: s.Attempt, WorkflowID: wf, Version: version,
		RequestID: SubworkflowRequestID(d.st, s.StepID, s.Attempt), Params: out, Parent: p,
	}
	if r := s.RedoChild; r != nil && r.WorkflowID == wf {
		c.Restart = &ChildRef{WorkflowID: r.WorkflowID, InstanceID: r.InstanceID, RunID: r.RunID, Version: r.Version, UUID: r.UUID}
	}
	return c, nil
}

// childStarted applies a subworkflow step attempt's start report. A report
// for an attempt that has ended meanwhile stops the child it names.
func (d *decider) childStarted(e ChildStarted) error {
	i, ok, err := d.current(e.StepID, e.Attempt)
	if err != nil {
		return err
	}
	if !ok {
		known := false
		if k := d.g.index[e.StepID]; k < len(d.st.Steps) {
			s := &d.st.Steps[k]
			known = s.Attempt == e.Attempt && s.Child != nil && s.Child.InstanceID == e.Child.InstanceID
		}
		if !known && e.Error == "" && e.Child.InstanceID > 0 {
			d.out.Commands = append(d.out.Commands, StopChild{
				WorkflowID: e.Child.WorkflowID, InstanceID: e.Child.InstanceID, Action: string(model.WorkflowActionStop),
				Reason: fmt.Sprintf("its subworkflow step %q attempt %d, which ended before it started", e.StepID, e.Attempt),
			})
		}
		// A duplicate report of the step's own child, or a late one:
		// the attempt or the run ended before its child was known, so
		// nothing follows the child and it is stopped.
		return nil
	}
	if d.st.Steps[i].Child != nil {
		return nil // a duplicate
	}
	d.startCounting()
	s := &d.st.Steps[i]
	if e.Error != "" {
		d.fail(i, model.StepFatallyFailed, "subworkflow: "+e.Error)
		return d.advance()
	}
	child := e.Child
	s.Child, s.RedoChild = &child, nil
	step := d.g.nodes[i].step
	if step.Sync != nil && !*step.Sync {
		s.Child.Ended = true
		d.succeed(i, fmt.Sprintf("subworkflow: started %s instance %d (sync false: not followed)", child.WorkflowID, child.InstanceID))
		return d.advance()
	}
	d.out.Timeline = append(d.out.Timeline, TimelineEntry{
		Time: d.now, StepID: s.StepID, Attempt: s.Attempt, Status: string(s.Status),
		Message: fmt.Sprintf("subworkflow: started %s version %d instance %d", child.WorkflowID, child.Version, child.InstanceID),
	})
	return d.advance()
}

// subworkflowEnded applies the end of subworkflow step i's child: the
// step ends as the child did (FAILED fails it, without retry, as in
// Maestro).
func (d *decider) subworkflowEnded(i int, e ChildEnded) error {
	s := &d.st.Steps[i]
	if s.Child == nil && e.Child != nil {
		// The child ended before its start was reported (it ran inline
		// in the start request): its report names it.
		c := *e.Child
		s.Child = &c
	}
	if s.Child == nil || s.Child.Ended {
		return nil
	}
	d.startCounting()
	s.Child.Ended = true
	d.st.Cost = d.st.Cost.Add(e.Cost)
	s.Child.Rollup = e.Rollup.clone()
	if err := d.checkLeafLimit(); err != nil || d.st.Status != model.WorkflowInProgress || d.st.Ending != nil {
		return err // the tree grew past its limit: the run is being stopped
	}
	what := fmt.Sprintf("subworkflow %s instance %d", s.Child.WorkflowID, s.Child.InstanceID)
	switch e.Status {
	case model.WorkflowSucceeded:
		d.succeed(i, what+" succeeded")
	case model.WorkflowTimedOut:
		d.endStep(i, model.StepTimedOut, what+" timed out")
	case model.WorkflowStopped:
		d.endStep(i, model.StepStopped, what+" was stopped")
	default:
		d.fail(i, model.StepFatallyFailed, fmt.Sprintf("%s ended %s%s", what, e.Status, orDefault(": "+e.Message, "")))
	}
	return d.advance()
}

// stopSubworkflow queues a stop for the child subworkflow step i follows,
// because the step ends with status to.
func (d *decider) stopSubworkflow(i int, to model.StepStatus) {
	c := d.st.Steps[i].Child
	if c == nil || c.Ended {
		return
	}
	c.Ended = true
	action := string(model.WorkflowActionKill)
	if to == model.StepStopped {
		action = string(model.WorkflowActionStop)
	}
	d.st.ChildStops = append(d.st.ChildStops, ChildStops{
		WorkflowID: c.WorkflowID, Action: action, Indices: []int64{c.InstanceID - 1},
		Reason: fmt.Sprintf("its subworkflow step %q, which ended %s", d.st.Steps[i].StepID, to),
	})
}
