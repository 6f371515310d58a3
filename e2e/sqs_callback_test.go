package e2e

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/stretchr/testify/require"

	"stepwise/integration/integrationtest"
)

// TestSQSCallbackExample deploys examples/sqs-callback as its README
// says and starts an execution: its task token goes to the queue, the
// queue's SQS event invokes the worker, whose SendTaskSuccess ends the
// wait, with no hand step; an empty order fails as the worker says.
func TestSQSCallbackExample(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	moto := integrationtest.Moto(t)
	s := startServer(t, filepath.Join(t.TempDir(), "stepwise.db"), "--aws-endpoint", moto)
	c := s.client(t)
	template := filepath.Join("..", "examples", "sqs-callback", "template.yaml")
	out, code := stepwiseCLI(t, "deploy", template, "--endpoint", s.url())
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "created   Worker (AWS::Serverless::Function)")
	require.NotContains(t, out, "not delivered", out)

	start := func(name, input string) *sfn.DescribeExecutionOutput {
		started, err := c.StartExecution(ctx, &sfn.StartExecutionInput{Name: aws.String(name), Input: aws.String(input),
			StateMachineArn: aws.String(smArn("sqs-callback"))})
		require.NoError(t, err)
		return waitDone(t, c, aws.ToString(started.ExecutionArn))
	}
	done := start("order-1", `{"order": {"id": "o-1", "items": [{"sku": "tea", "price": 4, "quantity": 3}, {"sku": "cup", "price": 10, "quantity": 1}]}}`)
	require.Equal(t, "SUCCEEDED", string(done.Status), aws.ToString(done.Cause))
	var result map[string]any
	require.NoError(t, json.Unmarshal([]byte(aws.ToString(done.Output)), &result))
	require.Equal(t, map[string]any{"order": "o-1", "total": 22.0, "pricedBy": "sqs-callback-worker"}, result)

	done = start("order-2", `{"order": {"id": "o-2", "items": []}}`)
	require.Equal(t, "FAILED", string(done.Status))
	require.Equal(t, "EmptyOrder", aws.ToString(done.Error))

	out, code = stepwiseCLI(t, "deploy", template, "--endpoint", s.url(), "--delete")
	require.Equal(t, 0, code, out)
}
