package worker_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/lambdas/wiring"
	"github.com/maestro-serverless/maestro/orchestrator"
	"github.com/maestro-serverless/maestro/triggers"
)

// TestHandleWorkMessagesOfTheOrchestrator: the worker as the work queue's
// Lambda function runs it (wiring.Build, over the emulator): in a batch of
// real work messages, the poison ones — not JSON, an unknown kind, a
// malformed time-trigger firing — are the batch's only failures; duplicates
// of idempotent work (a schedule sync, a timer not yet due) succeed in every
// copy, the syncs leaving the workflow's schedule once and the timers sent
// back to the work queue, delayed.
func TestHandleWorkMessagesOfTheOrchestrator(t *testing.T) {
	ctx := context.Background()
	res := stage(t)
	awsCfg := emulator.TestConfig(t)
	deps, err := wiring.Build(wiring.Config{
		Table: res.Table.Name, DecisionQueueURL: res.Queues.Decision.URL,
		WorkQueueURL: res.Queues.Work.URL, WorkQueueARN: res.Queues.Work.ARN,
		ScheduleGroup: res.SchedulerGroup.Name, SchedulerRoleARN: "arn:aws:iam::000000000000:role/maestro-test-scheduler",
		EventsTopicARN: res.Topics.Events.ARN, SignalDLQURL: res.Queues.SignalIngestDLQ.URL,
	}, awsCfg, wiring.Options{Emulator: true, Logger: discard})
	if err != nil {
		t.Fatal(err)
	}
	const wf = "worker-hourly"
	if _, err := deps.Orchestrator.Definitions.CreateWorkflow(ctx, []byte(`{"workflow":{"id":"`+wf+`",
	  "time_triggers":[{"type":"PREDEFINED","expression":"@hourly","timezone":"Asia/Tokyo"}],
	  "steps":[{"step":{"id":"s","type":"NoOp"}}]}}`), orchestrator.FormatJSON); err != nil {
		t.Fatal(err)
	}

	sync := orchestrator.EncodeWork(orchestrator.SyncTriggersWork{WorkflowID: wf})
	// A timer an hour away: a worker sends it back with SQS's longest delay.
	timer := orchestrator.EncodeWork(orchestrator.TimerWork{StepRef: orchestrator.StepRef{WorkflowID: wf, InstanceID: 1, RunID: 1, StepID: "s", Attempt: 1},
		Purpose: engine.PurposeTimeout, FireAt: time.Now().Add(time.Hour)})
	batch := []struct {
		id, body string
		poison   bool
	}{
		{"sync-1", sync, false},
		{"sweep", orchestrator.SweepBody, false},
		{"not-json", `{"kind":`, true},
		{"timer-1", timer, false},
		{"unknown-kind", `{"kind":"reticulate_splines"}`, true},
		{"sync-2", sync, false},
		{"bad-firing", `{"kind":"time_trigger","workflow_id":"` + wf + `"}`, true},
		{"gone-firing", `{"kind":"time_trigger","workflow_id":"no-such-workflow","trigger_index":0,"scheduled_time":"2026-11-22T10:00:00Z"}`, false},
		{"timer-2", timer, false},
	}
	var ev events.SQSEvent
	var wantFailed []string
	for _, m := range batch {
		ev.Records = append(ev.Records, message(m.id, m.body))
		if m.poison {
			wantFailed = append(wantFailed, m.id)
		}
	}
	slices.Sort(wantFailed)
	resp, err := deps.Worker.Handle(ctx, ev)
	if err != nil {
		t.Fatalf("Handle: %v", err)
	}
	if got := failedIDs(resp); !slices.Equal(got, wantFailed) {
		t.Errorf("failed %v, want exactly the poison messages %v", got, wantFailed)
	}

	sched := scheduler.NewFromConfig(awsCfg)
	list, err := sched.ListSchedules(ctx, &scheduler.ListSchedulesInput{GroupName: aws.String(res.SchedulerGroup.Name)})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range list.Schedules {
		names = append(names, aws.ToString(s.Name))
	}
	if want := []string{triggers.ScheduleName(wf, 0, 0)}; !slices.Equal(names, want) {
		t.Errorf("schedules %v after two syncs, want %v", names, want)
	}
	q := &queue{url: res.Queues.Work.URL, client: sqs.NewFromConfig(awsCfg)}
	if n := q.count(t, sqstypes.QueueAttributeNameApproximateNumberOfMessagesDelayed); n != 2 {
		t.Errorf("%d delayed messages on the work queue, want the 2 timers", n)
	}
}
