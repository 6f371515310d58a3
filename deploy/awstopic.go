package deploy

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
)

// SNS topics at the AWS endpoint, as awsres.go makes them.

type topicSpec struct {
	Name  string            `json:"name"`
	Attrs map[string]string `json:"attrs,omitempty"`
	Tags  map[string]string `json:"tags,omitempty"`
}

var topicAttributes = []string{"ArchivePolicy", "ContentBasedDeduplication", "DisplayName", "FifoTopic", "KmsMasterKeyId", "SignatureVersion", "TracingConfig"}

func (topicKind) nameOf(x *run, r *resource) (string, error) {
	p := propsOf(r)
	name, err := p.str("TopicName")
	if err != nil {
		return "", err
	}
	fifo, err := p.flag("FifoTopic", false)
	if err != nil {
		return "", err
	}
	if name == "" {
		if fifo {
			name = x.name(r.ID, 251) + ".fifo"
		} else {
			name = x.name(r.ID, 256)
		}
	}
	return name, nil
}

func (topicKind) find(ctx context.Context, x *run, name string) (*Record, error) {
	cfg, err := x.awsConfig(ctx)
	if err != nil {
		return nil, err
	}
	return findTopic(ctx, sns.NewFromConfig(cfg), name)
}

func findTopic(ctx context.Context, client *sns.Client, name string) (*Record, error) {
	pages := sns.NewListTopicsPaginator(client, &sns.ListTopicsInput{})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		for _, t := range page.Topics {
			if a := aws.ToString(t.TopicArn); strings.HasSuffix(a, ":"+name) {
				return &Record{Physical: a, Attrs: map[string]any{"TopicArn": a, "TopicName": name}}, nil
			}
		}
	}
	return nil, nil
}

func (k topicKind) apply(ctx context.Context, x *run, r *resource, prev *Record) (*Record, Action, error) {
	p := propsOf(r)
	name, err := k.nameOf(x, r)
	if err != nil {
		return nil, "", err
	}
	fifo, _ := p.flag("FifoTopic", false)
	if x.d.AWS == nil {
		arn := "arn:" + x.partition() + ":sns:" + x.region() + ":" + x.account() + ":" + name
		return x.skipAWS(r, arn, map[string]any{"TopicArn": arn, "TopicName": name})
	}
	attrs, err := attributesOf(p, topicAttributes)
	if err != nil {
		return nil, "", err
	}
	if !fifo {
		delete(attrs, "FifoTopic")
	}
	tags, err := tagsOf(r.Props["Tags"])
	if err != nil {
		return nil, "", fmt.Errorf("Properties.%w", err)
	}
	x.warnIgnored(r, append([]string{"TopicName", "Tags"}, topicAttributes...)...)
	cfg, err := x.awsConfig(ctx)
	if err != nil {
		return nil, "", err
	}
	client := sns.NewFromConfig(cfg)
	var arn string // found or made
	return x.applyAt(ctx, r, prev, &atEndpoint{
		name: name,
		spec: topicSpec{Name: name, Attrs: attrs, Tags: tags},
		find: func(ctx context.Context, name string) (*Record, error) {
			rec, err := findTopic(ctx, client, name)
			if rec != nil {
				arn = rec.Physical
			}
			return rec, err
		},
		create: func(ctx context.Context) error {
			var st []snstypes.Tag
			for _, k := range sortedKeys(tags) {
				st = append(st, snstypes.Tag{Key: aws.String(k), Value: aws.String(tags[k])})
			}
			_, err := client.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String(name), Attributes: attrs, Tags: st})
			return err
		},
		update: func(ctx context.Context, oldSpec json.RawMessage) (bool, error) {
			var old topicSpec
			_ = json.Unmarshal(oldSpec, &old)
			if old.Attrs["FifoTopic"] != attrs["FifoTopic"] {
				return true, nil
			}
			for _, k := range topicAttributes {
				if v, ov := attrs[k], old.Attrs[k]; v != ov && k != "FifoTopic" {
					if _, err := client.SetTopicAttributes(ctx, &sns.SetTopicAttributesInput{TopicArn: aws.String(arn), AttributeName: aws.String(k), AttributeValue: aws.String(v)}); err != nil {
						return false, err
					}
				}
			}
			gone, changed := tagChanges(old.Tags, tags)
			if len(gone) > 0 {
				if _, err := client.UntagResource(ctx, &sns.UntagResourceInput{ResourceArn: aws.String(arn), TagKeys: gone}); err != nil {
					return false, err
				}
			}
			if len(changed) > 0 {
				var st []snstypes.Tag
				for _, k := range sortedKeys(changed) {
					st = append(st, snstypes.Tag{Key: aws.String(k), Value: aws.String(changed[k])})
				}
				if _, err := client.TagResource(ctx, &sns.TagResourceInput{ResourceArn: aws.String(arn), Tags: st}); err != nil {
					return false, err
				}
			}
			return false, nil
		},
		remove: func(ctx context.Context, rec *Record) error {
			_, err := client.DeleteTopic(ctx, &sns.DeleteTopicInput{TopicArn: aws.String(rec.Physical)})
			if errorCode(err) == "NotFound" {
				return nil
			}
			return err
		},
	})
}

func (topicKind) remove(ctx context.Context, x *run, id string, rec *Record) error {
	return x.removeAt(ctx, id, rec, func(ctx context.Context, cfg aws.Config) error {
		_, err := sns.NewFromConfig(cfg).DeleteTopic(ctx, &sns.DeleteTopicInput{TopicArn: aws.String(rec.Physical)})
		if errorCode(err) == "NotFound" {
			return nil
		}
		return err
	})
}
