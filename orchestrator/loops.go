package orchestrator

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/events"
	"github.com/maestro-serverless/maestro/jsonnum"
	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/store"
)

// loopWrites adds to a commit what its decisions do to child runs: the
// inline definition of a foreach step that starts its iterations, the
// iterations it starts (created in this same transaction, so exactly once
// per step attempt and index; those in born already finished), the new
// runs of the children it restarts, stop actions for iterations in flight
// when their step ends, and — when the run is itself an iteration that
// ends — its report to the parent's inbox (exactly once: its terminal
// commit happens once) — unless the parent stopped it or, for a
// subworkflow started with sync false, never waited. What it needs from
// the store (the children's runs) is in rd (gather).
func (o *Rounds) loopWrites(ctx context.Context, g *engine.Graph, c *store.Commit, before, after *engine.Instance, cmds []engine.Command,
	born map[bornKey]*bornChild, rd *commitReads, now time.Time) error {
	var bornEvents []events.Event
	for _, cmd := range cmds {
		switch x := cmd.(type) {
		case engine.CreateLoop:
			def, err := inlineDefinition(g, x)
			if err != nil {
				return err
			}
			c.Definitions = append(c.Definitions, store.InlineDefinition{WorkflowID: x.WorkflowID, Definition: def, Now: now})
		case engine.StartChild:
			if b, ok := born[bornKeyOf(x)]; ok {
				c.Children = append(c.Children, b.run)
				bornEvents = append(bornEvents, b.events...)
				continue
			}
			ch, err := o.childRun(ctx, after, x, now)
			if err != nil {
				return err
			}
			c.Children = append(c.Children, ch)
		case engine.RestartChild:
			nr, ok := rd.reruns[childKey{x.WorkflowID, x.Index + 1}]
			if !ok {
				return fmt.Errorf("rerun iteration %d of step %q: not gathered", x.Index+1, x.StepID)
			}
			c.Reruns = append(c.Reruns, nr)
		case engine.StopChild:
			run, ok := rd.stopRuns[childKey{x.WorkflowID, x.InstanceID}]
			if !ok {
				return fmt.Errorf("stop child %s/%d: its latest run was not gathered", x.WorkflowID, x.InstanceID)
			}
			ev := engine.Action{Action: x.Action, By: x.Reason, FromParent: true}
			c.Wakes = append(c.Wakes, store.WakeRun{
				WorkflowID: x.WorkflowID, InstanceID: x.InstanceID, RunID: run,
				Event: store.Event{ID: parentActionEventID(string(x.Action)), Body: mustJSON(ev)},
			})
		}
	}
	if len(bornEvents) > 0 {
		// The change events of the iterations born finished ride in the
		// parent's outbox, one batch compressed as a whole: in their own
		// run items, each compressed alone, they made them pass 1 KB,
		// doubling their write units.
		msgs, err := eventsMessage(ctx, bornEvents...)
		if err != nil {
			return err
		}
		c.Outbox = append(c.Outbox, msgs...)
	}
	if p := after.Parent; p != nil && !p.Async && !after.ParentGone && after.Status.IsTerminal() && !before.Status.IsTerminal() {
		ev := endReport(g, after)
		if p.Subworkflow {
			ev.Child = &engine.ChildRef{WorkflowID: after.WorkflowID, InstanceID: after.InstanceID, RunID: after.RunID,
				Version: after.WorkflowVersion, UUID: after.UUID}
		}
		// The end carries the child's orchestration usage (its tree's) to
		// the parent, as ev.Cost carries its steps' compute.
		c.Wakes = append(c.Wakes, store.WakeRun{
			WorkflowID: p.WorkflowID, InstanceID: p.InstanceID, RunID: p.RunID,
			Event:    store.Event{ID: childEndedEventID(p.StepID, p.Attempt, p.Index), Body: mustJSON(ev)},
			CarryOps: true,
		})
	}
	return nil
}

// endReport is the ChildEnded a child run that ended with state after (of
// graph g) reports to its parent (after.Parent): its status, message,
// while feedback and rollup.
func endReport(g *engine.Graph, after *engine.Instance) engine.ChildEnded {
	p := after.Parent
	return engine.ChildEnded{StepID: p.StepID, Attempt: p.Attempt, Index: p.Index, Status: after.Status, Message: after.Message,
		Feedback: after.Feedback, Rollup: engine.RollupOf(g, after), Cost: after.Cost}
}

// inlineDefinition is the definition of a foreach or while step attempt's inline
// workflow: the step's inline steps, declaring the params every iteration
// receives (with the first iteration's values; each iteration's run params
// replace them).
func inlineDefinition(g *engine.Graph, x engine.CreateLoop) ([]byte, error) {
	step := g.Step(x.StepID)
	if step == nil {
		return nil, fmt.Errorf("create loop: no step %q", x.StepID)
	}
	params, err := engine.LiteralParams(x.Params)
	if err != nil {
		return nil, fmt.Errorf("create loop of step %q: %w", x.StepID, err)
	}
	kind := "foreach"
	if x.While {
		kind = "while"
	}
	def := model.Definition{Workflow: &model.Workflow{
		ID:     x.WorkflowID,
		Name:   fmt.Sprintf("%s %s attempt %d", kind, x.StepID, x.Attempt),
		Params: params,
		Steps:  step.Steps,
	}}
	data, err := json.Marshal(&def)
	if err != nil {
		return nil, fmt.Errorf("encode inline definition of step %q: %w", x.StepID, err)
	}
	return data, nil
}

// childRun is the creation of one iteration: a CREATED run whose start
// event carries the iteration's params as run params.
func (o *Rounds) childRun(ctx context.Context, parent *engine.Instance, x engine.StartChild, now time.Time) (store.ChildRun, error) {
	params, err := engine.LiteralParams(x.Params)
	if err != nil {
		return store.ChildRun{}, fmt.Errorf("iteration %d of step %q: %w", x.Index, x.StepID, err)
	}
	inst := x.Index + 1
	p := x.Parent
	st := &engine.Instance{
		WorkflowID: x.WorkflowID, WorkflowVersion: 1, InstanceID: inst, RunID: 1, UUID: o.newUUID(),
		Owner: parent.Owner, Status: model.WorkflowCreated, CreateTime: now.UnixMilli(), Parent: &p,
		TraceID: parent.TraceID,
	}
	initiator := engine.Initiator{Type: cmp.Or(x.Initiator, "FOREACH")}
	start, err := json.Marshal(engine.StartRun{RunParams: params, Initiator: initiator})
	if err != nil {
		return store.ChildRun{}, fmt.Errorf("encode start of iteration %d of step %q: %w", x.Index, x.StepID, err)
	}
	state, err := json.Marshal(st)
	if err != nil {
		return store.ChildRun{}, err
	}
	created := events.Transition(x.WorkflowID, 1, inst, 1, "", 0, "", string(st.Status), 0, now.UnixMilli())
	created.Parent = eventParent(&p)
	outbox, err := eventsMessage(ctx, created)
	if err != nil {
		return store.ChildRun{}, err
	}
	return store.ChildRun{
		WorkflowID: x.WorkflowID, InstanceID: inst, Version: 1, UUID: st.UUID,
		Initiator: mustJSON(initiator), Status: string(st.Status), State: state,
		FirstEvent: store.Event{ID: startEventID, Body: start}, Outbox: outbox, Now: now,
	}, nil
}

// startSubworkflow starts the child of a subworkflow step attempt — an
// instance of the named workflow and version, initiator SUBWORKFLOW, its
// run strategy applying — under the attempt's request id, so a message
// delivered twice starts it once, and reports it (or why it cannot start:
// no such workflow or version, run params it refuses) to the parent.
func (o *Worker) startSubworkflow(ctx context.Context, m SubworkflowWork) error {
	x := m.Subworkflow
	if x == nil {
		return fmt.Errorf("%w: %s message without its subworkflow", ErrPoison, m.Kind())
	}
	report := engine.ChildStarted{StepID: x.StepID, Attempt: x.Attempt}
	params, err := engine.LiteralParams(x.Params)
	refusal, aerr := o.access.ChildAllowed(ctx, m.WorkflowID, x.WorkflowID)
	if aerr != nil {
		return aerr
	}
	switch {
	case err != nil:
		report.Error = fmt.Sprintf("the params passed down: %v", err)
	case refusal != "":
		report.Error = refusal
	case x.Restart != nil:
		child, msg, err := o.rerunSubworkflow(ctx, x, params)
		if err != nil {
			return err
		}
		report.Child, report.Error = child, msg
	default:
		parent := x.Parent
		resp, err := o.runs.start(ctx, x.WorkflowID, x.Version, StartRequest{RequestID: x.RequestID},
			engine.Initiator{Type: "SUBWORKFLOW"}, params, &parent)
		var e *Error
		switch {
		case errors.As(err, &e) && e.Status < 500:
			report.Error = fmt.Sprintf("cannot start %s version %s: %v", x.WorkflowID, x.Version, e)
		case err != nil:
			return err
		default:
			report.Child = engine.ChildRef{
				WorkflowID: resp.WorkflowID, InstanceID: resp.WorkflowInstanceID, RunID: resp.WorkflowRunID,
				Version: resp.WorkflowVersionID, UUID: resp.WorkflowUUID,
			}
		}
	}
	return o.store.Runs.PutEvent(ctx, m.WorkflowID, m.InstanceID, m.RunID, store.Event{
		ID: childStartedEventID(x.StepID, x.Attempt), Body: mustJSON(report), Covered: true,
	})
}

// childBook reads the step params of child runs (engine.ChildParams) for
// params.getFromForeach and params.getFromSubworkflow. err is the first
// read that failed: the decision is then not committed.
type childBook struct {
	store Stores
	err   error
	// born holds the final states of the iterations born finished in the
	// round (bearChildren), which are not stored until it commits.
	born map[runKey]*engine.Instance
	// fetched holds what the last PrefetchChildren read: one param of a
	// step in each run of one chunk.
	fetched map[childParamKey]engine.ChildParam
}

type childParamKey struct {
	run        runKey
	step, name string
}

// attemptReadBatch is how many attempt items PrefetchChildren reads, and
// holds decoded, at once: each may hold up to 400 KB, its params up to
// 750 KB decoded.
const attemptReadBatch = 16

// PrefetchChildren implements engine.ChildrenPrefetcher: it reads the run
// items of runs run of instances insts of wf, then the attempt items of
// those whose step stepID settled (its params offloaded) attemptReadBatch
// at a time, charging each batch's bytes before decoding it, and keeps
// param name of each — instead of a Query and a read per run, and without
// holding more than a batch of whole params.
//
// A read that fails is kept in b.err, as ChildStepParam keeps it: the
// decision is then not committed and its event stays for the next round
// (the engine would otherwise take the failure for its own and drop the
// event). What charge refuses is the decision's budget, not a read, and is
// not kept.
func (b *childBook) PrefetchChildren(ctx context.Context, wf string, insts []int64, run int64, stepID, name string, charge func(int64) error) error {
	charged := func(n int64) error {
		if err := charge(n); err != nil {
			return budgetRefusal{err}
		}
		return nil
	}
	err := b.prefetch(ctx, wf, insts, run, stepID, name, charged)
	var refused budgetRefusal
	if errors.As(err, &refused) {
		return refused.err
	}
	if err != nil && b.err == nil {
		b.err = err
	}
	return err
}

// budgetRefusal marks an error of PrefetchChildren's charge callback.
type budgetRefusal struct{ err error }

func (e budgetRefusal) Error() string { return e.err.Error() }

// prefetch is PrefetchChildren's reads.
func (b *childBook) prefetch(ctx context.Context, wf string, insts []int64, run int64, stepID, name string, charge func(int64) error) error {
	b.fetched = map[childParamKey]engine.ChildParam{}
	var keys []store.RunKey
	for _, inst := range insts {
		if _, ok := b.born[runKey{wf, inst, run}]; !ok {
			keys = append(keys, store.RunKey{WorkflowID: wf, InstanceID: inst, RunID: run})
		}
	}
	if len(keys) == 0 {
		return nil
	}
	recs, err := b.store.Runs.GetRuns(ctx, keys)
	if err != nil {
		return err
	}
	var read int64
	for _, rec := range recs {
		read += int64(len(rec.State))
	}
	if err := charge(read); err != nil {
		return err
	}
	var refs []store.AttemptRef
	for _, k := range keys {
		ck := childParamKey{runKey{k.WorkflowID, k.InstanceID, k.RunID}, stepID, name}
		rec, ok := recs[k]
		if !ok {
			b.fetched[ck] = engine.ChildParam{} // not created yet
			continue
		}
		st, err := decodeState(rec)
		if err != nil {
			return err
		}
		params, ok, ref := childStep(st, k, stepID)
		if ref == nil {
			b.fetched[ck] = paramOf(params, ok, name)
			continue
		}
		refs = append(refs, *ref)
	}
	for len(refs) > 0 {
		batch := refs[:min(attemptReadBatch, len(refs))]
		refs = refs[len(batch):]
		attempts, err := b.store.Attempts.GetAttempts(ctx, batch)
		if err != nil {
			return err
		}
		read = 0
		for _, a := range attempts {
			read += int64(len(a.Body))
		}
		if err := charge(read); err != nil {
			return err
		}
		for _, ref := range batch {
			a, ok := attempts[ref]
			if !ok {
				// Not where expected (a compact run's are derived): leave it
				// to the read one by one.
				continue
			}
			params, ok, err := paramsOfAttempt(*a)
			if err != nil {
				return fmt.Errorf("%s/%d run %d step %s: %w", ref.WorkflowID, ref.InstanceID, ref.RunID, stepID, err)
			}
			b.fetched[childParamKey{runKey{ref.WorkflowID, ref.InstanceID, run}, stepID, name}] = paramOf(params, ok, name)
		}
	}
	return nil
}

// paramOf is param name of a step's params (reached: the step has some).
func paramOf(params engine.Values, reached bool, name string) engine.ChildParam {
	if !reached {
		return engine.ChildParam{}
	}
	v, found := params[name]
	return engine.ChildParam{Value: v, Reached: true, Found: found}
}

// runKey names a run.
type runKey struct {
	wf        string
	inst, run int64
}

// bear records the final state of an iteration born finished in the round.
func (b *childBook) bear(st *engine.Instance) {
	if b.born == nil {
		b.born = map[runKey]*engine.Instance{}
	}
	b.born[runKey{st.WorkflowID, st.InstanceID, st.RunID}] = st
}

// ChildStepParam implements engine.ChildParams: param name of step stepID
// in run run of instance inst of workflow wf, from the run's state, or from
// the attempt's item when the state offloaded them.
func (b *childBook) ChildStepParam(ctx context.Context, wf string, inst, run int64, stepID, name string) (engine.ChildParam, error) {
	if st, ok := b.born[runKey{wf, inst, run}]; ok {
		s := st.Step(stepID)
		if s == nil || s.Attempt == 0 || s.Params == nil {
			return engine.ChildParam{}, nil
		}
		return paramOf(s.Params, true, name), nil
	}
	if p, ok := b.fetched[childParamKey{runKey{wf, inst, run}, stepID, name}]; ok {
		return p, nil
	}
	p, err := b.read(ctx, wf, inst, run, stepID, name)
	if err != nil && b.err == nil {
		b.err = err
	}
	return p, err
}

// read reads param name of step stepID in a run, and says how many bytes
// it read for it.
func (b *childBook) read(ctx context.Context, wf string, inst, run int64, stepID, name string) (engine.ChildParam, error) {
	rec, _, err := b.store.Runs.LoadRun(ctx, wf, inst, run)
	if errors.Is(err, store.ErrNotFound) {
		return engine.ChildParam{}, nil
	}
	if err != nil {
		return engine.ChildParam{}, err
	}
	st, err := decodeState(rec)
	if err != nil {
		return engine.ChildParam{}, err
	}
	read := int64(len(rec.State))
	params, ok, ref := childStep(st, store.RunKey{WorkflowID: wf, InstanceID: inst, RunID: run}, stepID)
	if ref == nil {
		p := paramOf(params, ok, name)
		p.Read = read
		return p, nil
	}
	a, err := attemptOf(ctx, b.store, ref.WorkflowID, ref.InstanceID, ref.RunID, stepID, ref.Attempt)
	if err != nil {
		return engine.ChildParam{}, fmt.Errorf("read %s: %w", ref, err)
	}
	out, ok, err := paramsOfAttempt(*a)
	if err != nil {
		return engine.ChildParam{}, fmt.Errorf("%s: %w", ref, err)
	}
	p := paramOf(out, ok, name)
	p.Read = read + int64(len(a.Body))
	return p, nil
}

// childStep returns the params of step stepID in state st of child run k when
// the state holds them (ok false when the step has none yet); when they
// were offloaded, ref names the attempt item that holds them instead.
func childStep(st *engine.Instance, k store.RunKey, stepID string) (params engine.Values, ok bool, ref *store.AttemptRef) {
	s := st.Step(stepID)
	switch {
	case s == nil || s.Attempt == 0:
		return nil, false, nil
	case !s.Offloaded:
		return s.Params, s.Params != nil, nil
	}
	return nil, false, &store.AttemptRef{WorkflowID: k.WorkflowID, InstanceID: k.InstanceID, RunID: s.ItemRun(k.RunID),
		StepID: stepID, Attempt: s.Attempt}
}

// decodeState decodes a run record's engine state: the one place the
// orchestrator decodes run state.
func decodeState(rec *store.RunRecord) (*engine.Instance, error) {
	var st engine.Instance
	if err := jsonnum.Decode(rec.State, &st); err != nil {
		return nil, fmt.Errorf("decode the state of %s/%d run %d: %w", rec.WorkflowID, rec.InstanceID, rec.RunID, err)
	}
	return &st, nil
}

// normalizedParams returns an attempt view's params as engine values:
// decoded from JSON, their numbers are json.Number until normalised, which
// no expression accepts.
func normalizedParams(params map[string]any) (engine.Values, error) {
	out := make(engine.Values, len(params))
	for k, v := range params {
		n, err := engine.Normalize(v)
		if err != nil {
			return nil, fmt.Errorf("param %q: %w", k, err)
		}
		out[k] = n
	}
	return out, nil
}

// paramsOfAttempt returns the params an attempt item's body holds.
func paramsOfAttempt(a store.Attempt) (engine.Values, bool, error) {
	view, err := decodeAttemptBody(a)
	if err != nil {
		return nil, false, err
	}
	if view.Params == nil {
		return nil, false, nil
	}
	out, err := normalizedParams(view.Params)
	if err != nil {
		return nil, false, err
	}
	return out, true, nil
}

// eventParent is what a child run's change events say of its parent (nil
// for a run without one).
func eventParent(p *engine.ParentRef) *events.Parent {
	if p == nil {
		return nil
	}
	return &events.Parent{
		WorkflowID: p.WorkflowID, InstanceID: p.InstanceID, RunID: p.RunID, StepID: p.StepID, Attempt: p.Attempt,
		RootWorkflowID: p.RootWorkflowID, RootInstanceID: p.RootInstanceID,
	}
}

// childRerun is the new run of an iteration of a restarted foreach step:
// run r+1 of the iteration's instance, restarted with x.Policy (from
// incomplete: its succeeded steps carried over), pointing at the parent's new
// attempt, with the iteration's params. The iteration must have ended
// (RestartInstance checks it before the parent restarts).
func (o *Rounds) childRerun(ctx context.Context, x engine.RestartChild, now time.Time) (store.NewRun, error) {
	inst := x.Index + 1
	rec, err := o.store.Instances.GetInstance(ctx, x.WorkflowID, inst)
	if err != nil {
		return store.NewRun{}, fmt.Errorf("rerun iteration %d of step %q: %w", inst, x.StepID, err)
	}
	rr, _, err := o.store.Runs.LoadRun(ctx, x.WorkflowID, inst, rec.RunID)
	if err != nil {
		return store.NewRun{}, fmt.Errorf("rerun iteration %d of step %q: %w", inst, x.StepID, err)
	}
	decoded, err := decodeState(rr)
	if err != nil {
		return store.NewRun{}, fmt.Errorf("rerun iteration %d of step %q: %w", inst, x.StepID, err)
	}
	prev := *decoded
	var next *engine.Instance
	if in := x.Inner; in != nil {
		// Restarted for one iteration of a loop of its own (a nested
		// loop's iteration restarted by itself).
		g, _, gerr := o.graph(ctx, x.WorkflowID, prev.WorkflowVersion)
		switch {
		case gerr != nil:
		case in.Step != nil:
			// A step restart inside the iteration (restartstep.go).
			next, err = engine.RestartStepRun(g, &prev, *in.Step, now)
		default:
			next, err = engine.RestartIteration(g, &prev, in.StepID, in.Index, in.Was, in.Policy, now, in.Inner)
		}
		if gerr != nil || err != nil {
			// Its state moved on since the restart was asked for: rerun
			// what did not succeed rather than wedge the parent's round.
			o.log.WarnContext(ctx, "cannot restart one inner iteration; restarting the iteration from incomplete",
				"workflow_id", x.WorkflowID, "instance_id", inst, "step_id", in.StepID, "index", in.Index, "error", errors.Join(gerr, err))
			next = nil
		}
	}
	if next == nil {
		if next, err = engine.RestartState(&prev, cmp.Or(x.Policy, engine.RestartFromIncomplete), now); err != nil {
			return store.NewRun{}, fmt.Errorf("rerun iteration %d of step %q: %w", inst, x.StepID, err)
		}
	}
	p := x.Parent
	next.Parent, next.ParentGone, next.Feedback = &p, false, nil
	params, err := engine.LiteralParams(x.Params)
	if err != nil {
		return store.NewRun{}, fmt.Errorf("iteration %d of step %q: %w", inst, x.StepID, err)
	}
	start, err := json.Marshal(engine.StartRun{RunParams: params, Initiator: engine.Initiator{Type: "FOREACH"}})
	if err != nil {
		return store.NewRun{}, err
	}
	created := events.Transition(x.WorkflowID, next.WorkflowVersion, inst, next.RunID, "", 0,
		string(prev.Status), string(next.Status), next.Seq, now.UnixMilli())
	created.Parent = eventParent(&p)
	outbox, err := eventsMessage(ctx, created)
	if err != nil {
		return store.NewRun{}, err
	}
	return store.NewRun{
		WorkflowID: x.WorkflowID, InstanceID: inst, PrevRun: prev.RunID, Status: string(next.Status),
		State: mustJSON(next), FirstEvent: store.Event{ID: startEventID, Body: start}, Outbox: outbox, Now: now,
	}, nil
}

// rerunSubworkflow restarts from incomplete the instance a subworkflow
// step's previous attempt started (x.Restart) as the child of the new
// attempt: a new run of the same instance, its succeeded steps carried
// over, pointing at x.Parent, with the params passed down as run params.
// A delivery that finds the run already made for this attempt reports it.
// It returns the child, or the reason it cannot be restarted (gone, still
// running after the parent's restart checked it) as msg.
func (o *Worker) rerunSubworkflow(ctx context.Context, x *engine.StartSubworkflow, params model.Params) (child engine.ChildRef, msg string, err error) {
	ref := x.Restart
	rec, st, err := o.runState(ctx, ref.WorkflowID, ref.InstanceID, 0)
	var e *Error
	switch {
	case errors.As(err, &e) && e.Status == http.StatusNotFound:
		return engine.ChildRef{}, fmt.Sprintf("cannot restart %s instance %d: %s", ref.WorkflowID, ref.InstanceID, e.Message), nil
	case err != nil:
		return engine.ChildRef{}, "", err
	}
	self := func(st *engine.Instance) engine.ChildRef {
		return engine.ChildRef{WorkflowID: st.WorkflowID, InstanceID: st.InstanceID, RunID: st.RunID, Version: st.WorkflowVersion, UUID: st.UUID}
	}
	if p := st.Parent; p != nil && p.WorkflowID == x.Parent.WorkflowID && p.InstanceID == x.Parent.InstanceID &&
		p.RunID == x.Parent.RunID && p.StepID == x.Parent.StepID && p.Attempt == x.Parent.Attempt {
		return self(st), "", nil // restarted for this attempt already
	}
	if !st.Status.IsTerminal() {
		return engine.ChildRef{}, fmt.Sprintf("cannot restart %s instance %d: it is %s", ref.WorkflowID, ref.InstanceID, st.Status), nil
	}
	next, err := engine.RestartState(st, engine.RestartFromIncomplete, o.now())
	if err != nil {
		return engine.ChildRef{}, "", err
	}
	parent := x.Parent
	next.Parent, next.ParentGone, next.Feedback = &parent, false, nil
	if _, err := o.actions.startNextRun(ctx, rec, st, next, params); err != nil {
		if errors.As(err, &e) && e.Status == http.StatusConflict {
			// A concurrent delivery made it: report what it made.
			if _, now, rerr := o.runState(ctx, ref.WorkflowID, ref.InstanceID, 0); rerr == nil && now.Parent != nil && now.Parent.Attempt == x.Parent.Attempt && now.Parent.RunID == x.Parent.RunID {
				return self(now), "", nil
			}
		}
		return engine.ChildRef{}, "", err
	}
	return self(next), "", nil
}
