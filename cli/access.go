package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"text/tabwriter"
	"time"
)

// accessView is a workflow's grant and the caller's role on it, as
// GET and PUT /api/v3/workflows/{id}/access answer.
type accessView struct {
	WorkflowID string   `json:"workflow_id"`
	Owners     []string `json:"owners"`
	Operators  []string `json:"operators"`
	Readers    []string `json:"readers"`
	Role       string   `json:"role"`
	Enforced   bool     `json:"enforced"`
}

// grantBody is the body of PUT /api/v3/workflows/{id}/access: all three
// lists, each encoded as a list even when empty.
type grantBody struct {
	Owners    []string `json:"owners"`
	Operators []string `json:"operators"`
	Readers   []string `json:"readers"`
}

// callerView is GET /api/v3/caller's answer.
type callerView struct {
	Principal string   `json:"principal"`
	Teams     []string `json:"teams"`
	Admin     bool     `json:"admin"`
	Enforced  bool     `json:"enforced"`
}

// teamView is a team as the teams routes answer.
type teamView struct {
	Name       string   `json:"name"`
	Members    []string `json:"members"`
	ModifyTime int64    `json:"modify_time"`
	ModifiedBy string   `json:"modified_by"`
}

// entryList is the value of a flag naming grant entries or team members:
// comma-separated, repeatable (the values add up), and set even when given
// empty (an empty --readers value clears the readers).
type entryList struct {
	set     bool
	entries []string
}

// Set adds the comma-separated entries of v, spaces trimmed and empty
// pieces dropped.
func (l *entryList) Set(v string) error {
	l.set = true
	if l.entries == nil {
		l.entries = []string{}
	}
	for _, e := range strings.Split(v, ",") {
		if e = strings.TrimSpace(e); e != "" {
			l.entries = append(l.entries, e)
		}
	}
	return nil
}

func (l *entryList) String() string {
	if l == nil {
		return ""
	}
	return strings.Join(l.entries, ",")
}

// accessFlags are the flags of access set and teams set.
type accessFlags struct {
	owners, operators, readers, members entryList
}

// accessPath is the access route of workflow wf.
func accessPath(wf string) string {
	return "/api/v3/workflows/" + url.PathEscape(wf) + "/access"
}

// whoami prints the caller as the API sees it (maestro whoami).
func (r *runner) whoami(ctx context.Context) int {
	var raw json.RawMessage
	if err := r.c.Do(ctx, http.MethodGet, "/api/v3/caller", nil, &raw); err != nil {
		return r.fail("whoami", err)
	}
	if r.json {
		fmt.Fprintln(r.o.Stdout, string(raw))
		return ExitOK
	}
	var v callerView
	if err := json.Unmarshal(raw, &v); err != nil {
		return r.fail("whoami", fmt.Errorf("decode the caller: %w", err))
	}
	tw := tabwriter.NewWriter(r.o.Stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "principal\t%s\n", orDash(v.Principal))
	fmt.Fprintf(tw, "teams\t%s\n", entries(v.Teams))
	fmt.Fprintf(tw, "admin\t%t\n", v.Admin)
	_ = tw.Flush()
	if !v.Enforced {
		fmt.Fprintln(r.o.Stdout, notEnforced)
	}
	return ExitOK
}

// notEnforced is printed under an answer with enforced false.
const notEnforced = "access not enforced: the stack runs open (a local stack without credentials); every caller may do everything"

// access runs maestro access get|set WF.
func (r *runner) access(ctx context.Context, action, wf string, f *accessFlags) int {
	switch action {
	case "get":
		if f.owners.set || f.operators.set || f.readers.set {
			fmt.Fprintln(r.o.Stderr, "maestro access get: --owners, --operators and --readers go with access set")
			return ExitUsage
		}
		var raw json.RawMessage
		if err := r.c.Do(ctx, http.MethodGet, accessPath(wf), nil, &raw); err != nil {
			return r.fail("access get", err)
		}
		return r.printAccess("access get", raw)
	case "set":
		return r.setAccess(ctx, wf, f)
	}
	fmt.Fprintf(r.o.Stderr, "maestro access: unknown action %q (want get or set)\n", action)
	return ExitUsage
}

// setAccess reads wf's grant, replaces the lists the flags give and
// writes it back; given all three lists, it writes them without reading
// (an admin who holds no role on wf may set its grant but not read it).
// The API has no conditional write: a change another caller makes between
// the read and the write is overwritten in the lists the flags give, and
// kept in the others only if it landed before the read.
func (r *runner) setAccess(ctx context.Context, wf string, f *accessFlags) int {
	if !f.owners.set && !f.operators.set && !f.readers.set {
		fmt.Fprintln(r.o.Stderr, "maestro access set: give at least one of --owners, --operators, --readers (comma-separated entries: *, team:NAME, ARN patterns; '' empties a list)")
		return ExitUsage
	}
	var cur accessView
	if !f.owners.set || !f.operators.set || !f.readers.set {
		if err := r.c.Do(ctx, http.MethodGet, accessPath(wf), nil, &cur); err != nil {
			var apiErr *APIError
			if errors.As(err, &apiErr) && apiErr.Status == http.StatusForbidden {
				err = fmt.Errorf("%w\n(reading the grant, to keep the lists not given; give all three lists to replace it without reading it)", err)
			}
			return r.fail("access set", err)
		}
	}
	g := grantBody{Owners: cur.Owners, Operators: cur.Operators, Readers: cur.Readers}
	for _, l := range []struct {
		flag *entryList
		list *[]string
	}{{&f.owners, &g.Owners}, {&f.operators, &g.Operators}, {&f.readers, &g.Readers}} {
		if l.flag.set {
			*l.list = l.flag.entries
		}
		if *l.list == nil {
			*l.list = []string{}
		}
	}
	body, err := json.Marshal(g)
	if err != nil {
		return r.fail("access set", err)
	}
	var raw json.RawMessage
	if err := r.c.Do(ctx, http.MethodPut, accessPath(wf), body, &raw); err != nil {
		return r.fail("access set", err)
	}
	return r.printAccess("access set", raw)
}

// printAccess prints an access view: raw with --json, else a table.
func (r *runner) printAccess(cmd string, raw json.RawMessage) int {
	if r.json {
		fmt.Fprintln(r.o.Stdout, string(raw))
		return ExitOK
	}
	var v accessView
	if err := json.Unmarshal(raw, &v); err != nil {
		return r.fail(cmd, fmt.Errorf("decode the access: %w", err))
	}
	tw := tabwriter.NewWriter(r.o.Stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "workflow\t%s\n", v.WorkflowID)
	fmt.Fprintf(tw, "your role\t%s\n", orDash(v.Role))
	fmt.Fprintf(tw, "owners\t%s\n", entries(v.Owners))
	fmt.Fprintf(tw, "operators\t%s\n", entries(v.Operators))
	fmt.Fprintf(tw, "readers\t%s\n", entries(v.Readers))
	_ = tw.Flush()
	if !v.Enforced {
		fmt.Fprintln(r.o.Stdout, notEnforced)
	}
	return ExitOK
}

// entries joins a list for a table cell; "-" when empty.
func entries(l []string) string {
	if len(l) == 0 {
		return "-"
	}
	return strings.Join(l, ", ")
}

// teamsUsage is how maestro teams is called.
const teamsUsage = "[get NAME | set NAME --member ARN... | delete NAME]"

// teams runs maestro teams (the list) and teams get|set|delete NAME.
func (r *runner) teams(ctx context.Context, args []string, f *accessFlags) int {
	if f.members.set && (len(args) == 0 || args[0] != "set") {
		fmt.Fprintln(r.o.Stderr, "maestro teams: --member goes with teams set")
		return ExitUsage
	}
	if len(args) == 0 {
		return r.listTeams(ctx)
	}
	if len(args) != 2 {
		fmt.Fprintf(r.o.Stderr, "usage: maestro teams %s\n", teamsUsage)
		return ExitUsage
	}
	action, name := args[0], args[1]
	path := "/api/v3/teams/" + url.PathEscape(name)
	var raw json.RawMessage
	var err error
	switch action {
	case "get":
		err = r.c.Do(ctx, http.MethodGet, path, nil, &raw)
	case "set":
		if !f.members.set {
			fmt.Fprintln(r.o.Stderr, "maestro teams set: give the members with --member ARN (repeatable or comma-separated; IAM principal ARN patterns)")
			return ExitUsage
		}
		body, merr := json.Marshal(map[string][]string{"members": f.members.entries})
		if merr != nil {
			return r.fail("teams set", merr)
		}
		err = r.c.Do(ctx, http.MethodPut, path, body, &raw)
	case "delete":
		err = r.c.Do(ctx, http.MethodDelete, path, nil, &raw)
	default:
		fmt.Fprintf(r.o.Stderr, "maestro teams: unknown action %q (want get, set or delete)\n", action)
		return ExitUsage
	}
	if err != nil {
		return r.fail("teams "+action, err)
	}
	if r.json {
		fmt.Fprintln(r.o.Stdout, string(raw))
		return ExitOK
	}
	if action == "delete" {
		var d struct {
			Name    string `json:"name"`
			Deleted bool   `json:"deleted"`
		}
		if err := json.Unmarshal(raw, &d); err != nil {
			return r.fail("teams delete", fmt.Errorf("decode the answer: %w", err))
		}
		if !d.Deleted {
			fmt.Fprintf(r.o.Stdout, "team %s: there was no such team\n", name)
			return ExitOK
		}
		fmt.Fprintf(r.o.Stdout, "team %s deleted\n", d.Name)
		return ExitOK
	}
	var t teamView
	if err := json.Unmarshal(raw, &t); err != nil {
		return r.fail("teams "+action, fmt.Errorf("decode the team: %w", err))
	}
	teamTable(r.o.Stdout, []teamView{t})
	return ExitOK
}

// listTeams prints every team (maestro teams).
func (r *runner) listTeams(ctx context.Context) int {
	var raw json.RawMessage
	if err := r.c.Do(ctx, http.MethodGet, "/api/v3/teams", nil, &raw); err != nil {
		return r.fail("teams", err)
	}
	if r.json {
		fmt.Fprintln(r.o.Stdout, string(raw))
		return ExitOK
	}
	var list struct {
		Teams []teamView `json:"teams"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return r.fail("teams", fmt.Errorf("decode the teams: %w", err))
	}
	teamTable(r.o.Stdout, list.Teams)
	return ExitOK
}

// teamTable writes teams as a table, one row each.
func teamTable(w io.Writer, teams []teamView) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TEAM\tMEMBERS\tCHANGED\tBY")
	for _, t := range teams {
		changed := "-"
		if t.ModifyTime > 0 {
			changed = time.UnixMilli(t.ModifyTime).UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t.Name, entries(t.Members), changed, orDash(t.ModifiedBy))
	}
	_ = tw.Flush()
}
