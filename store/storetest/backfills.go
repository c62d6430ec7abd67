package storetest

import (
	"github.com/maestro-serverless/maestro/store"
)

// backfills: a backfill is created once (a second create of its id is a
// conflict and changes nothing); a put is conditioned on the version read
// and bumps it; a put of a missing backfill is not found; a list returns a
// workflow's backfills newest (greatest id) first, and no other
// workflow's.
func backfills(h *H) {
	s := h.S.Backfills
	mk := func(wf, id, body string) store.Backfill {
		return store.Backfill{WorkflowID: wf, ID: id, Body: []byte(body), CreateTime: h.Ms()}
	}
	msg := []store.Message{{Queue: store.QueueWork, Body: `{"kind":"backfill"}`}}
	h.OK(s.CreateBackfill(h.Ctx, mk("wf", "bf-1", `{"n":1}`), msg), "create bf-1")
	h.Is(s.CreateBackfill(h.Ctx, mk("wf", "bf-1", `{"n":9}`), nil), store.ErrConflict, "create bf-1 again")
	got, err := s.GetBackfill(h.Ctx, "wf", "bf-1")
	h.OK(err, "get bf-1")
	h.Eq(*got, store.Backfill{WorkflowID: "wf", ID: "bf-1", Body: []byte(`{"n":1}`), CreateTime: h.Ms(), V: 1}, "bf-1 as created")
	_, err = s.GetBackfill(h.Ctx, "wf", "bf-0")
	h.Is(err, store.ErrNotFound, "get a missing backfill")

	next := *got
	next.Body = []byte(`{"n":2}`)
	h.OK(s.PutBackfill(h.Ctx, next), "put bf-1 at v1")
	h.Is(s.PutBackfill(h.Ctx, next), store.ErrConflict, "put bf-1 at v1 again")
	got, err = s.GetBackfill(h.Ctx, "wf", "bf-1")
	h.OK(err, "get bf-1 after the put")
	h.Eq(got.V, int64(2), "bf-1's version")
	h.Bytes(got.Body, `{"n":2}`, "bf-1's body")
	missing := mk("wf", "bf-9", `{}`)
	missing.V = 1
	h.Is(s.PutBackfill(h.Ctx, missing), store.ErrNotFound, "put a missing backfill")

	h.OK(s.CreateBackfill(h.Ctx, mk("wf", "bf-2", `{}`), nil), "create bf-2")
	h.OK(s.CreateBackfill(h.Ctx, mk("wf2", "bf-3", `{}`), nil), "create wf2's bf-3")
	list, err := s.ListBackfills(h.Ctx, "wf")
	h.OK(err, "list wf's backfills")
	var ids []string
	for _, b := range list {
		ids = append(ids, b.ID)
	}
	h.Eq(ids, []string{"bf-2", "bf-1"}, "wf's backfills, newest first")
	list, err = s.ListBackfills(h.Ctx, "none")
	h.OK(err, "list a workflow without backfills")
	h.Eq(len(list), 0, "backfills of a workflow without any")
}
