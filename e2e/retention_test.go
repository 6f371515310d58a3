package e2e

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite"
)

// executionGone reports whether the server has forgotten an execution:
// DescribeExecution and GetExecutionHistory both answer
// ExecutionDoesNotExist.
func executionGone(t *testing.T, c *sfn.Client, arn string) bool {
	t.Helper()
	ctx := context.Background()
	var missing *types.ExecutionDoesNotExist
	_, err := c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
	if err == nil {
		return false
	}
	require.ErrorAs(t, err, &missing)
	_, err = c.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(arn)})
	require.ErrorAs(t, err, &missing)
	return true
}

// A server with a retention of 10 s deletes the executions that ended more
// than 10 s ago, whatever their ending and whether their state machine
// still exists, with their histories; it keeps the running ones (a
// redriven one included) and the recent ones.
func TestRetention(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "retention.db")
	// Long enough for the set-up below to fit in half of it on a loaded
	// machine.
	const retention = 10 * time.Second
	s := startServer(t, db, "--retention", retention.String(), "--retention-interval", "200ms")
	c := s.client(t)
	ctx := context.Background()

	pass := createMachine(t, c, "r-pass", `{"StartAt": "P", "States": {"P": {"Type": "Pass", "End": true}}}`)
	fail := createMachine(t, c, "r-fail", `{"StartAt": "F", "States": {"F": {"Type": "Fail", "Error": "E", "Cause": "c"}}}`)
	wait := createMachine(t, c, "r-wait", `{"StartAt": "W", "States": {"W": {"Type": "Wait", "Seconds": 3600, "End": true}}}`)
	gone := createMachine(t, c, "r-gone", `{"StartAt": "P", "States": {"P": {"Type": "Pass", "End": true}}}`)

	// Old: every ending, and one of a state machine deleted since.
	first := time.Now() // before any of them ended
	var old []string
	for i := range 3 {
		old = append(old, startExecution(t, c, pass, fmt.Sprint("p", i), `{}`))
	}
	old = append(old, startExecution(t, c, fail, "f0", `{}`))
	aborted := startExecution(t, c, wait, "aborted", `{}`)
	_, err := c.StopExecution(ctx, &sfn.StopExecutionInput{ExecutionArn: aws.String(aborted)})
	require.NoError(t, err)
	old = append(old, aborted, startExecution(t, c, gone, "g0", `{}`))
	for _, arn := range old {
		waitDone(t, c, arn)
	}
	_, err = c.DeleteStateMachine(ctx, &sfn.DeleteStateMachineInput{StateMachineArn: aws.String(gone)})
	require.NoError(t, err)

	// Running, and redriven: ended (aborted) with the old ones, running
	// again since.
	running := startExecution(t, c, wait, "running", `{}`)
	redriven := startExecution(t, c, wait, "redriven", `{}`)
	_, err = c.StopExecution(ctx, &sfn.StopExecutionInput{ExecutionArn: aws.String(redriven)})
	require.NoError(t, err)
	_, err = c.RedriveExecution(ctx, &sfn.RedriveExecutionInput{ExecutionArn: aws.String(redriven)})
	require.NoError(t, err)

	// Recent: ends at least half a retention after the old ones, which
	// are all still there then.
	time.Sleep(time.Until(first.Add(retention / 2)))
	for _, arn := range old {
		require.False(t, executionGone(t, c, arn), "%s deleted before the retention period", arn)
	}
	require.Less(t, time.Since(first), retention, "too slow to tell whether the old executions were kept long enough")
	recent := startExecution(t, c, pass, "recent", `{}`)
	waitDone(t, c, recent)

	deadline := time.Now().Add(30 * time.Second)
	for _, arn := range old {
		for !executionGone(t, c, arn) {
			require.True(t, time.Now().Before(deadline), "%s not deleted %s after it ended", arn, time.Since(first))
			time.Sleep(50 * time.Millisecond)
		}
	}
	t.Logf("the old executions were deleted at most %s after they ended", time.Since(first).Round(time.Millisecond))

	for arn, status := range map[string]types.ExecutionStatus{running: types.ExecutionStatusRunning, redriven: types.ExecutionStatusRunning, recent: types.ExecutionStatusSucceeded} {
		out, err := c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
		require.NoError(t, err, arn)
		require.Equal(t, status, out.Status, arn)
		h, err := c.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(arn)})
		require.NoError(t, err, arn)
		require.NotEmpty(t, h.Events, arn)
	}
	xs, err := c.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: aws.String(pass)})
	require.NoError(t, err)
	require.Len(t, xs.Executions, 1)
	require.Equal(t, recent, aws.ToString(xs.Executions[0].ExecutionArn))
	// The recent execution ended at least half a retention after first:
	// younger than the retention until here.
	require.Less(t, time.Since(first), retention+retention/2, "too slow to tell whether the recent execution is kept")
	// A deleted execution's name is free again, as on AWS after 90 days.
	again := startExecution(t, c, pass, "p0", `{"again":true}`)
	require.Equal(t, old[0], again)
	waitDone(t, c, again)

	require.Contains(t, s.stderr.String(), "retention: deleted ended executions")
	var deleted float64
	for _, m := range scrape(t, s)["stepwise_retention_deleted_executions_total"].GetMetric() {
		deleted += m.GetCounter().GetValue()
	}
	require.GreaterOrEqual(t, deleted, float64(len(old)), "the metrics count the deletions")
	s.stop(t)

	// Nothing of them is left in the database: no history event, replay
	// log entry or revision without its execution or state machine.
	conn, err := sql.Open("sqlite", "file:"+db+"?mode=ro")
	require.NoError(t, err)
	defer conn.Close()
	for _, q := range []string{
		`SELECT count(*) FROM stepwise_history WHERE execution_id NOT IN (SELECT id FROM stepwise_execution)`,
		`SELECT count(*) FROM stepwise_input WHERE execution_id NOT IN (SELECT id FROM stepwise_execution)`,
		`SELECT count(*) FROM stepwise_timer WHERE execution_arn NOT IN (SELECT arn FROM stepwise_execution)`,
		`SELECT count(*) FROM stepwise_task WHERE execution_arn NOT IN (SELECT arn FROM stepwise_execution)`,
		`SELECT count(*) FROM stepwise_state_machine_revision WHERE state_machine_arn NOT IN (SELECT arn FROM stepwise_state_machine)`,
	} {
		var n int
		require.NoError(t, conn.QueryRow(q).Scan(&n), q)
		require.Zero(t, n, q)
	}
	var executions int
	require.NoError(t, conn.QueryRow(`SELECT count(*) FROM stepwise_execution`).Scan(&executions))
	require.Equal(t, 4, executions) // running, redriven, recent, p0 again
}
