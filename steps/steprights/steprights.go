// Package steprights finds the team rights a step attempt launches with
// (see package teamrights): the rights of the owners of the workflow whose
// definition holds the step. That is the step's own workflow, a
// subworkflow's child included (its own owners, not its caller's); for an
// iteration of a foreach or while loop — a run of an inline workflow,
// which has no owners of its own — it is the workflow that defines the
// loop (engine.ParentRef.Owner: the nearest ancestor that is not an
// iteration), read from the iteration run's state.
//
// The runners of Ecs, Kubernetes, Notebook, Batch and Lambda steps call
// Resolver.Scope before they launch anything.
package steprights

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/maestro-serverless/maestro/access"
	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/orchestrator"
	"github.com/maestro-serverless/maestro/store"
	"github.com/maestro-serverless/maestro/teamrights"
)

// GrantSource reads the grant of a workflow: found is false when the
// workflow, or its grant, does not exist.
type GrantSource interface {
	Grant(ctx context.Context, workflowID string) (g access.Grant, found bool, err error)
}

// GrantFunc is a function that is a GrantSource.
type GrantFunc func(ctx context.Context, workflowID string) (access.Grant, bool, error)

// Grant calls f.
func (f GrantFunc) Grant(ctx context.Context, workflowID string) (access.Grant, bool, error) {
	return f(ctx, workflowID)
}

// Runs reads a run's state (store.Runs does).
type Runs interface {
	LoadRun(ctx context.Context, wf string, inst, run int64) (*store.RunRecord, []store.Event, error)
}

// Resolver finds the Scope of step attempts. A nil *Resolver, or one
// with an empty configuration, enforces nothing.
type Resolver struct {
	cfg    teamrights.Config
	grants GrantSource
	runs   Runs
}

// New returns a Resolver of cfg's rights over grants and runs. With a
// non-empty cfg and a nil grants every launch is refused: rights are
// configured but cannot be looked up.
func New(cfg teamrights.Config, grants GrantSource, runs Runs) *Resolver {
	return &Resolver{cfg: cfg, grants: grants, runs: runs}
}

// Scope returns the rights step attempt m launches with. A
// teamrights.Refusal says it may not launch at all (its workflow's owners
// map to no team, or it has no recorded owners); another error is a
// platform error (the store could not be read), worth a retry.
func (r *Resolver) Scope(ctx context.Context, m orchestrator.StepWork) (teamrights.Scope, error) {
	if r == nil || len(r.cfg) == 0 {
		return teamrights.Scope{}, nil
	}
	wf, err := r.OwnerWorkflow(ctx, m)
	if err != nil {
		return teamrights.Scope{}, err
	}
	if r.grants == nil {
		return teamrights.Scope{}, teamrights.Refused("the stack maps teams to AWS rights (%s) but this worker cannot read workflow %q's owners", teamrights.EnvSetting, wf)
	}
	g, found, err := r.grants.Grant(ctx, wf)
	if err != nil {
		return teamrights.Scope{}, fmt.Errorf("read the grant of workflow %s: %w", wf, err)
	}
	if !found {
		return teamrights.Scope{}, teamrights.Refused("workflow %q has no recorded owners: with team rights configured (%s), its %s steps run only with its owners' team's rights",
			wf, teamrights.EnvSetting, m.StepType)
	}
	team, rights, ok := r.cfg.For(g)
	if !ok {
		return teamrights.Scope{}, teamrights.Refused("workflow %q: %s", wf, teamrights.NoMapping(g.Owners))
	}
	return teamrights.Scope{Enforced: true, Team: team, Rights: rights}, nil
}

// OwnerWorkflow names the workflow whose owners' rights m launches with:
// m's own, or for an iteration of an inline workflow the workflow that
// defines its loop.
func (r *Resolver) OwnerWorkflow(ctx context.Context, m orchestrator.StepWork) (string, error) {
	if !model.IsInlineWorkflowID(m.WorkflowID) {
		return m.WorkflowID, nil
	}
	if r.runs == nil {
		return "", teamrights.Refused("iteration %s/%d: its loop's workflow cannot be read here", m.WorkflowID, m.InstanceID)
	}
	rec, _, err := r.runs.LoadRun(ctx, m.WorkflowID, m.InstanceID, m.RunID)
	if err != nil {
		return "", fmt.Errorf("read iteration %s/%d run %d: %w", m.WorkflowID, m.InstanceID, m.RunID, err)
	}
	var st struct {
		Parent *struct {
			Owner string `json:"owner"`
		} `json:"parent"`
	}
	if err := json.Unmarshal(rec.State, &st); err != nil {
		return "", fmt.Errorf("decode iteration %s/%d run %d: %w", m.WorkflowID, m.InstanceID, m.RunID, err)
	}
	switch {
	case st.Parent == nil:
		return "", teamrights.Refused("iteration %s/%d has no parent run: its owners cannot be known", m.WorkflowID, m.InstanceID)
	case st.Parent.Owner != "":
		return st.Parent.Owner, nil
	}
	// Not the root's owners: below a subworkflow they are another
	// workflow's.
	return "", teamrights.Refused("iteration %s/%d names no workflow that defines it: its owners cannot be known", m.WorkflowID, m.InstanceID)
}
