package wiring

import (
	"fmt"
	"os"

	"github.com/maestro-serverless/maestro/steps/steprights"
	"github.com/maestro-serverless/maestro/store"
	"github.com/maestro-serverless/maestro/teamrights"
)

// EnvTeamRights is the stack's team rights: the JSON of a
// teamrights.Config ({"team": {"task_role_arn", "job_role_arn", "images",
// "lambdas"}}), set by the CDK app from its "teams" context on the API
// and worker functions. Unset or empty: no team rights (steps run with
// the stack's roles).
const EnvTeamRights = "MAESTRO_TEAM_RIGHTS"

// teamRightsFromEnv reads EnvTeamRights.
func teamRightsFromEnv() (teamrights.Config, error) {
	c, err := teamrights.Parse(os.Getenv(EnvTeamRights))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", EnvTeamRights, err)
	}
	return c, nil
}

// stepRights is the resolver the step runners ask for a launch's team
// rights: over opts.GrantsFrom's grants and st's runs.
func stepRights(opts Options, st *store.Store) *steprights.Resolver {
	var grants steprights.GrantSource
	if opts.GrantsFrom != nil {
		grants = opts.GrantsFrom(st)
	}
	return steprights.New(opts.TeamRights, grants, st.Runs)
}
