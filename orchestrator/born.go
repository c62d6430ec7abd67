package orchestrator

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/events"
	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/store"
)

// Iterations born finished, and born running.
//
// An iteration whose steps have no work (NoOp and Join steps) runs to its
// end in its first decision. Created the ordinary way it would cost four
// commits and two queue hops: its creation with a start event, its
// decider's wake, its one decision, and its report through the parent's
// inbox, which the parent's decider applies in yet another commit. Instead
// the parent's decider makes the iteration's first decision itself, with
// the same engine, definition, params and breakpoints its own decider
// would use, in the round that launches it. When that decision ends the
// run and asks for nothing (no work, no signal, no wait), the iteration is
// written finished in the parent's transaction — its summary, run item,
// step attempts and timeline, exactly the items its own commits would
// have left — and the parent applies its end (ChildEnded) in the same
// round, which launches the next iterations, and so on while the
// transaction has room.
//
// An iteration whose first decision leaves it awaiting only the work of
// steps its workers run and its timers (an Http or a Sleep body, say) is
// born running: written in the parent's transaction as that decision left
// it — its summary, its run item at version 1 with its outbox (the steps'
// work) and sweep time, the attempts it wrote (none, when their starts are
// left to the workers' claims) — and its work dispatched by the parent's
// committer right after the commit. That skips its start event, its decider's wake through the
// stream and the decision queue, and its decider's load and commit; it
// ends as any run, reporting through the parent's inbox. A step that takes
// a tag permit or a job queue's capacity (noPermits), or anything else the
// decision's commit would write beyond those items (bornRunning), has the
// iteration created the ordinary way.
//
// An iteration that is neither (a breakpoint pauses it, a step waits for a
// signal, its commit would not fit) is created the ordinary way.

// maxBornItems bounds the items of one iteration born (as the
// store counts them, store.ChildRun.Items), so that a round's transaction
// of store.MaxTransactItems holds several.
const maxBornItems = 22

// bornKey names an iteration of a step attempt.
type bornKey struct {
	step     string
	attempt  int64
	index    int64
	workflow string
}

func bornKeyOf(x engine.StartChild) bornKey {
	return bornKey{x.StepID, x.Attempt, x.Index, x.WorkflowID}
}

// bornRound is what one round knows of the iterations it may bear: the
// inline workflows it read or creates, and their breakpoints.
type bornRound struct {
	o      *Rounds
	now    time.Time
	graphs map[string]*engine.Graph
	bps    map[string][]engine.Breakpoint
	// created holds the inline definitions this round creates (CreateLoop),
	// not stored before the round commits.
	created map[string]engine.CreateLoop
	parent  *engine.Graph
}

// bearChildren bears the iterations of acc's StartChild commands that end
// in their first decision, while the round's transaction has room, and
// applies each one's end to the parent (advancing cur), which may start
// more iterations, borne in turn. room is how many more items than the
// commit of acc as it stands the transaction holds, by the store's count
// (round.bear); each iteration born takes what the store counts for it
// (store.ChildRun.Items) past its ordinary creation's, and the iterations
// its end starts take their ordinary creations'. What else the ends write
// is not foreseen here: a commit the store then refuses is planned again
// bearing none (round.fit, round.unbear). opts are the parent's
// decision options, children the child params reader among them, which
// learns the born iterations' states (not stored before the round
// commits: getFromForeach in a decision of this round must see them). It
// returns the iterations born, by key, the ends it could not apply for
// want of room (to be put into the parent's inbox), and whether a decision
// asked for a Continue event.
func (o *Rounds) bearChildren(ctx context.Context, g *engine.Graph, acc *decisionSet, cur **engine.Instance,
	opts []engine.Option, room int, book *permitBook, children *childBook, now time.Time) (map[bornKey]*bornChild, []store.Event, bool, error) {
	var (
		r = bornRound{o: o, now: now, parent: g, graphs: map[string]*engine.Graph{},
			bps: map[string][]engine.Breakpoint{}, created: map[string]engine.CreateLoop{}}
		born   map[bornKey]*bornChild
		queued []store.Event
		cont   bool
		// ordinary is what the store counts for an iteration created the
		// ordinary way (its summary, run item and start event).
		ordinary = store.ChildRun{}.Items()
	)
	for i := 0; i < len(acc.commands); i++ {
		switch x := acc.commands[i].(type) {
		case engine.CreateLoop:
			r.created[x.WorkflowID] = x
			continue
		case engine.StartChild:
			if !inFlight(*cur, x) {
				// Told to stop in this same round (its loop ended): its
				// own decider applies the stop to it.
				continue
			}
			b, err := r.bear(ctx, *cur, x)
			if err != nil {
				return nil, nil, false, err
			}
			// Born, it takes its own items instead of its ordinary
			// creation's, and, finished, one for its end until that is
			// applied.
			cost := 0
			if b != nil {
				cost = b.run.Items() - ordinary
				if !b.running {
					cost++
				}
			}
			if b == nil || b.run.Items() > maxBornItems || cost > room {
				continue
			}
			if born == nil {
				born = map[bornKey]*bornChild{}
			}
			born[bornKeyOf(x)] = b
			room -= cost
			if b.running {
				// It reports its end as any iteration, through the
				// parent's inbox.
				continue
			}
			children.bear(b.state)
			// The end launches no more iterations than the rest of the
			// transaction holds, each at its ordinary creation's items
			// (the item kept for the end is freed when it is applied); the
			// decision's Continue goes on from there.
			left := (room + 1) / ordinary * iterationStarts(g.Step(x.StepID))
			mark := book.checkpoint()
			d, err := engine.Decide(ctx, g, *cur, b.end, now, append(opts[:len(opts):len(opts)], engine.WithStrictMaxStarts(left))...)
			if err != nil && ctx.Err() != nil {
				return nil, nil, false, fmt.Errorf("decide %s/%d/%d: %w", (*cur).WorkflowID, (*cur).InstanceID, (*cur).RunID, ctx.Err())
			}
			if err != nil {
				// Never expected: the engine refused the end. It waits in
				// the parent's inbox, where the next round, or the sweeper,
				// applies it.
				book.rollback(mark)
				o.log.ErrorContext(ctx, "the end of an iteration born finished was refused; leaving it in the inbox", "workflow_id", (*cur).WorkflowID,
					"instance_id", (*cur).InstanceID, "step_id", x.StepID, "index", x.Index, "error", err)
				queued = append(queued, store.Event{
					ID: childEndedEventID(x.StepID, x.Attempt, x.Index), Body: mustJSON(b.end), WakeAfter: backstopWake,
				})
				continue
			}
			room++
			for _, c := range d.Commands {
				if _, ok := c.(engine.StartChild); ok {
					room -= ordinary
				}
			}
			acc.add(d)
			*cur = d.State
			cont = cont || d.Continue
		}
	}
	return born, queued, cont, nil
}

// bornChild is an iteration born finished: its writes, its end to apply to
// its parent and its final state.
type bornChild struct {
	run   store.ChildRun
	end   engine.ChildEnded
	state *engine.Instance
	// events are its change events, published from the parent's outbox
	// in one batch with the round's others (loopWrites).
	events []events.Event
	// running is set for an iteration born running: its first decision
	// left it awaiting its steps' work, which its run item's outbox
	// sends; end is then unset (it reports its end as any iteration).
	running bool
}

// bear makes the first decision of iteration x of parent and returns the
// iteration born: finished, when that decision ends it asking for nothing
// but its own writes; running (bornChild.running), when it leaves it
// awaiting the work of steps its workers run and its timers
// (awaitsWorkOnly, bornRunning). Nil when it does neither: the iteration is
// then created the ordinary way.
func (r *bornRound) bear(ctx context.Context, parent *engine.Instance, x engine.StartChild) (*bornChild, error) {
	g, err := r.graph(ctx, x.WorkflowID)
	if err != nil || g == nil {
		return nil, err
	}
	p := x.Parent
	bps, err := r.breakpoints(ctx, x.WorkflowID, p.Owner)
	if err != nil {
		return nil, err
	}
	params, err := engine.LiteralParams(x.Params)
	if err != nil {
		return nil, fmt.Errorf("iteration %d of step %q: %w", x.Index, x.StepID, err)
	}
	inst := x.Index + 1
	st := &engine.Instance{
		WorkflowID: x.WorkflowID, WorkflowVersion: 1, InstanceID: inst, RunID: 1, UUID: r.o.newUUID(),
		Owner: parent.Owner, Status: model.WorkflowCreated, CreateTime: r.now.UnixMilli(), Parent: &p,
		TraceID: parent.TraceID,
	}
	initiator := engine.Initiator{Type: cmp.Or(x.Initiator, "FOREACH")}
	sigs := &signalBook{ctx: ctx, store: r.o.store, log: r.o.log}
	stepParams := &paramsBook{store: r.o.store, wf: x.WorkflowID, inst: inst, items: r.o.items}
	children := &childBook{store: r.o.store}
	permits := &noPermits{}
	d, err := engine.Decide(ctx, g, st, engine.StartRun{RunParams: params, Initiator: initiator}, r.now,
		engine.WithMaxStarts(maxStartsPerDecision), engine.WithMaxEnds(maxEndsPerDecision), engine.WithBreakpoints(bps),
		engine.WithSignals(sigs), engine.WithStepParams(stepParams), engine.WithChildParams(children), engine.WithPermits(permits))
	if err = errors.Join(sigs.err, stepParams.err, children.err, err); err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		// The iteration's own decider will meet the same refusal and say
		// so; it is not born.
		return nil, nil
	}
	after := d.State
	running := !after.Status.IsTerminal()
	switch {
	case d.Continue || permits.asked:
		return nil, nil
	case running && !awaitsWorkOnly(after, d.Commands):
		return nil, nil
	case !running && slices.ContainsFunc(d.Commands, asksForWork):
		return nil, nil
	}
	if waits, links := signalChanges(st, after); len(waits) > 0 || len(links) > 0 {
		return nil, nil
	}
	acc := decisionSet{g: g}
	acc.add(d)
	rec := &store.RunRecord{WorkflowID: x.WorkflowID, InstanceID: inst, RunID: 1}
	rd, err := r.o.gather(ctx, after, &acc, r.now, nil)
	if err != nil {
		return nil, err
	}
	c, err := r.o.buildCommit(ctx, g, rec, st, after, &acc, nil, &rd, r.now)
	if err != nil {
		return nil, err
	}
	ch := store.ChildRun{
		WorkflowID: x.WorkflowID, InstanceID: inst, Version: 1, UUID: st.UUID,
		Initiator: mustJSON(initiator), Status: c.Status, State: c.State, Now: r.now,
		Born: true, Attempts: c.Attempts, Timeline: c.Timeline, StartTime: after.StartTime, EndTime: after.EndTime,
	}
	if running {
		if !bornRunning(c) {
			return nil, nil
		}
		// Its change events ride in the parent's outbox (below), the
		// rest of its outbox in its own run item.
		ch.Outbox = slices.DeleteFunc(slices.Clone(c.Outbox), func(m store.Message) bool { return m.Queue == store.QueueEvents })
		ch.SweepAt = c.SweepAt
	} else if compactable(after, c) {
		after.Compact = true
		if ch.State, err = json.Marshal(after); err != nil {
			return nil, fmt.Errorf("encode state of iteration %d of step %q: %w", x.Index, x.StepID, err)
		}
		ch.Attempts, ch.Timeline = nil, nil
	}
	// Created and decided in one commit: its creation is the first change
	// of its one instance event (one event per run or step attempt and
	// commit, as for any run), not an event of its own.
	created := engine.Transition{Seq: 0, From: "", To: string(model.WorkflowCreated), Time: r.now.UnixMilli()}
	evs := changeEvents(after, append([]engine.Transition{created}, d.Transitions...))
	b := &bornChild{run: ch, state: after, events: evs, running: running}
	if !running {
		b.end = endReport(g, after)
	}
	return b, nil
}

// noPermits is the tag permits of an iteration's first decision made by
// its parent (bornRound.bear): a step that asks for a tag permit or a job
// queue's capacity sets asked, and the iteration is not born — its own
// decider takes them, from the store, in its own commit. Steps without
// tags or a queue start as they would with the store's permits.
type noPermits struct{ asked bool }

func (p *noPermits) Acquire(req engine.PermitRequest) engine.PermitAnswer {
	if len(req.Tags) > 0 || req.Queue != nil {
		p.asked = true
	}
	return engine.PermitAnswer{OK: true}
}

func (p *noPermits) Release(string, int64, []string, bool) {}

// awaitsWorkOnly reports whether a run left in progress by its first
// decision, with commands cmds, awaits only the work of steps its workers
// run and its timers (a Sleep step's, say): every command runs a step or
// starts a timer, and no step is paused or waits for anything else.
func awaitsWorkOnly(st *engine.Instance, cmds []engine.Command) bool {
	if len(cmds) == 0 {
		return false
	}
	for _, c := range cmds {
		switch c.(type) {
		case engine.RunStep, engine.StartTimer:
		default:
			return false
		}
	}
	for i := range st.Steps {
		ss := &st.Steps[i]
		if ss.Attempt > 0 && !ss.Status.IsTerminal() && ss.Status != model.StepRunning {
			return false
		}
	}
	return true
}

// bornRunning reports whether c, the first commit of an iteration its
// first decision leaves in progress, writes nothing but what a child born
// running carries (store.ChildRun): its run item with state, outbox and
// sweep time, its attempts, its timeline and its summary. Anything else (a
// permit taken, a page, a wake of another run…) has the iteration created
// the ordinary way, its own decider writing it.
func bornRunning(c store.Commit) bool {
	rest := c
	rest.WorkflowID, rest.InstanceID, rest.RunID, rest.ExpectV = "", 0, 0, 0
	rest.Status, rest.State, rest.Outbox, rest.SweepAt = "", nil, nil, 0
	rest.Attempts, rest.Timeline, rest.PriorTimeline, rest.Instance = nil, nil, nil, nil
	if c.Pages.Count() == 0 {
		// A state written whole: which steps may still change is moot.
		rest.Unsettled = nil
	}
	return reflect.ValueOf(rest).IsZero()
}

// graph returns the compiled inline workflow wf: created by this round
// (not stored yet) or stored.
func (r *bornRound) graph(ctx context.Context, wf string) (*engine.Graph, error) {
	if g, ok := r.graphs[wf]; ok {
		return g, nil
	}
	var g *engine.Graph
	if x, ok := r.created[wf]; ok {
		data, err := inlineDefinition(r.parent, x)
		if err != nil {
			return nil, err
		}
		if g, _, err = r.o.compile(data, wf, 1); err != nil {
			return nil, err
		}
	} else {
		var err error
		if g, _, err = r.o.graph(ctx, wf, 1); err != nil {
			return nil, err
		}
	}
	r.graphs[wf] = g
	return g, nil
}

// breakpoints returns the breakpoints an iteration of inline workflow wf
// meets: wf's own, and those of its owner that match every run (as
// processOnce gathers them).
func (r *bornRound) breakpoints(ctx context.Context, wf, owner string) ([]engine.Breakpoint, error) {
	k := wf + "\x00" + owner
	if b, ok := r.bps[k]; ok {
		return b, nil
	}
	bps, err := r.o.runBreakpoints(ctx, wf, owner)
	if err != nil {
		return nil, err
	}
	r.bps[k] = bps
	return bps, nil
}

// inFlight reports whether iteration x is among its loop's iterations in
// flight in st.
func inFlight(st *engine.Instance, x engine.StartChild) bool {
	s := st.Step(x.StepID)
	if s == nil || s.Attempt != x.Attempt || s.Loop == nil {
		return false
	}
	_, found := slices.BinarySearch(s.Loop.Running, x.Index)
	return found
}

// asksForWork reports whether a command asks for more than the commit's own
// writes (InstanceDone announces an end the stream carries).
func asksForWork(c engine.Command) bool {
	_, done := c.(engine.InstanceDone)
	return !done
}

// bornItems is what an iteration of body born finished is expected to cost
// its parent's commit — stored compact, its summary and run item, and its
// end if it must wait in the parent's inbox — or 0 when it is never born
// finished (a step has work, or stored whole it would write more than
// maxBornItems: its summary, run item, an attempt per step and two instance
// timeline entries). One that ends otherwise than compact costs more, and is
// created the ordinary way when that does not fit.
func bornItems(body []model.Step) int {
	for i := range body {
		if engine.HasWork(&body[i]) {
			return 0
		}
	}
	if !mayBeBorn(body) {
		return 0
	}
	return 3
}

// mayBeBorn reports whether an iteration of body may be born, finished or
// running: stored whole it writes at most maxBornItems (its summary, run
// item, an attempt per step and two instance timeline entries).
func mayBeBorn(body []model.Step) bool {
	return 4+len(body) <= maxBornItems
}

// iterationStarts is what one iteration of loop step s counts against a
// decision's start budget (engine.WithIterationStarts): the items it costs
// born finished, else the engine's default for the three of its ordinary
// creation.
func iterationStarts(s *model.Step) int {
	if n := bornItems(s.Steps); n > 0 {
		return n
	}
	return 2
}

// A compact run is an iteration born finished whose every step succeeded:
// it is stored as its summary and its run item alone (engine.Instance.Compact:
// the state keeps its steps' params and outputs), and readers derive its step
// attempts and instance timeline from the state (compactAttempts,
// compactTimeline) — which bear checks, before storing a run compact, are
// byte for byte the items its ordinary commit would have written.

// compactStepStatuses is the timeline of a step created, run and succeeded in
// one instant (a NoOp step of an iteration born finished).
func compactStepStatuses() []model.StepStatus {
	return []model.StepStatus{model.StepCreated, model.StepInitialized, model.StepEvaluatingParams,
		model.StepStarting, model.StepRunning, model.StepFinishing, model.StepSucceeded}
}

// compactAttempts returns the step attempt items a compact run's ordinary
// commit would have written: one per step that ran, its view as body and its
// timeline entries, all at the step's end.
func compactAttempts(st *engine.Instance) []store.Attempt {
	var out []store.Attempt
	for i := range st.Steps {
		ss := &st.Steps[i]
		if ss.Attempt == 0 || neverStarted(ss) {
			continue
		}
		statuses := compactStepStatuses()
		tl := make([][]byte, len(statuses))
		for k, s := range statuses {
			tl[k] = storeEntry(engine.TimelineEntry{Time: ss.EndTime, StepID: ss.StepID, Attempt: ss.Attempt, Status: string(s)})
		}
		out = append(out, store.Attempt{
			StepID: ss.StepID, Attempt: ss.Attempt, Status: string(ss.Status), Body: mustJSON(bodyOf(st, ss)), Timeline: tl,
		})
	}
	return out
}

// compactAttempt returns attempt (0: the latest) of step of compact run st
// as compactAttempts derives it, nil for a run that is not compact or a
// step or attempt it lacks.
func compactAttempt(st *engine.Instance, step string, attempt int64) *store.Attempt {
	if !st.Compact {
		return nil
	}
	for _, c := range compactAttempts(st) {
		if c.StepID == step && (attempt == 0 || c.Attempt == attempt) {
			return &c
		}
	}
	return nil
}

// compactTimeline returns the instance timeline items a compact run's
// ordinary commit would have written: IN_PROGRESS at its start, its status
// at its end.
func compactTimeline(st *engine.Instance) []store.TimelineItem {
	seq := st.Seq * 1000
	return []store.TimelineItem{
		{Seq: seq + 1, Body: storeEntry(engine.TimelineEntry{Time: st.StartTime, Status: string(model.WorkflowInProgress)})},
		{Seq: seq + 2, Body: storeEntry(engine.TimelineEntry{Time: st.EndTime, Status: string(st.Status)})},
	}
}

// compactable reports whether a run that ended with state st, whose
// ordinary commit is c, may be stored compact: it succeeded, and what its
// readers would derive is exactly what c writes.
func compactable(st *engine.Instance, c store.Commit) bool {
	if st.Status != model.WorkflowSucceeded {
		return false
	}
	attemptEq := func(a, b store.Attempt) bool {
		return a.StepID == b.StepID && a.Attempt == b.Attempt && a.Status == b.Status && a.Claim == "" && b.Claim == "" &&
			bytes.Equal(a.Body, b.Body) && slices.EqualFunc(a.Timeline, b.Timeline, bytes.Equal)
	}
	timelineEq := func(a, b store.TimelineItem) bool { return a.Seq == b.Seq && bytes.Equal(a.Body, b.Body) }
	return slices.EqualFunc(compactAttempts(st), c.Attempts, attemptEq) &&
		slices.EqualFunc(compactTimeline(st), c.Timeline, timelineEq)
}
