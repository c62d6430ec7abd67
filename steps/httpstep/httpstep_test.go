package httpstep

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
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

func msg(httpParam map[string]any, extra map[string]any) orchestrator.StepWork {
	p := engine.Values{ParamHTTP: httpParam}
	for k, v := range extra {
		p[k] = v
	}
	return orchestrator.StepWork{
		StepRef:  orchestrator.StepRef{WorkflowID: "wf", InstanceID: 1, RunID: 1, StepID: "job.1", Attempt: 1},
		StepType: "http", Params: p,
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
		// build returns the step's http param for the server's URL
		// (nil: {"url": url}).
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
			want:    engine.OutcomeSucceeded,
			check: func(t *testing.T, res engine.StepFinished, _ *server) {
				assert.Equal(t, map[string]any{"status_code": int64(204), "response_body": ""}, res.Outputs)
			},
		},
		{
			name:    "500 is a user error",
			handler: status(500, `{"error":"boom"}`),
			want:    engine.OutcomeUserError,
			wantMsg: "HTTP 500 from 127.0.0.1",
			check: func(t *testing.T, res engine.StepFinished, _ *server) {
				assert.Nil(t, res.Outputs)
			},
		},
		{
			name:    "503 is a user error (retried)",
			handler: status(503, ""),
			want:    engine.OutcomeUserError,
			wantMsg: "HTTP 503 from 127.0.0.1",
		},
		{
			name:    "404 is fatal (Maestro's default state_expr: 4xx is not retried)",
			handler: status(404, `{"error":"no such thing"}`),
			want:    engine.OutcomeFatalError,
			wantMsg: "HTTP 404 from 127.0.0.1 (a 4xx response is not retried)",
			check: func(t *testing.T, res engine.StepFinished, _ *server) {
				assert.Nil(t, res.Outputs)
			},
		},
		{
			name:    "3xx that is not followed is a user error",
			handler: status(304, ""),
			want:    engine.OutcomeUserError,
			wantMsg: "HTTP 304",
		},
		{
			name:    "Maestro's default headers are sent",
			handler: status(200, ""),
			want:    engine.OutcomeSucceeded,
			check: func(t *testing.T, _ engine.StepFinished, s *server) {
				assert.Equal(t, "application/json", s.last.Load().header.Get("Content-Type"))
				assert.Equal(t, "application/json", s.last.Load().header.Get("Accept"))
			},
		},
		{
			name:    "a Host header is refused and nothing is sent",
			handler: status(200, ""),
			build: func(u string) map[string]any {
				return map[string]any{"url": u, "headers": map[string]string{"host": "169.254.169.254"}}
			},
			want:    engine.OutcomeFatalError,
			wantMsg: "param http.headers: the Host header cannot be set",
			check: func(t *testing.T, _ engine.StepFinished, s *server) {
				assert.Zero(t, s.hits.Load())
			},
		},
		{
			// Maestro's SEL, statements and all.
			name:    "a SEL state_expr maps 404 to done",
			handler: status(404, `{}`),
			build: func(u string) map[string]any {
				return map[string]any{"url": u, "state_expr": `if (status_code == 404) { return "DONE"; } else if (status_code >= 500) return "PLATFORM_ERROR"; return "FATAL_ERROR";`}
			},
			want: engine.OutcomeSucceeded,
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
			// The security review's probe: a pattern from the step's params
			// of 1.4 million instructions is sized, not compiled.
			name:    "state_expr with an oversized pattern from a param is fatal at once",
			handler: status(200, "ok"),
			build: func(u string) map[string]any {
				return map[string]any{"url": u, "state_expr": `response_body matches p ? "DONE" : "USER_ERROR"`}
			},
			extra:   map[string]any{"p": strings.Repeat("a{1000}", 1400)},
			want:    engine.OutcomeFatalError,
			wantMsg: "regular expression of 1,400,002 instructions, more than the limit of 10,000",
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
				return map[string]any{"url": u, "state_expr": `if (status_code == 404) return "DONE"; else return;`}
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
			want:    engine.OutcomePlatformError,
			wantMsg: "timed out",
		},
		{
			name:    "host not on the list is fatal and reaches no server",
			handler: status(200, "{}"),
			allow:   []string{"api.example.com", "*.example.org"},
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
			want:    engine.OutcomeFatalError,
			wantMsg: "AllowHosts empty: no host is allowed",
			check: func(t *testing.T, _ engine.StepFinished, s *server) {
				assert.Zero(t, s.hits.Load())
			},
		},
		{
			name:    "response of exactly the cap succeeds",
			handler: status(200, oneMiB),
			want:    engine.OutcomeSucceeded,
			check: func(t *testing.T, res engine.StepFinished, _ *server) {
				assert.Len(t, res.Outputs["response_body"], MaxResponseBodyOutput)
			},
		},
		{
			name:    "response over the cap is a user error",
			handler: status(200, oneMiB+"b"),
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
			r, err := New(Config{AllowHosts: allow, RequestTimeout: tc.timeout})
			require.NoError(t, err)
			param := map[string]any{"url": s.URL}
			if tc.build != nil {
				param = tc.build(s.URL)
			}
			res, err := r.RunStep(context.Background(), msg(param, tc.extra))
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

	r := newRunner(t, Config{AllowHosts: []string{"loopback"}, ConnectTimeout: time.Second})
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
			res, err := newRunner(t, Config{AllowHosts: tc.allow}).RunStep(context.Background(), msg(map[string]any{"url": src.URL}, nil))
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
		res, err := newRunner(t, Config{AllowHosts: []string{"loopback"}}).RunStep(context.Background(), msg(map[string]any{"url": loop.URL}, nil))
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
	r := newRunner(t, Config{AllowHosts: []string{"loopback", "*.example.com"}, Client: &http.Client{Transport: ft}})
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

func newRunner(t *testing.T, cfg Config) *Runner {
	t.Helper()
	r, err := New(cfg)
	require.NoError(t, err)
	return r
}

func TestParseAllowList(t *testing.T) {
	tests := []struct {
		entry   string
		wantErr string
	}{
		{entry: "loopback"},
		{entry: "API.example.com."},
		{entry: "api.example.com:8443"},
		{entry: "*.example.com"},
		{entry: "*.corp.example.co.uk"},
		{entry: "*.example.co.uk"},
		{entry: "10.1.2.3"},
		{entry: "10.1.2.3:8080"},
		{entry: "10.0.0.0/8"},
		{entry: "10.0.0.0/8:443"},
		{entry: "2001:db8::1"},
		{entry: "[2001:db8::1]"},
		{entry: "[2001:db8::1]:443"},
		{entry: "fd00::/8"},
		{entry: " "},
		{entry: "*", wantErr: "only letters, digits"},
		{entry: "*.com", wantErr: "wildcard *.com is too broad: it admits a whole top-level domain"},
		{entry: "*.co.uk", wantErr: "co.uk is a public suffix"},
		{entry: "*.s3.amazonaws.com", wantErr: "s3.amazonaws.com is a public suffix"},
		{entry: "*.github.io", wantErr: "github.io is a public suffix"},
		{entry: "a.*.example.com", wantErr: "a '*' only as the whole first label"},
		{entry: "api.example.com:0", wantErr: "port \"0\" is not a number from 1 to 65535"},
		{entry: "api.example.com:http", wantErr: "is not a number"},
		{entry: "[2001:db8::1", wantErr: "unclosed '['"},
		{entry: "10.0.0.0/33", wantErr: "not a valid CIDR prefix"},
		{entry: "exa mple.com", wantErr: "only letters, digits"},
	}
	for _, tc := range tests {
		t.Run(tc.entry, func(t *testing.T) {
			err := CheckAllowList([]string{tc.entry})
			if tc.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), fmt.Sprintf("http allow-list entry %q", strings.TrimSpace(tc.entry)))
			assert.Contains(t, err.Error(), tc.wantErr)
		})
	}
	_, err := New(Config{AllowHosts: []string{"api.example.com", "*.com"}})
	require.ErrorContains(t, err, "too broad")
}

func TestAllowListMatch(t *testing.T) {
	a, err := parseAllowList([]string{"loopback", "API.example.com.", "*.corp.net", "10.1.2.3", "[2001:db8::1]", "10.9.0.0/16:8443", "pinned.example.org:8080", " "})
	require.NoError(t, err)
	tests := []struct {
		host string
		port uint16
		want bool
	}{
		{"127.0.0.1", 80, true},
		{"127.9.8.7", 80, true},
		{"::1", 80, true},
		{"::ffff:127.0.0.1", 80, true},
		{"localhost", 80, true},
		{"LocalHost.", 80, true},
		{"api.example.com", 443, true},
		{"example.com", 443, false},
		{"x.api.example.com", 443, false},
		{"a.corp.net", 80, true},
		{"a.b.corp.net", 80, true},
		{"corp.net", 80, false},
		{"evilcorp.net", 80, false},
		{"10.1.2.3", 80, true},
		{"::ffff:10.1.2.3", 80, true},
		{"10.1.2.4", 80, false},
		{"2001:db8::1", 443, true},
		{"10.9.200.1", 8443, true},
		{"10.9.200.1", 443, false},
		{"pinned.example.org", 8080, true},
		{"pinned.example.org", 80, false},
		{"169.254.169.254", 80, false},
		{"", 80, false},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, a.matchHost(tc.host, tc.port), "%s:%d", tc.host, tc.port)
	}
	empty, err := parseAllowList(nil)
	require.NoError(t, err)
	assert.False(t, empty.matchHost("127.0.0.1", 80))
}

func TestSpecialPurpose(t *testing.T) {
	tests := []struct {
		ip   string
		want string
	}{
		{"8.8.8.8", ""},
		{"2606:4700::1111", ""},
		{"127.0.0.1", "loopback"},
		{"::1", "loopback"},
		{"169.254.169.254", "cloud metadata"},
		{"169.254.170.2", "cloud metadata"},
		{"fd00:ec2::254", "cloud metadata"},
		{"::ffff:169.254.169.254", "cloud metadata"},
		{"64:ff9b::a9fe:a9fe", "cloud metadata (via NAT64)"},
		{"2002:a9fe:a9fe::1", "cloud metadata (via 6to4)"},
		{"169.254.1.1", "link-local"},
		{"fe80::1", "link-local"},
		{"10.0.0.1", "private"},
		{"172.16.5.4", "private"},
		{"192.168.1.1", "private"},
		{"fc00::1", "private"},
		{"100.64.0.1", "shared (CGNAT)"},
		{"100.127.255.255", "shared (CGNAT)"},
		{"100.128.0.1", ""},
		{"0.0.0.0", "unspecified"},
		{"0.1.2.3", "unspecified"},
		{"::", "unspecified"},
		{"224.0.0.1", "link-local"},
		{"239.1.2.3", "multicast"},
		{"ff02::1", "link-local"},
		{"ff05::1", "multicast"},
		{"255.255.255.255", "reserved"},
		{"198.18.0.1", "reserved"},
		{"64:ff9b:1::1", "tunnelled (NAT64 local-use or Teredo)"},
		{"64:ff9b::808:808", ""},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, specialPurpose(netip.MustParseAddr(tc.ip)), tc.ip)
	}
}

// mapResolver resolves the names of its map and nothing else.
type mapResolver map[string][]string

func (m mapResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	addrs, ok := m[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	out := make([]netip.Addr, len(addrs))
	for i, a := range addrs {
		out[i] = netip.MustParseAddr(a)
	}
	return out, nil
}

// TestResolvedAddressesAreChecked is the security review's probe: a name an
// entry admits but that resolves to loopback, the metadata service or a
// private address is refused before any connection is made, unless an IP or
// CIDR entry admits that address.
func TestResolvedAddressesAreChecked(t *testing.T) {
	s := newServer(t, status(200, `{"reached": true}`))
	_, port, err := net.SplitHostPort(s.Listener.Addr().String())
	require.NoError(t, err)
	resolver := mapResolver{
		"loop.example.com":     {"127.0.0.1"},
		"meta.example.com":     {"169.254.169.254"},
		"meta6.example.com":    {"fd00:ec2::254"},
		"ecs.example.com":      {"169.254.170.2"},
		"private.example.com":  {"10.0.0.7"},
		"cgnat.example.com":    {"100.64.1.1"},
		"mapped.example.com":   {"::ffff:127.0.0.1"},
		"mixed.example.com":    {"169.254.169.254", "127.0.0.1"},
		"localhost":            {"127.0.0.1"},
		"loop.trusted.example": {"127.0.0.1"},
	}
	tests := []struct {
		name    string
		allow   []string
		host    string
		wantMsg string // empty: the call reaches the server
	}{
		{"loopback behind an allowed name", []string{"*.example.com"}, "loop.example.com", "resolved to the loopback address 127.0.0.1"},
		{"IPv4-mapped loopback", []string{"*.example.com"}, "mapped.example.com", "resolved to the loopback address 127.0.0.1"},
		{"instance metadata", []string{"*.example.com"}, "meta.example.com", "resolved to 169.254.169.254, a cloud metadata address"},
		{"IPv6 instance metadata", []string{"*.example.com"}, "meta6.example.com", "resolved to fd00:ec2::254, a cloud metadata address"},
		{"container metadata", []string{"*.example.com"}, "ecs.example.com", "resolved to 169.254.170.2, a cloud metadata address"},
		{"private", []string{"*.example.com"}, "private.example.com", "resolved to 10.0.0.7, a private address"},
		{"CGNAT", []string{"*.example.com"}, "cgnat.example.com", "resolved to 100.64.1.1, a shared (CGNAT) address"},
		{"metadata first, then loopback: none dialed", []string{"*.example.com"}, "mixed.example.com", "resolved to the loopback address 127.0.0.1"},
		{"exact name is checked too", []string{"meta.example.com"}, "meta.example.com", "a cloud metadata address"},
		{"a CIDR entry admits the address", []string{"loop.trusted.example", "127.0.0.0/8"}, "loop.trusted.example", ""},
		{"an IP entry with the port admits it", []string{"loop.trusted.example", "127.0.0.1:" + port}, "loop.trusted.example", ""},
		{"an IP entry for another port does not", []string{"loop.trusted.example", "127.0.0.1:1"}, "loop.trusted.example", "resolved to the loopback address"},
		{"loopback admits a name resolving to loopback", []string{"loopback", "*.example.com"}, "loop.example.com", ""},
		{"loopback does not admit metadata", []string{"loopback", "*.example.com"}, "meta.example.com", "a cloud metadata address"},
		{"localhost via loopback", []string{"loopback"}, "localhost", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := s.hits.Load()
			r := newRunner(t, Config{AllowHosts: tc.allow, Resolver: resolver, ConnectTimeout: time.Second})
			res, err := r.RunStep(context.Background(), msg(map[string]any{"url": "http://" + net.JoinHostPort(tc.host, port) + "/"}, nil))
			require.NoError(t, err)
			if tc.wantMsg == "" {
				assert.Equal(t, engine.OutcomeSucceeded, res.Outcome, res.Message)
				assert.Equal(t, before+1, s.hits.Load())
				return
			}
			assert.Equal(t, engine.OutcomeFatalError, res.Outcome)
			assert.Contains(t, res.Message, tc.wantMsg)
			assert.Equal(t, before, s.hits.Load(), "nothing may reach the server")
		})
	}
}

// TestLoopbackNameMustDialLoopback: a name admitted only by the "loopback"
// entry may not dial anything else, public addresses included.
func TestLoopbackNameMustDialLoopback(t *testing.T) {
	r := newRunner(t, Config{AllowHosts: []string{"loopback"}, Resolver: mapResolver{"localhost": {"192.0.2.10"}}})
	var de *dialRefusedError
	_, err := r.dialContext(context.Background(), "tcp", "localhost:80")
	require.ErrorAs(t, err, &de)
	assert.Contains(t, err.Error(), "not a loopback address")
	_, err = r.dialContext(context.Background(), "tcp", "192.0.2.1:80")
	require.ErrorAs(t, err, &de)
	assert.Contains(t, err.Error(), "is not on the http step allow-list")
}

// TestCrossHostRedirectDropsHeaders: the step's headers go only to the host
// it named; a redirect to another host carries Maestro's defaults alone.
func TestCrossHostRedirectDropsHeaders(t *testing.T) {
	target := newServer(t, status(200, ""))
	for _, tc := range []struct {
		name     string
		to       string
		wantAuth string
	}{
		{"same host keeps the headers", target.URL, "Bearer s3cret"},
		{"another host drops them", strings.Replace(target.URL, "127.0.0.1", "localhost", 1), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// The source listens on 127.0.0.1 too; "same host" needs the
			// same port, so the source redirects to itself first.
			var src *server
			src = newServer(t, func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/start" && tc.wantAuth != "" {
					http.Redirect(w, r, "/hop", http.StatusFound)
					return
				}
				if r.URL.Path == "/hop" {
					assert.Equal(t, "Bearer s3cret", r.Header.Get("Authorization"))
					assert.Equal(t, "k", r.Header.Get("X-Api-Key"))
					w.WriteHeader(200)
					return
				}
				http.Redirect(w, r, tc.to+"/landed", http.StatusFound)
			})
			res, err := newRunner(t, Config{AllowHosts: []string{"loopback"}}).RunStep(context.Background(), msg(map[string]any{
				"url": src.URL + "/start", "headers": map[string]string{"Authorization": "Bearer s3cret", "X-Api-Key": "k"},
			}, nil))
			require.NoError(t, err)
			require.Equal(t, engine.OutcomeSucceeded, res.Outcome, res.Message)
			if tc.wantAuth != "" {
				assert.Equal(t, "/hop", src.last.Load().path)
				return
			}
			got := target.last.Load()
			require.NotNil(t, got)
			assert.Equal(t, "/landed", got.path)
			assert.Empty(t, got.header.Get("Authorization"))
			assert.Empty(t, got.header.Get("X-Api-Key"))
			assert.Equal(t, "application/json", got.header.Get("Accept"))
		})
	}
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

func TestCheckDeployable(t *testing.T) {
	for _, entry := range []string{
		"loopback", "LOOPBACK",
		"127.0.0.1", "127.0.0.1:9001", "127.1.2.3:443", "127.0.0.0/8", "127.128.0.0/9", "126.0.0.0/7", "0.0.0.0/0",
		"::1", "[::1]:9001", "::/0", "::/127", "::ffff:127.0.0.1", "::ffff:0:0/96", "0.0.0.0", "0.0.0.0/8", "::",
		"169.254.169.254", "169.254.170.2:80", "169.254.0.0/16", "169.0.0.0/8", "fe80::1", "fe80::/10", "fd00:ec2::254", "fd00::/8",
	} {
		err := CheckDeployable([]string{"api.example.com", entry})
		if err == nil || !strings.Contains(err.Error(), strconv.Quote(strings.ToLower(entry))) {
			t.Errorf("CheckDeployable(%q) = %v, want an error naming it", entry, err)
		}
	}
	// Names resolve at dial time, where the loopback and link-local
	// checks apply; private and public ranges are a deployment's choice.
	if err := CheckDeployable([]string{"api.example.com", "*.example.org:8443", "localhost", "10.0.0.0/8", "172.16.0.5",
		"192.168.1.0/24", "203.0.113.7", "2001:db8::/32", "8.0.0.0/7", "fd00:ec2::253"}); err != nil {
		t.Errorf("CheckDeployable(remote entries) = %v", err)
	}
	err := CheckDeployable([]string{"loopback", "10.0.0.1", "169.254.169.254/32"})
	if err == nil || !strings.Contains(err.Error(), `"loopback"`) || !strings.Contains(err.Error(), `"169.254.169.254/32"`) || strings.Contains(err.Error(), "10.0.0.1") {
		t.Errorf("every bad entry is named, and only those: %v", err)
	}
}
