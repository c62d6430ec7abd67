package orchestrator

import (
	"context"
	"testing"

	"github.com/maestro-serverless/maestro/store"
)

// brokenStarted is an attempt store whose StartedAttempts fails.
type brokenStarted struct{ AttemptStore }

func (brokenStarted) StartedAttempts(context.Context, []store.AttemptRef) (map[store.AttemptRef]bool, error) {
	return nil, errRigThrottled
}

// TestBackstopsNeeded: the stream router's backstop copy of a step its
// committer dispatched is needed until a worker claimed the attempt or it
// ended; any other message is always needed, and so is every one when
// the attempts cannot be read.
func TestBackstopsNeeded(t *testing.T) {
	r := newRoleRig(t)
	r.push(workDef("backstop", "", workStep("a", "Titus", ""), workStep("b", "Titus", ""), workStep("c", "Titus", "")))
	r.start("backstop", StartRequest{})
	byStep := map[string]wireWork{}
	for _, m := range r.disp.take(t) {
		byStep[m.StepID] = m
	}
	if _, err := r.work(byStep["a"], rigRunners(&workRunner{})); err != nil { // ran and ended
		t.Fatal(err)
	}
	b := byStep["b"].step(t)
	ref := b.Ref()
	now := r.clock.Now()
	if _, err := r.mem.Attempts.ClaimAttempt(r.ctx, ref, "tok", now, now.Add(DefaultClaimLease), workerStart(b)); err != nil {
		t.Fatal(err) // claimed, still running
	}
	work := func(m wireWork) store.Message {
		return store.Message{Queue: store.QueueWork, Body: string(mustJSON(m))}
	}
	msgs := []store.Message{
		work(byStep["a"]), work(byStep["b"]), work(byStep["c"]),
		work(wireWork{Kind: WorkTimer, WorkflowID: "backstop", InstanceID: 1, RunID: 1, StepID: "a", Attempt: 1}),
		{Queue: store.QueueWork, Body: "not json"},
		store.WakeMessageOf(store.Wake{WorkflowID: "backstop", InstanceID: 1, RunID: 1}),
	}
	needed, err := BackstopsNeeded(r.ctx, r.mem.Attempts, msgs)
	if err != nil || rigJSON(needed) != "[false,false,true,true,true,true]" {
		t.Errorf("needed %v %v; want a (ended) and b (claimed) not, the rest", needed, err)
	}
	needed, err = BackstopsNeeded(r.ctx, brokenStarted{r.mem.Attempts}, msgs)
	if err == nil || rigJSON(needed) != "[true,true,true,true,true,true]" {
		t.Errorf("the attempts unreadable: %v %v", needed, err)
	}
	if needed, err := BackstopsNeeded(r.ctx, brokenStarted{r.mem.Attempts}, msgs[3:]); err != nil || rigJSON(needed) != "[true,true,true]" {
		t.Errorf("no run_step among them, nothing read: %v %v", needed, err)
	}
}
