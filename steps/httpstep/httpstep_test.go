package httpstep

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/orchestrator"
)

// recorded is what a test server saw of one request.
type recorded struct {
	method string
	path   string
	header http.Header
	body   string
}

// server is an httptest server that counts and records requests.
type server struct {
	*httptest.Server
	hits atomic.Int64
	last atomic.Pointer[recorded]
}

func newServer(t *testing.T, h http.HandlerFunc) *server {
	t.Helper()
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		b, _ := io.ReadAll(r.Body)
		s.last.Store(&recorded{method: r.Method, path: r.URL.RequestURI(), header: r.Header.Clone(), body: string(b)})
		h(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func msg(httpParam map[string]any, extra map[string]any) orchestrator.WorkMessage {
	p := engine.Values{ParamHTTP: httpParam}
	for k, v := range extra {
		p[k] = v
	}
	return orchestrator.WorkMessage{
		Kind: orchestrator.WorkRunStep, WorkflowID: "wf", InstanceID: 1, RunID: 1,
		StepID: "job.1", Attempt: 1, StepType: "http", Params: p,
	}
}

func status(code int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(code)
		_, _ = io.WriteString(w, body)
	}
}

func TestRunStep(t *testing.T) {
	jsonBody := `{"id": 7, "ratio": 0.5, "big": 1e400, "name": "x", "ok": true, "tags": ["a","b"],
		"nested": {"n": 1, "l": [1, 2]}, "nothing": null, "mixed": [1, "a"], "http": "no", "status_code": 1}`
	oneMiB := strings.Repeat("a", 1<<20)

	tests := []struct {
		name    string
		handler http.HandlerFunc
		allow   []string
		timeout time.Duration
		// build returns the step's http param for the server's URL.
		build   func(url string) map[string]any
		extra   map[string]any
		want    engine.Outcome
		wantMsg string
		check   func(t *testing.T, res engine.StepFinished, s *server)
	}{
		{
			name:    "200 JSON succeeds with outputs",
			handler: status(200, jsonBody),
			build:   func(u string) map[string]any { return map[string]any{"url": u + "/api?x=1"} },
			want:    engine.OutcomeSucceeded,
			check: func(t *testing.T, res engine.StepFinished, s *server) {
				assert.Equal(t, map[string]any{
					"id": int64(7), "ratio": 0.5, "name": "x", "ok": true, "tags": []any{"a", "b"},
					"nested":      map[string]any{"n": int64(1), "l": []any{int64(1), int64(2)}},
					"status_code": int64(200), "response_body": jsonBody,
				}, res.Outputs)
				assert.Equal(t, "GET", s.last.Load().method)
				assert.Equal(t, "/api?x=1", s.last.Load().path)
			},
		},
		{
			name:    "non-JSON 204 succeeds with status and body only",
			handler: status(204, ""),
			build:   func(u string) map[string]any { return map[string]any{"url": u} },
			want:    engine.OutcomeSucceeded,
			check: func(t *testing.T, res engine.StepFinished, _ *server) {
				assert.Equal(t, map[string]any{"status_code": int64(204), "response_body": ""}, res.Outputs)
			},
		},
		{
			name:    "500 is a user error",
			handler: status(500, `{"error":"boom"}`),
			build:   func(u string) map[string]any { return map[string]any{"url": u} },
			want:    engine.OutcomeUserError,
			wantMsg: "HTTP 500 from 127.0.0.1",
			check: func(t *testing.T, res engine.StepFinished, _ *server) {
				assert.Nil(t, res.Outputs)
			},
		},
		{
			name:    "state_expr maps 418 to platform error",
			handler: status(418, "teapot"),
			build: func(u string) map[string]any {
				return map[string]any{"url": u, "state_expr": `status_code == 418 ? "PLATFORM_ERROR" : "DONE"`}
			},
			want:    engine.OutcomePlatformError,
			wantMsg: "state_expr returned PLATFORM_ERROR for HTTP 418",
		},
		{
			name:    "state_expr maps 404 to done (Maestro sample, step-level state_expr)",
			handler: status(404, `{"missing": "yes"}`),
			build:   func(u string) map[string]any { return map[string]any{"url": u} },
			extra:   map[string]any{"state_expr": `status_code == 404 ? "DONE" : "FATAL_ERROR"`},
			want:    engine.OutcomeSucceeded,
			check: func(t *testing.T, res engine.StepFinished, _ *server) {
				assert.Equal(t, "yes", res.Outputs["missing"])
				assert.Equal(t, int64(404), res.Outputs["status_code"])
			},
		},
		{
			name:    "state_expr reads response_body and step params",
			handler: status(200, "state=failed"),
			build: func(u string) map[string]any {
				return map[string]any{"url": u, "state_expr": `response_body == "state=" + bad ? "USER_ERROR" : "DONE"`}
			},
			extra:   map[string]any{"bad": "failed"},
			want:    engine.OutcomeUserError,
			wantMsg: "state_expr returned USER_ERROR for HTTP 200",
		},
		{
			name:    "state_expr returning another value is fatal",
			handler: status(200, "{}"),
			build:   func(u string) map[string]any { return map[string]any{"url": u, "state_expr": `"MAYBE"`} },
			want:    engine.OutcomeFatalError,
			wantMsg: `state_expr returned "MAYBE"`,
		},
		{
			name:    "state_expr that does not compile is fatal and sends nothing",
			handler: status(200, "{}"),
			build: func(u string) map[string]any {
				return map[string]any{"url": u, "state_expr": `if (status_code == 404) return "DONE"; else return "FATAL_ERROR";`}
			},
			want:    engine.OutcomeFatalError,
			wantMsg: "state_expr:",
			check: func(t *testing.T, _ engine.StepFinished, s *server) {
				assert.Zero(t, s.hits.Load())
			},
		},
		{
			name: "request timeout is a platform error",
			handler: func(w http.ResponseWriter, r *http.Request) {
				select {
				case <-time.After(2 * time.Second):
				case <-r.Context().Done():
				}
			},
			timeout: 200 * time.Millisecond,
			build:   func(u string) map[string]any { return map[string]any{"url": u} },
			want:    engine.OutcomePlatformError,
			wantMsg: "timed out",
		},
		{
			name:    "host not on the list is fatal and reaches no server",
			handler: status(200, "{}"),
			allow:   []string{"api.example.com", "*.example.org"},
			build:   func(u string) map[string]any { return map[string]any{"url": u} },
			want:    engine.OutcomeFatalError,
			wantMsg: `host "127.0.0.1" is not on the http step allow-list (AllowHosts [api.example.com, *.example.org])`,
			check: func(t *testing.T, _ engine.StepFinished, s *server) {
				assert.Zero(t, s.hits.Load())
			},
		},
		{
			name:    "empty allow-list blocks everything",
			handler: status(200, "{}"),
			allow:   []string{},
			build:   func(u string) map[string]any { return map[string]any{"url": u} },
			want:    engine.OutcomeFatalError,
			wantMsg: "AllowHosts empty: no host is allowed",
			check: func(t *testing.T, _ engine.StepFinished, s *server) {
				assert.Zero(t, s.hits.Load())
			},
		},
		{
			name:    "response of exactly the cap succeeds",
			handler: status(200, oneMiB),
			build:   func(u string) map[string]any { return map[string]any{"url": u} },
			want:    engine.OutcomeSucceeded,
			check: func(t *testing.T, res engine.StepFinished, _ *server) {
				assert.Len(t, res.Outputs["response_body"], MaxResponseBodyOutput)
			},
		},
		{
			name:    "response over the cap is a user error",
			handler: status(200, oneMiB+"b"),
			build:   func(u string) map[string]any { return map[string]any{"url": u} },
			want:    engine.OutcomeUserError,
			wantMsg: "response larger than 1 MiB",
		},
		{
			name:    "method, headers and body are sent as given",
			handler: status(201, `{"created": true}`),
			build: func(u string) map[string]any {
				return map[string]any{
					"url": u + "/api/v3/workflows/yaml", "method": "post", "body": "Workflow:\n  id: x\n",
					"headers": map[string]string{"Content-Type": "application/yaml", "Accept": "application/json", "user": "tester"},
				}
			},
			want: engine.OutcomeSucceeded,
			check: func(t *testing.T, res engine.StepFinished, s *server) {
				r := s.last.Load()
				assert.Equal(t, "POST", r.method)
				assert.Equal(t, "/api/v3/workflows/yaml", r.path)
				assert.Equal(t, "Workflow:\n  id: x\n", r.body)
				assert.Equal(t, "application/yaml", r.header.Get("Content-Type"))
				assert.Equal(t, "application/json", r.header.Get("Accept"))
				assert.Equal(t, "tester", r.header.Get("User"))
				assert.Equal(t, true, res.Outputs["created"])
			},
		},
		{
			name:    "MAP headers of strings are sent",
			handler: status(200, ""),
			build: func(u string) map[string]any {
				return map[string]any{"url": u, "method": "DELETE", "headers": map[string]any{"user": "tester"}}
			},
			want: engine.OutcomeSucceeded,
			check: func(t *testing.T, _ engine.StepFinished, s *server) {
				assert.Equal(t, "DELETE", s.last.Load().method)
				assert.Equal(t, "tester", s.last.Load().header.Get("User"))
			},
		},
		{
			name:    "non-string header value is fatal and names only the key",
			handler: status(200, ""),
			build: func(u string) map[string]any {
				return map[string]any{"url": u, "headers": map[string]any{"X-Count": int64(31337)}}
			},
			want:    engine.OutcomeFatalError,
			wantMsg: "param http.headers.X-Count must be a STRING",
			check: func(t *testing.T, res engine.StepFinished, s *server) {
				assert.NotContains(t, res.Message, "31337")
				assert.Zero(t, s.hits.Load())
			},
		},
		{
			name:    "unsupported scheme is fatal",
			handler: status(200, ""),
			build:   func(string) map[string]any { return map[string]any{"url": "ftp://127.0.0.1/x"} },
			want:    engine.OutcomeFatalError,
			wantMsg: `scheme "ftp" is not supported`,
		},
		{
			name:    "missing url is fatal",
			handler: status(200, ""),
			build:   func(string) map[string]any { return map[string]any{"method": "GET"} },
			want:    engine.OutcomeFatalError,
			wantMsg: "param http.url is missing",
		},
		{
			name:    "localhost is allowed by loopback",
			handler: status(200, `{"v": 1.25}`),
			build: func(u string) map[string]any {
				return map[string]any{"url": strings.Replace(u, "127.0.0.1", "localhost", 1)}
			},
			want: engine.OutcomeSucceeded,
			check: func(t *testing.T, res engine.StepFinished, _ *server) {
				assert.Equal(t, 1.25, res.Outputs["v"])
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, tc.handler)
			allow := tc.allow
			if allow == nil {
				allow = []string{"loopback"}
			}
			r := New(Config{AllowHosts: allow, RequestTimeout: tc.timeout})
			res, err := r.RunStep(context.Background(), msg(tc.build(s.URL), tc.extra))
			require.NoError(t, err)
			assert.Equal(t, tc.want, res.Outcome, "message: %s", res.Message)
			assert.Contains(t, res.Message, tc.wantMsg)
			assert.Equal(t, "job.1", res.StepID)
			assert.Equal(t, int64(1), res.Attempt)
			if tc.check != nil {
				tc.check(t, res, s)
			}
		})
	}
}

func TestClosedPortIsPlatformError(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())

	r := New(Config{AllowHosts: []string{"loopback"}, ConnectTimeout: time.Second})
	res, err := r.RunStep(context.Background(), msg(map[string]any{
		"url": "http://" + addr + "/x?token=s3cret", "headers": map[string]string{"Authorization": "Bearer hidden"},
	}, nil))
	require.NoError(t, err)
	assert.Equal(t, engine.OutcomePlatformError, res.Outcome)
	assert.Contains(t, res.Message, "connection refused")
	assert.Contains(t, res.Message, "GET http://"+addr+"/x")
	assert.NotContains(t, res.Message, "s3cret")
	assert.NotContains(t, res.Message, "hidden")
}

func TestRedirects(t *testing.T) {
	target := newServer(t, status(200, `{"landed": true}`))
	targetByName := strings.Replace(target.URL, "127.0.0.1", "localhost", 1)

	tests := []struct {
		name    string
		allow   []string
		to      string // redirect location
		want    engine.Outcome
		wantMsg string
		landed  int64
	}{
		{
			name:    "redirect to an off-list host is refused",
			allow:   []string{"127.0.0.1"},
			to:      targetByName + "/next",
			want:    engine.OutcomeUserError,
			wantMsg: "redirect to host localhost not allowed",
		},
		{
			name:   "redirect to an allowed host is followed",
			allow:  []string{"127.0.0.1", "localhost"},
			to:     targetByName + "/next",
			want:   engine.OutcomeSucceeded,
			landed: 1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := target.hits.Load()
			src := newServer(t, func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, tc.to, http.StatusFound)
			})
			res, err := New(Config{AllowHosts: tc.allow}).RunStep(context.Background(), msg(map[string]any{"url": src.URL}, nil))
			require.NoError(t, err)
			assert.Equal(t, tc.want, res.Outcome, "message: %s", res.Message)
			assert.Contains(t, res.Message, tc.wantMsg)
			assert.Equal(t, int64(1), src.hits.Load())
			assert.Equal(t, tc.landed, target.hits.Load()-before)
		})
	}

	t.Run("redirect loop stops after the limit", func(t *testing.T) {
		var loop *server
		loop = newServer(t, func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, loop.URL+fmt.Sprintf("/%d", loop.hits.Load()), http.StatusFound)
		})
		res, err := New(Config{AllowHosts: []string{"loopback"}}).RunStep(context.Background(), msg(map[string]any{"url": loop.URL}, nil))
		require.NoError(t, err)
		assert.Equal(t, engine.OutcomeUserError, res.Outcome)
		assert.Contains(t, res.Message, "stopped after 5 redirects")
		assert.Equal(t, int64(MaxRedirects), loop.hits.Load())
	})
}

// failingTransport fails the test if any request reaches it.
type failingTransport struct{ calls atomic.Int64 }

func (f *failingTransport) RoundTrip(*http.Request) (*http.Response, error) {
	f.calls.Add(1)
	return nil, fmt.Errorf("no request should be sent")
}

func TestNotAllowedSendsNothing(t *testing.T) {
	ft := &failingTransport{}
	r := New(Config{AllowHosts: []string{"loopback", "*.example.com"}, Client: &http.Client{Transport: ft}})
	for _, u := range []string{
		"http://example.com/", "https://evil.com/", "http://10.0.0.1/", "http://[::2]:80/",
		"http://example.com.evil.net/", "http://localhost.evil.net/", "http://128.0.0.1/",
	} {
		res, err := r.RunStep(context.Background(), msg(map[string]any{"url": u}, nil))
		require.NoError(t, err)
		assert.Equal(t, engine.OutcomeFatalError, res.Outcome, u)
		assert.Contains(t, res.Message, "is not on the http step allow-list", u)
	}
	assert.Zero(t, ft.calls.Load())
}

func TestAllowListMatch(t *testing.T) {
	a := newAllowList([]string{"loopback", "API.example.com.", "*.corp.net", "10.1.2.3", "[2001:db8::1]", " "})
	tests := []struct {
		host string
		want match
	}{
		{"127.0.0.1", matchLoopback},
		{"127.9.8.7", matchLoopback},
		{"::1", matchLoopback},
		{"::ffff:127.0.0.1", matchLoopback},
		{"localhost", matchLoopback},
		{"LocalHost.", matchLoopback},
		{"api.example.com", matchExplicit},
		{"example.com", matchNone},
		{"x.api.example.com", matchNone},
		{"a.corp.net", matchExplicit},
		{"a.b.corp.net", matchExplicit},
		{"corp.net", matchNone},
		{"evilcorp.net", matchNone},
		{"10.1.2.3", matchExplicit},
		{"::ffff:10.1.2.3", matchExplicit},
		{"10.1.2.4", matchNone},
		{"2001:db8::1", matchExplicit},
		{"169.254.169.254", matchNone},
		{"", matchNone},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, a.match(tc.host), tc.host)
	}
	assert.Equal(t, matchNone, newAllowList(nil).match("127.0.0.1"))
}

func TestDialChecks(t *testing.T) {
	r := New(Config{AllowHosts: []string{"loopback"}, ConnectTimeout: 200 * time.Millisecond})
	var de *dialRefusedError

	// A host off the list is refused before any connection is attempted.
	conn, err := r.dialContext(context.Background(), "tcp", "192.0.2.1:80")
	require.ErrorAs(t, err, &de)
	assert.Nil(t, conn)

	// A name admitted by "loopback" must resolve to a loopback address.
	for _, tc := range []struct {
		address string
		refused bool
	}{
		{"127.0.0.1:80", false},
		{"127.1.2.3:8080", false},
		{"[::1]:80", false},
		{"[::ffff:127.0.0.1]:80", false},
		{"10.0.0.5:80", true},
		{"[2001:db8::1]:443", true},
		{"169.254.169.254:80", true},
	} {
		err := checkLoopbackDial("localhost", tc.address)
		if tc.refused {
			require.ErrorAs(t, err, &de, tc.address)
			assert.Contains(t, err.Error(), "not a loopback address")
		} else {
			assert.NoError(t, err, tc.address)
		}
	}

	// The dialer for a loopback-rule host runs that check on every address;
	// one for an explicitly listed host does not.
	d := r.dialer("localhost", matchLoopback)
	require.NotNil(t, d.Control)
	require.ErrorAs(t, d.Control("tcp", "10.0.0.5:80", nil), &de)
	require.NoError(t, d.Control("tcp", "127.0.0.1:80", nil))
	assert.Nil(t, r.dialer("api.example.com", matchExplicit).Control)
	assert.Equal(t, 200*time.Millisecond, d.Timeout)

	// Dialing localhost through the check connects to a loopback server.
	s := newServer(t, status(200, ""))
	_, port, err := net.SplitHostPort(s.Listener.Addr().String())
	require.NoError(t, err)
	conn, err = r.dialContext(context.Background(), "tcp4", net.JoinHostPort("localhost", port))
	require.NoError(t, err)
	require.NoError(t, conn.Close())
}

func TestTruncateUTF8(t *testing.T) {
	tests := []struct {
		in   string
		max  int
		want string
	}{
		{"abc", 5, "abc"},
		{"abcdef", 3, "abc"},
		{"aé", 2, "a"}, // é is 2 bytes: not split
		{"a€b", 3, "a"},
		{"a€b", 4, "a€"},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, truncateUTF8([]byte(tc.in), tc.max), tc.in)
	}
}
