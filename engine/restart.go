package engine

import (
	"fmt"
	"time"

	"github.com/maestro-serverless/maestro/model"
)

// Restart policies a user may ask for.
const (
	RestartFromIncomplete = "RESTART_FROM_INCOMPLETE"
	RestartFromBeginning  = "RESTART_FROM_BEGINNING"
)

func runPolicy(st *Instance) string {
	if st.RunPolicy == "" {
		return RunPolicyFreshRun
	}
	return st.RunPolicy
}

// RestartState returns the first state of the run that restarts prev, a run
// that has ended: run id + 1, status CREATED, RUN_POLICY policy. With
// RESTART_FROM_INCOMPLETE the steps that finished (SUCCEEDED, SKIPPED,
// COMPLETED_WITH_ERROR) are carried over as they are — they are not run
// again and their params stay visible to the steps after them — and every
// other step starts afresh; RESTART_FROM_BEGINNING starts every step
// afresh. Feed the result a StartRun event to start it.
func RestartState(prev *Instance, policy string, now time.Time) (*Instance, error) {
	if !prev.Status.IsTerminal() {
		return nil, fmt.Errorf("restart: run %d is %s, not ended", prev.RunID, prev.Status)
	}
	switch policy {
	case "", RestartFromIncomplete:
		policy = RestartFromIncomplete
	case RestartFromBeginning:
	default:
		return nil, fmt.Errorf("restart: unknown restart policy %q (want %s or %s)", policy, RestartFromIncomplete, RestartFromBeginning)
	}
	next := prev.Clone()
	next.RunID = prev.RunID + 1
	next.Status = model.WorkflowCreated
	next.RunPolicy = policy
	next.Message = ""
	next.CreateTime, next.StartTime, next.EndTime = now.UnixMilli(), 0, 0
	if policy == RestartFromBeginning {
		next.Steps = nil
		return next, nil
	}
	for i := range next.Steps {
		s := &next.Steps[i]
		switch s.Status {
		case model.StepSucceeded, model.StepSkipped, model.StepCompletedWithError:
			if s.FromRun == 0 {
				s.FromRun = prev.RunID
			}
		default:
			next.Steps[i] = StepState{StepID: s.StepID, Status: model.StepNotCreated}
		}
	}
	return next, nil
}
