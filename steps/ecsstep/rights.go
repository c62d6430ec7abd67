package ecsstep

import (
	"context"

	"github.com/maestro-serverless/maestro/orchestrator"
	"github.com/maestro-serverless/maestro/teamrights"
)

// Team rights (package teamrights): when Config.Rights enforces a scope,
// every task of the step runs with the team's task role — the role of the
// task definitions the runner registers for images, and a RunTask
// override of a named task definition's own role. A Notebook step's task
// takes it in place of Config.NotebookTaskRoleARN (the team's role must
// then be allowed to write the executed notebook under the notebook
// prefix), and a Kubernetes step's GPU job as its job role. The image
// must be on the team's images as well as on Config.AllowImages. A team
// without a task role may run none of these steps.

// teamScope applies m's team rights to t: it returns a teamrights.Refusal
// when the team may not run t, and sets t.role to the team's task role.
func (r *Runner) teamScope(ctx context.Context, m orchestrator.StepWork, t *task) (teamrights.Scope, error) {
	if r.cfg.Rights == nil {
		return teamrights.Scope{}, nil
	}
	scope, err := r.cfg.Rights(ctx, m)
	if err != nil || !scope.Enforced {
		return scope, err
	}
	team := scope.Team
	if scope.Rights.TaskRoleARN == "" {
		return scope, teamrights.Refused("team %q has no task role (CDK context teams.%s.taskRoleArn): its workflows may not run %s steps", team, team, m.StepType)
	}
	if t.image != "" {
		if err := scope.Rights.AllowsImage(team, t.image); err != nil {
			return scope, teamrights.Refused("%v; add its repository (or a prefix of it) to CDK context teams.%s.images", err, team)
		}
	}
	t.role = scope.Rights.TaskRoleARN
	return scope, nil
}
