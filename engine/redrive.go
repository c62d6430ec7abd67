package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/maestro-serverless/maestro/engine/expression"
	"github.com/maestro-serverless/maestro/model"
)

// KindRedrive is the kind of a Redrive event.
const KindRedrive EventKind = "redrive"

// Redrive asks again for the work a run awaits. The recovery sweeper sends
// it to a run that has not moved when it should have: a work message, a
// timer or a committed outbox may have been lost on the way. The decision
// emits once more a RunStep for every attempt a worker runs and a
// StartTimer for every timer the state waits on (Sleep ends, retries, step
// and workflow timeouts, signal checks), then goes on as a Continue would
// (a run being ended carries on ending, ready steps start). Every command it
// repeats is safe to receive twice: a step attempt runs at most once per
// claim and a timer for an attempt that moved on changes nothing.
type Redrive struct {
	// Reason says why, for the run's timeline.
	Reason string `json:"reason,omitempty"`
}

// Kind returns KindRedrive.
func (Redrive) Kind() EventKind { return KindRedrive }

func (Redrive) isEvent() {}

// MarshalJSON writes the event with its "kind".
func (e Redrive) MarshalJSON() ([]byte, error) {
	type plain Redrive
	return withKind(e.Kind(), plain(e))
}

// redrive applies a Redrive to a run that is not being ended.
func (d *decider) redrive(e Redrive) error {
	if d.st.Status != model.WorkflowInProgress {
		return nil
	}
	if err := d.checkSteps(); err != nil {
		return err
	}
	cmds, err := d.awaited(true)
	if err != nil {
		return err
	}
	for i, c := range cmds {
		if rs, ok := c.(RunStep); ok {
			rs.Params = rs.Params.Clone()
			cmds[i] = rs
		}
	}
	d.out.Commands = append(d.out.Commands, cmds...)
	d.out.Timeline = append(d.out.Timeline, TimelineEntry{
		Time: d.now, Status: string(d.st.Status),
		Message: fmt.Sprintf("re-driven: %d command(s) sent again (%s)", len(cmds), orDefault(e.Reason, "the run had not moved")),
	})
	d.startCounting()
	d.resumeLoops()
	return d.advance()
}

// awaited lists the commands whose answers the run's state waits for: a
// RunStep for every RUNNING attempt a worker runs and a StartTimer for every
// timer. Signal checks (re-checks a signal would also trigger) are listed
// only with checks.
func (d *decider) awaited(checks bool) ([]Command, error) {
	var cmds []Command
	for i := range d.st.Steps {
		s := &d.st.Steps[i]
		step := d.g.nodes[i].step
		switch {
		case s.RetryAt != 0:
			cmds = append(cmds, StartTimer{StepID: s.StepID, Attempt: s.Attempt, Purpose: PurposeRetry, FireAt: time.UnixMilli(s.RetryAt).UTC()})
		case s.Status == model.StepWaitingForSignals && checks:
			cmds = append(cmds, StartTimer{StepID: s.StepID, Attempt: s.Attempt, Purpose: PurposeSignalCheck, FireAt: time.UnixMilli(d.now).UTC()})
		case s.Status == model.StepRunning && !isNoWork(step):
			if isForeach(step) || isWhile(step) {
				// Its iterations report back in their own terminal
				// commits; a lost start is recovered in the child's own
				// partition (its start event is in the sweep index).
			} else if isSubworkflow(step) {
				// Until the child is reported, its start is awaited
				// (idempotent: one child per attempt); then the child
				// reports its end in its terminal commit.
				if s.Child == nil {
					c, err := d.subworkflowCommand(i)
					if err != nil {
						return nil, fmt.Errorf("step %q: %w", s.StepID, err)
					}
					cmds = append(cmds, c)
				}
			} else if isSleep(step) {
				sleep, err := sleepDuration(s.Params)
				if err != nil {
					return nil, fmt.Errorf("step %q: %w", s.StepID, err)
				}
				cmds = append(cmds, StartTimer{StepID: s.StepID, Attempt: s.Attempt, Purpose: PurposeSleep,
					FireAt: time.UnixMilli(s.StartTime + sleep.Milliseconds()).UTC()})
			} else if s.WaitingSince != 0 {
				// Handed to an external system: its task token ends it,
				// or its heartbeat check, or its timeout.
				if t, ok := d.heartbeatTimer(s); ok {
					cmds = append(cmds, t)
				}
			} else {
				cmds = append(cmds, d.runStep(i))
			}
			t, ok, err := d.stepTimeoutTimer(i, s.StartTime)
			if err != nil {
				return nil, fmt.Errorf("step %q: %w", s.StepID, err)
			}
			if ok {
				cmds = append(cmds, t)
			}
		}
	}
	if OwnWorkflowTimer(d.st) {
		cmds = append(cmds, StartTimer{Purpose: PurposeWorkflowTimeout, FireAt: time.UnixMilli(d.st.TimeoutAt).UTC()})
	}
	return cmds, nil
}

// Awaited returns the commands whose answers an IN_PROGRESS run waits for
// (see Redrive), without signal checks, for a caller that must know when
// the run should next hear something: nil for a run in any other status.
// It runs on every commit, so its RunStep commands share st's params
// rather than copy them: read them, do not change them.
func Awaited(ctx context.Context, g *Graph, st *Instance, now time.Time) ([]Command, error) {
	if g == nil || st == nil {
		return nil, fmt.Errorf("awaited: nil graph or state")
	}
	if st.Status != model.WorkflowInProgress {
		return nil, nil
	}
	d := newDecider(ctx, g, st, now)
	d.budget = expression.NewBudget(0, 0)
	d.ctx = expression.WithBudget(d.ctx, d.budget)
	if err := d.checkSteps(); err != nil {
		return nil, fmt.Errorf("awaited: %w", err)
	}
	return d.awaited(false)
}
