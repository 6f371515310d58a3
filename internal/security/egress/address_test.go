package egress

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNonPublic(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ addr, want string }{
		{"127.0.0.1", "a loopback address"},
		{"127.255.0.9", "a loopback address"},
		{"::1", "a loopback address"},
		{"::ffff:127.0.0.1", "a loopback address"},
		{"0.0.0.0", "an unspecified address"},
		{"::", "an unspecified address"},
		{"169.254.169.254", "a link-local address"},
		{"fe80::1%eth0", "a link-local address"},
		{"10.1.2.3", "a private address"},
		{"172.16.0.1", "a private address"},
		{"172.31.255.255", "a private address"},
		{"192.168.1.1", "a private address"},
		{"fd12:3456::1", "a private address"},
		{"224.0.0.1", "a multicast address"},
		{"239.255.255.250", "a multicast address"},
		{"ff02::1", "a multicast address"},
		{"ff05::2", "a multicast address"},
		{"0.1.2.3", `a "this network" address (0.0.0.0/8)`},
		{"100.64.0.1", "a shared address (carrier-grade NAT, 100.64.0.0/10)"},
		{"100.127.255.254", "a shared address (carrier-grade NAT, 100.64.0.0/10)"},
		{"192.0.0.8", "an IETF protocol assignment address (192.0.0.0/24)"},
		{"192.0.2.10", "a documentation address (192.0.2.0/24)"},
		{"198.18.0.1", "a benchmarking address (198.18.0.0/15)"},
		{"203.0.113.5", "a documentation address (203.0.113.0/24)"},
		{"255.255.255.255", "a reserved address (240.0.0.0/4)"},
		{"::10.0.0.1", "an IPv4-compatible IPv6 address (::/96)"},
		{"64:ff9b::7f00:1", "a NAT64 address of a loopback address"},
		{"64:ff9b::a9fe:a9fe", "a NAT64 address of a link-local address"},
		{"64:ff9b:1::1", "a local-use NAT64 address (64:ff9b:1::/48)"},
		{"2001:db8::1", "a documentation address (2001:db8::/32)"},
		{"2001::1", "an IETF protocol assignment address (2001::/23)"},
		{"2002:7f00:1::1", "a 6to4 address (2002::/16)"},
		{"fec0::1", "a site-local address (fec0::/10)"},
		{"", "not an IP address"},

		{"8.8.8.8", ""},
		{"1.1.1.1", ""},
		{"100.63.255.255", ""},
		{"100.128.0.0", ""},
		{"172.32.0.1", ""},
		{"52.94.76.1", ""},
		{"::ffff:8.8.8.8", ""},
		{"64:ff9b::808:808", ""},
		{"2606:4700:4700::1111", ""},
		{"2a00:1450:4001::200e", ""},
	} {
		var addr netip.Addr
		if tc.addr != "" {
			addr = netip.MustParseAddr(tc.addr)
		}
		require.Equal(t, tc.want, NonPublic(addr), tc.addr)
	}
}
