package http

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/failure"
	"stepwise/integration"
	"stepwise/internal/testkit/dnstest"
	"stepwise/jsonvalue"
)

// An allowed HTTPS endpoint on a non-public address is called over TLS
// through the guard's dialer (the test trusts the test server's
// certificate).
func TestAllowedHTTPSEndpoint(t *testing.T) {
	t.Parallel()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"tls": true}`)
	}))
	defer srv.Close()
	params, err := jsonvalue.ParseString(`{"ApiEndpoint": "` + srv.URL + `/x", "Method": "GET"}`)
	require.NoError(t, err)

	for _, allow := range [][]string{{"127.0.0.1"}, {"127.0.0.0/8"}} {
		impl, err := newInvoker(&integration.Config{HTTPTaskAllow: allow})
		require.NoError(t, err)
		inv := impl.(*invoker)
		inv.client.Transport.(*http.Transport).TLSClientConfig = srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()

		out, err := inv.Call(context.Background(), &integration.Request{Resource: Resource, Parameters: params})
		require.NoError(t, err, allow)
		body, _ := out.(*jsonvalue.Object).Get("ResponseBody")
		require.Equal(t, `{"tls":true}`, jsonvalue.String(body))
	}
}

// A host name that resolves to a loopback address is refused after
// resolution (here a test DNS server answers every name with
// 127.0.0.1), and no request reaches the API; named by the flag, it is
// called.
func TestNameResolvingToLoopback(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		io.WriteString(w, "hi")
	}))
	defer srv.Close()
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	resolver := dnstest.Resolver(t, [4]byte{127, 0, 0, 1})
	call := func(allow []string, endpoint string) (any, error) {
		impl, err := newInvoker(&integration.Config{HTTPTaskAllow: allow})
		require.NoError(t, err)
		inv := impl.(*invoker)
		inv.guard.Resolver = resolver
		params, err := jsonvalue.ParseString(`{"ApiEndpoint": "` + endpoint + `", "Method": "GET"}`)
		require.NoError(t, err)
		return inv.Call(context.Background(), &integration.Request{Resource: Resource, Parameters: params})
	}

	_, err = call(nil, "https://api.rebind.test:"+u.Port()+"/x")
	var f *failure.Failure
	require.ErrorAs(t, err, &f)
	require.Equal(t, ErrorSocket, f.Name)
	require.Equal(t, "api.rebind.test:"+u.Port()+" (127.0.0.1) is a loopback address, and HTTP Tasks call public HTTPS endpoints only; "+
		"to allow it, start stepwise serve with --http-task-allow api.rebind.test", f.Cause)
	require.Zero(t, hits.Load(), "no request reached the API")

	out, err := call([]string{"api.rebind.test"}, "http://api.rebind.test:"+u.Port()+"/x")
	require.NoError(t, err)
	body, _ := out.(*jsonvalue.Object).Get("ResponseBody")
	require.Equal(t, "hi", body)
	require.Equal(t, int32(1), hits.Load())
}
