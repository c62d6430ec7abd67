// Package principal turns the caller identity API Gateway authenticated into
// one normalised IAM principal ARN, and matches principals against ARN
// patterns such as arn:aws:iam::123456789012:role/data-*.
//
// Normalisation rules (Normalize):
//
//   - an assumed-role session, arn:PART:sts::ACCOUNT:assumed-role/ROLE/SESSION
//     (what a caller using a role's temporary credentials — including web
//     identity and SAML federation through AssumeRoleWithWebIdentity or
//     AssumeRoleWithSAML — is known as), becomes the role,
//     arn:PART:iam::ACCOUNT:role/ROLE. The session name is dropped: every
//     session of a role is the same principal. A role's path is not part of
//     an assumed-role ARN, so it cannot be restored; role ARNs given with a
//     path (arn:aws:iam::123:role/teams/data) are normalised to drop it too,
//     so that the same role always has the same principal, and patterns
//     naming roles are written without paths.
//   - an IAM user, arn:PART:iam::ACCOUNT:user/PATH/NAME, is kept as it is
//     (a user's ARN carries its path wherever it appears).
//   - an account's root, arn:PART:iam::ACCOUNT:root, is kept.
//   - a federated user (GetFederationToken),
//     arn:PART:sts::ACCOUNT:federated-user/NAME, is kept: it is a principal
//     of its own, not a role.
//   - anything else (not an ARN, another service, an IAM group or policy, an
//     account number alone) is refused with an error naming why.
package principal

import (
	"errors"
	"fmt"
	"path"
	"strings"
)

// ARN is an Amazon Resource Name split into its fields.
type ARN struct {
	Partition, Service, Region, Account, Resource string
}

// String renders a as arn:PARTITION:SERVICE:REGION:ACCOUNT:RESOURCE.
func (a ARN) String() string {
	return "arn:" + a.Partition + ":" + a.Service + ":" + a.Region + ":" + a.Account + ":" + a.Resource
}

// ParseARN splits s into its fields, checking only the general ARN shape.
func ParseARN(s string) (ARN, error) {
	parts := strings.SplitN(s, ":", 6)
	if len(parts) != 6 || parts[0] != "arn" {
		return ARN{}, fmt.Errorf("%q is not an ARN (want arn:PARTITION:SERVICE:REGION:ACCOUNT:RESOURCE)", s)
	}
	a := ARN{Partition: parts[1], Service: parts[2], Region: parts[3], Account: parts[4], Resource: parts[5]}
	if a.Partition == "" || a.Service == "" || a.Resource == "" {
		return ARN{}, fmt.Errorf("%q is not an ARN: partition, service and resource must not be empty", s)
	}
	return a, nil
}

// Normalize returns the principal ARN s stands for, by the package's rules.
func Normalize(s string) (string, error) {
	a, err := ParseARN(s)
	if err != nil {
		return "", err
	}
	if !validAccount(a.Account) {
		return "", fmt.Errorf("principal %q: account %q is not 12 digits", s, a.Account)
	}
	if !validPartition(a.Partition) {
		return "", fmt.Errorf("principal %q: partition %q is not an AWS partition (aws, aws-cn, aws-us-gov, …)", s, a.Partition)
	}
	if a.Region != "" {
		return "", fmt.Errorf("principal %q: an IAM or STS principal ARN has no region", s)
	}
	kind, rest, _ := strings.Cut(a.Resource, "/")
	switch {
	case a.Service == "iam" && a.Resource == "root":
		return a.String(), nil
	case a.Service == "iam" && kind == "user":
		if err := checkNames(s, rest, 1, -1); err != nil {
			return "", err
		}
		return a.String(), nil
	case a.Service == "iam" && kind == "role":
		if err := checkNames(s, rest, 1, -1); err != nil {
			return "", err
		}
		return role(a, path.Base(rest)), nil
	case a.Service == "sts" && kind == "assumed-role":
		if err := checkNames(s, rest, 2, 2); err != nil {
			return "", err
		}
		name, _, _ := strings.Cut(rest, "/")
		return role(a, name), nil
	case a.Service == "sts" && kind == "federated-user":
		if err := checkNames(s, rest, 1, 1); err != nil {
			return "", err
		}
		return a.String(), nil
	}
	return "", fmt.Errorf("principal %q: not an IAM user, role, assumed-role session, federated user or account root", s)
}

// validPartition reports whether p is spelled as AWS's partitions are:
// "aws", or "aws-" and lower-case words joined by hyphens (aws-cn,
// aws-us-gov, aws-iso-b). Wildcards are not.
func validPartition(p string) bool {
	if p == "aws" {
		return true
	}
	rest, ok := strings.CutPrefix(p, "aws-")
	if !ok {
		return false
	}
	for _, w := range strings.Split(rest, "-") {
		if w == "" || strings.Trim(w, "abcdefghijklmnopqrstuvwxyz") != "" {
			return false
		}
	}
	return true
}

// role is the IAM role ARN of name in a's partition and account.
func role(a ARN, name string) string {
	return ARN{Partition: a.Partition, Service: "iam", Account: a.Account, Resource: "role/" + name}.String()
}

// checkNames checks that rest is between min and max (-1: any) non-empty
// slash-separated names.
func checkNames(s, rest string, min, max int) error {
	names := strings.Split(rest, "/")
	if len(names) < min || (max >= 0 && len(names) > max) {
		return fmt.Errorf("principal %q: resource has %d name(s) after its kind", s, len(names))
	}
	for _, n := range names {
		if n == "" || strings.ContainsAny(n, "*? ") {
			return fmt.Errorf("principal %q: empty name or wildcard in its resource", s)
		}
	}
	return nil
}

func validAccount(s string) bool {
	if len(s) != 12 {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// ValidatePattern checks that pattern can name principals: an ARN whose
// partition, service and account are literal (no wildcard) and whose
// resource may use * (any run of characters, slashes included) and ? (any
// one character), as IAM policies' ARN patterns do.
func ValidatePattern(pattern string) error {
	a, err := ParseARN(pattern)
	if err != nil {
		return err
	}
	if strings.ContainsAny(a.Partition+a.Service+a.Region+a.Account, "*?") {
		return fmt.Errorf("pattern %q: wildcards are allowed in the resource only", pattern)
	}
	if a.Service != "iam" && a.Service != "sts" {
		return fmt.Errorf("pattern %q: service %q names no principal (want iam or sts)", pattern, a.Service)
	}
	if !validAccount(a.Account) {
		return fmt.Errorf("pattern %q: account %q is not 12 digits", pattern, a.Account)
	}
	return nil
}

// ErrBadPattern is returned by Match for a pattern ValidatePattern refuses.
var ErrBadPattern = errors.New("bad principal pattern")

// Match reports whether the normalised principal p matches pattern: the
// fields before the resource must be equal, and the resource must match
// the pattern's, where * matches any run of characters and ? any one. An
// invalid pattern matches nothing and returns an error wrapping
// ErrBadPattern. Callers normalise p first (Normalize): a session ARN
// matches only patterns written for sessions.
func Match(pattern, p string) (bool, error) {
	if err := ValidatePattern(pattern); err != nil {
		return false, fmt.Errorf("%w: %w", ErrBadPattern, err)
	}
	pa, _ := ParseARN(pattern)
	a, err := ParseARN(p)
	if err != nil {
		return false, nil
	}
	if pa.Partition != a.Partition || pa.Service != a.Service || pa.Region != a.Region || pa.Account != a.Account {
		return false, nil
	}
	return Wildcard(pa.Resource, a.Resource), nil
}

// Wildcard reports whether s matches pattern, where * matches any run of
// bytes and ? any one byte, without backtracking blow-up: the last * seen
// is the only one retried, so it takes at most len(pattern)*len(s) steps.
func Wildcard(pattern, s string) bool {
	pi, si := 0, 0
	star, mark := -1, 0
	for si < len(s) {
		switch {
		case pi < len(pattern) && (pattern[pi] == '?' || pattern[pi] == s[si]):
			pi++
			si++
		case pi < len(pattern) && pattern[pi] == '*':
			star, mark = pi, si
			pi++
		case star >= 0:
			pi = star + 1
			mark++
			si = mark
		default:
			return false
		}
	}
	for pi < len(pattern) && pattern[pi] == '*' {
		pi++
	}
	return pi == len(pattern)
}
