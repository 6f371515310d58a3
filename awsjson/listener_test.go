package awsjson_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/awsjson"
)

func TestListenerOversizedHeader(t *testing.T) {
	t.Parallel()
	b := setup(t)

	const limit = 2048
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: b.handler, MaxHeaderBytes: limit, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(awsjson.Listener(ln, limit))
	t.Cleanup(func() {
		// Shutdown waits for the refused connection's linger, which
		// Close would leave running.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, srv.Shutdown(ctx))
	})

	send := func(t *testing.T, padding int) (*http.Response, string) {
		t.Helper()
		c, err := net.Dial("tcp", ln.Addr().String())
		require.NoError(t, err)
		defer c.Close()
		require.NoError(t, c.SetDeadline(time.Now().Add(10*time.Second)))
		_, err = fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: x\r\nX-Amz-Target: AWSStepFunctions.ListStateMachines\r\n"+
			"Content-Type: application/x-amz-json-1.0\r\nContent-Length: 2\r\nX-Padding: %s\r\n\r\n{}", strings.Repeat("p", padding))
		require.NoError(t, err)
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		require.NoError(t, err)
		body, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		return res, string(body)
	}

	res, body := send(t, 16*1024)
	require.Equal(t, http.StatusRequestHeaderFieldsTooLarge, res.StatusCode, body)
	require.Equal(t, "application/x-amz-json-1.0", res.Header.Get("Content-Type"))
	require.NotEmpty(t, res.Header.Get("x-amzn-RequestId"))
	require.True(t, res.Close, "the connection is closed after the answer")
	require.JSONEq(t, `{"__type": "com.amazonaws.swf.service.v2.model#RequestHeaderFieldsTooLargeException",
		"message": "Request header fields exceed the maximum size of 2048 bytes"}`, body)

	res, body = send(t, 1024)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	require.Contains(t, body, `"stateMachines":[]`)
}
