package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/jsonnum"
	"github.com/maestro-serverless/maestro/orchestrator"
)

// tasksPath is the prefix of the task token endpoints:
// POST /api/v3/tasks/{token}/success|failure|heartbeat.
const tasksPath = "/api/v3/tasks/"

func (s *server) completeTask(w http.ResponseWriter, r *http.Request) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	c, err := parseTaskCompletion(r.PathValue("action"), body)
	if err != nil {
		return err
	}
	view, err := s.svc.CompleteTask(r.Context(), r.PathValue("token"), c)
	return answer(w, view, err, "CompleteTask")
}

// parseTaskCompletion checks a task report's body strictly: a success may
// carry "outputs" (an object of output params) and "message"; a failure
// "error" (USER_ERROR, PLATFORM_ERROR or FATAL_ERROR; USER_ERROR when
// absent) and "message"; a heartbeat nothing. An empty body is an empty
// object.
func parseTaskCompletion(action string, body []byte) (orchestrator.TaskCompletion, error) {
	c := orchestrator.TaskCompletion{Action: action}
	if len(bytes.TrimSpace(body)) == 0 {
		return c, nil
	}
	fields, err := decodeObject(body)
	if err != nil {
		return c, orchestrator.Invalid("invalid task report", "request body: "+err.Error())
	}
	var errs []string
	allowed := map[string]bool{}
	switch action {
	case orchestrator.TaskSuccess:
		allowed["outputs"], allowed["message"] = true, true
	case orchestrator.TaskFailure:
		allowed["error"], allowed["message"] = true, true
	}
	for _, f := range fields {
		if !allowed[f.name] {
			errs = append(errs, fieldName(f.name)+": unknown field for a "+clip(action)+" report")
			continue
		}
		switch f.name {
		case "outputs":
			var out map[string]any
			if err := jsonnum.Decode(f.value, &out); err != nil || out == nil {
				errs = append(errs, "outputs: must be an object of output params")
				continue
			}
			c.Outputs = out
		case "message":
			var m string
			if err := json.Unmarshal(f.value, &m); err != nil {
				errs = append(errs, "message: must be a string")
				continue
			}
			c.Message = m
		case "error":
			var e string
			if err := json.Unmarshal(f.value, &e); err != nil {
				errs = append(errs, "error: must be a string")
				continue
			}
			c.Error = engine.Outcome(strings.ToUpper(e))
		}
	}
	if len(errs) > 0 {
		return c, orchestrator.Invalid("invalid task report", errs...)
	}
	return c, nil
}
