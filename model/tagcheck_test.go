package model

import (
	"strings"
	"testing"
)

func TestTagNameProblems(t *testing.T) {
	tests := []struct {
		name, says string // says "" for a valid name
	}{
		{"nightly", ""},
		{"team a/b:c (x)", ""},
		{strings.Repeat("n", TagNameLengthLimit), ""},
		{strings.Repeat("é", TagNameLengthLimit), "contains 'é'"},
		{strings.Repeat("n", TagNameLengthLimit+1), "tag name is 257 characters long; the limit is 256"},
		{"", "tag name must not be blank"},
		{"  ", "tag name must not be blank"},
		{"a#b", `contains '#'`},
		{"maestro_x", `must not start with "maestro_"`},
		{"MAESTRO_x", `must not start with "maestro_"`},
		{"x_maestro", `or end with "_maestro"`},
	}
	for _, tc := range tests {
		got := strings.Join(TagNameProblems(tc.name), "; ")
		if tc.says == "" && got != "" || tc.says != "" && !strings.Contains(got, tc.says) {
			t.Errorf("TagNameProblems(%.20q) = %q, want %q", tc.name, got, tc.says)
		}
	}
}

func TestTagNamespaceProblem(t *testing.T) {
	for ns, ok := range map[string]bool{"": true, NamespacePlatform: true, NamespaceRuntime: true, "runtime": false, "OTHER": false} {
		if got := TagNamespaceProblem(ns); (got == "") != ok {
			t.Errorf("TagNamespaceProblem(%q) = %q", ns, got)
		}
	}
	if got := (TagList{{Name: "a"}, {Name: "b"}}).Names(); strings.Join(got, ",") != "a,b" {
		t.Errorf("Names %v", got)
	}
}
