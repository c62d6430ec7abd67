package orchestrator

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/jsonnum"
	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/signals"
	"github.com/maestro-serverless/maestro/store"
	"github.com/maestro-serverless/maestro/store/memstore"
)

// The rig the tests of the decision rounds, the sweeper, run strategies,
// born iterations and loops share: the orchestrator's roles over the
// in-memory store, a clock the test moves, deterministic uuids, and
// wrappers around the store aggregates that record what the roles write
// and fail on demand. Nothing is sent anywhere: a test drives the rounds
// itself (Process, HandleWake, HandleWork, Sweep), as the router would.

// rigRuns wraps the run store: it records the commits that succeeded and
// the events put, and fails calls on demand.
type rigRuns struct {
	RunStore
	mu sync.Mutex
	// commits are the commits the store took, in order; tried counts every
	// CommitRun call.
	commits []store.Commit
	tried   int
	// failCommit, when set, is asked before each CommitRun (n counts the
	// calls from 1): an error it returns is the call's, and nothing is
	// written.
	failCommit func(n int, c store.Commit) error
	// items, when set, is the count of a commit's items as the test
	// pretends the store counts it (n: the store's own count), or the
	// error it pretends planning meets: CommitItems returns it, and
	// CommitRun refuses, writing nothing, a commit it counts past
	// store.MaxTransactItems or fails. counted counts CommitItems calls.
	items   func(c store.Commit, n int) (int, error)
	counted int
	// failLoad, when set, fails LoadRun with what it returns.
	failLoad func(wf string, inst, run int64) error
	// failPut, when set, fails PutEvent with what it returns.
	failPut func(wf string, inst, run int64, ev store.Event) error
	// failGetRuns fails GetRuns.
	failGetRuns error
	puts        []rigPut
}

// rigPut is an event put into a run's inbox outside a commit.
type rigPut struct {
	wf        string
	inst, run int64
	ev        store.Event
}

// CommitItems is the store's count, or the test's (items).
func (r *rigRuns) CommitItems(ctx context.Context, c store.Commit) (int, error) {
	r.mu.Lock()
	r.counted++
	r.mu.Unlock()
	return r.count(ctx, c)
}

func (r *rigRuns) count(ctx context.Context, c store.Commit) (int, error) {
	n, err := r.RunStore.CommitItems(ctx, c)
	if err != nil || r.items == nil {
		return n, err
	}
	return r.items(c, n)
}

func (r *rigRuns) CommitRun(ctx context.Context, c store.Commit) error {
	r.mu.Lock()
	r.tried++
	n, fail := r.tried, r.failCommit
	r.mu.Unlock()
	if fail != nil {
		if err := fail(n, c); err != nil {
			return err
		}
	}
	if r.items != nil {
		n, err := r.count(ctx, c)
		if err == nil && n > store.MaxTransactItems {
			err = &store.TooManyItemsError{Items: n}
		}
		if err != nil {
			return err
		}
	}
	if err := r.RunStore.CommitRun(ctx, c); err != nil {
		return err
	}
	r.mu.Lock()
	r.commits = append(r.commits, c)
	r.mu.Unlock()
	return nil
}

func (r *rigRuns) LoadRun(ctx context.Context, wf string, inst, run int64) (*store.RunRecord, []store.Event, error) {
	r.mu.Lock()
	fail := r.failLoad
	r.mu.Unlock()
	if fail != nil {
		if err := fail(wf, inst, run); err != nil {
			return nil, nil, err
		}
	}
	return r.RunStore.LoadRun(ctx, wf, inst, run)
}

func (r *rigRuns) GetRuns(ctx context.Context, keys []store.RunKey) (map[store.RunKey]*store.RunRecord, error) {
	r.mu.Lock()
	err := r.failGetRuns
	r.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return r.RunStore.GetRuns(ctx, keys)
}

func (r *rigRuns) PutEvent(ctx context.Context, wf string, inst, run int64, ev store.Event) error {
	r.mu.Lock()
	fail := r.failPut
	r.mu.Unlock()
	if fail != nil {
		if err := fail(wf, inst, run, ev); err != nil {
			return err
		}
	}
	if err := r.RunStore.PutEvent(ctx, wf, inst, run, ev); err != nil {
		return err
	}
	r.mu.Lock()
	r.puts = append(r.puts, rigPut{wf, inst, run, ev})
	r.mu.Unlock()
	return nil
}

// committed returns the commits the store took so far.
func (r *rigRuns) committed() []store.Commit {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.commits)
}

// calls returns how many CommitRun calls were made.
func (r *rigRuns) calls() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.tried
}

// put returns the events put outside commits so far.
func (r *rigRuns) put() []rigPut {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.puts)
}

// rigAttempts wraps the attempt store, failing reads on demand.
type rigAttempts struct {
	AttemptStore
	mu sync.Mutex
	// failGet fails GetAttempt; failFinished fails FinishedAttempts.
	failGet      error
	failFinished error
	records      int
}

func (a *rigAttempts) GetAttempt(ctx context.Context, wf string, inst, run int64, step string, attempt int64) (*store.Attempt, error) {
	a.mu.Lock()
	err := a.failGet
	a.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return a.AttemptStore.GetAttempt(ctx, wf, inst, run, step, attempt)
}

func (a *rigAttempts) FinishedAttempts(ctx context.Context, refs []store.AttemptRef) ([]store.FinishedAttempt, error) {
	a.mu.Lock()
	err := a.failFinished
	a.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return a.AttemptStore.FinishedAttempts(ctx, refs)
}

func (a *rigAttempts) RecordOutcome(ctx context.Context, ref store.AttemptRef, token string, outcome []byte) error {
	a.mu.Lock()
	a.records++
	a.mu.Unlock()
	return a.AttemptStore.RecordOutcome(ctx, ref, token, outcome)
}

// rigSignals wraps the signal store, failing FindSignal and
// SignalDelivered on demand.
type rigSignals struct {
	SignalStore
	mu          sync.Mutex
	failFind    error
	failDeliver error
}

func (s *rigSignals) FindSignal(ctx context.Context, name string, conds []signals.Condition) (signals.Signal, bool, error) {
	s.mu.Lock()
	err := s.failFind
	s.mu.Unlock()
	if err != nil {
		return signals.Signal{}, false, err
	}
	return s.SignalStore.FindSignal(ctx, name, conds)
}

func (s *rigSignals) SignalDelivered(ctx context.Context, name string, seq int64) error {
	s.mu.Lock()
	err := s.failDeliver
	s.mu.Unlock()
	if err != nil {
		return err
	}
	return s.SignalStore.SignalDelivered(ctx, name, seq)
}

// rigInstances wraps the instance store: it counts enqueues, and the
// reads a commit's plan makes (reads: GetInstance, QueueVersion,
// OldestQueued).
type rigInstances struct {
	InstanceStore
	mu       sync.Mutex
	enqueued []store.RunKey
	reads    int
}

func (s *rigInstances) read() {
	s.mu.Lock()
	s.reads++
	s.mu.Unlock()
}

func (s *rigInstances) GetInstance(ctx context.Context, wf string, inst int64) (*store.InstanceRecord, error) {
	s.read()
	return s.InstanceStore.GetInstance(ctx, wf, inst)
}

func (s *rigInstances) QueueVersion(ctx context.Context, wf string) (int64, error) {
	s.read()
	return s.InstanceStore.QueueVersion(ctx, wf)
}

func (s *rigInstances) OldestQueued(ctx context.Context, wf string, except int64) (int64, int64, bool, error) {
	s.read()
	return s.InstanceStore.OldestQueued(ctx, wf, except)
}

func (s *rigInstances) Enqueue(ctx context.Context, wf string, inst, run int64) error {
	s.mu.Lock()
	s.enqueued = append(s.enqueued, store.RunKey{WorkflowID: wf, InstanceID: inst, RunID: run})
	s.mu.Unlock()
	return s.InstanceStore.Enqueue(ctx, wf, inst, run)
}

// rigSweeps wraps the sweep index, failing or preceding a Redrive on
// demand.
type rigSweeps struct {
	SweepStore
	mu sync.Mutex
	// beforeRedrive, when set, runs before each Redrive; an error it
	// returns is the Redrive's.
	beforeRedrive func(d store.Due) error
	redrives      []store.Due
	unswept       []store.RunKey
	// failDue, when set, fails DueItems.
	failDue error
}

func (s *rigSweeps) DueItems(ctx context.Context, shard int, now time.Time, limit int) ([]store.Due, error) {
	s.mu.Lock()
	err := s.failDue
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return s.SweepStore.DueItems(ctx, shard, now, limit)
}

// redriven returns the runs Redrive was asked about so far.
func (s *rigSweeps) redriven() []store.Due {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.redrives)
}

func (s *rigSweeps) Redrive(ctx context.Context, d store.Due, ev store.Event) error {
	s.mu.Lock()
	before := s.beforeRedrive
	s.redrives = append(s.redrives, d)
	s.mu.Unlock()
	if before != nil {
		if err := before(d); err != nil {
			return err
		}
	}
	return s.SweepStore.Redrive(ctx, d, ev)
}

func (s *rigSweeps) UnsweepEvents(ctx context.Context, wf string, inst, run int64) error {
	s.mu.Lock()
	s.unswept = append(s.unswept, store.RunKey{WorkflowID: wf, InstanceID: inst, RunID: run})
	s.mu.Unlock()
	return s.SweepStore.UnsweepEvents(ctx, wf, inst, run)
}

// rigDispatch records direct dispatches (and fails them on demand).
type rigDispatch struct {
	mu   sync.Mutex
	sent []store.Message
	fail error
}

func (d *rigDispatch) Dispatch(_ context.Context, msgs []store.Message) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.fail != nil {
		return d.fail
	}
	d.sent = append(d.sent, msgs...)
	return nil
}

func (d *rigDispatch) messages() []store.Message {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.sent)
}

// roundRig is the orchestrator over a memstore with recording wrappers.
type roundRig struct {
	t      testing.TB
	ctx    context.Context
	clock  *workClock
	ms     *memstore.Store
	runs   *rigRuns
	atts   *rigAttempts
	sigs   *rigSignals
	insts  *rigInstances
	sweeps *rigSweeps
	disp   *rigDispatch
	o      *Orchestrator
	mu     sync.Mutex
	uuids  int
	// taken counts the commits whose work messages work() returned.
	taken int
}

// rigStart is the rig's clock at its start (2030-03-17, a whole second).
var rigStart = time.UnixMilli(1_900_000_000_000)

// newRoundRig returns a rig; tune adjusts the orchestrator's config.
func newRoundRig(t testing.TB, tune ...func(*Config)) *roundRig {
	t.Helper()
	r := &roundRig{t: t, ctx: context.Background(), clock: clockAt(rigStart), disp: &rigDispatch{}}
	r.ms = memstore.New(memstore.Options{Now: r.clock.Now})
	r.runs = &rigRuns{RunStore: r.ms.Runs}
	r.atts = &rigAttempts{AttemptStore: r.ms.Attempts}
	r.sigs = &rigSignals{SignalStore: r.ms.Signals}
	r.insts = &rigInstances{InstanceStore: r.ms.Instances}
	r.sweeps = &rigSweeps{SweepStore: r.ms.Sweeps}
	st := Stores{Definitions: r.ms.Definitions, Instances: r.insts, Runs: r.runs, Attempts: r.atts,
		Signals: r.sigs, Gates: r.ms.Gates, Tasks: r.ms.Tasks, Sweeps: r.sweeps, Teams: r.ms.Teams, Backfills: r.ms.Backfills}
	cfg := Config{
		Stores: &st, Now: r.clock.Now, MaxConflictRetries: 4,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		NewUUID: func() string {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.uuids++
			return fmt.Sprintf("uuid-%04d", r.uuids)
		},
	}
	for _, f := range tune {
		f(&cfg)
	}
	r.o = New(cfg)
	return r
}

// withDispatcher has the rig's orchestrator dispatch directly.
func withDispatcher(r *rigDispatch) func(*Config) {
	return func(c *Config) { c.Dispatcher = r }
}

// push stores a definition and returns its workflow id.
func (r *roundRig) push(def string) string {
	r.t.Helper()
	v, err := r.o.Definitions.CreateWorkflow(r.ctx, []byte(def), FormatJSON)
	if err != nil {
		r.t.Fatalf("push: %v", err)
	}
	return v.Metadata.WorkflowID
}

// start starts an instance of wf's active version.
func (r *roundRig) start(wf string) *StartResponse {
	r.t.Helper()
	resp, err := r.o.Runs.StartWorkflow(r.ctx, wf, "active", StartRequest{})
	if err != nil {
		r.t.Fatalf("start %s: %v", wf, err)
	}
	return resp
}

// wake names run (wf, inst, run).
func rigWake(wf string, inst, run int64) store.Wake {
	return store.Wake{WorkflowID: wf, InstanceID: inst, RunID: run}
}

// rigLoad returns a run's stored record, decoded state and pending
// events from runs, failing t when it cannot.
func rigLoad(t testing.TB, ctx context.Context, runs RunStore, wf string, inst, run int64) (*store.RunRecord, *engine.Instance, []store.Event) {
	t.Helper()
	rec, pending, err := runs.LoadRun(ctx, wf, inst, run)
	if err != nil {
		t.Fatalf("load %s/%d/%d: %v", wf, inst, run, err)
	}
	st, err := decodeState(rec)
	if err != nil {
		t.Fatal(err)
	}
	return rec, st, pending
}

// load returns a run's stored record, decoded state and pending events.
func (r *roundRig) load(wf string, inst, run int64) (*store.RunRecord, *engine.Instance, []store.Event) {
	r.t.Helper()
	return rigLoad(r.t, r.ctx, r.ms.Runs, wf, inst, run)
}

// state returns a run's decoded state.
func (r *roundRig) state(wf string, inst, run int64) *engine.Instance {
	r.t.Helper()
	_, st, _ := r.load(wf, inst, run)
	return st
}

// pending returns the ids of a run's pending inbox events, in order.
func (r *roundRig) pending(wf string, inst, run int64) []string {
	r.t.Helper()
	_, _, evs := r.load(wf, inst, run)
	ids := make([]string, len(evs))
	for i, e := range evs {
		ids[i] = e.ID
	}
	return ids
}

// putEvent puts ev into a run's inbox under id, as its writer would.
func (r *roundRig) putEvent(wf string, inst, run int64, id string, ev any) {
	r.t.Helper()
	body, ok := ev.([]byte)
	if !ok {
		body = mustJSON(ev)
	}
	if err := r.ms.Runs.PutEvent(r.ctx, wf, inst, run, store.Event{ID: id, Body: body}); err != nil {
		r.t.Fatalf("put event %s: %v", id, err)
	}
}

// process runs Process on a run.
func (r *roundRig) process(wf string, inst, run int64) (*engine.Instance, error) {
	return r.o.Rounds.Process(r.ctx, rigWake(wf, inst, run))
}

// mustProcess runs Process on a run and fails the test on an error.
func (r *roundRig) mustProcess(wf string, inst, run int64) *engine.Instance {
	r.t.Helper()
	st, err := r.process(wf, inst, run)
	if err != nil {
		r.t.Fatalf("process %s/%d/%d: %v", wf, inst, run, err)
	}
	return st
}

// finish puts the outcome of a step attempt into its run's inbox, as a
// worker that found the run contended does, and decides the run.
func (r *roundRig) finish(wf string, inst, run int64, step string, attempt int64, outcome engine.Outcome) *engine.Instance {
	r.t.Helper()
	r.putEvent(wf, inst, run, outcomeEventID(step, attempt), engine.StepFinished{StepID: step, Attempt: attempt, Outcome: outcome})
	return r.mustProcess(wf, inst, run)
}

// work returns the run_step messages of the commits since the last call,
// in commit order.
func (r *roundRig) work() []wireWork {
	r.t.Helper()
	cs := r.runs.committed()
	var out []wireWork
	for _, c := range cs[r.taken:] {
		out = append(out, rigWorkOf(r.t, c.Outbox, WorkRunStep)...)
	}
	r.taken = len(cs)
	return out
}

// rigWorkOf returns the work messages of kind among msgs.
func rigWorkOf(t testing.TB, msgs []store.Message, kind WorkKind) []wireWork {
	t.Helper()
	var out []wireWork
	for _, m := range msgs {
		if m.Queue != store.QueueWork {
			continue
		}
		var w wireWork
		if err := jsonnum.Decode([]byte(m.Body), &w); err != nil {
			t.Fatalf("work message %s: %v", m.Body, err)
		}
		if w.Kind == kind {
			out = append(out, w)
		}
	}
	return out
}

// lastCommit returns the last commit the store took for a run.
func (r *roundRig) lastCommit(wf string, inst, run int64) store.Commit {
	r.t.Helper()
	cs := r.runs.committed()
	for i := len(cs) - 1; i >= 0; i-- {
		if c := cs[i]; c.WorkflowID == wf && c.InstanceID == inst && c.RunID == run {
			return c
		}
	}
	r.t.Fatalf("no commit of %s/%d/%d", wf, inst, run)
	return store.Commit{}
}

// stepStatus returns the status of a step in st ("" when it has none).
func stepStatus(st *engine.Instance, step string) model.StepStatus {
	if ss := st.Step(step); ss != nil {
		return ss.Status
	}
	return ""
}

// statuses returns the run's step statuses as "id=STATUS" in step order.
func statuses(st *engine.Instance) string {
	var out []string
	for _, s := range st.Steps {
		out = append(out, fmt.Sprintf("%s=%s", s.StepID, s.Status))
	}
	return strings.Join(out, " ")
}

// instanceStatus returns an instance summary's status.
func (r *roundRig) instanceStatus(wf string, inst int64) string {
	r.t.Helper()
	rec, err := r.ms.Instances.GetInstance(r.ctx, wf, inst)
	if err != nil {
		r.t.Fatalf("instance %s/%d: %v", wf, inst, err)
	}
	return rec.Status
}

// rigDef is a workflow definition: id, run strategy (JSON, "" for the
// default) and steps (JSON objects, joined).
func rigDef(id, strategy string, steps ...string) string {
	props := `"owner":"unit"`
	if strategy != "" {
		props += `,"run_strategy":` + strategy
	}
	return fmt.Sprintf(`{"properties":{%s},"workflow":{"id":%q,"steps":[%s]}}`, props, id, strings.Join(steps, ","))
}

// rigStep is a typed step; next names its successors.
func rigStep(id, typ string, next ...string) string {
	return fmt.Sprintf(`{"step":{"id":%q,"type":%q%s}}`, id, typ, rigNext(next))
}

// rigSleep is a Sleep step of secs seconds.
func rigSleep(id string, secs int, next ...string) string {
	return fmt.Sprintf(`{"step":{"id":%q,"type":"Sleep","params":{"sleep_seconds":{"value":%d,"type":"LONG"}}%s}}`, id, secs, rigNext(next))
}

// rigThen adds a transition to next to a step built by the helpers above.
func rigThen(step string, next ...string) string {
	return strings.TrimSuffix(step, "}}") + rigNext(next) + "}}"
}

// rigNext is a step's transition to next.
func rigNext(next []string) string {
	if len(next) == 0 {
		return ""
	}
	succ := make([]string, len(next))
	for i, n := range next {
		succ[i] = fmt.Sprintf("%q:\"true\"", n)
	}
	return fmt.Sprintf(`,"transition":{"successors":{%s}}`, strings.Join(succ, ","))
}

// rigForeach is a foreach step over n values of loop param i, running
// body (steps) at most concurrency at once.
func rigForeach(id string, n, concurrency int, body ...string) string {
	vals := make([]string, n)
	for i := range vals {
		vals[i] = fmt.Sprint(i + 1)
	}
	return fmt.Sprintf(`{"foreach":{"id":%q,"concurrency":%d,
	  "params":{"loop_params":{"type":"MAP","value":{"i":{"type":"LONG_ARRAY","value":[%s]}}}},
	  "steps":[%s]}}`, id, concurrency, strings.Join(vals, ","), strings.Join(body, ","))
}

// decodeEvent decodes an inbox event's body.
func decodeEvent(t testing.TB, body []byte) engine.Event {
	t.Helper()
	ev, err := engine.UnmarshalEvent(body)
	if err != nil {
		t.Fatalf("event %s: %v", body, err)
	}
	return ev
}

// rawJSON is a JSON document for comparisons in failure messages.
func rawJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
