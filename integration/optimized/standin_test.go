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
	reg, err := standard.New(integration.Config{Region: "us-east-1", Account: "123456789012"})
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
