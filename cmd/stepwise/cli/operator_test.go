package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/stretchr/testify/require"

	"stepwise/internal/testkit/testwait"
	"stepwise/server/servertest"
)

// TestOperatorVerbs: hold, suspend, resume, release, skip, kill and
// actions act on a real server's executions; bad usage is exit 2 and
// told before the server is asked, the server's refusals exit 1 in its
// words.
func TestOperatorVerbs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := servertest.New(t)
	act, err := s.SFN.CreateActivity(ctx, &sfn.CreateActivityInput{Name: aws.String("load")})
	require.NoError(t, err)
	sm, err := s.SFN.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("nightly"), RoleArn: aws.String("arn:aws:iam::123456789012:role/r"),
		Definition: aws.String(`{"StartAt": "W", "States": {"W": {"Type": "Wait", "Seconds": 1, "Next": "Load"},
			"Load": {"Type": "Task", "Resource": "` + aws.ToString(act.ActivityArn) + `", "End": true}}}`)})
	require.NoError(t, err)
	start := func() string {
		x, err := s.SFN.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: sm.StateMachineArn})
		require.NoError(t, err)
		return aws.ToString(x.ExecutionArn)
	}
	run := func(args ...string) (string, string, int) {
		var out, errOut bytes.Buffer
		code := (&CLI{Out: &out, Err: &errOut}).Execute(append(args, "--endpoint", s.URL))
		return out.String(), errOut.String(), code
	}
	describe := func(arn string) *sfn.DescribeExecutionOutput {
		x, err := s.SFN.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
		require.NoError(t, err)
		return x
	}

	// Held, suspended, resumed, then skipped while held.
	arn := start()
	out, errOut, code := run("hold", arn, "--state", "Load")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, arn+"\n", out)
	_, errOut, code = run("suspend", arn)
	require.Equal(t, 0, code, errOut)
	_, errOut, code = run("resume", arn)
	require.Equal(t, 0, code, errOut)
	time.Sleep(1500 * time.Millisecond) // past W: parked before Load
	require.Equal(t, types.ExecutionStatusRunning, describe(arn).Status)
	_, errOut, code = run("skip", arn, "--state", "Load", "--output", `{"rows": 7}`)
	require.Equal(t, 0, code, errOut)
	testwait.Until(t, func() bool { return describe(arn).Status == types.ExecutionStatusSucceeded }, 5*time.Second, 20*time.Millisecond)
	require.JSONEq(t, `{"rows": 7}`, aws.ToString(describe(arn).Output))
	out, errOut, code = run("actions", arn)
	require.Equal(t, 0, code, errOut)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 5, out)
	require.Regexp(t, `^WHEN +WHO +ACTION +STATE +DETAIL$`, lines[0])
	require.Regexp(t, `^\d{4}-\d\d-\d\dT\S+Z +anonymous@127\.0\.0\.1 +Hold +Load *$`, lines[1])
	require.Regexp(t, `anonymous@127\.0\.0\.1 +Suspend +- *$`, lines[2])
	require.Regexp(t, `anonymous@127\.0\.0\.1 +Resume +- *$`, lines[3])
	require.Regexp(t, `anonymous@127\.0\.0\.1 +Skip +Load +\{"rows":\s?7\}$`, lines[4])

	// A state machine's hold, released; a running task killed.
	out, errOut, code = run("hold", aws.ToString(sm.StateMachineArn), "--state", "Load")
	require.Equal(t, 0, code, errOut)
	require.Empty(t, out) // none running
	arn = start()
	out, errOut, code = run("release", aws.ToString(sm.StateMachineArn), "--state", "Load")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, arn+"\n", out)
	testwait.Until(t, func() bool {
		h, err := s.SFN.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(arn)})
		require.NoError(t, err)
		for _, e := range h.Events {
			if e.Type == types.HistoryEventTypeActivityScheduled {
				return true
			}
		}
		return false
	}, 5*time.Second, 20*time.Millisecond)
	_, errOut, code = run("kill", arn, "--state", "Load", "--error", "Ops.Killed", "--cause", "stuck")
	require.Equal(t, 0, code, errOut)
	testwait.Until(t, func() bool { return describe(arn).Status == types.ExecutionStatusFailed }, 5*time.Second, 20*time.Millisecond)
	require.Equal(t, "Ops.Killed", aws.ToString(describe(arn).Error))
	require.Equal(t, "stuck", aws.ToString(describe(arn).Cause))

	// The server's refusals, in its words.
	gone := arn[:strings.LastIndexByte(arn, ':')+1] + "gone"
	_, errOut, code = run("hold", gone, "--state", "Load")
	require.Equal(t, 1, code)
	require.Equal(t, "stepwise: ExecutionDoesNotExist: Execution Does Not Exist: '"+gone+"'\n", errOut)
	_, errOut, code = run("suspend", arn)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "stepwise: ValidationException: ")
	require.Contains(t, errOut, "is FAILED")

	// Bad usage, told before the server is asked.
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"hold", arn}, "--state NAME is required"},
		{[]string{"hold", "run-1", "--state", "Load"}, `"run-1" is not an ARN of a state machine or an execution`},
		{[]string{"suspend", aws.ToString(sm.StateMachineArn)}, "is a state machine's ARN: this verb takes an execution's"},
		{[]string{"skip", arn, "--state", "Load", "--output", "{rows"}, "--output is not JSON"},
		{[]string{"kill", arn, "--state", "Load"}, "--error NAME is required"},
		{[]string{"actions", aws.ToString(act.ActivityArn)}, "is the ARN of a resource of type activity, not of an execution"},
		{[]string{"resume"}, "accepts 1 arg(s), received 0"},
	} {
		_, errOut, code := run(tc.args...)
		require.Equal(t, 2, code, "%v: %s", tc.args, errOut)
		require.Contains(t, errOut, tc.msg, tc.args)
	}
}
