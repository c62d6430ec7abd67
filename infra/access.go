package infra

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/jsii-runtime-go"

	"github.com/maestro-serverless/maestro/access"
	"github.com/maestro-serverless/maestro/lambdas/wiring"
	"github.com/maestro-serverless/maestro/principal"
	"github.com/maestro-serverless/maestro/teamrights"
)

// Who may do what (issue 39): the stack's admins, whether new workflows
// are private, which teams may announce which signal names, and the AWS
// rights each team's steps run with.

// CDK context keys of AccessSettings.
const (
	// CtxAdmins is AccessSettings.Admins: principal ARN patterns (a list).
	CtxAdmins = "admins"
	// CtxPrivateWorkflows is AccessSettings.PrivateWorkflows (true or
	// false).
	CtxPrivateWorkflows = "privateWorkflows"
	// CtxSignalPrefixes is AccessSettings.SignalPrefixes: a JSON object of
	// team name to a list of signal name prefixes, in cdk.json or as a
	// JSON string.
	CtxSignalPrefixes = "signalPrefixes"
	// CtxTeams is AccessSettings.Teams: a JSON object of team name to
	// {"taskRoleArn", "jobRoleArn", "images", "lambdas"}, in cdk.json or
	// as a JSON string.
	CtxTeams = "teams"
)

// AccessSettings say who may do what, and with whose AWS rights steps run.
type AccessSettings struct {
	// Admins are principal ARN patterns the stack names admins
	// (MAESTRO_ADMINS of the API): they manage teams, tag permits, job
	// queues and any workflow's grant.
	Admins []string
	// PrivateWorkflows makes a new workflow's readers empty
	// (MAESTRO_PRIVATE_WORKFLOWS of the API).
	PrivateWorkflows bool
	// SignalPrefixes limits announcing signals by name prefix to teams
	// (MAESTRO_SIGNAL_PREFIXES of the API); empty: open.
	SignalPrefixes map[string][]string
	// Teams maps teams to the AWS rights their workflows' Ecs, Kubernetes,
	// Notebook, Batch and Lambda steps run with (MAESTRO_TEAM_RIGHTS of
	// the API and the worker; see package teamrights). Empty: the stack's
	// roles. When set, the worker may pass exactly the teams' task roles
	// and invoke exactly the allowed functions that a team's lambdas
	// match.
	Teams teamrights.Config
}

// teamContext is one team of the "teams" context, as cdk.json writes it.
type teamContext struct {
	TaskRoleARN string   `json:"taskRoleArn,omitempty"`
	JobRoleARN  string   `json:"jobRoleArn,omitempty"`
	Images      []string `json:"images,omitempty"`
	Lambdas     []string `json:"lambdas,omitempty"`
}

// contextFields maps teamrights' field names to the context's, for
// messages.
var contextFields = strings.NewReplacer(".task_role_arn", ".taskRoleArn", ".job_role_arn", ".jobRoleArn")

// accessFromContext reads AccessSettings from CDK context through get.
func accessFromContext(get func(string) any) (AccessSettings, []error) {
	var a AccessSettings
	var errs []error
	var err error
	if a.Admins, err = contextList(get(CtxAdmins)); err != nil {
		errs = append(errs, fmt.Errorf("context %s: %w", CtxAdmins, err))
	}
	if b, err := contextBool(get(CtxPrivateWorkflows)); err != nil {
		errs = append(errs, fmt.Errorf("context %s: %w", CtxPrivateWorkflows, err))
	} else if b != nil {
		a.PrivateWorkflows = *b
	}
	if err := contextJSON(get(CtxSignalPrefixes), &a.SignalPrefixes); err != nil {
		errs = append(errs, fmt.Errorf("context %s: want a JSON object of team name to a list of signal name prefixes: %w", CtxSignalPrefixes, err))
	}
	var teams map[string]teamContext
	if err := contextJSON(get(CtxTeams), &teams); err != nil {
		errs = append(errs, fmt.Errorf("context %s: want a JSON object of team name to {taskRoleArn, jobRoleArn, images, lambdas}: %w", CtxTeams, err))
	}
	if teams != nil {
		a.Teams = teamrights.Config{}
		for name, t := range teams {
			a.Teams[name] = teamrights.Rights{TaskRoleARN: t.TaskRoleARN, JobRoleARN: t.JobRoleARN, Images: t.Images, Lambdas: t.Lambdas}
		}
	}
	return a, errs
}

// contextJSON decodes a context value that is JSON (cdk.json) or its text
// (-c key='{...}') into dst, refusing unknown fields; nil leaves dst.
func contextJSON(v any, dst any) error {
	var text []byte
	switch v := v.(type) {
	case nil:
		return nil
	case string:
		if strings.TrimSpace(v) == "" {
			return nil
		}
		text = []byte(v)
	default:
		var err error
		if text, err = json.Marshal(v); err != nil {
			return err
		}
	}
	dec := json.NewDecoder(strings.NewReader(string(text)))
	dec.DisallowUnknownFields()
	return dec.Decode(dst)
}

// check reports every invalid access setting, each naming its context key
// and, for a team, the team and the field.
func (a AccessSettings) check() []error {
	var errs []error
	for _, p := range a.Admins {
		if strings.Contains(p, ",") {
			errs = append(errs, fmt.Errorf("context %s: %q: an entry has no commas", CtxAdmins, p))
		} else if err := principal.ValidatePattern(p); err != nil {
			errs = append(errs, fmt.Errorf("context %s: %w", CtxAdmins, err))
		}
	}
	for team, prefixes := range a.SignalPrefixes {
		if err := access.CheckTeamName(team); err != nil {
			errs = append(errs, fmt.Errorf("context %s.%s: %w", CtxSignalPrefixes, team, err))
		}
		if len(prefixes) == 0 {
			errs = append(errs, fmt.Errorf("context %s.%s: list at least one prefix", CtxSignalPrefixes, team))
		}
		for i, p := range prefixes {
			if strings.TrimSpace(p) == "" {
				errs = append(errs, fmt.Errorf("context %s.%s[%d]: empty prefix", CtxSignalPrefixes, team, i))
			}
		}
	}
	for _, p := range a.Teams.Validate() {
		errs = append(errs, fmt.Errorf("context %s", contextFields.Replace(p)))
	}
	if len(errs) == 0 && len(a.Teams) > 0 {
		// What the functions will read: the same JSON, through the same
		// parser (its size bound included).
		text, err := a.Teams.JSON()
		if err == nil {
			_, err = teamrights.Parse(text)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("context %s: %w", CtxTeams, err))
		}
	}
	return errs
}

// accessEnv returns the environment of the API function (api true) or the
// worker's from the access settings.
func (a AccessSettings) env(api bool) (map[string]string, error) {
	env := map[string]string{}
	if len(a.Teams) > 0 {
		text, err := a.Teams.JSON()
		if err != nil {
			return nil, err
		}
		env[wiring.EnvTeamRights] = text
	}
	if !api {
		return env, nil
	}
	if len(a.Admins) > 0 {
		env[wiring.EnvAdmins] = strings.Join(a.Admins, ",")
	}
	if a.PrivateWorkflows {
		env[wiring.EnvPrivateWorkflows] = "true"
	}
	if len(a.SignalPrefixes) > 0 {
		b, err := json.Marshal(a.SignalPrefixes)
		if err != nil {
			return nil, err
		}
		env[wiring.EnvSignalPrefixes] = string(b)
	}
	return env, nil
}

// teamTaskRoles returns the teams' task roles, once each, sorted.
func (a AccessSettings) teamTaskRoles() []string {
	var out []string
	for _, r := range a.Teams {
		if r.TaskRoleARN != "" && !slices.Contains(out, r.TaskRoleARN) {
			out = append(out, r.TaskRoleARN)
		}
	}
	slices.Sort(out)
	return out
}

// teamFunctions returns the entries of the stack's Lambda allow-list that
// some team's lambdas match: with teams, the only functions a Lambda step
// may invoke.
func (a AccessSettings) teamFunctions(stackList []string) []string {
	var out []string
	for _, f := range stackList {
		for _, r := range a.Teams {
			if r.AllowsLambda("", f) == nil {
				out = append(out, f)
				break
			}
		}
	}
	return out
}

// passRole grants role iam:PassRole on roles, passed to service only.
func passRole(role awsiam.IRole, service string, roles ...*string) {
	if len(roles) == 0 {
		return
	}
	role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions: jsii.Strings("iam:PassRole"), Resources: &roles,
		Conditions: &map[string]any{"StringEquals": map[string]any{"iam:PassedToService": service}},
	}))
}

// lambdaARNs are the ARNs the worker may invoke for Lambda allow-list
// entries fs (names in the stack's account and region, or ARNs): each
// function and its versions and aliases.
func lambdaARNs(stack awscdk.Stack, fs []string) []*string {
	var arns []*string
	for _, f := range fs {
		arn := f
		if !strings.HasPrefix(f, "arn:") {
			arn = *stack.FormatArn(&awscdk.ArnComponents{
				Service: jsii.String("lambda"), Resource: jsii.String("function"), ResourceName: jsii.String(f),
				ArnFormat: awscdk.ArnFormat_COLON_RESOURCE_NAME,
			})
		}
		arns = append(arns, jsii.String(arn), jsii.String(arn+":*"))
	}
	return arns
}
