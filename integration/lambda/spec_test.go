package lambda_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/history"
	"stepwise/integration/lambda"
)

// A --function handler's folder may be relative to the working
// directory, and its timeout given after an '@'; without one it is 15
// minutes.
func TestHandlerSpecFolderAndTimeout(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cwd, err := os.Getwd()
	require.NoError(t, err)
	rel, err := filepath.Rel(cwd, dir)
	require.NoError(t, err)
	require.False(t, filepath.IsAbs(rel))

	h, ok, err := lambda.ParseHandler("python:" + rel + ":app.handler@900s")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, dir, h.Dir, "read from the working directory")
	require.Equal(t, "app.handler", h.Name)
	require.Equal(t, 900*time.Second, h.Timeout)

	h, _, err = lambda.ParseHandler("node:" + rel + ":index.handler")
	require.NoError(t, err)
	require.Equal(t, time.Duration(0), h.Timeout, "the default")
	require.Equal(t, 15*time.Minute, lambda.DefaultTimeout)
}

// A Task's TimeoutSeconds bounds a handler's invoke that its own
// timeout would let run on.
func TestHandlerBoundByTheTasksTimeout(t *testing.T) {
	t.Parallel()
	needs(t, "python3")
	dir := handlerDir(t, map[string]string{"app.py": pyHandlers})
	reg := localRegistry(t, map[string]string{"slow": "python:" + dir + ":app.slow"}, 0)
	start := time.Now()
	row := execute(t, reg, `{
		"StartAt": "Slow",
		"States": {
			"Slow": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke",
				"Parameters": {"FunctionName": "slow"}, "TimeoutSeconds": 2, "End": true}
		}}`, `{}`)
	require.Equal(t, history.StatusFailed, row.Status)
	require.Equal(t, "States.Timeout", *row.Error)
	require.Less(t, time.Since(start), 20*time.Second)
}
