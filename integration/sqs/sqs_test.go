package sqs_test

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/require"

	"stepwise/engine"
	"stepwise/integration"
	"stepwise/integration/integrationtest"
	_ "stepwise/integration/sqs"
	"stepwise/interp"
	"stepwise/jsonvalue"
)

func call(t *testing.T, reg *integration.Registry, resource, params string) engine.TaskResult {
	t.Helper()
	p, err := jsonvalue.ParseString(params)
	require.NoError(t, err)
	ch := make(chan engine.TaskResult, 1)
	reg.Run(context.Background(), &engine.Task{ExecutionArn: "arn:x", ID: "t1", Request: &interp.TaskRequest{Resource: resource, Parameters: p}},
		func(r engine.TaskResult) { ch <- r })
	select {
	case r := <-ch:
		return r
	case <-time.After(30 * time.Second):
		t.Fatal("no result")
		return engine.TaskResult{}
	}
}

func TestSendMessage(t *testing.T) {
	t.Parallel()
	moto := integrationtest.Moto(t)
	cfg := integration.Config{Region: "us-east-1", Account: "123456789012", Endpoints: map[string]string{"sqs": moto}}
	reg, err := integration.New(cfg)
	require.NoError(t, err)
	awsCfg, _, err := cfg.AWSConfig(context.Background(), "sqs")
	require.NoError(t, err)
	client := sqs.NewFromConfig(awsCfg, func(o *sqs.Options) { o.BaseEndpoint = aws.String(moto) })
	q, err := client.CreateQueue(context.Background(), &sqs.CreateQueueInput{QueueName: aws.String("jobs")})
	require.NoError(t, err)

	res := call(t, reg, "arn:aws:states:::sqs:sendMessage", `{"QueueUrl": "`+*q.QueueUrl+`", "MessageBody": {"Message": "hello", "n": 1},
		"MessageAttributes": {"kind": {"DataType": "String", "StringValue": "greeting"}}}`)
	require.Nil(t, res.Failure)
	out := res.Output.(*jsonvalue.Object)
	sum := md5.Sum([]byte(`{"Message":"hello","n":1}`))
	md5Body, _ := out.Get("MD5OfMessageBody")
	require.Equal(t, hex.EncodeToString(sum[:]), md5Body, "an object body is sent as compact JSON text")
	require.Equal(t, []string{"MD5OfMessageAttributes", "MD5OfMessageBody", "MessageId", "SdkHttpMetadata", "SdkResponseMetadata"}, out.Keys())
	meta, _ := out.Get("SdkHttpMetadata")
	status, _ := meta.(*jsonvalue.Object).Get("HttpStatusCode")
	require.Equal(t, jsonvalue.Number("200"), status)

	got, err := client.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: q.QueueUrl, MessageAttributeNames: []string{"All"}})
	require.NoError(t, err)
	require.Len(t, got.Messages, 1)
	require.Equal(t, `{"Message":"hello","n":1}`, *got.Messages[0].Body)
	require.Equal(t, "greeting", *got.Messages[0].MessageAttributes["kind"].StringValue)

	res = call(t, reg, "arn:aws:states:::sqs:sendMessage", `{"QueueUrl": "`+moto+`/123456789012/nope", "MessageBody": "x"}`)
	require.NotNil(t, res.Failure)
	require.Equal(t, "SQS.QueueDoesNotExistException", res.Failure.Name)
	require.Contains(t, res.Failure.Cause, "(Service: AmazonSQS; Status Code: 400; Error Code: ")

	res = call(t, reg, "arn:aws:states:::sqs:sendMessage", `{"MessageBody": "x"}`)
	require.Equal(t, "The field 'QueueUrl' is required but was missing", res.Failure.Cause)
}
