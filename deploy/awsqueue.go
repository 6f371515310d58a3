package deploy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// SQS queues at the AWS endpoint, as awsres.go makes them.

// --- SQS queues

type queueSpec struct {
	Name  string            `json:"name"`
	Attrs map[string]string `json:"attrs,omitempty"`
	Tags  map[string]string `json:"tags,omitempty"`
}

// queueAttributes are the queue properties that are SQS attributes.
var queueAttributes = []string{"ContentBasedDeduplication", "DeduplicationScope", "DelaySeconds", "FifoQueue", "FifoThroughputLimit",
	"KmsDataKeyReusePeriodSeconds", "KmsMasterKeyId", "MaximumMessageSize", "MessageRetentionPeriod", "ReceiveMessageWaitTimeSeconds",
	"RedriveAllowPolicy", "RedrivePolicy", "SqsManagedSseEnabled", "VisibilityTimeout"}

// queueDefaults are what SQS sets when an attribute is left out: a
// property taken out of the template goes back to it.
var queueDefaults = map[string]string{"DelaySeconds": "0", "MaximumMessageSize": "262144", "MessageRetentionPeriod": "345600",
	"ReceiveMessageWaitTimeSeconds": "0", "VisibilityTimeout": "30", "RedrivePolicy": "", "RedriveAllowPolicy": ""}

// attributesOf reads properties as an API's attributes: scalars as
// text, objects (a redrive policy) as JSON.
func attributesOf(p resProps, names []string) (map[string]string, error) {
	out := map[string]string{}
	for _, k := range names {
		switch v := p.m[k].(type) {
		case nil:
		case map[string]any, []any:
			b, err := json.Marshal(v)
			if err != nil {
				return nil, err
			}
			out[k] = string(b)
		default:
			s, err := p.str(k)
			if err != nil {
				return nil, err
			}
			out[k] = s
		}
	}
	return out, nil
}

func (x *run) queueAttrs(name string) (string, map[string]any) {
	url := "https://sqs." + x.region() + ".amazonaws.com/" + x.account() + "/" + name
	return url, map[string]any{"Arn": "arn:" + x.partition() + ":sqs:" + x.region() + ":" + x.account() + ":" + name, "QueueName": name, "QueueUrl": url}
}

func (queueKind) nameOf(x *run, r *resource) (string, error) {
	p := propsOf(r)
	name, err := p.str("QueueName")
	if err != nil {
		return "", err
	}
	fifo, err := p.flag("FifoQueue", false)
	if err != nil {
		return "", err
	}
	if name == "" {
		if fifo {
			name = x.name(r.ID, 75) + ".fifo"
		} else {
			name = x.name(r.ID, 80)
		}
	}
	if fifo != strings.HasSuffix(name, ".fifo") {
		return "", p.errorf("QueueName", "%s: a FIFO queue's name ends in .fifo, and only a FIFO queue's does", name)
	}
	return name, nil
}

func (queueKind) find(ctx context.Context, x *run, name string) (*Record, error) {
	cfg, err := x.awsConfig(ctx)
	if err != nil {
		return nil, err
	}
	return findQueue(ctx, sqs.NewFromConfig(cfg), name)
}

func findQueue(ctx context.Context, client *sqs.Client, name string) (*Record, error) {
	out, err := client.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(name)})
	var nf *sqstypes.QueueDoesNotExist
	if errors.As(err, &nf) || errorCode(err) == "AWS.SimpleQueueService.NonExistentQueue" {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	url := aws.ToString(out.QueueUrl)
	a, err := client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: out.QueueUrl,
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn, sqstypes.QueueAttributeNameCreatedTimestamp}})
	if err != nil {
		return nil, err
	}
	rec := &Record{Physical: url, Attrs: map[string]any{"Arn": a.Attributes["QueueArn"], "QueueName": name, "QueueUrl": url}}
	// Epoch seconds (a stand-in may give fractions).
	if secs, err := strconv.ParseFloat(a.Attributes["CreatedTimestamp"], 64); err == nil && secs > 0 {
		rec.created = time.UnixMilli(int64(secs * 1000))
	}
	return rec, nil
}

func (k queueKind) apply(ctx context.Context, x *run, r *resource, prev *Record) (*Record, Action, error) {
	p := propsOf(r)
	name, err := k.nameOf(x, r)
	if err != nil {
		return nil, "", err
	}
	fifo := strings.HasSuffix(name, ".fifo")
	if x.d.AWS == nil {
		url, attrs := x.queueAttrs(name)
		return x.skipAWS(r, url, attrs)
	}
	attrs, err := attributesOf(p, queueAttributes)
	if err != nil {
		return nil, "", err
	}
	if !fifo {
		delete(attrs, "FifoQueue")
	}
	tags, err := tagsOf(r.Props["Tags"])
	if err != nil {
		return nil, "", fmt.Errorf("Properties.%w", err)
	}
	x.warnIgnored(r, append([]string{"QueueName", "Tags"}, queueAttributes...)...)
	spec := queueSpec{Name: name, Attrs: attrs, Tags: tags}
	cfg, err := x.awsConfig(ctx)
	if err != nil {
		return nil, "", err
	}
	client := sqs.NewFromConfig(cfg)
	return x.applyAt(ctx, r, prev, &atEndpoint{
		name: name,
		spec: spec,
		find: func(ctx context.Context, name string) (*Record, error) { return findQueue(ctx, client, name) },
		create: func(ctx context.Context) error {
			_, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs, Tags: tags})
			return err
		},
		update: func(ctx context.Context, oldSpec json.RawMessage) (bool, error) {
			var old queueSpec
			_ = json.Unmarshal(oldSpec, &old)
			if old.Attrs["FifoQueue"] != attrs["FifoQueue"] {
				return true, nil
			}
			url, err := client.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(name)})
			if err != nil {
				return false, err
			}
			set := map[string]string{}
			for k, v := range attrs {
				if old.Attrs[k] != v {
					set[k] = v
				}
			}
			for k := range old.Attrs {
				if _, still := attrs[k]; !still {
					if def, ok := queueDefaults[k]; ok {
						set[k] = def
					}
				}
			}
			if len(set) > 0 {
				if _, err := client.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: url.QueueUrl, Attributes: set}); err != nil {
					return false, err
				}
			}
			gone, changed := tagChanges(old.Tags, tags)
			if len(gone) > 0 {
				if _, err := client.UntagQueue(ctx, &sqs.UntagQueueInput{QueueUrl: url.QueueUrl, TagKeys: gone}); err != nil {
					return false, err
				}
			}
			if len(changed) > 0 {
				if _, err := client.TagQueue(ctx, &sqs.TagQueueInput{QueueUrl: url.QueueUrl, Tags: changed}); err != nil {
					return false, err
				}
			}
			return false, nil
		},
		remove: func(ctx context.Context, rec *Record) error { return deleteQueue(ctx, client, rec.Physical) },
	})
}

func deleteQueue(ctx context.Context, client *sqs.Client, url string) error {
	_, err := client.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(url)})
	var nf *sqstypes.QueueDoesNotExist
	if errors.As(err, &nf) || errorCode(err) == "AWS.SimpleQueueService.NonExistentQueue" {
		return nil
	}
	return err
}

func (queueKind) remove(ctx context.Context, x *run, id string, rec *Record) error {
	return x.removeAt(ctx, id, rec, func(ctx context.Context, cfg aws.Config) error {
		return deleteQueue(ctx, sqs.NewFromConfig(cfg), rec.Physical)
	})
}

// tagChanges are the keys of old that new has not, and the tags of new
// that old has not or has with another value.
func tagChanges(old, new map[string]string) (gone []string, changed map[string]string) {
	for k := range old {
		if _, ok := new[k]; !ok {
			gone = append(gone, k)
		}
	}
	sort.Strings(gone)
	changed = map[string]string{}
	for k, v := range new {
		if ov, ok := old[k]; !ok || ov != v {
			changed[k] = v
		}
	}
	return gone, changed
}
