package e2e

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/require"

	"stepwise/integration/integrationtest"
	"stepwise/internal/testkit/testwait"
)

// awsConfig is an AWS SDK configuration for a local stand-in.
func awsConfig(t *testing.T) aws.Config {
	t.Helper()
	cfg, err := config.LoadDefaultConfig(context.Background(), config.WithRegion("us-east-1"),
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", "")))
	require.NoError(t, err)
	return cfg
}

// TestSQSCallbackWorker runs the callback pattern through the real server
// and a real SQS stand-in (moto): the execution sends a message carrying
// its task token to a queue, a worker reads the queue and answers with
// SendTaskSuccess, and the execution succeeds with the worker's output.
// A message to a missing queue fails the task as AWS names it; an SNS
// publish works the same way.
func TestSQSCallbackWorker(t *testing.T) {
	t.Parallel()
	moto := integrationtest.Moto(t)
	s := startServer(t, filepath.Join(t.TempDir(), "integration.db"), "--aws-endpoint", moto)
	c := s.client(t)
	ctx := context.Background()
	q := sqs.NewFromConfig(awsConfig(t), func(o *sqs.Options) { o.BaseEndpoint = aws.String(moto) })
	queue, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("approvals")})
	require.NoError(t, err)
	topics := sns.NewFromConfig(awsConfig(t), func(o *sns.Options) { o.BaseEndpoint = aws.String(moto) })
	topic, err := topics.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String("done")})
	require.NoError(t, err)

	sm := createMachine(t, c, "approval", `{"StartAt": "Ask", "States": {
		"Ask": {"Type": "Task", "Resource": "arn:aws:states:::sqs:sendMessage.waitForTaskToken",
			"Parameters": {"QueueUrl.$": "$.queue", "MessageBody": {"order.$": "$.order", "TaskToken.$": "$$.Task.Token"}},
			"HeartbeatSeconds": 600, "ResultPath": "$.answer", "Next": "Tell"},
		"Tell": {"Type": "Task", "Resource": "arn:aws:states:::sns:publish",
			"Parameters": {"TopicArn.$": "$.topic", "Message.$": "$.answer"}, "ResultPath": "$.published", "Next": "Missing"},
		"Missing": {"Type": "Task", "Resource": "arn:aws:states:::sqs:sendMessage",
			"Parameters": {"QueueUrl.$": "States.Format('{}-missing', $.queue)", "MessageBody": "x"},
			"Catch": [{"ErrorEquals": ["SQS.QueueDoesNotExistException"], "ResultPath": "$.missing", "Next": "Done"}], "End": true},
		"Done": {"Type": "Pass", "End": true}}}`)
	input, _ := json.Marshal(map[string]any{"queue": aws.ToString(queue.QueueUrl), "topic": aws.ToString(topic.TopicArn), "order": 42})
	exec := startExecution(t, c, sm, "order-42", string(input))

	// The worker.
	var body struct {
		Order     int
		TaskToken string
	}
	testwait.Until(t, func() bool {
		got, err := q.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: queue.QueueUrl, WaitTimeSeconds: 1})
		require.NoError(t, err)
		if len(got.Messages) == 0 {
			return false
		}
		require.NoError(t, json.Unmarshal([]byte(aws.ToString(got.Messages[0].Body)), &body))
		return true
	}, 30*time.Second, 10*time.Millisecond)
	require.Equal(t, 42, body.Order)
	// As AWS records a callback task: started, then submitted with the
	// SendMessage response (before the worker answers).
	var submitted *types.HistoryEvent
	testwait.Until(t, func() bool {
		h, err := c.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(exec)})
		require.NoError(t, err)
		var kinds []types.HistoryEventType
		for i, ev := range h.Events {
			kinds = append(kinds, ev.Type)
			if ev.Type == types.HistoryEventTypeTaskSubmitted {
				submitted = &h.Events[i]
			}
		}
		return slices.Contains(kinds, types.HistoryEventTypeTaskSubmitted) &&
			slices.Equal(kinds[2:5], []types.HistoryEventType{types.HistoryEventTypeTaskScheduled, types.HistoryEventTypeTaskStarted, types.HistoryEventTypeTaskSubmitted})
	}, 30*time.Second, 10*time.Millisecond)
	d := submitted.TaskSubmittedEventDetails
	require.Equal(t, "sqs", aws.ToString(d.ResourceType))
	require.Equal(t, "sendMessage.waitForTaskToken", aws.ToString(d.Resource))
	sent := decodeJSON(t, aws.ToString(d.Output))
	require.NotEmpty(t, sent["MessageId"])
	require.NotEmpty(t, sent["MD5OfMessageBody"])
	_, err = c.SendTaskHeartbeat(ctx, &sfn.SendTaskHeartbeatInput{TaskToken: aws.String(body.TaskToken)})
	require.NoError(t, err)
	_, err = c.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(body.TaskToken), Output: aws.String(`{"approved": true}`)})
	require.NoError(t, err)

	done := waitDone(t, c, exec)
	require.Equal(t, types.ExecutionStatusSucceeded, done.Status, "%s: %s", aws.ToString(done.Error), aws.ToString(done.Cause))
	out := decodeJSON(t, aws.ToString(done.Output))
	require.Equal(t, map[string]any{"approved": true}, out["answer"])
	published := out["published"].(map[string]any)
	require.NotEmpty(t, published["MessageId"])
	require.Contains(t, published, "SdkHttpMetadata")
	missing := out["missing"].(map[string]any)
	require.Equal(t, "SQS.QueueDoesNotExistException", missing["Error"])
	require.Contains(t, missing["Cause"], "(Service: AmazonSQS; Status Code: 400; Error Code: ")
}

// TestSfnSDKIntegration completes another execution's .waitForTaskToken
// task from a state machine with arn:aws:states:::aws-sdk:sfn:sendTaskSuccess,
// through the real server. The waiting task's resource has no integration
// here (no endpoint is configured for it): the task just waits for its
// token.
func TestSfnSDKIntegration(t *testing.T) {
	t.Parallel()
	s := startServer(t, filepath.Join(t.TempDir(), "sdk.db"))
	c := s.client(t)
	waiter := createMachine(t, c, "waiter", `{"StartAt": "Wait", "States": {"Wait": {"Type": "Task",
		"Resource": "arn:aws:states:::states:startExecution.waitForTaskToken",
		"Parameters": {"StateMachineArn": "`+smArn("approver")+`", "Input": {"token.$": "$$.Task.Token", "order.$": "$.order"}}, "End": true}}}`)
	createMachine(t, c, "approver", `{"StartAt": "Approve", "States": {"Approve": {"Type": "Task",
		"Resource": "arn:aws:states:::aws-sdk:sfn:sendTaskSuccess",
		"Parameters": {"TaskToken.$": "$.token", "Output": {"approved.$": "$.order"}}, "End": true}}}`)
	w := startExecution(t, c, waiter, "w1", `{"order": 7}`)
	d := waitDone(t, c, w)
	require.Equal(t, types.ExecutionStatusSucceeded, d.Status, "%s: %s", aws.ToString(d.Error), aws.ToString(d.Cause))
	require.JSONEq(t, `{"approved": 7}`, aws.ToString(d.Output))

	// A bad token fails the calling task as AWS names it.
	bad := createMachine(t, c, "bad", `{"StartAt": "Approve", "States": {"Approve": {"Type": "Task",
		"Resource": "arn:aws:states:::aws-sdk:sfn:sendTaskSuccess", "Parameters": {"TaskToken": "NoSuchTaskToken", "Output": "{}"}, "End": true}}}`)
	d = waitDone(t, c, startExecution(t, c, bad, "b1", `{}`))
	require.Equal(t, types.ExecutionStatusFailed, d.Status)
	require.Equal(t, "Sfn.InvalidTokenException", aws.ToString(d.Error))
	require.Regexp(t, `^Invalid Token: '.*' \(Service: Sfn, Status Code: 400, Request ID: [0-9a-f-]{36}\)$`, aws.ToString(d.Cause))
}

// TestSQSCallbackAcrossCrash: a callback's message is sent once. The
// server is killed (SIGKILL) after the message is sent and recorded; the
// restarted server sends no second message with the same token, and the
// worker's answer to the first completes the task.
func TestSQSCallbackAcrossCrash(t *testing.T) {
	t.Parallel()
	moto := integrationtest.Moto(t)
	db := filepath.Join(t.TempDir(), "callback.db")
	s := startServer(t, db, "--aws-endpoint", moto)
	c := s.client(t)
	ctx := context.Background()
	q := sqs.NewFromConfig(awsConfig(t), func(o *sqs.Options) { o.BaseEndpoint = aws.String(moto) })
	queue, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("once")})
	require.NoError(t, err)
	sm := createMachine(t, c, "once", `{"StartAt": "Ask", "States": {
		"Ask": {"Type": "Task", "Resource": "arn:aws:states:::sqs:sendMessage.waitForTaskToken",
			"Parameters": {"QueueUrl.$": "$.queue", "MessageBody.$": "$$.Task.Token"}, "End": true}}}`)
	input, _ := json.Marshal(map[string]any{"queue": aws.ToString(queue.QueueUrl)})
	exec := startExecution(t, c, sm, "once", string(input))
	testwait.Until(t, func() bool {
		h, err := c.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(exec)})
		require.NoError(t, err)
		return slices.ContainsFunc(h.Events, func(ev types.HistoryEvent) bool { return ev.Type == types.HistoryEventTypeTaskSubmitted })
	}, 30*time.Second, 10*time.Millisecond, "TaskSubmitted is recorded")
	got, err := q.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: queue.QueueUrl, WaitTimeSeconds: 5})
	require.NoError(t, err)
	require.Len(t, got.Messages, 1)
	token := aws.ToString(got.Messages[0].Body)

	s.kill()
	s = startServer(t, db, "--aws-endpoint", moto)
	c = s.client(t)
	again, err := q.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: queue.QueueUrl, WaitTimeSeconds: 2})
	require.NoError(t, err)
	require.Empty(t, again.Messages, "the restarted server sent the message again")

	_, err = c.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(token), Output: aws.String(`{"ok": 1}`)})
	require.NoError(t, err)
	done := waitDone(t, c, exec)
	require.Equal(t, types.ExecutionStatusSucceeded, done.Status, "%s: %s", aws.ToString(done.Error), aws.ToString(done.Cause))
	require.JSONEq(t, `{"ok": 1}`, aws.ToString(done.Output))
}
