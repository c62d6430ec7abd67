package api

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/orchestrator"
)

// apiFunc is a route handler: it writes a successful answer itself and
// returns the error to answer otherwise.
type apiFunc func(w http.ResponseWriter, r *http.Request) error

// api turns an apiFunc into an http.Handler that answers its errors. Path
// parameters naming stored things are checked first (checkPathIDs).
func (s *server) api(fn apiFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err := checkPathIDs(r)
		if err == nil {
			err = fn(w, r)
		}
		if err != nil {
			s.fail(w, r, err)
		}
	})
}

func (s *server) health(w http.ResponseWriter, r *http.Request) error {
	view, err := s.svc.Health.Health(r.Context())
	return answer(w, view, err, "Health")
}

// definitionResponse is Maestro's wrapper around a stored definition.
type definitionResponse struct {
	WorkflowDefinition *orchestrator.DefinitionView `json:"workflow_definition"`
}

// answerDefinition is answer for a service call that returns a stored
// definition: the view goes in Maestro's wrapper.
func answerDefinition(w http.ResponseWriter, view *orchestrator.DefinitionView, err error, op string) error {
	if err != nil {
		return err
	}
	if err := present(view, op); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, definitionResponse{WorkflowDefinition: view})
}

func (s *server) createWorkflow(f orchestrator.Format) apiFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		body, err := readBody(r)
		if err != nil {
			return err
		}
		if len(body) == 0 {
			return orchestrator.Invalid("invalid workflow definition", "request body: must not be empty")
		}
		view, err := s.svc.Definitions.CreateWorkflow(r.Context(), body, f)
		return answerDefinition(w, view, err, "CreateWorkflow")
	}
}

// validResponse is the body of a successful validation.
type validResponse struct {
	Status string `json:"status"`
}

// validateWorkflow checks a definition. A fixed format wins; with none
// the format comes from ?format= or else the Content-Type (YAML media
// types mean YAML, anything else JSON).
func (s *server) validateWorkflow(fixed orchestrator.Format) apiFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		f := fixed
		if f == "" {
			var err error
			if f, err = requestFormat(r); err != nil {
				return err
			}
		}
		body, err := readBody(r)
		if err != nil {
			return err
		}
		if len(body) == 0 {
			return orchestrator.Invalid("invalid workflow definition", "request body: must not be empty")
		}
		if err := s.svc.Definitions.ValidateWorkflow(r.Context(), body, f); err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, validResponse{Status: "valid"})
	}
}

func (s *server) getWorkflowVersion(w http.ResponseWriter, r *http.Request) error {
	version, err := versionSelector(r)
	if err != nil {
		return err
	}
	view, err := s.svc.Definitions.GetWorkflowVersion(r.Context(), r.PathValue("id"), version)
	return answer(w, view, err, "GetWorkflowVersion")
}

func (s *server) startWorkflow(w http.ResponseWriter, r *http.Request) error {
	version, err := versionSelector(r)
	if err != nil {
		return err
	}
	req, err := readRequest(r, parseStartRequest)
	if err != nil {
		return err
	}
	resp, err := s.svc.Runs.StartWorkflow(r.Context(), r.PathValue("id"), version, req)
	return answer(w, resp, err, "StartWorkflow")
}

// startBatch starts a run for each request of a batch; the answer has
// each one's outcome (orchestrator.BatchStartResult), 200 once the batch
// passed its checks.
func (s *server) startBatch(w http.ResponseWriter, r *http.Request) error {
	version, err := versionSelector(r)
	if err != nil {
		return err
	}
	reqs, err := readRequest(r, parseStartBatch)
	if err != nil {
		return err
	}
	res, err := s.svc.Runs.StartBatch(r.Context(), r.PathValue("id"), version, reqs)
	return answer(w, res, err, "StartBatch")
}

func (s *server) listWorkflows(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	if pagedQuery(q) {
		return readAPI{s}.listWorkflowPage(w, r)
	}
	limit, err := pageLimit(q.Get("limit"))
	if err != nil {
		return err
	}
	list, err := s.svc.Definitions.ListWorkflows(r.Context(), q.Get("cursor"), limit)
	return answer(w, list, err, "ListWorkflows")
}

func (s *server) listInstances(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	if pagedQuery(q) {
		return readAPI{s}.listInstancePage(w, r)
	}
	limit, err := pageLimit(q.Get("limit"))
	if err != nil {
		return err
	}
	list, err := s.svc.Runs.ListInstances(r.Context(), r.PathValue("id"), q.Get("status"), q.Get("cursor"), limit)
	if err != nil {
		return err
	}
	if err := present(list, "ListInstances"); err != nil {
		return err
	}
	page := *list
	page.Instances = nonNil(page.Instances)
	return writeJSON(w, http.StatusOK, page)
}

func (s *server) getInstance(w http.ResponseWriter, r *http.Request) error {
	instanceID, err := positiveInt(r, "instanceId")
	if err != nil {
		return err
	}
	view, err := s.svc.Runs.GetInstance(r.Context(), r.PathValue("id"), instanceID)
	return answer(w, view, err, "GetInstance")
}

func (s *server) getRun(w http.ResponseWriter, r *http.Request) error {
	if strings.EqualFold(r.PathValue("runId"), "latest") {
		// Maestro's run selector: the latest run is the instance's view.
		return s.getInstance(w, r)
	}
	instanceID, runID, err := instanceAndRun(r)
	if err != nil {
		return err
	}
	view, err := s.svc.Runs.GetRun(r.Context(), r.PathValue("id"), instanceID, runID)
	return answer(w, view, err, "GetRun")
}

func (s *server) listSteps(w http.ResponseWriter, r *http.Request) error {
	instanceID, err := positiveInt(r, "instanceId")
	if err != nil {
		return err
	}
	steps, err := s.svc.Runs.ListSteps(r.Context(), r.PathValue("id"), instanceID)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, nonNil(steps))
}

func (s *server) getStepAttempt(w http.ResponseWriter, r *http.Request) error {
	instanceID, runID, err := instanceAndRun(r)
	if err != nil {
		return err
	}
	attempt, err := attemptSelector(r)
	if err != nil {
		return err
	}
	view, err := s.svc.Runs.GetStepAttempt(r.Context(), r.PathValue("id"), instanceID, runID, r.PathValue("stepId"), attempt)
	return answer(w, view, err, "GetStepAttempt")
}

// readBody reads the whole request body. The limitBody middleware caps it
// at MaxBodyBytes; going past the cap is answered with 413.
func readBody(r *http.Request) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, bodyTooLarge()
		}
		return nil, orchestrator.Invalid("cannot read the request body")
	}
	return body, nil
}

// readRequest reads r's body and parses it with parse.
func readRequest[T any](r *http.Request, parse func([]byte) (T, error)) (T, error) {
	body, err := readBody(r)
	if err != nil {
		var zero T
		return zero, err
	}
	return parse(body)
}

// bodyTooLarge is the 413 answer to a body over MaxBodyBytes.
func bodyTooLarge() *orchestrator.Error {
	return &orchestrator.Error{
		Status:  http.StatusRequestEntityTooLarge,
		Message: fmt.Sprintf("request body is larger than %d bytes (256 KiB)", MaxBodyBytes),
	}
}

// requestFormat picks the definition format of a validate request from
// ?format=json|yaml, else from the Content-Type.
func requestFormat(r *http.Request) (orchestrator.Format, error) {
	switch strings.ToLower(r.URL.Query().Get("format")) {
	case "json":
		return orchestrator.FormatJSON, nil
	case "yaml", "yml":
		return orchestrator.FormatYAML, nil
	case "":
	default:
		return "", orchestrator.Invalid("invalid query parameter format", "format: must be json or yaml")
	}
	mediaType, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err == nil && isYAML(mediaType) {
		return orchestrator.FormatYAML, nil
	}
	return orchestrator.FormatJSON, nil
}

// present turns a nil result returned with a nil error into an internal
// error, so a faulty service never produces a "null" 200.
// answer writes a service call's result: its error, or the view as 200 JSON.
func answer[T any](w http.ResponseWriter, view *T, err error, op string) error {
	if err != nil {
		return err
	}
	if err := present(view, op); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, view)
}

func present[T any](v *T, op string) error {
	if v == nil {
		return orchestrator.Internal(fmt.Errorf("orchestrator.Service.%s returned neither a result nor an error", op))
	}
	return nil
}

// actOnInstance serves PUT .../instances/{instanceId}[/runs/{runId}]/actions/{stop|kill}.
func (s *server) actOnInstance(w http.ResponseWriter, r *http.Request) error {
	instanceID, err := positiveInt(r, "instanceId")
	if err != nil {
		return err
	}
	var runID int64
	if r.PathValue("runId") != "" {
		if runID, err = positiveInt(r, "runId"); err != nil {
			return err
		}
	}
	action := r.PathValue("action")
	switch action {
	case "stop", "kill", "unblock":
	default:
		return orchestrator.Invalid("bad action", fmt.Sprintf("action: %q is not an instance action (stop, kill, unblock)", action))
	}
	view, err := s.svc.Actions.ActOnInstance(r.Context(), r.PathValue("id"), instanceID, runID, action)
	return answer(w, view, err, "ActOnInstance")
}

// actOnStep serves PUT .../instances/{instanceId}/steps/{stepId}/actions/{stop|kill|skip|bypass}
// (bypass is BYPASS_STEP_DEPENDENCIES).
func (s *server) actOnStep(w http.ResponseWriter, r *http.Request) error {
	instanceID, err := positiveInt(r, "instanceId")
	if err != nil {
		return err
	}
	action := r.PathValue("action")
	switch action {
	case "stop", "kill", "skip":
	case "bypass":
		action = "BYPASS_STEP_DEPENDENCIES"
	default:
		return orchestrator.Invalid("bad action", fmt.Sprintf("action: %q is not a step action (stop, kill, skip, bypass)", action))
	}
	view, err := s.svc.Actions.ActOnStep(r.Context(), r.PathValue("id"), instanceID, r.PathValue("stepId"), action)
	return answer(w, view, err, "ActOnStep")
}

// activateVersion serves PUT .../{id}/versions/{version}/actions/activate.
func (s *server) activateVersion(w http.ResponseWriter, r *http.Request) error {
	version, err := versionSelector(r)
	if err != nil {
		return err
	}
	view, err := s.svc.Definitions.ActivateVersion(r.Context(), r.PathValue("id"), version)
	return answerDefinition(w, view, err, "ActivateVersion")
}

// deactivateWorkflow serves PUT .../{id}/actions/deactivate.
func (s *server) deactivateWorkflow(w http.ResponseWriter, r *http.Request) error {
	view, err := s.svc.Definitions.DeactivateWorkflow(r.Context(), r.PathValue("id"))
	return answerDefinition(w, view, err, "DeactivateWorkflow")
}

// updateProperties serves POST .../{id}/properties.
func (s *server) updateProperties(w http.ResponseWriter, r *http.Request) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	props, err := s.svc.Definitions.UpdateProperties(r.Context(), r.PathValue("id"), body)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, map[string]any{"workflow_id": r.PathValue("id"), "properties_snapshot": props})
}

// workflowActionMap serves GET /api/v3/workflows/instances/action-map:
// each workflow instance status and the actions it allows.
func (s *server) workflowActionMap(w http.ResponseWriter, r *http.Request) error {
	out := map[string][]model.WorkflowAction{}
	for _, st := range model.WorkflowStatuses() {
		out[string(st)] = append([]model.WorkflowAction{}, model.AllowedWorkflowActions(st)...)
	}
	return writeJSON(w, http.StatusOK, out)
}

// stepActionMap serves GET /api/v3/workflows/steps/instances/action-map:
// each step status and the actions it allows.
func (s *server) stepActionMap(w http.ResponseWriter, r *http.Request) error {
	out := map[string][]model.StepAction{}
	for _, st := range model.StepStatuses() {
		out[string(st)] = append([]model.StepAction{}, model.AllowedStepActions(st)...)
	}
	return writeJSON(w, http.StatusOK, out)
}

// actOnWorkflow serves PUT .../{id}/actions/{stop|kill}: every active run of
// the workflow, asynchronously.
func (s *server) actOnWorkflow(w http.ResponseWriter, r *http.Request) error {
	action := r.PathValue("action")
	switch action {
	case "stop", "kill", "unblock":
	default:
		return orchestrator.Invalid("bad action", fmt.Sprintf("action: %q is not a workflow action (stop, kill, unblock)", action))
	}
	n, err := s.svc.Actions.ActOnWorkflow(r.Context(), r.PathValue("id"), action)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusAccepted, map[string]any{
		"workflow_id": r.PathValue("id"), "action": strings.ToUpper(action), "workflow_instances": n,
	})
}

// deleteWorkflow serves DELETE /api/v3/workflows/{id}: 202, the history is
// removed in the background.
func (s *server) deleteWorkflow(w http.ResponseWriter, r *http.Request) error {
	res, err := s.svc.Definitions.DeleteWorkflow(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	if err := present(res, "DeleteWorkflow"); err != nil {
		return err
	}
	return writeJSON(w, http.StatusAccepted, res)
}
