package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/maestro-serverless/maestro/caller"
	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/events"
	"github.com/maestro-serverless/maestro/jsonnum"
	"github.com/maestro-serverless/maestro/metering"
	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/store"
)

// MaxSQSDelay is the longest delay SQS supports on one message.
const MaxSQSDelay = 15 * time.Minute

// Limits that keep one commit inside DynamoDB's 100-item transaction.
const (
	// maxStartsPerDecision bounds the steps one engine decision starts.
	maxStartsPerDecision = 40
	// deferredPerStart is how many starts of worker steps count as one
	// against maxStartsPerDecision: their commit leaves the attempt item to
	// the worker's claim (see deferred.go), so they cost the run item's
	// bytes, not transaction items. Should some not be deferred after all,
	// the store refuses the commit and the round is fitted to its count
	// (round.fit).
	deferredPerStart = 8
	// maxEndsPerDecision bounds the steps in flight one decision ends when
	// a run ends early (stop, kill, timeout, FAIL_IMMEDIATELY): each costs
	// its attempt item and may withdraw a signal registration or return a
	// permit.
	maxEndsPerDecision = 25
	// maxRoundEvents bounds the pending events one round decides. How
	// many of them one transaction holds is the store's count to say
	// (round.fit). A step's outcome, deleted after the commit, costs the
	// transaction its attempt item alone, so a fan-in's 96 outcomes fit
	// one commit; events consumed in the transaction cost two, and a
	// round of those is fitted to about half.
	maxRoundEvents = 96
	// maxRoundsPerCall and maxCallTime bound the rounds one Process call
	// commits; a run with more to do (a wide loop launching or stopping
	// its iterations) is handed to the decider (see handOff). A request
	// that starts or ends a run thus answers in a few commits' time, well
	// inside API Gateway's 29 s, and no invocation's work grows with the
	// run.
	maxRoundsPerCall = 8
	maxCallTime      = 5 * time.Second
)

// Process applies a run's pending events through the engine and commits the
// result in one conditional transaction, retrying from a fresh read when
// another decider won the race. A run with more pending work than one
// transaction holds is committed in several rounds, each durable. It returns
// the run's state afterwards, or nil when it handed the run to the decider
// after losing races for longer than maxCallTime. A run with no pending
// events (a duplicate wake) is a no-op.
func (o *Rounds) Process(ctx context.Context, w store.Wake) (*engine.Instance, error) {
	conflicts := 0
	enqueued := false
	rounds := 0
	began := time.Now()
	for {
		st, more, err := o.processOnce(ctx, w, fullRound(), nil, nil)
		switch {
		case err == nil && !more:
			return st, nil
		case err == nil:
			if rounds++; rounds >= maxRoundsPerCall || time.Since(began) >= maxCallTime {
				return st, o.handOff(ctx, w)
			}
			continue // next round of the same run
		case errors.Is(err, store.ErrTooManyItems):
			// The round committed fewer of its decisions, then fewer
			// starts and ends per decision, as the store counted them,
			// until one event deciding one step did not fit either
			// (round.fit); nothing was written.
			return nil, fmt.Errorf("process %s/%d/%d: one event's decision does not fit one transaction even when bounded to one step: %w", w.WorkflowID, w.InstanceID, w.RunID, err)
		case errors.Is(err, store.ErrNoSlot):
			// Every slot of the workflow is taken: the run waits in the
			// queue. Registering first and then trying once more closes the
			// race with a run that ended in between (it saw no queue).
			if enqueued {
				// The run waits in the queue until a run frees a slot and
				// wakes it; its start event is not lost, so the sweeper
				// must not keep deciding it.
				if err := o.store.Sweeps.UnsweepEvents(ctx, w.WorkflowID, w.InstanceID, w.RunID); err != nil {
					o.log.WarnContext(ctx, "cannot take a queued run's events out of the sweep index", "workflow_id", w.WorkflowID,
						"instance_id", w.InstanceID, "error", err)
				}
				return st, nil
			}
			if err := o.store.Instances.Enqueue(ctx, w.WorkflowID, w.InstanceID, w.RunID); err != nil {
				return nil, err
			}
			enqueued = true
			continue
		case !errors.Is(err, store.ErrConflict):
			return nil, err
		}
		conflicts++
		if time.Since(began) >= maxCallTime {
			// Another committer keeps winning (a decider launching a wide
			// loop's iterations while a kill arrives): the events are in
			// the inbox, so the decider takes them from here.
			return nil, o.handOff(ctx, w)
		}
		if conflicts >= o.retries {
			return nil, fmt.Errorf("process %s/%d/%d: %w", w.WorkflowID, w.InstanceID, w.RunID, err)
		}
		// Jittered backoff keeps concurrent deciders from colliding again.
		d := time.Duration(1+rand.IntN(5*conflicts)) * time.Millisecond
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(d):
		}
	}
}

// unsettled names the steps of st whose state may still change: all but
// those terminal and not waiting to retry.
func unsettled(st *engine.Instance) map[string]bool {
	out := make(map[string]bool)
	for i := range st.Steps {
		if ss := &st.Steps[i]; !ss.Status.IsTerminal() || ss.RetryAt != 0 {
			out[ss.StepID] = true
		}
	}
	return out
}

// loopParamsToKeep reads the loop_params of the attempts among touched
// that a commit rewrites while the run's state no longer holds them
// (engine.Offload): rewriting the attempt's item must keep them.
func (o *Rounds) loopParamsToKeep(ctx context.Context, st *engine.Instance, touched []attemptKey, known map[attemptKey]map[string]any) (map[attemptKey]map[string]any, error) {
	var out map[attemptKey]map[string]any
	for _, k := range touched {
		ss := st.Step(k.step)
		if ss == nil || ss.Attempt != k.attempt || neverStarted(ss) || !ss.LoopParamsOffloaded {
			continue
		}
		if _, ok := ss.Params[engine.LoopParamsName]; ok {
			continue
		}
		lp, ok := known[k]
		if !ok {
			var err error
			if lp, err = loopParamsOf(ctx, o.store, st.WorkflowID, st.InstanceID, ss.ItemRun(st.RunID), ss.StepID, ss.Attempt); err != nil {
				return nil, err
			}
		}
		if out == nil {
			out = map[attemptKey]map[string]any{}
		}
		out[k] = lp
	}
	return out, nil
}

// withLoopParams returns a view's params with loop_params lp added.
func withLoopParams(params map[string]any, lp map[string]any) map[string]any {
	out := make(map[string]any, len(params)+1)
	for k, v := range params {
		out[k] = v
	}
	out[engine.LoopParamsName] = lp
	return out
}

// loopParamsOf reads the loop params item of a foreach step attempt.
func loopParamsOf(ctx context.Context, db Stores, wf string, inst, run int64, step string, attempt int64) (map[string]any, error) {
	body, err := db.Runs.GetLoopParams(ctx, wf, inst, run, step, attempt)
	if err != nil {
		return nil, err
	}
	var v engine.Values
	if err := jsonnum.Decode(body, &v); err != nil {
		return nil, fmt.Errorf("decode the loop params of %s/%d/%d step %s/%d: %w", wf, inst, run, step, attempt, err)
	}
	lp, ok := v[engine.LoopParamsName].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the loop params of %s/%d/%d step %s/%d are %T, want a MAP", wf, inst, run, step, attempt, v[engine.LoopParamsName])
	}
	return lp, nil
}

// replayable reports whether applying ev a second time changes nothing,
// so that it may be deleted after its commit rather than inside it (see
// store.DiscardEvents): a step attempt's outcome, its sleep, retry and
// timeout timers — each applies only while the attempt is where the event
// found it. (A signal check re-applied would start a second chain of
// checks; actions, signals and children's reports are not idempotent.)
func replayable(ev engine.Event) bool {
	switch e := ev.(type) {
	case engine.StepFinished, *engine.StepFinished:
		return true
	case engine.TimerFired:
		return e.Purpose == engine.PurposeSleep || e.Purpose == engine.PurposeRetry || e.Purpose == engine.PurposeTimeout
	case *engine.TimerFired:
		return e.Purpose == engine.PurposeSleep || e.Purpose == engine.PurposeRetry || e.Purpose == engine.PurposeTimeout
	}
	return false
}

// handOff gives the rest of a run's work to the decider. The last round
// left a Continue event in the run's inbox whose wake comes only after its
// backstop delay (meant for a committer that died), so handOff wakes the
// decision queue at once. Without a dispatcher, or when the send fails, it
// puts an inbox event instead, whose wake the stream carries — seconds
// late when the router has the rounds' change events to forward first (a
// kill of 300 steps: 3 s).
func (o *Rounds) handOff(ctx context.Context, w store.Wake) error {
	if o.dispatch != nil {
		err := o.dispatch.Dispatch(ctx, []store.Message{store.WakeMessageOf(w)})
		if err == nil {
			return nil
		}
		o.log.WarnContext(ctx, "cannot wake the decider directly; an inbox event's wake will", "workflow_id", w.WorkflowID,
			"instance_id", w.InstanceID, "run_id", w.RunID, "error", err)
	}
	id := handOffEventID(o.newUUID())
	if err := o.store.Runs.PutEvent(ctx, w.WorkflowID, w.InstanceID, w.RunID, store.Event{ID: id, Body: mustJSON(engine.Continue{})}); err != nil {
		return fmt.Errorf("hand off %s/%d/%d to the decider: %w", w.WorkflowID, w.InstanceID, w.RunID, err)
	}
	return nil
}

// workerEnds reads the attempts of run before whose workers wrote their
// ends (store.FinishAttempt), or recorded their outcomes and died: those
// wake w names and, when a Redrive is pending (a wake may have been lost),
// every attempt the run has running. It returns their outcomes as events
// and the attempts by key.
func (o *Rounds) workerEnds(ctx context.Context, w store.Wake, before *engine.Instance, pending []store.Event) ([]store.Event, map[attemptKey]*store.FinishedAttempt, error) {
	ref := func(step string, attempt int64) store.AttemptRef {
		return store.AttemptRef{WorkflowID: w.WorkflowID, InstanceID: w.InstanceID, RunID: w.RunID, StepID: step, Attempt: attempt}
	}
	var refs []store.AttemptRef
	for _, f := range w.Finished {
		if ss := before.Step(f.StepID); ss != nil && ss.Attempt == f.Attempt && ss.Status == model.StepRunning {
			refs = append(refs, ref(f.StepID, f.Attempt))
		}
	}
	if slices.ContainsFunc(pending, func(p store.Event) bool {
		ev, err := engine.UnmarshalEvent(p.Body)
		return err == nil && ev.Kind() == engine.KindRedrive
	}) {
		for _, ss := range before.Steps {
			if ss.Status == model.StepRunning && ss.Attempt > 0 && !slices.Contains(refs, ref(ss.StepID, ss.Attempt)) {
				refs = append(refs, ref(ss.StepID, ss.Attempt))
			}
		}
	}
	if len(refs) == 0 {
		return nil, nil, nil
	}
	fs, err := o.store.Attempts.FinishedAttempts(ctx, refs)
	if err != nil {
		return nil, nil, err
	}
	evs := make([]store.Event, 0, len(fs))
	ended := make(map[attemptKey]*store.FinishedAttempt, len(fs))
	for i := range fs {
		f := &fs[i]
		body := f.Outcome
		if f.WorkerEntries > 0 {
			ended[attemptKey{f.Ref.StepID, f.Ref.Attempt}] = f
			res, err := endOutcome(f)
			if err != nil {
				// Not what a worker writes: the attempt stays running
				// until its timeout, and the run can still be stopped.
				o.log.ErrorContext(ctx, "ignoring an unreadable step end", "attempt", f.Ref.String(), "error", err)
				continue
			}
			body = mustJSON(res)
		}
		evs = append(evs, store.Event{ID: outcomeEventID(f.Ref.StepID, f.Ref.Attempt), Body: body, Recorded: true, Ops: f.Ops})
	}
	return evs, ended, nil
}

// roundBudget bounds one round of Process: the pending events it decides,
// the steps each decision may start or end, and how many starts of worker
// steps count as one (engine.WithLightWorkerStarts).
type roundBudget struct{ events, starts, ends, light int }

// fullRound is the budget of a round unless the store's count of its
// commit scaled it down (round.fit).
func fullRound() roundBudget {
	return roundBudget{events: maxRoundEvents, starts: maxStartsPerDecision, ends: maxEndsPerDecision, light: deferredPerStart}
}

// spent is b bounded by what a decision spent of it: each bound no
// larger than the decision's count against it (at least one), so that
// scaling it decides less than the decision did, not the same again.
func (b roundBudget) spent(s engine.Spent) roundBudget {
	return roundBudget{events: b.events, starts: min(b.starts, max(1, s.Starts)),
		ends: min(b.ends, max(1, s.Ends)), light: min(b.light, max(1, s.LightStarts))}
}

// scaled returns the budget of one event deciding num/den of what b let
// it decide (num < den), each bound at least one smaller while above one;
// false once it is one event deciding one step.
func (b roundBudget) scaled(num, den int) (roundBudget, bool) {
	if b.starts <= 1 && b.ends <= 1 && b.light <= 1 {
		return b, false
	}
	scale := func(n int) int { return max(1, min(n-1, n*num/den)) }
	return roundBudget{events: 1, starts: scale(b.starts), ends: scale(b.ends), light: scale(b.light)}, true
}

// abortRun fails a run whose next commit cannot be stored (an item past
// DynamoDB's size limit): instead of the decisions that made it too large,
// it commits the engine's Abort from the last stored state, which drops the
// evaluated params and outputs, ends the steps in flight and fails the run
// with the reason, and consumes every pending event. Retrying the same
// events could only fail the same way: the run would be wedged.
func (o *Rounds) abortRun(ctx context.Context, g *engine.Graph, rec *store.RunRecord, before *engine.Instance,
	pending []store.Event, cause *store.ItemTooLargeError, now time.Time) (*engine.Instance, bool, error) {
	o.log.ErrorContext(ctx, "a run's state is too large to store: failing the run", "workflow_id", before.WorkflowID,
		"instance_id", before.InstanceID, "run_id", before.RunID, "error", cause)
	opts := []engine.Option{engine.WithMaxEnds(maxEndsPerDecision)}
	var book *permitBook
	if hasWork(before) {
		var err error
		if book, err = o.loadPermits(ctx, g, before, now); err != nil {
			return nil, false, err
		}
		opts = append(opts, engine.WithPermits(book))
	}
	d, err := engine.Decide(ctx, g, before, engine.Abort{Reason: cause.Error()}, now, opts...)
	if err != nil {
		return nil, false, err
	}
	acc := decisionSet{g: g}
	acc.add(d)
	consumed := make([]string, 0, len(pending))
	for _, p := range pending {
		if !p.Recorded {
			consumed = append(consumed, p.ID)
		}
	}
	rd, err := o.gatherRound(ctx, before, d.State, &acc, runStrategy{}, now, nil)
	if err != nil {
		return nil, false, err
	}
	commit, err := o.planCommit(ctx, planInput{g: g, rec: rec, before: before, after: d.State, acc: &acc,
		consumed: consumed, book: book, cont: d.Continue, reads: &rd, now: now})
	if err != nil {
		return nil, false, err
	}
	if err := o.slotWrites(&commit, before, d.State, rd.slots); err != nil {
		return nil, false, err
	}
	for _, p := range pending {
		commit.Ops = metering.Sum(commit.Ops, p.Ops)
	}
	if err := o.store.Runs.CommitRun(ctx, commit); err != nil {
		return nil, false, err
	}
	return d.State, d.Continue, nil
}

// decisionSet accumulates the decisions of one commit of a run of graph g.
type decisionSet struct {
	g           *engine.Graph
	commands    []engine.Command
	timeline    []engine.TimelineEntry
	transitions []engine.Transition
	// ended are the attempts whose workers wrote their ends, read this
	// round (see workerEnd).
	ended map[attemptKey]*store.FinishedAttempt
}

func (a *decisionSet) add(d *engine.Decision) {
	a.commands = append(a.commands, d.Commands...)
	a.timeline = append(a.timeline, d.Timeline...)
	a.transitions = append(a.transitions, d.Transitions...)
}

type attemptKey struct {
	step    string
	attempt int64
}

// buildCommit turns accumulated decisions into the store's transaction:
// the new state with its outbox, the touched step attempts with their new
// timeline entries, instance timeline entries and the consumed events. It
// reads nothing: what it needs from the store (the offloaded loop params
// of attempts it rewrites), and the attempts the decisions touched, are in
// rd (gather).
func (o *Rounds) buildCommit(ctx context.Context, g *engine.Graph, rec *store.RunRecord, before, after *engine.Instance, acc *decisionSet, consumed []string,
	rd *commitReads, now time.Time) (store.Commit, error) {
	touched := rd.touched
	// The run item keeps no settled attempt's params or outputs: they are
	// in the attempt items (written below when the attempt settles).
	state, offloadedParams, err := encodeState(after)
	if err != nil {
		return store.Commit{}, err
	}
	c := store.Commit{
		WorkflowID: rec.WorkflowID, InstanceID: rec.InstanceID, RunID: rec.RunID,
		ExpectV: rec.V, Status: string(after.Status), State: state, Pages: rec.Pages, PriorTimeline: rec.Timeline, Consumed: consumed,
		Unsettled: unsettled(after), Timeline: touched.runTimeline,
		SweepAt: o.sweepAt(ctx, g, after, now, rec.SweepAt), LoopParams: offloadedParams,
		Ops: rec.Ops, PriorBytes: rec.Bytes, PriorSweepAt: rec.SweepAt,
	}
	cmdMsgs, work, err := o.commandMessages(ctx, g, after, acc.commands, now)
	if err != nil {
		return store.Commit{}, err
	}
	for _, k := range touched.order {
		if a, ok := attemptWrite(g, before, after, acc, touched, work, rd.loopParams, k); ok {
			c.Attempts = append(c.Attempts, a)
		}
	}
	if evs := changeEvents(after, acc.transitions); len(evs) > 0 {
		msgs, err := eventsMessage(ctx, evs...)
		if err != nil {
			return store.Commit{}, err
		}
		c.Outbox = append(c.Outbox, msgs...)
	}
	c.Outbox = append(c.Outbox, cmdMsgs...)
	c.Outbox = append(c.Outbox, backfillEnded(before, after)...)
	if before.Status != after.Status || before.StartTime != after.StartTime || before.EndTime != after.EndTime {
		c.Instance = &store.InstanceUpdate{
			RunID: after.RunID, Status: string(after.Status), StartTime: after.StartTime,
			EndTime: after.EndTime, ModifyTime: now.UnixMilli(),
		}
	}
	return c, nil
}

// encodeState returns the run item's state — settled attempts' params and
// outputs left to their attempt items — and the loop params the state
// leaves out from this commit on, which go to items of their own in the
// same transaction.
func encodeState(after *engine.Instance) ([]byte, []store.LoopParams, error) {
	offloaded := engine.Offload(after)
	state, err := json.Marshal(offloaded)
	if err != nil {
		return nil, nil, fmt.Errorf("encode state: %w", err)
	}
	var loopParams []store.LoopParams
	for i := range offloaded.Steps {
		ss := &after.Steps[i]
		if lp, ok := ss.Params[engine.LoopParamsName]; ok && offloaded.Steps[i].LoopParamsOffloaded {
			body, err := json.Marshal(engine.Values{engine.LoopParamsName: lp})
			if err != nil {
				return nil, nil, fmt.Errorf("encode the loop params of step %s: %w", ss.StepID, err)
			}
			loopParams = append(loopParams, store.LoopParams{StepID: ss.StepID, Attempt: ss.Attempt, Body: body})
		}
	}
	return state, loopParams, nil
}

// touched is what a commit's decisions did to step attempts.
type touched struct {
	// order lists the attempts touched, in first-touch order.
	order []attemptKey
	// timeline holds each attempt's new timeline entries; lastTo the
	// status its last transition entered; created the attempts this
	// commit creates (its write is their first).
	timeline map[attemptKey][][]byte
	lastTo   map[attemptKey]string
	created  map[attemptKey]bool
	// runTimeline is the run's own new timeline entries.
	runTimeline []store.TimelineItem
}

// touchedAttempts sorts the decisions' transitions and timeline entries
// by step attempt.
func touchedAttempts(acc *decisionSet, after *engine.Instance) *touched {
	t := &touched{timeline: map[attemptKey][][]byte{}, lastTo: map[attemptKey]string{}, created: map[attemptKey]bool{}}
	touch := func(k attemptKey) {
		if _, ok := t.timeline[k]; !ok {
			t.timeline[k] = nil
			t.order = append(t.order, k)
		}
	}
	for _, tr := range acc.transitions {
		if tr.StepID != "" {
			k := attemptKey{tr.StepID, tr.Attempt}
			touch(k)
			t.lastTo[k] = tr.To
			if tr.To == string(model.StepCreated) {
				t.created[k] = true
			}
		}
	}
	seq := after.Seq * 1000
	for _, e := range acc.timeline {
		if e.StepID == "" {
			seq++
			t.runTimeline = append(t.runTimeline, store.TimelineItem{Seq: seq, Body: storeEntry(e)})
			continue
		}
		k := attemptKey{e.StepID, e.Attempt}
		touch(k)
		t.timeline[k] = append(t.timeline[k], storeEntry(e))
	}
	return t
}

// commandMessages are the outbox messages of a commit's commands, with the
// work message of each step it starts.
func (o *Rounds) commandMessages(ctx context.Context, g *engine.Graph, after *engine.Instance, cmds []engine.Command,
	now time.Time) ([]store.Message, map[attemptKey]store.Message, error) {
	var msgs []store.Message
	work := map[attemptKey]store.Message{}
	crowd := -1
	for _, cmd := range cmds {
		if _, isRun := cmd.(engine.RunStep); isRun {
			crowd++
		}
	}
	var atWork []store.FinishedStep
	if crowd >= 0 && crowd < crowdInline {
		// Which steps are in flight, read once for all the steps the
		// commit starts (StepWork.Apart); a failed read marks none.
		atWork, _ = o.atWork(ctx, g, after)
	}
	for _, cmd := range cmds {
		l := launch{crowd: max(crowd, 0)}
		if rs, isRun := cmd.(engine.RunStep); isRun && crowd < crowdInline {
			l.apart = apart(g, atWork, rs.StepID)
		}
		m, ok, err := o.outboxMessage(after, cmd, l, now)
		if err != nil {
			return nil, nil, err
		}
		if ok {
			msgs = append(msgs, m)
			if rs, isRun := cmd.(engine.RunStep); isRun {
				work[attemptKey{rs.StepID, rs.Attempt}] = m
			}
		}
	}
	return msgs, work, nil
}

// attemptWrite is the write of touched attempt k, if the commit writes it.
func attemptWrite(g *engine.Graph, before, after *engine.Instance, acc *decisionSet, t *touched,
	work map[attemptKey]store.Message, loopParams map[attemptKey]map[string]any, k attemptKey) (store.Attempt, bool) {
	ss := after.Step(k.step)
	if ss == nil {
		return store.Attempt{}, false
	}
	if ss.Attempt != k.attempt {
		// An older attempt ended in this commit and a retry started: record
		// its final status on its own item, keeping its body.
		a := store.Attempt{StepID: k.step, Attempt: k.attempt, Status: t.lastTo[k], Timeline: t.timeline[k]}
		if old := before.Step(k.step); old != nil && old.Attempt == k.attempt && !t.created[k] && g.OnWorker(k.step) {
			a.Start = stateStart(before, old)
		}
		if f := acc.ended[k]; f != nil && !withWorkerEnd(&a, f) {
			return store.Attempt{}, false
		}
		return a, true
	}
	if neverStarted(ss) {
		// Unsatisfied without running: the state alone describes it, so no
		// item is written (readers synthesise its view).
		return store.Attempt{}, false
	}
	view := bodyOf(after, ss)
	if lp, ok := loopParams[k]; ok {
		view.Params = withLoopParams(view.Params, lp)
	}
	a := store.Attempt{
		StepID: ss.StepID, Attempt: ss.Attempt, Status: string(ss.Status),
		Body: mustJSON(view), Timeline: t.timeline[k],
	}
	if m, ok := work[k]; ok && deferrable(a, m) {
		return store.Attempt{}, false // the worker's claim writes it (see deferred.go)
	}
	if f := acc.ended[k]; f != nil {
		// Unless its worker wrote it (see deferred.go).
		return a, withWorkerEnd(&a, f)
	}
	if !t.created[k] && g.OnWorker(ss.StepID) {
		// A later write of an attempt whose start may have been left to a
		// claim that has not come.
		if s := stateStart(after, ss); s != nil {
			a.Start = &store.AttemptStart{Timeline: s.Timeline}
		}
	}
	return a, true
}

// changeEvents are the change events of a run's transitions: one per run or
// step attempt, carrying its changes in order.
func changeEvents(after *engine.Instance, transitions []engine.Transition) []events.Event {
	var order []attemptKey
	changes := map[attemptKey][]events.Change{}
	for _, t := range transitions {
		k := attemptKey{t.StepID, t.Attempt}
		if _, ok := changes[k]; !ok {
			order = append(order, k)
		}
		changes[k] = append(changes[k], events.Change{OldStatus: t.From, NewStatus: t.To, Sequence: t.Seq, Time: t.Time})
	}
	evs := make([]events.Event, len(order))
	for i, k := range order {
		evs[i] = events.Transitions(after.WorkflowID, after.WorkflowVersion, after.InstanceID, after.RunID, k.step, k.attempt, changes[k])
		evs[i].Parent = eventParent(after.Parent)
	}
	return evs
}

// launch is what a run_step message tells its worker of the steps around
// it: how many other steps its commit started (StepWork.Crowd), and
// whether it leaves others in flight apart from it (StepWork.Apart).
type launch struct {
	crowd int
	apart bool
}

// outboxMessage maps an engine command to the queue message that carries it,
// with the run's trace.
func (o *Rounds) outboxMessage(st *engine.Instance, cmd engine.Command, l launch, now time.Time) (store.Message, bool, error) {
	m, ok, err := o.commandMessage(st, cmd, l, now)
	m.Trace = st.TraceID
	return m, ok, err
}

// commandMessage maps an engine command to its queue message.
func (o *Rounds) commandMessage(st *engine.Instance, cmd engine.Command, l launch, now time.Time) (store.Message, bool, error) {
	run := store.Wake{WorkflowID: st.WorkflowID, InstanceID: st.InstanceID, RunID: st.RunID}
	switch c := cmd.(type) {
	case engine.RunStep:
		m := runStepMessage(run, c)
		m.Crowd, m.Apart = l.crowd, l.apart
		if ss := st.Step(c.StepID); ss != nil && ss.Attempt == c.Attempt && startedInOne(ss) {
			m.StartTime = ss.StartTime
		}
		// A step to run is on the critical path: the committer sends it
		// itself (see dispatchDirect) when it can.
		return store.Message{Queue: store.QueueWork, Body: EncodeWork(m), Direct: o.dispatch != nil}, true, nil
	case engine.StartTimer:
		m := TimerWork{StepRef: stepRefOf(run, c.StepID, c.Attempt), Purpose: c.Purpose, FireAt: c.FireAt}
		msg := store.Message{
			Queue: store.QueueWork, Body: EncodeWork(m),
			DelaySeconds: delaySeconds(c.FireAt.Sub(now)), At: c.FireAt.UnixMilli(),
		}
		if c.Purpose == engine.PurposeWorkflowTimeout {
			// Named, so that the run's end can delete it (InstanceDone).
			msg.Schedule = store.RunTimeoutSchedule(st.WorkflowID, st.InstanceID, st.RunID)
		}
		return msg, true, nil
	case engine.AnnounceSignal:
		m := AnnounceWork{StepRef: stepRefOf(run, c.StepID, c.Attempt), SignalName: c.Name, Params: c.Params, Payload: c.Payload, Index: c.Index}
		return store.Message{Queue: store.QueueWork, Body: EncodeWork(m)}, true, nil
	case engine.StartSubworkflow:
		m := SubworkflowWork{StepRef: stepRefOf(run, c.StepID, c.Attempt), Subworkflow: &c}
		return store.Message{Queue: store.QueueWork, Body: EncodeWork(m)}, true, nil
	case engine.CancelJob:
		m := CancelJobWork{StepRef: stepRefOf(run, c.StepID, c.Attempt), StepType: c.StepType, Job: c.Job, Reason: c.Reason}
		return store.Message{Queue: store.QueueWork, Body: EncodeWork(m)}, true, nil
	case engine.InstanceDone:
		// Status changes reach subscribers from the stream. A workflow
		// timeout still to come was handed to EventBridge Scheduler when
		// it was more than SQS's delay limit away: delete its schedule,
		// which would fire days later for a run long ended (an invocation,
		// a work message and a worker's, each billed, and one schedule
		// more in the account's quota until then).
		if engine.OwnWorkflowTimer(st) && st.TimeoutAt > now.UnixMilli() && st.TimeoutAt-st.StartTime > MaxSQSDelay.Milliseconds() {
			return store.Message{Queue: store.QueueUnschedule, Body: store.RunTimeoutSchedule(st.WorkflowID, st.InstanceID, st.RunID)}, true, nil
		}
		return store.Message{}, false, nil
	case engine.CreateLoop, engine.StartChild, engine.RestartChild, engine.StopChild:
		// Writes of the commit itself (see loopWrites), not messages.
		return store.Message{}, false, nil
	default:
		return store.Message{}, false, fmt.Errorf("orchestrator: unknown command %T", cmd)
	}
}

// delaySeconds converts a wait into an SQS delay: rounded up, at most 15 minutes.
func delaySeconds(d time.Duration) int32 {
	if d <= 0 {
		return 0
	}
	if d > MaxSQSDelay {
		d = MaxSQSDelay
	}
	return int32((d + time.Second - 1) / time.Second)
}

// eventsMessage is the outbox message that publishes evs, each naming the
// request's caller (if any) as its principal.
func eventsMessage(ctx context.Context, evs ...events.Event) ([]store.Message, error) {
	if p := caller.From(ctx); p != "" {
		for i := range evs {
			evs[i].Principal = p
		}
	}
	body, err := events.EncodePlainBatch(evs) // the outbox is compressed as a whole
	if err != nil {
		return nil, err
	}
	return []store.Message{{Queue: store.QueueEvents, Body: body, Events: len(evs)}}, nil
}

// sweepAt is when the recovery sweeper is to look at a run after this
// commit (unix ms; 0 leaves it out of the sweep index): when the run should
// have heard back from the work it awaits, plus the sweep grace. A worker's
// answer is due within its claim lease; a timer's at its fire time. A run
// that awaits nothing (ended, or still to start) is not indexed: the events
// that move it are.
//
// Moving the due time costs the index a delete and a put, so a commit keeps
// the run's current one (prev) while it is not early and at most two sweep
// graces late; a new one is set one grace past what is needed, so a busy
// run moves it about once a grace (a minute) rather than on every commit.
func (o *Rounds) sweepAt(ctx context.Context, g *engine.Graph, st *engine.Instance, now time.Time, prev int64) int64 {
	need := o.sweepNeed(ctx, g, st, now)
	grace := o.sweepGrace.Milliseconds()
	switch {
	case need == 0:
		return 0
	case prev >= need && prev-need <= 2*grace:
		return prev
	default:
		return need + grace
	}
}

// sweepNeed is the earliest a run may be swept without a false alarm (unix
// ms; 0: never).
func (o *Rounds) sweepNeed(ctx context.Context, g *engine.Graph, st *engine.Instance, now time.Time) int64 {
	cmds, err := engine.Awaited(ctx, g, st, now)
	if err != nil {
		// A timeout that no longer evaluates: look again after a lease.
		o.log.WarnContext(ctx, "cannot list what a run awaits", "workflow_id", st.WorkflowID, "instance_id", st.InstanceID, "error", err)
		return now.Add(o.claimLease + o.sweepGrace).UnixMilli()
	}
	var due time.Time
	earliest := func(t time.Time) {
		if due.IsZero() || t.Before(due) {
			due = t
		}
	}
	for _, c := range cmds {
		switch c := c.(type) {
		case engine.RunStep, engine.StartSubworkflow:
			earliest(now.Add(o.claimLease + o.sweepGrace))
		case engine.StartTimer:
			earliest(maxTime(c.FireAt, now).Add(o.sweepGrace))
		}
	}
	if due.IsZero() {
		return 0
	}
	return due.UnixMilli()
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// paramsBook reads offloaded step params (engine.StepParams) from the
// attempt items of one instance, each once. err is the first read that
// failed: the decision is then not committed.
type paramsBook struct {
	store    Stores
	wf       string
	inst     int64
	attempts map[paramsKey]engine.Values
	loops    map[paramsKey]map[string]any
	err      error
	// items reads items_from objects; scans keeps each object's scan, so
	// that a round decided again (a commit fitted to the store's limits)
	// does not read the whole object again.
	items engine.ItemsReader
	scans map[string]engine.ItemsObject
}

// errNoItemsReader fails the decisions of a foreach step with items_from
// where the runtime was given no reader.
var errNoItemsReader = errors.New("items_from: this runtime was given no reader of S3 objects")

// ScanItems implements engine.ItemsReader, scanning each object once.
func (b *paramsBook) ScanItems(ctx context.Context, src engine.ItemsSource) (engine.ItemsObject, error) {
	if b.items == nil {
		return engine.ItemsObject{}, errNoItemsReader
	}
	k := fmt.Sprint(src.URI, "\n", src.Format, "\n", src.Fields) // fmt prints a map sorted
	if obj, ok := b.scans[k]; ok {
		return obj, nil
	}
	obj, err := b.items.ScanItems(ctx, src)
	if err != nil {
		return obj, err
	}
	if b.scans == nil {
		b.scans = map[string]engine.ItemsObject{}
	}
	b.scans[k] = obj
	return obj, nil
}

// ReadItems implements engine.ItemsReader.
func (b *paramsBook) ReadItems(ctx context.Context, src engine.ItemsSource, obj engine.ItemsObject, at engine.ItemsCursor, want []int64) ([]engine.Values, engine.ItemsCursor, error) {
	if b.items == nil {
		return nil, at, errNoItemsReader
	}
	return b.items.ReadItems(ctx, src, obj, at, want)
}

type paramsKey struct {
	step         string
	attempt, run int64
}

// LoopParams implements engine.LoopParamsReader, reading each item once.
func (b *paramsBook) LoopParams(ctx context.Context, step string, attempt, run int64) (map[string]any, error) {
	k := paramsKey{step, attempt, run}
	if v, ok := b.loops[k]; ok {
		return v, nil
	}
	lp, err := loopParamsOf(ctx, b.store, b.wf, b.inst, run, step, attempt)
	if err != nil {
		if b.err == nil {
			b.err = err
		}
		return nil, err
	}
	if b.loops == nil {
		b.loops = map[paramsKey]map[string]any{}
	}
	b.loops[k] = lp
	return lp, nil
}

// StepParams implements engine.StepParams.
func (b *paramsBook) StepParams(ctx context.Context, step string, attempt, run int64) (engine.Values, error) {
	k := paramsKey{step, attempt, run}
	if v, ok := b.attempts[k]; ok {
		return v, nil
	}
	a, err := attemptOf(ctx, b.store, b.wf, b.inst, run, step, attempt)
	if err == nil {
		var view *attemptBody
		if view, err = decodeAttemptBody(*a); err == nil {
			var params engine.Values
			if params, err = normalizedParams(view.Params); err == nil {
				if b.attempts == nil {
					b.attempts = map[paramsKey]engine.Values{}
				}
				b.attempts[k] = params
				return params, nil
			}
		}
	}
	if b.err == nil {
		b.err = fmt.Errorf("read the params of %s/%d run %d step %s attempt %d: %w", b.wf, b.inst, run, step, attempt, err)
	}
	return nil, b.err
}

// decisionReads are what a decision that may start steps reads besides the
// run: the breakpoints it meets — read already (bps), or when a decision
// first starts a step (lazy) — and a snapshot of the permits its steps can
// take.
type decisionReads struct {
	bps  []engine.Breakpoint
	lazy *breakpointBook
	book *permitBook
	err  error
}

// option is the engine option that gives a decision the breakpoints.
func (r decisionReads) option() engine.Option {
	if r.lazy != nil {
		return engine.WithBreakpointReader(r.lazy)
	}
	return engine.WithBreakpoints(r.bps)
}

// readForDecision makes a decision's reads for run st of graph g. While a
// step of the run has not started, the breakpoints are read at once, beside
// the permits (prefetchForDecision): its rounds mostly start steps. Once
// every step has, they are read when a decision first starts one (a retry,
// a restart): a round that starts none — a run's last step ending, the
// rounds of a loop applying its iterations' ends — reads none (two
// queries, the workflow's and, for an iteration, its owner's). (Lazy for
// every round, the breakpoints' query waited after the permits' in the
// first round of each chain: httpchains 145-188 steps/s against 150-181,
// start p50 1,012-1,228 ms against 962-1,312, 2026-11-28.)
func (o *Rounds) readForDecision(ctx context.Context, g *engine.Graph, st *engine.Instance, now time.Time) decisionReads {
	if !everyStepStarted(g, st) {
		return o.prefetchForDecision(ctx, g, st, now)
	}
	book, err := o.loadPermits(ctx, g, st, now)
	return decisionReads{lazy: &breakpointBook{ctx: ctx, o: o, wf: st.WorkflowID, owner: runOwner(st)}, book: book, err: err}
}

// everyStepStarted reports whether every step of graph g has an attempt in
// run st.
func everyStepStarted(g *engine.Graph, st *engine.Instance) bool {
	if len(st.Steps) < len(g.Workflow().Steps) {
		return false
	}
	for i := range st.Steps {
		if st.Steps[i].Attempt == 0 {
			return false
		}
	}
	return true
}

// prefetchForDecision is readForDecision with the breakpoints read at
// once, side by side with the permits: for a round whose decision almost
// surely starts a step (a run's first, a chain's next).
func (o *Rounds) prefetchForDecision(ctx context.Context, g *engine.Graph, st *engine.Instance, now time.Time) decisionReads {
	var r decisionReads
	var bpErr error
	read := make(chan struct{})
	go func() {
		defer close(read)
		r.bps, bpErr = o.runBreakpoints(ctx, st.WorkflowID, runOwner(st))
	}()
	book, err := o.loadPermits(ctx, g, st, now)
	<-read
	r.book, r.err = book, errors.Join(bpErr, err)
	return r
}

// breakpointBook reads a run's breakpoints (runBreakpoints) when a
// decision of its round first asks (engine.BreakpointReader), once. err is
// the read's failure: the round's decisions are then not committed.
type breakpointBook struct {
	ctx       context.Context
	o         *Rounds
	wf, owner string
	bps       []engine.Breakpoint
	read      bool
	err       error
}

// Breakpoints implements engine.BreakpointReader.
func (b *breakpointBook) Breakpoints() []engine.Breakpoint {
	if !b.read {
		b.bps, b.err = b.o.runBreakpoints(b.ctx, b.wf, b.owner)
		b.read = true
	}
	return b.bps
}

// runOwner is the workflow whose breakpoints an iteration meets besides its
// own ("" for a run that is no iteration; see runBreakpoints).
func runOwner(st *engine.Instance) string {
	if p := st.Parent; p != nil && !p.Subworkflow {
		return p.Owner
	}
	return ""
}

// maxDirect is the most steps one commit dispatches itself: one
// SendMessageBatch. A commit that starts more (a fan-out) leaves them all to
// the stream router: sent in one batch by the router, they run together and
// their outcomes reach the decider together, which decides them in one
// commit; dispatched while the committer goes on with its next rounds, they
// competed with it (measured on the local stack: a 250-wide Http fan at 25
// steps/s instead of 52, its start request 10 s instead of 1.2 s). Up to
// four, a 10-wide Http DAG's next steps crossed the stream a second time
// (gap p50 500 ms); since its outcomes' ends are written by their workers
// and its commits are single puts, ten direct (gap p50 249 ms, 39 instead of
// 20 steps/s; 0.17 $ more per million steps: the router's backstop copies
// and the workers' peeks at them). Measured again with a fan-out's start in
// one commit (2026-11-28, httpfan 250, three runs of three each): all 250
// dispatched directly made the first call come 93-138 ms after the start
// request instead of 155-450, but the start request 438-708 ms instead of
// 86-182 (the sends are in its path) at the same throughput, and cost 11-13%
// more ($2.43-2.48 per million steps as deployed instead of $2.18-2.20).
const maxDirect = 10

// limitDirect clears the Direct marks of an outbox that starts more than
// maxDirect steps.
func limitDirect(outbox []store.Message) {
	n := 0
	for _, m := range outbox {
		if m.Direct {
			n++
		}
	}
	if n <= maxDirect {
		return
	}
	for i := range outbox {
		outbox[i].Direct = false
	}
}

// dispatchDirect sends a committed outbox's Direct messages (steps to run)
// at once. A failure only costs time: the router's backstop copy follows.
func (o *Rounds) dispatchDirect(ctx context.Context, outbox []store.Message) {
	var msgs []store.Message
	for _, m := range outbox {
		if m.Direct {
			m.Direct = false
			msgs = append(msgs, m)
		}
	}
	if len(msgs) == 0 || o.dispatch == nil {
		return
	}
	// Its sends are in what the commit recorded (store's afterCommit).
	if err := o.dispatch.Dispatch(metering.Unmetered(ctx), msgs); err != nil {
		o.log.WarnContext(ctx, "direct dispatch failed; the stream router's backstop will send the work", "error", err)
	}
}
