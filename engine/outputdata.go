package engine

import (
	"fmt"
	"strings"

	"github.com/maestro-serverless/maestro/model"
)

// KindOutputData tags the JSON form of an OutputData event.
const KindOutputData EventKind = "output_data"

// OutputData carries output params that an external job reports for a step
// attempt while it runs (Maestro's PUT /api/v3/output-data). They show in
// the attempt's outputs at once and, when the attempt succeeds, override
// the outputs its worker reports.
type OutputData struct {
	StepID  string         `json:"step_id"`
	Attempt int64          `json:"step_attempt_id"`
	Outputs map[string]any `json:"outputs"`
	// Signals, when set, are dynamic signal outputs for the attempt
	// (Maestro's maestro_dynamic_output artifact): they replace any
	// reported before and are announced when the attempt succeeds.
	Signals []DynamicSignal `json:"signals,omitempty"`
	// Source names the external job (type and id) for the timeline.
	Source string `json:"source,omitempty"`
}

// Kind returns KindOutputData.
func (OutputData) Kind() EventKind { return KindOutputData }

func (OutputData) isEvent() {}

// MarshalJSON writes the event with its "kind".
func (e OutputData) MarshalJSON() ([]byte, error) {
	type plain OutputData
	return withKind(e.Kind(), plain(e))
}

// AcceptsOutputData reports whether the step's current attempt in st is
// attempt (0: the current one) and has not ended, so that output data for
// it applies; the error says why not.
func AcceptsOutputData(st *Instance, stepID string, attempt int64) error {
	s := st.Step(stepID)
	if s == nil {
		return fmt.Errorf("unknown step %q", stepID)
	}
	if attempt != 0 && attempt != s.Attempt {
		return fmt.Errorf("step %q is at attempt %d, not %d", stepID, s.Attempt, attempt)
	}
	if st.Status != model.WorkflowInProgress || s.Status == model.StepNotCreated || s.Status == "" || isStepTerminal(s.Status) {
		return fmt.Errorf("step %q attempt %d is %s in a run that is %s: output data applies only while the attempt runs", stepID, s.Attempt, s.Status, st.Status)
	}
	return nil
}

// outputData records an external job's outputs on the attempt.
func (d *decider) outputData(e OutputData) error {
	i, known := d.g.index[e.StepID]
	if !known {
		return fmt.Errorf("unknown step %q", e.StepID)
	}
	if err := d.checkSteps(); err != nil {
		return err
	}
	if AcceptsOutputData(d.st, e.StepID, e.Attempt) != nil {
		return nil // late: the attempt ended or moved on
	}
	outputs, err := normalizeOutputs(e.Outputs)
	if err != nil {
		return nil
	}
	s := &d.st.Steps[i]
	signals := e.Signals
	if CheckDynamicSignals(signals) != nil {
		signals = nil // refused at the edge; never stored past the limits
	}
	if len(outputs) == 0 && len(signals) == 0 {
		return nil
	}
	if len(outputs) > 0 && s.External == nil {
		s.External = Values{}
	}
	for k, v := range outputs {
		s.External[k] = v
	}
	var parts []string
	if len(outputs) > 0 {
		parts = append(parts, fmt.Sprintf("%d params", len(outputs)))
	}
	if len(signals) > 0 {
		s.Signals = cloneSignals(signals)
		parts = append(parts, fmt.Sprintf("%d dynamic signal outputs", len(signals)))
	}
	msg := "output data: " + strings.Join(parts, ", ")
	if e.Source != "" {
		msg += " from " + e.Source
	}
	d.out.Timeline = append(d.out.Timeline, TimelineEntry{Time: d.now, StepID: s.StepID, Attempt: s.Attempt, Status: string(s.Status), Message: msg})
	return nil
}
