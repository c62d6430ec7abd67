package storetest

import (
	"fmt"

	"github.com/maestro-serverless/maestro/store"
)

// permitText formats p, its queue's capacity included.
func permitText(p store.TagPermit) string {
	q := p.Queue
	p.Queue = nil
	if q == nil {
		return fmt.Sprintf("%#v", p)
	}
	return fmt.Sprintf("%#v queue %#v", p, *q)
}

// breakpoints: keyed by every match field (the same one twice is stored
// once), listed in key order, of one step or all; deleted by step (all of
// them for an empty step).
func breakpoints(h *H) {
	g := h.S.Gates
	list := func(wf, step string) string {
		h.Helper()
		bps, err := g.ListBreakpoints(h.Ctx, wf, step, false)
		h.OK(err, "list")
		var out []string
		for _, b := range bps {
			out = append(out, fmt.Sprintf("%s/%d/%d/%d/%d@%d", b.StepID, b.Version, b.Instance, b.Run, b.Attempt, b.CreateTime))
		}
		return fmt.Sprint(bps == nil, out)
	}
	h.Eq(list("wf", ""), "true []", "no breakpoints")
	for _, b := range []store.Breakpoint{{StepID: "s", CreateTime: 1}, {StepID: "s", CreateTime: 2}, {StepID: "s", Version: 2, Instance: 3, Run: 4, Attempt: 5},
		{StepID: "ab"}, {StepID: "a", Instance: 12}, {StepID: "a", Instance: 9}} {
		h.OK(g.PutBreakpoint(h.Ctx, "wf", b), "put %+v", b)
	}
	h.OK(g.PutBreakpoint(h.Ctx, "other", store.Breakpoint{StepID: "s"}), "put another workflow's")
	h.Eq(list("wf", ""), "false [a/0/9/0/0@0 a/0/12/0/0@0 ab/0/0/0/0@0 s/0/0/0/0@2 s/2/3/4/5@0]", "all")
	h.Eq(list("wf", "a"), "false [a/0/9/0/0@0 a/0/12/0/0@0]", "step a (not ab)")
	bps, err := g.ListBreakpoints(h.Ctx, "wf", "s", true)
	h.OK(err, "list consistent")
	h.Eq(len(bps), 2, "step s")
	bps, err = g.DeleteBreakpoints(h.Ctx, "wf", "s")
	h.OK(err, "delete s")
	h.Eq(len(bps), 2, "deleted")
	h.Eq(list("wf", ""), "false [a/0/9/0/0@0 a/0/12/0/0@0 ab/0/0/0/0@0]", "after deleting s")
	bps, err = g.DeleteBreakpoints(h.Ctx, "wf", "x")
	h.OK(err, "delete none")
	h.Eq(bps == nil, true, "nothing deleted")
	bps, err = g.DeleteBreakpoints(h.Ctx, "wf", "")
	h.OK(err, "delete all")
	h.Eq(len(bps), 3, "deleted all")
	h.Eq(list("wf", ""), "true []", "after deleting all")
	h.Eq(list("other", ""), "false [s/0/0/0/0@0]", "another workflow's")
}

// tagPermits: put creates or changes the limit (holders kept, version
// bumped); commits change holders and waiters on the version read.
func tagPermits(h *H) {
	g := h.S.Gates
	h.Push("wf")
	h.Start("wf")
	_, err := g.GetTagPermit(h.Ctx, "t")
	h.Is(err, store.ErrNotFound, "a missing permit")
	p, err := g.PutTagPermit(h.Ctx, "t", 2, 100)
	h.OK(err, "put")
	h.Eq(*p, store.TagPermit{Tag: "t", MaxAllowed: 2, Holders: map[string]int64{}, Waiters: map[string]int64{}, V: 1, CreateTime: 100, ModifyTime: 100}, "created")
	p, err = g.PutTagPermit(h.Ctx, "t", 3, 200)
	h.OK(err, "put again")
	h.Eq(*p, store.TagPermit{Tag: "t", MaxAllowed: 3, Holders: map[string]int64{}, Waiters: map[string]int64{}, V: 2, CreateTime: 100, ModifyTime: 200}, "changed")
	update := func(v int64, u store.PermitUpdate) error {
		u.Tag, u.ExpectV = "t", v
		run, _ := h.Load("wf", 1, 1)
		return h.Commit("wf", 1, 1, run.V, store.Commit{Permits: []store.PermitUpdate{u}})
	}
	h.OK(update(2, store.PermitUpdate{Hold: map[string]int64{"k1": 5, "k2": 6}, Wait: map[string]int64{"w1": 7}}), "hold")
	h.Is(update(2, store.PermitUpdate{Hold: map[string]int64{"k9": 1}}), store.ErrConflict, "hold on a stale version")
	h.OK(update(3, store.PermitUpdate{Release: []string{"k1", "gone"}, Unwait: []string{"w1"}, Hold: map[string]int64{"k3": 8}}), "release and hold")
	h.OK(update(99, store.PermitUpdate{}), "an empty update is not written")
	p, err = g.PutTagPermit(h.Ctx, "t", 1, 300)
	h.OK(err, "put keeps holders")
	want := store.TagPermit{Tag: "t", MaxAllowed: 1, Holders: map[string]int64{"k2": 6, "k3": 8}, Waiters: map[string]int64{}, V: 5, CreateTime: 100, ModifyTime: 300}
	h.Eq(*p, want, "after the updates")
	got, err := g.GetTagPermit(h.Ctx, "t")
	h.OK(err, "get")
	h.Eq(*got, want, "read")
	h.OK(update(5, store.PermitUpdate{Hold: map[string]int64{"k": 1}}), "hold after a put")
	u := store.PermitUpdate{Tag: "missing", ExpectV: 0, Hold: map[string]int64{"k": 1}}
	run, _ := h.Load("wf", 1, 1)
	h.Is(h.Commit("wf", 1, 1, run.V, store.Commit{Permits: []store.PermitUpdate{u}}), store.ErrConflict, "an update of a missing permit")
	_, err = g.PutTagPermit(h.Ctx, "u", 1, 400)
	h.OK(err, "put u")
	m, err := g.GetTagPermits(h.Ctx, []string{"u", "missing", "t", "u"})
	h.OK(err, "get many")
	h.Eq([]any{len(m), m["t"].V, m["u"].V}, []any{2, int64(6), int64(1)}, "permits")
	m, err = g.GetTagPermits(h.Ctx, nil)
	h.OK(err, "get none")
	h.Eq(m != nil && len(m) == 0, true, "none")
	del, err := g.DeleteTagPermit(h.Ctx, "t")
	h.OK(err, "delete")
	want.V = 6
	want.Holders = map[string]int64{"k": 1, "k2": 6, "k3": 8}
	h.Eq(*del, want, "deleted as it was")
	_, err = g.DeleteTagPermit(h.Ctx, "t")
	h.Is(err, store.ErrNotFound, "delete twice")
	_, err = g.GetTagPermit(h.Ctx, "t")
	h.Is(err, store.ErrNotFound, "a deleted permit")
}

// jobQueues: a job queue is a permit with a capacity, changed by commits
// as tag permits are; listed all at once.
func jobQueues(h *H) {
	g := h.S.Gates
	h.Push("wf")
	h.Start("wf")
	_, err := g.GetJobQueue(h.Ctx, "q")
	h.Is(err, store.ErrNotFound, "a missing queue")
	all, err := g.GetJobQueues(h.Ctx)
	h.OK(err, "all")
	h.Eq(all != nil && len(all) == 0, true, "no queues")
	capacity := store.QueueCapacity{CPU: 4000, Memory: 8192, GPU: 1, AgingMillis: 60_000}
	q, err := g.PutJobQueue(h.Ctx, "q", capacity, 100)
	h.OK(err, "put")
	want := store.TagPermit{Tag: "q", Holders: map[string]int64{}, Waiters: map[string]int64{}, Queue: &capacity, V: 1, CreateTime: 100, ModifyTime: 100}
	h.Eq(permitText(*q), permitText(want), "created")
	_, err = g.PutJobQueue(h.Ctx, "r", store.QueueCapacity{CPU: 1}, 100)
	h.OK(err, "put r")
	entry := store.QueueEntry{Key: store.PermitKey("wf", 1, 1, "s", 1), Priority: 5, CPU: 1000, Memory: 512}.String()
	h.OK(h.Commit("wf", 1, 1, 1, store.Commit{Permits: []store.PermitUpdate{{Tag: "q", Queue: true, ExpectV: 1, Hold: map[string]int64{entry: 9}}}}), "hold")
	h.Is(h.Commit("wf", 1, 1, 2, store.Commit{Permits: []store.PermitUpdate{{Tag: "q", Queue: true, ExpectV: 1, Wait: map[string]int64{entry: 9}}}}),
		store.ErrConflict, "hold on a stale version")
	_, err = g.GetTagPermit(h.Ctx, "q")
	h.Is(err, store.ErrNotFound, "a queue is no tag permit")
	capacity.CPU = 8000
	q, err = g.PutJobQueue(h.Ctx, "q", capacity, 200)
	h.OK(err, "change the capacity")
	want = store.TagPermit{Tag: "q", Holders: map[string]int64{entry: 9}, Waiters: map[string]int64{}, Queue: &capacity, V: 3, CreateTime: 100, ModifyTime: 200}
	h.Eq(permitText(*q), permitText(want), "changed")
	all, err = g.GetJobQueues(h.Ctx)
	h.OK(err, "all")
	h.Eq([]any{len(all), permitText(*all["q"]), all["r"].Queue.CPU}, []any{2, permitText(want), int64(1)}, "all queues")
	got, err := g.GetJobQueue(h.Ctx, "q")
	h.OK(err, "get")
	h.Eq(permitText(*got), permitText(want), "read")
	del, err := g.DeleteJobQueue(h.Ctx, "q")
	h.OK(err, "delete")
	h.Eq(permitText(*del), permitText(want), "deleted as it was")
	_, err = g.DeleteJobQueue(h.Ctx, "q")
	h.Is(err, store.ErrNotFound, "delete twice")
	parsed, err := store.ParseQueueEntry(entry)
	h.OK(err, "entry")
	h.Eq(parsed.Priority, int64(5), "entry")
}
