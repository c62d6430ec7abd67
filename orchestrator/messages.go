package orchestrator

import (
	"encoding/json"
	"time"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/store"
	"github.com/maestro-serverless/maestro/triggers"
)

// The catalog of work-queue messages: every kind, who sends it, what of
// WorkMessage it fills, and who handles it (Worker.HandleWork). A message
// may arrive twice, late or out of order; every handler is idempotent.

// WorkKind tags a work-queue message.
type WorkKind string

// Work message kinds.
const (
	// WorkRunStep asks a worker to run a step attempt. Sent by a commit
	// that starts a step (Rounds.commandMessage): the run and step
	// attempt, StepKind, StepType, Params, StartTime (a start left to the
	// claim), Crowd. The stream router sets Backstop on its copy of one
	// the committer dispatched itself. Handled by Worker.claimAndRun.
	WorkRunStep WorkKind = "run_step"
	// WorkTimer delivers a due timer of a step attempt: Purpose, FireAt.
	// Sent by a commit that sets a timer; it may arrive early when the
	// wait was longer than one SQS delay, and is then delayed again. It
	// becomes a TimerFired event in the run's inbox.
	WorkTimer WorkKind = "timer"
	// WorkWake is a backstop wake (store.Event.WakeAfter): the run to hand
	// to the decider if nothing else did. Handled by Rounds.handleBackstop.
	WorkWake WorkKind = store.WorkKindWake
	// WorkPurge asks a worker to delete the next batch of a deleted
	// workflow's items: WorkflowID, Round. Sent by DeleteWorkflow and by
	// each purge round that leaves items.
	WorkPurge WorkKind = "purge"
	// WorkSyncTriggers asks a worker to bring a workflow's time-trigger
	// schedules and signal subscriptions in line with its head:
	// WorkflowID. Sent with every definition change.
	WorkSyncTriggers WorkKind = "sync_triggers"
	// WorkTimeTrigger is a firing delivered by a time trigger's schedule
	// (its body is triggers.Firing, not a WorkMessage).
	WorkTimeTrigger WorkKind = triggers.FiringKind
	// WorkSignal asks a worker to deliver a stored signal instance to the
	// triggers and waiting steps subscribed to its name: SignalName,
	// SignalSeq. Sent by the announce that stored it.
	WorkSignal WorkKind = "signal"
	// WorkAnnounce announces a step's signal output: the step attempt,
	// SignalName, Params, Payload, Index (of the output). Sent by the
	// commit in which the step succeeded.
	WorkAnnounce WorkKind = "announce"
	// WorkStartSubworkflow starts the child instance of a subworkflow step
	// attempt: Subworkflow (engine.StartSubworkflow). Sent by the commit
	// that started the step.
	WorkStartSubworkflow WorkKind = "start_subworkflow"
	// WorkSweep asks a worker to run the recovery sweeper. A recurring
	// schedule (EventBridge Scheduler, every minute) sends it.
	WorkSweep WorkKind = "sweep"
	// WorkCancelJob stops an external job of a step attempt that ended:
	// the step attempt, StepType, Job, Reason.
	WorkCancelJob WorkKind = "cancel_job"
	// WorkJobEvent is an ECS task or Batch job state change: JobEvent, the
	// EventBridge event as the stack's rules wrap it.
	WorkJobEvent WorkKind = "job_event"
)

// WorkMessage is the body of a work-queue message.
type WorkMessage struct {
	Kind       WorkKind            `json:"kind"`
	WorkflowID string              `json:"workflow_id"`
	InstanceID int64               `json:"workflow_instance_id"`
	RunID      int64               `json:"workflow_run_id"`
	StepID     string              `json:"step_id"`
	Attempt    int64               `json:"step_attempt_id"`
	StepKind   model.StepKind      `json:"step_kind,omitempty"`
	StepType   model.StepType      `json:"step_type,omitempty"`
	Params     engine.Values       `json:"params,omitempty"`
	Purpose    engine.TimerPurpose `json:"purpose,omitempty"`
	FireAt     time.Time           `json:"fire_at,omitzero"`
	// Backstop is set on the stream router's copy of a step the committer
	// dispatched itself (store.Message.Direct).
	Backstop bool `json:"backstop,omitempty"`
	// Round numbers the rounds of a purge.
	Round int64 `json:"round,omitempty"`
	// SignalName and SignalSeq name a signal instance to deliver; for an
	// announce, SignalName, Params, Payload and Index (of the step's
	// output) describe the signal.
	SignalName string         `json:"signal_name,omitempty"`
	SignalSeq  int64          `json:"signal_seq,omitempty"`
	Index      int            `json:"index,omitempty"`
	Payload    map[string]any `json:"payload,omitempty"`
	// Subworkflow is the child a start_subworkflow message starts.
	Subworkflow *engine.StartSubworkflow `json:"subworkflow,omitempty"`
	// StartTime is when a run_step's attempt was created and started (unix
	// ms), set when that was one instant: its claim then creates the
	// attempt's item if its start commit left it out (see deferred.go).
	StartTime int64 `json:"start_time,omitempty"`
	// Job names an external job a cancel_job message stops, Reason why.
	Job    string `json:"job,omitempty"`
	Reason string `json:"reason,omitempty"`
	// JobEvent is a job_event message's EventBridge event (ECS or Batch
	// state change), as an EventBridge rule's input transformer wraps it.
	JobEvent json.RawMessage `json:"job_event,omitempty"`
	// Crowd is how many other steps the commit that started a run_step's
	// attempt started with it: a worker of a wide fan-out does not try to
	// continue the run inline (see crowdInline).
	Crowd int `json:"crowd,omitempty"`
}
