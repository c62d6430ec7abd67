package stack

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
)

// siteGuard keeps the pages of other sites open in a developer's browser
// from using the local stack's API, which authenticates no one: a write
// through it can run Http steps against the developer's loopback services
// and the stack's local Lambda commands. It refuses, with 403 and a JSON
// error body,
//
//   - a request whose Host does not name the listener: its address, or for
//     a loopback listener localhost, 127.0.0.1 or [::1], or for a listener
//     on every interface (0.0.0.0, ::) any IP address or localhost — always
//     with the listener's port. A page that rebinds its own DNS name to
//     this machine (DNS rebinding) sends its name, and is refused; an IP
//     address cannot be rebound.
//   - a request other than GET or HEAD whose Origin is present and is not
//     the API's own origin, http:// and the request's (accepted) Host.
//
// With the API's own rule that a body must be declared application/json
// (or YAML), 415 otherwise, every write from another site either carries a
// foreign Origin or needs a CORS preflight, which fails: no CORS headers
// are served.
type siteGuard struct {
	next http.Handler
	log  *slog.Logger
	// port is the listener's port; hosts the Host values accepted
	// (lower case, host:port); anyIP accepts any IP address with port.
	port  string
	hosts []string
	anyIP bool
}

// guardSite wraps next in a siteGuard for a listener at listening, opened
// for the configured address (which may name the host, e.g.
// localhost:8080, where listening has its IP address).
func guardSite(next http.Handler, configured string, listening *net.TCPAddr, log *slog.Logger) http.Handler {
	g := &siteGuard{next: next, log: log, port: strconv.Itoa(listening.Port)}
	add := func(host string) {
		h := net.JoinHostPort(strings.ToLower(host), g.port)
		if !slices.Contains(g.hosts, h) {
			g.hosts = append(g.hosts, h)
		}
	}
	ip, _ := netip.AddrFromSlice(listening.IP)
	ip = ip.Unmap()
	switch {
	case ip.IsLoopback():
		add("localhost")
		add("127.0.0.1")
		add("::1")
	case ip.IsUnspecified():
		g.anyIP = true
		add("localhost")
	}
	if ip.IsValid() && !ip.IsUnspecified() {
		add(ip.String())
	}
	if host, _, err := net.SplitHostPort(configured); err == nil && host != "" {
		if _, err := netip.ParseAddr(host); err != nil {
			add(host) // a name the developer chose, e.g. localhost or the machine's
		}
	}
	return g
}

func (g *siteGuard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !g.hostAllowed(r.Host) {
		g.refuse(w, r, "request refused: not addressed to this API",
			fmt.Sprintf("Host: must be %s, got %q", g.describeHosts(), clip(r.Host)))
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		if origins, ok := r.Header["Origin"]; ok {
			own := "http://" + r.Host
			if len(origins) != 1 || !strings.EqualFold(origins[0], own) {
				g.refuse(w, r, "cross-origin request refused",
					fmt.Sprintf("Origin: a %s must come from this API's own origin %s, got %q",
						clip(r.Method), own, clip(strings.Join(origins, ", "))))
				return
			}
		}
	}
	g.next.ServeHTTP(w, r)
}

// hostAllowed reports whether host (a request's Host) names the listener.
func (g *siteGuard) hostAllowed(host string) bool {
	host = strings.ToLower(host)
	if _, _, err := net.SplitHostPort(host); err != nil && g.port == "80" {
		// A browser leaves out port 80.
		host = net.JoinHostPort(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"), "80")
	}
	if slices.Contains(g.hosts, host) {
		return true
	}
	if !g.anyIP {
		return false
	}
	name, port, err := net.SplitHostPort(host)
	if err != nil || port != g.port {
		return false
	}
	_, err = netip.ParseAddr(name)
	return err == nil
}

// describeHosts says which Host values are accepted.
func (g *siteGuard) describeHosts() string {
	if g.anyIP {
		return fmt.Sprintf("an IP address of this machine or localhost, with port %s (a name could be rebound to it)", g.port)
	}
	if len(g.hosts) == 1 {
		return g.hosts[0]
	}
	return "one of " + strings.Join(g.hosts, ", ")
}

// refuse answers 403 with the API's error body and logs the refusal.
func (g *siteGuard) refuse(w http.ResponseWriter, r *http.Request, message, detail string) {
	g.log.Warn("refused a request from outside the local stack's origin",
		"method", clip(r.Method), "host", clip(r.Host), "origin", clip(r.Header.Get("Origin")), "reason", detail)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusForbidden)
	_ = json.NewEncoder(w).Encode(map[string]any{"status": http.StatusForbidden, "message": message, "errors": []string{detail}})
}

// clip shortens a value a client chose before it is echoed or logged.
func clip(s string) string {
	const limit = 200
	if len(s) <= limit {
		return s
	}
	return strings.ToValidUTF8(s[:limit], "") + "..."
}
