package access

import (
	"strings"
	"testing"
)

var (
	alice = Caller{Principal: "arn:aws:iam::000000000000:role/alice", Teams: []string{"data"}}
	bob   = Caller{Principal: "arn:aws:iam::000000000000:role/bob", Teams: []string{"ml"}}
	admin = Caller{Principal: "arn:aws:iam::000000000000:role/admin", Admin: true}
	carol = Caller{Principal: "arn:aws:iam::000000000000:user/carol"}
)

func TestRoleOf(t *testing.T) {
	g := Grant{Owners: []string{"team:data"}, Operators: []string{"arn:aws:iam::000000000000:user/*"}, Readers: []string{"*"}}
	for _, tc := range []struct {
		c    Caller
		want Role
	}{
		{alice, Owner}, {bob, Reader}, {carol, Operator}, {admin, Reader}, {Caller{}, None},
		{Caller{Principal: "arn:aws:iam::000000000000:role/x", Teams: []string{"datax"}}, Reader},
	} {
		if got := g.RoleOf(tc.c); got != tc.want {
			t.Errorf("RoleOf(%s) = %s, want %s", tc.c.Principal, got, tc.want)
		}
	}
	private := Grant{Owners: []string{"team:data"}}
	if got := private.RoleOf(bob); got != None {
		t.Errorf("private RoleOf(bob) = %s, want none", got)
	}
}

func TestDecide(t *testing.T) {
	g := Default(alice, false)
	for _, tc := range []struct {
		c    Caller
		a    Action
		want bool
	}{
		{alice, Push, true}, {alice, Start, true}, {alice, SetGrant, true},
		{bob, Read, true}, {bob, Start, false}, {bob, Stop, false}, {bob, Push, false}, {bob, Delete, false}, {bob, SetGrant, false},
		{admin, SetGrant, true}, {admin, Start, false}, {admin, Read, true},
		{alice, Action("frobnicate"), false}, {Caller{}, Read, false},
	} {
		d := Decide(tc.c, g, tc.a)
		if d.Allowed != tc.want {
			t.Errorf("Decide(%s, %q) = %v, want %v", tc.c.Principal, tc.a, d.Allowed, tc.want)
		}
	}
	d := Decide(bob, g, Start)
	msg := Refusal(bob, "wf", Start, d)
	for _, want := range []string{"start", `"wf"`, "operator", "reader", bob.Principal} {
		if !strings.Contains(msg, want) {
			t.Errorf("Refusal %q lacks %q", msg, want)
		}
	}
}

func TestDefault(t *testing.T) {
	g := Default(alice, false)
	if len(g.Owners) != 1 || g.Owners[0] != "team:data" || g.Operators[0] != "team:data" || g.Readers[0] != "*" {
		t.Fatalf("Default(alice) = %+v", g)
	}
	g = Default(carol, true)
	if g.Owners[0] != carol.Principal || len(g.Readers) != 0 {
		t.Fatalf("Default(carol, private) = %+v", g)
	}
	if p := g.Validate(); len(p) != 0 {
		t.Fatalf("default grant invalid: %v", p)
	}
}

func TestGrantValidate(t *testing.T) {
	for _, tc := range []struct {
		g    Grant
		want string
	}{
		{Grant{}, "owners: must name"},
		{Grant{Owners: []string{"*"}}, `owners[0]: "*" (everyone) is not allowed`},
		{Grant{Owners: []string{"team:Data"}}, "owners[0]: team name"},
		{Grant{Owners: []string{"team:data", "team:data"}}, "listed twice"},
		{Grant{Owners: []string{"bob"}}, `owners[0]: "bob" is neither`},
		{Grant{Owners: []string{"team:data"}, Readers: []string{"arn:aws:s3:::bucket"}}, "readers[0]"},
		{Grant{Owners: []string{"team:data"}, Operators: make([]string, MaxEntries+1)}, "operators: at most 100 entries"},
	} {
		got := strings.Join(tc.g.Validate(), "; ")
		if !strings.Contains(got, tc.want) {
			t.Errorf("Validate(%+v) = %q, want it to contain %q", tc.g, got, tc.want)
		}
	}
	ok := Grant{Owners: []string{"team:data", "arn:aws:iam::123456789012:role/data-*"}, Operators: []string{"team:ml"}, Readers: []string{"*"}}
	if p := ok.Validate(); len(p) != 0 {
		t.Fatalf("valid grant refused: %v", p)
	}
}

func TestTeams(t *testing.T) {
	teams := []Team{
		{Name: "ml", Members: []string{"arn:aws:iam::000000000000:role/bob"}},
		{Name: "data", Members: []string{"arn:aws:iam::000000000000:role/ali*"}},
	}
	if got := TeamsOf(alice.Principal, teams); len(got) != 1 || got[0] != "data" {
		t.Fatalf("TeamsOf(alice) = %v", got)
	}
	for _, tc := range []struct {
		t    Team
		want string
	}{
		{Team{Name: "", Members: []string{"arn:aws:iam::000000000000:role/x"}}, "name: team name"},
		{Team{Name: "ok"}, "members: must name"},
		{Team{Name: "ok", Members: []string{"*"}}, "members[0]"},
		{Team{Name: "ok", Members: []string{"team:other"}}, "teams do not contain teams"},
	} {
		if got := strings.Join(tc.t.Validate(), "; "); !strings.Contains(got, tc.want) {
			t.Errorf("Validate(%+v) = %q, want %q", tc.t, got, tc.want)
		}
	}
}

func TestCovers(t *testing.T) {
	callee := Grant{Owners: []string{"team:data"}, Operators: []string{"team:data"}, Readers: []string{"*"}}
	if m := Covers(callee, []string{"team:ml"}); len(m) != 1 || m[0] != "team:ml" {
		t.Fatalf("Covers = %v, want [team:ml]", m)
	}
	callee.Operators = append(callee.Operators, "team:ml")
	if m := Covers(callee, []string{"team:ml"}); len(m) != 0 {
		t.Fatalf("Covers after grant = %v", m)
	}
}
