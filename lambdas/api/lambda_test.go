package api

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/maestro-serverless/maestro/caller"
	"github.com/maestro-serverless/maestro/orchestrator"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// loadEvent reads an API Gateway REST proxy event from testdata.
func loadEvent(t testing.TB, name string) events.APIGatewayProxyRequest {
	t.Helper()
	raw, err := os.ReadFile("testdata/" + name)
	require.NoError(t, err)
	var ev events.APIGatewayProxyRequest
	require.NoError(t, json.Unmarshal(raw, &ev))
	return ev
}

func TestLambdaHandlerEvents(t *testing.T) {
	tests := []struct {
		file          string
		wantStatus    int
		wantCall      call
		wantRequestID string
		wantBody      string
	}{
		{
			file:       "apigw-start-request.json",
			wantStatus: 200,
			wantCall: call{"StartWorkflow", []any{"sample-wf", "active", orchestrator.StartRequest{
				Initiator: manual("alice"),
				RequestID: "97a57978-803f-403e-9f9b-376d34689723",
				RunParams: map[string]json.RawMessage{"foo": json.RawMessage(`{"value": "bar", "type": "STRING"}`)},
			}}},
			wantRequestID: "c6af9ac6-7b61-11e6-9a41-93e8deadbeef", // from requestContext
			wantBody: `{"workflow_id":"sample-wf","workflow_version_id":3,"workflow_instance_id":7,"workflow_run_id":1,
				"workflow_uuid":"5e4f1c2a-0000-4000-8000-000000000001","status":"CREATED","created":true}`,
		},
		{
			// Multi-value query wins, its first limit is used, and the decoded
			// cursor survives re-encoding.
			file:          "apigw-list-instances-request.json",
			wantStatus:    200,
			wantCall:      call{"ListInstances", []any{"sample-wf", "", "page 2&more=yes", 5}},
			wantRequestID: "client-req-42", // the caller's own
		},
		{
			file:          "apigw-create-yaml-base64-request.json",
			wantStatus:    200,
			wantCall:      call{"CreateWorkflow", []any{"id: sample-wf\nsteps:\n  - step:\n      id: job1\n      type: NoOp\n", orchestrator.FormatYAML}},
			wantRequestID: "5d1f0e9c-7b63-11e6-b5a4-8e7d6c5b4a39",
		},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			svc := &fakeService{}
			handle := LambdaHandler(NewHandler(svc.services(), Options{}))
			resp, err := handle(context.Background(), loadEvent(t, tc.file))
			require.NoError(t, err)

			assert.Equal(t, tc.wantStatus, resp.StatusCode, "body: %s", resp.Body)
			assert.False(t, resp.IsBase64Encoded)
			assert.Equal(t, []call{tc.wantCall}, svc.recorded())
			assert.Equal(t, "application/json", resp.Headers["Content-Type"])
			assert.Equal(t, []string{"application/json"}, resp.MultiValueHeaders["Content-Type"])
			assert.Equal(t, tc.wantRequestID, resp.Headers[RequestIDHeader])
			if tc.wantBody != "" {
				assert.JSONEq(t, tc.wantBody, resp.Body)
			}
		})
	}
}

func TestLambdaHandlerRequestMapping(t *testing.T) {
	var got *http.Request
	var gotBody []byte
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r
		gotBody, _ = readBody(r)
		w.WriteHeader(http.StatusNoContent)
	})
	ev := loadEvent(t, "apigw-start-request.json")
	ev.Headers["X-Only-Single"] = "one"
	ev.MultiValueHeaders["X-Multi"] = []string{"a", "b"}
	ev.MultiValueQueryStringParameters = nil
	ev.QueryStringParameters = map[string]string{"q": "a b/c", "z": "1"}

	resp, err := LambdaHandler(h)(context.Background(), ev)
	require.NoError(t, err)
	require.NotNil(t, got)
	assert.Equal(t, 204, resp.StatusCode)
	assert.Equal(t, "POST", got.Method)
	assert.Equal(t, "/api/v3/workflows/sample-wf/versions/active/actions/start", got.URL.Path)
	assert.Equal(t, "q=a+b%2Fc&z=1", got.URL.RawQuery, "single-value query used when there is no multi-value one")
	assert.Equal(t, "/api/v3/workflows/sample-wf/versions/active/actions/start?q=a+b%2Fc&z=1", got.RequestURI)
	assert.Equal(t, "abc123defg.execute-api.us-east-1.amazonaws.com", got.Host)
	assert.Equal(t, "203.0.113.7", got.RemoteAddr)
	assert.Equal(t, "one", got.Header.Get("X-Only-Single"), "single-value headers are merged in")
	assert.Equal(t, []string{"a", "b"}, got.Header.Values("X-Multi"))
	assert.Equal(t, "c6af9ac6-7b61-11e6-9a41-93e8deadbeef", got.Header.Get(RequestIDHeader))
	assert.Equal(t, ev.Body, string(gotBody))
	assert.Equal(t, int64(len(ev.Body)), got.ContentLength)
}

func TestLambdaHandlerResponses(t *testing.T) {
	binary := []byte{0x89, 'P', 'N', 'G', 0xff, 0x00, 0xfe}
	tests := []struct {
		name     string
		method   string
		handler  http.HandlerFunc
		event    func(*events.APIGatewayProxyRequest)
		want     events.APIGatewayProxyResponse
		wantJSON bool // the body is a JSON error with the response's status
	}{
		{
			name:   "binary body is base64",
			method: "GET",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "image/png")
				_, _ = w.Write(binary)
			},
			want: events.APIGatewayProxyResponse{
				StatusCode:        200,
				Headers:           map[string]string{"Content-Type": "image/png"},
				MultiValueHeaders: map[string][]string{"Content-Type": {"image/png"}},
				Body:              base64.StdEncoding.EncodeToString(binary),
				IsBase64Encoded:   true,
			},
		},
		{
			name:   "multi-value headers and sniffed content type",
			method: "GET",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Add("Set-Cookie", "a=1")
				w.Header().Add("Set-Cookie", "b=2")
				w.WriteHeader(http.StatusCreated)
				_, _ = w.Write([]byte("héllo"))
			},
			want: events.APIGatewayProxyResponse{
				StatusCode: 201,
				Headers:    map[string]string{"Set-Cookie": "a=1", "Content-Type": "text/plain; charset=utf-8"},
				MultiValueHeaders: map[string][]string{
					"Set-Cookie":   {"a=1", "b=2"},
					"Content-Type": {"text/plain; charset=utf-8"},
				},
				Body: "héllo",
			},
		},
		{
			name:    "nothing written is 200 with no body",
			method:  "GET",
			handler: func(w http.ResponseWriter, r *http.Request) {},
			want: events.APIGatewayProxyResponse{
				StatusCode: 200, Headers: map[string]string{}, MultiValueHeaders: map[string][]string{},
			},
		},
		{
			name:   "informational status is dropped",
			method: "GET",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusEarlyHints)
				w.WriteHeader(http.StatusAccepted)
				w.WriteHeader(http.StatusTeapot) // ignored: the status is set
			},
			want: events.APIGatewayProxyResponse{
				StatusCode: 202, Headers: map[string]string{}, MultiValueHeaders: map[string][]string{},
			},
		},
		{
			name:   "HEAD has no body",
			method: "HEAD",
			handler: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(`{"a":1}`))
			},
			want: events.APIGatewayProxyResponse{
				StatusCode:        200,
				Headers:           map[string]string{"Content-Type": "application/json"},
				MultiValueHeaders: map[string][]string{"Content-Type": {"application/json"}},
			},
		},
		{
			name:     "invalid base64 body",
			method:   "POST",
			handler:  func(w http.ResponseWriter, r *http.Request) { t.Error("handler must not run") },
			event:    func(ev *events.APIGatewayProxyRequest) { ev.Body, ev.IsBase64Encoded = "not base64!", true },
			want:     events.APIGatewayProxyResponse{StatusCode: 400},
			wantJSON: true,
		},
		{
			name:     "invalid method",
			method:   "GE T",
			handler:  func(w http.ResponseWriter, r *http.Request) { t.Error("handler must not run") },
			want:     events.APIGatewayProxyResponse{StatusCode: 400},
			wantJSON: true,
		},
		{
			name:     "no method",
			method:   "",
			handler:  func(w http.ResponseWriter, r *http.Request) { t.Error("handler must not run") },
			want:     events.APIGatewayProxyResponse{StatusCode: 400},
			wantJSON: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ev := events.APIGatewayProxyRequest{Path: "/x", HTTPMethod: tc.method,
				RequestContext: events.APIGatewayProxyRequestContext{RequestID: "apigw-req-1"}}
			if tc.event != nil {
				tc.event(&ev)
			}
			resp, err := LambdaHandler(tc.handler)(context.Background(), ev)
			require.NoError(t, err)
			if tc.wantJSON {
				assert.Equal(t, tc.want.StatusCode, resp.StatusCode)
				assert.Equal(t, "application/json", resp.Headers["Content-Type"])
				e := decodeError(t, resp.StatusCode, []byte(resp.Body))
				assert.Contains(t, e.Message, "invalid request")
				assert.Equal(t, "apigw-req-1", resp.Headers[RequestIDHeader])
				return
			}
			assert.Equal(t, tc.want, resp)
		})
	}
}

func TestLambdaHandlerErrorsAndRouting(t *testing.T) {
	tests := []struct {
		name       string
		method     string
		path       string
		wantStatus int
		wantAllow  string
	}{
		{name: "unknown path", method: "GET", path: "/nope", wantStatus: 404},
		{name: "wrong method", method: "PATCH", path: "/api/v3/workflows", wantStatus: 405, wantAllow: "GET, HEAD, POST"},
		{name: "path without slash", method: "GET", path: "health", wantStatus: 200},
		{name: "empty path", method: "GET", path: "", wantStatus: 404},
		{name: "escaped id", method: "GET", path: "/api/v3/signals/a b%c/instances/latest", wantStatus: 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			svc := &fakeService{}
			resp, err := LambdaHandler(NewHandler(svc.services(), Options{}))(context.Background(),
				events.APIGatewayProxyRequest{HTTPMethod: tc.method, Path: tc.path})
			require.NoError(t, err)
			assert.Equal(t, tc.wantStatus, resp.StatusCode, resp.Body)
			if tc.wantStatus >= 400 {
				decodeError(t, tc.wantStatus, []byte(resp.Body))
			}
			if tc.wantAllow != "" {
				assert.Equal(t, tc.wantAllow, resp.Headers["Allow"])
			}
			if tc.name == "escaped id" {
				assert.Equal(t, []call{{"GetSignal", []any{"a b%c", int64(0)}}}, svc.recorded())
			}
		})
	}
}

// TestLambdaResponseJSONShape checks the response marshals to the field
// names API Gateway reads.
func TestLambdaResponseJSONShape(t *testing.T) {
	resp, err := LambdaHandler(NewHandler((&fakeService{}).services(), Options{}))(context.Background(),
		events.APIGatewayProxyRequest{HTTPMethod: "GET", Path: "/health"})
	require.NoError(t, err)
	raw, err := json.Marshal(resp)
	require.NoError(t, err)
	var shape map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(raw, &shape))
	assert.JSONEq(t, `200`, string(shape["statusCode"]))
	assert.Contains(t, shape, "headers")
	assert.Contains(t, shape, "multiValueHeaders")
	var body string
	require.NoError(t, json.Unmarshal(shape["body"], &body))
	assert.JSONEq(t, `{"status":"ok","aws_endpoint":"http://127.0.0.1:5000","emulator":"moto"}`, body)
}

// TestLambdaHandlerRecordsTheCaller: the principal API Gateway authenticated
// (requestContext.identity) reaches the handlers as the request's caller.
func TestLambdaHandlerRecordsTheCaller(t *testing.T) {
	for _, tc := range []struct {
		name string
		id   events.APIGatewayRequestIdentity
		want string
	}{
		{"assumed role", events.APIGatewayRequestIdentity{UserArn: "arn:aws:sts::123456789012:assumed-role/Deployer/alice", Caller: "AROAEXAMPLE:alice", AccountID: "123456789012", AccessKey: "ASIAEXAMPLE"}, "arn:aws:iam::123456789012:role/Deployer"},
		{"IAM user", events.APIGatewayRequestIdentity{UserArn: "arn:aws:iam::123456789012:user/eng/alice", AccountID: "123456789012"}, "arn:aws:iam::123456789012:user/eng/alice"},
		{"unknown ARN kept as given", events.APIGatewayRequestIdentity{UserArn: "arn:aws:iam::123456789012:group/g"}, "arn:aws:iam::123456789012:group/g"},
		{"caller only", events.APIGatewayRequestIdentity{Caller: "AIDAEXAMPLE", AccountID: "123456789012"}, "AIDAEXAMPLE"},
		{"account only", events.APIGatewayRequestIdentity{AccountID: "123456789012"}, "account:123456789012"},
		{"anonymous", events.APIGatewayRequestIdentity{SourceIP: "192.0.2.1"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got string
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = caller.From(r.Context()) })
			ev := events.APIGatewayProxyRequest{HTTPMethod: "POST", Path: "/api/v3/workflows"}
			ev.RequestContext.Identity = tc.id
			_, err := LambdaHandler(h)(context.Background(), ev)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			assert.NotContains(t, got, "ASIA", "an access key is never recorded")
		})
	}
}
