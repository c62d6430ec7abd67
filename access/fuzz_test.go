package access

import (
	"encoding/json"
	"testing"
)

// FuzzGrant: any body a caller sends as a grant either fails Validate or
// is a grant whose every entry is well formed; deciding on it never
// panics, gives the principal no role it does not match, and an unknown
// action is never allowed.
func FuzzGrant(f *testing.F) {
	f.Add(`{"owners":["team:data"],"operators":["team:ml","arn:aws:iam::123456789012:role/x-*"],"readers":["*"]}`, "arn:aws:iam::123456789012:role/x-1", "ml")
	f.Add(`{"owners":["*"]}`, "", "")
	f.Add(`{"owners":["arn:aws:iam::*:role/a"]}`, "arn:aws:iam::000000000000:role/a", "data")
	f.Add(`{"owners":["team:"],"readers":["team:a","team:a"]}`, "arn:aws:iam::000000000000:user/u", "a")
	f.Fuzz(func(t *testing.T, body, p, team string) {
		var g Grant
		if json.Unmarshal([]byte(body), &g) != nil {
			return
		}
		if len(g.Validate()) > 0 {
			return
		}
		for _, l := range [][]string{g.Owners, g.Operators, g.Readers} {
			for _, e := range l {
				if err := CheckEntry(e, true); err != nil {
					t.Fatalf("valid grant %+v holds a bad entry %q: %v", g, e, err)
				}
			}
		}
		c := Caller{Principal: p, Teams: []string{team}}
		role := g.RoleOf(c)
		if p == "" && role != None {
			t.Fatalf("no principal holds %s", role)
		}
		if Decide(c, g, Action("no such action")).Allowed {
			t.Fatal("an unknown action was allowed")
		}
		for _, a := range WorkflowActions() {
			d := Decide(c, g, a)
			need, _ := Needs(a)
			if d.Allowed != (role >= need) && !(a == SetGrant && c.Admin) {
				t.Fatalf("Decide(%s) = %+v with role %s", a, d, role)
			}
		}
	})
}
