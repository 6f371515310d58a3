package queue

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"stepwise/wiring"
)

// asyncAttempts is how many times an event of a topic or a bucket is
// tried, as Lambda's asynchronous invocation does (one try and two
// retries); then it is dropped, with a warning.
const asyncAttempts = 3

// hiddenQueueName is the name of the queue a wire reads a topic's or a
// bucket's events from: prefix and a hash of the stack and the wire, the
// same at every start.
func hiddenQueueName(prefix string, w wiring.Wire) string {
	sum := sha256.Sum256([]byte(w.Stack + "/" + w.ID))
	return prefix + hex.EncodeToString(sum[:8])
}

// makeQueue makes the queue (or finds it: CreateQueue of an existing
// queue with the same attributes gives it) and returns its URL and ARN.
func makeQueue(ctx context.Context, client *sqs.Client, name string) (url, arn string, err error) {
	out, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name)})
	if err != nil {
		return "", "", fmt.Errorf("make the queue %s: %w", name, err)
	}
	url = aws.ToString(out.QueueUrl)
	a, err := client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: out.QueueUrl,
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		return "", "", fmt.Errorf("the queue %s: %w", name, err)
	}
	return url, a.Attributes["QueueArn"], nil
}

func deleteHiddenQueue(ctx context.Context, client *sqs.Client, url string) error {
	_, err := client.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(url)})
	var nf *sqstypes.QueueDoesNotExist
	if errors.As(err, &nf) {
		return nil
	}
	return err
}

// eachMessage handles messages one by one as one event each (toEvent:
// nil for a message to drop), delivered as an asynchronous invoke: a
// failed one is tried again when the queue gives it back, and dropped
// after asyncAttempts.
func eachMessage(env *wiring.Env, w wiring.Wire, client *sqs.Client, url string, toEvent func(m sqstypes.Message) ([]byte, error)) func(ctx context.Context, msgs []sqstypes.Message) (map[string]bool, error) {
	return func(ctx context.Context, msgs []sqstypes.Message) (map[string]bool, error) {
		keep := map[string]bool{}
		for _, m := range msgs {
			id := aws.ToString(m.MessageId)
			event, err := toEvent(m)
			if err != nil {
				env.Log.Warn("wiring: a message that is not an event is dropped", "stack", w.Stack, "wire", w.ID, "error", err)
				continue
			}
			if event == nil {
				continue
			}
			_, err = env.Deliver(ctx, w.Target, event)
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			env.Delivered(w, 1, err)
			if err == nil {
				continue
			}
			if n, _ := strconv.Atoi(m.Attributes[string(sqstypes.MessageSystemAttributeNameApproximateReceiveCount)]); n < asyncAttempts {
				keep[id] = true
				_, _ = client.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(url),
					ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: int32(retryVisibility / time.Second)})
				env.Log.Info("wiring: delivery failed, tried again later", "stack", w.Stack, "wire", w.ID, "attempt", n, "error", err)
			} else {
				env.Log.Warn("wiring: delivery failed, the event is dropped", "stack", w.Stack, "wire", w.ID, "attempts", n, "error", err)
			}
		}
		return keep, nil
	}
}

// retryVisibility is how long a failed event of a topic or a bucket
// waits before its next try.
const retryVisibility = 2 * time.Second
