package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/stretchr/testify/require"
)

// eventTimes returns the timestamp of the first event of each type in an
// execution's history.
func eventTimes(t *testing.T, c *sfn.Client, arn string) map[types.HistoryEventType]time.Time {
	t.Helper()
	h, err := c.GetExecutionHistory(context.Background(), &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(arn), MaxResults: 1000})
	require.NoError(t, err)
	at := map[types.HistoryEventType]time.Time{}
	for _, e := range h.Events {
		if _, ok := at[e.Type]; !ok {
			at[e.Type] = aws.ToTime(e.Timestamp)
		}
	}
	return at
}

// TestTimeSkipServer: with --time-skip a Wait of a day ends at once, its
// history a day long, and then a Task with TimeoutSeconds 3600 waits for
// an activity worker that takes a second of real time, and succeeds
// (its Catch is not taken).
func TestTimeSkipServer(t *testing.T) {
	t.Parallel()
	s := startServer(t, filepath.Join(t.TempDir(), "skip.db"), "--time-skip")
	c := s.client(t)
	ctx := context.Background()
	act, err := c.CreateActivity(ctx, &sfn.CreateActivityInput{Name: aws.String("slow")})
	require.NoError(t, err)
	_, err = c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{
		Name: aws.String("daylong"), RoleArn: aws.String(roleArn),
		Definition: aws.String(fmt.Sprintf(`{"StartAt": "Tomorrow", "States": {
			"Tomorrow": {"Type": "Wait", "Seconds": 86400, "Next": "Work"},
			"Work": {"Type": "Task", "Resource": %q, "TimeoutSeconds": 3600,
				"Catch": [{"ErrorEquals": ["States.ALL"], "Next": "Caught"}], "End": true},
			"Caught": {"Type": "Pass", "Result": "caught", "End": true}}}`, aws.ToString(act.ActivityArn))),
	})
	require.NoError(t, err)
	started, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smArn("daylong")), Input: aws.String(`{}`)})
	require.NoError(t, err)

	task, err := c.GetActivityTask(ctx, &sfn.GetActivityTaskInput{ActivityArn: act.ActivityArn, WorkerName: aws.String("w")})
	require.NoError(t, err)
	require.NotEmpty(t, aws.ToString(task.TaskToken), "the day-long Wait was skipped")
	time.Sleep(time.Second) // the worker works
	_, err = c.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: task.TaskToken, Output: aws.String(`"worked"`)})
	require.NoError(t, err)

	d := waitDone(t, c, aws.ToString(started.ExecutionArn))
	require.Equal(t, types.ExecutionStatusSucceeded, d.Status)
	require.Equal(t, `"worked"`, aws.ToString(d.Output))
	at := eventTimes(t, c, aws.ToString(started.ExecutionArn))
	waited := at[types.HistoryEventTypeWaitStateExited].Sub(at[types.HistoryEventTypeWaitStateEntered])
	require.GreaterOrEqual(t, waited, 24*time.Hour)
	require.Less(t, waited, 24*time.Hour+time.Minute)
	worked := at[types.HistoryEventTypeActivitySucceeded].Sub(at[types.HistoryEventTypeActivityScheduled])
	require.GreaterOrEqual(t, worked, time.Second, "the worker's time passed at the real rate")
	require.Less(t, worked, time.Hour)
}

// TestExecutionTimeoutAroundLongerWaitServer: an execution's
// TimeoutSeconds of 5 ends it TIMED_OUT around a Wait of 10 seconds, with
// time skipping and at a wait-time scale of 0.
func TestExecutionTimeoutAroundLongerWaitServer(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"--time-skip"}, {"--wait-time-scale", "0"}} {
		t.Run(args[0], func(t *testing.T) {
			t.Parallel()
			s := startServer(t, filepath.Join(t.TempDir(), "timeout.db"), args...)
			c := s.client(t)
			ctx := context.Background()
			_, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{
				Name: aws.String("slow"), RoleArn: aws.String(roleArn),
				Definition: aws.String(`{"StartAt": "W", "TimeoutSeconds": 5, "States": {"W": {"Type": "Wait", "Seconds": 10, "End": true}}}`),
			})
			require.NoError(t, err)
			var arns []string
			for i := range 5 {
				out, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smArn("slow")), Name: aws.String(fmt.Sprintf("e%d", i))})
				require.NoError(t, err)
				arns = append(arns, aws.ToString(out.ExecutionArn))
			}
			for _, arn := range arns {
				d := waitDone(t, c, arn)
				require.Equal(t, types.ExecutionStatusTimedOut, d.Status)
				took := aws.ToTime(d.StopDate).Sub(aws.ToTime(d.StartDate))
				require.GreaterOrEqual(t, took, 5*time.Second, "the history shows the five seconds")
				require.Less(t, took, 6*time.Second)
			}
		})
	}
}

// TestTimeSkipAdvanceEndsOnSIGTERM: SIGTERM ends a server whose clock an
// advance holds (a task waits on a worker under --time-skip): the advance
// is answered at once and the server exits cleanly, not when the
// shutdown's 30 s run out.
func TestTimeSkipAdvanceEndsOnSIGTERM(t *testing.T) {
	t.Parallel()
	s := startServer(t, filepath.Join(t.TempDir(), "advance.db"), "--time-skip")
	c := s.client(t)
	ctx := context.Background()
	act, err := c.CreateActivity(ctx, &sfn.CreateActivityInput{Name: aws.String("held")})
	require.NoError(t, err)
	_, err = c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{
		Name: aws.String("held"), RoleArn: aws.String(roleArn),
		Definition: aws.String(fmt.Sprintf(`{"StartAt": "T", "States": {"T": {"Type": "Task", "Resource": %q, "End": true}}}`, aws.ToString(act.ActivityArn))),
	})
	require.NoError(t, err)
	_, err = c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smArn("held")), Name: aws.String("e1")})
	require.NoError(t, err)
	advance := exec.Command(binary, "clock", "advance", "1h", "--endpoint", s.url())
	var out bytes.Buffer
	advance.Stdout, advance.Stderr = &out, &out
	require.NoError(t, advance.Start())
	advanced := make(chan error, 1)
	go func() { advanced <- advance.Wait() }()
	time.Sleep(time.Second) // the advance holds the clock
	sent := time.Now()
	require.NoError(t, s.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-s.done:
		require.NoError(t, err, s.stderr.String())
		require.Less(t, time.Since(sent), 10*time.Second)
	case <-time.After(20 * time.Second):
		t.Fatal("the server did not exit within 20 s of SIGTERM while an advance held its clock")
	}
	require.Error(t, <-advanced)
	require.Contains(t, out.String(), "the server is stopping")
}
