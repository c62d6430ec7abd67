package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/maestro-serverless/maestro/orchestrator"
)

// parseRestartRequest checks a WorkflowInstanceRestartRequest body strictly,
// as parseStartRequest does a start body; an empty body restarts from the
// incomplete steps.
func parseRestartRequest(body []byte) (orchestrator.RestartRequest, error) {
	var req orchestrator.RestartRequest
	err := parseRestartBody(body, "invalid restart request", func(f rawField) ([]string, bool) {
		switch f.name {
		case "restart_policy":
			return restartPolicy(f, &req.RestartPolicy), true
		case "request_time", "request_id", "run_params":
			return parseRunField(f, &req.RequestID, &req.RequestTime, &req.RunParams), true
		}
		return nil, false
	})
	if err != nil {
		return orchestrator.RestartRequest{}, err
	}
	return req, nil
}

// restartPolicy reads restart_policy, RESTART_FROM_INCOMPLETE or
// RESTART_FROM_BEGINNING in any case, into dst in upper case; the problem
// found, if any.
func restartPolicy(f rawField, dst *string) []string {
	var p string
	if err := json.Unmarshal(f.value, &p); err != nil {
		return []string{"restart_policy: must be a string"}
	}
	switch strings.ToUpper(p) {
	case "RESTART_FROM_INCOMPLETE", "RESTART_FROM_BEGINNING":
		*dst = strings.ToUpper(p)
		return nil
	}
	return []string{fmt.Sprintf("restart_policy: %q is not RESTART_FROM_INCOMPLETE or RESTART_FROM_BEGINNING", p)}
}

// parseRestartBody reads a restart body, which may be left out and whose
// null members stand for absent ones: it hands each other member to field,
// which reads it into the request and returns its problems, or known false
// for a name the request does not have (an unknown field). The problems
// found are the 400 answer what.
func parseRestartBody(body []byte, what string, field func(f rawField) (problems []string, known bool)) error {
	fields, err := optionalBody(body, what)
	if err != nil {
		return err
	}
	var errs []string
	for _, f := range fields {
		if isNull(f.value) {
			continue
		}
		problems, known := field(f)
		if !known {
			problems = []string{fieldName(f.name) + ": unknown field"}
		}
		errs = append(errs, problems...)
	}
	if len(errs) > 0 {
		return orchestrator.Invalid(what, errs...)
	}
	return nil
}

// restartInstance serves POST .../instances/{instanceId}/actions/restart.
func (s *server) restartInstance(w http.ResponseWriter, r *http.Request) error {
	instanceID, req, err := restartInput(r, parseRestartRequest)
	if err != nil {
		return err
	}
	view, err := s.svc.Actions.RestartInstance(r.Context(), r.PathValue("id"), instanceID, req)
	return answer(w, view, err, "RestartInstance")
}

// restartInput reads the {instanceId} path parameter and a restart body.
func restartInput[T any](r *http.Request, parse func([]byte) (T, error)) (int64, T, error) {
	var zero T
	instanceID, err := positiveInt(r, "instanceId")
	if err != nil {
		return 0, zero, err
	}
	req, err := readRequest(r, parse)
	if err != nil {
		return 0, zero, err
	}
	return instanceID, req, nil
}

// parseStepRestartRequest checks a StepInstanceRestartRequest body strictly;
// an empty body restarts from the step.
func parseStepRestartRequest(body []byte) (orchestrator.StepRestartRequest, error) {
	var req orchestrator.StepRestartRequest
	err := parseRestartBody(body, "invalid step restart request", func(f rawField) ([]string, bool) {
		switch f.name {
		case "restart_policy":
			return stringField(f, &req.RestartPolicy), true
		case "upstream_restart_mode":
			return stringField(f, &req.UpstreamRestartMode), true
		case "request_time", "request_id":
			return parseRunField(f, &req.RequestID, &req.RequestTime, nil), true
		case "step_run_params":
			return stepRunParams(f, &req.StepRunParams), true
		}
		return nil, false
	})
	if err != nil {
		return orchestrator.StepRestartRequest{}, err
	}
	return req, nil
}

// restartStep serves POST .../instances/{instanceId}/steps/{stepId}/actions/restart.
func (s *server) restartStep(w http.ResponseWriter, r *http.Request) error {
	instanceID, req, err := restartInput(r, parseStepRestartRequest)
	if err != nil {
		return err
	}
	view, err := s.svc.Actions.RestartStep(r.Context(), r.PathValue("id"), instanceID, r.PathValue("stepId"), req)
	return answer(w, view, err, "RestartStep")
}

// stepRunParams reads step_run_params, an object of param definitions
// checked as run_params are (count, reserved names; the service checks
// the rest), into dst.
func stepRunParams(f rawField, dst *map[string]json.RawMessage) []string {
	params, errs := parseRunParams(f.value)
	for i, e := range errs {
		errs[i] = "step_" + e
	}
	*dst = params
	return errs
}
