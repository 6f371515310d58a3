package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"stepwise/wiring"
)

func init() {
	wiring.Register("s3", func(env *wiring.Env) (wiring.Kind, error) { return &s3Kind{env: env}, nil })
}

// S3Source is the Source of an s3 wire: a bucket's events for a
// function.
type S3Source struct {
	Bucket string `json:"bucket"`
	// Events are the bucket's event types: s3:ObjectCreated:*, ...
	Events []string `json:"events"`
	// Rules are the key's filter rules: prefix, suffix.
	Rules []S3KeyRule `json:"rules,omitempty"`
}

// S3KeyRule is a filter rule on an object's key.
type S3KeyRule struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type s3Kind struct {
	env *wiring.Env
	pollers
}

func (k *s3Kind) Close() { k.stopAll() }

func (k *s3Kind) Add(ctx context.Context, w wiring.Wire) (func(), error) {
	var src S3Source
	if err := json.Unmarshal(w.Source, &src); err != nil {
		return nil, fmt.Errorf("its settings: %w", err)
	}
	if src.Bucket == "" || len(src.Events) == 0 {
		return nil, errors.New("a bucket and its events are required")
	}
	sqsCfg, err := k.env.ServiceConfig(ctx, "sqs")
	if err != nil {
		return nil, err
	}
	s3Cfg, err := k.env.ServiceConfig(ctx, "s3")
	if err != nil {
		return nil, err
	}
	sq := sqs.NewFromConfig(sqsCfg)
	buckets := s3.NewFromConfig(s3Cfg, func(o *s3.Options) { o.UsePathStyle = true })
	if _, err := buckets.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(src.Bucket)}); err != nil {
		return nil, fmt.Errorf("bucket %s: %w", src.Bucket, err)
	}
	url, arn, err := makeQueue(ctx, sq, hiddenQueueName("stepwise-s3-", w))
	if err != nil {
		return nil, err
	}
	id := hiddenQueueName("stepwise-", w)
	conf := s3types.QueueConfiguration{Id: aws.String(id), QueueArn: aws.String(arn)}
	for _, e := range src.Events {
		conf.Events = append(conf.Events, s3types.Event(e))
	}
	if len(src.Rules) > 0 {
		conf.Filter = &s3types.NotificationConfigurationFilter{Key: &s3types.S3KeyFilter{}}
		for _, r := range src.Rules {
			conf.Filter.Key.FilterRules = append(conf.Filter.Key.FilterRules, s3types.FilterRule{Name: s3types.FilterRuleName(r.Name), Value: aws.String(r.Value)})
		}
	}
	if err := setNotification(ctx, buckets, src.Bucket, id, &conf); err != nil {
		return nil, err
	}
	p := &poller{env: k.env, wire: w, client: sq, url: url, batch: 1}
	p.handle = eachMessage(k.env, w, sq, url, func(m sqstypes.Message) ([]byte, error) {
		body := aws.ToString(m.Body)
		var ev struct {
			Event   string
			Records []json.RawMessage
		}
		if err := json.Unmarshal([]byte(body), &ev); err != nil {
			return nil, fmt.Errorf("not an S3 event: %.200s", body)
		}
		if ev.Event == "s3:TestEvent" || len(ev.Records) == 0 {
			return nil, nil // the bucket's check that the queue is there
		}
		return []byte(body), nil
	})
	stop, err := k.start(p)
	if err != nil {
		return nil, err
	}
	return func() {
		stop()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := setNotification(ctx, buckets, src.Bucket, id, nil); err != nil {
			k.env.Log.Warn("wiring: take out the bucket's notification failed", "stack", w.Stack, "wire", w.ID, "error", err)
		}
		if err := deleteHiddenQueue(ctx, sq, url); err != nil {
			k.env.Log.Warn("wiring: delete the queue failed", "stack", w.Stack, "wire", w.ID, "error", err)
		}
	}, nil
}

// setNotification puts conf (nil: none) in place of the bucket's queue
// configuration id, keeping every other configuration as it is.
func setNotification(ctx context.Context, client *s3.Client, bucket, id string, conf *s3types.QueueConfiguration) error {
	cur, err := client.GetBucketNotificationConfiguration(ctx, &s3.GetBucketNotificationConfigurationInput{Bucket: aws.String(bucket)})
	if err != nil {
		return fmt.Errorf("bucket %s's notifications: %w", bucket, err)
	}
	next := &s3types.NotificationConfiguration{LambdaFunctionConfigurations: cur.LambdaFunctionConfigurations,
		TopicConfigurations: cur.TopicConfigurations, EventBridgeConfiguration: cur.EventBridgeConfiguration}
	for _, q := range cur.QueueConfigurations {
		if aws.ToString(q.Id) != id {
			next.QueueConfigurations = append(next.QueueConfigurations, q)
		}
	}
	if conf != nil {
		next.QueueConfigurations = append(next.QueueConfigurations, *conf)
	}
	if _, err := client.PutBucketNotificationConfiguration(ctx, &s3.PutBucketNotificationConfigurationInput{Bucket: aws.String(bucket),
		NotificationConfiguration: next}); err != nil {
		return fmt.Errorf("bucket %s's notifications: %w", bucket, err)
	}
	return nil
}
