package api

import (
	"encoding/json"
	"net/http"

	"github.com/maestro-serverless/maestro/orchestrator"
)

// jobTemplateAPI serves the job template routes; its handlers reach the
// server through the embedded *server.
type jobTemplateAPI struct{ *server }

// jobTemplatesPath is the prefix of the job template endpoints (Maestro's
// JobTemplateController).
const jobTemplatesPath = "/api/v3/job-templates"

func (s jobTemplateAPI) register(route func(string, apiFunc)) {
	route("POST "+jobTemplatesPath, s.putJobTemplate(orchestrator.FormatJSON))
	route("POST "+jobTemplatesPath+"/yaml", s.putJobTemplate(orchestrator.FormatYAML))
	route("GET "+jobTemplatesPath, s.listJobTemplates)
	route("GET "+jobTemplatesPath+"/{type}", s.getJobTemplate)
	route("DELETE "+jobTemplatesPath+"/{type}", s.deleteJobTemplate)
}

func (s jobTemplateAPI) putJobTemplate(f orchestrator.Format) apiFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		body, err := readBody(r)
		if err != nil {
			return err
		}
		if len(body) == 0 {
			return orchestrator.Invalid("invalid job template", "request body: must not be empty")
		}
		v, err := s.svc.Definitions.PutJobTemplate(r.Context(), body, f)
		return answerRaw(w, v, err, "PutJobTemplate")
	}
}

func (s jobTemplateAPI) getJobTemplate(w http.ResponseWriter, r *http.Request) error {
	v, err := s.svc.Definitions.GetJobTemplate(r.Context(), r.PathValue("type"), r.URL.Query().Get("version"))
	return answerRaw(w, v, err, "GetJobTemplate")
}

func (s jobTemplateAPI) listJobTemplates(w http.ResponseWriter, r *http.Request) error {
	list, err := s.svc.Definitions.ListJobTemplates(r.Context(), r.URL.Query().Get("version"))
	if err != nil {
		return err
	}
	if list == nil {
		list = []json.RawMessage{}
	}
	return writeJSON(w, http.StatusOK, list)
}

func (s jobTemplateAPI) deleteJobTemplate(w http.ResponseWriter, r *http.Request) error {
	v, err := s.svc.Definitions.DeleteJobTemplate(r.Context(), r.PathValue("type"), r.URL.Query().Get("version"))
	return answer(w, v, err, "DeleteJobTemplate")
}

// answerRaw writes a service's JSON result as 200, or its error.
func answerRaw(w http.ResponseWriter, v json.RawMessage, err error, op string) error {
	if err != nil {
		return err
	}
	if v == nil {
		return present[json.RawMessage](nil, op)
	}
	return writeJSON(w, http.StatusOK, v)
}
