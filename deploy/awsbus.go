package deploy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
)

// EventBridge buses at the AWS endpoint, as awsres.go makes them.

type busSpec struct {
	Name        string            `json:"name"`
	Description string            `json:"description,omitempty"`
	KmsKey      string            `json:"kmsKey,omitempty"`
	Tags        map[string]string `json:"tags,omitempty"`
}

func (busKind) nameOf(_ *run, r *resource) (string, error) {
	p := propsOf(r)
	name, err := p.str("Name")
	if err == nil && name == "" {
		err = p.errorf("Name", "an event bus needs a Name")
	}
	return name, err
}

func (busKind) find(ctx context.Context, x *run, name string) (*Record, error) {
	cfg, err := x.awsConfig(ctx)
	if err != nil {
		return nil, err
	}
	return findBus(ctx, eventbridge.NewFromConfig(cfg), name)
}

func findBus(ctx context.Context, client *eventbridge.Client, name string) (*Record, error) {
	out, err := client.DescribeEventBus(ctx, &eventbridge.DescribeEventBusInput{Name: aws.String(name)})
	var nf *ebtypes.ResourceNotFoundException
	if errors.As(err, &nf) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	arn := aws.ToString(out.Arn)
	return &Record{Physical: name, Attrs: map[string]any{"Arn": arn, "Name": name}, created: aws.ToTime(out.CreationTime)}, nil
}

func (k busKind) apply(ctx context.Context, x *run, r *resource, prev *Record) (*Record, Action, error) {
	p := propsOf(r)
	name, err := k.nameOf(x, r)
	if err != nil {
		return nil, "", err
	}
	if x.d.AWS == nil {
		arn := "arn:" + x.partition() + ":events:" + x.region() + ":" + x.account() + ":event-bus/" + name
		return x.skipAWS(r, name, map[string]any{"Arn": arn, "Name": name})
	}
	desc, err := p.str("Description")
	if err != nil {
		return nil, "", err
	}
	kms, err := p.str("KmsKeyIdentifier")
	if err != nil {
		return nil, "", err
	}
	tags, err := tagsOf(r.Props["Tags"])
	if err != nil {
		return nil, "", fmt.Errorf("Properties.%w", err)
	}
	x.warnIgnored(r, "Name", "Description", "KmsKeyIdentifier", "Tags")
	cfg, err := x.awsConfig(ctx)
	if err != nil {
		return nil, "", err
	}
	client := eventbridge.NewFromConfig(cfg)
	var arn string
	return x.applyAt(ctx, r, prev, &atEndpoint{
		name: name,
		spec: busSpec{Name: name, Description: desc, KmsKey: kms, Tags: tags},
		find: func(ctx context.Context, name string) (*Record, error) {
			rec, err := findBus(ctx, client, name)
			if rec != nil {
				arn, _ = rec.Attrs["Arn"].(string)
			}
			return rec, err
		},
		create: func(ctx context.Context) error {
			in := &eventbridge.CreateEventBusInput{Name: aws.String(name)}
			if desc != "" {
				in.Description = aws.String(desc)
			}
			if kms != "" {
				in.KmsKeyIdentifier = aws.String(kms)
			}
			for _, k := range sortedKeys(tags) {
				in.Tags = append(in.Tags, ebtypes.Tag{Key: aws.String(k), Value: aws.String(tags[k])})
			}
			_, err := client.CreateEventBus(ctx, in)
			return err
		},
		update: func(ctx context.Context, oldSpec json.RawMessage) (bool, error) {
			var old busSpec
			_ = json.Unmarshal(oldSpec, &old)
			if old.Description != desc || old.KmsKey != kms {
				in := &eventbridge.UpdateEventBusInput{Name: aws.String(name), Description: aws.String(desc)}
				if kms != "" {
					in.KmsKeyIdentifier = aws.String(kms)
				}
				if _, err := client.UpdateEventBus(ctx, in); err != nil {
					return false, err
				}
			}
			gone, changed := tagChanges(old.Tags, tags)
			if len(gone) > 0 {
				if _, err := client.UntagResource(ctx, &eventbridge.UntagResourceInput{ResourceARN: aws.String(arn), TagKeys: gone}); err != nil {
					return false, err
				}
			}
			if len(changed) > 0 {
				var et []ebtypes.Tag
				for _, k := range sortedKeys(changed) {
					et = append(et, ebtypes.Tag{Key: aws.String(k), Value: aws.String(changed[k])})
				}
				if _, err := client.TagResource(ctx, &eventbridge.TagResourceInput{ResourceARN: aws.String(arn), Tags: et}); err != nil {
					return false, err
				}
			}
			return false, nil
		},
		remove: func(ctx context.Context, rec *Record) error { return deleteBus(ctx, client, rec.Physical) },
	})
}

func deleteBus(ctx context.Context, client *eventbridge.Client, name string) error {
	_, err := client.DeleteEventBus(ctx, &eventbridge.DeleteEventBusInput{Name: aws.String(name)})
	var nf *ebtypes.ResourceNotFoundException
	if errors.As(err, &nf) {
		return nil
	}
	return err
}

func (busKind) remove(ctx context.Context, x *run, id string, rec *Record) error {
	return x.removeAt(ctx, id, rec, func(ctx context.Context, cfg aws.Config) error {
		return deleteBus(ctx, eventbridge.NewFromConfig(cfg), rec.Physical)
	})
}
