package stack

import (
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestSiteGuard: the local stack's API serves requests addressed to its
// listener and, for anything but GET and HEAD, only from its own origin;
// everything else — a page of another site, or one that rebound its DNS
// name to this machine — gets 403 with a JSON body naming the header, and
// reaches nothing.
func TestSiteGuard(t *testing.T) {
	loopback := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080}
	loopback6 := &net.TCPAddr{IP: net.IPv6loopback, Port: 8080}
	everywhere := &net.TCPAddr{IP: net.IPv4zero, Port: 8080}
	everywhere6 := &net.TCPAddr{IP: net.IPv6unspecified, Port: 8080}
	port80 := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 80}
	lan := &net.TCPAddr{IP: net.IPv4(192, 168, 1, 5), Port: 8080}
	tests := []struct {
		name             string
		configured       string
		listening        *net.TCPAddr
		method, host     string
		origin           []string // nil: no Origin header
		wantStatus       int
		wantField        string // the refusal's detail starts with it
		wantDetailSubstr string
	}{
		{name: "loopback address", listening: loopback, method: "POST", host: "127.0.0.1:8080", wantStatus: 200},
		{name: "localhost", listening: loopback, method: "POST", host: "localhost:8080", wantStatus: 200},
		{name: "LOCALHOST", listening: loopback, method: "POST", host: "LocalHost:8080", wantStatus: 200},
		{name: "IPv6 loopback for an IPv4 listener", listening: loopback, method: "GET", host: "[::1]:8080", wantStatus: 200},
		{name: "IPv4 loopback for an IPv6 listener", listening: loopback6, method: "GET", host: "127.0.0.1:8080", wantStatus: 200},
		{name: "own origin", listening: loopback, method: "POST", host: "127.0.0.1:8080", origin: []string{"http://127.0.0.1:8080"}, wantStatus: 200},
		{name: "own origin, GET", listening: loopback, method: "GET", host: "localhost:8080", origin: []string{"http://localhost:8080"}, wantStatus: 200},
		{name: "foreign origin on a GET", listening: loopback, method: "GET", host: "127.0.0.1:8080", origin: []string{"https://evil.example"}, wantStatus: 200},

		{name: "cross-site POST", listening: loopback, method: "POST", host: "127.0.0.1:8080", origin: []string{"https://evil.example"},
			wantStatus: 403, wantField: "Origin: ", wantDetailSubstr: `own origin http://127.0.0.1:8080, got "https://evil.example"`},
		{name: "cross-site PUT", listening: loopback, method: "PUT", host: "localhost:8080", origin: []string{"http://evil.example:8080"}, wantStatus: 403, wantField: "Origin: "},
		{name: "cross-site DELETE", listening: loopback, method: "DELETE", host: "localhost:8080", origin: []string{"http://localhost:9999"}, wantStatus: 403, wantField: "Origin: "},
		{name: "opaque origin", listening: loopback, method: "POST", host: "127.0.0.1:8080", origin: []string{"null"}, wantStatus: 403, wantField: "Origin: "},
		{name: "https origin of the same host", listening: loopback, method: "POST", host: "127.0.0.1:8080", origin: []string{"https://127.0.0.1:8080"}, wantStatus: 403, wantField: "Origin: "},
		{name: "another loopback name as origin", listening: loopback, method: "POST", host: "127.0.0.1:8080", origin: []string{"http://localhost:8080"}, wantStatus: 403, wantField: "Origin: "},
		{name: "two origins", listening: loopback, method: "POST", host: "127.0.0.1:8080", origin: []string{"http://127.0.0.1:8080", "https://evil.example"}, wantStatus: 403, wantField: "Origin: "},
		{name: "empty origin", listening: loopback, method: "POST", host: "127.0.0.1:8080", origin: []string{""}, wantStatus: 403, wantField: "Origin: "},
		{name: "preflight from another site", listening: loopback, method: "OPTIONS", host: "127.0.0.1:8080", origin: []string{"https://evil.example"}, wantStatus: 403, wantField: "Origin: "},

		{name: "rebound name", listening: loopback, method: "POST", host: "evil.example:8080", origin: []string{"http://evil.example:8080"},
			wantStatus: 403, wantField: "Host: ", wantDetailSubstr: `must be one of localhost:8080, 127.0.0.1:8080, [::1]:8080, got "evil.example:8080"`},
		{name: "rebound name, GET", listening: loopback, method: "GET", host: "evil.example:8080", wantStatus: 403, wantField: "Host: "},
		{name: "rebound name without a port", listening: loopback, method: "GET", host: "evil.example", wantStatus: 403, wantField: "Host: "},
		{name: "other port", listening: loopback, method: "GET", host: "127.0.0.1:8081", wantStatus: 403, wantField: "Host: "},
		{name: "no port", listening: loopback, method: "GET", host: "127.0.0.1", wantStatus: 403, wantField: "Host: "},
		{name: "other loopback address", listening: loopback, method: "GET", host: "127.0.0.2:8080", wantStatus: 403, wantField: "Host: "},
		{name: "name under localhost", listening: loopback, method: "GET", host: "evil.localhost:8080", wantStatus: 403, wantField: "Host: "},
		{name: "empty host", listening: loopback, method: "GET", host: "", wantStatus: 403, wantField: "Host: "},
		{name: "a LAN address on a loopback listener", listening: loopback, method: "GET", host: "192.168.1.5:8080", wantStatus: 403, wantField: "Host: "},

		{name: "port 80 left out", listening: port80, method: "POST", host: "localhost", origin: []string{"http://localhost"}, wantStatus: 200},
		{name: "port 80, rebound", listening: port80, method: "GET", host: "evil.example", wantStatus: 403, wantField: "Host: "},

		{name: "LAN listener", listening: lan, method: "POST", host: "192.168.1.5:8080", origin: []string{"http://192.168.1.5:8080"}, wantStatus: 200},
		{name: "LAN listener, localhost", listening: lan, method: "GET", host: "localhost:8080", wantStatus: 403, wantField: "Host: ",
			wantDetailSubstr: `Host: must be 192.168.1.5:8080, got "localhost:8080"`},
		{name: "configured name", configured: "devbox.lan:8080", listening: lan, method: "GET", host: "devbox.lan:8080", wantStatus: 200},
		{name: "configured name, another name", configured: "devbox.lan:8080", listening: lan, method: "GET", host: "evil.example:8080", wantStatus: 403, wantField: "Host: "},

		{name: "every interface, an IP", listening: everywhere, method: "POST", host: "10.1.2.3:8080", origin: []string{"http://10.1.2.3:8080"}, wantStatus: 200},
		{name: "every interface, IPv6", listening: everywhere6, method: "GET", host: "[fd00::5]:8080", wantStatus: 200},
		{name: "every interface, localhost", listening: everywhere, method: "GET", host: "localhost:8080", wantStatus: 200},
		{name: "every interface, the unspecified address", listening: everywhere, method: "GET", host: "0.0.0.0:8080", wantStatus: 200},
		{name: "every interface, a name", listening: everywhere, method: "POST", host: "evil.example:8080", wantStatus: 403, wantField: "Host: ",
			wantDetailSubstr: "an IP address of this machine or localhost, with port 8080"},
		{name: "every interface, another port", listening: everywhere, method: "GET", host: "10.1.2.3:9090", wantStatus: 403, wantField: "Host: "},
		{name: "every interface, an IP's page writing to another IP", listening: everywhere, method: "POST", host: "10.1.2.3:8080",
			origin: []string{"http://10.9.9.9:8080"}, wantStatus: 403, wantField: "Origin: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reached := false
			next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached = true })
			g := guardSite(next, tc.configured, tc.listening, slog.New(slog.DiscardHandler))
			req := httptest.NewRequest(tc.method, "/api/v3/workflows", strings.NewReader(`{}`))
			req.Host = tc.host
			if tc.origin != nil {
				req.Header["Origin"] = tc.origin
			}
			rec := httptest.NewRecorder()
			g.ServeHTTP(rec, req)
			if rec.Code != tc.wantStatus {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.wantStatus, rec.Body)
			}
			if tc.wantStatus == http.StatusOK {
				if !reached {
					t.Fatal("an accepted request did not reach the API")
				}
				return
			}
			if reached {
				t.Fatal("a refused request reached the API")
			}
			var e struct {
				Status  int      `json:"status"`
				Message string   `json:"message"`
				Errors  []string `json:"errors"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Status != 403 || e.Message == "" || len(e.Errors) != 1 {
				t.Fatalf("error body %q (%v)", rec.Body, err)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
			if !strings.HasPrefix(e.Errors[0], tc.wantField) || !strings.Contains(e.Errors[0], tc.wantDetailSubstr) {
				t.Errorf("detail %q, want it to start with %q and contain %q", e.Errors[0], tc.wantField, tc.wantDetailSubstr)
			}
		})
	}
}
