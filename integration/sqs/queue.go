package sqs

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"stepwise/integration"
)

// Queues sends messages to queues named by their ARN, at the endpoint
// configured for "sqs" (as the sendMessage Task does): a schedule's
// dead-letter queue. The client is made on the first send.
type Queues struct {
	cfg integration.Config

	mu     sync.Mutex
	client *sqs.Client
	urls   map[string]string // queue ARN → URL
}

// NewQueues returns a sender for the configuration.
func NewQueues(cfg integration.Config) *Queues { return &Queues{cfg: cfg, urls: map[string]string{}} }

// Send sends body with attrs to the queue of queueArn
// (arn:aws:sqs:region:account:name).
func (q *Queues) Send(ctx context.Context, queueArn, body string, attrs map[string]types.MessageAttributeValue) error {
	client, url, err := q.queue(ctx, queueArn)
	if err != nil {
		return err
	}
	region := strings.Split(queueArn, ":")[3]
	_, err = client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String(body), MessageAttributes: attrs},
		func(o *sqs.Options) { o.Region = region })
	if err != nil {
		return fmt.Errorf("send message to %s: %w", queueArn, err)
	}
	return nil
}

// queue returns the client and the URL of a queue, asking SQS for it the
// first time.
func (q *Queues) queue(ctx context.Context, queueArn string) (*sqs.Client, string, error) {
	parts := strings.Split(queueArn, ":")
	if len(parts) != 6 || parts[0] != "arn" || parts[2] != "sqs" {
		return nil, "", fmt.Errorf("%q is not an SQS queue ARN", queueArn)
	}
	region, account, name := parts[3], parts[4], parts[5]
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.client == nil {
		awsCfg, endpoint, err := q.cfg.AWSConfig(ctx, "sqs")
		if err != nil {
			return nil, "", err
		}
		q.client = sqs.NewFromConfig(awsCfg, func(o *sqs.Options) {
			if endpoint != "" {
				o.BaseEndpoint = aws.String(endpoint)
			}
		})
	}
	if url, ok := q.urls[queueArn]; ok {
		return q.client, url, nil
	}
	out, err := q.client.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(name), QueueOwnerAWSAccountId: aws.String(account)},
		func(o *sqs.Options) { o.Region = region })
	if err != nil {
		return nil, "", fmt.Errorf("get the URL of %s: %w", queueArn, err)
	}
	q.urls[queueArn] = aws.ToString(out.QueueUrl)
	return q.client, q.urls[queueArn], nil
}
