package storetest

import (
	"context"
	"fmt"
	"time"

	"github.com/maestro-serverless/maestro/caller"
	"github.com/maestro-serverless/maestro/store"
)

// versionsAndHead: versions are numbered from 1, the head says the latest
// and the active one, a version's caller is kept, properties are kept
// across versions (an empty one does not replace them), a large body
// reads back whole, a nil definition is refused.
func versionsAndHead(h *H) {
	d := h.S.Definitions
	_, err := d.GetHead(h.Ctx, "wf")
	h.Is(err, store.ErrNotFound, "head of a new workflow")
	_, err = d.GetVersion(h.Ctx, "wf", 1)
	h.Is(err, store.ErrNotFound, "version of a new workflow")
	t0 := h.Now()
	alice := caller.With(h.Ctx, "alice")
	for i := int64(1); i <= 3; i++ {
		nv := store.NewVersion{WorkflowID: "wf", Definition: B(fmt.Sprintf(`{"v":%d}`, i)), Activate: i != 3, Now: t0.Add(time.Duration(i) * time.Second)}
		if i == 1 {
			nv.Properties = B(`{"p":1}`)
		}
		ctx := alice
		if i == 3 {
			ctx = h.Ctx
		}
		v, err := d.CreateVersion(ctx, nv)
		h.OK(err, "version %d", i)
		h.Eq(v, i, "version number")
	}
	head, err := d.GetHead(h.Ctx, "wf")
	h.OK(err, "head")
	h.Eq([]int64{head.Latest, head.Active, head.NextInstance, head.CreateTime, head.ModifyTime},
		[]int64{3, 2, 1, t0.Add(time.Second).UnixMilli(), t0.Add(3 * time.Second).UnixMilli()}, "head latest, active, next, created, modified")
	h.Eq(head.WorkflowID, "wf", "head's workflow")
	h.Bytes(head.Properties, `{"p":1}`, "properties kept across versions")
	v2, err := d.GetVersion(h.Ctx, "wf", 2)
	h.OK(err, "version 2")
	h.Eq(*v2, store.VersionRecord{WorkflowID: "wf", Version: 2, Definition: B(`{"v":2}`), CreateTime: t0.Add(2 * time.Second).UnixMilli(), Principal: "alice"}, "version 2")
	v3, err := d.GetVersion(h.Ctx, "wf", 3)
	h.OK(err, "version 3")
	h.Eq(v3.Principal, "", "principal of a push without caller")
	_, err = d.GetVersion(h.Ctx, "wf", 4)
	h.Is(err, store.ErrNotFound, "a version not pushed")

	// Surprising: an empty (not nil) Properties leaves the snapshot as it is.
	_, err = d.CreateVersion(h.Ctx, store.NewVersion{WorkflowID: "wf", Definition: B(`{}`), Properties: []byte{}, Now: t0})
	h.OK(err, "version 4")
	head, _ = d.GetHead(h.Ctx, "wf")
	h.Bytes(head.Properties, `{"p":1}`, "properties after an empty replacement")
	_, err = d.CreateVersion(h.Ctx, store.NewVersion{WorkflowID: "wf", Definition: B(`{}`), Properties: B(`{"p":2}`), Now: t0})
	h.OK(err, "version 5")
	head, _ = d.GetHead(h.Ctx, "wf")
	h.Bytes(head.Properties, `{"p":2}`, "properties replaced")

	big := Compressible(300_000)
	v, err := d.CreateVersion(h.Ctx, store.NewVersion{WorkflowID: "wf", Definition: big, Now: t0})
	h.OK(err, "large version")
	got, err := d.GetVersion(h.Ctx, "wf", v)
	h.OK(err, "large version")
	h.Eq(string(got.Definition) == string(big), true, "large definition read back whole")

	many, err := d.GetVersions(h.Ctx, "wf", []int64{2, 99, v, 1})
	h.OK(err, "get versions")
	h.Eq(len(many), 3, "versions read at once: those that exist")
	h.Eq(*many[2], *v2, "version 2 read at once as read alone")
	h.Eq(many[1].Principal, "alice", "version 1's principal")
	h.Eq(string(many[v].Definition) == string(big), true, "large definition read at once whole")
	stamps, err := d.GetVersionStamps(h.Ctx, "wf", []int64{2, 99, v})
	h.OK(err, "get version stamps")
	h.Eq(len(stamps), 2, "stamps of the versions that exist")
	h.Eq(*stamps[2], store.VersionRecord{WorkflowID: "wf", Version: 2, CreateTime: v2.CreateTime, Principal: "alice"}, "version 2's stamp, without its definition")
	h.Eq(stamps[v].Definition == nil, true, "a large version's stamp carries no definition")
	none, err := d.GetVersions(h.Ctx, "nope", []int64{1})
	h.OK(err, "versions of a workflow that does not exist")
	h.Eq(len(none), 0, "no versions of a workflow that does not exist")

	_, err = d.CreateVersion(h.Ctx, store.NewVersion{WorkflowID: "wf", Definition: nil, Now: t0})
	h.Plain(err, "a nil definition")
	head, _ = d.GetHead(h.Ctx, "wf")
	h.Eq(head.Latest, v, "latest after a refused push")

	_, err = d.CreateVersion(h.Ctx, store.NewVersion{WorkflowID: "bare", Definition: B(`{}`), Now: t0})
	h.OK(err, "a workflow without properties")
	bare, _ := d.GetHead(h.Ctx, "bare")
	h.Eq(bare.Properties == nil, true, "properties of a head that has none are nil")
	h.Eq(bare.Active, int64(0), "a version pushed without Activate is not active")
}

// setActive: any version up to the latest, or 0; a later one or a missing
// workflow is ErrNotFound.
func setActive(h *H) {
	d := h.S.Definitions
	h.Push("wf")
	_, err := d.CreateVersion(h.Ctx, store.NewVersion{WorkflowID: "wf", Definition: B(`{}`), Now: h.Now()})
	h.OK(err, "version 2")
	later := h.Now().Add(time.Minute)
	for _, c := range []struct {
		version int64
		err     error
		active  int64
	}{{2, nil, 2}, {0, nil, 0}, {1, nil, 1}, {3, store.ErrNotFound, 1}} {
		err := d.SetActive(h.Ctx, "wf", c.version, later, nil)
		if c.err != nil {
			h.Is(err, c.err, "activate %d", c.version)
		} else {
			h.OK(err, "activate %d", c.version)
		}
		head, err := d.GetHead(h.Ctx, "wf")
		h.OK(err, "head")
		h.Eq(head.Active, c.active, "active after activating %d", c.version)
		h.Eq(head.ModifyTime, later.UnixMilli(), "modified")
	}
	h.Is(d.SetActive(h.Ctx, "missing", 1, later, nil), store.ErrNotFound, "activate a missing workflow")
}

// updateProperties: conditioned on the head read — a copy of it carries
// its version, a head built by hand has none; instance ids taken since do
// not move the head's version, other changes do.
func updateProperties(h *H) {
	d := h.S.Definitions
	h.Push("wf")
	read := func() *store.WorkflowHead {
		h.Helper()
		head, err := d.GetHead(h.Ctx, "wf")
		h.OK(err, "head")
		return head
	}
	at := h.Now().Add(time.Hour)
	head1 := read()
	h.OK(d.UpdateProperties(h.Ctx, head1, B(`{"a":1}`), at, nil), "update")
	got := read()
	h.Bytes(got.Properties, `{"a":1}`, "properties")
	h.Eq(got.ModifyTime, at.UnixMilli(), "modified")
	h.Is(d.UpdateProperties(h.Ctx, head1, B(`{"a":2}`), at, nil), store.ErrConflict, "update with a stale head")
	cp := *read()
	h.OK(d.UpdateProperties(h.Ctx, &cp, B(`{"a":3}`), at, nil), "update with a copy of the head")
	h.Is(d.UpdateProperties(h.Ctx, &store.WorkflowHead{WorkflowID: "wf"}, B(`{"a":4}`), at, nil), store.ErrConflict, "update with a head built by hand")
	h.Is(d.UpdateProperties(h.Ctx, &store.WorkflowHead{WorkflowID: "missing"}, B(`{}`), at, nil), store.ErrConflict, "update of a missing workflow")

	head3 := read()
	_, _, err := h.S.Instances.ReserveInstance(h.Ctx, "wf", "")
	h.OK(err, "reserve")
	h.Start("wf")
	h.OK(d.UpdateProperties(h.Ctx, head3, B(`{"a":5}`), at, nil), "update after instance ids were taken")
	head4 := read()
	h.OK(d.SetActive(h.Ctx, "wf", 1, at, nil), "activate")
	h.Is(d.UpdateProperties(h.Ctx, head4, B(`{"a":6}`), at, nil), store.ErrConflict, "update after an activation")
	head5 := read()
	_, err = d.CreateVersion(h.Ctx, store.NewVersion{WorkflowID: "wf", Definition: B(`{}`), Now: at})
	h.OK(err, "push")
	h.Is(d.UpdateProperties(h.Ctx, head5, B(`{"a":7}`), at, nil), store.ErrConflict, "update after a push")
	h.Plain(d.UpdateProperties(h.Ctx, read(), nil, at, nil), "nil properties")
	h.Bytes(read().Properties, `{"a":5}`, "properties after the refused updates")
	h.Eq(read().NextInstance, int64(3), "next instance after a reserve and a start")
}

// listWorkflows: pages in id order; a page that reaches its limit has a
// cursor even when it ends at the last workflow (DynamoDB's query cannot
// tell); a cursor need not name a workflow; deleted ones are gone.
func listWorkflows(h *H) {
	d := h.S.Definitions
	for _, wf := range []string{"c", "a", "e", "b", "d"} {
		h.Push(wf)
	}
	listing := func(how string, read func(context.Context, string, int) ([]*store.WorkflowHead, string, error)) func(string, int) string {
		return func(cursor string, limit int) string {
			h.Helper()
			heads, next, err := read(h.Ctx, cursor, limit)
			h.OK(err, "list %s %q", how, cursor)
			var ids []string
			for _, hd := range heads {
				ids = append(ids, hd.WorkflowID)
			}
			return fmt.Sprintf("%v next=%q", ids, next)
		}
	}
	list, back := listing("after", d.ListWorkflows), listing("before", d.ListWorkflowsBefore)
	for _, c := range []struct {
		cursor string
		limit  int
		want   string
	}{
		{"", 2, `[a b] next="b"`},
		{"b", 2, `[c d] next="d"`},
		{"d", 2, `[e] next=""`},
		{"", 5, `[a b c d e] next="e"`},
		{"e", 5, `[] next=""`},
		{"bb", 10, `[c d e] next=""`},
	} {
		h.Eq(list(c.cursor, c.limit), c.want, "list after %q, %d", c.cursor, c.limit)
	}
	for _, c := range []struct {
		cursor string
		limit  int
		want   string
	}{
		{"", 2, `[e d] next="d"`},
		{"d", 2, `[c b] next="b"`},
		{"b", 2, `[a] next=""`},
		{"a", 2, `[] next=""`},
		{"cc", 10, `[c b a] next=""`},
	} {
		h.Eq(back(c.cursor, c.limit), c.want, "list before %q, %d", c.cursor, c.limit)
	}
	heads, _, err := d.ListWorkflows(h.Ctx, "", 1)
	h.OK(err, "list")
	a, _ := d.GetHead(h.Ctx, "a")
	h.Eq(*heads[0], *a, "a listed head is the head")
	h.OK(d.DeleteWorkflow(h.Ctx, "c", store.Message{Queue: store.QueueWork, Body: "{}"}, h.Now()), "delete c")
	h.Eq(list("", 10), `[a b d e] next=""`, "list after deleting c")
	_, _, err = d.ListWorkflows(h.Ctx, "", 0)
	h.Plain(err, "a limit of 0")
}

// deleteAndPurge: a deleted workflow is gone for readers and pushes until
// its purge is done; a purge deletes a budget of items at a time, counted
// as package store counts them (a page of the workflow's items, each
// instance's partition first); a re-push continues the version and
// instance numbers.
func deleteAndPurge(h *H) {
	d := h.S.Definitions
	msg := store.Message{Queue: store.QueueWork, Body: `{"kind":"purge"}`}
	h.Is(d.DeleteWorkflow(h.Ctx, "p", msg, h.Now()), store.ErrNotFound, "delete a missing workflow")
	h.Push("p")
	h.Push("p")
	h.Start("p") // instance 1: its run item and start event
	rec, _, err := h.S.Instances.CreateInstance(h.Ctx, store.NewInstance{WorkflowID: "p", Version: 1, Status: "CREATED", RequestID: "r",
		State: StateOf, FirstEvent: store.Event{ID: "0-start", Body: B(`{}`)}, Now: h.Now()})
	h.OK(err, "instance 2")
	h.OK(h.Commit("p", rec.InstanceID, 1, 1, store.Commit{Attempts: []store.Attempt{{StepID: "s", Attempt: 1, Status: "RUNNING", Body: B(`{}`)}}}), "attempt")
	h.OK(h.S.Gates.PutBreakpoint(h.Ctx, "p", store.Breakpoint{StepID: "s"}), "breakpoint")
	h.OK(d.RearmPurge(h.Ctx, "p", 1, msg), "rearm a purge that is not there")

	h.OK(d.DeleteWorkflow(h.Ctx, "p", msg, h.Now()), "delete")
	_, err = d.GetHead(h.Ctx, "p")
	h.Is(err, store.ErrNotFound, "head of a deleted workflow")
	h.Is(d.DeleteWorkflow(h.Ctx, "p", msg, h.Now()), store.ErrNotFound, "delete twice")
	_, err = d.CreateVersion(h.Ctx, store.NewVersion{WorkflowID: "p", Definition: B(`{}`), Now: h.Now()})
	h.Is(err, store.ErrDeleting, "push while deleting")
	_, _, err = h.S.Instances.ReserveInstance(h.Ctx, "p", "")
	h.Is(err, store.ErrNotFound, "reserve an instance of a deleted workflow")
	h.OK(d.RearmPurge(h.Ctx, "p", 1, msg), "rearm")

	for i, want := range []struct {
		done    bool
		deleted int
	}{{false, 3}, {false, 8}, {true, 0}, {true, 0}} {
		done, deleted, err := d.PurgeWorkflow(h.Ctx, "p", 3)
		h.OK(err, "purge round %d", i+1)
		h.Eq([]any{done, deleted}, []any{want.done, want.deleted}, "purge round %d: done, deleted", i+1)
	}
	_, err = h.S.Instances.GetInstance(h.Ctx, "p", 1)
	h.Is(err, store.ErrNotFound, "instance of a purged workflow")
	_, _, err = h.S.Runs.LoadRun(h.Ctx, "p", 2, 1)
	h.Is(err, store.ErrNotFound, "run of a purged workflow")
	_, err = h.S.Attempts.GetAttempt(h.Ctx, "p", 2, 1, "s", 1)
	h.Is(err, store.ErrNotFound, "attempt of a purged workflow")
	_, err = d.GetVersion(h.Ctx, "p", 1)
	h.Is(err, store.ErrNotFound, "version of a purged workflow")
	_, err = h.S.Instances.InstanceForRequest(h.Ctx, "p", "r")
	h.Is(err, store.ErrNotFound, "request of a purged workflow")
	bps, err := h.S.Gates.ListBreakpoints(h.Ctx, "p", "", true)
	h.OK(err, "breakpoints")
	h.Eq(len(bps), 0, "breakpoints of a purged workflow")

	v, err := d.CreateVersion(h.Ctx, store.NewVersion{WorkflowID: "p", Definition: B(`{}`), Now: h.Now()})
	h.OK(err, "push again")
	h.Eq(v, int64(3), "the version number goes on")
	head, _ := d.GetHead(h.Ctx, "p")
	h.Eq(head.NextInstance, int64(3), "the instance number goes on")
}

// deleteBusy: a workflow with a run holding a slot cannot be deleted.
func deleteBusy(h *H) {
	d := h.S.Definitions
	h.Push("busy")
	h.OK(h.Create("busy", 1, store.Commit{SlotDelta: 1}), "a run takes a slot")
	msg := store.Message{Queue: store.QueueWork, Body: "{}"}
	h.Is(d.DeleteWorkflow(h.Ctx, "busy", msg, h.Now()), store.ErrBusy, "delete while a run holds a slot")
	_, err := d.GetHead(h.Ctx, "busy")
	h.OK(err, "head after a refused delete")
	run, _ := h.Load("busy", 1, 1)
	h.OK(h.Commit("busy", 1, 1, run.V, store.Commit{Status: "SUCCEEDED", SlotDelta: -1}), "the run gives its slot back")
	h.OK(d.DeleteWorkflow(h.Ctx, "busy", msg, h.Now()), "delete once no slot is held")
}

// pushLimits: a push is one transaction, so the subscriptions it writes
// are bounded (more than store.MaxTransactItems writes is an error, and
// nothing is written); a workflow id an inline workflow's version already
// uses cannot be pushed (its version 1 exists without a head: the push
// fails with ErrConflict at once, since no retry can succeed).
func pushLimits(h *H) {
	d := h.S.Definitions
	names := func(n int) store.SubscriptionsFunc {
		return func(context.Context, *store.WorkflowHead) ([]string, error) {
			out := make([]string, n)
			for i := range out {
				out[i] = fmt.Sprint("sig-", i)
			}
			return out, nil
		}
	}
	_, err := d.CreateVersion(h.Ctx, store.NewVersion{WorkflowID: "ok", Definition: B(`{}`), Activate: true, Now: h.Now(), Subscriptions: names(96)})
	h.OK(err, "a push of 100 writes")
	subs, _, err := h.S.Signals.Subscribers(h.Ctx, "sig-95")
	h.OK(err, "subscribers")
	h.Eq(len(subs), 1, "subscribed")
	_, err = d.CreateVersion(h.Ctx, store.NewVersion{WorkflowID: "many", Definition: B(`{}`), Activate: true, Now: h.Now(), Subscriptions: names(97)})
	h.Plain(err, "a push of 101 writes")
	_, err = d.GetHead(h.Ctx, "many")
	h.Is(err, store.ErrNotFound, "the refused push")

	h.Push("wf")
	h.Start("wf")
	h.OK(h.Commit("wf", 1, 1, 1, store.Commit{Definitions: []store.InlineDefinition{{WorkflowID: "inline", Definition: B(`{"inline":1}`), Now: h.Now()}}}), "an inline definition")
	_, err = d.CreateVersion(h.Ctx, store.NewVersion{WorkflowID: "inline", Definition: B(`{}`), Now: h.Now()})
	h.Is(err, store.ErrConflict, "a push of an inline workflow's id")
	v, err := d.GetVersion(h.Ctx, "inline", 1)
	h.OK(err, "the inline version")
	h.Bytes(v.Definition, `{"inline":1}`, "the inline version is left as it was")
}
