package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/jsonnum"
	"github.com/maestro-serverless/maestro/logctx"
	"github.com/maestro-serverless/maestro/metering"
	"github.com/maestro-serverless/maestro/metrics"
	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/pricing"
	"github.com/maestro-serverless/maestro/store"
)

// StepRunner executes the work of one step type. It returns the outcome as
// an engine event; it must be safe to call twice for the same attempt
// (messages may be delivered twice).
type StepRunner interface {
	RunStep(ctx context.Context, m StepWork) (engine.StepFinished, error)
}

// HandleWork processes one work-queue message. When a timer is not yet due
// (waits longer than one SQS delay arrive in several hops) it returns the
// remaining wait and the caller re-queues the message with that delay.
func (o *Worker) HandleWork(ctx context.Context, body []byte, runners map[model.StepType]StepRunner) (redelay time.Duration, err error) {
	w, err := DecodeWork(body)
	if err != nil {
		return 0, err
	}
	annotate(ctx, w)
	// What sending the message was billed is its run's, but a timer's
	// that is sent again (not due yet): its next copy carries its share.
	if t, ok := w.(*TimerWork); !ok || t.FireAt.Sub(o.now()) <= timerEarly {
		metering.From(ctx).AddUsage(store.MessageOps(body))
	}
	switch m := w.(type) {
	case *TimerWork:
		if wait := m.FireAt.Sub(o.now()); wait > timerEarly {
			return wait, nil
		}
		return 0, o.putResult(ctx, m.StepRef, store.Event{
			ID:   timerEventID(m.StepID, m.Attempt, m.Purpose),
			Body: mustJSON(engine.TimerFired{StepID: m.StepID, Attempt: m.Attempt, Purpose: m.Purpose}),
			// The run's sweep due time covers the timers it awaits
			// (engine.Awaited), all but signal checks.
			Covered: m.Purpose != engine.PurposeSignalCheck,
		})
	case *WakeWork:
		return 0, o.rounds.handleBackstop(ctx, store.Wake{WorkflowID: m.WorkflowID, InstanceID: m.InstanceID, RunID: m.RunID})
	case *PurgeWork:
		return 0, o.purge(ctx, *m)
	case *SyncTriggersWork:
		return 0, o.syncTriggers(ctx, m.WorkflowID)
	case *SignalWork:
		return 0, o.signals.handleSignal(ctx, m.SignalName, m.SignalSeq)
	case *AnnounceWork:
		return 0, o.signals.announceOutput(ctx, *m)
	case TimeTriggerWork:
		return o.fireTrigger(ctx, m.Firing)
	case *StepWork:
		return o.claimAndRun(ctx, *m, runners)
	case *SubworkflowWork:
		return 0, o.startSubworkflow(ctx, *m)
	case *SweepWork:
		_, err := o.sweeper.Sweep(ctx)
		return 0, err
	case *CancelJobWork:
		return 0, o.cancelJob(ctx, *m, runners)
	case *JobEventWork:
		return 0, o.handleJobEvent(ctx, m.JobEvent, runners)
	case *BackfillWork:
		return o.backfills.pump(ctx, m.WorkflowID, m.BackfillID, m.Tick)
	}
	return 0, fmt.Errorf("%w: no handler for work kind %q", ErrPoison, w.Kind())
}

// annotate adds the message's kind and ids to ctx's log scope (package
// logctx).
func annotate(ctx context.Context, w Work) {
	attrs := []any{"kind", string(w.Kind())}
	var ref StepRef
	switch m := w.(type) {
	case *StepWork:
		ref = m.StepRef
	case *TimerWork:
		ref = m.StepRef
	case *AnnounceWork:
		ref = m.StepRef
	case *SubworkflowWork:
		ref = m.StepRef
	case *CancelJobWork:
		ref = m.StepRef
	case *WakeWork:
		ref = StepRef{WorkflowID: m.WorkflowID, InstanceID: m.InstanceID, RunID: m.RunID}
	case *PurgeWork:
		ref.WorkflowID = m.WorkflowID
	case *SyncTriggersWork:
		ref.WorkflowID = m.WorkflowID
	case TimeTriggerWork:
		ref.WorkflowID = m.WorkflowID
	case *BackfillWork:
		ref.WorkflowID = m.WorkflowID
		attrs = append(attrs, "backfill_id", m.BackfillID)
	}
	if ref.WorkflowID != "" {
		attrs = append(attrs, "workflow_id", ref.WorkflowID)
	}
	if ref.InstanceID != 0 {
		attrs = append(attrs, "instance_id", ref.InstanceID, "run_id", ref.RunID)
	}
	if ref.StepID != "" {
		attrs = append(attrs, "step_id", ref.StepID, "attempt", ref.Attempt)
	}
	logctx.Add(ctx, attrs...)
}

// putResult puts a worker's result (a step's outcome, a timer) into its
// run's inbox. Its wake reaches the FIFO decision queue through the stream
// router, which sends one wake per run per stream batch. It carries what a
// worker cannot write on the attempt (a failure, a timer); a success's end
// goes on the attempt and its wake straight to the decider (handResult).
func (o *Worker) putResult(ctx context.Context, m StepRef, ev store.Event) error {
	return o.store.Runs.PutEvent(ctx, m.WorkflowID, m.InstanceID, m.RunID, ev)
}

// claimAndRun runs a step attempt at most once per claim (see
// store.ClaimAttempt): a second delivery finds the attempt claimed and looks
// again when the lease ends, or finds it finished or stopped and is dropped.
// A worker that dies keeps the claim until its lease ends; the message's
// redelivery then runs the step again.
func (o *Worker) claimAndRun(ctx context.Context, m StepWork, runners map[model.StepType]StepRunner) (time.Duration, error) {
	ref := m.Ref()
	now := o.now()
	start := workerStart(m)
	if m.Backstop {
		// The router's backstop copy of a step the committer dispatched
		// itself: it almost always finds the attempt finished, or claimed
		// by a live worker. A read tells, without a write.
		peek, err := o.store.Attempts.PeekAttempt(ctx, ref)
		status, lease := peek.Status, peek.Lease
		switch {
		case errors.Is(err, store.ErrNotFound) && start != nil:
			// A deferred start no worker claimed yet: claim it below.
		case errors.Is(err, store.ErrNotFound):
			o.log.WarnContext(ctx, "dropping work for a step attempt that does not exist", "attempt", ref.String())
			return 0, nil
		case err != nil:
			return 0, err
		case status != string(model.StepRunning) || peek.Waiting:
			return 0, nil
		case lease > now.UnixMilli():
			return max(time.UnixMilli(lease).Sub(now), time.Second), nil
		}
	}
	token := o.newUUID()
	recorded, err := o.store.Attempts.ClaimAttempt(ctx, ref, token, now, now.Add(o.claimLease), start)
	var ce *store.ClaimError
	if err == nil && m.StartTime > 0 {
		o.metrics.Emit(metrics.StepLaunchDelay, float64(now.UnixMilli()-m.StartTime), metrics.Milliseconds)
	}
	switch {
	case errors.As(err, &ce) && ce.Done:
		o.log.InfoContext(ctx, "dropping work for a finished or stopped step attempt", "attempt", ref.String())
		return 0, nil
	case errors.As(err, &ce):
		// Another worker holds it: look again when its lease ends.
		return max(time.UnixMilli(ce.Until).Sub(now), time.Second), nil
	case errors.Is(err, store.ErrNotFound):
		o.log.WarnContext(ctx, "dropping work for a step attempt that does not exist", "attempt", ref.String())
		return 0, nil
	case err != nil:
		return 0, err
	}
	if recorded != nil {
		// An earlier worker ran the step and recorded its outcome, then
		// died before it was applied: apply it, without running again.
		var res engine.StepFinished
		if err := jsonnum.Decode(recorded, &res); err == nil && res.StepID == m.StepID && res.Attempt == m.Attempt {
			o.log.InfoContext(ctx, "applying the outcome a dead worker recorded", "attempt", ref.String())
			return 0, o.runAndContinue(ctx, m, runners, token, &res)
		}
		o.log.WarnContext(ctx, "ignoring an unreadable recorded outcome; running the step", "attempt", ref.String())
	}
	if cr, ok := callbackRunnerFor(m, runners); ok {
		return 0, o.dispatchStep(ctx, m, cr, token)
	}
	return 0, o.runAndContinue(ctx, m, runners, token, nil)
}

// runAndContinue runs a claimed step attempt (or takes the outcome recorded
// by a worker that died, recorded) and records its outcome. While the run is
// uncontended — no other step of it in a worker's hands and no event waiting
// in its inbox — the worker records the outcome on the attempt (its end,
// store.FinishAttempt, or store.RecordOutcome) and applies it itself, in one
// conditional commit, and runs the steps that decision started in this
// invocation (see continueRun; unclaimed, when a start was deferred to
// this worker; else claimed in the commit): a chain of steps goes on
// without a trip through the stream and the decision queue. A step that ends beside others in
// flight is applied here only when it is the last of a join's inputs to end
// (inlineSource.join: with them all). Otherwise, or when the commit loses a
// race, the outcome goes to the decider (handResult), which applies it
// together with its siblings' (a fan-in decided by N workers would have them
// race for one run item). It never retries inline.
func (o *Worker) runAndContinue(ctx context.Context, m StepWork, runners map[model.StepType]StepRunner, token string, recorded *engine.StepFinished) error {
	return o.continueRun(ctx, m, runners, token, recorded, nil, nil)
}

// continueRun is runAndContinue from attempt m, run unclaimed when its
// start is unclaimed; prev is the run's state after the round that picked
// it, if one did. Steps a round picked beyond the first run each in a
// goroutine of its own, continuing its own chain; it returns once they
// all did, with their errors.
func (o *Worker) continueRun(ctx context.Context, m StepWork, runners map[model.StepType]StepRunner, token string,
	recorded *engine.StepFinished, unclaimed *store.AttemptStart, prev *engine.Instance) (err error) {
	// unclaimed is the deferred start of the attempt in hand when this
	// worker's own commit started it: no other worker has a message for
	// it, so it runs unclaimed and its item is written once, at its end
	// (store.FinishDeferredAttempt). The run's sweep time covers it as it
	// covers a claim: only a sweep of a run stuck for a claim lease and
	// more sends it again.
	var side sideRuns
	defer func() { err = errors.Join(err, side.wait()) }()
	for n := 0; ; n++ {
		var res engine.StepFinished
		// A chain run inline moves on to other steps: the log scope names
		// the one in hand.
		logctx.Add(ctx, "step_id", m.StepID, "attempt", m.Attempt)
		if recorded != nil {
			res, recorded = *recorded, nil
		} else {
			start := o.now()
			res = o.runStep(ctx, m, runners)
			o.log.DebugContext(ctx, "step attempt ran", "type", string(m.StepType), "outcome", string(res.Outcome),
				"duration_ms", o.now().Sub(start).Milliseconds())
		}
		// The run's sweep due time covers the step's answer: a lost wake
		// is found through the run item.
		ev := store.Event{ID: outcomeEventID(m.StepID, m.Attempt), Body: mustJSON(res), Covered: true}
		w := store.Wake{WorkflowID: m.WorkflowID, InstanceID: m.InstanceID, RunID: m.RunID}
		ref := store.AttemptRef{WorkflowID: m.WorkflowID, InstanceID: m.InstanceID, RunID: m.RunID, StepID: m.StepID, Attempt: m.Attempt}
		end := workerEnd(m, res)
		// A crowd's step, or one its commit left beside other branches
		// (Apart), would find the run busy: its outcome goes to the
		// decider without the run's read. A step this worker's own round
		// picked (prev) reads it: its round knows what is in flight.
		if n >= maxInlineSteps || m.Crowd >= crowdInline || m.Apart && prev == nil {
			return o.handResult(ctx, m, token, res, ev, unclaimed, m.Apart)
		}
		// On the board until its end is written (the round's record) or
		// the outcome handed on, whichever comes first.
		ending := o.ends.begin(ref)
		if unclaimed != nil && end == nil {
			// An outcome other than a success the worker writes is
			// recorded on a claimed item (RecordOutcome): claim it now.
			switch claimed, err := o.claimUnclaimed(ctx, ref, token, unclaimed); {
			case err != nil:
				// To the inbox: the decision that applies it writes
				// the item, start first (see deferred.go).
				o.log.WarnContext(ctx, "cannot claim a step attempt run unclaimed; sending its outcome to the run's inbox",
					"attempt", ref.String(), "error", err)
				defer ending()
				return o.putResult(ctx, m.StepRef, ev)
			case !claimed:
				ending()
				return nil
			}
			unclaimed = nil
		}
		in := o.inlineRound(ctx, m, runners, token, ev, end, unclaimed, prev)
		in.finishedAt, in.ending = res.FinishedAt, ending
		in.waitEnds = o.ends.wait
		after, more, err := o.rounds.processOnce(ctx, w, fullRound(), in, nil)
		if err != nil {
			defer ending()
			return o.inlineFailed(ctx, m, in, token, res, ev, unclaimed, err)
		}
		ending()
		unclaimed, prev = nil, after
		if more {
			// Rounds remain (a long decision): each is durable and carries
			// a backstop wake, so finishing them here is only faster.
			if _, err := o.rounds.Process(ctx, w); err != nil {
				o.log.WarnContext(ctx, "cannot finish a run's rounds inline; its backstop wake will", "workflow_id", w.WorkflowID,
					"instance_id", w.InstanceID, "run_id", w.RunID, "error", err)
			}
		}
		if len(in.picks) == 0 {
			return nil
		}
		for _, p := range in.picks[1:] {
			pm, pu := o.pickedWork(w, p, in.crowd)
			side.run(func() error { return o.continueRun(logctx.Scope(ctx), pm, runners, token, nil, pu, after) })
		}
		m, unclaimed = o.pickedWork(w, in.picks[0], in.crowd)
	}
}

// pickedWork is the work message of a step an inline round picked, and
// its start when it was left to this worker, which then runs it unclaimed.
func (o *Worker) pickedWork(w store.Wake, p pickedStep, crowd int) (StepWork, *store.AttemptStart) {
	m := runStepMessage(w, p.cmd)
	m.Crowd = crowd
	if p.start == nil {
		return m, nil
	}
	m.StartTime = p.startTime
	o.metrics.Emit(metrics.StepLaunchDelay, float64(o.now().UnixMilli()-p.startTime), metrics.Milliseconds)
	return m, p.start
}

// sideRuns are the goroutines of one continueRun running the steps its
// rounds picked beyond the first.
type sideRuns struct {
	wg   sync.WaitGroup
	mu   sync.Mutex
	errs []error
}

func (s *sideRuns) run(f func() error) {
	s.wg.Go(func() {
		if err := f(); err != nil {
			s.mu.Lock()
			s.errs = append(s.errs, err)
			s.mu.Unlock()
		}
	})
}

// wait returns once every goroutine ended, with their errors joined.
func (s *sideRuns) wait() error {
	s.wg.Wait()
	return errors.Join(s.errs...)
}

// inlineRound is the inline continuation of m's run with outcome ev (end,
// when the worker writes the end itself) of the attempt in hand.
func (o *Worker) inlineRound(ctx context.Context, m StepWork, runners map[model.StepType]StepRunner, token string, ev store.Event,
	end *store.AttemptEnd, unclaimed *store.AttemptStart, prev *engine.Instance) *inlineRound {
	ref := store.AttemptRef{WorkflowID: m.WorkflowID, InstanceID: m.InstanceID, RunID: m.RunID, StepID: m.StepID, Attempt: m.Attempt}
	in := &inlineRound{event: ev, step: m.StepID, token: token, runnable: o.runnableHere(ctx, runners), prev: prev,
		// Once the run is found uncontended, the outcome is made durable
		// before the decision, as an inbox event would be: deciding takes a
		// graph load and a commit, and a worker that dies meanwhile must not
		// have the step run again. A contended run skips it (one write per
		// step of a fan-out): its outcome goes to the decider at once
		// (handResult).
		// The round's commit records the worker's usage: the record
		// leaves it in the ledger.
		record: func() error { return o.store.Attempts.RecordOutcome(store.KeepLedger(ctx), ref, token, ev.Body) },
	}
	if end != nil {
		// The end itself, as the decision would write it (see deferred.go),
		// without a wake: the commit leaves the item alone. A worker that
		// dies before its commit leaves the run to the sweeper, which reads
		// the end.
		in.record = func() error { return in.written(o.writeEnd(store.KeepLedger(ctx), ref, token, unclaimed, *end, false)) }
		in.wake = func() error {
			return in.written(o.writeEnd(store.WithWrittenOps(ctx, &in.endOps), ref, token, unclaimed, *end, true))
		}
		in.ended = &store.FinishedAttempt{Ref: ref, WorkerEntries: len(end.Timeline), Attempt: store.Attempt{
			StepID: m.StepID, Attempt: m.Attempt, Status: end.Status, Body: end.Body,
			Timeline: append(slices.Clip(workerStart(m).Timeline), end.Timeline...)}}
	}
	return in
}

// written takes the attempt off the endBoard once its end write returned
// err (a failed write is handed on by the round's caller, as an outcome
// the round did not apply).
func (in *inlineRound) written(err error) error {
	if in.ending != nil {
		in.ending()
	}
	return err
}

// inlineFailed follows an inline round that did not commit (err): an end
// it recorded gets its wake, a lost claim sends the outcome to the inbox,
// anything else hands it to the decider.
func (o *Worker) inlineFailed(ctx context.Context, m StepWork, in *inlineRound, token string, res engine.StepFinished,
	ev store.Event, unclaimed *store.AttemptStart, err error) error {
	ref := store.AttemptRef{WorkflowID: m.WorkflowID, InstanceID: m.InstanceID, RunID: m.RunID, StepID: m.StepID, Attempt: m.Attempt}
	if in.woken {
		// The end is on the item with its wake: the decider applies it.
		if !errors.Is(err, errContended) && !errors.Is(err, store.ErrConflict) {
			o.log.WarnContext(ctx, "cannot apply a join's outcomes inline; leaving them to the decider",
				"attempt", ref.String(), "error", err)
		}
		return nil
	}
	if in.recorded && in.ended != nil {
		// The end is on the item, without its wake.
		o.wakeDecider(ctx, ref)
		return nil
	}
	if errors.Is(err, store.ErrClaimLost) {
		return o.putResult(ctx, m.StepRef, ev)
	}
	if !errors.Is(err, errContended) && !errors.Is(err, store.ErrConflict) {
		o.log.WarnContext(ctx, "cannot apply a step's outcome inline; leaving it to the decider",
			"attempt", ref.String(), "error", err)
	}
	return o.handResult(ctx, m, token, res, ev, unclaimed, m.Apart || in.apart)
}

// wakeDecider hands attempt ref's end, written on its item without a wake,
// to the run's decider: a wake naming it sent straight to the decision
// queue, or, without a dispatcher or when the send fails, the wake added
// to the item for the stream to carry (store.WakeEnd). A worker that dies
// before either leaves the end to the sweeper, as one that dies before its
// inline round's commit does.
//
// The stream would make each end wait for the shard's next poll (250 ms in
// the local stack, hundreds of ms on AWS); a wake sent now reaches a
// decider at once, and the ends of a run's branches that come while its
// decider is at work wait in the run's FIFO group and are decided together
// (decider.Handler merges them); ends that come together go as one wake
// (wakeSender).
func (o *Worker) wakeDecider(ctx context.Context, ref store.AttemptRef) {
	if o.wakes != nil {
		err := o.wakes.send(ctx, []store.AttemptRef{ref})
		if err == nil {
			return
		}
		o.log.WarnContext(ctx, "cannot wake the decider directly for a step's end; the stream will",
			"attempt", ref.String(), "error", err)
	}
	if err := o.store.Attempts.WakeEnd(ctx, ref); err != nil {
		o.log.WarnContext(ctx, "cannot wake the decider for a step's end; the sweeper will find it",
			"attempt", ref.String(), "error", err)
	}
}

// claimUnclaimed claims attempt ref, run unclaimed (see runAndContinue), so
// that its outcome can be recorded as a claimed attempt's is. It reports
// false, logged, when a decision ended the attempt or a worker claimed it
// again meanwhile: its outcome is then not this worker's to apply.
func (o *Worker) claimUnclaimed(ctx context.Context, ref store.AttemptRef, token string, start *store.AttemptStart) (bool, error) {
	now := o.now()
	_, err := o.store.Attempts.ClaimAttempt(ctx, ref, token, now, now.Add(o.claimLease), start)
	var ce *store.ClaimError
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &ce):
		o.log.WarnContext(ctx, "dropping the outcome of a step attempt a decision or another worker took meanwhile",
			"attempt", ref.String(), "done", ce.Done)
		return false, nil
	default:
		return false, err
	}
}

// handResult hands a step's outcome to the run's decider. A success
// whose end the worker can write as the decision would (workerEnd) is
// written on the attempt item (store.FinishAttempt, or, for an attempt run
// unclaimed from start, store.FinishDeferredAttempt): for a step apart
// from the others in flight (a branch none of them joins), its wake is
// sent straight to the decision queue (wakeDecider); otherwise (a join's
// input, whose last input's worker decides the join; a crowd's, for which
// the router sends one wake a poll) it is written with the item for the
// stream to carry. Anything else, or a write that fails, goes to the run's
// inbox as event ev.
func (o *Worker) handResult(ctx context.Context, m StepWork, token string, res engine.StepFinished, ev store.Event,
	unclaimed *store.AttemptStart, apart bool) error {
	if end := workerEnd(m, res); end != nil {
		ref := store.AttemptRef{WorkflowID: m.WorkflowID, InstanceID: m.InstanceID, RunID: m.RunID, StepID: m.StepID, Attempt: m.Attempt}
		direct := o.dispatch != nil && apart && m.Crowd < crowdInline
		err := o.writeEnd(ctx, ref, token, unclaimed, *end, !direct)
		if err == nil {
			if direct {
				o.wakeDecider(ctx, ref)
			}
			return nil
		}
		if !errors.Is(err, store.ErrClaimLost) {
			o.log.WarnContext(ctx, "cannot write a step's end on its attempt; sending its outcome to the run's inbox",
				"attempt", ref.String(), "error", err)
		}
	}
	return o.putResult(ctx, m.StepRef, ev)
}

// writeEnd writes attempt ref's end as its worker: on the item token
// claimed (store.FinishAttempt) or, for an attempt run unclaimed from
// start, the whole item (store.FinishDeferredAttempt).
func (o *Worker) writeEnd(ctx context.Context, ref store.AttemptRef, token string, unclaimed *store.AttemptStart, end store.AttemptEnd, wake bool) error {
	if unclaimed != nil {
		return o.store.Attempts.FinishDeferredAttempt(ctx, ref, *unclaimed, end, wake)
	}
	return o.store.Attempts.FinishAttempt(ctx, ref, token, end, wake)
}

// maxInlineSteps bounds the steps one work message runs inline, one after
// the other; the next step then goes through the work queue.
const maxInlineSteps = 1000

// crowdInline is how many steps started with it (StepWork.Crowd) make a
// step's worker hand its outcome to the decider without trying to
// continue the run inline: the run is busy until nearly all of them are
// done, and finding that out costs a read of the run's whole state (25 KB
// in a fan-out of 250 Http steps) per step.
const crowdInline = 16

// runnableHere returns which started steps this invocation may run itself:
// those a runner here executes (not hands over: see CallbackRunner), while the invocation has StepRunReserve
// left before its deadline (a Lambda's timeout).
func (o *Worker) runnableHere(ctx context.Context, runners map[model.StepType]StepRunner) func(engine.RunStep) bool {
	if dl, ok := ctx.Deadline(); ok && dl.Sub(o.now()) < o.stepRunReserve {
		return nil
	}
	return func(c engine.RunStep) bool {
		_, ok := runners[c.StepType]
		if !ok || c.StepKind != model.KindStep {
			return false
		}
		// A step handed over with a task token goes through the queue.
		_, waits := callbackRunnerFor(runStepMessage(store.Wake{}, c), runners)
		return !waits
	}
}

// errContended says a worker's inline continuation found others at the run.
var errContended = errors.New("run contended")

// inlineRound is a worker's inline continuation of a run (see
// runAndContinue): event is the outcome of step's attempt, applied without
// being stored; runnable says which started step the worker may run itself,
// and picked is the one the round chose, claimed for token.
type inlineRound struct {
	event    store.Event
	step     string
	token    string
	runnable func(engine.RunStep) bool
	// chosen are the steps pick took from the decisions; picks are
	// those the commit as last built (inlineSource.shape) starts: the
	// worker runs the first on its own loop and each other one in a
	// goroutine (continueRun); crowd is how many other steps the
	// decision started beside each.
	chosen []engine.RunStep
	picks  []pickedStep
	crowd  int
	// record makes the outcome durable on the attempt item; processOnce
	// calls it once it found the run uncontended (or, when prev left no
	// other step in flight, while it reads the run), beside its other
	// reads, waits for it before it decides, and sets recorded when it
	// succeeded.
	record   func() error
	recorded bool
	// wake writes the attempt's end with its wake (a worker end only):
	// the outcome of a step that ends beside others in flight goes to the
	// decider that way, unless its worker finds every partner ended too
	// and applies them all (inlineSource.join); woken says it was written.
	wake  func() error
	woken bool
	// endOps is the usage wake wrote on the item: the round that applies
	// the end inline carries it to the run.
	endOps pricing.Usage
	// apart says the round found others in flight, none of them the
	// step's partners (inlineSource.join): its end is woken directly.
	apart bool
	// finishedAt is when the step's run ended (unix ms): of a join's
	// inputs that all ended, the last to end decides (inlineSource.join).
	finishedAt int64
	// ending takes the attempt off the worker's endBoard once its end is
	// written; waitEnds waits for partners' ends this process is about
	// to write (endBoard.wait). Either may be nil.
	ending   func()
	waitEnds func(context.Context, []store.AttemptRef) bool
	// ended is the end record writes, when it writes the attempt's end
	// (store.FinishAttempt): the commit leaves the item alone if it is
	// what the decision writes.
	ended *store.FinishedAttempt
	// prev is the run's state after this worker's previous round, if
	// any: the decision's reads that depend only on the run's constants
	// start before the run is read (see processOnce).
	prev *engine.Instance
}

// pickedStep is a step an inline round's commit started for its worker
// to run: start, when set, is its start, left out of the commit for the
// worker's claim to write (as a deferred start is), and startTime when it
// started.
type pickedStep struct {
	cmd       engine.RunStep
	start     *store.AttemptStart
	startTime int64
}

// maxPicks is the most started steps one inline round's worker runs
// itself, side by side: a DAG's next layer, a small fan-out. A decision
// that starts crowdInline steps or more gives the worker one (the others
// go through the work queue: a fan-out of 250 Http steps is not one
// invocation's work).
const maxPicks = 8

// pick chooses the started steps the worker may run (maxPicks at most, or
// one of a crowd) and takes their commands out of the decisions, so that
// no work message is sent for them.
func (in *inlineRound) pick(acc *decisionSet, st *engine.Instance) {
	in.chosen, in.picks, in.crowd = nil, nil, 0
	if in.runnable == nil || st.Status != model.WorkflowInProgress {
		return
	}
	starts := 0
	for _, c := range acc.commands {
		if _, ok := c.(engine.RunStep); ok {
			starts++
		}
	}
	most := maxPicks
	if starts >= crowdInline {
		most = 1
	}
	kept := make([]engine.Command, 0, len(acc.commands))
	for _, c := range acc.commands {
		if rs, ok := c.(engine.RunStep); ok && len(in.chosen) < most && in.runnable(rs) {
			in.chosen = append(in.chosen, rs)
			continue
		}
		kept = append(kept, c)
	}
	if len(in.chosen) > 0 {
		acc.commands, in.crowd = kept, starts-1
	}
}

// claim has the committing worker run picked attempt rs itself, and no
// work message sent for it: when the commit's write of it is the start a
// claim writes (see deferred.go), the write leaves the commit and the
// worker's ClaimAttempt makes it (pickedStep.start); otherwise the write
// carries the claim, held until lease. It reports false when the commit
// does not start the attempt. st is the run's state after the commit.
func (in *inlineRound) claim(commit *store.Commit, st *engine.Instance, lease time.Time, rs engine.RunStep) (pickedStep, bool) {
	for i := range commit.Attempts {
		a := &commit.Attempts[i]
		if a.StepID != rs.StepID || a.Attempt != rs.Attempt || a.Status != string(model.StepRunning) {
			continue
		}
		p := pickedStep{cmd: rs}
		if ss := st.Step(a.StepID); ss != nil && ss.Attempt == a.Attempt && startedInOne(ss) {
			m := runStepMessage(store.Wake{WorkflowID: st.WorkflowID, InstanceID: st.InstanceID, RunID: st.RunID}, rs)
			m.StartTime = ss.StartTime
			if ws := claimStart(*a, m); ws != nil {
				commit.Attempts = slices.Delete(commit.Attempts, i, i+1)
				p.start, p.startTime = ws, ss.StartTime
				return p, true
			}
		}
		a.Claim, a.Lease = in.token, lease.UnixMilli()
		return p, true
	}
	return pickedStep{}, false
}

// apart reports whether run st has steps other than step in a worker's
// hands, none of which step's successors wait for (see StepWork.Apart).
// apart reports whether steps other than step are in a worker's hands
// (atWork), none of which step's successors wait for (see StepWork.Apart).
func apart(g *engine.Graph, atWork []store.FinishedStep, step string) bool {
	others := othersOf(atWork, step)
	return len(others) > 0 && len(joinPartners(g, step, others)) == 0
}

// atWork names the steps in a worker's hands, as run st has them.
func (o *Rounds) atWork(ctx context.Context, g *engine.Graph, st *engine.Instance) ([]store.FinishedStep, error) {
	cmds, err := engine.Awaited(ctx, g, st, o.now())
	if err != nil {
		return nil, err
	}
	var steps []store.FinishedStep
	for _, c := range cmds {
		if rs, ok := c.(engine.RunStep); ok {
			steps = append(steps, store.FinishedStep{StepID: rs.StepID, Attempt: rs.Attempt})
		}
	}
	return steps, nil
}

// othersOf is atWork without step.
func othersOf(atWork []store.FinishedStep, step string) []store.FinishedStep {
	var others []store.FinishedStep
	for _, s := range atWork {
		if s.StepID != step {
			others = append(others, s)
		}
	}
	return others
}

// othersAtWork names the steps other than step in a worker's hands, as
// run st has them.
func (o *Rounds) othersAtWork(ctx context.Context, g *engine.Graph, st *engine.Instance, step string) ([]store.FinishedStep, error) {
	steps, err := o.atWork(ctx, g, st)
	return othersOf(steps, step), err
}

// runStepMessage is the work message of a RunStep command.
func runStepMessage(w store.Wake, c engine.RunStep) StepWork {
	return StepWork{StepRef: stepRefOf(w, c.StepID, c.Attempt), StepKind: c.StepKind, StepType: c.StepType,
		SubType: c.SubType, TemplateVersion: c.TemplateVersion, Params: c.Params}
}

func (o *Worker) runStep(ctx context.Context, m StepWork, runners map[model.StepType]StepRunner) engine.StepFinished {
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
	m, refused, err := o.templated(ctx, m)
	if err != nil {
		return engine.StepFinished{
			StepID: m.StepID, Attempt: m.Attempt, Outcome: engine.OutcomePlatformError, Message: err.Error(),
		}
	}
	if refused != nil {
		refused.FinishedAt = o.now().UnixMilli()
		return *refused
	}
	res, err := r.RunStep(ctx, m)
	if err != nil {
		return engine.StepFinished{
			StepID: m.StepID, Attempt: m.Attempt, Outcome: engine.OutcomePlatformError, Message: err.Error(),
		}
	}
	res.StepID, res.Attempt, res.FinishedAt = m.StepID, m.Attempt, o.now().UnixMilli()
	if err := engine.CheckOutputs(res.Outputs); err != nil {
		// Reported as is, the result could not be stored (DynamoDB's item
		// limit) and the run would never learn how the step ended.
		return engine.StepFinished{StepID: m.StepID, Attempt: m.Attempt, Outcome: engine.OutcomeFatalError, Message: err.Error()}
	}
	return res
}

// timerEarly is how early a timer may be taken as due: one due later is
// sent again with the rest of its delay.
const timerEarly = 500 * time.Millisecond

// ErrPoison marks a message that can never be processed; handlers send it to
// the dead-letter queue instead of retrying.
var ErrPoison = errors.New("unprocessable message")

// HandleWake processes a decision-queue message.
func (o *Rounds) HandleWake(ctx context.Context, body []byte) error {
	var w store.Wake
	if err := jsonnum.Decode(body, &w); err != nil || w.WorkflowID == "" || w.InstanceID <= 0 || w.RunID <= 0 {
		return fmt.Errorf("%w: bad wake message %q", ErrPoison, truncate(string(body), 200))
	}
	logctx.Add(ctx, "workflow_id", w.WorkflowID, "instance_id", w.InstanceID, "run_id", w.RunID)
	// What sending the wake was billed is the run's.
	metering.From(ctx).AddUsage(store.MessageOps(body))
	return o.handleWake(ctx, w)
}

// backstopWake is how long after an event its writer decides itself the
// backstop wake comes.
const backstopWake = 10 // seconds

// handleWake applies a run's pending events (its decider's wake); a run of
// a deleted workflow is a no-op.
func (o *Rounds) handleWake(ctx context.Context, w store.Wake) error {
	_, err := o.Process(ctx, w)
	return o.goneRun(ctx, w, err)
}

// handleBackstop applies a backstop wake (store.Event.WakeAfter): a run
// whose events still wait goes to its decider. Their writer died, or is
// still at it — a run making round after round (a wide loop's launches)
// leaves a Continue event each round — and deciding here, beside that
// decider, would only lose races, each costing a whole commit's write
// units: the FIFO decision queue serialises it.
func (o *Rounds) handleBackstop(ctx context.Context, w store.Wake) error {
	_, pending, err := o.store.Runs.LoadRun(ctx, w.WorkflowID, w.InstanceID, w.RunID)
	if err == nil && len(pending) > 0 {
		err = o.handOff(ctx, w)
	}
	return o.goneRun(ctx, w, err)
}

// goneRun turns the ErrNotFound of a wake for a run of a deleted workflow
// into nil, and for a run that never existed into a poison error.
func (o *Rounds) goneRun(ctx context.Context, w store.Wake, err error) error {
	if errors.Is(err, store.ErrNotFound) {
		if _, herr := o.store.Definitions.GetHead(ctx, w.WorkflowID); errors.Is(herr, store.ErrNotFound) {
			// A late timer or event of a deleted workflow: nothing to do.
			o.log.InfoContext(ctx, "wake for a run of a deleted workflow", "workflow_id", w.WorkflowID, "instance_id", w.InstanceID, "run_id", w.RunID)
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

// emitDecision emits a committed decision's latency (since began) and the
// steps and runs it ended, by status, and the cost of a run it ended (cost:
// the run's after the decision). The workflow is a property, not a
// dimension: a metric per workflow and status would cost a custom metric
// each (CloudWatch bills per dimension combination); as a property, Logs
// Insights counts ends and sums costs per workflow from the same lines at
// no metric cost.
func (o *Rounds) emitDecision(began time.Time, wf string, transitions []engine.Transition, cost pricing.Usage) {
	if o.metrics == nil {
		return
	}
	o.metrics.Emit(metrics.DecisionLatency, float64(time.Since(began).Milliseconds()), metrics.Milliseconds)
	props := map[string]string{"WorkflowId": wf}
	for _, t := range transitions {
		switch {
		case t.StepID != "" && model.StepStatus(t.To).IsTerminal():
			o.metrics.EmitWith(metrics.StepsFinished, 1, metrics.Count, props, "Status", t.To)
		case t.StepID == "" && model.WorkflowStatus(t.To).IsTerminal():
			o.metrics.EmitWith(metrics.RunsFinished, 1, metrics.Count, props, "Status", t.To)
			o.metrics.EmitWith(metrics.RunCost, pricing.Price(cost).TotalUSD, metrics.None, props)
		}
	}
}

// BackstopsNeeded tells the stream router which backstop copies of steps
// their committers dispatched themselves (store.Message.Direct) are still
// needed: false for a step a worker has claimed or that has ended (its
// committer's copy evidently arrived, and stays in the queue until that
// worker deletes it, so a worker that dies is still covered), true for the
// rest and for any message that is not a run_step. A backstop copy costs
// three SQS requests (the send, the receive, the delete), the check half a
// read unit.
func BackstopsNeeded(ctx context.Context, attempts AttemptStore, msgs []store.Message) ([]bool, error) {
	needed := make([]bool, len(msgs))
	refs := make([]store.AttemptRef, 0, len(msgs))
	at := make([]store.AttemptRef, len(msgs))
	for i, m := range msgs {
		needed[i] = true
		if m.Queue != store.QueueWork {
			continue
		}
		w, err := DecodeWork([]byte(m.Body))
		step, ok := w.(*StepWork)
		if err != nil || !ok {
			continue
		}
		at[i] = step.Ref()
		refs = append(refs, at[i])
	}
	if len(refs) == 0 {
		return needed, nil
	}
	started, err := attempts.StartedAttempts(ctx, refs)
	if err != nil {
		return needed, err
	}
	for i := range msgs {
		if at[i].StepID != "" && started[at[i]] {
			needed[i] = false
		}
	}
	return needed, nil
}
