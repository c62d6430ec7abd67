package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/jsonnum"
	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/store"
	"github.com/maestro-serverless/maestro/store/memstore"
)

// The role rig: the orchestrator's roles over the in-memory store, with a
// controllable clock, deterministic uuids, a dispatcher that keeps what a
// commit sends, and store wrappers that log (and can fail) the writes the
// worker makes. No emulator, no sleeping: the tests drive the work queue
// and the decider by hand (rig.pump plays the stream router).

// errRigThrottled is a store failure that is no conflict.
var errRigThrottled = errors.New("throttled")

// rigEpoch is the rig's clock at its start.
var rigEpoch = time.UnixMilli(1_900_000_000_000)

// workClock is a clock the test moves; the goroutines a round starts read
// it too.
type workClock struct{ ms atomic.Int64 }

// clockAt returns a clock at t (whole milliseconds).
func clockAt(t time.Time) *workClock {
	c := &workClock{}
	c.ms.Store(t.UnixMilli())
	return c
}

func (c *workClock) Now() time.Time          { return time.UnixMilli(c.ms.Load()) }
func (c *workClock) Advance(d time.Duration) { c.ms.Add(d.Milliseconds()) }

// take returns the work messages dispatched since the last take, and
// keeps the decision-queue wakes for wakes.
func (d *rigDispatch) take(t testing.TB) []wireWork {
	d.mu.Lock()
	var msgs []store.Message
	rest := d.sent[:0:0]
	for _, m := range d.sent {
		if m.Queue == store.QueueWork {
			msgs = append(msgs, m)
		} else {
			rest = append(rest, m)
		}
	}
	d.sent = rest
	d.mu.Unlock()
	out := make([]wireWork, 0, len(msgs))
	for _, m := range msgs {
		var w wireWork
		if err := jsonnum.Decode([]byte(m.Body), &w); err != nil {
			t.Fatalf("dispatched message %q: %v", m.Body, err)
		}
		out = append(out, w)
	}
	return out
}

// wakes returns the decision-queue wakes dispatched since the last call.
func (d *rigDispatch) wakes(t testing.TB) []store.Wake {
	d.mu.Lock()
	var out []store.Wake
	rest := d.sent[:0:0]
	for _, m := range d.sent {
		if m.Queue != store.QueueDecision {
			rest = append(rest, m)
			continue
		}
		var w store.Wake
		if err := json.Unmarshal([]byte(m.Body), &w); err != nil {
			t.Errorf("dispatched wake %q: %v", m.Body, err)
		}
		out = append(out, w)
	}
	d.sent = rest
	d.mu.Unlock()
	return out
}

// handed returns the step ends handed to the decider since the last take
// or wakes, as "step#attempt": those a wake dispatched directly names
// (wakeDecider), and those written with their wake for the stream (a
// "wake" write, WakeEnd) since log entry from. It keeps the dispatched
// work messages for take.
func (r *roleRig) handed(t testing.TB, from int) (direct, streamed []string) {
	for _, w := range r.disp.wakes(t) {
		for _, f := range w.Finished {
			direct = append(direct, fmt.Sprintf("%s#%d", f.StepID, f.Attempt))
		}
	}
	calls, _ := r.log.since(from)
	for _, c := range calls {
		if c.err == nil && (c.op == "WakeEnd" || c.wake && (c.op == "FinishAttempt" || c.op == "FinishDeferredAttempt")) {
			streamed = append(streamed, fmt.Sprintf("%s#%d", c.ref.StepID, c.ref.Attempt))
		}
	}
	slices.Sort(direct)
	slices.Sort(streamed)
	return direct, streamed
}

// rigCall is one logged store call.
type rigCall struct {
	op   string // ClaimAttempt, FinishAttempt, FinishDeferredAttempt, RecordOutcome, WakeEnd, PutEvent
	ref  store.AttemptRef
	wake bool
	ev   store.Event
	err  error
}

// rigLog is the store calls the rig's wrappers saw.
type rigLog struct {
	mu    sync.Mutex
	calls []rigCall
}

func (l *rigLog) add(c rigCall) {
	l.mu.Lock()
	l.calls = append(l.calls, c)
	l.mu.Unlock()
}

// ops returns the logged calls of the given ops (all with none).
func (l *rigLog) ops(ops ...string) []rigCall {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []rigCall
	for _, c := range l.calls {
		if len(ops) == 0 || slices.Contains(ops, c.op) {
			out = append(out, c)
		}
	}
	return out
}

// trace returns the successful calls of ops as "Op step#attempt", with
// " wake" for a write that wakes the decider.
func (l *rigLog) trace(ops ...string) []string {
	var out []string
	for _, c := range l.ops(ops...) {
		if c.err != nil {
			continue
		}
		s := fmt.Sprintf("%s %s#%d", c.op, c.ref.StepID, c.ref.Attempt)
		if c.wake && c.op != "WakeEnd" && c.op != "LoadQuietRun" {
			s += " wake"
		}
		out = append(out, s)
	}
	return out
}

// wantTrace fails the test unless the trace of ops is want; it reports
// whether it is.
func (l *rigLog) wantTrace(t testing.TB, want []string, ops ...string) bool {
	t.Helper()
	if got := l.trace(ops...); !slices.Equal(got, want) {
		t.Errorf("calls %v: %q,\nwant %q", ops, got, want)
		return false
	}
	return true
}

// since returns the calls logged after the first n, and how many there
// are in all.
func (l *rigLog) since(n int) ([]rigCall, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n > len(l.calls) {
		n = len(l.calls)
	}
	return slices.Clone(l.calls[n:]), len(l.calls)
}

func (l *rigLog) reset() {
	l.mu.Lock()
	l.calls = nil
	l.mu.Unlock()
}

// count returns how many successful calls of op were logged.
func (l *rigLog) count(op string) int {
	n := 0
	for _, c := range l.ops(op) {
		if c.err == nil {
			n++
		}
	}
	return n
}

// workAttempts logs the worker's attempt writes; fail, when set, may fail
// one before it reaches the store.
type workAttempts struct {
	AttemptStore
	log  *rigLog
	mu   sync.Mutex
	fail func(op string, ref store.AttemptRef) error
}

func (a *workAttempts) hook(op string, ref store.AttemptRef) error {
	a.mu.Lock()
	f := a.fail
	a.mu.Unlock()
	if f == nil {
		return nil
	}
	return f(op, ref)
}

func (a *workAttempts) setFail(f func(op string, ref store.AttemptRef) error) {
	a.mu.Lock()
	a.fail = f
	a.mu.Unlock()
}

func (a *workAttempts) ClaimAttempt(ctx context.Context, ref store.AttemptRef, token string, now, until time.Time, start *store.AttemptStart) ([]byte, error) {
	if err := a.hook("ClaimAttempt", ref); err != nil {
		a.log.add(rigCall{op: "ClaimAttempt", ref: ref, err: err})
		return nil, err
	}
	out, err := a.AttemptStore.ClaimAttempt(ctx, ref, token, now, until, start)
	a.log.add(rigCall{op: "ClaimAttempt", ref: ref, err: err})
	return out, err
}

func (a *workAttempts) FinishAttempt(ctx context.Context, ref store.AttemptRef, token string, end store.AttemptEnd, wake bool) error {
	err := a.hook("FinishAttempt", ref)
	if err == nil {
		err = a.AttemptStore.FinishAttempt(ctx, ref, token, end, wake)
	}
	a.log.add(rigCall{op: "FinishAttempt", ref: ref, wake: wake, err: err})
	return err
}

func (a *workAttempts) FinishDeferredAttempt(ctx context.Context, ref store.AttemptRef, start store.AttemptStart, end store.AttemptEnd, wake bool) error {
	err := a.hook("FinishDeferredAttempt", ref)
	if err == nil {
		err = a.AttemptStore.FinishDeferredAttempt(ctx, ref, start, end, wake)
	}
	a.log.add(rigCall{op: "FinishDeferredAttempt", ref: ref, wake: wake, err: err})
	return err
}

func (a *workAttempts) RecordOutcome(ctx context.Context, ref store.AttemptRef, token string, outcome []byte) error {
	err := a.hook("RecordOutcome", ref)
	if err == nil {
		err = a.AttemptStore.RecordOutcome(ctx, ref, token, outcome)
	}
	a.log.add(rigCall{op: "RecordOutcome", ref: ref, err: err})
	return err
}

func (a *workAttempts) WakeEnd(ctx context.Context, ref store.AttemptRef) error {
	err := a.hook("WakeEnd", ref)
	if err == nil {
		err = a.AttemptStore.WakeEnd(ctx, ref)
	}
	a.log.add(rigCall{op: "WakeEnd", ref: ref, wake: true, err: err})
	return err
}

// workRuns logs inbox puts, keeps the outboxes of the commits that
// succeeded (memstore keeps none), and can fail commits.
type workRuns struct {
	RunStore
	log     *rigLog
	mu      sync.Mutex
	commit  func(c store.Commit) error
	outbox  []store.Message
	commits int
}

// sent returns the work-queue messages of kind the commits sent.
func (r *workRuns) sent(t testing.TB, kind WorkKind) []wireWork {
	r.mu.Lock()
	msgs := slices.Clone(r.outbox)
	r.mu.Unlock()
	var out []wireWork
	for _, m := range msgs {
		var w wireWork
		if m.Queue != store.QueueWork {
			continue
		}
		if err := jsonnum.Decode([]byte(m.Body), &w); err != nil {
			t.Fatalf("outbox message %q: %v", m.Body, err)
		}
		if w.Kind == kind {
			out = append(out, w)
		}
	}
	return out
}

func (r *workRuns) setCommit(f func(c store.Commit) error) {
	r.mu.Lock()
	r.commit = f
	r.mu.Unlock()
}

func (r *workRuns) CommitRun(ctx context.Context, c store.Commit) error {
	r.mu.Lock()
	f := r.commit
	r.mu.Unlock()
	if f != nil {
		if err := f(c); err != nil {
			return err
		}
	}
	err := r.RunStore.CommitRun(ctx, c)
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.outbox = append(r.outbox, c.Outbox...)
	r.commits++
	r.mu.Unlock()
	// The runs whose inbox the commit wrote to: the stream would wake them.
	if len(c.NewEvents) > 0 {
		r.log.add(rigCall{op: "CommitEvent", ref: store.AttemptRef{WorkflowID: c.WorkflowID, InstanceID: c.InstanceID, RunID: c.RunID}})
	}
	if w := c.WakeOther; w != nil {
		r.log.add(rigCall{op: "CommitEvent", ref: store.AttemptRef{WorkflowID: c.WorkflowID, InstanceID: w.InstanceID, RunID: w.RunID}})
	}
	for _, w := range c.Wakes {
		r.log.add(rigCall{op: "CommitEvent", ref: store.AttemptRef{WorkflowID: w.WorkflowID, InstanceID: w.InstanceID, RunID: w.RunID}})
	}
	return nil
}

func (r *workRuns) LoadQuietRun(ctx context.Context, wf string, inst, run int64) (*store.RunRecord, bool, error) {
	rec, quiet, err := r.RunStore.LoadQuietRun(ctx, wf, inst, run)
	r.log.add(rigCall{op: "LoadQuietRun", ref: store.AttemptRef{WorkflowID: wf, InstanceID: inst, RunID: run}, wake: quiet, err: err})
	return rec, quiet, err
}

func (r *workRuns) PutEvent(ctx context.Context, wf string, inst, run int64, ev store.Event) error {
	err := r.RunStore.PutEvent(ctx, wf, inst, run, ev)
	r.log.add(rigCall{op: "PutEvent", ref: store.AttemptRef{WorkflowID: wf, InstanceID: inst, RunID: run}, ev: ev, err: err})
	return err
}

// rigSchedules is a TriggerSchedules that keeps what it was asked.
type rigSchedules struct {
	mu   sync.Mutex
	sets map[string][]ScheduleSpec // by prefix
	fail error
}

func (s *rigSchedules) Sync(_ context.Context, prefix string, want []ScheduleSpec) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return s.fail
	}
	if s.sets == nil {
		s.sets = map[string][]ScheduleSpec{}
	}
	s.sets[prefix] = slices.Clone(want)
	return nil
}

func (s *rigSchedules) get(prefix string) ([]ScheduleSpec, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w, ok := s.sets[prefix]
	return w, ok
}

// roleRig is the orchestrator over a memstore, and what the test sees of it.
type roleRig struct {
	t        testing.TB
	ctx      context.Context
	clock    *workClock
	mem      *memstore.Store
	stores   Stores
	o        *Orchestrator
	disp     *rigDispatch
	log      *rigLog
	attempts *workAttempts
	runs     *workRuns
	sched    *rigSchedules
	uuids    atomic.Int64
}

// newRoleRig returns a rig; tune, if any, adjusts the config before New.
func newRoleRig(t testing.TB, tune ...func(*Config)) *roleRig {
	t.Helper()
	r := &roleRig{t: t, ctx: context.Background(), clock: &workClock{}, disp: &rigDispatch{}, log: &rigLog{}, sched: &rigSchedules{}}
	r.clock.ms.Store(rigEpoch.UnixMilli())
	r.mem = memstore.New(memstore.Options{Now: r.clock.Now})
	r.attempts = &workAttempts{AttemptStore: r.mem.Attempts, log: r.log}
	r.runs = &workRuns{RunStore: r.mem.Runs, log: r.log}
	r.stores = Stores{Definitions: r.mem.Definitions, Instances: r.mem.Instances, Runs: r.runs, Attempts: r.attempts,
		Signals: r.mem.Signals, Gates: r.mem.Gates, Tasks: r.mem.Tasks, Sweeps: r.mem.Sweeps, Teams: r.mem.Teams, Backfills: r.mem.Backfills}
	cfg := Config{
		Stores: &r.stores, Now: r.clock.Now, NewUUID: r.newUUID, Dispatcher: r.disp, Schedules: r.sched,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	for _, f := range tune {
		f(&cfg)
	}
	r.o = New(cfg)
	return r
}

// newUUID returns uuids in sequence: 00000000-0000-4000-8000-000000000001, ...
func (r *roleRig) newUUID() string {
	return fmt.Sprintf("00000000-0000-4000-8000-%012d", r.uuids.Add(1))
}

// push stores a definition, failing the test on an error.
func (r *roleRig) push(def string) *DefinitionView {
	r.t.Helper()
	v, err := r.o.Definitions.CreateWorkflow(r.ctx, []byte(def), FormatJSON)
	if err != nil {
		r.t.Fatalf("push: %v\n%s", err, def)
	}
	return v
}

// start starts an instance of wf's active version.
func (r *roleRig) start(wf string, req StartRequest) *StartResponse {
	r.t.Helper()
	resp, err := r.o.Runs.StartWorkflow(r.ctx, wf, "active", req)
	if err != nil {
		r.t.Fatalf("start %s: %v", wf, err)
	}
	return resp
}

// putUnwoken puts event ev, with id, in the inbox of wf's run 1/1 straight
// through the store: an event whose wake has not come (or was lost).
func (r *roleRig) putUnwoken(wf, id string, ev engine.Event) {
	r.t.Helper()
	if err := r.mem.Runs.PutEvent(r.ctx, wf, 1, 1, store.Event{ID: id, Body: mustJSON(ev)}); err != nil {
		r.t.Fatalf("put %s in %s's inbox: %v", id, wf, err)
	}
}

// work hands one work message to the worker.
func (r *roleRig) work(m wireWork, runners map[model.StepType]StepRunner) (time.Duration, error) {
	return r.o.Worker.HandleWork(r.ctx, mustJSON(m), runners)
}

// workWithin hands one work message to the worker under a deadline left
// away on the rig's clock (none when left is 0).
func (r *roleRig) workWithin(left time.Duration, m wireWork, runners map[model.StepType]StepRunner) (time.Duration, error) {
	if left == 0 {
		return r.work(m, runners)
	}
	ctx, cancel := context.WithDeadline(r.ctx, r.clock.Now().Add(left))
	defer cancel()
	return r.workCtx(ctx, m, runners)
}

// workCtx hands one work message to the worker under ctx.
func (r *roleRig) workCtx(ctx context.Context, m wireWork, runners map[model.StepType]StepRunner) (time.Duration, error) {
	return r.o.Worker.HandleWork(ctx, mustJSON(m), runners)
}

// state returns the decoded state of a run.
func (r *roleRig) state(wf string, inst, run int64) *engine.Instance {
	r.t.Helper()
	_, st, _ := rigLoad(r.t, r.ctx, r.mem.Runs, wf, inst, run)
	return st
}

// wantRun fails the test unless run 1 of instance inst of wf has the
// statuses want (as rigStatus writes them).
func (r *roleRig) wantRun(wf string, inst int64, want string) {
	r.t.Helper()
	if got := rigStatus(r.state(wf, inst, 1)); got != want {
		r.t.Errorf("%s/%d: %s, want %s", wf, inst, got, want)
	}
}

// step returns a step's state in a run.
func (r *roleRig) step(wf string, inst, run int64, step string) *engine.StepState {
	r.t.Helper()
	ss := r.state(wf, inst, run).Step(step)
	if ss == nil {
		r.t.Fatalf("%s/%d/%d has no step %s", wf, inst, run, step)
	}
	return ss
}

// inbox returns the ids of the events waiting in a run's inbox.
func (r *roleRig) inbox(wf string, inst, run int64) []string {
	r.t.Helper()
	_, evs, err := r.mem.Runs.LoadRun(r.ctx, wf, inst, run)
	if err != nil {
		r.t.Fatalf("load %s/%d/%d: %v", wf, inst, run, err)
	}
	ids := make([]string, len(evs))
	for i, e := range evs {
		ids[i] = e.ID
	}
	return ids
}

// stored returns an attempt's item, nil when it does not exist.
func (r *roleRig) stored(wf string, inst, run int64, step string, attempt int64) *store.Attempt {
	r.t.Helper()
	a, err := r.mem.Attempts.GetAttempt(r.ctx, wf, inst, run, step, attempt)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		r.t.Fatal(err)
	}
	return a
}

// decide runs the decider on a run, naming the attempts given as
// finished by their workers (what the router's wake carries).
func (r *roleRig) decide(wf string, inst, run int64, finished ...store.FinishedStep) *engine.Instance {
	r.t.Helper()
	st, err := r.o.Rounds.Process(r.ctx, store.Wake{WorkflowID: wf, InstanceID: inst, RunID: run, Finished: finished})
	if err != nil {
		r.t.Fatalf("decide %s/%d/%d: %v", wf, inst, run, err)
	}
	return st
}

// pump plays the stream router and the queues until nothing moves: it
// hands every dispatched run_step to the worker, then wakes the decider of
// every run an inbox event or a worker's end (with its wake) was written
// for, naming those ends. It returns the run_step messages it handed over.
func (r *roleRig) pump(runners map[model.StepType]StepRunner) []wireWork {
	r.t.Helper()
	var handed []wireWork
	_, seen := r.log.since(0)
	for round := 0; ; round++ {
		if round > 200 {
			r.t.Fatal("pump: the runs do not settle")
		}
		msgs := r.disp.take(r.t)
		for _, m := range msgs {
			if _, err := r.work(m, runners); err != nil {
				r.t.Fatalf("work %s %s/%d/%d %s#%d: %v", m.Kind, m.WorkflowID, m.InstanceID, m.RunID, m.StepID, m.Attempt, err)
			}
		}
		handed = append(handed, msgs...)
		type runKey struct {
			wf        string
			inst, run int64
		}
		wakes := map[runKey][]store.FinishedStep{}
		var order []runKey
		var calls []rigCall
		calls, seen = r.log.since(seen)
		for _, c := range calls {
			inbox := c.op == "PutEvent" || c.op == "CommitEvent"
			if c.err != nil || c.op == "ClaimAttempt" || c.op == "RecordOutcome" || c.op == "LoadQuietRun" || (!inbox && !c.wake) {
				continue
			}
			k := runKey{c.ref.WorkflowID, c.ref.InstanceID, c.ref.RunID}
			if _, ok := wakes[k]; !ok {
				order = append(order, k)
				wakes[k] = nil
			}
			if !inbox {
				wakes[k] = append(wakes[k], store.FinishedStep{StepID: c.ref.StepID, Attempt: c.ref.Attempt})
			}
		}
		direct := r.disp.wakes(r.t)
		if len(msgs) == 0 && len(order) == 0 && len(direct) == 0 {
			return handed
		}
		for _, k := range order {
			r.decide(k.wf, k.inst, k.run, wakes[k]...)
		}
		for _, w := range direct {
			r.decide(w.WorkflowID, w.InstanceID, w.RunID, w.Finished...)
		}
	}
}

// workRunner is a StepRunner double: run decides each attempt's outcome
// (nil: success), and every call is kept.
type workRunner struct {
	mu    sync.Mutex
	calls []StepWork
	run   func(m StepWork) (engine.StepFinished, error)
}

func (f *workRunner) RunStep(_ context.Context, m StepWork) (engine.StepFinished, error) {
	f.mu.Lock()
	f.calls = append(f.calls, m)
	run := f.run
	f.mu.Unlock()
	if run == nil {
		return engine.StepFinished{Outcome: engine.OutcomeSucceeded}, nil
	}
	return run(m)
}

// ran returns the step ids run, in order, as "step#attempt".
func (f *workRunner) ran() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]string, len(f.calls))
	for i, m := range f.calls {
		out[i] = fmt.Sprintf("%s#%d", m.StepID, m.Attempt)
	}
	return out
}

// rigRunners runs Titus steps with runner.
func rigRunners(runner StepRunner) map[model.StepType]StepRunner {
	return map[model.StepType]StepRunner{model.StepTitus: runner}
}

// workDef is a definition of workflow id with steps (each a JSON step
// wrapper) and properties props (default: owner unit, parallel runs).
func workDef(id, props string, steps ...string) string {
	if props == "" {
		props = `{"owner": "unit", "run_strategy": "parallel"}`
	}
	return fmt.Sprintf(`{"properties": %s, "workflow": {"id": %q, "steps": [%s]}}`, props, id, strings.Join(steps, ", "))
}

// workStep is a typed step with extra JSON fields (params, retry policy...)
// and successors next.
func workStep(id, typ, extra string, next ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `{"step": {"id": %q, "type": %q`, id, typ)
	if extra != "" {
		b.WriteString(", " + extra)
	}
	if len(next) > 0 {
		succ := make([]string, len(next))
		for i, n := range next {
			succ[i] = fmt.Sprintf("%q: \"true\"", n)
		}
		fmt.Fprintf(&b, `, "transition": {"successors": {%s}}`, strings.Join(succ, ", "))
	}
	b.WriteString("}}")
	return b.String()
}

// rigChain is a workflow of n Titus steps, t0 → t1 → ... .
func rigChain(id string, n int) string {
	steps := make([]string, n)
	for i := range n {
		var next []string
		if i < n-1 {
			next = []string{fmt.Sprintf("t%d", i+1)}
		}
		steps[i] = workStep(fmt.Sprintf("t%d", i), "Titus", "", next...)
	}
	return workDef(id, "", steps...)
}

// rigStatus is a run's status and its steps' statuses, "s=STATUS" sorted.
func rigStatus(st *engine.Instance) string {
	parts := make([]string, 0, len(st.Steps))
	for _, s := range st.Steps {
		parts = append(parts, fmt.Sprintf("%s=%s", s.StepID, s.Status))
	}
	slices.Sort(parts)
	return string(st.Status) + " " + strings.Join(parts, " ")
}

// rigErrStatus is the HTTP status of an *Error (0 for none, -1 for
// another error).
func rigErrStatus(err error) int {
	if err == nil {
		return 0
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Status
	}
	return -1
}

// rigJSON is v's JSON, for messages.
func rigJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// rigCallback is a CallbackRunner double: it hands every attempt over,
// keeping the tokens; refuse or err, when set, end the attempt at once.
// With jobs, each hand-over is an external job named
// "rig:<workflow>/<instance>/<step>/<attempt>".
type rigCallback struct {
	mu     sync.Mutex
	tokens []string
	jobs   bool
	refuse *engine.StepFinished
	err    error
}

func (c *rigCallback) RunStep(context.Context, StepWork) (engine.StepFinished, error) {
	return engine.StepFinished{}, errors.New("a handed-over step is not run")
}

func (c *rigCallback) Waits(StepWork) bool { return true }

func (c *rigCallback) Dispatch(_ context.Context, m StepWork, token string) (Handover, *engine.StepFinished, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tokens = append(c.tokens, token)
	switch {
	case c.err != nil:
		return Handover{}, nil, c.err
	case c.refuse != nil:
		res := *c.refuse
		return Handover{}, &res, nil
	}
	h := Handover{Target: "rig:" + m.StepID}
	if c.jobs {
		h.Job = rigJobName(m.WorkflowID, m.InstanceID, m.StepID, m.Attempt)
	}
	return h, nil, nil
}

// token returns the i-th token handed over.
func (c *rigCallback) token(t testing.TB, i int) string {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if i >= len(c.tokens) {
		t.Fatalf("%d tokens handed over, want more than %d", len(c.tokens), i)
	}
	return c.tokens[i]
}

func rigJobName(wf string, inst int64, step string, attempt int64) string {
	return fmt.Sprintf("rig:%s/%d/%s/%d", wf, inst, step, attempt)
}

// rigJobRunner is a JobRunner double: the job events it reads have source
// "rig.jobs" and a detail {"job", "status": SUCCEEDED or FAILED,
// "reason"}; it keeps the jobs it was asked to cancel.
type rigJobRunner struct {
	*rigCallback
	mu        sync.Mutex
	cancelled []string // "job: reason"
	readErr   error
}

func (j *rigJobRunner) JobEnded(_ context.Context, ev JobEvent) (string, TaskCompletion, bool, error) {
	if j.readErr != nil {
		return "", TaskCompletion{}, false, j.readErr
	}
	if ev.Source != "rig.jobs" {
		return "", TaskCompletion{}, false, nil
	}
	var d struct{ Job, Status, Reason string }
	if err := json.Unmarshal(ev.Detail, &d); err != nil {
		return "", TaskCompletion{}, false, err
	}
	c := TaskCompletion{Action: TaskSuccess, Outputs: map[string]any{"exit": int64(0)}}
	if d.Status != "SUCCEEDED" {
		c = TaskCompletion{Action: TaskFailure, Error: engine.OutcomeUserError, Message: d.Reason}
	}
	return d.Job, c, true, nil
}

func (j *rigJobRunner) CancelJob(_ context.Context, job, reason string) error {
	j.mu.Lock()
	j.cancelled = append(j.cancelled, job+": "+reason)
	j.mu.Unlock()
	return nil
}

// rigJobEvent is a job_event message of the rig's job runner.
func rigJobEvent(job, status string, at time.Time) wireWork {
	ev := JobEvent{Source: "rig.jobs", DetailType: "Rig Job State Change", Time: at,
		Detail: mustJSON(map[string]string{"job": job, "status": status, "reason": "exit 3"})}
	return wireWork{Kind: WorkJobEvent, JobEvent: mustJSON(ev)}
}
