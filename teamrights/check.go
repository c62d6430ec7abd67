package teamrights

import (
	"fmt"

	"github.com/maestro-serverless/maestro/access"
	"github.com/maestro-serverless/maestro/definition"
	"github.com/maestro-serverless/maestro/model"
)

// NeedsRights reports whether a step of type t runs with its team's
// rights: Ecs, Kubernetes, Notebook, Batch and Lambda steps.
func NeedsRights(t model.StepType) bool {
	switch t {
	case model.StepECS, model.StepKubernetes, model.StepNotebook, model.StepBatch, model.StepLambda:
		return true
	}
	return false
}

// CheckWorkflow returns why a push of wf, owned per g, asks for more than
// its owners' rights: nothing when c is empty (no team configured); one
// problem per step that needs rights when g's owners map to no team;
// else Check's problems.
func (c Config) CheckWorkflow(wf *model.Workflow, g access.Grant) []string {
	if len(c) == 0 || wf == nil {
		return nil
	}
	team, r, ok := c.For(g)
	if !ok {
		var out []string
		walk(wf.Steps, "workflow.steps", func(s *model.Step, at string) {
			if s.Kind == model.KindStep && NeedsRights(s.Type) {
				out = append(out, fmt.Sprintf("step %q (%s, %s): %s", s.ID, at, s.Type, NoMapping(g.Owners)))
			}
		})
		return out
	}
	return Check(wf, team, r)
}

// Check returns one problem per step of wf (loop bodies included) that asks
// for more than team's rights r, each naming the step, the field and the
// rule:
//
//   - Ecs, Kubernetes and Notebook steps need r.TaskRoleARN, Batch steps
//     r.JobRoleARN (their tasks and jobs run with it);
//   - an Ecs step's ecs.image, a Kubernetes or Notebook step's
//     kubernetes.image must be on r.Images;
//   - a Lambda step's lambda.function_name must match r.Lambdas.
//
// Only values written as literals are known at push: an image or a
// function given by an expression, or interpolating a param, is checked
// by the worker when the step runs, against the same rights. No step
// param names a role: an Ecs task definition's role is replaced by the
// team's, and a Batch job definition's role is checked at launch.
func Check(wf *model.Workflow, team string, r Rights) []string {
	if wf == nil {
		return nil
	}
	var out []string
	walk(wf.Steps, "workflow.steps", func(s *model.Step, at string) {
		if s.Kind != model.KindStep || !NeedsRights(s.Type) {
			return
		}
		fail := func(field, rule string) {
			out = append(out, fmt.Sprintf("step %q (%s, %s): %s: %s", s.ID, at, s.Type, field, rule))
		}
		switch s.Type {
		case model.StepECS, model.StepKubernetes, model.StepNotebook:
			if r.TaskRoleARN == "" {
				fail("task role", fmt.Sprintf("team %q has no task role (teams.%s.task_role_arn; CDK context teams.%s.taskRoleArn): its workflows may not run %s steps", team, team, team, s.Type))
			}
			param := "kubernetes"
			if s.Type == model.StepECS {
				param = "ecs"
			}
			if image, ok := definition.LiteralMapField(s.Params.Defs[param], "image"); ok {
				if err := r.AllowsImage(team, image); err != nil {
					fail("params."+param+".image", err.Error())
				}
			}
		case model.StepBatch:
			if r.JobRoleARN == "" {
				fail("job role", fmt.Sprintf("team %q has no Batch job role (teams.%s.job_role_arn; CDK context teams.%s.jobRoleArn): its workflows may not run Batch steps", team, team, team))
			}
		case model.StepLambda:
			if fn, ok := definition.LiteralMapField(s.Params.Defs["lambda"], "function_name"); ok {
				if err := r.AllowsLambda(team, fn); err != nil {
					fail("params.lambda.function_name", err.Error())
				}
			} else if len(r.Lambdas) == 0 {
				fail("params.lambda.function_name", fmt.Sprintf("team %q may invoke no Lambda function (teams.%s.lambdas is empty)", team, team))
			}
		}
	})
	return out
}

// walk calls f for every step of list and of its loops' bodies, with its
// JSON path.
func walk(list []model.Step, path string, f func(s *model.Step, at string)) {
	for i := range list {
		s := &list[i]
		at := fmt.Sprintf("%s[%d].%s", path, i, s.Kind)
		f(s, at)
		walk(s.Steps, at+".steps", f)
	}
}
