package e2e

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/stretchr/testify/require"
)

// TestActivityWorkers runs executions whose Task is an activity, worked by
// concurrent pollers using the AWS SDK; a SIGKILL of the server with tasks
// handed out does not lose them: the workers finish them with the tokens
// they hold.
func TestActivityWorkers(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "activity.db")
	s := startServer(t, db)
	c := s.client(t)
	ctx := context.Background()
	act, err := c.CreateActivity(ctx, &sfn.CreateActivityInput{Name: aws.String("work")})
	require.NoError(t, err)
	again, err := c.CreateActivity(ctx, &sfn.CreateActivityInput{Name: aws.String("work")})
	require.NoError(t, err)
	require.Equal(t, aws.ToString(act.ActivityArn), aws.ToString(again.ActivityArn), "CreateActivity is idempotent")
	_, err = c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{
		Name: aws.String("jobs"), RoleArn: aws.String(roleArn),
		Definition: aws.String(fmt.Sprintf(`{"StartAt": "Work", "States": {"Work": {"Type": "Task", "Resource": %q, "HeartbeatSeconds": 600, "End": true}}}`, aws.ToString(act.ActivityArn))),
	})
	require.NoError(t, err)
	const n = 40
	for i := range n {
		_, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smArn("jobs")),
			Name: aws.String(fmt.Sprintf("job%d", i)), Input: aws.String(fmt.Sprintf(`{"job": %d}`, i))})
		require.NoError(t, err)
	}

	// Take ten tasks, crash the server, and finish them after the restart.
	var held []*sfn.GetActivityTaskOutput
	for range 10 {
		task, err := c.GetActivityTask(ctx, &sfn.GetActivityTaskInput{ActivityArn: act.ActivityArn, WorkerName: aws.String("early")})
		require.NoError(t, err)
		require.NotNil(t, task.TaskToken)
		held = append(held, task)
	}
	s.kill()
	s = startServer(t, db)
	c = s.client(t)
	for _, task := range held {
		_, err := c.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: task.TaskToken, Output: task.Input})
		require.NoError(t, err)
	}

	var mu sync.Mutex
	handed := map[string]int{}
	var wg sync.WaitGroup
	// Workers long-poll until every task is handed out; then the polls
	// still waiting are cancelled.
	pollCtx, stopPolling := context.WithCancel(ctx)
	defer stopPolling()
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := s.client(t)
			for {
				task, err := c.GetActivityTask(pollCtx, &sfn.GetActivityTaskInput{ActivityArn: act.ActivityArn, WorkerName: aws.String(fmt.Sprintf("w%d", w))})
				if pollCtx.Err() != nil {
					return
				}
				if err != nil {
					t.Errorf("poll: %v", err)
					return
				}
				if task.TaskToken == nil {
					continue
				}
				if _, err := c.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: task.TaskToken, Output: task.Input}); err != nil {
					t.Errorf("success: %v", err)
				}
				mu.Lock()
				handed[aws.ToString(task.Input)]++
				if len(handed) == n-len(held) {
					stopPolling()
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	require.Len(t, handed, n-len(held))
	for input, count := range handed {
		require.Equal(t, 1, count, "task %s handed out twice", input)
	}
	for i := range n {
		out := waitDone(t, c, fmt.Sprintf("arn:aws:states:us-east-1:123456789012:execution:jobs:job%d", i))
		require.Equal(t, types.ExecutionStatusSucceeded, out.Status)
		require.JSONEq(t, fmt.Sprintf(`{"job": %d}`, i), aws.ToString(out.Output))
	}

	// A token whose task is over, and one that was never handed out.
	_, err = c.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: held[0].TaskToken, Output: aws.String("{}")})
	var timedOut *types.TaskTimedOut
	require.True(t, errors.As(err, &timedOut), "got %v", err)
	_, err = c.SendTaskHeartbeat(ctx, &sfn.SendTaskHeartbeatInput{TaskToken: aws.String("bm90LWEtdG9rZW4")})
	var invalid *types.InvalidToken
	require.True(t, errors.As(err, &invalid), "got %v", err)
	_, err = c.DescribeActivity(ctx, &sfn.DescribeActivityInput{ActivityArn: aws.String("arn:aws:states:us-east-1:123456789012:activity:nope")})
	var missing *types.ActivityDoesNotExist
	require.True(t, errors.As(err, &missing), "got %v", err)
	list, err := c.ListActivities(ctx, &sfn.ListActivitiesInput{})
	require.NoError(t, err)
	require.Len(t, list.Activities, 1)
	_, err = c.DeleteActivity(ctx, &sfn.DeleteActivityInput{ActivityArn: act.ActivityArn})
	require.NoError(t, err)
}

// TestShutdownReleasesPolls stops a server while a worker's GetActivityTask
// waits: the poll is answered at once with no task, as a timed-out poll
// is, and the server exits without waiting for the poll's minute.
func TestShutdownReleasesPolls(t *testing.T) {
	t.Parallel()
	s := startServer(t, filepath.Join(t.TempDir(), "polls.db"))
	c := s.client(t)
	ctx := context.Background()
	act, err := c.CreateActivity(ctx, &sfn.CreateActivityInput{Name: aws.String("idle")})
	require.NoError(t, err)
	type result struct {
		out *sfn.GetActivityTaskOutput
		err error
	}
	got := make(chan result, 1)
	go func() {
		out, err := c.GetActivityTask(ctx, &sfn.GetActivityTaskInput{ActivityArn: act.ActivityArn})
		got <- result{out, err}
	}()
	time.Sleep(200 * time.Millisecond) // let the poll reach the server
	begin := time.Now()
	s.stop(t)
	require.Less(t, time.Since(begin), 40*time.Second, "the server waited for the poll (of 60 s)")
	r := <-got
	require.NoError(t, r.err)
	require.Nil(t, r.out.TaskToken)
}
