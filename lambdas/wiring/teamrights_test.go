package wiring

import (
	"strings"
	"testing"
)

func TestOptionsFromEnvTeamRights(t *testing.T) {
	t.Setenv(EnvTeamRights, `{"data": {"task_role_arn": "arn:aws:iam::123456789012:role/data-tasks", "lambdas": ["etl-*"]}}`)
	opts, err := optionsFromEnv()
	if err != nil || opts.TeamRights["data"].TaskRoleARN != "arn:aws:iam::123456789012:role/data-tasks" {
		t.Fatalf("optionsFromEnv = %+v, %v", opts.TeamRights, err)
	}
	t.Setenv(EnvTeamRights, "")
	if opts, err := optionsFromEnv(); err != nil || len(opts.TeamRights) != 0 {
		t.Errorf("unset: %+v, %v; want no team rights", opts.TeamRights, err)
	}
	// A function whose setting was edited into something invalid does
	// not start: it would run steps with rights nobody meant.
	t.Setenv(EnvTeamRights, `{"data": {"task_role_arn": "arn:aws:iam::123456789012:user/bob"}}`)
	if _, err := optionsFromEnv(); err == nil || !strings.Contains(err.Error(), EnvTeamRights) || !strings.Contains(err.Error(), "teams.data.task_role_arn") {
		t.Errorf("bad setting: %v; want an error naming %s and the field", err, EnvTeamRights)
	}
}
