package principal

import (
	"errors"
	"strings"
	"testing"
)

func TestNormalize(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{in: "arn:aws:sts::123456789012:assumed-role/data-etl/session", want: "arn:aws:iam::123456789012:role/data-etl"},
		{in: "arn:aws:sts::123456789012:assumed-role/data-etl/alice@example.com", want: "arn:aws:iam::123456789012:role/data-etl"},
		{in: "arn:aws-cn:sts::123456789012:assumed-role/r/s", want: "arn:aws-cn:iam::123456789012:role/r"},
		{in: "arn:aws:iam::123456789012:role/data-etl", want: "arn:aws:iam::123456789012:role/data-etl"},
		{in: "arn:aws:iam::123456789012:role/teams/data/etl", want: "arn:aws:iam::123456789012:role/etl"},
		{in: "arn:aws:iam::123456789012:user/alice", want: "arn:aws:iam::123456789012:user/alice"},
		{in: "arn:aws:iam::123456789012:user/eng/alice", want: "arn:aws:iam::123456789012:user/eng/alice"},
		{in: "arn:aws:iam::123456789012:root", want: "arn:aws:iam::123456789012:root"},
		{in: "arn:aws:sts::123456789012:federated-user/bob", want: "arn:aws:sts::123456789012:federated-user/bob"},
		{in: "AIDAEXAMPLE", err: "not an ARN"},
		{in: "", err: "not an ARN"},
		{in: "arn:aws:iam::12345:role/x", err: "not 12 digits"},
		{in: "arn:aws:iam:us-east-1:123456789012:role/x", err: "no region"},
		{in: "arn:aws:sts::123456789012:assumed-role/only-role", err: "name(s)"},
		{in: "arn:aws:sts::123456789012:assumed-role/r/s/extra", err: "name(s)"},
		{in: "arn:aws:iam::123456789012:role/", err: "empty name"},
		{in: "arn:aws:iam::123456789012:role/data-*", err: "wildcard"},
		{in: "arn:aws:iam::123456789012:group/admins", err: "not an IAM user, role"},
		{in: "arn:aws:s3:::bucket", err: "not 12 digits"},
		{in: "arn:aws:lambda::123456789012:function/f", err: "not an IAM user, role"},
		{in: "arn:*:iam::000000000000:user/0", err: "not an AWS partition"}, // found by FuzzNormalize
		{in: "arn:aws-:iam::123456789012:user/a", err: "not an AWS partition"},
		{in: "arn:AWS:iam::123456789012:user/a", err: "not an AWS partition"},
		{in: "arn:aws-us-gov:iam::123456789012:user/a", want: "arn:aws-us-gov:iam::123456789012:user/a"},
	} {
		got, err := Normalize(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Normalize(%q) = %q, %v; want an error containing %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("Normalize(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestMatch(t *testing.T) {
	for _, tc := range []struct {
		pattern, p string
		want       bool
		bad        bool
	}{
		{"arn:aws:iam::123456789012:role/data-*", "arn:aws:iam::123456789012:role/data-etl", true, false},
		{"arn:aws:iam::123456789012:role/data-*", "arn:aws:iam::123456789012:role/ml-etl", false, false},
		{"arn:aws:iam::123456789012:role/data-*", "arn:aws:iam::999999999999:role/data-etl", false, false},
		{"arn:aws:iam::123456789012:role/data-*", "arn:aws:iam::123456789012:user/data-etl", false, false},
		{"arn:aws:iam::123456789012:role/data-*", "arn:aws-cn:iam::123456789012:role/data-etl", false, false},
		{"arn:aws:iam::123456789012:role/data-???", "arn:aws:iam::123456789012:role/data-etl", true, false},
		{"arn:aws:iam::123456789012:role/data-???", "arn:aws:iam::123456789012:role/data-etl2", false, false},
		{"arn:aws:iam::123456789012:user/*", "arn:aws:iam::123456789012:user/eng/alice", true, false},
		{"arn:aws:iam::123456789012:*", "arn:aws:iam::123456789012:root", true, false},
		{"arn:aws:iam::123456789012:role/exact", "arn:aws:iam::123456789012:role/exact", true, false},
		{"arn:aws:iam::123456789012:role/exact", "arn:aws:iam::123456789012:role/exactly", false, false},
		{"arn:aws:iam::123456789012:role/*a*a*a*b", "arn:aws:iam::123456789012:role/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false, false},
		{"arn:aws:iam::123456789012:role/x", "not-an-arn", false, false},
		{"arn:aws:iam::*:role/x", "arn:aws:iam::123456789012:role/x", false, true},
		{"arn:aws:s3::123456789012:role/x", "arn:aws:iam::123456789012:role/x", false, true},
		{"role/x", "arn:aws:iam::123456789012:role/x", false, true},
	} {
		got, err := Match(tc.pattern, tc.p)
		if tc.bad != errors.Is(err, ErrBadPattern) || got != tc.want {
			t.Errorf("Match(%q, %q) = %v, %v; want %v (bad pattern %v)", tc.pattern, tc.p, got, err, tc.want, tc.bad)
		}
	}
}

// FuzzNormalize: normalising is idempotent, a normalised principal is a
// valid pattern matching itself, and a refused input yields no principal.
func FuzzNormalize(f *testing.F) {
	for _, s := range []string{
		"arn:aws:sts::123456789012:assumed-role/data-etl/session",
		"arn:aws:iam::123456789012:role/a/b/c",
		"arn:aws:iam::123456789012:user/eng/alice",
		"arn:aws:iam::123456789012:root",
		"arn:aws:sts::123456789012:federated-user/bob",
		"arn:aws:iam::123456789012:role/data-*", "arn::::", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := Normalize(s)
		if err != nil {
			if n != "" {
				t.Fatalf("Normalize(%q) refused with %v but returned %q", s, err, n)
			}
			return
		}
		again, err := Normalize(n)
		if err != nil || again != n {
			t.Fatalf("Normalize(Normalize(%q)) = %q, %v; want %q", s, again, err, n)
		}
		if ok, err := Match(n, n); err != nil || !ok {
			t.Fatalf("Match(%q, itself) = %v, %v", n, ok, err)
		}
	})
}
