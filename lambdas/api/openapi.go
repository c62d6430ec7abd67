package api

import (
	"encoding/json"
	"maps"
	"net/http"
	"regexp"
	"sort"
	"strings"
)

// openAPIPath is where the API serves its OpenAPI 3.1 document.
const openAPIPath = "/api/v3/openapi.json"

// routeSummaries documents every route the API serves, by its pattern
// ("METHOD /path"): the OpenAPI document is built from the router's
// patterns and these, and a route without one fails the package's tests.
func routeSummaries() map[string]string {
	wf := workflowsPath
	summaries := map[string]string{
		"GET /health":                                                 "Readiness, the AWS endpoint and the resources in use",
		"GET " + openAPIPath:                                          "This OpenAPI 3.1 document",
		"GET " + wf + "/instances/action-map":                         "Maestro's table of the actions each workflow instance status allows",
		"GET " + wf + "/steps/instances/action-map":                   "Maestro's table of the actions each step status allows",
		"GET " + wf:                                                   "The stored workflows in id order: versions, active version, properties (cursor, limit; or first/last and cursor)",
		"POST " + wf:                                                  "Validate and store a new version of a workflow definition (JSON)",
		"POST " + wf + "/yaml":                                        "Validate and store a new version of a workflow definition (Maestro's YAML DSL, or YAML with the JSON structure)",
		"PUT " + wf + "/actions/validate":                             "Validate a workflow definition (JSON) without storing it",
		"PUT " + wf + "/actions/validate/yaml":                        "Validate a workflow definition (Maestro's YAML DSL, or YAML with the JSON structure) without storing it",
		"GET " + wf + "/{id}/versions/{version}":                      "A stored version (active, latest, default or a number)",
		"POST " + wf + "/{id}/versions/{version}/actions/start":       "Start an instance; request_id makes it idempotent",
		"POST " + wf + "/{id}/versions/{version}/actions/start-batch": "Start up to 100 instances, each request with its own request_id; each one's outcome in request order",
		"PUT " + wf + "/{id}/versions/{version}/actions/activate":     "Make a version the active one",
		"PUT " + wf + "/{id}/actions/deactivate":                      "Deactivate the workflow: starts of 'active' are refused",
		"PUT " + wf + "/{id}/actions/{action}":                        "Stop, kill or unblock every running or queued run of the workflow (202 with the count)",
		"POST " + wf + "/{id}/properties":                             "Change the properties every version shares",
		"POST " + wf + "/{id}/properties/tag":                         "Add a tag to workflow properties (replaces a tag of the same name)",
		"DELETE " + wf + "/{id}/properties/tag/{workflowTagName}":     "Delete a tag from workflow properties",
		"GET " + wf + "/{id}/instances":                               "The workflow's instances, newest first (cursor, limit, status; or first/last and cursor)",
		"GET " + wf + "/{id}/instances/{instanceId}":                  "An instance's latest run: status, step statuses, overview, timeline",
		"GET " + wf + "/{id}/instances/{instanceId}/runs/{runId}":     "One run of an instance (a number, or latest)",
		"GET " + wf + "/{id}/instances/{instanceId}/steps":            "The latest attempt of every step of the instance",
		"GET " + wf + "/{id}/instances/{instanceId}/runs/{runId}/steps/{stepId}/attempts/{attempt}":                          "One step attempt (a number, or latest)",
		"PUT " + wf + "/{id}/instances/{instanceId}/actions/{action}":                                                        "Stop, kill or unblock the instance's latest run",
		"POST " + wf + "/{id}/instances/{instanceId}/actions/restart":                                                        "A new run of an ended instance (restart_policy RESTART_FROM_INCOMPLETE or RESTART_FROM_BEGINNING, run_params); an iteration's restarts its loop's run",
		"PUT " + wf + "/{id}/instances/{instanceId}/runs/{runId}/actions/{action}":                                           "Stop, kill or unblock one run",
		"PUT " + wf + "/{id}/instances/{instanceId}/steps/{stepId}/actions/{action}":                                         "Stop, kill, skip or bypass a step's current attempt",
		"POST " + wf + "/{id}/instances/{instanceId}/steps/{stepId}/actions/restart":                                         "Restart a step that ended, and what is downstream of it: a new attempt in a running run, else a new run (through the loop's run for a step of an iteration); step_run_params, upstream_restart_mode RESTART_FROM_STEP or RESTART_FROM_INLINE_ROOT",
		"GET " + flattenPath + "/workflows/{id}/instances/{instanceId}/runs/{runId}/steps/{stepId}":                          "A foreach step's iterations, flattened",
		"GET " + flattenPath + "/workflows/{id}/instances/{instanceId}/runs/{runId}/steps/{stepId}/iterations/{iterationId}": "One iteration of a foreach step, flattened",
		"GET " + flattenPath + "/workflows/{id}/instances/{instanceId}/runs/{runId}/steps/{stepId}/summary":                  "A foreach step's iterations counted by status",
		"PUT /api/v3/output-data":                          "Output params and dynamic signal outputs (artifacts.maestro_dynamic_output) an external job reports for a running step attempt",
		"POST " + tasksPath + "{token}/{action}":           "Report a task token's step attempt, the token in the path: success (outputs, message), failure (error, message) or heartbeat",
		"POST " + tasksPath + "success":                    "End a task token's step attempt successfully: task_token, outputs, message",
		"POST " + tasksPath + "failure":                    "Fail a task token's step attempt (retried per its retry policy): task_token, error, message",
		"POST " + tasksPath + "heartbeat":                  "Say a task token's step attempt is still at work: task_token",
		"DELETE " + wf + "/{id}":                           "Delete a workflow without running or queued instances (202; history purged in the background)",
		"POST " + breakpointsPath:                          "Add a step breakpoint",
		"GET " + breakpointsPath:                           "A step's breakpoints (workflowId, stepId)",
		"DELETE " + breakpointsPath:                        "Remove a step's breakpoints and, by default, resume what they paused",
		"GET " + breakpointsPath + "/paused-step-attempts": "The step attempts a step's breakpoints hold",
		"PUT " + breakpointsPath + "/{id}/instances/{instanceId}/runs/{runId}/steps/{stepId}/attempts/{attempt}/actions/resume": "Resume one paused step attempt",
		"POST " + tagPermitsPath:                                 "Create or change a tag permit (max_allowed)",
		"GET " + tagPermitsPath + "/{tag}":                       "A tag permit and its use",
		"DELETE " + tagPermitsPath + "/{tag}":                    "Remove a tag permit; the steps waiting on it go on",
		"POST " + jobQueuesPath:                                  "Create or change a job queue (cpu, memory, gpu, aging_seconds)",
		"GET " + jobQueuesPath + "/{name}":                       "A job queue: the steps running in it, and those waiting in admission order",
		"DELETE " + jobQueuesPath + "/{name}":                    "Remove a job queue; the steps waiting in it fail",
		"POST " + signalsPath:                                    "Announce a signal",
		"GET " + signalsPath + "/{name}/instances/{seq}":         "A signal instance (a sequence number, or latest)",
		"GET " + signalsPath + "/{name}/instances/{seq}/lineage": "Who published a signal instance, what it triggered and unblocked",
		"POST " + jobTemplatesPath:                               "Create or replace a job template version (JSON); its params merge into the steps of its step type and sub_type as they start",
		"POST " + jobTemplatesPath + "/yaml":                     "Create or replace a job template version (YAML with the JSON structure)",
		"GET " + jobTemplatesPath:                                "The job templates of a version (default \"default\")",
		"GET " + jobTemplatesPath + "/{type}":                    "A job template by job type (a step's sub_type) and version (default \"default\")",
		"DELETE " + jobTemplatesPath + "/{type}":                 "Remove a job type's template version, or every version without version; steps that start later run without it",
	}
	maps.Copy(summaries, readSummaries())
	maps.Copy(summaries, accessSummaries())
	maps.Copy(summaries, diffSummaries())
	maps.Copy(summaries, backfillSummaries())
	return summaries
}

// queryParams are the query parameters routes read.
func queryParams() map[string][]string {
	params := map[string][]string{
		"GET " + workflowsPath + "/{id}/instances":         {"cursor", "limit", "status", "first", "last", "aggregated"},
		"GET " + workflowsPath:                             {"cursor", "limit", "first", "last"},
		"GET " + breakpointsPath:                           {"workflowId", "stepId"},
		"DELETE " + breakpointsPath:                        {"workflowId", "stepId", "resume"},
		"GET " + breakpointsPath + "/paused-step-attempts": {"workflowId", "stepId"},
		"GET " + jobTemplatesPath:                          {"version"},
		"GET " + jobTemplatesPath + "/{type}":              {"version"},
		"DELETE " + jobTemplatesPath + "/{type}":           {"version"},
	}
	maps.Copy(params, readQueryParams())
	return params
}

var pathParam = regexp.MustCompile(`\{([A-Za-z]+)\}`)

// openAPIDocument is the OpenAPI 3.1 document of the routes (patterns).
func openAPIDocument(patterns []string) map[string]any {
	docs, queries, bodies := routeSummaries(), queryParams(), routeBodies()
	paths := map[string]map[string]any{}
	sorted := append([]string(nil), patterns...)
	sort.Strings(sorted)
	errorResponse := map[string]any{"description": "The request failed: a JSON body naming the field and the rule (4xx) or an internal error (5xx)",
		"content": map[string]any{"application/json": map[string]any{"schema": map[string]any{"$ref": "#/components/schemas/Error"}}}}
	for _, p := range sorted {
		method, path, _ := strings.Cut(p, " ")
		op := map[string]any{
			"operationId": operationID(method, path),
			"summary":     docs[p],
			"responses": map[string]any{
				"2XX":     map[string]any{"description": "Success", "content": map[string]any{"application/json": map[string]any{"schema": map[string]any{"type": "object"}}}},
				"4XX":     errorResponse,
				"default": errorResponse,
			},
		}
		var params []any
		for _, m := range pathParam.FindAllStringSubmatch(path, -1) {
			params = append(params, map[string]any{"name": m[1], "in": "path", "required": true, "schema": map[string]any{"type": "string"}})
		}
		for _, q := range queries[p] {
			params = append(params, map[string]any{"name": q, "in": "query", "required": false, "schema": map[string]any{"type": "string"}})
		}
		if len(params) > 0 {
			op["parameters"] = params
		}
		if method == http.MethodPost || method == http.MethodPut {
			content := map[string]any{}
			for _, t := range bodies[p].mediaTypes() {
				schema := map[string]any{"type": "object"}
				if isYAML(t) {
					schema = map[string]any{"type": "string"}
				}
				content[t] = map[string]any{"schema": schema}
			}
			op["requestBody"] = map[string]any{"required": false, "content": content}
		}
		if paths[path] == nil {
			paths[path] = map[string]any{}
		}
		paths[path][strings.ToLower(method)] = op
	}
	return map[string]any{
		"openapi": "3.1.0",
		"info": map[string]any{
			"title":   "Maestro (serverless) API",
			"version": "3",
			"description": "Netflix Maestro's API paths and field names, served by a serverless runtime on AWS. " +
				"In AWS every request is SigV4-signed (execute-api); the local stack takes plain HTTP.",
		},
		"paths": paths,
		"components": map[string]any{"schemas": map[string]any{"Error": map[string]any{
			"type":     "object",
			"required": []string{"status", "message"},
			"properties": map[string]any{
				"status":  map[string]any{"type": "integer"},
				"message": map[string]any{"type": "string"},
				"errors":  map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
			},
		}}},
	}
}

// operationID names an operation after its method and path: GET
// /api/v3/workflows/{id} -> getWorkflowsId.
func operationID(method, path string) string {
	var b strings.Builder
	b.WriteString(strings.ToLower(method))
	for _, part := range strings.FieldsFunc(strings.TrimPrefix(path, "/api/v3"), func(r rune) bool {
		return r == '/' || r == '{' || r == '}' || r == '-' || r == '.' || r == '_'
	}) {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}

func (s *server) openAPI(w http.ResponseWriter, _ *http.Request) error {
	doc, err := json.Marshal(openAPIDocument(s.patterns))
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	_, err = w.Write(doc)
	return err
}
