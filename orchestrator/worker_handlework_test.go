package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/store"
	"github.com/maestro-serverless/maestro/triggers"
)

// TestWorkerHandleWorkRefusesPoison: a message that can never be processed
// — not JSON, no or an unknown kind, a body its kind cannot read, work for
// something that never existed — is ErrPoison (the dead-letter queue),
// never a retry nor a silent drop, and asks for no redelay.
func TestWorkerHandleWorkRefusesPoison(t *testing.T) {
	r := newRoleRig(t)
	r.push(rigChain("poison", 1))
	for _, c := range []struct {
		name, body string
		want       string // in the error
	}{
		{"not JSON", `{`, "decode work message"},
		{"kind not a string", `{"kind": 7}`, "decode work message"},
		{"an array", `[]`, "decode work message"},
		{"no kind", `{}`, `unknown work kind ""`},
		{"unknown kind", `{"kind": "bogus"}`, `unknown work kind "bogus"`},
		{"a firing without trigger_index", `{"kind": "time_trigger", "workflow_id": "poison", "scheduled_time": "2030-01-01T00:00:00Z"}`, "trigger_index is missing"},
		{"a firing without its time", `{"kind": "time_trigger", "workflow_id": "poison", "trigger_index": 0, "scheduled_time": "<aws.scheduler.scheduled-time>"}`, "not an RFC 3339 time"},
		{"a job event that is not JSON of an event", `{"kind": "job_event", "job_event": "nope"}`, "not an EventBridge event"},
		{"a job event without detail-type", `{"kind": "job_event", "job_event": {"source": "aws.ecs"}}`, "not an EventBridge event"},
		{"a cancel_job with no job runner", `{"kind": "cancel_job", "step_kind": "step", "step_type": "Titus", "job": "ecs:1"}`, `no job runner for step type "Titus"`},
		{"a signal never announced", `{"kind": "signal", "signal_name": "never", "signal_seq": 1}`, "signal never/1 does not exist"},
		{"a start_subworkflow without its subworkflow", `{"kind": "start_subworkflow", "workflow_id": "poison", "workflow_instance_id": 1, "workflow_run_id": 1}`, "without its subworkflow"},
		{"a wake of a run that never existed", `{"kind": "wake", "workflow_id": "poison", "workflow_instance_id": 9, "workflow_run_id": 1}`, "run poison/9/1 does not exist"},
	} {
		t.Run(c.name, func(t *testing.T) {
			redelay, err := r.o.Worker.HandleWork(r.ctx, []byte(c.body), rigRunners(&workRunner{}))
			if !errors.Is(err, ErrPoison) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("HandleWork(%s) = %v, want ErrPoison saying %q", c.body, err, c.want)
			}
			if redelay != 0 {
				t.Errorf("redelay %v for a poison message", redelay)
			}
		})
	}
}

// TestWorkerTimerArrivingEarlyIsDelayedAgain: a timer message that comes
// before its time (a wait longer than one SQS delay) asks to be delayed by
// what is left and puts nothing; within half a second of its time it puts
// the TimerFired event in the run's inbox, once however often it comes,
// and its decision ends the Sleep step.
func TestWorkerTimerArrivingEarlyIsDelayedAgain(t *testing.T) {
	r := newRoleRig(t)
	r.push(workDef("nap", "", workStep("s", "Sleep", `"params": {"sleep_seconds": {"type": "LONG", "value": 1200}}`)))
	r.start("nap", StartRequest{})
	var timers []wireWork
	for _, m := range r.runs.sent(t, WorkTimer) {
		if m.Purpose == engine.PurposeSleep {
			timers = append(timers, m)
		}
	}
	if len(timers) != 1 {
		t.Fatalf("the start sent %d sleep timers, want 1", len(timers))
	}
	m := timers[0]
	if m.StepID != "s" || m.Attempt != 1 || m.Purpose != engine.PurposeSleep || !m.FireAt.Equal(rigEpoch.Add(1200*time.Second)) {
		t.Fatalf("timer %+v", m)
	}
	for _, c := range []struct {
		advance time.Duration
		want    time.Duration
	}{
		{0, 1200 * time.Second},
		{15 * time.Minute, 300 * time.Second},
		{299*time.Second + 400*time.Millisecond, 600 * time.Millisecond},
	} {
		r.clock.Advance(c.advance)
		redelay, err := r.work(m, nil)
		if err != nil || redelay != c.want {
			t.Fatalf("at +%v: redelay %v, %v; want %v", r.clock.Now().Sub(rigEpoch), redelay, err, c.want)
		}
		if ids := r.inbox("nap", 1, 1); len(ids) != 0 {
			t.Fatalf("an early timer put %v", ids)
		}
	}
	r.clock.Advance(200 * time.Millisecond) // 400 ms early: due
	for range 2 {
		if redelay, err := r.work(m, nil); err != nil || redelay != 0 {
			t.Fatalf("due timer: redelay %v, %v", redelay, err)
		}
	}
	want := timerEventID("s", 1, engine.PurposeSleep)
	if ids := r.inbox("nap", 1, 1); len(ids) != 1 || ids[0] != want {
		t.Fatalf("inbox %v, want [%s]", ids, want)
	}
	if got := rigStatus(r.decide("nap", 1, 1)); got != "SUCCEEDED s=SUCCEEDED" {
		t.Fatalf("after the timer: %s", got)
	}
}

// TestWorkerBackstopWake: a backstop wake of a run whose events still wait
// hands it to the decider (a decision-queue wake, or a hand-off event when
// that send fails); of a quiet run it does nothing; of a run of a deleted
// workflow it is dropped.
func TestWorkerBackstopWake(t *testing.T) {
	r := newRoleRig(t)
	r.push(rigChain("nudge", 1))
	r.start("nudge", StartRequest{})
	r.disp.take(t)
	wake := wireWork{Kind: WorkWake, WorkflowID: "nudge", InstanceID: 1, RunID: 1}

	if _, err := r.work(wake, nil); err != nil {
		t.Fatal(err)
	}
	if w := r.disp.wakes(t); len(w) != 0 {
		t.Fatalf("a quiet run was handed to the decider: %+v", w)
	}

	r.putUnwoken("nudge", actionEventID("x"), engine.Action{Action: "STOP"})
	if _, err := r.work(wake, nil); err != nil {
		t.Fatal(err)
	}
	if w := r.disp.wakes(t); len(w) != 1 || w[0].WorkflowID != "nudge" || w[0].InstanceID != 1 || w[0].RunID != 1 {
		t.Fatalf("decision-queue wakes %+v, want one of nudge/1/1", w)
	}

	r.disp.fail = errors.New("queue down")
	if _, err := r.work(wake, nil); err != nil {
		t.Fatal(err)
	}
	ids := r.inbox("nudge", 1, 1)
	if len(ids) != 2 || !strings.HasPrefix(ids[1], "j-") {
		t.Fatalf("inbox %v, want the action and a hand-off event", ids)
	}
	r.disp.fail = nil
	if got := rigStatus(r.decide("nudge", 1, 1)); got != "STOPPED t0=STOPPED" {
		t.Fatalf("after the decider: %s", got)
	}

	if _, err := r.o.Definitions.DeleteWorkflow(r.ctx, "nudge"); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []WorkKind{WorkWake, WorkTimer} {
		m := wireWork{Kind: kind, WorkflowID: "nudge", InstanceID: 7, RunID: 1, StepID: "t0", Attempt: 1, Purpose: engine.PurposeRetry}
		if _, err := r.work(m, nil); err != nil && kind == WorkWake {
			t.Errorf("%s of a deleted workflow: %v", kind, err)
		}
	}
}

// rigDefinitions logs the purge's calls.
type rigDefinitions struct {
	DefinitionStore
	mu     sync.Mutex
	purges []string // "deleted/done"
	rearms []int64
}

func (d *rigDefinitions) PurgeWorkflow(ctx context.Context, wf string, budget int) (bool, int, error) {
	done, n, err := d.DefinitionStore.PurgeWorkflow(ctx, wf, budget)
	d.mu.Lock()
	d.purges = append(d.purges, fmt.Sprintf("%d/%v", n, done))
	d.mu.Unlock()
	return done, n, err
}

func (d *rigDefinitions) RearmPurge(ctx context.Context, wf string, round int64, next store.Message) error {
	d.mu.Lock()
	d.rearms = append(d.rearms, round)
	d.mu.Unlock()
	return d.DefinitionStore.RearmPurge(ctx, wf, round, next)
}

// TestWorkerPurgeRounds: a deleted workflow's items go in purge rounds of
// purgeBudget items, each arming the next (round+1) while items are left;
// the id cannot be pushed again until the last round is done, and can be
// after it, its sequences continued.
func TestWorkerPurgeRounds(t *testing.T) {
	defs := &rigDefinitions{}
	r := newRoleRig(t, func(c *Config) {
		defs.DefinitionStore = c.Stores.Definitions
		c.Stores.Definitions = defs
	})
	r.push(strings.Replace(rigChain("purged", 3), `"parallel"`, `{"rule": "parallel", "workflow_concurrency": 100}`, 1))
	runner := &workRunner{}
	const n = 150 // over 3.5 items each: two purge rounds
	for range n {
		r.start("purged", StartRequest{})
	}
	r.pump(rigRunners(runner))
	if len(runner.ran()) != 3*n {
		t.Fatalf("ran %d steps, want %d", len(runner.ran()), 3*n)
	}
	del, err := r.o.Definitions.DeleteWorkflow(r.ctx, "purged")
	if err != nil || del.Status != "DELETING" || del.WorkflowID != "purged" {
		t.Fatalf("delete: %+v, %v", del, err)
	}
	for round := int64(1); ; round++ {
		if round > 10 {
			t.Fatal("the purge does not end")
		}
		_, err := r.o.Definitions.CreateWorkflow(r.ctx, []byte(rigChain("purged", 1)), FormatJSON)
		if rigErrStatus(err) != 409 || !strings.Contains(err.Error(), "being deleted") {
			t.Fatalf("push during the purge: %v", err)
		}
		if _, err := r.work(wireWork{Kind: WorkPurge, WorkflowID: "purged", Round: round}, nil); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if len(defs.rearms) < int(round) {
			break
		}
		if defs.rearms[round-1] != round+1 {
			t.Fatalf("round %d armed round %d", round, defs.rearms[round-1])
		}
	}
	if len(defs.purges) < 2 {
		t.Fatalf("purge rounds %v: want more than one for %d instances", defs.purges, n)
	}
	for i, p := range defs.purges {
		last := i == len(defs.purges)-1
		if want := fmt.Sprintf("%d/false", purgeBudget); !last && p != want {
			t.Errorf("round %d purged %s, want %s", i+1, p, want)
		}
		if last && !strings.HasSuffix(p, "/true") {
			t.Errorf("last round %s is not done", p)
		}
	}
	// Pushed again, the workflow continues its version and instance
	// sequences (its tombstone): no id names two things.
	if _, err := r.o.Runs.GetInstance(r.ctx, "purged", 1); rigErrStatus(err) != 404 {
		t.Errorf("an instance of the purged workflow: %v", err)
	}
	v := r.push(rigChain("purged", 1))
	if v.Metadata.WorkflowVersionID != 2 {
		t.Errorf("pushed again as version %d, want 2", v.Metadata.WorkflowVersionID)
	}
	if resp := r.start("purged", StartRequest{}); resp.WorkflowInstanceID != n+1 {
		t.Errorf("the first instance after the purge is %d, want %d", resp.WorkflowInstanceID, n+1)
	}
	if _, err := r.o.Runs.GetInstance(r.ctx, "purged", 1); rigErrStatus(err) != 404 {
		t.Errorf("a purged instance is back: %v", err)
	}
}

// TestWorkerSyncTriggers: sync_triggers makes the workflow's schedules
// those of its head — one per time trigger of the active version, with the
// firing template as input; none once it is inactive, its time triggers
// disabled, or it is deleted — and restores its signal subscriptions; it
// fails without a schedule store or when the store fails.
func TestWorkerSyncTriggers(t *testing.T) {
	r := newRoleRig(t)
	const wf = "ticking"
	r.push(`{"properties": {"owner": "unit"}, "workflow": {"id": "ticking",
	  "time_triggers": [{"type": "PREDEFINED", "expression": "@hourly", "timezone": "UTC"}],
	  "signal_triggers": [{"definitions": {"tick/go": {}}}],
	  "steps": [{"step": {"id": "s", "type": "NoOp"}}]}}`)
	sync := wireWork{Kind: WorkSyncTriggers, WorkflowID: wf}
	prefix := triggers.SchedulePrefix(wf)
	expect := func(stage string, n int) {
		t.Helper()
		if _, err := r.work(sync, nil); err != nil {
			t.Fatalf("%s: %v", stage, err)
		}
		got, ok := r.sched.get(prefix)
		if !ok || len(got) != n {
			t.Fatalf("%s: schedules %+v (synced %v), want %d", stage, got, ok, n)
		}
		if n == 1 && (got[0].Name != triggers.ScheduleName(wf, 0, 0) || got[0].Input != triggers.FiringInput(wf, 0) || got[0].Expression == "") {
			t.Fatalf("%s: schedule %+v", stage, got[0])
		}
	}
	subscribed := func() bool {
		subs, _, err := r.mem.Signals.Subscribers(r.ctx, "tick/go")
		if err != nil {
			t.Fatal(err)
		}
		return len(subs) == 1 && subs[0].WorkflowID == wf
	}

	expect("active", 1)
	if err := r.mem.Signals.SyncSubscriptions(r.ctx, wf, func(context.Context, *store.WorkflowHead) ([]string, error) { return []string{}, nil }); err != nil {
		t.Fatal(err)
	}
	if subscribed() {
		t.Fatal("the subscription was not removed")
	}
	expect("subscriptions lost", 1)
	if !subscribed() {
		t.Error("sync_triggers did not restore the signal trigger's subscription")
	}

	if _, err := r.o.Definitions.DeactivateWorkflow(r.ctx, wf); err != nil {
		t.Fatal(err)
	}
	expect("inactive", 0)
	if _, err := r.o.Definitions.ActivateVersion(r.ctx, wf, "latest"); err != nil {
		t.Fatal(err)
	}
	expect("active again", 1)
	if _, err := r.o.Definitions.UpdateProperties(r.ctx, wf, []byte(`{"time_trigger_disabled": true}`)); err != nil {
		t.Fatal(err)
	}
	expect("disabled", 0)
	if _, err := r.o.Definitions.UpdateProperties(r.ctx, wf, []byte(`{"time_trigger_disabled": false}`)); err != nil {
		t.Fatal(err)
	}
	expect("enabled", 1)

	r.sched.fail = errors.New("scheduler down")
	if _, err := r.work(sync, nil); err == nil || errors.Is(err, ErrPoison) {
		t.Errorf("a failing schedule store: %v, want a retry", err)
	}
	r.sched.fail = nil

	if _, err := r.o.Definitions.DeleteWorkflow(r.ctx, wf); err != nil {
		t.Fatal(err)
	}
	expect("deleted", 0)
	if subscribed() {
		t.Error("a deleted workflow keeps its subscription")
	}

	bare := newRoleRig(t, func(c *Config) { c.Schedules = nil })
	if _, err := bare.work(sync, nil); err == nil || !strings.Contains(err.Error(), "no schedule store") {
		t.Errorf("without a schedule store: %v", err)
	}
}

// rigFiring is the body a time trigger's schedule delivers.
func rigFiring(wf string, index int, at time.Time) []byte {
	return []byte(strings.Replace(triggers.FiringInput(wf, index), "<aws.scheduler.scheduled-time>", at.UTC().Format(time.RFC3339), 1))
}

// TestWorkerTimeTriggerFiring: a firing starts one TIME instance per
// (trigger, scheduled time) however often it is delivered; a firing ahead
// of its time waits; one of a trigger the version lacks, of an inactive,
// disabled or deleted workflow starts nothing.
func TestWorkerTimeTriggerFiring(t *testing.T) {
	r := newRoleRig(t)
	const wf = "hourly"
	r.push(`{"properties": {"owner": "unit", "run_strategy": "parallel"}, "workflow": {"id": "hourly",
	  "time_triggers": [{"type": "PREDEFINED", "expression": "@hourly", "timezone": "Asia/Tokyo"}],
	  "steps": [{"step": {"id": "s", "type": "NoOp"}}]}}`)
	fire := func(body []byte) time.Duration {
		t.Helper()
		redelay, err := r.o.Worker.HandleWork(r.ctx, body, nil)
		if err != nil {
			t.Fatalf("firing %s: %v", body, err)
		}
		return redelay
	}
	count := func() int {
		t.Helper()
		list, err := r.o.Runs.ListInstances(r.ctx, wf, "", "", 100)
		if err != nil {
			t.Fatal(err)
		}
		return len(list.Instances)
	}
	due := r.clock.Now().Add(-time.Minute)
	for range 3 {
		if redelay := fire(rigFiring(wf, 0, due)); redelay != 0 {
			t.Fatalf("a due firing asks for a redelay of %v", redelay)
		}
	}
	if n := count(); n != 1 {
		t.Fatalf("three deliveries of one firing started %d instances", n)
	}
	v, err := r.o.Runs.GetInstance(r.ctx, wf, 1)
	if err != nil {
		t.Fatal(err)
	}
	if v.Status != "SUCCEEDED" || v.Initiator == nil || v.Initiator.Type != "TIME" || v.Initiator.Timezone != "Asia/Tokyo" ||
		v.Initiator.ScheduledTime != due.Truncate(time.Second).UnixMilli() {
		t.Fatalf("instance %s, initiator %+v", v.Status, v.Initiator)
	}

	if redelay := fire(rigFiring(wf, 0, r.clock.Now().Add(time.Hour))); redelay != time.Hour {
		t.Fatalf("a firing an hour early: redelay %v", redelay)
	}
	fire(rigFiring(wf, 0, due.Add(-time.Hour))) // another scheduled time: another instance
	fire(rigFiring(wf, 3, due))                 // no trigger 3
	if n := count(); n != 2 {
		t.Fatalf("%d instances, want 2", n)
	}

	if _, err := r.o.Definitions.UpdateProperties(r.ctx, wf, []byte(`{"time_trigger_disabled": true}`)); err != nil {
		t.Fatal(err)
	}
	fire(rigFiring(wf, 0, due.Add(-2*time.Hour)))
	if _, err := r.o.Definitions.UpdateProperties(r.ctx, wf, []byte(`{"time_trigger_disabled": false}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := r.o.Definitions.DeactivateWorkflow(r.ctx, wf); err != nil {
		t.Fatal(err)
	}
	fire(rigFiring(wf, 0, due.Add(-3*time.Hour)))
	if n := count(); n != 2 {
		t.Fatalf("a disabled or inactive trigger started instances: %d", n)
	}
	fire(rigFiring("never-pushed", 0, due))
}

// TestWorkerAnnouncesStepSignalOnce: an announce message stores the
// step's signal with a request id of the attempt and the output's index,
// so a redelivery announces nothing more; the signal names the step as
// its source.
func TestWorkerAnnouncesStepSignalOnce(t *testing.T) {
	r := newRoleRig(t)
	r.push(workDef("pub", "", workStep("p", "NoOp", `"signal_outputs": [{"name": "pub/out", "params": {"k": {"type": "STRING", "value": "v"}}}]`)))
	r.start("pub", StartRequest{})
	ann := r.runs.sent(t, WorkAnnounce)
	if len(ann) != 1 || ann[0].SignalName != "pub/out" || ann[0].StepID != "p" {
		t.Fatalf("announce messages %+v", ann)
	}
	for range 2 {
		if _, err := r.work(ann[0], nil); err != nil {
			t.Fatal(err)
		}
	}
	sig, err := r.o.Signals.GetSignal(r.ctx, "pub/out", 0)
	if err != nil {
		t.Fatal(err)
	}
	if sig.SeqID != 1 || fmt.Sprint(sig.Params["k"]) != "v" || sig.RequestID != "step:pub/1/1/p/1/0" {
		t.Fatalf("signal %+v", sig)
	}
	if sig.Source == nil || sig.Source.Kind != "step" || sig.Source.WorkflowID != "pub" || sig.Source.StepID != "p" || sig.Source.Attempt != 1 {
		t.Fatalf("source %+v", sig.Source)
	}
	if _, err := r.o.Signals.GetSignal(r.ctx, "pub/out", 2); rigErrStatus(err) != 404 {
		t.Fatalf("a second instance: %v", err)
	}
}

// TestWorkerStartsSubworkflow: start_subworkflow starts the child instance
// once however often it comes and reports it to the parent, whose step
// then follows the child to its end; a child that cannot start fails the
// step.
func TestWorkerStartsSubworkflow(t *testing.T) {
	r := newRoleRig(t)
	r.push(rigChain("child", 1))
	r.push(workDef("parent", "", `{"subworkflow": {"id": "sub", "params": {"subworkflow_id": {"type": "STRING", "value": "child"}}}}`))
	r.push(workDef("orphan", "", `{"subworkflow": {"id": "sub", "params": {"subworkflow_id": {"type": "STRING", "value": "missing"}}}}`))
	r.start("parent", StartRequest{})
	r.start("orphan", StartRequest{})
	subs := r.runs.sent(t, WorkStartSubworkflow)
	if len(subs) != 2 {
		t.Fatalf("start_subworkflow messages %+v", subs)
	}
	for range 2 {
		if _, err := r.work(subs[0], nil); err != nil {
			t.Fatal(err)
		}
	}
	if ids := r.inbox("parent", 1, 1); len(ids) != 1 || ids[0] != childStartedEventID("sub", 1) {
		t.Fatalf("parent inbox %v", ids)
	}
	list, err := r.o.Runs.ListInstances(r.ctx, "child", "", "", 10)
	if err != nil || len(list.Instances) != 1 {
		t.Fatalf("children %+v, %v", list, err)
	}
	child, err := r.o.Runs.GetInstance(r.ctx, "child", 1)
	if err != nil || child.Initiator == nil || child.Initiator.Type != "SUBWORKFLOW" || child.Initiator.Parent == nil ||
		child.Initiator.Parent.WorkflowID != "parent" || child.Initiator.Parent.StepID != "sub" {
		t.Fatalf("child %+v, %v", child, err)
	}
	r.decide("parent", 1, 1)
	if got := r.step("parent", 1, 1, "sub").Child; got == nil || got.WorkflowID != "child" || got.InstanceID != 1 {
		t.Fatalf("the parent's step knows its child as %+v", got)
	}
	r.pump(rigRunners(&workRunner{}))
	if got := rigStatus(r.state("parent", 1, 1)); got != "SUCCEEDED sub=SUCCEEDED" {
		t.Errorf("parent after its child: %s", got)
	}

	if _, err := r.work(subs[1], nil); err != nil {
		t.Fatal(err)
	}
	if got := rigStatus(r.decide("orphan", 1, 1)); !strings.HasPrefix(got, "FAILED sub=") || strings.Contains(got, "RUNNING") {
		t.Errorf("a subworkflow that cannot start: %s", got)
	}
}

// TestWorkerSweepMessageRunsTheSweeper: a sweep message re-drives a run
// whose inbox event waited past the sweep time (its wake was lost).
func TestWorkerSweepMessageRunsTheSweeper(t *testing.T) {
	r := newRoleRig(t)
	r.push(rigChain("swept", 1))
	r.start("swept", StartRequest{})
	r.disp.take(t)
	r.putUnwoken("swept", actionEventID("lost-wake"), engine.Action{Action: "STOP"})
	if _, err := r.work(wireWork{Kind: WorkSweep}, nil); err != nil {
		t.Fatal(err)
	}
	if st := r.state("swept", 1, 1); st.Status != model.WorkflowInProgress {
		t.Fatalf("swept before the event was due: %s", st.Status)
	}
	r.clock.Advance(store.DefaultEventSweepAfter + DefaultSweepGrace + time.Second)
	if _, err := r.work(wireWork{Kind: WorkSweep}, nil); err != nil {
		t.Fatal(err)
	}
	r.pump(nil)
	if got := rigStatus(r.state("swept", 1, 1)); got != "STOPPED t0=STOPPED" {
		t.Errorf("after the sweep: %s", got)
	}
}
