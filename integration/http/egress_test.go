package http_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/integration"
)

// refusedTail ends the cause of every refusal: what HTTP Tasks may call,
// and the flag that allows more.
const refusedTail = ", and HTTP Tasks call public HTTPS endpoints only; to allow it, start stepwise serve with --http-task-allow "

// newIPv6Server starts a plain HTTP test server on [::1].
func newIPv6Server(h http.Handler) *httptest.Server {
	l, err := net.Listen("tcp6", "[::1]:0")
	if err != nil {
		panic(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	return srv
}

// port is the port of a test server's URL.
func port(t *testing.T, srv *httptest.Server) string {
	t.Helper()
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	return u.Port()
}

// HTTP Tasks call public HTTPS endpoints only, as on AWS: every other
// endpoint fails the task with States.Http.Socket and a cause naming the
// flag that allows it, and no request reaches it.
func TestRefusedEndpoints(t *testing.T) {
	t.Parallel()
	plain, plainReqs := api(t, answerJSON(http.StatusOK, `{}`))
	secure, secureReqs := apiOn(t, httptest.NewTLSServer, answerJSON(http.StatusOK, `{}`))
	v6, v6Reqs := apiOn(t, newIPv6Server, answerJSON(http.StatusOK, `{}`))
	plainPort, securePort, v6Port := port(t, plain), port(t, secure), port(t, v6)

	for _, tc := range []struct {
		name     string
		allow    []string
		endpoint string
		cause    string // exact, or a prefix when it ends in "…"
		reqs     <-chan recorded
	}{
		{"PlainHTTP", nil, "http://api.example.com/orders",
			"http://api.example.com is plain HTTP" + refusedTail + "api.example.com", nil},
		{"PlainHTTPToLoopback", nil, plain.URL + "/metrics",
			"http://127.0.0.1:" + plainPort + " is plain HTTP" + refusedTail + "127.0.0.1", plainReqs},
		{"Loopback", nil, secure.URL + "/metrics",
			"127.0.0.1:" + securePort + " is a loopback address" + refusedTail + "127.0.0.1", secureReqs},
		{"IPv6Loopback", nil, "https://[::1]:" + v6Port + "/",
			"[::1]:" + v6Port + " is a loopback address" + refusedTail + "::1", v6Reqs},
		{"IPv6LoopbackPlain", nil, v6.URL,
			"http://[::1]:" + v6Port + " is plain HTTP" + refusedTail + "::1", v6Reqs},
		{"LocalhostResolvesToLoopback", nil, "https://localhost:" + securePort + "/",
			"localhost:" + securePort + " (…", secureReqs},
		{"InstanceMetadata", nil, "https://169.254.169.254/latest/meta-data/",
			"169.254.169.254:443 is a link-local address" + refusedTail + "169.254.169.254", nil},
		{"Private10", nil, "https://10.0.0.1/",
			"10.0.0.1:443 is a private address" + refusedTail + "10.0.0.1", nil},
		{"Private192", nil, "https://192.168.1.1:8443/",
			"192.168.1.1:8443 is a private address" + refusedTail + "192.168.1.1", nil},
		{"SharedCGNAT", nil, "https://100.64.0.1/",
			"100.64.0.1:443 is a shared address (carrier-grade NAT, 100.64.0.0/10)" + refusedTail + "100.64.0.1", nil},
		{"Unspecified", nil, "https://0.0.0.0:" + securePort + "/",
			"0.0.0.0:" + securePort + " is an unspecified address" + refusedTail + "0.0.0.0", secureReqs},
		{"MappedLoopback", nil, "https://[::ffff:127.0.0.1]:" + securePort + "/",
			"[::ffff:127.0.0.1]:" + securePort + " (127.0.0.1) is a loopback address" + refusedTail + "127.0.0.1", secureReqs},
		{"OtherPortAllowed", []string{"127.0.0.1:1"}, secure.URL,
			"127.0.0.1:" + securePort + " is a loopback address" + refusedTail + "127.0.0.1", secureReqs},
		{"OtherHostAllowed", []string{"localhost"}, plain.URL,
			"http://127.0.0.1:" + plainPort + " is plain HTTP" + refusedTail + "127.0.0.1", plainReqs},
		{"NetworkAllowsNoPlainHTTPByName", []string{"127.0.0.0/8"}, "http://localhost:" + plainPort + "/",
			"http://localhost:" + plainPort + " is plain HTTP" + refusedTail + "localhost", plainReqs},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := setupWith(t, "", tc.allow...)
			res := b.call(t, params(tc.endpoint, "GET", ""))
			require.NotNil(t, res.Failure)
			require.Equal(t, "States.Http.Socket", res.Failure.Name)
			if prefix, ok := strings.CutSuffix(tc.cause, "…"); ok {
				require.True(t, strings.HasPrefix(res.Failure.Cause, prefix), res.Failure.Cause)
				require.Contains(t, res.Failure.Cause, ") is a loopback address"+refusedTail+"localhost")
			} else {
				require.Equal(t, tc.cause, res.Failure.Cause)
			}
			if tc.reqs != nil {
				require.Empty(t, tc.reqs, "no request reached the API")
			}
		})
	}
}

// The same endpoints, allowed with the flag.
func TestAllowedEndpoints(t *testing.T) {
	t.Parallel()
	plain, plainReqs := api(t, answerJSON(http.StatusOK, `{"ok": true}`))
	v6, v6Reqs := apiOn(t, newIPv6Server, answerJSON(http.StatusOK, `{"ok": true}`))
	plainPort := port(t, plain)

	for _, tc := range []struct {
		name     string
		allow    []string
		endpoint string
		reqs     <-chan recorded
	}{
		{"Address", []string{"127.0.0.1"}, plain.URL + "/metrics", plainReqs},
		{"AddressAndPort", []string{"127.0.0.1:" + plainPort}, plain.URL, plainReqs},
		{"Network", []string{"10.0.0.0/8,127.0.0.0/8"}, plain.URL, plainReqs},
		{"HostName", []string{"localhost"}, "http://localhost:" + plainPort + "/", plainReqs},
		{"HostNameAndPort", []string{"localhost:" + plainPort}, "http://LOCALHOST:" + plainPort + "/", plainReqs},
		{"IPv6", []string{"::1"}, v6.URL, v6Reqs},
		{"IPv6Network", []string{"::1/128"}, v6.URL, v6Reqs},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := setupWith(t, "", tc.allow...)
			res := b.call(t, params(tc.endpoint, "GET", ""))
			require.Nil(t, res.Failure)
			require.Equal(t, true, member(t, res.Output, "ResponseBody", "ok"))
			require.Equal(t, "GET", (<-tc.reqs).method)
		})
	}
}

// A redirect from an allowed endpoint is checked as the endpoint is: to
// a host the flag does not allow, it fails the task, and the host is not
// contacted.
func TestRedirectToRefusedEndpoint(t *testing.T) {
	t.Parallel()
	other, otherReqs := api(t, answerJSON(http.StatusOK, `{}`))
	secure, secureReqs := apiOn(t, httptest.NewTLSServer, answerJSON(http.StatusOK, `{}`))
	otherPort, securePort := port(t, other), port(t, secure)

	for _, tc := range []struct {
		name, location, cause string
		reqs                  <-chan recorded
	}{
		{"PlainHTTP", other.URL + "/moved",
			"http://127.0.0.1:" + otherPort + " is plain HTTP" + refusedTail + "127.0.0.1", otherReqs},
		{"Loopback", secure.URL + "/moved",
			"127.0.0.1:" + securePort + " is a loopback address" + refusedTail + "127.0.0.1", secureReqs},
		{"InstanceMetadata", "https://169.254.169.254/latest/meta-data/iam/",
			"169.254.169.254:443 is a link-local address" + refusedTail + "169.254.169.254", nil},
		{"PlainHTTPByName", "http://localhost:" + otherPort + "/",
			"http://localhost:" + otherPort + " is plain HTTP" + refusedTail + "localhost", otherReqs},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			from, fromReqs := api(t, func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, tc.location, http.StatusFound)
			})
			b := setupWith(t, `{"payments": {"AuthorizationType": "API_KEY", "ApiKeyName": "x-api-key", "ApiKeyValue": "k"}}`,
				"127.0.0.1:"+port(t, from))

			res := b.call(t, params(from.URL, "GET", authentication(paymentsArn)))
			require.NotNil(t, res.Failure)
			require.Equal(t, "States.Http.Socket", res.Failure.Name)
			require.Equal(t, tc.cause, res.Failure.Cause)
			require.Equal(t, "k", (<-fromReqs).header.Get("X-Api-Key"), "the allowed endpoint was called")
			if tc.reqs != nil {
				require.Empty(t, tc.reqs, "the redirect was not followed")
			}
		})
	}
}

// A refused endpoint gets none of the connection's secrets: no request at
// all, and no token is asked for.
func TestRefusedEndpointGetsNoSecrets(t *testing.T) {
	t.Parallel()
	srv, reqs := api(t, answerJSON(http.StatusOK, `{}`))
	tokens, fetched := tokenServer(t, "3600")
	b := setupWith(t, `{"`+paymentsArn+`": {"AuthorizationType": "API_KEY", "ApiKeyName": "x-api-key", "ApiKeyValue": "k-123"},
		"crm": `+oauthConnection(tokens.URL, "shh")+`}`)

	for _, arn := range []string{paymentsArn, crmArn} {
		res := b.call(t, params(srv.URL+"/metrics", "GET", authentication(arn)))
		require.NotNil(t, res.Failure, arn)
		require.Equal(t, "States.Http.Socket", res.Failure.Name, arn)
	}
	require.Empty(t, reqs)
	require.Zero(t, fetched.Load(), "no token was asked for")
}

// The OAuth token endpoint of a connection is held to the same rules.
func TestRefusedTokenEndpoint(t *testing.T) {
	t.Parallel()
	srv, reqs := api(t, answerJSON(http.StatusOK, `{}`))
	tokens, fetched := tokenServer(t, "3600")
	b := setupWith(t, `{"crm": `+oauthConnection(tokens.URL, "shh")+`}`, "127.0.0.1:"+port(t, srv))

	res := b.call(t, params(srv.URL, "GET", authentication(crmArn)))
	require.NotNil(t, res.Failure)
	require.Equal(t, "Events.ConnectionResource.InvalidConnectionState", res.Failure.Name)
	require.Equal(t, "The OAuth token request to '"+tokens.URL+"' failed: http://127.0.0.1:"+port(t, tokens)+" is plain HTTP"+refusedTail+"127.0.0.1", res.Failure.Cause)
	require.Zero(t, fetched.Load())
	require.Empty(t, reqs, "the API was not called")
}

func TestBadAllowList(t *testing.T) {
	t.Parallel()
	_, err := integration.New(integration.Config{HTTPTaskAllow: []string{"localhost:0", "10.1.2.3/8"}})
	require.EqualError(t, err, "integration arn:aws:states:::http:invoke: http task allow list: "+
		`"localhost:0": the port must be a number from 1 to 65535`+"\n"+
		`"10.1.2.3/8" has bits set past its /8: write the network, 10.0.0.0/8`)
}
