package awsjson

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"syscall"

	"stepwise/internal/frontdoor"
	"stepwise/sfnapi"
)

// Listener returns ln with the answer Go's HTTP server gives a request
// whose header block is larger than maxHeaderBytes (http.Server's
// MaxHeaderBytes) put in the API's shape: a 431 with an AWS JSON error
// instead of a plain-text one.
//
// The server writes that answer itself, before any handler runs, in one
// write of a fixed text straight to the connection; the connections of
// the listener recognise it and write the API's error in its place. The
// API's own handler never answers 431, so nothing else is taken for it.
func Listener(ln net.Listener, maxHeaderBytes int) net.Listener {
	return &listener{Listener: ln, maxHeaderBytes: maxHeaderBytes}
}

type listener struct {
	net.Listener
	maxHeaderBytes int
}

func (l *listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &conn{Conn: c, maxHeaderBytes: l.maxHeaderBytes}, nil
}

// headerTooLarge is how net/http's answer to an oversized header block
// starts; the plain-text headers that follow are those of every answer it
// writes before a handler runs.
var (
	headerTooLarge = []byte("HTTP/1.1 431 ")
	plainHeaders   = []byte("\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n")
)

// conn is a connection of the listener.
type conn struct {
	net.Conn
	maxHeaderBytes int
}

func (c *conn) Write(p []byte) (int, error) {
	if bytes.HasPrefix(p, headerTooLarge) && bytes.Contains(p, plainHeaders) {
		if _, err := c.Conn.Write(c.headerTooLargeResponse()); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return c.Conn.Write(p)
}

// SyscallConn gives the connection's socket, for long polls to look at
// (see ConnContext).
func (c *conn) SyscallConn() (syscall.RawConn, error) {
	if sc, ok := c.Conn.(syscall.Conn); ok {
		return sc.SyscallConn()
	}
	return nil, errors.ErrUnsupported
}

// CloseWrite half-closes the connection, as net/http does after refusing
// a request so that the client reads the answer before the connection
// ends.
func (c *conn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// headerTooLargeResponse is the whole HTTP answer to an oversized header
// block.
func (c *conn) headerTooLargeResponse() []byte {
	status := http.StatusRequestHeaderFieldsTooLarge
	body, _ := shape.Encode(frontdoor.Failure{Status: status, Code: sfnapi.CodeRequestHeaderFieldsTooLarge,
		Message: fmt.Sprintf("Request header fields exceed the maximum size of %d bytes", c.maxHeaderBytes)})
	var b bytes.Buffer
	fmt.Fprintf(&b, "HTTP/1.1 %d %s\r\n", status, http.StatusText(status))
	b.WriteString("Content-Type: " + frontdoor.ContentTypeJSON10 + "\r\n")
	b.WriteString("Content-Length: " + strconv.Itoa(len(body)) + "\r\n")
	b.WriteString("Connection: close\r\n")
	b.WriteString(frontdoor.RequestIDHeader + ": " + frontdoor.NewRequestID() + "\r\n\r\n")
	b.Write(body)
	return b.Bytes()
}
