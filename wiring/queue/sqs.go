package queue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"stepwise/wiring"
)

func init() {
	wiring.Register("sqs", func(env *wiring.Env) (wiring.Kind, error) { return &sqsKind{env: env}, nil })
}

// SQSSource is the Source of an sqs wire: an event source mapping's
// settings.
type SQSSource struct {
	// Queue is the queue's ARN.
	Queue string `json:"queue"`
	// BatchSize is the most records an event holds (10 when zero);
	// more than 10 needs a batching window, as on AWS.
	BatchSize int `json:"batchSize,omitempty"`
	// MaximumBatchingWindowInSeconds is how long to gather a batch.
	MaximumBatchingWindowInSeconds int `json:"maximumBatchingWindowInSeconds,omitempty"`
	// Enabled false: the queue is not polled.
	Enabled *bool `json:"enabled,omitempty"`
	// ReportBatchItemFailures: the function's batchItemFailures name
	// the messages to keep; the others are deleted.
	ReportBatchItemFailures bool `json:"reportBatchItemFailures,omitempty"`
	// Filters are FilterCriteria's patterns (JSON text each): a message
	// none matches is deleted without being delivered.
	Filters []string `json:"filters,omitempty"`
}

type sqsKind struct {
	env *wiring.Env
	pollers
}

func (k *sqsKind) Close() { k.stopAll() }

func (k *sqsKind) Add(ctx context.Context, w wiring.Wire) (func(), error) {
	var src SQSSource
	if err := json.Unmarshal(w.Source, &src); err != nil {
		return nil, fmt.Errorf("its settings: %w", err)
	}
	if src.Enabled != nil && !*src.Enabled {
		return nil, errors.New("not polled: Enabled is false")
	}
	batch := src.BatchSize
	if batch == 0 {
		batch = 10
	}
	switch {
	case batch < 1 || batch > 10000:
		return nil, fmt.Errorf("BatchSize %d: it is 1 to 10000", batch)
	case batch > 10 && src.MaximumBatchingWindowInSeconds < 1:
		return nil, fmt.Errorf("BatchSize %d: more than 10 needs MaximumBatchingWindowInSeconds", batch)
	case src.MaximumBatchingWindowInSeconds < 0 || src.MaximumBatchingWindowInSeconds > 300:
		return nil, fmt.Errorf("MaximumBatchingWindowInSeconds %d: it is 0 to 300", src.MaximumBatchingWindowInSeconds)
	}
	filters, err := parseFilters(src.Filters)
	if err != nil {
		return nil, fmt.Errorf("FilterCriteria: %w", err)
	}
	cfg, err := k.env.ServiceConfig(ctx, "sqs")
	if err != nil {
		return nil, err
	}
	url, err := wiring.QueueURL(ctx, cfg, src.Queue)
	if err != nil {
		return nil, err
	}
	region := k.env.Region
	if parts := strings.Split(src.Queue, ":"); len(parts) == 6 && parts[3] != "" {
		region = parts[3]
	}
	p := &poller{env: k.env, wire: w, client: sqs.NewFromConfig(cfg), url: url, batch: batch,
		window: time.Duration(src.MaximumBatchingWindowInSeconds) * time.Second}
	p.handle = func(ctx context.Context, msgs []sqstypes.Message) (map[string]bool, error) {
		var records []sqsRecord
		for _, m := range msgs {
			rec := newSQSRecord(m, src.Queue, region)
			if !matchAny(filters, rec.filterView()) {
				continue // filtered out: deleted, as on AWS
			}
			records = append(records, rec)
		}
		if len(records) == 0 {
			return nil, nil
		}
		event, err := json.Marshal(map[string]any{"Records": records})
		if err != nil {
			return nil, err
		}
		out, err := k.env.Deliver(ctx, w.Target, event)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err != nil {
			k.env.Log.Info("wiring: delivery failed, the batch stays on the queue", "stack", w.Stack, "wire", w.ID, "messages", len(records), "error", err)
			k.env.Delivered(w, len(records), err)
			return nil, err
		}
		keep := map[string]bool{}
		if src.ReportBatchItemFailures {
			if keep, err = batchItemFailures(out, records); err != nil {
				k.env.Delivered(w, len(records), err)
				return nil, err
			}
		}
		k.env.Delivered(w, len(records), nil)
		return keep, nil
	}
	return k.start(p)
}

// batchItemFailures reads a function's partial batch response: the
// messages it names stay on the queue. An answer Lambda would not take
// (an id not of the batch) keeps the whole batch.
func batchItemFailures(out []byte, records []sqsRecord) (map[string]bool, error) {
	keep := map[string]bool{}
	if len(out) == 0 || string(out) == "null" {
		return keep, nil
	}
	var resp struct {
		BatchItemFailures []struct {
			ItemIdentifier *string `json:"itemIdentifier"`
		} `json:"batchItemFailures"`
	}
	if err := json.Unmarshal(out, &resp); err != nil {
		return keep, nil // not a partial batch response: all succeeded
	}
	ids := map[string]bool{}
	for _, r := range records {
		ids[r.MessageID] = true
	}
	for _, f := range resp.BatchItemFailures {
		id := aws.ToString(f.ItemIdentifier)
		if !ids[id] {
			return nil, fmt.Errorf("batchItemFailures names %q, not a message of the batch: the whole batch stays", id)
		}
		keep[id] = true
	}
	return keep, nil
}

// sqsRecord is one record of Lambda's SQS event.
type sqsRecord struct {
	MessageID              string                 `json:"messageId"`
	ReceiptHandle          string                 `json:"receiptHandle"`
	Body                   string                 `json:"body"`
	Attributes             map[string]string      `json:"attributes"`
	MessageAttributes      map[string]messageAttr `json:"messageAttributes"`
	MD5OfBody              string                 `json:"md5OfBody"`
	MD5OfMessageAttributes string                 `json:"md5OfMessageAttributes,omitempty"`
	EventSource            string                 `json:"eventSource"`
	EventSourceARN         string                 `json:"eventSourceARN"`
	AWSRegion              string                 `json:"awsRegion"`
}

// messageAttr is a message attribute as Lambda gives it.
type messageAttr struct {
	StringValue      *string  `json:"stringValue,omitempty"`
	BinaryValue      []byte   `json:"binaryValue,omitempty"`
	StringListValues []string `json:"stringListValues"`
	BinaryListValues [][]byte `json:"binaryListValues"`
	DataType         string   `json:"dataType"`
}

func newSQSRecord(m sqstypes.Message, arn, region string) sqsRecord {
	r := sqsRecord{MessageID: aws.ToString(m.MessageId), ReceiptHandle: aws.ToString(m.ReceiptHandle), Body: aws.ToString(m.Body),
		Attributes: map[string]string{}, MessageAttributes: map[string]messageAttr{}, MD5OfBody: aws.ToString(m.MD5OfBody),
		MD5OfMessageAttributes: aws.ToString(m.MD5OfMessageAttributes), EventSource: "aws:sqs", EventSourceARN: arn, AWSRegion: region}
	for k, v := range m.Attributes {
		r.Attributes[k] = v
	}
	for k, v := range m.MessageAttributes {
		r.MessageAttributes[k] = messageAttr{StringValue: v.StringValue, BinaryValue: v.BinaryValue,
			StringListValues: append([]string{}, v.StringListValues...), BinaryListValues: append([][]byte{}, v.BinaryListValues...),
			DataType: aws.ToString(v.DataType)}
	}
	return r
}

// filterView is the record as event filtering sees it: the body as
// JSON when it is.
func (r sqsRecord) filterView() map[string]any {
	b, _ := json.Marshal(r)
	var view map[string]any
	_ = json.Unmarshal(b, &view)
	var body any
	if json.Unmarshal([]byte(r.Body), &body) == nil {
		view["body"] = body
	}
	return view
}
