package optimized_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/integration"
	"stepwise/integration/integrationtest"
	"stepwise/integration/standard"
	"stepwise/jsonvalue"
)

// bedrock:invokeModel posts the Body to /model/{id}/invoke, signed for
// bedrock, and answers the model's JSON parsed.
func TestBedrockInvokeModel(t *testing.T) {
	t.Parallel()
	var gotBody []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/model/anthropic.claude-v2/invoke" || r.Method != http.MethodPost ||
			!strings.Contains(r.Header.Get("Authorization"), "/bedrock/aws4_request") {
			http.Error(w, `{"message": "bad request"}`, http.StatusBadRequest)
			return
		}
		gotBody, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"completion": "hi there", "stop_reason": "stop"}`))
	}))
	t.Cleanup(srv.Close)
	reg, err := standard.New(integration.Config{Region: "us-east-1", Account: "123456789012",
		Endpoints: map[string]string{"bedrock": srv.URL}})
	require.NoError(t, err)

	for _, body := range []string{`{"prompt": "Hello", "max_tokens": 5}`, `"{\"prompt\": \"Hello\", \"max_tokens\": 5}"`} {
		r := integrationtest.Call(t, reg, res+"bedrock:invokeModel", `{"ModelId": "anthropic.claude-v2", "Body": `+body+`}`)
		require.Nil(t, r.Failure)
		require.Equal(t, `{"Body":{"completion":"hi there","stop_reason":"stop"},"ContentType":"application/json"}`, jsonvalue.String(r.Output))
		require.JSONEq(t, `{"prompt": "Hello", "max_tokens": 5}`, string(gotBody))
	}
}

// apigateway:invoke calls {ApiEndpoint}/{Stage}/{Path} with the query,
// headers and body, and answers the response; a 4xx fails the task as
// ApiGateway.<status>.
func TestAPIGatewayInvoke(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/prod/pets/1" {
			http.Error(w, "no such path", http.StatusNotFound)
			return
		}
		var in map[string]any
		json.NewDecoder(r.Body).Decode(&in)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"method": r.Method, "q": r.URL.Query().Get("k"), "h": r.Header.Get("X-Test"), "in": in})
	}))
	t.Cleanup(srv.Close)
	reg, err := standard.New(integration.Config{Region: "us-east-1", Account: "123456789012", HTTPTaskAllow: []string{"127.0.0.1"}})
	require.NoError(t, err)
	host := strings.TrimPrefix(srv.URL, "http://")

	for _, endpoint := range []string{host, srv.URL} {
		r := integrationtest.Call(t, reg, res+"apigateway:invoke", `{"ApiEndpoint": "`+endpoint+`", "Method": "POST", "Stage": "prod",
			"Path": "pets/1", "QueryParameters": {"k": ["v"]}, "Headers": {"X-Test": ["x"]}, "RequestBody": {"name": "rex"}, "AuthType": "NO_AUTH"}`)
		require.Nil(t, r.Failure)
		require.Equal(t, `{"h":"x","in":{"name":"rex"},"method":"POST","q":"v"}`, jsonvalue.String(integrationtest.Member(t, r.Output, "ResponseBody")))
		require.Equal(t, jsonvalue.Number("200"), integrationtest.Member(t, r.Output, "StatusCode"))
		require.Equal(t, "OK", integrationtest.Member(t, r.Output, "StatusText"))
		require.Equal(t, []any{"application/json"}, integrationtest.Member(t, r.Output, "Headers", "Content-Type"))
	}

	r := integrationtest.Call(t, reg, res+"apigateway:invoke", `{"ApiEndpoint": "`+host+`", "Method": "GET", "Stage": "prod", "Path": "missing"}`)
	require.NotNil(t, r.Failure)
	require.Equal(t, "ApiGateway.404", r.Failure.Name)

	r = integrationtest.Call(t, reg, res+"apigateway:invoke", `{"ApiEndpoint": "`+host+`", "Method": "FETCH"}`)
	require.NotNil(t, r.Failure)
	require.Contains(t, r.Failure.Cause, "'Method'")
}

// apigateway:invoke follows the HTTP Tasks' rules: plain HTTP, or an
// address that is not public, only when the allow list names it, and a
// refusal says how to allow it.
func TestAPIGatewayInvokeEgress(t *testing.T) {
	t.Parallel()
	called := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { called = true }))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	_, port, _ := strings.Cut(host, ":")
	params := func(endpoint string) string {
		return `{"ApiEndpoint": "` + endpoint + `", "Method": "GET", "Stage": "prod", "AuthType": "NO_AUTH"}`
	}

	closed, err := standard.New(integration.Config{Region: "us-east-1", Account: "123456789012"})
	require.NoError(t, err)
	for _, endpoint := range []string{host, srv.URL, "localhost:" + port} {
		r := integrationtest.Call(t, closed, res+"apigateway:invoke", params(endpoint))
		require.NotNil(t, r.Failure, endpoint)
		require.Equal(t, "ApiGateway.RequestFailed", r.Failure.Name)
		require.Contains(t, r.Failure.Cause, "plain HTTP")
		require.Contains(t, r.Failure.Cause, "--http-task-allow")
	}
	// HTTPS to a loopback address is refused at the dial.
	r := integrationtest.Call(t, closed, res+"apigateway:invoke", params("https://"+host))
	require.NotNil(t, r.Failure)
	require.Equal(t, "ApiGateway.RequestFailed", r.Failure.Name)
	require.Contains(t, r.Failure.Cause, "loopback")
	require.Contains(t, r.Failure.Cause, "--http-task-allow 127.0.0.1")
	require.False(t, called, "a refused endpoint is not contacted")

	for _, allow := range []string{"127.0.0.1", "127.0.0.1:" + port, "127.0.0.0/8"} {
		open, err := standard.New(integration.Config{Region: "us-east-1", Account: "123456789012", HTTPTaskAllow: []string{allow}})
		require.NoError(t, err)
		r := integrationtest.Call(t, open, res+"apigateway:invoke", params(host))
		require.Nil(t, r.Failure, "%s: %+v", allow, r.Failure)
		require.Equal(t, jsonvalue.Number("200"), integrationtest.Member(t, r.Output, "StatusCode"))
	}
	other, err := standard.New(integration.Config{Region: "us-east-1", Account: "123456789012", HTTPTaskAllow: []string{"127.0.0.1:1"}})
	require.NoError(t, err)
	r = integrationtest.Call(t, other, res+"apigateway:invoke", params(host))
	require.NotNil(t, r.Failure, "an entry for another port does not allow this one")
}
