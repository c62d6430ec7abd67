package orchestrator

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/maestro-serverless/maestro/caller"
	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/events"
	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/store"
	"github.com/maestro-serverless/maestro/trace"
)

// startEventID sorts before every other event id of a run.
const startEventID = "0-start"

// StartWorkflow creates an instance of the selected version and decides its
// start inline (eager execution): by the time it returns, the root steps have
// started unless another decider holds the run. The stream-delivered wake for
// the same start then finds nothing pending and is dropped.
func (o *Runs) StartWorkflow(ctx context.Context, wf, selector string, req StartRequest) (*StartResponse, error) {
	return o.start(ctx, wf, selector, req, requestInitiator(ctx, req), model.Params{}, nil)
}

// requestInitiator is the initiator of an API start request: the type it
// names (MANUAL when none) and the caller.
func requestInitiator(ctx context.Context, req StartRequest) engine.Initiator {
	initiator := engine.Initiator{Type: "MANUAL", Principal: caller.From(ctx)}
	if req.Initiator != nil && req.Initiator.Type != "" {
		initiator.Type = strings.ToUpper(req.Initiator.Type)
	}
	return initiator
}

// traceOf is the trace a run started by ctx's request or message joins: its
// trace id, or a new one when it came without (a local request, a schedule).
func traceOf(ctx context.Context, now time.Time) trace.ID {
	if id := trace.From(ctx); id != "" {
		return id
	}
	return trace.New(now)
}

// start creates and starts an instance for initiator. Params given by the
// runtime (a signal trigger's params, a subworkflow step's) go before the
// request's run params; parent is set on an instance a subworkflow step
// starts.
func (o *Runs) start(ctx context.Context, wf, selector string, req StartRequest, initiator engine.Initiator, given model.Params, parent *engine.ParentRef) (*StartResponse, error) {
	target, err := o.startTarget(ctx, wf, selector)
	if err != nil {
		return nil, err
	}
	runParams, err := target.runParams(req, given)
	if err != nil {
		return nil, err
	}
	return o.startOn(ctx, target, req, runParams, initiator, parent)
}

// startTarget is the version a start selected: the workflow's head and
// the version's definition.
type startTarget struct {
	wf      string
	head    *store.WorkflowHead
	version int64
	def     *model.Definition
}

// startTarget reads the workflow's head and the definition of the version
// selector names.
func (o *Runs) startTarget(ctx context.Context, wf, selector string) (*startTarget, error) {
	head, version, err := o.headVersion(ctx, wf, selector)
	if err != nil {
		return nil, err
	}
	_, def, err := o.graph(ctx, wf, version)
	if err != nil {
		return nil, Internal(err)
	}
	return &startTarget{wf: wf, head: head, version: version, def: def}, nil
}

// runParams decodes req's run params after the params given by the
// runtime and checks them against the modes of the version's params.
func (t *startTarget) runParams(req StartRequest, given model.Params) (model.Params, error) {
	if _, err := parseRuntimeTags(req.RuntimeTags); err != nil {
		return model.Params{}, err
	}
	runParams, err := decodeRunParams(req.RunParams)
	if err != nil {
		return model.Params{}, err
	}
	runParams = given.Merged(runParams)
	if problems := engine.CheckRunParamModes(t.def.Workflow.Params, runParams, false); len(problems) > 0 {
		return model.Params{}, Invalid("run params override params their mode protects", problems...)
	}
	return runParams, nil
}

// startOn creates and starts an instance of target with checked run
// params (see start).
func (o *Runs) startOn(ctx context.Context, target *startTarget, req StartRequest, runParams model.Params, initiator engine.Initiator, parent *engine.ParentRef) (*StartResponse, error) {
	instanceID, prior, err := o.store.Instances.ReserveInstance(ctx, target.wf, req.RequestID)
	if err != nil {
		return nil, Internal(err)
	}
	if prior != nil {
		return startResponse(prior, false), nil
	}
	return o.startReserved(ctx, target, req, runParams, initiator, parent, instanceID)
}

// startReserved creates and starts instance instanceID of target, an id
// reserved for req (store.Instances.ReserveInstance), with checked run
// params.
func (o *Runs) startReserved(ctx context.Context, target *startTarget, req StartRequest, runParams model.Params, initiator engine.Initiator,
	parent *engine.ParentRef, instanceID int64) (*StartResponse, error) {
	wf, head, version, def := target.wf, target.head, target.version, target.def
	now := o.now()
	id := o.newUUID()
	st := &engine.Instance{
		WorkflowID: wf, WorkflowVersion: version, RunID: 1, UUID: id,
		Owner: ownerOf(def, head), Status: model.WorkflowCreated, CreateTime: now.UnixMilli(), Parent: parent,
		TraceID: string(traceOf(ctx, now)),
	}
	st.RuntimeTags, _ = parseRuntimeTags(req.RuntimeTags) // checked by runParams
	if initiator.Backfill != "" {
		// Known before its start is decided: it takes no run slot.
		st.Initiator = initiator
	}
	startEv, err := json.Marshal(engine.StartRun{RunParams: runParams, Initiator: initiator})
	if err != nil {
		return nil, Internal(fmt.Errorf("encode start event: %w", err))
	}
	// The instance's creation is its event of sequence 0.
	createdEvent := func(instanceID int64) ([]store.Message, error) {
		created := events.Transition(wf, version, instanceID, 1, "", 0, "", string(st.Status), 0, now.UnixMilli())
		created.Parent = eventParent(parent)
		return eventsMessage(ctx, created)
	}
	st.InstanceID = instanceID
	rec := &store.InstanceRecord{
		WorkflowID: wf, InstanceID: instanceID, Version: version, RunID: 1, UUID: id, Status: string(st.Status),
		RequestID: req.RequestID, Initiator: mustJSON(initiator), CreateTime: now.UnixMilli(), ModifyTime: now.UnixMilli(),
	}
	after, err := o.startFresh(ctx, head, rec, st, startEv, createdEvent)
	switch {
	case err == nil:
		resp := startResponse(rec, true)
		resp.Status = string(after.Status)
		return resp, nil
	case errors.Is(err, store.ErrRequestTaken):
		// A concurrent start with the same request_id won.
		prior, err := o.store.Instances.InstanceForRequest(ctx, wf, req.RequestID)
		if err != nil {
			return nil, Internal(err)
		}
		return startResponse(prior, false), nil
	}
	// The run could not start at once (no free slot, an older run queued, a
	// first decision too large for one commit...), or the commit failed:
	// nothing was written. Created waiting, with its start event in its
	// inbox, it goes through the general path, which handles all of those.
	o.log.DebugContext(ctx, "run not created started; creating it with its start event", "workflow_id", wf, "instance_id", instanceID, "reason", err)
	rec, created, err := o.store.Instances.CreateInstance(ctx, store.NewInstance{
		WorkflowID: wf, InstanceID: instanceID, Version: version, UUID: id, RequestID: req.RequestID,
		Initiator: mustJSON(initiator), Status: string(st.Status),
		State: func(instanceID int64) ([]byte, error) {
			st.InstanceID = instanceID
			return json.Marshal(st)
		},
		FirstEvent: store.Event{ID: startEventID, Body: startEv, WakeAfter: backstopWake},
		Outbox:     createdEvent,
		Now:        now,
	})
	if err != nil {
		return nil, refusedIfTooLarge(err, "run cannot start", "run_params")
	}
	resp := startResponse(rec, created)
	if !created {
		return resp, nil
	}
	after, err = o.rounds.Process(ctx, store.Wake{WorkflowID: wf, InstanceID: rec.InstanceID, RunID: rec.RunID})
	if err != nil {
		// The start is durable; the stream-driven decider will finish it.
		o.log.WarnContext(ctx, "inline start decision failed; the decision queue will retry", "workflow_id", wf, "instance_id", rec.InstanceID, "error", err)
		return resp, nil
	}
	if after != nil { // nil: handed to the decider after losing races (see Process)
		resp.Status = string(after.Status)
	}
	return resp, nil
}

// startResponse answers a start with instance rec.
func startResponse(rec *store.InstanceRecord, created bool) *StartResponse {
	return &StartResponse{
		WorkflowID: rec.WorkflowID, WorkflowVersionID: rec.Version, WorkflowInstanceID: rec.InstanceID,
		WorkflowRunID: rec.RunID, WorkflowUUID: rec.UUID, Status: rec.Status, Created: created,
	}
}

// freshRun is the first decision of a run that is not written yet: its
// state as created (version 0), its start event, and what its commit
// writes besides the decision — the instance summary (and the start
// request's dedup record) and the instance's creation event.
type freshRun struct {
	rec     *store.RunRecord
	pending []store.Event
	create  *store.InstanceRecord
	outbox  []store.Message
	// head is the workflow's head the start read: its run strategy.
	head *store.WorkflowHead
}

// startFresh creates instance rec, whose run's state is st, and decides its
// start event in one commit: the run is written started (or ended, for a
// workflow with nothing to do), never waiting with its start event in its
// inbox. The general path writes the summary, the run and the start event
// in one transaction and decides the event in a second: nine items (the
// event put and deleted, the queue item deleted, the run and the summary
// written twice) where this commit writes three — the run, the summary and
// the run-strategy slot — or four with a request id; and it reads back what
// it had just written.
// It fails, having written nothing, where that decision cannot be one
// commit of a run that takes a slot at once: no free slot, an older run
// queued, a decision too large; the caller then creates the run waiting.
func (o *Runs) startFresh(ctx context.Context, head *store.WorkflowHead, rec *store.InstanceRecord, st *engine.Instance, startEv []byte,
	createdEvent func(instanceID int64) ([]store.Message, error)) (*engine.Instance, error) {
	state, err := json.Marshal(st)
	if err != nil {
		return nil, fmt.Errorf("encode state: %w", err)
	}
	outbox, err := createdEvent(rec.InstanceID)
	if err != nil {
		return nil, err
	}
	w := store.Wake{WorkflowID: rec.WorkflowID, InstanceID: rec.InstanceID, RunID: rec.RunID}
	fresh := &freshRun{
		rec:     &store.RunRecord{WorkflowID: w.WorkflowID, InstanceID: w.InstanceID, RunID: w.RunID, Status: rec.Status, State: state},
		pending: []store.Event{{ID: startEventID, Body: startEv}},
		create:  rec,
		outbox:  outbox,
		head:    head,
	}
	after, more, err := o.rounds.processOnce(ctx, w, fullRound(), nil, fresh)
	if err != nil {
		return nil, err
	}
	if more {
		// The first decision left work for more rounds (its Continue
		// event is in the inbox, with a delayed wake).
		if next, err := o.rounds.Process(ctx, w); err != nil {
			o.log.WarnContext(ctx, "start decision's next round failed; the decision queue will retry", "workflow_id", w.WorkflowID,
				"instance_id", w.InstanceID, "error", err)
		} else if next != nil {
			after = next
		}
	}
	return after, nil
}

// ownerOf returns the workflow owner from the stored properties snapshot.
func ownerOf(def *model.Definition, head *store.WorkflowHead) string {
	if def.Properties != nil && def.Properties.Owner != nil {
		return def.Properties.Owner.Name
	}
	var props struct {
		Owner json.RawMessage `json:"owner"`
	}
	if json.Unmarshal(head.Properties, &props) == nil && len(props.Owner) > 0 {
		var name string
		if json.Unmarshal(props.Owner, &name) == nil {
			return name
		}
		var obj struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(props.Owner, &obj) == nil {
			return obj.Name
		}
	}
	return ""
}

// decodeRunParams reads run_params as Maestro param definitions.
func decodeRunParams(raw map[string]json.RawMessage) (model.Params, error) {
	return decodeParams(raw, "run_params")
}

// decodeParams decodes params given as the request field field; its
// errors are 400s naming it.
func decodeParams(raw map[string]json.RawMessage, field string) (model.Params, error) {
	if len(raw) == 0 {
		return model.Params{}, nil
	}
	data, err := json.Marshal(raw)
	if err != nil {
		return model.Params{}, Invalid("invalid "+field, err.Error())
	}
	var p model.Params
	if err := json.Unmarshal(data, &p); err != nil {
		var list model.Errors
		if errors.As(err, &list) {
			details := make([]string, len(list))
			for i, e := range list {
				details[i] = e.Error()
			}
			return model.Params{}, Invalid("invalid "+field, details...)
		}
		return model.Params{}, Invalid("invalid "+field, field+": "+err.Error())
	}
	return p, nil
}

// GetInstance returns an instance's latest run.
func (o *Runs) GetInstance(ctx context.Context, wf string, inst int64) (*InstanceView, error) {
	rec, err := o.instance(ctx, wf, inst)
	if err != nil {
		return nil, err
	}
	return o.runView(ctx, rec, rec.RunID)
}

// GetRun returns one run of an instance.
func (o *Runs) GetRun(ctx context.Context, wf string, inst, run int64) (*InstanceView, error) {
	rec, err := o.instance(ctx, wf, inst)
	if err != nil {
		return nil, err
	}
	if run > rec.RunID {
		return nil, NotFound("workflow %s instance %d has no run %d", wf, inst, run)
	}
	return o.runView(ctx, rec, run)
}

func (o *core) instance(ctx context.Context, wf string, inst int64) (*store.InstanceRecord, error) {
	rec, err := o.store.Instances.GetInstance(ctx, wf, inst)
	if err != nil {
		return nil, notFoundOr(err, "workflow %s instance %d not found", wf, inst)
	}
	return rec, nil
}

func (o *core) runView(ctx context.Context, rec *store.InstanceRecord, run int64) (*InstanceView, error) {
	rr, decoded, err := o.loadRun(ctx, rec.WorkflowID, rec.InstanceID, run)
	if err != nil {
		return nil, err
	}
	st := *decoded
	tl := compactTimeline(&st)
	if !st.Compact {
		// The run's first entries are in its item, later ones items of
		// their own.
		rest, err := o.store.Runs.ListTimeline(ctx, rec.WorkflowID, rec.InstanceID, run)
		if err != nil {
			return nil, Internal(err)
		}
		tl = append(slices.Clone(rr.Timeline), rest...)
		slices.SortStableFunc(tl, func(a, b store.TimelineItem) int { return cmp.Compare(a.Seq, b.Seq) })
	}
	view := runHeader(&st, rr.Ops)
	view.ModifyTime = rec.ModifyTime
	if g, _, err := o.graph(ctx, st.WorkflowID, st.WorkflowVersion); err == nil {
		view.RollupOverview = engine.RollupOf(g, &st)
	} else {
		o.log.WarnContext(ctx, "no rollup: cannot load the instance's definition", "workflow_id", st.WorkflowID, "version", st.WorkflowVersion, "error", err)
	}
	for _, t := range tl {
		if e, err := readEntry(t.Body, "", 0); err == nil {
			view.Timeline = append(view.Timeline, e)
		}
	}
	return view, nil
}

// ListSteps returns the latest attempt of each step of the latest run.
func (o *Runs) ListSteps(ctx context.Context, wf string, inst int64) ([]*StepView, error) {
	rec, err := o.instance(ctx, wf, inst)
	if err != nil {
		return nil, err
	}
	return o.stepsOfRun(ctx, wf, inst, rec.RunID, true)
}

// stepsOfRun returns the latest attempt of each step of run run, by step
// id. With carried set, a step a restart carried over into the run is
// shown by its attempt in the run it ran in (Maestro's aggregated view);
// without, only the steps that have an attempt in run itself.
func (o *Runs) stepsOfRun(ctx context.Context, wf string, inst, run int64, carried bool) ([]*StepView, error) {
	_, decoded, err := o.loadRun(ctx, wf, inst, run)
	if err != nil {
		return nil, err
	}
	st := *decoded
	attempts := compactAttempts(&st)
	if !st.Compact {
		if attempts, err = o.store.Attempts.ListAttempts(ctx, wf, inst, run); err != nil {
			return nil, Internal(err)
		}
	}
	latest := map[string]store.Attempt{}
	var order []string
	for _, a := range attempts {
		if _, ok := latest[a.StepID]; !ok {
			order = append(order, a.StepID)
		}
		if a.Attempt >= latest[a.StepID].Attempt {
			latest[a.StepID] = a
		}
	}
	// Steps that ended without starting (unsatisfied) have no item, nor do
	// running attempts no worker claimed yet (deferred.go); their view
	// comes from the state.
	synth := map[string]*StepView{}
	for i := range st.Steps {
		ss := &st.Steps[i]
		if p := pendingAttempt(&st, ss.StepID, 0); p != nil {
			if a, ok := latest[ss.StepID]; !ok || a.Attempt < p.Attempt {
				if !ok {
					order = append(order, ss.StepID)
				}
				latest[ss.StepID] = *p
			}
		}
		if _, ok := latest[ss.StepID]; ok {
			continue
		}
		if ss.FromRun != 0 && ss.FromRun != run {
			if !carried {
				continue
			}
			// Carried over by a restart: its attempt lives under the run
			// it ran in (Maestro's aggregated view).
			a, err := o.attempt(ctx, wf, inst, ss.FromRun, ss.StepID, 0)
			if err == nil {
				latest[ss.StepID] = *a
				order = append(order, ss.StepID)
				continue
			}
			if !errors.Is(err, store.ErrNotFound) {
				return nil, Internal(err)
			}
		}
		if ss.Status == model.StepNotCreated || ss.Status == "" || !neverStarted(ss) {
			continue
		}
		synth[ss.StepID] = unstartedView(&st, ss)
		order = append(order, ss.StepID)
	}
	sort.Strings(order)
	out := make([]*StepView, 0, len(order))
	for _, id := range order {
		if v, ok := synth[id]; ok {
			out = append(out, v)
			continue
		}
		v, err := attemptView(latest[id])
		if err != nil {
			return nil, Internal(err)
		}
		if ss := st.Step(id); ss != nil && ss.Loop != nil && ss.Attempt == v.StepAttemptID {
			// Iterations move the loop without touching the attempt's
			// item: the state has its current counts.
			v.setLoop(ss.Loop)
			v.Subworkflow = ss.Child
		}
		out = append(out, v)
	}
	o.fillStepTypes(ctx, &st, out)
	return out, nil
}

// fillStepTypes sets each view's step_type from the run's definition: a
// step's type (NoOp, Http, ...), or its kind for foreach, while and
// subworkflow steps. A definition that cannot be read leaves them empty:
// the view is still right without them.
func (o *Runs) fillStepTypes(ctx context.Context, st *engine.Instance, views []*StepView) {
	g, _, err := o.graph(ctx, st.WorkflowID, st.WorkflowVersion)
	if err != nil {
		return
	}
	for _, v := range views {
		switch s := g.Step(v.StepID); {
		case v.StepType != "" || s == nil:
		case s.Kind == model.KindStep:
			v.StepType = string(s.Type)
		default:
			v.StepType = string(s.Kind)
		}
	}
}

// GetStepAttempt returns one attempt; attempt 0 is the latest.
func (o *Runs) GetStepAttempt(ctx context.Context, wf string, inst, run int64, step string, attempt int64) (*StepView, error) {
	if _, err := o.instance(ctx, wf, inst); err != nil {
		return nil, err
	}
	a, err := o.store.Attempts.GetAttempt(ctx, wf, inst, run, step, attempt)
	if errors.Is(err, store.ErrNotFound) {
		if v := o.stepFromState(ctx, wf, inst, run, step, attempt); v != nil {
			return v, nil
		}
		return nil, NotFound("workflow %s instance %d run %d has no attempt of step %s", wf, inst, run, step)
	}
	if err != nil {
		return nil, Internal(err)
	}
	if attempt == 0 && a.Status != string(model.StepRunning) {
		// A later attempt may have started without an item yet.
		if p := pendingAttempt(loadState(ctx, o.store, wf, inst, run), step, 0); p != nil && p.Attempt > a.Attempt {
			a = p
		}
	}
	v, err := attemptView(*a)
	if err != nil {
		return nil, Internal(err)
	}
	if o.estimated(v.Foreach) {
		if v.Estimate, err = o.loopEstimate(ctx, wf, inst, run, step, v.Foreach); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// ListWorkflows pages through the stored workflows in id order; cursor is
// the last workflow id of the previous page.
func (o *Definitions) ListWorkflows(ctx context.Context, cursor string, limit int) (*WorkflowList, error) {
	if cursor != "" {
		if err := model.CheckWorkflowID(cursor); err != nil {
			return nil, Invalid("bad cursor", fmt.Sprintf("cursor: %q is not a cursor this API returned", cursor))
		}
	}
	heads, next, err := o.access.readableHeads(ctx, o.store.Definitions.ListWorkflows, cursor, limit)
	if err != nil {
		return nil, AsError(err)
	}
	out := &WorkflowList{Workflows: make([]WorkflowSummary, 0, len(heads)), NextCursor: next}
	for _, h := range heads {
		out.Workflows = append(out.Workflows, workflowSummary(h))
	}
	return out, nil
}

// ListInstances pages through a workflow's instances, newest first; with
// status set, only those in that status (a foreach's failed iterations:
// its inline workflow's FAILED instances).
func (o *Runs) ListInstances(ctx context.Context, wf, status, cursor string, limit int) (*InstanceList, error) {
	if status != "" {
		st := model.WorkflowStatus(strings.ToUpper(status))
		if !st.Valid() {
			names := make([]string, 0, len(model.WorkflowStatuses()))
			for _, s := range model.WorkflowStatuses() {
				names = append(names, string(s))
			}
			return nil, Invalid("bad status filter", fmt.Sprintf("status: %q is not a workflow instance status (%s)", status, strings.Join(names, ", ")))
		}
		status = string(st)
	}
	if _, err := o.latestInstance(ctx, wf); err != nil {
		return nil, err
	}
	recs, next, err := o.store.Instances.ListInstances(ctx, wf, status, cursor, limit)
	if err != nil {
		if errors.Is(err, store.ErrBadCursor) {
			return nil, Invalid("bad cursor", fmt.Sprintf("cursor: %q is not a cursor this API returned", cursor))
		}
		return nil, Internal(err)
	}
	out := &InstanceList{NextCursor: next, Instances: make([]*InstanceView, 0, len(recs))}
	for _, r := range recs {
		out.Instances = append(out.Instances, instanceSummary(r))
	}
	return out, nil
}

// stepView is the API's view of attempt s of run st, from the state.
func stepView(st *engine.Instance, s *engine.StepState) *StepView { return bodyOf(st, s).view() }

// attemptView is the API's view of a stored attempt item: its body, its
// status and its timeline.
func attemptView(a store.Attempt) (*StepView, error) {
	b, err := decodeAttemptBody(a)
	if err != nil {
		return nil, err
	}
	v := b.view()
	for _, raw := range a.Timeline {
		if e, err := readEntry(raw, a.StepID, a.Attempt); err == nil {
			v.Timeline = append(v.Timeline, e)
		}
	}
	return v, nil
}

// storedEntry is the compact stored form of a timeline entry: every step
// attempt carries several, and DynamoDB bills writes per KB.
type storedEntry struct {
	Time    int64  `json:"t"`
	Status  string `json:"s,omitempty"`
	Message string `json:"m,omitempty"`
}

func storeEntry(e engine.TimelineEntry) []byte {
	return mustJSON(storedEntry{Time: e.Time, Status: e.Status, Message: e.Message})
}

// readEntry decodes a stored entry, writing the default message for entries
// that carry none. stepID is empty for instance entries.
func readEntry(raw []byte, stepID string, attempt int64) (TimelineEntry, error) {
	var se storedEntry
	if err := json.Unmarshal(raw, &se); err != nil {
		return TimelineEntry{}, err
	}
	msg := se.Message
	if msg == "" {
		if stepID != "" {
			msg = fmt.Sprintf("step %s attempt %d is %s", stepID, attempt, se.Status)
		} else {
			msg = "workflow instance is " + se.Status
		}
	}
	return TimelineEntry{Time: se.Time, Status: se.Status, Message: msg}, nil
}

// neverStarted reports whether a step reached its status without being
// created (NOT_CREATED or ended UNSATISFIED straight away).
func neverStarted(s *engine.StepState) bool {
	return s.CreateTime == 0 && s.StartTime == 0
}

// unstartedView describes a step that ended without starting.
func unstartedView(st *engine.Instance, ss *engine.StepState) *StepView {
	v := stepView(st, ss)
	v.Timeline = []TimelineEntry{{Time: ss.EndTime, Status: string(ss.Status), Message: ss.Message}}
	return v
}

// attempt returns one attempt of a step of run run (attempt 0: the latest):
// its item, or, without one, what its item is to be: a compact run's
// (engine.Instance.Compact), or a running attempt's no worker claimed yet.
func (o *Runs) attempt(ctx context.Context, wf string, inst, run int64, step string, attempt int64) (*store.Attempt, error) {
	return attemptOf(ctx, o.store, wf, inst, run, step, attempt)
}

// attemptOf is Orchestrator.attempt over db.
func attemptOf(ctx context.Context, db Stores, wf string, inst, run int64, step string, attempt int64) (*store.Attempt, error) {
	a, err := db.Attempts.GetAttempt(ctx, wf, inst, run, step, attempt)
	if !errors.Is(err, store.ErrNotFound) {
		return a, err
	}
	if st := loadState(ctx, db, wf, inst, run); st != nil {
		if c := compactAttempt(st, step, attempt); c != nil {
			return c, nil
		}
		if p := pendingAttempt(st, step, attempt); p != nil {
			return p, nil
		}
	}
	return nil, err
}

// loadState returns the state of a run, nil if it cannot be read.
func loadState(ctx context.Context, db Stores, wf string, inst, run int64) *engine.Instance {
	rr, _, err := db.Runs.LoadRun(ctx, wf, inst, run)
	if err != nil {
		return nil
	}
	st, err := decodeState(rr)
	if err != nil {
		return nil
	}
	return st
}

// stepFromState returns the view of a step attempt of run that has no item,
// derived from the run's state — any of a compact run's, a running one no
// worker claimed yet (pendingAttempt), or (attempt 0 or 1) one of a step
// that ended without starting — or nil.
func (o *Runs) stepFromState(ctx context.Context, wf string, inst, run int64, step string, attempt int64) *StepView {
	st := loadState(ctx, o.store, wf, inst, run)
	if st == nil {
		return nil
	}
	c := compactAttempt(st, step, attempt)
	if c == nil {
		c = pendingAttempt(st, step, attempt)
	}
	if c != nil {
		v, err := attemptView(*c)
		if err != nil {
			return nil
		}
		return v
	}
	ss := st.Step(step)
	if attempt > 1 || ss == nil || ss.Status == model.StepNotCreated || ss.Status == "" || !neverStarted(ss) {
		return nil
	}
	return unstartedView(st, ss)
}
