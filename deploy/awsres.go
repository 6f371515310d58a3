package deploy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
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

// --- SNS topics
// --- EventBridge buses
