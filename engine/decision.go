package engine

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/maestro-serverless/maestro/jsonnum"
	"github.com/maestro-serverless/maestro/model"
)

// Decision is the result of Decide: the new state and what it causes.
type Decision struct {
	// State is the instance's new state (a copy; the input is never modified).
	State *Instance `json:"state"`
	// Commands is the work the decision causes, in the order it arose.
	Commands []Command `json:"commands,omitempty"`
	// Timeline holds one entry per status change, in order; the store keeps it
	// apart from the state.
	Timeline []TimelineEntry `json:"timeline,omitempty"`
	// Transitions holds one entry per status change of the instance or of a
	// step, numbered by Instance.Seq.
	Transitions []Transition `json:"transitions,omitempty"`
	// Continue is set when WithMaxStarts stopped the decision before every
	// ready step was started; a Continue event resumes it.
	Continue bool `json:"continue,omitempty"`
	// Spent is what the decision counted against its bounds
	// (WithMaxStarts, WithLightWorkerStarts, WithMaxEnds).
	Spent Spent `json:"spent,omitzero"`
}

// Spent is what one decision counted against its bounds: a caller whose
// commit of it was too large bounds the next try by it, not by bounds the
// decision never reached.
type Spent struct {
	// Starts is the steps and iterations it started as they count against
	// WithMaxStarts, a part of a start (light worker starts short of one
	// whole) counted as one.
	Starts int `json:"starts,omitempty"`
	// LightStarts is the starts of worker steps that counted light
	// (WithLightWorkerStarts).
	LightStarts int `json:"light_starts,omitempty"`
	// Ends is the steps in flight that a run's ending ended (WithMaxEnds).
	Ends int `json:"ends,omitempty"`
}

// Changed reports whether the decision changes anything. A decision for a
// duplicate or late event does not: it has no commands and no transitions and
// its State equals the input.
func (d *Decision) Changed() bool {
	return len(d.Transitions) > 0 || len(d.Commands) > 0 || len(d.Timeline) > 0 || d.Continue
}

// TimelineEntry is a human-readable record of one status change.
type TimelineEntry struct {
	// Time is unix milliseconds.
	Time int64 `json:"time"`
	// StepID is empty for an entry about the instance itself.
	StepID  string `json:"step_id,omitempty"`
	Attempt int64  `json:"step_attempt_id,omitempty"`
	// Status is the status entered (a model.StepStatus, or a
	// model.WorkflowStatus when StepID is empty).
	Status  string `json:"status"`
	Message string `json:"message,omitempty"`
}

// Transition is one status change of the instance (StepID empty) or of a step.
type Transition struct {
	Seq     int64  `json:"seq"`
	StepID  string `json:"step_id,omitempty"`
	Attempt int64  `json:"step_attempt_id,omitempty"`
	From    string `json:"from"`
	To      string `json:"to"`
	// Time is unix milliseconds.
	Time int64 `json:"time"`
}

// CommandKind tags the JSON form of a Command.
type CommandKind string

// Command kinds.
const (
	KindRunStep      CommandKind = "run_step"
	KindStartTimer   CommandKind = "start_timer"
	KindInstanceDone CommandKind = "instance_done"
)

// Command is work a decision causes: one of RunStep, StartTimer or
// InstanceDone. Its JSON form is the command's fields plus "kind"; decode it
// with UnmarshalCommand.
type Command interface {
	// Kind returns the command's tag.
	Kind() CommandKind
	isCommand()
}

// RunStep asks the step worker to run a step attempt; the worker answers with
// a StepFinished event for the same StepID and Attempt.
type RunStep struct {
	StepID   string         `json:"step_id"`
	Attempt  int64          `json:"step_attempt_id"`
	StepKind model.StepKind `json:"step_kind"`
	// StepType is the type of a typed ("step") step, empty for other kinds.
	StepType model.StepType `json:"step_type,omitempty"`
	// SubType is the step's sub_type (job templates), if any.
	SubType string `json:"sub_type,omitempty"`
	// TemplateVersion is the version of its job template the step uses
	// (its sub_type_version, else the workflow param job_template_version,
	// else "default"); set with SubType.
	TemplateVersion string `json:"template_version,omitempty"`
	Params          Values `json:"params,omitempty"`
}

// StartTimer asks for a TimerFired event for the step attempt at FireAt.
type StartTimer struct {
	StepID  string       `json:"step_id"`
	Attempt int64        `json:"step_attempt_id"`
	Purpose TimerPurpose `json:"purpose"`
	// FireAt is in UTC with millisecond precision.
	FireAt time.Time `json:"fire_at"`
}

// InstanceDone announces that the instance reached a terminal status.
type InstanceDone struct {
	Status model.WorkflowStatus `json:"status"`
}

// Kind returns KindRunStep.
func (RunStep) Kind() CommandKind { return KindRunStep }

// Kind returns KindStartTimer.
func (StartTimer) Kind() CommandKind { return KindStartTimer }

// Kind returns KindInstanceDone.
func (InstanceDone) Kind() CommandKind { return KindInstanceDone }

func (RunStep) isCommand()      {}
func (StartTimer) isCommand()   {}
func (InstanceDone) isCommand() {}

// MarshalJSON writes the command with its "kind".
func (c RunStep) MarshalJSON() ([]byte, error) {
	type plain RunStep
	return withKind(c.Kind(), plain(c))
}

// MarshalJSON writes the command with its "kind".
func (c StartTimer) MarshalJSON() ([]byte, error) {
	type plain StartTimer
	return withKind(c.Kind(), plain(c))
}

// MarshalJSON writes the command with its "kind".
func (c InstanceDone) MarshalJSON() ([]byte, error) {
	type plain InstanceDone
	return withKind(c.Kind(), plain(c))
}

// UnmarshalCommand decodes a command written by json.Marshal.
func UnmarshalCommand(data []byte) (Command, error) {
	kind, err := peekKind(data)
	if err != nil {
		return nil, fmt.Errorf("decode command: %w", err)
	}
	var c Command
	switch CommandKind(kind) {
	case KindRunStep:
		c, err = decodeAs[RunStep](data, json.Unmarshal)
	case KindStartTimer:
		c, err = decodeAs[StartTimer](data, json.Unmarshal)
	case KindInstanceDone:
		c, err = decodeAs[InstanceDone](data, json.Unmarshal)
	case KindCreateLoop:
		c, err = decodeAs[CreateLoop](data, jsonnum.Decode)
	case KindStartChild:
		c, err = decodeAs[StartChild](data, jsonnum.Decode)
	case KindStopChild:
		c, err = decodeAs[StopChild](data, json.Unmarshal)
	case KindRestartChild:
		c, err = decodeAs[RestartChild](data, jsonnum.Decode)
	case KindStartSubworkflow:
		c, err = decodeAs[StartSubworkflow](data, jsonnum.Decode)
	case KindAnnounceSignal:
		c, err = decodeAs[AnnounceSignal](data, jsonnum.Decode)
	case KindCancelJob:
		c, err = decodeAs[CancelJob](data, json.Unmarshal)
	default:
		return nil, fmt.Errorf("decode command: unknown kind %q", kind)
	}
	if err != nil {
		return nil, fmt.Errorf("decode %s command: %w", kind, err)
	}
	return c, nil
}

// UnmarshalJSON decodes a decision, including its tagged commands.
func (d *Decision) UnmarshalJSON(data []byte) error {
	var raw struct {
		State       *Instance         `json:"state"`
		Commands    []json.RawMessage `json:"commands"`
		Timeline    []TimelineEntry   `json:"timeline"`
		Transitions []Transition      `json:"transitions"`
		Continue    bool              `json:"continue"`
		Spent       Spent             `json:"spent"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return fmt.Errorf("decode decision: %w", err)
	}
	out := Decision{State: raw.State, Timeline: raw.Timeline, Transitions: raw.Transitions, Continue: raw.Continue, Spent: raw.Spent}
	for i, rc := range raw.Commands {
		c, err := UnmarshalCommand(rc)
		if err != nil {
			return fmt.Errorf("decode decision: commands[%d]: %w", i, err)
		}
		out.Commands = append(out.Commands, c)
	}
	*d = out
	return nil
}
