package orchestrator

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/maestro-serverless/maestro/access"
	"github.com/maestro-serverless/maestro/caller"
	"github.com/maestro-serverless/maestro/metrics"
)

const (
	adminARN = "arn:aws:iam::000000000000:role/admin"
	aliceARN = "arn:aws:iam::000000000000:role/alice"
	bobARN   = "arn:aws:iam::000000000000:role/bob"
)

// accessRig is a role rig whose stack enforces access, with teams data
// (alice) and ml (bob) made by the admin; logs and metrics are kept.
type accessRig struct {
	*roleRig
	logs, emf *bytes.Buffer
	metrics   *metrics.Emitter
	admin     context.Context
	alice     context.Context
	bob       context.Context
}

func newAccessRig(t *testing.T, tune ...func(*AccessSettings)) *accessRig {
	t.Helper()
	a := &accessRig{logs: &bytes.Buffer{}, emf: &bytes.Buffer{}}
	a.roleRig = newRoleRig(t, func(c *Config) {
		c.Access = AccessSettings{Enforce: true, Admins: []string{adminARN}}
		for _, f := range tune {
			f(&c.Access)
		}
		c.Logger = slog.New(slog.NewTextHandler(a.logs, nil))
		a.metrics = metrics.New(a.emf, "test", func() time.Time { return rigEpoch })
		c.Metrics = a.metrics
	})
	a.admin = caller.With(context.Background(), adminARN)
	a.alice = caller.With(context.Background(), aliceARN)
	a.bob = caller.With(context.Background(), bobARN)
	for team, member := range map[string]string{"data": aliceARN, "ml": bobARN} {
		if _, err := a.o.Access.PutTeam(a.admin, team, []byte(`{"members":["`+member+`"]}`)); err != nil {
			t.Fatalf("team %s: %v", team, err)
		}
	}
	return a
}

func (a *accessRig) pushAs(ctx context.Context, def string) error {
	_, err := a.o.Definitions.CreateWorkflow(ctx, []byte(def), FormatJSON)
	return err
}

func (a *accessRig) versions(wf string) int64 {
	head, err := a.mem.Definitions.GetHead(context.Background(), wf)
	if err != nil {
		a.t.Fatalf("head of %s: %v", wf, err)
	}
	return head.Latest
}

// TestPushOwnership: a first push gives the pusher's teams the workflow;
// another team's push of the id is refused (403 naming the action, the
// workflow and the roles) and stores nothing, until the owners share it.
func TestPushOwnership(t *testing.T) {
	a := newAccessRig(t)
	def := rigChain("owned", 1)
	if err := a.pushAs(a.alice, def); err != nil {
		t.Fatal(err)
	}
	v, err := a.o.Access.GetAccess(a.alice, "owned")
	if err != nil {
		t.Fatal(err)
	}
	if v.Role != "owner" || !slices.Equal(v.Owners, []string{"team:data"}) || !slices.Equal(v.Operators, []string{"team:data"}) || !slices.Equal(v.Readers, []string{"*"}) {
		t.Fatalf("first push's access %+v", v)
	}
	wantRefusal(t, a.pushAs(a.bob, def), http.StatusForbidden, "push", `"owned"`, "owner", bobARN, "reader")
	if n := a.versions("owned"); n != 1 {
		t.Fatalf("versions after a refused push: %d", n)
	}
	_, err = a.o.Access.PutAccess(a.bob, "owned", []byte(`{"owners":["team:ml"]}`))
	wantRefusal(t, err, http.StatusForbidden, "set access", "owner")
	if _, err := a.o.Access.PutAccess(a.alice, "owned", []byte(`{"owners":["team:data","team:ml"],"operators":[],"readers":[]}`)); err != nil {
		t.Fatal(err)
	}
	if err := a.pushAs(a.bob, def); err != nil {
		t.Fatalf("a co-owner's push: %v", err)
	}
	if n := a.versions("owned"); n != 2 {
		t.Fatalf("versions after the co-owner's push: %d", n)
	}
	a.metrics.Flush()
	if !strings.Contains(a.logs.String(), "access refused") || !strings.Contains(a.logs.String(), "principal="+bobARN) {
		t.Errorf("no audit line for the refusals: %s", a.logs)
	}
	if !strings.Contains(a.emf.String(), `"AccessRefused"`) || !strings.Contains(a.emf.String(), `"Action":"push"`) {
		t.Errorf("no AccessRefused metric: %s", a.emf)
	}
}

// TestGrantChecks: a grant body is checked strictly — unknown fields,
// everyone as owner, bad entries, unknown teams — and nothing is stored;
// an admin may set any workflow's grant yet holds no role by being one.
func TestGrantChecks(t *testing.T) {
	a := newAccessRig(t)
	if err := a.pushAs(a.alice, rigChain("checked", 1)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ body, want string }{
		{`{"owners":["team:data"],"writers":[]}`, "unknown field"},
		{`{"owners":["*"]}`, "owners[0]"},
		{`{"owners":[]}`, "owners: must name"},
		{`{"owners":["team:nope"]}`, "team:nope: no such team"},
		{`{"owners":["team:data"],"readers":["bob"]}`, "readers[0]"},
		{`[]`, "body"},
	} {
		_, err := a.o.Access.PutAccess(a.alice, "checked", []byte(tc.body))
		wantRefusal(t, err, http.StatusBadRequest, tc.want)
	}
	v, _ := a.o.Access.GetAccess(a.alice, "checked")
	if !slices.Equal(v.Owners, []string{"team:data"}) {
		t.Fatalf("refused grants changed the access: %+v", v)
	}
	_, err := a.o.Access.PutAccess(a.admin, "checked", []byte(`{"owners":["team:data"],"operators":["team:ml"],"readers":[]}`))
	if err != nil {
		t.Fatalf("the admin's grant: %v", err)
	}
	if err := a.o.Access.Authorize(a.admin, "checked", access.Start); rigErrStatus(err) != http.StatusForbidden {
		t.Fatalf("the admin starts a workflow it holds no role on: %v", err)
	}
	if err := a.o.Access.Authorize(a.bob, "checked", access.Start); err != nil {
		t.Fatalf("bob, now an operator, starts: %v", err)
	}
	if err := a.o.Access.Authorize(a.bob, "nope", access.Start); rigErrStatus(err) != http.StatusNotFound {
		t.Fatalf("an action on a missing workflow: %v, want 404", err)
	}
	if _, err := a.o.Access.PutTeam(a.alice, "x", []byte(`{"members":["`+aliceARN+`"]}`)); rigErrStatus(err) != http.StatusForbidden {
		t.Fatalf("alice manages teams: %v", err)
	}
}

// TestListsShowWhatTheCallerReads: private workflows are left out of
// another team's lists, pages fill across store pages and their cursor
// goes on where the reading stopped.
func TestListsShowWhatTheCallerReads(t *testing.T) {
	a := newAccessRig(t, func(s *AccessSettings) { s.PrivateWorkflows = true })
	for i := range 7 {
		ctx := a.alice
		if i%3 == 0 {
			ctx = a.bob
		}
		if err := a.pushAs(ctx, rigChain(fmt.Sprintf("wf%d", i), 1)); err != nil {
			t.Fatal(err)
		}
	}
	collect := func(ctx context.Context, limit int) []string {
		var ids []string
		cursor := ""
		for range 20 {
			l, err := a.o.Definitions.ListWorkflows(ctx, cursor, limit)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range l.Workflows {
				ids = append(ids, w.WorkflowID)
			}
			if l.NextCursor == "" {
				return ids
			}
			cursor = l.NextCursor
		}
		t.Fatal("the listing does not end")
		return nil
	}
	for _, limit := range []int{1, 2, 100} {
		if got := collect(a.bob, limit); !slices.Equal(got, []string{"wf0", "wf3", "wf6"}) {
			t.Errorf("bob's list (limit %d): %v", limit, got)
		}
		if got := collect(a.alice, limit); !slices.Equal(got, []string{"wf1", "wf2", "wf4", "wf5"}) {
			t.Errorf("alice's list (limit %d): %v", limit, got)
		}
	}
	page, err := a.o.Definitions.ListWorkflowPage(a.bob, WorkflowPageRequest{Size: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Workflows) != 2 || page.Workflows[0].WorkflowID != "wf0" || !page.HasNext {
		t.Errorf("bob's first Maestro page: %+v", page)
	}
}

// TestSubworkflowAccess: a subworkflow step naming a workflow its owners
// do not operate is refused at push; once granted it is pushed; taken
// back, the step's start is refused when it runs.
func TestSubworkflowAccess(t *testing.T) {
	a := newAccessRig(t)
	if err := a.pushAs(a.alice, rigChain("callee", 1)); err != nil {
		t.Fatal(err)
	}
	callerDef := `{"workflow":{"id":"calls","steps":[{"foreach":{"id":"loop","params":{"loop_params":{"value":{"i":{"value":[1],"type":"LONG_ARRAY"}},"type":"MAP"}},
		"steps":[{"subworkflow":{"id":"call","params":{"subworkflow_id":{"value":"callee","type":"STRING"}}}}]}}]}}`
	wantRefusal(t, a.pushAs(a.bob, callerDef), http.StatusBadRequest, "steps[0].steps[0] (call).params.subworkflow_id", "team:ml", `"callee"`)
	if _, err := a.o.Access.PutAccess(a.alice, "callee", []byte(`{"owners":["team:data"],"operators":["team:data","team:ml"],"readers":["*"]}`)); err != nil {
		t.Fatal(err)
	}
	if err := a.pushAs(a.bob, callerDef); err != nil {
		t.Fatalf("push once ml operates the callee: %v", err)
	}
	if msg, err := a.o.Access.ChildAllowed(context.Background(), "calls", "callee"); err != nil || msg != "" {
		t.Fatalf("ChildAllowed with the grant: %q, %v", msg, err)
	}
	if _, err := a.o.Access.PutAccess(a.alice, "callee", []byte(`{"owners":["team:data"],"operators":["team:data"],"readers":["*"]}`)); err != nil {
		t.Fatal(err)
	}
	msg, err := a.o.Access.ChildAllowed(context.Background(), "calls", "callee")
	if err != nil || !strings.Contains(msg, "team:ml") || !strings.Contains(msg, "operators") {
		t.Fatalf("ChildAllowed once taken back: %q, %v", msg, err)
	}
}

// TestSignalPrefixes: a claimed prefix is its team's (and admins'); other
// names stay open.
func TestSignalPrefixes(t *testing.T) {
	a := newAccessRig(t, func(s *AccessSettings) { s.SignalPrefixes = map[string][]string{"data": {"data/"}} })
	if err := a.o.Access.AuthorizeSignal(a.alice, "data/table"); err != nil {
		t.Fatal(err)
	}
	if err := a.o.Access.AuthorizeSignal(a.admin, "data/table"); err != nil {
		t.Fatal(err)
	}
	wantRefusal(t, a.o.Access.AuthorizeSignal(a.bob, "data/table"), http.StatusForbidden, `"data/table"`, "team data")
	if err := a.o.Access.AuthorizeSignal(a.bob, "ml/model"); err != nil {
		t.Fatal(err)
	}
}

// TestOpenStack: without enforcement nothing is checked, and a workflow
// pushed without a principal keeps no grant.
func TestOpenStack(t *testing.T) {
	r := newRoleRig(t)
	r.push(rigChain("open", 1))
	v, err := r.o.Access.GetAccess(r.ctx, "open")
	if err != nil || v.Enforced || v.Role != "owner" {
		t.Fatalf("open stack's access view %+v, %v", v, err)
	}
	if err := r.o.Access.Authorize(r.ctx, "open", access.Delete); err != nil {
		t.Fatal(err)
	}
}
