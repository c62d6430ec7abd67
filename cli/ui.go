package cli

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync"
	"time"
)

// DefaultUIAddr is where `maestro ui` serves the web UI.
const DefaultUIAddr = "127.0.0.1:8765"

// maxProxyBody is the largest request body the UI proxy forwards: the
// API's own limit (api.MaxBodyBytes).
const maxProxyBody = 256 << 10

// uiSessionCookie names the cookie that holds a UIProxy's session secret.
const uiSessionCookie = "maestro_ui_session"

// uiLoginPath is where a UIProxy trades its one-time token for the session
// cookie.
const uiLoginPath = "/login"

// UIProxy forwards requests for the web UI and its API calls to a
// client's endpoint, signed as every client request is (SigV4 for an AWS
// endpoint), so a browser can use a stack whose API Gateway takes only
// IAM-signed requests. Since it acts with the user's credentials, it
// serves only the browser the user logged in:
//
//   - It is made with a one-time login token and a separate session
//     secret, each 128 random bits or more. GET /login?token=T with the
//     token sets the secret as an HttpOnly, SameSite=Strict cookie (Path=/)
//     and redirects to /ui/, out of the URL that carried the token; the
//     token is spent, so a second use gets 403.
//   - Every other request must carry the cookie (compared in constant
//     time), or gets 403: a process on the machine, or a page of another
//     site, cannot use it by forging headers.
//   - Requests must be addressed to its own host (self), so a page cannot
//     reach it through a rebound DNS name, and requests that change
//     something must come from a page of its own origin.
//   - Only /ui, /ui/..., /api/v3/... and /health are forwarded, checked
//     on the path as sent, which must be clean (no . or .. segment, no
//     empty one, no backslash, no encoded dot), so nothing outside them
//     on the endpoint is reached.
//
// Its refusals are JSON {"status", "message", "errors"} bodies, as the
// API's.
type UIProxy struct {
	c        *Client
	self     string // http://host:port
	host     string
	loginURL string
	session  string

	mu    sync.Mutex
	token string // the one-time login token; "" once spent
}

// UIProxy returns the UI proxy of the client's endpoint; self is the
// proxy's own origin (http://host:port). Its login URL carries a fresh
// one-time token.
func (c *Client) UIProxy(self string) *UIProxy {
	token := rand.Text()
	return &UIProxy{
		c: c, self: self, host: strings.TrimPrefix(self, "http://"),
		token: token, session: rand.Text(),
		loginURL: self + uiLoginPath + "?token=" + token,
	}
}

// LoginURL is the URL to open once in the browser that is to use the UI.
func (p *UIProxy) LoginURL() string { return p.loginURL }

func (p *UIProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Host != p.host {
		proxyError(w, http.StatusForbidden, "request refused", fmt.Sprintf("Host: must be %s, got %q", p.host, clip(r.Host)))
		return
	}
	if r.URL.Path == uiLoginPath {
		p.login(w, r)
		return
	}
	if !p.hasSession(r) {
		proxyError(w, http.StatusForbidden, "not logged in",
			"Cookie: no session of this maestro ui: open the login URL it printed (once), or restart it for a new one")
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		if o := r.Header.Get("Origin"); o != p.self {
			proxyError(w, http.StatusForbidden, "cross-origin request refused",
				fmt.Sprintf("Origin: a %s must come from a page of %s, got %q", clip(r.Method), p.self, clip(o)))
			return
		}
	}
	if r.URL.Path == "/" {
		http.Redirect(w, r, "/ui/", http.StatusFound)
		return
	}
	if detail := uncleanPath(r.URL); detail != "" {
		proxyError(w, http.StatusBadRequest, "path refused", detail)
		return
	}
	if pth := r.URL.Path; pth != "/ui" && !strings.HasPrefix(pth, "/ui/") && !strings.HasPrefix(pth, "/api/v3/") && pth != "/health" {
		proxyError(w, http.StatusNotFound, "not forwarded", "path: only /ui/..., /api/v3/... and /health are forwarded")
		return
	}
	p.forward(w, r)
}

// login trades the one-time token for the session cookie, once.
func (p *UIProxy) login(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		proxyError(w, http.StatusMethodNotAllowed, "method not allowed", "method: "+uiLoginPath+" takes GET")
		return
	}
	given := r.URL.Query().Get("token")
	p.mu.Lock()
	ok := p.token != "" && subtle.ConstantTimeCompare([]byte(given), []byte(p.token)) == 1
	if ok {
		p.token = ""
	}
	p.mu.Unlock()
	if !ok {
		proxyError(w, http.StatusForbidden, "login refused",
			"token: not this maestro ui's login token, or already used: open /ui/ in the browser that used it, or restart maestro ui for a new one")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: uiSessionCookie, Value: p.session, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	http.Redirect(w, r, "/ui/", http.StatusSeeOther)
}

// hasSession reports whether r carries the session cookie.
func (p *UIProxy) hasSession(r *http.Request) bool {
	ok := false
	for _, c := range r.CookiesNamed(uiSessionCookie) {
		if subtle.ConstantTimeCompare([]byte(c.Value), []byte(p.session)) == 1 {
			ok = true
		}
	}
	return ok
}

// uncleanPath says why u's path may not be forwarded as it is, or "": a
// path must be clean (path.Clean leaves it alone, but for a trailing
// slash), without a backslash, and its encoded form without an encoded
// dot, so that however the endpoint decodes and normalises it, it names
// the path checked here. An encoded slash stays allowed: signal names
// hold slashes, and the UI encodes them (%2F) within one segment.
func uncleanPath(u *url.URL) string {
	p := u.Path
	clean := path.Clean(p)
	if strings.HasSuffix(p, "/") && clean != "/" {
		clean += "/"
	}
	switch {
	case !strings.HasPrefix(p, "/") || clean != p:
		return fmt.Sprintf("path: must be clean (no ., .. or empty segment), got %q", clip(p))
	case strings.Contains(p, `\`):
		return fmt.Sprintf("path: must not hold a backslash, got %q", clip(p))
	case strings.Contains(strings.ToLower(u.RawPath), "%2e"):
		return fmt.Sprintf("path: must not hold an encoded dot (%%2e), got %q", clip(u.RawPath))
	}
	return ""
}

// forward sends r to the endpoint, signed, and copies the answer back.
func (p *UIProxy) forward(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxProxyBody+1))
	if err != nil {
		proxyError(w, http.StatusBadRequest, "cannot read the request body", err.Error())
		return
	}
	if len(body) > maxProxyBody {
		proxyError(w, http.StatusRequestEntityTooLarge, "request body too large", "request body: at most 256 KiB")
		return
	}
	c := p.c
	u := *c.base
	base := strings.TrimRight(c.base.Path, "/")
	u.Path = base + r.URL.Path
	u.RawPath = ""
	if r.URL.RawPath != "" {
		u.RawPath = strings.TrimRight(c.base.EscapedPath(), "/") + r.URL.EscapedPath()
	}
	u.RawQuery = r.URL.RawQuery
	out, err := http.NewRequestWithContext(r.Context(), r.Method, u.String(), bytes.NewReader(body))
	if err != nil {
		proxyError(w, http.StatusBadRequest, "cannot forward the request", err.Error())
		return
	}
	for _, h := range []string{"Content-Type", "Accept", "If-None-Match", "If-Modified-Since"} {
		if v := r.Header.Get(h); v != "" {
			out.Header.Set(h, v)
		}
	}
	if c.signer != nil {
		if err := c.signer(r.Context(), out, body); err != nil {
			proxyError(w, http.StatusBadGateway, "cannot sign the request", err.Error())
			return
		}
	}
	resp, err := c.http.Do(out)
	if err != nil {
		proxyError(w, http.StatusBadGateway, "the endpoint did not answer", err.Error())
		return
	}
	defer resp.Body.Close()
	for k, vs := range resp.Header {
		switch http.CanonicalHeaderKey(k) {
		case "Connection", "Keep-Alive", "Transfer-Encoding", "Set-Cookie":
			continue
		}
		w.Header()[k] = vs
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

// proxyError answers a refusal of the proxy's own as the API answers
// errors: {"status", "message", "errors": [detail]}.
func proxyError(w http.ResponseWriter, status int, message, detail string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(APIError{Status: status, Message: message, Errors: []string{detail}})
}

// clip shortens a value a client chose before it is echoed.
func clip(s string) string {
	const limit = 200
	if len(s) <= limit {
		return s
	}
	return strings.ToValidUTF8(s[:limit], "") + "..."
}

// serveUI runs the UI proxy on a loopback address until ctx is done.
func (r *runner) serveUI(ctx context.Context, addr string) int {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return r.fail("ui", fmt.Errorf("--listen %q: %w", addr, err))
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return r.fail("ui", fmt.Errorf("--listen %q: the proxy signs requests with your credentials, so it listens on loopback only", addr))
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return r.fail("ui", err)
	}
	self := "http://" + ln.Addr().String()
	proxy := r.c.UIProxy(self)
	srv := &http.Server{Handler: proxy, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	fmt.Fprintf(r.o.Stdout, "the web UI of %s is at %s/ui/ (Ctrl-C stops it); log your browser in by opening, once:\n  %s\n",
		r.c.base, self, proxy.LoginURL())
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return r.fail("ui", err)
	}
	return ExitOK
}
