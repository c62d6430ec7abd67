package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/maestro-serverless/maestro/caller"
	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/engine/expression"
	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/signals"
	"github.com/maestro-serverless/maestro/store"
)

// Work kinds of signals.

// SignalSource says who announced a signal.
type SignalSource struct {
	// Kind is api, step, s3 or sns.
	Kind       string `json:"kind"`
	WorkflowID string `json:"workflow_id,omitempty"`
	InstanceID int64  `json:"workflow_instance_id,omitempty"`
	RunID      int64  `json:"workflow_run_id,omitempty"`
	StepID     string `json:"step_id,omitempty"`
	Attempt    int64  `json:"step_attempt_id,omitempty"`
	// Detail names the origin further (bucket and key, topic).
	Detail string `json:"detail,omitempty"`
	// Principal is the IAM principal whose API request announced the
	// signal (kind api; see package caller).
	Principal string `json:"principal,omitempty"`
}

// SignalView is a signal instance (Maestro's SignalInstance).
type SignalView struct {
	Name        string         `json:"name"`
	SeqID       int64          `json:"seq_id"`
	Params      map[string]any `json:"params,omitempty"`
	Payload     map[string]any `json:"payload,omitempty"`
	RequestID   string         `json:"request_id,omitempty"`
	RequestTime int64          `json:"request_time,omitempty"`
	CreateTime  int64          `json:"create_time"`
	Source      *SignalSource  `json:"source,omitempty"`
	// Created is false when the request id named an earlier instance.
	Created bool `json:"created"`
}

// LineageView is what a signal instance did.
type LineageView struct {
	Signal *SignalView `json:"signal"`
	// PublishedBy is the step attempt that announced it, if one did.
	PublishedBy *SignalSource `json:"published_by,omitempty"`
	// Triggered and Unblocked list the instances it started and the step
	// attempts whose dependency it met.
	Triggered []LineageLink `json:"triggered"`
	Unblocked []LineageLink `json:"unblocked"`
}

// LineageLink names an instance, or a step attempt, a signal led to.
type LineageLink struct {
	Kind       string `json:"kind"`
	WorkflowID string `json:"workflow_id"`
	InstanceID int64  `json:"workflow_instance_id"`
	RunID      int64  `json:"workflow_run_id,omitempty"`
	StepID     string `json:"step_id,omitempty"`
	Attempt    int64  `json:"step_attempt_id,omitempty"`
}

// AnnounceSignal stores a signal instance and has it delivered to the
// triggers and waiting steps subscribed to its name (asynchronously, from
// the stream). A request id already used returns the earlier instance.
func (o *Signals) AnnounceSignal(ctx context.Context, a signals.Announce, src SignalSource) (*SignalView, error) {
	params := make(map[string]any, len(a.Params))
	for k, v := range a.Params {
		n, err := signals.Normalize(v)
		if err != nil {
			return nil, Invalid("invalid signal", fmt.Sprintf("params.%s: %v", k, err))
		}
		params[k] = n
	}
	a.Params = params
	if problems := a.Validate(); len(problems) > 0 {
		return nil, Invalid("invalid signal", problems...)
	}
	payload, err := json.Marshal(a.Payload)
	if err != nil {
		return nil, Invalid("invalid signal", "payload: "+err.Error())
	}
	if src.Kind == "api" && src.Principal == "" {
		src.Principal = caller.From(ctx)
	}
	source := mustJSON(src)
	rec, created, err := o.store.Signals.AnnounceSignal(ctx, store.NewSignal{
		Name: a.Name, Params: params, Payload: payload, RequestID: a.RequestID, Source: source, Now: o.now(),
		Outbox: func(seq int64) ([]store.Message, error) {
			return []store.Message{{Queue: store.QueueWork, Body: EncodeWork(SignalWork{SignalName: a.Name, SignalSeq: seq})}}, nil
		},
	})
	if err != nil {
		return nil, refusedIfTooLarge(err, "invalid signal", "params and payload")
	}
	v, err := signalView(rec)
	if err != nil {
		return nil, Internal(err)
	}
	v.Created = created
	v.RequestTime = a.RequestTime
	return v, nil
}

func signalView(rec *store.SignalRecord) (*SignalView, error) {
	sig, err := rec.Signal()
	if err != nil {
		return nil, err
	}
	v := &SignalView{Name: rec.Name, SeqID: rec.Seq, Params: sig.Params, Payload: sig.Payload, RequestID: rec.RequestID, CreateTime: rec.CreateTime}
	if len(rec.Source) > 0 {
		var src SignalSource
		if err := json.Unmarshal(rec.Source, &src); err == nil {
			v.Source = &src
		}
	}
	return v, nil
}

// GetSignal returns instance seq (0: the latest) of a signal name.
func (o *Signals) GetSignal(ctx context.Context, name string, seq int64) (*SignalView, error) {
	rec, err := o.store.Signals.GetSignal(ctx, name, seq)
	if errors.Is(err, store.ErrNotFound) {
		if seq == 0 {
			return nil, NotFound("no signal %q has been announced", name)
		}
		return nil, NotFound("signal %q has no instance %d", name, seq)
	}
	if err != nil {
		return nil, Internal(err)
	}
	v, err := signalView(rec)
	if err != nil {
		return nil, Internal(err)
	}
	v.Created = true
	return v, nil
}

// SignalLineage returns who published a signal instance and what it
// triggered and unblocked.
func (o *Signals) SignalLineage(ctx context.Context, name string, seq int64) (*LineageView, error) {
	sig, err := o.GetSignal(ctx, name, seq)
	if err != nil {
		return nil, err
	}
	links, err := o.store.Signals.Lineage(ctx, name, sig.SeqID)
	if err != nil {
		return nil, Internal(err)
	}
	lv := &LineageView{Signal: sig, Triggered: []LineageLink{}, Unblocked: []LineageLink{}}
	if sig.Source != nil && sig.Source.Kind == "step" {
		lv.PublishedBy = sig.Source
	}
	for _, raw := range links {
		var l LineageLink
		if err := json.Unmarshal(raw, &l); err != nil {
			return nil, Internal(fmt.Errorf("decode lineage of %s/%d: %w", name, seq, err))
		}
		if l.Kind == "triggered" {
			lv.Triggered = append(lv.Triggered, l)
		} else {
			lv.Unblocked = append(lv.Unblocked, l)
		}
	}
	return lv, nil
}

// handleSignal delivers signal instance seq of name: every waiting step
// attempt subscribed to the name gets a SignalArrived event (its run
// re-checks its dependencies), and every subscribed trigger is evaluated.
// Redelivery is harmless: the events have deterministic ids and trigger
// starts are deduplicated by request id.
func (o *Signals) handleSignal(ctx context.Context, name string, seq int64) error {
	rec, err := o.store.Signals.GetSignal(ctx, name, seq)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("%w: signal %s/%d does not exist", ErrPoison, name, seq)
	}
	if err != nil {
		return err
	}
	sig, err := rec.Signal()
	if err != nil {
		return fmt.Errorf("%w: %v", ErrPoison, err)
	}
	subs, waiters, err := o.store.Signals.Subscribers(ctx, name)
	if err != nil {
		return err
	}
	evID := signalEventID(name, seq)
	body := mustJSON(engine.SignalArrived{Name: name, Seq: seq})
	for _, w := range waiters {
		h, err := store.ParseSignalWaiterKey(w)
		if err != nil {
			o.log.ErrorContext(ctx, "bad signal waiter key", "signal", name, "key", w, "error", err)
			continue
		}
		if err := o.store.Runs.PutEvent(ctx, h.WorkflowID, h.InstanceID, h.RunID, store.Event{ID: evID, Body: body}); err != nil {
			return err
		}
	}
	for _, sub := range subs {
		if seq <= sub.Since {
			continue // announced before the trigger became active
		}
		if err := o.fireSignalTriggers(ctx, sub.WorkflowID, sig); err != nil {
			return err
		}
	}
	return o.store.Signals.SignalDelivered(ctx, name, seq)
}

func signalTriggersDisabled(props []byte) bool {
	var p struct {
		Disabled bool `json:"signal_trigger_disabled"`
	}
	return len(props) > 0 && json.Unmarshal(props, &p) == nil && p.Disabled
}

// fireSignalTriggers evaluates, for a signal that arrived, every signal
// trigger of workflow wf's active version that uses its name.
func (o *Signals) fireSignalTriggers(ctx context.Context, wf string, sig signals.Signal) error {
	head, err := o.store.Definitions.GetHead(ctx, wf)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if head.Active == 0 || signalTriggersDisabled(head.Properties) {
		return nil // a stale subscription; the change that made it so removes it
	}
	_, def, err := o.graph(ctx, wf, head.Active)
	if err != nil {
		return err
	}
	// A workflow's trigger expressions share one budget per signal, as a
	// decision's do: a definition cannot spend more on one signal however
	// many triggers it has, nor starve the other workflows' triggers.
	ctx = expression.WithBudget(ctx, expression.NewBudget(0, 0))
	for i := range def.Workflow.SignalTriggers {
		t := &def.Workflow.SignalTriggers[i]
		if !slices.Contains(model.MapKeys(t.Names, t.Definitions), sig.Name) {
			continue
		}
		if err := o.fireSignalTrigger(ctx, wf, i, t, sig); err != nil {
			return err
		}
	}
	return nil
}

// fireSignalTrigger starts workflow wf when the arrived signal completes a
// match of its trigger index: every name matched (joined on the join keys,
// looked up over each name's whole history), the condition true. The start's
// request id derives from the match (or the dedup expression), so one match
// starts one instance however many signals complete it concurrently.
func (o *Signals) fireSignalTrigger(ctx context.Context, wf string, index int, t *model.SignalTrigger, sig signals.Signal) error {
	if !signals.MatchesTrigger(t.Definitions[sig.Name], sig) {
		return nil
	}
	candidates := map[string][]signals.Signal{}
	names := model.MapKeys(t.Names, t.Definitions)
	for _, n := range names {
		if n == sig.Name {
			continue
		}
		conds, ok := signals.JoinConditions(t, sig, n)
		if !ok {
			return nil
		}
		c, found, err := o.store.Signals.FindSignal(ctx, n, conds)
		if errors.Is(err, store.ErrSignalScanLimit) {
			o.log.WarnContext(ctx, "signal trigger lookup reached its limit; not starting", "workflow_id", wf, "trigger", index, "signal", n, "error", err)
			return nil
		}
		if err != nil {
			return err
		}
		if !found {
			return nil
		}
		candidates[n] = []signals.Signal{c}
	}
	match, ok := signals.Complete(t, sig, candidates)
	if !ok {
		return nil
	}
	matches := make([]engine.SignalMatch, 0, len(names))
	for _, n := range names {
		m := match[n]
		matches = append(matches, engine.SignalMatch{Name: n, Seq: m.Seq, Params: m.Params})
	}
	env := signalTriggerEnv(matches)
	if t.Condition != "" {
		ok, err := o.evalTriggerExpr(ctx, t.Condition, model.TypeBoolean, env)
		if err != nil {
			o.log.ErrorContext(ctx, "signal trigger condition failed; not starting", "workflow_id", wf, "trigger", index, "error", err)
			return nil
		}
		if b, _ := ok.(bool); !b {
			return nil
		}
	}
	dedup := ""
	if t.DedupExpr != "" {
		v, err := o.evalTriggerExpr(ctx, t.DedupExpr, model.TypeString, env)
		if err != nil {
			o.log.ErrorContext(ctx, "signal trigger dedup_expr failed; not starting", "workflow_id", wf, "trigger", index, "error", err)
			return nil
		}
		dedup = fmt.Sprint(v)
	}
	reqID := signals.TriggerRequestID(wf, index, match, dedup)
	resp, err := o.runs.start(ctx, wf, "active", StartRequest{RequestID: reqID}, engine.Initiator{Type: "SIGNAL", Signals: matches}, t.Params, nil)
	if err != nil {
		var e *Error
		if errors.As(err, &e) && e.Status < 500 {
			o.log.ErrorContext(ctx, "signal trigger start refused", "workflow_id", wf, "trigger", index, "error", err)
			return nil
		}
		return err
	}
	for _, m := range matches {
		link := LineageLink{Kind: "triggered", WorkflowID: wf, InstanceID: resp.WorkflowInstanceID, RunID: resp.WorkflowRunID}
		if err := o.store.Signals.PutLineage(ctx, store.LineageLink{Name: m.Name, Seq: m.Seq,
			ID: fmt.Sprintf("t#%s#%d", wf, resp.WorkflowInstanceID), Body: mustJSON(link)}); err != nil {
			return err
		}
	}
	o.log.InfoContext(ctx, "signal trigger fired", "workflow_id", wf, "trigger", index, "signal", sig.Name,
		"seq", sig.Seq, "instance_id", resp.WorkflowInstanceID, "created", resp.Created)
	return nil
}

// signalTriggerEnv is what a trigger's condition and dedup_expr see: the
// matched signals (params.getFromSignal) and their params as variables.
func signalTriggerEnv(matches []engine.SignalMatch) *engine.Env {
	env := &engine.Env{Signals: map[string]map[string]any{}, SignalParams: map[string]any{}}
	for _, m := range matches {
		env.Signals[m.Name] = m.Params
		for k, v := range m.Params {
			if _, ok := env.SignalParams[k]; !ok {
				env.SignalParams[k] = v
			}
		}
	}
	env.Vars = env.SignalParams
	// "Random" helpers (UUID.randomUUID in a dedup_expr) are seeded by the
	// match, so they differ between matches and agree between deliveries.
	seed := "signal-trigger"
	for _, m := range matches {
		seed += fmt.Sprintf("/%s=%d", m.Name, m.Seq)
	}
	env.Seed = seed
	return env
}

// evalTriggerExpr evaluates a trigger's condition or dedup expression over
// the matched signals' params.
func (o *Signals) evalTriggerExpr(ctx context.Context, src string, typ model.ParamType, env *engine.Env) (any, error) {
	vars := map[string]model.ParamType{}
	for k, v := range env.Vars {
		switch v.(type) {
		case int64:
			vars[k] = model.TypeLong
		default:
			vars[k] = model.TypeString
		}
	}
	ps := model.Params{Names: []string{"result"}, Defs: map[string]*model.ParamDefinition{
		"result": {Type: typ, Expression: src},
	}}
	set, err := o.eval.CompileParams(ps, model.Scope{Vars: vars})
	if err != nil {
		return nil, err
	}
	res, err := set.Eval(ctx, env)
	if err != nil {
		return nil, err
	}
	return res["result"], nil
}

// signalSubscriptions computes, for the store, the signal names a head's
// active version's triggers use: none when no version is active, signal
// triggers are disabled or the workflow is gone. pushed, when set, is the
// definition of the version being stored (the head's latest), which cannot
// be read back yet.
func (o *Definitions) signalSubscriptions(wf string, pushed *model.Definition) store.SubscriptionsFunc {
	return func(ctx context.Context, head *store.WorkflowHead) ([]string, error) {
		if head == nil || head.Active == 0 || signalTriggersDisabled(head.Properties) {
			return nil, nil
		}
		def := pushed
		if def == nil || head.Active != head.Latest {
			_, d, err := o.graph(ctx, wf, head.Active)
			if err != nil {
				return nil, err
			}
			def = d
		}
		var names []string
		for _, t := range def.Workflow.SignalTriggers {
			names = append(names, model.MapKeys(t.Names, t.Definitions)...)
		}
		return names, nil
	}
}

// syncSignalTriggers makes the workflow's trigger subscriptions those of
// its current head. Every head change writes them itself; this is the
// backstop that converges whatever happened.
func (o *Signals) syncSignalTriggers(ctx context.Context, wf string) error {
	return o.store.Signals.SyncSubscriptions(ctx, wf, o.definitions.signalSubscriptions(wf, nil))
}

// announceOutput announces a step's signal output; the request id derives
// from the attempt and the output's index, so a redelivered message
// announces once.
func (o *Signals) announceOutput(ctx context.Context, m AnnounceWork) error {
	a := signals.Announce{Name: m.SignalName, Params: map[string]any(m.Params), Payload: m.Payload,
		RequestID: fmt.Sprintf("step:%s/%d/%d/%s/%d/%d", m.WorkflowID, m.InstanceID, m.RunID, m.StepID, m.Attempt, m.Index)}
	_, err := o.AnnounceSignal(ctx, a, SignalSource{Kind: "step", WorkflowID: m.WorkflowID, InstanceID: m.InstanceID,
		RunID: m.RunID, StepID: m.StepID, Attempt: m.Attempt})
	return err
}

// signalBook is the engine.Signals of one processing round: each query
// looks over the name's whole history through the param index (see
// store.FindSignal), once per round; a failed read is kept in err and the
// round is not committed.
type signalBook struct {
	ctx   context.Context
	store Stores
	log   *slog.Logger
	seen  map[string]*engine.SignalMatch // query key -> match (nil: none)
	err   error
}

var _ engine.Signals = (*signalBook)(nil)

// Find implements engine.Signals.
func (b *signalBook) Find(q engine.SignalQuery) (engine.SignalMatch, bool) {
	conds := make([]signals.Condition, len(q.Conditions))
	for i, c := range q.Conditions {
		conds[i] = signals.Condition{Param: c.Param, Op: c.Op, Value: c.Value}
	}
	k := string(mustJSON(struct {
		N string
		C []signals.Condition
	}{q.Name, conds}))
	if m, ok := b.seen[k]; ok {
		if m == nil {
			return engine.SignalMatch{}, false
		}
		return *m, true
	}
	if b.seen == nil {
		b.seen = map[string]*engine.SignalMatch{}
	}
	s, found, err := b.store.Signals.FindSignal(b.ctx, q.Name, conds)
	if errors.Is(err, store.ErrSignalScanLimit) {
		// Not a failure of the round: the step keeps waiting, and new
		// signals of the name wake it.
		b.log.WarnContext(b.ctx, "signal dependency lookup reached its limit", "signal", q.Name, "step_id", q.StepID, "error", err)
		err, found = nil, false
	}
	if err != nil {
		if b.err == nil {
			b.err = err
		}
		return engine.SignalMatch{}, false
	}
	if !found {
		b.seen[k] = nil
		return engine.SignalMatch{}, false
	}
	m := engine.SignalMatch{Name: s.Name, Seq: s.Seq, Params: s.Params}
	b.seen[k] = &m
	return m, true
}

// signalChanges turns the signal waits and matches a round's decisions made
// into commit items: waiter registrations to add and remove, and lineage
// links of the signals that met dependencies.
func signalChanges(before, after *engine.Instance) (waits []store.SignalWait, links []store.LineageLink) {
	for i := range after.Steps {
		a := &after.Steps[i]
		var b *engine.StepState
		if i < len(before.Steps) {
			b = &before.Steps[i]
		}
		var had []string
		if b != nil && b.Status == model.StepWaitingForSignals {
			had = b.WaitsFor
		}
		var has []string
		if a.Status == model.StepWaitingForSignals {
			has = a.WaitsFor
		}
		if b != nil && b.Attempt != a.Attempt {
			for _, n := range had {
				waits = append(waits, store.SignalWait{Name: n, Key: store.SignalWaiterKey(after.WorkflowID, after.InstanceID, after.RunID, b.StepID, b.Attempt), Remove: true})
			}
			had = nil
		}
		key := store.SignalWaiterKey(after.WorkflowID, after.InstanceID, after.RunID, a.StepID, a.Attempt)
		for _, n := range has {
			if !slices.Contains(had, n) {
				waits = append(waits, store.SignalWait{Name: n, Key: key})
			}
		}
		for _, n := range had {
			if !slices.Contains(has, n) {
				waits = append(waits, store.SignalWait{Name: n, Key: key, Remove: true})
			}
		}
		for k, m := range a.SignalDeps {
			if m == nil {
				continue
			}
			if b != nil && b.Attempt == a.Attempt && k < len(b.SignalDeps) && b.SignalDeps[k] != nil {
				continue
			}
			link := LineageLink{Kind: "unblocked", WorkflowID: after.WorkflowID, InstanceID: after.InstanceID,
				RunID: after.RunID, StepID: a.StepID, Attempt: a.Attempt}
			links = append(links, store.LineageLink{Name: m.Name, Seq: m.Seq,
				ID: fmt.Sprintf("u#%s#%d#%d#%s#%d", after.WorkflowID, after.InstanceID, after.RunID, a.StepID, a.Attempt), Body: mustJSON(link)})
		}
	}
	return waits, links
}
