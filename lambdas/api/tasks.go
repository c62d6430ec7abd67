package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/jsonnum"
	"github.com/maestro-serverless/maestro/orchestrator"
)

// tasksPath is the prefix of the task token endpoints. A token's holder
// reports on its step attempt with the token in the body,
//
//	POST /api/v3/tasks/success|failure|heartbeat  {"task_token": "...", ...}
//
// (the body form, as Step Functions' SendTaskSuccess takes it: a token in
// a URL ends up in API Gateway's X-Ray traces and in logs of proxies on
// the way), or in the path, POST /api/v3/tasks/{token}/success|failure|heartbeat
// (the path form). Both forms go through parseTaskReport: the same checks
// and the same answers; an error about the token names where it was,
// task_token or token.
const tasksPath = "/api/v3/tasks/"

// taskTokenField is the body field holding the token in the body form.
const taskTokenField = "task_token"

// taskActions are the reports a token's holder makes.
func taskActions() []string {
	return []string{orchestrator.TaskSuccess, orchestrator.TaskFailure, orchestrator.TaskHeartbeat}
}

// completeTaskInPath serves the path form: POST /api/v3/tasks/{token}/{action}.
func (s *server) completeTaskInPath(w http.ResponseWriter, r *http.Request) error {
	return s.reportTask(w, r, r.PathValue("action"), r.PathValue("token"), false)
}

// completeTaskInBody serves the body form: POST /api/v3/tasks/{action}
// with the token in task_token.
func (s *server) completeTaskInBody(action string) apiFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		return s.reportTask(w, r, action, "", true)
	}
}

// reportTask hands a task report to the service: its token is pathToken,
// or with inBody the body's task_token.
func (s *server) reportTask(w http.ResponseWriter, r *http.Request, action, pathToken string, inBody bool) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	token, c, err := parseTaskReport(action, pathToken, inBody, body)
	if err != nil {
		return err
	}
	view, err := s.svc.Actions.CompleteTask(r.Context(), token, c)
	return answer(w, view, err, "CompleteTask")
}

// parseTaskReport checks a task report strictly and returns its token and
// what it reports. The token is pathToken, or with inBody the body's
// task_token field, which is then required; either way it must be
// well-formed (orchestrator.WellFormedTaskToken). A success may carry
// "outputs" (an object of output params) and "message"; a failure "error"
// (USER_ERROR, PLATFORM_ERROR or FATAL_ERROR; USER_ERROR when absent) and
// "message"; a heartbeat nothing else. An empty body is an empty object.
// Every problem is reported at once, each naming its field.
func parseTaskReport(action, pathToken string, inBody bool, body []byte) (string, orchestrator.TaskCompletion, error) {
	c := orchestrator.TaskCompletion{Action: action}
	fields, err := optionalBody(body, "invalid task report")
	if err != nil {
		return "", c, err
	}
	token, tokenField, tokenSeen, tokenNotString := pathToken, "token", !inBody, false
	if inBody {
		tokenField = taskTokenField
	}
	var errs []string
	allowed := map[string]bool{}
	switch action {
	case orchestrator.TaskSuccess:
		allowed["outputs"], allowed["message"] = true, true
	case orchestrator.TaskFailure:
		allowed["error"], allowed["message"] = true, true
	}
	if inBody {
		allowed[taskTokenField] = true
	}
	for _, f := range fields {
		if !allowed[f.name] {
			errs = append(errs, fieldName(f.name)+": unknown field for a "+clip(action)+" report")
			continue
		}
		switch f.name {
		case taskTokenField:
			tokenSeen = true
			tokenNotString = json.Unmarshal(f.value, &token) != nil
		case "outputs":
			var out map[string]any
			if err := jsonnum.Decode(f.value, &out); err != nil || out == nil {
				errs = append(errs, "outputs: must be an object of output params")
				continue
			}
			c.Outputs = out
		case "message":
			errs = append(errs, stringField(f, &c.Message)...)
		case "error":
			var e string
			errs = append(errs, stringField(f, &e)...)
			c.Error = engine.Outcome(strings.ToUpper(e))
		}
	}
	switch {
	case !tokenSeen:
		errs = append(errs, tokenField+": is required")
	case tokenNotString:
		errs = append(errs, tokenField+": must be a string")
	case !orchestrator.WellFormedTaskToken(token):
		errs = append(errs, fmt.Sprintf("%s: must be the %d characters of base64url the step handed out, got %d characters",
			tokenField, orchestrator.TaskTokenLength, len(token)))
	}
	if len(errs) > 0 {
		return "", c, orchestrator.Invalid("invalid task report", errs...)
	}
	return token, c, nil
}
