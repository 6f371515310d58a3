package deploy

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"

	"stepwise/wiring"
)

// Queues, topics and buckets as event sources (package wiring/queue runs
// them): a SAM function's SQS, SNS and S3 events, an
// AWS::Lambda::EventSourceMapping of an SQS queue, an
// AWS::SNS::Subscription of protocol lambda, a bucket's
// NotificationConfiguration.LambdaConfigurations. Streams (Kinesis,
// DynamoDB), Kafka and MQ are named and warned of: their events are not
// delivered here.

func init() {
	registerEvent("SQS", readSQSEvent)
	registerEvent("SNS", readSNSEvent)
	registerEvent("S3", readS3Event)
	register(eventSourceMappingKind{}, eventSourceMapping)
	quiet[eventSourceMapping] = true // warned of by the kind
}

const eventSourceMapping = "AWS::Lambda::EventSourceMapping"

// sqsSource is wiring/queue's SQSSource.
type sqsSource struct {
	Queue                          string   `json:"queue"`
	BatchSize                      int      `json:"batchSize,omitempty"`
	MaximumBatchingWindowInSeconds int      `json:"maximumBatchingWindowInSeconds,omitempty"`
	Enabled                        *bool    `json:"enabled,omitempty"`
	ReportBatchItemFailures        bool     `json:"reportBatchItemFailures,omitempty"`
	Filters                        []string `json:"filters,omitempty"`
}

// readSQSSource reads an event source mapping's settings of an SQS
// queue, from a SAM SQS event's or an EventSourceMapping's properties.
func readSQSSource(p resProps, queue string) (json.RawMessage, error) {
	src := sqsSource{Queue: queue}
	var err error
	if src.BatchSize, err = p.num("BatchSize", 0); err != nil {
		return nil, err
	}
	if src.MaximumBatchingWindowInSeconds, err = p.num("MaximumBatchingWindowInSeconds", 0); err != nil {
		return nil, err
	}
	if p.has("Enabled") {
		on, err := p.flag("Enabled", true)
		if err != nil {
			return nil, err
		}
		src.Enabled = &on
	}
	if types, ok := p.m["FunctionResponseTypes"].([]any); ok {
		for _, t := range types {
			if t == "ReportBatchItemFailures" {
				src.ReportBatchItemFailures = true
			}
		}
	}
	if src.Filters, err = filterPatterns(p); err != nil {
		return nil, err
	}
	return json.Marshal(src)
}

// filterPatterns reads FilterCriteria.Filters[].Pattern (JSON text, or
// an object).
func filterPatterns(p resProps) ([]string, error) {
	fc, ok, err := p.obj("FilterCriteria")
	if err != nil || !ok {
		return nil, err
	}
	list, ok := fc.m["Filters"].([]any)
	if !ok && fc.m["Filters"] != nil {
		return nil, fc.errorf("Filters", "a list of {Pattern}")
	}
	var out []string
	for i, f := range list {
		m, _ := f.(map[string]any)
		switch pat := m["Pattern"].(type) {
		case string:
			out = append(out, pat)
		case map[string]any:
			b, err := json.Marshal(pat)
			if err != nil {
				return nil, err
			}
			out = append(out, string(b))
		default:
			return nil, fmt.Errorf("%s.Filters[%d].Pattern: a JSON pattern, as text", fc.at, i)
		}
	}
	return out, nil
}

func readSQSEvent(x *run, r *resource, name string, p resProps, target wiring.Target) (wiring.Wire, error) {
	queue, err := p.str("Queue")
	if err != nil {
		return wiring.Wire{}, err
	}
	if queue == "" {
		return wiring.Wire{}, p.errorf("Queue", "the queue's ARN is required")
	}
	src, err := readSQSSource(p, queue)
	if err != nil {
		return wiring.Wire{}, err
	}
	return wiring.Wire{Kind: "sqs", Source: src, Target: target}, nil
}

// snsSource is wiring/queue's SNSSource.
type snsSource struct {
	Topic             string          `json:"topic"`
	FilterPolicy      json.RawMessage `json:"filterPolicy,omitempty"`
	FilterPolicyScope string          `json:"filterPolicyScope,omitempty"`
	// SQS: the function gets SQS events of the topic's notifications
	// (SAM's SqsSubscription), from Queue when given (else a queue
	// Stepwise makes).
	SQS       bool   `json:"sqs,omitempty"`
	Queue     string `json:"queue,omitempty"`
	BatchSize int    `json:"batchSize,omitempty"`
}

func readSNSEvent(x *run, r *resource, name string, p resProps, target wiring.Target) (wiring.Wire, error) {
	topic, err := p.str("Topic")
	if err != nil {
		return wiring.Wire{}, err
	}
	if topic == "" {
		return wiring.Wire{}, p.errorf("Topic", "the topic's ARN is required")
	}
	src := snsSource{Topic: topic}
	if src.FilterPolicy, src.FilterPolicyScope, err = filterPolicy(p); err != nil {
		return wiring.Wire{}, err
	}
	switch sub := p.m["SqsSubscription"].(type) {
	case nil:
	case map[string]any:
		sp := resProps{m: sub, at: p.path("SqsSubscription")}
		src.SQS = true
		if src.Queue, err = sp.str("QueueArn"); err != nil {
			return wiring.Wire{}, err
		}
		if src.BatchSize, err = sp.num("BatchSize", 0); err != nil {
			return wiring.Wire{}, err
		}
		if on, err := sp.flag("Enabled", true); err != nil {
			return wiring.Wire{}, err
		} else if !on {
			x.warn("%s: event %s: its SqsSubscription is disabled: nothing is delivered", r.ID, name)
			src.BatchSize = -1
		}
	default:
		if src.SQS, err = p.flag("SqsSubscription", false); err != nil {
			return wiring.Wire{}, err
		}
	}
	b, err := json.Marshal(src)
	return wiring.Wire{Kind: "sns", Source: b, Target: target}, err
}

// filterPolicy reads a subscription's FilterPolicy (an object, or its
// JSON text) and FilterPolicyScope.
func filterPolicy(p resProps) (json.RawMessage, string, error) {
	scope, err := p.str("FilterPolicyScope")
	if err != nil {
		return nil, "", err
	}
	switch fp := p.m["FilterPolicy"].(type) {
	case nil:
		return nil, scope, nil
	case string:
		if !json.Valid([]byte(fp)) {
			return nil, "", p.errorf("FilterPolicy", "not JSON: %s", fp)
		}
		return json.RawMessage(fp), scope, nil
	case map[string]any:
		b, err := json.Marshal(fp)
		return b, scope, err
	default:
		return nil, "", p.errorf("FilterPolicy", "an object")
	}
}

// s3Source is wiring/queue's S3Source.
type s3Source struct {
	Bucket string      `json:"bucket"`
	Events []string    `json:"events"`
	Rules  []s3KeyRule `json:"rules,omitempty"`
}

type s3KeyRule struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

func readS3Event(x *run, r *resource, name string, p resProps, target wiring.Target) (wiring.Wire, error) {
	bucket, err := p.str("Bucket")
	if err != nil {
		return wiring.Wire{}, err
	}
	// SAM's rule: the bucket is one of the template's (it adds the
	// notification to the bucket's own resource).
	if !x.stackBucket(bucket) {
		return wiring.Wire{}, p.errorf("Bucket", "%q is not a bucket of this template: an S3 event's Bucket is a Ref to an AWS::S3::Bucket of the same template", bucket)
	}
	src := s3Source{Bucket: bucket}
	if src.Events, err = strList(p, "Events"); err != nil {
		return wiring.Wire{}, err
	}
	if len(src.Events) == 0 {
		return wiring.Wire{}, p.errorf("Events", "the bucket's events (s3:ObjectCreated:*, ...) are required")
	}
	if src.Rules, err = keyRules(p); err != nil {
		return wiring.Wire{}, err
	}
	b, err := json.Marshal(src)
	return wiring.Wire{Kind: "s3", Source: b, Target: target}, err
}

// stackBucket says whether name is a bucket this stack made (or names).
func (x *run) stackBucket(name string) bool {
	for _, rec := range x.rec.Resources {
		if rec != nil && rec.Type == s3Bucket && rec.Physical == name {
			return true
		}
	}
	return false
}

// strList is a string or a list of strings.
func strList(p resProps, key string) ([]string, error) {
	switch v := p.m[key].(type) {
	case nil:
		return nil, nil
	case string:
		return []string{v}, nil
	case []any:
		var out []string
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, p.errorf(key, "a list of strings")
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, p.errorf(key, "a string or a list of strings")
}

// keyRules reads Filter.S3Key.Rules [{Name: prefix|suffix, Value}].
func keyRules(p resProps) ([]s3KeyRule, error) {
	f, ok, err := p.obj("Filter")
	if err != nil || !ok {
		return nil, err
	}
	k, ok, err := f.obj("S3Key")
	if err != nil || !ok {
		return nil, err
	}
	list, _ := k.m["Rules"].([]any)
	var out []s3KeyRule
	for i, e := range list {
		m, _ := e.(map[string]any)
		rp := resProps{m: m, at: fmt.Sprintf("%s.Rules[%d]", k.at, i)}
		n, err := rp.str("Name")
		if err != nil {
			return nil, err
		}
		v, err := rp.str("Value")
		if err != nil {
			return nil, err
		}
		if n = strings.ToLower(n); n != "prefix" && n != "suffix" {
			return nil, rp.errorf("Name", "prefix or suffix, not %q", n)
		}
		out = append(out, s3KeyRule{Name: n, Value: v})
	}
	return out, nil
}

// --- AWS::Lambda::EventSourceMapping

// eventSourceMappingKind makes the mapping a wire of its function: an
// SQS queue's is delivered (wiring/queue); a stream's, Kafka's or MQ's
// is warned of. Ref is the mapping's UUID; Fn::GetAtt gives Id and
// EventSourceMappingArn.
type eventSourceMappingKind struct{}

func (eventSourceMappingKind) apply(ctx context.Context, x *run, r *resource, prev *Record) (*Record, Action, error) {
	p := propsOf(r)
	uuid := mappingUUID(x.opts.StackName + "/" + r.ID)
	rec := &Record{Physical: uuid, Attrs: map[string]any{"Id": uuid,
		"EventSourceMappingArn": "arn:" + x.partition() + ":lambda:" + x.region() + ":" + x.account() + ":event-source-mapping:" + uuid}}
	fn, err := p.str("FunctionName")
	if err != nil {
		return nil, "", err
	}
	if fn == "" {
		return nil, "", p.errorf("FunctionName", "the function's name or ARN is required")
	}
	source, err := p.str("EventSourceArn")
	if err != nil {
		return nil, "", err
	}
	service := ""
	if parts := strings.SplitN(source, ":", 4); len(parts) == 4 {
		service = parts[2]
	}
	if service != "sqs" {
		what := cmpOr(source, "a self-managed event source")
		x.warn("%s (%s): the events of %s are not delivered here (only SQS queues' are)", r.ID, r.Type, what)
		rec.Skipped = true
		rec.Spec = specOf(map[string]string{"source": source, "function": fn})
		if prev != nil && sameSpec(prev, rec.Spec) {
			return rec, Unchanged, nil
		}
		return rec, Skipped, nil
	}
	src, err := readSQSSource(p, source)
	if err != nil {
		return nil, "", err
	}
	name := lambdaFunctionName(fn)
	rec.Wires = []wiring.Wire{{ID: r.ID, Kind: "sqs", Source: src, Target: x.functionTarget(name)}}
	rec.Spec = specOf(rec.Wires)
	return rec, actionOf(prev, rec), nil
}

func (eventSourceMappingKind) remove(context.Context, *run, string, *Record) error { return nil }

// lambdaFunctionName is a function's name from its name, ARN or partial
// ARN (ACCOUNT:function:NAME), without a version or alias.
func lambdaFunctionName(s string) string {
	if i := strings.Index(s, "function:"); i >= 0 {
		s = s[i+len("function:"):]
		if j := strings.IndexByte(s, ':'); j >= 0 {
			s = s[:j]
		}
	}
	return s
}

// mappingUUID is a UUID made from key: what the same stack's mapping
// always gets.
func mappingUUID(key string) string {
	h := idHash(key, 32)
	const hex = "0123456789abcdef"
	b := []byte(h)
	for i := range b {
		b[i] = hex[int(b[i])%16]
	}
	s := string(b)
	return s[:8] + "-" + s[8:12] + "-4" + s[13:16] + "-a" + s[17:20] + "-" + s[20:32]
}

// --- AWS::SNS::Subscription

// subscriptionKind: a subscription of protocol lambda is a wire of the
// function (an sns wire: its Ref is an ARN made up for it, the real
// subscription being made by the wire); one of protocol sqs is made at
// the AWS endpoint (Ref: its ARN); others are named and warned of.
type subscriptionKind struct{}

const snsSubscription = "AWS::SNS::Subscription"

func init() {
	register(subscriptionKind{}, snsSubscription)
	quiet[snsSubscription] = true
}

type subscriptionSpec struct {
	Protocol string            `json:"protocol"`
	Topic    string            `json:"topic"`
	Endpoint string            `json:"endpoint"`
	Attrs    map[string]string `json:"attrs,omitempty"`
}

func (subscriptionKind) apply(ctx context.Context, x *run, r *resource, prev *Record) (*Record, Action, error) {
	p := propsOf(r)
	spec := subscriptionSpec{}
	var err error
	for key, dst := range map[string]*string{"Protocol": &spec.Protocol, "TopicArn": &spec.Topic, "Endpoint": &spec.Endpoint} {
		if *dst, err = p.str(key); err != nil {
			return nil, "", err
		}
		if *dst == "" {
			return nil, "", p.errorf(key, "required")
		}
	}
	fp, scope, err := filterPolicy(p)
	if err != nil {
		return nil, "", err
	}
	madeUp := spec.Topic + ":" + mappingUUID(x.opts.StackName+"/"+r.ID)
	switch spec.Protocol {
	case "lambda":
		src, err := json.Marshal(snsSource{Topic: spec.Topic, FilterPolicy: fp, FilterPolicyScope: scope})
		if err != nil {
			return nil, "", err
		}
		rec := &Record{Physical: madeUp, Attrs: map[string]any{"Arn": madeUp},
			Wires: []wiring.Wire{{ID: r.ID, Kind: "sns", Source: src, Target: x.functionTarget(lambdaFunctionName(spec.Endpoint))}}}
		rec.Spec = specOf(struct {
			subscriptionSpec
			Wires []wiring.Wire `json:"wires"`
		}{spec, rec.Wires})
		return rec, actionOf(prev, rec), nil
	case "sqs":
	default:
		x.warn("%s (%s): a subscription of protocol %s is not made here; Ref gives %s", r.ID, r.Type, spec.Protocol, madeUp)
		return &Record{Physical: madeUp, Attrs: map[string]any{"Arn": madeUp}, Skipped: true}, Skipped, nil
	}
	if x.d.AWS == nil {
		return x.skipAWS(r, madeUp, map[string]any{"Arn": madeUp})
	}
	spec.Attrs = map[string]string{}
	if fp != nil {
		spec.Attrs["FilterPolicy"] = string(fp)
		spec.Attrs["FilterPolicyScope"] = cmpOr(scope, "MessageAttributes")
	}
	for _, k := range []string{"RawMessageDelivery", "RedrivePolicy", "DeliveryPolicy"} {
		if p.has(k) {
			a, err := attributesOf(p, []string{k})
			if err != nil {
				return nil, "", err
			}
			spec.Attrs[k] = a[k]
		}
	}
	x.warnIgnored(r, "Protocol", "TopicArn", "Endpoint", "FilterPolicy", "FilterPolicyScope", "RawMessageDelivery", "RedrivePolicy", "DeliveryPolicy", "Region")
	specJSON := specOf(spec)
	if prev != nil && !prev.Skipped && sameSpec(prev, specJSON) {
		return prev, Unchanged, nil
	}
	cfg, err := x.awsConfig(ctx)
	if err != nil {
		return nil, "", err
	}
	client := sns.NewFromConfig(cfg)
	if prev != nil && !prev.Skipped {
		if err := unsubscribe(ctx, client, prev.Physical); err != nil {
			return nil, "", err
		}
	}
	out, err := client.Subscribe(ctx, &sns.SubscribeInput{TopicArn: aws.String(spec.Topic), Protocol: aws.String("sqs"),
		Endpoint: aws.String(spec.Endpoint), Attributes: spec.Attrs, ReturnSubscriptionArn: true})
	if err != nil {
		return nil, "", fmt.Errorf("subscribe %s to %s: %w", spec.Endpoint, spec.Topic, err)
	}
	arn := aws.ToString(out.SubscriptionArn)
	rec := &Record{Physical: arn, Attrs: map[string]any{"Arn": arn}, Spec: specJSON}
	if prev == nil || prev.Skipped {
		return rec, Created, nil
	}
	return rec, Updated, nil
}

// actionOf is Created, Unchanged or Updated, rec against prev.
func actionOf(prev, rec *Record) Action {
	switch {
	case prev == nil || prev.Skipped:
		return Created
	case sameSpec(prev, rec.Spec):
		return Unchanged
	}
	return Updated
}

func unsubscribe(ctx context.Context, client *sns.Client, arn string) error {
	_, err := client.Unsubscribe(ctx, &sns.UnsubscribeInput{SubscriptionArn: aws.String(arn)})
	if code := errorCode(err); code == "NotFound" || code == "InvalidParameter" {
		return nil
	}
	return err
}

func (subscriptionKind) remove(ctx context.Context, x *run, id string, rec *Record) error {
	var spec subscriptionSpec
	if rec.Skipped || json.Unmarshal(rec.Spec, &spec) != nil || spec.Protocol != "sqs" {
		return nil
	}
	return x.removeAt(ctx, id, rec, func(ctx context.Context, cfg aws.Config) error {
		return unsubscribe(ctx, sns.NewFromConfig(cfg), rec.Physical)
	})
}

// --- A bucket's NotificationConfiguration.LambdaConfigurations

// bucketWires reads a bucket's LambdaConfigurations into s3 wires (ids
// BUCKET/Lambda1, ...), and warns of the other notifications, not made
// here.
func (x *run) bucketWires(r *resource, bucket string) ([]wiring.Wire, error) {
	nc, ok, err := propsOf(r).obj("NotificationConfiguration")
	if err != nil || !ok {
		return nil, err
	}
	if rest := nc.ignored("LambdaConfigurations", "EventBridgeConfiguration"); rest != "" {
		x.warn("%s (%s): NotificationConfiguration %s not applied here", r.ID, r.Type, rest)
	}
	list, ok := nc.m["LambdaConfigurations"].([]any)
	if !ok && nc.m["LambdaConfigurations"] != nil {
		return nil, nc.errorf("LambdaConfigurations", "a list")
	}
	var wires []wiring.Wire
	for i, e := range list {
		m, _ := e.(map[string]any)
		lp := resProps{m: m, at: fmt.Sprintf("%s.LambdaConfigurations[%d]", nc.at, i)}
		event, err := lp.str("Event")
		if err != nil {
			return nil, err
		}
		fn, err := lp.str("Function")
		if err != nil {
			return nil, err
		}
		if event == "" || fn == "" {
			return nil, fmt.Errorf("%s: Event and Function are required", lp.at)
		}
		rules, err := keyRules(lp)
		if err != nil {
			return nil, err
		}
		src, err := json.Marshal(s3Source{Bucket: bucket, Events: []string{event}, Rules: rules})
		if err != nil {
			return nil, err
		}
		wires = append(wires, wiring.Wire{ID: fmt.Sprintf("%s/Lambda%d", r.ID, i+1), Kind: "s3", Source: src,
			Target: x.functionTarget(lambdaFunctionName(fn))})
	}
	return wires, nil
}
