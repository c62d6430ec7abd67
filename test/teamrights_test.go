package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecs"

	"github.com/maestro-serverless/maestro/access"
	"github.com/maestro-serverless/maestro/localstack/stack"
	"github.com/maestro-serverless/maestro/steps/steprights"
	"github.com/maestro-serverless/maestro/store"
	"github.com/maestro-serverless/maestro/teamrights"
)

// TestStepsRunWithTheirTeamsRights runs Ecs steps on a stack that maps
// team data to a task role and an image list: a workflow owned by data
// runs its tasks — its foreach iterations' too, whose owners the worker
// reads from the iteration's run — with data's role; an image off data's
// list, and a workflow whose owners map to no team, fail without a task.
// The grants come from a table (stack.Options.GrantsFrom), so that the
// stack needs no signatures; TestTeamsAndRoles runs a launch through the
// grants the store keeps.
func TestStepsRunWithTheirTeamsRights(t *testing.T) {
	t.Parallel()
	const dataRole = "arn:aws:iam::000000000000:role/data-tasks"
	grants := steprights.GrantFunc(func(_ context.Context, wf string) (access.Grant, bool, error) {
		switch wf {
		case "rights-data":
			return access.Grant{Owners: []string{"team:data"}}, true, nil
		case "rights-solo":
			return access.Grant{Owners: []string{"arn:aws:iam::000000000000:role/alice"}}, true, nil
		}
		return access.Grant{}, false, nil
	})
	s := startSystem(t, stack.Options{Emulator: emulator, ECS: true,
		TeamRights: teamrights.Config{"data": {TaskRoleARN: dataRole, Images: []string{"docker.io/library/busybox"}}},
		GrantsFrom: func(*store.Store) steprights.GrantSource { return grants }})
	e := &jobsEnv{system: s, ecs: ecs.NewFromConfig(emulator.TestConfig(t)), seen: map[string]bool{}}
	ecsStep := func(id, image string) string {
		return `{"step":{"id":"` + id + `","type":"Ecs","params":{"ecs":{"type":"MAP","value":{"image":{"type":"STRING","value":"` + image + `"}}}}}}`
	}
	workflow := func(id, steps string) []byte {
		return []byte(`{"properties":{"owner":"rights"},"workflow":{"id":"` + id + `","steps":[` + steps + `]}}`)
	}

	t.Run("the owners' team's task role, in a loop too", func(t *testing.T) {
		wf := e.push(workflow("rights-data", ecsStep("top", "busybox:1")+`,
		  {"foreach":{"id":"loop","params":{"loop_params":{"type":"MAP","value":{"i":{"type":"LONG_ARRAY","value":[1]}}}},
		    "steps":[`+ecsStep("inner", "busybox:2")+`]}}`))
		r := e.start(wf, "")
		for range 2 {
			task := e.nextTask(t)
			if got := aws.ToString(task.Overrides.TaskRoleArn); got != dataRole {
				t.Errorf("task %s runs with role %q, want team data's %s", aws.ToString(task.TaskArn), got, dataRole)
			}
			def, err := e.ecs.DescribeTaskDefinition(context.Background(), &ecs.DescribeTaskDefinitionInput{TaskDefinition: task.TaskDefinitionArn})
			if err != nil {
				t.Fatal(err)
			}
			if got := aws.ToString(def.TaskDefinition.TaskRoleArn); got != dataRole {
				t.Errorf("task definition %s has role %q, want %s", aws.ToString(task.TaskDefinitionArn), got, dataRole)
			}
			e.taskStopped(t, aws.ToString(task.TaskArn), exit(0), "EssentialContainerExited", "Essential container in task exited")
		}
		if v := e.wait(wf, r.WorkflowInstanceID, 30*time.Second); v.Status != "SUCCEEDED" {
			t.Fatalf("instance %s %v", v.Status, v.StepStatuses)
		}
	})

	for _, tc := range []struct {
		name, wf, image, want string
	}{
		{"an image off the team's list", "rights-data", "docker.io/library/python:3", `not on team "data"'s images`},
		{"owners that map to no team", "rights-solo", "busybox:1", "name no team the stack maps to AWS rights"},
		{"a workflow without recorded owners", "rights-unknown", "busybox:1", "has no recorded owners"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wf := e.push(workflow(tc.wf, ecsStep("job", tc.image)))
			r := e.start(wf, "")
			if v := e.wait(wf, r.WorkflowInstanceID, 30*time.Second); v.Status != "FAILED" {
				t.Fatalf("instance %s %v, want FAILED", v.Status, v.StepStatuses)
			}
			a := attempt(t, s, wf, r.WorkflowInstanceID, "job", 1)
			if a.RuntimeState.Status != "FATALLY_FAILED" || !strings.Contains(timelineText(a), tc.want) {
				t.Errorf("attempt %s %q, want a fatal failure saying %q", a.RuntimeState.Status, timelineText(a), tc.want)
			}
			list, err := e.ecs.ListTasks(context.Background(), &ecs.ListTasksInput{Cluster: aws.String(e.st.ECS.Cluster), StartedBy: aws.String(e.st.ECS.Family)})
			if err != nil {
				t.Fatal(err)
			}
			if len(list.TaskArns) != 2 {
				t.Errorf("%d tasks started in all, want the first subtest's 2 only", len(list.TaskArns))
			}
		})
	}
}
