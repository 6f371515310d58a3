package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/stretchr/testify/require"

	"stepwise/internal/testkit/testwait"
)

// A handler that blocks on its first run, with a child, and answers how
// many times it ran.
const blockingHandler = `
import os, subprocess, time

def handler(event, context):
    d = event["dir"]
    first = not os.path.exists(os.path.join(d, "started"))
    with open(os.path.join(d, "started"), "a") as f:
        f.write("%d\n" % os.getpid())
    if first:
        child = subprocess.Popen(["sleep", "120"])
        with open(os.path.join(d, "child.tmp"), "w") as f:
            f.write(str(child.pid))
        os.rename(os.path.join(d, "child.tmp"), os.path.join(d, "child"))
        time.sleep(120)
    with open(os.path.join(d, "started")) as f:
        return {"runs": len(f.read().split())}
`

const blockingTemplate = `AWSTemplateFormatVersion: "2010-09-09"
Transform: AWS::Serverless-2016-10-31
Resources:
  Work:
    Type: AWS::Serverless::Function
    Properties:
      FunctionName: work
      CodeUri: fn/
      Handler: app.handler
      Runtime: python3.12
      Timeout: 300
  Flow:
    Type: AWS::Serverless::StateMachine
    Properties:
      Name: flow
      Definition:
        StartAt: Work
        States:
          Work:
            Type: Task
            Resource: arn:aws:states:::lambda:invoke
            Parameters:
              FunctionName: !Ref Work
              Payload.$: "$"
            ResultSelector:
              runs.$: $.Payload.runs
            End: true
`

// alive tells a process that runs (not a zombie).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i >= 0 && !strings.HasPrefix(strings.TrimSpace(string(b[i+1:])), "Z")
}

func readPid(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	require.NoError(t, err)
	return pid
}

// TestFunctionsSurviveKill kills the server (SIGKILL) while a template's
// function serves invokes: the handlers die with it, the children they
// started are killed when it starts again, and the re-dispatched tasks
// run on the local function (never the Lambda API), so every execution
// succeeds — with the template deployed by `stepwise deploy` and by
// `serve --template`.
func TestFunctionsSurviveKill(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not on this machine")
	}
	for _, how := range []string{"deploy", "template"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			app := t.TempDir()
			require.NoError(t, os.MkdirAll(filepath.Join(app, "fn"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(app, "fn", "app.py"), []byte(blockingHandler), 0o644))
			template := filepath.Join(app, "template.yaml")
			require.NoError(t, os.WriteFile(template, []byte(blockingTemplate), 0o644))
			db := filepath.Join(t.TempDir(), "stepwise.db")
			var args []string
			if how == "template" {
				args = []string{"--template", template}
			}
			s := startServer(t, db, args...)
			if how == "deploy" {
				out, code := stepwiseCLI(t, "deploy", template, "--endpoint", s.url())
				require.Equal(t, 0, code, out)
			}
			c := s.client(t)
			ctx := context.Background()

			const n = 6
			dirs := make([]string, n)
			arns := make([]string, n)
			for i := range n {
				dirs[i] = t.TempDir()
				started, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smArn("flow")),
					Input: aws.String(fmt.Sprintf(`{"dir": %q}`, dirs[i]))})
				require.NoError(t, err)
				arns[i] = aws.ToString(started.ExecutionArn)
			}
			for _, d := range dirs {
				testwait.Until(t, func() bool { _, err := os.Stat(filepath.Join(d, "child")); return err == nil },
					60*time.Second, 20*time.Millisecond, "every handler runs, with its child")
			}
			handlers := make([]int, n)
			children := make([]int, n)
			for i, d := range dirs {
				handlers[i] = readPid(t, filepath.Join(d, "started"))
				children[i] = readPid(t, filepath.Join(d, "child"))
				t.Cleanup(func() { _ = syscall.Kill(children[i], syscall.SIGKILL) })
			}

			s.kill()
			for _, pid := range handlers {
				testwait.Until(t, func() bool { return !alive(pid) }, 10*time.Second, 20*time.Millisecond,
					"a handler dies with the server")
			}
			for _, pid := range children {
				require.True(t, alive(pid), "a handler's child lives on until the server starts again")
			}

			s = startServer(t, db, args...)
			for _, pid := range children {
				testwait.Until(t, func() bool { return !alive(pid) }, 10*time.Second, 20*time.Millisecond,
					"the server starting kills what a dead one's functions left")
			}
			c = s.client(t)
			for _, arn := range arns {
				done := waitDone(t, c, arn)
				require.Equal(t, "SUCCEEDED", string(done.Status), "%s: %s", aws.ToString(done.Error), aws.ToString(done.Cause))
				require.JSONEq(t, `{"runs": 2}`, aws.ToString(done.Output), "the task ran again, on the local function")
			}
			require.NotContains(t, s.stderr.String(), "Lambda.SdkClientException")
		})
	}
}
