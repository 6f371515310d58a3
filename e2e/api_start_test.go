package e2e

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/stretchr/testify/require"
)

// TestAPIStartExample deploys examples/api-start as its README says and
// posts an order to its API, on the local API port: the order's
// execution starts, prices it with the function and ends with the
// README's output; an order the function cannot price fails.
func TestAPIStartExample(t *testing.T) {
	apiAddr := freeAddr(t)
	s := startServer(t, filepath.Join(t.TempDir(), "stepwise.db"), "--api-addr", apiAddr)
	c := s.client(t)
	template := filepath.Join("..", "examples", "api-start", "template.yaml")
	out, code := stepwiseCLI(t, "deploy", template, "--endpoint", s.url())
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "stack api-start")
	require.Contains(t, out, "ServerlessRestApi http://"+apiAddr+"/Prod/ (POST /orders)")

	post := func(body string) string {
		status, answer := call(t, http.MethodPost, "http://"+apiAddr+"/Prod/orders", body)
		require.Equal(t, http.StatusOK, status, answer)
		var started struct {
			ExecutionArn string  `json:"executionArn"`
			StartDate    float64 `json:"startDate"`
		}
		require.NoError(t, json.Unmarshal([]byte(answer), &started), answer)
		require.Regexp(t, `^arn:aws:states:us-east-1:123456789012:execution:api-start-orders:[0-9a-f-]{36}$`, started.ExecutionArn)
		require.NotZero(t, started.StartDate)
		return started.ExecutionArn
	}
	done := waitDone(t, c, post(`{"item": "book", "qty": 3}`))
	require.Equal(t, "SUCCEEDED", string(done.Status), aws.ToString(done.Cause))
	require.JSONEq(t, `{"item": "book", "qty": 3, "total": 36, "status": "PRICED"}`, aws.ToString(done.Output))

	done = waitDone(t, c, post(`{"item": "kite", "qty": 1}`))
	require.Equal(t, "FAILED", string(done.Status))
	require.Contains(t, aws.ToString(done.Cause), "no price for kite")
}
