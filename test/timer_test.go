package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"

	"github.com/maestro-serverless/maestro/localstack"
	"github.com/maestro-serverless/maestro/localstack/stack"
	"github.com/maestro-serverless/maestro/store"
)

// TestLongSleepUsesAOneTimeSchedule: a 20-minute Sleep is longer than SQS's
// 15-minute delay, so its timer becomes an EventBridge Scheduler at()
// schedule; moving the local clock past it completes the step.
func TestLongSleepUsesAOneTimeSchedule(t *testing.T) {
	t.Parallel()
	clock := localstack.NewManualClock()
	s := startSystem(t, stack.Options{Clock: clock})
	wf := s.push([]byte(`{"properties":{"owner":"timers"},"workflow":{"id":"long-sleep","steps":[
	  {"step":{"id":"nap","type":"Sleep","params":{"sleep_seconds":{"value":1200,"type":"LONG"}},"transition":{"successors":{"after":"true"}}}},
	  {"step":{"id":"after","type":"NoOp"}}]}}`))
	r := s.start(wf, "")

	ctx := context.Background()
	cfg := s.st.Emulator.TestConfig(t)
	sched := scheduler.NewFromConfig(cfg)
	group := s.st.Resources.SchedulerGroup.Name
	// Two one-time schedules appear: the run's 10-day default timeout and
	// the 20-minute sleep, which is the one due within the hour.
	var name string
	poll(t, 15*time.Second, "a one-time schedule for the 20-minute timer", func() (bool, string) {
		out, err := sched.ListSchedules(ctx, &scheduler.ListSchedulesInput{GroupName: aws.String(group)})
		if err != nil {
			t.Fatal(err)
		}
		for _, sc := range out.Schedules {
			got, err := sched.GetSchedule(ctx, &scheduler.GetScheduleInput{Name: sc.Name, GroupName: aws.String(group)})
			if err != nil {
				t.Fatal(err)
			}
			at, err := time.Parse("2006-01-02T15:04:05", strings.TrimSuffix(strings.TrimPrefix(aws.ToString(got.ScheduleExpression), "at("), ")"))
			if err == nil && at.Before(clock.Now().Add(time.Hour)) {
				name = aws.ToString(sc.Name)
			}
		}
		return name != "", fmt.Sprintf("%d schedules", len(out.Schedules))
	})
	got, err := sched.GetSchedule(ctx, &scheduler.GetScheduleInput{Name: aws.String(name), GroupName: aws.String(group)})
	if err != nil {
		t.Fatal(err)
	}
	expr := aws.ToString(got.ScheduleExpression)
	if !strings.HasPrefix(expr, "at(") || got.ActionAfterCompletion != "DELETE" || aws.ToString(got.Target.Arn) != s.st.Resources.Queues.Work.ARN {
		t.Fatalf("schedule %s: expression %s, after completion %s, target %s", name, expr, got.ActionAfterCompletion, aws.ToString(got.Target.Arn))
	}
	// The timeout's schedule is named for the run, so that its end can
	// delete it.
	timeout := store.RunTimeoutSchedule(wf, r.WorkflowInstanceID, r.WorkflowRunID)
	if _, err := sched.GetSchedule(ctx, &scheduler.GetScheduleInput{Name: aws.String(timeout), GroupName: aws.String(group)}); err != nil {
		t.Fatalf("the run's timeout schedule %s: %v", timeout, err)
	}
	if v := s.instance(wf, r.WorkflowInstanceID); v.StepStatuses["nap"] != "RUNNING" {
		t.Fatalf("nap is %s before the clock moves", v.StepStatuses["nap"])
	}

	clock.Advance(21 * time.Minute)
	v := s.wait(wf, r.WorkflowInstanceID, 30*time.Second)
	if v.Status != "SUCCEEDED" || v.StepStatuses["after"] != "SUCCEEDED" {
		t.Fatalf("after the clock moved: %s %v", v.Status, v.StepStatuses)
	}
	// The sleep's schedule deleted itself after firing, and the run's end
	// deleted its timeout's, which would have fired ten days on for a run
	// long ended.
	poll(t, 15*time.Second, "no schedule left once the run ended", func() (bool, string) {
		out, err := sched.ListSchedules(ctx, &scheduler.ListSchedulesInput{GroupName: aws.String(group)})
		if err != nil {
			t.Fatal(err)
		}
		var left []string
		for _, sc := range out.Schedules {
			left = append(left, aws.ToString(sc.Name))
		}
		return len(left) == 0, fmt.Sprint(left)
	})
}

// TestSleepFollowsTheLocalClock: a 10-minute Sleep's timer is an SQS
// message delay, and POST /local/clock moves it with the stack's clock: 5
// minutes on, the step still runs once the stack is idle; 10 minutes on,
// it ends, 10 minutes after it started by the stack's clock. (On LocalStack
// the route says it could not move the delay, and the test ends there.)
func TestSleepFollowsTheLocalClock(t *testing.T) {
	t.Parallel()
	s := startSystem(t, stack.Options{})
	wf := s.push([]byte(`{"properties":{"owner":"timers"},"workflow":{"id":"clock-sleep","steps":[
	  {"step":{"id":"nap","type":"Sleep","params":{"sleep_seconds":{"value":600,"type":"LONG"}},"transition":{"successors":{"after":"true"}}}},
	  {"step":{"id":"after","type":"NoOp"}}]}}`))
	r := s.start(wf, "")
	poll(t, 30*time.Second, "nap runs", func() (bool, string) {
		st := s.instance(wf, r.WorkflowInstanceID).StepStatuses["nap"]
		return st == "RUNNING", st
	})
	if !s.advance(t, 5*time.Minute) {
		if s.st.Emulator.CanAdvanceQueueDelays() {
			t.Fatal("the clock route says it did not move the queues' delays; the emulator can")
		}
		t.Logf("%s emulator: SQS delays keep their real time", s.st.Emulator.Kind)
		return
	}
	s.idle(t)
	if v := s.instance(wf, r.WorkflowInstanceID); v.StepStatuses["nap"] != "RUNNING" {
		t.Fatalf("5 minutes into a 10-minute sleep: %s %v", v.Status, v.StepStatuses)
	}
	s.advance(t, 5*time.Minute)
	v := s.wait(wf, r.WorkflowInstanceID, 30*time.Second)
	if v.Status != "SUCCEEDED" || v.StepStatuses["after"] != "SUCCEEDED" {
		t.Fatalf("10 minutes on: %s %v", v.Status, v.StepStatuses)
	}
	rt := s.steps(wf, r.WorkflowInstanceID)["nap"].RuntimeState
	if d := time.Duration(rt.EndTime-rt.StartTime) * time.Millisecond; d < 10*time.Minute || d > 11*time.Minute {
		t.Errorf("nap took %v by the stack's clock, want 10 minutes", d)
	}
}
