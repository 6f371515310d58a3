package egress

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseAllow(t *testing.T) {
	t.Parallel()

	t.Run("Entries", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct{ spec, want string }{
			{"localhost", "localhost"},
			{"LocalHost.", "localhost"},
			{"stub.internal:8443", "stub.internal:8443"},
			{"my_host-1.example", "my_host-1.example"},
			{"127.0.0.1", "127.0.0.1"},
			{"127.0.0.1:9000", "127.0.0.1:9000"},
			{"::1", "::1"},
			{"[::1]", "::1"},
			{"[::1]:9000", "[::1]:9000"},
			{"::ffff:10.1.2.3", "10.1.2.3"},
			{"10.0.0.0/8", "10.0.0.0/8"},
			{"fd00::/8", "fd00::/8"},
			{"::ffff:192.168.0.0/112", "192.168.0.0/16"},
			{" localhost , 10.0.0.0/8 ", "localhost,10.0.0.0/8"},
		} {
			a, err := ParseAllow(tc.spec)
			require.NoError(t, err, tc.spec)
			require.Equal(t, tc.want, a.String(), tc.spec)
		}
	})

	t.Run("SeveralSpecs", func(t *testing.T) {
		t.Parallel()
		a, err := ParseAllow("localhost,127.0.0.1", "10.0.0.0/8")
		require.NoError(t, err)
		require.Equal(t, 3, a.Len())
		require.Equal(t, "localhost,127.0.0.1,10.0.0.0/8", a.String())

		a, err = ParseAllow()
		require.NoError(t, err)
		require.Equal(t, 0, a.Len())
		require.Equal(t, 0, (*Allow)(nil).Len())
	})

	t.Run("Errors", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct{ spec, want string }{
			{"", "an empty entry: give a host name, an address or a network such as 10.0.0.0/8"},
			{"localhost,,10.0.0.0/8", "an empty entry: give a host name, an address or a network such as 10.0.0.0/8"},
			{"10.0.0.0/33", `"10.0.0.0/33" is not a network such as 10.0.0.0/8 or fd00::/8`},
			{"example.com/8", `"example.com/8" is not a network such as 10.0.0.0/8 or fd00::/8`},
			{"10.1.2.3/8", `"10.1.2.3/8" has bits set past its /8: write the network, 10.0.0.0/8`},
			{"fe80::1%eth0", `"fe80::1%eth0": an address with a zone is not supported`},
			{"[fe80::1%eth0]:80", `"[fe80::1%eth0]:80": an address with a zone is not supported`},
			{"[127.0.0.1]", `"[127.0.0.1]" is not an IPv6 address in brackets`},
			{"[::1]:0", `"[::1]:0" is not [IPV6-ADDRESS]:PORT with a port from 1 to 65535`},
			{"[::1]:x", `"[::1]:x" is not [IPV6-ADDRESS]:PORT with a port from 1 to 65535`},
			{"::1:8080:x", `"::1:8080:x" is neither an address nor HOST:PORT (write an IPv6 address with a port as [ADDRESS]:PORT)`},
			{"localhost:0", `"localhost:0": the port must be a number from 1 to 65535`},
			{"localhost:65536", `"localhost:65536": the port must be a number from 1 to 65535`},
			{"localhost:", `"localhost:": the port must be a number from 1 to 65535`},
			{"10.1", `"10.1" is not a host name, an address or a network`},
			{"300.1.1.1", `"300.1.1.1" is not a host name, an address or a network`},
			{"http://localhost", `"http://localhost" is a URL: give its host, such as localhost or localhost:8080`},
			{"-bad.example", `"-bad.example" is not a host name, an address or a network`},
			{"a..b", `"a..b" is not a host name, an address or a network`},
			{"*.example.com", `"*.example.com" is not a host name, an address or a network`},
			{":80", `":80" is not a host name, an address or a network`},
		} {
			_, err := ParseAllow(tc.spec)
			require.EqualError(t, err, tc.want, tc.spec)
		}
	})

	t.Run("EveryErrorReported", func(t *testing.T) {
		t.Parallel()
		_, err := ParseAllow("localhost:0,ok.example", "10.1.2.3/8")
		require.EqualError(t, err, `"localhost:0": the port must be a number from 1 to 65535`+"\n"+
			`"10.1.2.3/8" has bits set past its /8: write the network, 10.0.0.0/8`)
	})
}

func TestAllowMatches(t *testing.T) {
	t.Parallel()
	a, err := ParseAllow("localhost:8080,stub.test,127.0.0.2,[::1]:9000,10.0.0.0/8")
	require.NoError(t, err)

	require.True(t, a.allowsName("localhost", 8080))
	require.False(t, a.allowsName("localhost", 8081), "a port entry allows that port only")
	require.True(t, a.allowsName("stub.test", 1))
	require.False(t, a.allowsName("other.test", 1))
	require.False(t, a.allowsName("127.0.0.2", 80), "an address entry is no name")

	addr := netip.MustParseAddr
	require.True(t, a.allowsAddr(addr("127.0.0.2"), 1))
	require.True(t, a.allowsAddr(addr("::ffff:127.0.0.2"), 1), "mapped addresses are compared unmapped")
	require.False(t, a.allowsAddr(addr("127.0.0.1"), 1))
	require.True(t, a.allowsAddr(addr("::1"), 9000))
	require.False(t, a.allowsAddr(addr("::1"), 9001))
	require.True(t, a.allowsAddr(addr("10.200.0.1"), 443))
	require.False(t, a.allowsAddr(addr("11.0.0.1"), 443))

	var none *Allow
	require.False(t, none.allowsName("localhost", 80))
	require.False(t, none.allowsAddr(addr("127.0.0.1"), 80))
}

// FuzzParseAllow checks that parsing never panics and that what it
// accepts writes back to a list that parses to itself.
func FuzzParseAllow(f *testing.F) {
	for _, seed := range []string{
		"localhost", "localhost:8080", "127.0.0.1", "127.0.0.1:1", "::1", "[::1]", "[::1]:9000",
		"10.0.0.0/8", "fd00::/8", "::ffff:10.0.0.0/104", "a.b,c.d", "", ",", "[", "]:", "[::1", "1.2.3.4/", "x:y:z",
		"fe80::1%eth0", "LOCALHOST.", "10.1", "_srv.example", "::ffff:1.2.3.4:80",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		a, err := ParseAllow(spec)
		if err != nil {
			require.Nil(t, a)
			require.NotEmpty(t, err.Error())
			return
		}
		again, err := ParseAllow(a.String())
		require.NoError(t, err, "%q wrote %q", spec, a.String())
		require.Equal(t, a.String(), again.String())
		require.Equal(t, a.entries, again.entries)
	})
}
