package api

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/maestro-serverless/maestro/orchestrator"
)

// testToken is a well-formed task token (43 characters of base64url).
const testToken = "secret-task-token-of-the-api-tests-01234567"

// taskRequest posts a task report to h and returns the answer.
func taskRequest(t *testing.T, h http.Handler, target, body string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest("POST", target, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// TestTaskReportForms: a report with the token in the body (POST
// /api/v3/tasks/{action} {"task_token": ...}) is answered exactly as the
// same report with the token in the path (POST /api/v3/tasks/{token}/{action}):
// the same status, the same service call, the same body — an error about
// the token naming task_token instead of the path's token.
func TestTaskReportForms(t *testing.T) {
	require.Len(t, testToken, orchestrator.TaskTokenLength)
	tests := []struct {
		name, action, token string
		// fields are the report's JSON object members besides the token;
		// raw, when set, is the whole body of both forms instead.
		fields, raw string
		svcErr      error
		wantStatus  int
		wantCall    *orchestrator.TaskCompletion
		wantError   string
	}{
		{name: "success", action: "success", token: testToken, fields: `"outputs":{"rows":7,"table":"db.t"},"message":"done"`, wantStatus: 200,
			wantCall: &orchestrator.TaskCompletion{Action: "success", Outputs: map[string]any{"rows": json.Number("7"), "table": "db.t"}, Message: "done"}},
		{name: "success with nothing else", action: "success", token: testToken, wantStatus: 200,
			wantCall: &orchestrator.TaskCompletion{Action: "success"}},
		{name: "failure", action: "failure", token: testToken, fields: `"error":"platform_error","message":"no capacity"`, wantStatus: 200,
			wantCall: &orchestrator.TaskCompletion{Action: "failure", Error: "PLATFORM_ERROR", Message: "no capacity"}},
		{name: "heartbeat", action: "heartbeat", token: testToken, wantStatus: 200,
			wantCall: &orchestrator.TaskCompletion{Action: "heartbeat"}},
		{name: "success with an error field", action: "success", token: testToken, fields: `"error":"USER_ERROR"`, wantStatus: 400,
			wantError: "error: unknown field for a success report"},
		{name: "heartbeat with outputs", action: "heartbeat", token: testToken, fields: `"outputs":{}`, wantStatus: 400,
			wantError: "outputs: unknown field for a heartbeat report"},
		{name: "outputs not an object", action: "success", token: testToken, fields: `"outputs":[1]`, wantStatus: 400,
			wantError: "outputs: must be an object of output params"},
		{name: "message not a string", action: "failure", token: testToken, fields: `"message":3`, wantStatus: 400,
			wantError: "message: must be a string"},
		{name: "short token", action: "success", token: "short", wantStatus: 400,
			wantError: "token: must be the 43 characters of base64url the step handed out, got 5 characters"},
		{name: "token with a character outside base64url", action: "failure", token: strings.Repeat("A", 42) + ".", wantStatus: 400,
			wantError: "token: must be the 43 characters of base64url"},
		{name: "bad token and bad field at once", action: "success", token: "short", fields: `"outputs":"x"`, wantStatus: 400,
			wantError: "outputs: must be an object of output params\ntoken: must be"},
		{name: "not JSON", action: "success", token: testToken, raw: `outputs=1`, wantStatus: 400,
			wantError: "request body: malformed JSON"},
		{name: "token used twice", action: "success", token: testToken, svcErr: orchestrator.Conflict("the task token was already used"),
			wantStatus: 409, wantCall: &orchestrator.TaskCompletion{Action: "success"}, wantError: "already used"},
		{name: "unknown token", action: "heartbeat", token: testToken, svcErr: orchestrator.NotFound("unknown task token"),
			wantStatus: 404, wantCall: &orchestrator.TaskCompletion{Action: "heartbeat"}, wantError: "unknown task token"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pathBody, bodyBody := tc.raw, tc.raw
			if tc.raw == "" {
				tokenJSON, _ := json.Marshal(tc.token)
				bodyBody = `{"task_token":` + string(tokenJSON) + `}`
				if tc.fields != "" {
					pathBody = "{" + tc.fields + "}"
					bodyBody = `{"task_token":` + string(tokenJSON) + "," + tc.fields + "}"
				}
			}
			forms := []struct{ name, target, body, tokenField string }{
				{"path", "/api/v3/tasks/" + tc.token + "/" + tc.action, pathBody, "token"},
				{"body", "/api/v3/tasks/" + tc.action, bodyBody, "task_token"},
			}
			var answers []string
			for _, f := range forms {
				svc := &fakeService{err: tc.svcErr}
				rec := taskRequest(t, NewHandler(svc.services(), Options{}), f.target, f.body)
				assert.Equal(t, tc.wantStatus, rec.Code, "%s form: %s", f.name, rec.Body)
				if tc.wantCall == nil {
					assert.Empty(t, svc.recorded(), "%s form: the service must not be called", f.name)
				} else {
					assert.Equal(t, []call{{"CompleteTask", []any{tc.token, *tc.wantCall}}}, svc.recorded(), "%s form", f.name)
				}
				if tc.wantStatus >= 400 {
					e := decodeError(t, tc.wantStatus, rec.Body.Bytes())
					all := strings.Join(append([]string{e.Message}, e.Errors...), "\n")
					want := strings.ReplaceAll(tc.wantError, "token:", f.tokenField+":")
					assert.Contains(t, all, want, "%s form", f.name)
				}
				// The answers are the same but for the token field's name.
				answers = append(answers, strings.ReplaceAll(rec.Body.String(), f.tokenField+":", "{token}:"))
			}
			assert.Equal(t, answers[0], answers[1], "the path and body forms answer alike")
		})
	}
}

// TestTaskReportBodyForm: the body form refuses a report whose task_token
// is missing, empty, not a string or malformed with a 400 naming
// task_token, and a body that is not a JSON object; none reaches the
// service. The token in the path form's body is an unknown field.
func TestTaskReportBodyForm(t *testing.T) {
	tests := []struct {
		name, target, body, wantError string
		wantStatus                    int
	}{
		{name: "no body", target: "/api/v3/tasks/success", wantStatus: 400, wantError: "task_token: is required"},
		{name: "empty object", target: "/api/v3/tasks/heartbeat", body: `{}`, wantStatus: 400, wantError: "task_token: is required"},
		{name: "outputs without a token", target: "/api/v3/tasks/success", body: `{"outputs":{"a":1}}`, wantStatus: 400, wantError: "task_token: is required"},
		{name: "empty token", target: "/api/v3/tasks/failure", body: `{"task_token":""}`, wantStatus: 400,
			wantError: "task_token: must be the 43 characters of base64url the step handed out, got 0 characters"},
		{name: "null token", target: "/api/v3/tasks/success", body: `{"task_token":null}`, wantStatus: 400, wantError: "task_token: must be the 43 characters"},
		{name: "number token", target: "/api/v3/tasks/success", body: `{"task_token":5}`, wantStatus: 400, wantError: "task_token: must be a string"},
		{name: "object token", target: "/api/v3/tasks/success", body: `{"task_token":{"t":"` + testToken + `"}}`, wantStatus: 400, wantError: "task_token: must be a string"},
		{name: "malformed token", target: "/api/v3/tasks/heartbeat", body: `{"task_token":"` + testToken + `x"}`, wantStatus: 400,
			wantError: "task_token: must be the 43 characters of base64url the step handed out, got 44 characters"},
		{name: "token twice", target: "/api/v3/tasks/success", body: `{"task_token":"` + testToken + `","task_token":"` + testToken + `"}`, wantStatus: 400,
			wantError: "request body: duplicate field task_token"},
		{name: "array", target: "/api/v3/tasks/success", body: `["` + testToken + `"]`, wantStatus: 400, wantError: "request body: must be a JSON object"},
		{name: "trailing data", target: "/api/v3/tasks/success", body: `{"task_token":"` + testToken + `"} {}`, wantStatus: 400, wantError: "unexpected data after the object"},
		{name: "token in the path form's body", target: "/api/v3/tasks/" + testToken + "/success", body: `{"task_token":"` + testToken + `"}`, wantStatus: 400,
			wantError: "task_token: unknown field for a success report"},
		{name: "unknown action", target: "/api/v3/tasks/cancel", body: `{"task_token":"` + testToken + `"}`, wantStatus: 404, wantError: "no endpoint POST /api/v3/tasks/cancel"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			svc := &fakeService{}
			rec := taskRequest(t, NewHandler(svc.services(), Options{}), tc.target, tc.body)
			assert.Equal(t, tc.wantStatus, rec.Code, rec.Body.String())
			e := decodeError(t, tc.wantStatus, rec.Body.Bytes())
			assert.Contains(t, strings.Join(append([]string{e.Message}, e.Errors...), "\n"), tc.wantError)
			if tc.wantStatus == 400 && strings.HasPrefix(tc.wantError, "task_token:") {
				require.NotEmpty(t, e.Errors)
				assert.True(t, strings.HasPrefix(e.Errors[len(e.Errors)-1], "task_token: "), "the detail names task_token: %v", e.Errors)
			}
			assert.Empty(t, svc.recorded(), "nothing reaches the service")
		})
	}

	t.Run("GET", func(t *testing.T) {
		rec := httptest.NewRecorder()
		NewHandler((&fakeService{}).services(), Options{}).ServeHTTP(rec, httptest.NewRequest("GET", "/api/v3/tasks/success", nil))
		assert.Equal(t, http.StatusMethodNotAllowed, rec.Code)
	})
}
