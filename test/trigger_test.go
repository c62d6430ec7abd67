package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	schedtypes "github.com/aws/aws-sdk-go-v2/service/scheduler/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/maestro-serverless/maestro/localstack"
	"github.com/maestro-serverless/maestro/localstack/stack"
	"github.com/maestro-serverless/maestro/orchestrator"
	"github.com/maestro-serverless/maestro/triggers"
)

type scheduleInfo struct {
	Name, Expression, Timezone, Input string
}

// schedules lists the time-trigger schedules of the stack's group.
func (s *system) schedules(t *testing.T) map[string]scheduleInfo {
	t.Helper()
	ctx := context.Background()
	cfg := s.st.Emulator.TestConfig(t)
	sc := scheduler.NewFromConfig(cfg)
	group := s.st.Resources.SchedulerGroup.Name
	out := map[string]scheduleInfo{}
	pages := scheduler.NewListSchedulesPaginator(sc, &scheduler.ListSchedulesInput{GroupName: aws.String(group)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, sum := range page.Schedules {
			name := aws.ToString(sum.Name)
			if !strings.HasPrefix(name, "tt-") {
				continue // one-time timer schedules
			}
			d, err := sc.GetSchedule(ctx, &scheduler.GetScheduleInput{Name: sum.Name, GroupName: aws.String(group)})
			var gone *schedtypes.ResourceNotFoundException
			if errors.As(err, &gone) {
				continue // deleted since it was listed
			}
			if err != nil {
				t.Fatal(err)
			}
			out[name] = scheduleInfo{Name: name, Expression: aws.ToString(d.ScheduleExpression),
				Timezone: aws.ToString(d.ScheduleExpressionTimezone), Input: aws.ToString(d.Target.Input)}
		}
	}
	return out
}

// waitSchedules polls until the trigger schedules number n.
func (s *system) waitSchedules(t *testing.T, n int) map[string]scheduleInfo {
	t.Helper()
	var got map[string]scheduleInfo
	poll(t, 20*time.Second, fmt.Sprintf("%d trigger schedules", n), func() (bool, string) {
		got = s.schedules(t)
		return len(got) == n, fmt.Sprint(got)
	})
	return got
}

// schedulesSeen waits until the schedule pump (the stack's Scheduler) has
// seen every schedule that exists now.
func (s *system) schedulesSeen(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.st.WaitSchedulesSeen(ctx); err != nil {
		t.Fatalf("schedule pump: %v", err)
	}
}

func (s *system) instances(t *testing.T, wf string) []*orchestrator.InstanceView {
	t.Helper()
	var list orchestrator.InstanceList
	if code := s.do("GET", "/api/v3/workflows/"+wf+"/instances?limit=100", nil, &list); code != http.StatusOK {
		t.Fatalf("list instances: HTTP %d", code)
	}
	return list.Instances
}

func TestTimeTriggers(t *testing.T) {
	t.Parallel()
	// The clock starts at 09:50 UTC so the next full hour is ten minutes away.
	clock := localstack.NewManualClock()
	clock.Set(time.Date(2026, 11, 22, 9, 50, 0, 0, time.UTC))
	s := startSystem(t, stack.Options{Clock: clock})

	wf := s.push([]byte(`{"properties":{"owner":"tt"},"workflow":{"id":"hourly-wf",
	  "time_triggers":[{"type":"PREDEFINED","expression":"@hourly","timezone":"Asia/Tokyo"}],
	  "steps":[{"step":{"id":"s","type":"NoOp"}}]}}`))
	got := s.waitSchedules(t, 1)
	sched := got[triggers.ScheduleName(wf, 0, 0)]
	if sched.Expression != "cron(0 * * * ? *)" || sched.Timezone != "Asia/Tokyo" {
		t.Fatalf("schedule %+v", sched)
	}
	if len(s.instances(t, wf)) != 0 {
		t.Fatal("an instance started before the hour")
	}
	// The schedule pump (as Scheduler) fires the times after it first sees
	// a schedule.
	s.schedulesSeen(t)

	// Past the hour: exactly one instance, initiated by TIME, for 10:00.
	s.advance(t, 11*time.Minute)
	var list []*orchestrator.InstanceView
	poll(t, 20*time.Second, "an instance after the hour", func() (bool, string) {
		list = s.instances(t, wf)
		return len(list) > 0, ""
	})
	s.idle(t)
	if list = s.instances(t, wf); len(list) != 1 {
		t.Fatalf("%d instances after the hour, want 1", len(list))
	}
	v := s.wait(wf, list[0].WorkflowInstanceID, 20*time.Second)
	scheduled := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	if v.Status != "SUCCEEDED" || v.Initiator == nil || v.Initiator.Type != "TIME" ||
		v.Initiator.Timezone != "Asia/Tokyo" || v.Initiator.ScheduledTime != scheduled.UnixMilli() {
		t.Fatalf("instance %s initiator %+v", v.Status, v.Initiator)
	}
	if ts, _ := v.Params["RUN_TS"].(float64); int64(ts) != scheduled.UnixMilli() || fmt.Sprint(v.Params["TARGET_RUN_HOUR"]) != "19" {
		t.Errorf("time params RUN_TS %v TARGET_RUN_HOUR %v, want the scheduled time (19:00 in Tokyo)", v.Params["RUN_TS"], v.Params["TARGET_RUN_HOUR"])
	}

	// The same firing delivered again (Scheduler delivers at least once)
	// starts nothing.
	ctx := context.Background()
	cfg := s.st.Emulator.TestConfig(t)
	body := strings.Replace(sched.Input, "<aws.scheduler.scheduled-time>", scheduled.Format(time.RFC3339), 1)
	if _, err := sqs.NewFromConfig(cfg).SendMessage(ctx, &sqs.SendMessageInput{
		QueueUrl: aws.String(s.st.Resources.Queues.Work.URL), MessageBody: aws.String(body),
	}); err != nil {
		t.Fatal(err)
	}
	s.idle(t)
	if n := len(s.instances(t, wf)); n != 1 {
		t.Fatalf("%d instances after a duplicate firing, want 1", n)
	}

	// Deactivating removes the schedule; activating brings it back;
	// time_trigger_disabled removes it too.
	if code := s.do("PUT", "/api/v3/workflows/"+wf+"/actions/deactivate", nil, nil); code != http.StatusOK {
		t.Fatalf("deactivate: HTTP %d", code)
	}
	s.waitSchedules(t, 0)
	if code := s.do("PUT", "/api/v3/workflows/"+wf+"/versions/1/actions/activate", nil, nil); code != http.StatusOK {
		t.Fatalf("activate: HTTP %d", code)
	}
	s.waitSchedules(t, 1)
	if code := s.do("POST", "/api/v3/workflows/"+wf+"/properties", []byte(`{"time_trigger_disabled": true}`), nil); code != http.StatusOK {
		t.Fatalf("disable: HTTP %d", code)
	}
	s.waitSchedules(t, 0)
}

func TestSampleTimeTriggerSchedules(t *testing.T) {
	t.Parallel()
	s := startSystem(t, stack.Options{})
	wf := s.push(readFile(t, "sample-time-trigger-wf.json"))
	got := s.waitSchedules(t, 3)
	var lines []string
	for i := range 3 {
		sc, ok := got[triggers.ScheduleName(wf, i, 0)]
		if !ok {
			t.Fatalf("no schedule for trigger %d: %v", i, got)
		}
		if !strings.Contains(sc.Input, fmt.Sprintf(`"trigger_index":%d`, i)) {
			t.Errorf("trigger %d input %s", i, sc.Input)
		}
		lines = append(lines, sc.Expression+" "+sc.Timezone)
	}
	sort.Strings(lines)
	want := []string{"cron(0 0 * * ? *) Asia/Tokyo", "cron(0 12 * * ? *) US/Pacific", "cron(0/2 * * * ? *) US/Pacific"}
	if fmt.Sprint(lines) != fmt.Sprint(want) {
		t.Fatalf("schedules %v, want %v", lines, want)
	}
	// Deleting the workflow removes them.
	if code := s.do("DELETE", "/api/v3/workflows/"+wf, nil, nil); code != http.StatusAccepted {
		t.Fatalf("delete: HTTP %d", code)
	}
	s.waitSchedules(t, 0)
}
