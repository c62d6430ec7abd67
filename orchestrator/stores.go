package orchestrator

import (
	"context"
	"encoding/json"
	"time"

	"github.com/maestro-serverless/maestro/signals"
	"github.com/maestro-serverless/maestro/store"
)

// What the orchestrator needs of the store, an interface per aggregate,
// holding only the operations the roles call: store.Store's aggregates
// implement them over DynamoDB, and store/memstore in memory for the
// orchestrator's unit tests (the contract suite in store/storetest holds
// both to the same behaviour).

// Stores is the store the roles use, an aggregate a field.
type Stores struct {
	Definitions DefinitionStore
	Instances   InstanceStore
	Runs        RunStore
	Attempts    AttemptStore
	Signals     SignalStore
	Gates       GateStore
	Tasks       TaskStore
	Sweeps      SweepStore
	// Templates holds job templates; nil leaves steps untemplated.
	Templates TemplateStore
	// Teams holds the teams authorization names.
	Teams TeamStore
	// Backfills holds workflows' backfills; nil refuses backfills.
	Backfills BackfillStore
}

// BackfillStore reads and writes backfills (store.Backfills).
type BackfillStore interface {
	CreateBackfill(ctx context.Context, b store.Backfill, outbox []store.Message) error
	GetBackfill(ctx context.Context, wf, id string) (*store.Backfill, error)
	ListBackfills(ctx context.Context, wf string) ([]*store.Backfill, error)
	PutBackfill(ctx context.Context, b store.Backfill) error
}

// StoresOf returns the aggregates of st.
func StoresOf(st *store.Store) Stores {
	return Stores{Definitions: st.Definitions, Instances: st.Instances, Runs: st.Runs, Attempts: st.Attempts,
		Signals: st.Signals, Gates: st.Gates, Tasks: st.Tasks, Sweeps: st.Sweeps, Templates: st.Templates, Teams: st.Teams, Backfills: st.Backfills}
}

// AttemptStore reads and writes step attempt items: claims, recorded outcomes, ends (store.Attempts).
type AttemptStore interface {
	ClaimAttempt(ctx context.Context, ref store.AttemptRef, token string, now, until time.Time, start *store.AttemptStart) (outcome []byte, err error)
	FinishAttempt(ctx context.Context, ref store.AttemptRef, token string, end store.AttemptEnd, wake bool) error
	FinishDeferredAttempt(ctx context.Context, ref store.AttemptRef, start store.AttemptStart, end store.AttemptEnd, wake bool) error
	FinishedAttempts(ctx context.Context, refs []store.AttemptRef) ([]store.FinishedAttempt, error)
	GetAttempt(ctx context.Context, wf string, inst, run int64, step string, attempt int64) (*store.Attempt, error)
	GetAttempts(ctx context.Context, refs []store.AttemptRef) (map[store.AttemptRef]*store.Attempt, error)
	ListAttempts(ctx context.Context, wf string, inst, run int64) ([]store.Attempt, error)
	PeekAttempt(ctx context.Context, ref store.AttemptRef) (store.AttemptPeek, error)
	RecordOutcome(ctx context.Context, ref store.AttemptRef, token string, outcome []byte) error
	StartedAttempts(ctx context.Context, refs []store.AttemptRef) (map[store.AttemptRef]bool, error)
	WakeEnd(ctx context.Context, ref store.AttemptRef) error
}

// DefinitionStore reads and writes workflow heads and versions (store.Definitions).
type DefinitionStore interface {
	CreateVersion(ctx context.Context, nv store.NewVersion) (int64, error)
	DeleteWorkflow(ctx context.Context, wf string, next store.Message, now time.Time, extra ...store.Message) error
	GetHead(ctx context.Context, workflowID string) (*store.WorkflowHead, error)
	GetVersion(ctx context.Context, workflowID string, version int64) (*store.VersionRecord, error)
	GetVersions(ctx context.Context, workflowID string, versions []int64) (map[int64]*store.VersionRecord, error)
	GetVersionStamps(ctx context.Context, workflowID string, versions []int64) (map[int64]*store.VersionRecord, error)
	ListWorkflows(ctx context.Context, cursor string, limit int) ([]*store.WorkflowHead, string, error)
	ListWorkflowsBefore(ctx context.Context, cursor string, limit int) ([]*store.WorkflowHead, string, error)
	PutAccess(ctx context.Context, workflowID string, grant []byte, now time.Time, extra ...store.Message) error
	PurgeWorkflow(ctx context.Context, wf string, budget int) (done bool, deleted int, err error)
	RearmPurge(ctx context.Context, wf string, round int64, next store.Message) error
	SetActive(ctx context.Context, workflowID string, version int64, now time.Time, subs store.SubscriptionsFunc, extra ...store.Message) error
	UpdateProperties(ctx context.Context, head *store.WorkflowHead, props []byte, now time.Time, subs store.SubscriptionsFunc, extra ...store.Message) error
}

// GateStore reads and writes breakpoints, tag permits and job queues (store.Gates).
type GateStore interface {
	DeleteBreakpoints(ctx context.Context, wf, step string) ([]store.Breakpoint, error)
	DeleteJobQueue(ctx context.Context, name string) (*store.TagPermit, error)
	DeleteTagPermit(ctx context.Context, tag string) (*store.TagPermit, error)
	GetJobQueue(ctx context.Context, name string) (*store.TagPermit, error)
	GetJobQueues(ctx context.Context) (map[string]*store.TagPermit, error)
	GetTagPermit(ctx context.Context, tag string) (*store.TagPermit, error)
	GetTagPermits(ctx context.Context, tags []string) (map[string]*store.TagPermit, error)
	ListBreakpoints(ctx context.Context, wf, step string, consistent bool) ([]store.Breakpoint, error)
	PutBreakpoint(ctx context.Context, wf string, b store.Breakpoint) error
	PutJobQueue(ctx context.Context, name string, c store.QueueCapacity, now int64) (*store.TagPermit, error)
	PutTagPermit(ctx context.Context, tag string, maxAllowed, now int64) (*store.TagPermit, error)
	PutTagPermitInfo(ctx context.Context, tag string, maxAllowed, now int64, extraInfo []byte) (*store.TagPermit, error)
}

// InstanceStore reads and writes instance ids, start request ids and the run-strategy queue (store.Instances).
type InstanceStore interface {
	ActiveRuns(ctx context.Context, wf string, except int64) (holding, queued []store.RunRef, err error)
	CreateInstance(ctx context.Context, ni store.NewInstance) (rec *store.InstanceRecord, created bool, err error)
	Enqueue(ctx context.Context, wf string, inst, run int64) error
	GetInstance(ctx context.Context, wf string, inst int64) (*store.InstanceRecord, error)
	GetInstances(ctx context.Context, wf string, insts []int64) (map[int64]*store.InstanceRecord, error)
	InstanceForRequest(ctx context.Context, wf, requestID string) (*store.InstanceRecord, error)
	ListInstances(ctx context.Context, wf, status, cursor string, limit int) ([]*store.InstanceRecord, string, error)
	OldestQueued(ctx context.Context, wf string, except int64) (inst, run int64, ok bool, err error)
	QueueVersion(ctx context.Context, wf string) (int64, error)
	ReleaseSlot(ctx context.Context, wf string, inst, run int64, wake *store.RunEvent) error
	ReserveInstance(ctx context.Context, wf, requestID string) (id int64, prior *store.InstanceRecord, err error)
	ReserveInstances(ctx context.Context, wf string, requestIDs []string) (ids []int64, prior []*store.InstanceRecord, err error)
}

// RunStore reads and writes run items, their inbox events and commits (store.Runs).
type RunStore interface {
	CommitItems(ctx context.Context, c store.Commit) (int, error)
	CommitRun(ctx context.Context, c store.Commit) error
	CreateRun(ctx context.Context, nr store.NewRun) error
	DiscardEvents(ctx context.Context, wf string, inst, run int64, ids []string) error
	GetLoopParams(ctx context.Context, wf string, inst, run int64, step string, attempt int64) ([]byte, error)
	GetRuns(ctx context.Context, keys []store.RunKey) (map[store.RunKey]*store.RunRecord, error)
	ListTimeline(ctx context.Context, wf string, inst, run int64) ([]store.TimelineItem, error)
	LoadQuietRun(ctx context.Context, wf string, inst, run int64) (rec *store.RunRecord, quiet bool, err error)
	LoadRun(ctx context.Context, wf string, inst, run int64) (*store.RunRecord, []store.Event, error)
	PutEvent(ctx context.Context, wf string, inst, run int64, ev store.Event) error
}

// SignalStore reads and writes signal instances, subscriptions and lineage (store.Signals).
type SignalStore interface {
	AnnounceSignal(ctx context.Context, ns store.NewSignal) (*store.SignalRecord, bool, error)
	FindSignal(ctx context.Context, name string, conds []signals.Condition) (signals.Signal, bool, error)
	GetSignal(ctx context.Context, name string, seq int64) (*store.SignalRecord, error)
	Lineage(ctx context.Context, name string, seq int64) ([]json.RawMessage, error)
	PutLineage(ctx context.Context, l store.LineageLink) error
	SignalDelivered(ctx context.Context, name string, seq int64) error
	Subscribers(ctx context.Context, name string) (subs []store.Subscription, waiters []string, err error)
	SyncSubscriptions(ctx context.Context, wf string, subs store.SubscriptionsFunc) error
}

// SweepStore reads and writes the recovery sweeper's index (store.Sweeps).
type SweepStore interface {
	DueItems(ctx context.Context, shard int, now time.Time, limit int) ([]store.Due, error)
	Redrive(ctx context.Context, d store.Due, ev store.Event) error
	UnsweepEvents(ctx context.Context, wf string, inst, run int64) error
}

// TaskStore reads and writes task tokens and external jobs (store.Tasks).
type TaskStore interface {
	GetJob(ctx context.Context, job string) (hash string, err error)
	GetTaskToken(ctx context.Context, hash string) (*store.TaskToken, error)
	PutTaskToken(ctx context.Context, hash string, ref store.AttemptRef) error
	UseTaskToken(ctx context.Context, hash, result string, ref store.AttemptRef, ev store.Event) error
	WaitForTask(ctx context.Context, ref store.AttemptRef, claim, hash, job string, ev store.Event) error
}

// TeamStore reads and writes teams (store.Teams).
type TeamStore interface {
	DeleteTeam(ctx context.Context, name string, now time.Time) error
	GetTeam(ctx context.Context, name string) (*store.Team, error)
	ListTeams(ctx context.Context) ([]store.Team, error)
	PutTeam(ctx context.Context, t store.Team, now time.Time) (created bool, err error)
}

// TemplateStore reads and writes job templates (store.Templates).
type TemplateStore interface {
	PutJobTemplate(ctx context.Context, t store.JobTemplate) error
	GetJobTemplate(ctx context.Context, jobType, version string) (*store.JobTemplate, error)
	ListJobTemplates(ctx context.Context, version string) ([]store.JobTemplate, error)
	DeleteJobTemplate(ctx context.Context, jobType, version string) (int, error)
}
