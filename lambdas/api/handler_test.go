package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/orchestrator"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// manual is the initiator the handler passes on for a manual start.
func manual(user string) *orchestrator.Initiator {
	return &orchestrator.Initiator{Type: "MANUAL", User: user}
}

// decodeError decodes an error answer and checks its shape: exactly
// status, message and errors, with status matching the HTTP status.
func decodeError(t *testing.T, status int, body []byte) errorBody {
	t.Helper()
	var shape map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(body, &shape), "error body is not JSON: %s", body)
	assert.Len(t, shape, 3, "error body keys: %s", body)
	for _, k := range []string{"status", "message", "errors"} {
		assert.Contains(t, shape, k)
	}
	var e errorBody
	require.NoError(t, json.Unmarshal(body, &e))
	assert.Equal(t, status, e.Status)
	assert.NotEmpty(t, e.Message)
	assert.NotNil(t, e.Errors, "errors must be an array, not null")
	return e
}

// TestIDsAreCheckedAtTheAPI: every path, query and body id that names a
// stored thing is checked with the model's rules before the service sees it;
// one over DynamoDB's key limits answers 400 naming the field, never 500.
func TestIDsAreCheckedAtTheAPI(t *testing.T) {
	longWF := strings.Repeat("w", 3000)
	longStep := strings.Repeat("s", 2000)
	longSignal := strings.Repeat("é", 600)    // 600 characters, 1200 bytes
	wide := strings.Repeat("\U0001F600", 300) // 300 characters, 1200 bytes
	const wf = "/api/v3/workflows/"
	tests := []struct {
		name, method, target, body, field, rule string
	}{
		{"version", "GET", wf + longWF + "/versions/latest", "", "id", "workflow id is 3000 characters long; the limit is 128"},
		{"start", "POST", wf + longWF + "/versions/latest/actions/start", "", "id", "the limit is 128"},
		{"activate", "PUT", wf + longWF + "/versions/1/actions/activate", "", "id", "the limit is 128"},
		{"deactivate", "PUT", wf + longWF + "/actions/deactivate", "", "id", "the limit is 128"},
		{"workflow action", "PUT", wf + longWF + "/actions/stop", "", "id", "the limit is 128"},
		{"properties", "POST", wf + longWF + "/properties", "{}", "id", "the limit is 128"},
		{"instances", "GET", wf + longWF + "/instances", "", "id", "the limit is 128"},
		{"instance", "GET", wf + longWF + "/instances/1", "", "id", "the limit is 128"},
		{"run", "GET", wf + longWF + "/instances/1/runs/1", "", "id", "the limit is 128"},
		{"steps", "GET", wf + longWF + "/instances/1/steps", "", "id", "the limit is 128"},
		{"delete", "DELETE", wf + longWF, "", "id", "the limit is 128"},
		{"reserved id", "GET", wf + "maestro_x/versions/latest", "", "id", "must not start with"},
		{"attempt step", "GET", wf + "wf/instances/1/runs/1/steps/" + longStep + "/attempts/1", "", "stepId", "step id is 2000 characters long; the limit is 128"},
		{"step action", "PUT", wf + "wf/instances/1/steps/" + longStep + "/actions/stop", "", "stepId", "the limit is 128"},
		{"step restart", "POST", wf + "wf/instances/1/steps/" + longStep + "/actions/restart", "", "stepId", "the limit is 128"},
		{"step id chars", "PUT", wf + "wf/instances/1/steps/a%23b/actions/stop", "", "stepId", `step id "a#b" is invalid`},
		{"resume", "PUT", "/api/v3/workflows/steps/breakpoints/" + longWF + "/instances/1/runs/1/steps/s/attempts/1/actions/resume", "", "id", "the limit is 128"},
		{"signal name characters", "GET", "/api/v3/signals/" + longSignal + "/instances/1", "", "name", "must be at most 512 characters, got 600"},
		{"signal name bytes", "GET", "/api/v3/signals/" + wide + "/instances/latest", "", "name", "must be at most 1024 bytes in UTF-8, got 1200"},
		{"signal lineage", "GET", "/api/v3/signals/" + longSignal + "/instances/1/lineage", "", "name", "at most 512 characters"},
		{"tag permit", "GET", "/api/v3/tag-permits/" + strings.Repeat("t", 600), "", "tag", "tag is 600 bytes long; the limit is 512"},
		{"breakpoint body", "POST", "/api/v3/workflows/steps/breakpoints", `{"workflow_id":"` + longWF + `","step_id":"s"}`, "workflow_id", "the limit is 128"},
		{"breakpoint body step", "POST", "/api/v3/workflows/steps/breakpoints", `{"workflow_id":"wf","step_id":"` + longStep + `"}`, "step_id", "the limit is 128"},
		{"breakpoint query", "GET", "/api/v3/workflows/steps/breakpoints?workflowId=" + longWF, "", "workflowId", "the limit is 128"},
		{"breakpoint query step", "GET", "/api/v3/workflows/steps/breakpoints?workflowId=wf&stepId=" + longStep, "", "stepId", "the limit is 128"},
		{"output data", "PUT", "/api/v3/output-data", `{"workflow_id":"` + longWF + `","workflow_instance_id":1,"step_id":"s","params":{}}`, "workflow_id", "the limit is 128"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			svc := &fakeService{}
			h := NewHandler(svc.services(), Options{})
			var body io.Reader
			if tc.body != "" {
				body = strings.NewReader(tc.body)
			}
			req := httptest.NewRequest(tc.method, "http://api"+strings.ReplaceAll(tc.target, " ", "%20"), body)
			if tc.body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			require.Equal(t, http.StatusBadRequest, rec.Code, rec.Body.String())
			var e struct {
				Status int      `json:"status"`
				Errors []string `json:"errors"`
			}
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &e), rec.Body.String())
			require.NotEmpty(t, e.Errors)
			assert.True(t, strings.HasPrefix(e.Errors[0], tc.field+": "), "first detail %q should name %s", e.Errors[0], tc.field)
			assert.Contains(t, strings.Join(e.Errors, "\n"), tc.rule)
			assert.Empty(t, svc.recorded(), "nothing may reach the service")
		})
	}
}

func TestRoutes(t *testing.T) {
	const wf = "/api/v3/workflows"
	defJSON := `{"workflow_definition":{"metadata":{"workflow_id":"sample-wf","workflow_version_id":3,"create_time":1763776800000},
		"workflow":{"id":"sample-wf","steps":[]},"is_active":true,"is_latest":true,"is_default":false}}`
	viewJSON := `{"metadata":{"workflow_id":"sample-wf","workflow_version_id":3,"create_time":1763776800000},
		"workflow":{"id":"sample-wf","steps":[]},"is_active":true,"is_latest":true,"is_default":false}`
	instJSON := func(inst, run int) string {
		return fmt.Sprintf(`{"workflow_id":"sample-wf","workflow_instance_id":%d,"workflow_run_id":%d,
			"workflow_uuid":"5e4f1c2a-0000-4000-8000-000000000001","workflow_version_id":3,"status":"IN_PROGRESS",
			"create_time":1763776800000,"step_statuses":{"job1":"RUNNING"}}`, inst, run)
	}
	stepJSON := func(run int, step string, attempt int) string {
		return fmt.Sprintf(`{"workflow_id":"sample-wf","workflow_instance_id":7,"workflow_run_id":%d,"step_id":%q,
			"step_attempt_id":%d,"runtime_state":{"status":"RUNNING"}}`, run, step, attempt)
	}
	// Output data with n dynamic signal outputs, each with a payload of
	// pad bytes.
	dynamicOutputs := func(n, pad int) string {
		outs := make([]string, n)
		for i := range outs {
			outs[i] = fmt.Sprintf(`{"evaluated_result":{"name":"s%d","p":[%q]}}`, i, strings.Repeat("x", pad))
		}
		return `{"workflow_id":"w","workflow_instance_id":1,"step_id":"s","artifacts":{"maestro_dynamic_output":{"signal_outputs":[` +
			strings.Join(outs, ",") + `]}}}`
	}
	startJSON := `{"workflow_id":"sample-wf","workflow_version_id":3,"workflow_instance_id":7,"workflow_run_id":1,
		"workflow_uuid":"5e4f1c2a-0000-4000-8000-000000000001","status":"CREATED","created":true}`

	tests := []struct {
		name        string
		method      string
		target      string
		body        string
		contentType string
		svcErr      error
		nilResult   bool

		wantStatus int
		wantCall   *call  // nil: the service must not be called
		wantBody   string // compared with JSONEq when set
		wantError  string // for errors: a substring of the message or of one detail
		wantAllow  string
	}{
		// health
		{name: "health", method: "GET", target: "/health", wantStatus: 200, wantCall: &call{"Health", nil},
			wantBody: `{"status":"ok","aws_endpoint":"http://127.0.0.1:5000","emulator":"moto"}`},
		{name: "health HEAD", method: "HEAD", target: "/health", wantStatus: 200, wantCall: &call{"Health", nil}},
		{name: "health failing", method: "GET", target: "/health", svcErr: errors.New("dynamodb down"),
			wantStatus: 500, wantCall: &call{"Health", nil}, wantError: "internal error"},

		// create
		{name: "create json", method: "POST", target: wf, body: `{"id":"sample-wf"}`, wantStatus: 200,
			wantCall: &call{"CreateWorkflow", []any{`{"id":"sample-wf"}`, orchestrator.FormatJSON}}, wantBody: defJSON},
		{name: "create yaml", method: "POST", target: wf + "/yaml", body: "id: sample-wf\n", wantStatus: 200,
			wantCall: &call{"CreateWorkflow", []any{"id: sample-wf\n", orchestrator.FormatYAML}}, wantBody: defJSON},
		{name: "create empty body", method: "POST", target: wf, wantStatus: 400, wantError: "request body: must not be empty"},
		{name: "create rejected", method: "POST", target: wf, body: `{}`,
			svcErr:     orchestrator.Invalid("invalid workflow definition", "workflow.id: is required"),
			wantStatus: 400, wantCall: &call{"CreateWorkflow", []any{`{}`, orchestrator.FormatJSON}}, wantError: "workflow.id: is required"},
		{name: "create conflict", method: "POST", target: wf, body: `{}`, svcErr: orchestrator.Conflict("busy"),
			wantStatus: 409, wantCall: &call{"CreateWorkflow", []any{`{}`, orchestrator.FormatJSON}}, wantError: "busy"},
		{name: "create internal", method: "POST", target: wf, body: `{}`, svcErr: fmt.Errorf("put item: %w", io.ErrUnexpectedEOF),
			wantStatus: 500, wantCall: &call{"CreateWorkflow", []any{`{}`, orchestrator.FormatJSON}}, wantError: "internal error"},
		{name: "create nil result", method: "POST", target: wf, body: `{}`, nilResult: true,
			wantStatus: 500, wantCall: &call{"CreateWorkflow", []any{`{}`, orchestrator.FormatJSON}}, wantError: "internal error"},
		{name: "create wrapped Error keeps status", method: "POST", target: wf, body: `{}`,
			svcErr:     fmt.Errorf("create: %w", orchestrator.NotFound("no such template")),
			wantStatus: 404, wantCall: &call{"CreateWorkflow", []any{`{}`, orchestrator.FormatJSON}}, wantError: "no such template"},
		{name: "create Error with a non-error status", method: "POST", target: wf, body: `{}`,
			svcErr:     &orchestrator.Error{Status: 302, Message: "moved"},
			wantStatus: 500, wantCall: &call{"CreateWorkflow", []any{`{}`, orchestrator.FormatJSON}}, wantError: "internal error"},

		// breakpoints
		{name: "breakpoint add", method: "POST", target: wf + "/steps/breakpoints",
			body: `{"workflow_id":"sample-wf","step_id":"job1","workflow_instance_id":7}`, wantStatus: 200,
			wantCall: &call{"AddBreakpoint", []any{orchestrator.Breakpoint{WorkflowID: "sample-wf", StepID: "job1", Instance: 7}}},
			wantBody: `{"workflow_id":"sample-wf","step_id":"job1","workflow_version":0,"workflow_instance_id":7,"workflow_run":0,"step_attempt_id":0,"create_time":1763776800000}`},
		{name: "breakpoint add missing step", method: "POST", target: wf + "/steps/breakpoints",
			body: `{"workflow_id":"sample-wf"}`, wantStatus: 400, wantError: "step_id: is required"},
		{name: "breakpoint add negative run", method: "POST", target: wf + "/steps/breakpoints",
			body: `{"workflow_id":"w","step_id":"s","workflow_run":-1}`, wantStatus: 400, wantError: "workflow_run: must be a non-negative integer"},
		{name: "breakpoint add unknown field", method: "POST", target: wf + "/steps/breakpoints",
			body: `{"workflow_id":"w","step_id":"s","when":1}`, wantStatus: 400, wantError: "when: unknown field"},
		{name: "breakpoint list", method: "GET", target: wf + "/steps/breakpoints?workflowId=sample-wf&stepId=job1", wantStatus: 200,
			wantCall: &call{"ListBreakpoints", []any{"sample-wf", "job1"}}, wantBody: `{"breakpoints":[]}`},
		{name: "breakpoint list needs workflow", method: "GET", target: wf + "/steps/breakpoints", wantStatus: 400,
			wantError: "workflowId: is required"},
		{name: "breakpoint remove", method: "DELETE", target: wf + "/steps/breakpoints?workflowId=sample-wf&stepId=job1", wantStatus: 200,
			wantCall: &call{"RemoveBreakpoints", []any{"sample-wf", "job1", true}},
			wantBody: `{"workflow_id":"sample-wf","step_id":"job1","resumed_step_attempts":2}`},
		{name: "breakpoint remove without resume", method: "DELETE", target: wf + "/steps/breakpoints?workflowId=w&stepId=s&resume=false",
			wantStatus: 200, wantCall: &call{"RemoveBreakpoints", []any{"w", "s", false}}},
		{name: "breakpoint remove bad resume", method: "DELETE", target: wf + "/steps/breakpoints?workflowId=w&stepId=s&resume=maybe",
			wantStatus: 400, wantError: "resume: must be true or false"},
		{name: "paused attempts", method: "GET", target: wf + "/steps/breakpoints/paused-step-attempts?workflowId=sample-wf", wantStatus: 200,
			wantCall: &call{"PausedAttempts", []any{"sample-wf", ""}},
			wantBody: `{"paused_step_attempts":[{"workflow_id":"sample-wf","workflow_version_id":0,"workflow_instance_id":1,"workflow_run_id":1,"step_id":"job1","step_attempt_id":1}]}`},
		{name: "resume attempt", method: "PUT", target: wf + "/steps/breakpoints/sample-wf/instances/7/runs/1/steps/job1/attempts/2/actions/resume",
			wantStatus: 200, wantCall: &call{"ResumeAttempt", []any{"sample-wf", int64(7), int64(1), "job1", int64(2)}}, wantBody: instJSON(7, 1)},
		{name: "resume attempt bad attempt", method: "PUT", target: wf + "/steps/breakpoints/w/instances/7/runs/1/steps/job1/attempts/0/actions/resume",
			wantStatus: 400, wantError: "attempt: must be a positive integer"},

		// step restart
		{name: "step restart", method: "POST", target: wf + "/sample-wf/instances/7/steps/job1/actions/restart", body: `{"upstream_restart_mode":"RESTART_FROM_STEP"}`,
			wantStatus: 200, wantCall: &call{"RestartStep", []any{"sample-wf", int64(7), "job1", orchestrator.StepRestartRequest{UpstreamRestartMode: "RESTART_FROM_STEP"}}},
			wantBody: instJSON(7, 2)},
		{name: "step restart empty body", method: "POST", target: wf + "/sample-wf/instances/7/steps/job1/actions/restart",
			wantStatus: 200, wantCall: &call{"RestartStep", []any{"sample-wf", int64(7), "job1", orchestrator.StepRestartRequest{}}}},
		{name: "step restart with step_run_params", method: "POST", target: wf + "/sample-wf/instances/7/steps/job1/actions/restart",
			body:       `{"step_run_params":{"n":{"type":"LONG","value":3}},"restart_policy":"RESTART_FROM_BEGINNING","upstream_restart_mode":"RESTART_FROM_STEP"}`,
			wantStatus: 200, wantCall: &call{"RestartStep", []any{"sample-wf", int64(7), "job1", orchestrator.StepRestartRequest{
				RestartPolicy: "RESTART_FROM_BEGINNING", UpstreamRestartMode: "RESTART_FROM_STEP",
				StepRunParams: map[string]json.RawMessage{"n": json.RawMessage(`{"type":"LONG","value":3}`)}}}}},
		{name: "step restart with step_run_params not an object", method: "POST", target: wf + "/sample-wf/instances/7/steps/job1/actions/restart",
			body: `{"step_run_params":[1]}`, wantStatus: 400, wantError: "step_run_params: "},
		{name: "step restart with a reserved step_run_params name", method: "POST", target: wf + "/sample-wf/instances/7/steps/job1/actions/restart",
			body: `{"step_run_params":{"AUTH_BLOB":{"type":"STRING","value":"x"}}}`, wantStatus: 400, wantError: "step_run_params.AUTH_BLOB: reserved param name"},
		{name: "step restart unknown field", method: "POST", target: wf + "/sample-wf/instances/7/steps/job1/actions/restart",
			body: `{"policy":"x"}`, wantStatus: 400, wantError: "policy: unknown field"},

		// output data
		{name: "output data", method: "PUT", target: "/api/v3/output-data",
			body:       `{"workflow_id":"sample-wf","workflow_instance_id":7,"step_id":"job1","external_job_type":"spark","external_job_id":"app-1","params":{"answer":{"evaluated_result":42,"type":"LONG"}}}`,
			wantStatus: 200, wantCall: &call{"PutOutputData", []any{orchestrator.OutputData{WorkflowID: "sample-wf", InstanceID: 7, StepID: "job1",
				ExternalJobType: "spark", ExternalJobID: "app-1", Params: map[string]any{"answer": json.Number("42")}}}},
			wantBody: `{"workflow_id":"sample-wf","workflow_instance_id":7,"workflow_run_id":1,"step_id":"job1","step_attempt_id":1,"params":["answer"]}`},
		{name: "output data missing fields", method: "PUT", target: "/api/v3/output-data", body: `{"params":{}}`,
			wantStatus: 400, wantError: "workflow_instance_id: is required"},
		{name: "output data bare param", method: "PUT", target: "/api/v3/output-data",
			body:       `{"workflow_id":"w","workflow_instance_id":1,"step_id":"s","params":{"x":5}}`,
			wantStatus: 400, wantError: "params.x: must be an object with evaluated_result or value"},
		{name: "output data dynamic signal outputs", method: "PUT", target: "/api/v3/output-data",
			body: `{"workflow_id":"sample-wf","workflow_instance_id":7,"step_id":"job1","artifacts":{"maestro_dynamic_output":{"type":"DYNAMIC_OUTPUT",
			  "signal_outputs":[{"type":"MAP","evaluated_result":{"name":"demo_table","dt":"2026","n":3,"ok":true}}]}}}`,
			wantStatus: 200, wantCall: &call{"PutOutputData", []any{orchestrator.OutputData{WorkflowID: "sample-wf", InstanceID: 7, StepID: "job1",
				Signals: []engine.DynamicSignal{{Name: "demo_table", Params: map[string]any{"dt": "2026", "n": int64(3)}, Payload: map[string]any{"ok": true}}}}}}},
		{name: "output data other artifact", method: "PUT", target: "/api/v3/output-data",
			body:       `{"workflow_id":"w","workflow_instance_id":1,"step_id":"s","params":{},"artifacts":{"maestro_retry":{"retryable":false}}}`,
			wantStatus: 400, wantError: "artifacts.maestro_retry: not supported by this runtime (output data carries only maestro_dynamic_output)"},
		{name: "output data dynamic output without a name", method: "PUT", target: "/api/v3/output-data",
			body:       `{"workflow_id":"w","workflow_instance_id":1,"step_id":"s","artifacts":{"maestro_dynamic_output":{"signal_outputs":[{"evaluated_result":{"dt":"1"}}]}}}`,
			wantStatus: 400, wantError: "artifacts.maestro_dynamic_output.signal_outputs[0].evaluated_result.name: is required"},
		{name: "output data dynamic output not a list", method: "PUT", target: "/api/v3/output-data",
			body:       `{"workflow_id":"w","workflow_instance_id":1,"step_id":"s","artifacts":{"maestro_dynamic_output":{"signal_outputs":{"name":"x"}}}}`,
			wantStatus: 400, wantError: "artifacts.maestro_dynamic_output.signal_outputs: must be an array of MAP params, got an object"},
		{name: "output data past the count of dynamic outputs", method: "PUT", target: "/api/v3/output-data", body: dynamicOutputs(21, 1),
			wantStatus: 400, wantError: "artifacts.maestro_dynamic_output.signal_outputs: must have at most 20 signal outputs, got 21"},
		{name: "output data past the bytes of dynamic outputs", method: "PUT", target: "/api/v3/output-data", body: dynamicOutputs(8, 5000),
			wantStatus: 400, wantError: "artifacts.maestro_dynamic_output.signal_outputs: dynamic signal outputs are 40"},
		{name: "output data past one output's payload", method: "PUT", target: "/api/v3/output-data", body: dynamicOutputs(1, 9000),
			wantStatus: 400, wantError: "signal_outputs[0].evaluated_result: the values other than params are 9010 bytes of JSON, more than 8192"},
		{name: "output data neither params nor artifacts", method: "PUT", target: "/api/v3/output-data",
			body:       `{"workflow_id":"w","workflow_instance_id":1,"step_id":"s"}`,
			wantStatus: 400, wantError: "params: is required (or artifacts)"},

		// job queues
		{name: "job queue put", method: "POST", target: "/api/v3/job-queues", body: `{"name":"gpu","cpu":4.5,"memory":16384,"gpu":2,"aging_seconds":60}`,
			wantStatus: 200, wantCall: &call{"PutJobQueue", []any{orchestrator.JobQueueRequest{Name: "gpu", CPU: 4.5, Memory: 16384, GPU: 2, Aging: 60}}}},
		{name: "job queue put missing cpu", method: "POST", target: "/api/v3/job-queues", body: `{"name":"q"}`, wantStatus: 400, wantError: "cpu: is required"},
		{name: "job queue put negative", method: "POST", target: "/api/v3/job-queues", body: `{"name":"q","cpu":1,"memory":-1}`, wantStatus: 400,
			wantError: "memory: must be a non-negative integer"},
		{name: "job queue put unknown", method: "POST", target: "/api/v3/job-queues", body: `{"name":"q","cpu":1,"slots":3}`, wantStatus: 400,
			wantError: "slots: unknown field"},
		{name: "job queue get", method: "GET", target: "/api/v3/job-queues/gpu", wantStatus: 200, wantCall: &call{"GetJobQueue", []any{"gpu"}}},
		{name: "job queue delete", method: "DELETE", target: "/api/v3/job-queues/gpu", wantStatus: 200, wantCall: &call{"DeleteJobQueue", []any{"gpu"}}},

		// task tokens
		{name: "task success", method: "POST", target: "/api/v3/tasks/" + testToken + "/success", body: `{"outputs":{"rows":7},"message":"done"}`,
			wantStatus: 200, wantCall: &call{"CompleteTask", []any{testToken, orchestrator.TaskCompletion{Action: "success",
				Outputs: map[string]any{"rows": json.Number("7")}, Message: "done"}}},
			wantBody: `{"workflow_id":"wf","workflow_instance_id":1,"workflow_run_id":1,"step_id":"s","step_attempt_id":1,"action":"success","status":"SUCCEEDED","recorded":true}`},
		{name: "task failure", method: "POST", target: "/api/v3/tasks/" + testToken + "/failure", body: `{"error":"platform_error","message":"no capacity"}`,
			wantStatus: 200, wantCall: &call{"CompleteTask", []any{testToken, orchestrator.TaskCompletion{Action: "failure", Error: "PLATFORM_ERROR", Message: "no capacity"}}}},
		{name: "task heartbeat without a body", method: "POST", target: "/api/v3/tasks/" + testToken + "/heartbeat",
			wantStatus: 200, wantCall: &call{"CompleteTask", []any{testToken, orchestrator.TaskCompletion{Action: "heartbeat"}}}},
		{name: "task success with an error field", method: "POST", target: "/api/v3/tasks/" + testToken + "/success", body: `{"error":"USER_ERROR"}`,
			wantStatus: 400, wantError: "error: unknown field for a success report"},
		{name: "task outputs not an object", method: "POST", target: "/api/v3/tasks/" + testToken + "/success", body: `{"outputs":[1]}`,
			wantStatus: 400, wantError: "outputs: must be an object of output params"},
		{name: "task token used twice", method: "POST", target: "/api/v3/tasks/" + testToken + "/success", svcErr: orchestrator.Conflict("the task token was already used"),
			wantStatus: 409, wantCall: &call{"CompleteTask", []any{testToken, orchestrator.TaskCompletion{Action: "success"}}}, wantError: "already used"},
		{name: "task get", method: "GET", target: "/api/v3/tasks/" + testToken + "/success", wantStatus: 405},

		// delete
		{name: "delete workflow", method: "DELETE", target: wf + "/sample-wf", wantStatus: 202,
			wantCall: &call{"DeleteWorkflow", []any{"sample-wf"}}, wantBody: `{"workflow_id":"sample-wf","status":"DELETING"}`},
		{name: "delete busy workflow", method: "DELETE", target: wf + "/sample-wf", svcErr: orchestrator.Conflict("busy"),
			wantStatus: 409, wantCall: &call{"DeleteWorkflow", []any{"sample-wf"}}, wantError: "busy"},

		// signals
		{name: "announce", method: "POST", target: "/api/v3/signals", body: `{"name":"db/test/table1","params":{"dt":"20260105"},"request_id":"r1","note":"x"}`,
			wantStatus: 200, wantCall: &call{"AnnounceSignal", []any{"db/test/table1", "r1", "api"}},
			wantBody: `{"name":"db/test/table1","seq_id":1,"params":{"dt":"20260105"},"create_time":1763776800000,"created":true}`},
		{name: "announce without name", method: "POST", target: "/api/v3/signals", body: `{"params":{}}`,
			wantStatus: 400, wantError: "name: is required"},
		{name: "announce bad param", method: "POST", target: "/api/v3/signals", body: `{"name":"a","params":{"x":true}}`,
			wantStatus: 400, wantError: "params.x"},
		{name: "signal instance with an encoded name", method: "GET", target: "/api/v3/signals/db%2Ftest%2Ftable1/instances/3", wantStatus: 200,
			wantCall: &call{"GetSignal", []any{"db/test/table1", int64(3)}}},
		{name: "signal latest", method: "GET", target: "/api/v3/signals/s3:%2F%2Flake%2Fevents/instances/latest", wantStatus: 200,
			wantCall: &call{"GetSignal", []any{"s3://lake/events", int64(0)}}},
		{name: "signal bad seq", method: "GET", target: "/api/v3/signals/a/instances/0", wantStatus: 400, wantError: "seq: must be latest or a positive integer"},
		{name: "signal lineage", method: "GET", target: "/api/v3/signals/a/instances/2/lineage", wantStatus: 200,
			wantCall: &call{"SignalLineage", []any{"a", int64(2)}}},

		// tag permits
		{name: "tag permit put", method: "POST", target: "/api/v3/tag-permits", body: `{"tag":"db","max_allowed":2}`, wantStatus: 200,
			wantCall: &call{"PutTagPermitInfo", []any{"db", int64(2), map[string]json.RawMessage(nil)}}, wantBody: `{"tag":"db","max_allowed":2,"held":0,"waiting":0}`},
		{name: "tag permit put extra info", method: "POST", target: "/api/v3/tag-permits", body: `{"tag":"db","max_allowed":2,"source":"test","extra_info":{"team":"data"}}`, wantStatus: 200,
			wantCall: &call{"PutTagPermitInfo", []any{"db", int64(2), map[string]json.RawMessage{"source": json.RawMessage(`"test"`), "team": json.RawMessage(`"data"`)}}},
			wantBody: `{"tag":"db","max_allowed":2,"held":0,"waiting":0,"source":"test","team":"data"}`},
		{name: "tag permit extra info reserved key", method: "POST", target: "/api/v3/tag-permits", body: `{"tag":"db","max_allowed":2,"extra_info":{"timeline":[]}}`,
			wantStatus: 400, wantError: `extra_info: key "timeline" is reserved`},
		{name: "tag permit tag too long", method: "POST", target: "/api/v3/tag-permits", body: `{"tag":"` + strings.Repeat("t", 257) + `","max_allowed":2}`,
			wantStatus: 400, wantError: "tag: must be at most 256 characters"},
		{name: "tag permit extra info not an object", method: "POST", target: "/api/v3/tag-permits", body: `{"tag":"db","max_allowed":2,"extra_info":[1]}`,
			wantStatus: 400, wantError: "extra_info: must be a JSON object"},
		{name: "tag permit extra info too big", method: "POST", target: "/api/v3/tag-permits", body: `{"tag":"db","max_allowed":2,"extra_info":{"x":"` + strings.Repeat("a", 5000) + `"}}`,
			wantStatus: 400, wantError: "the limit is 4096"},
		{name: "workflow tag add", method: "POST", target: "/api/v3/workflows/wf1/properties/tag", body: `{"name":"t1"}`, wantStatus: 200,
			wantCall: &call{"AddWorkflowTag", []any{"wf1", `{"name":"t1"}`}}},
		{name: "workflow tag add empty", method: "POST", target: "/api/v3/workflows/wf1/properties/tag", body: ``, wantStatus: 400, wantError: "request body: must be a tag"},
		{name: "workflow tag delete", method: "DELETE", target: "/api/v3/workflows/wf1/properties/tag/t1", wantStatus: 200,
			wantCall: &call{"DeleteWorkflowTag", []any{"wf1", "t1"}}},
		{name: "workflow tag delete an encoded name", method: "DELETE", target: "/api/v3/workflows/wf1/properties/tag/team%2Fa%20b", wantStatus: 200,
			wantCall: &call{"DeleteWorkflowTag", []any{"wf1", "team/a b"}}},
		{name: "workflow tag delete bad name", method: "DELETE", target: "/api/v3/workflows/wf1/properties/tag/maestro_x", wantStatus: 400, wantError: "workflowTagName: tag name"},
		{name: "workflow tag delete long name", method: "DELETE", target: "/api/v3/workflows/wf1/properties/tag/" + strings.Repeat("t", 300), wantStatus: 400, wantError: "the limit is 256"},
		{name: "tag permit put zero", method: "POST", target: "/api/v3/tag-permits", body: `{"tag":"db","max_allowed":0}`, wantStatus: 200,
			wantCall: &call{"PutTagPermitInfo", []any{"db", int64(0), map[string]json.RawMessage(nil)}}},
		{name: "tag permit put negative", method: "POST", target: "/api/v3/tag-permits", body: `{"tag":"db","max_allowed":-1}`,
			wantStatus: 400, wantError: "max_allowed: must be a non-negative integer"},
		{name: "tag permit put missing", method: "POST", target: "/api/v3/tag-permits", body: `{}`,
			wantStatus: 400, wantError: "tag: is required"},
		{name: "tag permit get", method: "GET", target: "/api/v3/tag-permits/db", wantStatus: 200,
			wantCall: &call{"GetTagPermit", []any{"db"}}, wantBody: `{"tag":"db","max_allowed":2,"held":0,"waiting":0}`},
		{name: "tag permit get missing", method: "GET", target: "/api/v3/tag-permits/nope", svcErr: orchestrator.NotFound("no tag permit for tag %q", "nope"),
			wantStatus: 404, wantCall: &call{"GetTagPermit", []any{"nope"}}, wantError: "no tag permit"},
		{name: "tag permit delete", method: "DELETE", target: "/api/v3/tag-permits/db", wantStatus: 200,
			wantCall: &call{"DeleteTagPermit", []any{"db"}}},

		// validate
		{name: "validate json", method: "PUT", target: wf + "/actions/validate", body: `{"id":"x"}`, wantStatus: 200,
			wantCall: &call{"ValidateWorkflow", []any{`{"id":"x"}`, orchestrator.FormatJSON}}, wantBody: `{"status":"valid"}`},
		{name: "validate format=yaml", method: "PUT", target: wf + "/actions/validate?format=YAML", body: "id: x", wantStatus: 200,
			wantCall: &call{"ValidateWorkflow", []any{"id: x", orchestrator.FormatYAML}}, wantBody: `{"status":"valid"}`},
		{name: "validate content type yaml", method: "PUT", target: wf + "/actions/validate", body: "id: x",
			contentType: "application/yaml; charset=utf-8", wantStatus: 200,
			wantCall: &call{"ValidateWorkflow", []any{"id: x", orchestrator.FormatYAML}}, wantBody: `{"status":"valid"}`},
		{name: "validate format=json wins over content type", method: "PUT", target: wf + "/actions/validate?format=json",
			body: `{}`, contentType: "text/yaml", wantStatus: 200,
			wantCall: &call{"ValidateWorkflow", []any{`{}`, orchestrator.FormatJSON}}},
		{name: "validate yaml path", method: "PUT", target: wf + "/actions/validate/yaml", body: "id: x", wantStatus: 200,
			wantCall: &call{"ValidateWorkflow", []any{"id: x", orchestrator.FormatYAML}}},
		{name: "validate bad format", method: "PUT", target: wf + "/actions/validate?format=xml", body: "<x/>",
			wantStatus: 400, wantError: "format: must be json or yaml"},
		{name: "validate invalid", method: "PUT", target: wf + "/actions/validate", body: `{"id":""}`,
			svcErr:     orchestrator.Invalid("invalid workflow definition", "workflow.id: must not be empty"),
			wantStatus: 400, wantCall: &call{"ValidateWorkflow", []any{`{"id":""}`, orchestrator.FormatJSON}},
			wantError: "workflow.id: must not be empty"},

		// get version
		{name: "version active", method: "GET", target: wf + "/sample-wf/versions/active", wantStatus: 200,
			wantCall: &call{"GetWorkflowVersion", []any{"sample-wf", "active"}}, wantBody: viewJSON},
		{name: "version LATEST", method: "GET", target: wf + "/sample-wf/versions/LATEST", wantStatus: 200,
			wantCall: &call{"GetWorkflowVersion", []any{"sample-wf", "latest"}}},
		{name: "version default", method: "GET", target: wf + "/sample-wf/versions/default", wantStatus: 200,
			wantCall: &call{"GetWorkflowVersion", []any{"sample-wf", "default"}}},
		{name: "version number", method: "GET", target: wf + "/sample-wf/versions/012", wantStatus: 200,
			wantCall: &call{"GetWorkflowVersion", []any{"sample-wf", "12"}}},
		{name: "version escaped id", method: "GET", target: wf + "/a%2Db.c/versions/1", wantStatus: 200,
			wantCall: &call{"GetWorkflowVersion", []any{"a-b.c", "1"}}},
		{name: "version id with a space", method: "GET", target: wf + "/a%20b.c/versions/1", wantStatus: 400,
			wantError: `id: workflow id "a b.c" is invalid`},
		{name: "version zero", method: "GET", target: wf + "/sample-wf/versions/0", wantStatus: 400, wantError: "version: must be"},
		{name: "version negative", method: "GET", target: wf + "/sample-wf/versions/-1", wantStatus: 400, wantError: "version: must be"},
		{name: "version word", method: "GET", target: wf + "/sample-wf/versions/newest", wantStatus: 400, wantError: "version: must be"},
		{name: "version overflow", method: "GET", target: wf + "/sample-wf/versions/9223372036854775808", wantStatus: 400, wantError: "version: must be"},
		{name: "version not found", method: "GET", target: wf + "/nope/versions/active", svcErr: orchestrator.NotFound("workflow nope not found"),
			wantStatus: 404, wantCall: &call{"GetWorkflowVersion", []any{"nope", "active"}}, wantError: "workflow nope not found"},

		// start
		{name: "start empty body", method: "POST", target: wf + "/sample-wf/versions/active/actions/start", wantStatus: 200,
			wantCall: &call{"StartWorkflow", []any{"sample-wf", "active", orchestrator.StartRequest{Initiator: manual("")}}},
			wantBody: startJSON},
		{name: "start full body", method: "POST", target: wf + "/sample-wf/versions/3/actions/start",
			body: `{"initiator":{"type":"Manual","user":"alice"},"request_time":1763776800000,
				"request_id":"97A57978-803F-403E-9F9B-376D34689723","run_params":{"foo":{"value":"bar","type":"STRING"}},
				"runtime_tags":["t1",{"name":"t2"}],"artifacts":{"a":{"k":1}},"persist_failed_run":false}`,
			wantStatus: 200,
			wantCall: &call{"StartWorkflow", []any{"sample-wf", "3", orchestrator.StartRequest{
				Initiator:   manual("alice"),
				RequestTime: 1763776800000,
				RequestID:   "97a57978-803f-403e-9f9b-376d34689723",
				RunParams:   map[string]json.RawMessage{"foo": json.RawMessage(`{"value":"bar","type":"STRING"}`)},
				RuntimeTags: []json.RawMessage{json.RawMessage(`"t1"`), json.RawMessage(`{"name":"t2"}`)},
				Artifacts:   map[string]json.RawMessage{"a": json.RawMessage(`{"k":1}`)},
			}}},
			wantBody: startJSON},
		{name: "start batch", method: "POST", target: wf + "/sample-wf/versions/latest/actions/start-batch",
			body: `{"requests":[{"request_id":"97A57978-803F-403E-9F9B-376D34689723","run_params":{"foo":{"value":"bar","type":"STRING"}}},
				{"request_id":"97a57978-803f-403e-9f9b-376d34689724","initiator":{"type":"manual","user":"bob"}}]}`,
			wantStatus: 200,
			wantCall: &call{"StartBatch", []any{"sample-wf", "latest", []orchestrator.StartRequest{
				{Initiator: manual(""), RequestID: "97a57978-803f-403e-9f9b-376d34689723",
					RunParams: map[string]json.RawMessage{"foo": json.RawMessage(`{"value":"bar","type":"STRING"}`)}},
				{Initiator: manual("bob"), RequestID: "97a57978-803f-403e-9f9b-376d34689724"},
			}}},
			wantBody: `{"results":[{"workflow_id":"sample-wf","workflow_version_id":3,"workflow_instance_id":1,"workflow_run_id":1,"workflow_uuid":"","status":"CREATED","created":true},` +
				`{"workflow_id":"sample-wf","workflow_version_id":3,"workflow_instance_id":2,"workflow_run_id":1,"workflow_uuid":"","status":"CREATED","created":true}],` +
				`"started":2,"found":0,"failed":0}`},
		{name: "start batch empty body", method: "POST", target: wf + "/sample-wf/versions/latest/actions/start-batch",
			wantStatus: 400, wantError: "request body: must not be empty"},
		{name: "start batch without requests", method: "POST", target: wf + "/sample-wf/versions/latest/actions/start-batch",
			body: `{"request":[]}`, wantStatus: 400, wantError: "request: unknown field"},
		{name: "start batch of none", method: "POST", target: wf + "/sample-wf/versions/latest/actions/start-batch",
			body: `{"requests":[]}`, wantStatus: 400, wantError: "requests: must hold at least one run request"},
		{name: "start batch not an array", method: "POST", target: wf + "/sample-wf/versions/latest/actions/start-batch",
			body: `{"requests":{"request_id":"97a57978-803f-403e-9f9b-376d34689723"}}`, wantStatus: 400, wantError: "requests: must be an array of run requests"},
		{name: "start batch of 101", method: "POST", target: wf + "/sample-wf/versions/latest/actions/start-batch",
			body: `{"requests":[` + strings.Repeat(`{},`, 100) + `{}]}`, wantStatus: 400, wantError: "requests: at most 100 run requests are allowed, got 101"},
		{name: "start batch request without an id", method: "POST", target: wf + "/sample-wf/versions/latest/actions/start-batch",
			body: `{"requests":[{"request_id":"97a57978-803f-403e-9f9b-376d34689723"},{}]}`, wantStatus: 400,
			wantError: "requests[1].request_id: is required in a batch"},
		{name: "start batch request not an object", method: "POST", target: wf + "/sample-wf/versions/latest/actions/start-batch",
			body: `{"requests":[null]}`, wantStatus: 400, wantError: "requests[0]: must be a run request object"},
		{name: "start batch request with a duplicate field", method: "POST", target: wf + "/sample-wf/versions/latest/actions/start-batch",
			body:       `{"requests":[{"request_id":"97a57978-803f-403e-9f9b-376d34689723","request_id":"97a57978-803f-403e-9f9b-376d34689724"}]}`,
			wantStatus: 400, wantError: "requests[0]: duplicate field request_id"},
		{name: "start batch request with a reserved param", method: "POST", target: wf + "/sample-wf/versions/latest/actions/start-batch",
			body:       `{"requests":[{"request_id":"97a57978-803f-403e-9f9b-376d34689723"},{"request_id":"97a57978-803f-403e-9f9b-376d34689724","run_params":{"AUTH_BLOB":{"value":1}}}]}`,
			wantStatus: 400, wantError: "requests[1].run_params.AUTH_BLOB: reserved param name"},
		{name: "start batch of a time initiator", method: "POST", target: wf + "/sample-wf/versions/latest/actions/start-batch",
			body:       `{"requests":[{"request_id":"97a57978-803f-403e-9f9b-376d34689723","initiator":{"type":"TIME"}}]}`,
			wantStatus: 400, wantError: "requests[0].initiator.type: only manual starts are accepted over the API"},
		{name: "start batch refused by the service", method: "POST", target: wf + "/sample-wf/versions/latest/actions/start-batch",
			body:   `{"requests":[{"request_id":"97a57978-803f-403e-9f9b-376d34689723"}]}`,
			svcErr: orchestrator.Invalid("invalid batch start: nothing was started", "requests[0]: run params override params their mode protects"),
			wantCall: &call{"StartBatch", []any{"sample-wf", "latest", []orchestrator.StartRequest{
				{Initiator: manual(""), RequestID: "97a57978-803f-403e-9f9b-376d34689723"}}}},
			wantStatus: 400, wantError: "requests[0]: run params override"},
		{name: "start unknown field", method: "POST", target: wf + "/sample-wf/versions/active/actions/start",
			body: `{"initiator":{"type":"manual"},"run_parms":{}}`, wantStatus: 400, wantError: "run_parms: unknown field"},
		{name: "start time initiator", method: "POST", target: wf + "/sample-wf/versions/active/actions/start",
			body: `{"initiator":{"type":"time"}}`, wantStatus: 400,
			wantError: "initiator.type: only manual starts are accepted over the API"},
		{name: "start reserved param", method: "POST", target: wf + "/sample-wf/versions/active/actions/start",
			body: `{"run_params":{"Util":{"value":1}}}`, wantStatus: 400, wantError: "run_params.Util: reserved param name"},
		{name: "start bad version", method: "POST", target: wf + "/sample-wf/versions/first/actions/start",
			body: `{}`, wantStatus: 400, wantError: "version: must be"},
		{name: "start not JSON", method: "POST", target: wf + "/sample-wf/versions/active/actions/start",
			body: `initiator=manual`, wantStatus: 400, wantError: "request body: malformed JSON"},
		{name: "start conflict", method: "POST", target: wf + "/sample-wf/versions/active/actions/start", body: `{}`,
			svcErr:     orchestrator.Conflict("workflow sample-wf has no active version"),
			wantStatus: 409, wantCall: &call{"StartWorkflow", []any{"sample-wf", "active", orchestrator.StartRequest{Initiator: manual("")}}},
			wantError: "no active version"},

		// list instances
		{name: "instances default limit", method: "GET", target: wf + "/sample-wf/instances", wantStatus: 200,
			wantCall: &call{"ListInstances", []any{"sample-wf", "", "", 20}},
			wantBody: `{"workflow_instances":[` + instJSON(2, 1) + `,` + instJSON(1, 1) + `],"next_cursor":"next-page"}`},
		{name: "instances cursor and limit", method: "GET", target: wf + "/sample-wf/instances?cursor=abc%3D%3D&limit=100", wantStatus: 200,
			wantCall: &call{"ListInstances", []any{"sample-wf", "", "abc==", 100}}},
		{name: "instances empty page", method: "GET", target: wf + "/sample-wf/instances?cursor=empty&limit=1", wantStatus: 200,
			wantCall: &call{"ListInstances", []any{"sample-wf", "", "empty", 1}}, wantBody: `{"workflow_instances":[]}`},
		{name: "instances by status", method: "GET", target: wf + "/sample-wf/instances?status=FAILED&limit=5", wantStatus: 200,
			wantCall: &call{"ListInstances", []any{"sample-wf", "FAILED", "", 5}}},
		{name: "instances limit zero", method: "GET", target: wf + "/sample-wf/instances?limit=0", wantStatus: 400, wantError: "limit: must be"},
		{name: "instances limit 101", method: "GET", target: wf + "/sample-wf/instances?limit=101", wantStatus: 400, wantError: "limit: must be"},
		{name: "instances limit word", method: "GET", target: wf + "/sample-wf/instances?limit=all", wantStatus: 400, wantError: "limit: must be"},

		// instance, run
		{name: "instance", method: "GET", target: wf + "/sample-wf/instances/7", wantStatus: 200,
			wantCall: &call{"GetInstance", []any{"sample-wf", int64(7)}}, wantBody: instJSON(7, 1)},
		{name: "instance zero", method: "GET", target: wf + "/sample-wf/instances/0", wantStatus: 400, wantError: "instanceId: must be a positive integer"},
		{name: "instance word", method: "GET", target: wf + "/sample-wf/instances/latest", wantStatus: 400, wantError: "instanceId: must be a positive integer"},
		{name: "instance plus sign", method: "GET", target: wf + "/sample-wf/instances/+7", wantStatus: 400, wantError: "instanceId: must be a positive integer"},
		{name: "instance overflow", method: "GET", target: wf + "/sample-wf/instances/99999999999999999999", wantStatus: 400, wantError: "instanceId"},
		{name: "instance not found", method: "GET", target: wf + "/sample-wf/instances/8", svcErr: orchestrator.NotFound("instance 8 not found"),
			wantStatus: 404, wantCall: &call{"GetInstance", []any{"sample-wf", int64(8)}}, wantError: "instance 8 not found"},
		{name: "run", method: "GET", target: wf + "/sample-wf/instances/7/runs/2", wantStatus: 200,
			wantCall: &call{"GetRun", []any{"sample-wf", int64(7), int64(2)}}, wantBody: instJSON(7, 2)},
		{name: "run bad run id", method: "GET", target: wf + "/sample-wf/instances/7/runs/1.5", wantStatus: 400, wantError: "runId: must be a positive integer"},
		{name: "run bad instance id", method: "GET", target: wf + "/sample-wf/instances/x/runs/1", wantStatus: 400, wantError: "instanceId: must be a positive integer"},

		// steps
		{name: "steps", method: "GET", target: wf + "/sample-wf/instances/7/steps", wantStatus: 200,
			wantCall: &call{"ListSteps", []any{"sample-wf", int64(7)}}, wantBody: `[` + stepJSON(1, "job1", 1) + `,` + stepJSON(1, "job2", 2) + `]`},
		{name: "steps none", method: "GET", target: wf + "/sample-wf/instances/7/steps", nilResult: true, wantStatus: 200,
			wantCall: &call{"ListSteps", []any{"sample-wf", int64(7)}}, wantBody: `[]`},
		{name: "steps bad instance", method: "GET", target: wf + "/sample-wf/instances/-3/steps", wantStatus: 400, wantError: "instanceId"},
		{name: "attempt number", method: "GET", target: wf + "/sample-wf/instances/7/runs/1/steps/job1/attempts/2", wantStatus: 200,
			wantCall: &call{"GetStepAttempt", []any{"sample-wf", int64(7), int64(1), "job1", int64(2)}}, wantBody: stepJSON(1, "job1", 2)},
		{name: "attempt latest", method: "GET", target: wf + "/sample-wf/instances/7/runs/1/steps/job1/attempts/latest", wantStatus: 200,
			wantCall: &call{"GetStepAttempt", []any{"sample-wf", int64(7), int64(1), "job1", int64(0)}}, wantBody: stepJSON(1, "job1", 4)},
		{name: "attempt zero", method: "GET", target: wf + "/sample-wf/instances/7/runs/1/steps/job1/attempts/0", wantStatus: 400,
			wantError: "attempt: must be latest or a positive integer"},
		{name: "attempt word", method: "GET", target: wf + "/sample-wf/instances/7/runs/1/steps/job1/attempts/first", wantStatus: 400,
			wantError: "attempt: must be latest or a positive integer"},
		{name: "attempt bad run", method: "GET", target: wf + "/sample-wf/instances/7/runs/0/steps/job1/attempts/1", wantStatus: 400,
			wantError: "runId: must be a positive integer"},

		// unknown paths and wrong methods
		{name: "unknown path", method: "GET", target: "/nope", wantStatus: 404, wantError: "no endpoint GET /nope"},
		{name: "trailing slash", method: "GET", target: wf + "/", wantStatus: 404, wantError: "no endpoint"},
		{name: "unknown deeper path", method: "GET", target: wf + "/sample-wf/instances/7/runs/1/steps/job1/attempts", wantStatus: 404, wantError: "no endpoint"},
		{name: "delete workflows", method: "DELETE", target: wf, wantStatus: 405, wantAllow: "GET, HEAD, POST", wantError: "method DELETE is not allowed"},
		{name: "get validate", method: "GET", target: wf + "/actions/validate", wantStatus: 405, wantAllow: "PUT"},
		{name: "post health", method: "POST", target: "/health", wantStatus: 405, wantAllow: "GET, HEAD"},
		{name: "get start", method: "GET", target: wf + "/sample-wf/versions/active/actions/start", wantStatus: 405, wantAllow: "POST"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			svc := &fakeService{err: tc.svcErr, nilResult: tc.nilResult}
			h := NewHandler(svc.services(), Options{})
			req := httptest.NewRequest(tc.method, tc.target, strings.NewReader(tc.body))
			switch {
			case tc.contentType != "":
				req.Header.Set("Content-Type", tc.contentType)
			case tc.body != "" && strings.HasSuffix(tc.target, "/yaml"):
				req.Header.Set("Content-Type", "application/yaml")
			case tc.body != "":
				req.Header.Set("Content-Type", "application/json")
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)

			assert.Equal(t, tc.wantStatus, rec.Code, "body: %s", rec.Body)
			assert.Equal(t, "application/json", rec.Header().Get("Content-Type"))
			if tc.wantCall == nil {
				assert.Empty(t, svc.recorded(), "the service must not be called")
			} else {
				assert.Equal(t, []call{*tc.wantCall}, svc.recorded())
			}
			if tc.wantAllow != "" {
				assert.Equal(t, tc.wantAllow, rec.Header().Get("Allow"))
			}
			if tc.wantBody != "" {
				assert.JSONEq(t, tc.wantBody, rec.Body.String())
			}
			if tc.wantStatus >= 400 {
				e := decodeError(t, tc.wantStatus, rec.Body.Bytes())
				if tc.wantError != "" {
					all := append([]string{e.Message}, e.Errors...)
					assert.Contains(t, strings.Join(all, "\n"), tc.wantError)
				}
			}
		})
	}
}

func TestInternalErrorsAreLoggedNotSent(t *testing.T) {
	var logs bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&logs, nil))
	cause := errors.New("dynamodb: ProvisionedThroughputExceeded on table maestro")
	for _, svcErr := range []error{cause, orchestrator.Internal(cause), fmt.Errorf("start: %w", cause)} {
		t.Run(svcErr.Error(), func(t *testing.T) {
			logs.Reset()
			h := NewHandler((&fakeService{err: svcErr}).services(), Options{Logger: logger})
			req := httptest.NewRequest("POST", "/api/v3/workflows/wf/versions/active/actions/start",
				strings.NewReader(`{"run_params":{"password":{"value":"hunter2-secret"}}}`))
			req.Header.Set("Authorization", "Bearer token-secret-xyz")
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)

			require.Equal(t, 500, rec.Code)
			e := decodeError(t, 500, rec.Body.Bytes())
			assert.Equal(t, "internal error", e.Message)
			assert.NotContains(t, rec.Body.String(), "dynamodb", "the cause must not reach the client")

			assert.Contains(t, logs.String(), "ProvisionedThroughputExceeded", "the cause must be logged")
			assert.NotContains(t, logs.String(), "hunter2-secret", "request bodies must not be logged")
			assert.NotContains(t, logs.String(), "token-secret-xyz", "request headers must not be logged")
		})
	}
}

func TestBodyLimit(t *testing.T) {
	tests := []struct {
		name          string
		size          int
		unknownLength bool // chunked: no Content-Length, so only the reader cap can catch it
		wantStatus    int
	}{
		{name: "at the limit", size: MaxBodyBytes, wantStatus: 200},
		{name: "over the limit, declared", size: MaxBodyBytes + 1, wantStatus: 413},
		{name: "at the limit, chunked", size: MaxBodyBytes, unknownLength: true, wantStatus: 200},
		{name: "over the limit, chunked", size: MaxBodyBytes + 1, unknownLength: true, wantStatus: 413},
		{name: "far over the limit, chunked", size: 4 * MaxBodyBytes, unknownLength: true, wantStatus: 413},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			svc := &fakeService{}
			srv := httptest.NewServer(NewHandler(svc.services(), Options{}))
			defer srv.Close()

			body := bytes.Repeat([]byte("a"), tc.size)
			var reader io.Reader = bytes.NewReader(body)
			if tc.unknownLength {
				reader = io.MultiReader(bytes.NewReader(body)) // hides the length
			}
			req, err := http.NewRequest("POST", srv.URL+"/api/v3/workflows", reader)
			require.NoError(t, err)
			if tc.unknownLength {
				req.ContentLength = -1
			}
			req.Header.Set("Content-Type", "application/json")
			resp, err := srv.Client().Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			got, err := io.ReadAll(resp.Body)
			require.NoError(t, err)

			assert.Equal(t, tc.wantStatus, resp.StatusCode, "body: %s", got)
			if tc.wantStatus == 413 {
				e := decodeError(t, 413, got)
				assert.Contains(t, e.Message, "262144 bytes")
				assert.Empty(t, svc.recorded(), "nothing reaches the service")
			} else {
				require.Len(t, svc.recorded(), 1)
				assert.Len(t, svc.recorded()[0].Args[0], tc.size)
			}
		})
	}
}

func TestRequestID(t *testing.T) {
	tests := []struct {
		name     string
		incoming string
		echoed   bool
	}{
		{name: "echoed", incoming: "req-123:abc", echoed: true},
		{name: "uuid echoed", incoming: "97a57978-803f-403e-9f9b-376d34689723", echoed: true},
		{name: "missing", incoming: ""},
		{name: "unsafe characters", incoming: "abc\" injected=1"},
		{name: "too long", incoming: strings.Repeat("x", 129)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var seen string
			h := NewHandler((&fakeService{}).services(), Options{ExtraRoutes: func(mux *http.ServeMux) {
				mux.HandleFunc("GET /local/id", func(w http.ResponseWriter, r *http.Request) {
					seen = RequestIDFromContext(r.Context())
				})
			}})
			req := httptest.NewRequest("GET", "/local/id", nil)
			if tc.incoming != "" {
				req.Header.Set(RequestIDHeader, tc.incoming)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)

			got := rec.Header().Get(RequestIDHeader)
			assert.Equal(t, got, seen, "the context carries the id sent back")
			if tc.echoed {
				assert.Equal(t, tc.incoming, got)
			} else {
				_, err := uuid.Parse(got)
				assert.NoError(t, err, "generated id %q is a UUID", got)
			}
		})
	}
}

func TestAccessLog(t *testing.T) {
	var logs bytes.Buffer
	h := NewHandler((&fakeService{}).services(), Options{Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	for _, target := range []string{"/api/v3/workflows/wf/instances/7?cursor=secret-cursor", "/nope", "/api/v3/tasks/" + testToken + "/success", "/api/v3/tasks/success"} {
		method, body := "GET", ""
		if strings.HasPrefix(target, tasksPath) {
			method = "POST"
		}
		if target == "/api/v3/tasks/success" {
			body = `{"task_token":"` + testToken + `"}`
		}
		req := httptest.NewRequest(method, target, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(RequestIDHeader, "log-test")
		h.ServeHTTP(httptest.NewRecorder(), req)
	}

	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m), l)
		lines = append(lines, m)
	}
	require.Len(t, lines, 4)
	want := []struct {
		method, path string
		status       float64
	}{{"GET", "/api/v3/workflows/wf/instances/7", 200}, {"GET", "/nope", 404}, {"POST", "/api/v3/tasks/{token}/success", 200},
		{"POST", "/api/v3/tasks/success", 200}}
	for i, w := range want {
		assert.Equal(t, "http request", lines[i]["msg"])
		assert.Equal(t, w.method, lines[i]["method"])
		assert.Equal(t, w.path, lines[i]["path"])
		assert.Equal(t, w.status, lines[i]["status"])
		assert.Equal(t, "log-test", lines[i]["request_id"])
		assert.Contains(t, lines[i], "duration")
		assert.Greater(t, lines[i]["bytes"], float64(0))
	}
	assert.NotContains(t, logs.String(), "secret-cursor", "query strings are not logged")
	assert.NotContains(t, logs.String(), "secret-task-token", "task tokens are not logged")
}

func TestPanicRecovery(t *testing.T) {
	var logs bytes.Buffer
	svc := &fakeService{panicWith: "boom in service"}
	h := NewHandler(svc.services(), Options{Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/api/v3/workflows/wf/instances/7", nil))

	assert.Equal(t, 500, rec.Code)
	e := decodeError(t, 500, rec.Body.Bytes())
	assert.Equal(t, "internal error", e.Message)
	assert.NotContains(t, rec.Body.String(), "boom")
	assert.Contains(t, logs.String(), "panic serving request")
	assert.Contains(t, logs.String(), "boom in service")
	assert.Contains(t, logs.String(), `"status":500`, "the access log records the 500")
}

func TestPanicAfterWriteKeepsStatus(t *testing.T) {
	h := NewHandler((&fakeService{}).services(), Options{ExtraRoutes: func(mux *http.ServeMux) {
		mux.HandleFunc("GET /local/half", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusAccepted)
			panic("after the header")
		})
	}})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/local/half", nil))
	assert.Equal(t, http.StatusAccepted, rec.Code)
	assert.Empty(t, rec.Body.String(), "no error body is appended to a started answer")
}

func TestExtraRoutes(t *testing.T) {
	h := NewHandler((&fakeService{}).services(), Options{ExtraRoutes: func(mux *http.ServeMux) {
		mux.HandleFunc("POST /local/advance", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusNoContent)
		})
	}})
	tests := []struct {
		method     string
		wantStatus int
	}{{"POST", 204}, {"GET", 405}}
	for _, tc := range tests {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(tc.method, "/local/advance", nil))
		assert.Equal(t, tc.wantStatus, rec.Code, tc.method)
		if tc.wantStatus == 405 {
			assert.Equal(t, "POST", rec.Header().Get("Allow"))
			decodeError(t, 405, rec.Body.Bytes())
		}
	}
}

func TestNewHandlerNeedsService(t *testing.T) {
	assert.Panics(t, func() { NewHandler(Services{}, Options{}) })
}

// TestInlineWorkflowIDs: a loop's iterations are instances of an inline
// workflow, read, restarted one by one (or one of their steps), a step of
// one skipped, and resumed at a breakpoint through its id; nothing else
// takes it.
func TestInlineWorkflowIDs(t *testing.T) {
	const inline = "maestro_foreach_0123456789abcdef01234567"
	tests := []struct {
		method, target string
		allowed        bool
	}{
		{"GET", "/api/v3/workflows/" + inline + "/instances/3", true},
		{"POST", "/api/v3/workflows/" + inline + "/instances/3/actions/restart", true},
		{"PUT", "/api/v3/workflows/steps/breakpoints/" + inline + "/instances/3/runs/1/steps/s/attempts/1/actions/resume", true},
		{"POST", "/api/v3/workflows/" + inline + "/instances/3/steps/s/actions/restart", true},
		{"PUT", "/api/v3/workflows/" + inline + "/instances/3/steps/s/actions/skip", true},
		{"PUT", "/api/v3/workflows/" + inline + "/instances/3/steps/s/actions/stop", false},
		{"PUT", "/api/v3/workflows/" + inline + "/instances/3/actions/stop", false},
		{"POST", "/api/v3/workflows/" + inline + "/versions/latest/actions/start", false},
		{"DELETE", "/api/v3/workflows/" + inline, false},
	}
	for _, tc := range tests {
		t.Run(tc.method+" "+tc.target, func(t *testing.T) {
			h := NewHandler((&fakeService{}).services(), Options{})
			rec := httptest.NewRecorder()
			req := httptest.NewRequest(tc.method, "http://api"+tc.target, strings.NewReader(`{}`))
			req.Header.Set("Content-Type", "application/json")
			h.ServeHTTP(rec, req)
			if tc.allowed {
				assert.NotEqual(t, http.StatusBadRequest, rec.Code, rec.Body.String())
			} else {
				assert.Equal(t, http.StatusBadRequest, rec.Code, rec.Body.String())
				assert.Contains(t, rec.Body.String(), "must not start with")
			}
		})
	}
}
