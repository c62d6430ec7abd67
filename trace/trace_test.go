package trace

import (
	"context"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	const id = "1-5759e988-bd862e3fe1be46a994272793"
	for _, tc := range []struct {
		in   string
		want ID
		ok   bool
	}{
		{"Root=" + id + ";Parent=53995c3f42cd8ad8;Sampled=1", id, true},
		{"Sampled=0; Root=" + id, id, true},
		{id, id, true},
		{"Root=1-5759e988-BD862E3FE1BE46A994272793", "1-5759e988-BD862E3FE1BE46A994272793", false},
		{"Root=1-5759e98-bd862e3fe1be46a994272793", "1-5759e98-bd862e3fe1be46a994272793", false},
		{"Parent=53995c3f42cd8ad8", "", false},
		{"", "", false},
		{"Root=1-5759e988-bd862e3fe1be46a99427279\n", "1-5759e988-bd862e3fe1be46a99427279\n", false},
	} {
		got, ok := Parse(tc.in)
		if ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("Parse(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestNewAndContext(t *testing.T) {
	now := time.Unix(0x5759e988, 0)
	a, b := New(now), New(now)
	if !a.Valid() || a[:11] != "1-5759e988-" || a == b {
		t.Fatalf("New: %q %q", a, b)
	}
	if got, ok := Parse(a.Header()); !ok || got != a {
		t.Errorf("Parse(Header()) = %q, %v", got, ok)
	}
	if From(context.Background()) != "" || From(With(context.Background(), a)) != a {
		t.Error("With/From")
	}
}
