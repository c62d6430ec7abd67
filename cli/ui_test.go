package cli

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

func TestUIProxy(t *testing.T) {
	type seen struct {
		method, path, query, auth, body string
	}
	var got []seen
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = append(got, seen{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("Authorization"), string(b)})
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Set-Cookie", "x=y")
		w.WriteHeader(http.StatusTeapot)
		io.WriteString(w, `{"ok":true}`)
	}))
	defer api.Close()
	base, _ := url.Parse(api.URL + "/prod")
	c := &Client{base: base, http: api.Client(), signer: func(_ context.Context, r *http.Request, body []byte) error {
		r.Header.Set("Authorization", "signed:"+string(body))
		return nil
	}}
	const self = "http://127.0.0.1:8765"
	h := c.UIProxy(self)
	do := func(method, target, origin, host string, body string) *http.Response {
		req := httptest.NewRequest(method, target, strings.NewReader(body))
		req.Host = host
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Result()
	}
	host := "127.0.0.1:8765"

	r := do("GET", "/api/v3/workflows?limit=5", "", host, "")
	if r.StatusCode != http.StatusTeapot || r.Header.Get("Set-Cookie") != "" || r.Header.Get("Content-Type") != "application/json" {
		t.Errorf("GET: %d %v", r.StatusCode, r.Header)
	}
	if len(got) != 1 || got[0].path != "/prod/api/v3/workflows" || got[0].query != "limit=5" || got[0].auth != "signed:" {
		t.Errorf("forwarded %+v", got)
	}
	got = nil
	if r := do("PUT", "/api/v3/workflows/w/instances/1/actions/stop", self, host, `{}`); r.StatusCode != http.StatusTeapot {
		t.Errorf("same-origin PUT: %d", r.StatusCode)
	}
	if len(got) != 1 || got[0].method != "PUT" || got[0].auth != "signed:{}" {
		t.Errorf("forwarded %+v", got)
	}
	got = nil
	for name, r := range map[string]*http.Response{
		"cross-origin POST":   do("POST", "/api/v3/workflows", "https://evil.example", host, `{}`),
		"POST without Origin": do("POST", "/api/v3/workflows", "", host, `{}`),
		"rebound Host":        do("GET", "/api/v3/workflows", "", "evil.example:8765", ""),
	} {
		if r.StatusCode != http.StatusForbidden {
			t.Errorf("%s: %d, want 403", name, r.StatusCode)
		}
	}
	if r := do("GET", "/metadata", "", host, ""); r.StatusCode != http.StatusNotFound {
		t.Errorf("path outside the UI and API: %d", r.StatusCode)
	}
	if r := do("PUT", "/api/v3/workflows/actions/validate", self, host, strings.Repeat("x", maxProxyBody+1)); r.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("large body: %d", r.StatusCode)
	}
	if r := do("GET", "/", "", host, ""); r.StatusCode != http.StatusFound || r.Header.Get("Location") != "/ui/" {
		t.Errorf("/: %d %q", r.StatusCode, r.Header.Get("Location"))
	}
	if len(got) != 0 {
		t.Errorf("refused requests were forwarded: %+v", got)
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
