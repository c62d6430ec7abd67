package api

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/maestro-serverless/maestro/access"
	"github.com/maestro-serverless/maestro/orchestrator"
)

// roleAccess is an AccessService giving its caller one role on every
// workflow (and admin or not), deciding with package access as the
// orchestrator does. It records what it was asked.
type roleAccess struct {
	role  access.Role
	admin bool
	asked []string
}

var _ AccessService = (*roleAccess)(nil)

func (a *roleAccess) grant() access.Grant {
	me := "arn:aws:iam::000000000000:role/me"
	g := access.Grant{Owners: []string{"team:x"}}
	switch a.role {
	case access.Owner:
		g.Owners = append(g.Owners, me)
	case access.Operator:
		g.Operators = []string{me}
	case access.Reader:
		g.Readers = []string{me}
	}
	return g
}

func (a *roleAccess) me() access.Caller {
	return access.Caller{Principal: "arn:aws:iam::000000000000:role/me", Admin: a.admin}
}

func (a *roleAccess) WithCaller(ctx context.Context) (context.Context, error) { return ctx, nil }
func (a *roleAccess) Caller(context.Context) (*orchestrator.CallerView, error) {
	return &orchestrator.CallerView{Caller: a.me(), Enforced: true}, nil
}
func (a *roleAccess) Authorize(_ context.Context, wf string, act access.Action) error {
	a.asked = append(a.asked, fmt.Sprintf("%s %s", act, wf))
	if d := access.Decide(a.me(), a.grant(), act); !d.Allowed {
		return &orchestrator.Error{Status: http.StatusForbidden, Message: access.Refusal(a.me(), wf, act, d)}
	}
	return nil
}
func (a *roleAccess) AuthorizeAdmin(_ context.Context, act access.Action) error {
	a.asked = append(a.asked, string(act))
	if !a.admin {
		return &orchestrator.Error{Status: http.StatusForbidden, Message: access.AdminRefusal(a.me(), act)}
	}
	return nil
}
func (a *roleAccess) AuthorizeSignal(context.Context, string) error { return nil }
func (a *roleAccess) GetAccess(_ context.Context, wf string) (*orchestrator.AccessView, error) {
	return &orchestrator.AccessView{WorkflowID: wf, Grant: a.grant().Normalized(), Role: a.role.String(), Enforced: true}, nil
}
func (a *roleAccess) PutAccess(_ context.Context, wf string, _ []byte) (*orchestrator.AccessView, error) {
	return a.GetAccess(context.Background(), wf)
}
func (a *roleAccess) ListTeams(context.Context) (*orchestrator.TeamList, error) {
	return &orchestrator.TeamList{Teams: []orchestrator.TeamView{}}, nil
}
func (a *roleAccess) GetTeam(_ context.Context, name string) (*orchestrator.TeamView, error) {
	return &orchestrator.TeamView{Name: name, Members: []string{}}, nil
}
func (a *roleAccess) PutTeam(_ context.Context, name string, _ []byte) (*orchestrator.TeamView, error) {
	return &orchestrator.TeamView{Name: name, Members: []string{}}, nil
}
func (a *roleAccess) DeleteTeam(_ context.Context, name string) (*orchestrator.TeamDeleted, error) {
	return &orchestrator.TeamDeleted{Name: name, Deleted: true}, nil
}

// pathValues fill a route pattern's wildcards for the decision table.
var pathValues = map[string]string{
	"id": "wf1", "instanceId": "1", "runId": "1", "stepId": "s1", "attempt": "1", "version": "1",
	"iterationId": "1", "snapshotId": "latest", "workflowTagName": "t1", "team": "data", "tag": "t1",
	"name": "q1", "type": "shell", "token": "tok", "seq": "1", "action": "stop", "other": "2", "bid": "bf-1",
}

// bodies of the routes whose body names the workflow (guardBody): valid,
// so that the handler reaches its check.
var guardBodies = map[string]string{
	"PUT /api/v3/output-data":                                `{"workflow_id":"wf1","workflow_instance_id":1,"step_id":"s1","params":{"a":{"value":1,"type":"LONG"}}}`,
	"POST " + breakpointsPath:                                `{"workflow_id":"wf1","step_id":"s1"}`,
	"GET " + workflowsPath + "/instances/inline-workflow-id": `[{"workflow_id":"wf1","instance_id":1},{"workflow_id":"maestro_foreach_00","instance_id":1,"step_id":"s1"}]`,
}

var wildcard = regexp.MustCompile(`\{([A-Za-z]+)\}`)

// routeRequest is one request that exercises a route, with the action it
// takes.
type routeRequest struct {
	req    *http.Request
	action access.Action
}

// routeRequests are the requests that exercise a route: one per action its
// {action} wildcard maps (byPath), else one.
func routeRequests(pattern string, g guard) []routeRequest {
	method, path, _ := strings.Cut(pattern, " ")
	actions := []string{pathValues["action"]}
	if g.byPath != nil {
		actions = actions[:0]
		for a := range g.byPath {
			actions = append(actions, a)
		}
		slices.Sort(actions)
	}
	var out []routeRequest
	for _, act := range actions {
		p := wildcard.ReplaceAllStringFunc(path, func(w string) string {
			name := w[1 : len(w)-1]
			if name == "action" {
				return act
			}
			return pathValues[name]
		})
		if g.query != "" {
			p += "?" + g.query + "=wf1&stepId=s1"
		}
		var body string
		if b, ok := guardBodies[pattern]; ok {
			body = b
		}
		req := httptest.NewRequest(method, p, strings.NewReader(body))
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		a := g.action
		if g.byPath != nil {
			a = g.byPath[act]
		}
		out = append(out, routeRequest{req: req, action: a})
	}
	return out
}

// TestDecisionTable drives every route the router registers as every
// role: a route without a guard fails here (and NewHandler panics), a
// workflow route answers 403 exactly when the caller's role is below the
// role its action needs — naming the action, the workflow and the role —
// and then reaches no service; admin routes refuse non-admins.
func TestDecisionTable(t *testing.T) {
	probe := &server{guards: routeGuards(), bodies: routeBodies()}
	probe.register(http.NewServeMux())
	guards := routeGuards()
	for pattern := range guards {
		if !slices.Contains(probe.patterns, pattern) {
			t.Errorf("guard for %q, which the router does not register", pattern)
		}
	}
	roles := []access.Role{access.None, access.Reader, access.Operator, access.Owner}
	rows := 0
	for _, pattern := range probe.patterns {
		g, ok := guards[pattern]
		if !ok {
			t.Errorf("route %q has no guard", pattern)
			continue
		}
		switch g.kind {
		case guardOpen, guardService:
			if g.why == "" {
				t.Errorf("route %q: an open or service-checked route must say why", pattern)
			}
			continue
		case guardAdmin:
			for _, admin := range []bool{false, true} {
				for _, rr := range routeRequests(pattern, g) {
					rows++
					status, calls, body := serveAs(&roleAccess{role: access.Owner, admin: admin}, rr.req)
					if refused := status == http.StatusForbidden; refused == admin {
						t.Errorf("%s as admin=%v: status %d (%s)", pattern, admin, status, body)
					}
					if !admin && (calls > 0 || !strings.Contains(body, string(g.action))) {
						t.Errorf("%s refused: %d service calls, body %s", pattern, calls, body)
					}
				}
			}
			continue
		}
		for _, role := range roles {
			for _, rr := range routeRequests(pattern, g) {
				rows++
				req, act := rr.req, rr.action
				if act == "" {
					t.Fatalf("%s: no action for %s", pattern, req.URL.Path)
				}
				need, ok := access.Needs(act)
				if !ok {
					t.Fatalf("%s: %q is not a workflow action", pattern, act)
				}
				status, calls, body := serveAs(&roleAccess{role: role}, req)
				want := role < need
				if refused := status == http.StatusForbidden; refused != want {
					t.Errorf("%s %s as %s: status %d, want refused=%v (%s)", req.Method, req.URL, role, status, want, body)
					continue
				}
				if want {
					var e struct {
						Message string `json:"message"`
					}
					_ = json.Unmarshal([]byte(body), &e)
					for _, part := range []string{string(act), `"wf1"`, need.String()} {
						if !strings.Contains(e.Message, part) {
							t.Errorf("%s as %s: refusal %q does not name %q", pattern, role, e.Message, part)
						}
					}
					if calls > 0 {
						t.Errorf("%s as %s: refused, yet %d service calls", pattern, role, calls)
					}
				}
			}
		}
	}
	t.Logf("%d routes, %d guarded rows driven", len(probe.patterns), rows)
}

// serveAs serves req with a as the access service and a fake of the
// rest; it returns the status, how many service calls were made and the
// body.
func serveAs(a *roleAccess, req *http.Request) (int, int, string) {
	f := &fakeService{}
	svc := f.services()
	svc.Access = a
	rec := httptest.NewRecorder()
	NewHandler(svc, Options{}).ServeHTTP(rec, req)
	return rec.Code, len(f.recorded()), rec.Body.String()
}

// TestRouteWithoutGuardPanics: registering a route the guards do not
// know stops the handler from being built.
func TestRouteWithoutGuardPanics(t *testing.T) {
	s := &server{guards: map[string]guard{}}
	defer func() {
		if recover() == nil {
			t.Fatal("a route without a guard was registered")
		}
	}()
	s.guarded("GET /api/v3/unguarded", func(http.ResponseWriter, *http.Request) error { return nil })
}

var updateTable = flag.Bool("update-decision-table", false, "rewrite testdata/decision-table.txt from routeGuards")

// decisionTable renders every route's guard, one line each, sorted: the
// route, who may take it, and the action.
func decisionTable() string {
	var lines []string
	for pattern, g := range routeGuards() {
		var who string
		switch g.kind {
		case guardOpen:
			who = "any caller: " + g.why
		case guardAdmin:
			who = "admins: " + string(g.action)
		case guardService:
			who = "service: " + g.why
		default:
			where := "path {id}"
			switch {
			case g.kind == guardBody:
				where = "body workflow_id"
			case g.query != "":
				where = "query " + g.query
			}
			if g.byPath != nil {
				var parts []string
				for a, act := range g.byPath {
					need, _ := access.Needs(act)
					parts = append(parts, fmt.Sprintf("%s=%s", a, need))
				}
				slices.Sort(parts)
				who = fmt.Sprintf("workflow (%s): {action} %s", where, strings.Join(parts, " "))
			} else {
				need, _ := access.Needs(g.action)
				who = fmt.Sprintf("workflow (%s): %s, %s", where, need, g.action)
			}
		}
		lines = append(lines, fmt.Sprintf("%-110s %s", pattern, who))
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n") + "\n"
}

// TestDecisionTableIsReviewed: the table of every route's guard is kept
// in testdata/decision-table.txt, so that a new route, or a changed
// guard, shows in review as a changed line (go test ./lambdas/api -run
// TestDecisionTableIsReviewed -update-decision-table rewrites it).
func TestDecisionTableIsReviewed(t *testing.T) {
	got := decisionTable()
	path := filepath.Join("testdata", "decision-table.txt")
	if *updateTable {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update-decision-table)", err)
	}
	if string(want) != got {
		t.Errorf("the routes' guards changed; review and rewrite %s with -update-decision-table:\n%s", path, got)
	}
}
