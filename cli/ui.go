package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// DefaultUIAddr is where `maestro ui` serves the web UI.
const DefaultUIAddr = "127.0.0.1:8765"

// maxProxyBody is the largest request body the UI proxy forwards: the
// API's own limit (api.MaxBodyBytes).
const maxProxyBody = 256 << 10

// UIProxy returns a handler that forwards requests for the web UI and its
// API calls to the client's endpoint, signed as every client request is
// (SigV4 for an AWS endpoint), so a browser can use a stack whose API
// Gateway takes only IAM-signed requests. self is the proxy's own origin
// (http://host:port): only requests addressed to it are served, and
// requests that change something must come from a page of that origin,
// so another site open in the same browser can neither read the API
// through a rebound DNS name nor act on it with the user's credentials.
func (c *Client) UIProxy(self string) http.Handler {
	host := strings.TrimPrefix(self, "http://")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Host != host {
			http.Error(w, "maestro ui: wrong Host "+r.Host, http.StatusForbidden)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if o := r.Header.Get("Origin"); o != self {
				http.Error(w, "maestro ui: cross-origin request refused", http.StatusForbidden)
				return
			}
		}
		if r.URL.Path == "/" {
			http.Redirect(w, r, "/ui/", http.StatusFound)
			return
		}
		if !strings.HasPrefix(r.URL.Path, "/ui") && !strings.HasPrefix(r.URL.Path, "/api/v3/") && r.URL.Path != "/health" {
			http.NotFound(w, r)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, maxProxyBody+1))
		if err != nil {
			http.Error(w, "maestro ui: read request: "+err.Error(), http.StatusBadRequest)
			return
		}
		if len(body) > maxProxyBody {
			http.Error(w, "maestro ui: request body over 256 KiB", http.StatusRequestEntityTooLarge)
			return
		}
		u := *c.base
		u.Path = strings.TrimRight(c.base.Path, "/") + r.URL.Path
		u.RawQuery = r.URL.RawQuery
		out, err := http.NewRequestWithContext(r.Context(), r.Method, u.String(), bytes.NewReader(body))
		if err != nil {
			http.Error(w, "maestro ui: "+err.Error(), http.StatusBadRequest)
			return
		}
		for _, h := range []string{"Content-Type", "Accept", "If-None-Match", "If-Modified-Since"} {
			if v := r.Header.Get(h); v != "" {
				out.Header.Set(h, v)
			}
		}
		if c.signer != nil {
			if err := c.signer(r.Context(), out, body); err != nil {
				http.Error(w, "maestro ui: sign request: "+err.Error(), http.StatusBadGateway)
				return
			}
		}
		resp, err := c.http.Do(out)
		if err != nil {
			http.Error(w, "maestro ui: "+err.Error(), http.StatusBadGateway)
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
	})
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
	srv := &http.Server{Handler: r.c.UIProxy(self), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	fmt.Fprintf(r.o.Stdout, "the web UI of %s is at %s/ui/ (Ctrl-C stops it)\n", r.c.base, self)
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return r.fail("ui", err)
	}
	return ExitOK
}
