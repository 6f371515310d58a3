package egress

import "net/netip"

// specialPurpose are the ranges of the IANA IPv4 and IPv6 special-purpose
// address registries that are not public and that netip's predicates do
// not cover (loopback, private, link-local, unspecified and multicast
// are tested first).
var specialPurpose = []struct {
	prefix netip.Prefix
	what   string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "a \"this network\" address (0.0.0.0/8)"},
	{netip.MustParsePrefix("100.64.0.0/10"), "a shared address (carrier-grade NAT, 100.64.0.0/10)"},
	{netip.MustParsePrefix("192.0.0.0/24"), "an IETF protocol assignment address (192.0.0.0/24)"},
	{netip.MustParsePrefix("192.0.2.0/24"), "a documentation address (192.0.2.0/24)"},
	{netip.MustParsePrefix("198.18.0.0/15"), "a benchmarking address (198.18.0.0/15)"},
	{netip.MustParsePrefix("198.51.100.0/24"), "a documentation address (198.51.100.0/24)"},
	{netip.MustParsePrefix("203.0.113.0/24"), "a documentation address (203.0.113.0/24)"},
	{netip.MustParsePrefix("240.0.0.0/4"), "a reserved address (240.0.0.0/4)"},
	{netip.MustParsePrefix("::/96"), "an IPv4-compatible IPv6 address (::/96)"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "a local-use NAT64 address (64:ff9b:1::/48)"},
	{netip.MustParsePrefix("100::/64"), "a discard-only address (100::/64)"},
	{netip.MustParsePrefix("2001:db8::/32"), "a documentation address (2001:db8::/32)"},
	{netip.MustParsePrefix("2001::/23"), "an IETF protocol assignment address (2001::/23)"},
	{netip.MustParsePrefix("2002::/16"), "a 6to4 address (2002::/16)"},
	{netip.MustParsePrefix("3fff::/20"), "a documentation address (3fff::/20)"},
	{netip.MustParsePrefix("5f00::/16"), "a segment routing address (5f00::/16)"},
	{netip.MustParsePrefix("fec0::/10"), "a site-local address (fec0::/10)"},
}

// nat64 is the well-known NAT64 prefix: its addresses reach the IPv4
// address in their last four bytes.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// NonPublic says what kind of address a non-public address is ("a
// loopback address"), or returns "" for a public one. An IPv4-mapped
// IPv6 address is judged as its IPv4 address, a NAT64 one as the IPv4
// address it reaches.
func NonPublic(addr netip.Addr) string {
	addr = addr.WithZone("").Unmap()
	switch {
	case !addr.IsValid():
		return "not an IP address"
	case addr.IsUnspecified():
		return "an unspecified address"
	case addr.IsLoopback():
		return "a loopback address"
	case addr.IsLinkLocalUnicast():
		return "a link-local address"
	case addr.IsPrivate():
		return "a private address"
	case addr.IsMulticast():
		return "a multicast address"
	}
	if nat64.Contains(addr) {
		b := addr.As16()
		if what := NonPublic(netip.AddrFrom4([4]byte(b[12:]))); what != "" {
			return "a NAT64 address of " + what
		}
		return ""
	}
	for _, sp := range specialPurpose {
		if sp.prefix.Contains(addr) {
			return sp.what
		}
	}
	return ""
}
