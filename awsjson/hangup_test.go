package awsjson

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"stepwise/internal/testkit/testwait"
)

// connPair returns the two ends of a TCP connection: the server's (whose
// context a poll has) and the client's.
func connPair(t *testing.T) (server, client *net.TCPConn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	s, err := ln.Accept()
	require.NoError(t, err)
	t.Cleanup(func() { c.Close(); s.Close() })
	return s.(*net.TCPConn), c.(*net.TCPConn)
}

// TestPollContextSeesAHangUp: a poll's context ends once the client's end
// of the connection arrives, with nothing reading the connection.
func TestPollContextSeesAHangUp(t *testing.T) {
	t.Parallel()
	for name, hangUp := range map[string]func(c *net.TCPConn) error{
		"End":   func(c *net.TCPConn) error { return c.CloseWrite() },
		"Reset": func(c *net.TCPConn) error { c.SetLinger(0); return c.Close() },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			server, client := connPair(t)
			ctx, cancel := withHangUp(ConnContext(context.Background(), server))
			defer cancel()
			require.IsType(t, &pollContext{}, ctx)
			require.NoError(t, ctx.Err(), "the client is there")

			require.NoError(t, hangUp(client))
			testwait.Until(t, func() bool { return ctx.Err() != nil }, 30*time.Second, time.Millisecond)
			require.ErrorIs(t, ctx.Err(), context.Canceled)
			select {
			case <-ctx.Done():
			default:
				t.Fatal("Done is not closed once Err says the client hung up")
			}
		})
	}
}

// TestPollContextWithoutConnection: a request without a connection in its
// context (a test server, another transport) relies on its context alone.
func TestPollContextWithoutConnection(t *testing.T) {
	t.Parallel()
	parent, cancelParent := context.WithCancel(context.Background())
	ctx, cancel := withHangUp(parent)
	defer cancel()
	require.NoError(t, ctx.Err())
	cancelParent()
	require.ErrorIs(t, ctx.Err(), context.Canceled)
}
