package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/store"
)

// commitReads is what building a commit needs from the store, read in one
// stage (gather, readSlots) before any of its writes is built: building
// (buildCommit, loopWrites, slotWrites) then reads nothing, and a commit's
// writes are a function of the run as read, its decisions and these.
type commitReads struct {
	// touched is what the decisions did to step attempts (touchedAttempts),
	// sorted once here for the reads and for buildCommit.
	touched *touched
	// loopParams are the loop_params of the attempts the commit rewrites
	// while the run's state no longer holds them (engine.Offload):
	// rewriting an attempt's item must keep them.
	loopParams map[attemptKey]map[string]any
	// stopRuns are the latest runs of the children the decisions stop;
	// reruns the new runs of the children they restart, each derived from
	// the child's stored run.
	stopRuns map[childKey]int64
	reruns   map[childKey]store.NewRun
	// slots is the run-slot state of the run's workflow (readSlots).
	slots slotReads
}

// childKey names a child run's instance.
type childKey struct {
	wf   string
	inst int64
}

// gather reads what building the commit of decisions acc, which took the
// run to after, needs: the loop params its attempt writes keep and the
// children its loop commands stop or restart. What prev (nil: nothing)
// read for an earlier plan of the same round is not read again.
func (o *Rounds) gather(ctx context.Context, after *engine.Instance, acc *decisionSet, now time.Time, prev *commitReads) (commitReads, error) {
	if prev == nil {
		prev = &commitReads{}
	}
	rd := commitReads{touched: touchedAttempts(acc, after)}
	var err error
	if rd.loopParams, err = o.loopParamsToKeep(ctx, after, rd.touched.order, prev.loopParams); err != nil {
		return rd, err
	}
	for _, cmd := range acc.commands {
		switch x := cmd.(type) {
		case engine.RestartChild:
			k := childKey{x.WorkflowID, x.Index + 1}
			nr, ok := prev.reruns[k]
			if !ok {
				if nr, err = o.childRerun(ctx, x, now); err != nil {
					return rd, err
				}
			}
			if rd.reruns == nil {
				rd.reruns = map[childKey]store.NewRun{}
			}
			rd.reruns[k] = nr
		case engine.StopChild:
			k := childKey{x.WorkflowID, x.InstanceID}
			run, ok := prev.stopRuns[k]
			if !ok {
				if run, err = o.latestRun(ctx, x.WorkflowID, x.InstanceID); err != nil {
					return rd, err
				}
			}
			if rd.stopRuns == nil {
				rd.stopRuns = map[childKey]int64{}
			}
			rd.stopRuns[k] = run
		}
	}
	return rd, nil
}

// latestRun is the latest run of child instance inst of wf, which a stop
// goes to: a restarted iteration or subworkflow instance runs in run 2 or
// later. One created in this same commit is not stored yet: run 1.
func (o *Rounds) latestRun(ctx context.Context, wf string, inst int64) (int64, error) {
	rec, err := o.store.Instances.GetInstance(ctx, wf, inst)
	switch {
	case err == nil:
		return rec.RunID, nil
	case errors.Is(err, store.ErrNotFound):
		return 1, nil
	}
	return 0, fmt.Errorf("stop child %s/%d: %w", wf, inst, err)
}

// gatherRound is gather and readSlots: everything a round's commit reads,
// under strategy rs, but what prev read for an earlier plan of the round.
func (o *Rounds) gatherRound(ctx context.Context, before, after *engine.Instance, acc *decisionSet, rs runStrategy, now time.Time, prev *commitReads) (commitReads, error) {
	rd, err := o.gather(ctx, after, acc, now, prev)
	if err != nil {
		return rd, err
	}
	var prevSlots *slotReads
	if prev != nil {
		prevSlots = &prev.slots
	}
	rd.slots, err = o.readSlots(ctx, before, after, rs, prevSlots)
	return rd, err
}

// slotReads is what a commit's run-strategy bookkeeping (slotWrites) needs:
// whether the run takes a slot (admitted) or gives its own back
// (released), the workflow's slot limit, the queue's version and its
// oldest instance besides this one.
type slotReads struct {
	admitted, released bool
	// read is set once the queue was read for these admitted and released.
	read         bool
	limit        int64
	queueVersion int64
	oldestInst   int64
	oldestRun    int64
	queued       bool
}

// holdsNoSlot reports whether st is an iteration: it holds no slot of its
// inline workflow.
func holdsNoSlot(st *engine.Instance) bool {
	return (st.Parent != nil && !st.Parent.Subworkflow) || st.Initiator.Backfill != ""
}

// readSlots reads the run-slot state a commit taking the run from before
// to after needs under strategy rs (read here when a failed run needs it
// and rs is unknown), unless prev (nil: none) read it already.
func (o *Rounds) readSlots(ctx context.Context, before, after *engine.Instance, rs runStrategy, prev *slotReads) (slotReads, error) {
	var sr slotReads
	if holdsNoSlot(after) {
		return sr, nil
	}
	admitted := before.Status == model.WorkflowCreated && after.StartTime != 0
	held := before.Status == model.WorkflowInProgress || before.Status == model.WorkflowPaused
	released := (held || admitted) && after.Status.IsTerminal()
	if released && after.Status == model.WorkflowFailed {
		if rs.rule == "" {
			var err error
			if rs, err = o.strategy(ctx, after.WorkflowID); err != nil {
				return sr, err
			}
		}
		// A failed STRICT_SEQUENTIAL run keeps its slot: the workflow is
		// blocked until the run is unblocked or restarted.
		released = rs.rule != model.RunStrictSequential
	}
	sr.admitted, sr.released, sr.limit = admitted, released, rs.limit
	if !admitted && !released {
		return sr, nil
	}
	if prev != nil && prev.read && prev.admitted == admitted && prev.released == released {
		return *prev, nil
	}
	sr.read = true
	// One strongly consistent read of the queue serves both sides: a run
	// that gives its slot back wakes the oldest queued instance, and a run
	// that takes one does not pass an older one waiting for it (the
	// release that freed the slot woke that one; without the check, a run
	// whose own decision came late started ahead of the queue). The queue
	// version is read first: a run that enqueues after it fails the
	// commit, and the retry looks again.
	never := false // no run of the workflow was ever queued
	if released {
		qv, err := o.store.Instances.QueueVersion(ctx, after.WorkflowID)
		if err != nil {
			return sr, err
		}
		sr.queueVersion = qv
		// Every enqueue bumps the version with its queue item, and the
		// commit is conditioned on the version read: at 0 the queue is
		// empty, and a run that enqueues before the commit fails it (the
		// retry reads again).
		never = qv == 0 && !admitted
	}
	if !never {
		var err error
		if sr.oldestInst, sr.oldestRun, sr.queued, err = o.store.Instances.OldestQueued(ctx, after.WorkflowID, after.InstanceID); err != nil {
			return sr, err
		}
	}
	return sr, nil
}

// planInput is what a commit is planned from: the run as read (rec,
// before) and its graph, the decisions that took it to after, the inbox
// events they consumed, the iterations born finished (bearChildren), the
// permits they took or gave back, whether the run goes on in a next round
// (cont), and the store reads gathered for it.
type planInput struct {
	g             *engine.Graph
	rec           *store.RunRecord
	before, after *engine.Instance
	acc           *decisionSet
	consumed      []string
	born          map[bornKey]*bornChild
	book          *permitBook
	cont          bool
	reads         *commitReads
	now           time.Time
}

// planCommit is the pipeline's plan stage: the commit of in's decisions —
// the run's and its attempts' writes (buildCommit), the continue event of
// a run that goes on, signal waits and lineage, permit changes and the
// wakes of their waiters, and what the decisions do to child runs
// (loopWrites). It reads nothing: in.reads holds what it needs from the
// store. The run-slot writes follow at commit (slotWrites), where their
// refusal is handled with the commit's.
func (o *Rounds) planCommit(ctx context.Context, in planInput) (store.Commit, error) {
	c, err := o.buildCommit(ctx, in.g, in.rec, in.before, in.after, in.acc, in.consumed, in.reads, in.now)
	if err != nil {
		return store.Commit{}, err
	}
	if in.cont {
		// The process goes on with the next round itself; the event's
		// delayed wake only matters if it dies first.
		c.NewEvents = append(c.NewEvents, store.Event{
			ID: continueEventID(in.after, in.rec.V), Body: mustJSON(engine.Continue{}), WakeAfter: backstopWake,
		})
	}
	c.SignalWaits, c.Lineage = signalChanges(in.before, in.after)
	if in.book != nil {
		if c.Permits, c.Wakes, err = in.book.updates(); err != nil {
			return store.Commit{}, err
		}
	}
	if err := o.loopWrites(ctx, in.g, &c, in.before, in.after, in.acc.commands, in.born, in.reads, in.now); err != nil {
		return store.Commit{}, err
	}
	return c, nil
}
