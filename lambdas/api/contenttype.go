package api

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"

	"github.com/maestro-serverless/maestro/orchestrator"
)

// bodyKind names the media types a route accepts for a request body.
//
// Every request that carries a body must say what it is: application/json
// for JSON, a YAML type for YAML. A browser sends a cross-site request
// without asking the server first (a CORS preflight) only when its
// Content-Type is one of the CORS-safelisted ones (text/plain,
// application/x-www-form-urlencoded, multipart/form-data); refusing those
// means every write from a page of another site needs a preflight, which
// fails, since the API serves no CORS headers.
type bodyKind int

const (
	// jsonBody: application/json (every route not listed in routeBodies).
	jsonBody bodyKind = iota
	// yamlBody: application/yaml, application/x-yaml, text/yaml or
	// text/x-yaml.
	yamlBody
	// jsonOrYAMLBody: either.
	jsonOrYAMLBody
)

// accepts reports whether a body of mediaType (lower case, without
// parameters) may go to a route of kind k.
func (k bodyKind) accepts(mediaType string) bool {
	switch k {
	case yamlBody:
		return isYAML(mediaType)
	case jsonOrYAMLBody:
		return mediaType == "application/json" || isYAML(mediaType)
	default:
		return mediaType == "application/json"
	}
}

// mediaTypes lists the media types a route of kind k accepts, the first
// being the one to document.
func (k bodyKind) mediaTypes() []string {
	yaml := []string{"application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml"}
	switch k {
	case yamlBody:
		return yaml
	case jsonOrYAMLBody:
		return append([]string{"application/json"}, yaml...)
	default:
		return []string{"application/json"}
	}
}

// String names the accepted media types for an error message.
func (k bodyKind) String() string {
	types := k.mediaTypes()
	s := types[0]
	for i, t := range types[1:] {
		if i == len(types)-2 {
			s += " or " + t
		} else {
			s += ", " + t
		}
	}
	return s
}

// isYAML reports whether mediaType names YAML.
func isYAML(mediaType string) bool {
	switch mediaType {
	case "application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml":
		return true
	}
	return false
}

// routeBodies are the routes whose body is not JSON, by pattern; every
// other route's body, if it has one, must be application/json.
func routeBodies() map[string]bodyKind {
	return map[string]bodyKind{
		"POST " + workflowsPath + "/yaml":                 yamlBody,
		"PUT " + workflowsPath + "/actions/validate":      jsonOrYAMLBody,
		"PUT " + workflowsPath + "/actions/validate/yaml": yamlBody,
		"POST " + jobTemplatesPath + "/yaml":              yamlBody,
	}
}

// checkContentType answers 415 when r carries a body (at least one byte)
// whose Content-Type is not one kind accepts; parameters such as
// charset are allowed. A request without a body needs no Content-Type.
func checkContentType(r *http.Request, kind bodyKind) error {
	nonEmpty, err := hasBody(r)
	if err != nil || !nonEmpty {
		return err
	}
	ct := r.Header.Get("Content-Type")
	if mediaType, _, err := mime.ParseMediaType(ct); err == nil && kind.accepts(mediaType) {
		return nil
	}
	got := "none"
	if ct != "" {
		got = strconv.Quote(clip(ct))
	}
	return &orchestrator.Error{
		Status:  http.StatusUnsupportedMediaType,
		Message: "unsupported request body type",
		Errors:  []string{fmt.Sprintf("Content-Type: must be %s for this request's body, got %s", kind, got)},
	}
}

// hasBody reports whether r carries at least one byte of body. A body of
// unknown length (chunked) is peeked at: its first byte is read and put
// back, and an empty one becomes http.NoBody.
func hasBody(r *http.Request) (bool, error) {
	switch {
	case r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0:
		return false, nil
	case r.ContentLength > 0:
		return true, nil
	}
	var first [1]byte
	n, err := io.ReadFull(r.Body, first[:])
	if n == 0 {
		if errors.Is(err, io.EOF) {
			r.Body = http.NoBody
			return false, nil
		}
		return false, orchestrator.Invalid("cannot read the request body")
	}
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(first[:n]), r.Body), r.Body}
	return true, nil
}
