package orchestrator

import (
	"fmt"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/jsonnum"
	"github.com/maestro-serverless/maestro/pricing"
	"github.com/maestro-serverless/maestro/store"
)

// The three forms of a step attempt: the engine's state (engine.StepState,
// in the run's state), the stored body of its attempt item (attemptBody,
// written by commits and workers) and the API's view (StepView). Each is
// built from the one before by an explicit conversion: bodyOf, view.

// attemptBody is the stored body of a step attempt item: its ids, params,
// outputs, status and times, and its loop or child overview. Its JSON is
// what attempt items hold; changing a field's name or meaning changes what
// every stored item says.
type attemptBody struct {
	WorkflowID         string              `json:"workflow_id"`
	WorkflowInstanceID int64               `json:"workflow_instance_id"`
	WorkflowRunID      int64               `json:"workflow_run_id"`
	StepID             string              `json:"step_id"`
	StepAttemptID      int64               `json:"step_attempt_id"`
	Params             map[string]any      `json:"params,omitempty"`
	Outputs            map[string]any      `json:"outputs,omitempty"`
	RuntimeState       StepRuntimeView     `json:"runtime_state"`
	Foreach            *engine.LoopSummary `json:"foreach_overview,omitempty"`
	While              *engine.LoopSummary `json:"while_overview,omitempty"`
	Subworkflow        *engine.ChildRef    `json:"subworkflow_overview,omitempty"`
	// Compute is what the attempt's compute was billed for
	// (engine.StepState.Cost), priced when it is viewed.
	Compute pricing.Usage `json:"compute,omitempty"`
}

// bodyOf is the stored body of attempt s of run st. Output data of a
// running attempt shows at once among its outputs.
func bodyOf(st *engine.Instance, s *engine.StepState) *attemptBody {
	outputs := s.Outputs
	if len(s.External) > 0 {
		outputs = s.Outputs.Clone()
		if outputs == nil {
			outputs = engine.Values{}
		}
		for k, v := range s.External {
			outputs[k] = v
		}
	}
	b := &attemptBody{
		WorkflowID: st.WorkflowID, WorkflowInstanceID: st.InstanceID, WorkflowRunID: st.RunID,
		StepID: s.StepID, StepAttemptID: s.Attempt, Params: s.Params, Outputs: outputs,
		RuntimeState: StepRuntimeView{
			Status: string(s.Status), CreateTime: s.CreateTime, StartTime: s.StartTime, EndTime: s.EndTime,
		},
		Subworkflow: s.Child, Compute: s.Cost,
	}
	switch l := s.Loop; {
	case l == nil:
	case l.While:
		b.While = l.Summary()
	default:
		b.Foreach = l.Summary()
	}
	return b
}

// decodeAttemptBody decodes an attempt item's body; an item holding only a
// status (an attempt that ended in the commit that started its retry) gives
// a body with the ids and the status alone. The item's status is the
// body's.
func decodeAttemptBody(a store.Attempt) (*attemptBody, error) {
	var b attemptBody
	if len(a.Body) == 0 {
		b = attemptBody{StepID: a.StepID, StepAttemptID: a.Attempt}
	} else if err := jsonnum.Decode(a.Body, &b); err != nil {
		return nil, fmt.Errorf("decode attempt %s/%d: %w", a.StepID, a.Attempt, err)
	}
	b.RuntimeState.Status = a.Status
	return &b, nil
}

// view is the API's view of a stored body (without its timeline).
func (b *attemptBody) view() *StepView {
	v := &StepView{
		WorkflowID: b.WorkflowID, WorkflowInstanceID: b.WorkflowInstanceID, WorkflowRunID: b.WorkflowRunID,
		StepID: b.StepID, StepAttemptID: b.StepAttemptID, Params: b.Params, Outputs: b.Outputs,
		RuntimeState: b.RuntimeState, Foreach: b.Foreach, While: b.While, Subworkflow: b.Subworkflow,
	}
	if len(b.Compute) > 0 {
		c := pricing.Price(b.Compute)
		v.Cost = &c
	}
	return v
}
