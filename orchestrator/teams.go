package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"

	"github.com/maestro-serverless/maestro/access"
	"github.com/maestro-serverless/maestro/caller"
	"github.com/maestro-serverless/maestro/store"
)

// TeamView is a team as the API shows it.
type TeamView struct {
	Name       string   `json:"name"`
	Members    []string `json:"members"`
	ModifyTime int64    `json:"modify_time"`
	ModifiedBy string   `json:"modified_by,omitempty"`
}

// TeamList is GET /api/v3/teams's answer.
type TeamList struct {
	Teams []TeamView `json:"teams"`
}

// TeamDeleted is DELETE /api/v3/teams/{team}'s answer.
type TeamDeleted struct {
	Name    string `json:"name"`
	Deleted bool   `json:"deleted"`
}

func teamView(t store.Team) TeamView {
	members := t.Members
	if members == nil {
		members = []string{}
	}
	return TeamView{Name: t.Name, Members: members, ModifyTime: t.ModifyTime, ModifiedBy: t.Principal}
}

// ListTeams returns every team, by name. Any caller may list them.
func (a *Access) ListTeams(ctx context.Context) (*TeamList, error) {
	ts, err := a.store.Teams.ListTeams(ctx)
	if err != nil {
		return nil, Internal(err)
	}
	out := &TeamList{Teams: make([]TeamView, len(ts))}
	for i, t := range ts {
		out.Teams[i] = teamView(t)
	}
	return out, nil
}

// GetTeam returns one team.
func (a *Access) GetTeam(ctx context.Context, name string) (*TeamView, error) {
	if err := access.CheckTeamName(name); err != nil {
		return nil, Invalid("bad team", "team: "+err.Error())
	}
	t, err := a.store.Teams.GetTeam(ctx, name)
	if err != nil {
		return nil, notFoundOr(err, "team %s not found", name)
	}
	v := teamView(*t)
	return &v, nil
}

// PutTeam creates or replaces team name from {"members": [ARN pattern,
// ...]}: an admin's action, published as a team_changed event.
func (a *Access) PutTeam(ctx context.Context, name string, body []byte) (*TeamView, error) {
	if err := a.AuthorizeAdmin(ctx, access.ManageTeams); err != nil {
		return nil, err
	}
	var req struct {
		Members []string `json:"members"`
	}
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return nil, Invalid("invalid team", "body: "+err.Error())
	}
	t := access.Team{Name: name, Members: req.Members}
	if probs := t.Validate(); len(probs) > 0 {
		return nil, Invalid("invalid team", probs...)
	}
	now := a.now()
	_, err := a.store.Teams.PutTeam(ctx, store.Team{Name: name, Members: req.Members}, now)
	if errors.Is(err, store.ErrLimit) {
		return nil, Conflict("team %s: the stack holds at most %d teams (delete one first)", name, access.MaxTeams)
	}
	if err != nil {
		return nil, Internal(err)
	}
	a.log.LogAttrs(ctx, slog.LevelInfo, "team changed", slog.String("principal", caller.From(ctx)),
		slog.String("team", name), slog.Any("members", req.Members))
	return &TeamView{Name: name, Members: req.Members, ModifyTime: now.UnixMilli(), ModifiedBy: caller.From(ctx)}, nil
}

// DeleteTeam deletes team name: an admin's action. Grants naming the team
// keep the entry, which then names nobody until a team of that name exists
// again.
func (a *Access) DeleteTeam(ctx context.Context, name string) (*TeamDeleted, error) {
	if err := a.AuthorizeAdmin(ctx, access.ManageTeams); err != nil {
		return nil, err
	}
	if err := access.CheckTeamName(name); err != nil {
		return nil, Invalid("bad team", "team: "+err.Error())
	}
	if err := a.store.Teams.DeleteTeam(ctx, name, a.now()); err != nil {
		return nil, notFoundOr(err, "team %s not found", name)
	}
	a.log.LogAttrs(ctx, slog.LevelInfo, "team deleted", slog.String("principal", caller.From(ctx)), slog.String("team", name))
	return &TeamDeleted{Name: name, Deleted: true}, nil
}
