package dnstest

import (
	"context"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestResolver(t *testing.T) {
	t.Parallel()
	r := Resolver(t, [4]byte{127, 0, 0, 7})
	addrs, err := r.LookupNetIP(context.Background(), "ip", "anything.example.test")
	require.NoError(t, err)
	require.Equal(t, []netip.Addr{netip.MustParseAddr("127.0.0.7")}, addrs)

	require.Nil(t, answer([]byte{1, 2, 3}, [4]byte{}), "a short query gets no answer")
	require.Nil(t, answer(append(make([]byte, 12), 9, 'a'), [4]byte{}), "a cut question gets no answer")
}
