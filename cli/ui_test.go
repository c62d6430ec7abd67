package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// forwarded is a request the UI proxy's upstream received.
type forwarded struct {
	method, path, rawPath, query, auth, body, cookie string
}

// uiProxyFixture is a UI proxy in front of an upstream that records what
// reaches it, mounted under /prod as API Gateway's stage is.
type uiProxyFixture struct {
	proxy *UIProxy
	got   []forwarded
}

const (
	uiSelf = "http://127.0.0.1:8765"
	uiHost = "127.0.0.1:8765"
)

func newUIProxyFixture(t *testing.T) *uiProxyFixture {
	t.Helper()
	f := &uiProxyFixture{}
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		f.got = append(f.got, forwarded{r.Method, r.URL.Path, r.URL.EscapedPath(), r.URL.RawQuery, r.Header.Get("Authorization"), string(b), r.Header.Get("Cookie")})
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Set-Cookie", "x=y")
		w.WriteHeader(http.StatusTeapot)
		io.WriteString(w, `{"ok":true}`)
	}))
	t.Cleanup(api.Close)
	base, _ := url.Parse(api.URL + "/prod")
	c := &Client{base: base, http: api.Client(), signer: func(_ context.Context, r *http.Request, body []byte) error {
		r.Header.Set("Authorization", "signed:"+string(body))
		return nil
	}}
	f.proxy = c.UIProxy(uiSelf)
	return f
}

// request is one request to the proxy.
type request struct {
	method, target, host, origin, body string
	cookie                             *http.Cookie
}

func (f *uiProxyFixture) do(t *testing.T, r request) *http.Response {
	t.Helper()
	if r.method == "" {
		r.method = "GET"
	}
	if r.host == "" {
		r.host = uiHost
	}
	req := httptest.NewRequest(r.method, r.target, strings.NewReader(r.body))
	req.Host = r.host
	if r.origin != "" {
		req.Header.Set("Origin", r.origin)
	}
	if r.cookie != nil {
		req.AddCookie(r.cookie)
	}
	rec := httptest.NewRecorder()
	f.proxy.ServeHTTP(rec, req)
	return rec.Result()
}

// login opens the login URL and returns the session cookie it set.
func (f *uiProxyFixture) login(t *testing.T) *http.Cookie {
	t.Helper()
	u, err := url.Parse(f.proxy.LoginURL())
	if err != nil || u.Scheme+"://"+u.Host != uiSelf || u.Path != "/login" {
		t.Fatalf("login URL %q", f.proxy.LoginURL())
	}
	resp := f.do(t, request{target: u.RequestURI()})
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/ui/" {
		t.Fatalf("login: %d to %q, want 303 to /ui/", resp.StatusCode, resp.Header.Get("Location"))
	}
	cookies := resp.Cookies()
	if len(cookies) != 1 {
		t.Fatalf("login set cookies %v", resp.Header["Set-Cookie"])
	}
	c := cookies[0]
	if c.Name != uiSessionCookie || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" || len(c.Value) < 26 {
		t.Fatalf("session cookie %q: want HttpOnly, SameSite=Strict, Path=/ and 128 random bits or more", resp.Header.Get("Set-Cookie"))
	}
	if strings.Contains(c.Value, u.Query().Get("token")) {
		t.Fatal("the session cookie holds the login token")
	}
	return &http.Cookie{Name: c.Name, Value: c.Value}
}

// wantRefused checks a refusal: status and a JSON error body.
func wantRefused(t *testing.T, name string, resp *http.Response, status int) {
	t.Helper()
	var e APIError
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != status || json.Unmarshal(body, &e) != nil || e.Status != status || len(e.Errors) != 1 {
		t.Errorf("%s: %d %s, want %d with a JSON error body", name, resp.StatusCode, body, status)
	}
}

// TestUIProxyLogin: the login URL's token is good once — for one browser —
// and trades for a session cookie; a wrong token does not log in.
func TestUIProxyLogin(t *testing.T) {
	f := newUIProxyFixture(t)
	token := strings.TrimPrefix(f.proxy.LoginURL(), uiSelf+"/login?token=")
	if len(token) < 26 {
		t.Fatalf("login token %q: want 128 random bits or more", token)
	}
	wantRefused(t, "no token", f.do(t, request{target: "/login"}), http.StatusForbidden)
	wantRefused(t, "wrong token", f.do(t, request{target: "/login?token=" + strings.Repeat("A", len(token))}), http.StatusForbidden)
	wantRefused(t, "token with a suffix", f.do(t, request{target: "/login?token=" + token + "x"}), http.StatusForbidden)
	wantRefused(t, "login by POST", f.do(t, request{method: "POST", target: "/login?token=" + token, origin: uiSelf}), http.StatusMethodNotAllowed)
	wantRefused(t, "login through a rebound name", f.do(t, request{target: "/login?token=" + token, host: "evil.example:8765"}), http.StatusForbidden)

	cookie := f.login(t)
	wantRefused(t, "the token used twice", f.do(t, request{target: "/login?token=" + token}), http.StatusForbidden)
	wantRefused(t, "the token used twice, with the session", f.do(t, request{target: "/login?token=" + token, cookie: cookie}), http.StatusForbidden)
	if r := f.do(t, request{target: "/ui/", cookie: cookie}); r.StatusCode != http.StatusTeapot {
		t.Errorf("the UI with the session: %d", r.StatusCode)
	}
	if other := newUIProxyFixture(t).proxy; other.LoginURL() == f.proxy.LoginURL() || other.session == f.proxy.session {
		t.Error("two proxies share a token or a session secret")
	}
	if len(f.got) != 1 {
		t.Errorf("forwarded %+v, want the one UI request", f.got)
	}
}

// TestUIProxyNeedsTheSession: without the session cookie nothing is
// forwarded — not from the right Host and Origin (which any process on the
// machine can forge), not with a wrong cookie; with it the UI and the API
// are, signed, and a write still needs the proxy's own origin.
func TestUIProxyNeedsTheSession(t *testing.T) {
	f := newUIProxyFixture(t)
	cookie := f.login(t)
	for _, tc := range []struct {
		name string
		r    request
	}{
		{"the UI", request{target: "/ui/"}},
		{"the API", request{target: "/api/v3/workflows"}},
		{"health", request{target: "/health"}},
		{"the root", request{target: "/"}},
		{"forged Host and Origin", request{method: "POST", target: "/api/v3/workflows", origin: uiSelf, body: `{}`}},
		{"forged Host and Origin, a start", request{method: "POST", target: "/api/v3/workflows/w/versions/latest/actions/start", origin: uiSelf, body: `{}`}},
		{"wrong session", request{target: "/api/v3/workflows", cookie: &http.Cookie{Name: uiSessionCookie, Value: strings.Repeat("A", len(cookie.Value))}}},
		{"session of another cookie name", request{target: "/api/v3/workflows", cookie: &http.Cookie{Name: "session", Value: cookie.Value}}},
		{"empty session", request{target: "/api/v3/workflows", cookie: &http.Cookie{Name: uiSessionCookie, Value: ""}}},
	} {
		wantRefused(t, tc.name, f.do(t, tc.r), http.StatusForbidden)
	}
	if len(f.got) != 0 {
		t.Fatalf("requests without the session were forwarded: %+v", f.got)
	}

	r := f.do(t, request{target: "/api/v3/workflows?limit=5", cookie: cookie})
	if r.StatusCode != http.StatusTeapot || r.Header.Get("Set-Cookie") != "" || r.Header.Get("Content-Type") != "application/json" {
		t.Errorf("GET: %d %v", r.StatusCode, r.Header)
	}
	if len(f.got) != 1 || f.got[0].path != "/prod/api/v3/workflows" || f.got[0].query != "limit=5" || f.got[0].auth != "signed:" || f.got[0].cookie != "" {
		t.Errorf("forwarded %+v (the session cookie must not be)", f.got)
	}
	f.got = nil
	if r := f.do(t, request{method: "PUT", target: "/api/v3/workflows/w/instances/1/actions/stop", origin: uiSelf, body: `{}`, cookie: cookie}); r.StatusCode != http.StatusTeapot {
		t.Errorf("same-origin PUT: %d", r.StatusCode)
	}
	if len(f.got) != 1 || f.got[0].method != "PUT" || f.got[0].auth != "signed:{}" {
		t.Errorf("forwarded %+v", f.got)
	}
	f.got = nil
	for name, r := range map[string]request{
		"cross-origin POST":   {method: "POST", target: "/api/v3/workflows", origin: "https://evil.example", body: `{}`, cookie: cookie},
		"POST without Origin": {method: "POST", target: "/api/v3/workflows", body: `{}`, cookie: cookie},
		"rebound Host":        {target: "/api/v3/workflows", host: "evil.example:8765", cookie: cookie},
	} {
		wantRefused(t, name, f.do(t, r), http.StatusForbidden)
	}
	if r := f.do(t, request{target: "/", cookie: cookie}); r.StatusCode != http.StatusFound || r.Header.Get("Location") != "/ui/" {
		t.Errorf("/: %d %q", r.StatusCode, r.Header.Get("Location"))
	}
	wantRefused(t, "large body", f.do(t, request{method: "PUT", target: "/api/v3/workflows/actions/validate", origin: uiSelf,
		body: strings.Repeat("x", maxProxyBody+1), cookie: cookie}), http.StatusRequestEntityTooLarge)
	if len(f.got) != 0 {
		t.Errorf("refused requests were forwarded: %+v", f.got)
	}
}

// TestUIProxyPaths: only paths under /ui and /api/v3 (and /health) reach
// the endpoint, however a path tries to climb out of them — dot segments,
// encoded dots, encoded slashes around dots, backslashes, empty segments —
// while a signal name's encoded slash is forwarded as it was sent.
func TestUIProxyPaths(t *testing.T) {
	f := newUIProxyFixture(t)
	cookie := f.login(t)
	for _, tc := range []struct {
		target string
		status int
	}{
		{"/api/v3/../../prod/x", http.StatusBadRequest},
		{"/api/v3/../../x", http.StatusBadRequest},
		{"/api/v3/workflows/../../../prod/admin", http.StatusBadRequest},
		{"/ui/../../metadata", http.StatusBadRequest},
		{"/api/v3/./workflows", http.StatusBadRequest},
		{"/api/v3/%2e%2e/%2e%2e/prod/x", http.StatusBadRequest},
		{"/api/v3/%2E%2E/x", http.StatusBadRequest},
		{"/api/v3/.%2e/x", http.StatusBadRequest},
		{"/api/v3/..%2F..%2Fprod%2Fx", http.StatusBadRequest},
		{"/api/v3/signals/a%2F..%2F..%2F..%2Fx/instances/1", http.StatusBadRequest},
		{"/api/v3/..%5C..%5Cx", http.StatusBadRequest},
		{`/api/v3/x\..\..\y`, http.StatusBadRequest},
		{"//evil.example/api/v3/x", http.StatusBadRequest},
		{"/api/v3//workflows", http.StatusBadRequest},
		{"/metadata", http.StatusNotFound},
		{"/uix", http.StatusNotFound},
		{"/api/v30/x", http.StatusNotFound},
		{"/prod/x", http.StatusNotFound},
	} {
		wantRefused(t, tc.target, f.do(t, request{target: tc.target, cookie: cookie}), tc.status)
	}
	if len(f.got) != 0 {
		t.Fatalf("forwarded %+v", f.got)
	}

	for _, target := range []string{"/api/v3/signals/db%2Ftest%2Ftable1/instances/3", "/ui/workflows/w", "/ui", "/health"} {
		if r := f.do(t, request{target: target, cookie: cookie}); r.StatusCode != http.StatusTeapot {
			t.Errorf("%s: %d", target, r.StatusCode)
		}
	}
	want := []string{"/prod/api/v3/signals/db%2Ftest%2Ftable1/instances/3", "/prod/ui/workflows/w", "/prod/ui", "/prod/health"}
	var paths []string
	for _, g := range f.got {
		paths = append(paths, g.rawPath)
	}
	if strings.Join(paths, " ") != strings.Join(want, " ") {
		t.Errorf("forwarded paths %v, want %v", paths, want)
	}
}

func TestServeUIListensOnLoopbackOnly(t *testing.T) {
	var stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	code := Run(ctx, []string{"ui", "--listen", "0.0.0.0:0"}, Options{Stdout: io.Discard, Stderr: &stderr})
	if code != ExitFailed || !strings.Contains(stderr.String(), "loopback only") {
		t.Errorf("code %d, stderr %q", code, stderr.String())
	}
}

// TestServeUILogsInOnce runs `maestro ui` against an upstream and uses it
// as a browser would: the URL it prints logs a cookie jar in and lands on
// the UI, the same URL a second time is refused, and a client without the
// cookie is refused.
func TestServeUILogsInOnce(t *testing.T) {
	var paths []string
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths = append(paths, r.URL.Path)
		io.WriteString(w, "<html>maestro</html>")
	}))
	defer upstream.Close()
	ctx, cancel := context.WithCancel(context.Background())
	stdout, printed := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, []string{"ui", "--listen", "127.0.0.1:0", "--endpoint", upstream.URL}, Options{Stdout: printed, Stderr: io.Discard})
		printed.Close()
	}()
	defer func() {
		cancel()
		if code := <-done; code != ExitOK {
			t.Errorf("maestro ui: exit %d", code)
		}
	}()
	var loginURL string
	lines := bufio.NewScanner(stdout)
	for loginURL == "" && lines.Scan() {
		if f := strings.Fields(lines.Text()); len(f) == 1 && strings.Contains(f[0], "/login?token=") {
			loginURL = f[0]
		}
	}
	go io.Copy(io.Discard, stdout)
	if loginURL == "" {
		t.Fatal("maestro ui printed no login URL")
	}
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, Timeout: 10 * time.Second}
	resp, err := browser.Get(loginURL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != "<html>maestro</html>" || resp.Request.URL.Path != "/ui/" || resp.Request.URL.RawQuery != "" {
		t.Fatalf("login: %d %q at %s", resp.StatusCode, body, resp.Request.URL)
	}
	self := strings.Split(loginURL, "/login")[0]
	for name, c := range map[string]*http.Client{"the same URL again": browser, "another client": {Timeout: 10 * time.Second}} {
		target := self + "/ui/"
		if name == "the same URL again" {
			target = loginURL
		}
		resp, err := c.Get(target)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s: %d, want 403", name, resp.StatusCode)
		}
	}
	if strings.Join(paths, " ") != "/ui/" {
		t.Errorf("upstream saw %v, want the one UI page", paths)
	}
}
