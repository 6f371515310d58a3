package http

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/integration"
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
