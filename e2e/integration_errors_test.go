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

// Bad input to integrations, through the server: each task fails with a
// clear, AWS-named error that a Catch sees; none hangs, and the server
// keeps serving. An AWS SDK action that does not exist is refused at
// create time, as AWS refuses it.
func TestIntegrationErrors(t *testing.T) {
	t.Parallel()
	moto := integrationtest.Moto(t)
	s := startServer(t, filepath.Join(t.TempDir(), "errors.db"), "--aws-endpoint", moto,
		"--endpoint", "sqs=http://127.0.0.1:1", // refuses connections
		"--function", "garbage=echo not json",
		"--function", "forever=sleep 600")
	c := s.client(t)
	ctx := context.Background()

	_, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("typo"), RoleArn: aws.String(roleArn),
		Definition: aws.String(`{"StartAt": "T", "States": {"T": {"Type": "Task", "Resource": "arn:aws:states:::aws-sdk:s3:getObjekt", "End": true}}}`)})
	require.ErrorContains(t, err, "InvalidDefinition")
	require.ErrorContains(t, err, "The resource provided arn:aws:states:::aws-sdk:s3:getObjekt is not recognized")

	// Each branch runs one bad task and catches what it fails with.
	branch := func(name, resource, params string, extra string) string {
		return `{"StartAt": "` + name + `", "States": {"` + name + `": {"Type": "Task", "Resource": "` + resource + `", "Parameters": ` + params + extra + `,
			"Catch": [{"ErrorEquals": ["States.ALL"], "Next": "` + name + `Caught"}], "End": true},
			"` + name + `Caught": {"Type": "Pass", "Parameters": {"state": "` + name + `", "error.$": "$.Error"}, "End": true}}}`
	}
	def := `{"StartAt": "All", "States": {"All": {"Type": "Parallel", "End": true, "Branches": [` +
		branch("WrongType", "arn:aws:states:::lambda:invoke", `{"FunctionName": "f", "Qualifier": 3}`, "") + `,` +
		branch("MissingTable", "arn:aws:states:::dynamodb:getItem", `{"TableName": "nope", "Key": {"id": {"S": "1"}}}`, "") + `,` +
		branch("UnknownParameter", "arn:aws:states:::aws-sdk:dynamodb:getItem", `{"TableName": "nope", "Kee": {}}`, "") + `,` +
		branch("Refused", "arn:aws:states:::sqs:sendMessage", `{"QueueUrl": "http://127.0.0.1:1/q", "MessageBody": "x"}`, "") + `,` +
		branch("Garbage", "arn:aws:states:::lambda:invoke", `{"FunctionName": "garbage"}`, "") + `,` +
		branch("Forever", "arn:aws:states:::lambda:invoke", `{"FunctionName": "forever"}`, `, "TimeoutSeconds": 1`) + `]}}}`
	sm := createMachine(t, c, "errors", def)
	done := waitDone(t, c, startExecution(t, c, sm, "bad", `{}`))
	require.Equal(t, "SUCCEEDED", string(done.Status), "%s: %s", aws.ToString(done.Error), aws.ToString(done.Cause))
	var caught []struct{ State, Error string }
	require.NoError(t, json.Unmarshal([]byte(aws.ToString(done.Output)), &caught))
	got := map[string]string{}
	for _, c := range caught {
		got[c.State] = c.Error
	}
	require.Equal(t, map[string]string{
		"WrongType":        "States.TaskFailed",
		"MissingTable":     "DynamoDB.ResourceNotFoundException",
		"UnknownParameter": "States.TaskFailed",
		"Refused":          "SQS.SdkClientException",
		"Garbage":          "Runtime.MarshalError",
		"Forever":          "States.Timeout",
	}, got)

	// The server still answers.
	_, err = c.ListStateMachines(ctx, &sfn.ListStateMachinesInput{})
	require.NoError(t, err)
}
