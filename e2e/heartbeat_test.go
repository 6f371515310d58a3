package e2e

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/stretchr/testify/require"
)

// TestHeartbeats: a worker's heartbeats keep a task alive well past its
// HeartbeatSeconds; a worker that stops sending them has its task time out
// with States.HeartbeatTimeout, and its late SendTaskSuccess is refused
// with TaskTimedOut. The server runs at --wait-time-scale 0.2, so the
// 10-second heartbeat is two seconds of real time.
func TestHeartbeats(t *testing.T) {
	t.Parallel()
	s := startServer(t, filepath.Join(t.TempDir(), "beat.db"), "--wait-time-scale", "0.2")
	c := s.client(t)
	ctx := context.Background()
	act, err := c.CreateActivity(ctx, &sfn.CreateActivityInput{Name: aws.String("beat")})
	require.NoError(t, err)
	_, err = c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{
		Name: aws.String("beating"), RoleArn: aws.String(roleArn),
		Definition: aws.String(fmt.Sprintf(`{"StartAt": "Work", "States": {"Work": {"Type": "Task", "Resource": %q, "HeartbeatSeconds": 10, "End": true}}}`, aws.ToString(act.ActivityArn))),
	})
	require.NoError(t, err)
	start := func(name string) string {
		out, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smArn("beating")), Name: aws.String(name), Input: aws.String(`{}`)})
		require.NoError(t, err)
		return aws.ToString(out.ExecutionArn)
	}
	take := func() *string {
		task, err := c.GetActivityTask(ctx, &sfn.GetActivityTaskInput{ActivityArn: act.ActivityArn, WorkerName: aws.String("w")})
		require.NoError(t, err)
		require.NotEmpty(t, aws.ToString(task.TaskToken))
		return task.TaskToken
	}

	// Alive: heartbeats every 0.3 s for 4.5 s, over twice HeartbeatSeconds.
	alive := start("alive")
	token := take()
	for range 15 {
		time.Sleep(300 * time.Millisecond)
		_, err := c.SendTaskHeartbeat(ctx, &sfn.SendTaskHeartbeatInput{TaskToken: token})
		require.NoError(t, err)
	}
	_, err = c.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: token, Output: aws.String(`{"done": true}`)})
	require.NoError(t, err)
	d := waitDone(t, c, alive)
	require.Equal(t, types.ExecutionStatusSucceeded, d.Status)
	require.JSONEq(t, `{"done": true}`, aws.ToString(d.Output))

	// Silent: no heartbeat, so the task times out; the late answer is refused.
	silent := start("silent")
	token = take()
	d = waitDone(t, c, silent)
	require.Equal(t, types.ExecutionStatusFailed, d.Status)
	require.Equal(t, "States.HeartbeatTimeout", aws.ToString(d.Error))
	_, err = c.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: token, Output: aws.String(`{}`)})
	var timedOut *types.TaskTimedOut
	require.True(t, errors.As(err, &timedOut), "late success: %v", err)
	h, err := c.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(silent)})
	require.NoError(t, err)
	var kinds []string
	for _, e := range h.Events {
		kinds = append(kinds, string(e.Type))
	}
	require.Equal(t, []string{"ExecutionStarted", "TaskStateEntered", "ActivityScheduled", "ActivityStarted", "ActivityTimedOut", "ExecutionFailed"}, kinds)
}
