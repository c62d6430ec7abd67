package storetest

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/maestro-serverless/maestro/caller"
	"github.com/maestro-serverless/maestro/store"
)

// refusal is a Check's error of a type of the caller's own, as the
// orchestrator's *Error is.
type refusal struct{ why string }

func (r *refusal) Error() string { return r.why }

// grant is a grant's JSON naming owner.
func grant(owner string) []byte { return B(`{"owners":["` + owner + `"]}`) }

// newWorkflowGrant: a new workflow's head keeps the grant its first push
// gave it; later pushes' grants are ignored; a head pushed without one has
// none; a push's Check sees the head it would create, then the stored one,
// and its refusal comes back as it is with nothing written; lists return
// the grants.
func newWorkflowGrant(h *H) {
	d := h.S.Definitions
	type seen struct {
		exists         bool
		latest         int64
		access         string
		headOfWorkflow string
	}
	var saw []seen
	check := func(head *store.WorkflowHead, exists bool) error {
		saw = append(saw, seen{exists, head.Latest, string(head.Access), head.WorkflowID})
		return nil
	}
	push := func(wf string, access []byte, check func(*store.WorkflowHead, bool) error) (int64, error) {
		return d.CreateVersion(h.Ctx, store.NewVersion{WorkflowID: wf, Definition: B(`{}`), Activate: true, Now: h.Now(), Access: access, Check: check})
	}
	v, err := push("wf", grant("a"), check)
	h.OK(err, "first push")
	h.Eq(v, int64(1), "first version")
	head, err := d.GetHead(h.Ctx, "wf")
	h.OK(err, "head")
	h.Bytes(head.Access, string(grant("a")), "the first push's grant")
	_, err = push("wf", grant("b"), check)
	h.OK(err, "second push")
	head, _ = d.GetHead(h.Ctx, "wf")
	h.Bytes(head.Access, string(grant("a")), "the grant after a push with another one")
	h.Eq(saw, []seen{{false, 0, string(grant("a")), "wf"}, {true, 1, string(grant("a")), "wf"}},
		"what Check saw: the head to create (with its grant), then the stored one")

	// A refusal aborts the push, as it is.
	refuse := &refusal{"not an owner"}
	no := func(*store.WorkflowHead, bool) error { return refuse }
	_, err = push("wf", nil, no)
	var r *refusal
	h.Eq(errors.As(err, &r) && r == refuse && err == error(refuse), true, "the refusal comes back as it is (got %v)", err)
	head, _ = d.GetHead(h.Ctx, "wf")
	h.Eq(head.Latest, int64(2), "versions after a refused push")
	_, err = d.GetVersion(h.Ctx, "wf", 3)
	h.Is(err, store.ErrNotFound, "the refused version")
	_, err = push("new", grant("c"), no)
	h.Eq(err == error(refuse), true, "a refused first push's error")
	_, err = d.GetHead(h.Ctx, "new")
	h.Is(err, store.ErrNotFound, "the head of a refused first push")
	_, err = d.GetVersion(h.Ctx, "new", 1)
	h.Is(err, store.ErrNotFound, "the version of a refused first push")

	// A head pushed without a grant (as before grants existed) has none.
	h.Push("plain")
	head, _ = d.GetHead(h.Ctx, "plain")
	h.Eq(head.Access == nil, true, "a head pushed without a grant has none")

	_, err = push("other", grant("o"), nil)
	h.OK(err, "push other")
	want := map[string]string{"other": string(grant("o")), "plain": "", "wf": string(grant("a"))}
	for how, list := range map[string]func() ([]*store.WorkflowHead, string, error){
		"after":  func() ([]*store.WorkflowHead, string, error) { return d.ListWorkflows(h.Ctx, "", 10) },
		"before": func() ([]*store.WorkflowHead, string, error) { return d.ListWorkflowsBefore(h.Ctx, "", 10) },
	} {
		heads, _, err := list()
		h.OK(err, "list %s", how)
		got := map[string]string{}
		for _, hd := range heads {
			got[hd.WorkflowID] = string(hd.Access)
		}
		h.Eq(got, want, "grants listed %s", how)
	}
}

// checkOnRetry: a push that loses a race to another push of the same id
// asks Check again, with the head the other push wrote, and is written
// over it; the head keeps the other push's grant.
func checkOnRetry(h *H) {
	d := h.S.Definitions
	var saw []string
	nv := store.NewVersion{WorkflowID: "raced", Definition: B(`{"n":1}`), Access: grant("late"), Now: h.Now()}
	nv.Check = func(head *store.WorkflowHead, exists bool) error {
		saw = append(saw, fmt.Sprintf("exists=%v latest=%d access=%s", exists, head.Latest, head.Access))
		if len(saw) == 1 {
			// A concurrent push of the same id, between the read and the
			// write of this attempt.
			_, err := d.CreateVersion(h.Ctx, store.NewVersion{WorkflowID: "raced", Definition: B(`{"n":0}`), Access: grant("first"), Now: h.Now()})
			return err
		}
		return nil
	}
	v, err := d.CreateVersion(h.Ctx, nv)
	h.OK(err, "the push that lost the race")
	h.Eq(v, int64(2), "its version, after the other")
	h.Eq(saw, []string{
		`exists=false latest=0 access={"owners":["late"]}`,
		`exists=true latest=1 access={"owners":["first"]}`,
	}, "Check's calls: the head it meant to create, then the one written meanwhile")
	head, err := d.GetHead(h.Ctx, "raced")
	h.OK(err, "head")
	h.Bytes(head.Access, string(grant("first")), "the grant of the push that created the head")
	first, err := d.GetVersion(h.Ctx, "raced", 1)
	h.OK(err, "version 1")
	h.Bytes(first.Definition, `{"n":0}`, "version 1 is the other push's")
}

// putAccess: PutAccess replaces a workflow's grant and moves its head on
// (a change conditioned on the head read before fails), later pushes keep
// it; a missing workflow is ErrNotFound; an empty grant and a grant too
// large for the head item are refused, nothing written.
func putAccess(h *H) {
	d := h.S.Definitions
	h.Is(d.PutAccess(h.Ctx, "nope", grant("x"), h.Now()), store.ErrNotFound, "access of a missing workflow")
	h.Push("wf")
	before, _ := d.GetHead(h.Ctx, "wf")
	h.Clock.Add(time.Second)
	h.OK(d.PutAccess(caller.With(h.Ctx, "arn:aws:iam::123456789012:role/admin"), "wf", grant("new"), h.Now()), "put access")
	head, err := d.GetHead(h.Ctx, "wf")
	h.OK(err, "head")
	h.Bytes(head.Access, string(grant("new")), "the replaced grant")
	h.Eq([]int64{head.Latest, head.Active, head.ModifyTime}, []int64{1, 1, h.Ms()}, "latest, active, modified")
	h.Is(d.UpdateProperties(h.Ctx, before, B(`{"p":1}`), h.Now(), nil), store.ErrConflict, "a change of the head read before the grant's")
	h.OK(d.PutAccess(h.Ctx, "wf", grant("newer"), h.Now()), "put access again")
	_, err = d.CreateVersion(h.Ctx, store.NewVersion{WorkflowID: "wf", Definition: B(`{}`), Access: grant("push"), Now: h.Now()})
	h.OK(err, "push")
	head, _ = d.GetHead(h.Ctx, "wf")
	h.Bytes(head.Access, string(grant("newer")), "the grant after a push")

	h.Plain(d.PutAccess(h.Ctx, "wf", nil, h.Now()), "a nil grant")
	h.Plain(d.PutAccess(h.Ctx, "wf", []byte{}, h.Now()), "an empty grant")
	big := B(`{"owners":["` + strings.Repeat("x", store.MaxItemBytes) + `"]}`)
	h.TooLarge(d.PutAccess(h.Ctx, "wf", big, h.Now()), "WF#wf HEAD", "a grant past 400 KB")
	head, _ = d.GetHead(h.Ctx, "wf")
	h.Bytes(head.Access, string(grant("newer")), "the grant after refusals")
	_, err = d.CreateVersion(h.Ctx, store.NewVersion{WorkflowID: "huge", Definition: B(`{}`), Access: big, Now: h.Now()})
	h.TooLarge(err, "WF#huge HEAD", "a first push with a grant past 400 KB")
	_, err = d.GetHead(h.Ctx, "huge")
	h.Is(err, store.ErrNotFound, "the head of the refused push")
}

// teams: a team is created, then replaced (created says which), read
// back with its time and writer, listed in name order, deleted;
// ErrNotFound for a missing one; members are kept in order, none as none.
func teams(h *H) {
	ts := h.S.Teams
	_, err := ts.GetTeam(h.Ctx, "data")
	h.Is(err, store.ErrNotFound, "a missing team")
	h.Is(ts.DeleteTeam(h.Ctx, "data", h.Now()), store.ErrNotFound, "delete of a missing team")
	list, err := ts.ListTeams(h.Ctx)
	h.OK(err, "list no teams")
	h.Eq(len(list), 0, "no teams")

	alice := caller.With(h.Ctx, "arn:aws:iam::123456789012:user/alice")
	bob := caller.With(h.Ctx, "arn:aws:iam::123456789012:user/bob")
	created, err := ts.PutTeam(alice, store.Team{Name: "data", Members: []string{"arn:aws:iam::123456789012:role/data-*", "arn:aws:iam::123456789012:user/carol"},
		ModifyTime: 1, Principal: "ignored"}, h.Now())
	h.OK(err, "create data")
	h.Eq(created, true, "data created")
	first := h.Ms()
	h.Clock.Add(time.Second)
	created, err = ts.PutTeam(h.Ctx, store.Team{Name: "ml"}, h.Now())
	h.OK(err, "create ml")
	h.Eq(created, true, "ml created")
	got, err := ts.GetTeam(h.Ctx, "data")
	h.OK(err, "get data")
	h.Eq(*got, store.Team{Name: "data", Members: []string{"arn:aws:iam::123456789012:role/data-*", "arn:aws:iam::123456789012:user/carol"},
		ModifyTime: first, Principal: "arn:aws:iam::123456789012:user/alice"}, "data as created")
	got, err = ts.GetTeam(h.Ctx, "ml")
	h.OK(err, "get ml")
	h.Eq(*got, store.Team{Name: "ml", Members: []string{}, ModifyTime: h.Ms()}, "a team without members or writer")

	h.Clock.Add(time.Second)
	created, err = ts.PutTeam(bob, store.Team{Name: "data", Members: []string{"arn:aws:iam::123456789012:user/dan"}}, h.Now())
	h.OK(err, "replace data")
	h.Eq(created, false, "data replaced, not created")
	created, err = ts.PutTeam(h.Ctx, store.Team{Name: "analytics", Members: []string{"arn:aws:iam::123456789012:user/eve"}}, h.Now())
	h.OK(err, "create analytics")
	h.Eq(created, true, "analytics created")
	list, err = ts.ListTeams(h.Ctx)
	h.OK(err, "list")
	h.Eq(list, []store.Team{
		{Name: "analytics", Members: []string{"arn:aws:iam::123456789012:user/eve"}, ModifyTime: h.Ms()},
		{Name: "data", Members: []string{"arn:aws:iam::123456789012:user/dan"}, ModifyTime: h.Ms(), Principal: "arn:aws:iam::123456789012:user/bob"},
		{Name: "ml", Members: []string{}, ModifyTime: h.Ms() - 1000},
	}, "teams in name order, data replaced")

	h.OK(ts.DeleteTeam(h.Ctx, "data", h.Now()), "delete data")
	_, err = ts.GetTeam(h.Ctx, "data")
	h.Is(err, store.ErrNotFound, "a deleted team")
	h.Is(ts.DeleteTeam(h.Ctx, "data", h.Now()), store.ErrNotFound, "a second delete")
	list, _ = ts.ListTeams(h.Ctx)
	h.Eq(len(list), 2, "teams after a delete")
	created, err = ts.PutTeam(h.Ctx, store.Team{Name: "data", Members: []string{"arn:aws:iam::123456789012:user/fay"}}, h.Now())
	h.OK(err, "data again")
	h.Eq(created, true, "a deleted team is created anew")

	big := store.Team{Name: "big", Members: []string{strings.Repeat("x", store.MaxItemBytes)}}
	_, err = ts.PutTeam(h.Ctx, big, h.Now())
	h.TooLarge(err, "TEAMS T#big", "a team past 400 KB")
	_, err = ts.GetTeam(h.Ctx, "big")
	h.Is(err, store.ErrNotFound, "the refused team")
}

// teamLimit: at most store.MaxTeams teams exist: the next creation fails
// with ErrLimit and writes nothing, a replacement still works, a delete
// makes room; creations racing for the last places get exactly as many as
// are left.
func teamLimit(h *H) {
	ts := h.S.Teams
	name := func(i int) string { return fmt.Sprintf("t%03d", i) }
	// Members of 6 KB: the teams pass DynamoDB's 1 MB of a query page, so
	// that listing them all takes more than one.
	long := "arn:aws:iam::123456789012:user/" + strings.Repeat("u", 6000)
	for i := range store.MaxTeams {
		_, err := ts.PutTeam(h.Ctx, store.Team{Name: name(i), Members: []string{long}}, h.Now())
		h.OK(err, "create team %d", i)
	}
	_, err := ts.PutTeam(h.Ctx, store.Team{Name: "one-more"}, h.Now())
	h.Is(err, store.ErrLimit, "the team past the limit")
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("at most %d teams", store.MaxTeams)) {
		h.Errorf("the limit's error %v does not name the limit", err)
	}
	_, err = ts.GetTeam(h.Ctx, "one-more")
	h.Is(err, store.ErrNotFound, "the refused team")
	created, err := ts.PutTeam(h.Ctx, store.Team{Name: name(7), Members: []string{"arn:aws:iam::123456789012:user/v"}}, h.Now())
	h.OK(err, "replace a team at the limit")
	h.Eq(created, false, "replaced")
	list, err := ts.ListTeams(h.Ctx)
	h.OK(err, "list")
	h.Eq(len(list), store.MaxTeams, "teams at the limit")
	h.Eq([]string{list[0].Name, list[7].Members[0], list[len(list)-1].Name}, []string{name(0), "arn:aws:iam::123456789012:user/v", name(store.MaxTeams - 1)}, "teams in order, all of them (more than one query page)")

	// Three places free; eight creations race for them.
	for _, i := range []int{1, 2, 3} {
		h.OK(ts.DeleteTeam(h.Ctx, name(i), h.Now()), "delete %d", i)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	made, limited := 0, 0
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			created, err := ts.PutTeam(h.Ctx, store.Team{Name: fmt.Sprint("racer-", i)}, h.Now())
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil && created:
				made++
			case errors.Is(err, store.ErrLimit):
				limited++
			default:
				h.Errorf("racer %d: created %v, %v", i, created, err)
			}
		}()
	}
	wg.Wait()
	h.Eq([]int{made, limited}, []int{3, 5}, "racers created and refused")
	list, _ = ts.ListTeams(h.Ctx)
	h.Eq(len(list), store.MaxTeams, "teams after the race")
}
