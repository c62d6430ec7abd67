package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/maestro-serverless/maestro/orchestrator"
)

// Start request limits and names.
const (
	// maxRunParams is Maestro's PARAM_MAP_SIZE_LIMIT.
	maxRunParams = 128
	// maxErrorDetails bounds the field errors listed in one answer.
	maxErrorDetails = 20
	// manualInitiator is the only initiator type users may start with.
	manualInitiator = "MANUAL"
)

// parseStartRequest decodes and checks the body of a start request
// (Maestro's WorkflowStartRequest) strictly:
//
//   - an empty body is a manual start with no parameters;
//   - the body must otherwise be one JSON object with no duplicate and no
//     unknown fields, and nothing after it;
//   - initiator, when present, is {"type", "user"}; type is one of
//     Maestro's initiator types in any case, and only MANUAL is accepted
//     (the others are the system's own); an absent initiator means MANUAL,
//     and the type is passed on in upper case;
//   - request_time is a non-negative integer (epoch milliseconds);
//   - request_id, the idempotency key, is a UUID in its canonical 36
//     character form, as in Maestro (where it is a java.util.UUID); it is
//     passed on in lower case;
//   - run_params is an object of at most 128 entries whose names are not
//     reserved; the values (ParamDefinitions) are left to the service;
//   - runtime_tags is an array of tag names (strings) or tag objects;
//   - artifacts is an object;
//   - persist_failed_run is a boolean. It is accepted so that Maestro's
//     requests keep working, but orchestrator.StartRequest has no field
//     for it and this runtime does not keep failed starts, so it has no
//     effect.
//
// A JSON null stands for an absent field. Errors name the field as a
// JSON path ("run_params.maestro: reserved name").
func parseStartRequest(body []byte) (orchestrator.StartRequest, error) {
	req := orchestrator.StartRequest{Initiator: &orchestrator.Initiator{Type: manualInitiator}}
	fields, err := optionalBody(body, "invalid start request")
	if err != nil {
		return orchestrator.StartRequest{}, err
	}
	var errs []string
	for _, f := range fields {
		if isNull(f.value) {
			continue
		}
		switch f.name {
		case "initiator":
			ini, ierrs := parseInitiator(f.value)
			errs = append(errs, ierrs...)
			if ini != nil {
				req.Initiator = ini
			}
		case "request_time", "request_id", "run_params":
			errs = append(errs, parseRunField(f, &req.RequestID, &req.RequestTime, &req.RunParams)...)
		case "runtime_tags":
			tags, terrs := parseRuntimeTags(f.value)
			errs = append(errs, terrs...)
			req.RuntimeTags = tags
		case "artifacts":
			artifacts, err := decodeObject(f.value)
			if err != nil {
				errs = append(errs, "artifacts: "+err.Error())
				continue
			}
			req.Artifacts = fieldMap(artifacts)
		case "persist_failed_run":
			var b bool
			if err := json.Unmarshal(f.value, &b); err != nil {
				errs = append(errs, "persist_failed_run: must be a boolean")
			}
		default:
			errs = append(errs, fieldName(f.name)+": unknown field")
		}
	}
	if len(errs) > 0 {
		return orchestrator.StartRequest{}, invalidFields("invalid start request", errs)
	}
	return req, nil
}

// parseRunField reads one of the fields start and restart bodies share
// (request_id, request_time, run_params) into its destination.
func parseRunField(f rawField, requestID *string, requestTime *int64, runParams *map[string]json.RawMessage) []string {
	switch f.name {
	case "request_time":
		var t int64
		if err := json.Unmarshal(f.value, &t); err != nil || t < 0 {
			return []string{"request_time: must be a non-negative integer (epoch milliseconds)"}
		}
		*requestTime = t
	case "request_id":
		id, err := parseRequestID(f.value)
		if err != nil {
			return []string{"request_id: " + err.Error()}
		}
		*requestID = id
	case "run_params":
		params, errs := parseRunParams(f.value)
		*runParams = params
		return errs
	}
	return nil
}

// invalidFields is the 400 answer msg listing a request's field errors,
// at most maxErrorDetails of them and a count of the rest.
func invalidFields(msg string, errs []string) *orchestrator.Error {
	if len(errs) > maxErrorDetails {
		more := len(errs) - maxErrorDetails
		errs = append(errs[:maxErrorDetails:maxErrorDetails], fmt.Sprintf("... and %d more errors", more))
	}
	return orchestrator.Invalid(msg, errs...)
}

// parseInitiator checks the initiator object. It returns a nil initiator
// with the errors found, or the initiator with its type in upper case.
func parseInitiator(raw json.RawMessage) (*orchestrator.Initiator, []string) {
	fields, err := decodeObject(raw)
	if err != nil {
		return nil, []string{"initiator: " + err.Error()}
	}
	var (
		ini     orchestrator.Initiator
		errs    []string
		hasType bool
	)
	for _, f := range fields {
		switch f.name {
		case "type":
			hasType = true
			var t string
			if err := json.Unmarshal(f.value, &t); err != nil {
				errs = append(errs, "initiator.type: must be a string")
				continue
			}
			t = strings.ToUpper(t)
			switch {
			case !isInitiatorType(t):
				errs = append(errs, "initiator.type: must be one of MANUAL, SUBWORKFLOW, FOREACH, WHILE, TEMPLATE, TIME, SIGNAL")
			case t != manualInitiator:
				errs = append(errs, "initiator.type: only manual starts are accepted over the API")
			default:
				ini.Type = t
			}
		case "user":
			if isNull(f.value) {
				continue
			}
			if err := json.Unmarshal(f.value, &ini.User); err != nil {
				errs = append(errs, "initiator.user: must be a string")
			}
		default:
			errs = append(errs, "initiator."+fieldName(f.name)+": unknown field")
		}
	}
	if !hasType {
		errs = append(errs, "initiator.type: is required")
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return &ini, nil
}

// isInitiatorType reports whether t (upper case) is one of Maestro's
// initiator types.
func isInitiatorType(t string) bool {
	switch t {
	case "MANUAL", "SUBWORKFLOW", "FOREACH", "WHILE", "TEMPLATE", "TIME", "SIGNAL":
		return true
	}
	return false
}

// parseRequestID accepts a JSON string holding a UUID in canonical form.
func parseRequestID(raw json.RawMessage) (string, error) {
	const rule = "must be a UUID such as 97a57978-803f-403e-9f9b-376d34689723"
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", errors.New(rule)
	}
	if len(s) != 36 {
		return "", errors.New(rule)
	}
	id, err := uuid.Parse(s)
	if err != nil {
		return "", errors.New(rule)
	}
	return id.String(), nil
}

// parseRunParams checks the run_params object: at most maxRunParams
// entries, no reserved names.
func parseRunParams(raw json.RawMessage) (map[string]json.RawMessage, []string) {
	fields, err := decodeObject(raw)
	if err != nil {
		return nil, []string{"run_params: " + err.Error()}
	}
	var errs []string
	if len(fields) > maxRunParams {
		errs = append(errs, fmt.Sprintf("run_params: at most %d params are allowed, got %d", maxRunParams, len(fields)))
	}
	for _, f := range fields {
		if isReservedParamName(f.name) {
			errs = append(errs, "run_params."+fieldName(f.name)+": reserved param name")
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return fieldMap(fields), nil
}

// isReservedParamName reports whether name is one of the names Maestro
// keeps for itself: the expression language's namespaces and the
// authorization params.
func isReservedParamName(name string) bool {
	switch name {
	case "maestro", "Maestro", "MAESTRO",
		"scheduler", "Scheduler", "SCHEDULER",
		"util", "Util", "UTIL",
		"params", "Params", "PARAMS",
		"AUTH_BLOB", "AUTH_DATA", "AUTH_ACTING_ON_BEHALF_OF_BLOB",
		"AUTH_TRIGGERING_ON_BEHALF_OF_BLOB", "AUTHORIZED_MANAGERS":
		return true
	}
	return false
}

// parseRuntimeTags checks that runtime_tags is an array of tag names or
// tag objects; the tags themselves are left to the service.
func parseRuntimeTags(raw json.RawMessage) ([]json.RawMessage, []string) {
	var tags []json.RawMessage
	if err := json.Unmarshal(raw, &tags); err != nil {
		return nil, []string{"runtime_tags: must be an array of tags"}
	}
	var errs []string
	for i, t := range tags {
		t = bytes.TrimSpace(t)
		if len(t) == 0 || (t[0] != '"' && t[0] != '{') {
			errs = append(errs, fmt.Sprintf("runtime_tags[%d]: must be a tag name or a tag object", i))
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return tags, nil
}

// rawField is one member of a JSON object, in document order.
type rawField struct {
	name  string
	value json.RawMessage
}

// decodeObject decodes data as exactly one JSON object, rejecting
// duplicate member names and anything after the object.
func decodeObject(data []byte) ([]rawField, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, malformed(err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("must be a JSON object")
	}
	var fields []rawField
	seen := make(map[string]bool)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, malformed(err)
		}
		name, ok := tok.(string)
		if !ok {
			return nil, errors.New("malformed JSON: object key is not a string")
		}
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, malformed(err)
		}
		if seen[name] {
			return nil, fmt.Errorf("duplicate field %s", fieldName(name))
		}
		seen[name] = true
		fields = append(fields, rawField{name: name, value: value})
	}
	if _, err := dec.Token(); err != nil {
		return nil, malformed(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("malformed JSON: unexpected data after the object")
	}
	return fields, nil
}

// decodeBody decodes a request body as one JSON object (see decodeObject);
// its error is the 400 answer what ("invalid breakpoint").
func decodeBody(body []byte, what string) ([]rawField, error) {
	fields, err := decodeObject(body)
	if err != nil {
		return nil, orchestrator.Invalid(what, "request body: "+err.Error())
	}
	return fields, nil
}

// requiredBody is decodeBody for a request that must have a body: one of
// white space only is answered "must not be empty".
func requiredBody(body []byte, what string) ([]rawField, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, orchestrator.Invalid(what, "request body: must not be empty")
	}
	return decodeBody(body, what)
}

// optionalBody is decodeBody for a request whose body may be left out: one
// of white space only has no fields.
func optionalBody(body []byte, what string) ([]rawField, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, nil
	}
	return decodeBody(body, what)
}

// malformed describes a JSON syntax error.
func malformed(err error) error {
	if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("malformed JSON: unexpected end of input")
	}
	return fmt.Errorf("malformed JSON: %w", err)
}

// fieldMap turns decoded members into a map.
func fieldMap(fields []rawField) map[string]json.RawMessage {
	m := make(map[string]json.RawMessage, len(fields))
	for _, f := range fields {
		m[f.name] = f.value
	}
	return m
}

// isNull reports whether raw is the JSON literal null.
func isNull(raw json.RawMessage) bool {
	return string(bytes.TrimSpace(raw)) == "null"
}

// fieldName renders a user-supplied member name for an error message:
// bare when it is a plain identifier, quoted (and shortened) otherwise.
func fieldName(name string) string {
	plain := name != "" && len(name) <= 128
	for i := 0; plain && i < len(name); i++ {
		c := name[i]
		plain = c == '_' || c == '-' ||
			(c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
	}
	if plain {
		return name
	}
	return strconv.Quote(clip(name))
}

// parseStartBatch decodes and checks the body of a batch start:
// {"requests": [WorkflowStartRequest, ...]}, one to
// orchestrator.MaxBatchStarts run requests, each checked as a start body
// is (parseStartRequest) and each with a request_id. Errors name the
// request ("requests[3].run_params.maestro: reserved name"); a request
// with no request_id is refused here, a request_id repeated in the batch
// by the service.
func parseStartBatch(body []byte) ([]orchestrator.StartRequest, error) {
	const what = "invalid batch start"
	fields, err := requiredBody(body, what)
	if err != nil {
		return nil, err
	}
	var raw []json.RawMessage
	var errs []string
	found := false
	for _, f := range fields {
		switch f.name {
		case "requests":
			found = true
			if err := json.Unmarshal(f.value, &raw); err != nil || isNull(f.value) {
				errs = append(errs, "requests: must be an array of run requests")
			}
		default:
			errs = append(errs, fieldName(f.name)+": unknown field")
		}
	}
	switch {
	case !found:
		errs = append(errs, "requests: is required")
	case len(errs) == 0 && len(raw) == 0:
		errs = append(errs, "requests: must hold at least one run request")
	case len(raw) > orchestrator.MaxBatchStarts:
		errs = append(errs, fmt.Sprintf("requests: at most %d run requests are allowed, got %d", orchestrator.MaxBatchStarts, len(raw)))
	}
	if len(errs) > 0 {
		return nil, invalidFields(what, errs)
	}
	reqs := make([]orchestrator.StartRequest, len(raw))
	for i, r := range raw {
		at := fmt.Sprintf("requests[%d]", i)
		if t := bytes.TrimSpace(r); len(t) == 0 || t[0] != '{' {
			errs = append(errs, at+": must be a run request object")
			continue
		}
		req, err := parseStartRequest(r)
		if err != nil {
			for _, d := range orchestrator.AsError(err).Errors {
				if rest, ok := strings.CutPrefix(d, "request body: "); ok {
					errs = append(errs, at+": "+rest)
				} else if strings.HasPrefix(d, "... and ") {
					errs = append(errs, at+": "+d)
				} else {
					errs = append(errs, at+"."+d)
				}
			}
			continue
		}
		if req.RequestID == "" {
			errs = append(errs, at+".request_id: is required in a batch (it makes sending the batch again safe)")
		}
		reqs[i] = req
	}
	if len(errs) > 0 {
		return nil, invalidFields(what, errs)
	}
	return reqs, nil
}
