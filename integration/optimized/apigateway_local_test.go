package optimized_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/integration"
	"stepwise/integration/integrationtest"
	"stepwise/integration/standard"
	"stepwise/jsonvalue"
)

// An ApiEndpoint {apiId}.execute-api.{region}.amazonaws.com of an API
// the server serves goes to its own listener, its stage and path, with
// no allow list (none is given here) and unsigned; $default is no
// path segment.
func TestAPIGatewayInvokeLocalAPI(t *testing.T) {
	t.Parallel()
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths = append(paths, r.URL.Path)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"auth": "` + r.Header.Get("Authorization") + `"}`))
	}))
	t.Cleanup(srv.Close)
	reg, err := standard.New(integration.Config{Region: "us-east-1", Account: "123456789012"})
	require.NoError(t, err)
	reg.SetLocalAPIs(func(id string) (string, bool) { return srv.URL, id == "a1b2c3d4e5" })

	r := integrationtest.Call(t, reg, res+"apigateway:invoke", `{"ApiEndpoint": "a1b2c3d4e5.execute-api.us-east-1.amazonaws.com",
		"Method": "GET", "Stage": "prod", "Path": "/pets/1", "AuthType": "IAM_ROLE"}`)
	require.Nil(t, r.Failure)
	require.Equal(t, `{"auth":""}`, jsonvalue.String(integrationtest.Member(t, r.Output, "ResponseBody")))
	r = integrationtest.Call(t, reg, res+"apigateway:invoke", `{"ApiEndpoint": "https://A1B2C3D4E5.execute-api.eu-west-1.amazonaws.com/",
		"Method": "POST", "Stage": "$default", "Path": "orders"}`)
	require.Nil(t, r.Failure)
	require.Equal(t, []string{"/prod/pets/1", "/orders"}, paths)

	// Another API's endpoint keeps the HTTP Tasks' rules.
	r = integrationtest.Call(t, reg, res+"apigateway:invoke", `{"ApiEndpoint": "http://a1b2c3d4e5.execute-api.us-east-1.amazonaws.com", "Method": "GET"}`)
	require.NotNil(t, r.Failure)
	require.Contains(t, r.Failure.Cause, "plain HTTP")
	require.Len(t, paths, 2)
}
