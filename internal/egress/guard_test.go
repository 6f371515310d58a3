package egress

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/internal/testkit/dnstest"
)

func TestCheckURL(t *testing.T) {
	t.Parallel()
	allow, err := ParseAllow("stub.test,localhost:8080,127.0.0.1,fd00::/8")
	require.NoError(t, err)
	g := &Guard{Allow: allow}
	none := &Guard{}

	for _, tc := range []struct {
		guard *Guard
		url   string
		want  string // "" passes
	}{
		{none, "https://api.example.com/x", ""},
		{none, "https://127.0.0.1/x", ""}, // the address is checked at dial time
		{none, "http://api.example.com/x", "http://api.example.com is plain HTTP, and HTTP Tasks call public HTTPS endpoints only; to allow it, start stepwise serve with --http-task-allow api.example.com"},
		{none, "http://127.0.0.1:8083/metrics", "http://127.0.0.1:8083 is plain HTTP, and HTTP Tasks call public HTTPS endpoints only; to allow it, start stepwise serve with --http-task-allow 127.0.0.1"},
		{none, "http://[::1]:9/", "http://[::1]:9 is plain HTTP, and HTTP Tasks call public HTTPS endpoints only; to allow it, start stepwise serve with --http-task-allow ::1"},
		{none, "ftp://example.com/", "ftp://example.com is not HTTPS, and HTTP Tasks call public HTTPS endpoints only; to allow it, start stepwise serve with --http-task-allow example.com"},
		{g, "http://STUB.test./x", ""},
		{g, "http://stub.test:1234/x", ""},
		{g, "http://localhost:8080/x", ""},
		{g, "http://localhost/x", "http://localhost is plain HTTP, and HTTP Tasks call public HTTPS endpoints only; to allow it, start stepwise serve with --http-task-allow localhost"},
		{g, "http://127.0.0.1:5/x", ""},
		{g, "http://[fd00::5]/x", ""},
		{g, "http://127.0.0.2/x", "http://127.0.0.2 is plain HTTP, and HTTP Tasks call public HTTPS endpoints only; to allow it, start stepwise serve with --http-task-allow 127.0.0.2"},
		{g, "http://other.test/x", "http://other.test is plain HTTP, and HTTP Tasks call public HTTPS endpoints only; to allow it, start stepwise serve with --http-task-allow other.test"},
	} {
		u, err := url.Parse(tc.url)
		require.NoError(t, err)
		err = tc.guard.CheckURL(u)
		if tc.want == "" {
			require.NoError(t, err, tc.url)
			continue
		}
		var refused *RefusedError
		require.ErrorAs(t, err, &refused, tc.url)
		require.EqualError(t, err, tc.want, tc.url)
	}
}

// stub is a TCP listener a test dials; contacted tells whether a
// connection reached it.
type stub struct {
	l    *net.TCPListener
	port string
}

func newStub(t *testing.T, network, addr string) *stub {
	t.Helper()
	l, err := net.Listen(network, addr)
	require.NoError(t, err)
	t.Cleanup(func() { l.Close() })
	_, port, err := net.SplitHostPort(l.Addr().String())
	require.NoError(t, err)
	return &stub{l: l.(*net.TCPListener), port: port}
}

func (s *stub) contacted(t *testing.T) bool {
	t.Helper()
	require.NoError(t, s.l.SetDeadline(time.Now().Add(50*time.Millisecond)))
	c, err := s.l.Accept()
	if err != nil {
		var ne net.Error
		require.True(t, errors.As(err, &ne) && ne.Timeout(), "accept: %v", err)
		return false
	}
	c.Close()
	return true
}

func TestDialContext(t *testing.T) {
	t.Parallel()
	v4 := newStub(t, "tcp4", "127.0.0.1:0")
	v6 := newStub(t, "tcp6", "[::1]:0")
	rebind := dnstest.Resolver(t, [4]byte{127, 0, 0, 1})
	guard := func(resolver *net.Resolver, allow ...string) *Guard {
		a, err := ParseAllow(allow...)
		require.NoError(t, err)
		return &Guard{Allow: a, Resolver: resolver}
	}
	const tail = ", and HTTP Tasks call public HTTPS endpoints only; to allow it, start stepwise serve with --http-task-allow "

	for _, tc := range []struct {
		name  string
		guard *Guard
		addr  string
		stub  *stub
		want  string // "" connects
	}{
		{"Loopback", guard(nil), "127.0.0.1:" + v4.port, v4, "127.0.0.1:" + v4.port + " is a loopback address" + tail + "127.0.0.1"},
		{"IPv6Loopback", guard(nil), "[::1]:" + v6.port, v6, "[::1]:" + v6.port + " is a loopback address" + tail + "::1"},
		{"Localhost", guard(nil), "localhost:" + v4.port, v4, "localhost:" + v4.port + " (127.0.0.1) is a loopback address" + tail + "localhost"},
		{"NameResolvingToLoopback", guard(rebind), "api.rebind.test:" + v4.port, v4, "api.rebind.test:" + v4.port + " (127.0.0.1) is a loopback address" + tail + "api.rebind.test"},
		{"OtherPortAllowed", guard(nil, "127.0.0.1:1"), "127.0.0.1:" + v4.port, v4, "127.0.0.1:" + v4.port + " is a loopback address" + tail + "127.0.0.1"},
		{"OtherNameAllowed", guard(rebind, "other.rebind.test"), "api.rebind.test:" + v4.port, v4, "api.rebind.test:" + v4.port + " (127.0.0.1) is a loopback address" + tail + "api.rebind.test"},

		{"AddressAllowed", guard(nil, "127.0.0.1"), "127.0.0.1:" + v4.port, v4, ""},
		{"AddressAndPortAllowed", guard(nil, "127.0.0.1:"+v4.port), "127.0.0.1:" + v4.port, v4, ""},
		{"NetworkAllowed", guard(nil, "127.0.0.0/8"), "127.0.0.1:" + v4.port, v4, ""},
		{"IPv6Allowed", guard(nil, "::1"), "[::1]:" + v6.port, v6, ""},
		{"LocalhostAllowedByName", guard(nil, "localhost"), "localhost:" + v4.port, v4, ""},
		{"ResolvedAddressAllowed", guard(rebind, "127.0.0.1"), "api.rebind.test:" + v4.port, v4, ""},
		{"NameAllowed", guard(rebind, "api.rebind.test:"+v4.port), "api.rebind.test:" + v4.port, v4, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			conn, err := tc.guard.DialContext(ctx, "tcp", tc.addr)
			if tc.want == "" {
				require.NoError(t, err)
				conn.Close()
				require.True(t, tc.stub.contacted(t))
				return
			}
			var refused *RefusedError
			require.ErrorAs(t, err, &refused)
			require.Equal(t, tc.want, refused.Error())
			require.False(t, tc.stub.contacted(t), "the refused address was not connected to")
		})
	}
}

// Addresses no test can listen on are refused before any packet is sent:
// the dial fails at once, not after a connect timeout.
func TestDialRefusesNonPublicAtOnce(t *testing.T) {
	t.Parallel()
	g := &Guard{}
	for _, addr := range []string{"169.254.169.254:80", "10.1.2.3:443", "192.168.0.1:443", "100.64.0.1:443", "[fd00::1]:443", "0.0.0.0:443", "[::ffff:10.0.0.1]:443"} {
		start := time.Now()
		_, err := g.DialContext(context.Background(), "tcp", addr)
		var refused *RefusedError
		require.ErrorAs(t, err, &refused, addr)
		require.Less(t, time.Since(start), 2*time.Second, addr)
		host, _, _ := net.SplitHostPort(addr)
		require.Equal(t, entryFor(host), refused.Entry)
	}
}

func TestRefusedErrorNamesFlag(t *testing.T) {
	t.Parallel()
	err := (&Guard{}).checkDial("10.0.0.1", strconv.Itoa(443), "10.0.0.1:443")
	require.EqualError(t, err, "10.0.0.1:443 is a private address, and HTTP Tasks call public HTTPS endpoints only; to allow it, start stepwise serve with --http-task-allow 10.0.0.1")
	require.NoError(t, (&Guard{}).checkDial("dns.google", "443", "8.8.8.8:443"))
}

// FuzzCheckURL checks that without an allow list only https passes, and
// that a refusal always names the flag.
func FuzzCheckURL(f *testing.F) {
	for _, seed := range []string{"https://a.example/x", "http://127.0.0.1:80/", "http://[::1]/", "HTTP://LOCALHOST/", "ftp://x", "//x", "http://%31.0.0.1/", "http://[fe80::1%25eth0]/", "//[::1%250]"} {
		f.Add(seed)
	}
	allow, err := ParseAllow("localhost,127.0.0.0/8,[::1]:80")
	require.NoError(f, err)
	f.Fuzz(func(t *testing.T, text string) {
		u, err := url.Parse(text)
		if err != nil {
			return
		}
		if err := (&Guard{}).CheckURL(u); err == nil {
			require.Equal(t, "https", u.Scheme)
		} else {
			require.Contains(t, err.Error(), "start stepwise serve with "+Flag+" ")
		}
		if err := (&Guard{Allow: allow}).CheckURL(u); err == nil && u.Scheme != "https" {
			require.Equal(t, "http", u.Scheme)
			host := normalizeHost(u.Hostname())
			if host == "localhost" {
				return
			}
			addr := netip.MustParseAddr(host).WithZone("").Unmap()
			require.True(t, netip.MustParsePrefix("127.0.0.0/8").Contains(addr) || addr == netip.MustParseAddr("::1"), "%q passed", text)
		}
	})
}
