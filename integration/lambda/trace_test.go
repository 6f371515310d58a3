package lambda_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/engine/task"
	"stepwise/integration"
	"stepwise/interp"
	"stepwise/jsonvalue"
)

const traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
const xray = "Root=1-0af76519-16cd43dd8448eb211c80319c;Parent=b7ad6b7169203331;Sampled=1"

// runTraced runs a task whose span's traceparent is tp.
func runTraced(t *testing.T, reg *integration.Registry, resource, params, tp string) task.Result {
	t.Helper()
	p, err := jsonvalue.ParseString(params)
	require.NoError(t, err)
	ch := make(chan task.Result, 1)
	reg.Run(context.Background(), &task.Task{ExecutionArn: "arn:x", ID: "t1", TraceParent: tp, Request: &interp.TaskRequest{Resource: resource, Parameters: p}},
		func(r task.Result) { ch <- r })
	select {
	case r := <-ch:
		return r
	case <-time.After(60 * time.Second):
		t.Fatal("no result")
		return task.Result{}
	}
}

// A local command gets its task's trace in _X_AMZN_TRACE_ID and
// TRACEPARENT; without a trace, neither is set.
func TestCommandGetsTrace(t *testing.T) {
	reg := localRegistry(t, map[string]string{"env": `printf '{"x":"%s","w":"%s"}' "$_X_AMZN_TRACE_ID" "$TRACEPARENT"`}, 0)
	t.Setenv("_X_AMZN_TRACE_ID", "")
	res := runTraced(t, reg, "arn:aws:lambda:us-east-1:123456789012:function:env", `{}`, traceparent)
	require.Nil(t, res.Failure)
	require.Equal(t, xray, get(t, res.Output, "x"))
	require.Equal(t, traceparent, get(t, res.Output, "w"))
	res = runTraced(t, reg, "arn:aws:lambda:us-east-1:123456789012:function:env", `{}`, "")
	require.Nil(t, res.Failure)
	require.Equal(t, "", get(t, res.Output, "w"))
}

// A Python handler finds its invocation's trace in its environment, as
// on Lambda; the next invocation's own (none) replaces it.
func TestHandlerGetsTrace(t *testing.T) {
	t.Parallel()
	needs(t, "python3")
	dir := handlerDir(t, map[string]string{"app.py": `
import os
def trace(event, context):
    return {"x": os.environ.get("_X_AMZN_TRACE_ID"), "w": os.environ.get("TRACEPARENT")}
`})
	reg := localRegistry(t, map[string]string{"trace": "python:" + dir + ":app.trace"}, 0)
	t.Cleanup(reg.Close)
	res := runTraced(t, reg, "arn:aws:lambda:us-east-1:123456789012:function:trace", `{}`, traceparent)
	require.Nil(t, res.Failure, "%+v", res.Failure)
	require.Equal(t, xray, get(t, res.Output, "x"))
	require.Equal(t, traceparent, get(t, res.Output, "w"))
	res = runTraced(t, reg, "arn:aws:lambda:us-east-1:123456789012:function:trace", `{}`, "")
	require.Nil(t, res.Failure)
	require.Nil(t, get(t, res.Output, "w"))
}

// An Invoke sent to Lambda carries the task's trace as X-Amzn-Trace-Id,
// as AWS services pass X-Ray's trace on.
func TestInvokeCarriesTraceHeader(t *testing.T) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Get("X-Amzn-Trace-Id"))
		mu.Unlock()
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	t.Cleanup(srv.Close)
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	reg, err := integration.New(integration.Config{Region: "us-east-1", Account: "123456789012", Endpoints: map[string]string{"lambda": srv.URL}})
	require.NoError(t, err)
	res := runTraced(t, reg, "arn:aws:states:::lambda:invoke", `{"FunctionName": "remote", "Payload": {}}`, traceparent)
	require.Nil(t, res.Failure, "%+v", res.Failure)
	res = runTraced(t, reg, "arn:aws:states:::lambda:invoke", `{"FunctionName": "remote", "Payload": {}}`, "")
	require.Nil(t, res.Failure, "%+v", res.Failure)
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, []string{xray, ""}, got)
}

// A provided runtime's bootstrap gets its invocation's trace in
// Lambda-Runtime-Trace-Id, X-Ray's form of the task's span.
func TestProvidedRuntimeGetsTrace(t *testing.T) {
	t.Parallel()
	dir := buildBootstrap(t)
	reg := localRegistry(t, map[string]string{"go": "provided:" + dir + ":my.handler"}, 0)
	t.Cleanup(reg.Close)
	res := runTraced(t, reg, "arn:aws:states:::lambda:invoke", `{"FunctionName": "go", "Payload": {"n": 1}}`, traceparent)
	require.Nil(t, res.Failure, "%+v", res.Failure)
	require.Equal(t, xray, get(t, res.Output, "Payload", "trace"))
}
