// Package images reads container image references and the image allow-list
// of Ecs and Kubernetes steps. The worker checks a step's image against the
// list before it registers or runs anything, the API checks the literal
// images of a pushed definition, and the CDK app derives the ECS execution
// role's ECR permissions from the list. It imports nothing from AWS.
//
// # References
//
// An image reference is read as Docker and ECS read it:
//
//	[registry[:port]/]path[:tag][@digest]
//
// The first component is the registry when it contains '.' or ':', is
// "localhost" or holds an upper-case letter; otherwise the image is on
// Docker Hub ("docker.io"), where a one-component path is in "library/"
// (python is docker.io/library/python). The registry is compared in lower
// case ("index.docker.io" is "docker.io"). The path's components are lower
// case letters and digits joined by '.', '_', "__" or dashes; a tag is up to
// 128 of letters, digits, '_', '.' and '-' (not first); a digest is
// sha256:<64 hex digits> or sha512:<128 hex digits>. Anything else is not a
// reference, and no list admits it.
//
// # Allow-list entries
//
// Every entry names its registry, so that no entry reads two ways:
//
//	registry/                    every repository of the registry
//	registry/path/               the repositories under path/ (not path itself)
//	registry/path                repository path and the repositories under path/
//	registry/path@sha256:<hex>   repository path, only with that digest
//
// A path matches whole components only: ".../etl" admits etl and etl/job,
// never etl-evil. A digest-pinned entry admits the references that carry
// that digest (repo@sha256:..., repo:tag@sha256:...), not a tag alone.
// Entries without a registry host (python, etl/job), with a tag (tags move),
// with a scheme, upper-case path letters, empty or malformed components, or
// a digest on a prefix are refused, each with the rule it breaks. Docker Hub
// entries are written as images are normalized: docker.io/library/python,
// docker.io/bitnami/.
package images

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// DockerHub is the registry of references that name none.
const DockerHub = "docker.io"

// maxNameLength is the longest registry/path Docker accepts.
const maxNameLength = 255

// Patterns of the reference grammar (distribution/reference's).
var (
	pathComponent = regexp.MustCompile(`^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$`)
	hostComponent = regexp.MustCompile(`^(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])$`)
	tagPattern    = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)
	digestPattern = regexp.MustCompile(`^(?:sha256:[a-f0-9]{64}|sha512:[a-f0-9]{128})$`)
	portPattern   = regexp.MustCompile(`^[0-9]{1,5}$`)
	// ECR private registries: <account>.dkr.ecr[-fips].<region>.amazonaws.com[.cn]
	// and the dual-stack <account>.dkr-ecr[-fips].<region>.on.aws.
	ecrHost = regexp.MustCompile(`^([0-9]{12})\.(?:dkr\.ecr(?:-fips)?\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?|dkr-ecr(?:-fips)?\.([a-z0-9-]+)\.on\.aws)$`)
)

// Reference is a parsed image reference, normalized as Docker reads it.
type Reference struct {
	// Registry is the registry host in lower case, with its port if any
	// ("docker.io", "public.ecr.aws", "localhost:5000").
	Registry string
	// Repository is the repository path ("library/python", "etl/loader").
	Repository string
	// Tag and Digest ("sha256:<hex>") are empty when the reference has none.
	Tag, Digest string
}

// String returns the normalized reference:
// registry/repository[:tag][@digest].
func (r Reference) String() string {
	s := r.Registry + "/" + r.Repository
	if r.Tag != "" {
		s += ":" + r.Tag
	}
	if r.Digest != "" {
		s += "@" + r.Digest
	}
	return s
}

// ParseReference reads an image reference (see the package documentation).
func ParseReference(s string) (Reference, error) {
	if s == "" {
		return Reference{}, errors.New("empty image reference")
	}
	if i := strings.IndexFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }); i >= 0 {
		return Reference{}, errors.New("an image reference has no spaces or control characters")
	}
	var ref Reference
	name := s
	if n, digest, ok := strings.Cut(s, "@"); ok {
		if !digestPattern.MatchString(digest) {
			return Reference{}, fmt.Errorf("digest %q: want sha256:<64 hex digits> or sha512:<128 hex digits>", digest)
		}
		name, ref.Digest = n, digest
	}
	if i := strings.LastIndexByte(name, ':'); i > strings.LastIndexByte(name, '/') {
		if !tagPattern.MatchString(name[i+1:]) {
			return Reference{}, fmt.Errorf("tag %q: want up to 128 letters, digits, '_', '.' or '-', not starting with '.' or '-'", name[i+1:])
		}
		name, ref.Tag = name[:i], name[i+1:]
	}
	if len(name) > maxNameLength {
		return Reference{}, fmt.Errorf("name is %d characters, more than %d", len(name), maxNameLength)
	}
	registry, path := DockerHub, name
	if first, rest, ok := strings.Cut(name, "/"); ok && isRegistry(first) {
		registry, path = first, rest
	}
	var err error
	if ref.Registry, err = normalizeRegistry(registry); err != nil {
		return Reference{}, err
	}
	if err := checkPath(path); err != nil {
		return Reference{}, err
	}
	if ref.Registry == DockerHub && !strings.Contains(path, "/") {
		path = "library/" + path
	}
	ref.Repository = path
	return ref, nil
}

// isRegistry says whether the first component of a name is a registry
// host rather than a Docker Hub path component (Docker's rule).
func isRegistry(first string) bool {
	return strings.ContainsAny(first, ".:") || first == "localhost" || strings.ToLower(first) != first
}

// normalizeRegistry checks host[:port] and returns it in lower case, with
// Docker Hub's legacy host as "docker.io".
func normalizeRegistry(r string) (string, error) {
	host, port, hasPort := strings.Cut(r, ":")
	if hasPort && !portPattern.MatchString(port) {
		return "", fmt.Errorf("registry %q: port %q is not a number", r, port)
	}
	for _, c := range strings.Split(host, ".") {
		if !hostComponent.MatchString(c) {
			return "", fmt.Errorf("registry %q: %q is not a host name label (letters, digits and inner '-')", r, c)
		}
	}
	r = strings.ToLower(r)
	if r == "index.docker.io" {
		r = DockerHub
	}
	return r, nil
}

// checkPath checks a repository path: '/'-separated components of lower
// case letters and digits with inner separators.
func checkPath(path string) error {
	if path == "" {
		return errors.New("the repository path is empty")
	}
	for _, c := range strings.Split(path, "/") {
		if !pathComponent.MatchString(c) {
			return fmt.Errorf("path component %q: want lower-case letters and digits joined by '.', '_', '__' or '-'", c)
		}
	}
	return nil
}

// entry is one parsed allow-list entry.
type entry struct {
	raw      string
	registry string
	// path is the repository path without a trailing '/'; empty admits
	// the whole registry.
	path string
	// under admits only the repositories under path/, not path itself.
	under bool
	// digest pins the one digest admitted (path is then one repository).
	digest string
}

// admits reports whether ref is on the entry.
func (e entry) admits(ref Reference) bool {
	switch {
	case ref.Registry != e.registry:
		return false
	case e.digest != "":
		return ref.Repository == e.path && ref.Digest == e.digest
	case e.path == "":
		return true
	case strings.HasPrefix(ref.Repository, e.path+"/"):
		return true
	}
	return !e.under && ref.Repository == e.path
}

// parseEntry reads one allow-list entry (see the package documentation).
func parseEntry(raw string) (entry, error) {
	s := raw
	if strings.IndexFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0 {
		return entry{}, errors.New("an entry has no spaces or control characters")
	}
	if strings.Contains(s, "://") {
		return entry{}, errors.New("want registry/repository, without a scheme")
	}
	e := entry{raw: s}
	if n, digest, ok := strings.Cut(s, "@"); ok {
		if !digestPattern.MatchString(digest) {
			return entry{}, fmt.Errorf("digest %q: want sha256:<64 hex digits> or sha512:<128 hex digits>", digest)
		}
		s, e.digest = n, digest
	}
	registry, path, ok := strings.Cut(s, "/")
	if !ok || !isRegistry(registry) {
		return entry{}, errors.New("name the registry: want registry/repository, e.g. 123456789012.dkr.ecr.us-east-1.amazonaws.com/etl/ " +
			"or, for Docker Hub, docker.io/library/python")
	}
	var err error
	if e.registry, err = normalizeRegistry(registry); err != nil {
		return entry{}, err
	}
	if strings.Contains(path, ":") {
		return entry{}, errors.New("a tag can be moved to another image: pin a digest (repository@sha256:...) or allow the repository")
	}
	if len(registry)+1+len(path) > maxNameLength {
		return entry{}, fmt.Errorf("name is more than %d characters", maxNameLength)
	}
	switch p, under := strings.CutSuffix(path, "/"); {
	case path == "": // "registry/": the whole registry
	case under:
		e.path, e.under = p, true
	default:
		e.path = path
	}
	if e.path != "" || e.under {
		if err := checkPath(e.path); err != nil {
			return entry{}, err
		}
	}
	switch {
	case e.digest != "" && (e.path == "" || e.under):
		return entry{}, errors.New("a digest pins one repository: name it without a trailing '/'")
	case e.registry == DockerHub && e.path != "" && !e.under && !strings.Contains(e.path, "/"):
		return entry{}, fmt.Errorf("one-component Docker Hub images are in library/: write %s/library/%s", DockerHub, e.path)
	}
	return e, nil
}

// AllowList is a parsed image allow-list; it is immutable. A nil
// *AllowList admits no image.
type AllowList struct {
	entries []entry
	any     bool
}

// ParseAllowList reads an allow-list's entries (see the package
// documentation); blank entries are skipped. It reports every refused
// entry, each named.
func ParseAllowList(entries []string) (*AllowList, error) {
	a := &AllowList{}
	var errs []error
	for _, raw := range entries {
		raw = strings.TrimSpace(raw)
		if raw == "" {
			continue
		}
		e, err := parseEntry(raw)
		if err != nil {
			errs = append(errs, fmt.Errorf("image allow-list entry %q: %w", raw, err))
			continue
		}
		a.entries = append(a.entries, e)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return a, nil
}

// AnyImage returns the list that admits every valid reference: the local
// stack's default, where images run nowhere.
func AnyImage() *AllowList { return &AllowList{any: true} }

// ErrNotAllowed is the error Check returns (wrapped) for a valid reference
// that no entry admits.
var ErrNotAllowed = errors.New("not on the image allow-list")

// Check reports why image may not run: it is not a valid reference, or no
// entry admits it (an error wrapping ErrNotAllowed). nil means it may.
func (a *AllowList) Check(image string) error {
	ref, err := ParseReference(image)
	if err != nil {
		return fmt.Errorf("image %q is not a valid image reference: %w", image, err)
	}
	if a != nil && a.any {
		return nil
	}
	if a != nil {
		for _, e := range a.entries {
			if e.admits(ref) {
				return nil
			}
		}
	}
	return fmt.Errorf("image %q (%s) is %w (%s)", image, ref, ErrNotAllowed, a)
}

// String describes the list for messages.
func (a *AllowList) String() string {
	switch {
	case a != nil && a.any:
		return "any image"
	case a == nil || len(a.entries) == 0:
		return "empty: no image may run"
	}
	raw := make([]string, len(a.entries))
	for i, e := range a.entries {
		raw[i] = e.raw
	}
	return strings.Join(raw, ", ")
}

// ECRRepositories are the ECR repositories of one registry that a list
// admits, as the resource names of their ARNs
// (arn:<partition>:ecr:<region>:<account>:repository/<name>).
type ECRRepositories struct {
	Account, Region string
	// Names are repository names and name patterns: "etl/*" for a
	// prefix, "*" for a whole registry.
	Names []string
}

// ECR returns the ECR repositories the list admits, registry by registry
// in the order of their first entry; entries of other registries (Docker
// Hub, ECR Public, ...) need no ECR permission and are left out. A list
// that admits any image has no bounded set and returns nil.
func (a *AllowList) ECR() []ECRRepositories {
	if a == nil || a.any {
		return nil
	}
	var out []ECRRepositories
	index := map[string]int{}
	for _, e := range a.entries {
		m := ecrHost.FindStringSubmatch(e.registry)
		if m == nil {
			continue
		}
		region := m[2] + m[3]
		var names []string
		switch {
		case e.path == "":
			names = []string{"*"}
		case e.under:
			names = []string{e.path + "/*"}
		case e.digest != "":
			names = []string{e.path}
		default:
			names = []string{e.path, e.path + "/*"}
		}
		k := m[1] + "/" + region
		i, ok := index[k]
		if !ok {
			i = len(out)
			index[k] = i
			out = append(out, ECRRepositories{Account: m[1], Region: region})
		}
		for _, n := range names {
			if !slices.Contains(out[i].Names, n) {
				out[i].Names = append(out[i].Names, n)
			}
		}
	}
	return out
}
