package httpstep

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"

	"golang.org/x/net/publicsuffix"
)

// loopbackEntry is the allow-list entry that admits the loopback range
// (127.0.0.0/8, ::1) and the name "localhost". It is meant for the local
// stack: no other entry admits a loopback address.
const loopbackEntry = "loopback"

// entryKind says what an allow-list entry matches.
type entryKind int

const (
	kindName     entryKind = iota // an exact host name
	kindWildcard                  // "*.suffix": any name under suffix
	kindPrefix                    // an IP literal or a CIDR prefix
)

// entry is one parsed allow-list entry.
type entry struct {
	raw    string
	kind   entryKind
	name   string       // kindName: the name; kindWildcard: ".suffix"
	prefix netip.Prefix // kindPrefix
	port   uint16       // 0: any port
}

// allowList is a parsed Config.AllowHosts. It is immutable after
// construction.
//
// A host passes the list in two stages. Before anything is sent, the URL's
// host and port must match an entry (a name, a wildcard, an IP or CIDR, or
// "loopback" for loopback addresses and "localhost"). Then every address the
// host resolves to is checked before it is dialed: a public unicast address
// passes; a special-purpose one (loopback, private, link-local and the cloud
// metadata addresses, CGNAT, multicast, reserved: see specialPurpose) passes
// only when an IP or CIDR entry covers it, or, for loopback, when the list
// holds "loopback".
type allowList struct {
	raw      []string
	entries  []entry
	loopback bool
}

// CheckAllowList reports the first invalid entry of an Http step allow-list
// (Config.AllowHosts), with the rule it breaks.
func CheckAllowList(entries []string) error {
	_, err := parseAllowList(entries)
	return err
}

// hostRanges are the addresses that reach the machine a deployed worker
// runs on or its platform's metadata: loopback (Lambda's runtime API
// listens on 127.0.0.1:9001), "this host" (a connection to 0.0.0.0 or ::
// reaches loopback), link-local (instance and container metadata,
// 169.254.169.254 and 169.254.170.2) and EC2's IPv6 metadata address.
func hostRanges() []netip.Prefix {
	return []netip.Prefix{
		netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128"),
		netip.MustParsePrefix("0.0.0.0/8"), netip.MustParsePrefix("::/128"),
		netip.MustParsePrefix("169.254.0.0/16"), netip.MustParsePrefix("fe80::/10"),
		netip.MustParsePrefix("fd00:ec2::254/128"),
	}
}

// CheckDeployable reports every entry of an Http step allow-list that a
// deployed stack's list may not hold, because it admits the host the worker
// runs on: the "loopback" entry, and IP or CIDR entries that cover any of
// 127.0.0.0/8, ::1, 0.0.0.0/8, ::, 169.254.0.0/16, fe80::/10 or
// fd00:ec2::254 (on any port). Names are not refused: an address a name
// resolves to in those ranges is dialed only when such an entry covers it.
// Entries CheckAllowList refuses are left to it.
func CheckDeployable(entries []string) error {
	var errs []error
	for _, raw := range entries {
		e, err := parseEntry(raw)
		if err != nil || e == nil {
			continue
		}
		if e.raw == loopbackEntry {
			errs = append(errs, fmt.Errorf("http allow-list entry %q admits the worker's own loopback addresses, where Lambda's runtime API "+
				"listens (127.0.0.1:9001); it is for the local stack only", e.raw))
			continue
		}
		if e.kind != kindPrefix {
			continue
		}
		for _, r := range hostRanges() {
			if e.prefix.Overlaps(r) {
				errs = append(errs, fmt.Errorf("http allow-list entry %q covers %s (%s), which reaches the host the worker runs on or its metadata; "+
					"a deployed stack may not allow it", e.raw, r, specialPurpose(r.Addr())))
				break
			}
		}
	}
	return errors.Join(errs...)
}

// parseAllowList parses entries: exact host names, "*.suffix" wildcards, IP
// literals, CIDR prefixes, each optionally with ":port" (IPv6 literals in
// brackets), and the special entry "loopback". Empty entries are ignored.
func parseAllowList(entries []string) (*allowList, error) {
	a := &allowList{}
	for _, raw := range entries {
		e, err := parseEntry(raw)
		if err != nil {
			return nil, fmt.Errorf("http allow-list entry %q: %w", strings.TrimSpace(raw), err)
		}
		if e == nil {
			continue
		}
		a.raw = append(a.raw, e.raw)
		if e.raw == loopbackEntry {
			a.loopback = true
			continue
		}
		a.entries = append(a.entries, *e)
	}
	return a, nil
}

// parseEntry parses one allow-list entry; nil for an empty one.
func parseEntry(raw string) (*entry, error) {
	s := strings.ToLower(strings.TrimSpace(raw))
	if s == "" {
		return nil, nil
	}
	if s == loopbackEntry {
		return &entry{raw: s}, nil
	}
	host, port, err := splitEntryPort(s)
	if err != nil {
		return nil, err
	}
	e := &entry{raw: s, port: port}
	if strings.Contains(host, "/") {
		p, err := netip.ParsePrefix(host)
		if err != nil {
			return nil, fmt.Errorf("not a valid CIDR prefix: %w", err)
		}
		if p.Addr().Is4In6() {
			p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
		}
		e.kind, e.prefix = kindPrefix, p.Masked()
		return e, nil
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		ip = ip.Unmap().WithZone("")
		e.kind, e.prefix = kindPrefix, netip.PrefixFrom(ip, ip.BitLen())
		return e, nil
	}
	host = strings.TrimSuffix(host, ".")
	if suffix, ok := strings.CutPrefix(host, "*."); ok {
		if err := checkWildcardSuffix(suffix); err != nil {
			return nil, err
		}
		e.kind, e.name = kindWildcard, "."+suffix
		return e, nil
	}
	if err := checkHostName(host); err != nil {
		return nil, err
	}
	e.kind, e.name = kindName, host
	return e, nil
}

// splitEntryPort splits "host:port", "[v6]:port", "[v6]" and bare hosts,
// IPv6 literals and CIDR prefixes.
func splitEntryPort(s string) (string, uint16, error) {
	if strings.HasPrefix(s, "[") {
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return "", 0, errors.New("unclosed '[' in an IPv6 literal")
		}
		host, rest := s[1:end], s[end+1:]
		if rest == "" {
			return host, 0, nil
		}
		p, ok := strings.CutPrefix(rest, ":")
		if !ok {
			return "", 0, errors.New("only ':port' may follow an IPv6 literal in brackets")
		}
		port, err := parsePort(p)
		return host, port, err
	}
	if strings.Count(s, ":") != 1 {
		return s, 0, nil // a name, an IPv4 address or prefix, or a bare IPv6 literal or prefix
	}
	host, p, _ := strings.Cut(s, ":")
	port, err := parsePort(p)
	return host, port, err
}

func parsePort(p string) (uint16, error) {
	n, err := strconv.ParseUint(p, 10, 16)
	if err != nil || n == 0 {
		return 0, fmt.Errorf("port %q is not a number from 1 to 65535", p)
	}
	return uint16(n), nil
}

// checkHostName checks a DNS name: dot-separated labels of letters, digits
// and hyphens.
func checkHostName(h string) error {
	if h == "" || len(h) > 253 {
		return errors.New("a host name has 1 to 253 characters")
	}
	for _, l := range strings.Split(h, ".") {
		if l == "" || len(l) > 63 {
			return fmt.Errorf("label %q: a host name's labels have 1 to 63 characters", l)
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return fmt.Errorf("label %q: only letters, digits, '-' and '_' are allowed (a '*' only as the whole first label)", l)
			}
		}
	}
	return nil
}

// checkWildcardSuffix refuses a wildcard that would admit a whole public
// suffix ("*.com", "*.co.uk", "*.s3.amazonaws.com"): the suffix must be a
// registrable domain or a name under one, per the Public Suffix List.
func checkWildcardSuffix(suffix string) error {
	if err := checkHostName(suffix); err != nil {
		return err
	}
	if !strings.Contains(suffix, ".") {
		return fmt.Errorf("wildcard *.%s is too broad: it admits a whole top-level domain", suffix)
	}
	if ps, _ := publicsuffix.PublicSuffix(suffix); ps == suffix {
		return fmt.Errorf("wildcard *.%s is too broad: %s is a public suffix (anyone can register names under it); list a domain you control, such as *.example.%s", suffix, suffix, suffix)
	}
	return nil
}

// matchHost says whether host (a URL's host name, without brackets) on port
// is admitted by the list. Names are compared as written; nothing is
// resolved.
func (a *allowList) matchHost(host string, port uint16) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if a.loopback {
		if ip, err := netip.ParseAddr(host); (err == nil && ip.Unmap().IsLoopback()) || host == "localhost" {
			return true
		}
	}
	return a.matchEntries(host, port)
}

// matchEntries is matchHost without the "loopback" entry; host is
// normalized.
func (a *allowList) matchEntries(host string, port uint16) bool {
	if host == "" {
		return false
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return a.coversIP(ip.Unmap().WithZone(""), port)
	}
	for _, e := range a.entries {
		if e.port != 0 && e.port != port {
			continue
		}
		switch e.kind {
		case kindName:
			if host == e.name {
				return true
			}
		case kindWildcard:
			if strings.HasSuffix(host, e.name) && len(host) > len(e.name) {
				return true
			}
		}
	}
	return false
}

// coversIP reports whether an IP or CIDR entry covers ip on port.
func (a *allowList) coversIP(ip netip.Addr, port uint16) bool {
	for _, e := range a.entries {
		if e.kind == kindPrefix && (e.port == 0 || e.port == port) && e.prefix.Contains(ip) {
			return true
		}
	}
	return false
}

// checkDial reports why ip, one address host resolved to, may not be dialed
// on port; nil when it may.
func (a *allowList) checkDial(host string, ip netip.Addr, port uint16) error {
	ip = ip.Unmap().WithZone("")
	if a.coversIP(ip, port) {
		return nil
	}
	if ip.IsLoopback() {
		if a.loopback {
			return nil
		}
		return &dialRefusedError{fmt.Sprintf("host %q resolved to the loopback address %s; only the allow-list entry %q admits loopback addresses", host, ip, loopbackEntry)}
	}
	if what := specialPurpose(ip); what != "" {
		return &dialRefusedError{fmt.Sprintf("host %q resolved to %s, a %s address; such addresses are dialed only when an IP or CIDR allow-list entry covers them", host, ip, what)}
	}
	if !a.matchEntries(strings.TrimSuffix(strings.ToLower(host), "."), port) {
		return &dialRefusedError{fmt.Sprintf("host %q resolved to %s, which is not a loopback address: the allow-list entry %q admits only loopback addresses", host, ip, loopbackEntry)}
	}
	return nil
}

// Special-purpose ranges that specialPurpose reports beyond what netip
// classifies itself.
var (
	cgnatPrefix     = netip.MustParsePrefix("100.64.0.0/10")
	thisNetPrefix   = netip.MustParsePrefix("0.0.0.0/8")
	ietfPrefix      = netip.MustParsePrefix("192.0.0.0/24")
	benchmarkPrefix = netip.MustParsePrefix("198.18.0.0/15")
	reservedPrefix  = netip.MustParsePrefix("240.0.0.0/4")
	nat64Prefix     = netip.MustParsePrefix("64:ff9b::/96")
	nat64LocalPfx   = netip.MustParsePrefix("64:ff9b:1::/48")
	sixToFourPrefix = netip.MustParsePrefix("2002::/16")
	teredoPrefix    = netip.MustParsePrefix("2001::/32")
	awsMetadataV6   = netip.MustParseAddr("fd00:ec2::254")
	awsMetadataV4   = netip.MustParseAddr("169.254.169.254")
	ecsMetadataV4   = netip.MustParseAddr("169.254.170.2")
)

// specialPurpose names the kind of a non-public address ip belongs to, or
// returns "" for a public unicast address. IPv4 addresses embedded in IPv6
// (mapped, NAT64, 6to4) are judged by the IPv4 address.
func specialPurpose(ip netip.Addr) string {
	ip = ip.Unmap().WithZone("")
	if ip.Is6() {
		b := ip.As16()
		switch {
		case nat64Prefix.Contains(ip):
			if s := specialPurpose(netip.AddrFrom4([4]byte(b[12:16]))); s != "" {
				return s + " (via NAT64)"
			}
			return ""
		case sixToFourPrefix.Contains(ip):
			if s := specialPurpose(netip.AddrFrom4([4]byte(b[2:6]))); s != "" {
				return s + " (via 6to4)"
			}
			return ""
		case nat64LocalPfx.Contains(ip), teredoPrefix.Contains(ip):
			return "tunnelled (NAT64 local-use or Teredo)"
		}
	}
	switch {
	case ip == awsMetadataV4 || ip == awsMetadataV6 || ip == ecsMetadataV4:
		return "cloud metadata"
	case ip.IsLoopback():
		return "loopback"
	case ip.IsUnspecified(), thisNetPrefix.Contains(ip):
		return "unspecified"
	case ip.IsLinkLocalUnicast(), ip.IsLinkLocalMulticast():
		return "link-local"
	case ip.IsMulticast(), ip.IsInterfaceLocalMulticast():
		return "multicast"
	case ip.IsPrivate():
		return "private"
	case cgnatPrefix.Contains(ip):
		return "shared (CGNAT)"
	case ietfPrefix.Contains(ip), benchmarkPrefix.Contains(ip), reservedPrefix.Contains(ip):
		return "reserved"
	case !ip.IsGlobalUnicast():
		return "non-unicast"
	}
	return ""
}

// urlPort returns the port a URL with scheme and port string dials.
func urlPort(scheme, port string) uint16 {
	if port == "" {
		if scheme == "https" {
			return 443
		}
		return 80
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return 0
	}
	return uint16(n)
}

// splitDialAddr splits a dial address into host and port.
func splitDialAddr(addr string) (string, uint16, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	n, err := strconv.ParseUint(p, 10, 16)
	if err != nil {
		return "", 0, fmt.Errorf("port %q: %w", p, err)
	}
	return host, uint16(n), nil
}

// String describes the list for error messages.
func (a *allowList) String() string {
	if len(a.raw) == 0 {
		return "empty: no host is allowed"
	}
	return "[" + strings.Join(a.raw, ", ") + "]"
}
