package queue

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/require"

	"stepwise/integration/integrationtest"
	"stepwise/wiring"
)

func TestMain(m *testing.M) {
	// A receive cut short by a stop may still take a message at moto,
	// which then waits out its visibility timeout: short polls keep
	// the stop-and-start tests quick.
	longPoll = 2
	os.Exit(m.Run())
}

// testBundle is a moto endpoint and an Env whose one function answers
// with what answer says, recording the events it got.
type testBundle struct {
	cfg aws.Config
	sqs *sqs.Client
	env *wiring.Env

	mu     sync.Mutex
	events [][]byte
	answer func(event []byte) ([]byte, bool)
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	moto := integrationtest.Moto(t)
	cfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("test", "test", ""), BaseEndpoint: aws.String(moto)}
	b := &testBundle{cfg: cfg, sqs: sqs.NewFromConfig(cfg)}
	b.env = &wiring.Env{
		Region: "us-east-1", Account: "123456789012",
		Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		AWS: func(context.Context, string) (aws.Config, error) { return cfg, nil },
		Invoke: func(_ context.Context, fn string, payload []byte) ([]byte, bool, error) {
			b.mu.Lock()
			b.events = append(b.events, payload)
			answer := b.answer
			b.mu.Unlock()
			if answer == nil {
				return []byte("null"), false, nil
			}
			out, failed := answer(payload)
			return out, failed, nil
		},
	}
	return b
}

func (b *testBundle) queue(t *testing.T, name string, attrs map[string]string) (url, arn string) {
	t.Helper()
	ctx := context.Background()
	out, err := b.sqs.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs})
	require.NoError(t, err)
	a, err := b.sqs.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: out.QueueUrl, AttributeNames: []sqstypes.QueueAttributeName{"QueueArn"}})
	require.NoError(t, err)
	return aws.ToString(out.QueueUrl), a.Attributes["QueueArn"]
}

func (b *testBundle) send(t *testing.T, url, body string, attrs map[string]sqstypes.MessageAttributeValue) {
	t.Helper()
	_, err := b.sqs.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String(body), MessageAttributes: attrs})
	require.NoError(t, err)
}

func (b *testBundle) got() [][]byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([][]byte(nil), b.events...)
}

// waitEvents waits for n events.
func (b *testBundle) waitEvents(t *testing.T, n int) [][]byte {
	t.Helper()
	require.Eventually(t, func() bool { return len(b.got()) >= n }, 30*time.Second, 50*time.Millisecond, "events: %d", len(b.got()))
	return b.got()
}

func (b *testBundle) visible(t *testing.T, url string) int {
	t.Helper()
	a, err := b.sqs.GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url),
		AttributeNames: []sqstypes.QueueAttributeName{"ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"}})
	require.NoError(t, err)
	return atoi(a.Attributes["ApproximateNumberOfMessages"]) + atoi(a.Attributes["ApproximateNumberOfMessagesNotVisible"])
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

func wire(t *testing.T, id string, src SQSSource) wiring.Wire {
	t.Helper()
	b, err := json.Marshal(src)
	require.NoError(t, err)
	return wiring.Wire{Stack: "app", ID: id, Kind: "sqs", Source: b, Target: wiring.Target{Type: wiring.ToFunction, Name: "worker"}}
}

type event struct {
	Records []struct {
		MessageID         string            `json:"messageId"`
		ReceiptHandle     string            `json:"receiptHandle"`
		Body              string            `json:"body"`
		Attributes        map[string]string `json:"attributes"`
		MessageAttributes map[string]struct {
			StringValue      string   `json:"stringValue"`
			StringListValues []string `json:"stringListValues"`
			DataType         string   `json:"dataType"`
		} `json:"messageAttributes"`
		MD5OfBody      string `json:"md5OfBody"`
		EventSource    string `json:"eventSource"`
		EventSourceARN string `json:"eventSourceARN"`
		AWSRegion      string `json:"awsRegion"`
	}
}

func decode(t *testing.T, b []byte) event {
	t.Helper()
	var e event
	require.NoError(t, json.Unmarshal(b, &e))
	return e
}

func TestSQSBatchDeliveredAndDeleted(t *testing.T) {
	t.Parallel()
	b := setup(t)
	url, arn := b.queue(t, "work", nil)
	for _, body := range []string{"one", "two", "three"} {
		b.send(t, url, body, map[string]sqstypes.MessageAttributeValue{"kind": {DataType: aws.String("String"), StringValue: aws.String("job")}})
	}
	k := &sqsKind{env: b.env}
	defer k.Close()
	remove, err := k.Add(context.Background(), wire(t, "Worker/Queue", SQSSource{Queue: arn, MaximumBatchingWindowInSeconds: 1}))
	require.NoError(t, err)
	events := b.waitEvents(t, 1)
	e := decode(t, events[0])
	require.Len(t, e.Records, 3, "one batch of the three: %s", events[0])
	r := e.Records[0]
	require.Equal(t, "one", r.Body)
	require.Equal(t, "aws:sqs", r.EventSource)
	require.Equal(t, arn, r.EventSourceARN)
	require.Equal(t, "us-east-1", r.AWSRegion)
	require.NotEmpty(t, r.MessageID)
	require.NotEmpty(t, r.ReceiptHandle)
	require.NotEmpty(t, r.MD5OfBody)
	require.Equal(t, "1", r.Attributes["ApproximateReceiveCount"])
	require.NotEmpty(t, r.Attributes["SentTimestamp"])
	require.Equal(t, "job", r.MessageAttributes["kind"].StringValue)
	require.Equal(t, "String", r.MessageAttributes["kind"].DataType)
	require.NotNil(t, r.MessageAttributes["kind"].StringListValues)
	require.Eventually(t, func() bool { return b.visible(t, url) == 0 }, 10*time.Second, 50*time.Millisecond, "the batch is deleted")

	// Removed: it stops at once, its long poll cut short.
	start := time.Now()
	remove()
	require.Less(t, time.Since(start), 5*time.Second)
	b.send(t, url, "after", nil)
	time.Sleep(500 * time.Millisecond)
	require.Len(t, b.got(), 1)
}

func TestSQSFailedBatchComesBackThenGoesToTheDLQ(t *testing.T) {
	t.Parallel()
	b := setup(t)
	dlqURL, dlqArn := b.queue(t, "work-dlq", nil)
	policy, _ := json.Marshal(map[string]any{"deadLetterTargetArn": dlqArn, "maxReceiveCount": 2})
	url, arn := b.queue(t, "work", map[string]string{"VisibilityTimeout": "1", "RedrivePolicy": string(policy)})
	b.answer = func([]byte) ([]byte, bool) {
		return []byte(`{"errorType": "Boom", "errorMessage": "no"}`), true
	}
	b.send(t, url, "poison", nil)
	k := &sqsKind{env: b.env}
	defer k.Close()
	_, err := k.Add(context.Background(), wire(t, "Worker/Queue", SQSSource{Queue: arn}))
	require.NoError(t, err)
	events := b.waitEvents(t, 2)
	require.Equal(t, "1", decode(t, events[0]).Records[0].Attributes["ApproximateReceiveCount"])
	require.Equal(t, "2", decode(t, events[1]).Records[0].Attributes["ApproximateReceiveCount"], "redelivered after the visibility timeout")
	require.Eventually(t, func() bool { return b.visible(t, dlqURL) == 1 }, 15*time.Second, 100*time.Millisecond, "moved to the DLQ")
	require.Len(t, b.got(), 2)
}

func TestSQSReportBatchItemFailures(t *testing.T) {
	t.Parallel()
	b := setup(t)
	url, arn := b.queue(t, "work", map[string]string{"VisibilityTimeout": "1"})
	b.answer = func(ev []byte) ([]byte, bool) {
		var e event
		_ = json.Unmarshal(ev, &e)
		var fails []map[string]string
		for _, r := range e.Records {
			if r.Body == "bad" {
				fails = append(fails, map[string]string{"itemIdentifier": r.MessageID})
			}
		}
		out, _ := json.Marshal(map[string]any{"batchItemFailures": fails})
		return out, false
	}
	b.send(t, url, "good", nil)
	b.send(t, url, "bad", nil)
	k := &sqsKind{env: b.env}
	defer k.Close()
	_, err := k.Add(context.Background(), wire(t, "Worker/Queue", SQSSource{Queue: arn, MaximumBatchingWindowInSeconds: 1, ReportBatchItemFailures: true}))
	require.NoError(t, err)
	// The failed one comes back alone, again and again; the good one
	// is gone.
	events := b.waitEvents(t, 2)
	require.Len(t, decode(t, events[0]).Records, 2)
	again := decode(t, events[1]).Records
	require.Len(t, again, 1)
	require.Equal(t, "bad", again[0].Body)
}

func TestSQSFilterCriteria(t *testing.T) {
	t.Parallel()
	b := setup(t)
	url, arn := b.queue(t, "work", nil)
	b.send(t, url, `{"kind": "order", "total": 12}`, nil)
	b.send(t, url, `{"kind": "refund", "total": 3}`, nil)
	b.send(t, url, `plain text`, nil)
	k := &sqsKind{env: b.env}
	defer k.Close()
	_, err := k.Add(context.Background(), wire(t, "Worker/Queue", SQSSource{Queue: arn, MaximumBatchingWindowInSeconds: 1,
		Filters: []string{`{"body": {"kind": ["order"], "total": [{"numeric": [">", 10]}]}}`}}))
	require.NoError(t, err)
	events := b.waitEvents(t, 1)
	recs := decode(t, events[0]).Records
	require.Len(t, recs, 1)
	require.Contains(t, recs[0].Body, "order")
	require.Eventually(t, func() bool { return b.visible(t, url) == 0 }, 10*time.Second, 50*time.Millisecond, "filtered out messages are deleted")

	_, err = k.Add(context.Background(), wire(t, "Other/Queue", SQSSource{Queue: arn, Filters: []string{`{"body": {"ip": [{"cidr": "10.0.0.0/8"}]}}`}}))
	require.EqualError(t, err, `FilterCriteria: filter 1: body.ip: the operator "cidr" is not applied here (prefix, suffix, equals-ignore-case, anything-but, numeric, exists are)`)
}

func TestSQSQueueNotThere(t *testing.T) {
	t.Parallel()
	b := setup(t)
	k := &sqsKind{env: b.env}
	defer k.Close()
	_, err := k.Add(context.Background(), wire(t, "Worker/Queue", SQSSource{Queue: "arn:aws:sqs:us-east-1:123456789012:nowhere"}))
	require.ErrorContains(t, err, "queue arn:aws:sqs:us-east-1:123456789012:nowhere")
	_, err = k.Add(context.Background(), wire(t, "Worker/Queue", SQSSource{Queue: "arn:aws:sqs:us-east-1:123456789012:nowhere", Enabled: aws.Bool(false)}))
	require.EqualError(t, err, "not polled: Enabled is false")
}
