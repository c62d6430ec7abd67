// Package access decides who may do what to a workflow: teams (named sets
// of principal ARN patterns), a workflow's grant (its owners, operators and
// readers), the role a caller holds on it, and the role each action needs.
// It is pure: the API and the orchestrator load the teams and grants from
// the store and ask here.
//
// An entry of a grant's list, or of a team's members, names callers:
//
//   - every authenticated caller (grants only)
//     team:<name>  every member of the team
//     arn:...      principals matching an IAM ARN pattern (package principal)
//
// Roles are ordered: an owner may do what an operator may, an operator what
// a reader may. Admins (named by the stack) manage teams, tag permits, job
// queues and any workflow's grant; they hold no role on a workflow their
// teams or ARN are not granted, so that every power over a workflow goes
// through a recorded grant change.
package access

import (
	"fmt"
	"slices"
	"strings"

	"github.com/maestro-serverless/maestro/principal"
)

// Limits of grants and teams, enforced by Validate.
const (
	// MaxEntries is the most entries a grant's list or a team's members
	// may hold.
	MaxEntries = 100
	// MaxTeams is the most teams a stack keeps: every authorised request
	// reads them all to learn its caller's teams.
	MaxTeams = 200
	// MaxTeamNameLen bounds a team name.
	MaxTeamNameLen = 64
	// MaxTeamsPerCaller bounds the teams one caller is found in, so that a
	// first push's default grant stays small.
	MaxTeamsPerCaller = 20
)

// Everyone is the entry that names every authenticated caller.
const Everyone = "*"

// TeamPrefix starts an entry naming a team.
const TeamPrefix = "team:"

// Role is what a caller may do to a workflow.
type Role int

// Roles, from the least to the most.
const (
	// None: the caller may not even read the workflow.
	None Role = iota
	// Reader: definitions, instances, steps, timelines, logs links.
	Reader
	// Operator: start, stop, kill, restart, unblock, step actions,
	// breakpoints, output data.
	Operator
	// Owner: new versions, activation, properties, tags, the grant, delete.
	Owner
)

// String names r as the API and the messages do.
func (r Role) String() string {
	switch r {
	case Reader:
		return "reader"
	case Operator:
		return "operator"
	case Owner:
		return "owner"
	}
	return "none"
}

// Grant is who holds which role on a workflow. Each list holds entries (see
// the package comment).
type Grant struct {
	Owners    []string `json:"owners"`
	Operators []string `json:"operators"`
	Readers   []string `json:"readers"`
}

// Caller is who makes a request: the normalised principal, the teams whose
// members match it, and whether the stack names it an admin.
type Caller struct {
	Principal string   `json:"principal"`
	Teams     []string `json:"teams"`
	Admin     bool     `json:"admin"`
}

// Matches reports whether entry names c.
func (c Caller) Matches(entry string) bool {
	switch {
	case entry == Everyone:
		return c.Principal != ""
	case strings.HasPrefix(entry, TeamPrefix):
		return slices.Contains(c.Teams, entry[len(TeamPrefix):])
	}
	ok, err := principal.Match(entry, c.Principal)
	return err == nil && ok
}

func (c Caller) matchesAny(entries []string) bool {
	return slices.ContainsFunc(entries, c.Matches)
}

// RoleOf returns the highest role g gives c.
func (g Grant) RoleOf(c Caller) Role {
	switch {
	case c.Principal == "":
		return None
	case c.matchesAny(g.Owners):
		return Owner
	case c.matchesAny(g.Operators):
		return Operator
	case c.matchesAny(g.Readers):
		return Reader
	}
	return None
}

// Default is the grant of a workflow c pushes first: its owners are c's
// teams (c alone if it has none), its operators the same, and its readers
// everyone, or nobody else when private.
func Default(c Caller, private bool) Grant {
	owners := make([]string, 0, len(c.Teams))
	for _, t := range c.Teams {
		owners = append(owners, TeamPrefix+t)
	}
	if len(owners) == 0 {
		owners = []string{c.Principal}
	}
	g := Grant{Owners: owners, Operators: slices.Clone(owners), Readers: []string{}}
	if !private {
		g.Readers = []string{Everyone}
	}
	return g
}

// Normalized returns g with nil lists made empty, so that it encodes as
// lists.
func (g Grant) Normalized() Grant {
	for _, l := range []*[]string{&g.Owners, &g.Operators, &g.Readers} {
		if *l == nil {
			*l = []string{}
		}
	}
	return g
}

// Validate returns what is wrong with g, each problem naming the field and
// the rule; none when g is valid. Owners must name at least one team or
// principal and never everyone: an id belongs to whom it names.
func (g Grant) Validate() []string {
	var out []string
	if len(g.Owners) == 0 {
		out = append(out, "owners: must name at least one team or principal")
	}
	for _, l := range []struct {
		field   string
		entries []string
	}{{"owners", g.Owners}, {"operators", g.Operators}, {"readers", g.Readers}} {
		out = append(out, checkEntries(l.field, l.entries, l.field != "owners")...)
	}
	return out
}

// Teams returns the team names g's entries refer to, once each, sorted.
func (g Grant) Teams() []string {
	var out []string
	for _, l := range [][]string{g.Owners, g.Operators, g.Readers} {
		for _, e := range l {
			if name, ok := strings.CutPrefix(e, TeamPrefix); ok && !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
	}
	slices.Sort(out)
	return out
}

// checkEntries checks the entries of one list; everyone is allowed when
// star is.
func checkEntries(field string, entries []string, star bool) []string {
	var out []string
	if len(entries) > MaxEntries {
		out = append(out, fmt.Sprintf("%s: at most %d entries, got %d", field, MaxEntries, len(entries)))
		entries = entries[:MaxEntries]
	}
	seen := map[string]bool{}
	for i, e := range entries {
		at := fmt.Sprintf("%s[%d]", field, i)
		if seen[e] {
			out = append(out, fmt.Sprintf("%s: %q is listed twice", at, e))
			continue
		}
		seen[e] = true
		if err := CheckEntry(e, star); err != nil {
			out = append(out, fmt.Sprintf("%s: %v", at, err))
		}
	}
	return out
}

// CheckEntry checks one entry: everyone (when star), a team reference
// with a valid team name, or an IAM principal ARN pattern.
func CheckEntry(e string, star bool) error {
	switch {
	case e == Everyone:
		if !star {
			return fmt.Errorf("%q (everyone) is not allowed here", e)
		}
		return nil
	case strings.HasPrefix(e, TeamPrefix):
		return CheckTeamName(e[len(TeamPrefix):])
	case strings.HasPrefix(e, "arn:"):
		return principal.ValidatePattern(e)
	}
	return fmt.Errorf("%q is neither \"*\", \"team:<name>\" nor an IAM principal ARN pattern", e)
}

// CheckTeamName checks a team name: 1 to 64 lower-case letters, digits,
// '-' and '_', starting with a letter or digit.
func CheckTeamName(name string) error {
	if name == "" || len(name) > MaxTeamNameLen {
		return fmt.Errorf("team name %q: must be 1 to %d characters", name, MaxTeamNameLen)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case (c == '-' || c == '_') && i > 0:
		default:
			return fmt.Errorf("team name %q: only lower-case letters, digits, '-' and '_' (not first) are allowed", name)
		}
	}
	return nil
}

// Team is a named set of principals, each member an IAM principal ARN
// pattern.
type Team struct {
	Name    string   `json:"name"`
	Members []string `json:"members"`
}

// Validate returns what is wrong with t: its name, and members that are
// not principal ARN patterns (teams do not nest; everyone is not a
// member).
func (t Team) Validate() []string {
	var out []string
	if err := CheckTeamName(t.Name); err != nil {
		out = append(out, "name: "+err.Error())
	}
	if len(t.Members) == 0 {
		out = append(out, "members: must name at least one principal ARN pattern")
	}
	for _, p := range checkEntries("members", t.Members, false) {
		out = append(out, p)
	}
	for i, m := range t.Members {
		if strings.HasPrefix(m, TeamPrefix) {
			out = append(out, fmt.Sprintf("members[%d]: %q: teams do not contain teams", i, m))
		}
	}
	return out
}

// TeamsOf returns the names of the teams among teams that p is a member of,
// sorted.
func TeamsOf(p string, teams []Team) []string {
	var out []string
	for _, t := range teams {
		for _, m := range t.Members {
			if ok, err := principal.Match(m, p); err == nil && ok {
				out = append(out, t.Name)
				break
			}
		}
	}
	slices.Sort(out)
	return out
}

// Covers reports whether callee's grant lets every owner entry of caller
// operate callee: each entry is named by callee's operators or owners, as
// the same entry or by everyone. A subworkflow step may start only a
// workflow its own workflow's owners may operate.
func Covers(callee Grant, callerOwners []string) (missing []string) {
	for _, e := range callerOwners {
		if slices.Contains(callee.Operators, e) || slices.Contains(callee.Owners, e) || slices.Contains(callee.Operators, Everyone) {
			continue
		}
		missing = append(missing, e)
	}
	return missing
}
