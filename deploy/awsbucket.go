package deploy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"

	"stepwise/wiring"
)

// S3 buckets at the AWS endpoint, as awsres.go makes them.

// --- S3 buckets

type bucketSpec struct {
	Name string `json:"name"`
}

func (x *run) bucketAttrs(name string) map[string]any {
	region := x.region()
	return map[string]any{
		"Arn":                 "arn:" + x.partition() + ":s3:::" + name,
		"DomainName":          name + ".s3.amazonaws.com",
		"RegionalDomainName":  name + ".s3." + region + ".amazonaws.com",
		"DualStackDomainName": name + ".s3.dualstack." + region + ".amazonaws.com",
		"WebsiteURL":          "http://" + name + ".s3-website-" + region + ".amazonaws.com",
	}
}

func (bucketKind) nameOf(x *run, r *resource) (string, error) {
	name, err := propsOf(r).str("BucketName")
	return cmpOr(name, lowerName(x.name(r.ID, 63))), err
}

func (bucketKind) find(ctx context.Context, x *run, name string) (*Record, error) {
	cfg, err := x.awsConfig(ctx)
	if err != nil {
		return nil, err
	}
	return x.findBucket(ctx, s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = x.d.AWS.URL != "" }), name)
}

func (x *run) findBucket(ctx context.Context, client *s3.Client, name string) (*Record, error) {
	_, err := client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(name)})
	var nf *s3types.NotFound
	if errors.As(err, &nf) || errorCode(err) == "NotFound" || errorCode(err) == "NoSuchBucket" {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	rec := &Record{Physical: name, Attrs: x.bucketAttrs(name)}
	// When it was made, if the keys may list the buckets.
	if list, err := client.ListBuckets(ctx, &s3.ListBucketsInput{Prefix: aws.String(name)}); err == nil {
		for _, b := range list.Buckets {
			if aws.ToString(b.Name) == name && b.CreationDate != nil {
				rec.created = *b.CreationDate
			}
		}
	}
	return rec, nil
}

func (k bucketKind) apply(ctx context.Context, x *run, r *resource, prev *Record) (*Record, Action, error) {
	name, err := k.nameOf(x, r)
	if err != nil {
		return nil, "", err
	}
	// The functions its events go to (wire_queue.go).
	wires, err := x.bucketWires(r, name)
	if err != nil {
		return nil, "", err
	}
	// Its EventBridge events, to the local bus.
	if w, err := x.bucketEventBridgeWire(r, name); err != nil {
		return nil, "", err
	} else if w != nil {
		wires = append(wires, *w)
	}
	if x.d.AWS == nil {
		rec, action, err := x.skipAWS(r, name, x.bucketAttrs(name))
		if rec != nil {
			rec.Wires = wires
		}
		return rec, action, err
	}
	x.warnIgnored(r, "BucketName", "NotificationConfiguration")
	cfg, err := x.awsConfig(ctx)
	if err != nil {
		return nil, "", err
	}
	client := s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = x.d.AWS.URL != "" })
	rec, action, err := x.applyAt(ctx, r, prev, &atEndpoint{
		name: name,
		spec: bucketSpec{Name: name},
		find: func(ctx context.Context, name string) (*Record, error) { return x.findBucket(ctx, client, name) },
		create: func(ctx context.Context) error {
			in := &s3.CreateBucketInput{Bucket: aws.String(name)}
			if cfg.Region != "us-east-1" {
				in.CreateBucketConfiguration = &s3types.CreateBucketConfiguration{LocationConstraint: s3types.BucketLocationConstraint(cfg.Region)}
			}
			_, err := client.CreateBucket(ctx, in)
			if errorCode(err) == "BucketAlreadyOwnedByYou" {
				return nil
			}
			return err
		},
		update: func(context.Context, json.RawMessage) (bool, error) { return false, nil },
		remove: func(ctx context.Context, rec *Record) error { return deleteBucket(ctx, client, rec.Physical) },
	})
	if rec != nil && (len(wires) > 0 || len(rec.Wires) > 0) {
		if rec == prev {
			c := *prev
			rec = &c
		}
		rec.Wires = wires
	}
	return rec, action, err
}

// bucketEventBridgeWire is the wire of a bucket whose
// NotificationConfiguration.EventBridgeConfiguration.EventBridgeEnabled
// is true: its events go to the default bus, the local one, as S3 sends
// them to EventBridge's (nil: not enabled).
func (x *run) bucketEventBridgeWire(r *resource, bucket string) (*wiring.Wire, error) {
	nc, ok, err := propsOf(r).obj("NotificationConfiguration")
	if err != nil || !ok {
		return nil, err
	}
	ebc, ok, err := nc.obj("EventBridgeConfiguration")
	if err != nil || !ok {
		return nil, err
	}
	if !ebc.has("EventBridgeEnabled") {
		return nil, ebc.errorf("EventBridgeEnabled", "required")
	}
	enabled, err := ebc.flag("EventBridgeEnabled", false)
	if err != nil || !enabled {
		return nil, err
	}
	// wiring/queue's S3EventBridgeSource.
	src, err := json.Marshal(struct {
		Bucket string `json:"bucket"`
	}{bucket})
	if err != nil {
		return nil, err
	}
	arn := "arn:" + x.partition() + ":events:" + x.region() + ":" + x.account() + ":event-bus/default"
	return &wiring.Wire{ID: r.ID + "/EventBridge", Kind: "s3-eventbridge", Source: src,
		Target: wiring.Target{Type: wiring.ToBus, ARN: arn, Name: "default"}}, nil
}

func deleteBucket(ctx context.Context, client *s3.Client, name string) error {
	_, err := client.DeleteBucket(ctx, &s3.DeleteBucketInput{Bucket: aws.String(name)})
	switch errorCode(err) {
	case "NoSuchBucket":
		return nil
	case "BucketNotEmpty":
		return fmt.Errorf("%w\nhint: empty the bucket first, or give it DeletionPolicy: Retain", err)
	}
	return err
}

func (bucketKind) remove(ctx context.Context, x *run, id string, rec *Record) error {
	return x.removeAt(ctx, id, rec, func(ctx context.Context, cfg aws.Config) error {
		return deleteBucket(ctx, s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = x.d.AWS.URL != "" }), rec.Physical)
	})
}
