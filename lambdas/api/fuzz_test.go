package api

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/uuid"
	"github.com/maestro-serverless/maestro/orchestrator"
)

// FuzzStartRequest posts arbitrary bodies to the start route, and to the
// batch start route both as they are and as the one request of a batch.
// The answer must be 200 (with exactly one well-formed StartWorkflow or
// StartBatch call) or a 4xx JSON error (with no call), never a panic or a
// 5xx.
func FuzzStartRequest(f *testing.F) {
	sample, err := os.ReadFile("testdata/maestro-sample-workflow-start-request.json")
	if err != nil {
		f.Fatal(err)
	}
	seeds := []string{
		"", "{}", "null", "[]", `"x"`, "{", `{"initiator":{"type":"manual"}}`,
		`{"initiator":{"type":"TIME"}}`, `{"request_id":"97a57978-803f-403e-9f9b-376d34689723"}`,
		`{"run_params":{"maestro":{}}}`, `{"run_params":{"a":1,"a":2}}`, `{"request_time":1e3}`,
		`{"runtime_tags":["a",{"name":"b"},1]}`, `{"artifacts":{"x":null}}`, `{"persist_failed_run":true}`,
		`{"x":1} trailing`, `{"initiator":{"type":"manual","user":"u","extra":[]}}`,
		string(sample), `{"requests":[{"request_id":"97a57978-803f-403e-9f9b-376d34689723"},{}]}`,
		`{"requests":[{"request_id":"97a57978-803f-403e-9f9b-376d34689723","run_params":{"p":{"value":1}}}]}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	svc := &fakeService{}
	h := NewHandler(svc.services(), Options{})
	f.Fuzz(func(t *testing.T, body []byte) {
		postStart(t, h, svc, "start", body)
		postStart(t, h, svc, "start-batch", body)
		postStart(t, h, svc, "start-batch", append(append([]byte(`{"requests":[`), body...), "]}"...))
	})
}

// postStart posts body to the start or start-batch route of h over svc and
// checks the answer (see FuzzStartRequest).
func postStart(t *testing.T, h http.Handler, svc *fakeService, action string, body []byte) {
	t.Helper()
	svc.reset()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("POST", "/api/v3/workflows/wf/versions/active/actions/"+action, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	h.ServeHTTP(rec, req)

	calls := svc.recorded()
	switch {
	case rec.Code == 200:
		switch {
		case action == "start" && len(calls) == 1 && calls[0].Method == "StartWorkflow":
			checkStartRequest(t, calls[0].Args[2].(orchestrator.StartRequest))
		case action == "start-batch" && len(calls) == 1 && calls[0].Method == "StartBatch":
			reqs := calls[0].Args[2].([]orchestrator.StartRequest)
			if len(reqs) == 0 || len(reqs) > orchestrator.MaxBatchStarts {
				t.Fatalf("accepted a batch of %d", len(reqs))
			}
			for _, r := range reqs {
				if r.RequestID == "" {
					t.Fatalf("accepted a batch request without a request_id: %q", body)
				}
				checkStartRequest(t, r)
			}
		default:
			t.Fatalf("200 from %s with calls %v", action, calls)
		}
		if !json.Valid(rec.Body.Bytes()) {
			t.Fatalf("200 with a body that is not JSON: %q", rec.Body)
		}
	case rec.Code >= 400 && rec.Code < 500:
		if len(calls) != 0 {
			t.Fatalf("%d but the service was called: %v", rec.Code, calls)
		}
		var e errorBody
		if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Status != rec.Code || e.Message == "" || e.Errors == nil {
			t.Fatalf("%d with a malformed error body %q (%v)", rec.Code, rec.Body, err)
		}
	default:
		t.Fatalf("status %d for body %q: %s", rec.Code, body, rec.Body)
	}
}

// checkStartRequest asserts what the handler promises about an accepted
// start request.
func checkStartRequest(t *testing.T, req orchestrator.StartRequest) {
	t.Helper()
	if req.Initiator == nil || req.Initiator.Type != manualInitiator {
		t.Fatalf("accepted initiator %+v", req.Initiator)
	}
	if req.RequestID != "" {
		if u, err := uuid.Parse(req.RequestID); err != nil || u.String() != req.RequestID {
			t.Fatalf("accepted request_id %q", req.RequestID)
		}
	}
	if req.RequestTime < 0 {
		t.Fatalf("accepted request_time %d", req.RequestTime)
	}
	if len(req.RunParams) > maxRunParams {
		t.Fatalf("accepted %d run params", len(req.RunParams))
	}
	for name, v := range req.RunParams {
		if isReservedParamName(name) {
			t.Fatalf("accepted reserved param %q", name)
		}
		if !json.Valid(v) {
			t.Fatalf("param %q is not JSON: %q", name, v)
		}
	}
}

// FuzzAPIGatewayEvent feeds arbitrary events to the adapter in front of
// the real handler: no panic, no error, no 5xx, a body that survives the
// trip to API Gateway (UTF-8 or flagged base64), and JSON error bodies.
func FuzzAPIGatewayEvent(f *testing.F) {
	for _, name := range []string{"apigw-start-request.json", "apigw-list-instances-request.json", "apigw-create-yaml-base64-request.json"} {
		ev := loadEvent(f, name)
		qk, qv, hk, hv := "", "", "", ""
		for k, vs := range ev.MultiValueQueryStringParameters {
			qk, qv = k, vs[0]
		}
		for k, v := range ev.Headers {
			hk, hv = k, v
		}
		f.Add(ev.HTTPMethod, ev.Path, qk, qv, hk, hv, ev.Body, ev.IsBase64Encoded)
	}
	f.Add("GET", "/api/v3/workflows/w/instances/7/runs/1/steps/s/attempts/latest", "limit", "3", "X-Request-Id", "a\nb", "", false)
	f.Add("PUT", "/api/v3/workflows/actions/validate", "format", "yaml", "Content-Type", "text/yaml", "aWQ6IHg=", true)
	f.Add("POST", "/api/v3/workflows/../health", "", "", "", "", "\xff\xfe", false)
	f.Add("HEAD", "//", "a", "\x00", "Host", "", "===", true)

	svc := &fakeService{}
	handle := LambdaHandler(NewHandler(svc.services(), Options{}))
	f.Fuzz(func(t *testing.T, method, path, qk, qv, hk, hv, body string, isBase64 bool) {
		svc.reset()
		ev := events.APIGatewayProxyRequest{
			HTTPMethod:                      method,
			Path:                            path,
			Headers:                         map[string]string{hk: hv},
			MultiValueHeaders:               map[string][]string{hk: {hv, hv}},
			QueryStringParameters:           map[string]string{qk: qv},
			MultiValueQueryStringParameters: map[string][]string{qk: {qv}},
			Body:                            body,
			IsBase64Encoded:                 isBase64,
			RequestContext:                  events.APIGatewayProxyRequestContext{RequestID: "fuzz-req"},
		}
		resp, err := handle(context.Background(), ev)
		if err != nil {
			t.Fatalf("error: %v", err)
		}
		if resp.StatusCode < 200 || resp.StatusCode > 599 || resp.StatusCode >= 500 {
			t.Fatalf("status %d for %+v: %s", resp.StatusCode, ev, resp.Body)
		}
		raw := []byte(resp.Body)
		if resp.IsBase64Encoded {
			if raw, err = base64.StdEncoding.DecodeString(resp.Body); err != nil {
				t.Fatalf("base64 flag on a body that is not base64: %v", err)
			}
		} else if !utf8.ValidString(resp.Body) {
			t.Fatalf("body is neither UTF-8 nor flagged base64")
		}
		if resp.StatusCode >= 400 && method != "HEAD" {
			var e errorBody
			if err := json.Unmarshal(raw, &e); err != nil || e.Status != resp.StatusCode {
				t.Fatalf("%d with a body that is not a JSON error: %q", resp.StatusCode, raw)
			}
		}
		if len(raw) > 0 && resp.Headers["Content-Type"] == "" {
			t.Fatalf("body without Content-Type")
		}
	})
}
