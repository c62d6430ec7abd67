package ui

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

func get(t *testing.T, h http.Handler, method, path string) *http.Response {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
	return rec.Result()
}

func TestHandler(t *testing.T) {
	h := Handler()
	page := get(t, h, http.MethodGet, "/ui/")
	body, _ := io.ReadAll(page.Body)
	if page.StatusCode != http.StatusOK || !strings.Contains(string(body), `<main id="app">`) {
		t.Fatalf("/ui/: %d %q", page.StatusCode, body)
	}
	if cc := page.Header.Get("Cache-Control"); cc != "no-cache" {
		t.Errorf("page Cache-Control %q", cc)
	}
	if csp := page.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
		t.Errorf("CSP %q", csp)
	}
	// Client-side routes answer with the same page.
	for _, p := range []string{"/ui", "/ui/workflows/wf-1/instances/3", "/ui/signals/a/latest"} {
		r := get(t, h, http.MethodGet, p)
		b, _ := io.ReadAll(r.Body)
		if r.StatusCode != http.StatusOK || string(b) != string(body) {
			t.Errorf("%s: %d, same page %v", p, r.StatusCode, string(b) == string(body))
		}
	}
	// The page's script is served, cached as immutable, as JavaScript.
	src := regexp.MustCompile(`src="(/ui/assets/[^"]+\.js)"`).FindStringSubmatch(string(body))
	if src == nil {
		t.Fatalf("no script in %q", body)
	}
	js := get(t, h, http.MethodGet, src[1])
	if js.StatusCode != http.StatusOK || !strings.Contains(js.Header.Get("Content-Type"), "javascript") || !strings.Contains(js.Header.Get("Cache-Control"), "immutable") {
		t.Errorf("%s: %d %q %q", src[1], js.StatusCode, js.Header.Get("Content-Type"), js.Header.Get("Cache-Control"))
	}
	// A missing asset is a 404, not the page; other methods are refused;
	// paths cannot climb out of the assets.
	if r := get(t, h, http.MethodGet, "/ui/assets/nope.js"); r.StatusCode != http.StatusNotFound {
		t.Errorf("missing asset: %d", r.StatusCode)
	}
	if r := get(t, h, http.MethodPost, "/ui/"); r.StatusCode != http.StatusMethodNotAllowed || r.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST: %d %q", r.StatusCode, r.Header.Get("Allow"))
	}
	if r := get(t, h, http.MethodGet, "/ui/assets/../../ui.go"); r.StatusCode == http.StatusOK {
		b, _ := io.ReadAll(r.Body)
		if strings.Contains(string(b), "package ui") {
			t.Errorf("traversal served a source file")
		}
	}
}
