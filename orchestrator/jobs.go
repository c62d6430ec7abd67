package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/store"
)

// External jobs (ECS tasks, Batch jobs).
//
// A JobRunner's step is handed over as a job (Handover.Job) and ends
// through the job's state-change event, which an EventBridge rule sends to
// the work queue as a job_event message; it is applied as its task token's
// report would be (completeTask). An attempt that ends otherwise — stopped,
// killed, timed out, its run ended — cancels its job (engine.CancelJob, a
// cancel_job message).

// JobRunner is a CallbackRunner whose hand-overs are external jobs.
type JobRunner interface {
	CallbackRunner
	// JobEnded reads an EventBridge event: ok is false when it is not a
	// job end of this runner's; else job names the job (as its Handover
	// did) and c says how it ended.
	JobEnded(ctx context.Context, ev JobEvent) (job string, c TaskCompletion, ok bool, err error)
	// CancelJob stops job (a Handover.Job of this runner's).
	CancelJob(ctx context.Context, job, reason string) error
}

// JobEvent is the part of an EventBridge event a JobRunner reads.
type JobEvent struct {
	Source     string          `json:"source"`
	DetailType string          `json:"detail-type"`
	Time       time.Time       `json:"time"`
	Detail     json.RawMessage `json:"detail"`
}

// jobEventMaxWait is how long a job event whose job is not (yet) known is
// retried: its worker may still be recording the hand-over.
const jobEventMaxWait = 10 * time.Minute

// handleJobEvent applies a job's end to the attempt that handed it over.
func (o *Worker) handleJobEvent(ctx context.Context, raw json.RawMessage, runners map[model.StepType]StepRunner) error {
	var ev JobEvent
	if err := json.Unmarshal(raw, &ev); err != nil || ev.DetailType == "" {
		return fmt.Errorf("%w: a job event that is not an EventBridge event: %v", ErrPoison, err)
	}
	for _, r := range runners {
		jr, ok := r.(JobRunner)
		if !ok {
			continue
		}
		job, c, ok, err := jr.JobEnded(ctx, ev)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		hash, err := o.store.Tasks.GetJob(ctx, job)
		if errors.Is(err, store.ErrNotFound) {
			if age := o.now().Sub(ev.Time); !ev.Time.IsZero() && age > jobEventMaxWait {
				o.log.WarnContext(ctx, "dropping the end of a job no step handed over", "job", job, "age", age)
				return nil
			}
			return fmt.Errorf("the end of job %s arrived before its hand-over was recorded: retrying", job)
		}
		if err != nil {
			return err
		}
		if _, err := o.actions.completeTask(ctx, hash, c); err != nil {
			var e *Error
			if errors.As(err, &e) && e.Status < 500 {
				// The attempt ended otherwise (stopped, timed out) or the
				// event came twice.
				o.log.InfoContext(ctx, "a job's end changes nothing", "job", job, "reason", e.Message)
				return nil
			}
			return err
		}
		return nil
	}
	o.log.WarnContext(ctx, "dropping an event no job runner reads", "source", ev.Source, "detail_type", ev.DetailType)
	return nil
}

// cancelJob stops the external job of an attempt that ended otherwise.
func (o *Worker) cancelJob(ctx context.Context, m CancelJobWork, runners map[model.StepType]StepRunner) error {
	jr, ok := runners[m.StepType].(JobRunner)
	if !ok {
		return fmt.Errorf("%w: no job runner for step type %q to cancel job %s", ErrPoison, m.StepType, m.Job)
	}
	reason := fmt.Sprintf("maestro: step %s attempt %d of %s/%d/%d: %s", m.StepID, m.Attempt, m.WorkflowID, m.InstanceID, m.RunID, m.Reason)
	return jr.CancelJob(ctx, m.Job, reason)
}
