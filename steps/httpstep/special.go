package httpstep

import "net/netip"

// SpecialPurpose names the kind of non-public address ip is (loopback,
// private, link-local, cloud metadata, ...), or returns "" for a public
// unicast address: the ranges an Http step never dials, for the runners
// that hand an address to something else to dial (a Notebook step's task).
func SpecialPurpose(ip netip.Addr) string { return specialPurpose(ip) }
