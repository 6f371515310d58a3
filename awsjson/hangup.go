package awsjson

import (
	"context"
	"net"
	"syscall"
)

// A long poll (GetActivityTask) must see a client that hangs up as soon as
// possible: the engine hands a task out only to a poller whose context has
// not ended. net/http ends a request's context when its reader of the
// connection reads the end of it, which, on a busy server, can be
// milliseconds after the client left. A poll's context also looks at the
// connection itself whenever its Err is called.

type connKey struct{}

// ConnContext is an http.Server ConnContext: it keeps the connection in
// its requests' contexts, for long polls to look at (see New).
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	if sc, ok := c.(syscall.Conn); ok {
		if rc, err := sc.SyscallConn(); err == nil {
			return context.WithValue(ctx, connKey{}, rc)
		}
	}
	return ctx
}

// pollContext is a request's context whose Err says the client hung up as
// soon as the end of its connection has arrived (Done is closed then).
type pollContext struct {
	context.Context
	cancel context.CancelFunc
	conn   syscall.RawConn
}

// withHangUp returns the context of a long poll.
func withHangUp(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(parent)
	rc, _ := parent.Value(connKey{}).(syscall.RawConn)
	if rc == nil {
		return ctx, cancel
	}
	return &pollContext{Context: ctx, cancel: cancel, conn: rc}, cancel
}

func (c *pollContext) Err() error {
	if err := c.Context.Err(); err != nil {
		return err
	}
	if hungUp(c.conn) {
		c.cancel()
	}
	return c.Context.Err()
}
