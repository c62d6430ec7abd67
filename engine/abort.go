package engine

import (
	"fmt"

	"github.com/maestro-serverless/maestro/model"
)

// KindAbort is the kind of an Abort event.
const KindAbort EventKind = "abort"

// Abort fails a run that cannot go on, for a reason outside the definition
// (its state no longer fits the store's item limit): every step in flight
// ends FATALLY_FAILED and the run FAILED with Reason. The evaluated params
// and outputs of the run and its steps are dropped from the state, which
// is what made it too large; the step attempts already stored keep theirs.
type Abort struct {
	Reason string `json:"reason"`
}

// Kind returns KindAbort.
func (Abort) Kind() EventKind { return KindAbort }

func (Abort) isEvent() {}

// MarshalJSON writes the event with its "kind".
func (e Abort) MarshalJSON() ([]byte, error) {
	type plain Abort
	return withKind(e.Kind(), plain(e))
}

// abort applies an Abort.
func (d *decider) abort(e Abort) error {
	if d.st.Status.IsTerminal() {
		return nil
	}
	d.st.Params = nil
	for i := range d.st.Steps {
		d.st.Steps[i].Params, d.st.Steps[i].Outputs = nil, nil
	}
	msg := fmt.Sprintf("the run cannot go on: %s", e.Reason)
	if d.st.Status == model.WorkflowCreated {
		d.st.Message = msg
		d.setInstanceStatus(model.WorkflowFailed, msg)
		d.out.Commands = append(d.out.Commands, InstanceDone{Status: model.WorkflowFailed})
		return nil
	}
	return d.endRun(Ending{StepStatus: model.StepFatallyFailed, StepMessage: msg, RunStatus: model.WorkflowFailed, Message: msg})
}
