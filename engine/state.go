package engine

import (
	"maps"
	"slices"

	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/pricing"
)

// Instance is the state of one workflow instance run, as the decider reads and
// writes it. It is small on purpose: the timeline and the transitions of a
// decision are returned beside the state, never accumulated inside it, so the
// item stays far below DynamoDB's item size limit.
type Instance struct {
	WorkflowID string `json:"workflow_id"`
	// WorkflowVersion is the definition version the instance runs.
	WorkflowVersion int64 `json:"workflow_version_id"`
	InstanceID      int64 `json:"workflow_instance_id"`
	RunID           int64 `json:"workflow_run_id"`
	// UUID is the instance's unique id; step uuids are derived from it.
	UUID string `json:"workflow_uuid"`
	// Owner is the workflow owner (the "owner" system param).
	Owner string `json:"owner,omitempty"`
	// TraceID is the X-Ray trace id of the request that started the run
	// (package trace); every message the run sends carries it, and its
	// iterations and children inherit it, so one trace follows the run.
	TraceID string               `json:"trace_id,omitempty"`
	Status  model.WorkflowStatus `json:"status"`
	// Initiator is set from the StartRun event.
	Initiator Initiator `json:"initiator"`
	// Params are the evaluated workflow params (system defaults, definition
	// params, run params).
	Params Values `json:"params,omitempty"`
	// Steps holds one entry per top-level step, in definition order, once the
	// run has started.
	Steps []StepState `json:"steps,omitempty"`
	// RunPolicy is the run's RUN_POLICY: START_FRESH_NEW_RUN (empty) or a
	// restart policy.
	RunPolicy string `json:"run_policy,omitempty"`
	// Message says why the instance failed, when it did.
	Message string `json:"message,omitempty"`
	// Ending, while set, is a run being ended in several decisions (a
	// stop, kill, timeout or FAIL_IMMEDIATELY with more steps in flight than
	// one decision may touch): see WithMaxEnds.
	Ending *Ending `json:"ending,omitempty"`
	// CreateTime, StartTime and EndTime are unix milliseconds (0 = not yet).
	CreateTime int64 `json:"create_time,omitempty"`
	StartTime  int64 `json:"start_time,omitempty"`
	EndTime    int64 `json:"end_time,omitempty"`
	// TimeoutAt is when the run times out (unix ms): its start plus the
	// workflow's timeout or the default.
	TimeoutAt int64 `json:"timeout_at,omitempty"`
	// Seq is the sequence number of the last emitted Transition; every status
	// change of the instance or of a step increments it.
	Seq int64 `json:"seq"`
	// Version is the optimistic-concurrency token of the stored item. The store
	// bumps it; the engine copies it unchanged.
	Version int64 `json:"version"`
	// Parent is set on a child run (a foreach iteration): the step attempt
	// that started it, which its end is reported to.
	Parent *ParentRef `json:"parent,omitempty"`
	// ChildStops are iterations of loop steps that ended while they ran,
	// still to be told to end (a few per decision, see WithMaxEnds).
	ChildStops []ChildStops `json:"child_stops,omitempty"`
	// Compact is set on a run stored whole in its run item (an iteration
	// born finished in its parent's commit, every step succeeded): its step
	// attempts and timeline have no items of their own, its steps' params
	// and outputs stay in the state, and readers derive the rest from it.
	Compact bool `json:"compact,omitempty"`
	// ParentGone is set on a child run its parent stopped: the parent no
	// longer waits for its end.
	ParentGone bool `json:"parent_gone,omitempty"`
	// Feedback is set when a while iteration succeeds: the values its
	// steps give the loop params its parent names (ParentRef.Feedback),
	// reported in its ChildEnded event.
	Feedback Values `json:"feedback,omitempty"`
	// RuntimeTags are the tags the run's start gave (Maestro's
	// run_config.runtime_tags): every step of the run takes their permits
	// beside its own tags'. A restart keeps them.
	RuntimeTags model.TagList `json:"runtime_tags,omitempty"`
	// Cost counts what the run was billed for: its steps' compute
	// (StepFinished.Compute) and the cost its ended iterations and
	// subworkflow instances reported (ChildEnded.Cost), so a parent's cost
	// is its tree's. A restart's run starts from nothing.
	Cost pricing.Usage `json:"cost,omitempty"`
}

// Ending says how a run that is being ended ends: every step in flight with
// StepStatus and StepMessage, then the run with RunStatus and Message.
type Ending struct {
	StepStatus  model.StepStatus     `json:"step_status"`
	StepMessage string               `json:"step_message"`
	RunStatus   model.WorkflowStatus `json:"run_status"`
	Message     string               `json:"message"`
}

// StepState is the state of one step's current attempt.
type StepState struct {
	StepID string `json:"step_id"`
	// Attempt is the step attempt id, 1 for the first attempt, 0 before the
	// step is created.
	Attempt int64            `json:"step_attempt_id"`
	Status  model.StepStatus `json:"status"`
	// Params are the step's evaluated params (step default params, then the
	// definition's step params), with successful outputs applied over them.
	Params Values `json:"params,omitempty"`
	// Outputs are the output params reported by the step's worker.
	Outputs Values `json:"outputs,omitempty"`
	// Message is the last error or explanation (unsatisfied condition,
	// evaluation error, worker failure message).
	Message string `json:"message,omitempty"`
	// CreateTime, StartTime (RUNNING) and EndTime (terminal) are unix ms.
	CreateTime int64 `json:"create_time,omitempty"`
	StartTime  int64 `json:"start_time,omitempty"`
	EndTime    int64 `json:"end_time,omitempty"`
	// ErrorRetries and PlatformRetries count the retries already taken for
	// user and platform errors.
	ErrorRetries    int64 `json:"error_retries,omitempty"`
	PlatformRetries int64 `json:"platform_retries,omitempty"`
	TimeoutRetries  int64 `json:"timeout_retries,omitempty"`
	// RetryAt, when set, is when the next attempt starts (unix ms): the
	// step failed retryably and waits on a retry timer. A step waiting to
	// retry is not settled, so its successors keep waiting.
	RetryAt int64 `json:"retry_at,omitempty"`
	// FromRun is set on a step carried over by a restart: the run whose
	// attempt it is (its attempt items live under that run).
	FromRun int64 `json:"from_run,omitempty"`
	// RestartParams are the step run params of the restart that started
	// this attempt, merged over the definition's params (StepRestart);
	// SkipOnStart ends the attempt SKIPPED as soon as it is created (a
	// user's skip of a step that had ended).
	RestartParams *model.Params `json:"restart_params,omitempty"`
	SkipOnStart   bool          `json:"skip_on_start,omitempty"`
	// External holds output params an external job reported for the
	// running attempt (OutputData); they become outputs when it succeeds.
	External Values `json:"external,omitempty"`
	// Signals are dynamic signal outputs an external job reported for the
	// running attempt (OutputData); they are announced when it succeeds,
	// in place of those its worker reports.
	Signals []DynamicSignal `json:"dynamic_signals,omitempty"`
	// WaitingSince is when a worker handed the running attempt to an
	// external system that ends it through its task token (TaskWaiting),
	// HeartbeatAt when that system last said it is at work (unix ms; 0:
	// never).
	WaitingSince int64 `json:"waiting_since,omitempty"`
	HeartbeatAt  int64 `json:"heartbeat_time,omitempty"`
	// Job is the external job a waiting attempt is (TaskWaiting.Job).
	Job string `json:"job,omitempty"`
	// SignalDeps holds, per signal dependency, the signal that met it (nil
	// while unmet); WaitsFor names the signals a WAITING_FOR_SIGNALS
	// attempt still waits for.
	SignalDeps []*SignalMatch `json:"signal_deps,omitempty"`
	WaitsFor   []string       `json:"waits_for,omitempty"`
	// Permits are the tag permits the attempt holds (from STARTING until it
	// ends) or, in WAITING_FOR_PERMITS, the tags it waits on.
	Permits []string `json:"permits,omitempty"`
	// Cost is what the attempt's compute was billed for
	// (StepFinished.Compute).
	Cost pricing.Usage `json:"cost,omitempty"`
	// Offloaded is set on a settled attempt whose Params and Outputs the
	// state no longer holds (see Offload): they are in the attempt's own
	// item (of run FromRun when set), and an expression that needs them
	// reads them through WithStepParams.
	Offloaded bool `json:"offloaded,omitempty"`
	// LoopParamsOffloaded is set on a running foreach step attempt whose
	// evaluated loop_params the state no longer holds (see Offload): they
	// are in the attempt's own item, written when it started, and the
	// decisions that launch iterations read them through WithStepParams.
	LoopParamsOffloaded bool `json:"loop_params_offloaded,omitempty"`
	// Loop is a foreach step attempt's iterations, from when it started
	// them.
	Loop *LoopState `json:"loop,omitempty"`
	// Child is the instance a subworkflow step attempt started, once it
	// has been reported (ChildStarted).
	Child *ChildRef `json:"child,omitempty"`
	// Redo is set on a foreach step of a run restarted from incomplete:
	// what its next attempt keeps of the previous one's iterations.
	Redo *LoopRedo `json:"redo,omitempty"`
	// RedoChild is set on a subworkflow step of a run restarted from
	// incomplete: the previous attempt's child, which did not succeed and
	// is restarted rather than replaced.
	RedoChild *ChildRef `json:"redo_child,omitempty"`
}

// settled reports whether a step has reached its final status for the run:
// terminal and not waiting to retry.
// ItemRun returns the run whose items hold attempt s of a step of run run:
// the run it was carried over from by a restart (FromRun), or run itself.
func (s *StepState) ItemRun(run int64) int64 {
	if s.FromRun != 0 {
		return s.FromRun
	}
	return run
}

func (s *StepState) settled() bool { return s.Status.IsTerminal() && s.RetryAt == 0 }

// Initiator says who or what started a run.
type Initiator struct {
	// Type is MANUAL, TIME, BACKFILL, SIGNAL, SUBWORKFLOW, FOREACH, WHILE
	// or TEMPLATE (upper case; empty is treated as MANUAL).
	Type string `json:"type,omitempty"`
	// Timezone is the timezone of the time trigger that started the run
	// (INITIATOR_TIMEZONE), empty otherwise.
	Timezone string `json:"timezone,omitempty"`
	// ScheduledTime is when a time trigger was due (unix ms): the run's
	// time params (RUN_TS, TARGET_RUN_DATE, ...) are computed from it
	// rather than from when the run started. 0 otherwise.
	ScheduledTime int64 `json:"scheduled_time,omitempty"`
	// Signals are the signals that triggered a SIGNAL run, in the order of
	// the trigger's names (params.getFromSignal reads them).
	Signals []SignalMatch `json:"signals,omitempty"`
	// Principal is the IAM principal whose API request started the run
	// (a MANUAL start), empty for runs the system started.
	Principal string `json:"principal,omitempty"`
	// Backfill names the backfill that started a BACKFILL run (a firing of
	// a time trigger at ScheduledTime, started late), empty otherwise.
	Backfill string `json:"backfill,omitempty"`
}

// InitiatorBackfill is the Initiator.Type of a run a backfill started.
const InitiatorBackfill = "BACKFILL"

// Clone returns a deep copy of the instance; nil for nil.
func (in *Instance) Clone() *Instance {
	if in == nil {
		return nil
	}
	out := *in
	out.Params = in.Params.Clone()
	out.Feedback = in.Feedback.Clone()
	out.Cost = maps.Clone(in.Cost)
	if in.ChildStops != nil {
		out.ChildStops = make([]ChildStops, len(in.ChildStops))
		for i, cs := range in.ChildStops {
			cs.Indices = slices.Clone(cs.Indices)
			out.ChildStops[i] = cs
		}
	}
	if in.Parent != nil {
		p := *in.Parent
		p.Feedback = slices.Clone(in.Parent.Feedback)
		out.Parent = &p
	}
	if in.Steps != nil {
		out.Steps = make([]StepState, len(in.Steps))
		for i := range in.Steps {
			out.Steps[i] = in.Steps[i].clone()
		}
	}
	return &out
}

func (s StepState) clone() StepState {
	s.Params = s.Params.Clone()
	s.Outputs = s.Outputs.Clone()
	s.External = s.External.Clone()
	s.Signals = cloneSignals(s.Signals)
	s.Permits = slices.Clone(s.Permits)
	s.Cost = maps.Clone(s.Cost)
	s.Loop = s.Loop.clone()
	if s.RedoChild != nil {
		c := *s.RedoChild
		c.Rollup = c.Rollup.clone()
		s.RedoChild = &c
	}
	if s.Redo != nil {
		r := *s.Redo
		r.Indices = slices.Clone(s.Redo.Indices)
		r.Kept = maps.Clone(s.Redo.Kept)
		r.KeptFailed = slices.Clone(s.Redo.KeptFailed)
		r.Vars = s.Redo.Vars.Clone()
		s.Redo = &r
	}
	if s.Child != nil {
		c := *s.Child
		c.Rollup = c.Rollup.clone()
		s.Child = &c
	}
	s.WaitsFor = slices.Clone(s.WaitsFor)
	if s.SignalDeps != nil {
		deps := make([]*SignalMatch, len(s.SignalDeps))
		for i, m := range s.SignalDeps {
			if m != nil {
				c := *m
				deps[i] = &c
			}
		}
		s.SignalDeps = deps
	}
	return s
}

// Step returns the state of the step with the given id, or nil.
func (in *Instance) Step(id string) *StepState {
	for i := range in.Steps {
		if in.Steps[i].StepID == id {
			return &in.Steps[i]
		}
	}
	return nil
}

// Offload returns a copy of the instance whose settled step attempts no
// longer hold their params and outputs (StepState.Offloaded): the store
// keeps them in each attempt's item, written when it settled, so the run's
// own item stays small whatever the steps produced. Only attempts that
// started (and so have an item) are offloaded.
//
// A running foreach step's loop_params leave the state too once they hold
// more than OffloadLoopElements values (StepState.LoopParamsOffloaded):
// a loop of 100,000 iterations would otherwise rewrite its arrays with
// every commit of the run.
func Offload(in *Instance) *Instance {
	out := *in
	out.Steps = slices.Clone(in.Steps)
	for i := range out.Steps {
		s := &out.Steps[i]
		switch {
		case s.settled() && s.CreateTime != 0 && (s.Params != nil || s.Outputs != nil):
			s.Params, s.Outputs, s.Offloaded, s.LoopParamsOffloaded = nil, nil, true, false
		case !s.settled() && s.Loop != nil && !s.Loop.While && s.CreateTime != 0 && loopElements(s.Params[LoopParamsName]) > OffloadLoopElements:
			kept := make(Values, len(s.Params)-1)
			for k, v := range s.Params {
				if k != LoopParamsName {
					kept[k] = v
				}
			}
			s.Params, s.LoopParamsOffloaded = kept, true
		}
	}
	return &out
}

// OffloadLoopElements is how many loop param values a running foreach step
// keeps in the run's state; past it they are read from its attempt item.
const OffloadLoopElements = 64

// loopElements counts the values of an evaluated loop_params map.
func loopElements(v any) int {
	m, ok := v.(map[string]any)
	if !ok {
		return 0
	}
	n := 0
	for _, a := range m {
		l, _ := arrayLen(a)
		n += l
	}
	return n
}
