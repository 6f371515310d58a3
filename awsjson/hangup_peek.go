//go:build linux || darwin || freebsd || netbsd || openbsd

package awsjson

import (
	"errors"
	"syscall"
)

// hungUp says whether the peer of a connection has closed it (its end, or
// a reset, has arrived), without waiting and without reading anything.
func hungUp(rc syscall.RawConn) bool {
	closed := false
	err := rc.Control(func(fd uintptr) {
		var b [1]byte
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case err == nil:
			closed = n == 0 // the end of the stream; n > 0 is data, the client is there
		case errors.Is(err, syscall.EAGAIN), errors.Is(err, syscall.EWOULDBLOCK), errors.Is(err, syscall.EINTR):
		default:
			closed = true // reset, or the socket is gone
		}
	})
	return err == nil && closed
}
