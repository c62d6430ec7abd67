package store_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/signals"
	"github.com/maestro-serverless/maestro/store"
)

func announce(t *testing.T, s *store.Store, name string, params map[string]any) int64 {
	t.Helper()
	rec, created, err := s.Signals.AnnounceSignal(context.Background(), store.NewSignal{Name: name, Params: params, Now: time.Now()})
	if err != nil || !created {
		t.Fatalf("announce %s %v: created %v, %v", name, params, created, err)
	}
	return rec.Seq
}

func find(t *testing.T, s *store.Store, name string, conds ...signals.Condition) (signals.Signal, bool) {
	t.Helper()
	sig, ok, err := s.Signals.FindSignal(context.Background(), name, conds)
	if err != nil {
		t.Fatalf("find %s %v: %v", name, conds, err)
	}
	return sig, ok
}

func eq(p string, v any) signals.Condition {
	return signals.Condition{Param: p, Op: model.OpEqual, Value: v}
}

// TestFindSignalSeesTheWholeHistory: a lookup finds old signals (not only
// the newest 100), answers the newest of equal values, keeps LONGs exact
// above 2^53 and handles params too large to ride in the index.
func TestFindSignalSeesTheWholeHistory(t *testing.T) {
	s := newStore(t)
	const name = "db/test/history"
	var seqs []int64
	for i := range 200 {
		seqs = append(seqs, announce(t, s, name, map[string]any{"dt": int64(20260000 + i), "hour": fmt.Sprintf("%02d", i%24)}))
	}
	// The 151st-newest: dt = 20260049.
	sig, ok := find(t, s, name, eq("dt", int64(20260049)))
	if !ok || sig.Seq != seqs[49] || sig.Params["hour"] != "01" {
		t.Fatalf("dt = 20260049: got %v %v, want seq %d", sig, ok, seqs[49])
	}
	if _, ok := find(t, s, name, eq("dt", int64(20260049)), eq("hour", "02")); ok {
		t.Fatal("dt = 20260049 AND hour = 02 matched; no such signal")
	}
	// Newest of equal values; ranges answer the highest value.
	sig, ok = find(t, s, name, eq("hour", "05"))
	if !ok || sig.Params["dt"] != int64(20260197) {
		t.Fatalf("hour = 05: got %v, want the newest (dt 20260197)", sig.Params)
	}
	sig, ok = find(t, s, name, signals.Condition{Param: "dt", Op: model.OpLess, Value: int64(20260010)}, eq("hour", "03"))
	if !ok || sig.Params["dt"] != int64(20260003) {
		t.Fatalf("dt < 20260010 AND hour = 03: got %v %v", sig.Params, ok)
	}
	sig, ok = find(t, s, name, signals.Condition{Param: "dt", Op: model.OpGreaterEqual, Value: int64(20260150)})
	if !ok || sig.Params["dt"] != int64(20260199) {
		t.Fatalf("dt >= 20260150: got %v, want the highest", sig.Params)
	}
	if _, ok := find(t, s, name, eq("dt", "20260049")); ok {
		t.Fatal("a STRING condition matched a LONG param")
	}
	if sig, ok := find(t, s, name); !ok || sig.Seq != seqs[199] {
		t.Fatalf("no conditions: got %v, want the newest", sig)
	}

	// LONG params stay exact above 2^53: 2^53 does not meet 2^53 + 1.
	announce(t, s, name, map[string]any{"watermark": int64(9007199254740992)})
	if sig, ok := find(t, s, name, eq("watermark", int64(9007199254740993))); ok {
		t.Fatalf("watermark 2^53+1 matched %v", sig.Params)
	}
	announce(t, s, name, map[string]any{"watermark": int64(9007199254740993)})
	if sig, ok := find(t, s, name, eq("watermark", int64(9007199254740993))); !ok || sig.Params["watermark"] != int64(9007199254740993) {
		t.Fatalf("watermark 2^53+1: got %v %v", sig.Params, ok)
	}

	// Params too large to ride in the index entries, and long strings
	// that share a prefix longer than what the index key holds.
	long := strings.Repeat("k", 600)
	big := map[string]any{"key": long + "A", "pad": strings.Repeat("p", 2000)}
	seqA := announce(t, s, name, big)
	announce(t, s, name, map[string]any{"key": long + "B", "pad": strings.Repeat("p", 2000)})
	if sig, ok := find(t, s, name, eq("key", long+"A")); !ok || sig.Seq != seqA || sig.Params["pad"] != big["pad"] {
		t.Fatalf("long key A: got seq %d %v, want %d", sig.Seq, ok, seqA)
	}
	if sig, ok := find(t, s, name, signals.Condition{Param: "key", Op: model.OpGreater, Value: long + "A"}); !ok || sig.Params["key"] != long+"B" {
		t.Fatalf("key > ...A: got %v", ok)
	}
	if _, ok := find(t, s, name, eq("key", long)); ok {
		t.Fatal("a prefix of a long key matched it")
	}
}

// TestSignalSubscriptionsFollowTheHead: every head change writes the
// subscriptions its new head calls for in its own transaction, so they are
// in place when it returns.
func TestSignalSubscriptionsFollowTheHead(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	now := time.Now()
	// The names each version's triggers use, and whether triggers are off.
	names := map[int64][]string{1: {"a", "b"}, 2: {"b", "c"}}
	subs := func(_ context.Context, h *store.WorkflowHead) ([]string, error) {
		if h == nil || h.Active == 0 || strings.Contains(string(h.Properties), `"signal_trigger_disabled":true`) {
			return nil, nil
		}
		return names[h.Active], nil
	}
	subscribed := func(want ...string) {
		t.Helper()
		for _, n := range []string{"a", "b", "c"} {
			subs, _, err := s.Signals.Subscribers(ctx, n)
			if err != nil {
				t.Fatal(err)
			}
			got := slices.ContainsFunc(subs, func(s store.Subscription) bool { return s.WorkflowID == "wf" })
			if want := slices.Contains(want, n); got != want {
				t.Fatalf("subscribed to %q: %v, want %v (want %v)", n, got, want, want)
			}
		}
	}
	announce(t, s, "a", nil)
	last := announce(t, s, "a", nil)
	if _, err := s.Definitions.CreateVersion(ctx, store.NewVersion{WorkflowID: "wf", Definition: []byte(`{}`), Activate: true, Now: now, Subscriptions: subs}); err != nil {
		t.Fatal(err)
	}
	subscribed("a", "b")
	// A subscription starts after the name's last signal: a backlog does not
	// fire a trigger that was not active when it was announced.
	for _, n := range []string{"a", "b"} {
		got, _, _ := s.Signals.Subscribers(ctx, n)
		if want := map[string]int64{"a": last, "b": 0}[n]; len(got) != 1 || got[0].Since != want {
			t.Fatalf("subscription to %s: %+v, want since %d", n, got, want)
		}
	}
	if _, err := s.Definitions.CreateVersion(ctx, store.NewVersion{WorkflowID: "wf", Definition: []byte(`{}`), Activate: false, Now: now, Subscriptions: subs}); err != nil {
		t.Fatal(err)
	}
	subscribed("a", "b") // v2 is not active
	if err := s.Definitions.SetActive(ctx, "wf", 2, now, subs); err != nil {
		t.Fatal(err)
	}
	subscribed("b", "c")
	head, err := s.Definitions.GetHead(ctx, "wf")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Definitions.UpdateProperties(ctx, head, []byte(`{"signal_trigger_disabled":true}`), now, subs); err != nil {
		t.Fatal(err)
	}
	subscribed()
	head, _ = s.Definitions.GetHead(ctx, "wf")
	if err := s.Definitions.UpdateProperties(ctx, head, []byte(`{}`), now, subs); err != nil {
		t.Fatal(err)
	}
	subscribed("b", "c")
	if err := s.Definitions.SetActive(ctx, "wf", 0, now, subs); err != nil {
		t.Fatal(err)
	}
	subscribed()
	if err := s.Definitions.SetActive(ctx, "wf", 1, now, subs); err != nil {
		t.Fatal(err)
	}
	subscribed("a", "b")
	// The sync converges to the head whatever the items say.
	names[1] = []string{"c"}
	if err := s.Signals.SyncSubscriptions(ctx, "wf", subs); err != nil {
		t.Fatal(err)
	}
	subscribed("c")
	if err := s.Definitions.DeleteWorkflow(ctx, "wf", store.Message{Queue: store.QueueWork, Body: "{}"}, now); err != nil {
		t.Fatal(err)
	}
	subscribed()
}
