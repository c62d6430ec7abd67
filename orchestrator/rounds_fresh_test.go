package orchestrator

import (
	"errors"
	"testing"

	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/store"
)

// TestFreshRunIsCreatedStarted: a start decides the run's first round in
// memory and commits it with the instance's creation (freshSource): one
// commit that creates the summary and the run at version 1, already in
// progress, takes a run slot, and leaves no start event in the inbox.
func TestFreshRunIsCreatedStarted(t *testing.T) {
	r := newRoundRig(t)
	wf := r.push(rigDef("fresh", "", rigStep("a", "Titus", "b"), rigStep("b", "Titus")))
	resp, err := r.o.Runs.StartWorkflow(r.ctx, wf, "active", StartRequest{RequestID: "req-1"})
	if err != nil {
		t.Fatal(err)
	}
	if !resp.Created || resp.WorkflowInstanceID != 1 || resp.Status != string(model.WorkflowInProgress) {
		t.Fatalf("start: %+v", resp)
	}
	cs := r.runs.committed()
	if len(cs) != 1 {
		t.Fatalf("%d commits, want the creation's one", len(cs))
	}
	c := cs[0]
	if c.Create == nil || c.Create.RequestID != "req-1" || c.ExpectV != 0 || !c.Admit || c.SlotDelta != 1 || c.Dequeue {
		t.Errorf("creation commit: create %+v, v%d, admit %v delta %d dequeue %v", c.Create, c.ExpectV, c.Admit, c.SlotDelta, c.Dequeue)
	}
	if len(rigWorkOf(t, c.Outbox, WorkRunStep)) != 1 {
		t.Errorf("outbox %+v: want a's run_step", c.Outbox)
	}
	rec, st, pending := r.load(wf, 1, 1)
	if rec.V != 1 || statuses(st) != "a=RUNNING b=NOT_CREATED" || len(pending) != 0 {
		t.Errorf("run v%d %s, pending %v", rec.V, statuses(st), pending)
	}
	if got := r.instanceStatus(wf, 1); got != string(model.WorkflowInProgress) {
		t.Errorf("summary %s", got)
	}
	if holding, queued, err := r.ms.Instances.ActiveRuns(r.ctx, wf, 0); err != nil || len(holding) != 1 || len(queued) != 0 {
		t.Errorf("slots: holding %v queued %v, %v", holding, queued, err)
	}
	again, err := r.o.Runs.StartWorkflow(r.ctx, wf, "active", StartRequest{RequestID: "req-1"})
	if err != nil || again.Created || again.WorkflowInstanceID != 1 || len(r.runs.committed()) != 1 {
		t.Errorf("the same request again: %+v, %v, %d commits", again, err, len(r.runs.committed()))
	}
}

// TestFreshRunLosesItsRequestID: a concurrent start with the same request
// id that commits first makes the fresh commit fail (ErrRequestTaken):
// the start answers with the winner's instance, and its own reserved id
// stays unused.
func TestFreshRunLosesItsRequestID(t *testing.T) {
	r := newRoundRig(t)
	wf := r.push(rigDef("race", `{"rule":"parallel","workflow_concurrency":5}`, rigStep("a", "Titus")))
	var winner *StartResponse
	r.runs.failCommit = func(n int, c store.Commit) error {
		if n == 1 {
			// The duplicate arrives while this start decides.
			var err error
			if winner, err = r.o.Runs.StartWorkflow(r.ctx, wf, "active", StartRequest{RequestID: "dup"}); err != nil {
				t.Errorf("the other start: %v", err)
			}
		}
		return nil
	}
	resp, err := r.o.Runs.StartWorkflow(r.ctx, wf, "active", StartRequest{RequestID: "dup"})
	if err != nil {
		t.Fatal(err)
	}
	if winner == nil || !winner.Created || winner.WorkflowInstanceID != 2 {
		t.Fatalf("the winner: %+v", winner)
	}
	if resp.Created || resp.WorkflowInstanceID != winner.WorkflowInstanceID || resp.WorkflowUUID != winner.WorkflowUUID {
		t.Errorf("the loser's answer %+v, want the winner's instance", resp)
	}
	if _, err := r.ms.Instances.GetInstance(r.ctx, wf, 1); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the loser's instance 1: %v, want none written", err)
	}
	if n := len(r.runs.committed()); n != 1 {
		t.Errorf("%d commits went through, want the winner's", n)
	}
}

// TestFreshRunFallsBackToTheGeneralPath: a fresh commit that fails for any
// other reason writes nothing; the start creates the run waiting, with its
// start event in its inbox, and decides it through Process — which retries
// what the fresh round returned raw.
func TestFreshRunFallsBackToTheGeneralPath(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"conflict", store.ErrConflict},
		{"too many items", store.ErrTooManyItems},
		{"too large", &store.ItemTooLargeError{Item: "run state", Bytes: 500_000}},
		{"anything", errors.New("throttled")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRoundRig(t)
			wf := r.push(rigDef("general", "", rigStep("a", "Titus")))
			r.failNext(1, tc.err)
			resp := r.start(wf)
			if !resp.Created || resp.WorkflowInstanceID != 1 || resp.Status != string(model.WorkflowInProgress) {
				t.Fatalf("start: %+v", resp)
			}
			cs := r.runs.committed()
			if len(cs) != 1 || cs[0].Create != nil || cs[0].ExpectV != 1 {
				t.Fatalf("commits %d (create %v, v%d): want Process's round over the created run", len(cs), cs[0].Create != nil, cs[0].ExpectV)
			}
			if cs[0].Consumed[0] != startEventID || !cs[0].Dequeue || !cs[0].Admit {
				t.Errorf("the round consumed %v, dequeue %v, admit %v", cs[0].Consumed, cs[0].Dequeue, cs[0].Admit)
			}
			rec, st, pending := r.load(wf, 1, 1)
			if rec.V != 2 || statuses(st) != "a=RUNNING" || len(pending) != 0 {
				t.Errorf("run v%d %s, pending %v", rec.V, statuses(st), pending)
			}
		})
	}
}

// TestFreshRunWithMoreRoundsGoesOn: a first decision too long for one
// round commits with the creation and leaves a Continue; the start goes on
// with Process at once, and answers with the state after it.
func TestFreshRunWithMoreRoundsGoesOn(t *testing.T) {
	r := newRoundRig(t)
	wf := r.push(wideLoop("wide", 60))
	resp := r.start(wf)
	cs := r.runs.committed()
	if len(cs) < 2 || cs[0].Create == nil || len(cs[0].NewEvents) != 1 || cs[0].NewEvents[0].WakeAfter != backstopWake {
		t.Fatalf("%d commits; the first's new events %+v: want the creation with a delayed Continue", len(cs), cs[0].NewEvents)
	}
	if resp.Status != string(model.WorkflowSucceeded) {
		t.Errorf("start answered %s, want the state after the later rounds", resp.Status)
	}
	if st := r.state(wf, 1, 1); st.Status != model.WorkflowSucceeded || len(r.pending(wf, 1, 1)) != 0 {
		t.Errorf("run %s, pending %v", st.Status, r.pending(wf, 1, 1))
	}
}
