package lambda_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/history"
	"stepwise/integration/lambda"
	"stepwise/internal/testkit/slowtest"
	"stepwise/jsonvalue"
)

// goBootstrap is a provided runtime's bootstrap: a loop on the Lambda
// Runtime API with the standard library alone.
const goBootstrap = `package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

func post(url, errorType, body string) int {
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	if errorType != "" {
		req.Header.Set("Lambda-Runtime-Function-Error-Type", errorType)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	res.Body.Close()
	return res.StatusCode
}

func main() {
	api := "http://" + os.Getenv("AWS_LAMBDA_RUNTIME_API") + "/2018-06-01/runtime"
	if os.Getenv("FAIL_INIT") != "" {
		post(api+"/init/error", "", ` + "`" + `{"errorType": "ConfigMissing", "errorMessage": "no TABLE set", "stackTrace": []}` + "`" + `)
		os.Exit(1)
	}
	if os.Getenv("EXIT_AT_START") != "" {
		fmt.Fprintln(os.Stderr, "cannot start")
		os.Exit(4)
	}
	calls := 0
	for {
		res, err := http.Get(api + "/invocation/next")
		if err != nil {
			os.Exit(2)
		}
		event, _ := io.ReadAll(res.Body)
		res.Body.Close()
		id := res.Header.Get("Lambda-Runtime-Aws-Request-Id")
		calls++
		var in struct{ Op string }
		json.Unmarshal(event, &in)
		switch in.Op {
		case "fail":
			post(api+"/invocation/"+id+"/error", "", ` + "`" + `{"errorType": "OrderGone", "errorMessage": "the order is gone", "stackTrace": ["main.go:1"]}` + "`" + `)
		case "header":
			post(api+"/invocation/"+id+"/error", "Custom.FromHeader", ` + "`" + `{"errorMessage": "typed by its header"}` + "`" + `)
		case "sleep":
			time.Sleep(time.Minute)
		case "big":
			code := post(api+"/invocation/"+id+"/response", "", "\"" + strings.Repeat("x", 7<<20) + "\"")
			fmt.Fprintln(os.Stderr, "the big response got", code)
		default:
			wrongID := post(api+"/invocation/not-this-one/response", "", "1")
			wd, _ := os.Getwd()
			out, _ := json.Marshal(map[string]any{
				"event": json.RawMessage(event), "calls": calls, "request": id, "wrongIdStatus": wrongID,
				"deadline": res.Header.Get("Lambda-Runtime-Deadline-Ms"), "arn": res.Header.Get("Lambda-Runtime-Invoked-Function-Arn"),
				"trace": res.Header.Get("Lambda-Runtime-Trace-Id"), "clientContext": res.Header.Get("Lambda-Runtime-Client-Context"),
				"handler": os.Getenv("_HANDLER"), "name": os.Getenv("AWS_LAMBDA_FUNCTION_NAME"),
				"version": os.Getenv("AWS_LAMBDA_FUNCTION_VERSION"), "memory": os.Getenv("AWS_LAMBDA_FUNCTION_MEMORY_SIZE"),
				"root": os.Getenv("LAMBDA_TASK_ROOT"), "cwd": wd, "region": os.Getenv("AWS_REGION"), "table": os.Getenv("TABLE"),
			})
			if code := post(api+"/invocation/"+id+"/response", "", string(out)); code != 202 {
				fmt.Fprintln(os.Stderr, "the response got", code)
				os.Exit(5)
			}
		}
	}
}
`

// buildBootstrap builds goBootstrap into a new folder.
func buildBootstrap(t testing.TB) string {
	t.Helper()
	return buildBootstrapOf(t, goBootstrap)
}

// buildBootstrapOf builds a bootstrap's Go source into a new folder.
func buildBootstrapOf(t testing.TB, source string) string {
	t.Helper()
	slowtest.Require(t, "a provided runtime's bootstrap is built and run")
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go tool is not on PATH: the test builds a bootstrap")
	}
	src := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(src, "main.go"), []byte(source), 0o644))
	dir := t.TempDir()
	cmd := exec.Command(goTool, "build", "-o", filepath.Join(dir, "bootstrap"), "main.go")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=", "GO111MODULE=on", "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	return dir
}

// A provided runtime's bootstrap serves invokes through the Runtime API,
// warm, with Lambda's environment; its errors are named after their
// errorType (or the header's), a response over 6 MB fails the invoke,
// an invoke past the timeout kills the process, an init error and a
// bootstrap that exits fail the invoke.
func TestProvidedRuntime(t *testing.T) {
	t.Parallel()
	dir := buildBootstrap(t)
	reg := localRegistry(t, map[string]string{"go": "provided:" + dir + ":my.handler"}, 0)
	t.Cleanup(reg.Close)
	local := lambda.LocalOf(reg)
	for i := 1; i <= 2; i++ {
		res := run(t, reg, "arn:aws:states:::lambda:invoke", `{"FunctionName": "go", "Payload": {"n": 7}, "ClientContext": "{\"custom\": {\"k\": \"v\"}}"}`)
		require.Nil(t, res.Failure, "%+v", res.Failure)
		p := get(t, res.Output, "Payload")
		require.Equal(t, `{"n":7}`, jsonvalue.String(get(t, p, "event")))
		require.Equal(t, jsonvalue.NumberFromInt(int64(i)), get(t, p, "calls"), "the process is warm")
		require.Equal(t, get(t, res.Output, "SdkResponseMetadata", "RequestId"), get(t, p, "request"))
		require.Equal(t, jsonvalue.NumberFromInt(400), get(t, p, "wrongIdStatus"), "an answer to another invocation is refused")
		require.Equal(t, "arn:aws:lambda:us-east-1:123456789012:function:go", get(t, p, "arn"))
		require.Contains(t, get(t, p, "trace"), "Root=1-")
		require.Equal(t, `{"custom": {"k": "v"}}`, get(t, p, "clientContext"))
		deadline, err := jsonvalue.ParseString(get(t, p, "deadline").(string))
		require.NoError(t, err)
		ms, _ := deadline.(jsonvalue.Number).Int64()
		require.Greater(t, ms, time.Now().Add(-time.Minute).UnixMilli())
		for key, want := range map[string]string{"handler": "my.handler", "name": "go", "version": "$LATEST", "memory": "128",
			"root": dir, "cwd": dir, "region": "us-east-1"} {
			require.Equal(t, want, get(t, p, key), key)
		}
	}

	res := run(t, reg, "arn:aws:lambda:us-east-1:123456789012:function:go", `{"op": "fail"}`)
	require.Equal(t, "OrderGone", res.Failure.Name)
	require.JSONEq(t, `{"errorType": "OrderGone", "errorMessage": "the order is gone", "stackTrace": ["main.go:1"]}`, res.Failure.Cause)
	res = run(t, reg, "arn:aws:lambda:us-east-1:123456789012:function:go", `{"op": "header"}`)
	require.Equal(t, "Custom.FromHeader", res.Failure.Name, "the error type of the header, when the body has none")
	res = run(t, reg, "arn:aws:lambda:us-east-1:123456789012:function:go", `{"op": "big"}`)
	require.Equal(t, "Function.ResponseSizeTooLarge", res.Failure.Name)
	require.Contains(t, res.Failure.Cause, "Response payload size exceeded maximum allowed payload size (6291556 bytes).")
	res = run(t, reg, "arn:aws:lambda:us-east-1:123456789012:function:go", `{}`)
	require.Nil(t, res.Failure)
	require.Equal(t, jsonvalue.NumberFromInt(6), get(t, res.Output, "calls"), "errors keep the process")

	require.NoError(t, local.Put("go", &lambda.Handler{Runtime: "provided.al2023", Dir: dir, Timeout: time.Second, MemoryMB: 1024,
		Env: map[string]string{"TABLE": "Orders"}}))
	res = run(t, reg, "arn:aws:lambda:us-east-1:123456789012:function:go", `{}`)
	require.Nil(t, res.Failure)
	require.Equal(t, jsonvalue.NumberFromInt(1), get(t, res.Output, "calls"), "a replaced function starts cold")
	require.Equal(t, "Orders", get(t, res.Output, "table"))
	require.Equal(t, "1024", get(t, res.Output, "memory"))
	res = run(t, reg, "arn:aws:lambda:us-east-1:123456789012:function:go", `{"op": "sleep"}`)
	require.Equal(t, "Sandbox.Timedout", res.Failure.Name)
	require.Contains(t, res.Failure.Cause, "Task timed out after 1.00 seconds")
	res = run(t, reg, "arn:aws:lambda:us-east-1:123456789012:function:go", `{}`)
	require.Nil(t, res.Failure)
	require.Equal(t, jsonvalue.NumberFromInt(1), get(t, res.Output, "calls"), "the timed out process was stopped: a new one serves")

	require.NoError(t, local.Put("init", &lambda.Handler{Runtime: lambda.RuntimeProvided, Dir: dir, Env: map[string]string{"FAIL_INIT": "1"}}))
	res = run(t, reg, "arn:aws:lambda:us-east-1:123456789012:function:init", `{}`)
	require.Equal(t, "ConfigMissing", res.Failure.Name)
	require.Contains(t, res.Failure.Cause, "no TABLE set")
	require.NoError(t, local.Put("exits", &lambda.Handler{Runtime: lambda.RuntimeProvided, Dir: dir, Env: map[string]string{"EXIT_AT_START": "1"}}))
	res = run(t, reg, "arn:aws:lambda:us-east-1:123456789012:function:exits", `{}`)
	require.Equal(t, "Runtime.ExitError", res.Failure.Name)
	require.Contains(t, res.Failure.Cause, "Error: Runtime exited with error: exit status 4", "as Lambda words it; what it printed is the log's")
}

// A provided runtime's error is caught by its errorType in an execution.
func TestProvidedErrorCaughtByName(t *testing.T) {
	t.Parallel()
	dir := buildBootstrap(t)
	reg := localRegistry(t, map[string]string{"go": "provided:" + dir + ":h"}, 0)
	t.Cleanup(reg.Close)
	row := execute(t, reg, `{
		"StartAt": "Ship",
		"States": {
			"Ship": {"Type": "Task", "Resource": "arn:aws:lambda:us-east-1:123456789012:function:go",
				"Catch": [
					{"ErrorEquals": ["SomethingElse"], "Next": "Wrong"},
					{"ErrorEquals": ["OrderGone"], "ResultPath": "$.error", "Next": "Caught"}],
				"End": true},
			"Wrong": {"Type": "Fail", "Error": "Wrong"},
			"Caught": {"Type": "Pass", "End": true}
		}}`, `{"op": "fail"}`)
	require.Equal(t, history.StatusSucceeded, row.Status)
	out, err := jsonvalue.ParseString(*row.Output)
	require.NoError(t, err)
	require.Equal(t, "OrderGone", get(t, out, "error", "Error"))
}

// A bootstrap may be a shell script calling the Runtime API with curl.
func TestProvidedShellBootstrap(t *testing.T) {
	t.Parallel()
	slowtest.Require(t, "a provided runtime's bootstrap is run")
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed: the shell bootstrap calls the Runtime API with it")
	}
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "bootstrap"), []byte(`#!/bin/sh
set -eu
api="http://${AWS_LAMBDA_RUNTIME_API}/2018-06-01/runtime"
headers="$(mktemp)"
while true; do
  event="$(curl -sS -D "$headers" "$api/invocation/next")"
  id="$(grep -i '^Lambda-Runtime-Aws-Request-Id:' "$headers" | cut -d: -f2 | tr -d '[:space:]')"
  curl -sS -o /dev/null -X POST "$api/invocation/$id/response" -d "{\"got\": $event, \"handler\": \"$_HANDLER\"}"
done
`), 0o755))
	reg := localRegistry(t, map[string]string{"sh": "provided:" + dir + ":function.sh"}, 0)
	t.Cleanup(reg.Close)
	for range 2 {
		res := run(t, reg, "arn:aws:lambda:us-east-1:123456789012:function:sh", `{"n": [1, 2]}`)
		require.Nil(t, res.Failure, "%+v", res.Failure)
		require.JSONEq(t, `{"got": {"n": [1, 2]}, "handler": "function.sh"}`, jsonvalue.String(res.Output))
	}
}

// The Runtime API answers only calls to the loopback address it listens
// on by name (127.0.0.1, localhost, [::1] and its port): a page of
// another host that reached it (DNS rebinding) is refused, neither
// handed an event nor let answer one.
func TestRuntimeAPIHostChecked(t *testing.T) {
	t.Parallel()
	slowtest.Require(t, "a provided runtime's bootstrap is run")
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed: the shell bootstrap calls the Runtime API with it")
	}
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "bootstrap"), []byte(`#!/bin/sh
set -eu
api="http://${AWS_LAMBDA_RUNTIME_API}/2018-06-01/runtime"
port="${AWS_LAMBDA_RUNTIME_API##*:}"
headers="$(mktemp)"
while true; do
  event="$(curl -sS -D "$headers" "$api/invocation/next")"
  id="$(grep -i '^Lambda-Runtime-Aws-Request-Id:' "$headers" | cut -d: -f2 | tr -d '[:space:]')"
  next="$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 -H "Host: evil.example:$port" "$api/invocation/next" || true)"
  answer="$(curl -s -o /dev/null -w '%{http_code}' -H "Host: evil.example:$port" -X POST "$api/invocation/$id/response" -d '"forged"' || true)"
  other="$(curl -s -o /dev/null -w '%{http_code}' -H "Host: 127.0.0.1:1$port" -X POST "$api/invocation/$id/response" -d '"forged"' || true)"
  curl -sS -o /dev/null -H "Host: localhost:$port" -X POST "$api/invocation/$id/response" -d "{\"next\": \"$next\", \"answer\": \"$answer\", \"other\": \"$other\"}"
done
`), 0o755))
	reg := localRegistry(t, map[string]string{"sh": "provided:" + dir + ":function.sh"}, 0)
	t.Cleanup(reg.Close)
	res := run(t, reg, "arn:aws:lambda:us-east-1:123456789012:function:sh", `{}`)
	require.Nil(t, res.Failure, "%+v", res.Failure)
	require.JSONEq(t, `{"next": "403", "answer": "403", "other": "403"}`, jsonvalue.String(res.Output))
}
