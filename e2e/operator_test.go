package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/stretchr/testify/require"

	"stepwise/internal/testkit/testwait"
)

// The operator controls of the binary, through its API (the stepwise
// verbs): a kill stops a local function's real process and a child
// execution; a hold and a suspend outlive a kill -9 of the server.

// entered reports whether the history of arn has entered state.
func entered(t *testing.T, c *sfn.Client, arn, state string) bool {
	t.Helper()
	h, err := c.GetExecutionHistory(context.Background(), &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(arn), MaxResults: 1000})
	require.NoError(t, err)
	for _, e := range h.Events {
		if d := e.StateEnteredEventDetails; d != nil && aws.ToString(d.Name) == state {
			return true
		}
	}
	return false
}

// A kill of a Task running a local Python function kills its process
// and what it started (its process group): both pids are gone, the
// state fails with the operator's error.
func TestOperatorKillStopsALocalFunctionsProcess(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not on this machine")
	}
	app := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(app, "fn"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(app, "fn", "app.py"), []byte(blockingHandler), 0o644))
	template := filepath.Join(app, "template.yaml")
	require.NoError(t, os.WriteFile(template, []byte(blockingTemplate), 0o644))
	s := startServer(t, filepath.Join(t.TempDir(), "stepwise.db"), "--template", template)
	c := s.client(t)
	dir := t.TempDir()
	arn := startExecution(t, c, smArn("flow"), "kill-me", `{"dir": "`+dir+`"}`)
	testwait.Until(t, func() bool { _, err := os.Stat(filepath.Join(dir, "child")); return err == nil },
		60*time.Second, 20*time.Millisecond, "the handler runs, with its child")
	handler := readPid(t, filepath.Join(dir, "started"))
	child := readPid(t, filepath.Join(dir, "child"))
	t.Cleanup(func() { _ = syscall.Kill(child, syscall.SIGKILL); _ = syscall.Kill(handler, syscall.SIGKILL) })
	require.True(t, alive(handler))
	require.True(t, alive(child))

	out, code := stepwiseCLI(t, "kill", arn, "--state", "Work", "--error", "Ops.Killed", "--cause", "stuck", "--endpoint", s.url())
	require.Equal(t, 0, code, out)
	testwait.Until(t, func() bool { return !alive(handler) }, 10*time.Second, 20*time.Millisecond, "the handler's process is killed")
	testwait.Until(t, func() bool { return !alive(child) }, 10*time.Second, 20*time.Millisecond, "the process it started is killed too")
	done := waitDone(t, c, arn)
	require.Equal(t, types.ExecutionStatusFailed, done.Status)
	require.Equal(t, "Ops.Killed", aws.ToString(done.Error))
	require.Equal(t, "stuck", aws.ToString(done.Cause))
	// The function runs no more for it.
	time.Sleep(500 * time.Millisecond)
	b, err := os.ReadFile(filepath.Join(dir, "started"))
	require.NoError(t, err)
	require.Len(t, strings.Fields(string(b)), 1, "the killed task is not run again")
}

// A kill of a Task that runs a child execution (startExecution.sync:2)
// stops the child: ABORTED; the parent fails with the operator's error.
func TestOperatorKillStopsAChildExecution(t *testing.T) {
	t.Parallel()
	s := startServer(t, filepath.Join(t.TempDir(), "stepwise.db"))
	c := s.client(t)
	child := createMachine(t, c, "child", `{"StartAt": "Sleep", "States": {"Sleep": {"Type": "Wait", "Seconds": 3600, "End": true}}}`)
	parent := createMachine(t, c, "parent", `{"StartAt": "Run", "States": {"Run": {"Type": "Task",
		"Resource": "arn:aws:states:::states:startExecution.sync:2",
		"Parameters": {"StateMachineArn": "`+child+`", "Input": {}}, "End": true}}}`)
	arn := startExecution(t, c, parent, "p-1", `{}`)
	var childArn string
	testwait.Until(t, func() bool {
		l, err := c.ListExecutions(context.Background(), &sfn.ListExecutionsInput{StateMachineArn: aws.String(child)})
		require.NoError(t, err)
		if len(l.Executions) == 1 {
			childArn = aws.ToString(l.Executions[0].ExecutionArn)
		}
		return childArn != ""
	}, 30*time.Second, 20*time.Millisecond, "the child starts")

	out, code := stepwiseCLI(t, "kill", arn, "--state", "Run", "--error", "Ops.Killed", "--endpoint", s.url())
	require.Equal(t, 0, code, out)
	require.Equal(t, types.ExecutionStatusAborted, waitDone(t, c, childArn).Status)
	done := waitDone(t, c, arn)
	require.Equal(t, types.ExecutionStatusFailed, done.Status)
	require.Equal(t, "Ops.Killed", aws.ToString(done.Error))
}

// A held and suspended execution is still so after a kill -9 of the
// server and a restart: it enters nothing until it is resumed and
// released, then completes. The operator log outlives the crash.
func TestOperatorHoldAndSuspendSurviveKill9(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "stepwise.db")
	s := startServer(t, db)
	c := s.client(t)
	sm := createMachine(t, c, "net", `{"StartAt": "Extract", "States": {
		"Extract": {"Type": "Wait", "Seconds": 1, "Next": "Load"},
		"Load": {"Type": "Pass", "Result": {"loaded": true}, "Next": "Report"},
		"Report": {"Type": "Pass", "End": true}}}`)
	arn := startExecution(t, c, sm, "night-1", `{}`)
	cli := func(args ...string) string {
		out, code := stepwiseCLI(t, append(args, "--endpoint", s.url())...)
		require.Equal(t, 0, code, "%v: %s", args, out)
		return out
	}
	cli("hold", arn, "--state", "Load")
	cli("suspend", arn)

	s.kill()
	time.Sleep(1500 * time.Millisecond) // past Extract's end
	s = startServer(t, db)
	c = s.client(t)
	time.Sleep(1500 * time.Millisecond)
	d, err := c.DescribeExecution(context.Background(), &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
	require.NoError(t, err)
	require.Equal(t, types.ExecutionStatusRunning, d.Status)
	require.False(t, entered(t, c, arn, "Load"), "a held, suspended execution enters nothing")
	log := cli("actions", arn)
	require.Regexp(t, `anonymous@127\.0\.0\.1 +Hold +Load`, log)
	require.Regexp(t, `anonymous@127\.0\.0\.1 +Suspend`, log)

	cli("resume", arn)
	time.Sleep(500 * time.Millisecond)
	require.False(t, entered(t, c, arn, "Load"), "resumed, it still waits before the held state")
	cli("release", arn, "--state", "Load")
	done := waitDone(t, c, arn)
	require.Equal(t, types.ExecutionStatusSucceeded, done.Status)
	require.JSONEq(t, `{"loaded": true}`, aws.ToString(done.Output))
}
