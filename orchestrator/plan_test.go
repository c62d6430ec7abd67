package orchestrator

import (
	"errors"
	"testing"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/store"
)

// planFixture is a started run of a one-step workflow, its graph, and the
// state of the run once it ended (it gives its slot back), with a decision
// that stops a child run.
func planFixture(t *testing.T, r *roundRig) (*store.RunRecord, *engine.Instance, *engine.Instance, *engine.Graph, decisionSet) {
	t.Helper()
	wf := r.push(rigDef("planned", "", rigStep("a", "Titus")))
	resp := r.start(wf)
	rec, before, _ := r.load(wf, resp.WorkflowInstanceID, 1)
	if before.Status != model.WorkflowInProgress {
		t.Fatalf("the run is %s, want IN_PROGRESS", before.Status)
	}
	g, _, err := r.o.Rounds.graph(r.ctx, wf, before.WorkflowVersion)
	if err != nil {
		t.Fatal(err)
	}
	after := *before
	after.Status, after.EndTime = model.WorkflowStopped, r.clock.Now().UnixMilli()
	acc := decisionSet{g: g, commands: []engine.Command{
		engine.StopChild{WorkflowID: "kid", InstanceID: 2, Action: string(model.WorkflowActionStop)},
	}}
	return rec, before, &after, g, acc
}

// TestPlanCommitReadsNothing: the plan stage builds a commit from the
// decisions and the reads gathered before it, touching no store — the
// roles' store here has no aggregate at all, so any read would panic.
func TestPlanCommitReadsNothing(t *testing.T) {
	r := newRoundRig(t)
	rec, before, after, g, acc := planFixture(t, r)
	blindCore := *r.o.Rounds.core
	blindCore.store = Stores{}
	blind := &Rounds{core: &blindCore}
	rd := commitReads{
		touched:  touchedAttempts(&acc, after),
		stopRuns: map[childKey]int64{{"kid", 2}: 3},
		slots:    slotReads{released: true, queueVersion: 7, queued: true, oldestInst: 5, oldestRun: 1},
	}
	c, err := blind.planCommit(r.ctx, planInput{g: g, rec: rec, before: before, after: after, acc: &acc, reads: &rd, now: r.clock.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if err := blind.slotWrites(&c, before, after, rd.slots); err != nil {
		t.Fatal(err)
	}
	if len(c.Wakes) != 1 || c.Wakes[0].WorkflowID != "kid" || c.Wakes[0].InstanceID != 2 || c.Wakes[0].RunID != 3 {
		t.Errorf("the stop goes to %+v, want kid/2's latest run 3", c.Wakes)
	}
	if !c.CheckQueue || c.QueueVersion != 7 || c.SlotDelta != -1 || c.Admit {
		t.Errorf("slot writes: check %v at %d, delta %d, admit %v; want the slot given back on queue version 7", c.CheckQueue, c.QueueVersion, c.SlotDelta, c.Admit)
	}
	if c.WakeOther == nil || c.WakeOther.InstanceID != 5 || c.WakeOther.RunID != 1 {
		t.Errorf("the queued run woken: %+v, want 5/1", c.WakeOther)
	}
	if c.Status != string(model.WorkflowStopped) || c.ExpectV != rec.V {
		t.Errorf("run write: %s at v%d, want STOPPED at v%d", c.Status, c.ExpectV, rec.V)
	}

	// A stop whose child's run was not gathered is a planning error, not a
	// read.
	if _, err := blind.planCommit(r.ctx, planInput{g: g, rec: rec, before: before, after: after, acc: &acc, reads: &commitReads{touched: rd.touched}, now: r.clock.Now()}); err == nil {
		t.Error("planning a stop without its gathered run succeeded")
	}
}

// TestGatherRoundReadsWhatThePlanNeeds: gatherRound reads the latest run of
// each child a decision stops (run 1 for one not stored yet) and the run
// slot state of a run that ends: the queue's version and its oldest
// waiting instance.
func TestGatherRoundReadsWhatThePlanNeeds(t *testing.T) {
	r := newRoundRig(t)
	_, before, after, _, acc := planFixture(t, r)
	reads := r.insts.reads
	rd, err := r.o.Rounds.gatherRound(r.ctx, before, after, &acc, runStrategy{rule: model.RunSequential, limit: 1}, r.clock.Now(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.insts.reads == reads {
		t.Fatal("gatherRound read nothing")
	}
	// A plan again in the same round reads nothing again.
	reads = r.insts.reads
	again, err := r.o.Rounds.gatherRound(r.ctx, before, after, &acc, runStrategy{rule: model.RunSequential, limit: 1}, r.clock.Now(), &rd)
	if err != nil || r.insts.reads != reads || again.slots != rd.slots || again.stopRuns[childKey{"kid", 2}] != 1 {
		t.Errorf("gathered again: %d reads (%v), slots %+v, stop runs %v; want none, the same reads", r.insts.reads-reads, err, again.slots, again.stopRuns)
	}
	if got := rd.stopRuns[childKey{"kid", 2}]; got != 1 {
		t.Errorf("the stopped child's run: %d, want 1 (not stored yet)", got)
	}
	if !rd.slots.released || rd.slots.admitted || rd.slots.queued {
		t.Errorf("slot reads %+v, want a release with nothing queued", rd.slots)
	}

	// An iteration holds no slot: nothing is read for it, and nothing written.
	iter := *after
	iter.Parent = &engine.ParentRef{WorkflowID: "parent", InstanceID: 1, RunID: 1, StepID: "loop", Attempt: 1}
	sr, err := r.o.Rounds.readSlots(r.ctx, before, &iter, runStrategy{}, nil)
	if err != nil || sr != (slotReads{}) {
		t.Errorf("an iteration's slot reads: %+v, %v; want none", sr, err)
	}
	var c store.Commit
	if err := r.o.Rounds.slotWrites(&c, before, &iter, slotReads{released: true, queued: true}); err != nil || c.SlotDelta != 0 || c.WakeOther != nil || c.Dequeue {
		t.Errorf("an iteration's slot writes: %+v, %v; want none", c, err)
	}
}

// TestSlotWritesKeepTheQueueOrder: a run admitted while an older instance
// waits in the queue does not pass it (ErrNoSlot); admitted first in line,
// it takes a slot under the workflow's limit and leaves the queue.
func TestSlotWritesKeepTheQueueOrder(t *testing.T) {
	r := newRoundRig(t)
	before := &engine.Instance{WorkflowID: "w", InstanceID: 4, RunID: 1, Status: model.WorkflowCreated}
	after := &engine.Instance{WorkflowID: "w", InstanceID: 4, RunID: 1, Status: model.WorkflowInProgress, StartTime: 1}
	var c store.Commit
	err := r.o.Rounds.slotWrites(&c, before, after, slotReads{admitted: true, limit: 2, queued: true, oldestInst: 3, oldestRun: 1})
	if !errors.Is(err, store.ErrNoSlot) {
		t.Fatalf("admitted behind instance 3: %v, want ErrNoSlot", err)
	}
	c = store.Commit{}
	if err := r.o.Rounds.slotWrites(&c, before, after, slotReads{admitted: true, limit: 2, queued: true, oldestInst: 9, oldestRun: 1}); err != nil {
		t.Fatal(err)
	}
	if !c.Admit || c.SlotLimit != 2 || c.SlotDelta != 1 || !c.Dequeue || c.WakeOther != nil {
		t.Errorf("admission writes %+v, want a slot taken under limit 2 and the queue item removed", c)
	}
}
