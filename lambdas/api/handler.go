// Package api is the HTTP front door of the orchestrator: Maestro's REST
// endpoints (the subset this runtime serves) over net/http, and an adapter
// that runs the same handler behind an API Gateway REST API proxy
// integration.
//
// The handlers only parse requests, call the orchestrator's roles
// (Services) and write JSON. Every failure is answered as
//
//	{"status": <int>, "message": "...", "errors": ["path: rule", ...]}
//
// with the status of the orchestrator.Error behind it; errors of any other
// type become 500 "internal error" and their cause is logged, never sent.
package api

import (
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/maestro-serverless/maestro/logctx"
	"github.com/maestro-serverless/maestro/orchestrator"
	"github.com/maestro-serverless/maestro/ui"
)

// MaxBodyBytes is the largest request body the API reads: Maestro's
// WORKFLOW_CREATE_REQUEST_DATA_SIZE_LIMIT (256 KiB). Larger bodies are
// answered with 413.
const MaxBodyBytes = 256 << 10

// Options configures NewHandler.
type Options struct {
	// Logger receives one access log line per request and the causes of
	// 5xx answers. Request bodies and headers are never logged. Nil
	// discards everything.
	Logger *slog.Logger
	// ExtraRoutes, when set, registers more routes on the handler's mux
	// after the API's own ones (the local stack adds /local/... routes).
	// They get the same middleware and JSON 404/405 answers. A pattern
	// that conflicts with an API route makes NewHandler panic, as
	// http.ServeMux.Handle does.
	ExtraRoutes func(*http.ServeMux)
	// MemoryMB is the memory of the function serving the API: a request
	// that starts a run bills the run its invocation at it (see package
	// metering). 0 bills no invocation.
	MemoryMB int
}

// server holds what the route handlers share.
type server struct {
	svc Services
	log *slog.Logger
	// patterns are the routes register added, for the OpenAPI document.
	patterns []string
	// bodies are the routes whose request body is not JSON (routeBodies).
	bodies map[string]bodyKind
	// guards are the routes' authorization (routeGuards).
	guards map[string]guard
}

// NewHandler returns the API's http.Handler over svc. It serves every route
// of GET /api/v3/openapi.json (built from the router: routeSummaries), among
// them
//
//	GET  /health
//	POST /api/v3/workflows                  JSON definition -> {"workflow_definition": view}
//	POST /api/v3/workflows/yaml             YAML definition -> {"workflow_definition": view}
//	PUT  /api/v3/workflows/actions/validate (JSON; YAML with ?format=yaml or a YAML Content-Type) -> {"status":"valid"}
//	PUT  /api/v3/workflows/actions/validate/yaml
//	GET  /api/v3/workflows                                     ?cursor=&limit=1..100 (20): workflows in id order
//	GET  /api/v3/workflows/{id}/versions/{version}             version: active|latest|default|N
//	POST /api/v3/workflows/{id}/versions/{version}/actions/start  body: WorkflowStartRequest (see below), 200
//	POST /api/v3/workflows/{id}/versions/{version}/actions/start-batch  body: {"requests": [WorkflowStartRequest]}, 200
//	GET  /api/v3/workflows/{id}/instances                      ?cursor=&limit=1..100 (20)
//	GET  /api/v3/workflows/{id}/instances/{instanceId}
//	GET  /api/v3/workflows/{id}/instances/{instanceId}/runs/{runId}
//	GET  /api/v3/workflows/{id}/instances/{instanceId}/steps   -> [StepView]
//	GET  /api/v3/workflows/{id}/instances/{instanceId}/runs/{runId}/steps/{stepId}/attempts/{attempt}  attempt: N|latest
//
// Numeric path parameters must be positive int64s; ids in paths, queries
// and bodies ({id}, {stepId}, {name}, {tag}, workflow_id, step_id) must
// follow the model's id rules (400 naming the field otherwise). Unknown paths get a
// JSON 404, known paths with another method a JSON 405 with Allow. Bodies
// over MaxBodyBytes get 413. A request with a body (on any route, the
// ExtraRoutes' too) must declare it application/json, parameters such as
// charset allowed — the YAML routes a YAML type (application/yaml,
// application/x-yaml, text/yaml, text/x-yaml), PUT .../actions/validate
// either — or get 415: the types a browser may send across sites without
// a CORS preflight (text/plain, forms) are never taken. A request without
// a body needs no Content-Type. A start body is checked strictly: no unknown
// or duplicate fields, only MANUAL initiators, request_id a UUID,
// run_params at most 128 entries with no reserved names; an empty body is
// a manual start. A batch start holds 1 to 100 such requests, each with a
// request_id of its own. Every answer carries an X-Request-Id header.
//
// NewHandler panics if a service of svc is nil, since its routes could
// not be served.
func NewHandler(svc Services, opts Options) http.Handler {
	if svc.Definitions == nil || svc.Runs == nil || svc.Actions == nil || svc.Gates == nil || svc.Signals == nil || svc.Health == nil || svc.Access == nil {
		panic("api: NewHandler needs every service of Services")
	}
	logger := logctx.Wrap(opts.Logger)
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &server{svc: svc, log: logger, bodies: routeBodies(), guards: routeGuards()}

	mux := http.NewServeMux()
	s.register(mux)
	// The web UI (package ui): its page and assets, beside the API it calls.
	mux.Handle(ui.Prefix, ui.Handler())
	mux.Handle("GET "+strings.TrimSuffix(ui.Prefix, "/"), http.RedirectHandler(ui.Prefix, http.StatusMovedPermanently))
	if opts.ExtraRoutes != nil {
		opts.ExtraRoutes(mux)
	}

	// Outermost first: request id, access log, panic recovery, body
	// limit, then routing.
	var h http.Handler = &router{mux: mux, srv: s}
	h = s.limitBody(h)
	h = s.recoverPanics(h)
	h = s.accessLog(h)
	h = metered(h, opts.MemoryMB)
	h = s.requestID(h)
	return h
}

// workflowsPath is the prefix of Maestro's workflow endpoints.
const workflowsPath = "/api/v3/workflows"

// flattenPath is the prefix of Maestro's flatten views of foreach steps.
const flattenPath = "/api/v3/views/flatten"

// register adds the API's routes to mux.
func (s *server) register(mux *http.ServeMux) {
	route := func(pattern string, fn apiFunc) {
		s.patterns = append(s.patterns, pattern)
		mux.Handle(pattern, s.api(s.guarded(pattern, fn)))
	}
	route("GET /health", s.health)
	route("GET "+openAPIPath, s.openAPI)
	route("GET "+workflowsPath+"/instances/action-map", s.workflowActionMap)
	route("GET "+workflowsPath+"/steps/instances/action-map", s.stepActionMap)
	route("GET "+workflowsPath, s.listWorkflows)
	route("POST "+workflowsPath, s.createWorkflow(orchestrator.FormatJSON))
	route("POST "+workflowsPath+"/yaml", s.createWorkflow(orchestrator.FormatYAML))
	route("PUT "+workflowsPath+"/actions/validate", s.validateWorkflow(""))
	route("PUT "+workflowsPath+"/actions/validate/yaml", s.validateWorkflow(orchestrator.FormatYAML))
	route("GET "+workflowsPath+"/{id}/versions/{version}", s.getWorkflowVersion)
	route("POST "+workflowsPath+"/{id}/versions/{version}/actions/start", s.startWorkflow)
	route("POST "+workflowsPath+"/{id}/versions/{version}/actions/start-batch", s.startBatch)
	route("PUT "+workflowsPath+"/{id}/versions/{version}/actions/activate", s.activateVersion)
	route("PUT "+workflowsPath+"/{id}/actions/deactivate", s.deactivateWorkflow)
	route("PUT "+workflowsPath+"/{id}/actions/{action}", s.actOnWorkflow)
	route("POST "+workflowsPath+"/{id}/properties", s.updateProperties)
	route("GET "+workflowsPath+"/{id}/instances", s.listInstances)
	route("GET "+workflowsPath+"/{id}/instances/{instanceId}", s.getInstance)
	route("GET "+workflowsPath+"/{id}/instances/{instanceId}/runs/{runId}", s.getRun)
	route("GET "+workflowsPath+"/{id}/instances/{instanceId}/steps", s.listSteps)
	route("GET "+workflowsPath+"/{id}/instances/{instanceId}/runs/{runId}/steps/{stepId}/attempts/{attempt}", s.getStepAttempt)
	route("PUT "+workflowsPath+"/{id}/instances/{instanceId}/actions/{action}", s.actOnInstance)
	route("POST "+workflowsPath+"/{id}/instances/{instanceId}/actions/restart", s.restartInstance)
	route("PUT "+workflowsPath+"/{id}/instances/{instanceId}/runs/{runId}/actions/{action}", s.actOnInstance)
	route("PUT "+workflowsPath+"/{id}/instances/{instanceId}/steps/{stepId}/actions/{action}", s.actOnStep)
	route("POST "+workflowsPath+"/{id}/instances/{instanceId}/steps/{stepId}/actions/restart", s.restartStep)
	route("GET "+flattenPath+"/workflows/{id}/instances/{instanceId}/runs/{runId}/steps/{stepId}", s.flattenIterations)
	route("GET "+flattenPath+"/workflows/{id}/instances/{instanceId}/runs/{runId}/steps/{stepId}/iterations/{iterationId}", s.flattenIteration)
	route("GET "+flattenPath+"/workflows/{id}/instances/{instanceId}/runs/{runId}/steps/{stepId}/summary", s.flattenSummary)
	route("PUT /api/v3/output-data", s.putOutputData)
	route("POST "+tasksPath+"{token}/{action}", s.completeTaskInPath)
	for _, action := range taskActions() {
		route("POST "+tasksPath+action, s.completeTaskInBody(action))
	}
	route("DELETE "+workflowsPath+"/{id}", s.deleteWorkflow)
	gateAPI{s}.register(route)
	tagAPI{s}.register(route)
	diffAPI{s}.register(route)
	jobQueueAPI{s}.register(route)
	jobTemplateAPI{s}.register(route)
	signalAPI{s}.register(route)
	readAPI{s}.register(route)
	accessAPI{s}.register(route)
	backfillAPI{s}.register(route)
}

// router answers requests no route matches with JSON 404 and 405 bodies
// (http.ServeMux writes plain text), refuses a body whose Content-Type the
// route does not take (415, checkContentType), and passes the rest to the
// mux.
type router struct {
	mux *http.ServeMux
	srv *server
}

func (rt *router) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h, pattern := rt.mux.Handler(r)
	if pattern != "" {
		if err := checkContentType(r, rt.srv.bodies[pattern]); err != nil {
			rt.srv.fail(w, r, err)
			return
		}
		rt.mux.ServeHTTP(w, r)
		return
	}
	// No pattern: the mux's answer is its 404 or 405 handler. Run it into
	// a scratch writer to learn which, and the Allow header of a 405.
	probe := &probeWriter{header: http.Header{}}
	h.ServeHTTP(probe, r)
	if probe.status == http.StatusMethodNotAllowed {
		w.Header().Set("Allow", probe.header.Get("Allow"))
		rt.srv.fail(w, r, &orchestrator.Error{
			Status:  http.StatusMethodNotAllowed,
			Message: fmt.Sprintf("method %s is not allowed on %s", clip(r.Method), clip(r.URL.Path)),
		})
		return
	}
	rt.srv.fail(w, r, orchestrator.NotFound("no endpoint %s %s", clip(r.Method), clip(r.URL.Path)))
}

// probeWriter records the status and headers a handler writes and drops
// the body.
type probeWriter struct {
	header http.Header
	status int
}

func (p *probeWriter) Header() http.Header { return p.header }

func (p *probeWriter) WriteHeader(code int) {
	if p.status == 0 {
		p.status = code
	}
}

func (p *probeWriter) Write(b []byte) (int, error) {
	p.WriteHeader(http.StatusOK)
	return len(b), nil
}

// clip shortens user-supplied text echoed in messages.
func clip(s string) string {
	const limit = 200
	if len(s) <= limit {
		return s
	}
	return strings.ToValidUTF8(s[:limit], "") + "..."
}
