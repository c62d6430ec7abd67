package engine

import "github.com/maestro-serverless/maestro/model"

// isStepTerminal reports whether a step attempt has ended.
func isStepTerminal(s model.StepStatus) bool { return s.IsTerminal() }

// stepRanOK reports whether a terminal step counts as having run to a
// successful end for its successors' conditions: SUCCEEDED,
// COMPLETED_WITH_ERROR and SKIPPED do; UNSATISFIED, DISABLED and failures do
// not.
func stepRanOK(s model.StepStatus) bool {
	switch s {
	case model.StepSucceeded, model.StepCompletedWithError, model.StepSkipped:
		return true
	}
	return false
}

// isStepFailure reports whether a step ended in failure (terminal and not
// complete): its downstream steps do not run and the instance fails.
func isStepFailure(s model.StepStatus) bool { return s.IsTerminal() && !s.IsComplete() }

// isWorkflowTerminal reports whether an instance run has ended.
func isWorkflowTerminal(s model.WorkflowStatus) bool { return s.IsTerminal() }
