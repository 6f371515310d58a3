package http_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/integration"
)

const (
	paymentsArn = "arn:aws:events:us-east-1:123456789012:connection/payments/0c6ad3a8-1f0e-4c6f-9d52-6d1f2f5e1a11"
	ordersArn   = "arn:aws:events:us-east-1:123456789012:connection/orders/b2d7"
	crmArn      = "arn:aws:events:us-east-1:123456789012:connection/crm/77aa"
)

func authentication(arn string) string {
	return `"Authentication": {"ConnectionArn": "` + arn + `"}`
}

func TestAPIKeyConnection(t *testing.T) {
	t.Parallel()
	srv, reqs := api(t, answerJSON(http.StatusOK, `{}`))
	b := setup(t, `{"`+paymentsArn+`": {"AuthorizationType": "API_KEY", "ApiKeyName": "x-api-key", "ApiKeyValue": "k-123"}}`)

	res := b.call(t, params(srv.URL, "GET", authentication(paymentsArn)))
	require.Nil(t, res.Failure)
	require.Equal(t, "k-123", (<-reqs).header.Get("X-Api-Key"))

	res = b.call(t, params(srv.URL, "GET", authentication(strings.Replace(paymentsArn, "payments", "refunds", 1))))
	require.NotNil(t, res.Failure)
	require.Equal(t, "States.TaskFailed", res.Failure.Name)
	require.Contains(t, res.Failure.Cause, "connection/refunds/")
	require.Contains(t, res.Failure.Cause, "is not in the connections file")
}

// A connection keyed by name serves every ARN with that name.
func TestBasicConnectionByName(t *testing.T) {
	t.Parallel()
	srv, reqs := api(t, answerJSON(http.StatusOK, `{}`))
	b := setup(t, `{"orders": {"AuthorizationType": "BASIC", "Username": "ann", "Password": "s3cret"}}`)

	res := b.call(t, params(srv.URL, "GET", authentication(ordersArn)))
	require.Nil(t, res.Failure)
	got := <-reqs
	req := &http.Request{Header: got.header}
	user, pass, ok := req.BasicAuth()
	require.True(t, ok)
	require.Equal(t, "ann", user)
	require.Equal(t, "s3cret", pass)
}

// tokenServer is an OAuth token endpoint that checks the client
// credentials and hands out numbered tokens.
func tokenServer(t *testing.T, expiresIn string) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, secret, _ := r.BasicAuth()
		require.NoError(t, r.ParseForm())
		if id != "client-1" || secret != "shh" || r.PostForm.Get("grant_type") != "client_credentials" || r.PostForm.Get("audience") != "crm" {
			http.Error(w, "bad client", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"access_token": "tok-%d", "token_type": "Bearer", "expires_in": %s}`, n.Add(1), expiresIn)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func oauthConnection(endpoint, secret string) string {
	return `{"AuthorizationType": "OAUTH_CLIENT_CREDENTIALS", "AuthorizationEndpoint": "` + endpoint + `",
		"HttpMethod": "POST", "ClientId": "client-1", "ClientSecret": "` + secret + `",
		"OAuthHttpParameters": {"BodyParameters": [{"Key": "audience", "Value": "crm"}]}}`
}

func TestOAuthConnectionCachesToken(t *testing.T) {
	t.Parallel()
	tokens, fetched := tokenServer(t, "3600")
	var status atomic.Int32
	status.Store(http.StatusOK)
	srv, reqs := api(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(int(status.Load())) })
	b := setup(t, `{"crm": `+oauthConnection(tokens.URL, "shh")+`}`)

	for range 2 {
		res := b.call(t, params(srv.URL, "GET", authentication(crmArn)))
		require.Nil(t, res.Failure)
		require.Equal(t, "Bearer tok-1", (<-reqs).header.Get("Authorization"))
	}
	require.Equal(t, int32(1), fetched.Load(), "the token is kept until it expires")

	status.Store(http.StatusUnauthorized)
	res := b.call(t, params(srv.URL, "GET", authentication(crmArn)))
	require.Equal(t, "States.Http.StatusCode.401", res.Failure.Name)
	<-reqs
	status.Store(http.StatusOK)
	res = b.call(t, params(srv.URL, "GET", authentication(crmArn)))
	require.Nil(t, res.Failure)
	require.Equal(t, "Bearer tok-2", (<-reqs).header.Get("Authorization"), "a refused token is renewed")
}

func TestOAuthTokenExpires(t *testing.T) {
	t.Parallel()
	tokens, fetched := tokenServer(t, `"1"`)
	srv, reqs := api(t, answerJSON(http.StatusOK, `{}`))
	b := setup(t, `{"crm": `+oauthConnection(tokens.URL, "shh")+`}`)

	for i := range 2 {
		res := b.call(t, params(srv.URL, "GET", authentication(crmArn)))
		require.Nil(t, res.Failure)
		require.Equal(t, fmt.Sprintf("Bearer tok-%d", i+1), (<-reqs).header.Get("Authorization"))
	}
	require.Equal(t, int32(2), fetched.Load(), "a token about to expire is not reused")
}

func TestOAuthTokenEndpointFails(t *testing.T) {
	t.Parallel()
	tokens, fetched := tokenServer(t, "3600")
	srv, reqs := api(t, answerJSON(http.StatusOK, `{}`))
	b := setup(t, `{"crm": `+oauthConnection(tokens.URL, "wrong")+`}`)

	res := b.call(t, params(srv.URL, "GET", authentication(crmArn)))
	require.NotNil(t, res.Failure)
	require.Equal(t, "Events.ConnectionResource.InvalidConnectionState", res.Failure.Name)
	require.Contains(t, res.Failure.Cause, "401 Unauthorized")
	require.Contains(t, res.Failure.Cause, "bad client")
	require.Equal(t, int32(0), fetched.Load())
	require.Empty(t, reqs, "the API was not called")
}

func TestInvocationHTTPParametersMerged(t *testing.T) {
	t.Parallel()
	srv, reqs := api(t, answerJSON(http.StatusOK, `{}`))
	b := setup(t, `{"`+paymentsArn+`": {"AuthorizationType": "API_KEY", "ApiKeyName": "x-api-key", "ApiKeyValue": "k",
		"InvocationHttpParameters": {
			"HeaderParameters": [{"Key": "X-Tenant", "Value": "acme", "IsValueSecret": false}],
			"QueryStringParameters": [{"Key": "region", "Value": "eu"}],
			"BodyParameters": [{"Key": "source", "Value": "stepwise", "IsValueSecret": true}]}}}`)

	res := b.call(t, params(srv.URL+"/pay", "POST", authentication(paymentsArn)+`,
		"Headers": {"X-Tenant": "other", "X-Keep": "1"}, "QueryParameters": {"region": "us", "page": "2"},
		"RequestBody": {"amount": 5, "source": "task"}`))
	require.Nil(t, res.Failure)
	got := <-reqs
	require.Equal(t, "acme", got.header.Get("X-Tenant"), "the connection's header wins")
	require.Equal(t, "1", got.header.Get("X-Keep"))
	require.Equal(t, url.Values{"region": {"eu"}, "page": {"2"}}, got.url.Query())
	require.Equal(t, map[string]any{"amount": 5.0, "source": "stepwise"}, decode(t, got.body))

	res = b.call(t, params(srv.URL+"/pay", "POST", authentication(paymentsArn)))
	require.Nil(t, res.Failure)
	require.Equal(t, `{"source":"stepwise"}`, (<-reqs).body, "body parameters make a body of their own")

	res = b.call(t, params(srv.URL+"/pay", "POST", authentication(paymentsArn)+`, "RequestBody": "text"`))
	require.NotNil(t, res.Failure)
	require.Equal(t, "The field 'RequestBody' must be an object to take the connection's body parameters, not string", res.Failure.Cause)
}

// A redirect to another host does not carry the connection's secrets.
func TestRedirectDropsSecrets(t *testing.T) {
	t.Parallel()
	other, otherReqs := api(t, answerJSON(http.StatusOK, `{}`))
	srv, reqs := api(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/moved", http.StatusFound)
	})
	b := setup(t, `{"payments": {"AuthorizationType": "API_KEY", "ApiKeyName": "x-api-key", "ApiKeyValue": "k"}}`)

	res := b.call(t, params(srv.URL, "GET", authentication(paymentsArn)))
	require.Nil(t, res.Failure)
	require.Equal(t, "k", (<-reqs).header.Get("X-Api-Key"))
	require.Empty(t, (<-otherReqs).header.Get("X-Api-Key"))
}

func TestConnectionsFileErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ file, want string }{
		{`[]`, "not a JSON object of connections"},
		{`{"bad key!": {"AuthorizationType": "BASIC", "Username": "u", "Password": "p"}}`, `connection "bad key!": the key must be a connection ARN`},
		{`{"a": {"AuthorizationType": "DIGEST"}}`, `connection "a": AuthorizationType must be API_KEY, BASIC or OAUTH_CLIENT_CREDENTIALS, not "DIGEST"`},
		{`{"a": {"AuthorizationType": "API_KEY", "ApiKeyName": "k"}}`, `connection "a": AuthorizationType API_KEY needs ApiKeyValue`},
		{`{"a": {"AuthorizationType": "BASIC", "Username": "u", "Password": "p", "ApiKeyName": "k"}}`, `connection "a": ApiKeyName is a field of API_KEY connections, not BASIC`},
		{`{"a": {"AuthorizationType": "BASIC", "Username": "u", "Password": "p", "Passwd": "x"}}`, `connection "a": json: unknown field "Passwd"`},
		{`{"a": {"AuthorizationType": "BASIC", "Username": "u", "Password": "p", "InvocationHttpParameters": {"HeaderParameters": [{"Value": "v"}]}}}`, `connection "a": InvocationHttpParameters.HeaderParameters[0] needs a Key`},
		{`{"a": {"AuthorizationType": "BASIC", "Username": "u", "Password": "p", "InvocationHttpParameters": {"HeaderParameters": [{"Key": "X A", "Value": "v"}]}}}`, `connection "a": InvocationHttpParameters.HeaderParameters[0]: "X A" is not a valid HTTP header name`},
		{`{"a": {"AuthorizationType": "API_KEY", "ApiKeyName": "x:key", "ApiKeyValue": "v"}}`, `connection "a": ApiKeyName "x:key" and ApiKeyValue must make a valid HTTP header`},
		{`{"a": ` + oauthConnection("ftp://x", "s") + `}`, `connection "a": AuthorizationEndpoint "ftp://x" must be an https:// or http:// URL`},
		{`{"a": {"AuthorizationType": "BASIC", "Username": "u", "Password": "p", "OAuthHttpParameters": {}}}`, `connection "a": OAuthHttpParameters is a field of OAUTH_CLIENT_CREDENTIALS connections, not BASIC`},
	} {
		path := filepath.Join(t.TempDir(), "connections.json")
		require.NoError(t, os.WriteFile(path, []byte(tc.file), 0o600))
		_, err := integration.New(integration.Config{ConnectionsFile: path})
		require.ErrorContains(t, err, tc.want, tc.file)
		require.ErrorContains(t, err, path, "the error names the file")
	}

	// Only a regular file is read, at most 1 MiB: a FIFO does not hang the
	// server's start, /dev/zero does not fill its memory.
	fifo := filepath.Join(t.TempDir(), "connections.json")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	big := filepath.Join(t.TempDir(), "connections.json")
	require.NoError(t, os.WriteFile(big, []byte(`{"a": {"AuthorizationType": "BASIC", "Username": "`+strings.Repeat("u", 1<<20)+`", "Password": "p"}}`), 0o600))
	for file, want := range map[string]string{
		"/dev/zero": "connections file: /dev/zero is not a regular file (a device)",
		fifo:        "connections file: " + fifo + " is not a regular file (a named pipe)",
		big:         "connections file: " + big + " is larger than 1 MiB, the most read of such a file",
	} {
		done := make(chan error, 1)
		go func() {
			_, err := integration.New(integration.Config{ConnectionsFile: file})
			done <- err
		}()
		select {
		case err := <-done:
			require.ErrorContains(t, err, want)
		case <-time.After(10 * time.Second):
			t.Fatalf("reading %s: still running after 10s", file)
		}
	}

	_, err := integration.New(integration.Config{ConnectionsFile: filepath.Join(t.TempDir(), "missing.json")})
	require.ErrorContains(t, err, "missing.json: no such file or directory")

	path := filepath.Join(t.TempDir(), "connections.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"a": {"AuthorizationType": "DIGEST"}, "b": {"AuthorizationType": "BASIC"}}`), 0o600))
	_, err = integration.New(integration.Config{ConnectionsFile: path})
	require.ErrorContains(t, err, `connection "a"`)
	require.ErrorContains(t, err, `connection "b": AuthorizationType BASIC needs Username`, "every bad connection is reported")
}
