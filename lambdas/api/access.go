package api

import (
	"context"
	"net/http"

	"github.com/maestro-serverless/maestro/access"
	"github.com/maestro-serverless/maestro/orchestrator"
)

// Paths of the authorization endpoints.
const (
	callerPath = "/api/v3/caller"
	teamsPath  = "/api/v3/teams"
)

// AccessService authorizes callers and keeps workflows' grants and the
// teams (orchestrator.Access).
type AccessService interface {
	// WithCaller resolves the request's caller (principal, teams, admin)
	// once, into the returned context.
	WithCaller(ctx context.Context) (context.Context, error)

	// Caller returns the caller and whether the stack enforces access.
	Caller(ctx context.Context) (*orchestrator.CallerView, error)

	// Authorize refuses (403) a caller who may not take action on
	// workflowID; AuthorizeAdmin one who is not an admin; AuthorizeSignal
	// one who may not announce the signal name.
	Authorize(ctx context.Context, workflowID string, action access.Action) error

	AuthorizeAdmin(ctx context.Context, action access.Action) error

	AuthorizeSignal(ctx context.Context, name string) error

	// GetAccess and PutAccess read and replace a workflow's grant.
	GetAccess(ctx context.Context, workflowID string) (*orchestrator.AccessView, error)

	PutAccess(ctx context.Context, workflowID string, body []byte) (*orchestrator.AccessView, error)

	// ListTeams, GetTeam, PutTeam and DeleteTeam manage the teams.
	ListTeams(ctx context.Context) (*orchestrator.TeamList, error)

	GetTeam(ctx context.Context, name string) (*orchestrator.TeamView, error)

	PutTeam(ctx context.Context, name string, body []byte) (*orchestrator.TeamView, error)

	DeleteTeam(ctx context.Context, name string) (*orchestrator.TeamDeleted, error)
}

// accessAPI serves the caller, grant and team endpoints.
type accessAPI struct{ *server }

// register adds the routes.
func (s accessAPI) register(route func(string, apiFunc)) {
	route("GET "+callerPath, s.caller)
	route("GET "+workflowsPath+"/{id}/access", s.getAccess)
	route("PUT "+workflowsPath+"/{id}/access", s.putAccess)
	route("GET "+teamsPath, s.listTeams)
	route("GET "+teamsPath+"/{team}", s.getTeam)
	route("PUT "+teamsPath+"/{team}", s.putTeam)
	route("DELETE "+teamsPath+"/{team}", s.deleteTeam)
}

// accessSummaries are the OpenAPI summaries of the routes.
func accessSummaries() map[string]string {
	return map[string]string{
		"GET " + callerPath:                     "The caller: its principal, its teams, whether it is an admin, whether access is enforced",
		"GET " + workflowsPath + "/{id}/access": "The workflow's owners, operators and readers, and the caller's role on it",
		"PUT " + workflowsPath + "/{id}/access": "Replace the workflow's owners, operators and readers (owners or admins)",
		"GET " + teamsPath:                      "Every team and its member patterns",
		"GET " + teamsPath + "/{team}":          "One team",
		"PUT " + teamsPath + "/{team}":          "Create or replace a team: {\"members\": [principal ARN pattern]} (admins)",
		"DELETE " + teamsPath + "/{team}":       "Delete a team (admins)",
	}
}

func (s accessAPI) caller(w http.ResponseWriter, r *http.Request) error {
	v, err := s.svc.Access.Caller(r.Context())
	return answer(w, v, err, "Caller")
}

func (s accessAPI) getAccess(w http.ResponseWriter, r *http.Request) error {
	v, err := s.svc.Access.GetAccess(r.Context(), r.PathValue("id"))
	return answer(w, v, err, "GetAccess")
}

func (s accessAPI) putAccess(w http.ResponseWriter, r *http.Request) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	if len(body) == 0 {
		return orchestrator.Invalid("invalid access", "request body: must not be empty")
	}
	v, err := s.svc.Access.PutAccess(r.Context(), r.PathValue("id"), body)
	return answer(w, v, err, "PutAccess")
}

func (s accessAPI) listTeams(w http.ResponseWriter, r *http.Request) error {
	v, err := s.svc.Access.ListTeams(r.Context())
	return answer(w, v, err, "ListTeams")
}

func (s accessAPI) getTeam(w http.ResponseWriter, r *http.Request) error {
	v, err := s.svc.Access.GetTeam(r.Context(), r.PathValue("team"))
	return answer(w, v, err, "GetTeam")
}

func (s accessAPI) putTeam(w http.ResponseWriter, r *http.Request) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	if len(body) == 0 {
		return orchestrator.Invalid("invalid team", "request body: must not be empty")
	}
	v, err := s.svc.Access.PutTeam(r.Context(), r.PathValue("team"), body)
	return answer(w, v, err, "PutTeam")
}

func (s accessAPI) deleteTeam(w http.ResponseWriter, r *http.Request) error {
	v, err := s.svc.Access.DeleteTeam(r.Context(), r.PathValue("team"))
	return answer(w, v, err, "DeleteTeam")
}
