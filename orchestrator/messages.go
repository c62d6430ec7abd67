package orchestrator

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/jsonnum"
	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/store"
	"github.com/maestro-serverless/maestro/triggers"
)

// The catalog of work-queue messages: every kind, who sends it, its type
// (one per kind, below, with EncodeWork and DecodeWork), and who handles it
// (Worker.HandleWork). A message may arrive twice, late or out of order;
// every handler is idempotent.

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
	// (its body is triggers.FiringInput's, read by triggers.ParseFiring).
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
	// WorkBackfill pumps a backfill (Backfills.pump): WorkflowID,
	// BackfillID, Tick. Sent by the commit that ends one of its runs, and
	// with Tick by its creation; a tick re-queues itself every
	// backfillTick until the backfill is done.
	WorkBackfill WorkKind = "backfill"
)

// StepRef names a step attempt in a work message; its fields stand at the
// message's top level.
type StepRef struct {
	WorkflowID string `json:"workflow_id"`
	InstanceID int64  `json:"workflow_instance_id"`
	RunID      int64  `json:"workflow_run_id"`
	StepID     string `json:"step_id"`
	Attempt    int64  `json:"step_attempt_id"`
}

// Ref returns the step attempt's store reference.
func (r StepRef) Ref() store.AttemptRef {
	return store.AttemptRef{WorkflowID: r.WorkflowID, InstanceID: r.InstanceID, RunID: r.RunID, StepID: r.StepID, Attempt: r.Attempt}
}

// stepRefOf names step attempt (step, attempt) of run w.
func stepRefOf(w store.Wake, step string, attempt int64) StepRef {
	return StepRef{WorkflowID: w.WorkflowID, InstanceID: w.InstanceID, RunID: w.RunID, StepID: step, Attempt: attempt}
}

// Work is a work-queue message of one kind: one of the types below.
type Work interface {
	// Kind is the message's "kind".
	Kind() WorkKind
}

// StepWork (run_step) asks a worker to run a step attempt.
type StepWork struct {
	StepRef
	StepKind model.StepKind `json:"step_kind,omitempty"`
	StepType model.StepType `json:"step_type,omitempty"`
	// SubType and TemplateVersion select the step's job template, if any
	// (engine.RunStep).
	SubType         string        `json:"sub_type,omitempty"`
	TemplateVersion string        `json:"template_version,omitempty"`
	Params          engine.Values `json:"params,omitempty"`
	// StartTime is when the attempt was created and started (unix ms),
	// set when that was one instant: its claim then creates the attempt's
	// item if its start commit left it out (see deferred.go).
	StartTime int64 `json:"start_time,omitempty"`
	// Crowd is how many other steps the commit that started the attempt
	// started with it: a worker of a wide fan-out does not try to continue
	// the run inline (see crowdInline).
	Crowd int `json:"crowd,omitempty"`
	// Apart says the commit that started the attempt left other steps of
	// its run in flight, none of which the attempt's successors wait for
	// (a DAG's independent branches): its worker hands a success's end
	// to the decider at once, without reading the run to find it busy
	// (see Worker.continueRun).
	Apart bool `json:"apart,omitempty"`
	// Backstop is set on the stream router's copy of a step the committer
	// dispatched itself (store.Message.Direct).
	Backstop bool `json:"backstop,omitempty"`
}

// TimerWork (timer) delivers a due timer of a step attempt.
type TimerWork struct {
	StepRef
	Purpose engine.TimerPurpose `json:"purpose,omitempty"`
	FireAt  time.Time           `json:"fire_at,omitzero"`
}

// WakeWork (wake) is a backstop wake of a run; package store builds it.
type WakeWork struct{ store.Wake }

// PurgeWork (purge) deletes the next batch of a deleted workflow's items.
type PurgeWork struct {
	WorkflowID string `json:"workflow_id"`
	// Round numbers the rounds of a purge.
	Round int64 `json:"round,omitempty"`
}

// SyncTriggersWork (sync_triggers) brings a workflow's time-trigger
// schedules and signal subscriptions in line with its head.
type SyncTriggersWork struct {
	WorkflowID string `json:"workflow_id"`
}

// TimeTriggerWork (time_trigger) is a time trigger's firing, as its
// schedule delivers it.
type TimeTriggerWork struct{ triggers.Firing }

// SignalWork (signal) delivers a stored signal instance.
type SignalWork struct {
	SignalName string `json:"signal_name,omitempty"`
	SignalSeq  int64  `json:"signal_seq,omitempty"`
}

// AnnounceWork (announce) announces a step's signal output: the signal's
// name, params and payload, and its index among the step's outputs.
type AnnounceWork struct {
	StepRef
	SignalName string         `json:"signal_name,omitempty"`
	Params     engine.Values  `json:"params,omitempty"`
	Payload    map[string]any `json:"payload,omitempty"`
	Index      int            `json:"index,omitempty"`
}

// SubworkflowWork (start_subworkflow) starts a subworkflow step's child.
type SubworkflowWork struct {
	StepRef
	Subworkflow *engine.StartSubworkflow `json:"subworkflow,omitempty"`
}

// SweepWork (sweep) runs the recovery sweeper.
type SweepWork struct{}

// CancelJobWork (cancel_job) stops the external job of a step attempt that
// ended.
type CancelJobWork struct {
	StepRef
	StepType model.StepType `json:"step_type,omitempty"`
	Job      string         `json:"job,omitempty"`
	Reason   string         `json:"reason,omitempty"`
}

// JobEventWork (job_event) is an ECS task or Batch job state change, the
// EventBridge event as the stack's rules wrap it.
type JobEventWork struct {
	JobEvent json.RawMessage `json:"job_event,omitempty"`
}

// BackfillWork (backfill) pumps a backfill; a Tick re-queues itself.
type BackfillWork struct {
	WorkflowID string `json:"workflow_id"`
	BackfillID string `json:"backfill_id"`
	Tick       bool   `json:"tick,omitempty"`
}

// Kind implementations: the catalog's one mapping from type to kind.
func (StepWork) Kind() WorkKind         { return WorkRunStep }
func (TimerWork) Kind() WorkKind        { return WorkTimer }
func (WakeWork) Kind() WorkKind         { return WorkWake }
func (PurgeWork) Kind() WorkKind        { return WorkPurge }
func (SyncTriggersWork) Kind() WorkKind { return WorkSyncTriggers }
func (TimeTriggerWork) Kind() WorkKind  { return WorkTimeTrigger }
func (SignalWork) Kind() WorkKind       { return WorkSignal }
func (AnnounceWork) Kind() WorkKind     { return WorkAnnounce }
func (SubworkflowWork) Kind() WorkKind  { return WorkStartSubworkflow }
func (SweepWork) Kind() WorkKind        { return WorkSweep }
func (CancelJobWork) Kind() WorkKind    { return WorkCancelJob }
func (JobEventWork) Kind() WorkKind     { return WorkJobEvent }
func (BackfillWork) Kind() WorkKind     { return WorkBackfill }

// decoders makes an empty message of each kind for DecodeWork.
var decoders = map[WorkKind]func() Work{
	WorkRunStep:          func() Work { return &StepWork{} },
	WorkTimer:            func() Work { return &TimerWork{} },
	WorkWake:             func() Work { return &WakeWork{} },
	WorkPurge:            func() Work { return &PurgeWork{} },
	WorkSyncTriggers:     func() Work { return &SyncTriggersWork{} },
	WorkSignal:           func() Work { return &SignalWork{} },
	WorkAnnounce:         func() Work { return &AnnounceWork{} },
	WorkStartSubworkflow: func() Work { return &SubworkflowWork{} },
	WorkSweep:            func() Work { return &SweepWork{} },
	WorkCancelJob:        func() Work { return &CancelJobWork{} },
	WorkJobEvent:         func() Work { return &JobEventWork{} },
	WorkBackfill:         func() Work { return &BackfillWork{} },
}

// EncodeWork returns w's message body: w's JSON object with "kind" first.
func EncodeWork(w Work) string {
	if f, ok := w.(TimeTriggerWork); ok {
		return string(triggers.EncodeFiring(f.Firing))
	}
	b := mustJSON(w)
	kind := mustJSON(w.Kind())
	if string(b) == "{}" {
		return `{"kind":` + string(kind) + `}`
	}
	return `{"kind":` + string(kind) + `,` + string(b[1:])
}

// DecodeWork reads a work-queue message body into its kind's type (a
// pointer to it: *StepWork, *TimerWork, …; TimeTriggerWork for a firing).
// A body that is not a message of a known kind is ErrPoison: no retry can
// read it.
func DecodeWork(body []byte) (Work, error) {
	var head struct {
		Kind WorkKind `json:"kind"`
	}
	if err := json.Unmarshal(body, &head); err != nil {
		return nil, fmt.Errorf("%w: decode work message: %v", ErrPoison, err)
	}
	if head.Kind == WorkTimeTrigger {
		f, err := triggers.ParseFiring(body)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrPoison, err)
		}
		return TimeTriggerWork{f}, nil
	}
	mk, ok := decoders[head.Kind]
	if !ok {
		return nil, fmt.Errorf("%w: unknown work kind %q", ErrPoison, head.Kind)
	}
	w := mk()
	if err := jsonnum.Decode(body, w); err != nil {
		return nil, fmt.Errorf("%w: decode %s message: %v", ErrPoison, head.Kind, err)
	}
	return w, nil
}
