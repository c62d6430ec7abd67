package orchestrator

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/store"
)

// TestRoundBudgetScales: one event whose decision the store counted too
// large is decided again with its budget scaled by the share that fits,
// each bound at least one smaller, down to one start, one end and a worker
// step's start counted whole.
func TestRoundBudgetScales(t *testing.T) {
	b := fullRound()
	if b.events != maxRoundEvents || b.starts != maxStartsPerDecision || b.ends != maxEndsPerDecision || b.light != deferredPerStart {
		t.Fatalf("full round %+v", b)
	}
	if got, _ := b.scaled(100, 200); got != (roundBudget{events: 1, starts: maxStartsPerDecision / 2, ends: maxEndsPerDecision / 2, light: deferredPerStart / 2}) {
		t.Errorf("scaled by half: %+v", got)
	}
	if got, _ := b.scaled(100, 101); got != (roundBudget{events: 1, starts: maxStartsPerDecision - 1, ends: maxEndsPerDecision - 1, light: deferredPerStart - 1}) {
		t.Errorf("scaled by 100/101: %+v, want each bound one smaller", got)
	}
	steps := 0
	for {
		next, ok := b.scaled(100, 101)
		if !ok {
			break
		}
		b = next
		if steps++; steps > maxStartsPerDecision {
			t.Fatal("scaling does not end")
		}
	}
	if b != (roundBudget{events: 1, starts: 1, ends: 1, light: 1}) {
		t.Fatalf("last budget %+v, want one event, one start, one end, a worker step's start counted whole", b)
	}
}

// TestRoundBudgetScalesFromWhatWasSpent: a decision that started two
// steps of a budget of forty is decided again with one start, not with
// thirty-nine (the commit of the same two starts, refused again, twenty
// times over: a start request timed out that way).
func TestRoundBudgetScalesFromWhatWasSpent(t *testing.T) {
	b := fullRound().spent(engine.Spent{Starts: 2})
	if b != (roundBudget{events: maxRoundEvents, starts: 2, ends: 1, light: 1}) {
		t.Fatalf("bounded by two starts: %+v", b)
	}
	next, ok := b.scaled(409600, 430644)
	if !ok || next.starts != 1 {
		t.Fatalf("scaled: %+v %v, want one start", next, ok)
	}
	if _, ok := next.spent(engine.Spent{Starts: 1}).scaled(409600, 430644); ok {
		t.Fatal("one event deciding one step scales no further")
	}
	// Bounds it reached stay as they were.
	if got := fullRound().spent(engine.Spent{Starts: 100, LightStarts: 1000, Ends: 100}); got != fullRound() {
		t.Fatalf("spent past every bound: %+v", got)
	}
}

// TestInlineRunsOnlyWithTimeLeft: a worker runs a step it started itself
// only when a runner here executes its type and its invocation has the
// reserve left; the step it picks leaves the commands, so no work message
// is sent for it, and the others stay.
func TestInlineRunsOnlyWithTimeLeft(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	o := New(Config{Now: func() time.Time { return now }, StepRunReserve: 45 * time.Second})
	runners := map[model.StepType]StepRunner{model.StepType("Http"): nil}

	ctx, cancel := context.WithDeadline(context.Background(), now.Add(44*time.Second))
	defer cancel()
	if o.Worker.runnableHere(ctx, runners) != nil {
		t.Error("44 s left, 45 s reserve: the step must go through the work queue")
	}
	ctx2, cancel2 := context.WithDeadline(context.Background(), now.Add(46*time.Second))
	defer cancel2()
	runnable := o.Worker.runnableHere(ctx2, runners)
	if runnable == nil {
		t.Fatal("46 s left: the worker may run the step")
	}
	if o.Worker.runnableHere(context.Background(), runners) == nil {
		t.Error("no deadline (the local stack): the worker may run the step")
	}

	sleep := engine.RunStep{StepID: "s", Attempt: 1, StepKind: model.KindStep, StepType: model.StepType("Kubernetes")}
	first := engine.RunStep{StepID: "a", Attempt: 1, StepKind: model.KindStep, StepType: model.StepType("Http")}
	second := engine.RunStep{StepID: "b", Attempt: 1, StepKind: model.KindStep, StepType: model.StepType("Http")}
	acc := &decisionSet{commands: []engine.Command{sleep, first, second}}
	in := &inlineRound{runnable: runnable}
	in.pick(acc, &engine.Instance{Status: model.WorkflowInProgress})
	if len(in.chosen) != 2 || in.chosen[0].StepID != "a" || in.chosen[1].StepID != "b" || in.crowd != 2 {
		t.Fatalf("picked %+v (crowd %d), want steps a and b beside two others", in.chosen, in.crowd)
	}
	left := func(i int) string { return acc.commands[i].(engine.RunStep).StepID }
	if len(acc.commands) != 1 || left(0) != "s" {
		t.Errorf("commands left %+v, want the Kubernetes step", acc.commands)
	}
	// Of a crowd, one; of many, maxPicks.
	for _, c := range []struct{ starts, picks int }{{crowdInline, 1}, {crowdInline - 1, maxPicks}} {
		var cmds []engine.Command
		for i := range c.starts {
			cmds = append(cmds, engine.RunStep{StepID: fmt.Sprint("h", i), Attempt: 1, StepKind: model.KindStep, StepType: model.StepType("Http")})
		}
		many := &decisionSet{commands: cmds}
		in.pick(many, &engine.Instance{Status: model.WorkflowInProgress})
		if len(in.chosen) != c.picks || len(many.commands) != c.starts-c.picks {
			t.Errorf("%d starts: picked %d, left %d; want %d picked", c.starts, len(in.chosen), len(many.commands), c.picks)
		}
	}

	// The claim goes on the picked attempt's write, and only if it starts it.
	st := &engine.Instance{WorkflowID: "wf", InstanceID: 1, RunID: 1, Status: model.WorkflowInProgress}
	commit := &store.Commit{Attempts: []store.Attempt{{StepID: "a", Attempt: 1, Status: "RUNNING"}}}
	in.token = "tok"
	if _, ok := in.claim(commit, st, now.Add(time.Minute), first); !ok || commit.Attempts[0].Claim != "tok" || commit.Attempts[0].Lease != now.Add(time.Minute).UnixMilli() {
		t.Errorf("claim not written: %+v", commit.Attempts)
	}
	if _, ok := in.claim(&store.Commit{Attempts: []store.Attempt{{StepID: "a", Attempt: 1, Status: "SUCCEEDED"}}}, st, now, first); ok {
		t.Error("claimed an attempt the commit does not start")
	}
	// An attempt created and started in one instant, written as its claim
	// would write it: the write leaves the commit for the worker's claim.
	started := now.UnixMilli()
	st.Steps = []engine.StepState{{StepID: "a", Attempt: 1, Status: model.StepRunning, CreateTime: started, StartTime: started}}
	ws := workerStart(StepWork{StepRef: StepRef{WorkflowID: "wf", InstanceID: 1, RunID: 1, StepID: "a", Attempt: 1}, StartTime: started})
	commit = &store.Commit{Attempts: []store.Attempt{{StepID: "b", Attempt: 1, Status: "SUCCEEDED"},
		{StepID: "a", Attempt: 1, Status: "RUNNING", Body: ws.Body, Timeline: ws.Timeline}}}
	if p, ok := in.claim(commit, st, now.Add(time.Minute), first); !ok || len(commit.Attempts) != 1 || commit.Attempts[0].StepID != "b" ||
		p.start == nil || p.startTime != started {
		t.Errorf("start not left to the claim: %+v, start %+v at %d", commit.Attempts, p.start, p.startTime)
	}

	// A run that ended runs nothing.
	ended := &inlineRound{runnable: runnable}
	ended.pick(&decisionSet{commands: []engine.Command{first}}, &engine.Instance{Status: model.WorkflowStopped})
	if len(ended.chosen) != 0 {
		t.Error("picked a step of a stopped run")
	}
}
