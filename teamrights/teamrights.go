// Package teamrights says with whose AWS rights a workflow's container and
// function steps run: each team may map to an ECS task role, a Batch job
// role, and allow-lists of images and Lambda functions (the stack's CDK
// context "teams", the functions' MAESTRO_TEAM_RIGHTS). A workflow's Ecs,
// Kubernetes, Notebook, Batch and Lambda steps run with its owners'
// mapping (Config.For); a pushed definition whose steps ask for more is
// refused (Config.CheckWorkflow), and the worker checks again at launch,
// where expressions have been evaluated. It is pure: the API, the worker
// and the CDK app read the configuration and ask here.
//
// When the stack configures no team (an empty Config), nothing changes:
// steps run with the stack's roles and allow-lists. Once one team is
// configured, a workflow whose owners name no configured team may not run
// those steps at all: pushing one is refused, and launching one fails.
//
// # Images
//
// A team's images are entries of the image allow-list syntax of package
// images (the stack's ecsImages setting uses the same): registry/ for a
// whole registry, registry/path/ for the repositories under path,
// registry/path for a repository and those under it, registry/path@sha256:...
// for one digest. A step's image must be admitted by both the stack's list
// and its team's.
//
// # Lambda functions
//
// A team's lambdas are patterns where * matches any run of characters:
//
//   - a name pattern (etl-*, no "arn:") matches the function's name: the
//     step's function_name when it is a name, or the name in it when it
//     is an ARN (arn:...:function:NAME[:QUALIFIER]) — of any account and
//     region, as the stack's lambdaFunctions setting reads a bare name;
//   - an ARN pattern (arn:aws:lambda:us-east-1:123456789012:function:etl-*)
//     matches a function_name that is an ARN, its qualifier left out;
//     a function_name given as a bare name matches no ARN pattern.
//
// A version or alias (the step's qualifier, or an ARN's) is never part of
// the match: a team allowed a function may invoke any of its versions.
// A step's function must be on the stack's lambdaFunctions list too.
package teamrights

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/maestro-serverless/maestro/access"
	"github.com/maestro-serverless/maestro/images"
	"github.com/maestro-serverless/maestro/principal"
)

// Limits of a configuration, enforced by Parse.
const (
	// MaxTeams is the most teams a configuration maps.
	MaxTeams = access.MaxTeams
	// MaxPatterns is the most entries of one team's images or lambdas.
	MaxPatterns = 100
	// MaxPatternLen bounds one entry of images or lambdas.
	MaxPatternLen = 512
	// MaxConfigBytes bounds the configuration's JSON: it travels in a
	// Lambda environment variable, and Lambda allows 4 KB for all of a
	// function's variables.
	MaxConfigBytes = 4096
)

// Rights are what one team's steps may use.
type Rights struct {
	// TaskRoleARN is the IAM role of the team's Ecs, Kubernetes and
	// Notebook tasks (and of Kubernetes steps' GPU jobs); empty: the
	// team may not run them.
	TaskRoleARN string `json:"task_role_arn,omitempty"`
	// JobRoleARN is the job role the job definitions of the team's Batch
	// steps must carry; empty: the team may not run Batch steps.
	JobRoleARN string `json:"job_role_arn,omitempty"`
	// Images are the images the team's tasks may run (see the package
	// documentation); empty: none.
	Images []string `json:"images,omitempty"`
	// Lambdas are the Lambda functions the team's Lambda steps may invoke
	// (see the package documentation); empty: none.
	Lambdas []string `json:"lambdas,omitempty"`
}

// Config maps team names to their rights.
type Config map[string]Rights

// Parse reads a configuration from JSON ({"team": {"task_role_arn": ...,
// "job_role_arn": ..., "images": [...], "lambdas": [...]}}); empty text is
// the empty configuration. Every problem is reported, each naming the team
// and the field.
func Parse(text string) (Config, error) {
	if strings.TrimSpace(text) == "" {
		return Config{}, nil
	}
	if len(text) > MaxConfigBytes {
		return nil, fmt.Errorf("team rights: %d bytes of JSON, more than %d (a Lambda function's environment holds 4 KB)", len(text), MaxConfigBytes)
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.DisallowUnknownFields()
	var c Config
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("team rights: want a JSON object of team name to {task_role_arn, job_role_arn, images, lambdas}: %w", err)
	}
	if dec.More() {
		return nil, errors.New("team rights: text after the JSON object")
	}
	if c == nil {
		c = Config{}
	}
	if problems := c.Validate(); len(problems) > 0 {
		return nil, fmt.Errorf("team rights: %s", strings.Join(problems, "; "))
	}
	return c, nil
}

// Validate returns what is wrong with c, each problem naming the team and
// the field ("teams.data.task_role_arn: ..."); none when it is valid.
func (c Config) Validate() []string {
	var out []string
	if len(c) > MaxTeams {
		out = append(out, fmt.Sprintf("at most %d teams, got %d", MaxTeams, len(c)))
	}
	for _, team := range c.Teams() {
		r := c[team]
		at := func(field string) string { return "teams." + team + "." + field }
		if err := access.CheckTeamName(team); err != nil {
			out = append(out, fmt.Sprintf("teams.%q: %v", team, err))
			continue
		}
		for _, f := range []struct{ field, arn string }{{"task_role_arn", r.TaskRoleARN}, {"job_role_arn", r.JobRoleARN}} {
			if f.arn != "" {
				if err := CheckRoleARN(f.arn); err != nil {
					out = append(out, at(f.field)+": "+err.Error())
				}
			}
		}
		out = append(out, checkList(at("images"), r.Images, checkImage)...)
		out = append(out, checkList(at("lambdas"), r.Lambdas, CheckLambdaPattern)...)
	}
	return out
}

// Teams returns c's team names, sorted.
func (c Config) Teams() []string {
	out := make([]string, 0, len(c))
	for t := range c {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

// checkList checks the entries of one list with check.
func checkList(field string, entries []string, check func(string) error) []string {
	var out []string
	if len(entries) > MaxPatterns {
		return append(out, fmt.Sprintf("%s: at most %d entries, got %d", field, MaxPatterns, len(entries)))
	}
	for i, e := range entries {
		at := fmt.Sprintf("%s[%d]", field, i)
		switch {
		case strings.TrimSpace(e) == "":
			out = append(out, at+": empty")
		case len(e) > MaxPatternLen:
			out = append(out, fmt.Sprintf("%s: %d characters, more than %d", at, len(e), MaxPatternLen))
		case slices.Contains(entries[:i], e):
			out = append(out, fmt.Sprintf("%s: %q is listed twice", at, e))
		default:
			if err := check(e); err != nil {
				out = append(out, at+": "+err.Error())
			}
		}
	}
	return out
}

func checkImage(e string) error {
	if e != strings.TrimSpace(e) {
		return fmt.Errorf("%q has surrounding white space", e)
	}
	_, err := images.ParseAllowList([]string{e})
	return err
}

// CheckRoleARN checks that arn names an IAM role:
// arn:PARTITION:iam::ACCOUNT:role/[PATH/]NAME, with no wildcard.
func CheckRoleARN(arn string) error {
	parts := strings.SplitN(arn, ":", 6)
	if len(parts) != 6 || parts[0] != "arn" || !strings.HasPrefix(parts[1], "aws") || parts[2] != "iam" || parts[3] != "" {
		return fmt.Errorf("%q is not an IAM role ARN (want arn:aws:iam::ACCOUNT:role/NAME)", arn)
	}
	if !digits(parts[4], 12) {
		return fmt.Errorf("%q: account %q is not 12 digits", arn, parts[4])
	}
	name, ok := strings.CutPrefix(parts[5], "role/")
	if !ok || name == "" || strings.HasSuffix(name, "/") {
		return fmt.Errorf("%q is not an IAM role ARN: its resource must be role/NAME", arn)
	}
	for _, c := range name {
		if !isLetterOrDigit(c) && !strings.ContainsRune("+=,.@_-/", c) {
			return fmt.Errorf("%q: role name %q may hold letters, digits and +=,.@_-/ only (no wildcard)", arn, name)
		}
	}
	return nil
}

// CheckLambdaPattern checks a Lambda allow-list pattern: a function name
// pattern (letters, digits, '-', '_', '*'; at most 64 characters) or
// arn:PARTITION:lambda:REGION:ACCOUNT:function:NAME-PATTERN, with no
// qualifier and wildcards in the name only.
func CheckLambdaPattern(p string) error {
	name := p
	if strings.HasPrefix(p, "arn:") {
		parts := strings.Split(p, ":")
		if len(parts) != 7 || !strings.HasPrefix(parts[1], "aws") || parts[2] != "lambda" || parts[5] != "function" {
			return fmt.Errorf("%q is not a Lambda function ARN pattern (want arn:aws:lambda:REGION:ACCOUNT:function:NAME, no qualifier)", p)
		}
		if parts[3] == "" || strings.ContainsAny(parts[3], "*?") || !digits(parts[4], 12) {
			return fmt.Errorf("%q: the region and the 12-digit account are literal; wildcards go in the function name", p)
		}
		name = parts[6]
	}
	if name == "" || len(name) > 64 {
		return fmt.Errorf("%q: a function name (pattern) is 1 to 64 characters", p)
	}
	for _, c := range name {
		if !isLetterOrDigit(c) && c != '-' && c != '_' && c != '*' {
			return fmt.Errorf("%q: a function name pattern holds letters, digits, '-', '_' and '*' only", p)
		}
	}
	return nil
}

func isLetterOrDigit(c rune) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func digits(s string, n int) bool {
	return len(s) == n && strings.Trim(s, "0123456789") == ""
}

// For returns the owners' mapping of a workflow with grant g: the first,
// by name, of the teams g's owners name (team:<name>) that c maps. ok is
// false when none is.
func (c Config) For(g access.Grant) (team string, r Rights, ok bool) {
	var names []string
	for _, e := range g.Owners {
		if name, isTeam := strings.CutPrefix(e, access.TeamPrefix); isTeam {
			if _, mapped := c[name]; mapped {
				names = append(names, name)
			}
		}
	}
	if len(names) == 0 {
		return "", Rights{}, false
	}
	team = slices.Min(names)
	return team, c[team], true
}

// NoMapping is the rule a workflow breaks when its owners map to no team
// rights while the stack configures some.
func NoMapping(owners []string) string {
	return fmt.Sprintf("the workflow's owners (%s) name no team the stack maps to AWS rights (CDK context teams; %s): "+
		"its Ecs, Kubernetes, Notebook, Batch and Lambda steps cannot run; make a mapped team an owner",
		strings.Join(owners, ", "), EnvSetting)
}

// EnvSetting names the functions' environment variable, for messages.
const EnvSetting = "MAESTRO_TEAM_RIGHTS"

// AllowsImage reports why image may not run in team's tasks: it is not a
// valid reference, or no entry of r.Images admits it. nil means it may.
func (r Rights) AllowsImage(team, image string) error {
	list, err := images.ParseAllowList(r.Images)
	if err != nil {
		return fmt.Errorf("team %q: %w", team, err) // Parse refuses such lists
	}
	if len(r.Images) == 0 {
		return fmt.Errorf("image %q: team %q may run no image (teams.%s.images is empty)", image, team, team)
	}
	if err := list.Check(image); err != nil {
		if errors.Is(err, images.ErrNotAllowed) {
			return fmt.Errorf("image %q is not on team %q's images (teams.%s.images: %s)", image, team, team, strings.Join(r.Images, ", "))
		}
		return err
	}
	return nil
}

// AllowsLambda reports why team may not invoke function (a name or an
// ARN, with or without a qualifier); nil means it may.
func (r Rights) AllowsLambda(team, function string) error {
	if len(r.Lambdas) == 0 {
		return fmt.Errorf("function %q: team %q may invoke no Lambda function (teams.%s.lambdas is empty)", function, team, team)
	}
	for _, p := range r.Lambdas {
		if MatchLambda(p, function) {
			return nil
		}
	}
	return fmt.Errorf("function %q is not on team %q's lambdas (teams.%s.lambdas: %s)", function, team, team, strings.Join(r.Lambdas, ", "))
}

// MatchLambda reports whether Lambda pattern p (see the package
// documentation) matches function, a name or an ARN.
func MatchLambda(p, function string) bool {
	unqualified, name := function, function
	if strings.HasPrefix(function, "arn:") {
		parts := strings.Split(function, ":")
		if len(parts) < 7 || parts[5] != "function" {
			return false
		}
		unqualified, name = strings.Join(parts[:7], ":"), parts[6]
	} else if n, _, ok := strings.Cut(function, ":"); ok {
		// name:qualifier, as Lambda also reads a function_name.
		unqualified, name = n, n
	}
	if strings.HasPrefix(p, "arn:") {
		return strings.HasPrefix(function, "arn:") && principal.Wildcard(p, unqualified)
	}
	return principal.Wildcard(p, name)
}

// JSON returns c as the compact JSON Parse reads, teams in name order.
func (c Config) JSON() (string, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(c); err != nil {
		return "", fmt.Errorf("team rights: %w", err)
	}
	return strings.TrimSpace(b.String()), nil
}
