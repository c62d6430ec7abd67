package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/orchestrator"
)

// tagAPI serves the workflow tag routes; its handlers reach the
// server through the embedded *server.
type tagAPI struct{ *server }

// workflowTagPath is the path of Maestro's workflow tag endpoints.
const workflowTagPath = workflowsPath + "/{id}/properties/tag"

// registerTags adds Maestro's workflow tag routes: add (or replace) a tag
// of a workflow's properties, and delete one by name.
func (s tagAPI) register(route func(string, apiFunc)) {
	route("POST "+workflowTagPath, s.addWorkflowTag)
	route("DELETE "+workflowTagPath+"/{workflowTagName}", s.deleteWorkflowTag)
}

// addWorkflowTag serves POST .../{id}/properties/tag with a tag (a name or
// {"name", "namespace", ...attributes}) as the body.
func (s tagAPI) addWorkflowTag(w http.ResponseWriter, r *http.Request) error {
	body, err := readBody(r)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return orchestrator.Invalid("invalid workflow tag", "request body: must be a tag")
	}
	snap, err := s.svc.Definitions.AddWorkflowTag(r.Context(), r.PathValue("id"), json.RawMessage(body))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, snap)
}

// deleteWorkflowTag serves DELETE .../{id}/properties/tag/{workflowTagName}.
func (s tagAPI) deleteWorkflowTag(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("workflowTagName")
	if problems := model.TagNameProblems(name); len(problems) > 0 {
		return invalidParam("workflowTagName", strings.Join(problems, "; "))
	}
	snap, err := s.svc.Definitions.DeleteWorkflowTag(r.Context(), r.PathValue("id"), name)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, snap)
}

// tagPermitRequest is Maestro's TagPermitRequest: tag, max_allowed and
// extra info — an "extra_info" object and, as Maestro's any-setter takes
// them, any other field.
type tagPermitRequest struct {
	tag   string
	max   int64
	extra map[string]json.RawMessage
}

// parseTagPermitRequest checks a tag permit request: tag and max_allowed
// are required; extra_info must be an object; other fields join the extra
// info (orchestrator.CheckExtraInfo bounds it).
func parseTagPermitRequest(body []byte) (tagPermitRequest, error) {
	fields, err := decodeBody(body, "invalid tag permit")
	if err != nil {
		return tagPermitRequest{}, err
	}
	p := tagPermitRequest{max: -1}
	var errs []string
	add := func(k string, v json.RawMessage) {
		if p.extra == nil {
			p.extra = map[string]json.RawMessage{}
		}
		if _, dup := p.extra[k]; dup {
			errs = append(errs, fmt.Sprintf("extra_info: key %q is given twice", k))
		}
		p.extra[k] = v
	}
	for _, f := range fields {
		switch f.name {
		case "tag":
			errs = append(errs, requiredString(f, &p.tag)...)
		case "max_allowed":
			n, err := strconv.ParseInt(string(bytes.TrimSpace(f.value)), 10, 64)
			if err != nil || n < 0 {
				errs = append(errs, "max_allowed: must be a non-negative integer")
				continue
			}
			p.max = n
		case "extra_info":
			if isNull(f.value) {
				continue
			}
			var m map[string]json.RawMessage
			if err := json.Unmarshal(f.value, &m); err != nil || m == nil {
				errs = append(errs, "extra_info: must be a JSON object")
				continue
			}
			for k, v := range m {
				add(k, v)
			}
		default:
			add(f.name, f.value)
		}
	}
	if len(p.tag) > maxTagLength {
		errs = append(errs, fmt.Sprintf("tag: must be at most %d characters", maxTagLength))
	}
	errs = append(errs, missingFields(fields, "tag", "max_allowed")...)
	errs = append(errs, orchestrator.CheckExtraInfo(p.extra)...)
	if len(errs) > 0 {
		return tagPermitRequest{}, orchestrator.Invalid("invalid tag permit", errs...)
	}
	return p, nil
}
