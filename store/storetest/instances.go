package storetest

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/maestro-serverless/maestro/store"
)

// createInstance: instance ids from the head's counter; the summary, the
// run (version 1, not in the sweep index) and its first event are written
// together or not at all; a request id makes the start idempotent; a
// failed creation leaves its id unused.
func createInstance(h *H) {
	in := h.S.Instances
	ni := store.NewInstance{WorkflowID: "wf", Version: 1, UUID: "u1", Status: "CREATED", Initiator: B(`{"type":"MANUAL"}`),
		State: StateOf, FirstEvent: store.Event{ID: "0-start", Body: B(`{"k":"start"}`)}, Now: h.Now()}
	_, _, err := in.CreateInstance(h.Ctx, ni)
	h.Is(err, store.ErrNotFound, "an instance of a workflow without a head")
	h.Push("wf")
	rec, created, err := in.CreateInstance(h.Ctx, ni)
	h.OK(err, "create")
	want := store.InstanceRecord{WorkflowID: "wf", InstanceID: 1, Version: 1, RunID: 1, UUID: "u1", Status: "CREATED",
		Initiator: B(`{"type":"MANUAL"}`), CreateTime: h.Ms(), ModifyTime: h.Ms()}
	h.Eq(created, true, "created")
	h.Eq(*rec, want, "created record")
	got, err := in.GetInstance(h.Ctx, "wf", 1)
	h.OK(err, "get")
	h.Eq(*got, want, "stored record")
	_, err = in.GetInstance(h.Ctx, "wf", 2)
	h.Is(err, store.ErrNotFound, "a missing instance")
	run, evs := h.Load("wf", 1, 1)
	h.Eq([]any{run.V, run.Status, string(run.State), run.SweepAt, run.Timeline == nil}, []any{int64(1), "CREATED", `{"instance":1}`, int64(0), true}, "run")
	h.Eq(len(evs), 1, "events")
	h.Eq([]string{evs[0].ID, string(evs[0].Body)}, []string{"0-start", `{"k":"start"}`}, "first event")

	// A request id already used returns its instance.
	ni.RequestID, ni.UUID = "req", "u2"
	rec, created, err = in.CreateInstance(h.Ctx, ni)
	h.OK(err, "create with a request id")
	h.Eq([]any{rec.InstanceID, created, rec.RequestID}, []any{int64(2), true, "req"}, "first start of the request")
	ni.UUID = "u3"
	rec, created, err = in.CreateInstance(h.Ctx, ni)
	h.OK(err, "create again")
	h.Eq([]any{rec.InstanceID, created, rec.UUID}, []any{int64(2), false, "u2"}, "second start of the request")
	got, err = in.InstanceForRequest(h.Ctx, "wf", "req")
	h.OK(err, "instance for the request")
	h.Eq(got.InstanceID, int64(2), "instance for the request")
	_, err = in.InstanceForRequest(h.Ctx, "wf", "other")
	h.Is(err, store.ErrNotFound, "instance for an unknown request")
	empty, _ := in.GetInstance(h.Ctx, "wf", 2)
	h.Eq(empty.Initiator != nil && len(empty.Initiator) > 0, true, "initiator")

	// An instance id that exists: an error that is no sentinel, nothing written.
	ni.RequestID, ni.InstanceID, ni.UUID = "", 2, "u4"
	_, _, err = in.CreateInstance(h.Ctx, ni)
	h.Plain(err, "create an existing instance")
	got, _ = in.GetInstance(h.Ctx, "wf", 2)
	h.Eq(got.UUID, "u2", "the existing instance")

	// A creation DynamoDB refuses (a nil event body) uses up its id.
	ni.InstanceID, ni.FirstEvent.Body = 0, nil
	_, _, err = in.CreateInstance(h.Ctx, ni)
	h.Plain(err, "an event without a body")
	_, err = in.GetInstance(h.Ctx, "wf", 3)
	h.Is(err, store.ErrNotFound, "the refused instance")
	ni.FirstEvent.Body = B(`{}`)
	ni.Initiator = nil
	rec, _, err = in.CreateInstance(h.Ctx, ni)
	h.OK(err, "create after a refused creation")
	h.Eq(rec.InstanceID, int64(4), "the refused creation's id is left unused")
	h.Eq(rec.Initiator == nil, true, "the created record's initiator is the one given")
	got, _ = in.GetInstance(h.Ctx, "wf", 4)
	h.Eq(got.Initiator != nil && len(got.Initiator) == 0, true, "a stored record without initiator has an empty one")

	// A first event past DynamoDB's item limit: an ItemTooLargeError
	// naming the event's item, nothing written, its id used up.
	ni.FirstEvent.Body = RandomJSON(450 << 10)
	_, _, err = in.CreateInstance(h.Ctx, ni)
	var tl *store.ItemTooLargeError
	if !errors.As(err, &tl) || !errors.Is(err, store.ErrItemTooLarge) || !strings.HasSuffix(tl.Item, "0-start") || tl.Bytes <= store.MaxItemBytes {
		h.Errorf("a first event of 450 KiB: got %v, want an ItemTooLargeError naming the 0-start event's item", err)
	}
	_, err = in.GetInstance(h.Ctx, "wf", 5)
	h.Is(err, store.ErrNotFound, "the instance whose event was too large")
	ni.FirstEvent.Body = B(`{}`)

	// The state is built once the id is known; its error is returned.
	ni.State = func(int64) ([]byte, error) { return nil, fmt.Errorf("no state") }
	_, _, err = in.CreateInstance(h.Ctx, ni)
	h.Plain(err, "a state that fails")
}

// reserveInstance: ids from the same counter as CreateInstance; a request
// id already used names its instance.
func reserveInstance(h *H) {
	in := h.S.Instances
	_, _, err := in.ReserveInstance(h.Ctx, "wf", "")
	h.Is(err, store.ErrNotFound, "reserve without a head")
	h.Push("wf")
	for want := int64(1); want <= 2; want++ {
		id, prior, err := in.ReserveInstance(h.Ctx, "wf", "r")
		h.OK(err, "reserve")
		h.Eq([]any{id, prior == nil}, []any{want, true}, "reserved id")
	}
	rec, _, err := in.CreateInstance(h.Ctx, store.NewInstance{WorkflowID: "wf", Version: 1, Status: "CREATED", RequestID: "r",
		State: StateOf, FirstEvent: store.Event{ID: "0-start", Body: B(`{}`)}, Now: h.Now()})
	h.OK(err, "create")
	h.Eq(rec.InstanceID, int64(3), "created after two reserves")
	id, prior, err := in.ReserveInstance(h.Ctx, "wf", "r")
	h.OK(err, "reserve a used request id")
	h.Eq([]any{id, prior != nil && prior.InstanceID == 3}, []any{int64(0), true}, "reserve a used request id")
	id, _, _ = in.ReserveInstance(h.Ctx, "wf", "")
	h.Eq(id, int64(4), "next id")
}

// reserveInstances: a batch's new ids are consecutive in request order,
// from the counter ReserveInstance and CreateInstance take from; a request
// id already used names its instance and takes no id; an empty or
// repeated request id is refused, taking nothing.
func reserveInstances(h *H) {
	in := h.S.Instances
	_, _, err := in.ReserveInstances(h.Ctx, "wf", []string{"a"})
	h.Is(err, store.ErrNotFound, "reserve without a head")
	h.Push("wf")
	id, _, err := in.ReserveInstance(h.Ctx, "wf", "")
	h.OK(err, "reserve one")
	h.Eq(id, int64(1), "the first id")
	rec, _, err := in.CreateInstance(h.Ctx, store.NewInstance{WorkflowID: "wf", Version: 1, Status: "CREATED", RequestID: "b",
		State: StateOf, FirstEvent: store.Event{ID: "0-start", Body: B(`{}`)}, Now: h.Now()})
	h.OK(err, "create")
	h.Eq(rec.InstanceID, int64(2), "created")
	ids, prior, err := in.ReserveInstances(h.Ctx, "wf", []string{"a", "b", "c", "d"})
	h.OK(err, "reserve a batch")
	h.Eq(ids, []int64{3, 0, 4, 5}, "the batch's ids")
	h.Eq([]bool{prior[0] == nil, prior[1] != nil && prior[1].InstanceID == 2, prior[2] == nil, prior[3] == nil},
		[]bool{true, true, true, true}, "the batch's prior instances")
	ids, prior, err = in.ReserveInstances(h.Ctx, "wf", []string{"b"})
	h.OK(err, "reserve a batch of one used request id")
	h.Eq([]any{ids, prior[0] != nil && prior[0].InstanceID == 2}, []any{[]int64{0}, true}, "a batch of one used request id")
	for _, bad := range [][]string{{"e", "e"}, {"e", ""}} {
		_, _, err = in.ReserveInstances(h.Ctx, "wf", bad)
		h.Plain(err, "reserve %q", bad)
	}
	id, _, _ = in.ReserveInstance(h.Ctx, "wf", "")
	h.Eq(id, int64(6), "next id after the batch")
}

// getInstances: those that exist, by id; a duplicate id is refused.
func getInstances(h *H) {
	in := h.S.Instances
	h.Push("wf")
	h.Start("wf")
	h.Start("wf")
	got, err := in.GetInstances(h.Ctx, "wf", []int64{2, 1, 7})
	h.OK(err, "get")
	h.Eq([]any{len(got), got[1].InstanceID, got[2].InstanceID}, []any{2, int64(1), int64(2)}, "instances")
	got, err = in.GetInstances(h.Ctx, "wf", nil)
	h.OK(err, "get none")
	h.Eq(got != nil && len(got) == 0, true, "no instances")
	_, err = in.GetInstances(h.Ctx, "wf", []int64{1, 1})
	h.Plain(err, "a duplicate id")
}

// listInstances: newest first, through cursors; a page that reaches its
// limit has a cursor even at the end; filtered by status.
func listInstances(h *H) {
	in := h.S.Instances
	h.Push("wf")
	for i := int64(1); i <= 7; i++ {
		status := "SUCCEEDED"
		if i%3 == 0 {
			status = "FAILED"
		}
		_, _, err := in.CreateInstance(h.Ctx, store.NewInstance{WorkflowID: "wf", Version: 1, Status: status, State: StateOf,
			FirstEvent: store.Event{ID: "0-start", Body: B(`{}`)}, Now: h.Now()})
		h.OK(err, "create")
	}
	list := func(status, cursor string, limit int) string {
		h.Helper()
		recs, next, err := in.ListInstances(h.Ctx, "wf", status, cursor, limit)
		h.OK(err, "list %q after %q", status, cursor)
		ids := []int64{}
		for _, r := range recs {
			ids = append(ids, r.InstanceID)
		}
		return fmt.Sprintf("%v next=%q", ids, next)
	}
	for _, c := range []struct {
		status, cursor string
		limit          int
		want           string
	}{
		{"", "", 3, `[7 6 5] next="5"`},
		{"", "5", 3, `[4 3 2] next="2"`},
		{"", "2", 3, `[1] next=""`},
		{"", "", 7, `[7 6 5 4 3 2 1] next="1"`},
		{"", "1", 7, `[] next=""`},
		{"", "", 10, `[7 6 5 4 3 2 1] next=""`},
		{"", "5abc", 3, `[4 3 2] next="2"`}, // the cursor's leading number
		{"FAILED", "", 1, `[6] next="6"`},
		{"FAILED", "6", 1, `[3] next=""`},
		{"FAILED", "", 5, `[6 3] next=""`},
		{"RUNNING", "", 5, `[] next=""`},
	} {
		h.Eq(list(c.status, c.cursor, c.limit), c.want, "list %q after %q by %d", c.status, c.cursor, c.limit)
	}
	for _, bad := range []string{"x", "0", "-3"} {
		_, _, err := in.ListInstances(h.Ctx, "wf", "", bad, 3)
		h.Is(err, store.ErrBadCursor, "cursor %q", bad)
	}
	_, _, err := in.ListInstances(h.Ctx, "wf", "", "", 0)
	h.Plain(err, "a limit of 0")
	recs, _, err := in.ListInstances(h.Ctx, "wf", "", "", 1)
	h.OK(err, "list")
	one, _ := in.GetInstance(h.Ctx, "wf", 7)
	h.Eq(*recs[0], *one, "a listed instance is the instance")
}

// listInstancesFiltered: a filtered listing reads pages of 250 instances;
// its cursor goes on from the last match when its limit is reached.
func listInstancesFiltered(h *H) {
	in := h.S.Instances
	h.Push("wf")
	const n = 260
	h.Parallel(n, func(i int) error {
		id := int64(i + 1)
		status := "SUCCEEDED"
		if id == 1 || id == 255 {
			status = "FAILED"
		}
		c := store.Commit{WorkflowID: "wf", InstanceID: id, RunID: 1, Status: status, State: B(`{}`),
			Create: &store.InstanceRecord{WorkflowID: "wf", InstanceID: id, RunID: 1, Status: status}}
		return h.S.Runs.CommitRun(h.Ctx, c)
	})
	for _, c := range []struct {
		cursor string
		limit  int
		want   []int64
		next   string
	}{
		{"", 1, []int64{255}, "255"},
		{"255", 1, []int64{1}, ""},
		{"", 5, []int64{255, 1}, ""},
	} {
		recs, next, err := in.ListInstances(h.Ctx, "wf", "FAILED", c.cursor, c.limit)
		h.OK(err, "list")
		var ids []int64
		for _, r := range recs {
			ids = append(ids, r.InstanceID)
		}
		h.Eq([]any{ids, next}, []any{c.want, c.next}, "failed after %q by %d", c.cursor, c.limit)
	}
	recs, next, err := in.ListInstances(h.Ctx, "wf", "", "", 300)
	h.OK(err, "list all")
	h.Eq([]any{len(recs), next}, []any{n, ""}, "all")
}

// runStrategyQueue: the queue of runs waiting for a slot, its version,
// the runs holding slots, and giving a slot back.
func runStrategyQueue(h *H) {
	in := h.S.Instances
	h.Push("wf")
	qv := func() int64 {
		h.Helper()
		v, err := in.QueueVersion(h.Ctx, "wf")
		h.OK(err, "queue version")
		return v
	}
	oldest := func(except int64) string {
		h.Helper()
		inst, run, ok, err := in.OldestQueued(h.Ctx, "wf", except)
		h.OK(err, "oldest queued")
		return fmt.Sprint(inst, run, ok)
	}
	active := func(except int64) string {
		h.Helper()
		holding, queued, err := in.ActiveRuns(h.Ctx, "wf", except)
		h.OK(err, "active runs")
		slices.SortFunc(holding, func(a, b store.RunRef) int { return int(a.InstanceID - b.InstanceID) })
		return fmt.Sprintf("holding %v queued %v", holding, queued)
	}
	h.Eq([]any{qv(), oldest(0), active(0)}, []any{int64(0), "0 0 false", "holding [] queued []"}, "nothing queued")
	h.OK(in.Enqueue(h.Ctx, "wf", 3, 1), "enqueue 3")
	h.OK(in.Enqueue(h.Ctx, "wf", 1, 2), "enqueue 1")
	h.Eq([]any{qv(), oldest(0), oldest(1), oldest(3)}, []any{int64(2), "1 2 true", "3 1 true", "1 2 true"}, "two queued")
	h.OK(in.Enqueue(h.Ctx, "wf", 1, 3), "enqueue 1 again")
	h.Eq([]any{qv(), active(0), active(3)}, []any{int64(3), "holding [] queued [{1 3} {3 1}]", "holding [] queued [{1 3}]"}, "queue")

	for _, inst := range []int64{9, 10, 11} {
		h.OK(h.Create("wf", inst, store.Commit{SlotDelta: 1, Admit: true, SlotLimit: 5}), "instance %d takes a slot", inst)
	}
	h.Eq(active(10), "holding [{9 1} {11 1}] queued [{1 3} {3 1}]", "holders")
	h.OK(in.ReleaseSlot(h.Ctx, "wf", 10, 1, &store.RunEvent{InstanceID: 11, RunID: 1, Event: store.Event{ID: "wake", Body: B(`{"w":1}`)}}), "release")
	h.Eq(active(0), "holding [{9 1} {11 1}] queued [{1 3} {3 1}]", "after a release")
	h.Eq(h.Events("wf", 11, 1), []string{`wake={"w":1}`}, "the released slot's wake")
	h.Is(in.ReleaseSlot(h.Ctx, "wf", 10, 1, nil), store.ErrNotHolding, "release twice")
	h.Is(in.ReleaseSlot(h.Ctx, "other", 1, 1, nil), store.ErrNotHolding, "release in a workflow without slots")
	h.Is(in.ReleaseSlot(h.Ctx, "wf", 9, 2, nil), store.ErrNotHolding, "release another run's slot")
	h.OK(h.Commit("wf", 9, 1, 1, store.Commit{Dequeue: true, SlotDelta: -1}), "instance 9 ends")
	h.Eq(active(0), "holding [{11 1}] queued [{1 3} {3 1}]", "after instance 9 ended")
	h.OK(h.Commit("wf", 1, 1, 0, store.Commit{Create: &store.InstanceRecord{WorkflowID: "wf", InstanceID: 1, RunID: 1}, Dequeue: true}), "instance 1 is dequeued")
	h.Eq(active(0), "holding [{11 1}] queued [{3 1}]", "after a dequeue")
}

// concurrentStarts: concurrent starts get distinct ids; concurrent starts
// of one request id create one instance, and every one of them returns
// it.
func concurrentStarts(h *H) {
	in := h.S.Instances
	h.Push("wf")
	const n = 16
	ids := make([]int64, n)
	created := make([]bool, n)
	h.Parallel(n, func(i int) error {
		ni := store.NewInstance{WorkflowID: "wf", Version: 1, UUID: fmt.Sprint(i), Status: "CREATED", State: StateOf,
			FirstEvent: store.Event{ID: "0-start", Body: B(`{}`)}, Now: h.Now()}
		if i%2 == 1 {
			ni.RequestID = "same"
		}
		rec, c, err := in.CreateInstance(h.Ctx, ni)
		if err != nil {
			return err
		}
		ids[i], created[i] = rec.InstanceID, c
		return nil
	})
	distinct := map[int64]bool{}
	var same []int64
	winners := 0
	for i := range n {
		if i%2 == 0 {
			h.Eq(created[i], true, "start %d without a request id", i)
			distinct[ids[i]] = true
			continue
		}
		same = append(same, ids[i])
		if created[i] {
			winners++
		}
	}
	h.Eq(len(distinct), n/2, "distinct ids of starts without a request id")
	h.Eq(winners, 1, "starts of one request id that created it")
	for _, id := range same {
		h.Eq(id, same[0], "the request id's instance")
	}
	if distinct[same[0]] {
		h.Errorf("instance %d handed out twice", same[0])
	}
	rec, err := in.InstanceForRequest(h.Ctx, "wf", "same")
	h.OK(err, "the request's instance")
	h.Eq(rec.InstanceID, same[0], "the request's instance")
}
