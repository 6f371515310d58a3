package e2e

import (
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/require"

	"stepwise/integration/integrationtest"
)

// recorded is what e2e/testdata/queues' recorder got: the function and
// its event.
type recorded struct {
	Function string `json:"function"`
	Event    struct {
		Records []map[string]any `json:"Records"`
	} `json:"event"`
}

// recorder collects the recorder's messages from queues-out.
type recorder struct {
	mu  sync.Mutex
	got []recorded
}

func (r *recorder) poll(t *testing.T, client *sqs.Client, url string) {
	t.Helper()
	out, err := client.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
	require.NoError(t, err)
	for _, m := range out.Messages {
		var rec recorded
		require.NoError(t, json.Unmarshal([]byte(aws.ToString(m.Body)), &rec))
		r.mu.Lock()
		r.got = append(r.got, rec)
		r.mu.Unlock()
		_, err := client.DeleteMessage(context.Background(), &sqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: m.ReceiptHandle})
		require.NoError(t, err)
	}
}

// wait polls until the function got n events, and returns them.
func (r *recorder) wait(t *testing.T, client *sqs.Client, url, function string, n int) []recorded {
	t.Helper()
	deadline := time.Now().Add(45 * time.Second)
	for {
		var of []recorded
		r.mu.Lock()
		for _, g := range r.got {
			if g.Function == function {
				of = append(of, g)
			}
		}
		r.mu.Unlock()
		if len(of) >= n {
			return of
		}
		require.False(t, time.Now().After(deadline), "%s got %d events of %d", function, len(of), n)
		r.poll(t, client, url)
	}
}

func queueDepth(t *testing.T, client *sqs.Client, url string) int {
	t.Helper()
	a, err := client.GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url),
		AttributeNames: []sqstypes.QueueAttributeName{"ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"}})
	require.NoError(t, err)
	visible, _ := strconv.Atoi(a.Attributes["ApproximateNumberOfMessages"])
	hidden, _ := strconv.Atoi(a.Attributes["ApproximateNumberOfMessagesNotVisible"])
	return visible + hidden
}

// TestQueueEventSources deploys e2e/testdata/queues and checks that each
// event source reaches its Python function as Lambda's event: an SQS
// batch (deleted; a failed one redelivered, then moved to the DLQ), a
// topic's notification, a bucket's event, an event source mapping; a
// mapping of a queue not there and one of a stream are warned of and
// the deploy succeeds; a server started again runs the wires again.
func TestQueueEventSources(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	moto := integrationtest.Moto(t)
	db := filepath.Join(t.TempDir(), "stepwise.db")
	s := startServer(t, db, "--aws-endpoint", moto)
	template := filepath.Join("testdata", "queues", "template.yaml")
	out, code := stepwiseCLI(t, "deploy", template, "--endpoint", s.url())
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "MissingToPlain (sqs): queue arn:aws:sqs:us-east-1:123456789012:queues-not-there")
	require.Contains(t, out, "StreamToPlain (AWS::Lambda::EventSourceMapping): the events of arn:aws:kinesis:us-east-1:123456789012:stream/clicks are not delivered here")
	require.Regexp(t, regexp.MustCompile(`MappingId\s*=?\s*[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-a[0-9a-f]{3}-[0-9a-f]{12}`), out)
	require.Contains(t, out, ":event-source-mapping:")

	cfg := awsConfig(t)
	sq := sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.BaseEndpoint = aws.String(moto) })
	url := func(name string) string {
		got, err := sq.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(name)})
		require.NoError(t, err)
		return aws.ToString(got.QueueUrl)
	}
	outURL, jobs, mapped := url("queues-out"), url("queues-jobs"), url("queues-mapped")
	send := func(queue, body string) {
		_, err := sq.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(queue), MessageBody: aws.String(body)})
		require.NoError(t, err)
	}
	rec := &recorder{}

	// SQS: a batch, then deleted.
	send(jobs, "a")
	got := rec.wait(t, sq, outURL, "queues-on-jobs", 1)
	r := got[0].Event.Records[0]
	require.Equal(t, "a", r["body"])
	require.Equal(t, "aws:sqs", r["eventSource"])
	require.Equal(t, "arn:aws:sqs:us-east-1:123456789012:queues-jobs", r["eventSourceARN"])
	require.Equal(t, "1", r["attributes"].(map[string]any)["ApproximateReceiveCount"])
	require.Eventually(t, func() bool { return queueDepth(t, sq, jobs) == 0 }, 10*time.Second, 100*time.Millisecond)

	// A failure: back after the visibility timeout, then to the DLQ.
	send(jobs, "fail")
	got = rec.wait(t, sq, outURL, "queues-on-jobs", 3)
	require.Equal(t, "fail", got[1].Event.Records[0]["body"])
	require.Equal(t, "2", got[2].Event.Records[0]["attributes"].(map[string]any)["ApproximateReceiveCount"])
	dlq := url("queues-jobs-dlq")
	require.Eventually(t, func() bool { return queueDepth(t, sq, dlq) == 1 }, 20*time.Second, 200*time.Millisecond)

	// SNS: the notification as Lambda's SNS event; the filter policy
	// keeps the others out.
	topics := sns.NewFromConfig(cfg, func(o *sns.Options) { o.BaseEndpoint = aws.String(moto) })
	topicArn := "arn:aws:sns:us-east-1:123456789012:queues-news"
	for _, kind := range []string{"other", "news"} {
		_, err := topics.Publish(ctx, &sns.PublishInput{TopicArn: aws.String(topicArn), Message: aws.String("hello " + kind), Subject: aws.String("Greeting"),
			MessageAttributes: map[string]snstypes.MessageAttributeValue{"kind": {DataType: aws.String("String"), StringValue: aws.String(kind)}}})
		require.NoError(t, err)
	}
	got = rec.wait(t, sq, outURL, "queues-on-news", 1)
	r = got[0].Event.Records[0]
	require.Equal(t, "aws:sns", r["EventSource"])
	n := r["Sns"].(map[string]any)
	require.Equal(t, "hello news", n["Message"])
	require.Equal(t, "Greeting", n["Subject"])
	require.Equal(t, map[string]any{"Type": "String", "Value": "news"}, n["MessageAttributes"].(map[string]any)["kind"])

	// S3: a put as the bucket's event.
	buckets := s3.NewFromConfig(cfg, func(o *s3.Options) { o.BaseEndpoint = aws.String(moto); o.UsePathStyle = true })
	_, err := buckets.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("queues-uploads"), Key: aws.String("report.csv"), Body: strings.NewReader("a,b")})
	require.NoError(t, err)
	got = rec.wait(t, sq, outURL, "queues-on-uploads", 1)
	r = got[0].Event.Records[0]
	require.Equal(t, "aws:s3", r["eventSource"])
	require.Equal(t, "report.csv", r["s3"].(map[string]any)["object"].(map[string]any)["key"])

	// The event source mapping.
	send(mapped, "m1")
	got = rec.wait(t, sq, outURL, "queues-plain", 1)
	require.Equal(t, "m1", got[0].Event.Records[0]["body"])

	// Started again: the wires run again (the topic's queue and
	// subscription are found, not made twice).
	s.stop(t)
	s = startServer(t, db, "--aws-endpoint", moto)
	time.Sleep(2 * time.Second) // a receive of the stopped server may still hold a message for its visibility timeout
	send(mapped, "m2")
	_, err = topics.Publish(ctx, &sns.PublishInput{TopicArn: aws.String(topicArn), Message: aws.String("again"),
		MessageAttributes: map[string]snstypes.MessageAttributeValue{"kind": {DataType: aws.String("String"), StringValue: aws.String("news")}}})
	require.NoError(t, err)
	got = rec.wait(t, sq, outURL, "queues-plain", 2)
	require.Equal(t, "m2", got[1].Event.Records[0]["body"])
	got = rec.wait(t, sq, outURL, "queues-on-news", 2)
	require.Equal(t, "again", got[1].Event.Records[0]["Sns"].(map[string]any)["Message"])
	subs, err := topics.ListSubscriptionsByTopic(ctx, &sns.ListSubscriptionsByTopicInput{TopicArn: aws.String(topicArn)})
	require.NoError(t, err)
	require.Len(t, subs.Subscriptions, 1)

	// Deleted: the wires' queues go with them.
	_, err = buckets.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String("queues-uploads"), Key: aws.String("report.csv")})
	require.NoError(t, err)
	out, code = stepwiseCLI(t, "deploy", template, "--endpoint", s.url(), "--delete")
	require.Equal(t, 0, code, out)
	left, err := sq.ListQueues(ctx, &sqs.ListQueuesInput{QueueNamePrefix: aws.String("stepwise-")})
	require.NoError(t, err)
	require.Empty(t, left.QueueUrls)
}
