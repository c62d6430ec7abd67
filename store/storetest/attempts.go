package storetest

import (
	"errors"
	"fmt"
	"time"

	"github.com/maestro-serverless/maestro/store"
)

// claimErr describes a claim's error: "done", "held until <ms>", or the
// error.
func claimErr(err error) string {
	var ce *store.ClaimError
	switch {
	case err == nil:
		return "claimed"
	case errors.As(err, &ce) && ce.Done:
		return "done"
	case errors.As(err, &ce):
		return fmt.Sprint("held until ", ce.Until)
	case errors.Is(err, store.ErrNotFound):
		return "not found"
	}
	return err.Error()
}

// claims: a RUNNING attempt is claimed by one worker at a time; a claim
// whose lease passed (strictly) is taken again and hands the next worker
// the outcome its holder recorded; only the holder records one (a holder
// whose lease passed too, until another claims); an attempt no longer
// RUNNING is done.
func claims(h *H) {
	a := h.S.Attempts
	ref := Ref("wf", "s", 1)
	t0 := h.Now()
	claim := func(token string, at time.Time, lease time.Duration) string {
		h.Helper()
		out, err := a.ClaimAttempt(h.Ctx, ref, token, at, at.Add(lease), nil)
		if err == nil && out != nil {
			return "claimed with " + string(out)
		}
		return claimErr(err)
	}
	ms := func(d time.Duration) string { return fmt.Sprint("held until ", t0.Add(d).UnixMilli()) }
	h.Eq(claim("a", t0, time.Minute), "not found", "claim a missing attempt")
	_, err := a.PeekAttempt(h.Ctx, ref)
	h.Is(err, store.ErrNotFound, "peek a missing attempt")
	h.Push("wf")
	h.Start("wf")
	commit := func(v int64, status string) {
		h.Helper()
		h.OK(h.Commit("wf", 1, 1, v, store.Commit{Attempts: []store.Attempt{{StepID: "s", Attempt: 1, Status: status, Body: B(`{}`)}}}), "commit %s", status)
	}
	commit(1, "STARTING")
	h.Eq(claim("a", t0, time.Minute), "done", "claim a STARTING attempt")
	commit(2, "RUNNING")
	h.Is(a.RecordOutcome(h.Ctx, ref, "a", B(`{"x":1}`)), store.ErrClaimLost, "record without a claim")
	h.Eq(claim("a", t0, time.Minute), "claimed", "first claim")
	peek, err := a.PeekAttempt(h.Ctx, ref)
	h.OK(err, "peek")
	h.Eq(peek, store.AttemptPeek{Status: "RUNNING", Lease: t0.Add(time.Minute).UnixMilli()}, "peek a claimed attempt")
	h.Eq(claim("b", t0.Add(30*time.Second), time.Minute), ms(time.Minute), "claim within the lease")
	h.Eq(claim("b", t0.Add(time.Minute), time.Minute), ms(time.Minute), "claim as the lease ends")
	h.Is(a.RecordOutcome(h.Ctx, ref, "b", B(`{"x":1}`)), store.ErrClaimLost, "record by another worker")
	h.OK(a.RecordOutcome(h.Ctx, ref, "a", B(`{"x":2}`)), "record by the holder")
	h.Plain(a.RecordOutcome(h.Ctx, ref, "a", nil), "record a nil outcome")
	h.Eq(claim("b", t0.Add(61*time.Second), time.Minute), `claimed with {"x":2}`, "claim after the lease")
	h.Is(a.RecordOutcome(h.Ctx, ref, "a", B(`{"x":3}`)), store.ErrClaimLost, "record by the former holder")
	h.OK(a.RecordOutcome(h.Ctx, ref, "b", B(`{"x":4}`)), "record by the new holder, any time")
	h.Eq(claim("c", t0.Add(time.Hour), time.Minute), `claimed with {"x":4}`, "claim long after")
	commit(3, "SUCCEEDED")
	h.Eq(claim("d", t0.Add(2*time.Hour), time.Minute), "done", "claim a finished attempt")
	h.Is(a.RecordOutcome(h.Ctx, ref, "c", B(`{}`)), store.ErrClaimLost, "record on a finished attempt")
	peek, _ = a.PeekAttempt(h.Ctx, ref)
	h.Eq(peek, store.AttemptPeek{Status: "SUCCEEDED", Lease: t0.Add(time.Hour + time.Minute).UnixMilli()}, "peek a finished attempt keeps its last lease")
	f, err := a.FinishedAttempts(h.Ctx, []store.AttemptRef{ref})
	h.OK(err, "finished")
	h.Eq(len(f), 0, "a finished attempt's outcome is gone with its end")

	// A commit that claims the attempt for its committer.
	lease := t0.Add(3 * time.Hour)
	h.OK(h.Commit("wf", 1, 1, 4, store.Commit{Attempts: []store.Attempt{{StepID: "s", Attempt: 2, Status: "RUNNING", Body: B(`{}`),
		Claim: "me", Lease: lease.UnixMilli()}}}), "commit a claimed start")
	_, err = a.ClaimAttempt(h.Ctx, Ref("wf", "s", 2), "other", t0.Add(2*time.Hour), lease, nil)
	h.Eq(claimErr(err), fmt.Sprint("held until ", lease.UnixMilli()), "claim an attempt its commit claimed")
	h.OK(a.RecordOutcome(h.Ctx, Ref("wf", "s", 2), "me", B(`{}`)), "the committer records")
}

// startedAttempts: taken once a worker claimed it or it ended; not when
// its commit wrote it RUNNING and no worker claimed it, nor when there is
// no item (a deferred start).
func startedAttempts(h *H) {
	h.Push("wf")
	h.Start("wf")
	h.OK(h.Commit("wf", 1, 1, 1, store.Commit{Attempts: []store.Attempt{
		{StepID: "running", Attempt: 1, Status: "RUNNING", Body: B(`{}`)},
		{StepID: "claimed", Attempt: 1, Status: "RUNNING", Body: B(`{}`)},
		{StepID: "ended", Attempt: 1, Status: "SUCCEEDED", Body: B(`{}`)},
	}}), "commit")
	_, err := h.S.Attempts.ClaimAttempt(h.Ctx, Ref("wf", "claimed", 1), "w", h.Now(), h.Now().Add(time.Minute), nil)
	h.OK(err, "claim")
	refs := []store.AttemptRef{Ref("wf", "running", 1), Ref("wf", "claimed", 1), Ref("wf", "ended", 1), Ref("wf", "deferred", 1), Ref("wf", "claimed", 1)}
	started, err := h.S.Attempts.StartedAttempts(h.Ctx, refs)
	h.OK(err, "started")
	h.Eq(started, map[store.AttemptRef]bool{Ref("wf", "claimed", 1): true, Ref("wf", "ended", 1): true}, "started")
	started, err = h.S.Attempts.StartedAttempts(h.Ctx, nil)
	h.OK(err, "none")
	h.Eq(len(started), 0, "none started")
}

// deferredStarts: an attempt whose start its commit left out is created by
// its first claim as the start says; a commit that ends an attempt no
// worker claimed writes the start's entries (and body, when it writes
// none) first, and a later claim finds it done; a claim of an item
// written without a body gives it the start's.
func deferredStarts(h *H) {
	h.Push("wf")
	h.Start("wf")
	a := h.S.Attempts
	t0 := h.Now()
	start := &store.AttemptStart{Body: B(`{"params":{"a":1}}`), Timeline: Entries(`"CREATED"`, `"RUNNING"`)}
	claim := func(step, token string, at time.Time, st *store.AttemptStart) string {
		h.Helper()
		_, err := a.ClaimAttempt(h.Ctx, Ref("wf", step, 1), token, at, at.Add(time.Minute), st)
		return claimErr(err)
	}
	get := func(step string) string {
		h.Helper()
		att, err := a.GetAttempt(h.Ctx, "wf", 1, 1, step, 1)
		h.OK(err, "attempt %s", step)
		return fmt.Sprintf("%s %s %s", att.Status, att.Body, Timeline(att))
	}
	h.Eq(claim("x", "a", t0, start), "claimed", "first claim of a deferred start")
	h.Eq(get("x"), `RUNNING {"params":{"a":1}} "CREATED","RUNNING"`, "claimed deferred start")
	h.Eq(claim("x", "b", t0.Add(time.Second), start), fmt.Sprint("held until ", t0.Add(time.Minute).UnixMilli()), "second claim")
	end := func(v int64, step string, body []byte) {
		h.Helper()
		h.OK(h.Commit("wf", 1, 1, v, store.Commit{Attempts: []store.Attempt{{StepID: step, Attempt: 1, Status: "STOPPED", Body: body,
			Timeline: Entries(`"STOPPED"`), Start: start}}}), "end %s", step)
	}
	end(1, "x", B(`{"stopped":true}`))
	h.Eq(get("x"), `STOPPED {"stopped":true} "CREATED","RUNNING","STOPPED"`, "a claimed attempt ended")
	end(2, "y", B(`{"stopped":true}`))
	h.Eq(get("y"), `STOPPED {"stopped":true} "CREATED","RUNNING","STOPPED"`, "an unclaimed attempt ended")
	h.Eq(claim("y", "a", t0, start), "done", "a claim after the end")
	end(3, "z", nil)
	h.Eq(get("z"), `STOPPED {"params":{"a":1}} "CREATED","RUNNING","STOPPED"`, "a status-only end of an unclaimed attempt")
	// A rewrite replaces the timeline, the start left aside.
	h.OK(h.Commit("wf", 1, 1, 4, store.Commit{Attempts: []store.Attempt{{StepID: "r", Attempt: 1, Status: "FAILED",
		Timeline: Entries(`"FAILED"`), ReplaceTimeline: true, Start: start}}}), "replace")
	att, _ := a.GetAttempt(h.Ctx, "wf", 1, 1, "r", 1)
	h.Eq([]any{att.Body == nil, Timeline(att)}, []any{true, `"FAILED"`}, "a replacing write takes nothing of the start")
	// An item written RUNNING without a body gets the start's at its claim.
	h.OK(h.Commit("wf", 1, 1, 5, store.Commit{Attempts: []store.Attempt{{StepID: "w", Attempt: 1, Status: "RUNNING", Timeline: Entries(`"RUNNING"`)}}}), "status only")
	h.Eq(claim("w", "a", t0, start), "claimed", "claim")
	h.Eq(get("w"), `RUNNING {"params":{"a":1}} "RUNNING"`, "the claim's start fills the body only")
	_, err := a.ClaimAttempt(h.Ctx, Ref("wf", "v", 1), "a", t0, t0.Add(time.Minute), &store.AttemptStart{})
	h.Plain(err, "a start without a body")
	var ce *store.ClaimError
	h.Eq(errors.As(err, &ce), false, "a start without a body is no ClaimError")
	_, err = a.GetAttempt(h.Ctx, "wf", 1, 1, "v", 1)
	h.Is(err, store.ErrNotFound, "the refused claim wrote nothing")
}

// workerEnds: only the claim's holder writes a RUNNING attempt's end; it
// reads back as a finished attempt (with the entries counted, its claim
// gone), alone among refs in their order; a recorded outcome is one too; a
// decision's rewrite takes the marks off; WakeEnd wakes only an end
// still there.
func workerEnds(h *H) {
	h.Push("wf")
	h.Start("wf")
	a := h.S.Attempts
	t0 := h.Now()
	start := &store.AttemptStart{Body: B(`{"status":"RUNNING"}`), Timeline: Entries(`"CREATED"`, `"RUNNING"`)}
	for _, step := range []string{"a", "b", "c", "d"} {
		_, err := a.ClaimAttempt(h.Ctx, Ref("wf", step, 1), "tok-"+step, t0, t0.Add(time.Minute), start)
		h.OK(err, "claim %s", step)
	}
	end := store.AttemptEnd{Status: "SUCCEEDED", Body: B(`{"status":"SUCCEEDED","outputs":{"x":1}}`), Timeline: Entries(`"FINISHING"`, `"SUCCEEDED"`)}
	h.Is(a.FinishAttempt(h.Ctx, Ref("wf", "a", 1), "tok-b", end, true), store.ErrClaimLost, "an end without the claim")
	h.Is(a.FinishAttempt(h.Ctx, Ref("wf", "zz", 1), "tok-a", end, true), store.ErrClaimLost, "an end of a missing attempt")
	h.OK(a.FinishAttempt(h.Ctx, Ref("wf", "a", 1), "tok-a", end, true), "end a")
	h.Is(a.FinishAttempt(h.Ctx, Ref("wf", "a", 1), "tok-a", end, true), store.ErrClaimLost, "a second end")
	peek, _ := a.PeekAttempt(h.Ctx, Ref("wf", "a", 1))
	h.Eq(peek, store.AttemptPeek{Status: "SUCCEEDED"}, "the end takes the claim off")
	h.OK(a.RecordOutcome(h.Ctx, Ref("wf", "b", 1), "tok-b", B(`{"kind":"step_finished"}`)), "b records its outcome")
	// c records an outcome and then writes its end: both stay.
	h.OK(a.RecordOutcome(h.Ctx, Ref("wf", "c", 1), "tok-c", B(`{"o":"c"}`)), "c records")
	h.OK(a.FinishAttempt(h.Ctx, Ref("wf", "c", 1), "tok-c", store.AttemptEnd{Status: "SUCCEEDED", Body: B(`{}`), Timeline: Entries(`"SUCCEEDED"`)}, false), "end c")
	// Surprising: an end with no entries is not a finished attempt.
	h.OK(a.FinishAttempt(h.Ctx, Ref("wf", "d", 1), "tok-d", store.AttemptEnd{Status: "SUCCEEDED", Body: B(`{}`)}, true), "end d without entries")
	refs := []store.AttemptRef{Ref("wf", "d", 1), Ref("wf", "c", 1), Ref("wf", "b", 1), Ref("wf", "a", 1), Ref("wf", "a", 1), Ref("wf", "missing", 1)}
	fs, err := a.FinishedAttempts(h.Ctx, refs)
	h.OK(err, "finished")
	var got []string
	for _, f := range fs {
		got = append(got, fmt.Sprintf("%s/%d %s %s [%s] outcome=%s n=%d", f.Ref.StepID, f.Ref.Attempt, f.Attempt.Status, f.Attempt.Body,
			Timeline(&f.Attempt), f.Outcome, f.WorkerEntries))
	}
	h.Eq(got, []string{
		`c/1 SUCCEEDED {} ["CREATED","RUNNING","SUCCEEDED"] outcome={"o":"c"} n=1`,
		`b/1 RUNNING {"status":"RUNNING"} ["CREATED","RUNNING"] outcome={"kind":"step_finished"} n=0`,
		`a/1 SUCCEEDED {"status":"SUCCEEDED","outputs":{"x":1}} ["CREATED","RUNNING","FINISHING","SUCCEEDED"] outcome= n=2`,
	}, "finished attempts")
	h.Eq(fs[2].Outcome == nil, true, "an end's outcome is nil")
	fs, err = a.FinishedAttempts(h.Ctx, nil)
	h.OK(err, "none")
	h.Eq(fs != nil && len(fs) == 0, true, "no refs, no finished attempts")

	h.OK(a.WakeEnd(h.Ctx, Ref("wf", "c", 1)), "wake c's end")
	h.OK(a.WakeEnd(h.Ctx, Ref("wf", "b", 1)), "wake an attempt without an end")
	h.OK(a.WakeEnd(h.Ctx, Ref("wf", "missing", 1)), "wake a missing attempt")
	h.Plain(a.FinishAttempt(h.Ctx, Ref("wf", "b", 1), "tok-b", store.AttemptEnd{Status: "SUCCEEDED"}, false), "an end without a body")
	h.TooLarge(a.FinishAttempt(h.Ctx, Ref("wf", "b", 1), "tok-b", store.AttemptEnd{Status: "SUCCEEDED", Body: Random(420_000)}, false),
		"step attempt b", "a large end")

	// A decision rewrites a's end: its entries replace the worker's, the
	// marks go.
	h.OK(h.Commit("wf", 1, 1, 1, store.Commit{Attempts: []store.Attempt{{StepID: "a", Attempt: 1, Status: "FATALLY_FAILED", Body: B(`{"status":"FATALLY_FAILED"}`),
		Timeline: Entries(`"CREATED"`, `"RUNNING"`, `"FATALLY_FAILED"`), ReplaceTimeline: true}}}), "rewrite")
	att, _ := a.GetAttempt(h.Ctx, "wf", 1, 1, "a", 1)
	h.Eq([]string{att.Status, Timeline(att)}, []string{"FATALLY_FAILED", `"CREATED","RUNNING","FATALLY_FAILED"`}, "rewritten")
	// A RUNNING rewrite keeps a recorded outcome; another status drops it.
	h.OK(h.Commit("wf", 1, 1, 2, store.Commit{Attempts: []store.Attempt{{StepID: "b", Attempt: 1, Status: "RUNNING", Timeline: Entries(`"X"`)}}}), "b stays RUNNING")
	fs, _ = a.FinishedAttempts(h.Ctx, refs)
	h.Eq(len(fs), 2, "finished after a RUNNING rewrite")
	h.OK(h.Commit("wf", 1, 1, 3, store.Commit{Attempts: []store.Attempt{{StepID: "b", Attempt: 1, Status: "SUCCEEDED"},
		{StepID: "c", Attempt: 1, Status: "SUCCEEDED"}}}), "b and c applied")
	fs, _ = a.FinishedAttempts(h.Ctx, refs)
	h.Eq(len(fs), 0, "finished after the decision")
	h.OK(a.WakeEnd(h.Ctx, Ref("wf", "c", 1)), "wake an applied end")
}

// finishDeferred: an attempt run unclaimed is written whole, once, as a
// claim and an end would have left it; a second write, or one after a
// claim or a decision's write, loses.
func finishDeferred(h *H) {
	h.Push("wf")
	h.Start("wf")
	a := h.S.Attempts
	t0 := h.Now()
	start := store.AttemptStart{Body: B(`{"status":"RUNNING"}`), Timeline: Entries(`"CREATED"`, `"RUNNING"`)}
	end := store.AttemptEnd{Status: "SUCCEEDED", Body: B(`{"status":"SUCCEEDED"}`), Timeline: Entries(`"FINISHING"`, `"SUCCEEDED"`)}
	_, err := a.ClaimAttempt(h.Ctx, Ref("wf", "twin", 1), "tok", t0, t0.Add(time.Minute), &start)
	h.OK(err, "claim the twin")
	h.OK(a.FinishAttempt(h.Ctx, Ref("wf", "twin", 1), "tok", end, false), "end the twin")
	h.OK(a.FinishDeferredAttempt(h.Ctx, Ref("wf", "a", 1), start, end, false), "written whole")
	twin, _ := a.GetAttempt(h.Ctx, "wf", 1, 1, "twin", 1)
	whole, _ := a.GetAttempt(h.Ctx, "wf", 1, 1, "a", 1)
	twin.StepID = "a"
	h.Eq(*whole, *twin, "written whole as claimed and ended")
	pw, _ := a.PeekAttempt(h.Ctx, Ref("wf", "a", 1))
	pt, _ := a.PeekAttempt(h.Ctx, Ref("wf", "twin", 1))
	h.Eq(pw, pt, "peeks")
	h.Is(a.FinishDeferredAttempt(h.Ctx, Ref("wf", "a", 1), start, end, false), store.ErrClaimLost, "a second write")
	_, err = a.ClaimAttempt(h.Ctx, Ref("wf", "b", 1), "tok-b", t0, t0.Add(time.Minute), &start)
	h.OK(err, "another worker claims b")
	h.Is(a.FinishDeferredAttempt(h.Ctx, Ref("wf", "b", 1), start, end, true), store.ErrClaimLost, "a write over a claim")
	h.OK(h.Commit("wf", 1, 1, 1, store.Commit{Attempts: []store.Attempt{{StepID: "c", Attempt: 1, Status: "STOPPED", Start: &start}}}), "a decision stops c")
	h.Is(a.FinishDeferredAttempt(h.Ctx, Ref("wf", "c", 1), start, end, true), store.ErrClaimLost, "a write after the decision's")
	fs, err := a.FinishedAttempts(h.Ctx, []store.AttemptRef{Ref("wf", "a", 1), Ref("wf", "b", 1), Ref("wf", "c", 1)})
	h.OK(err, "finished")
	h.Eq(len(fs), 1, "finished")
	h.Eq([]any{fs[0].Ref, fs[0].WorkerEntries, len(fs[0].Attempt.Timeline)}, []any{Ref("wf", "a", 1), 2, 4}, "finished a")
	h.OK(a.FinishDeferredAttempt(h.Ctx, Ref("wf", "d", 1), store.AttemptStart{}, store.AttemptEnd{Status: "SUCCEEDED", Body: B(`{}`)}, true), "an end without entries")
	d, _ := a.GetAttempt(h.Ctx, "wf", 1, 1, "d", 1)
	h.Eq(d.Timeline == nil, true, "an attempt without entries has a nil timeline")
	h.Plain(a.FinishDeferredAttempt(h.Ctx, Ref("wf", "e", 1), start, store.AttemptEnd{Status: "SUCCEEDED"}, true), "an end without a body")
	h.TooLarge(a.FinishDeferredAttempt(h.Ctx, Ref("wf", "e", 1), start, store.AttemptEnd{Status: "SUCCEEDED", Body: Random(420_000)}, true),
		"step attempt e", "a large end")
}

// attemptReads: one attempt (0: the latest), a run's attempts in key
// order (step id, then attempt), many by reference.
func attemptReads(h *H) {
	h.Push("wf")
	h.Start("wf")
	a := h.S.Attempts
	var atts []store.Attempt
	for _, s := range []struct {
		step string
		n    int64
	}{{"b", 1}, {"a", 2}, {"a", 1}, {"a-b", 1}, {"a0", 1}, {"B", 1}} {
		atts = append(atts, store.Attempt{StepID: s.step, Attempt: s.n, Status: "RUNNING", Body: B(fmt.Sprintf(`{"%s":%d}`, s.step, s.n)),
			Timeline: Entries(fmt.Sprintf(`"%s/%d"`, s.step, s.n))})
	}
	h.OK(h.Commit("wf", 1, 1, 1, store.Commit{Attempts: atts}), "commit")
	list, err := a.ListAttempts(h.Ctx, "wf", 1, 1)
	h.OK(err, "list")
	var got []string
	for _, at := range list {
		got = append(got, fmt.Sprintf("%s/%d", at.StepID, at.Attempt))
	}
	h.Eq(got, []string{"B/1", "a/1", "a/2", "a-b/1", "a0/1", "b/1"}, "attempts in key order")
	h.Eq([]string{string(list[2].Body), Timeline(&list[2]), list[2].Status}, []string{`{"a":2}`, `"a/2"`, "RUNNING"}, "attempt a/2")
	get := func(step string, n int64) string {
		h.Helper()
		at, err := a.GetAttempt(h.Ctx, "wf", 1, 1, step, n)
		if err != nil {
			return claimErr(err)
		}
		return fmt.Sprintf("%s/%d %s", at.StepID, at.Attempt, at.Body)
	}
	for _, c := range []struct {
		step string
		n    int64
		want string
	}{{"a", 0, `a/2 {"a":2}`}, {"a", 1, `a/1 {"a":1}`}, {"a", 3, "not found"}, {"a", -1, `a/2 {"a":2}`}, {"c", 0, "not found"},
		{"a-", 0, "not found"}, {"a0", 0, `a0/1 {"a0":1}`}} {
		h.Eq(get(c.step, c.n), c.want, "attempt %s/%d", c.step, c.n)
	}
	list, err = a.ListAttempts(h.Ctx, "wf", 1, 2)
	h.OK(err, "list run 2")
	h.Eq(list == nil, true, "no attempts")
	m, err := a.GetAttempts(h.Ctx, []store.AttemptRef{Ref("wf", "a", 1), Ref("wf", "b", 1), Ref("wf", "missing", 1)})
	h.OK(err, "get attempts")
	h.Eq([]any{len(m), string(m[Ref("wf", "a", 1)].Body), m[Ref("wf", "b", 1)].StepID}, []any{2, `{"a":1}`, "b"}, "attempts by reference")
	_, err = a.GetAttempts(h.Ctx, []store.AttemptRef{Ref("wf", "a", 1), Ref("wf", "a", 1)})
	h.Plain(err, "a duplicate reference")
}
