package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/require"

	"stepwise/integration/integrationtest"
)

// s3EventBridgeTemplate: a bucket that sends its events to EventBridge,
// and a state machine started by its Object Created events.
const s3EventBridgeTemplate = `AWSTemplateFormatVersion: "2010-09-09"
Transform: AWS::Serverless-2016-10-31
Resources:
  Uploads:
    Type: AWS::S3::Bucket
    Properties:
      BucketName: eb-uploads
      NotificationConfiguration:
        EventBridgeConfiguration:
          EventBridgeEnabled: true
  OnUpload:
    Type: AWS::Serverless::StateMachine
    Properties:
      Name: on-upload
      Definition: {StartAt: P, States: {P: {Type: Pass, End: true}}}
      Events:
        Created:
          Type: EventBridgeRule
          Properties:
            Pattern:
              source: [aws.s3]
              detail-type: [Object Created]
              detail: {bucket: {name: [!Ref Uploads]}}
`

// TestS3EventBridgeStartsAStateMachine: an object put in a bucket with
// EventBridge enabled starts the state machine whose rule matches S3's
// Object Created event, on the server's local bus, before and after a
// restart; deleting the stack takes out the hidden rule and queue.
func TestS3EventBridgeStartsAStateMachine(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	moto := integrationtest.Moto(t)
	app := t.TempDir()
	template := filepath.Join(app, "template.yaml")
	require.NoError(t, os.WriteFile(template, []byte(s3EventBridgeTemplate), 0o644))
	db := filepath.Join(t.TempDir(), "stepwise.db")
	s := startServer(t, db, "--aws-endpoint", moto)
	out, code := stepwiseCLI(t, "deploy", template, "--endpoint", s.url(), "--stack-name", "uploads")
	require.Equal(t, 0, code, out)
	require.NotContains(t, out, "not applied here")

	cfg := awsConfig(t)
	buckets := s3.NewFromConfig(cfg, func(o *s3.Options) { o.BaseEndpoint = aws.String(moto); o.UsePathStyle = true })
	queues := sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.BaseEndpoint = aws.String(moto) })
	eb := eventbridge.NewFromConfig(cfg, func(o *eventbridge.Options) { o.BaseEndpoint = aws.String(moto) })
	put := func(key string) {
		_, err := buckets.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("eb-uploads"), Key: aws.String(key), Body: strings.NewReader("hello")})
		require.NoError(t, err)
	}
	arn := smArn("on-upload")
	inputs := func(c *sfn.Client, n int) []string {
		var got []string
		require.Eventually(t, func() bool {
			list, err := c.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: aws.String(arn)})
			require.NoError(t, err)
			got = got[:0]
			for _, e := range list.Executions {
				d, err := c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: e.ExecutionArn})
				require.NoError(t, err)
				got = append(got, aws.ToString(d.Input))
			}
			return len(got) >= n
		}, 60*time.Second, 100*time.Millisecond, "on-upload has %d executions", n)
		return got
	}
	type event struct {
		Version    string   `json:"version"`
		ID         string   `json:"id"`
		DetailType string   `json:"detail-type"`
		Source     string   `json:"source"`
		Account    string   `json:"account"`
		Time       string   `json:"time"`
		Region     string   `json:"region"`
		Resources  []string `json:"resources"`
		Detail     struct {
			Bucket struct{ Name string } `json:"bucket"`
			Object struct {
				Key  string `json:"key"`
				Size int    `json:"size"`
				ETag string `json:"etag"`
			} `json:"object"`
			Reason string `json:"reason"`
		} `json:"detail"`
	}
	decode := func(in string) event {
		var ev event
		require.NoError(t, json.Unmarshal([]byte(in), &ev), in)
		return ev
	}

	c := s.client(t)
	put("in/a.txt")
	got := inputs(c, 1)
	ev := decode(got[0])
	require.Equal(t, "0", ev.Version)
	require.Equal(t, "Object Created", ev.DetailType)
	require.Equal(t, "aws.s3", ev.Source)
	require.Equal(t, "123456789012", ev.Account)
	require.Equal(t, "us-east-1", ev.Region)
	require.Equal(t, []string{"arn:aws:s3:::eb-uploads"}, ev.Resources)
	_, err := time.Parse(time.RFC3339, ev.Time)
	require.NoError(t, err, ev.Time)
	require.NotEmpty(t, ev.ID)
	require.Equal(t, "eb-uploads", ev.Detail.Bucket.Name)
	require.Equal(t, "in/a.txt", ev.Detail.Object.Key)
	require.Equal(t, 5, ev.Detail.Object.Size)
	require.NotEmpty(t, ev.Detail.Object.ETag)
	first := ev.ID

	// A restart finds the rule and the queue and goes on; each event has
	// its own id.
	s.stop(t)
	stopped := time.Now()
	s = startServer(t, db, "--aws-endpoint", moto)
	c = s.client(t)
	// (The receive the stop cut short waits at moto until its long poll
	// ends, and would take the next message.)
	time.Sleep(time.Until(stopped.Add(21 * time.Second)))
	put("in/b.txt")
	got = inputs(c, 2)
	keys := map[string]string{}
	for _, in := range got {
		ev := decode(in)
		keys[ev.Detail.Object.Key] = ev.ID
	}
	require.Contains(t, keys, "in/b.txt")
	require.NotEqual(t, first, keys["in/b.txt"])
	queueList, err := queues.ListQueues(ctx, &sqs.ListQueuesInput{QueueNamePrefix: aws.String("stepwise-s3eb-")})
	require.NoError(t, err)
	require.Len(t, queueList.QueueUrls, 1, "the restart reused the queue")

	// Deleting the stack takes out the hidden rule and queue.
	for _, k := range []string{"in/a.txt", "in/b.txt"} {
		_, err := buckets.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("eb-uploads"), Key: aws.String(k)})
		require.NoError(t, err)
	}
	out, code = stepwiseCLI(t, "deploy", template, "--endpoint", s.url(), "--stack-name", "uploads", "--delete")
	require.Equal(t, 0, code, out)
	queueList, err = queues.ListQueues(ctx, &sqs.ListQueuesInput{QueueNamePrefix: aws.String("stepwise-s3eb-")})
	require.NoError(t, err)
	require.Empty(t, queueList.QueueUrls)
	rules, err := eb.ListRules(ctx, &eventbridge.ListRulesInput{NamePrefix: aws.String("stepwise-s3eb-")})
	require.NoError(t, err)
	require.Empty(t, rules.Rules)
}
