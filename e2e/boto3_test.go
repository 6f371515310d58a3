package e2e

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/stretchr/testify/require"
)

// TestBoto3Worker works activity tasks with a Python worker written with
// boto3: any language's SDK works against the server unchanged.
func TestBoto3Worker(t *testing.T) {
	t.Parallel()
	if err := exec.Command("python3", "-c", "import boto3").Run(); err != nil {
		t.Skip("python3 with boto3 is not available; install boto3 to run this test")
	}
	s := startServer(t, filepath.Join(t.TempDir(), "boto3.db"))
	c := s.client(t)
	ctx := context.Background()
	act, err := c.CreateActivity(ctx, &sfn.CreateActivityInput{Name: aws.String("double")})
	require.NoError(t, err)
	_, err = c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{
		Name: aws.String("py"), RoleArn: aws.String(roleArn),
		Definition: aws.String(fmt.Sprintf(`{"StartAt": "Double", "States": {"Double": {"Type": "Task", "Resource": %q, "End": true}}}`, aws.ToString(act.ActivityArn))),
	})
	require.NoError(t, err)
	const n = 5
	for i := range n {
		_, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smArn("py")),
			Name: aws.String(fmt.Sprintf("p%d", i)), Input: aws.String(fmt.Sprintf(`{"n": %d}`, i))})
		require.NoError(t, err)
	}
	out, err := exec.Command("python3", "testdata/worker.py", s.url(), aws.ToString(act.ActivityArn), fmt.Sprint(n)).CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Equal(t, fmt.Sprint(n), strings.TrimSpace(string(out)))
	for i := range n {
		d := waitDone(t, c, fmt.Sprintf("arn:aws:states:us-east-1:123456789012:execution:py:p%d", i))
		require.Equal(t, types.ExecutionStatusSucceeded, d.Status)
		require.JSONEq(t, fmt.Sprintf(`{"doubled": %d}`, 2*i), aws.ToString(d.Output))
	}
}
