package orchestrator

import (
	"context"
	"fmt"
	"net/http"
	"sort"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/store"
)

// OutputData is an external job's report of output params for a step
// attempt (Maestro's PUT /api/v3/output-data, addressed by the attempt).
type OutputData struct {
	WorkflowID string `json:"workflow_id"`
	InstanceID int64  `json:"workflow_instance_id"`
	// RunID 0 means the latest run; Attempt 0 the step's current attempt.
	RunID   int64  `json:"workflow_run_id,omitempty"`
	StepID  string `json:"step_id"`
	Attempt int64  `json:"step_attempt_id,omitempty"`
	// Params are the output values by name.
	Params map[string]any `json:"params"`
	// ExternalJobType and ExternalJobID name the reporting job; they are
	// recorded on the step's timeline.
	ExternalJobType string `json:"external_job_type,omitempty"`
	ExternalJobID   string `json:"external_job_id,omitempty"`
}

// OutputDataResult says which attempt took the output data.
type OutputDataResult struct {
	WorkflowID string   `json:"workflow_id"`
	InstanceID int64    `json:"workflow_instance_id"`
	RunID      int64    `json:"workflow_run_id"`
	StepID     string   `json:"step_id"`
	Attempt    int64    `json:"step_attempt_id"`
	Params     []string `json:"params"`
}

// PutOutputData records output params for a running step attempt. They show
// in the attempt's outputs at once and, when it succeeds, override what its
// worker reports. An attempt that is not running is a 409.
func (o *Actions) PutOutputData(ctx context.Context, od OutputData) (*OutputDataResult, error) {
	_, st, err := o.runState(ctx, od.WorkflowID, od.InstanceID, od.RunID)
	if err != nil {
		return nil, err
	}
	run := st.RunID
	s := st.Step(od.StepID)
	if s == nil {
		if g, _, err := o.graph(ctx, od.WorkflowID, st.WorkflowVersion); err != nil || g.Step(od.StepID) == nil {
			return nil, NotFound("workflow %s instance %d has no step %s", od.WorkflowID, od.InstanceID, od.StepID)
		}
	}
	if err := engine.AcceptsOutputData(st, od.StepID, od.Attempt); err != nil {
		return nil, &Error{Status: http.StatusConflict, Message: err.Error()}
	}
	attempt := st.Step(od.StepID).Attempt
	source := ""
	if od.ExternalJobType != "" || od.ExternalJobID != "" {
		source = fmt.Sprintf("%s %s", od.ExternalJobType, od.ExternalJobID)
	}
	ev := store.Event{ID: outputDataEventID(o.newUUID()), WakeAfter: backstopWake, Body: mustJSON(engine.OutputData{
		StepID: od.StepID, Attempt: attempt, Outputs: od.Params, Source: source,
	})}
	if err := o.store.Runs.PutEvent(ctx, od.WorkflowID, od.InstanceID, run, ev); err != nil {
		return nil, Internal(err)
	}
	if _, err := o.rounds.Process(ctx, store.Wake{WorkflowID: od.WorkflowID, InstanceID: od.InstanceID, RunID: run}); err != nil {
		o.log.WarnContext(ctx, "inline decision of output data failed; the decision queue will retry", "workflow_id", od.WorkflowID, "instance_id", od.InstanceID, "error", err)
	}
	names := make([]string, 0, len(od.Params))
	for k := range od.Params {
		names = append(names, k)
	}
	sort.Strings(names)
	return &OutputDataResult{WorkflowID: od.WorkflowID, InstanceID: od.InstanceID, RunID: run, StepID: od.StepID, Attempt: attempt, Params: names}, nil
}
