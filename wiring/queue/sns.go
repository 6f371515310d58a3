package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"stepwise/wiring"
)

func init() {
	wiring.Register("sns", func(env *wiring.Env) (wiring.Kind, error) { return &snsKind{env: env}, nil })
}

// SNSSource is the Source of an sns wire: a function's subscription to
// a topic.
type SNSSource struct {
	// Topic is the topic's ARN.
	Topic string `json:"topic"`
	// FilterPolicy and FilterPolicyScope are the subscription's.
	FilterPolicy      json.RawMessage `json:"filterPolicy,omitempty"`
	FilterPolicyScope string          `json:"filterPolicyScope,omitempty"`
	// SQS: the function gets SQS events of the notifications, in
	// batches of BatchSize (SAM's SqsSubscription), read from Queue when
	// given (the template's queue, subscribed and kept), else from a
	// queue made for the wire. BatchSize -1: not polled.
	SQS       bool   `json:"sqs,omitempty"`
	Queue     string `json:"queue,omitempty"`
	BatchSize int    `json:"batchSize,omitempty"`
}

type snsKind struct {
	env *wiring.Env
	pollers
}

func (k *snsKind) Close() { k.stopAll() }

func (k *snsKind) Add(ctx context.Context, w wiring.Wire) (func(), error) {
	var src SNSSource
	if err := json.Unmarshal(w.Source, &src); err != nil {
		return nil, fmt.Errorf("its settings: %w", err)
	}
	if src.BatchSize < 0 {
		return nil, errors.New("not polled: its SqsSubscription is disabled")
	}
	sqsCfg, err := k.env.ServiceConfig(ctx, "sqs")
	if err != nil {
		return nil, err
	}
	snsCfg, err := k.env.ServiceConfig(ctx, "sns")
	if err != nil {
		return nil, err
	}
	sq, topics := sqs.NewFromConfig(sqsCfg), sns.NewFromConfig(snsCfg)
	if _, err := topics.GetTopicAttributes(ctx, &sns.GetTopicAttributesInput{TopicArn: aws.String(src.Topic)}); err != nil {
		return nil, fmt.Errorf("topic %s: %w", src.Topic, err)
	}
	owned := src.Queue == ""
	url, arn := "", src.Queue
	if owned {
		if url, arn, err = makeQueue(ctx, sq, hiddenQueueName("stepwise-sns-", w)); err != nil {
			return nil, err
		}
	} else if url, err = wiring.QueueURL(ctx, sqsCfg, src.Queue); err != nil {
		return nil, err
	}
	sub, err := subscribe(ctx, topics, src, arn)
	if err != nil {
		return nil, err
	}
	p := &poller{env: k.env, wire: w, client: sq, url: url, batch: 1}
	if src.SQS {
		p.batch = src.BatchSize
		if p.batch == 0 {
			p.batch = 10
		}
		p.batch = min(p.batch, 10)
		p.handle = func(ctx context.Context, msgs []sqstypes.Message) (map[string]bool, error) {
			var records []sqsRecord
			for _, m := range msgs {
				records = append(records, newSQSRecord(m, arn, k.env.Region))
			}
			event, err := json.Marshal(map[string]any{"Records": records})
			if err != nil {
				return nil, err
			}
			_, err = k.env.Deliver(ctx, w.Target, event)
			k.env.Delivered(w, len(records), err)
			return nil, err
		}
	} else {
		p.handle = eachMessage(k.env, w, sq, url, func(m sqstypes.Message) ([]byte, error) {
			return snsEvent(aws.ToString(m.Body), sub)
		})
	}
	stop, err := k.start(p)
	if err != nil {
		return nil, err
	}
	return func() {
		stop()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := topics.Unsubscribe(ctx, &sns.UnsubscribeInput{SubscriptionArn: aws.String(sub)}); err != nil {
			k.env.Log.Warn("wiring: unsubscribe failed", "stack", w.Stack, "wire", w.ID, "error", err)
		}
		if owned {
			if err := deleteHiddenQueue(ctx, sq, url); err != nil {
				k.env.Log.Warn("wiring: delete the queue failed", "stack", w.Stack, "wire", w.ID, "error", err)
			}
		}
	}, nil
}

// subscribe subscribes the queue to the topic (raw delivery off, the
// filter policy), or finds its subscription and sets them.
func subscribe(ctx context.Context, client *sns.Client, src SNSSource, queueArn string) (string, error) {
	attrs := map[string]string{"RawMessageDelivery": "false"}
	if len(src.FilterPolicy) > 0 {
		attrs["FilterPolicy"] = string(src.FilterPolicy)
		attrs["FilterPolicyScope"] = src.FilterPolicyScope
		if src.FilterPolicyScope == "" {
			attrs["FilterPolicyScope"] = "MessageAttributes"
		}
	}
	pages := sns.NewListSubscriptionsByTopicPaginator(client, &sns.ListSubscriptionsByTopicInput{TopicArn: aws.String(src.Topic)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return "", fmt.Errorf("topic %s: %w", src.Topic, err)
		}
		for _, s := range page.Subscriptions {
			if aws.ToString(s.Protocol) != "sqs" || aws.ToString(s.Endpoint) != queueArn {
				continue
			}
			sub := aws.ToString(s.SubscriptionArn)
			for _, name := range []string{"RawMessageDelivery", "FilterPolicyScope", "FilterPolicy"} {
				v, ok := attrs[name]
				if !ok {
					continue
				}
				if _, err := client.SetSubscriptionAttributes(ctx, &sns.SetSubscriptionAttributesInput{SubscriptionArn: aws.String(sub),
					AttributeName: aws.String(name), AttributeValue: aws.String(v)}); err != nil {
					return "", fmt.Errorf("subscription %s: %w", sub, err)
				}
			}
			return sub, nil
		}
	}
	out, err := client.Subscribe(ctx, &sns.SubscribeInput{TopicArn: aws.String(src.Topic), Protocol: aws.String("sqs"),
		Endpoint: aws.String(queueArn), Attributes: attrs, ReturnSubscriptionArn: true})
	if err != nil {
		return "", fmt.Errorf("subscribe to %s: %w", src.Topic, err)
	}
	return aws.ToString(out.SubscriptionArn), nil
}

// snsEvent is Lambda's SNS event of a notification as SNS sends it to a
// queue.
func snsEvent(body, subscription string) ([]byte, error) {
	var n struct {
		Type, MessageID, TopicArn, Message, Timestamp string
		Subject                                       *string
		SignatureVersion, Signature                   string
		SigningCertURL, UnsubscribeURL                string
		MessageAttributes                             map[string]struct{ Type, Value string }
	}
	if err := json.Unmarshal([]byte(body), &n); err != nil || n.Type == "" {
		return nil, fmt.Errorf("not an SNS notification: %.200s", body)
	}
	attrs := map[string]any{}
	for k, v := range n.MessageAttributes {
		attrs[k] = map[string]string{"Type": v.Type, "Value": v.Value}
	}
	return json.Marshal(map[string]any{"Records": []any{map[string]any{
		"EventSource": "aws:sns", "EventVersion": "1.0", "EventSubscriptionArn": subscription,
		"Sns": map[string]any{
			"Type": n.Type, "MessageId": n.MessageID, "TopicArn": n.TopicArn, "Subject": n.Subject, "Message": n.Message,
			"Timestamp": n.Timestamp, "SignatureVersion": n.SignatureVersion, "Signature": n.Signature,
			"SigningCertUrl": n.SigningCertURL, "UnsubscribeUrl": n.UnsubscribeURL, "MessageAttributes": attrs,
		},
	}}})
}
