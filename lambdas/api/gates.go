package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/orchestrator"
)

// gateAPI serves the breakpoint and tag-permit routes; its handlers reach the
// server through the embedded *server.
type gateAPI struct{ *server }

// Paths of the breakpoint and tag-permit endpoints.
const (
	breakpointsPath = workflowsPath + "/steps/breakpoints"
	tagPermitsPath  = "/api/v3/tag-permits"
)

// registerGates adds the breakpoint and tag-permit routes.
func (s gateAPI) register(route func(string, apiFunc)) {
	route("POST "+breakpointsPath, s.addBreakpoint)
	route("GET "+breakpointsPath, workflowGates(s.server, GateService.ListBreakpoints, func(l []orchestrator.Breakpoint) any {
		return breakpointList{Breakpoints: l}
	}))
	route("DELETE "+breakpointsPath, s.removeBreakpoints)
	route("GET "+breakpointsPath+"/paused-step-attempts", workflowGates(s.server, GateService.PausedAttempts, func(l []orchestrator.PausedAttempt) any {
		return pausedList{Attempts: l}
	}))
	route("PUT "+breakpointsPath+"/{id}/instances/{instanceId}/runs/{runId}/steps/{stepId}/attempts/{attempt}/actions/resume", s.resumeAttempt)
	route("POST "+tagPermitsPath, s.putTagPermit)
	route("GET "+tagPermitsPath+"/{tag}", gateByName(s.server, "tag", "GetTagPermit", GateService.GetTagPermit))
	route("DELETE "+tagPermitsPath+"/{tag}", gateByName(s.server, "tag", "DeleteTagPermit", GateService.DeleteTagPermit))
}

// parseBreakpoint checks a StepBreakpointCreateRequest strictly:
// workflow_id and step_id are required strings, the match fields are
// non-negative integers (0 or absent matches all), nothing else is allowed.
func parseBreakpoint(body []byte) (orchestrator.Breakpoint, error) {
	var b orchestrator.Breakpoint
	fields, err := requiredBody(body, "invalid breakpoint")
	if err != nil {
		return b, err
	}
	var errs []string
	for _, f := range fields {
		switch f.name {
		case "workflow_id":
			errs = append(errs, idField(f, &b.WorkflowID, model.CheckWorkflowID)...)
		case "step_id":
			errs = append(errs, idField(f, &b.StepID, model.CheckStepID)...)
		case "workflow_version":
			errs = append(errs, matchNumber(f, &b.Version)...)
		case "workflow_instance_id":
			errs = append(errs, matchNumber(f, &b.Instance)...)
		case "workflow_run":
			errs = append(errs, matchNumber(f, &b.Run)...)
		case "step_attempt_id":
			errs = append(errs, matchNumber(f, &b.Attempt)...)
		default:
			errs = append(errs, fmt.Sprintf("%s: unknown field", fieldName(f.name)))
		}
	}
	errs = append(errs, missingFields(fields, "workflow_id", "step_id")...)
	if len(errs) > 0 {
		return b, orchestrator.Invalid("invalid breakpoint", errs...)
	}
	return b, nil
}

// missingFields lists, as problems, the required fields a body does not
// have.
func missingFields(fields []rawField, required ...string) []string {
	var errs []string
	for _, name := range required {
		if !slices.ContainsFunc(fields, func(f rawField) bool { return f.name == name }) {
			errs = append(errs, name+": is required")
		}
	}
	return errs
}

func requiredString(f rawField, dst *string) []string {
	var v string
	if err := json.Unmarshal(f.value, &v); err != nil || isNull(f.value) {
		return []string{f.name + ": must be a string"}
	}
	if strings.TrimSpace(v) == "" {
		return []string{f.name + ": must not be empty"}
	}
	*dst = v
	return nil
}

// stringField reads an optional string body field into dst (null leaves
// it as it is); the problem found, if any.
func stringField(f rawField, dst *string) []string {
	if err := json.Unmarshal(f.value, dst); err != nil {
		return []string{f.name + ": must be a string"}
	}
	return nil
}

func matchNumber(f rawField, dst *int64) []string {
	if isNull(f.value) {
		return nil
	}
	n, err := strconv.ParseInt(string(bytes.TrimSpace(f.value)), 10, 64)
	if err != nil || n < 0 {
		return []string{f.name + ": must be a non-negative integer (0 matches all)"}
	}
	*dst = n
	return nil
}

func (s gateAPI) addBreakpoint(w http.ResponseWriter, r *http.Request) error {
	b, err := readRequest(r, parseBreakpoint)
	if err != nil {
		return err
	}
	if err := s.authorizeNamed(r, b.WorkflowID); err != nil {
		return err
	}
	view, err := s.svc.Gates.AddBreakpoint(r.Context(), b)
	return answer(w, view, err, "AddBreakpoint")
}

// workflowQuery reads the required workflowId query parameter and the
// optional stepId.
func workflowQuery(r *http.Request) (wf, step string, err error) {
	q := r.URL.Query()
	wf, step = q.Get("workflowId"), q.Get("stepId")
	if wf == "" {
		return "", "", invalidParam("workflowId", "is required")
	}
	if err := model.CheckWorkflowID(wf); err != nil {
		return "", "", invalidParam("workflowId", err.Error())
	}
	if step != "" {
		if err := model.CheckStepID(step); err != nil {
			return "", "", invalidParam("stepId", err.Error())
		}
	}
	return wf, step, nil
}

// breakpointList is the body of GET .../steps/breakpoints.
type breakpointList struct {
	Breakpoints []orchestrator.Breakpoint `json:"breakpoints"`
}

// workflowGates serves a GET of what list, a GateService method, returns
// for the workflowId and stepId the query names (see workflowQuery): the
// list, never null, in the body that body makes of it.
func workflowGates[T any](s *server, list func(GateService, context.Context, string, string) ([]T, error), body func([]T) any) apiFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		wf, step, err := workflowQuery(r)
		if err != nil {
			return err
		}
		l, err := list(s.svc.Gates, r.Context(), wf, step)
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, body(nonNil(l)))
	}
}

// removeResponse is the body of DELETE .../steps/breakpoints.
type removeResponse struct {
	WorkflowID string `json:"workflow_id"`
	StepID     string `json:"step_id"`
	Resumed    int    `json:"resumed_step_attempts"`
}

func (s gateAPI) removeBreakpoints(w http.ResponseWriter, r *http.Request) error {
	wf, step, err := workflowQuery(r)
	if err != nil {
		return err
	}
	if step == "" {
		return invalidParam("stepId", "is required")
	}
	resume := true
	if raw := r.URL.Query().Get("resume"); raw != "" {
		if resume, err = strconv.ParseBool(raw); err != nil {
			return invalidParam("resume", "must be true or false")
		}
	}
	n, err := s.svc.Gates.RemoveBreakpoints(r.Context(), wf, step, resume)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, removeResponse{WorkflowID: wf, StepID: step, Resumed: n})
}

// pausedList is the body of GET .../breakpoints/paused-step-attempts.
type pausedList struct {
	Attempts []orchestrator.PausedAttempt `json:"paused_step_attempts"`
}

func (s gateAPI) resumeAttempt(w http.ResponseWriter, r *http.Request) error {
	inst, run, err := instanceAndRun(r)
	if err != nil {
		return err
	}
	attempt, err := positiveInt(r, "attempt")
	if err != nil {
		return err
	}
	view, err := s.svc.Actions.ResumeAttempt(r.Context(), r.PathValue("id"), inst, run, r.PathValue("stepId"), attempt)
	return answer(w, view, err, "ResumeAttempt")
}

// maxTagLength bounds a tag permit's tag: the limit of every tag name
// (Maestro's name length limit), so any runtime or step tag can have one.
const maxTagLength = model.TagNameLengthLimit

func (s gateAPI) putTagPermit(w http.ResponseWriter, r *http.Request) error {
	p, err := readRequest(r, parseTagPermitRequest)
	if err != nil {
		return err
	}
	view, err := s.svc.Gates.PutTagPermitInfo(r.Context(), p.tag, p.max, p.extra)
	return answer(w, view, err, "PutTagPermitInfo")
}

// gateByName serves a route that answers what call, the GateService
// method op, returns for the path parameter param (a tag, a queue's name).
func gateByName[V any](s *server, param, op string, call func(GateService, context.Context, string) (*V, error)) apiFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		view, err := call(s.svc.Gates, r.Context(), r.PathValue(param))
		return answer(w, view, err, op)
	}
}
