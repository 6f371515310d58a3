package lambda

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A function's EventBridge client reaches the server's local bus,
// unless --endpoint events=URL sends events elsewhere.
func TestFunctionEventsEndpointIsTheServer(t *testing.T) {
	t.Parallel()
	env := baseEnv(nil, calls{self: "http://127.0.0.1:8083"})
	require.Contains(t, env, "AWS_ENDPOINT_URL_EVENTS=http://127.0.0.1:8083")
	require.Contains(t, env, "AWS_ENDPOINT_URL_EVENTBRIDGE=http://127.0.0.1:8083")

	env = baseEnv(nil, calls{self: "http://127.0.0.1:8083", endpoints: map[string]string{"events": "http://moto:5000"}})
	require.Contains(t, env, "AWS_ENDPOINT_URL_EVENTS=http://moto:5000")
	require.NotContains(t, env, "AWS_ENDPOINT_URL_EVENTBRIDGE=http://127.0.0.1:8083")
}
