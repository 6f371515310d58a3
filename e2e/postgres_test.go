package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/stretchr/testify/require"

	"stepwise/internal/testkit/pgtest"
	"stepwise/internal/testkit/testwait"
)

// workDefinition runs an activity task in each branch of a Parallel and in
// each iteration of a Map, then waits. A task handed out by a server that
// died before its answer reached the worker is held by nobody: as on AWS,
// its timeout and a retry get it done.
const workDefinition = `{"StartAt": "Fan", "States": {
  "Fan": {"Type": "Parallel", "Next": "Each", "Branches": [
    {"StartAt": "A", "States": {"A": {"Type": "Task", "Resource": "%[1]s", "TimeoutSeconds": 30, "Retry": [{"ErrorEquals": ["States.Timeout"], "MaxAttempts": 3}], "End": true}}},
    {"StartAt": "B", "States": {"B": {"Type": "Wait", "Seconds": 1, "End": true}}}]},
  "Each": {"Type": "Map", "ItemsPath": "$[1].items", "Next": "Rest", "ItemProcessor": {"StartAt": "C", "States": {
    "C": {"Type": "Task", "Resource": "%[1]s", "TimeoutSeconds": 30, "Retry": [{"ErrorEquals": ["States.Timeout"], "MaxAttempts": 3}], "End": true}}}},
  "Rest": {"Type": "Wait", "Seconds": 1, "End": true}}}`

// TestPostgres serves from a real PostgreSQL database: executions with
// waits, Parallel, Map and activity tasks worked by a poller run to the
// end across a kill -9 and a restart of the only server (which, under the
// same node id and a new epoch, claims its former executions at once);
// the node shows in the start-up line and the metrics.
func TestPostgres(t *testing.T) {
	t.Parallel()
	db := pgtest.NewDatabase(t)
	args := []string{"--wait-time-scale", "0.3", "--node-id", "pg-one"}
	s := startServer(t, db, args...)
	c := s.client(t)
	ctx := context.Background()

	// A server refused by the database says why, without the password.
	bad := strings.Replace(db, "/stepwise_test", "/stepwise_nope", 1)
	out, err := exec.Command(binary, "serve", "--addr", "127.0.0.1:0", "--db", bad).CombinedOutput()
	require.Error(t, err)
	require.Contains(t, string(out), "stepwise_nope")
	require.NotContains(t, string(out), "password")

	// Ready once its first claim is done; /readyz asks the database too.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		resp, err := http.Get(s.url() + "/readyz")
		require.NoError(t, err)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			break
		}
		require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
		require.True(t, time.Now().Before(deadline), "not ready a minute after it started")
	}

	resp, err := http.Get(s.url() + "/metrics")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Contains(t, string(body), `stepwise_node_info{node_id="pg-one"} 1`)

	act, err := c.CreateActivity(ctx, &sfn.CreateActivityInput{Name: aws.String("work")})
	require.NoError(t, err)
	_, err = c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("loop"), Definition: aws.String(loopDefinition), RoleArn: aws.String(roleArn)})
	require.NoError(t, err)
	_, err = c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("work"),
		Definition: aws.String(fmt.Sprintf(workDefinition, aws.ToString(act.ActivityArn))), RoleArn: aws.String(roleArn)})
	require.NoError(t, err)

	const loops, works = 40, 10
	for i := range loops {
		_, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smArn("loop")),
			Name: aws.String(fmt.Sprintf("l%d", i)), Input: aws.String(fmt.Sprintf(`{"id": %d}`, i))})
		require.NoError(t, err)
	}
	for i := range works {
		_, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smArn("work")),
			Name: aws.String(fmt.Sprintf("w%d", i)), Input: aws.String(`{"items": [1, 2, 3]}`)})
		require.NoError(t, err)
	}

	// A worker completes tasks through whichever server runs; tasks taken
	// before the crash are completed after it with their tokens.
	var mu sync.Mutex
	var current *sfn.Client
	setClient := func(x *sfn.Client) { mu.Lock(); current = x; mu.Unlock() }
	client := func() *sfn.Client { mu.Lock(); defer mu.Unlock(); return current }
	setClient(c)
	workCtx, stopWork := context.WithCancel(ctx)
	defer stopWork()
	var held []string // tokens taken before the crash, completed after it
	var done sync.WaitGroup
	done.Go(func() {
		for workCtx.Err() == nil {
			task, err := client().GetActivityTask(workCtx, &sfn.GetActivityTaskInput{ActivityArn: act.ActivityArn, WorkerName: aws.String("w")})
			if err != nil {
				time.Sleep(50 * time.Millisecond) // the server is restarting
			}
			if err != nil || task.TaskToken == nil {
				continue
			}
			mu.Lock()
			if len(held) < 3 {
				held = append(held, aws.ToString(task.TaskToken))
				mu.Unlock()
				continue
			}
			mu.Unlock()
			_, _ = client().SendTaskSuccess(workCtx, &sfn.SendTaskSuccessInput{TaskToken: task.TaskToken, Output: aws.String(`"ok"`)})
		}
	})

	testwait.Until(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(held) == 3 }, 30*time.Second, 10*time.Millisecond, "tasks taken before the crash")
	s.kill()
	s = startServer(t, db, args...) // a new epoch: what the dead one owned is orphaned
	c = s.client(t)
	setClient(c)
	mu.Lock()
	for _, tok := range held {
		_, err := c.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(tok), Output: aws.String(`"late"`)})
		require.NoError(t, err, "a token from before the crash")
	}
	mu.Unlock()

	for i := range loops {
		arn := fmt.Sprintf("arn:aws:states:us-east-1:123456789012:execution:loop:l%d", i)
		out := waitDone(t, c, arn)
		require.Equal(t, types.ExecutionStatusSucceeded, out.Status, arn)
		require.JSONEq(t, fmt.Sprintf(`{"i": 5, "id": %d}`, i), aws.ToString(out.Output))
		checkHistory(t, c, arn)
	}
	for i := range works {
		arn := fmt.Sprintf("arn:aws:states:us-east-1:123456789012:execution:work:w%d", i)
		out := waitDone(t, c, arn)
		require.Equal(t, types.ExecutionStatusSucceeded, out.Status, "%s: %s", arn, aws.ToString(out.Cause))
		h, err := c.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(arn), MaxResults: 1000})
		require.NoError(t, err)
		succeeded := 0
		for j, e := range h.Events {
			require.Equal(t, int64(j+1), e.Id)
			if e.Type == types.HistoryEventTypeActivitySucceeded {
				succeeded++
			}
		}
		require.Equal(t, 4, succeeded, "%s: one activity in the Parallel, three in the Map", arn)
	}
	stopWork()
	done.Wait()
	require.True(t, strings.Contains(s.stderr.String(), "node=pg-one"), "the node is in the server's log")
	s.stop(t)
}
