package deploy

import (
	"context"
	"encoding/json"
	"regexp"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/wiring"
)

// wireSink records the wires a deploy hands over.
type wireSink struct {
	mu    sync.Mutex
	wires map[string][]wiring.Wire
}

func (s *wireSink) SetWires(_ context.Context, stack string, wires []wiring.Wire) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.wires[stack] = wires
	return nil
}

func (s *wireSink) byID(stack string) map[string]wiring.Wire {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]wiring.Wire{}
	for _, w := range s.wires[stack] {
		out[w.ID] = w
	}
	return out
}

const queueWiresTemplate = `
Transform: AWS::Serverless-2016-10-31
Globals:
  Function:
    Runtime: python3.12
    Handler: index.handler
Resources:
  Jobs:
    Type: AWS::SQS::Queue
    Properties: {QueueName: jobs}
  News:
    Type: AWS::SNS::Topic
    Properties: {TopicName: news}
  Uploads:
    Type: AWS::S3::Bucket
    Properties:
      BucketName: uploads
      NotificationConfiguration:
        LambdaConfigurations:
          - Event: s3:ObjectRemoved:*
            Function: arn:aws:lambda:us-east-1:123456789012:function:worker:live
  Worker:
    Type: AWS::Serverless::Function
    Properties:
      FunctionName: worker
      InlineCode: "def handler(event, context): return None"
      Events:
        Jobs:
          Type: SQS
          Properties:
            Queue: !GetAtt Jobs.Arn
            BatchSize: 20
            MaximumBatchingWindowInSeconds: 2
            Enabled: false
            FunctionResponseTypes: [ReportBatchItemFailures]
            FilterCriteria:
              Filters:
                - Pattern: '{"body": {"kind": ["job"]}}'
        News:
          Type: SNS
          Properties:
            Topic: !Ref News
            FilterPolicy: {kind: [news]}
            FilterPolicyScope: MessageBody
        Upload:
          Type: S3
          Properties:
            Bucket: !Ref Uploads
            Events: [s3:ObjectCreated:*]
            Filter:
              S3Key:
                Rules: [{Name: prefix, Value: in/}, {Name: suffix, Value: .csv}]
        Clicks:
          Type: Kinesis
          Properties: {Stream: arn:aws:kinesis:us-east-1:123456789012:stream/clicks, StartingPosition: LATEST}
  Mapping:
    Type: AWS::Lambda::EventSourceMapping
    Properties:
      EventSourceArn: !GetAtt Jobs.Arn
      FunctionName: !GetAtt Worker.Arn
  StreamMapping:
    Type: AWS::Lambda::EventSourceMapping
    Properties:
      EventSourceArn: arn:aws:dynamodb:us-east-1:123456789012:table/t/stream/2026
      FunctionName: worker
  Subscription:
    Type: AWS::SNS::Subscription
    Properties:
      Protocol: lambda
      TopicArn: !Ref News
      Endpoint: !GetAtt Worker.Arn
Outputs:
  MappingId: {Value: !Ref Mapping}
  MappingArn: {Value: !GetAtt Mapping.EventSourceMappingArn}
`

func TestQueueEventsBecomeWires(t *testing.T) {
	t.Parallel()
	b := newTestBed(t)
	sink := &wireSink{wires: map[string][]wiring.Wire{}}
	b.d.Wiring = sink
	report, err := b.deploy(t, queueWiresTemplate, nil)
	require.NoError(t, err)
	wires := sink.byID("app")
	fn := wiring.Target{Type: wiring.ToFunction, Name: "worker", ARN: "arn:aws:lambda:us-east-1:123456789012:function:worker"}
	source := func(id string) string { return string(wires[id].Source) }

	require.Equal(t, "sqs", wires["Worker/Jobs"].Kind)
	require.Equal(t, fn, wires["Worker/Jobs"].Target)
	require.JSONEq(t, `{"queue": "arn:aws:sqs:us-east-1:123456789012:jobs", "batchSize": 20, "maximumBatchingWindowInSeconds": 2,
		"enabled": false, "reportBatchItemFailures": true, "filters": ["{\"body\": {\"kind\": [\"job\"]}}"]}`, source("Worker/Jobs"))
	require.Equal(t, "sns", wires["Worker/News"].Kind)
	require.JSONEq(t, `{"topic": "arn:aws:sns:us-east-1:123456789012:news", "filterPolicy": {"kind": ["news"]}, "filterPolicyScope": "MessageBody"}`, source("Worker/News"))
	require.Equal(t, "s3", wires["Worker/Upload"].Kind)
	require.JSONEq(t, `{"bucket": "uploads", "events": ["s3:ObjectCreated:*"], "rules": [{"name": "prefix", "value": "in/"}, {"name": "suffix", "value": ".csv"}]}`, source("Worker/Upload"))
	require.Equal(t, fn, wires["Uploads/Lambda1"].Target, "the alias's qualifier is dropped")
	require.JSONEq(t, `{"bucket": "uploads", "events": ["s3:ObjectRemoved:*"]}`, source("Uploads/Lambda1"))
	require.Equal(t, fn, wires["Mapping"].Target)
	require.JSONEq(t, `{"queue": "arn:aws:sqs:us-east-1:123456789012:jobs"}`, source("Mapping"))
	require.Equal(t, "sns", wires["Subscription"].Kind)
	require.Len(t, wires, 6)

	require.Contains(t, report.Warnings, "Worker (AWS::Serverless::Function): event Clicks of type Kinesis is not delivered here")
	require.Contains(t, report.Warnings, "StreamMapping (AWS::Lambda::EventSourceMapping): the events of arn:aws:dynamodb:us-east-1:123456789012:table/t/stream/2026 are not delivered here (only SQS queues' are)")
	outputs := map[string]string{}
	for _, o := range report.Outputs {
		outputs[o.Key] = o.Value
	}
	require.Regexp(t, regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-a[0-9a-f]{3}-[0-9a-f]{12}$`), outputs["MappingId"])
	require.Equal(t, "arn:aws:lambda:us-east-1:123456789012:event-source-mapping:"+outputs["MappingId"], outputs["MappingArn"])

	// Deployed again: the same wires, the same UUID.
	again, err := b.deploy(t, queueWiresTemplate, nil)
	require.NoError(t, err)
	require.Equal(t, report.Outputs, again.Outputs)
	require.Contains(t, actions(again), "Mapping unchanged")
	b2, _ := json.Marshal(sink.byID("app"))
	b1, _ := json.Marshal(wires)
	require.JSONEq(t, string(b1), string(b2))
}

func TestS3EventOfABucketNotOfTheTemplate(t *testing.T) {
	t.Parallel()
	b := newTestBed(t)
	_, err := b.deploy(t, `
Transform: AWS::Serverless-2016-10-31
Resources:
  Worker:
    Type: AWS::Serverless::Function
    Properties:
      Runtime: python3.12
      Handler: index.handler
      InlineCode: "def handler(event, context): return None"
      Events:
        Upload:
          Type: S3
          Properties: {Bucket: someone-elses, Events: s3:ObjectCreated:*}
`, nil)
	require.ErrorContains(t, err, `Properties.Bucket: "someone-elses" is not a bucket of this template: an S3 event's Bucket is a Ref to an AWS::S3::Bucket of the same template`)
}
