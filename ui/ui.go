// Package ui serves the web UI: the assets Vite builds from web/ into dist/,
// embedded in the binary, under /ui/. Every path under /ui/ that is not an
// asset answers with the application page, which routes on the client.
//
// Rebuild dist/ with `make ui` after changing web/; dist/ is committed, so
// building the Go binaries needs no Node.js.
package ui

import (
	"bytes"
	"embed"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"
)

//go:embed all:dist
var dist embed.FS

// Prefix is the path the UI is served under.
const Prefix = "/ui/"

// setSecurityHeaders sets what every answer carries: the page loads only
// its own scripts and styles, talks only to its own origin, and is never
// framed.
func setSecurityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "+
		"connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
}

// Handler returns the handler of GET and HEAD requests under Prefix.
// Hashed assets (/ui/assets/…) are cached for a year; the page itself is
// revalidated on every load, so a deploy shows at once.
func Handler() http.Handler {
	root, err := fs.Sub(dist, "dist")
	if err != nil {
		panic("ui: embedded dist missing: " + err.Error()) // a build error, not a runtime one
	}
	index, err := fs.ReadFile(root, "index.html")
	if err != nil {
		panic("ui: dist/index.html missing: run make ui")
	}
	files := http.FileServerFS(root)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		setSecurityHeaders(w.Header())
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		rel := strings.TrimPrefix(path.Clean(r.URL.Path), strings.TrimSuffix(Prefix, "/"))
		rel = strings.TrimPrefix(rel, "/")
		if strings.HasPrefix(rel, "assets/") {
			if _, err := fs.Stat(root, rel); err != nil {
				http.NotFound(w, r)
				return
			}
			w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
			r2 := r.Clone(r.Context())
			r2.URL.Path = "/" + rel
			files.ServeHTTP(w, r2)
			return
		}
		w.Header().Set("Cache-Control", "no-cache")
		http.ServeContent(w, r, "index.html", time.Time{}, bytes.NewReader(index))
	})
}
