package schedules_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/aws/aws-sdk-go-v2/service/scheduler/types"

	"github.com/maestro-serverless/maestro/localstack"
	"github.com/maestro-serverless/maestro/orchestrator"
	"github.com/maestro-serverless/maestro/resources"
	"github.com/maestro-serverless/maestro/schedules"
	"github.com/maestro-serverless/maestro/triggers"
)

// emulator is the AWS emulator (moto's EventBridge Scheduler, which stores
// schedules but never fires them) every test of the package shares.
var emulator *localstack.Emulator

func TestMain(m *testing.M) {
	os.Exit(localstack.RunWithEmulator(m, func(e *localstack.Emulator) { emulator = e }))
}

const roleARN = "arn:aws:iam::000000000000:role/maestro-test-scheduler"

// fixture is one provisioned stage: its schedule group and work queue, a
// Scheduler client that counts its calls, and a Syncer over them.
type fixture struct {
	client   *scheduler.Client
	calls    *localstack.RequestCounter
	group    string
	queueARN string
	syncer   *schedules.Syncer
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	cfg := emulator.TestConfig(t)
	stage := localstack.RandomStage(t, "s")
	res, err := localstack.Provision(ctx, cfg, resources.ForStage(stage))
	if err != nil {
		t.Fatalf("provision %s: %v", stage, err)
	}
	f := &fixture{calls: localstack.NewRequestCounter(), group: res.SchedulerGroup.Name, queueARN: res.Queues.Work.ARN}
	f.client = scheduler.NewFromConfig(cfg, func(o *scheduler.Options) {
		o.APIOptions = append(o.APIOptions, f.calls.Middleware())
	})
	f.syncer = schedules.New(f.client, f.group, roleARN, f.queueARN)
	return f
}

// stored is what Scheduler holds for one schedule, as GetSchedule reads it.
type stored struct {
	Expression, Timezone string
	Input                string
	TargetARN, RoleARN   string
	State                types.ScheduleState
	Window               types.FlexibleTimeWindowMode
	After                types.ActionAfterCompletion
}

// want is what a Syncer over f must have stored for spec.
func (f *fixture) want(spec orchestrator.ScheduleSpec) stored {
	return stored{Expression: spec.Expression, Timezone: spec.Timezone, Input: spec.Input,
		TargetARN: f.queueARN, RoleARN: roleARN, State: types.ScheduleStateEnabled, Window: types.FlexibleTimeWindowModeOff}
}

func (f *fixture) wantAll(specs ...orchestrator.ScheduleSpec) map[string]stored {
	out := map[string]stored{}
	for _, s := range specs {
		out[s.Name] = f.want(s)
	}
	return out
}

// stored reads every schedule of the group, by name.
func (f *fixture) stored(t *testing.T) map[string]stored {
	t.Helper()
	ctx := context.Background()
	out := map[string]stored{}
	pages := scheduler.NewListSchedulesPaginator(f.client, &scheduler.ListSchedulesInput{GroupName: aws.String(f.group)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			t.Fatalf("list schedules: %v", err)
		}
		for _, s := range page.Schedules {
			got, err := f.client.GetSchedule(ctx, &scheduler.GetScheduleInput{Name: s.Name, GroupName: aws.String(f.group)})
			if err != nil {
				t.Fatalf("get schedule %s: %v", aws.ToString(s.Name), err)
			}
			st := stored{Expression: aws.ToString(got.ScheduleExpression), Timezone: aws.ToString(got.ScheduleExpressionTimezone),
				State: got.State, After: got.ActionAfterCompletion}
			if got.Target != nil {
				st.Input, st.TargetARN, st.RoleARN = aws.ToString(got.Target.Input), aws.ToString(got.Target.Arn), aws.ToString(got.Target.RoleArn)
			}
			if got.FlexibleTimeWindow != nil {
				st.Window = got.FlexibleTimeWindow.Mode
			}
			// A recurring schedule must outlive each firing: Scheduler
			// deletes one with DELETE after its first. Unset reads as NONE.
			if st.After == types.ActionAfterCompletionNone {
				st.After = ""
			}
			out[aws.ToString(s.Name)] = st
		}
	}
	return out
}

// writes counts the calls that changed Scheduler since the last reset.
func (f *fixture) writes() map[string]int64 {
	out := map[string]int64{}
	for k, v := range f.calls.Snapshot() {
		if strings.HasSuffix(k, ".CreateSchedule") || strings.HasSuffix(k, ".UpdateSchedule") || strings.HasSuffix(k, ".DeleteSchedule") {
			out[k[strings.LastIndex(k, ".")+1:]] = v
		}
	}
	return out
}

func spec(wf string, trigger, part int, expr, tz string) orchestrator.ScheduleSpec {
	return orchestrator.ScheduleSpec{Name: triggers.ScheduleName(wf, trigger, part), Expression: expr, Timezone: tz, Input: triggers.FiringInput(wf, trigger)}
}

// TestSyncRoundTrip: successive syncs of one workflow's schedules leave in
// Scheduler exactly the wanted set — names, expressions, time zones,
// target (the work queue, as the Scheduler role, the firing input), an
// enabled state, no flexible window, never deleted after a firing — and
// another workflow's schedules untouched; a sync writes only what changed.
func TestSyncRoundTrip(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	const wf, other = "daily-etl", "other-wf"
	// Another workflow's schedule in the same group, which no sync of wf
	// may touch. (Emulators may ignore NamePrefix.)
	otherSpec := spec(other, 0, 0, "cron(0 0 * * ? *)", "UTC")
	if err := f.syncer.Sync(ctx, triggers.SchedulePrefix(other), []orchestrator.ScheduleSpec{otherSpec}); err != nil {
		t.Fatal(err)
	}

	a0 := spec(wf, 0, 0, "cron(0 10 * * ? *)", "UTC")
	a1 := spec(wf, 1, 0, "cron(30 8 ? * MON-FRI *)", "America/New_York")
	a1b := spec(wf, 1, 1, "cron(30 8 1 * ? *)", "America/New_York")
	a0expr := a0
	a0expr.Expression = "cron(0 11 * * ? *)"
	a1tz := a1
	a1tz.Timezone = "Europe/Berlin"
	a1bInput := a1b
	a1bInput.Input = triggers.FiringInput(wf, 2)

	steps := []struct {
		name       string
		want       []orchestrator.ScheduleSpec
		wantWrites map[string]int64
	}{
		{name: "creates the missing", want: []orchestrator.ScheduleSpec{a0, a1, a1b},
			wantWrites: map[string]int64{"CreateSchedule": 3}},
		{name: "an unchanged set writes nothing", want: []orchestrator.ScheduleSpec{a0, a1, a1b},
			wantWrites: map[string]int64{}},
		{name: "updates expression, time zone and input", want: []orchestrator.ScheduleSpec{a0expr, a1tz, a1bInput},
			wantWrites: map[string]int64{"UpdateSchedule": 3}},
		{name: "updates only what changed", want: []orchestrator.ScheduleSpec{a0, a1tz, a1bInput},
			wantWrites: map[string]int64{"UpdateSchedule": 1}},
		{name: "deletes the unwanted", want: []orchestrator.ScheduleSpec{a0},
			wantWrites: map[string]int64{"DeleteSchedule": 2}},
		{name: "creates and deletes in one sync", want: []orchestrator.ScheduleSpec{a1},
			wantWrites: map[string]int64{"CreateSchedule": 1, "DeleteSchedule": 1}},
		{name: "none wanted", want: nil,
			wantWrites: map[string]int64{"DeleteSchedule": 1}},
		{name: "none wanted again", want: nil,
			wantWrites: map[string]int64{}},
	}
	for _, step := range steps {
		f.calls.Reset()
		if err := f.syncer.Sync(ctx, triggers.SchedulePrefix(wf), step.want); err != nil {
			t.Fatalf("%s: Sync: %v", step.name, err)
		}
		want := f.wantAll(append(slices.Clone(step.want), otherSpec)...)
		if got := f.stored(t); !maps.Equal(got, want) {
			t.Errorf("%s: stored\n%v\nwant\n%v", step.name, got, want)
		}
		if got := f.writes(); !maps.Equal(got, step.wantWrites) {
			t.Errorf("%s: writes %v, want %v", step.name, got, step.wantWrites)
		}
	}
}

// TestSyncRepairsSchedulesChangedElsewhere: a schedule of the prefix that
// someone (or an older deployment) changed in Scheduler is rewritten to the
// wanted form by the next sync.
func TestSyncRepairsSchedulesChangedElsewhere(t *testing.T) {
	const wf = "repaired"
	want := spec(wf, 0, 0, "cron(15 3 * * ? *)", "Asia/Tokyo")
	tests := []struct {
		name   string
		change func(in *scheduler.UpdateScheduleInput)
	}{
		{"disabled", func(in *scheduler.UpdateScheduleInput) { in.State = types.ScheduleStateDisabled }},
		{"expression", func(in *scheduler.UpdateScheduleInput) { in.ScheduleExpression = aws.String("rate(5 minutes)") }},
		{"time zone", func(in *scheduler.UpdateScheduleInput) { in.ScheduleExpressionTimezone = aws.String("UTC") }},
		{"input", func(in *scheduler.UpdateScheduleInput) { in.Target.Input = aws.String(`{"kind":"time_trigger"}`) }},
		{"target", func(in *scheduler.UpdateScheduleInput) {
			in.Target.Arn = aws.String("arn:aws:sqs:us-east-1:000000000000:elsewhere")
		}},
		// A redeployed stack's Scheduler role has a new ARN; schedules
		// still naming the old one would fail to deliver.
		{"role", func(in *scheduler.UpdateScheduleInput) {
			in.Target.RoleArn = aws.String("arn:aws:iam::000000000000:role/old-scheduler")
		}},
		{"flexible window", func(in *scheduler.UpdateScheduleInput) {
			in.FlexibleTimeWindow = &types.FlexibleTimeWindow{Mode: types.FlexibleTimeWindowModeFlexible, MaximumWindowInMinutes: aws.Int32(15)}
		}},
	}
	f := newFixture(t)
	ctx := context.Background()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := f.syncer.Sync(ctx, triggers.SchedulePrefix(wf), []orchestrator.ScheduleSpec{want}); err != nil {
				t.Fatal(err)
			}
			in := &scheduler.UpdateScheduleInput{
				Name: aws.String(want.Name), GroupName: aws.String(f.group),
				ScheduleExpression: aws.String(want.Expression), ScheduleExpressionTimezone: aws.String(want.Timezone),
				FlexibleTimeWindow: &types.FlexibleTimeWindow{Mode: types.FlexibleTimeWindowModeOff},
				State:              types.ScheduleStateEnabled,
				Target:             &types.Target{Arn: aws.String(f.queueARN), RoleArn: aws.String(roleARN), Input: aws.String(want.Input)},
			}
			tt.change(in)
			if _, err := f.client.UpdateSchedule(ctx, in); err != nil {
				t.Fatal(err)
			}
			if got := f.stored(t); maps.Equal(got, f.wantAll(want)) {
				t.Fatalf("the change did not show in Scheduler: %v", got)
			}
			if err := f.syncer.Sync(ctx, triggers.SchedulePrefix(wf), []orchestrator.ScheduleSpec{want}); err != nil {
				t.Fatal(err)
			}
			if got := f.stored(t); !maps.Equal(got, f.wantAll(want)) {
				t.Errorf("after sync: %v, want %v", got, f.wantAll(want))
			}
		})
	}
}

// TestSyncReadsEveryPage: Scheduler lists at most 100 schedules a page
// (moto 50); a sync must delete the stale ones on every page.
func TestSyncReadsEveryPage(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	const wf = "many-triggers"
	var want []orchestrator.ScheduleSpec
	for i := range 120 {
		want = append(want, spec(wf, i, 0, fmt.Sprintf("cron(%d %d * * ? *)", i%60, i/60), "UTC"))
	}
	if err := f.syncer.Sync(ctx, triggers.SchedulePrefix(wf), want); err != nil {
		t.Fatal(err)
	}
	if got := len(f.stored(t)); got != len(want) {
		t.Fatalf("%d schedules stored, want %d", got, len(want))
	}
	f.calls.Reset()
	if err := f.syncer.Sync(ctx, triggers.SchedulePrefix(wf), want[:1]); err != nil {
		t.Fatal(err)
	}
	if got := f.stored(t); !maps.Equal(got, f.wantAll(want[0])) {
		t.Errorf("after syncing one: %d schedules stored, want 1", len(got))
	}
	if n := f.calls.Snapshot()["Scheduler.ListSchedules"]; n < 2 {
		t.Errorf("the sync listed %d page(s): the test no longer covers paging", n)
	}
}

// TestSyncRefusesNamesOutsideThePrefix: a wanted schedule must belong to the
// workflow being synced; one that does not is an error, and nothing is
// written for it.
func TestSyncRefusesNamesOutsideThePrefix(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	stray := spec("someone-else", 0, 0, "cron(0 1 * * ? *)", "UTC")
	err := f.syncer.Sync(ctx, triggers.SchedulePrefix("mine"), []orchestrator.ScheduleSpec{stray})
	if err == nil || !strings.Contains(err.Error(), stray.Name) || !strings.Contains(err.Error(), triggers.SchedulePrefix("mine")) {
		t.Errorf("Sync: %v, want an error naming %s and the prefix", err, stray.Name)
	}
	if got := f.stored(t); len(got) != 0 {
		t.Errorf("stored %v", got)
	}
}

// TestSyncErrorsNameTheCall: a failing Scheduler call fails the sync with
// an error that says which call, wrapping the SDK's error.
func TestSyncErrorsNameTheCall(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	const wf = "failing"
	a := spec(wf, 0, 0, "cron(0 2 * * ? *)", "UTC")
	if err := f.syncer.Sync(ctx, triggers.SchedulePrefix(wf), []orchestrator.ScheduleSpec{a}); err != nil {
		t.Fatal(err)
	}
	b := spec(wf, 1, 0, "cron(0 3 * * ? *)", "UTC")
	refuse := errors.New("refused by the test")
	tests := []struct {
		name    string
		fail    string // the operation that fails
		want    []orchestrator.ScheduleSpec
		wantErr string
	}{
		{"list", "ListSchedules", []orchestrator.ScheduleSpec{a}, "schedules: list " + triggers.SchedulePrefix(wf) + "*"},
		{"get", "GetSchedule", []orchestrator.ScheduleSpec{a}, "schedules: get " + a.Name},
		{"create", "CreateSchedule", []orchestrator.ScheduleSpec{a, b}, "schedules: create " + b.Name},
		{"update", "UpdateSchedule", []orchestrator.ScheduleSpec{{Name: a.Name, Expression: "cron(0 4 * * ? *)", Timezone: "UTC", Input: a.Input}}, "schedules: update " + a.Name},
		{"delete", "DeleteSchedule", nil, "schedules: delete " + a.Name},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := &interleaved{Client: f.client, before: func(op, _ string) error {
				if op == tt.fail {
					return refuse
				}
				return nil
			}}
			err := schedules.New(client, f.group, roleARN, f.queueARN).Sync(ctx, triggers.SchedulePrefix(wf), tt.want)
			if !errors.Is(err, refuse) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Sync: %v, want an error wrapping the refusal, naming %q", err, tt.wantErr)
			}
			if got := f.stored(t); !maps.Equal(got, f.wantAll(a)) {
				t.Errorf("stored %v after a failed sync", got)
			}
		})
	}
}

// interleaved is the emulator's Scheduler with a hook run before each
// schedule call (op, schedule name): it plays a concurrent sync that
// changes Scheduler between a sync's calls, or a refused call.
type interleaved struct {
	*scheduler.Client
	before func(op, name string) error
}

// hooked runs c's hook for op on the schedule name, then, unless the hook
// refuses, the Scheduler call.
func hooked[In, Out any](c *interleaved, op, name string, call func(context.Context, In, ...func(*scheduler.Options)) (Out, error),
	ctx context.Context, in In, opts []func(*scheduler.Options)) (Out, error) {
	if err := c.before(op, name); err != nil {
		var none Out
		return none, err
	}
	return call(ctx, in, opts...)
}

func (c *interleaved) ListSchedules(ctx context.Context, in *scheduler.ListSchedulesInput, opts ...func(*scheduler.Options)) (*scheduler.ListSchedulesOutput, error) {
	return hooked(c, "ListSchedules", "", c.Client.ListSchedules, ctx, in, opts)
}

func (c *interleaved) GetSchedule(ctx context.Context, in *scheduler.GetScheduleInput, opts ...func(*scheduler.Options)) (*scheduler.GetScheduleOutput, error) {
	return hooked(c, "GetSchedule", aws.ToString(in.Name), c.Client.GetSchedule, ctx, in, opts)
}

func (c *interleaved) CreateSchedule(ctx context.Context, in *scheduler.CreateScheduleInput, opts ...func(*scheduler.Options)) (*scheduler.CreateScheduleOutput, error) {
	return hooked(c, "CreateSchedule", aws.ToString(in.Name), c.Client.CreateSchedule, ctx, in, opts)
}

func (c *interleaved) UpdateSchedule(ctx context.Context, in *scheduler.UpdateScheduleInput, opts ...func(*scheduler.Options)) (*scheduler.UpdateScheduleOutput, error) {
	return hooked(c, "UpdateSchedule", aws.ToString(in.Name), c.Client.UpdateSchedule, ctx, in, opts)
}

func (c *interleaved) DeleteSchedule(ctx context.Context, in *scheduler.DeleteScheduleInput, opts ...func(*scheduler.Options)) (*scheduler.DeleteScheduleOutput, error) {
	return hooked(c, "DeleteSchedule", aws.ToString(in.Name), c.Client.DeleteSchedule, ctx, in, opts)
}

// TestSyncRacingAnotherSync: another sync of the same workflow may create,
// update or delete a schedule between this sync's list and its own write
// (Scheduler then answers ConflictException or ResourceNotFoundException);
// the sync still succeeds and leaves the wanted set.
func TestSyncRacingAnotherSync(t *testing.T) {
	const wf = "raced"
	a := spec(wf, 0, 0, "cron(0 5 * * ? *)", "UTC")
	stale := spec(wf, 1, 0, "cron(0 6 * * ? *)", "UTC")
	tests := []struct {
		name    string
		initial []orchestrator.ScheduleSpec
		want    []orchestrator.ScheduleSpec
		// race runs once, just before the sync's first call op.
		op   string
		race func(f *fixture) error
	}{
		{name: "created after the list", want: []orchestrator.ScheduleSpec{a}, op: "CreateSchedule",
			race: func(f *fixture) error {
				// Another sync, of an older definition, got there first.
				old := a
				old.Expression = "cron(0 7 * * ? *)"
				return schedules.New(f.client, f.group, roleARN, f.queueARN).Sync(context.Background(), triggers.SchedulePrefix(wf), []orchestrator.ScheduleSpec{old})
			}},
		{name: "deleted after the list, before its update", initial: []orchestrator.ScheduleSpec{a}, want: []orchestrator.ScheduleSpec{a}, op: "GetSchedule",
			race: func(f *fixture) error { return f.delete(a.Name) }},
		{name: "deleted after the list, as stale", initial: []orchestrator.ScheduleSpec{a, stale}, want: []orchestrator.ScheduleSpec{a}, op: "DeleteSchedule",
			race: func(f *fixture) error { return f.delete(stale.Name) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			ctx := context.Background()
			if err := f.syncer.Sync(ctx, triggers.SchedulePrefix(wf), tt.initial); err != nil {
				t.Fatal(err)
			}
			var once sync.Once
			raced := false
			client := &interleaved{Client: f.client, before: func(op, _ string) error {
				var err error
				if op == tt.op {
					once.Do(func() { raced, err = true, tt.race(f) })
				}
				return err
			}}
			if err := schedules.New(client, f.group, roleARN, f.queueARN).Sync(ctx, triggers.SchedulePrefix(wf), tt.want); err != nil {
				t.Fatalf("Sync: %v", err)
			}
			if !raced {
				t.Fatalf("the sync made no %s call: the race was not played", tt.op)
			}
			if got := f.stored(t); !maps.Equal(got, f.wantAll(tt.want...)) {
				t.Errorf("stored %v, want %v", got, f.wantAll(tt.want...))
			}
		})
	}
}

func (f *fixture) delete(name string) error {
	_, err := f.client.DeleteSchedule(context.Background(), &scheduler.DeleteScheduleInput{Name: aws.String(name), GroupName: aws.String(f.group)})
	return err
}

// TestConcurrentSyncsConverge: duplicate sync messages handled at once (a
// worker's batch, or two workers) end in the wanted set without an error.
func TestConcurrentSyncsConverge(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	const wf = "duplicated"
	var initial, want []orchestrator.ScheduleSpec
	for i := range 8 {
		initial = append(initial, spec(wf, i, 0, "cron(0 1 * * ? *)", "UTC"))
		want = append(want, spec(wf, i+4, 0, fmt.Sprintf("cron(0 %d * * ? *)", i), "UTC"))
	}
	if err := f.syncer.Sync(ctx, triggers.SchedulePrefix(wf), initial); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { errs[i] = f.syncer.Sync(ctx, triggers.SchedulePrefix(wf), want) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("concurrent syncs: %v", err)
	}
	if got := f.stored(t); !maps.Equal(got, f.wantAll(want...)) {
		t.Errorf("stored %v, want %v", got, f.wantAll(want...))
	}
}
