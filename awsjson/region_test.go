package awsjson_test

import (
	"net/http/httptest"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/require"
)

// A client in ap-northeast-1 of a server serving us-east-1 is refused as
// AWS's us-east-1 endpoint refuses it, with a hint naming the server's
// region and serve --region; an ARN of ap-northeast-1, asked with a
// client of the right region, does not exist, with the same hint; the
// codes stay AWS's.
func TestAnotherRegionIsNamed(t *testing.T) {
	t.Parallel()
	b := setup(t)
	srv := httptest.NewServer(b.handler)
	t.Cleanup(srv.Close)
	client := func(region string) *sfn.Client {
		cfg, err := config.LoadDefaultConfig(b.ctx, config.WithRegion(region),
			config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", "")),
			config.WithRetryMaxAttempts(1))
		require.NoError(t, err)
		return sfn.NewFromConfig(cfg, func(o *sfn.Options) { o.BaseEndpoint = aws.String(srv.URL) })
	}

	_, err := client("ap-northeast-1").ListStateMachines(b.ctx, &sfn.ListStateMachinesInput{})
	var apiErr smithy.APIError
	require.ErrorAs(t, err, &apiErr)
	require.Equal(t, "InvalidSignatureException", apiErr.ErrorCode())
	require.Contains(t, apiErr.ErrorMessage(), "Credential should be scoped to a valid region.")
	require.Contains(t, apiErr.ErrorMessage(), "this server serves us-east-1, the request is for ap-northeast-1")
	require.Contains(t, apiErr.ErrorMessage(), "stepwise serve --region ap-northeast-1")

	east := client("us-east-1")
	_, err = east.DescribeStateMachine(b.ctx, &sfn.DescribeStateMachineInput{
		StateMachineArn: aws.String("arn:aws:states:ap-northeast-1:123456789012:stateMachine:night")})
	missing := requireErrorAs[*types.StateMachineDoesNotExist](t, err)
	require.Contains(t, missing.ErrorMessage(), "State Machine Does Not Exist: 'arn:aws:states:ap-northeast-1:123456789012:stateMachine:night'")
	require.Contains(t, missing.ErrorMessage(), "stepwise serve --region ap-northeast-1")
	_, err = east.DescribeExecution(b.ctx, &sfn.DescribeExecutionInput{
		ExecutionArn: aws.String("arn:aws:states:ap-northeast-1:123456789012:execution:night:n1")})
	gone := requireErrorAs[*types.ExecutionDoesNotExist](t, err)
	require.Contains(t, gone.ErrorMessage(), "this server serves us-east-1")

	// An ARN of the server's region that does not exist: no hint.
	_, err = east.DescribeStateMachine(b.ctx, &sfn.DescribeStateMachineInput{
		StateMachineArn: aws.String("arn:aws:states:us-east-1:123456789012:stateMachine:night")})
	missing = requireErrorAs[*types.StateMachineDoesNotExist](t, err)
	require.NotContains(t, missing.ErrorMessage(), "Stepwise:")
}
