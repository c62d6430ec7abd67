package ecsstep

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/images"
	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/orchestrator"
	"github.com/maestro-serverless/maestro/teamrights"
)

func TestDispatchWithTeamRights(t *testing.T) {
	const (
		stackRole = "arn:aws:iam::123456789012:role/stack-tasks"
		dataRole  = "arn:aws:iam::123456789012:role/data-tasks"
		ecr       = "123456789012.dkr.ecr.us-east-1.amazonaws.com/"
	)
	allow, err := images.ParseAllowList([]string{ecr})
	if err != nil {
		t.Fatal(err)
	}
	data := teamrights.Scope{Enforced: true, Team: "data", Rights: teamrights.Rights{TaskRoleARN: dataRole, Images: []string{ecr + "etl/"}}}
	step := func(typ model.StepType, fields map[string]any) orchestrator.StepWork {
		param := ParamECS
		if typ != model.StepECS {
			param = ParamKubernetes
		}
		return orchestrator.StepWork{StepRef: orchestrator.StepRef{WorkflowID: "wf", InstanceID: 1, RunID: 1, StepID: "job", Attempt: 1},
			StepType: typ, Params: engine.Values{param: fields}}
	}
	for _, tc := range []struct {
		name  string
		m     orchestrator.StepWork
		scope teamrights.Scope
		err   error
		// want is in the fatal message; "" when the task runs, with
		// registered and override roles as listed.
		want                string
		registered, overide []string
	}{
		{"no team rights: the stack's role, no override", step(model.StepECS, map[string]any{"image": ecr + "ml/x"}), teamrights.Scope{}, nil,
			"", []string{stackRole}, []string{""}},
		{"an image runs in a definition with the team's role", step(model.StepECS, map[string]any{"image": ecr + "etl/x"}), data, nil,
			"", []string{dataRole}, []string{dataRole}},
		{"a named task definition's role is overridden", step(model.StepECS, map[string]any{"task_definition": "spark-submit", "container_name": "main"}), data, nil,
			"", nil, []string{dataRole}},
		{"an image off the team's list", step(model.StepKubernetes, map[string]any{"image": ecr + "ml/x"}), data, nil,
			`not on team "data"'s images`, nil, nil},
		{"a team without a task role", step(model.StepECS, map[string]any{"image": ecr + "etl/x"}),
			teamrights.Scope{Enforced: true, Team: "ml", Rights: teamrights.Rights{Images: []string{ecr}}}, nil,
			`team "ml" has no task role (CDK context teams.ml.taskRoleArn)`, nil, nil},
		{"owners without rights", step(model.StepECS, map[string]any{"image": ecr + "etl/x"}), teamrights.Scope{}, teamrights.Refused("the workflow's owners name no team"),
			"name no team", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeECS{}
			r, err := New(Config{ECS: f, Logs: noLogs{}, Cluster: "data", Subnets: []string{"subnet-1"}, LogGroup: "/maestro/test/ecs",
				Region: "us-east-1", Family: "maestro-test-task", StartedBy: "maestro-test-task", AllowImages: allow, TaskRoleARN: stackRole,
				AllowTaskDefinitions: []string{"spark-submit"},
				Rights:               func(context.Context, orchestrator.StepWork) (teamrights.Scope, error) { return tc.scope, tc.err }})
			if err != nil {
				t.Fatal(err)
			}
			h, end, err := r.Dispatch(context.Background(), tc.m, "")
			if err != nil {
				t.Fatal(err)
			}
			if tc.want != "" {
				if end == nil || end.Outcome != engine.OutcomeFatalError || !strings.Contains(end.Message, tc.want) || len(f.ran)+len(f.registered) != 0 {
					t.Errorf("end %+v, registered %v, ran %v; want a fatal error saying %q and nothing asked of ECS", end, f.registered, f.ran, tc.want)
				}
				return
			}
			if end != nil || h.Job == "" {
				t.Fatalf("end %+v, handover %+v; want the task run", end, h)
			}
			if !reflect.DeepEqual(f.registeredRoles, tc.registered) || !reflect.DeepEqual(f.overrideRoles, tc.overide) {
				t.Errorf("registered with %q, overridden with %q; want %q, %q", f.registeredRoles, f.overrideRoles, tc.registered, tc.overide)
			}
		})
	}
}

func TestGPUContainerTakesTheTeamRole(t *testing.T) {
	c := gpuContainer(task{image: "x", gpu: 1, role: "arn:aws:iam::123456789012:role/data-tasks"})
	if c.JobRoleARN != "arn:aws:iam::123456789012:role/data-tasks" {
		t.Errorf("GPU container role %q", c.JobRoleARN)
	}
}
