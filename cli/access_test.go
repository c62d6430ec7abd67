package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// apiCall is a request the fake access API received.
type apiCall struct{ method, path, body string }

// fakeAccessAPI serves the shapes of the caller, access and teams routes
// (docs/security.md) from memory and records every request. Workflow
// "theirs" refuses writes of its grant with 403, as the API refuses a
// reader; a grant entry "bad" is refused with 400 and an errors list.
type fakeAccessAPI struct {
	mu       sync.Mutex
	calls    []apiCall
	grants   map[string]grantBody
	teams    map[string][]string
	enforced bool
}

const alice = "arn:aws:iam::123456789012:role/alice"

func newFakeAccessAPI(t *testing.T) (*fakeAccessAPI, string) {
	t.Helper()
	f := &fakeAccessAPI{
		grants: map[string]grantBody{
			"wf":     {Owners: []string{"team:data"}, Operators: []string{"team:data"}, Readers: []string{"*"}},
			"theirs": {Owners: []string{"team:ml"}, Operators: []string{"team:ml"}, Readers: []string{"*"}},
		},
		teams:    map[string][]string{"data": {"arn:aws:iam::123456789012:role/data-*"}},
		enforced: true,
	}
	srv := httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(srv.Close)
	return f, srv.URL
}

func (f *fakeAccessAPI) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	body, _ := io.ReadAll(r.Body)
	f.calls = append(f.calls, apiCall{r.Method, r.URL.Path, string(body)})
	w.Header().Set("Content-Type", "application/json")
	answer := func(status int, v any) {
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(v)
	}
	refuse := func(status int, msg string, errs ...string) {
		answer(status, map[string]any{"status": status, "message": msg, "errors": append([]string{}, errs...)})
	}
	view := func(wf string, g grantBody) map[string]any {
		role := "reader"
		if wf == "wf" {
			role = "owner"
		}
		return map[string]any{"workflow_id": wf, "owners": g.Owners, "operators": g.Operators, "readers": g.Readers, "role": role, "enforced": f.enforced}
	}
	team := func(name string, members []string) map[string]any {
		return map[string]any{"name": name, "members": members, "modify_time": 1795000000000, "modified_by": "arn:aws:iam::123456789012:role/admin"}
	}
	path := r.URL.Path
	switch {
	case path == "/api/v3/caller" && r.Method == http.MethodGet:
		answer(http.StatusOK, map[string]any{"principal": alice, "teams": []string{"data", "ml"}, "admin": false, "enforced": f.enforced})
	case strings.HasPrefix(path, "/api/v3/workflows/") && strings.HasSuffix(path, "/access"):
		wf := strings.TrimSuffix(strings.TrimPrefix(path, "/api/v3/workflows/"), "/access")
		g, ok := f.grants[wf]
		if wf == "hidden" && r.Method == http.MethodGet {
			refuse(http.StatusForbidden, fmt.Sprintf("read of workflow %q needs the reader role; %s holds none", wf, alice))
			return
		}
		if !ok {
			refuse(http.StatusNotFound, fmt.Sprintf("workflow %q not found", wf))
			return
		}
		switch r.Method {
		case http.MethodGet:
			answer(http.StatusOK, view(wf, g))
		case http.MethodPut:
			if wf == "theirs" {
				refuse(http.StatusForbidden, fmt.Sprintf("set access of workflow %q needs the owner role; %s holds reader", wf, alice))
				return
			}
			var in grantBody
			if err := json.Unmarshal(body, &in); err != nil {
				refuse(http.StatusBadRequest, err.Error())
				return
			}
			for i, e := range in.Readers {
				if e == "bad" {
					refuse(http.StatusBadRequest, "invalid access", fmt.Sprintf("readers[%d]: %q is not *, team:<name> or an IAM principal ARN pattern", i, e))
					return
				}
			}
			f.grants[wf] = in
			answer(http.StatusOK, view(wf, in))
		default:
			refuse(http.StatusMethodNotAllowed, "method not allowed")
		}
	case path == "/api/v3/teams" && r.Method == http.MethodGet:
		list := []map[string]any{}
		for name, m := range f.teams {
			list = append(list, team(name, m))
		}
		answer(http.StatusOK, map[string]any{"teams": list})
	case strings.HasPrefix(path, "/api/v3/teams/"):
		name := strings.TrimPrefix(path, "/api/v3/teams/")
		switch r.Method {
		case http.MethodGet:
			m, ok := f.teams[name]
			if !ok {
				refuse(http.StatusNotFound, fmt.Sprintf("team %q not found", name))
				return
			}
			answer(http.StatusOK, team(name, m))
		case http.MethodPut:
			if name == "ml" {
				refuse(http.StatusForbidden, fmt.Sprintf("manage teams needs an admin; %s is not one", alice))
				return
			}
			var in struct {
				Members []string `json:"members"`
			}
			if err := json.Unmarshal(body, &in); err != nil {
				refuse(http.StatusBadRequest, err.Error())
				return
			}
			f.teams[name] = in.Members
			answer(http.StatusOK, team(name, in.Members))
		case http.MethodDelete:
			_, ok := f.teams[name]
			delete(f.teams, name)
			answer(http.StatusOK, map[string]any{"name": name, "deleted": ok})
		}
	default:
		refuse(http.StatusNotFound, "no route "+r.Method+" "+path)
	}
}

// take returns the requests received since the last take.
func (f *fakeAccessAPI) take() []apiCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.calls
	f.calls = nil
	return c
}

// runCLI runs maestro args against endpoint: exit code, stdout, stderr.
func runCLI(t *testing.T, endpoint string, args ...string) (int, string, string) {
	t.Helper()
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	var stdout, stderr bytes.Buffer
	code := Run(t.Context(), append(args, "--endpoint", endpoint), Options{Stdout: &stdout, Stderr: &stderr})
	return code, stdout.String(), stderr.String()
}

// TestWhoami: whoami reads GET /api/v3/caller and prints the principal,
// its teams and whether it is an admin, says when the stack does not
// enforce access, and prints the answer as it is with --json.
func TestWhoami(t *testing.T) {
	f, url := newFakeAccessAPI(t)
	code, out, errOut := runCLI(t, url, "whoami")
	want := "principal  " + alice + "\nteams      data, ml\nadmin      false\n"
	if code != ExitOK || out != want || errOut != "" {
		t.Fatalf("exit %d\n%q\nwant %q\n%s", code, out, want, errOut)
	}
	if got := f.take(); !reflect.DeepEqual(got, []apiCall{{"GET", "/api/v3/caller", ""}}) {
		t.Fatalf("requests %+v", got)
	}
	f.enforced = false
	if code, out, _ = runCLI(t, url, "whoami"); code != ExitOK || !strings.HasSuffix(out, notEnforced+"\n") {
		t.Fatalf("open stack: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI(t, url, "whoami", "--json")
	var v callerView
	if code != ExitOK || json.Unmarshal([]byte(out), &v) != nil || v.Principal != alice || v.Enforced {
		t.Fatalf("--json: exit %d\n%s", code, out)
	}
}

// TestAccessGet: access get prints a workflow's three lists and the
// caller's role; a workflow the API does not know is its 404 message,
// exit 1.
func TestAccessGet(t *testing.T) {
	f, url := newFakeAccessAPI(t)
	code, out, errOut := runCLI(t, url, "access", "get", "theirs")
	want := "workflow   theirs\nyour role  reader\nowners     team:ml\noperators  team:ml\nreaders    *\n"
	if code != ExitOK || out != want {
		t.Fatalf("exit %d\n%q\nwant %q\n%s", code, out, want, errOut)
	}
	if got := f.take(); !reflect.DeepEqual(got, []apiCall{{"GET", "/api/v3/workflows/theirs/access", ""}}) {
		t.Fatalf("requests %+v", got)
	}
	code, out, _ = runCLI(t, url, "access", "get", "theirs", "--json")
	var v accessView
	if code != ExitOK || json.Unmarshal([]byte(out), &v) != nil || v.Role != "reader" || !v.Enforced || !reflect.DeepEqual(v.Owners, []string{"team:ml"}) {
		t.Fatalf("--json: exit %d\n%s", code, out)
	}
	code, out, errOut = runCLI(t, url, "access", "get", "nope")
	if code != ExitFailed || out != "" || errOut != "maestro access get: HTTP 404: workflow \"nope\" not found\n" {
		t.Fatalf("unknown workflow: exit %d\n%q\n%q", code, out, errOut)
	}
}

// TestAccessSet: access set reads the grant, replaces only the lists its
// flags give (repeated and comma-separated values add up; an empty value
// empties a list) and writes all three back; it prints the answer.
func TestAccessSet(t *testing.T) {
	f, url := newFakeAccessAPI(t)
	code, out, errOut := runCLI(t, url, "access", "set", "wf", "--operators", "team:data, team:ml", "--operators=arn:aws:iam::123456789012:role/ops-*", "--readers", "")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	wantBody := `{"owners":["team:data"],"operators":["team:data","team:ml","arn:aws:iam::123456789012:role/ops-*"],"readers":[]}`
	want := []apiCall{{"GET", "/api/v3/workflows/wf/access", ""}, {"PUT", "/api/v3/workflows/wf/access", wantBody}}
	if got := f.take(); !reflect.DeepEqual(got, want) {
		t.Fatalf("requests\n%+v\nwant\n%+v", got, want)
	}
	wantOut := "workflow   wf\nyour role  owner\nowners     team:data\noperators  team:data, team:ml, arn:aws:iam::123456789012:role/ops-*\nreaders    -\n"
	if out != wantOut {
		t.Fatalf("%q\nwant %q", out, wantOut)
	}
	// Owners alone: the operators and the (empty) readers set above stay.
	if code, _, errOut = runCLI(t, url, "access", "set", "--owners", "team:ml", "wf"); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	wantBody = `{"owners":["team:ml"],"operators":["team:data","team:ml","arn:aws:iam::123456789012:role/ops-*"],"readers":[]}`
	if got := f.take(); len(got) != 2 || got[1].body != wantBody {
		t.Fatalf("requests %+v, want the PUT body %s", got, wantBody)
	}
	// All three lists: written without a read.
	if code, _, errOut = runCLI(t, url, "access", "set", "wf", "--owners", "team:data", "--operators", "team:data", "--readers", "*"); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want = []apiCall{{"PUT", "/api/v3/workflows/wf/access", `{"owners":["team:data"],"operators":["team:data"],"readers":["*"]}`}}
	if got := f.take(); !reflect.DeepEqual(got, want) {
		t.Fatalf("requests\n%+v\nwant\n%+v", got, want)
	}
}

// TestAccessSetRefused: the API's refusals are printed with their status,
// message and every entry of their errors list, exit 1; a refused read
// sends no write.
func TestAccessSetRefused(t *testing.T) {
	f, url := newFakeAccessAPI(t)
	code, out, errOut := runCLI(t, url, "access", "set", "theirs", "--readers", "team:data")
	want := "maestro access set: HTTP 403: set access of workflow \"theirs\" needs the owner role; " + alice + " holds reader\n"
	if code != ExitFailed || out != "" || errOut != want {
		t.Fatalf("403: exit %d\n%q\n%q\nwant %q", code, out, errOut, want)
	}
	code, _, errOut = runCLI(t, url, "access", "set", "wf", "--readers", "*,bad")
	want = "maestro access set: HTTP 400: invalid access\n  readers[1]: \"bad\" is not *, team:<name> or an IAM principal ARN pattern\n"
	if code != ExitFailed || errOut != want {
		t.Fatalf("400: exit %d\n%q\nwant %q", code, errOut, want)
	}
	f.take()
	if code, _, _ = runCLI(t, url, "access", "set", "nope", "--readers", "*"); code != ExitFailed {
		t.Fatalf("unknown workflow: exit %d", code)
	}
	if got := f.take(); !reflect.DeepEqual(got, []apiCall{{"GET", "/api/v3/workflows/nope/access", ""}}) {
		t.Fatalf("a refused read was followed by %+v", got)
	}
	// A read refused with 403 says how to write without reading.
	code, _, errOut = runCLI(t, url, "access", "set", "hidden", "--readers", "*")
	want = "maestro access set: HTTP 403: read of workflow \"hidden\" needs the reader role; " + alice + " holds none\n" +
		"(reading the grant, to keep the lists not given; give all three lists to replace it without reading it)\n"
	if code != ExitFailed || errOut != want {
		t.Fatalf("a refused read: exit %d\n%q\nwant %q", code, errOut, want)
	}
	if got := f.take(); len(got) != 1 || got[0].method != "GET" {
		t.Fatalf("a refused read was followed by %+v", got)
	}
}

// TestTeams: teams lists, gets, sets (members from repeated and
// comma-separated --member) and deletes teams through the teams routes;
// a non-admin's 403 is printed with its message, exit 1.
func TestTeams(t *testing.T) {
	f, url := newFakeAccessAPI(t)
	code, out, errOut := runCLI(t, url, "teams", "set", "ml", "--member", "arn:aws:iam::123456789012:role/ml-*,arn:aws:iam::123456789012:user/bob")
	if code != ExitFailed || errOut != "maestro teams set: HTTP 403: manage teams needs an admin; "+alice+" is not one\n" {
		t.Fatalf("403: exit %d\n%s%q", code, out, errOut)
	}
	f.take()
	code, out, errOut = runCLI(t, url, "teams", "set", "ops", "--member", "arn:aws:iam::123456789012:role/ops-*", "--member", "arn:aws:iam::123456789012:user/carol")
	wantOut := "TEAM  MEMBERS                                                                     CHANGED               BY\n" +
		"ops   arn:aws:iam::123456789012:role/ops-*, arn:aws:iam::123456789012:user/carol  2026-11-18T11:06:40Z  arn:aws:iam::123456789012:role/admin\n"
	if code != ExitOK || out != wantOut {
		t.Fatalf("set: exit %d\n%q\nwant %q\n%s", code, out, wantOut, errOut)
	}
	if code, out, _ = runCLI(t, url, "teams", "get", "data"); code != ExitOK || !strings.Contains(out, "data  arn:aws:iam::123456789012:role/data-*  2026-11-18T11:06:40Z") {
		t.Fatalf("get: exit %d\n%s", code, out)
	}
	if code, out, _ = runCLI(t, url, "teams"); code != ExitOK || !strings.Contains(out, "\ndata ") || !strings.Contains(out, "\nops ") {
		t.Fatalf("list: exit %d\n%s", code, out)
	}
	if code, out, _ = runCLI(t, url, "teams", "delete", "ops"); code != ExitOK || out != "team ops deleted\n" {
		t.Fatalf("delete: exit %d\n%q", code, out)
	}
	if code, out, _ = runCLI(t, url, "teams", "delete", "ops"); code != ExitOK || out != "team ops: there was no such team\n" {
		t.Fatalf("delete again: exit %d\n%q", code, out)
	}
	code, out, errOut = runCLI(t, url, "teams", "get", "ops")
	if code != ExitFailed || out != "" || errOut != "maestro teams get: HTTP 404: team \"ops\" not found\n" {
		t.Fatalf("get a deleted team: exit %d\n%q\n%q", code, out, errOut)
	}
	want := []apiCall{
		{"PUT", "/api/v3/teams/ops", `{"members":["arn:aws:iam::123456789012:role/ops-*","arn:aws:iam::123456789012:user/carol"]}`},
		{"GET", "/api/v3/teams/data", ""},
		{"GET", "/api/v3/teams", ""},
		{"DELETE", "/api/v3/teams/ops", ""},
		{"DELETE", "/api/v3/teams/ops", ""},
		{"GET", "/api/v3/teams/ops", ""},
	}
	if got := f.take(); !reflect.DeepEqual(got, want) {
		t.Fatalf("requests\n%+v\nwant\n%+v", got, want)
	}
}

// TestAccessUsage: the access and teams commands refuse missing
// arguments, unknown actions and flags that belong to another command
// with a message and exit 2, before any request.
func TestAccessUsage(t *testing.T) {
	f, url := newFakeAccessAPI(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"access", "get"}, "usage: maestro access get|set WF [--owners E,...] [--operators E,...] [--readers E,...]\n"},
		{[]string{"access", "set", "wf"}, "maestro access set: give at least one of --owners, --operators, --readers (comma-separated entries: *, team:NAME, ARN patterns; '' empties a list)\n"},
		{[]string{"access", "get", "wf", "--owners", "team:x"}, "maestro access get: --owners, --operators and --readers go with access set\n"},
		{[]string{"access", "grant", "wf"}, "maestro access: unknown action \"grant\" (want get or set)\n"},
		{[]string{"start", "wf", "--readers", "*"}, "maestro start: --owners, --operators and --readers go with access set\n"},
		{[]string{"whoami", "x"}, "usage: maestro whoami \n"},
		{[]string{"teams", "get"}, "usage: maestro teams [get NAME | set NAME --member ARN... | delete NAME]\n"},
		{[]string{"teams", "set", "data"}, "maestro teams set: give the members with --member ARN (repeatable or comma-separated; IAM principal ARN patterns)\n"},
		{[]string{"teams", "get", "data", "--member", "arn:aws:iam::1:role/x"}, "maestro teams: --member goes with teams set\n"},
		{[]string{"teams", "--member", "arn:aws:iam::1:role/x"}, "maestro teams: --member goes with teams set\n"},
		{[]string{"teams", "rename", "a"}, "maestro teams: unknown action \"rename\" (want get, set or delete)\n"},
		{[]string{"access", "set", "wf", "--member", "arn:aws:iam::1:role/x"}, "maestro access: --member goes with teams set\n"},
		{[]string{"access", "set", "wf", "--owner", "team:x"}, "flag provided but not defined: -owner\n"},
	} {
		code, out, errOut := runCLI(t, url, tc.args...)
		if code != ExitUsage || out != "" || !strings.HasPrefix(errOut, tc.want) {
			t.Errorf("maestro %v: exit %d, %q %q; want %d, %q", tc.args, code, out, errOut, ExitUsage, tc.want)
		}
	}
	if got := f.take(); len(got) != 0 {
		t.Fatalf("usage errors sent requests: %+v", got)
	}
}
