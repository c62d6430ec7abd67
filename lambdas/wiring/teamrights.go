package wiring

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/maestro-serverless/maestro/access"
	"github.com/maestro-serverless/maestro/orchestrator"
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
// rights: over the workflows' stored grants (or opts.GrantsFrom's) and
// st's runs.
func stepRights(opts Options, st *store.Store) *steprights.Resolver {
	grants := headGrants(st)
	if opts.GrantsFrom != nil {
		grants = opts.GrantsFrom(st)
	}
	return steprights.New(opts.TeamRights, grants, st.Runs)
}

// headGrants reads a workflow's grant from its head item: the grant the
// API's access control keeps (orchestrator.DecodeGrant).
func headGrants(st *store.Store) steprights.GrantSource {
	return steprights.GrantFunc(func(ctx context.Context, wf string) (access.Grant, bool, error) {
		head, err := st.Definitions.GetHead(ctx, wf)
		if errors.Is(err, store.ErrNotFound) {
			return access.Grant{}, false, nil
		}
		if err != nil {
			return access.Grant{}, false, err
		}
		if len(head.Access) == 0 {
			return access.Grant{}, false, nil
		}
		g, err := orchestrator.DecodeGrant(head)
		return g, err == nil, err
	})
}

// accessWith is the access settings with the team rights pushes are
// checked against.
func accessWith(s orchestrator.AccessSettings, rights teamrights.Config) orchestrator.AccessSettings {
	s.TeamRights = rights
	return s
}
