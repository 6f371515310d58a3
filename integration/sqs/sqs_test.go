package sqs_test

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/require"

	"stepwise/engine/task"
	"stepwise/integration"
	"stepwise/integration/integrationtest"
	_ "stepwise/integration/sqs"
	"stepwise/interp"
	"stepwise/jsonvalue"
)

func call(t *testing.T, reg *integration.Registry, resource, params string) task.Result {
	t.Helper()
	p, err := jsonvalue.ParseString(params)
	require.NoError(t, err)
	ch := make(chan task.Result, 1)
	reg.Run(context.Background(), &task.Task{ExecutionArn: "arn:x", ID: "t1", Request: &interp.TaskRequest{Resource: resource, Parameters: p}},
		func(r task.Result) { ch <- r })
	select {
	case r := <-ch:
		return r
	case <-time.After(30 * time.Second):
		t.Fatal("no result")
		return task.Result{}
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

// A null MessageBody is sent to SQS as it is, and SQS's refusal is the
// task's catchable failure, named as AWS names it.
func TestSendMessageWithoutBody(t *testing.T) {
	t.Parallel()
	var sent atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		sent.Add(1)
		if strings.Contains(string(body), "MessageBody") {
			t.Errorf("the request carries a MessageBody: %s", body)
		}
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.Header().Set("x-amzn-RequestId", "req-1")
		w.Header().Set("x-amzn-query-error", "MissingParameter;Sender")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"__type": "com.amazonaws.sqs#MissingParameter", "message": "The request must contain the parameter MessageBody."}`)
	}))
	defer srv.Close()
	reg, err := integration.New(integration.Config{Region: "us-east-1", Account: "123456789012", Endpoints: map[string]string{"sqs": srv.URL}})
	require.NoError(t, err)
	res := call(t, reg, "arn:aws:states:::sqs:sendMessage", `{"QueueUrl": "`+srv.URL+`/123456789012/jobs", "MessageBody": null}`)
	require.NotNil(t, res.Failure)
	require.Equal(t, "SQS.AmazonSQSException", res.Failure.Name)
	require.Equal(t, "The request must contain the parameter MessageBody. (Service: AmazonSQS; Status Code: 400; Error Code: MissingParameter; Request ID: req-1; Proxy: null)", res.Failure.Cause)
	require.Equal(t, int32(1), sent.Load(), "the request went to SQS once")
}
