package httpstep

import (
	"net/netip"
	"strings"
)

// loopbackEntry is the allow-list entry that admits the loopback range
// (127.0.0.0/8, ::1) and the name "localhost".
const loopbackEntry = "loopback"

// match says whether, and by which kind of rule, a host is allowed.
type match int

const (
	// matchNone: no entry allows the host.
	matchNone match = iota
	// matchLoopback: only the "loopback" entry allows the host, so the
	// address actually dialed must be a loopback address.
	matchLoopback
	// matchExplicit: an exact name, IP or wildcard entry allows the host.
	matchExplicit
)

// allowList is a parsed Config.AllowHosts. It is immutable after
// construction.
type allowList struct {
	raw      []string
	names    map[string]bool
	addrs    map[netip.Addr]bool
	suffixes []string // ".example.com" for "*.example.com"
	loopback bool
}

// newAllowList parses entries: exact host names, IP literals, "*.suffix"
// wildcards and the special entry "loopback". Empty entries are ignored.
func newAllowList(entries []string) *allowList {
	a := &allowList{names: map[string]bool{}, addrs: map[netip.Addr]bool{}}
	for _, e := range entries {
		e = normalizeHost(e)
		if e == "" {
			continue
		}
		a.raw = append(a.raw, e)
		switch {
		case e == loopbackEntry:
			a.loopback = true
		case strings.HasPrefix(e, "*."):
			a.suffixes = append(a.suffixes, e[1:])
		default:
			if ip, err := netip.ParseAddr(strings.Trim(e, "[]")); err == nil {
				a.addrs[ip.Unmap().WithZone("")] = true
			} else {
				a.names[e] = true
			}
		}
	}
	return a
}

// normalizeHost lower-cases a host name and drops a trailing dot.
func normalizeHost(h string) string {
	return strings.TrimSuffix(strings.ToLower(strings.TrimSpace(h)), ".")
}

// match classifies host (a URL's host name, without port or brackets). Names
// are compared as written; nothing is resolved.
func (a *allowList) match(host string) match {
	host = normalizeHost(host)
	if host == "" {
		return matchNone
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		ip = ip.Unmap().WithZone("")
		if a.addrs[ip] {
			return matchExplicit
		}
		if a.loopback && ip.IsLoopback() {
			return matchLoopback
		}
		return matchNone
	}
	if a.names[host] {
		return matchExplicit
	}
	for _, s := range a.suffixes {
		if strings.HasSuffix(host, s) && len(host) > len(s) {
			return matchExplicit
		}
	}
	if a.loopback && host == "localhost" {
		return matchLoopback
	}
	return matchNone
}

// String describes the list for error messages.
func (a *allowList) String() string {
	if len(a.raw) == 0 {
		return "empty: no host is allowed"
	}
	return "[" + strings.Join(a.raw, ", ") + "]"
}
