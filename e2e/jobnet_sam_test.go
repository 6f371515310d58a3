package e2e

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/stretchr/testify/require"

	"stepwise/integration/integrationtest"
	"stepwise/internal/testkit/testwait"
)

// TestJobNetSAMExample deploys examples/jobnet-sam as its README says
// (one `stepwise deploy` against a server with moto as its AWS
// endpoint) and runs a night: then again with a job broken, whose
// JobFailed fails the night; the job mended (deployed again without
// BrokenJobs), a redrive of the night runs only the failed job again.
func TestJobNetSAMExample(t *testing.T) {
	ctx := context.Background()
	moto := integrationtest.Moto(t)
	s := startServer(t, filepath.Join(t.TempDir(), "stepwise.db"), "--aws-endpoint", moto)
	c := s.client(t)
	template := filepath.Join("..", "examples", "jobnet-sam", "template.yaml")
	out, code := stepwiseCLI(t, "deploy", template, "--endpoint", s.url())
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "stack jobnet-sam")
	require.Contains(t, out, "created   JobNet (AWS::Serverless::StateMachine)")

	ddb := dynamodb.NewFromConfig(awsConfig(t), func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(moto) })
	_, err := ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("jobnet-jobs"), Item: map[string]ddbtypes.AttributeValue{
		"pk": &ddbtypes.AttributeValueMemberS{Value: night}, "jobs": &ddbtypes.AttributeValueMemberSS{Value: jobs},
	}})
	require.NoError(t, err)
	jobStatus := func(job string) string {
		got, err := ddb.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("jobnet-jobs"),
			Key: map[string]ddbtypes.AttributeValue{"pk": &ddbtypes.AttributeValueMemberS{Value: night + "#" + job}}})
		require.NoError(t, err)
		s, _ := got.Item["status"].(*ddbtypes.AttributeValueMemberS)
		require.NotNil(t, s, "job %s has no status: %v", job, got.Item)
		return s.Value
	}
	start := func(name string) *sfn.DescribeExecutionOutput {
		started, err := c.StartExecution(ctx, &sfn.StartExecutionInput{Name: aws.String(name), Input: aws.String(`{"night": "` + night + `"}`),
			StateMachineArn: aws.String("arn:aws:states:us-east-1:123456789012:stateMachine:jobnet")})
		require.NoError(t, err)
		return waitDone(t, c, aws.ToString(started.ExecutionArn))
	}

	done := start("first")
	require.Equal(t, "SUCCEEDED", string(done.Status), aws.ToString(done.Cause))
	for _, job := range jobs {
		require.Equal(t, "SUCCEEDED", jobStatus(job), job)
	}

	out, code = stepwiseCLI(t, "deploy", template, "--endpoint", s.url(), "--parameter-overrides", "BrokenJobs=reconcile")
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "updated   ReconcileFunction")
	done = start("broken")
	require.Equal(t, "FAILED", string(done.Status))
	require.Equal(t, "JobFailed", aws.ToString(done.Error))
	require.Contains(t, aws.ToString(done.Cause), "reconcile")
	require.Equal(t, "RUNNING", jobStatus("reconcile"), "a failed job stays marked running")
	require.Equal(t, "SUCCEEDED", jobStatus("extract"))
	require.Equal(t, "SUCCEEDED", jobStatus("load"))

	// Mend the job and redrive the night: only the failed job runs again.
	out, code = stepwiseCLI(t, "deploy", template, "--endpoint", s.url())
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "updated   ReconcileFunction")
	_, err = c.RedriveExecution(ctx, &sfn.RedriveExecutionInput{ExecutionArn: done.ExecutionArn})
	require.NoError(t, err)
	testwait.Until(t, func() bool {
		d, err := c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: done.ExecutionArn})
		return err == nil && d.Status != "RUNNING" && d.RedriveCount != nil && *d.RedriveCount == 1
	}, 60*time.Second, 50*time.Millisecond, "the redriven night ends")
	redriven, err := c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: done.ExecutionArn})
	require.NoError(t, err)
	hist, err := c.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: done.ExecutionArn, MaxResults: 1000})
	require.NoError(t, err)
	require.Equal(t, "SUCCEEDED", string(redriven.Status), aws.ToString(redriven.Cause))
	require.Equal(t, "SUCCEEDED", jobStatus("reconcile"))
	var after bool
	var rerun []string
	for _, ev := range hist.Events {
		if ev.Type == "ExecutionRedriven" {
			after = true
		}
		if after && ev.StateEnteredEventDetails != nil {
			rerun = append(rerun, aws.ToString(ev.StateEnteredEventDetails.Name))
		}
	}
	require.True(t, after, "the history has the redrive")
	require.NotContains(t, rerun, "Extract")
	require.NotContains(t, rerun, "Load")
	require.Contains(t, rerun, "Reconcile")

	out, code = stepwiseCLI(t, "deploy", template, "--endpoint", s.url(), "--delete")
	require.Equal(t, 0, code, out)
}
