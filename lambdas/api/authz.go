package api

import (
	"fmt"
	"maps"
	"net/http"

	"github.com/maestro-serverless/maestro/access"
)

// A guard says how a route is authorized (docs/security.md, "Who may do
// what"). Every route the API registers has one (routeGuards): register
// panics on a route without, and TestDecisionTable drives each route as
// each role.
type guard struct {
	kind guardKind
	// action is the action the route takes; for a route whose path names
	// the action ({action}), byPath maps its values instead.
	action access.Action
	byPath map[string]access.Action
	// query names the query parameter that names the workflow
	// (guardWorkflow; "" for the {id} path parameter).
	query string
	// why says, for guardOpen and guardService, why the route needs no
	// role or where the service checks it.
	why string
}

type guardKind int

const (
	// guardOpen: any authenticated caller (API Gateway's IAM
	// authorization, or the local stack's signatures, authenticated it).
	guardOpen guardKind = iota + 1
	// guardWorkflow: the caller's role on the workflow the path (or the
	// query parameter query) names, before the handler runs.
	guardWorkflow
	// guardBody: the caller's role on the workflow the request body names,
	// checked by the handler once the body parsed strictly
	// (server.authorizeNamed).
	guardBody
	// guardAdmin: the stack's admins only.
	guardAdmin
	// guardService: the service checks, as why says (a push's ownership,
	// a list's filter, a task token, a signal's prefix).
	guardService
)

func open(why string) guard            { return guard{kind: guardOpen, why: why} }
func onWorkflow(a access.Action) guard { return guard{kind: guardWorkflow, action: a} }
func onQueryWorkflow(a access.Action) guard {
	return guard{kind: guardWorkflow, action: a, query: "workflowId"}
}
func onBodyWorkflow(a access.Action) guard { return guard{kind: guardBody, action: a} }
func adminOnly(a access.Action) guard      { return guard{kind: guardAdmin, action: a} }
func inService(a access.Action, why string) guard {
	return guard{kind: guardService, action: a, why: why}
}

// runActions are the actions of the {action} path parameter of the
// workflow, instance and run action routes.
var runActions = map[string]access.Action{"stop": access.Stop, "kill": access.Kill, "unblock": access.Unblock}

func onWorkflowAction() guard { return guard{kind: guardWorkflow, byPath: runActions} }

// actionOf is the action r takes under g; "" for a path action g does not
// know (the handler answers 400).
func (g guard) actionOf(r *http.Request) access.Action {
	if g.byPath != nil {
		return g.byPath[r.PathValue("action")]
	}
	return g.action
}

// routeGuards is every API route's guard, by route pattern.
func routeGuards() map[string]guard {
	wf, fl := workflowsPath, flattenPath+"/workflows/{id}/instances/{instanceId}/runs/{runId}/steps/{stepId}"
	read := onWorkflow(access.Read)
	g := map[string]guard{
		"GET /health":                                                 open("the load balancer's and the operator's health check"),
		"GET " + openAPIPath:                                          open("the API's description"),
		"GET " + wf + "/instances/action-map":                         open("a fixed table of statuses and actions"),
		"GET " + wf + "/steps/instances/action-map":                   open("a fixed table of statuses and actions"),
		"PUT " + wf + "/actions/validate":                             open("checks a definition, stores nothing"),
		"PUT " + wf + "/actions/validate/yaml":                        open("checks a definition, stores nothing"),
		"GET " + callerPath:                                           open("the caller's own principal, teams and admin flag"),
		"GET " + teamsPath:                                            open("team names and member patterns"),
		"GET " + teamsPath + "/{team}":                                open("team names and member patterns"),
		"PUT " + teamsPath + "/{team}":                                adminOnly(access.ManageTeams),
		"DELETE " + teamsPath + "/{team}":                             adminOnly(access.ManageTeams),
		"GET " + wf:                                                   inService(access.Read, "lists only the workflows the caller may read"),
		"POST " + wf:                                                  inService(access.Push, "the id is in the definition: a new id is the pusher's, an existing one needs its owners (checked on the head the version is written over)"),
		"POST " + wf + "/yaml":                                        inService(access.Push, "as POST /api/v3/workflows"),
		"GET " + wf + "/{id}/access":                                  inService(access.Read, "readers, and admins (who may set any grant)"),
		"PUT " + wf + "/{id}/access":                                  inService(access.SetGrant, "owners, or an admin"),
		"GET " + wf + "/{id}/versions/{version}":                      read,
		"POST " + wf + "/{id}/versions/{version}/actions/start":       onWorkflow(access.Start),
		"POST " + wf + "/{id}/versions/{version}/actions/start-batch": onWorkflow(access.Start),
		"PUT " + wf + "/{id}/versions/{version}/actions/activate":     onWorkflow(access.Activate),
		"PUT " + wf + "/{id}/actions/deactivate":                      onWorkflow(access.Deactivate),
		"PUT " + wf + "/{id}/actions/{action}":                        onWorkflowAction(),
		"POST " + wf + "/{id}/properties":                             onWorkflow(access.Properties),
		"DELETE " + wf + "/{id}":                                      onWorkflow(access.Delete),
		"POST " + workflowTagPath:                                     onWorkflow(access.Tag),
		"DELETE " + workflowTagPath + "/{workflowTagName}":            onWorkflow(access.Tag),
		"GET " + wf + "/{id}/instances":                               read,
		"GET " + wf + "/{id}/instances/{instanceId}":                  read,
		"GET " + wf + "/{id}/instances/{instanceId}/runs/{runId}":     read,
		"GET " + wf + "/{id}/instances/{instanceId}/steps":            read,
		"GET " + wf + "/{id}/instances/{instanceId}/runs/{runId}/steps/{stepId}/attempts/{attempt}": read,
		"PUT " + wf + "/{id}/instances/{instanceId}/actions/{action}":                               onWorkflowAction(),
		"PUT " + wf + "/{id}/instances/{instanceId}/runs/{runId}/actions/{action}":                  onWorkflowAction(),
		"POST " + wf + "/{id}/instances/{instanceId}/actions/restart":                               onWorkflow(access.Restart),
		"PUT " + wf + "/{id}/instances/{instanceId}/steps/{stepId}/actions/{action}":                onWorkflow(access.StepAction),
		"POST " + wf + "/{id}/instances/{instanceId}/steps/{stepId}/actions/restart":                onWorkflow(access.Restart),
		"GET " + fl: read,
		"GET " + fl + "/iterations/{iterationId}":                       read,
		"GET " + fl + "/summary":                                        read,
		"GET " + wf + "/{id}/versions":                                  read,
		"GET " + wf + "/{id}/versions/pagination":                       read,
		"GET " + wf + "/{id}/overview":                                  read,
		"GET " + wf + "/{id}/timeline":                                  read,
		"GET " + wf + "/{id}/properties-snapshot/{snapshotId}":          read,
		"GET " + wf + "/{id}/instances/{instanceId}/runs":               read,
		"GET " + wf + "/{id}/instances/{instanceId}/runs/{runId}/steps": read,
		"GET " + wf + "/{id}/instances/{instanceId}/steps/{stepId}":     read,
		"GET " + wf + "/{id}/instances/{instanceId}/inline-path":        read,
		"GET " + wf + "/instances/inline-workflow-id":                   onBodyWorkflow(access.Read),
		"PUT /api/v3/output-data":                                       onBodyWorkflow(access.OutputData),
		"POST " + tasksPath + "{token}/{action}":                        inService("", "the task token is the capability: whoever holds it reports"),
		"POST " + breakpointsPath:                                       onBodyWorkflow(access.Breakpoint),
		"GET " + breakpointsPath:                                        onQueryWorkflow(access.Read),
		"DELETE " + breakpointsPath:                                     onQueryWorkflow(access.Breakpoint),
		"GET " + breakpointsPath + "/paused-step-attempts":              onQueryWorkflow(access.Read),
		"PUT " + breakpointsPath + "/{id}/instances/{instanceId}/runs/{runId}/steps/{stepId}/attempts/{attempt}/actions/resume": onWorkflow(access.Breakpoint),
		"POST " + tagPermitsPath:                                 adminOnly(access.ManagePermits),
		"GET " + tagPermitsPath + "/{tag}":                       open("a tag's permit: its limit and use"),
		"DELETE " + tagPermitsPath + "/{tag}":                    adminOnly(access.ManagePermits),
		"POST " + jobQueuesPath:                                  adminOnly(access.ManageQueues),
		"GET " + jobQueuesPath + "/{name}":                       open("a job queue's capacity and use"),
		"DELETE " + jobQueuesPath + "/{name}":                    adminOnly(access.ManageQueues),
		"POST " + jobTemplatesPath:                               adminOnly(access.ManageTemplates),
		"POST " + jobTemplatesPath + "/yaml":                     adminOnly(access.ManageTemplates),
		"GET " + jobTemplatesPath:                                open("job templates: shared step types"),
		"GET " + jobTemplatesPath + "/{type}":                    open("job templates: shared step types"),
		"DELETE " + jobTemplatesPath + "/{type}":                 adminOnly(access.ManageTemplates),
		"POST " + signalsPath:                                    inService(access.Announce, "open, unless a team claims the name's prefix (MAESTRO_SIGNAL_PREFIXES)"),
		"GET " + signalsPath + "/{name}/instances/{seq}":         open("signals are announcements to the whole stack"),
		"GET " + signalsPath + "/{name}/instances/{seq}/lineage": open("signals are announcements to the whole stack"),
	}
	maps.Copy(g, diffGuards())
	for _, action := range taskActions() {
		g["POST "+tasksPath+action] = inService("", "the task token is the capability: whoever holds it reports")
	}
	maps.Copy(g, backfillGuards())
	return g
}

// guarded wraps fn with pattern's guard. A pattern without a guard is a
// programming error: register panics, so no route is ever served
// unchecked.
func (s *server) guarded(pattern string, fn apiFunc) apiFunc {
	g, ok := s.guards[pattern]
	if !ok {
		panic(fmt.Sprintf("api: route %q has no guard (routeGuards)", pattern))
	}
	return func(w http.ResponseWriter, r *http.Request) error {
		if g.kind == guardOpen {
			return fn(w, r)
		}
		ctx, err := s.svc.Access.WithCaller(r.Context())
		if err != nil {
			return err
		}
		r = r.WithContext(ctx)
		switch g.kind {
		case guardWorkflow:
			wf := r.PathValue("id")
			if g.query != "" {
				wf = r.URL.Query().Get(g.query)
			}
			act := g.actionOf(r)
			if wf != "" && act != "" {
				if err := s.svc.Access.Authorize(ctx, wf, act); err != nil {
					return err
				}
			}
		case guardAdmin:
			if err := s.svc.Access.AuthorizeAdmin(ctx, g.action); err != nil {
				return err
			}
		}
		return fn(w, r)
	}
}

// authorizeNamed checks the caller's right on workflow wf, named by the
// body of a guardBody route, with the route's action. The handler calls it
// after parsing the body strictly and before anything else.
func (s *server) authorizeNamed(r *http.Request, wf string) error {
	g, ok := s.guards[r.Pattern]
	if !ok || g.kind != guardBody {
		return fmt.Errorf("api: %q is not a route whose body names its workflow", r.Pattern)
	}
	return s.svc.Access.Authorize(r.Context(), wf, g.action)
}
