package storetest

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"time"

	"github.com/maestro-serverless/maestro/store"
)

// DueAll lists every shard's items due at t.
func (h *H) DueAll(t time.Time) []store.Due {
	h.Helper()
	var all []store.Due
	for shard := range store.SweepShards {
		items, err := h.S.Sweeps.DueItems(h.Ctx, shard, t, 1000)
		h.OK(err, "due items of shard %d", shard)
		all = append(all, items...)
	}
	slices.SortStableFunc(all, func(a, b store.Due) int { return int(a.At - b.At) })
	return all
}

// dueText describes due items.
func dueText(ds []store.Due) string {
	var out []string
	for _, d := range ds {
		switch {
		case d.Signal != "":
			out = append(out, fmt.Sprintf("signal %s/%d@%d", d.Signal, d.SignalSeq, d.At))
		case d.Run:
			out = append(out, fmt.Sprintf("run %s/%d/%d@%d", d.WorkflowID, d.InstanceID, d.RunID, d.At))
		default:
			out = append(out, fmt.Sprintf("event %s/%d/%d/%s@%d", d.WorkflowID, d.InstanceID, d.RunID, d.EventID, d.At))
		}
	}
	return strings.Join(out, " ")
}

// shardOf is the sweep shard of partition pk: FNV-1a of the key, modulo
// store.SweepShards.
func shardOf(pk string) int {
	f := fnv.New32a()
	f.Write([]byte(pk))
	return int(f.Sum32() % store.SweepShards)
}

// dueTimes: an inbox event is due store.DefaultEventSweepAfter after it
// was written (plus its backstop delay) unless Covered; PutEvent keeps an
// event's time, a commit's new event sets it anew; a run is due at the
// SweepAt of its last commit; consumed events and ended runs leave the
// index; items are listed earliest first, a limit at a time.
func dueTimes(h *H) {
	t0 := h.Now()
	at := func(d time.Duration) int64 { return t0.Add(d).UnixMilli() }
	h.Push("wf")
	h.Start("wf")
	h.Eq(dueText(h.DueAll(t0.Add(30*time.Second-time.Millisecond))), "", "due before its time")
	h.Eq(dueText(h.DueAll(t0.Add(30*time.Second))), fmt.Sprintf("event wf/1/1/0-start@%d", at(30*time.Second)), "the start event")
	r := h.S.Runs
	h.OK(r.PutEvent(h.Ctx, "wf", 1, 1, store.Event{ID: "covered", Body: B(`{}`), Covered: true}), "a covered event")
	h.OK(r.PutEvent(h.Ctx, "wf", 1, 1, store.Event{ID: "backstop", Body: B(`{}`), WakeAfter: 10}), "an event with a backstop")
	h.OK(r.PutEvent(h.Ctx, "wf", 1, 1, store.Event{ID: "long", Body: B(`{}`), WakeAfter: 2000}), "an event with a long backstop")
	h.Clock.Add(5 * time.Second)
	h.OK(r.PutEvent(h.Ctx, "wf", 1, 1, store.Event{ID: "later", Body: B(`{}`)}), "a later event")
	h.OK(r.PutEvent(h.Ctx, "wf", 1, 1, store.Event{ID: "0-start", Body: B(`{}`)}), "the start event again")
	want := fmt.Sprintf("event wf/1/1/0-start@%d event wf/1/1/later@%d event wf/1/1/backstop@%d event wf/1/1/long@%d",
		at(30*time.Second), at(35*time.Second), at(40*time.Second), at(2030*time.Second))
	h.Eq(dueText(h.DueAll(t0.Add(time.Hour))), want, "events by due time (PutEvent keeps an event's)")
	shard := shardOf("R#wf#1")
	ds, err := h.S.Sweeps.DueItems(h.Ctx, shard, t0.Add(time.Hour), 2)
	h.OK(err, "due items")
	h.Eq(dueText(ds), fmt.Sprintf("event wf/1/1/0-start@%d event wf/1/1/later@%d", at(30*time.Second), at(35*time.Second)), "a limit of 2")
	ds, err = h.S.Sweeps.DueItems(h.Ctx, shard, t0.Add(time.Hour), 0)
	h.OK(err, "due items")
	h.Eq(len(ds), 0, "a limit of 0")
	ds, err = h.S.Sweeps.DueItems(h.Ctx, (shard+1)%store.SweepShards, t0.Add(time.Hour), 10)
	h.OK(err, "another shard")
	h.Eq(len(ds), 0, "another shard")

	// A commit sets the run's due time and consumes events; its new events
	// are due from now.
	h.Clock.Add(5 * time.Second)
	run, _ := h.Load("wf", 1, 1)
	h.Eq(run.SweepAt, int64(0), "a run never committed with a due time")
	h.OK(h.Commit("wf", 1, 1, run.V, store.Commit{Consumed: []string{"0-start", "backstop", "long", "covered"}, SweepAt: at(time.Minute),
		NewEvents: []store.Event{{ID: "later", Body: B(`{}`)}, {ID: "continue", Body: B(`{}`), WakeAfter: 3}, {ID: "quiet", Body: B(`{}`), Covered: true}}}), "commit")
	h.Eq(dueText(h.DueAll(t0.Add(time.Hour))), fmt.Sprintf("event wf/1/1/later@%d event wf/1/1/continue@%d run wf/1/1@%d",
		at(40*time.Second), at(43*time.Second), at(time.Minute)), "after the commit")
	run, _ = h.Load("wf", 1, 1)
	h.Eq(run.SweepAt, at(time.Minute), "the run's due time")
	q, _, _ := r.LoadQuietRun(h.Ctx, "wf", 1, 1)
	h.Eq(q == nil, true, "not quiet")
	h.OK(h.Commit("wf", 1, 1, run.V, store.Commit{Consumed: []string{"later", "continue", "quiet"}, SweepAt: at(2 * time.Minute)}), "commit again")
	h.Eq(dueText(h.DueAll(t0.Add(time.Hour))), fmt.Sprintf("run wf/1/1@%d", at(2*time.Minute)), "a commit moves the run's time")
	q, _, _ = r.LoadQuietRun(h.Ctx, "wf", 1, 1)
	h.Eq(q.SweepAt, at(2*time.Minute), "the quiet run's due time")
	h.OK(h.Commit("wf", 1, 1, run.V+1, store.Commit{Status: "SUCCEEDED"}), "the run ends")
	h.Eq(dueText(h.DueAll(t0.Add(24*time.Hour))), "", "an ended run")
	h.OK(h.Commit("wf", 1, 1, run.V+2, store.Commit{SweepAt: -5}), "a negative due time")
	h.Eq(dueText(h.DueAll(t0.Add(24*time.Hour))), "", "a negative due time is none")

	// A released slot's wake is due as any event.
	h.Push("w2")
	h.Start("w2")
	h.OK(h.Create("w2", 2, store.Commit{SlotDelta: 1}), "hold a slot")
	h.Clock.Add(time.Second)
	h.OK(h.S.Instances.ReleaseSlot(h.Ctx, "w2", 2, 1, &store.RunEvent{InstanceID: 1, RunID: 1, Event: store.Event{ID: "wake", Body: B(`{}`)}}), "release")
	h.Eq(dueText(h.DueAll(t0.Add(time.Hour))), fmt.Sprintf("event w2/1/1/0-start@%d event w2/1/1/wake@%d", at(40*time.Second), at(41*time.Second)),
		"a released slot's wake")
}

// redriveAndUnsweep: a redrive puts its event only while the run is due
// at the time read and the event is not there; UnsweepEvents takes a
// run's events out of the index, leaving them pending.
func redriveAndUnsweep(h *H) {
	t0 := h.Now()
	h.Push("wf")
	h.Start("wf")
	sw := h.S.Sweeps
	due := t0.Add(time.Minute).UnixMilli()
	h.OK(h.Commit("wf", 1, 1, 1, store.Commit{Consumed: []string{"0-start"}, SweepAt: due}), "commit")
	ds := h.DueAll(t0.Add(time.Hour))
	h.Eq(dueText(ds), fmt.Sprintf("run wf/1/1@%d", due), "the run is due")
	runDue := ds[0]
	stale := runDue
	stale.At--
	ev := store.Event{ID: "r-1", Body: B(`{"kind":"redrive"}`)}
	h.Is(sw.Redrive(h.Ctx, stale, ev), store.ErrConflict, "a redrive read at another due time")
	h.Clock.Add(2 * time.Minute)
	h.OK(sw.Redrive(h.Ctx, runDue, ev), "redrive")
	h.Is(sw.Redrive(h.Ctx, runDue, ev), store.ErrConflict, "the same redrive again")
	h.Is(sw.Redrive(h.Ctx, store.Due{WorkflowID: "wf", InstanceID: 7, RunID: 1, Run: true, At: due}, ev), store.ErrConflict, "a redrive of a missing run")
	h.Eq(h.Events("wf", 1, 1), []string{`r-1={"kind":"redrive"}`}, "the redrive's event")
	h.Eq(dueText(h.DueAll(t0.Add(time.Hour))), fmt.Sprintf("run wf/1/1@%d event wf/1/1/r-1@%d", due, t0.Add(150*time.Second).UnixMilli()),
		"the redrive's event is due")
	h.OK(h.Commit("wf", 1, 1, 2, store.Commit{}), "a commit without a due time")
	h.Is(sw.Redrive(h.Ctx, runDue, store.Event{ID: "r-2", Body: B(`{}`)}), store.ErrConflict, "a redrive of a run no longer due")
	h.Plain(sw.Redrive(h.Ctx, runDue, store.Event{ID: "r-3"}), "a redrive without a body")

	h.OK(h.S.Runs.PutEvent(h.Ctx, "wf", 1, 1, store.Event{ID: "a-1", Body: B(`{}`)}), "put")
	h.OK(h.S.Runs.PutEvent(h.Ctx, "wf", 1, 2, store.Event{ID: "b-1", Body: B(`{}`)}), "an event of run 2")
	h.Eq(len(h.DueAll(t0.Add(time.Hour))), 3, "due before")
	h.OK(sw.UnsweepEvents(h.Ctx, "wf", 1, 1), "unsweep")
	h.Eq(dueText(h.DueAll(t0.Add(time.Hour))), fmt.Sprintf("event wf/1/2/b-1@%d", t0.Add(150*time.Second).UnixMilli()), "due after (run 2's event stays)")
	h.Eq(h.Events("wf", 1, 1), []string{`a-1={}`, `r-1={"kind":"redrive"}`}, "the events stay pending")
	h.OK(sw.UnsweepEvents(h.Ctx, "wf", 1, 1), "unsweep twice")
	h.OK(sw.UnsweepEvents(h.Ctx, "wf", 9, 1), "unsweep a run without events")
	h.OK(h.S.Runs.PutEvent(h.Ctx, "wf", 1, 1, store.Event{ID: "a-1", Body: B(`{}`)}), "put an unswept event again")
	h.Eq(len(h.DueAll(t0.Add(time.Hour))), 1, "PutEvent leaves an event that is there as it is")
}

// shards: every item is in the shard its partition key hashes to.
func shards(h *H) {
	seen := map[int]bool{}
	for i := range 12 {
		wf := fmt.Sprint("wf", i)
		h.Push(wf)
		h.Start(wf)
		seen[shardOf("R#"+wf+"#1")] = true
	}
	_, _, err := h.S.Signals.AnnounceSignal(h.Ctx, store.NewSignal{Name: "sig", Now: h.Now(),
		Outbox: func(int64) ([]store.Message, error) { return nil, nil }})
	h.OK(err, "announce")
	if len(seen) < 3 {
		h.Fatalf("12 workflows in %d shards", len(seen))
	}
	for shard := range store.SweepShards {
		ds, err := h.S.Sweeps.DueItems(h.Ctx, shard, h.Now().Add(time.Hour), 100)
		h.OK(err, "shard %d", shard)
		var got, want []string
		for _, d := range ds {
			got = append(got, d.WorkflowID+d.Signal)
		}
		for i := range 12 {
			if wf := fmt.Sprint("wf", i); shardOf("R#"+wf+"#1") == shard {
				want = append(want, wf)
			}
		}
		if shardOf("SIG#sig") == shard {
			want = append(want, "sig")
		}
		slices.Sort(got)
		slices.Sort(want)
		h.Eq(got, want, "shard %d", shard)
	}
	ds, err := h.S.Sweeps.DueItems(h.Ctx, store.SweepShards, h.Now().Add(time.Hour), 100)
	h.OK(err, "a shard past the last")
	h.Eq(len(ds), 0, "a shard past the last")
}
