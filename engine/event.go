package engine

import (
	"encoding/json"
	"fmt"

	"github.com/maestro-serverless/maestro/jsonnum"
	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/pricing"
)

// EventKind tags the JSON form of an Event.
type EventKind string

// Event kinds.
const (
	KindStartRun     EventKind = "start_run"
	KindStepFinished EventKind = "step_finished"
	KindTimerFired   EventKind = "timer_fired"
	KindContinue     EventKind = "continue"
)

// Event is something that happened to an instance: one of StartRun,
// StepFinished or TimerFired (values, not pointers). Its JSON form is the
// event's fields plus "kind"; decode it with UnmarshalEvent.
type Event interface {
	// Kind returns the event's tag.
	Kind() EventKind
	isEvent()
}

// withKind writes an event's or a command's JSON form: "kind" first, then
// the fields of fields, the value converted to a type without its
// MarshalJSON (a struct that embedded it beside a Kind field would write
// the same bytes).
func withKind[K EventKind | CommandKind](kind K, fields any) ([]byte, error) {
	k, err := json.Marshal(kind)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(fields)
	if err != nil {
		return nil, err
	}
	if len(b) < 2 || b[0] != '{' {
		return nil, fmt.Errorf("engine: %s: fields are not a JSON object", kind)
	}
	out := append([]byte(`{"kind":`), k...)
	if len(b) > 2 {
		out = append(out, ',')
	}
	return append(out, b[1:]...), nil
}

// StartRun starts a created instance: it evaluates the workflow params and
// starts the root steps.
type StartRun struct {
	// RunParams override the definition's workflow params (and system
	// defaults) by name.
	RunParams model.Params `json:"run_params"`
	Initiator Initiator    `json:"initiator"`
}

// Outcome is how a step's work ended, as reported by its worker.
type Outcome string

// Step outcomes.
const (
	OutcomeSucceeded     Outcome = "SUCCEEDED"
	OutcomeUserError     Outcome = "USER_ERROR"
	OutcomePlatformError Outcome = "PLATFORM_ERROR"
	OutcomeFatalError    Outcome = "FATAL_ERROR"
)

// StepFinished reports the end of a step attempt's work (a RunStep command).
type StepFinished struct {
	StepID  string  `json:"step_id"`
	Attempt int64   `json:"step_attempt_id"`
	Outcome Outcome `json:"outcome"`
	// Outputs are output params; on success they override the step's params
	// of the same name.
	Outputs map[string]any `json:"outputs,omitempty"`
	// Signals are dynamic signal outputs the job reported (Maestro's
	// maestro_dynamic_output artifact), announced when it succeeds.
	Signals []DynamicSignal `json:"signals,omitempty"`
	Message string          `json:"message,omitempty"`
	// FinishedAt is when the step finished (unix ms, the worker's clock);
	// a success ends the attempt then rather than when it is decided. 0,
	// or an instant outside the attempt's start and the decision, means
	// the decision's time.
	FinishedAt int64 `json:"finished_at,omitempty"`
	// Compute is what the attempt's compute was billed for, as its end
	// reported it (an ECS task's Fargate seconds); it is added to the
	// attempt's and the run's cost whatever the outcome.
	Compute pricing.Usage `json:"compute,omitempty"`
}

// TimerPurpose says what a timer is for.
type TimerPurpose string

// Timer purposes.
const (
	// PurposeSleep ends a Sleep step.
	PurposeSleep TimerPurpose = "sleep"
	// PurposeRetry starts the next attempt of a step that failed retryably.
	PurposeRetry TimerPurpose = "retry"
)

// TimerFired reports that a timer started by a StartTimer command is due.
type TimerFired struct {
	StepID  string       `json:"step_id"`
	Attempt int64        `json:"step_attempt_id"`
	Purpose TimerPurpose `json:"purpose"`
}

// Kind returns KindStartRun.
func (StartRun) Kind() EventKind { return KindStartRun }

// Kind returns KindStepFinished.
func (StepFinished) Kind() EventKind { return KindStepFinished }

// Kind returns KindTimerFired.
func (TimerFired) Kind() EventKind { return KindTimerFired }

// Continue resumes a decision that WithMaxStarts cut short.
type Continue struct{}

// Kind returns KindContinue.
func (Continue) Kind() EventKind { return KindContinue }

// MarshalJSON writes the event with its "kind".
func (e Continue) MarshalJSON() ([]byte, error) {
	return withKind(e.Kind(), struct{}{})
}

func (Continue) isEvent()     {}
func (StartRun) isEvent()     {}
func (StepFinished) isEvent() {}
func (TimerFired) isEvent()   {}

// MarshalJSON writes the event with its "kind".
func (e StartRun) MarshalJSON() ([]byte, error) {
	type plain StartRun
	return withKind(e.Kind(), plain(e))
}

// MarshalJSON writes the event with its "kind".
func (e StepFinished) MarshalJSON() ([]byte, error) {
	type plain StepFinished
	return withKind(e.Kind(), plain(e))
}

// MarshalJSON writes the event with its "kind".
func (e TimerFired) MarshalJSON() ([]byte, error) {
	type plain TimerFired
	return withKind(e.Kind(), plain(e))
}

// UnmarshalEvent decodes an event written by json.Marshal. Numbers in
// StepFinished outputs decode as json.Number; Decide normalises them (whole
// numbers become LONG).
func UnmarshalEvent(data []byte) (Event, error) {
	kind, err := peekKind(data)
	if err != nil {
		return nil, fmt.Errorf("decode event: %w", err)
	}
	var e Event
	switch EventKind(kind) {
	case KindStartRun:
		e, err = decodeAs[StartRun](data, jsonnum.Decode)
	case KindStepFinished:
		e, err = decodeAs[StepFinished](data, jsonnum.Decode)
	case KindTimerFired:
		e, err = decodeAs[TimerFired](data, jsonnum.Decode)
	case KindAbort:
		e, err = decodeAs[Abort](data, jsonnum.Decode)
	case KindOutputData:
		e, err = decodeAs[OutputData](data, jsonnum.Decode)
	case KindSignalArrived:
		e, err = decodeAs[SignalArrived](data, jsonnum.Decode)
	case KindAction:
		e, err = decodeAs[Action](data, jsonnum.Decode)
	case KindChildEnded:
		e, err = decodeAs[ChildEnded](data, jsonnum.Decode)
	case KindTaskWaiting:
		e, err = decodeAs[TaskWaiting](data, jsonnum.Decode)
	case KindTaskHeartbeat:
		e, err = decodeAs[TaskHeartbeat](data, jsonnum.Decode)
	case KindChildStarted:
		e, err = decodeAs[ChildStarted](data, jsonnum.Decode)
	case KindRedrive:
		e, err = decodeAs[Redrive](data, jsonnum.Decode)
	case KindContinue:
		return Continue{}, nil
	default:
		return nil, fmt.Errorf("decode event: unknown kind %q", kind)
	}
	if err != nil {
		return nil, fmt.Errorf("decode %s event: %w", kind, err)
	}
	return e, nil
}

// decodeAs decodes data with decode into a T.
func decodeAs[T any](data []byte, decode func([]byte, any) error) (T, error) {
	var x T
	err := decode(data, &x)
	return x, err
}

func peekKind(data []byte) (string, error) {
	var head struct {
		Kind string `json:"kind"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return "", err
	}
	if head.Kind == "" {
		return "", fmt.Errorf("missing \"kind\"")
	}
	return head.Kind, nil
}
