package deploy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"
)

// DynamoDB tables, S3 buckets, SQS queues, SNS topics and EventBridge
// buses are made at the AWS endpoint (Deployer.AWS), so that Ref and
// Fn::GetAtt give their real names, URLs and ARNs. One of the same name
// already there that the stack did not make is refused, or taken over as
// it is with Options.Adopt (own.go). A changed name makes a new one and
// deletes the old; other changes are made in place where the service
// allows it (a table's keys or indexes: the table is made again).
// Without an endpoint each is named, with its ARN of its service's form,
// and skipped with a warning.
type (
	bucketKind struct{}
	queueKind  struct{}
	topicKind  struct{}
	busKind    struct{}
)

const (
	s3Bucket      = "AWS::S3::Bucket"
	sqsQueue      = "AWS::SQS::Queue"
	snsTopic      = "AWS::SNS::Topic"
	eventBus      = "AWS::Events::EventBus"
	dynamoTable   = "AWS::DynamoDB::Table"
	samSimpleTbl  = "AWS::Serverless::SimpleTable"
	awsHintOnSkip = "pass --aws-endpoint (moto_server, say) to create it"
)

func init() {
	register(bucketKind{}, s3Bucket)
	register(queueKind{}, sqsQueue)
	register(topicKind{}, snsTopic)
	register(busKind{}, eventBus)
	register(tableKind{}, dynamoTable, samSimpleTbl)
	for _, t := range []string{s3Bucket, sqsQueue, snsTopic, eventBus, dynamoTable, samSimpleTbl} {
		quiet[t] = true // skipped with their own warning
	}
}

// sdkConfig is the AWS SDK's configuration for the endpoint: its keys;
// without them, at a URL (a local stand-in), the environment's
// AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY or placeholders (moto
// checks none); with no URL either, AWS itself, with the keys the AWS
// CLI would find.
func (e *AWSEndpoint) sdkConfig(ctx context.Context, region string) (aws.Config, error) {
	region = cmpOr(e.Region, region)
	static := func(id, secret, token string) aws.Config {
		return aws.Config{Region: region, Credentials: credentials.NewStaticCredentialsProvider(id, secret, token)}
	}
	var cfg aws.Config
	switch {
	case e.AccessKeyID != "":
		cfg = static(e.AccessKeyID, e.SecretAccessKey, e.SessionToken)
	case e.URL != "" && os.Getenv("AWS_ACCESS_KEY_ID") != "":
		cfg = static(os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY"), os.Getenv("AWS_SESSION_TOKEN"))
	case e.URL != "":
		cfg = static("test", "test", "")
	default:
		var err error
		if cfg, err = config.LoadDefaultConfig(ctx, config.WithRegion(region)); err != nil {
			return aws.Config{}, fmt.Errorf("the AWS endpoint's configuration: %w", err)
		}
	}
	if e.URL != "" {
		cfg.BaseEndpoint = aws.String(e.URL)
	}
	return cfg, nil
}

// awsConfig is the SDK's configuration for the deployer's endpoint.
func (x *run) awsConfig(ctx context.Context) (aws.Config, error) {
	return x.d.AWS.sdkConfig(ctx, x.region())
}

// skipAWS names a resource that no endpoint is set to make, with a
// warning.
func (x *run) skipAWS(r *resource, ref string, attrs map[string]any) (*Record, Action, error) {
	x.warn("%s (%s) is not created: no AWS endpoint is set; Ref gives %s (%s)", r.ID, r.Type, ref, awsHintOnSkip)
	return &Record{Physical: ref, Attrs: attrs, Skipped: true}, Skipped, nil
}

// atEndpoint is one resource at the AWS endpoint: its name and spec
// (a struct whose JSON has "name"), and how to find, make, change and
// delete one.
type atEndpoint struct {
	name string
	spec any
	// find returns the resource of that name (Physical and Attrs), nil
	// when there is none.
	find   func(ctx context.Context, name string) (*Record, error)
	create func(ctx context.Context) error
	// update brings the resource made with old (a spec's JSON) to spec;
	// replace says it cannot be changed in place.
	update func(ctx context.Context, old json.RawMessage) (replace bool, err error)
	remove func(ctx context.Context, rec *Record) error
}

// applyAt creates, updates or replaces a resource at the endpoint, or
// takes over one of its name there (claim).
func (x *run) applyAt(ctx context.Context, r *resource, prev *Record, e *atEndpoint) (*Record, Action, error) {
	spec := specOf(e.spec)
	made := prev != nil && !prev.Skipped
	prevName := ""
	if made {
		prevName = specName(prev.Spec)
	}
	cur, err := e.find(ctx, e.name)
	if err != nil {
		return nil, "", err
	}
	found := func(a Action) (*Record, Action, error) {
		rec, err := e.find(ctx, e.name)
		if err != nil {
			return nil, "", err
		}
		if rec == nil {
			return nil, "", fmt.Errorf("%s is not at %s after it was made", e.name, x.d.AWS.URL)
		}
		rec.Spec = spec
		return rec, a, nil
	}
	// update brings the resource, made with old, to spec in place.
	update := func(old json.RawMessage, keep *Record) (*Record, Action, error) {
		if bytes.Equal(old, spec) {
			cur.Spec, cur.Adopted = spec, keep != nil && keep.Adopted
			return cur, Unchanged, nil
		}
		replace, err := e.update(ctx, old)
		if err != nil {
			return nil, "", err
		}
		if replace {
			// Made again under the same name, it would lose what it
			// holds: refused, as CloudFormation refuses to replace a
			// resource of a custom name.
			return nil, "", fmt.Errorf("%s cannot be changed in place and would be made again under the same name, losing what it holds: give it a new name (or delete it first) and deploy again", e.name)
		}
		rec, action, err := found(Updated)
		if rec != nil && keep != nil {
			rec.Adopted = keep.Adopted
		}
		return rec, action, err
	}
	switch {
	case made && prevName == e.name && cur != nil:
		return update(prev.Spec, prev)
	case cur != nil:
		// There, and not where the last deploy left it.
		own, err := x.claim(ctx, r, e.name, cur, nil)
		if err != nil {
			return nil, "", err
		}
		var rec *Record
		var action Action
		if specName(own.Spec) == e.name {
			// Made by the stack with the spec it recorded (an old
			// record's Adopted flag carries over to the new id).
			rec, action, err = update(own.Spec, own)
		} else {
			// Taken over: what it holds and how it is set are kept.
			x.warn("%s (%s): %s at %s is taken over as it is: its properties are not brought to the template's", r.ID, r.Type, e.name, x.d.AWS.URL)
			cur.Spec = spec
			rec, action = cur, Unchanged
		}
		if err != nil {
			return nil, "", err
		}
		if made && prevName != e.name {
			if err := e.remove(ctx, prev); err != nil {
				return nil, "", err
			}
			return rec, Replaced, nil
		}
		return rec, action, nil
	}
	if _, err := x.claim(ctx, r, e.name, nil, &Record{Spec: spec}); err != nil {
		return nil, "", err
	}
	if err := e.create(ctx); err != nil {
		return nil, "", err
	}
	if made && prevName != e.name {
		if err := e.remove(ctx, prev); err != nil {
			return nil, "", err
		}
		return found(Replaced)
	}
	return found(Created) // new, or deleted by hand
}

// isAtEndpoint says whether a type's resources are made at the AWS
// endpoint.
func isAtEndpoint(typ string) bool {
	switch typ {
	case s3Bucket, sqsQueue, snsTopic, eventBus, dynamoTable, samSimpleTbl:
		return true
	}
	return false
}

// specName is the name a spec recorded.
func specName(spec json.RawMessage) string {
	var s struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal(spec, &s)
	return s.Name
}

// removeAt deletes a resource made at the endpoint; without one it is
// left there, with a warning.
func (x *run) removeAt(ctx context.Context, id string, rec *Record, remove func(context.Context, aws.Config) error) error {
	if x.d.AWS == nil {
		x.warn("%s (%s) %s is left as it is: no AWS endpoint is set to delete it at", id, rec.Type, rec.Physical)
		return nil
	}
	cfg, err := x.awsConfig(ctx)
	if err != nil {
		return err
	}
	return remove(ctx, cfg)
}

// errorCode is an AWS error's code, "" for another error.
func errorCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// warnIgnored warns of the properties given and not acted on.
func (x *run) warnIgnored(r *resource, used ...string) {
	if rest := propsOf(r).ignored(used...); rest != "" {
		x.warn("%s (%s): %s not applied here", r.ID, r.Type, rest)
	}
}

// lowerName is a default name for a service that takes lowercase only
// (S3).
func lowerName(n string) string { return strings.ToLower(n) }

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
	if x.d.AWS == nil {
		return x.skipAWS(r, name, x.bucketAttrs(name))
	}
	x.warnIgnored(r, "BucketName")
	cfg, err := x.awsConfig(ctx)
	if err != nil {
		return nil, "", err
	}
	client := s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = x.d.AWS.URL != "" })
	return x.applyAt(ctx, r, prev, &atEndpoint{
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

// --- SNS topics

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

// --- EventBridge buses

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
