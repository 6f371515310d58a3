package queue

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"stepwise/wiring"
)

// S3EventBridgeKind is the kind of the wire of a bucket that sends its
// events to EventBridge: they reach the local bus.
const S3EventBridgeKind = "s3-eventbridge"

func init() {
	wiring.Register(S3EventBridgeKind, func(env *wiring.Env) (wiring.Kind, error) { return &s3EventBridgeKind{env: env}, nil })
}

// S3EventBridgeSource is the Source of an s3-eventbridge wire: the
// bucket whose EventBridge events go to the local bus (the wire's
// target, the default bus).
type S3EventBridgeSource struct {
	Bucket string `json:"bucket"`
}

type s3EventBridgeKind struct {
	env *wiring.Env
	pollers
}

func (k *s3EventBridgeKind) Close() { k.stopAll() }

// Add makes at the endpoint a rule on its default bus for the bucket's
// aws.s3 events, targeting a hidden queue, and polls the queue: each
// event goes on the local bus as the endpoint's EventBridge gave it.
func (k *s3EventBridgeKind) Add(ctx context.Context, w wiring.Wire) (func(), error) {
	var src S3EventBridgeSource
	if err := json.Unmarshal(w.Source, &src); err != nil {
		return nil, fmt.Errorf("its settings: %w", err)
	}
	if src.Bucket == "" {
		return nil, errors.New("a bucket is required")
	}
	if w.Target.Type != wiring.ToBus {
		return nil, fmt.Errorf("a bucket's EventBridge events go to a bus, not a %s", w.Target.Type)
	}
	sqsCfg, err := k.env.ServiceConfig(ctx, "sqs")
	if err != nil {
		return nil, err
	}
	s3Cfg, err := k.env.ServiceConfig(ctx, "s3")
	if err != nil {
		return nil, err
	}
	ebCfg, err := k.env.ServiceConfig(ctx, "events")
	if err != nil {
		return nil, err
	}
	buckets := s3.NewFromConfig(s3Cfg, func(o *s3.Options) { o.UsePathStyle = true })
	if _, err := buckets.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(src.Bucket)}); err != nil {
		return nil, fmt.Errorf("bucket %s: %w", src.Bucket, err)
	}
	sq := sqs.NewFromConfig(sqsCfg)
	eb := eventbridge.NewFromConfig(ebCfg)
	name := hiddenQueueName("stepwise-s3eb-", w)
	url, queueARN, err := makeQueue(ctx, sq, name)
	if err != nil {
		return nil, err
	}
	pattern, err := json.Marshal(map[string]any{"source": []string{"aws.s3"},
		"detail": map[string]any{"bucket": map[string]any{"name": []string{src.Bucket}}}})
	if err != nil {
		return nil, err
	}
	rule, err := eb.PutRule(ctx, &eventbridge.PutRuleInput{Name: aws.String(name), EventPattern: aws.String(string(pattern)),
		State: ebtypes.RuleStateEnabled, Description: aws.String("Stepwise: bucket " + src.Bucket + "'s events for the local bus")})
	if err != nil {
		return nil, fmt.Errorf("make the rule %s: %w", name, err)
	}
	// EventBridge may send to the queue only when its policy says so.
	policy, err := json.Marshal(map[string]any{"Version": "2012-10-17", "Statement": []any{map[string]any{
		"Effect": "Allow", "Principal": map[string]any{"Service": "events.amazonaws.com"}, "Action": "sqs:SendMessage",
		"Resource": queueARN, "Condition": map[string]any{"ArnEquals": map[string]any{"aws:SourceArn": aws.ToString(rule.RuleArn)}}}}})
	if err != nil {
		return nil, err
	}
	if _, err := sq.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(url),
		Attributes: map[string]string{"Policy": string(policy)}}); err != nil {
		return nil, fmt.Errorf("the queue %s's policy: %w", name, err)
	}
	if _, err := eb.PutTargets(ctx, &eventbridge.PutTargetsInput{Rule: aws.String(name),
		Targets: []ebtypes.Target{{Id: aws.String("stepwise"), Arn: aws.String(queueARN)}}}); err != nil {
		return nil, fmt.Errorf("the rule %s's target: %w", name, err)
	}
	// The bucket sends its events to EventBridge.
	if err := setEventBridge(ctx, buckets, src.Bucket, true); err != nil {
		return nil, err
	}
	p := &poller{env: k.env, wire: w, client: sq, url: url, batch: 1}
	p.handle = eachMessage(k.env, w, sq, url, func(m sqstypes.Message) ([]byte, error) {
		return s3BusEvent([]byte(aws.ToString(m.Body)), aws.ToString(m.MessageId))
	})
	stop, err := k.start(p)
	if err != nil {
		return nil, err
	}
	return func() {
		stop()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := setEventBridge(ctx, buckets, src.Bucket, false); err != nil {
			var nb *s3types.NoSuchBucket
			if !errors.As(err, &nb) && !strings.Contains(err.Error(), "NoSuchBucket") {
				k.env.Log.Warn("wiring: take out the bucket's EventBridge notifications failed", "stack", w.Stack, "wire", w.ID, "error", err)
			}
		}
		if _, err := eb.RemoveTargets(ctx, &eventbridge.RemoveTargetsInput{Rule: aws.String(name), Ids: []string{"stepwise"}}); err != nil && !notFound(err) {
			k.env.Log.Warn("wiring: take out the rule's target failed", "stack", w.Stack, "wire", w.ID, "error", err)
		}
		if _, err := eb.DeleteRule(ctx, &eventbridge.DeleteRuleInput{Name: aws.String(name)}); err != nil && !notFound(err) {
			k.env.Log.Warn("wiring: delete the rule failed", "stack", w.Stack, "wire", w.ID, "error", err)
		}
		if err := deleteHiddenQueue(ctx, sq, url); err != nil {
			k.env.Log.Warn("wiring: delete the queue failed", "stack", w.Stack, "wire", w.ID, "error", err)
		}
	}, nil
}

// setEventBridge turns the bucket's EventBridge notifications on or
// off, keeping its other configurations as they are.
func setEventBridge(ctx context.Context, client *s3.Client, bucket string, on bool) error {
	cur, err := client.GetBucketNotificationConfiguration(ctx, &s3.GetBucketNotificationConfigurationInput{Bucket: aws.String(bucket)})
	if err != nil {
		return fmt.Errorf("bucket %s's notifications: %w", bucket, err)
	}
	if (cur.EventBridgeConfiguration != nil) == on {
		return nil
	}
	next := &s3types.NotificationConfiguration{LambdaFunctionConfigurations: cur.LambdaFunctionConfigurations,
		TopicConfigurations: cur.TopicConfigurations, QueueConfigurations: cur.QueueConfigurations}
	if on {
		next.EventBridgeConfiguration = &s3types.EventBridgeConfiguration{}
	}
	if _, err := client.PutBucketNotificationConfiguration(ctx, &s3.PutBucketNotificationConfigurationInput{Bucket: aws.String(bucket),
		NotificationConfiguration: next}); err != nil {
		return fmt.Errorf("bucket %s's notifications: %w", bucket, err)
	}
	return nil
}

func notFound(err error) bool {
	var nf *ebtypes.ResourceNotFoundException
	return errors.As(err, &nf)
}

// sharedEventID is the id moto's S3 gives every EventBridge event
// alike; such an event gets an id of its own, made from its message's
// id so that a message tried again keeps it.
const sharedEventID = "17793124-05d4-b198-2fde-7ededc63b103"

// s3BusEvent is the event a message of the hidden queue carries, as S3
// sends it to EventBridge: kept as it is, but for what an emulated
// endpoint gives otherwise than AWS (one id for every event, the
// object's "eTag" for "etag", a null "version-id" for none).
func s3BusEvent(body []byte, messageID string) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var ev map[string]any
	if err := dec.Decode(&ev); err != nil || ev == nil {
		return nil, fmt.Errorf("not an event: %.200s", body)
	}
	if src, _ := ev["source"].(string); src != "aws.s3" {
		return nil, fmt.Errorf("not an S3 event: %.200s", body)
	}
	changed := false
	if id, _ := ev["id"].(string); id == sharedEventID || id == "" {
		sum := sha256.Sum256([]byte(messageID))
		sum[6] = sum[6]&0x0f | 0x40
		sum[8] = sum[8]&0x3f | 0x80
		ev["id"] = fmt.Sprintf("%x-%x-%x-%x-%x", sum[0:4], sum[4:6], sum[6:8], sum[8:10], sum[10:16])
		changed = true
	}
	if detail, ok := ev["detail"].(map[string]any); ok {
		if obj, ok := detail["object"].(map[string]any); ok {
			if tag, ok := obj["eTag"]; ok {
				if _, has := obj["etag"]; !has {
					obj["etag"] = tag
				}
				delete(obj, "eTag")
				changed = true
			}
			if v, ok := obj["version-id"]; ok && v == nil {
				delete(obj, "version-id")
				changed = true
			}
		}
	}
	if !changed {
		return body, nil
	}
	return json.Marshal(ev)
}
