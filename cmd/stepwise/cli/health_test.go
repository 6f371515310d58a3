package cli

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/server/servertest"
)

// TestHealthCommand: `stepwise health` exits 0 against a ready server,
// and 1 with the reason against one answering 503 or nothing at all.
func TestHealthCommand(t *testing.T) {
	t.Parallel()
	s := servertest.New(t)
	addr := strings.TrimPrefix(s.URL, "http://")
	out, errOut, code := execute("health", "--addr", addr)
	require.Equal(t, 0, code, errOut)
	require.Equal(t, "ready (http://"+addr+"/readyz)\n", out)

	// The port of the server given as 0.0.0.0:PORT: asked on 127.0.0.1.
	_, port, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	_, errOut, code = execute("health", "--addr", "0.0.0.0:"+port)
	require.Equal(t, 0, code, errOut)

	notReady := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		require.Equal(t, "/readyz", r.URL.Path)
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write([]byte(`{"status":"not ready","reason":"resuming the executions that were running at start"}`))
	}))
	defer notReady.Close()
	_, errOut, code = execute("health", "--addr", strings.TrimPrefix(notReady.URL, "http://"))
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "503 Service Unavailable: resuming the executions that were running at start")

	// A port nothing listens on.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	closed := ln.Addr().String()
	require.NoError(t, ln.Close())
	_, errOut, code = execute("health", "--addr", closed)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "stepwise: health: not ready: ")
	require.Contains(t, errOut, "connection refused")

	_, errOut, code = execute("health", "--addr", "nonsense")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `the address "nonsense" is not HOST:PORT`)
}

// TestHealthAddr: the flag wins over $STEPWISE_ADDR, which wins over
// serve's default; an unspecified host is asked on 127.0.0.1.
func TestHealthAddr(t *testing.T) {
	t.Parallel()
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "STEPWISE_ADDR" {
				return v
			}
			return ""
		}
	}
	require.Equal(t, "127.0.0.1:8083", healthAddr("", env("")))
	require.Equal(t, "127.0.0.1:9000", healthAddr("", env("0.0.0.0:9000")))
	require.Equal(t, "127.0.0.1:9000", healthAddr("", env(":9000")))
	require.Equal(t, "127.0.0.1:9000", healthAddr("", env("[::]:9000")))
	require.Equal(t, "10.0.0.5:7000", healthAddr("10.0.0.5:7000", env("0.0.0.0:9000")))
	require.Equal(t, "localhost:7000", healthAddr("localhost:7000", env("")))
}
