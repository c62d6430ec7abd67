// Package handover holds what the runners of steps that are always handed
// over to an external system share (orchestrator.CallbackRunner; Callback
// steps, and the container jobs of Ecs, Kubernetes and Batch steps, which
// are orchestrator.JobRunners too): the two methods that say so (Always),
// Dispatch's answer for a step refused before it is handed over (Refuse),
// the reading of the EventBridge event that says a job ended (Detail), and
// the answer of a request that cancels a job (Cancelled).
package handover

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/aws/smithy-go"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/orchestrator"
)

// Always implements Waits and RunStep for a runner whose steps are always
// handed over (Dispatch), never run. Embed it in the runner.
type Always struct {
	// Why is RunStep's message: how the runner's steps run instead.
	Why string
}

// Waits reports true: the step is always handed over.
func (a Always) Waits(orchestrator.StepWork) bool { return true }

// RunStep is not how the steps run (see Dispatch); it ends the attempt
// with a fatal error, saying Why, should it be called.
func (a Always) RunStep(_ context.Context, m orchestrator.StepWork) (engine.StepFinished, error) {
	return engine.StepFinished{StepID: m.StepID, Attempt: m.Attempt, Outcome: engine.OutcomeFatalError, Message: a.Why}, nil
}

// Refuse is Dispatch's answer for a step it does not hand over: the
// attempt ends at once with a fatal error saying msg.
func Refuse(msg string) (orchestrator.Handover, *engine.StepFinished, error) {
	return orchestrator.Handover{}, &engine.StepFinished{Outcome: engine.OutcomeFatalError, Message: msg}, nil
}

// Detail decodes the detail of ev, an event from source of type
// detailType (EventBridge's "source" and "detail-type"): ok is false for
// an event of another source or type, and a detail that is not a T is
// poison (orchestrator.ErrPoison).
func Detail[T any](ev orchestrator.JobEvent, source, detailType string) (detail T, ok bool, err error) {
	if ev.Source != source || ev.DetailType != detailType {
		return detail, false, nil
	}
	if err := json.Unmarshal(ev.Detail, &detail); err != nil {
		return detail, false, fmt.Errorf("%w: %s: %v", orchestrator.ErrPoison, detailType, err)
	}
	return detail, true, nil
}

// Cancelled is the outcome of a request that cancels a job (what, for the
// error): nil when it succeeded or failed with one of the AWS error codes
// gone (the job is gone already), else its error.
func Cancelled(err error, what string, gone ...string) error {
	var api smithy.APIError
	if err == nil || errors.As(err, &api) && slices.Contains(gone, api.ErrorCode()) {
		return nil
	}
	return fmt.Errorf("%s: %w", what, err)
}
