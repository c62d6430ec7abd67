package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/logctx"
	"github.com/maestro-serverless/maestro/metering"
	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/pricing"
	"github.com/maestro-serverless/maestro/store"
)

// A decision round is one fixed pipeline:
//
//	load     the run's item and the events to apply (roundSource.load)
//	prepare  the state decoded, the graph, the run strategy, the reads
//	decide   each event through engine.Decide, up to the round's budget
//	gather   born iterations decided; every store read the commit needs
//	         (gatherRound)
//	plan     the commit built from the decisions and those reads, reading
//	         nothing (planCommit): the decisions' writes, permits, loops
//	commit   the run-slot writes (slotWrites), then one conditional
//	         transaction (store.Runs.CommitRun); one the store refuses for
//	         a limit is planned again from as many decisions as the
//	         store's count of it says one transaction holds (fit)
//	finish   direct dispatch, metrics, the applied events deleted; or the
//	         failed commit's remedy (an aborted run, the run queued)
//
// Three sources feed it, each a roundSource: a decider's wake (the run's
// inbox), a worker's inline continuation (the outcome it holds) and a
// fresh run's first decision (its start, committed with its creation).

// roundSource is what differs between the entry modes of a round.
type roundSource interface {
	// begin starts what may go on beside the run's read.
	begin(ctx context.Context, r *round)
	// load reads the run's item and the events it holds for the round.
	load(ctx context.Context, r *round) error
	// events sets the events the round applies once the state is decoded;
	// done reports that there is nothing to decide.
	events(ctx context.Context, r *round) (done bool, err error)
	// ready runs once the graph is known, before the run strategy.
	ready(ctx context.Context, r *round) error
	// strategy returns the run strategy of a run about to start.
	strategy(ctx context.Context, r *round) (runStrategy, error)
	// reads makes the decision's reads (breakpoints, permits).
	reads(ctx context.Context, r *round) decisionReads
	// settle waits for what began beside the reads: the round decides
	// only once it succeeded. It may be called more than once.
	settle() error
	// inbox reports whether an applied event was read from the run's
	// inbox, and so is consumed (or discarded) by the commit.
	inbox(p store.Event) bool
	// decided sees the decisions before the commit is built.
	decided(r *round)
	// shape adds the source's own writes to the built commit.
	shape(r *round) error
	// admitted adjusts a commit the run slots admitted.
	admitted(c *store.Commit)
	// fits reports whether a commit too large is planned again from
	// fewer decisions (fit), else its error is the round's; raw whether a
	// failed commit's error is returned as is, with no remedy.
	fits() bool
	raw() bool
}

// round is one pass of the pipeline over one run.
type round struct {
	o     *Rounds
	w     store.Wake
	b     roundBudget
	src   roundSource
	began time.Time

	rec     *store.RunRecord
	pending []store.Event
	before  engine.Instance
	ended   map[attemptKey]*store.FinishedAttempt
	g       *engine.Graph
	strat   runStrategy
	now     time.Time
	opts    []engine.Option

	book *permitBook
	// bps reads the breakpoints when a decision first starts a step (nil
	// when they were read with the run, or the run has ended).
	bps      *breakpointBook
	sigs     *signalBook
	params   *paramsBook
	children *childBook

	// decideOpts are opts with the budget's (decide); marks where each
	// decision left the round, decided acc as decide left it (cut).
	decideOpts        []engine.Option
	marks             []decideMark
	decided           decisionSet
	acc               decisionSet
	cur               *engine.Instance
	consumed, discard []string
	// decidedN is how many of pending the decisions took.
	decidedN int
	// recorded is the orchestration usage the run's commit recorded.
	recorded   pricing.Usage
	cont, more bool
	born       map[bornKey]*bornChild
	queued     []store.Event
	// unborn is where the round stood before it bore iterations; noBear
	// that it bears none (unbear).
	unborn bornFrom
	noBear bool
	// seen is set once the source saw the decisions (decided).
	seen   bool
	reads  commitReads
	commit store.Commit
}

// processOnce runs one round: load, decide pending events up to the commit
// budget, commit. more reports that pending work remains. With in, the
// round is a worker's inline continuation (see inlineRound); with fresh, the
// first decision of a run not yet written, committed with its creation
// (see startFresh).
func (o *Rounds) processOnce(ctx context.Context, w store.Wake, b roundBudget, in *inlineRound, fresh *freshRun) (*engine.Instance, bool, error) {
	var src roundSource = &wakeSource{}
	switch {
	case fresh != nil:
		src = &freshSource{fresh: fresh}
	case in != nil:
		src = &inlineSource{in: in}
	}
	r := &round{o: o, w: w, b: b, src: src, began: time.Now()}
	defer func() { _ = src.settle() }()
	return r.run(ctx)
}

// run is the pipeline.
func (r *round) run(ctx context.Context) (*engine.Instance, bool, error) {
	r.src.begin(ctx, r)
	if done, err := r.prepare(ctx); err != nil || done {
		return r.doneState(done), false, err
	}
	if err := r.decide(ctx); err != nil {
		return nil, false, err
	}
	if err := r.plan(ctx); err != nil {
		return nil, false, err
	}
	err := r.commitRun(ctx)
	if err != nil && overLimit(err) && (r.src.fits() || len(r.born) > 0) {
		// Nothing was written: the store refused the commit as it
		// planned it. The round commits what its count admits.
		if err = r.fit(ctx, err); err == nil {
			err = r.commitRun(ctx)
		}
	}
	if err != nil {
		return r.failed(ctx, err)
	}
	r.finish(ctx)
	return r.cur, r.more, nil
}

// doneState is the state a round that had nothing to decide returns.
func (r *round) doneState(done bool) *engine.Instance {
	if done {
		return &r.before
	}
	return nil
}

// prepare loads the run, decodes it, and gathers what deciding needs.
func (r *round) prepare(ctx context.Context) (done bool, err error) {
	if err := r.src.load(ctx, r); err != nil {
		return false, err
	}
	before, err := decodeState(r.rec)
	if err != nil {
		return false, err
	}
	r.before = *before
	if r.before.TraceID != "" {
		logctx.Add(ctx, "trace_id", r.before.TraceID)
	}
	if done, err := r.src.events(ctx, r); err != nil || done {
		return done, err
	}
	if r.g, _, err = r.o.graph(ctx, r.w.WorkflowID, r.before.WorkflowVersion); err != nil {
		return false, err
	}
	if err := r.src.ready(ctx, r); err != nil {
		return false, err
	}
	if r.before.Status == model.WorkflowCreated && !holdsNoSlot(&r.before) {
		// An iteration has no run strategy: its parent bounds how many
		// run at once; nor has a backfill's run: its backfill does. A
		// subworkflow's instance has its workflow's.
		if r.strat, err = r.src.strategy(ctx, r); err != nil {
			return false, err
		}
		if err := r.o.displace(ctx, r.w, r.strat.rule); err != nil {
			return false, err
		}
	}
	r.now = r.o.now()
	r.opts, r.bps = nil, nil
	if hasWork(&r.before) {
		reads := r.src.reads(ctx, r)
		if reads.err != nil {
			return false, reads.err
		}
		r.book, r.bps = reads.book, reads.lazy
		r.opts = append(r.opts, reads.option(), engine.WithPermits(r.book))
	}
	if err := r.src.settle(); err != nil {
		return false, err
	}
	r.sigs = &signalBook{ctx: ctx, store: r.o.store, log: r.o.log}
	r.params = &paramsBook{store: r.o.store, wf: r.w.WorkflowID, inst: r.w.InstanceID, items: r.o.items}
	r.children = &childBook{store: r.o.store}
	r.opts = append(r.opts, engine.WithSignals(r.sigs), engine.WithStepParams(r.params), engine.WithChildParams(r.children))
	return false, nil
}

// decide applies the pending events in order, as many as the round's
// budget holds, marking where each decision leaves the round (see cut):
// how many of them one transaction holds is the store's count to say
// (fit), not the round's.
func (r *round) decide(ctx context.Context) error {
	r.acc = decisionSet{g: r.g, ended: r.ended}
	r.cur = &r.before
	r.consumed, r.discard, r.cont, r.more = nil, nil, false, false
	r.decidedN = 0
	r.decideOpts = append([]engine.Option{engine.WithMaxStarts(r.b.starts), engine.WithMaxEnds(r.b.ends),
		engine.WithIterationStarts(iterationStarts), engine.WithLightWorkerStarts(r.b.light)}, r.opts...)
	r.marks = []decideMark{r.mark()}
	for n, p := range r.pending {
		if n > 0 && n >= r.b.events {
			r.more = true // this event waits for the next round
			break
		}
		r.decidedN = n + 1
		ev, err := engine.UnmarshalEvent(p.Body)
		if err != nil {
			// A malformed event can never apply; dropping it (and saying so)
			// keeps it from blocking the run forever.
			r.o.log.ErrorContext(ctx, "dropping undecodable event", "workflow_id", r.w.WorkflowID, "instance_id", r.w.InstanceID, "event_id", p.ID, "error", err)
			r.consumed = append(r.consumed, p.ID)
			continue
		}
		mark := r.book.checkpoint()
		// The book as the last decision left it: its mark's (see cut).
		r.marks[len(r.marks)-1].book = mark
		d, err := engine.Decide(ctx, r.g, r.cur, ev, r.now, r.decideOpts...)
		if err := r.readFailed(ctx, err); err != nil {
			return err
		}
		if err != nil {
			r.book.rollback(mark)
			r.o.log.ErrorContext(ctx, "dropping event the engine rejected", "workflow_id", r.w.WorkflowID, "instance_id", r.w.InstanceID, "event_id", p.ID, "error", err)
			r.consumed = append(r.consumed, p.ID)
			continue
		}
		switch {
		case !r.src.inbox(p):
			// Never stored in the inbox (an inline round's outcome, a
			// fresh run's start), or deleted with the attempt's outcome.
		case replayable(ev):
			r.discard = append(r.discard, p.ID)
		default:
			r.consumed = append(r.consumed, p.ID)
		}
		r.acc.add(d)
		r.cur = d.State
		if d.Continue {
			r.cont = true
			r.more = r.more || n+1 < len(r.pending)
			r.marks = append(r.marks, r.markAfter(d))
			break
		}
		r.marks = append(r.marks, r.markAfter(d))
	}
	r.decided = r.acc
	return nil
}

// decideMark is where the decide stage left the round after a decision:
// what a commit of the decisions up to it holds. Its book is the
// checkpoint taken before the next decision (the book cannot change in
// between), so marking costs no copy of the permits; the last mark has
// none, and is never cut back to.
type decideMark struct {
	commands, timeline, transitions int
	cur                             *engine.Instance
	consumed, discard               int
	// decided is how many pending events the decisions up to here took.
	decided int
	book    permitMark
	cont    bool
	// spent is what the decision that led here counted against the
	// round's budget.
	spent engine.Spent
}

// mark is the round's decideMark now.
func (r *round) mark() decideMark {
	return decideMark{commands: len(r.acc.commands), timeline: len(r.acc.timeline), transitions: len(r.acc.transitions),
		cur: r.cur, consumed: len(r.consumed), discard: len(r.discard), cont: r.cont, decided: r.decidedN}
}

// markAfter is the round's decideMark after decision d.
func (r *round) markAfter(d *engine.Decision) decideMark {
	m := r.mark()
	m.spent = d.Spent
	return m
}

// overLimit reports whether err is a commit refused for one of
// DynamoDB's limits (more items than one transaction holds, an item past
// its size), planned and refused before anything was written.
func overLimit(err error) bool {
	var tooLarge *store.ItemTooLargeError
	return errors.Is(err, store.ErrTooManyItems) || errors.As(err, &tooLarge)
}

// fit answers a commit the store refused for a limit (refused): it plans
// the commit again from as many of the round's decisions as the store's
// count of the refused one (store.Runs.CommitItems: its items, or the
// bytes of the item too large) says fit, in proportion, and counts again,
// until the store's count admits it. When one decision alone does not
// fit, that event is decided again with what it spent of its budget
// (starts, ends, worker starts' weight) scaled down by the same
// proportion. It returns the
// store's refusal once one event deciding one step does not fit either;
// nothing is written meanwhile.
func (r *round) fit(ctx context.Context, refused error) error {
	for {
		num, den := admitted(refused)
		n := len(r.marks) - 1
		switch {
		case len(r.born) > 0:
			// The ends of the iterations born wrote more than the room
			// they were born in foresaw.
			r.o.log.InfoContext(ctx, "iterations born finished do not fit the round's commit; creating them the ordinary way",
				"workflow_id", r.w.WorkflowID, "instance_id", r.w.InstanceID, "born", len(r.born), "error", refused)
			r.unbear()
		case !r.src.fits():
			return refused
		case n == 0:
			return refused // nothing decided: a smaller budget decides nothing smaller
		case n > 1:
			k := max(1, min(n-1, n*num/den))
			r.o.log.WarnContext(ctx, "commit too large; committing fewer of the round's decisions", "workflow_id", r.w.WorkflowID,
				"instance_id", r.w.InstanceID, "decisions", k, "of", n, "error", refused)
			r.cut(k)
		default:
			// Scaled from what the decision spent: a bound it never
			// reached, scaled, decides the same commit again.
			smaller, ok := r.b.spent(r.marks[1].spent).scaled(num, den)
			if !ok {
				return refused
			}
			r.o.log.WarnContext(ctx, "commit too large; deciding one event with a smaller budget", "workflow_id", r.w.WorkflowID,
				"instance_id", r.w.InstanceID, "starts", smaller.starts, "ends", smaller.ends, "light_starts", smaller.light, "error", refused)
			r.book.rollback(r.marks[0].book)
			r.b, r.children.born = smaller, nil
			if err := r.decide(ctx); err != nil {
				return err
			}
		}
		if err := r.plan(ctx); err != nil {
			return err
		}
		if refused = r.count(ctx); refused == nil {
			return nil
		}
	}
}

// admitted is the share of a refused commit that fits, num/den: the
// transaction items over those it counted, or the item size limit over
// the bytes of the item past it.
func admitted(refused error) (num, den int) {
	var tooLarge *store.ItemTooLargeError
	var many *store.TooManyItemsError
	switch {
	case errors.As(refused, &many):
		return store.MaxTransactItems, many.Items
	case errors.As(refused, &tooLarge) && tooLarge.Bytes > 0:
		return store.MaxItemBytes, tooLarge.Bytes
	}
	return 1, 2
}

// count asks the store how many items the round's commit, with its
// run-slot writes, holds: nil when one transaction takes it, else why not
// (*store.TooManyItemsError, or the error of its planning: an item too
// large).
func (r *round) count(ctx context.Context) error {
	n, err := r.items(ctx)
	if err == nil && n > store.MaxTransactItems {
		err = &store.TooManyItemsError{Items: n}
	}
	return err
}

// items is the store's count of the round's commit as it would be sent
// (final): its transaction items, or the error its planning meets.
func (r *round) items(ctx context.Context) (int, error) {
	c, err := r.final()
	if err != nil {
		return 0, err
	}
	return r.o.store.Runs.CommitItems(ctx, c)
}

// cut returns the round to where its first k decisions left it (marks[k]):
// the commit is planned again from those, and the events after them wait
// for the next round.
func (r *round) cut(k int) {
	m := r.marks[k]
	d := r.decided
	r.acc = d
	r.acc.commands = d.commands[:m.commands:m.commands]
	r.acc.timeline = d.timeline[:m.timeline:m.timeline]
	r.acc.transitions = d.transitions[:m.transitions:m.transitions]
	r.decided = r.acc
	r.cur, r.cont, r.more = m.cur, m.cont, true
	r.consumed, r.discard = r.consumed[:m.consumed], r.discard[:m.discard]
	r.decidedN = m.decided
	r.book.rollback(m.book)
	r.marks = r.marks[:k+1]
	// The iterations the plan bore are borne again from the decisions kept.
	r.children.born = nil
}

// readFailed returns why a decision must not be committed although the
// engine decided (decideErr is its error): a read it made failed, so it
// may be wrong, or it was cut short. The event is then retried.
func (r *round) readFailed(ctx context.Context, decideErr error) error {
	switch {
	case r.bps != nil && r.bps.err != nil: // the breakpoints, read when a step started
		return r.bps.err
	case r.sigs.err != nil: // a signal lookup
		return r.sigs.err
	case r.params.err != nil: // a read of offloaded step params
		return r.params.err
	case r.children.err != nil: // or of a child run's (getFromForeach, getFromSubworkflow)
		return r.children.err
	case decideErr != nil && ctx.Err() != nil:
		// Cut short (the invocation is ending), not rejected: the event
		// stays in the inbox for the next try. Consumed, it was lost — a
		// stack shut down mid-decision dropped iterations' start events.
		return fmt.Errorf("decide %s/%d/%d: %w", r.w.WorkflowID, r.w.InstanceID, r.w.RunID, ctx.Err())
	}
	return nil
}

// plan builds the round's commit: the iterations born finished decided
// (bear), the store read for what the commit needs (gather, readSlots),
// then its writes built from the decisions and those reads, reading
// nothing more (build).
func (r *round) plan(ctx context.Context) error {
	if !r.seen {
		// Once: an inline round picks the step its worker runs from
		// the decisions (a plan again, after fit, keeps that pick).
		r.src.decided(r)
		r.seen = true
	}
	if err := r.bear(ctx); err != nil {
		return err
	}
	return r.build(ctx)
}

// bear bears the iterations of the round's decisions that end in their
// first decision (bearChildren), in the room the store's count of the
// commit without them leaves. Their ends may write more than that room
// foresees: a commit the store then refuses is planned again without them
// (fit, unbear), each created the ordinary way.
func (r *round) bear(ctx context.Context) error {
	r.born, r.queued, r.children.born = nil, nil, nil
	if r.noBear || !r.mayBear() {
		return nil
	}
	r.unborn = bornFrom{mark: r.mark(), book: r.book.checkpoint()}
	if err := r.build(ctx); err != nil {
		return err
	}
	n, err := r.items(ctx)
	if overLimit(err) || n >= store.MaxTransactItems {
		return nil // fewer decisions first (fit)
	}
	if err != nil {
		return err
	}
	born, queued, cont, err := r.o.bearChildren(ctx, r.g, &r.acc, &r.cur, r.decideOpts, store.MaxTransactItems-n, r.book, r.children, r.now)
	r.born, r.queued, r.cont = born, queued, r.cont || cont
	return err
}

// bornFrom is where the round stood before it bore iterations.
type bornFrom struct {
	mark decideMark
	book permitMark
}

// unbear returns the round to where it stood before it bore iterations,
// and has it bear none: each is created the ordinary way.
func (r *round) unbear() {
	m := r.unborn.mark
	r.acc.commands = r.acc.commands[:m.commands:m.commands]
	r.acc.timeline = r.acc.timeline[:m.timeline:m.timeline]
	r.acc.transitions = r.acc.transitions[:m.transitions:m.transitions]
	r.cur, r.cont = m.cur, m.cont
	r.book.rollback(r.unborn.book)
	r.born, r.queued, r.children.born = nil, nil, nil
	r.noBear = true
}

// mayBear reports whether a decision of the round starts an iteration
// that may be born (mayBeBorn).
func (r *round) mayBear() bool {
	for _, c := range r.acc.commands {
		if x, ok := c.(engine.StartChild); ok {
			if s := r.g.Step(x.StepID); s != nil && mayBeBorn(s.Steps) {
				return true
			}
		}
	}
	return false
}

// build is the plan from the round's decisions as they stand: what the
// commit reads, gathered first, then its writes and the source's own.
func (r *round) build(ctx context.Context) error {
	var err error
	if r.reads, err = r.o.gatherRound(ctx, &r.before, r.cur, &r.acc, r.strat, r.now, &r.reads); err != nil {
		return err
	}
	r.commit, err = r.o.planCommit(ctx, planInput{g: r.g, rec: r.rec, before: &r.before, after: r.cur, acc: &r.acc,
		consumed: r.consumed, born: r.born, book: r.book, cont: r.cont, reads: &r.reads, now: r.now})
	if err != nil {
		return err
	}
	if err := r.src.shape(r); err != nil {
		return err
	}
	r.more = r.more || r.cont
	if len(r.queued) > 0 {
		r.commit.NewEvents = append(r.commit.NewEvents, r.queued...)
		r.more = true
	}
	return nil
}

// commitRun adds the run-slot writes to the commit and commits it. No slot
// (store.ErrNoSlot) comes from the commit's condition or, for a run behind
// an older queued one, from slotWrites itself: handled alike by failed.
func (r *round) commitRun(ctx context.Context) error {
	c, err := r.final()
	if err != nil {
		return err
	}
	c.RecordedOps = &r.recorded
	if err := r.o.store.Runs.CommitRun(ctx, c); err != nil {
		return err
	}
	r.commit = c
	return nil
}

// final is the planned commit with its run-slot writes, as it is sent.
func (r *round) final() (store.Commit, error) {
	c := r.commit
	if err := r.o.slotWrites(&c, &r.before, r.cur, r.reads.slots); err != nil {
		return c, err
	}
	r.src.admitted(&c)
	// What the events the commit applies carried is the run's now.
	for _, p := range r.pending[:r.decidedN] {
		c.Ops = metering.Sum(c.Ops, p.Ops)
	}
	c.Outbox = slices.Clone(c.Outbox)
	limitDirect(c.Outbox)
	return c, nil
}

// finish follows a commit: its steps dispatched (those of the iterations
// it bore running too, each the first step of its own run), its metrics
// emitted, the replayable events it applied deleted.
func (r *round) finish(ctx context.Context) {
	outbox := r.commit.Outbox
	for _, ch := range r.commit.Children {
		if ch.Born {
			outbox = append(slices.Clip(outbox), ch.Outbox...)
		}
	}
	r.o.dispatchDirect(ctx, outbox)
	r.o.emitDecision(r.began, r.w.WorkflowID, r.acc.transitions, runUsage(r.cur, r.recorded))
	if len(r.discard) == 0 {
		return
	}
	if err := r.o.store.Runs.DiscardEvents(ctx, r.w.WorkflowID, r.w.InstanceID, r.w.RunID, r.discard); err != nil {
		r.o.log.WarnContext(ctx, "cannot delete applied events; the next round will", "workflow_id", r.w.WorkflowID,
			"instance_id", r.w.InstanceID, "run_id", r.w.RunID, "events", len(r.discard), "error", err)
	}
}

// failed is the remedy for a commit that wrote nothing.
func (r *round) failed(ctx context.Context, err error) (*engine.Instance, bool, error) {
	if r.src.raw() {
		return nil, false, err // the caller creates the run the other way
	}
	var tooLarge *store.ItemTooLargeError
	if errors.As(err, &tooLarge) {
		// Nothing smaller fits (fit): failing the run is the way out.
		return r.o.abortRun(ctx, r.g, r.rec, &r.before, r.pending, tooLarge, r.now)
	}
	if errors.Is(err, store.ErrNoSlot) {
		// No slot: the run cannot start. Actions on it (a user stopping the
		// queued run, or FIRST_ONLY stopping a newcomer) still apply.
		acts := pendingActions(r.pending)
		if r.strat.rule == model.RunFirstOnly {
			acts = append(acts, pendingAction{ev: engine.Action{Action: string(model.WorkflowActionStop)}})
		}
		if len(acts) > 0 {
			return r.o.withoutStart(ctx, r.g, r.rec, &r.before, r.pending, acts, r.now)
		}
		return &r.before, false, err
	}
	return nil, false, err
}

// wakeSource is a decider's round: the run's inbox, with the outcomes
// workers recorded on their attempts.
type wakeSource struct{ settled }

func (*wakeSource) begin(context.Context, *round) {}

func (*wakeSource) load(ctx context.Context, r *round) (err error) {
	r.rec, r.pending, err = r.o.store.Runs.LoadRun(ctx, r.w.WorkflowID, r.w.InstanceID, r.w.RunID)
	return err
}

func (*wakeSource) events(ctx context.Context, r *round) (bool, error) {
	recorded, ended, err := r.o.workerEnds(ctx, r.w, &r.before, r.pending)
	if err != nil {
		return false, err
	}
	r.ended, r.pending = ended, append(recorded, r.pending...)
	return len(r.pending) == 0, nil
}

func (*wakeSource) ready(context.Context, *round) error { return nil }

func (*wakeSource) strategy(ctx context.Context, r *round) (runStrategy, error) {
	return r.o.strategy(ctx, r.w.WorkflowID)
}

func (*wakeSource) reads(ctx context.Context, r *round) decisionReads {
	return r.o.readForDecision(ctx, r.g, &r.before, r.now)
}

func (*wakeSource) inbox(p store.Event) bool { return !p.Recorded }
func (*wakeSource) decided(*round)           {}
func (*wakeSource) shape(*round) error       { return nil }
func (*wakeSource) admitted(*store.Commit)   {}
func (*wakeSource) fits() bool               { return true }
func (*wakeSource) raw() bool                { return false }

// settled is the settle of a source with nothing going on beside its reads.
type settled struct{}

func (settled) settle() error { return nil }

// freshSource is the first round of a run not yet written: its start
// event, committed with the run's creation (see startFresh).
type freshSource struct {
	settled
	fresh *freshRun
}

func (*freshSource) begin(context.Context, *round) {}

func (s *freshSource) load(_ context.Context, r *round) error {
	r.rec, r.pending = s.fresh.rec, s.fresh.pending
	return nil
}

func (*freshSource) events(_ context.Context, r *round) (bool, error) {
	return len(r.pending) == 0, nil
}
func (*freshSource) ready(context.Context, *round) error { return nil }

// strategy is the head's the start read a moment ago.
func (s *freshSource) strategy(context.Context, *round) (runStrategy, error) {
	return strategyOf(s.fresh.head), nil
}

func (*freshSource) reads(ctx context.Context, r *round) decisionReads {
	return r.o.readForDecision(ctx, r.g, &r.before, r.now)
}

func (*freshSource) inbox(store.Event) bool { return false }
func (*freshSource) decided(*round)         {}

func (s *freshSource) shape(r *round) error {
	r.commit.Create = s.fresh.create
	r.commit.Outbox = append(slices.Clone(s.fresh.outbox), r.commit.Outbox...)
	return nil
}

// admitted: a run created admitted was never queued.
func (*freshSource) admitted(c *store.Commit) { c.Dequeue = false }
func (*freshSource) fits() bool               { return false }
func (*freshSource) raw() bool                { return true }

// inlineSource is a worker's inline continuation (see inlineRound): it
// applies the outcome it holds, never stored in the inbox, and gives up
// (errContended) when others' events wait or others' steps are in flight.
// An inline round knows the run's version and parent (a run's constants)
// from its previous round, so its decision's other reads go out beside the
// run's.
type inlineSource struct {
	in       *inlineRound
	prefetch chan decisionReads
	// recording is the round's record write in flight, if any: it goes
	// on beside the reads, the decision is committed only once it
	// succeeded (settle), and processOnce waits for it before it returns,
	// so in.recorded says whether it did; waking says it writes the end
	// with its wake (inlineRound.wake).
	recording chan error
	waking    bool
}

func (s *inlineSource) begin(ctx context.Context, r *round) {
	in := s.in
	if in.prev == nil || !hasWork(in.prev) {
		return
	}
	pg, _, err := r.o.graph(ctx, r.w.WorkflowID, in.prev.WorkflowVersion)
	if err != nil {
		return
	}
	ch, prev := make(chan decisionReads, 1), in.prev
	s.prefetch = ch
	go func() { ch <- r.o.prefetchForDecision(ctx, pg, prev, r.o.now()) }()
	// The previous round left no other step in flight (a chain), or none
	// the step's successors wait for (one of independent branches): the
	// outcome is recorded beside the run's read too, without a wake.
	// Should the round leave it to the decider after all (the run found
	// contended, or busy with other branches), its worker wakes the
	// decider directly (wakeDecider). Partners were in flight (a join's
	// inputs): the end goes with its wake, whether this round applies it
	// or leaves it to the decider (join), so it is written beside the read
	// too.
	others, berr := r.o.othersAtWork(ctx, pg, prev, in.step)
	switch {
	case berr != nil || in.record == nil:
	case len(joinPartners(pg, in.step, others)) == 0:
		s.startRecord(in.record, false)
	case in.wake != nil:
		// The partners' ends are read next (join): their reads ride with
		// this end (an attempt item is one read unit).
		metering.From(ctx).Add(pricing.DynamoDBReadUnits, float64(len(joinPartners(pg, in.step, others))))
		s.startRecord(in.wake, true)
	}
}

// load: others' events wait when the run is not quiet — the decider is on
// its way to it. Asked with one small read, not a load of every event.
func (*inlineSource) load(ctx context.Context, r *round) error {
	rec, quiet, err := r.o.store.Runs.LoadQuietRun(ctx, r.w.WorkflowID, r.w.InstanceID, r.w.RunID)
	if err != nil {
		return err
	}
	if !quiet {
		return errContended
	}
	r.rec = rec
	return nil
}

func (*inlineSource) events(context.Context, *round) (bool, error) { return false, nil }

func (s *inlineSource) ready(ctx context.Context, r *round) error {
	in := s.in
	others, err := r.o.othersAtWork(ctx, r.g, &r.before, in.step)
	if err != nil {
		return errors.Join(errContended, err)
	}
	// Applied first and never stored in the inbox: nothing to consume.
	r.pending = []store.Event{in.event}
	if len(others) > 0 {
		if err := s.join(ctx, r, joinPartners(r.g, in.step, others)); err != nil {
			return err
		}
	}
	if in.record != nil {
		if s.recording == nil && !in.woken { // not started beside the run's read
			s.startRecord(in.record, false)
		}
		if f := in.ended; f != nil {
			if r.ended == nil {
				r.ended = map[attemptKey]*store.FinishedAttempt{}
			}
			r.ended[attemptKey{f.Ref.StepID, f.Ref.Attempt}] = f
		}
	}
	return nil
}

// lastToEnd reports whether no end of evs came later than finishedAt (unix
// ms), the end of the step in hand. Every worker of a join that finds all
// its inputs ended sees the same ends, so only those that ended last (in
// the same millisecond) decide the join: when each decided, the losers'
// commits failed on the run's version (the httpjoins bench lost 40% of
// its write units that way). The last to end writes its end last but for
// clock skew and write latency; should it have read its partners before
// another's end landed (one not on this process's endBoard), nobody
// decides here and the decider does, from the ends' wakes.
func lastToEnd(finishedAt int64, evs []store.Event) bool {
	for _, e := range evs {
		ev, err := engine.UnmarshalEvent(e.Body)
		if err != nil {
			return false
		}
		f, ok := ev.(engine.StepFinished)
		if !ok {
			return false
		}
		if f.FinishedAt > finishedAt {
			return false
		}
	}
	return true
}

// joinPartners are the steps of others (in flight) whose ends a successor
// of step waits for beside step's: a join's other inputs; all of them when
// step has no successor (the run's end waits for them all).
func joinPartners(g *engine.Graph, step string, others []store.FinishedStep) []store.FinishedStep {
	succs := g.Successors(step)
	if len(succs) == 0 {
		return others
	}
	inputs := map[string]bool{}
	for _, e := range succs {
		for _, p := range g.Predecessors(e.To) {
			inputs[p.From] = true
		}
	}
	var partners []store.FinishedStep
	for _, o := range others {
		if inputs[o.StepID] {
			partners = append(partners, o)
		}
	}
	return partners
}

// join is the inline round of a step that ended beside others in flight,
// partners those of them its successors wait for too (joinPartners): its
// end is written with its wake, as the decider would have it, and then the
// partners' attempts are read; when every one of them has ended too (this
// worker's step is the join's last), the round applies all their ends
// with its own, and the join's successor launches without waiting for the
// stream. Otherwise (errContended) the decider applies them as the wakes
// come. Ends written before the read see each other: of two steps ending
// together at least one worker finds both ended. Two that both do race on
// the run's version, and the loser's end is the decider's; the wakes of
// ends applied here find nothing to do.
//
// A step with no partner in flight (one of several independent branches)
// is the decider's too: deciding it here, beside the other branches'
// workers deciding theirs, lost 26% of the write units of a run of ten
// parallel Http chains to conflicts and cost 41% more per step.
func (s *inlineSource) join(ctx context.Context, r *round, partners []store.FinishedStep) error {
	in := s.in
	in.apart = len(partners) == 0
	if in.wake == nil || in.ended == nil || len(partners) == 0 || len(partners) >= crowdInline {
		return errContended
	}
	switch {
	case s.recording != nil && s.waking:
		// Written beside the run's read.
		if err := s.settle(); err != nil {
			return err
		}
	case s.recording != nil:
		// Started beside the run's read, without its wake: add it.
		if err := s.settle(); err != nil {
			return err
		}
		if err := r.o.store.Attempts.WakeEnd(ctx, in.ended.Ref); err != nil {
			return err
		}
	default:
		// The partners' ends are read next: their reads ride with this
		// end (an attempt item is one read unit).
		metering.From(ctx).Add(pricing.DynamoDBReadUnits, float64(len(partners)))
		if err := in.wake(); err != nil {
			return err
		}
	}
	in.recorded, in.woken = true, true
	// The end carries what it wrote to the run, should this round apply it.
	r.pending[0].Ops = in.endOps
	w := r.w
	w.Finished = partners
	if in.endOps != nil {
		ctx = metering.Unmetered(ctx) // charged with the end
	}
	evs, ended, err := r.o.workerEnds(ctx, w, &r.before, nil)
	if err == nil && len(evs) < len(partners) && in.waitEnds != nil {
		// A partner this process runs may be writing its end: once it
		// has, read them again.
		refs := make([]store.AttemptRef, len(partners))
		for i, p := range partners {
			refs[i] = store.AttemptRef{WorkflowID: w.WorkflowID, InstanceID: w.InstanceID, RunID: w.RunID, StepID: p.StepID, Attempt: p.Attempt}
		}
		if in.waitEnds(ctx, refs) {
			evs, ended, err = r.o.workerEnds(ctx, w, &r.before, nil)
		}
	}
	if err != nil || len(evs) < len(partners) {
		return errors.Join(errContended, err)
	}
	if !lastToEnd(in.finishedAt, evs) {
		return errContended
	}
	r.pending = append(r.pending, evs...)
	r.ended = ended
	return nil
}

func (*inlineSource) strategy(ctx context.Context, r *round) (runStrategy, error) {
	return r.o.strategy(ctx, r.w.WorkflowID)
}

// reads are those prefetched beside the run's read when the run's
// constants did not change since.
func (s *inlineSource) reads(ctx context.Context, r *round) decisionReads {
	prev := s.in.prev
	if s.prefetch == nil || prev.WorkflowVersion != r.before.WorkflowVersion || runOwner(prev) != runOwner(&r.before) {
		return r.o.readForDecision(ctx, r.g, &r.before, r.now)
	}
	reads := <-s.prefetch
	if reads.book != nil {
		reads.book.now = r.now.UnixMilli()
	}
	return reads
}

// startRecord starts write, the outcome's record (inlineRound.record, or
// .wake when woken), in a goroutine: settle waits for it.
func (s *inlineSource) startRecord(write func() error, woken bool) {
	done := make(chan error, 1)
	s.recording, s.waking = done, woken
	go func() { done <- write() }()
}

func (s *inlineSource) settle() error {
	if s.recording == nil {
		return nil
	}
	err := <-s.recording
	s.recording = nil
	if err == nil {
		s.in.recorded = true
		s.in.woken = s.in.woken || s.waking
	}
	return err
}

func (*inlineSource) inbox(store.Event) bool { return false }
func (s *inlineSource) decided(r *round)     { s.in.pick(&r.acc, r.cur) }

// shape claims the attempts the worker runs itself on the commit; one not
// among the commit's writes (never expected) goes through the work queue
// after all. A round may build its commit more than once: each
// build claims afresh.
func (s *inlineSource) shape(r *round) error {
	in := s.in
	in.picks = nil
	for _, rs := range in.chosen {
		if p, ok := in.claim(&r.commit, r.cur, r.now.Add(r.o.claimLease), rs); ok {
			in.picks = append(in.picks, p)
			continue
		}
		m, _, err := r.o.outboxMessage(r.cur, rs, launch{}, r.now)
		if err != nil {
			return err
		}
		r.commit.Outbox = append(r.commit.Outbox, m)
	}
	return nil
}

func (*inlineSource) admitted(*store.Commit) {}
func (*inlineSource) fits() bool             { return false }
func (*inlineSource) raw() bool              { return false }
