package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/signals"
	"github.com/maestro-serverless/maestro/store"
)

// Announce stores a signal of name with params, failing on an error, and
// returns its number.
func (h *H) Announce(name string, params map[string]any) int64 {
	h.Helper()
	rec, created, err := h.S.Signals.AnnounceSignal(h.Ctx, store.NewSignal{Name: name, Params: params, Now: h.Now()})
	h.OK(err, "announce %s %v", name, params)
	if !created {
		h.Fatalf("announce %s: not created", name)
	}
	return rec.Seq
}

// announce: numbers per name; a request id announces once; what is
// returned and what is read back; params that cannot be indexed are
// refused (their number used up); a signal with a delivery is due in the
// sweep index until delivered.
func announce(h *H) {
	sg := h.S.Signals
	at := h.Ms()
	rec, created, err := sg.AnnounceSignal(h.Ctx, store.NewSignal{Name: "n", Params: map[string]any{"k": "v", "n": int64(5)}, Payload: B(`{"p":1}`),
		RequestID: "r1", Source: B(`{"s":"api"}`), Now: h.Now()})
	h.OK(err, "announce")
	want := store.SignalRecord{Name: "n", Seq: 1, Params: B(`{"k":"v","n":5}`), Payload: B(`{"p":1}`), RequestID: "r1", Source: B(`{"s":"api"}`), CreateTime: at}
	h.Eq([]any{*rec, created}, []any{want, true}, "announced")
	rec, created, err = sg.AnnounceSignal(h.Ctx, store.NewSignal{Name: "n", Params: map[string]any{"k": "other"}, RequestID: "r1", Now: h.Now()})
	h.OK(err, "announce again")
	h.Eq([]any{*rec, created}, []any{want, false}, "announced again")
	got, err := sg.GetSignal(h.Ctx, "n", 1)
	h.OK(err, "get")
	h.Eq(*got, want, "stored")

	// Without payload, source or params: returned as given, read back as stored.
	rec, _, err = sg.AnnounceSignal(h.Ctx, store.NewSignal{Name: "n", Now: h.Now()})
	h.OK(err, "announce a bare signal")
	h.Eq(*rec, store.SignalRecord{Name: "n", Seq: 2, Params: B(`{}`), CreateTime: at}, "a bare signal as returned")
	got, _ = sg.GetSignal(h.Ctx, "n", 0)
	h.Eq(*got, store.SignalRecord{Name: "n", Seq: 2, Params: B(`{}`), Payload: B(`{}`), Source: []byte{}, CreateTime: at}, "a bare signal as read (the latest)")
	sig, err := got.Signal()
	h.OK(err, "decode")
	h.Eq(sig, signals.Signal{Name: "n", Seq: 2, CreateTime: at}, "a bare signal decoded")
	_, err = sg.GetSignal(h.Ctx, "n", 9)
	h.Is(err, store.ErrNotFound, "a signal not announced")
	_, err = sg.GetSignal(h.Ctx, "none", 0)
	h.Is(err, store.ErrNotFound, "the latest of a name never announced")

	for _, bad := range []any{1, 1.5, true, []string{}} {
		_, _, err := sg.AnnounceSignal(h.Ctx, store.NewSignal{Name: "n", Params: map[string]any{"x": bad}, Now: h.Now()})
		h.Plain(err, "a param of type %T", bad)
	}
	many := map[string]any{}
	for i := range store.MaxTransactItems - 1 {
		many[fmt.Sprint("p", i)] = int64(i)
	}
	_, _, err = sg.AnnounceSignal(h.Ctx, store.NewSignal{Name: "n", Params: many, Now: h.Now()})
	h.Plain(err, "99 params")
	h.Eq(h.Announce("n", map[string]any{"k": "w"}), int64(7), "the refused announcements used up 4 numbers, the one with too many params none")

	// A delivery makes the signal due until it is delivered.
	rec, _, err = sg.AnnounceSignal(h.Ctx, store.NewSignal{Name: "d", Now: h.Now(),
		Outbox: func(seq int64) ([]store.Message, error) {
			return []store.Message{{Queue: store.QueueWork, Body: fmt.Sprint(seq)}}, nil
		}})
	h.OK(err, "announce with a delivery")
	due := h.DueAll(h.Now().Add(store.DefaultEventSweepAfter))
	h.Eq(due, []store.Due{{Signal: "d", SignalSeq: rec.Seq, At: h.Now().Add(store.DefaultEventSweepAfter).UnixMilli()}}, "due signals")
	h.Eq(len(h.DueAll(h.Now().Add(store.DefaultEventSweepAfter-time.Millisecond))), 0, "due a moment before")
	h.OK(sg.SignalDelivered(h.Ctx, "d", rec.Seq), "delivered")
	h.OK(sg.SignalDelivered(h.Ctx, "d", rec.Seq), "delivered twice")
	h.OK(sg.SignalDelivered(h.Ctx, "d", 99), "a signal not announced delivered")
	h.OK(sg.SignalDelivered(h.Ctx, "n", 1), "a signal without a delivery delivered")
	h.Eq(len(h.DueAll(h.Now().Add(time.Hour))), 0, "due after the delivery")
	_, _, err = sg.AnnounceSignal(h.Ctx, store.NewSignal{Name: "d", Now: h.Now(),
		Outbox: func(int64) ([]store.Message, error) { return nil, fmt.Errorf("no outbox") }})
	h.Plain(err, "an outbox that fails")
}

func cond(p string, op model.SignalOperator, v any) signals.Condition {
	return signals.Condition{Param: p, Op: op, Value: v}
}

// findSignal: a lookup over the whole history — newest first among equal
// values, the highest value first for a range — keeping LONGs exact and
// matching long strings by their whole value.
func findSignal(h *H) {
	sg := h.S.Signals
	const name = "db/history"
	find := func(conds ...signals.Condition) string {
		h.Helper()
		sig, ok, err := sg.FindSignal(h.Ctx, name, conds)
		h.OK(err, "find %v", conds)
		if !ok {
			return "none"
		}
		keys := make([]string, 0, len(sig.Params))
		for k := range sig.Params {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		var ps []string
		for _, k := range keys {
			v := fmt.Sprint(sig.Params[k])
			if len(v) > 20 {
				v = v[:10] + "..." + v[len(v)-3:]
			}
			ps = append(ps, fmt.Sprintf("%s=%v", k, v))
		}
		return fmt.Sprintf("%d %s payload=%v t=%d", sig.Seq, strings.Join(ps, ","), sig.Payload, sig.CreateTime)
	}
	h.Eq(find(), "none", "a name never announced")
	var seqs []int64
	for i := range 120 {
		seqs = append(seqs, h.Announce(name, map[string]any{"dt": int64(20260000 + i), "hour": fmt.Sprintf("%02d", i%24)}))
	}
	at := h.Ms()
	for _, c := range []struct {
		conds []signals.Condition
		want  string
	}{
		{[]signals.Condition{cond("dt", model.OpEqual, int64(20260009))}, fmt.Sprintf("%d dt=20260009,hour=09 payload=map[] t=0", seqs[9])},
		{[]signals.Condition{cond("dt", model.OpEqual, int64(20260009)), cond("hour", model.OpEqual, "10")}, "none"},
		{[]signals.Condition{cond("hour", model.OpEqual, "05")}, fmt.Sprintf("%d dt=20260101,hour=05 payload=map[] t=0", seqs[101])},
		{[]signals.Condition{cond("dt", model.OpLess, int64(20260010)), cond("hour", model.OpEqual, "03")}, fmt.Sprintf("%d dt=20260003,hour=03 payload=map[] t=0", seqs[3])},
		{[]signals.Condition{cond("dt", model.OpGreaterEqual, int64(20260100))}, fmt.Sprintf("%d dt=20260119,hour=23 payload=map[] t=0", seqs[119])},
		{[]signals.Condition{cond("dt", model.OpGreater, int64(20260119))}, "none"},
		{[]signals.Condition{cond("dt", model.OpLessEqual, int64(20260000))}, fmt.Sprintf("%d dt=20260000,hour=00 payload=map[] t=0", seqs[0])},
		{[]signals.Condition{cond("dt", model.OpLess, int64(20260000))}, "none"},
		{[]signals.Condition{cond("hour", model.OpGreater, "22")}, fmt.Sprintf("%d dt=20260119,hour=23 payload=map[] t=0", seqs[119])},
		{[]signals.Condition{cond("hour", model.OpLess, "01")}, fmt.Sprintf("%d dt=20260096,hour=00 payload=map[] t=0", seqs[96])},
		{[]signals.Condition{cond("hour", model.OpLessEqual, "00"), cond("dt", model.OpLess, int64(20260048))}, fmt.Sprintf("%d dt=20260024,hour=00 payload=map[] t=0", seqs[24])},
		{[]signals.Condition{cond("dt", model.OpEqual, "20260009")}, "none"},
		{[]signals.Condition{cond("dt", model.OpEqual, 20260009)}, fmt.Sprintf("%d dt=20260009,hour=09 payload=map[] t=0", seqs[9])},
		{[]signals.Condition{cond("missing", model.OpEqual, "x")}, "none"},
	} {
		h.Eq(find(c.conds...), c.want, "find %v", c.conds)
	}
	h.Eq(find(), fmt.Sprintf("%d dt=20260119,hour=23 payload=map[] t=%d", seqs[119], at), "no conditions: the newest, as stored")

	h.Announce(name, map[string]any{"w": int64(9007199254740992)})
	h.Eq(find(cond("w", model.OpEqual, int64(9007199254740993))), "none", "2^53+1 does not meet 2^53")
	last := h.Announce(name, map[string]any{"w": int64(9007199254740993)})
	h.Eq(find(cond("w", model.OpEqual, int64(9007199254740993))), fmt.Sprintf("%d w=9007199254740993 payload=map[] t=0", last), "2^53+1")
	h.Eq(find(cond("w", model.OpGreater, int64(9007199254740992))), fmt.Sprintf("%d w=9007199254740993 payload=map[] t=0", last), "> 2^53")
	neg := h.Announce(name, map[string]any{"w": int64(-5)})
	h.Eq(find(cond("w", model.OpLess, int64(0))), fmt.Sprintf("%d w=-5 payload=map[] t=0", neg), "negative LONGs sort first")

	long := strings.Repeat("k", 600)
	a := h.Announce(name, map[string]any{"key": long + "A", "pad": strings.Repeat("p", 2000)})
	b := h.Announce(name, map[string]any{"key": long + "B", "pad": strings.Repeat("p", 2000)})
	h.Eq(find(cond("key", model.OpEqual, long+"A")), fmt.Sprintf("%d key=kkkkkkkkkk...kkA,pad=pppppppppp...ppp payload=map[] t=0", a), "a long key with large params")
	h.Eq(find(cond("key", model.OpGreater, long+"A")), fmt.Sprintf("%d key=kkkkkkkkkk...kkB,pad=pppppppppp...ppp payload=map[] t=0", b), "> a long key")
	h.Eq(find(cond("key", model.OpEqual, long)), "none", "a prefix of a long key")
	h.Eq(find(cond("key", model.OpLessEqual, long+"A")), fmt.Sprintf("%d key=kkkkkkkkkk...kkA,pad=pppppppppp...ppp payload=map[] t=0", a), "<= a long key")

	for _, bad := range []signals.Condition{cond("dt", model.OpEqual, 1.5), cond("dt", model.OpEqual, true), cond("dt", "~", int64(1))} {
		_, ok, err := sg.FindSignal(h.Ctx, name, []signals.Condition{bad})
		h.Plain(err, "condition %v", bad)
		h.Eq(ok, false, "condition %v", bad)
	}
}

// findSignalScanLimit: a lookup reads at most 1,000 index entries: a
// match among them is found (the 1,000th too), and past them the lookup
// fails with ErrSignalScanLimit — unless the range ends first — whether a
// range or an equality selects the entries it reads.
func findSignalScanLimit(h *H) {
	if testing.Short() {
		h.Skip("announces 1,000 signals")
	}
	sg := h.S.Signals
	const name = "bounded"
	h.Parallel(1000, func(i int) error {
		_, _, err := sg.AnnounceSignal(h.Ctx, store.NewSignal{Name: name, Params: map[string]any{"k": int64(i + 1), "s": "x"}, Now: h.Now()})
		return err
	})
	find := func(conds ...signals.Condition) string {
		h.Helper()
		sig, ok, err := sg.FindSignal(h.Ctx, name, conds)
		if err != nil {
			if !strings.Contains(err.Error(), store.ErrSignalScanLimit.Error()) {
				return err.Error()
			}
			h.Is(err, store.ErrSignalScanLimit, "find %v", conds)
			return fmt.Sprint("scan limit ", ok)
		}
		return fmt.Sprint(sig.Params["k"], " ", ok)
	}
	for _, c := range []struct {
		conds []signals.Condition
		want  string
	}{
		{[]signals.Condition{cond("k", model.OpGreaterEqual, int64(2)), cond("k", model.OpLess, int64(0))}, "<nil> false"},
		{[]signals.Condition{cond("k", model.OpGreaterEqual, int64(1)), cond("k", model.OpLess, int64(0))}, "scan limit false"},
		{[]signals.Condition{cond("k", model.OpGreaterEqual, int64(1)), cond("k", model.OpLessEqual, int64(1))}, "1 true"},
		{[]signals.Condition{cond("k", model.OpLessEqual, int64(1)), cond("k", model.OpGreaterEqual, int64(1))}, "1 true"},
		{[]signals.Condition{cond("k", model.OpLess, int64(2000)), cond("k", model.OpEqual, int64(1))}, "1 true"},
		// Every entry has s = x: led by it, the lookup reads its limit;
		// led by k = 0, it reads nothing.
		{[]signals.Condition{cond("s", model.OpEqual, "x"), cond("k", model.OpEqual, int64(0))}, "scan limit false"},
		{[]signals.Condition{cond("k", model.OpEqual, int64(0)), cond("s", model.OpEqual, "x")}, "<nil> false"},
		{[]signals.Condition{cond("s", model.OpEqual, "x"), cond("k", model.OpEqual, int64(1000))}, "1000 true"},
	} {
		h.Eq(find(c.conds...), c.want, "find %v", c.conds)
	}
}

// subscriptions: every head change writes the subscriptions its new head
// calls for, starting after the name's last signal; SyncSubscriptions
// converges to the head; deleting the workflow removes them.
func subscriptions(h *H) {
	sg, d := h.S.Signals, h.S.Definitions
	names := map[int64][]string{1: {"a", "b", "b"}, 2: {"c", "b"}}
	subs := func(_ context.Context, hd *store.WorkflowHead) ([]string, error) {
		if hd == nil || hd.Active == 0 || strings.Contains(string(hd.Properties), `"off":true`) {
			return nil, nil
		}
		return names[hd.Active], nil
	}
	subscribed := func() string {
		h.Helper()
		var out []string
		for _, n := range []string{"a", "b", "c"} {
			ss, _, err := sg.Subscribers(h.Ctx, n)
			h.OK(err, "subscribers")
			for _, s := range ss {
				out = append(out, fmt.Sprintf("%s:%s@%d", n, s.WorkflowID, s.Since))
			}
		}
		return strings.Join(out, " ")
	}
	h.Announce("a", nil)
	h.Announce("a", nil)
	_, err := d.CreateVersion(h.Ctx, store.NewVersion{WorkflowID: "wf", Definition: B(`{}`), Activate: true, Now: h.Now(), Subscriptions: subs})
	h.OK(err, "push")
	h.Eq(subscribed(), "a:wf@2 b:wf@0", "after the push")
	_, err = d.CreateVersion(h.Ctx, store.NewVersion{WorkflowID: "other", Definition: B(`{}`), Activate: true, Now: h.Now(), Subscriptions: subs})
	h.OK(err, "push other")
	h.Announce("b", nil)
	h.Eq(subscribed(), "a:other@2 a:wf@2 b:other@0 b:wf@0", "two workflows")
	_, err = d.CreateVersion(h.Ctx, store.NewVersion{WorkflowID: "wf", Definition: B(`{}`), Now: h.Now(), Subscriptions: subs})
	h.OK(err, "push v2")
	h.Eq(subscribed(), "a:other@2 a:wf@2 b:other@0 b:wf@0", "v2 is not active: unchanged (b's since too)")
	h.OK(d.SetActive(h.Ctx, "wf", 2, h.Now(), subs), "activate v2")
	h.Eq(subscribed(), "a:other@2 b:other@0 b:wf@0 c:wf@0", "after activating v2")
	head, _ := d.GetHead(h.Ctx, "wf")
	h.OK(d.UpdateProperties(h.Ctx, head, B(`{"off":true}`), h.Now(), subs), "triggers off")
	h.Eq(subscribed(), "a:other@2 b:other@0", "triggers off")
	head, _ = d.GetHead(h.Ctx, "wf")
	h.OK(d.UpdateProperties(h.Ctx, head, B(`{}`), h.Now(), subs), "triggers on")
	h.Eq(subscribed(), "a:other@2 b:other@0 b:wf@1 c:wf@0", "triggers on: b's since is its last signal now")
	h.OK(d.SetActive(h.Ctx, "wf", 2, h.Now(), nil), "a change without subscriptions")
	h.Eq(subscribed(), "a:other@2 b:other@0 b:wf@1 c:wf@0", "a change without subscriptions leaves them")
	names[2] = []string{"a"}
	h.OK(sg.SyncSubscriptions(h.Ctx, "wf", subs), "sync")
	h.Eq(subscribed(), "a:other@2 a:wf@2 b:other@0", "after a sync")
	h.OK(sg.SyncSubscriptions(h.Ctx, "wf", nil), "sync without a function")
	h.OK(sg.SyncSubscriptions(h.Ctx, "wf", subs), "sync again")
	h.OK(sg.SyncSubscriptions(h.Ctx, "missing", subs), "sync a missing workflow")
	h.Is(sg.SyncSubscriptions(h.Ctx, "wf", func(context.Context, *store.WorkflowHead) ([]string, error) { return nil, store.ErrBusy }),
		store.ErrBusy, "a function's error")
	h.OK(d.DeleteWorkflow(h.Ctx, "wf", store.Message{Queue: store.QueueWork, Body: "{}"}, h.Now()), "delete")
	h.Eq(subscribed(), "a:other@2 b:other@0", "after the delete")
	_, err = d.CreateVersion(h.Ctx, store.NewVersion{WorkflowID: "third", Definition: B(`{}`), Activate: true, Now: h.Now(),
		Subscriptions: func(context.Context, *store.WorkflowHead) ([]string, error) { return nil, store.ErrBusy }})
	h.Is(err, store.ErrBusy, "a push whose subscriptions fail")
	_, err = d.GetHead(h.Ctx, "third")
	h.Is(err, store.ErrNotFound, "the failed push wrote nothing")
}

// waitersAndLineage: step attempts waiting for a signal, registered and
// withdrawn in run commits; lineage links in key order.
func waitersAndLineage(h *H) {
	sg := h.S.Signals
	h.Push("wf")
	h.Start("wf")
	k1 := store.SignalWaiterKey("wf", 1, 1, "s", 1)
	k2 := store.SignalWaiterKey("wf", 1, 1, "a", 2)
	h.OK(h.Commit("wf", 1, 1, 1, store.Commit{SignalWaits: []store.SignalWait{{Name: "sig", Key: k1}, {Name: "sig", Key: k2}},
		Lineage: []store.LineageLink{{Name: "sig", Seq: 3, ID: "b", Body: B(`{"b":1}`)}}}), "wait")
	subs, waiters, err := sg.Subscribers(h.Ctx, "sig")
	h.OK(err, "subscribers")
	h.Eq([]any{subs == nil, waiters}, []any{true, []string{k2, k1}}, "waiters in key order")
	p, err := store.ParseSignalWaiterKey(waiters[0])
	h.OK(err, "parse")
	h.Eq(p, store.PermitHolder{WorkflowID: "wf", InstanceID: 1, RunID: 1, StepID: "a", Attempt: 2}, "a waiter")
	h.OK(h.Commit("wf", 1, 1, 2, store.Commit{SignalWaits: []store.SignalWait{{Name: "sig", Key: k1, Remove: true}, {Name: "other", Key: k2, Remove: true}}}), "withdraw")
	_, waiters, _ = sg.Subscribers(h.Ctx, "sig")
	h.Eq(waiters, []string{k2}, "waiters after a withdrawal")
	_, waiters, _ = sg.Subscribers(h.Ctx, "none")
	h.Eq(waiters == nil, true, "no waiters")

	h.OK(sg.PutLineage(h.Ctx, store.LineageLink{Name: "sig", Seq: 3, ID: "a", Body: B(`{"a":1}`)}), "lineage")
	h.OK(sg.PutLineage(h.Ctx, store.LineageLink{Name: "sig", Seq: 3, ID: "c"}), "lineage without a body")
	h.OK(sg.PutLineage(h.Ctx, store.LineageLink{Name: "sig", Seq: 30, ID: "x", Body: B(`{}`)}), "another signal's lineage")
	h.OK(sg.PutLineage(h.Ctx, store.LineageLink{Name: "sig", Seq: 3, ID: "a", Body: B(`{"a":2}`)}), "a link again")
	links, err := sg.Lineage(h.Ctx, "sig", 3)
	h.OK(err, "lineage")
	h.Eq(links, []json.RawMessage{B(`{"a":2}`), B(`{"b":1}`), {}}, "links")
	links, err = sg.Lineage(h.Ctx, "sig", 4)
	h.OK(err, "no lineage")
	h.Eq(links != nil && len(links) == 0, true, "no links")
}
