package e2e

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/stretchr/testify/require"
)

// An HTTP Task whose ApiEndpoint comes from the input cannot make the
// server call itself or another local listener: it fails with
// States.Http.Socket, the cause naming --http-task-allow, and the
// connection's API key goes nowhere. With --http-task-allow naming the
// stub's address and port, the stub is called, and the server's own
// port still is not.
func TestHTTPTaskEndpoints(t *testing.T) {
	t.Parallel()
	var called atomic.Int32
	var key atomic.Value
	stub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		called.Add(1)
		key.Store(r.Header.Get("X-Api-Key"))
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"pong": true}`))
	}))
	defer stub.Close()
	stubURL, err := url.Parse(stub.URL)
	require.NoError(t, err)

	conns := filepath.Join(t.TempDir(), "connections.json")
	require.NoError(t, os.WriteFile(conns, []byte(`{"api": {"AuthorizationType": "API_KEY", "ApiKeyName": "x-api-key", "ApiKeyValue": "k-secret"}}`), 0o600))
	const def = `{"StartAt": "Call", "States": {"Call": {"Type": "Task", "Resource": "arn:aws:states:::http:invoke",
		"Parameters": {"ApiEndpoint.$": "$.url", "Method": "GET",
			"Authentication": {"ConnectionArn": "arn:aws:events:us-east-1:123456789012:connection/api/1"}},
		"ResultSelector": {"body.$": "$.ResponseBody"}, "End": true}}}`
	machine := func(s *server) (*sfn.Client, string) {
		c := s.client(t)
		return c, createMachine(t, c, "http", def)
	}
	run := func(c *sfn.Client, sm, name, endpoint string) *sfn.DescribeExecutionOutput {
		t.Helper()
		input, err := json.Marshal(map[string]string{"url": endpoint})
		require.NoError(t, err)
		return waitDone(t, c, startExecution(t, c, sm, name, string(input)))
	}

	// By default: public HTTPS only.
	s := startServer(t, filepath.Join(t.TempDir(), "refuse.db"), "--connections", conns)
	c, sm := machine(s)
	for name, endpoint := range map[string]string{
		"metrics":  s.url() + "/metrics",
		"stub":     stub.URL + "/ping",
		"stub-tls": "https://" + stubURL.Host + "/ping",
		"imds":     "https://169.254.169.254/latest/meta-data/",
	} {
		done := run(c, sm, name, endpoint)
		require.Equal(t, "FAILED", string(done.Status), name)
		require.Equal(t, "States.Http.Socket", aws.ToString(done.Error), name)
		require.Contains(t, aws.ToString(done.Cause), "HTTP Tasks call public HTTPS endpoints only; to allow it, start stepwise serve with --http-task-allow ", name)
	}
	require.Zero(t, called.Load(), "no request reached the stub")

	// Allowed: the stub's address and port, over plain http too.
	s = startServer(t, filepath.Join(t.TempDir(), "allow.db"), "--connections", conns, "--http-task-allow", stubURL.Host)
	c, sm = machine(s)
	done := run(c, sm, "stub", stub.URL+"/ping")
	require.Equal(t, "SUCCEEDED", string(done.Status), "%s: %s", aws.ToString(done.Error), aws.ToString(done.Cause))
	require.JSONEq(t, `{"body": {"pong": true}}`, aws.ToString(done.Output))
	require.Equal(t, int32(1), called.Load())
	require.Equal(t, "k-secret", key.Load())

	done = run(c, sm, "metrics", s.url()+"/metrics")
	require.Equal(t, "States.Http.Socket", aws.ToString(done.Error))
	require.Contains(t, aws.ToString(done.Cause), "is plain HTTP")
}

// A bad --http-task-allow entry stops the server at start, naming it.
func TestHTTPTaskAllowFlagErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ value, want string }{
		{"http://127.0.0.1:8080", `http-task-allow: "http://127.0.0.1:8080" is a URL: give its host, such as localhost or localhost:8080`},
		{"10.1.2.3/8", `http-task-allow: "10.1.2.3/8" has bits set past its /8: write the network, 10.0.0.0/8`},
		{"localhost:0", `http-task-allow: "localhost:0": the port must be a number from 1 to 65535`},
	} {
		out, err := exec.Command(binary, "serve", "--addr", "127.0.0.1:0", "--db", ":memory:", "--http-task-allow", tc.value).CombinedOutput()
		require.Error(t, err, tc.value)
		require.Contains(t, string(out), tc.want, tc.value)
	}
}
