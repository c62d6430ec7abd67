package batchstep

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/batch"
	"github.com/aws/aws-sdk-go-v2/service/batch/types"

	"github.com/maestro-serverless/maestro/orchestrator"
	"github.com/maestro-serverless/maestro/teamrights"
)

// Team rights (package teamrights). Batch's SubmitJob cannot override a
// job's role: it is the job definition's (containerProperties.jobRoleArn,
// or each ECS task's taskRoleArn). So when Config.Rights enforces a scope,
// the runner describes the step's job definition and submits it only
// when its role is the team's job role; the admin registers a definition
// (or a revision) per team with that team's role and allows its name
// (batchJobDefinitions). A name without a revision is resolved to its
// latest ACTIVE revision, and that revision — the one checked — is what
// is submitted. Multi-node and EKS definitions, whose roles are not read
// here, are refused, as are teams without a job role.

// teamDefinition returns the job definition to submit for step attempt m,
// which names def: def itself when no team rights apply, else the ARN of
// the revision checked to carry the team's job role. A refusal is a
// teamrights.Refusal; another error a failed Batch call.
func (r *Runner) teamDefinition(ctx context.Context, m orchestrator.StepWork, def string) (string, error) {
	if r.cfg.Rights == nil {
		return def, nil
	}
	scope, err := r.cfg.Rights(ctx, m)
	if err != nil || !scope.Enforced {
		return def, err
	}
	team, want := scope.Team, scope.Rights.JobRoleARN
	if want == "" {
		return "", teamrights.Refused("team %q has no Batch job role (CDK context teams.%s.jobRoleArn): its workflows may not run Batch steps", team, team)
	}
	d, err := r.describeDefinition(ctx, def)
	if err != nil {
		return "", err
	}
	if d == nil {
		return "", teamrights.Refused("job definition %q: no ACTIVE revision found", def)
	}
	arn := aws.ToString(d.JobDefinitionArn)
	roles, err := definitionRoles(d)
	if err != nil {
		return "", teamrights.Refused("job definition %s: %v", arn, err)
	}
	for _, role := range roles {
		if role != want {
			shown := role
			if shown == "" {
				shown = "none"
			}
			return "", teamrights.Refused("job definition %s runs with role %s, not team %q's job role %s (CDK context teams.%s.jobRoleArn): "+
				"a team's Batch steps run only definitions that carry its role", arn, shown, team, want, team)
		}
	}
	return arn, nil
}

// definitionRoles returns the roles a job definition's jobs run with.
func definitionRoles(d *types.JobDefinition) ([]string, error) {
	switch {
	case d.ContainerProperties != nil:
		return []string{aws.ToString(d.ContainerProperties.JobRoleArn)}, nil
	case d.EcsProperties != nil && len(d.EcsProperties.TaskProperties) > 0:
		var out []string
		for _, tp := range d.EcsProperties.TaskProperties {
			out = append(out, aws.ToString(tp.TaskRoleArn))
		}
		return out, nil
	}
	return nil, fmt.Errorf("team rights check the job role of container and ECS-properties job definitions only, not multi-node or EKS ones")
}

// describeDefinition returns job definition def (a name, name:revision
// or ARN): the revision it names, or a name's latest ACTIVE revision; nil
// when there is none. Revisions are listed by name (and picked here):
// emulators do not all read "name:revision" in JobDefinitions.
func (r *Runner) describeDefinition(ctx context.Context, def string) (*types.JobDefinition, error) {
	name := definitionName(def)
	var revision int32
	if _, rev, ok := strings.Cut(def[strings.LastIndex(def, "/")+1:], ":"); ok {
		n, err := strconv.ParseInt(rev, 10, 32)
		if err != nil || n < 1 {
			return nil, teamrights.Refused("job definition %q: revision %q is not a positive number", def, rev)
		}
		revision = int32(n)
	}
	in := &batch.DescribeJobDefinitionsInput{JobDefinitionName: aws.String(name), Status: aws.String("ACTIVE")}
	var found *types.JobDefinition
	for {
		out, err := r.cfg.Batch.DescribeJobDefinitions(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("describe job definition %s: %w", name, err)
		}
		for i := range out.JobDefinitions {
			d := &out.JobDefinitions[i]
			rev := aws.ToInt32(d.Revision)
			if aws.ToString(d.JobDefinitionName) != name || (revision != 0 && rev != revision) {
				continue
			}
			if found == nil || rev > aws.ToInt32(found.Revision) {
				found = d
			}
		}
		if out.NextToken == nil {
			return found, nil
		}
		in.NextToken = out.NextToken
	}
}
