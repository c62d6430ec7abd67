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
	fields, err := optionalBody(body, "invalid restart request")
	if err != nil {
		return req, err
	}
	var errs []string
	for _, f := range fields {
		if isNull(f.value) {
			continue
		}
		switch f.name {
		case "restart_policy":
			var p string
			if err := json.Unmarshal(f.value, &p); err != nil {
				errs = append(errs, "restart_policy: must be a string")
				continue
			}
			switch strings.ToUpper(p) {
			case "RESTART_FROM_INCOMPLETE", "RESTART_FROM_BEGINNING":
				req.RestartPolicy = strings.ToUpper(p)
			default:
				errs = append(errs, fmt.Sprintf("restart_policy: %q is not RESTART_FROM_INCOMPLETE or RESTART_FROM_BEGINNING", p))
			}
		case "request_time", "request_id", "run_params":
			errs = append(errs, parseRunField(f, &req.RequestID, &req.RequestTime, &req.RunParams)...)
		default:
			errs = append(errs, fieldName(f.name)+": unknown field")
		}
	}
	if len(errs) > 0 {
		return orchestrator.RestartRequest{}, orchestrator.Invalid("invalid restart request", errs...)
	}
	return req, nil
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
	fields, err := optionalBody(body, "invalid step restart request")
	if err != nil {
		return req, err
	}
	var errs []string
	for _, f := range fields {
		if isNull(f.value) {
			continue
		}
		switch f.name {
		case "restart_policy":
			errs = append(errs, stringField(f, &req.RestartPolicy)...)
		case "upstream_restart_mode":
			errs = append(errs, stringField(f, &req.UpstreamRestartMode)...)
		case "request_time", "request_id":
			errs = append(errs, parseRunField(f, &req.RequestID, &req.RequestTime, nil)...)
		case "step_run_params":
			errs = append(errs, "step_run_params: not supported by this runtime yet (the step runs with its definition's params)")
		default:
			errs = append(errs, fieldName(f.name)+": unknown field")
		}
	}
	if len(errs) > 0 {
		return orchestrator.StepRestartRequest{}, orchestrator.Invalid("invalid step restart request", errs...)
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
