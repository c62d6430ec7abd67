package storetest

import (
	"time"

	"github.com/maestro-serverless/maestro/store"
)

// taskTokens: a token is stored once by its hash and names its attempt;
// it is used once, its report put in the run's inbox in the same write;
// an unknown token counts as used.
func taskTokens(h *H) {
	tk := h.S.Tasks
	h.Push("wf")
	h.Start("wf")
	ref := Ref("wf", "s", 1)
	hash := store.HashTaskToken("the-token")
	_, err := tk.GetTaskToken(h.Ctx, hash)
	h.Is(err, store.ErrNotFound, "a token never stored")
	created := h.Ms()
	h.OK(tk.PutTaskToken(h.Ctx, hash, ref), "put")
	h.Plain(tk.PutTaskToken(h.Ctx, hash, Ref("wf", "other", 1)), "put the same hash again")
	got, err := tk.GetTaskToken(h.Ctx, hash)
	h.OK(err, "get")
	h.Eq(*got, store.TaskToken{Ref: ref, Created: created}, "stored token")
	h.Clock.Add(time.Second)
	ev := store.Event{ID: "k-s-1", Body: B(`{"kind":"step_finished"}`)}
	h.OK(tk.UseTaskToken(h.Ctx, hash, "success", ref, ev), "use")
	got, _ = tk.GetTaskToken(h.Ctx, hash)
	h.Eq(*got, store.TaskToken{Ref: ref, Created: created, Used: h.Ms(), Result: "success"}, "used token")
	h.Is(tk.UseTaskToken(h.Ctx, hash, "failure", ref, store.Event{ID: "k-s-1b", Body: B(`{}`)}), store.ErrTaskTokenUsed, "a second use")
	h.Is(tk.UseTaskToken(h.Ctx, store.HashTaskToken("unknown"), "success", ref, store.Event{ID: "k-x", Body: B(`{}`)}), store.ErrTaskTokenUsed, "an unknown token")
	h.Eq(h.Events("wf", 1, 1), []string{`0-start={"kind":"start"}`, `k-s-1={"kind":"step_finished"}`}, "inbox: the first use's report only")
	due := h.DueAll(h.Now().Add(time.Hour))
	h.Eq(len(due), 2, "the report is in the sweep index")
	hash2 := store.HashTaskToken("t2")
	h.OK(tk.PutTaskToken(h.Ctx, hash2, ref), "put t2")
	h.Plain(tk.UseTaskToken(h.Ctx, hash2, "success", ref, store.Event{ID: "nil"}), "a report without a body")
	got, _ = tk.GetTaskToken(h.Ctx, hash2)
	h.Eq(got.Used, int64(0), "a refused use leaves the token unused")
}

// waitForTask: only the claim's holder hands a RUNNING attempt over; the
// attempt then waits (no claim takes it), the job names the token, the
// event is in the inbox; a retry whose event is there already writes
// nothing and is no error.
func waitForTask(h *H) {
	tk, a := h.S.Tasks, h.S.Attempts
	h.Push("wf")
	h.Start("wf")
	t0 := h.Now()
	h.OK(h.Commit("wf", 1, 1, 1, store.Commit{Consumed: []string{"0-start"}, Attempts: []store.Attempt{
		{StepID: "s", Attempt: 1, Status: "RUNNING", Body: B(`{}`)}, {StepID: "t", Attempt: 1, Status: "RUNNING", Body: B(`{}`)},
		{StepID: "u", Attempt: 1, Status: "SUCCEEDED", Body: B(`{}`)}}}), "commit")
	for _, step := range []string{"s", "t"} {
		_, err := a.ClaimAttempt(h.Ctx, Ref("wf", step, 1), "worker", t0, t0.Add(time.Minute), nil)
		h.OK(err, "claim %s", step)
	}
	hash := store.HashTaskToken("token")
	ev := store.Event{ID: "w-s-1", Body: B(`{"kind":"task_waiting"}`), Covered: true}
	h.Is(tk.WaitForTask(h.Ctx, Ref("wf", "s", 1), "another", hash, "ecs:1", ev), store.ErrClaimLost, "a wait without the claim")
	_, err := tk.GetJob(h.Ctx, "ecs:1")
	h.Is(err, store.ErrNotFound, "the refused wait's job")
	h.Eq(h.Events("wf", 1, 1), []string{}, "the refused wait's event")
	h.OK(tk.WaitForTask(h.Ctx, Ref("wf", "s", 1), "worker", hash, "ecs:1", ev), "wait")
	job, err := tk.GetJob(h.Ctx, "ecs:1")
	h.OK(err, "job")
	h.Eq(job, hash, "the job names the token")
	peek, _ := a.PeekAttempt(h.Ctx, Ref("wf", "s", 1))
	h.Eq(peek, store.AttemptPeek{Status: "RUNNING", Lease: t0.Add(time.Minute).UnixMilli(), Waiting: true}, "a waiting attempt")
	h.Eq(h.Events("wf", 1, 1), []string{`w-s-1={"kind":"task_waiting"}`}, "the wait's event")
	h.Eq(len(h.DueAll(h.Now().Add(time.Hour))), 0, "a covered event is not in the sweep index")
	h.OK(tk.WaitForTask(h.Ctx, Ref("wf", "s", 1), "worker", hash, "ecs:1", ev), "the same wait again")
	_, err = a.ClaimAttempt(h.Ctx, Ref("wf", "s", 1), "late", t0.Add(2*time.Minute), t0.Add(3*time.Minute), nil)
	h.Eq(claimErr(err), "done", "a claim of a waiting attempt")
	started, _ := a.StartedAttempts(h.Ctx, []store.AttemptRef{Ref("wf", "s", 1)})
	h.Eq(started[Ref("wf", "s", 1)], true, "a waiting attempt is started")

	// Surprising: a wait whose event is in the inbox already is taken for
	// a retry: no error, and nothing written.
	h.OK(h.S.Runs.PutEvent(h.Ctx, "wf", 1, 1, store.Event{ID: "w-t-1", Body: B(`{}`)}), "the event first")
	h.OK(tk.WaitForTask(h.Ctx, Ref("wf", "t", 1), "worker", hash, "", store.Event{ID: "w-t-1", Body: B(`{}`)}), "a wait whose event is there")
	peek, _ = a.PeekAttempt(h.Ctx, Ref("wf", "t", 1))
	h.Eq(peek.Waiting, false, "the attempt does not wait")
	h.Is(tk.WaitForTask(h.Ctx, Ref("wf", "u", 1), "worker", hash, "", store.Event{ID: "w-u-1", Body: B(`{}`)}), store.ErrClaimLost, "a wait on an ended attempt")
	h.Is(tk.WaitForTask(h.Ctx, Ref("wf", "v", 1), "worker", hash, "", store.Event{ID: "w-v-1", Body: B(`{}`)}), store.ErrClaimLost, "a wait on a missing attempt")
	h.OK(tk.WaitForTask(h.Ctx, Ref("wf", "t", 1), "worker", hash, "", store.Event{ID: "w-t-2", Body: B(`{}`)}), "a wait without a job")
	peek, _ = a.PeekAttempt(h.Ctx, Ref("wf", "t", 1))
	h.Eq(peek.Waiting, true, "the attempt waits")
	_, err = tk.GetJob(h.Ctx, "")
	h.Is(err, store.ErrNotFound, "no job")
	// An attempt ended by its decision keeps its wait mark.
	h.OK(h.Commit("wf", 1, 1, 2, store.Commit{Attempts: []store.Attempt{{StepID: "s", Attempt: 1, Status: "SUCCEEDED"}}}), "end s")
	peek, _ = a.PeekAttempt(h.Ctx, Ref("wf", "s", 1))
	h.Eq(peek, store.AttemptPeek{Status: "SUCCEEDED", Lease: t0.Add(time.Minute).UnixMilli(), Waiting: true}, "an ended attempt that waited")
}
