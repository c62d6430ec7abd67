package storetest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/store"
)

// commitIsConditional: a commit applies on the version it read and only
// then; consumed events go, new ones come; a lone run item is as
// conditional as a transaction; a state that is not a JSON object is
// refused; a state kept whole reads back as committed.
func commitIsConditional(h *H) {
	h.Push("wf")
	h.Start("wf")
	at := h.Ms()
	c := store.Commit{State: B(`{"s":1}`), Consumed: []string{"0-start"}, NewEvents: []store.Event{{ID: "n1", Body: B(`{"n":1}`)}},
		Instance: &store.InstanceUpdate{RunID: 1, Status: "IN_PROGRESS", StartTime: at, ModifyTime: at}}
	stale := c
	stale.State = B(`{"s":"stale"}`)
	h.OK(h.Commit("wf", 1, 1, 1, c), "commit at v1")
	h.Is(h.Commit("wf", 1, 1, 1, stale), store.ErrConflict, "a second commit at v1")
	run, evs := h.Load("wf", 1, 1)
	h.Eq([]any{run.V, run.Status, string(run.State), EventIDs(evs)}, []any{int64(2), "IN_PROGRESS", `{"s":1}`, []string{"n1"}}, "run after the commit")
	inst, _ := h.S.Instances.GetInstance(h.Ctx, "wf", 1)
	h.Eq([]any{inst.Status, inst.StartTime, inst.ModifyTime}, []any{"IN_PROGRESS", at, at}, "instance after the commit")

	// The run item alone.
	h.OK(h.Commit("wf", 1, 1, 2, store.Commit{State: B(`{ "s" : 2 }`)}), "lone commit")
	h.Is(h.Commit("wf", 1, 1, 2, store.Commit{State: B(`{"s":3}`)}), store.ErrConflict, "lone commit at a stale version")
	h.Is(h.Commit("wf", 1, 1, 9, store.Commit{State: B(`{"s":3}`)}), store.ErrConflict, "lone commit at a future version")
	run, _ = h.Load("wf", 1, 1)
	h.Eq([]any{run.V, string(run.State)}, []any{int64(3), `{ "s" : 2 }`}, "a state kept whole reads back as committed")

	// A run that does not exist.
	for _, v := range []int64{0, 1} {
		h.Is(h.Commit("wf", 99, 1, v, store.Commit{}), store.ErrConflict, "commit a missing run at v%d", v)
		h.Is(h.Commit("wf", 99, 1, v, store.Commit{NewEvents: []store.Event{{ID: "x", Body: B(`{}`)}}}), store.ErrConflict, "commit a missing run with an event at v%d", v)
	}
	_, _, err := h.S.Runs.LoadRun(h.Ctx, "wf", 99, 1)
	h.Is(err, store.ErrNotFound, "the missing run")

	// Refused states.
	for _, st := range []string{"not json", `[1]`, `{"steps":3}`, ""} {
		h.Plain(h.Commit("wf", 1, 1, 3, store.Commit{State: B(st)}), "state %q", st)
	}
	h.OK(h.Commit("wf", 1, 1, 3, store.Commit{State: B(`null`)}), "a null state")
	run, _ = h.Load("wf", 1, 1)
	h.Eq([]any{run.V, string(run.State)}, []any{int64(4), "null"}, "a null state")
	h.OK(h.Commit("wf", 1, 1, 4, store.Commit{Instance: &store.InstanceUpdate{RunID: 1, Status: "X"}}), "update of the summary")
	inst, _ = h.S.Instances.GetInstance(h.Ctx, "wf", 1)
	h.Eq([]any{inst.Status, inst.StartTime}, []any{"X", int64(0)}, "the summary's fields are the update's")
}

// concurrentCommits: of commits raced at the same version, exactly one
// wins.
func concurrentCommits(h *H) {
	h.Push("wf")
	h.Start("wf")
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = h.Commit("wf", 1, 1, 1, store.Commit{State: B(fmt.Sprintf(`{"by":%d}`, i)), Consumed: []string{"0-start"},
				NewEvents: []store.Event{{ID: fmt.Sprint("by-", i), Body: B(`{}`)}}})
		}()
	}
	wg.Wait()
	won := -1
	for i, err := range errs {
		if err == nil {
			if won >= 0 {
				h.Errorf("commits %d and %d both won", won, i)
			}
			won = i
			continue
		}
		h.Is(err, store.ErrConflict, "losing commit %d", i)
	}
	if won < 0 {
		h.Fatal("no commit won")
	}
	run, evs := h.Load("wf", 1, 1)
	h.Eq([]any{run.V, string(run.State), EventIDs(evs)}, []any{int64(2), fmt.Sprintf(`{"by":%d}`, won), []string{fmt.Sprint("by-", won)}}, "the winner's commit")
}

// bigCommit is a commit that writes every kind of item a commit writes.
func bigCommit(h *H, permitV int64) store.Commit {
	var timeline []store.TimelineItem
	for i := int64(1); i <= 9; i++ {
		timeline = append(timeline, store.TimelineItem{Seq: i, Body: B(fmt.Sprintf(`{"e":%d}`, i))})
	}
	return store.Commit{
		State: B(`{"big":true}`), Status: "IN_PROGRESS", Consumed: []string{"0-start"}, SweepAt: h.Ms() + 60_000,
		Outbox:    []store.Message{{Queue: store.QueueWork, Body: `{"kind":"run_step"}`}},
		NewEvents: []store.Event{{ID: "continue", Body: B(`{"kind":"continue"}`)}},
		Attempts: []store.Attempt{{StepID: "s", Attempt: 1, Status: "RUNNING", Body: B(`{"p":1}`), Timeline: Entries(`"CREATED"`, `"RUNNING"`)},
			{StepID: "t", Attempt: 1, Status: "STOPPED", Timeline: Entries(`"STOPPED"`)}},
		Timeline:    timeline,
		Instance:    &store.InstanceUpdate{RunID: 1, Status: "IN_PROGRESS", StartTime: 5, ModifyTime: 6},
		Permits:     []store.PermitUpdate{{Tag: "tag", ExpectV: permitV, Hold: map[string]int64{"wf#1#1#s#1": 99}, Wait: map[string]int64{"wf#1#1#u#1": 7}}},
		Wakes:       []store.WakeRun{{WorkflowID: "other", InstanceID: 1, RunID: 1, Event: store.Event{ID: "woken", Body: B(`{"w":1}`)}}},
		WakeOther:   &store.RunEvent{InstanceID: 2, RunID: 1, Event: store.Event{ID: "next", Body: B(`{"w":2}`)}},
		SignalWaits: []store.SignalWait{{Name: "sig", Key: store.SignalWaiterKey("wf", 1, 1, "s", 1)}},
		Lineage:     []store.LineageLink{{Name: "sig", Seq: 1, ID: "wf/1", Body: B(`{"l":1}`)}},
		Definitions: []store.InlineDefinition{{WorkflowID: "loop", Definition: B(`{"inline":true}`), Now: h.Now()}},
		LoopParams:  []store.LoopParams{{StepID: "s", Attempt: 1, Body: B(`{"a":[1,2]}`)}},
		Children: []store.ChildRun{{WorkflowID: "loop", InstanceID: 1, Version: 1, Status: "CREATED", State: B(`{"child":1}`),
			FirstEvent: store.Event{ID: "0-start", Body: B(`{}`)}, Now: h.Now()}},
	}
}

// commitIsAtomic: a commit whose one condition fails (here a permit's
// version) writes nothing at all; the same commit on the right version
// writes every one of its items.
func commitIsAtomic(h *H) {
	h.Push("wf")
	h.Push("other")
	h.Start("wf")
	h.Start("wf")
	h.Start("other")
	_, err := h.S.Gates.PutTagPermit(h.Ctx, "tag", 2, h.Ms())
	h.OK(err, "permit")
	check := func(written bool) {
		h.Helper()
		run, evs := h.Load("wf", 1, 1)
		atts, err := h.S.Attempts.ListAttempts(h.Ctx, "wf", 1, 1)
		h.OK(err, "attempts")
		tl, err := h.S.Runs.ListTimeline(h.Ctx, "wf", 1, 1)
		h.OK(err, "timeline")
		inst, _ := h.S.Instances.GetInstance(h.Ctx, "wf", 1)
		permit, _ := h.S.Gates.GetTagPermit(h.Ctx, "tag")
		_, waiters, _ := h.S.Signals.Subscribers(h.Ctx, "sig")
		lineage, _ := h.S.Signals.Lineage(h.Ctx, "sig", 1)
		_, defErr := h.S.Definitions.GetVersion(h.Ctx, "loop", 1)
		_, childErr := h.S.Instances.GetInstance(h.Ctx, "loop", 1)
		_, lpErr := h.S.Runs.GetLoopParams(h.Ctx, "wf", 1, 1, "s", 1)
		got := []any{run.V, EventIDs(evs), len(atts), len(run.Timeline), len(tl), inst.Status, len(permit.Holders), len(permit.Waiters),
			len(waiters), len(lineage), defErr == nil, childErr == nil, lpErr == nil, h.Events("wf", 2, 1), h.Events("other", 1, 1), run.SweepAt > 0}
		want := []any{int64(1), []string{"0-start"}, 0, 0, 0, "CREATED", 0, 0, 0, 0, false, false, false, []string{"0-start={\"kind\":\"start\"}"},
			[]string{"0-start={\"kind\":\"start\"}"}, false}
		if written {
			want = []any{int64(2), []string{"continue"}, 2, 8, 1, "IN_PROGRESS", 1, 1, 1, 1, true, true, true,
				[]string{"0-start={\"kind\":\"start\"}", `next={"w":2}`}, []string{"0-start={\"kind\":\"start\"}", `woken={"w":1}`}, true}
		}
		h.Eq(got, want, "run v, events, attempts, held and spilled timeline, instance status, holders, waiters, signal waiters, lineage, inline definition, child, loop params, wakes, swept")
	}
	h.Is(h.Commit("wf", 1, 1, 1, bigCommit(h, 7)), store.ErrConflict, "a commit on a stale permit")
	check(false)
	h.OK(h.Commit("wf", 1, 1, 1, bigCommit(h, 1)), "the commit on the permit's version")
	check(true)
	permit, _ := h.S.Gates.GetTagPermit(h.Ctx, "tag")
	h.Eq([]any{permit.V, permit.Holders, permit.Waiters}, []any{int64(2), map[string]int64{"wf#1#1#s#1": 99}, map[string]int64{"wf#1#1#u#1": 7}}, "permit after the commit")
	a, err := h.S.Attempts.GetAttempt(h.Ctx, "wf", 1, 1, "t", 1)
	h.OK(err, "status-only attempt")
	h.Eq([]any{a.Status, a.Body == nil, Timeline(a)}, []any{"STOPPED", true, `"STOPPED"`}, "an attempt written without a body has none")

	// Malformed commits: refused whole, and not as conflicts.
	for name, c := range map[string]store.Commit{
		"an event without a body":           {NewEvents: []store.Event{{ID: "e"}}},
		"a consumed event also put":         {Consumed: []string{"e"}, NewEvents: []store.Event{{ID: "e", Body: B(`{}`)}}},
		"the same attempt twice":            {Attempts: []store.Attempt{{StepID: "s", Attempt: 9, Status: "RUNNING"}, {StepID: "s", Attempt: 9, Status: "RUNNING"}}},
		"a holder both taken and given":     {Permits: []store.PermitUpdate{{Tag: "tag", ExpectV: 2, Hold: map[string]int64{"k": 1}, Release: []string{"k"}}}},
		"a timeline entry without body":     {Timeline: []store.TimelineItem{{Seq: 1}}},
		"an inline definition without body": {Definitions: []store.InlineDefinition{{WorkflowID: "x"}}},
	} {
		h.Plain(h.Commit("wf", 1, 1, 2, c), "%s", name)
	}
	run, _ := h.Load("wf", 1, 1)
	h.Eq(run.V, int64(2), "version after refused commits")
}

// commitLimits: more than store.MaxTransactItems writes, or an item past
// DynamoDB's size limit, is refused before anything is written; bodies
// are counted as stored (compressed).
func commitLimits(h *H) {
	h.Push("wf")
	h.Start("wf")
	attempts := func(n int) []store.Attempt {
		out := make([]store.Attempt, n)
		for i := range out {
			out[i] = store.Attempt{StepID: fmt.Sprint("s", i), Attempt: 1, Status: "RUNNING", Body: B(`{}`)}
		}
		return out
	}
	// CommitItems counts as CommitRun plans, past the limit too.
	items := func(c store.Commit) int {
		h.Helper()
		n, err := h.S.Runs.CommitItems(h.Ctx, commitOf("wf", 1, 1, 1, c))
		h.OK(err, "count a commit")
		return n
	}
	h.Eq(items(store.Commit{}), 1, "items of a commit of the run item alone")
	h.Eq(items(store.Commit{Attempts: attempts(store.MaxTransactItems - 1)}), store.MaxTransactItems, "items of 99 attempts")
	h.Eq(items(store.Commit{Attempts: attempts(store.MaxTransactItems)}), store.MaxTransactItems+1, "items of 100 attempts")
	h.Eq(items(store.Commit{Consumed: []string{"a", "b"}, NewEvents: []store.Event{{ID: "c", Body: B(`{}`)}},
		Instance: &store.InstanceUpdate{RunID: 1, Status: "IN_PROGRESS"}, SlotDelta: 1, Dequeue: true,
		Children: []store.ChildRun{
			{WorkflowID: "loop", InstanceID: 1, Status: "CREATED", State: B(`{}`), FirstEvent: store.Event{ID: "0", Body: B(`{}`)}},
			{WorkflowID: "loop", InstanceID: 2, Status: "SUCCEEDED", State: B(`{}`), Born: true,
				Attempts: attempts(2), Timeline: []store.TimelineItem{{Seq: 1, Body: B(`"x"`)}}},
		}}), 1+2+1+1+2+3+4, "items of a commit of every kind")
	tl := make([]store.TimelineItem, 9)
	for i := range tl {
		tl[i] = store.TimelineItem{Seq: int64(i + 1), Body: B(`"x"`)}
	}
	// A born child's run item holds its first eight timeline entries, as a
	// commit's does; the ninth is an item of its own.
	h.Eq(items(store.Commit{Children: []store.ChildRun{{WorkflowID: "loop", InstanceID: 3, Status: "SUCCEEDED", State: B(`{}`),
		Born: true, Timeline: tl}}}), 1+2+1, "items of a commit bearing a child with nine timeline entries")
	_, err := h.S.Runs.CommitItems(h.Ctx, commitOf("wf", 1, 1, 1, store.Commit{State: RandomJSON(500_000)}))
	h.TooLarge(err, "run state", "counting a large random state")
	h.Is(h.Commit("wf", 1, 1, 1, store.Commit{Attempts: attempts(store.MaxTransactItems)}), store.ErrTooManyItems, "101 items")
	h.Is(h.Commit("wf", 1, 1, 1, store.Commit{Attempts: attempts(store.MaxTransactItems), NewEvents: []store.Event{{ID: "e"}}}), store.ErrTooManyItems,
		"101 items, one of them malformed")
	atts, _ := h.S.Attempts.ListAttempts(h.Ctx, "wf", 1, 1)
	h.Eq(len(atts), 0, "attempts after a refused commit")
	h.OK(h.Commit("wf", 1, 1, 1, store.Commit{Attempts: attempts(store.MaxTransactItems - 1)}), "100 items")

	h.TooLarge(h.Commit("wf", 1, 1, 2, store.Commit{State: RandomJSON(500_000)}), "run state", "a large random state")
	h.TooLarge(h.Commit("wf", 1, 1, 2, store.Commit{State: B(`{}`), Outbox: []store.Message{{Queue: store.QueueWork, Body: string(RandomJSON(500_000))}}}),
		"run state", "a large random outbox")
	h.TooLarge(h.Commit("wf", 1, 1, 2, store.Commit{Attempts: []store.Attempt{{StepID: "big", Attempt: 2, Status: "RUNNING", Body: Random(420_000)}}}),
		"step attempt big/2", "a large random attempt body")
	h.TooLarge(h.Commit("wf", 1, 1, 2, store.Commit{LoopParams: []store.LoopParams{{StepID: "big", Attempt: 3, Body: Random(420_000)}}}),
		"loop params of step big/3", "large random loop params")
	h.TooLarge(h.Commit("wf", 1, 1, 2, store.Commit{Children: []store.ChildRun{{WorkflowID: "loop", InstanceID: 1, Status: "CREATED",
		State: RandomJSON(500_000), FirstEvent: store.Event{ID: "0", Body: B(`{}`)}}}}), "run state", "a large random child state")
	run, _ := h.Load("wf", 1, 1)
	h.Eq(run.V, int64(2), "version after refused commits")

	// Large but compressible: stored.
	big := Compressible(1_000_000)
	h.OK(h.Commit("wf", 1, 1, 2, store.Commit{State: big, Attempts: []store.Attempt{{StepID: "big", Attempt: 1, Status: "RUNNING", Body: big}},
		LoopParams: []store.LoopParams{{StepID: "big", Attempt: 1, Body: big}}}), "large compressible bodies")
	run, _ = h.Load("wf", 1, 1)
	h.Eq(string(run.State) == string(big), true, "a large state reads back whole")
	a, _ := h.S.Attempts.GetAttempt(h.Ctx, "wf", 1, 1, "big", 1)
	h.Eq(string(a.Body) == string(big), true, "a large attempt body reads back whole")
	lp, _ := h.S.Runs.GetLoopParams(h.Ctx, "wf", 1, 1, "big", 1)
	h.Eq(string(lp) == string(big), true, "large loop params read back whole")

	// A page of a paged state past the limit.
	steps := make([]string, 70)
	for i := range steps {
		steps[i] = fmt.Sprintf(`{"step_id":"s%d","x":%q}`, i, RandomJSON(8_000))
	}
	h.TooLarge(h.Commit("wf", 1, 1, 3, store.Commit{State: B(`{"steps":[` + strings.Join(steps, ",") + `]}`)}), "run state page", "a large page")
	run, _ = h.Load("wf", 1, 1)
	h.Eq(run.V, int64(3), "version after a refused paged commit")
}

// creatingCommit: a commit that creates its instance writes the run
// (version 1), the summary with the decision's update applied, and the
// request id's record, or nothing: the request id taken is
// ErrRequestTaken (even for the same instance), the instance taken
// ErrConflict.
func creatingCommit(h *H) {
	h.Push("wf")
	in := h.S.Instances
	id, _, err := in.ReserveInstance(h.Ctx, "wf", "req-1")
	h.OK(err, "reserve")
	at := h.Ms()
	create := func(inst int64, request string) error {
		return h.S.Runs.CommitRun(h.Ctx, store.Commit{WorkflowID: "wf", InstanceID: inst, RunID: 1, Status: "IN_PROGRESS", State: B(`{"status":"IN_PROGRESS"}`),
			Instance: &store.InstanceUpdate{RunID: 1, Status: "IN_PROGRESS", StartTime: at, ModifyTime: at},
			Create: &store.InstanceRecord{WorkflowID: "wf", InstanceID: inst, Version: 1, RunID: 1, UUID: "u", Status: "CREATED",
				RequestID: request, CreateTime: at, ModifyTime: at},
			Timeline: []store.TimelineItem{{Seq: 1, Body: B(`{"started":true}`)}}})
	}
	h.OK(create(id, "req-1"), "create")
	run, evs := h.Load("wf", id, 1)
	h.Eq([]any{run.V, run.Status, len(evs), len(run.Timeline)}, []any{int64(1), "IN_PROGRESS", 0, 1}, "created run")
	inst, err := in.GetInstance(h.Ctx, "wf", id)
	h.OK(err, "instance")
	h.Eq(*inst, store.InstanceRecord{WorkflowID: "wf", InstanceID: id, Version: 1, RunID: 1, UUID: "u", Status: "IN_PROGRESS", RequestID: "req-1",
		Initiator: []byte{}, CreateTime: at, StartTime: at, ModifyTime: at}, "created instance")
	_, prior, err := in.ReserveInstance(h.Ctx, "wf", "req-1")
	h.OK(err, "reserve again")
	h.Eq(prior != nil && prior.InstanceID == id, true, "the request id names the instance")
	h.Is(create(id+1, "req-1"), store.ErrRequestTaken, "another instance with the same request id")
	_, err = in.GetInstance(h.Ctx, "wf", id+1)
	h.Is(err, store.ErrNotFound, "the losing creation's instance")
	h.Is(create(id, "req-1"), store.ErrRequestTaken, "the same instance with the same request id")
	h.Is(create(id, ""), store.ErrConflict, "the same instance")
	h.Is(create(id, "req-2"), store.ErrConflict, "the same instance with another request id")
	_, err = in.InstanceForRequest(h.Ctx, "wf", "req-2")
	h.Is(err, store.ErrNotFound, "the losing creation's request id")
}

// runSlots: admission takes a slot while fewer than the limit are held,
// else ErrNoSlot with nothing written; a commit that gives a slot back on
// a stale queue version fails.
func runSlots(h *H) {
	h.Push("wf")
	admit := func(inst, delta int64) error {
		return h.Create("wf", inst, store.Commit{SlotDelta: delta, Admit: true, SlotLimit: 1, NewEvents: []store.Event{{ID: "e", Body: B(`{}`)}}})
	}
	h.OK(admit(1, 1), "the first run takes the slot")
	h.Is(admit(2, 1), store.ErrNoSlot, "the second run finds none")
	_, err := h.S.Instances.GetInstance(h.Ctx, "wf", 2)
	h.Is(err, store.ErrNotFound, "the refused run's instance")
	h.Is(admit(2, 0), store.ErrNoSlot, "a check alone finds none either")
	h.OK(h.S.Instances.Enqueue(h.Ctx, "wf", 2, 1), "enqueue")
	release := func(qv int64, admitToo bool) error {
		return h.Commit("wf", 1, 1, 1, store.Commit{Status: "SUCCEEDED", SlotDelta: -1, CheckQueue: true, QueueVersion: qv, Admit: admitToo, SlotLimit: 5})
	}
	h.Is(release(0, false), store.ErrConflict, "release on a stale queue version")
	h.Is(release(0, true), store.ErrNoSlot, "release and admit on a stale queue version")
	h.OK(release(1, false), "release on the queue version")
	holding, _, _ := h.S.Instances.ActiveRuns(h.Ctx, "wf", 0)
	h.Eq(len(holding), 0, "holders after the release")
	h.OK(admit(2, 1), "the slot is free again")
	h.Is(admit(3, 1), store.ErrNoSlot, "and taken again")
	h.Is(h.Create("wf", 4, store.Commit{SlotDelta: 1, Admit: true, SlotLimit: 1}), store.ErrNoSlot, "a lone admission")
	// A stale run item and a full slot: the conflict wins.
	h.Is(h.Commit("wf", 2, 1, 7, store.Commit{SlotDelta: 1, Admit: true, SlotLimit: 1}), store.ErrConflict, "stale run and no slot")
	h.OK(h.Create("wf", 5, store.Commit{Admit: true, SlotLimit: 2}), "a check that finds a free slot takes none")
	holding, _, _ = h.S.Instances.ActiveRuns(h.Ctx, "wf", 0)
	h.Eq(holding, []store.RunRef{{InstanceID: 2, RunID: 1}}, "holders")
}

// inbox: an event id is stored once (the first body kept); events read
// back ordered by id; discarding missing ones is no error; a duplicate id
// among a batch is refused.
func inbox(h *H) {
	h.Push("wf")
	h.Start("wf")
	r := h.S.Runs
	h.OK(r.PutEvent(h.Ctx, "wf", 1, 1, store.Event{ID: "e2", Body: B(`"A"`)}), "put")
	h.OK(r.PutEvent(h.Ctx, "wf", 1, 1, store.Event{ID: "e2", Body: B(`"B"`)}), "put again")
	h.OK(r.PutEvent(h.Ctx, "wf", 1, 1, store.Event{ID: "a-first", Body: B(`{}`), WakeAfter: 10, Covered: true}), "put")
	h.OK(r.PutEvent(h.Ctx, "wf", 1, 1, store.Event{ID: "empty", Body: []byte{}}), "an empty body")
	h.Plain(r.PutEvent(h.Ctx, "wf", 1, 1, store.Event{ID: "nil"}), "a nil body")
	h.Eq(h.Events("wf", 1, 1), []string{`0-start={"kind":"start"}`, `a-first={}`, `e2="A"`, `empty=`}, "inbox")
	_, evs := h.Load("wf", 1, 1)
	h.Eq(evs[3].Body != nil, true, "an empty body reads back empty, not nil")
	h.OK(r.DiscardEvents(h.Ctx, "wf", 1, 1, []string{"e2", "missing", "empty"}), "discard")
	h.OK(r.DiscardEvents(h.Ctx, "wf", 1, 1, nil), "discard none")
	h.Eq(h.Events("wf", 1, 1), []string{`0-start={"kind":"start"}`, `a-first={}`}, "inbox after discarding")
	h.Plain(r.DiscardEvents(h.Ctx, "wf", 1, 1, []string{"a-first", "a-first"}), "a duplicate id")
	ids := make([]string, 30)
	for i := range ids {
		ids[i] = fmt.Sprint("x", i)
	}
	ids[29] = "0-start"
	h.OK(r.DiscardEvents(h.Ctx, "wf", 1, 1, ids), "a long discard")
	h.Eq(h.Events("wf", 1, 1), []string{`a-first={}`}, "inbox after a long discard")
	// Events of another run are not this one's.
	h.OK(r.PutEvent(h.Ctx, "wf", 1, 2, store.Event{ID: "later", Body: B(`{}`)}), "an event of run 2")
	h.Eq(h.Events("wf", 1, 1), []string{`a-first={}`}, "run 1's inbox")
	_, _, err := r.LoadRun(h.Ctx, "wf", 1, 2)
	h.Is(err, store.ErrNotFound, "a run with events and no item")
}

// loadQuietRun: the run when no event waits at its instance — its own or
// a later run's — and nil otherwise.
func loadQuietRun(h *H) {
	h.Push("wf")
	h.Start("wf")
	r := h.S.Runs
	quiet := func(run int64) string {
		h.Helper()
		rec, ok, err := r.LoadQuietRun(h.Ctx, "wf", 1, run)
		if err != nil {
			return err.Error()
		}
		if rec == nil {
			return fmt.Sprint("nil ", ok)
		}
		return fmt.Sprintf("v%d %s %v", rec.V, rec.State, ok)
	}
	h.Eq(quiet(1), "nil false", "a run with its start event")
	h.OK(h.Commit("wf", 1, 1, 1, store.Commit{State: B(`{"q":1}`), Consumed: []string{"0-start"}, Timeline: []store.TimelineItem{{Seq: 1, Body: B(`{}`)}}}), "consume")
	h.Eq(quiet(1), `v2 {"q":1} true`, "a run without events")
	rec, _, _ := r.LoadQuietRun(h.Ctx, "wf", 1, 1)
	h.Eq(len(rec.Timeline), 1, "a quiet run's timeline")
	h.OK(r.PutEvent(h.Ctx, "wf", 1, 2, store.Event{ID: "x", Body: B(`{}`)}), "an event of run 2")
	h.Eq(quiet(1), "nil false", "a run whose later run has an event")
	_, _, err := r.LoadQuietRun(h.Ctx, "wf", 1, 2)
	h.Is(err, store.ErrNotFound, "a run without its item")
	_, _, err = r.LoadQuietRun(h.Ctx, "wf", 9, 1)
	h.Is(err, store.ErrNotFound, "a missing instance")
	h.OK(r.CreateRun(h.Ctx, store.NewRun{WorkflowID: "wf", InstanceID: 1, PrevRun: 1, Status: "CREATED", State: B(`{"run":2}`),
		FirstEvent: store.Event{ID: "0-start", Body: B(`{}`)}, Now: h.Now()}), "restart")
	h.Eq(quiet(2), "nil false", "a restarted run with its events")
	h.OK(r.DiscardEvents(h.Ctx, "wf", 1, 2, []string{"x", "0-start"}), "discard")
	h.Eq(quiet(2), `v1 {"run":2} true`, "a restarted run without events (its earlier run's item before it)")
	h.Eq(quiet(1), `v2 {"q":1} true`, "the first run")
}

// createRun: a restart adds run PrevRun+1 once, and points the summary at
// it.
func createRun(h *H) {
	h.Push("wf")
	h.Start("wf")
	r := h.S.Runs
	nr := store.NewRun{WorkflowID: "wf", InstanceID: 1, PrevRun: 1, Status: "CREATED", State: B(`{"run":2}`),
		FirstEvent: store.Event{ID: "0-start", Body: B(`{"r":2}`)}, Outbox: []store.Message{{Queue: store.QueueWork, Body: "{}"}}, Now: h.Now()}
	h.OK(r.CreateRun(h.Ctx, nr), "restart")
	h.Is(r.CreateRun(h.Ctx, nr), store.ErrConflict, "the same restart again")
	inst, _ := h.S.Instances.GetInstance(h.Ctx, "wf", 1)
	h.Eq([]any{inst.RunID, inst.Status, inst.StartTime, inst.EndTime, inst.ModifyTime}, []any{int64(2), "CREATED", int64(0), int64(0), h.Ms()}, "summary")
	run, evs := h.Load("wf", 1, 2)
	h.Eq([]any{run.V, run.Status, string(run.State), run.SweepAt, EventIDs(evs)}, []any{int64(1), "CREATED", `{"run":2}`, int64(0), []string{"0-start"}}, "run 2")
	run1, _ := h.Load("wf", 1, 1)
	h.Eq(run1.V, int64(1), "run 1 is left as it was")
	nr.PrevRun = 2
	h.OK(r.CreateRun(h.Ctx, nr), "restart run 2")
	nr.InstanceID = 7
	h.Is(r.CreateRun(h.Ctx, nr), store.ErrConflict, "restart a missing instance")
	nr.InstanceID, nr.PrevRun, nr.State = 1, 3, nil
	h.Plain(r.CreateRun(h.Ctx, nr), "restart with a nil state")
}

// instanceTimeline: a run item holds a run's first 8 entries (1 KB at
// most, valid JSON, read back compacted as JSON is); the others are items
// of their own, read by ListTimeline.
func instanceTimeline(h *H) {
	h.Push("wf")
	h.Start("wf")
	entry := func(seq int64) store.TimelineItem {
		return store.TimelineItem{Seq: seq, Body: B(fmt.Sprintf(`{"t":1700000000000,"s":"IN_PROGRESS","m":"entry %d"}`, seq))}
	}
	commit := func(entries ...store.TimelineItem) {
		h.Helper()
		run, _ := h.Load("wf", 1, 1)
		h.OK(h.Commit("wf", 1, 1, run.V, store.Commit{State: run.State, Timeline: entries, PriorTimeline: run.Timeline}), "commit")
	}
	commit(store.TimelineItem{Seq: 1, Body: B(`{ "m" : "<b>&" }`)}, entry(2), entry(3))
	commit()
	commit(entry(4), entry(5), entry(6), entry(7))
	commit(entry(8), entry(9), entry(10))
	run, _ := h.Load("wf", 1, 1)
	rest, err := h.S.Runs.ListTimeline(h.Ctx, "wf", 1, 1)
	h.OK(err, "timeline")
	var got []string
	for _, e := range append(run.Timeline, rest...) {
		got = append(got, fmt.Sprintf("%d %s", e.Seq, e.Body))
	}
	want := []string{`1 {"m":"\u003cb\u003e\u0026"}`}
	for i := int64(2); i <= 10; i++ {
		want = append(want, fmt.Sprintf("%d %s", i, entry(i).Body))
	}
	h.Eq(got, want, "entries")
	h.Eq([]int{len(run.Timeline), len(rest)}, []int{8, 2}, "held, spilled")

	// An entry that is not JSON, and the ones after it, are items.
	h.Start("wf")
	h.OK(h.Commit("wf", 2, 1, 1, store.Commit{Timeline: []store.TimelineItem{entry(1), {Seq: 2, Body: B(`not json`)}, entry(3)}}), "commit")
	run, _ = h.Load("wf", 2, 1)
	rest, _ = h.S.Runs.ListTimeline(h.Ctx, "wf", 2, 1)
	h.Eq([]int{len(run.Timeline), len(rest)}, []int{1, 2}, "held, spilled after an entry that is not JSON")
	h.Bytes(rest[0].Body, `not json`, "an entry that is not JSON")
	// Past 1 KB.
	h.Start("wf")
	long := store.TimelineItem{Seq: 2, Body: B(`"` + strings.Repeat("x", 1000) + `"`)}
	h.OK(h.Commit("wf", 3, 1, 1, store.Commit{Timeline: []store.TimelineItem{entry(1), long, entry(3)}}), "commit")
	run, _ = h.Load("wf", 3, 1)
	rest, _ = h.S.Runs.ListTimeline(h.Ctx, "wf", 3, 1)
	h.Eq([]int{len(run.Timeline), len(rest)}, []int{1, 2}, "held, spilled past 1 KB")
	tl, err := h.S.Runs.ListTimeline(h.Ctx, "wf", 9, 1)
	h.OK(err, "timeline of a missing run")
	h.Eq(tl == nil, true, "no timeline")
}

// canonical is a state as a paged run's readers read it back: its fields
// in key order, values compacted, its step entries (engine.SplitState)
// each compacted.
func canonical(h *H, state []byte) string {
	h.Helper()
	fields, steps, err := engine.SplitState(state)
	h.OK(err, "state")
	b, err := engine.JoinState(fields, steps)
	h.OK(err, "state")
	return string(b)
}

// bigState is a run state of n steps, done of them SUCCEEDED and the next
// ten RUNNING, with its fields out of order and spaced: written as text in
// engine.Instance's shape, as no marshalled Instance is, for what a reader
// gets back of such bytes.
func bigState(n, done int) ([]byte, map[string]bool) {
	entries := make([]string, n)
	unsettled := map[string]bool{}
	for i := range entries {
		st := "NOT_CREATED"
		switch {
		case i < done:
			st = "SUCCEEDED"
		case i < done+10:
			st = "RUNNING"
		}
		id := fmt.Sprintf("chain%d_step%d", i%10, i/10)
		if st != "SUCCEEDED" {
			unsettled[id] = true
		}
		entries[i] = fmt.Sprintf(`{"step_id": %q, "status": %q, "start_time": %d, "note": "<%d>"}`, id, st, 1_795_000_000_000+int64(i)*137, i)
	}
	return []byte(fmt.Sprintf(`{"workflow_id": "wf", "seq": %d, "steps": [%s], "a": {"b" : 1}}`, done, strings.Join(entries, ", "))), unsettled
}

// pagedState: past store.PageSteps steps a state is read back, by every
// reader, as its merge: fields in key order, compacted; a smaller state
// as committed; commits that lose their race change nothing.
func pagedState(h *H) {
	h.Push("wf")
	h.Start("wf")
	small := []byte(`{"z": 1, "steps": [{"step_id": "a"}], "a": 2}`)
	run, _ := h.Load("wf", 1, 1)
	h.OK(h.Commit("wf", 1, 1, run.V, store.Commit{State: small, Consumed: []string{"0-start"}}), "small state")
	run, _ = h.Load("wf", 1, 1)
	h.Bytes(run.State, string(small), "a small state")
	key := store.RunKey{WorkflowID: "wf", InstanceID: 1, RunID: 1}
	for done := 0; done <= 300; done += 30 {
		run, _ := h.Load("wf", 1, 1)
		st, unsettled := bigState(300, done)
		c := store.Commit{State: st, Pages: run.Pages, Unsettled: unsettled}
		if done == 150 {
			stale, _ := bigState(300, 300)
			h.Is(h.Commit("wf", 1, 1, run.V-1, store.Commit{State: stale, Pages: run.Pages, Unsettled: map[string]bool{}}), store.ErrConflict, "a stale commit")
		}
		h.OK(h.Commit("wf", 1, 1, run.V, c), "commit after %d steps", done)
		want := canonical(h, st)
		got, _ := h.Load("wf", 1, 1)
		h.Bytes(got.State, want, "LoadRun after %d steps", done)
		q, ok, err := h.S.Runs.LoadQuietRun(h.Ctx, "wf", 1, 1)
		h.OK(err, "quiet")
		h.Eq(ok, true, "quiet")
		h.Bytes(q.State, want, "LoadQuietRun after %d steps", done)
		runs, err := h.S.Runs.GetRuns(h.Ctx, []store.RunKey{key})
		h.OK(err, "runs")
		h.Bytes(runs[key].State, want, "GetRuns after %d steps", done)
	}
	// A paged run with a state of fewer steps stays paged.
	run, _ = h.Load("wf", 1, 1)
	h.OK(h.Commit("wf", 1, 1, run.V, store.Commit{State: small, Pages: run.Pages}), "a small state again")
	got, _ := h.Load("wf", 1, 1)
	h.Bytes(got.State, canonical(h, small), "a small state of a paged run")
}

// getRunsAndLoopParams: many runs at once, those that exist; a loop
// params item.
func getRunsAndLoopParams(h *H) {
	h.Push("wf")
	h.Start("wf")
	h.Start("wf")
	r := h.S.Runs
	k := func(inst, run int64) store.RunKey {
		return store.RunKey{WorkflowID: "wf", InstanceID: inst, RunID: run}
	}
	runs, err := r.GetRuns(h.Ctx, []store.RunKey{k(2, 1), k(1, 1), k(1, 2), k(5, 1)})
	h.OK(err, "runs")
	h.Eq([]any{len(runs), string(runs[k(1, 1)].State), string(runs[k(2, 1)].State), runs[k(2, 1)].V}, []any{2, `{"instance":1}`, `{"instance":2}`, int64(1)}, "runs")
	runs, err = r.GetRuns(h.Ctx, nil)
	h.OK(err, "no runs")
	h.Eq(len(runs), 0, "no runs")
	_, err = r.GetRuns(h.Ctx, []store.RunKey{k(1, 1), k(1, 1)})
	h.Plain(err, "a duplicate key")

	_, err = r.GetLoopParams(h.Ctx, "wf", 1, 1, "loop", 1)
	h.Is(err, store.ErrNotFound, "loop params not written")
	h.OK(h.Commit("wf", 1, 1, 1, store.Commit{LoopParams: []store.LoopParams{{StepID: "loop", Attempt: 1, Body: B(`{"i":[1,2,3]}`)}}}), "commit")
	lp, err := r.GetLoopParams(h.Ctx, "wf", 1, 1, "loop", 1)
	h.OK(err, "loop params")
	h.Bytes(lp, `{"i":[1,2,3]}`, "loop params")
	_, err = r.GetLoopParams(h.Ctx, "wf", 1, 1, "loop", 2)
	h.Is(err, store.ErrNotFound, "another attempt's")
	h.Plain(h.Commit("wf", 1, 1, 2, store.Commit{LoopParams: []store.LoopParams{{StepID: "loop", Attempt: 2}}}), "nil loop params")
}

// childrenAndReruns: iterations created in their parent's commit, once
// each — waiting for their decider, born finished with their attempts and
// timeline, or born running with their outbox and sweep time — and reruns
// of them, once each.
func childrenAndReruns(h *H) {
	h.Push("wf")
	h.Start("wf")
	now := h.Now()
	child := store.ChildRun{WorkflowID: "loop", InstanceID: 1, Version: 1, UUID: "c1", Initiator: B(`{"type":"FOREACH"}`), Status: "CREATED",
		State: B(`{"child":1}`), FirstEvent: store.Event{ID: "0-start", Body: B(`{"c":1}`)}, Outbox: []store.Message{{Queue: store.QueueWork, Body: "{}"}}, Now: now}
	born := store.ChildRun{WorkflowID: "loop", InstanceID: 2, Version: 1, UUID: "c2", Status: "SUCCEEDED", State: B(`{"child":2}`), Now: now, Born: true,
		Attempts: []store.Attempt{{StepID: "s", Attempt: 1, Status: "SUCCEEDED", Body: B(`{"o":1}`), Timeline: Entries(`"CREATED"`, `"SUCCEEDED"`)}},
		Timeline: []store.TimelineItem{{Seq: 1, Body: B(`{"t":1}`)}}, StartTime: 10, EndTime: 20}
	running := store.ChildRun{WorkflowID: "loop", InstanceID: 3, Version: 1, UUID: "c3", Status: "IN_PROGRESS", State: B(`{"child":3}`), Now: now,
		Born: true, Outbox: []store.Message{{Queue: store.QueueWork, Body: `{"w":3}`}}, SweepAt: now.Add(time.Hour).UnixMilli(),
		Timeline: []store.TimelineItem{{Seq: 1, Body: B(`{"t":3}`)}}, StartTime: 10}
	h.Eq([]int{child.Items(), born.Items(), running.Items()}, []int{3, 3, 2}, "items of a child")
	h.OK(h.Commit("wf", 1, 1, 1, store.Commit{Definitions: []store.InlineDefinition{{WorkflowID: "loop", Definition: B(`{"body":1}`), Now: now}},
		Children: []store.ChildRun{child, born, running}}), "commit")
	v, err := h.S.Definitions.GetVersion(h.Ctx, "loop", 1)
	h.OK(err, "inline definition")
	h.Eq([]any{string(v.Definition), v.CreateTime, v.Principal}, []any{`{"body":1}`, now.UnixMilli(), ""}, "inline definition")
	_, err = h.S.Definitions.GetHead(h.Ctx, "loop")
	h.Is(err, store.ErrNotFound, "an inline workflow has no head")
	inst, _ := h.S.Instances.GetInstance(h.Ctx, "loop", 1)
	h.Eq(*inst, store.InstanceRecord{WorkflowID: "loop", InstanceID: 1, Version: 1, RunID: 1, UUID: "c1", Status: "CREATED",
		Initiator: B(`{"type":"FOREACH"}`), CreateTime: now.UnixMilli(), ModifyTime: now.UnixMilli()}, "child")
	run, evs := h.Load("loop", 1, 1)
	h.Eq([]any{run.V, string(run.State), EventIDs(evs)}, []any{int64(1), `{"child":1}`, []string{"0-start"}}, "child's run")
	inst, _ = h.S.Instances.GetInstance(h.Ctx, "loop", 2)
	h.Eq([]any{inst.Status, inst.StartTime, inst.EndTime}, []any{"SUCCEEDED", int64(10), int64(20)}, "born child")
	run, evs = h.Load("loop", 2, 1)
	h.Eq([]any{run.Status, len(evs)}, []any{"SUCCEEDED", 0}, "born child's run")
	atts, _ := h.S.Attempts.ListAttempts(h.Ctx, "loop", 2, 1)
	h.Eq(len(atts), 1, "born child's attempts")
	h.Eq([]any{atts[0].StepID, atts[0].Status, string(atts[0].Body), Timeline(&atts[0])}, []any{"s", "SUCCEEDED", `{"o":1}`, `"CREATED","SUCCEEDED"`}, "born child's attempt")
	tl, _ := h.S.Runs.ListTimeline(h.Ctx, "loop", 2, 1)
	h.Eq([]int{len(run.Timeline), len(tl)}, []int{1, 0}, "born child's timeline: held in its run item, no item of its own")
	// Born running: its run item holds its state, outbox, sweep time and
	// first timeline entry; no event waits; it is due in the sweep index.
	inst, _ = h.S.Instances.GetInstance(h.Ctx, "loop", 3)
	h.Eq([]any{inst.Status, inst.StartTime, inst.EndTime}, []any{"IN_PROGRESS", int64(10), int64(0)}, "child born running")
	run, evs = h.Load("loop", 3, 1)
	h.Eq([]any{run.V, run.Status, string(run.State), len(evs), run.SweepAt, len(run.Timeline)},
		[]any{int64(1), "IN_PROGRESS", `{"child":3}`, 0, running.SweepAt, 1}, "run of a child born running")
	h.Bytes(run.Timeline[0].Body, `{"t":3}`, "its timeline entry")
	tl, _ = h.S.Runs.ListTimeline(h.Ctx, "loop", 3, 1)
	h.Eq(len(tl), 0, "timeline items of a child born running")
	h.Is(h.Commit("wf", 1, 1, 2, store.Commit{Children: []store.ChildRun{child}}), store.ErrConflict, "the same child again")

	rerun := store.NewRun{WorkflowID: "loop", InstanceID: 1, PrevRun: 1, Status: "CREATED", State: B(`{"rerun":1}`),
		FirstEvent: store.Event{ID: "0-start", Body: B(`{}`)}, Now: now}
	h.OK(h.Commit("wf", 1, 1, 2, store.Commit{Reruns: []store.NewRun{rerun}}), "rerun")
	inst, _ = h.S.Instances.GetInstance(h.Ctx, "loop", 1)
	h.Eq(inst.RunID, int64(2), "the child's latest run")
	h.Is(h.Commit("wf", 1, 1, 3, store.Commit{Reruns: []store.NewRun{rerun}}), store.ErrConflict, "the same rerun again")
	run, _ = h.Load("wf", 1, 1)
	h.Eq(run.V, int64(3), "the parent's version")
}

// cancelledContext: a request made with a context already done fails
// with its error.
func cancelledContext(h *H) {
	h.Push("wf")
	h.Start("wf")
	ctx, cancel := context.WithCancel(h.Ctx)
	cancel()
	_, err := h.S.Definitions.GetHead(ctx, "wf")
	h.Is(err, context.Canceled, "GetHead")
	_, _, err = h.S.Runs.LoadRun(ctx, "wf", 1, 1)
	h.Is(err, context.Canceled, "LoadRun")
	err = h.S.Runs.CommitRun(ctx, store.Commit{WorkflowID: "wf", InstanceID: 1, RunID: 1, ExpectV: 1, State: B(`{}`)})
	h.Is(err, context.Canceled, "CommitRun")
	run, _ := h.Load("wf", 1, 1)
	h.Eq(run.V, int64(1), "nothing committed")
}

// valuesAreCopies: what a caller gave or got is its own: changing it
// later changes nothing stored.
func valuesAreCopies(h *H) {
	h.Push("wf")
	h.Start("wf")
	state, body, entry := B(`{"s":1}`), B(`{"b":1}`), B(`"E"`)
	h.OK(h.Commit("wf", 1, 1, 1, store.Commit{State: state, NewEvents: []store.Event{{ID: "e", Body: body}},
		Attempts: []store.Attempt{{StepID: "s", Attempt: 1, Status: "RUNNING", Body: body, Timeline: [][]byte{entry}}},
		Timeline: []store.TimelineItem{{Seq: 1, Body: body}}}), "commit")
	state[2], body[2], entry[1] = 'X', 'X', 'X'
	run, evs := h.Load("wf", 1, 1)
	att, err := h.S.Attempts.GetAttempt(h.Ctx, "wf", 1, 1, "s", 1)
	h.OK(err, "attempt")
	h.Eq([]string{string(run.State), string(evs[1].Body), string(att.Body), Timeline(att), string(run.Timeline[0].Body)},
		[]string{`{"s":1}`, `{"b":1}`, `{"b":1}`, `"E"`, `{"b":1}`}, "after the caller changed what it gave")
	run.State[2], evs[1].Body[2], att.Body[2], att.Timeline[0][1], run.Timeline[0].Body[2] = 'Y', 'Y', 'Y', 'Y', 'Y'
	run, evs = h.Load("wf", 1, 1)
	att, _ = h.S.Attempts.GetAttempt(h.Ctx, "wf", 1, 1, "s", 1)
	h.Eq([]string{string(run.State), string(evs[1].Body), string(att.Body), Timeline(att), string(run.Timeline[0].Body)},
		[]string{`{"s":1}`, `{"b":1}`, `{"b":1}`, `"E"`, `{"b":1}`}, "after the caller changed what it got")
	head, _ := h.S.Definitions.GetHead(h.Ctx, "wf")
	h.OK(h.S.Definitions.UpdateProperties(h.Ctx, head, body, h.Now(), nil), "properties")
	body[3] = 'Z'
	head, _ = h.S.Definitions.GetHead(h.Ctx, "wf")
	h.Bytes(head.Properties, `{"X":1}`, "properties after the caller changed them")
	head.Properties[3] = 'W'
	head, _ = h.S.Definitions.GetHead(h.Ctx, "wf")
	h.Bytes(head.Properties, `{"X":1}`, "properties after the caller changed what it got")
}
