package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/require"
)

const quotaPassDefinition = `{"StartAt": "P", "States": {"P": {"Type": "Pass", "End": true}}}`

// defaultRetryClient is an AWS SDK client for the server with the SDK's
// default retries (s.client retries more).
func (s *server) defaultRetryClient(t *testing.T) *sfn.Client {
	t.Helper()
	cfg, err := config.LoadDefaultConfig(context.Background(),
		config.WithRegion("us-east-1"),
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", "")),
	)
	require.NoError(t, err)
	return sfn.NewFromConfig(cfg, func(o *sfn.Options) { o.BaseEndpoint = aws.String(s.url()) })
}

// --quota StartExecution=5/1: five quick starts go through, the sixth is
// refused as AWS refuses it; the SDK retries it as a throttling error.
func TestQuotaStartExecution(t *testing.T) {
	t.Parallel()
	noRetry := func(o *sfn.Options) { o.RetryMaxAttempts = 1 }

	t.Run("RetriesDisabled", func(t *testing.T) {
		t.Parallel()
		s := startServer(t, filepath.Join(t.TempDir(), "q.db"), "--quota", "StartExecution=5/1")
		c := s.client(t)
		arn := createMachine(t, c, "quota", quotaPassDefinition)
		ctx := context.Background()
		for i := range 5 {
			_, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: &arn}, noRetry)
			require.NoError(t, err, "start %d", i+1)
		}
		_, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: &arn, Name: aws.String("sixth")}, noRetry)
		var apiErr smithy.APIError
		require.ErrorAs(t, err, &apiErr)
		require.Equal(t, "ThrottlingException", apiErr.ErrorCode())
		require.Equal(t, "Rate exceeded", apiErr.ErrorMessage())
		var httpErr *awshttp.ResponseError
		require.ErrorAs(t, err, &httpErr)
		require.Equal(t, http.StatusBadRequest, httpErr.HTTPStatusCode())
		require.Equal(t, aws.TrueTernary, retry.IsErrorThrottles(retry.DefaultThrottles).IsErrorThrottle(err),
			"the SDK takes it for throttling")

		// The refused start did not happen; other operations have no quota.
		list, err := c.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: &arn})
		require.NoError(t, err)
		require.Len(t, list.Executions, 5)

		families := scrape(t, s)
		require.Equal(t, 1.0, counter(families, "stepwise_api_throttled_events_total", "operation", "StartExecution"))
		require.Equal(t, 5.0, counter(families, "stepwise_api_consumed_capacity_total", "operation", "StartExecution"))
	})

	t.Run("DefaultRetries", func(t *testing.T) {
		t.Parallel()
		s := startServer(t, filepath.Join(t.TempDir(), "q.db"), "--quota", "StartExecution=5/1")
		c := s.defaultRetryClient(t)
		arn := createMachine(t, c, "quota", quotaPassDefinition)
		attempts := 0
		for i := range 6 {
			out, err := c.StartExecution(context.Background(), &sfn.StartExecutionInput{StateMachineArn: &arn})
			require.NoError(t, err, "start %d", i+1)
			results, ok := retry.GetAttemptResults(out.ResultMetadata)
			require.True(t, ok)
			attempts += len(results.Results)
		}
		require.Greater(t, attempts, 6, "a start was throttled and retried")
	})
}

// --quota StateTransition=10/5 holds a 40-state chain back until the
// bucket has refilled for the 30 transitions it lacked: 6 s. It is
// delayed, not failed.
func TestQuotaStateTransitions(t *testing.T) {
	t.Parallel()
	s := startServer(t, filepath.Join(t.TempDir(), "q.db"), "--quota", "StateTransition=10/5")
	c := s.client(t)
	var states []string
	for i := 1; i <= 40; i++ {
		next := fmt.Sprintf(`"Next": "P%d"`, i+1)
		if i == 40 {
			next = `"End": true`
		}
		states = append(states, fmt.Sprintf(`"P%d": {"Type": "Pass", %s}`, i, next))
	}
	def := `{"StartAt": "P1", "States": {` + strings.Join(states, ", ") + `}}`
	arn := createMachine(t, c, "chain", def)

	began := time.Now()
	out, err := c.StartExecution(context.Background(), &sfn.StartExecutionInput{StateMachineArn: &arn})
	require.NoError(t, err)
	done := waitDone(t, c, *out.ExecutionArn)
	took := time.Since(began)
	require.Equal(t, "SUCCEEDED", string(done.Status))
	// 40 transitions, 10 in the bucket, 30 refilled at 5 a second.
	require.GreaterOrEqual(t, took, 6*time.Second-10*time.Millisecond)

	families := scrape(t, s)
	require.Equal(t, 30.0, counter(families, "stepwise_execution_throttled_total", "state_machine_arn", arn))
	require.Equal(t, 40.0, counter(families, "stepwise_api_consumed_capacity_total", "operation", "StateTransition"))

	// The quota holds back state transitions only: Express runs freely.
	exp, err := c.CreateStateMachine(context.Background(), &sfn.CreateStateMachineInput{Name: aws.String("chain-express"),
		Definition: aws.String(def), RoleArn: aws.String(roleArn), Type: "EXPRESS"})
	require.NoError(t, err)
	syncOut, err := s.defaultRetryClient(t).StartSyncExecution(context.Background(),
		&sfn.StartSyncExecutionInput{StateMachineArn: exp.StateMachineArn}, func(o *sfn.Options) {
			o.APIOptions = append(o.APIOptions, disableHostPrefix)
		})
	require.NoError(t, err)
	require.Equal(t, "SUCCEEDED", string(syncOut.Status))
	require.Zero(t, counter(scrape(t, s), "stepwise_execution_throttled_total", "state_machine_arn", *exp.StateMachineArn),
		"a synchronous Express run is not throttled")
	require.Equal(t, 40.0, counter(scrape(t, s), "stepwise_api_consumed_capacity_total", "operation", "StateTransition"),
		"nor counted against the quota")
}

// --quotas aws is accepted and does not get in the way of a small load.
func TestQuotasAWS(t *testing.T) {
	t.Parallel()
	s := startServer(t, filepath.Join(t.TempDir(), "q.db"), "--quotas", "aws", "--quota", "DescribeExecution=1000/1000")
	c := s.client(t)
	arn := createMachine(t, c, "aws", quotaPassDefinition)
	for range 3 {
		out, err := c.StartExecution(context.Background(), &sfn.StartExecutionInput{StateMachineArn: &arn})
		require.NoError(t, err)
		require.Equal(t, "SUCCEEDED", string(waitDone(t, c, *out.ExecutionArn).Status))
	}
	families := scrape(t, s)
	require.Equal(t, 3.0, counter(families, "stepwise_api_consumed_capacity_total", "operation", "StartExecution"))
	require.Equal(t, 3.0, counter(families, "stepwise_api_consumed_capacity_total", "operation", "StateTransition"))
	require.Zero(t, counter(families, "stepwise_api_throttled_events_total", "operation", "StartExecution"))
}

// A bad quota is a usage error naming the value.
func TestQuotaUsageErrors(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--quota", "StartExecution=5"}, `stepwise: quota "StartExecution=5": give it as OPERATION=BUCKET/REFILL_PER_SECOND, e.g. StartExecution=1300/300`},
		{[]string{"--quota", "StartExecutions=5/1"}, `stepwise: quota "StartExecutions=5/1": "StartExecutions" is neither a Step Functions API operation (e.g. StartExecution) nor StateTransition`},
		{[]string{"--quota", "StateTransition=10/0"}, `stepwise: quota "StateTransition=10/0": refill "0": must be a positive number of tokens per second`},
		{[]string{"--quotas", "azure"}, `stepwise: quotas "azure": the only preset is "aws" (AWS's default quotas)`},
	} {
		cmd := exec.Command(binary, append([]string{"serve", "--addr", "127.0.0.1:0", "--db", ":memory:"}, tt.args...)...)
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		require.ErrorAs(t, err, &exit, "%q: %s", tt.args, out)
		require.Equal(t, 2, exit.ExitCode(), "%q", tt.args)
		require.Equal(t, tt.want, strings.TrimSpace(string(out)))
	}
}
