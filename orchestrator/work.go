package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/jsonnum"
	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/store"
)

// StepRunner executes the work of one step type. It returns the outcome as
// an engine event; it must be safe to call twice for the same attempt
// (messages may be delivered twice).
type StepRunner interface {
	RunStep(ctx context.Context, m WorkMessage) (engine.StepFinished, error)
}

// HandleWork processes one work-queue message. When a timer is not yet due
// (waits longer than one SQS delay arrive in several hops) it returns the
// remaining wait and the caller re-queues the message with that delay.
func (o *Orchestrator) HandleWork(ctx context.Context, body []byte, runners map[model.StepType]StepRunner) (redelay time.Duration, err error) {
	var m WorkMessage
	if err := jsonnum.Decode(body, &m); err != nil {
		return 0, fmt.Errorf("%w: decode work message: %v", ErrPoison, err)
	}
	var ev store.Event
	switch m.Kind {
	case WorkTimer:
		if wait := m.FireAt.Sub(o.now()); wait > 500*time.Millisecond {
			return wait, nil
		}
		ev = store.Event{
			ID:   fmt.Sprintf("t-%s-%06d-%s", m.StepID, m.Attempt, m.Purpose),
			Body: mustJSON(engine.TimerFired{StepID: m.StepID, Attempt: m.Attempt, Purpose: m.Purpose}),
			// The run's sweep due time covers the timers it awaits
			// (engine.Awaited), all but signal checks.
			Covered: m.Purpose != engine.PurposeSignalCheck,
		}
	case WorkWake:
		return 0, o.handleWake(ctx, store.Wake{WorkflowID: m.WorkflowID, InstanceID: m.InstanceID, RunID: m.RunID})
	case WorkPurge:
		return 0, o.purge(ctx, m)
	case WorkSyncTriggers:
		return 0, o.syncTriggers(ctx, m.WorkflowID)
	case WorkSignal:
		return 0, o.handleSignal(ctx, m.SignalName, m.SignalSeq)
	case WorkAnnounce:
		return 0, o.announceOutput(ctx, m)
	case WorkTimeTrigger:
		return o.fireTrigger(ctx, body)
	case WorkRunStep:
		return o.claimAndRun(ctx, m, runners)
	case WorkSweep:
		_, err := o.Sweep(ctx)
		return 0, err
	default:
		return 0, fmt.Errorf("%w: unknown work kind %q", ErrPoison, m.Kind)
	}
	return 0, o.store.PutEvent(ctx, m.WorkflowID, m.InstanceID, m.RunID, ev)
}

// claimAndRun runs a step attempt at most once per claim (see
// store.ClaimAttempt): a second delivery finds the attempt claimed and looks
// again when the lease ends, or finds it finished or stopped and is dropped.
// A worker that dies keeps the claim until its lease ends; the message's
// redelivery then runs the step again.
func (o *Orchestrator) claimAndRun(ctx context.Context, m WorkMessage, runners map[model.StepType]StepRunner) (time.Duration, error) {
	ref := store.AttemptRef{WorkflowID: m.WorkflowID, InstanceID: m.InstanceID, RunID: m.RunID, StepID: m.StepID, Attempt: m.Attempt}
	token := o.newUUID()
	now := o.now()
	err := o.store.ClaimAttempt(ctx, ref, token, now, now.Add(o.claimLease))
	var ce *store.ClaimError
	switch {
	case errors.As(err, &ce) && ce.Done:
		o.log.Info("dropping work for a finished or stopped step attempt", "attempt", ref.String())
		return 0, nil
	case errors.As(err, &ce):
		// Another worker holds it: look again when its lease ends.
		return max(time.UnixMilli(ce.Until).Sub(now), time.Second), nil
	case errors.Is(err, store.ErrNotFound):
		o.log.Warn("dropping work for a step attempt that does not exist", "attempt", ref.String())
		return 0, nil
	case err != nil:
		return 0, err
	}
	res := o.runStep(ctx, m, runners)
	// The run's sweep due time covers the step's answer: a lost wake is
	// found through the run item.
	ev := store.Event{ID: fmt.Sprintf("f-%s-%06d", m.StepID, m.Attempt), Body: mustJSON(res), Covered: true}
	// The decision is left to the decider: the event's wake reaches the
	// FIFO decision queue through the stream, and the decider applies every
	// pending event of the run in one commit. Deciding here as well would
	// make N finishing siblings of a fan-in race for the same run item.
	return 0, o.store.PutEvent(ctx, m.WorkflowID, m.InstanceID, m.RunID, ev)
}

func (o *Orchestrator) runStep(ctx context.Context, m WorkMessage, runners map[model.StepType]StepRunner) engine.StepFinished {
	r, ok := runners[m.StepType]
	if !ok || m.StepKind != model.KindStep {
		what := string(m.StepType)
		if m.StepKind != model.KindStep {
			what = string(m.StepKind)
		}
		return engine.StepFinished{
			StepID: m.StepID, Attempt: m.Attempt, Outcome: engine.OutcomeFatalError,
			Message: fmt.Sprintf("step type %s is not supported by this runtime", what),
		}
	}
	res, err := r.RunStep(ctx, m)
	if err != nil {
		return engine.StepFinished{
			StepID: m.StepID, Attempt: m.Attempt, Outcome: engine.OutcomePlatformError, Message: err.Error(),
		}
	}
	res.StepID, res.Attempt = m.StepID, m.Attempt
	if err := engine.CheckOutputs(res.Outputs); err != nil {
		// Reported as is, the result could not be stored (DynamoDB's item
		// limit) and the run would never learn how the step ended.
		return engine.StepFinished{StepID: m.StepID, Attempt: m.Attempt, Outcome: engine.OutcomeFatalError, Message: err.Error()}
	}
	return res
}

// ErrPoison marks a message that can never be processed; handlers send it to
// the dead-letter queue instead of retrying.
var ErrPoison = errors.New("unprocessable message")

// HandleWake processes a decision-queue message.
func (o *Orchestrator) HandleWake(ctx context.Context, body []byte) error {
	var w store.Wake
	if err := jsonnum.Decode(body, &w); err != nil || w.WorkflowID == "" || w.InstanceID <= 0 || w.RunID <= 0 {
		return fmt.Errorf("%w: bad wake message %q", ErrPoison, truncate(string(body), 200))
	}
	return o.handleWake(ctx, w)
}

// WorkWake is a backstop wake on the work queue (store.Event.WakeAfter).
const WorkWake WorkKind = store.WorkKindWake

// backstopWake is how long after an event its writer decides itself the
// backstop wake comes.
const backstopWake = 10 // seconds

// handleWake applies a run's pending events; a run of a deleted workflow is
// a no-op.
func (o *Orchestrator) handleWake(ctx context.Context, w store.Wake) error {
	_, err := o.Process(ctx, w)
	if errors.Is(err, store.ErrNotFound) {
		if _, herr := o.store.GetHead(ctx, w.WorkflowID); errors.Is(herr, store.ErrNotFound) {
			// A late timer or event of a deleted workflow: nothing to do.
			o.log.Info("wake for a run of a deleted workflow", "workflow_id", w.WorkflowID, "instance_id", w.InstanceID, "run_id", w.RunID)
			return nil
		}
		return fmt.Errorf("%w: run %s/%d/%d does not exist", ErrPoison, w.WorkflowID, w.InstanceID, w.RunID)
	}
	return err
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
