package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/require"

	"stepwise/internal/testkit/mounttest"
	"stepwise/internal/testkit/testwait"
)

// health returns the status code and body of GET /health.
func health(t *testing.T, s *server) (int, map[string]any) {
	t.Helper()
	resp, err := http.Get(s.url() + "/health")
	require.NoError(t, err)
	defer resp.Body.Close()
	var body map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	return resp.StatusCode, body
}

// fill writes a file on dir until the file system is full.
func fill(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			return path
		}
	}
}

// With the database on a small file system that fills up, executions wait
// in memory, StartExecution answers ServiceUnavailable and /health says
// why; once space is freed every execution finishes, without a restart.
func TestDiskFullThenFreed(t *testing.T) {
	t.Parallel()
	dir := mounttest.Tmpfs(t, "size=5m")
	s := startServer(t, filepath.Join(dir, "stepwise.db"), "--wait-time-scale", "0.05")
	c := s.client(t)
	ctx := context.Background()
	_, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{
		Name: aws.String("waits"), RoleArn: aws.String(roleArn),
		Definition: aws.String(`{"StartAt": "W1", "States": {
			"W1": {"Type": "Wait", "Seconds": 20, "Next": "W2"},
			"W2": {"Type": "Wait", "Seconds": 20, "Next": "Done"},
			"Done": {"Type": "Pass", "End": true}}}`),
	})
	require.NoError(t, err)
	var arns []string
	for i := range 20 {
		out, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smArn("waits")), Name: aws.String(fmt.Sprintf("e%d", i))})
		require.NoError(t, err)
		arns = append(arns, aws.ToString(out.ExecutionArn))
	}
	code, _ := health(t, s)
	require.Equal(t, http.StatusOK, code)

	filler := fill(t, dir)
	// The first Waits end after a second and cannot be written.
	testwait.Until(t, func() bool { code, _ := health(t, s); return code == http.StatusServiceUnavailable },
		20*time.Second, 50*time.Millisecond)
	_, body := health(t, s)
	store := body["store"].(map[string]any)
	require.Contains(t, store["error"], "full")
	t.Logf("health while full: %v", body)

	_, err = c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smArn("waits")), Name: aws.String("refused")},
		func(o *sfn.Options) { o.RetryMaxAttempts = 1 })
	var apiErr smithy.APIError
	require.True(t, errors.As(err, &apiErr), "%v", err)
	require.Equal(t, "ServiceUnavailable", apiErr.ErrorCode())

	require.NoError(t, os.Remove(filler))
	stuck := 0
	for _, arn := range arns {
		out := waitDone(t, c, arn)
		if out.Status != types.ExecutionStatusSucceeded {
			stuck++
		}
		require.Equal(t, "ExecutionSucceeded", lastEvent(t, c, arn))
	}
	require.Zero(t, stuck)
	testwait.Until(t, func() bool { code, _ := health(t, s); return code == http.StatusOK }, 30*time.Second, 50*time.Millisecond)
	s.stop(t)
	require.Contains(t, s.stderr.String(), "the store cannot write")
	require.Contains(t, s.stderr.String(), "the store writes again")
}
