package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/store"
	"github.com/maestro-serverless/maestro/triggers"
)

// Work kinds of time triggers.

// ScheduleSpec is one recurring schedule of a time trigger.
type ScheduleSpec struct {
	Name       string
	Expression string
	Timezone   string
	// Input is the target input (the firing message template).
	Input string
}

// TriggerSchedules keeps time-trigger schedules in EventBridge Scheduler;
// an adapter implements it over the AWS SDK.
type TriggerSchedules interface {
	// Sync makes the schedules whose names start with prefix exactly want:
	// it creates the missing, updates the changed and deletes the others.
	Sync(ctx context.Context, prefix string, want []ScheduleSpec) error
}

// syncMessage is the outbox message that syncs a workflow's schedules.
func syncMessage(wf string) store.Message {
	return store.Message{Queue: store.QueueWork, Body: EncodeWork(SyncTriggersWork{WorkflowID: wf})}
}

// wantedSchedules returns the schedules a workflow's head (nil: the
// workflow is gone) calls for: one
// (or two, see triggers.SchedulerCron) per time trigger of the active
// version, none when no version is active, time triggers are disabled in
// the properties, or the workflow is gone.
func (o *Worker) wantedSchedules(ctx context.Context, wf string, head *store.WorkflowHead) ([]ScheduleSpec, error) {
	if head == nil || head.Active == 0 || timeTriggersDisabled(head.Properties) {
		return nil, nil
	}
	_, def, err := o.graph(ctx, wf, head.Active)
	if err != nil {
		return nil, err
	}
	var want []ScheduleSpec
	for i := range def.Workflow.TimeTriggers {
		exprs, err := triggers.SchedulerCron(&def.Workflow.TimeTriggers[i])
		if err != nil {
			// Validation accepts only triggers that translate; a stored
			// version from before a rule change is reported, not fatal.
			o.log.ErrorContext(ctx, "time trigger cannot be scheduled", "workflow_id", wf, "version", head.Active, "trigger", i, "error", err)
			continue
		}
		for j, e := range exprs {
			want = append(want, ScheduleSpec{
				Name: triggers.ScheduleName(wf, i, j), Expression: e.Cron, Timezone: e.Timezone,
				Input: triggers.FiringInput(wf, i),
			})
		}
	}
	return want, nil
}

func timeTriggersDisabled(props []byte) bool {
	var p struct {
		Disabled bool `json:"time_trigger_disabled"`
	}
	return len(props) > 0 && json.Unmarshal(props, &p) == nil && p.Disabled
}

// syncTriggers brings a workflow's schedules in line with its head. It
// always reads the current head, so syncs applied in any order converge.
func (o *Worker) syncTriggers(ctx context.Context, wf string) error {
	if o.schedules == nil {
		return errors.New("time triggers: no schedule store is configured")
	}
	head, err := o.store.Definitions.GetHead(ctx, wf)
	switch {
	case errors.Is(err, store.ErrNotFound):
		head = nil // deleted: no schedules, no subscriptions
	case err != nil:
		return err
	}
	want, err := o.wantedSchedules(ctx, wf, head)
	if err != nil {
		return err
	}
	if err := o.schedules.Sync(ctx, triggers.SchedulePrefix(wf), want); err != nil {
		return err
	}
	return o.signals.syncSignalTriggers(ctx, wf)
}

// fireTrigger starts the instance of one firing of a time trigger, at most
// once per (workflow, trigger, scheduled time): the start's request id is
// derived from the three, so a second delivery finds the first instance.
// A firing with fuzzy_max_delay waits its deterministic jitter first
// (redelay). A firing for a workflow that is gone, inactive, or whose
// triggers are disabled starts nothing.
func (o *Worker) fireTrigger(ctx context.Context, f triggers.Firing) (time.Duration, error) {
	head, err := o.store.Definitions.GetHead(ctx, f.WorkflowID)
	if errors.Is(err, store.ErrNotFound) {
		o.log.InfoContext(ctx, "time trigger of a deleted workflow ignored", "workflow_id", f.WorkflowID)
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if head.Active == 0 || timeTriggersDisabled(head.Properties) {
		o.log.InfoContext(ctx, "time trigger of an inactive or disabled workflow ignored", "workflow_id", f.WorkflowID)
		return 0, nil
	}
	_, def, err := o.graph(ctx, f.WorkflowID, head.Active)
	if err != nil {
		return 0, err
	}
	tts := def.Workflow.TimeTriggers
	if f.TriggerIndex >= len(tts) {
		o.log.InfoContext(ctx, "firing of a trigger the active version no longer has ignored", "workflow_id", f.WorkflowID, "trigger", f.TriggerIndex)
		return 0, nil
	}
	tt := &tts[f.TriggerIndex]
	jitter, err := triggers.Jitter(tt, f.WorkflowID, f.TriggerIndex, f.ScheduledTime)
	if err != nil {
		o.log.WarnContext(ctx, "fuzzy_max_delay cannot be applied; starting without jitter", "workflow_id", f.WorkflowID, "trigger", f.TriggerIndex, "error", err)
		jitter = 0
	}
	if wait := f.ScheduledTime.Add(jitter).Sub(o.now()); wait > 500*time.Millisecond {
		return wait, nil
	}
	tz := tt.Timezone
	if tz == "" {
		tz = "UTC"
	}
	ini := engine.Initiator{Type: "TIME", Timezone: tz, ScheduledTime: f.ScheduledTime.UnixMilli()}
	resp, err := o.runs.start(ctx, f.WorkflowID, "active", StartRequest{
		RequestID: triggers.FiringRequestID(f.WorkflowID, f.TriggerIndex, f.ScheduledTime),
	}, ini, model.Params{}, nil)
	if err != nil {
		var e *Error
		if errors.As(err, &e) && e.Status < 500 {
			// Refused for good (e.g. a run param the version rejects).
			o.log.ErrorContext(ctx, "time trigger start refused", "workflow_id", f.WorkflowID, "trigger", f.TriggerIndex, "error", err)
			return 0, nil
		}
		return 0, err
	}
	o.log.InfoContext(ctx, "time trigger fired", "workflow_id", f.WorkflowID, "trigger", f.TriggerIndex,
		"scheduled_time", f.ScheduledTime, "instance_id", resp.WorkflowInstanceID, "created", resp.Created)
	return 0, nil
}
