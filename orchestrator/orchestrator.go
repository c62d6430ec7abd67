package orchestrator

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/maestro-serverless/maestro/definition"
	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/metrics"
	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/store"
)

// Config wires an Orchestrator's dependencies.
type Config struct {
	// Store is the DynamoDB store; Stores, when set, is used instead (an
	// in-memory store in unit tests).
	Store   *store.Store
	Stores  *Stores
	Checker *definition.Checker
	// Now is the clock (default time.Now). The engine receives it explicitly.
	Now func() time.Time
	// NewUUID returns instance uuids (default random v4).
	NewUUID func() string
	Logger  *slog.Logger
	// HealthInfo is what GET /health reports besides "ok".
	HealthInfo HealthView
	// MaxConflictRetries bounds reload-and-decide retries (default 25).
	MaxConflictRetries int
	// Schedules keeps time-trigger schedules (the worker's sync needs it).
	Schedules TriggerSchedules
	// ClaimLease is how long a worker's claim on a step attempt holds
	// (default DefaultClaimLease): a worker that dies has its step run
	// again once the lease ends. It must exceed the longest step run.
	ClaimLease time.Duration
	// Dispatcher, when set, sends the steps a commit starts right after
	// the commit (direct dispatch), ahead of the stream router, which then
	// forwards them only as a backstop (store.BackstopDelay later).
	Dispatcher Dispatcher
	// Metrics receives the EMF metrics (step launch delay, decision
	// latency, steps and runs finished); nil emits none.
	Metrics *metrics.Emitter
	// SweepGrace is how long past the time a run should have heard back
	// from its work the recovery sweeper waits before re-driving it
	// (default DefaultSweepGrace).
	SweepGrace time.Duration
	// StepRunReserve is how much time a worker's invocation must have left
	// for it to run a step it started itself (default
	// DefaultStepRunReserve); with less, the step goes through the work
	// queue to a fresh invocation.
	StepRunReserve time.Duration
	// Items reads the S3 objects foreach steps take their iterations from
	// (items_from); nil fails the decisions of such a step.
	Items engine.ItemsReader
	// Access are the authorization settings (AccessSettings).
	Access AccessSettings
	// ForeachEstimateOver is how many iterations a foreach step attempt
	// has past which its view carries an estimate of its duration and
	// cost (StepView.Estimate): 0 is DefaultForeachEstimateOver, a
	// negative number never.
	ForeachEstimateOver int64
}

// DefaultStepRunReserve is the default Config.StepRunReserve: an Http
// step's connect and request timeouts (10 s + 30 s) with room to spare.
const DefaultStepRunReserve = 45 * time.Second

// Dispatcher sends work-queue messages at once (direct dispatch).
type Dispatcher interface {
	Dispatch(ctx context.Context, msgs []store.Message) error
}

// DefaultSweepGrace is the default Config.SweepGrace: EventBridge
// Scheduler fires one-time schedules within a minute of their time.
const DefaultSweepGrace = time.Minute

// DefaultClaimLease is the default Config.ClaimLease: an Http step's
// request timeout (30 s) with room to spare.
const DefaultClaimLease = 90 * time.Second

// Orchestrator is the orchestrator's roles, each a type of its own by
// caller: the API's operations (Definitions, Runs, Actions, Gates,
// Signals), the decision rounds the decider runs (Rounds), the work the
// worker does (Worker) and the recovery sweeper (Sweeper). New wires them
// over one store.
type Orchestrator struct {
	// Definitions pushes, validates, reads, activates and deletes
	// workflow definitions.
	Definitions *Definitions
	// Runs starts instances and reads instances, runs and steps.
	Runs *Runs
	// Actions stops, kills, restarts and unblocks runs and steps, and
	// takes external reports (output data, task tokens).
	Actions *Actions
	// Gates keeps breakpoints, tag permits and job queues.
	Gates *Gates
	// Signals announces signals, reads them, and delivers them to waiting
	// steps and triggers.
	Signals *Signals
	// Rounds applies a run's inbox events, decides and commits.
	Rounds *Rounds
	// Worker handles the work queue: steps, timers, jobs, triggers.
	Worker *Worker
	// Sweeper re-drives what is pending too long.
	Sweeper *Sweeper
	// Access authorizes callers and keeps grants and teams.
	Access *Access
	// Backfills creates, reads and operates backfills.
	Backfills *Backfills
}

// core is what every role shares: the store, the checker, the clock and
// the compiled versions.
type core struct {
	store   Stores
	checker *definition.Checker
	eval    engine.Evaluator
	now     func() time.Time
	newUUID func() string
	log     *slog.Logger
	health  HealthView
	retries int
	// schedules keeps time-trigger schedules; nil where none is needed.
	schedules TriggerSchedules
	// claimLease is how long a claim on a step attempt holds.
	claimLease time.Duration
	// sweepGrace is how late a run may be before the sweeper re-drives it.
	sweepGrace time.Duration
	// stepRunReserve is the invocation time an inline step run needs.
	stepRunReserve time.Duration
	// dispatch sends work right after a commit; nil leaves it to the router.
	dispatch Dispatcher
	// metrics receives the EMF metrics (nil: none).
	metrics *metrics.Emitter
	// items reads items_from objects (nil: none).
	items engine.ItemsReader
	// estimateOver is Config.ForeachEstimateOver, defaulted.
	estimateOver int64

	graphs *graphCache // compiled immutable versions
}

// The roles, each with the roles it calls.
type (
	// Definitions is the API's workflow definition operations.
	Definitions struct {
		*core
		gates  *Gates  // a pushed version's step concurrency
		access *Access // who may push, whom a list shows
	}
	// Runs is the API's start and read operations.
	Runs struct {
		*core
		rounds *Rounds // a start decides the run's first round
	}
	// Actions is the API's run and step actions and external reports.
	Actions struct {
		*core
		rounds *Rounds
	}
	// Gates is the API's breakpoints, tag permits and job queues.
	Gates struct{ *core }
	// Signals announces and delivers signals.
	Signals struct {
		*core
		definitions *Definitions // the signal names a version subscribes to
		runs        *Runs        // triggers start runs
	}
	// Rounds runs decision rounds.
	Rounds struct{ *core }
	// Worker handles work messages.
	Worker struct {
		*core
		actions   *Actions // job ends report as task tokens do; subworkflow reruns
		rounds    *Rounds
		runs      *Runs // time triggers and subworkflows start runs
		signals   *Signals
		sweeper   *Sweeper
		backfills *Backfills
		access    *Access     // whom a subworkflow step may start
		ends      *endBoard   // the ends this process is about to write
		wakes     *wakeSender // nil without a dispatcher
	}
	// Backfills starts the firings of time triggers over a past interval.
	Backfills struct {
		*core
		runs *Runs // a backfill starts runs
	}
	// Sweeper re-drives what is pending too long.
	Sweeper struct {
		*core
		rounds  *Rounds
		signals *Signals // undelivered signals
	}
)

// New returns an Orchestrator.
func New(cfg Config) *Orchestrator {
	o := &core{
		checker:        cfg.Checker,
		now:            cfg.Now,
		newUUID:        cfg.NewUUID,
		log:            cfg.Logger,
		health:         cfg.HealthInfo,
		retries:        positiveOr(cfg.MaxConflictRetries, 25),
		schedules:      cfg.Schedules,
		claimLease:     positiveOr(cfg.ClaimLease, DefaultClaimLease),
		sweepGrace:     positiveOr(cfg.SweepGrace, DefaultSweepGrace),
		stepRunReserve: positiveOr(cfg.StepRunReserve, DefaultStepRunReserve),
		dispatch:       cfg.Dispatcher,
		metrics:        cfg.Metrics,
		items:          cfg.Items,
		estimateOver:   cfg.ForeachEstimateOver,
		graphs:         newGraphCache(graphCacheBytes),
	}
	switch {
	case cfg.Stores != nil:
		o.store = *cfg.Stores
	case cfg.Store != nil:
		o.store = StoresOf(cfg.Store)
	}
	if o.checker == nil {
		o.checker = definition.NewChecker()
	}
	if o.estimateOver == 0 {
		o.estimateOver = DefaultForeachEstimateOver
	}
	if o.now == nil {
		o.now = time.Now
	}
	if o.newUUID == nil {
		o.newUUID = func() string { return uuid.NewString() }
	}
	if o.log == nil {
		o.log = slog.Default()
	}
	o.eval = engine.NewEvaluator(o.checker.Language())
	rounds, gates := &Rounds{o}, &Gates{o}
	runs, actions := &Runs{o, rounds}, &Actions{o, rounds}
	acc := &Access{core: o, settings: cfg.Access}
	definitions := &Definitions{o, gates, acc}
	signals := &Signals{o, definitions, runs}
	sweeper := &Sweeper{o, rounds, signals}
	backfills := &Backfills{o, runs}
	return &Orchestrator{
		Definitions: definitions, Runs: runs, Actions: actions, Gates: gates, Signals: signals, Rounds: rounds,
		Worker: &Worker{core: o, actions: actions, rounds: rounds, runs: runs, signals: signals, sweeper: sweeper, backfills: backfills, access: acc,
			ends: newEndBoard(), wakes: wakeSenderOf(cfg.Dispatcher)},
		Sweeper:   sweeper,
		Access:    acc,
		Backfills: backfills,
	}
}

// Health reports readiness.
func (o *core) Health(ctx context.Context) (*HealthView, error) {
	h := o.health
	h.Status = "ok"
	return &h, nil
}

// graph returns the compiled graph of a stored version, loading and compiling
// it once while the cache of compiled versions keeps it (see graphCache).
func (o *core) graph(ctx context.Context, wf string, version int64) (*engine.Graph, *model.Definition, error) {
	k := graphKey{wf, version}
	if c, ok := o.graphs.get(k); ok {
		return c.graph, c.def, nil
	}
	rec, err := o.store.Definitions.GetVersion(ctx, wf, version)
	if err != nil {
		return nil, nil, fmt.Errorf("load %s version %d: %w", wf, version, err)
	}
	g, def, err := o.compile(rec.Definition, wf, version)
	if err != nil {
		return nil, nil, err
	}
	o.graphs.put(k, compiled{graph: g, def: def, bytes: g.Bytes() + definitionBytesPerJSONByte*int64(len(rec.Definition))})
	return g, def, nil
}

// compile parses and compiles the definition JSON of version version of
// workflow wf (stored, or about to be: an inline definition).
func (o *core) compile(data []byte, wf string, version int64) (*engine.Graph, *model.Definition, error) {
	def, err := model.ParseDefinition(data)
	if err != nil {
		return nil, nil, fmt.Errorf("decode stored %s version %d: %w", wf, version, err)
	}
	g, err := engine.Compile(def.Workflow, o.eval)
	if err != nil {
		return nil, nil, fmt.Errorf("compile %s version %d: %w", wf, version, err)
	}
	return g, def, nil
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("orchestrator: marshal %T: %v", v, err))
	}
	return b
}

// positiveOr is a setting's value v when it is positive, else def (the
// setting was left unset).
func positiveOr[T int | time.Duration](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}
