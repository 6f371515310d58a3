package deploy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
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
