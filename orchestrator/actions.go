package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/maestro-serverless/maestro/caller"
	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/events"
	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/store"
	"github.com/maestro-serverless/maestro/trace"
)

// ActOnInstance applies a workflow action to a run.
func (o *Actions) ActOnInstance(ctx context.Context, wf string, inst, run int64, action string) (*InstanceView, error) {
	return o.act(ctx, wf, inst, run, "", action)
}

// ActOnStep applies a step action to a step's current attempt.
func (o *Actions) ActOnStep(ctx context.Context, wf string, inst int64, step, action string) (*InstanceView, error) {
	if strings.EqualFold(action, string(model.StepActionSkip)) {
		if v, done, err := skipEnded(ctx, o, o.now(), wf, inst, step); done {
			return v, err
		}
	}
	return o.act(ctx, wf, inst, 0, step, action)
}

// act checks the action against the run's current state (so a disallowed
// one is refused at once, naming the status), records it as an event of
// the run and decides it inline. The engine checks it again when it
// applies it: a run that moved on in between simply ignores it.
func (o *Actions) act(ctx context.Context, wf string, inst, run int64, step, action string) (*InstanceView, error) {
	return o.actWith(ctx, wf, inst, run, step, action, nil)
}

// actWith is act with what a RESTART asks of the step (restartstep.go).
func (o *Actions) actWith(ctx context.Context, wf string, inst, run int64, step, action string, restart *engine.StepRestart) (*InstanceView, error) {
	rec, st, err := o.runState(ctx, wf, inst, run)
	if err != nil {
		return nil, err
	}
	run = st.RunID
	if step == "" && strings.EqualFold(action, string(model.WorkflowActionUnblock)) {
		return o.unblock(ctx, rec, st)
	}
	if err := engine.CheckAction(st, step, action); err != nil {
		var ae *engine.ActionError
		switch {
		case errors.As(err, &ae):
			return nil, &Error{Status: http.StatusConflict, Message: err.Error()}
		case step != "" && st.Step(step) == nil:
			return nil, NotFound("workflow %s instance %d has no step %s", wf, inst, step)
		default:
			return nil, Invalid("bad action", "action: "+err.Error())
		}
	}
	ev := store.Event{ID: actionEventID(o.newUUID()), Body: mustJSON(engine.Action{StepID: step, Action: action, Principal: caller.From(ctx), Restart: restart}), WakeAfter: backstopWake}
	if err := o.store.Runs.PutEvent(ctx, wf, inst, run, ev); err != nil {
		return nil, Internal(err)
	}
	if _, err := o.rounds.Process(ctx, store.Wake{WorkflowID: wf, InstanceID: inst, RunID: run}); err != nil {
		o.log.WarnContext(ctx, "inline decision of an action failed; the decision queue will retry", "workflow_id", wf, "instance_id", inst, "error", err)
	}
	return o.runView(ctx, rec, run)
}

// RestartInstance starts run r+1 of an instance whose latest run r has
// ended. RESTART_FROM_INCOMPLETE (the default) carries over the steps that
// finished, which are not run again; RESTART_FROM_BEGINNING runs them all.
func (o *Actions) RestartInstance(ctx context.Context, wf string, inst int64, req RestartRequest) (*InstanceView, error) {
	rec, stp, err := o.runState(ctx, wf, inst, 0)
	if err != nil {
		return nil, err
	}
	st := *stp
	if p := st.Parent; p != nil && !p.Subworkflow {
		return o.restartIteration(ctx, &st, req)
	}
	if !slices.Contains(model.AllowedWorkflowActions(st.Status), model.WorkflowActionRestart) {
		return nil, &Error{Status: http.StatusConflict, Message: fmt.Sprintf(
			"action RESTART is not allowed on workflow instance in status %s (allowed: %s)",
			st.Status, joinActions(model.AllowedWorkflowActions(st.Status)))}
	}
	policy := strings.ToUpper(req.RestartPolicy)
	next, err := engine.RestartState(&st, policy, o.now())
	if err != nil {
		return nil, Invalid("bad restart request", "restart_policy: "+err.Error())
	}
	runParams, err := decodeRunParams(req.RunParams)
	if err != nil {
		return nil, err
	}
	_, def, err := o.graph(ctx, wf, st.WorkflowVersion)
	if err != nil {
		return nil, Internal(err)
	}
	if problems := engine.CheckRunParamModes(def.Workflow.Params, runParams, true); len(problems) > 0 {
		return nil, Invalid("restart params override params their mode protects", problems...)
	}
	if err := o.redoEnded(ctx, next); err != nil {
		return nil, err
	}
	return o.startNextRun(ctx, rec, &st, next, runParams)
}

// redoEnded checks that the iterations and subworkflow instances a
// restart from incomplete runs again have ended: one a stop or kill is
// still ending (its parent does not wait for it) cannot get its next run
// yet.
func (o *Actions) redoEnded(ctx context.Context, next *engine.Instance) error {
	for _, s := range next.Steps {
		if c := s.RedoChild; c != nil {
			rec, err := o.store.Instances.GetInstance(ctx, c.WorkflowID, c.InstanceID)
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				return Internal(fmt.Errorf("subworkflow instance of step %s: %w", s.StepID, err))
			}
			if err == nil && !model.WorkflowStatus(rec.Status).IsTerminal() {
				return &Error{Status: http.StatusConflict, Message: fmt.Sprintf(
					"the subworkflow instance %s/%d of step %s is still %s; restart once it has ended", c.WorkflowID, c.InstanceID, s.StepID, rec.Status)}
			}
		}
		if s.Redo == nil {
			continue
		}
		for _, idx := range s.Redo.Indices {
			rec, err := o.store.Instances.GetInstance(ctx, s.Redo.WorkflowID, idx+1)
			if err != nil {
				return Internal(fmt.Errorf("iteration %d of step %s: %w", idx+1, s.StepID, err))
			}
			if !model.WorkflowStatus(rec.Status).IsTerminal() {
				return &Error{Status: http.StatusConflict, Message: fmt.Sprintf(
					"iteration %d of foreach step %s is still %s; restart once it has ended", idx+1, s.StepID, rec.Status)}
			}
		}
	}
	return nil
}

// startNextRun writes run next (the restart of st, the instance's latest
// run, which has ended) with its start event, takes over the slot st may
// still hold, and decides it inline.
func (o *Actions) startNextRun(ctx context.Context, rec *store.InstanceRecord, st, next *engine.Instance, runParams model.Params) (*InstanceView, error) {
	wf, inst := st.WorkflowID, st.InstanceID
	if id := trace.From(ctx); id != "" {
		next.TraceID = string(id) // the new run follows the request that restarted it
	}
	startEv := mustJSON(engine.StartRun{RunParams: runParams, Initiator: st.Initiator})
	ev := events.Transition(wf, next.WorkflowVersion, inst, next.RunID, "", 0,
		string(st.Status), string(next.Status), next.Seq, o.now().UnixMilli())
	ev.Parent = eventParent(next.Parent)
	created, err := eventsMessage(ctx, ev)
	if err != nil {
		return nil, Internal(err)
	}
	err = o.store.Runs.CreateRun(ctx, store.NewRun{
		WorkflowID: wf, InstanceID: inst, PrevRun: st.RunID, Status: string(next.Status),
		State: mustJSON(next), FirstEvent: store.Event{ID: startEventID, Body: startEv, WakeAfter: backstopWake}, Outbox: created, Now: o.now(),
	})
	if errors.Is(err, store.ErrConflict) {
		return nil, Conflict("workflow %s instance %d was restarted concurrently", wf, inst)
	}
	if err != nil {
		return nil, Internal(err)
	}
	// A failed STRICT_SEQUENTIAL run still holds its slot: the restart takes
	// it over (the release wakes the new run, which then takes the slot
	// before any queued instance is woken).
	wake := &store.RunEvent{InstanceID: inst, RunID: next.RunID, Event: store.Event{
		ID: unblockEventID(next.RunID), Body: mustJSON(engine.Continue{}),
	}}
	if err := o.store.Instances.ReleaseSlot(ctx, wf, inst, st.RunID, wake); err != nil && !errors.Is(err, store.ErrNotHolding) {
		o.log.WarnContext(ctx, "releasing the slot of the restarted run failed; unblock the instance", "workflow_id", wf, "instance_id", inst, "error", err)
	}
	if _, err := o.rounds.Process(ctx, store.Wake{WorkflowID: wf, InstanceID: inst, RunID: next.RunID}); err != nil {
		o.log.WarnContext(ctx, "inline decision of a restart failed; the decision queue will retry", "workflow_id", wf, "instance_id", inst, "error", err)
	}
	rec.RunID = next.RunID
	return o.runView(ctx, rec, next.RunID)
}

func joinActions(as []model.WorkflowAction) string {
	if len(as) == 0 {
		return "none"
	}
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = string(a)
	}
	return strings.Join(out, ", ")
}

// unblock releases the slot a failed STRICT_SEQUENTIAL run keeps, and wakes
// the oldest queued instance in the same transaction. The run stays FAILED.
func (o *Actions) unblock(ctx context.Context, rec *store.InstanceRecord, st *engine.Instance) (*InstanceView, error) {
	if !slices.Contains(model.AllowedWorkflowActions(st.Status), model.WorkflowActionUnblock) {
		return nil, &Error{Status: http.StatusConflict, Message: fmt.Sprintf(
			"action UNBLOCK is not allowed on workflow instance in status %s (allowed: %s)",
			st.Status, joinActions(model.AllowedWorkflowActions(st.Status)))}
	}
	err := o.releaseBlocked(ctx, st.WorkflowID, st.InstanceID, st.RunID)
	if errors.Is(err, store.ErrNotHolding) {
		return nil, &Error{Status: http.StatusConflict, Message: fmt.Sprintf(
			"workflow %s instance %d run %d blocks nothing (only a failed STRICT_SEQUENTIAL run does)", st.WorkflowID, st.InstanceID, st.RunID)}
	}
	if err != nil {
		return nil, Internal(err)
	}
	return o.runView(ctx, rec, st.RunID)
}

// releaseBlocked releases a blocking run's slot and wakes the oldest queued
// instance.
func (o *Actions) releaseBlocked(ctx context.Context, wf string, inst, run int64) error {
	var wake *store.RunEvent
	qi, qr, ok, err := o.store.Instances.OldestQueued(ctx, wf, inst)
	if err != nil {
		return err
	}
	if ok {
		wake = &store.RunEvent{InstanceID: qi, RunID: qr, Event: store.Event{
			ID: queueEventID(o.now().UnixMilli()), Body: mustJSON(engine.Continue{}),
		}}
	}
	return o.store.Instances.ReleaseSlot(ctx, wf, inst, run, wake)
}

// unblockWorkflow releases every slot held by a failed run of the workflow.
func (o *Actions) unblockWorkflow(ctx context.Context, wf string) (int, error) {
	holding, _, err := o.store.Instances.ActiveRuns(ctx, wf, 0)
	if err != nil {
		return 0, Internal(err)
	}
	n := 0
	for _, r := range holding {
		rec, err := o.instance(ctx, wf, r.InstanceID)
		if err != nil {
			return n, err
		}
		if rec.RunID != r.RunID || model.WorkflowStatus(rec.Status) != model.WorkflowFailed {
			continue
		}
		err = o.releaseBlocked(ctx, wf, r.InstanceID, r.RunID)
		if errors.Is(err, store.ErrNotHolding) {
			continue
		}
		if err != nil {
			return n, Internal(err)
		}
		n++
	}
	return n, nil
}

func actionNames(as []model.StepAction) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = string(a)
	}
	return out
}

// runState loads an instance's summary and the state of its run run (0:
// the latest), for operations that check the state before acting.
func (o *core) runState(ctx context.Context, wf string, inst, run int64) (*store.InstanceRecord, *engine.Instance, error) {
	rec, err := o.instance(ctx, wf, inst)
	if err != nil {
		return nil, nil, err
	}
	if run == 0 {
		run = rec.RunID
	}
	if run > rec.RunID {
		return nil, nil, NotFound("workflow %s instance %d has no run %d", wf, inst, run)
	}
	_, st, err := o.loadRun(ctx, wf, inst, run)
	if err != nil {
		return nil, nil, err
	}
	return rec, st, nil
}

// loadRun reads run run of instance inst of wf and decodes its state; its
// errors are Internal.
func (o *core) loadRun(ctx context.Context, wf string, inst, run int64) (*store.RunRecord, *engine.Instance, error) {
	rr, _, err := o.store.Runs.LoadRun(ctx, wf, inst, run)
	if err != nil {
		return nil, nil, Internal(err)
	}
	st, err := decodeState(rr)
	if err != nil {
		return nil, nil, Internal(err)
	}
	return rr, st, nil
}

// restartIteration restarts one iteration of a foreach: its parent run,
// which must have ended, restarts with that iteration run again (itself
// restarted from incomplete, or from the beginning) and every other kept as
// it ended (engine.RestartIteration). An iteration of a nested loop climbs:
// its parent, itself an iteration, restarts the same way as a restart of
// this one iteration (engine.InnerRestart), up to the first run that is not
// an iteration, which restarts. It answers with that run's new run. An
// iteration of a while loop is not restarted by itself: restart the run
// above it.
func (o *Actions) restartIteration(ctx context.Context, it *engine.Instance, req RestartRequest) (*InstanceView, error) {
	if !it.Status.IsTerminal() {
		return nil, &Error{Status: http.StatusConflict, Message: fmt.Sprintf(
			"iteration %d of step %s is %s; restart it once it has ended", it.InstanceID, it.Parent.StepID, it.Status)}
	}
	policy := strings.ToUpper(req.RestartPolicy)
	if policy != "" && policy != engine.RestartFromIncomplete && policy != engine.RestartFromBeginning {
		return nil, Invalid("bad restart request", fmt.Sprintf("restart_policy: %q is not %s or %s", req.RestartPolicy, engine.RestartFromIncomplete, engine.RestartFromBeginning))
	}
	if len(req.RunParams) > 0 {
		return nil, Invalid("bad restart request", "run_params: an iteration's params are its loop's; restart the run above it to change them")
	}
	return o.climb(ctx, it, policy, nil)
}

// climb restarts iteration it, which has ended, through its parents: each
// run above it restarts with only the iteration on the way down run again
// (engine.RestartIteration), up to the first run that is not an iteration,
// which takes a new run. The iteration itself restarts with policy, or as
// inner says (a restart of one of its own iterations, or from a step).
func (o *Actions) climb(ctx context.Context, it *engine.Instance, policy string, inner *engine.InnerRestart) (*InstanceView, error) {
	child := it
	for {
		p := child.Parent
		prec, parent, err := o.runState(ctx, p.WorkflowID, p.InstanceID, 0)
		if err != nil {
			return nil, err
		}
		if !parent.Status.IsTerminal() {
			return nil, &Error{Status: http.StatusConflict, Message: fmt.Sprintf(
				"the iteration's run %s/%d is %s; restart the iteration once it has ended", p.WorkflowID, p.InstanceID, parent.Status)}
		}
		// The parent's latest run may have kept the iteration from an
		// earlier run (a restart from incomplete): it belongs to the loop
		// as long as the loop runs the same inline workflow.
		if s := parent.Step(p.StepID); s == nil || s.Loop == nil || s.Loop.While || s.Loop.WorkflowID != child.WorkflowID {
			return nil, &Error{Status: http.StatusConflict, Message: fmt.Sprintf(
				"iteration %d is not an iteration of the foreach step %s of %s/%d's latest run any more: restart that run", child.InstanceID, p.StepID, p.WorkflowID, p.InstanceID)}
		}
		g, _, err := o.graph(ctx, parent.WorkflowID, parent.WorkflowVersion)
		if err != nil {
			return nil, Internal(err)
		}
		next, err := engine.RestartIteration(g, parent, p.StepID, p.Index, child.Status, policy, o.now(), inner)
		if err != nil {
			return nil, &Error{Status: http.StatusConflict, Message: err.Error()}
		}
		if pp := parent.Parent; pp != nil && !pp.Subworkflow {
			// The parent is itself an iteration: it restarts, when its own
			// parent relaunches it, as a restart of this one iteration.
			inner = &engine.InnerRestart{StepID: p.StepID, Index: p.Index, Was: child.Status, Policy: policy, Inner: inner}
			child = parent
			continue
		}
		if err := o.redoEnded(ctx, next); err != nil {
			return nil, err
		}
		return o.startNextRun(ctx, prec, parent, next, model.Params{})
	}
}
