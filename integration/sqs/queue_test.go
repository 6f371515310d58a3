package sqs_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/require"

	"stepwise/integration"
	"stepwise/integration/integrationtest"
	sqsint "stepwise/integration/sqs"
)

// TestQueuesSend: a message sent to a queue named by its ARN arrives,
// with its attributes, at the configured endpoint; a queue that does not
// exist is an error.
func TestQueuesSend(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	moto := integrationtest.Moto(t)
	cfg := integration.Config{Region: "us-east-1", Account: "123456789012", Endpoint: moto}
	awsCfg, _, err := cfg.AWSConfig(ctx, "sqs")
	require.NoError(t, err)
	client := sqs.NewFromConfig(awsCfg, func(o *sqs.Options) { o.BaseEndpoint = aws.String(moto) })
	q, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("dlq")})
	require.NoError(t, err)

	queues := sqsint.NewQueues(cfg)
	attrs := map[string]types.MessageAttributeValue{
		"RETRY_ATTEMPTS": {DataType: aws.String("Number"), StringValue: aws.String("2")},
		"ERROR_CODE":     {DataType: aws.String("String"), StringValue: aws.String("StateMachineDoesNotExist")},
	}
	require.NoError(t, queues.Send(ctx, "arn:aws:sqs:us-east-1:123456789012:dlq", `{"a":1}`, attrs))
	got, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: q.QueueUrl, MessageAttributeNames: []string{"All"}})
	require.NoError(t, err)
	require.Len(t, got.Messages, 1)
	require.Equal(t, `{"a":1}`, aws.ToString(got.Messages[0].Body))
	require.Equal(t, "2", aws.ToString(got.Messages[0].MessageAttributes["RETRY_ATTEMPTS"].StringValue))
	require.Equal(t, "Number", aws.ToString(got.Messages[0].MessageAttributes["RETRY_ATTEMPTS"].DataType))

	require.ErrorContains(t, queues.Send(ctx, "arn:aws:sqs:us-east-1:123456789012:nope", "x", nil), "get the URL of arn:aws:sqs:us-east-1:123456789012:nope")
	require.ErrorContains(t, queues.Send(ctx, "arn:aws:sns:us-east-1:123456789012:topic", "x", nil), "not an SQS queue ARN")
}
