package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/jsonnum"
	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/orchestrator"
	"github.com/maestro-serverless/maestro/signals"
)

// parseOutputData checks a PUT /api/v3/output-data body strictly. The
// attempt is addressed by workflow_id, workflow_instance_id, step_id and,
// optionally, workflow_run_id and step_attempt_id (0 or absent: the latest).
// Each param is Maestro's shape: an object with "evaluated_result" or
// "value" (and an optional "type"). "artifacts" may hold Maestro's
// maestro_dynamic_output artifact: signals the attempt announces when it
// succeeds. A request needs params, artifacts or both.
func parseOutputData(body []byte) (orchestrator.OutputData, error) {
	var od orchestrator.OutputData
	fields, err := requiredBody(body, "invalid output data")
	if err != nil {
		return od, err
	}
	var errs []string
	positive := func(f rawField, dst *int64, optional bool) {
		n, err := strconv.ParseInt(string(bytes.TrimSpace(f.value)), 10, 64)
		if err != nil || n < 0 || (n == 0 && !optional) {
			rule := "must be a positive integer"
			if optional {
				rule = "must be a non-negative integer (0: the latest)"
			}
			errs = append(errs, f.name+": "+rule)
			return
		}
		*dst = n
	}
	for _, f := range fields {
		switch f.name {
		case "workflow_id":
			errs = append(errs, idField(f, &od.WorkflowID, model.CheckWorkflowID)...)
		case "step_id":
			errs = append(errs, idField(f, &od.StepID, model.CheckStepID)...)
		case "workflow_instance_id":
			positive(f, &od.InstanceID, false)
		case "workflow_run_id":
			positive(f, &od.RunID, true)
		case "step_attempt_id":
			positive(f, &od.Attempt, true)
		case "external_job_type":
			errs = append(errs, requiredString(f, &od.ExternalJobType)...)
		case "external_job_id":
			errs = append(errs, requiredString(f, &od.ExternalJobID)...)
		case "created_time":
			var t int64
			if err := json.Unmarshal(f.value, &t); err != nil || t < 0 {
				errs = append(errs, "created_time: must be a non-negative integer (epoch milliseconds)")
			}
		case "params":
			params, perrs := parseOutputParams(f.value)
			errs = append(errs, perrs...)
			od.Params = params
		case "artifacts":
			sigs, aerrs := parseOutputArtifacts(f.value)
			errs = append(errs, aerrs...)
			od.Signals = sigs
		default:
			errs = append(errs, fieldName(f.name)+": unknown field")
		}
	}
	errs = append(errs, missingFields(fields, "workflow_id", "workflow_instance_id", "step_id")...)
	if !slices.ContainsFunc(fields, func(f rawField) bool { return f.name == "params" || f.name == "artifacts" }) {
		errs = append(errs, "params: is required (or artifacts)")
	}
	if len(errs) > 0 {
		return orchestrator.OutputData{}, invalidFields("invalid output data", errs)
	}
	return od, nil
}

// parseOutputArtifacts reads {"maestro_dynamic_output": {...}}, the only
// artifact output data may carry here.
func parseOutputArtifacts(raw json.RawMessage) ([]engine.DynamicSignal, []string) {
	fields, err := decodeObject(raw)
	if err != nil {
		return nil, []string{"artifacts: " + err.Error()}
	}
	var out []engine.DynamicSignal
	var errs []string
	for _, f := range fields {
		if f.name != signals.DynamicOutputKey {
			errs = append(errs, "artifacts."+fieldName(f.name)+": not supported by this runtime (output data carries only "+signals.DynamicOutputKey+")")
			continue
		}
		sigs, problems := orchestrator.DynamicSignals(f.value, "artifacts."+signals.DynamicOutputKey)
		errs = append(errs, problems...)
		out = sigs
	}
	return out, errs
}

// parseOutputParams reads {name: {"evaluated_result"|"value": v, "type"?}}.
func parseOutputParams(raw json.RawMessage) (map[string]any, []string) {
	fields, err := decodeObject(raw)
	if err != nil {
		return nil, []string{"params: " + err.Error()}
	}
	if len(fields) > maxRunParams {
		return nil, []string{fmt.Sprintf("params: at most %d params, got %d", maxRunParams, len(fields))}
	}
	out := make(map[string]any, len(fields))
	var errs []string
	for _, f := range fields {
		path := "params." + fieldName(f.name)
		p, err := decodeObject(f.value)
		if err != nil {
			errs = append(errs, path+": must be an object with evaluated_result or value")
			continue
		}
		var val json.RawMessage
		for _, m := range p {
			switch m.name {
			case "evaluated_result", "value":
				if val == nil || m.name == "evaluated_result" {
					val = m.value
				}
			case "type", "mode", "tags", "validator", "meta":
			default:
				errs = append(errs, fmt.Sprintf("%s.%s: unknown field", path, fieldName(m.name)))
			}
		}
		if val == nil || isNull(val) {
			errs = append(errs, path+": needs evaluated_result or value")
			continue
		}
		var v any
		if err := jsonnum.Decode(val, &v); err != nil {
			errs = append(errs, path+": "+err.Error())
			continue
		}
		out[f.name] = v
	}
	return out, errs
}

func (s *server) putOutputData(w http.ResponseWriter, r *http.Request) error {
	od, err := readRequest(r, parseOutputData)
	if err != nil {
		return err
	}
	if err := s.authorizeNamed(r, od.WorkflowID); err != nil {
		return err
	}
	res, err := s.svc.Actions.PutOutputData(r.Context(), od)
	return answer(w, res, err, "PutOutputData")
}
