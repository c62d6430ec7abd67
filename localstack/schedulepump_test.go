package localstack

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	schedtypes "github.com/aws/aws-sdk-go-v2/service/scheduler/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

const schedulerRole = "arn:aws:iam::123456789012:role/maestro-scheduler"

type scheduleFixture struct {
	t     *testing.T
	res   *Resources
	sched *scheduler.Client
	sqs   *sqs.Client
	clock *ManualClock
	pump  *SchedulePump
}

func newScheduleFixture(t *testing.T, opts SchedulePumpOptions) *scheduleFixture {
	cfg := testConfig(t)
	res, _ := provisionStage(t, cfg)
	f := &scheduleFixture{t: t, res: res, sched: scheduler.NewFromConfig(cfg), sqs: sqs.NewFromConfig(cfg), clock: NewManualClock()}
	opts.Clock = f.clock
	opts.Logger = testLogger(t)
	f.pump = NewSchedulePump(f.sched, f.sqs, res.SchedulerGroup.Name, opts)
	return f
}

func (f *scheduleFixture) create(name, expr string, target *schedtypes.Target, after schedtypes.ActionAfterCompletion) {
	f.t.Helper()
	_, err := f.sched.CreateSchedule(context.Background(), &scheduler.CreateScheduleInput{
		Name:                       aws.String(name),
		GroupName:                  aws.String(f.res.SchedulerGroup.Name),
		ScheduleExpression:         aws.String(expr),
		ScheduleExpressionTimezone: aws.String("UTC"),
		FlexibleTimeWindow:         &schedtypes.FlexibleTimeWindow{Mode: schedtypes.FlexibleTimeWindowModeOff},
		Target:                     target,
		ActionAfterCompletion:      after,
	})
	if err != nil {
		f.t.Fatalf("create schedule %s: %v", name, err)
	}
}

func (f *scheduleFixture) poll() {
	f.t.Helper()
	if err := f.pump.Poll(context.Background()); err != nil {
		f.t.Fatalf("Poll: %v", err)
	}
}

// drain returns the messages now in a queue. Poll sends synchronously, so
// short polls until the queue is empty see every fired message.
func (f *scheduleFixture) drain(url string) []sqstypes.Message {
	f.t.Helper()
	ctx := context.Background()
	var out []sqstypes.Message
	for empty := 0; empty < 2; {
		got, err := f.sqs.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
			QueueUrl:                    aws.String(url),
			MaxNumberOfMessages:         10,
			MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll},
		})
		if err != nil {
			f.t.Fatalf("receive: %v", err)
		}
		if len(got.Messages) == 0 {
			empty++
			continue
		}
		for _, m := range got.Messages {
			if _, err := f.sqs.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: m.ReceiptHandle}); err != nil {
				f.t.Fatalf("delete: %v", err)
			}
		}
		out = append(out, got.Messages...)
	}
	return out
}

func bodies(msgs []sqstypes.Message) []string {
	var out []string
	for _, m := range msgs {
		out = append(out, aws.ToString(m.Body))
	}
	slices.Sort(out)
	return out
}

func TestSchedulePumpAtFiresOnceAndDeletes(t *testing.T) {
	f := newScheduleFixture(t, SchedulePumpOptions{})
	work := f.res.Queues.Work
	due := f.clock.Now().Add(time.Hour).UTC().Truncate(time.Second)
	expr := "at(" + due.Format("2006-01-02T15:04:05") + ")"
	input := `{"timer":"t1","at":"<aws.scheduler.scheduled-time>","arn":"<aws.scheduler.schedule-arn>"}`
	f.create("timer-delete", expr, &schedtypes.Target{Arn: aws.String(work.ARN), RoleArn: aws.String(schedulerRole), Input: aws.String(input)}, schedtypes.ActionAfterCompletionDelete)
	f.create("timer-keep", expr, &schedtypes.Target{Arn: aws.String(work.ARN), RoleArn: aws.String(schedulerRole), Input: aws.String("keep")}, schedtypes.ActionAfterCompletionNone)

	f.poll()
	f.clock.Advance(59 * time.Minute)
	f.poll()
	if msgs := f.drain(work.URL); len(msgs) != 0 {
		t.Fatalf("a not-yet-due at() schedule fired: %v", bodies(msgs))
	}

	f.clock.Advance(2 * time.Minute)
	f.poll()
	got := bodies(f.drain(work.URL))
	deleteBody := fmt.Sprintf(`{"timer":"t1","at":"%s","arn":"arn:`, due.Format("2006-01-02T15:04:05Z"))
	if len(got) != 2 || got[0] != "keep" || !strings.HasPrefix(got[1], deleteBody) || !strings.Contains(got[1], ":schedule/"+f.res.SchedulerGroup.Name+"/timer-delete") {
		t.Fatalf("fired %q, want the keep body and one starting %s", got, deleteBody)
	}

	_, err := f.sched.GetSchedule(context.Background(), &scheduler.GetScheduleInput{Name: aws.String("timer-delete"), GroupName: aws.String(f.res.SchedulerGroup.Name)})
	var notFound *schedtypes.ResourceNotFoundException
	if !errors.As(err, &notFound) {
		t.Errorf("GetSchedule after completion: err = %v, want ResourceNotFoundException", err)
	}
	if _, err := f.sched.GetSchedule(context.Background(), &scheduler.GetScheduleInput{Name: aws.String("timer-keep"), GroupName: aws.String(f.res.SchedulerGroup.Name)}); err != nil {
		t.Errorf("schedule with ActionAfterCompletion NONE was removed: %v", err)
	}

	f.clock.Advance(time.Hour)
	f.poll()
	if msgs := f.drain(work.URL); len(msgs) != 0 {
		t.Errorf("an at() schedule fired twice: %v", bodies(msgs))
	}
}

func TestSchedulePumpRateFiresPerPeriod(t *testing.T) {
	f := newScheduleFixture(t, SchedulePumpOptions{MaxFiresPerPoll: 2})
	decision := f.res.Queues.Decision
	f.create("heartbeat", "rate(5 minutes)", &schedtypes.Target{
		Arn:           aws.String(decision.ARN),
		RoleArn:       aws.String(schedulerRole),
		Input:         aws.String("<aws.scheduler.scheduled-time>"),
		SqsParameters: &schedtypes.SqsParameters{MessageGroupId: aws.String("wf-1")},
	}, schedtypes.ActionAfterCompletionNone)

	start := f.clock.Now()
	var msgs []sqstypes.Message
	step := func(what string, want int) {
		t.Helper()
		f.poll()
		got := f.drain(decision.URL)
		if len(got) != want {
			t.Fatalf("%s: %d fires, want %d", what, len(got), want)
		}
		msgs = append(msgs, got...)
	}
	step("first sight", 1) // a rate schedule without StartDate fires at once
	step("same time", 0)
	f.clock.Advance(16 * time.Minute)
	step("16 minutes on", 2) // three are due; the per-poll cap is two
	step("catching up", 1)
	step("caught up", 0)

	var want []string
	for k := range 4 {
		want = append(want, start.Add(time.Duration(k)*5*time.Minute).UTC().Format("2006-01-02T15:04:05Z"))
	}
	if got := bodies(msgs); !slices.Equal(got, want) {
		t.Fatalf("fired %v, want %v", got, want)
	}
	for _, m := range msgs {
		if g := m.Attributes["MessageGroupId"]; g != "wf-1" {
			t.Errorf("message group %q, want wf-1", g)
		}
	}
}

func TestSchedulePumpCron(t *testing.T) {
	f := newScheduleFixture(t, SchedulePumpOptions{})
	work := f.res.Queues.Work
	at := f.clock.Now().Add(30 * time.Minute).UTC()
	f.create("daily", fmt.Sprintf("cron(%d %d * * ? *)", at.Minute(), at.Hour()),
		&schedtypes.Target{Arn: aws.String(work.ARN), RoleArn: aws.String(schedulerRole), Input: aws.String("<aws.scheduler.scheduled-time>")},
		schedtypes.ActionAfterCompletionNone)

	f.poll()
	f.clock.Advance(61 * time.Minute)
	f.poll()
	f.clock.Advance(24 * time.Hour)
	f.poll()
	first := at.Truncate(time.Minute)
	want := []string{first.Format("2006-01-02T15:04:05Z"), first.Add(24 * time.Hour).Format("2006-01-02T15:04:05Z")}
	if got := bodies(f.drain(work.URL)); !slices.Equal(got, want) {
		t.Fatalf("fired %v, want %v", got, want)
	}
}

func TestSchedulePumpRun(t *testing.T) {
	f := newScheduleFixture(t, SchedulePumpOptions{Interval: 100 * time.Millisecond})
	work := f.res.Queues.Work
	runPump(t, f.pump.Run)
	due := f.clock.Now().Add(10 * time.Minute).UTC()
	f.create("soon", "at("+due.Format("2006-01-02T15:04:05")+")",
		&schedtypes.Target{Arn: aws.String(work.ARN), RoleArn: aws.String(schedulerRole), Input: aws.String("soon")},
		schedtypes.ActionAfterCompletionDelete)
	time.Sleep(300 * time.Millisecond)
	f.clock.Advance(11 * time.Minute)
	msgs := receiveN(t, f.sqs, work.URL, 1, 10*time.Second, nil)
	if got := bodies(msgs); len(got) != 1 || got[0] != "soon" {
		t.Fatalf("fired %v, want [soon]", got)
	}
}

func TestSchedulePumpDisabledScheduleMissesFires(t *testing.T) {
	f := newScheduleFixture(t, SchedulePumpOptions{})
	work := f.res.Queues.Work
	target := &schedtypes.Target{Arn: aws.String(work.ARN), RoleArn: aws.String(schedulerRole), Input: aws.String("<aws.scheduler.scheduled-time>")}
	f.create("paused", "rate(10 minutes)", target, schedtypes.ActionAfterCompletionNone)
	start := f.clock.Now()
	f.poll()
	if n := len(f.drain(work.URL)); n != 1 {
		t.Fatalf("%d fires at first sight, want 1", n)
	}

	update := func(state schedtypes.ScheduleState) {
		t.Helper()
		_, err := f.sched.UpdateSchedule(context.Background(), &scheduler.UpdateScheduleInput{
			Name:                       aws.String("paused"),
			GroupName:                  aws.String(f.res.SchedulerGroup.Name),
			ScheduleExpression:         aws.String("rate(10 minutes)"),
			ScheduleExpressionTimezone: aws.String("UTC"),
			FlexibleTimeWindow:         &schedtypes.FlexibleTimeWindow{Mode: schedtypes.FlexibleTimeWindowModeOff},
			Target:                     target,
			State:                      state,
		})
		if err != nil {
			t.Fatalf("update to %s: %v", state, err)
		}
	}
	update(schedtypes.ScheduleStateDisabled)
	f.clock.Advance(25 * time.Minute)
	f.poll()
	if msgs := f.drain(work.URL); len(msgs) != 0 {
		t.Fatalf("a disabled schedule fired %v", bodies(msgs))
	}

	update(schedtypes.ScheduleStateEnabled)
	f.poll()
	if msgs := f.drain(work.URL); len(msgs) != 0 {
		t.Fatalf("re-enabling fired the missed times %v", bodies(msgs))
	}
	f.clock.Advance(10 * time.Minute) // 35 minutes after start: the 30-minute fire is due
	f.poll()
	want := []string{start.Add(30 * time.Minute).UTC().Format("2006-01-02T15:04:05Z")}
	if got := bodies(f.drain(work.URL)); !slices.Equal(got, want) {
		t.Fatalf("after re-enabling fired %v, want %v", got, want)
	}
}
