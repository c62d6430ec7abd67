// Package httpstep runs Maestro's Http step: one HTTP call described by the
// step's `http` MAP param (url, method, headers, body, state_expr), whose
// status and response decide the step's outcome and whose JSON response
// fields become the step's output params.
//
// Calls go only to hosts on an allow-list (Config.AllowHosts, empty by
// default), checked on the URL before connecting and on every redirect; every
// address a name resolves to is checked again before it is dialed, so an
// allowed name that resolves to a loopback, private, link-local or metadata
// address is refused unless an IP or CIDR entry admits that address. A
// response larger than Config.MaxResponseBytes fails the step.
//
// Outcomes follow Maestro's default state_expr: 2xx succeeds, 4xx is a fatal
// error (not retried), any other status a user error (retried per the step's
// retry policy); connection failures and timeouts are platform errors.
package httpstep

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/maestro-serverless/maestro/engine"
	"github.com/maestro-serverless/maestro/engine/expression"
	"github.com/maestro-serverless/maestro/jsonnum"
	"github.com/maestro-serverless/maestro/model"
	"github.com/maestro-serverless/maestro/orchestrator"
	"github.com/maestro-serverless/maestro/steps/stepparam"
)

// Defaults of Config.
const (
	DefaultConnectTimeout   = 10 * time.Second
	DefaultRequestTimeout   = 30 * time.Second // Maestro's http step timeout
	DefaultMaxResponseBytes = 1 << 20          // 1 MiB, Maestro's max-response-size
	// MaxRedirects is the most redirects one call follows.
	MaxRedirects = 5
	// MaxResponseBodyOutput is the longest response_body output, in bytes.
	MaxResponseBodyOutput = 64 << 10
)

// maxIdleConns is how many idle connections the default client keeps, in
// all and to one host.
const maxIdleConns = 16

// Names of the step params and outputs this runner reads and writes.
const (
	ParamHTTP          = "http"
	ParamStateExpr     = "state_expr"
	OutputStatusCode   = "status_code"
	OutputResponseBody = "response_body"
)

// Results a state_expr may return.
const (
	StateDone          = "DONE"
	StateUserError     = "USER_ERROR"
	StatePlatformError = "PLATFORM_ERROR"
	StateFatalError    = "FATAL_ERROR"
)

// DefaultHeaders are the request headers Maestro's Http step sends unless
// the step sets them.
var DefaultHeaders = map[string]string{"Content-Type": "application/json", "Accept": "application/json"}

// Config configures a Runner. The zero value allows no host at all.
type Config struct {
	// AllowHosts lists the hosts a step may call: exact host names, IP
	// literals, CIDR prefixes ("10.1.0.0/16"), "*.example.com" (any name
	// under example.com; a wildcard over a public suffix such as "*.com" is
	// refused), each optionally limited to one port ("api.example.com:8443",
	// "[2001:db8::1]:443"), and the special entry "loopback", which allows
	// 127.0.0.0/8, ::1 and "localhost" (a name it admits must dial a
	// loopback address). Names may only resolve to public addresses unless an
	// IP or CIDR entry covers the address (see CheckAllowList).
	AllowHosts []string
	// ConnectTimeout bounds establishing one connection (TCP and TLS);
	// DefaultConnectTimeout when zero.
	ConnectTimeout time.Duration
	// RequestTimeout bounds a whole call, redirects and reading the
	// response included; DefaultRequestTimeout when zero.
	RequestTimeout time.Duration
	// MaxResponseBytes caps the response body; DefaultMaxResponseBytes when
	// zero.
	MaxResponseBytes int64
	// Language compiles state_expr; a Language with default limits when nil.
	Language *expression.Language
	// Resolver resolves host names before their addresses are checked and
	// dialed; net.DefaultResolver when nil.
	Resolver Resolver
	// Client, when set, replaces the client the Runner builds (tests). The
	// Runner uses a copy with its own CheckRedirect; the dialed-address
	// checks are then up to Client's transport.
	Client *http.Client
}

// Resolver looks up the addresses of a host name; *net.Resolver implements
// it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Runner executes Http steps. It implements orchestrator.StepRunner and is
// safe for concurrent use.
type Runner struct {
	allow          *allowList
	connectTimeout time.Duration
	requestTimeout time.Duration
	maxBytes       int64
	lang           *expression.Language
	resolver       Resolver
	client         *http.Client
}

var _ orchestrator.StepRunner = (*Runner)(nil)

// New returns a Runner for cfg, filling in defaults. It fails on an invalid
// allow-list entry.
func New(cfg Config) (*Runner, error) {
	allow, err := parseAllowList(cfg.AllowHosts)
	if err != nil {
		return nil, err
	}
	r := &Runner{
		allow:          allow,
		connectTimeout: positiveOr(cfg.ConnectTimeout, DefaultConnectTimeout),
		requestTimeout: positiveOr(cfg.RequestTimeout, DefaultRequestTimeout),
		maxBytes:       positiveOr(cfg.MaxResponseBytes, DefaultMaxResponseBytes),
		lang:           cfg.Language,
		resolver:       cfg.Resolver,
	}
	if r.resolver == nil {
		r.resolver = net.DefaultResolver
	}
	if r.lang == nil {
		r.lang = expression.New(expression.DefaultLimits())
	}
	var c http.Client
	if cfg.Client != nil {
		c = *cfg.Client
	} else {
		c.Transport = &http.Transport{
			Proxy:                 nil, // a proxy would bypass the dial check
			DialContext:           r.dialContext,
			TLSHandshakeTimeout:   r.connectTimeout,
			ResponseHeaderTimeout: r.requestTimeout,
			MaxIdleConns:          maxIdleConns,
			// Steps of a run often call one host, several at once: with
			// net/http's default of 2 idle connections per host, all but
			// two of them dialled (and checked) a new connection each.
			MaxIdleConnsPerHost: maxIdleConns,
			IdleConnTimeout:     90 * time.Second,
			ForceAttemptHTTP2:   true,
		}
	}
	c.CheckRedirect = r.checkRedirect
	r.client = &c
	return r, nil
}

// request is the call described by a step's params.
type request struct {
	method    string
	url       *url.URL
	headers   map[string]string
	body      string
	stateExpr string
}

// RunStep performs the step's HTTP call and reports its outcome. Step
// failures are outcomes, never errors: the returned error is always nil.
func (r *Runner) RunStep(ctx context.Context, m orchestrator.StepWork) (engine.StepFinished, error) {
	res := engine.StepFinished{StepID: m.StepID, Attempt: m.Attempt}
	req, err := parseRequest(m.Params)
	if err != nil {
		return finish(res, engine.OutcomeFatalError, err.Error()), nil
	}
	host := req.url.Hostname()
	if !r.allow.matchHost(host, urlPort(req.url.Scheme, req.url.Port())) {
		return finish(res, engine.OutcomeFatalError, r.notAllowed(host)), nil
	}
	// Compile before calling, so a bad expression costs no request.
	var prog *expression.Program
	if req.stateExpr != "" {
		prog, err = r.compileStateExpr(req.stateExpr, m.Params)
		if err != nil {
			return finish(res, engine.OutcomeFatalError, fmt.Sprintf("state_expr: %v", err)), nil
		}
	}

	status, body, outcome, msg := r.call(ctx, req)
	if outcome != "" {
		return finish(res, outcome, msg), nil
	}
	res.Outputs = outputs(status, body)
	if prog != nil {
		res.Outcome, res.Message = r.evalState(ctx, prog, m.Params, status, body)
	} else {
		res.Outcome, res.Message = defaultState(status, host)
	}
	if res.Outcome != engine.OutcomeSucceeded {
		res.Outputs = nil // outputs only count on success
	}
	return res, nil
}

// defaultState is Maestro's default state_expr: 2xx DONE, 4xx FATAL_ERROR
// (a client error does not get better by retrying), anything else
// USER_ERROR.
func defaultState(status int, host string) (engine.Outcome, string) {
	switch {
	case status >= 200 && status <= 299:
		return engine.OutcomeSucceeded, ""
	case status >= 400 && status <= 499:
		return engine.OutcomeFatalError, fmt.Sprintf("HTTP %d from %s (a 4xx response is not retried)", status, host)
	default:
		return engine.OutcomeUserError, fmt.Sprintf("HTTP %d from %s", status, host)
	}
}

func finish(res engine.StepFinished, o engine.Outcome, msg string) engine.StepFinished {
	res.Outcome, res.Message = o, msg
	return res
}

func (r *Runner) notAllowed(host string) string {
	return fmt.Sprintf("host %q is not on the http step allow-list (AllowHosts %s); add it to the allow-list setting to call it", host, r.allow)
}

// parseRequest reads the `http` MAP param (and a step-level state_expr, where
// Maestro's YAML samples put it).
func parseRequest(params engine.Values) (*request, error) {
	h, err := stepparam.Map(params, ParamHTTP)
	if err != nil {
		return nil, err
	}
	str := func(name string) (string, error) { return stepparam.String(h, ParamHTTP, name) }
	req := &request{}
	rawURL, err := str("url")
	if err != nil {
		return nil, err
	}
	if rawURL == "" {
		return nil, fmt.Errorf("param %s.url is missing", ParamHTTP)
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("param %s.url is not a valid URL", ParamHTTP)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("param %s.url: scheme %q is not supported (only http and https)", ParamHTTP, u.Scheme)
	}
	if u.Hostname() == "" {
		return nil, fmt.Errorf("param %s.url has no host", ParamHTTP)
	}
	req.url = u
	if req.method, err = str("method"); err != nil {
		return nil, err
	}
	req.method = strings.ToUpper(strings.TrimSpace(req.method))
	if req.method == "" {
		req.method = http.MethodGet
	}
	if !validMethod(req.method) {
		return nil, fmt.Errorf("param %s.method %q is not a valid HTTP method", ParamHTTP, req.method)
	}
	if req.body, err = str("body"); err != nil {
		return nil, err
	}
	if req.headers, err = headers(h["headers"]); err != nil {
		return nil, err
	}
	if req.stateExpr, err = str(ParamStateExpr); err != nil {
		return nil, err
	}
	if req.stateExpr == "" {
		if v, ok := params[ParamStateExpr]; ok {
			s, ok := v.(string)
			if !ok {
				return nil, fmt.Errorf("param %s must be a STRING, not %T", ParamStateExpr, v)
			}
			req.stateExpr = s
		}
	}
	req.stateExpr = strings.TrimSpace(req.stateExpr)
	return req, nil
}

// headers reads http.headers: a STRING_MAP, or a MAP whose values are strings.
// Messages name header keys, never values.
func headers(v any) (map[string]string, error) {
	switch h := v.(type) {
	case nil:
		return nil, nil
	case map[string]string:
		for k := range h {
			if err := checkHeaderName(k); err != nil {
				return nil, err
			}
		}
		return h, nil
	case map[string]any:
		out := make(map[string]string, len(h))
		for k, x := range h {
			if err := checkHeaderName(k); err != nil {
				return nil, err
			}
			s, ok := x.(string)
			if !ok {
				return nil, fmt.Errorf("param %s.headers.%s must be a STRING, not %T", ParamHTTP, k, x)
			}
			out[k] = s
		}
		return out, nil
	default:
		return nil, fmt.Errorf("param %s.headers must be a STRING_MAP, not %T", ParamHTTP, v)
	}
}

func checkHeaderName(k string) error {
	if !validMethod(k) { // header names are tokens, as methods are
		return fmt.Errorf("param %s.headers: %q is not a valid header name", ParamHTTP, k)
	}
	if http.CanonicalHeaderKey(k) == "Host" {
		return fmt.Errorf("param %s.headers: the Host header cannot be set (the host comes from %s.url, which the allow-list checks)", ParamHTTP, ParamHTTP)
	}
	return nil
}

// validMethod reports whether s is an RFC 9110 token.
func validMethod(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// call performs the request. It returns the status and body, or a failure
// outcome and its message.
func (r *Runner) call(ctx context.Context, req *request) (status int, body []byte, outcome engine.Outcome, msg string) {
	ctx, cancel := context.WithTimeout(ctx, r.requestTimeout)
	defer cancel()
	var rd io.Reader
	if req.body != "" {
		rd = strings.NewReader(req.body)
	}
	hr, err := http.NewRequestWithContext(ctx, req.method, req.url.String(), rd)
	if err != nil {
		return 0, nil, engine.OutcomeFatalError, fmt.Sprintf("cannot build request for %s: invalid request", redact(req.url))
	}
	for k, v := range DefaultHeaders {
		hr.Header.Set(k, v)
	}
	for k, v := range req.headers {
		hr.Header.Set(k, v)
	}
	resp, err := r.client.Do(hr)
	if err != nil {
		o, m := r.classify(err, req)
		return 0, nil, o, m
	}
	defer resp.Body.Close()
	body, err = io.ReadAll(io.LimitReader(resp.Body, r.maxBytes+1))
	if err != nil {
		o, m := r.classify(err, req)
		return 0, nil, o, "reading response: " + m
	}
	if int64(len(body)) > r.maxBytes {
		return 0, nil, engine.OutcomeUserError, fmt.Sprintf("response larger than %s from %s", formatBytes(r.maxBytes), resp.Request.URL.Hostname())
	}
	return resp.StatusCode, body, "", ""
}

// redirectError refuses a redirect; it ends the step USER_ERROR.
type redirectError struct{ msg string }

func (e *redirectError) Error() string { return e.msg }

// dialRefusedError refuses a connection the allow-list does not admit; it
// ends the step FATAL_ERROR.
type dialRefusedError struct{ msg string }

func (e *dialRefusedError) Error() string { return e.msg }

// checkRedirect follows at most MaxRedirects redirects, each to an allowed
// http(s) host. A redirect to another host (or port) carries only
// DefaultHeaders: the step's own headers, credentials among them, are meant
// for the host it named.
func (r *Runner) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= MaxRedirects {
		return &redirectError{fmt.Sprintf("stopped after %d redirects", MaxRedirects)}
	}
	if s := req.URL.Scheme; s != "http" && s != "https" {
		return &redirectError{fmt.Sprintf("redirect to scheme %q not allowed", s)}
	}
	if host := req.URL.Hostname(); !r.allow.matchHost(host, urlPort(req.URL.Scheme, req.URL.Port())) {
		return &redirectError{fmt.Sprintf("redirect to host %s not allowed (AllowHosts %s)", host, r.allow)}
	}
	if !strings.EqualFold(hostPort(req.URL), hostPort(via[0].URL)) {
		req.Header = http.Header{}
		for k, v := range DefaultHeaders {
			req.Header.Set(k, v)
		}
	}
	return nil
}

// hostPort returns u's host and the port it dials.
func hostPort(u *url.URL) string {
	return net.JoinHostPort(u.Hostname(), fmt.Sprint(urlPort(u.Scheme, u.Port())))
}

// dialContext connects to an allowed host within ConnectTimeout. It resolves
// a name itself and checks every address before dialing it (never resolving
// twice), so what is dialed is what was checked.
func (r *Runner) dialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := splitDialAddr(addr)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	if !r.allow.matchHost(host, port) {
		return nil, &dialRefusedError{r.notAllowed(host)}
	}
	var ips []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		ips = []netip.Addr{ip}
	} else {
		ipNet := "ip"
		switch network {
		case "tcp4":
			ipNet = "ip4"
		case "tcp6":
			ipNet = "ip6"
		}
		if ips, err = r.resolver.LookupNetIP(ctx, ipNet, host); err != nil {
			return nil, fmt.Errorf("resolve %s: %w", host, err)
		}
	}
	d := &net.Dialer{Timeout: r.connectTimeout}
	var refused, failed error
	for _, ip := range ips {
		if err := r.allow.checkDial(host, ip, port); err != nil {
			refused = err
			continue
		}
		conn, err := d.DialContext(ctx, network, netip.AddrPortFrom(ip.Unmap(), port).String())
		if err == nil {
			return conn, nil
		}
		failed = err
	}
	if failed != nil {
		return nil, fmt.Errorf("connect to %s: %w", addr, failed)
	}
	if refused != nil {
		return nil, refused
	}
	return nil, fmt.Errorf("resolve %s: no addresses", host)
}

// classify maps a transport error to an outcome and a message that holds no
// header values, body or URL query.
func (r *Runner) classify(err error, req *request) (engine.Outcome, string) {
	var re *redirectError
	if errors.As(err, &re) {
		return engine.OutcomeUserError, re.msg
	}
	var de *dialRefusedError
	if errors.As(err, &de) {
		return engine.OutcomeFatalError, de.msg
	}
	inner := err
	var ue *url.Error
	if errors.As(err, &ue) {
		inner = ue.Err
	}
	where := req.method + " " + redact(req.url)
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return engine.OutcomePlatformError, fmt.Sprintf("%s: timed out (request timeout %s, connect timeout %s): %v", where, r.requestTimeout, r.connectTimeout, inner)
	}
	return engine.OutcomePlatformError, fmt.Sprintf("%s: %v", where, inner)
}

// redact prints u without user info, query or fragment.
func redact(u *url.URL) string {
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
}

func formatBytes(n int64) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	if n%(1<<10) == 0 {
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// outputs returns status_code, response_body (truncated) and, for a JSON
// object body, its top-level fields. A field whose value cannot be a
// parameter (null, nested arrays, mixed arrays) or that would replace the
// step's request (http, state_expr) is left out.
func outputs(status int, body []byte) map[string]any {
	out := map[string]any{}
	if fields := jsonFields(body); fields != nil {
		for k, v := range fields {
			if k == "" || k == ParamHTTP || k == ParamStateExpr {
				continue
			}
			v = convertJSON(v)
			if _, err := engine.Normalize(v); err != nil {
				continue
			}
			out[k] = v
		}
	}
	out[OutputStatusCode] = int64(status)
	out[OutputResponseBody] = truncateUTF8(body, MaxResponseBodyOutput)
	return out
}

// jsonFields decodes body when it is exactly one JSON object.
func jsonFields(body []byte) map[string]any {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil
	}
	var fields map[string]any
	if err := jsonnum.Decode(trimmed, &fields); err != nil {
		return nil // not JSON, or trailing data: not one JSON object
	}
	return fields
}

// convertJSON converts a decoded JSON value: whole numbers to int64, other
// numbers to float64, objects and arrays recursively.
func convertJSON(v any) any {
	switch x := v.(type) {
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n
		}
		f, _ := x.Float64() // JSON numbers always parse; out of range gives ±Inf, rejected later
		return f
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = convertJSON(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = convertJSON(e)
		}
		return out
	default:
		return v
	}
}

// truncateUTF8 returns at most max bytes of b as a string, not splitting a
// UTF-8 sequence.
func truncateUTF8(b []byte, max int) string {
	if len(b) <= max {
		return string(b)
	}
	b = b[:max]
	for i := 0; i < utf8.UTFMax && len(b) > 0; i++ {
		if r, size := utf8.DecodeLastRune(b); r != utf8.RuneError || size != 1 {
			break
		}
		b = b[:len(b)-1]
	}
	return string(b)
}

// compileStateExpr compiles src over status_code, response_body and the
// step's params.
func (r *Runner) compileStateExpr(src string, params engine.Values) (*expression.Program, error) {
	vars := make(map[string]model.ParamType, len(params)+2)
	for k := range params {
		vars[k] = ""
	}
	vars[OutputStatusCode] = model.TypeLong
	vars[OutputResponseBody] = model.TypeString
	prog, err := r.lang.Compile(src, model.TypeString, model.Scope{Vars: vars})
	if err != nil {
		return nil, fmt.Errorf("compile: %w", err)
	}
	return prog, nil
}

// evalState evaluates state_expr and maps its result to an outcome.
func (r *Runner) evalState(ctx context.Context, prog *expression.Program, params engine.Values, status int, body []byte) (engine.Outcome, string) {
	vars := make(map[string]any, len(params)+2)
	for k, v := range params {
		vars[k] = v
	}
	vars[OutputStatusCode] = int64(status)
	vars[OutputResponseBody] = string(body)
	v, err := prog.Eval(ctx, &expression.Env{Vars: vars})
	if err != nil {
		return engine.OutcomeFatalError, fmt.Sprintf("state_expr: %v", err)
	}
	s, _ := v.(string)
	switch s {
	case StateDone:
		return engine.OutcomeSucceeded, ""
	case StateUserError:
		return engine.OutcomeUserError, fmt.Sprintf("state_expr returned %s for HTTP %d", s, status)
	case StatePlatformError:
		return engine.OutcomePlatformError, fmt.Sprintf("state_expr returned %s for HTTP %d", s, status)
	case StateFatalError:
		return engine.OutcomeFatalError, fmt.Sprintf("state_expr returned %s for HTTP %d", s, status)
	default:
		return engine.OutcomeFatalError, fmt.Sprintf("state_expr returned %q; it must return one of DONE, USER_ERROR, PLATFORM_ERROR, FATAL_ERROR", truncateUTF8([]byte(s), 100))
	}
}

// positiveOr is a setting's value v when it is positive, else def (the
// setting was left unset).
func positiveOr[T int64 | time.Duration](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}
