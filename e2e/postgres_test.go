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
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"stepwise/internal/pgtest"
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
// end across a kill -9 and a restart; a second server on the same
// database is refused while the first runs; the node shows in the
// start-up line and the metrics.
func TestPostgres(t *testing.T) {
	t.Parallel()
	db := pgtest.NewDatabase(t)
	args := []string{"--wait-time-scale", "0.3", "--node-id", "pg-one"}
	s := startServer(t, db, args...)
	c := s.client(t)
	ctx := context.Background()

	// One server a database.
	out, err := exec.Command(binary, "serve", "--addr", "127.0.0.1:0", "--db", db).CombinedOutput()
	require.Error(t, err, "a second server on the same database")
	require.Contains(t, string(out), "another stepwise server is using this database")
	require.NotContains(t, string(out), "password")

	resp, err := http.Get(s.url() + "/readyz") // asks the database too
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	resp, err = http.Get(s.url() + "/metrics")
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

	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(held) == 3 }, 30*time.Second, 10*time.Millisecond, "tasks taken before the crash")
	s.kill()
	s = startServer(t, db, args...) // the dead server's lock went with its session
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

// TestPostgresStandby: a server started with --standby on a database
// another server holds waits, and when that server is killed takes over:
// it resumes the running executions, which end as if nothing happened.
func TestPostgresStandby(t *testing.T) {
	t.Parallel()
	db := pgtest.NewDatabase(t)
	args := []string{"--wait-time-scale", "0.3"}
	a := startServer(t, db, args...)
	c := a.client(t)
	ctx := context.Background()
	_, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("loop"), Definition: aws.String(loopDefinition), RoleArn: aws.String(roleArn)})
	require.NoError(t, err)
	const n = 20
	for i := range n {
		_, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smArn("loop")),
			Name: aws.String(fmt.Sprintf("l%d", i)), Input: aws.String(fmt.Sprintf(`{"id": %d}`, i))})
		require.NoError(t, err)
	}

	standby := make(chan *server, 1)
	go func() { standby <- startServer(t, db, append(args, "--standby")...) }()
	select {
	case <-standby:
		t.Fatal("the standby served while the database was held")
	case <-time.After(1500 * time.Millisecond):
	}
	killed := time.Now()
	a.kill()
	var b *server
	select {
	case b = <-standby:
	case <-time.After(30 * time.Second):
		t.Fatal("the standby did not take over")
	}
	t.Logf("the standby served %v after the kill", time.Since(killed).Round(time.Millisecond))
	require.Contains(t, b.stderr.String(), "standing by")

	// A rolling restart: a new standby, then the serving server stopped
	// gracefully; the standby takes over at once.
	go func() { standby <- startServer(t, db, append(args, "--standby")...) }()
	time.Sleep(time.Second)
	stopped := time.Now()
	b.stop(t)
	select {
	case b = <-standby:
	case <-time.After(30 * time.Second):
		t.Fatal("the standby did not take over from a graceful stop")
	}
	t.Logf("the standby served %v after the graceful stop", time.Since(stopped).Round(time.Millisecond))
	c = b.client(t)
	for i := range n {
		arn := fmt.Sprintf("arn:aws:states:us-east-1:123456789012:execution:loop:l%d", i)
		out := waitDone(t, c, arn)
		require.Equal(t, types.ExecutionStatusSucceeded, out.Status, arn)
		checkHistory(t, c, arn)
	}
	b.stop(t)
}

// TestPostgresLockLost: a server whose database lock's session ends (here
// killed by an administrator) stops at once, since a standby may take the
// database.
func TestPostgresLockLost(t *testing.T) {
	t.Parallel()
	db := pgtest.NewDatabase(t)
	s := startServer(t, db)
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, db)
	require.NoError(t, err)
	defer admin.Close(ctx)
	tag, err := admin.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`)
	require.NoError(t, err)
	require.EqualValues(t, 1, tag.RowsAffected(), "the server's lock session")
	select {
	case err := <-s.done:
		require.Error(t, err, "the server exits with an error")
	case <-time.After(15 * time.Second):
		t.Fatal("the server kept serving without its lock")
	}
	require.Contains(t, s.stderr.String(), "the database lock was lost")
}
