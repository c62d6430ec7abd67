package api

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestBodiesMustDeclareTheirType: a request whose body is not declared as
// the route's media type gets 415 before anything runs — above all the
// types a page of another site may send without a CORS preflight
// (text/plain, forms), which is how a cross-site page would write. A
// request without a body needs no Content-Type.
func TestBodiesMustDeclareTheirType(t *testing.T) {
	const wf = "/api/v3/workflows"
	def := `{"workflow":{"id":"w","steps":[]}}`
	tests := []struct {
		name, method, target, contentType, body string
		wantRule                                string // part of the 415's detail
		chunked                                 bool   // the body's length is unknown (Transfer-Encoding: chunked)
		wantStatus                              int
	}{
		{name: "cross-site text/plain push", method: "POST", target: wf, contentType: "text/plain", body: def, wantStatus: 415},
		{name: "text/plain with a charset", method: "POST", target: wf, contentType: "text/plain;charset=UTF-8", body: def, wantStatus: 415},
		{name: "form push", method: "POST", target: wf, contentType: "application/x-www-form-urlencoded", body: def, wantStatus: 415},
		{name: "multipart push", method: "POST", target: wf, contentType: "multipart/form-data; boundary=x", body: def, wantStatus: 415},
		{name: "no content type", method: "POST", target: wf, body: def, wantStatus: 415,
			wantRule: "Content-Type: must be application/json for this request's body, got none"},
		{name: "malformed content type", method: "POST", target: wf, contentType: "application/json; charset", body: def, wantStatus: 415},
		{name: "a JSON look-alike", method: "POST", target: wf, contentType: "application/jsonp", body: def, wantStatus: 415},
		{name: "text/json", method: "POST", target: wf, contentType: "text/json", body: def, wantStatus: 415},
		{name: "JSON push", method: "POST", target: wf, contentType: "application/json", body: def, wantStatus: 200},
		{name: "JSON with parameters", method: "POST", target: wf, contentType: "Application/JSON; charset=utf-8", body: def, wantStatus: 200},
		{name: "cross-site text/plain start", method: "POST", target: wf + "/w/versions/latest/actions/start", contentType: "text/plain", body: `{}`, wantStatus: 415},
		{name: "start without a body", method: "POST", target: wf + "/w/versions/latest/actions/start", wantStatus: 200},
		{name: "action without a body", method: "PUT", target: wf + "/w/instances/1/actions/stop", wantStatus: 200},
		{name: "action with a text/plain body", method: "PUT", target: wf + "/w/instances/1/actions/stop", contentType: "text/plain", body: "x", wantStatus: 415},
		{name: "chunked text/plain", method: "POST", target: wf, contentType: "text/plain", body: def, chunked: true, wantStatus: 415},
		{name: "chunked JSON", method: "POST", target: wf, contentType: "application/json", body: def, chunked: true, wantStatus: 200},
		{name: "chunked and empty", method: "POST", target: wf + "/w/versions/latest/actions/start", chunked: true, wantStatus: 200},
		{name: "YAML push", method: "POST", target: wf + "/yaml", contentType: "application/yaml", body: "workflow: {id: w}", wantStatus: 200},
		{name: "YAML push as x-yaml", method: "POST", target: wf + "/yaml", contentType: "application/x-yaml", body: "workflow: {id: w}", wantStatus: 200},
		{name: "YAML push as text/yaml", method: "POST", target: wf + "/yaml", contentType: "text/yaml; charset=utf-8", body: "workflow: {id: w}", wantStatus: 200},
		{name: "YAML push as text/plain", method: "POST", target: wf + "/yaml", contentType: "text/plain", body: "workflow: {id: w}", wantStatus: 415,
			wantRule: `Content-Type: must be application/yaml, application/x-yaml, text/yaml or text/x-yaml for this request's body, got "text/plain"`},
		{name: "YAML push as JSON", method: "POST", target: wf + "/yaml", contentType: "application/json", body: def, wantStatus: 415},
		{name: "validate JSON", method: "PUT", target: wf + "/actions/validate", contentType: "application/json", body: def, wantStatus: 200},
		{name: "validate YAML", method: "PUT", target: wf + "/actions/validate", contentType: "text/yaml", body: "workflow: {id: w}", wantStatus: 200},
		{name: "validate text/plain", method: "PUT", target: wf + "/actions/validate", contentType: "text/plain", body: def, wantStatus: 415,
			wantRule: "must be application/json, application/yaml, application/x-yaml, text/yaml or text/x-yaml for"},
		{name: "validate/yaml text/plain", method: "PUT", target: wf + "/actions/validate/yaml", contentType: "text/plain", body: "workflow: {id: w}", wantStatus: 415},
		{name: "signal as a form", method: "POST", target: "/api/v3/signals", contentType: "application/x-www-form-urlencoded", body: `{"name":"a"}`, wantStatus: 415},
		{name: "task report as text/plain", method: "POST", target: "/api/v3/tasks/tok/success", contentType: "text/plain", body: `{}`, wantStatus: 415},
		{name: "extra route as text/plain", method: "POST", target: "/local/extra", contentType: "text/plain", body: `{}`, wantStatus: 415},
		{name: "extra route as JSON", method: "POST", target: "/local/extra", contentType: "application/json", body: `{}`, wantStatus: 204},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			svc := &fakeService{}
			extra := 0
			h := NewHandler(svc.services(), Options{ExtraRoutes: func(mux *http.ServeMux) {
				mux.HandleFunc("POST /local/extra", func(w http.ResponseWriter, r *http.Request) {
					extra++
					w.WriteHeader(http.StatusNoContent)
				})
			}})
			req := httptest.NewRequest(tc.method, tc.target, strings.NewReader(tc.body))
			if tc.chunked {
				req.ContentLength = -1
				req.Body = io.NopCloser(strings.NewReader(tc.body))
			}
			if tc.contentType != "" {
				req.Header.Set("Content-Type", tc.contentType)
			}
			req.Header.Set("Origin", "https://evil.example")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)

			assert.Equal(t, tc.wantStatus, rec.Code, "body: %s", rec.Body)
			if tc.wantStatus != 415 {
				return
			}
			e := decodeError(t, 415, rec.Body.Bytes())
			if assert.Len(t, e.Errors, 1) {
				assert.True(t, strings.HasPrefix(e.Errors[0], "Content-Type: must be "), "the detail names the header and the rule: %q", e.Errors[0])
				assert.Contains(t, e.Errors[0], tc.wantRule)
			}
			assert.Empty(t, svc.recorded(), "a refused body reaches nothing")
			assert.Zero(t, extra, "a refused body reaches nothing")
			assert.Empty(t, rec.Header().Get("Access-Control-Allow-Origin"), "no CORS headers are served")
		})
	}
}
