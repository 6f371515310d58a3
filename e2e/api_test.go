package e2e

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/stretchr/testify/require"
)

// freeAddr is a loopback address no one listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// call sends a request to a served API and returns its status and body.
func call(t *testing.T, method, url, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, string(b)
}

// TestAPIRoutesServedLocally deploys a SAM app of API routes and calls
// them on the server's API listener (--api-addr): a Python function
// behind an Api event (path parameter, query string, with and without
// the stage), an HttpApi event (payload format 2.0), a state machine
// started by an Api event, an OpenAPI StartSyncExecution integration, a
// failing function (502); then again after a restart.
func TestAPIRoutesServedLocally(t *testing.T) {
	db := filepath.Join(t.TempDir(), "stepwise.db")
	apiAddr := freeAddr(t)
	s := startServer(t, db, "--api-addr", apiAddr)
	c := s.client(t)
	template := filepath.Join("testdata", "api-sam", "template.yaml")
	out, code := stepwiseCLI(t, "deploy", template, "--endpoint", s.url(), "--stack-name", "apis")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "APIs served locally:")
	require.Contains(t, out, "ServerlessRestApi http://"+apiAddr+"/Prod/ (GET /boom, GET /hello/{name}, POST /orders)")
	require.Contains(t, out, "ServerlessHttpApi http://"+apiAddr+"/ (POST /items/{id})")
	require.Contains(t, out, "SyncApi http://"+apiAddr+"/v1/ (POST /greet)")
	require.NotContains(t, out, "event source")
	require.NotContains(t, out, "not served")
	base := "http://" + apiAddr

	check := func() {
		status, body := call(t, "GET", base+"/Prod/hello/ann?lang=fr", "")
		require.Equal(t, 200, status, body)
		require.JSONEq(t, `{"hello": "ann", "q": {"lang": "fr"}, "stage": "Prod"}`, body)
		status, body = call(t, "GET", base+"/hello/bob", "")
		require.Equal(t, 200, status, body)
		require.JSONEq(t, `{"hello": "bob", "q": null, "stage": "Prod"}`, body)

		status, body = call(t, "POST", base+"/items/7?a=1&a=2", `{"n": 1}`)
		require.Equal(t, 200, status, body)
		require.JSONEq(t, `{"v": 2, "id": "7", "body": "{\"n\": 1}", "q": {"a": "1,2"}, "route": "POST /items/{id}"}`, body)

		status, body = call(t, "GET", base+"/Prod/boom", "")
		require.Equal(t, http.StatusBadGateway, status)
		require.JSONEq(t, `{"message": "Internal server error"}`, body)

		status, body = call(t, "POST", base+"/Prod/orders", `{"item": "O'Brien's book", "qty": 2}`)
		require.Equal(t, 200, status, body)
		var started struct {
			ExecutionArn string  `json:"executionArn"`
			StartDate    float64 `json:"startDate"`
		}
		require.NoError(t, json.Unmarshal([]byte(body), &started), body)
		require.Contains(t, started.ExecutionArn, ":execution:api-orders:")
		require.NotZero(t, started.StartDate)
		done := waitDone(t, c, started.ExecutionArn)
		require.Equal(t, "SUCCEEDED", string(done.Status))
		require.JSONEq(t, `{"item": "O'Brien's book", "qty": 2}`, aws.ToString(done.Output))

		status, body = call(t, "POST", base+"/v1/greet", `{"name": "ann"}`)
		require.Equal(t, 200, status, body)
		var sync struct{ Status, Output string }
		require.NoError(t, json.Unmarshal([]byte(body), &sync), body)
		require.Equal(t, "SUCCEEDED", sync.Status, body)
		require.JSONEq(t, `{"greeting": "hello ann"}`, sync.Output)
	}
	check()

	// A server started again serves what was deployed.
	s.stop(t)
	s = startServer(t, db, "--api-addr", apiAddr)
	c = s.client(t)
	check()

	// Deleted, the routes are gone.
	out, code = stepwiseCLI(t, "deploy", template, "--endpoint", s.url(), "--stack-name", "apis", "--delete")
	require.Equal(t, 0, code, out)
	status, body := call(t, "GET", base+"/Prod/hello/ann", "")
	require.Equal(t, http.StatusForbidden, status, body)
}

// TestRawAPIsServedLocally deploys APIs of raw CloudFormation and calls
// them: a REST API shaped as CDK's LambdaRestApi (RestApi, a {proxy+}
// Resource, ANY Methods, a Deployment and its Stage) answered by a
// Python function on the API listener; an ApiGatewayV2 HTTP API whose
// route starts an execution (StepFunctions-StartExecution); and a state
// machine whose apigateway:invoke Task calls a SAM API deployed here by
// its execute-api host name, with no --http-task-allow.
func TestRawAPIsServedLocally(t *testing.T) {
	db := filepath.Join(t.TempDir(), "stepwise.db")
	apiAddr := freeAddr(t)
	s := startServer(t, db, "--api-addr", apiAddr)
	c := s.client(t)
	template := filepath.Join("testdata", "api-raw", "template.yaml")
	out, code := stepwiseCLI(t, "deploy", template, "--endpoint", s.url(), "--stack-name", "raw")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "Endpoint8024A810 http://"+apiAddr+"/prod/ (ANY /, ANY /{proxy+})")
	require.Contains(t, out, "Http http://"+apiAddr+"/ (POST /orders)")
	require.Contains(t, out, "GreetApi http://"+apiAddr+"/v1/ (GET /greet/{name})")
	require.NotContains(t, out, "event source")
	require.NotContains(t, out, "not served")
	base := "http://" + apiAddr

	status, body := call(t, "GET", base+"/prod/books/7", "")
	require.Equal(t, 200, status, body)
	require.JSONEq(t, `{"path": "/books/7", "proxy": "books/7", "stage": "prod", "method": "GET"}`, body)
	status, body = call(t, "DELETE", base+"/prod/", "")
	require.Equal(t, 200, status, body)
	require.JSONEq(t, `{"path": "/", "proxy": null, "stage": "prod", "method": "DELETE"}`, body)

	status, body = call(t, "POST", base+"/orders", `{"item": "book"}`)
	require.Equal(t, 200, status, body)
	var started struct{ ExecutionArn string }
	require.NoError(t, json.Unmarshal([]byte(body), &started), body)
	require.Contains(t, started.ExecutionArn, ":execution:raw-orders:")
	done := waitDone(t, c, started.ExecutionArn)
	require.Equal(t, "SUCCEEDED", string(done.Status))
	require.JSONEq(t, `{"item": "book"}`, aws.ToString(done.Output))

	exec, err := c.StartExecution(t.Context(), &sfn.StartExecutionInput{StateMachineArn: aws.String(smArn("raw-caller")), Input: aws.String(`{"name": "ann"}`)})
	require.NoError(t, err)
	done = waitDone(t, c, aws.ToString(exec.ExecutionArn))
	require.Equal(t, "SUCCEEDED", string(done.Status), aws.ToString(done.Cause))
	require.JSONEq(t, `{"Status": 200, "Body": {"greeting": "hello ann"}}`, aws.ToString(done.Output))
}
