package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/stretchr/testify/require"
)

const runawayExpr = `($f := function($n){ $n = 0 ? 0 : $f($n-1) + $f($n-1) }; $f(60))`

// unboundedEval lets an evaluation run without end.
var unboundedEval = []string{"--eval-steps", "0", "--eval-bytes", "0", "--eval-time", "0"}

// SIGTERM ends a server whose StartExecution evaluates an expression
// without end: the evaluation is abandoned, the request answered 503, and
// nothing of the execution committed.
func TestSIGTERMWithRunawayExpression(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "runaway.db")
	s := startServer(t, db, unboundedEval...)
	c := s.client(t)
	ctx := context.Background()
	_, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{
		Name: aws.String("runaway"), RoleArn: aws.String(roleArn),
		Definition: aws.String(`{"QueryLanguage": "JSONata", "StartAt": "P", "States": {
			"P": {"Type": "Pass", "Output": "{% ` + runawayExpr + ` %}", "End": true}}}`),
	})
	require.NoError(t, err)
	started := make(chan error, 1)
	go func() {
		_, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smArn("runaway")), Name: aws.String("e1")},
			func(o *sfn.Options) { o.RetryMaxAttempts = 1 })
		started <- err
	}()
	time.Sleep(500 * time.Millisecond) // the request is evaluating
	sent := time.Now()
	require.NoError(t, s.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-s.done:
		require.NoError(t, err)
		t.Logf("the server exited %s after SIGTERM", time.Since(sent).Round(time.Millisecond))
	case <-time.After(20 * time.Second):
		t.Fatal("the server did not exit within 20 s of SIGTERM while an expression evaluated")
	}
	require.Error(t, <-started, "the abandoned start is not acknowledged")

	s = startServer(t, db, unboundedEval...)
	_, err = s.client(t).DescribeExecution(ctx, &sfn.DescribeExecutionInput{
		ExecutionArn: aws.String("arn:aws:states:us-east-1:123456789012:execution:runaway:e1")})
	var missing *types.ExecutionDoesNotExist
	require.ErrorAs(t, err, &missing)
	s.stop(t)
}

// An execution killed in the middle of an evaluation without end is
// replayed after a restart without pinning the server: the evaluation
// runs out of time and fails the state, StopExecution stops another at
// once, and the server answers meanwhile.
func TestPoisonedExecutionAfterRestart(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "poisoned.db")
	args := []string{"--eval-steps", "0", "--eval-time", "3s", "--wait-time-scale", "0.2"}
	s := startServer(t, db, args...)
	c := s.client(t)
	ctx := context.Background()
	_, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{
		Name: aws.String("poisoned"), RoleArn: aws.String(roleArn),
		Definition: aws.String(`{"QueryLanguage": "JSONata", "StartAt": "W", "States": {
			"W": {"Type": "Wait", "Seconds": 1, "Next": "P"},
			"P": {"Type": "Pass", "Output": "{% ` + runawayExpr + ` %}", "End": true}}}`),
	})
	require.NoError(t, err)
	arns := map[string]string{}
	for _, name := range []string{"fails", "stopped"} {
		out, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smArn("poisoned")), Name: aws.String(name)})
		require.NoError(t, err)
		arns[name] = aws.ToString(out.ExecutionArn)
	}
	time.Sleep(time.Second) // both are evaluating
	s.kill()

	s = startServer(t, db, args...)
	c = s.client(t)
	// The server answers while the replayed executions evaluate.
	_, err = c.ListStateMachines(ctx, &sfn.ListStateMachinesInput{})
	require.NoError(t, err)
	time.Sleep(500 * time.Millisecond) // the timers fired again: the evaluations run
	asked := time.Now()
	_, err = c.StopExecution(ctx, &sfn.StopExecutionInput{ExecutionArn: aws.String(arns["stopped"]), Error: aws.String("Poisoned")})
	require.NoError(t, err)
	t.Logf("StopExecution answered in %s during a runaway evaluation", time.Since(asked).Round(time.Millisecond))

	stopped := waitDone(t, c, arns["stopped"])
	require.Equal(t, types.ExecutionStatusAborted, stopped.Status)
	failed := waitDone(t, c, arns["fails"])
	require.Equal(t, types.ExecutionStatusFailed, failed.Status)
	require.Equal(t, "States.QueryEvaluationError", aws.ToString(failed.Error))
	require.True(t, strings.Contains(aws.ToString(failed.Cause), "time limit of 3s"), aws.ToString(failed.Cause))
	require.Equal(t, "ExecutionFailed", lastEvent(t, c, arns["fails"]))
	require.Equal(t, "ExecutionAborted", lastEvent(t, c, arns["stopped"]))

	// Once more: what the log recorded is replayed, not evaluated again.
	s.stop(t)
	s = startServer(t, db, args...)
	again, err := s.client(t).DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arns["fails"])})
	require.NoError(t, err)
	require.Equal(t, types.ExecutionStatusFailed, again.Status)
	s.stop(t)
}

// lastEvent returns the type of an execution's last event, checking the
// ids run 1..n.
func lastEvent(t *testing.T, c *sfn.Client, arn string) string {
	t.Helper()
	out, err := c.GetExecutionHistory(context.Background(), &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(arn), MaxResults: 1000})
	require.NoError(t, err)
	for i, e := range out.Events {
		require.Equal(t, int64(i+1), e.Id, "%s: event ids have a gap or a duplicate", arn)
	}
	return string(out.Events[len(out.Events)-1].Type)
}
