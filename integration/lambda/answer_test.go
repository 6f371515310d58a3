//go:build unix

package lambda_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/integration/lambda"
	"stepwise/internal/testkit/testwait"
	"stepwise/jsonvalue"
)

// A handler that exits fails the invoke as Lambda says it: its exit
// status, not the kill that followed.
func TestHandlerExitStatus(t *testing.T) {
	t.Parallel()
	needs(t, "python3")
	dir := handlerDir(t, map[string]string{"app.py": `
import sys
def handler(event, context):
    print("bye", file=sys.stderr)
    sys.exit(event["code"])
`})
	reg := localRegistry(t, nil, 0)
	t.Cleanup(reg.Close)
	require.NoError(t, lambda.LocalOf(reg).Put("quit", &lambda.Handler{Runtime: "python3.12", Dir: dir, Name: "app.handler"}))
	res := run(t, reg, "arn:aws:states:::lambda:invoke", `{"FunctionName": "quit", "Payload": {"code": 3}}`)
	require.NotNil(t, res.Failure)
	require.Equal(t, "Runtime.ExitError", res.Failure.Name)
	cause, err := jsonvalue.ParseString(res.Failure.Cause)
	require.NoError(t, err)
	require.Regexp(t, `^RequestId: [0-9a-f-]{36} Error: Runtime exited with error: exit status 3$`, get(t, cause, "errorMessage"))

	res = run(t, reg, "arn:aws:states:::lambda:invoke", `{"FunctionName": "quit", "Payload": {"code": 0}}`)
	require.NotNil(t, res.Failure)
	require.Equal(t, "Runtime.ExitError", res.Failure.Name)
	require.Contains(t, res.Failure.Cause, "Error: Runtime exited without providing a reason")
}

// A command whose child keeps its standard output open answers when the
// command exits, and the child is killed.
func TestCommandChildLeftRunning(t *testing.T) {
	t.Parallel()
	pidFile := filepath.Join(t.TempDir(), "child")
	reg := localRegistry(t, map[string]string{"bg": `sleep 30 & echo $! > ` + pidFile + `; cat`}, 0)
	t.Cleanup(reg.Close)
	start := time.Now()
	res := run(t, reg, "arn:aws:states:::lambda:invoke", `{"FunctionName": "bg", "Payload": {"n": 1}}`)
	require.Nil(t, res.Failure, "%+v", res.Failure)
	require.Equal(t, `{"n":1}`, jsonvalue.String(get(t, res.Output, "Payload")))
	require.Less(t, time.Since(start), 10*time.Second)
	b, err := os.ReadFile(pidFile)
	require.NoError(t, err)
	pid, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	require.NoError(t, err)
	testwait.Until(t, func() bool { return gone(pid) }, 5*time.Second, 10*time.Millisecond, "the command's child is killed")
}

// An answer over Lambda's 6 MB fails as Lambda's does, whatever runs
// the function.
func TestAnswerTooLarge(t *testing.T) {
	t.Parallel()
	needs(t, "python3")
	dir := handlerDir(t, map[string]string{"app.py": `
def handler(event, context):
    return "x" * event["size"]
`})
	reg := localRegistry(t, map[string]string{"cmd": `head -c 7000000 /dev/zero | tr '\0' 'x'`}, 0)
	t.Cleanup(reg.Close)
	require.NoError(t, lambda.LocalOf(reg).Put("big", &lambda.Handler{Runtime: "python3.12", Dir: dir, Name: "app.handler", Timeout: 20 * time.Second}))
	for _, params := range []string{`{"FunctionName": "big", "Payload": {"size": 7000000}}`, `{"FunctionName": "cmd"}`} {
		res := run(t, reg, "arn:aws:states:::lambda:invoke", params)
		require.NotNil(t, res.Failure, params)
		require.Equal(t, "Function.ResponseSizeTooLarge", res.Failure.Name, params)
		require.Contains(t, res.Failure.Cause, "Response payload size exceeded maximum allowed payload size (6291556 bytes).")
	}
	// One under it is the function's answer (past the payload limit,
	// the task then fails with States.DataLimitExceeded).
	res := run(t, reg, "arn:aws:states:::lambda:invoke", `{"FunctionName": "big", "Payload": {"size": 6000000}}`)
	require.Nil(t, res.Failure, "%+v", res.Failure)
}
