package orchestrator

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/signals"
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
	// Signals are dynamic signal outputs (artifact maestro_dynamic_output):
	// they replace any reported before for the attempt and are announced,
	// with the attempt as publisher, when it succeeds.
	Signals []engine.DynamicSignal `json:"signals,omitempty"`
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
	// Signals names the dynamic signal outputs taken, in order.
	Signals []string `json:"signals,omitempty"`
}

// PutOutputData records output params for a running step attempt. They show
// in the attempt's outputs at once and, when it succeeds, override what its
// worker reports. Dynamic signal outputs are announced when it succeeds.
// An attempt that is not running is a 409, and so is one handed over as an
// external job other than the one the request names (external_job_id).
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
	if job := st.Step(od.StepID).Job; od.ExternalJobID != "" && job != "" && !sameJob(job, od.ExternalJobID) {
		return nil, &Error{Status: http.StatusConflict, Message: fmt.Sprintf("step %q attempt %d runs as job %s, not %s: output data comes from the attempt's own job", od.StepID, attempt, job, od.ExternalJobID)}
	}
	if err := engine.CheckDynamicSignals(od.Signals); err != nil {
		return nil, Invalid("invalid output data", "artifacts."+signals.DynamicOutputKey+": "+err.Error())
	}
	source := ""
	if od.ExternalJobType != "" || od.ExternalJobID != "" {
		source = fmt.Sprintf("%s %s", od.ExternalJobType, od.ExternalJobID)
	}
	ev := store.Event{ID: outputDataEventID(o.newUUID()), WakeAfter: backstopWake, Body: mustJSON(engine.OutputData{
		StepID: od.StepID, Attempt: attempt, Outputs: od.Params, Signals: od.Signals, Source: source,
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
	res := &OutputDataResult{WorkflowID: od.WorkflowID, InstanceID: od.InstanceID, RunID: run, StepID: od.StepID, Attempt: attempt, Params: names}
	for _, s := range od.Signals {
		res.Signals = append(res.Signals, s.Name)
	}
	return res, nil
}

// sameJob reports whether id names job, a hand-over's job ("ecs:<task
// ARN>", "batch:<job id>"): the whole of it, or the part after its
// runner's prefix.
func sameJob(job, id string) bool {
	if job == id {
		return true
	}
	_, rest, ok := strings.Cut(job, ":")
	return ok && rest == id
}
