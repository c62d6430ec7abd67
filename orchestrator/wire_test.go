package orchestrator

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/model"
)

// wireWork is a work-queue message of any kind as its JSON reads: every
// field of every kind's type (messages.go) in one struct, for tests that
// build a message of any kind, or a malformed one, and that read what a
// commit sent whatever its kind. The orchestrator reads messages through
// DecodeWork only.
type wireWork struct {
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
	// Apart says a run_step's commit left other branches in flight.
	Apart bool `json:"apart,omitempty"`
}

// step is the run_step message w as the worker decodes it.
func (w wireWork) step(t testing.TB) StepWork {
	t.Helper()
	d, err := DecodeWork(mustJSON(w))
	if err != nil {
		t.Fatalf("decode %s message: %v", w.Kind, err)
	}
	m, ok := d.(*StepWork)
	if !ok {
		t.Fatalf("a %s message is not a run_step", w.Kind)
	}
	return *m
}
