package queue

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/require"

	"stepwise/wiring"
)

func (b *testBundle) queueNames(t *testing.T, prefix string) []string {
	t.Helper()
	out, err := b.sqs.ListQueues(context.Background(), &sqs.ListQueuesInput{QueueNamePrefix: aws.String(prefix)})
	require.NoError(t, err)
	return out.QueueUrls
}

func TestSNSNotificationsAsLambdaEvents(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	topics := sns.NewFromConfig(b.cfg)
	topic, err := topics.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String("orders")})
	require.NoError(t, err)
	topicArn := aws.ToString(topic.TopicArn)
	src, _ := json.Marshal(SNSSource{Topic: topicArn, FilterPolicy: json.RawMessage(`{"kind": ["order"]}`)})
	w := wiring.Wire{Stack: "app", ID: "Worker/Orders", Kind: "sns", Source: src, Target: wiring.Target{Type: wiring.ToFunction, Name: "worker"}}

	k := &snsKind{env: b.env}
	defer func() { k.Close() }()
	remove, err := k.Add(ctx, w)
	require.NoError(t, err)
	publish := func(kind, msg string) {
		_, err := topics.Publish(ctx, &sns.PublishInput{TopicArn: aws.String(topicArn), Message: aws.String(msg), Subject: aws.String("New order"),
			MessageAttributes: map[string]snstypes.MessageAttributeValue{"kind": {DataType: aws.String("String"), StringValue: aws.String(kind)}}})
		require.NoError(t, err)
	}
	publish("refund", "not for us")
	publish("order", "o-1")
	events := b.waitEvents(t, 1)
	var ev struct {
		Records []struct {
			EventSource, EventVersion, EventSubscriptionArn string
			Sns                                             struct {
				Type, MessageId, TopicArn, Subject, Message, Timestamp string
				SignatureVersion, Signature, SigningCertUrl            string
				UnsubscribeUrl                                         string
				MessageAttributes                                      map[string]struct{ Type, Value string }
			}
		}
	}
	require.NoError(t, json.Unmarshal(events[0], &ev))
	require.Len(t, ev.Records, 1)
	r := ev.Records[0]
	require.Equal(t, "aws:sns", r.EventSource)
	require.Equal(t, "1.0", r.EventVersion)
	require.True(t, strings.HasPrefix(r.EventSubscriptionArn, topicArn+":"), r.EventSubscriptionArn)
	require.Equal(t, "Notification", r.Sns.Type)
	require.Equal(t, topicArn, r.Sns.TopicArn)
	require.Equal(t, "New order", r.Sns.Subject)
	require.Equal(t, "o-1", r.Sns.Message)
	require.NotEmpty(t, r.Sns.MessageId)
	require.NotEmpty(t, r.Sns.Timestamp)
	require.Equal(t, map[string]struct{ Type, Value string }{"kind": {Type: "String", Value: "order"}}, r.Sns.MessageAttributes)
	time.Sleep(300 * time.Millisecond)
	require.Len(t, b.got(), 1, "the filter policy keeps the refund out")

	// A stop (Close) keeps the queue and the subscription; a start
	// again uses them; a remove deletes them.
	k.Close()
	require.Len(t, b.queueNames(t, "stepwise-sns-"), 1)
	k = &snsKind{env: b.env}
	remove, err = k.Add(ctx, w)
	require.NoError(t, err)
	subs, err := topics.ListSubscriptionsByTopic(ctx, &sns.ListSubscriptionsByTopicInput{TopicArn: aws.String(topicArn)})
	require.NoError(t, err)
	require.Len(t, subs.Subscriptions, 1)
	// (The receive the stop cut short still waits at moto until its
	// long poll ends, and would take the next message.)
	time.Sleep(time.Duration(longPoll)*time.Second + 500*time.Millisecond)
	publish("order", "o-2")
	events = b.waitEvents(t, 2)
	require.Contains(t, string(events[1]), `"Message":"o-2"`)
	remove()
	subs, err = topics.ListSubscriptionsByTopic(ctx, &sns.ListSubscriptionsByTopicInput{TopicArn: aws.String(topicArn)})
	require.NoError(t, err)
	require.Empty(t, subs.Subscriptions)
	require.Empty(t, b.queueNames(t, "stepwise-sns-"))
	k.Close()

	_, err = (&snsKind{env: b.env}).Add(ctx, wiring.Wire{Stack: "app", ID: "X", Kind: "sns", Source: json.RawMessage(`{"topic": "arn:aws:sns:us-east-1:123456789012:nowhere"}`)})
	require.ErrorContains(t, err, "topic arn:aws:sns:us-east-1:123456789012:nowhere")
}

func TestS3EventsFromABucket(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	buckets := s3.NewFromConfig(b.cfg, func(o *s3.Options) { o.UsePathStyle = true })
	_, err := buckets.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("uploads")})
	require.NoError(t, err)
	// A configuration of the bucket's own stays.
	_, otherArn := b.queue(t, "audit", nil)
	require.NoError(t, setNotification(ctx, buckets, "uploads", "audit", &s3types.QueueConfiguration{Id: aws.String("audit"), QueueArn: aws.String(otherArn), Events: []s3types.Event{"s3:ObjectRemoved:*"}}))

	src, _ := json.Marshal(S3Source{Bucket: "uploads", Events: []string{"s3:ObjectCreated:*"}, Rules: []S3KeyRule{{Name: "prefix", Value: "in/"}}})
	w := wiring.Wire{Stack: "app", ID: "Worker/Upload", Kind: "s3", Source: src, Target: wiring.Target{Type: wiring.ToFunction, Name: "worker"}}
	k := &s3Kind{env: b.env}
	defer k.Close()
	remove, err := k.Add(ctx, w)
	require.NoError(t, err)
	put := func(key string) {
		_, err := buckets.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("uploads"), Key: aws.String(key), Body: strings.NewReader("hello")})
		require.NoError(t, err)
	}
	put("out/skip.txt")
	put("in/a.txt")
	events := b.waitEvents(t, 1)
	var ev struct {
		Records []struct {
			EventSource, EventName, AwsRegion string
			S3                                struct {
				Bucket struct{ Name string }
				Object struct {
					Key  string
					Size int
				}
			}
		}
	}
	require.NoError(t, json.Unmarshal(events[0], &ev), string(events[0]))
	require.Len(t, ev.Records, 1)
	require.Equal(t, "aws:s3", ev.Records[0].EventSource)
	require.Equal(t, "ObjectCreated:Put", ev.Records[0].EventName)
	require.Equal(t, "uploads", ev.Records[0].S3.Bucket.Name)
	key, err := url.QueryUnescape(ev.Records[0].S3.Object.Key) // URL-encoded, as S3 writes it
	require.NoError(t, err)
	require.Equal(t, "in/a.txt", key)
	require.Equal(t, 5, ev.Records[0].S3.Object.Size)
	time.Sleep(300 * time.Millisecond)
	require.Len(t, b.got(), 1, "no test event, no key outside the prefix")

	remove()
	conf, err := buckets.GetBucketNotificationConfiguration(ctx, &s3.GetBucketNotificationConfigurationInput{Bucket: aws.String("uploads")})
	require.NoError(t, err)
	require.Len(t, conf.QueueConfigurations, 1)
	require.Equal(t, "audit", aws.ToString(conf.QueueConfigurations[0].Id))
	require.Empty(t, b.queueNames(t, "stepwise-s3-"))
}
