package deploy

import (
	"archive/zip"
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/require"

	"stepwise/integration/integrationtest"
)

const awsResources = `
Transform: AWS::Serverless-2016-10-31
Parameters:
  Read: {Type: Number, Default: 5}
  Visibility: {Type: Number, Default: 30}
  Key: {Type: String, Default: pk}
  BucketName: {Type: String, Default: app-data}
  Display: {Type: String, Default: Alerts}
  BusText: {Type: String, Default: the jobs}
Resources:
  Table:
    Type: AWS::DynamoDB::Table
    Properties:
      KeySchema: [{AttributeName: !Ref Key, KeyType: HASH}]
      AttributeDefinitions: [{AttributeName: !Ref Key, AttributeType: S}]
      ProvisionedThroughput: {ReadCapacityUnits: !Ref Read, WriteCapacityUnits: 5}
  Simple:
    Type: AWS::Serverless::SimpleTable
    Properties:
      TableName: simple
      PrimaryKey: {Name: jobId, Type: Number}
  Bucket:
    Type: AWS::S3::Bucket
    Properties: {BucketName: !Ref BucketName}
  Queue:
    Type: AWS::SQS::Queue
    Properties:
      FifoQueue: true
      VisibilityTimeout: !Ref Visibility
      Tags: [{Key: team, Value: night}]
  Topic:
    Type: AWS::SNS::Topic
    Properties: {TopicName: alerts, DisplayName: !Ref Display}
  Bus:
    Type: AWS::Events::EventBus
    Properties: {Name: jobs, Description: !Ref BusText}
Outputs:
  Table: {Value: !Ref Table}
  TableArn: {Value: !GetAtt Table.Arn}
  Simple: {Value: !Ref Simple}
  Bucket: {Value: !Ref Bucket}
  BucketArn: {Value: !GetAtt Bucket.Arn}
  Queue: {Value: !Ref Queue}
  QueueArn: {Value: !GetAtt Queue.Arn}
  QueueName: {Value: !GetAtt Queue.QueueName}
  Topic: {Value: !Ref Topic}
  TopicName: {Value: !GetAtt Topic.TopicName}
  Bus: {Value: !Ref Bus}
  BusArn: {Value: !GetAtt Bus.Arn}
`

func TestAWSResourcesWithoutAnEndpointAreNamed(t *testing.T) {
	b := newTestBed(t)
	r, err := b.deploy(t, awsResources, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"Bucket skipped", "Bus skipped", "Queue skipped", "Simple skipped", "Table skipped", "Topic skipped"}, actions(r))
	require.Equal(t, map[string]string{
		"Table":     "app-Table",
		"TableArn":  "arn:aws:dynamodb:us-east-1:123456789012:table/app-Table",
		"Simple":    "simple",
		"Bucket":    "app-data",
		"BucketArn": "arn:aws:s3:::app-data",
		"Queue":     "https://sqs.us-east-1.amazonaws.com/123456789012/app-Queue.fifo",
		"QueueArn":  "arn:aws:sqs:us-east-1:123456789012:app-Queue.fifo",
		"QueueName": "app-Queue.fifo",
		"Topic":     "arn:aws:sns:us-east-1:123456789012:alerts",
		"TopicName": "alerts",
		"Bus":       "jobs",
		"BusArn":    "arn:aws:events:us-east-1:123456789012:event-bus/jobs",
	}, outputs(r))
	require.Len(t, r.Warnings, 6)
	require.Equal(t, "Table (AWS::DynamoDB::Table) is not created: no AWS endpoint is set; Ref gives app-Table (pass --aws-endpoint (moto_server, say) to create it)", r.Warnings[4])

	// Named buckets' default names are lowercase.
	r, err = b.deploy(t, "Resources:\n  Logs: {Type: AWS::S3::Bucket}\n", nil)
	require.NoError(t, err)
	require.Equal(t, "app-logs", r.Changes[0].Physical)

	_, err = b.deploy(t, "Resources:\n  Q: {Type: AWS::SQS::Queue, Properties: {QueueName: plain, FifoQueue: true}}\n", nil)
	require.ErrorContains(t, err, "resource Q (AWS::SQS::Queue): Properties.QueueName: plain: a FIFO queue's name ends in .fifo")
	_, err = b.deploy(t, "Resources:\n  T: {Type: AWS::DynamoDB::Table, Properties: {KeySchema: [{AttributeName: k, KeyType: HASH}], AttributeDefinitions: [{AttributeName: k, AttributeType: S}]}}\n", nil)
	require.ErrorContains(t, err, "resource T (AWS::DynamoDB::Table): Properties.ProvisionedThroughput: a PROVISIONED table needs its ProvisionedThroughput")
	_, err = b.deploy(t, "Resources:\n  T: {Type: AWS::DynamoDB::Table, Properties: {KeySchema: [{Attribute: k}]}}\n", nil)
	require.ErrorContains(t, err, `resource T (AWS::DynamoDB::Table): Properties.KeySchema: unknown field "Attribute"`)
	_, err = b.deploy(t, "Resources:\n  B: {Type: AWS::Events::EventBus}\n", nil)
	require.ErrorContains(t, err, "resource B (AWS::Events::EventBus): Properties.Name: an event bus needs a Name")
}

// withMoto points the test bed's deployer at a moto_server of its own.
func withMoto(t *testing.T, b *testBed) aws.Config {
	t.Helper()
	url := integrationtest.Moto(t)
	b.d.AWS = &AWSEndpoint{URL: url, Region: "us-east-1", AccessKeyID: "test", SecretAccessKey: "test"}
	cfg, err := b.d.AWS.sdkConfig(context.Background(), "us-east-1")
	require.NoError(t, err)
	return cfg
}

func TestAWSResourcesAtMoto(t *testing.T) {
	b := newTestBed(t)
	cfg := withMoto(t, b)
	ctx := context.Background()
	ddb, sq, sn := dynamodb.NewFromConfig(cfg), sqs.NewFromConfig(cfg), sns.NewFromConfig(cfg)
	s3c := s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = true })
	eb := eventbridge.NewFromConfig(cfg)

	r, err := b.deploy(t, awsResources, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"Bucket created", "Bus created", "Queue created", "Simple created", "Table created", "Topic created"}, actions(r))
	require.Empty(t, r.Warnings)
	out := outputs(r)
	require.Equal(t, "app-Table", out["Table"])
	require.Equal(t, "app-Queue.fifo", out["QueueName"])
	require.True(t, strings.HasSuffix(out["Queue"], "/app-Queue.fifo"), out["Queue"])
	require.True(t, strings.HasPrefix(out["Queue"], "http"), out["Queue"])
	require.Equal(t, "alerts", out["TopicName"])
	require.True(t, strings.HasSuffix(out["Topic"], ":alerts"), out["Topic"])
	require.True(t, strings.HasSuffix(out["BusArn"], ":event-bus/jobs"), out["BusArn"])

	table, err := ddb.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String("app-Table")})
	require.NoError(t, err)
	require.Equal(t, out["TableArn"], aws.ToString(table.Table.TableArn))
	require.Equal(t, "pk", aws.ToString(table.Table.KeySchema[0].AttributeName))
	simple, err := ddb.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String("simple")})
	require.NoError(t, err)
	require.Equal(t, "jobId", aws.ToString(simple.Table.KeySchema[0].AttributeName))
	require.Equal(t, "N", string(simple.Table.AttributeDefinitions[0].AttributeType))
	_, err = s3c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String("app-data")})
	require.NoError(t, err)
	qa, err := sq.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(out["Queue"]), AttributeNames: []sqstypes.QueueAttributeName{"All"}})
	require.NoError(t, err)
	require.Equal(t, "30", qa.Attributes["VisibilityTimeout"])
	require.Equal(t, "true", qa.Attributes["FifoQueue"])
	require.Equal(t, out["QueueArn"], qa.Attributes["QueueArn"])
	ta, err := sn.GetTopicAttributes(ctx, &sns.GetTopicAttributesInput{TopicArn: aws.String(out["Topic"])})
	require.NoError(t, err)
	require.Equal(t, "Alerts", ta.Attributes["DisplayName"])
	_, err = eb.DescribeEventBus(ctx, &eventbridge.DescribeEventBusInput{Name: aws.String("jobs")})
	require.NoError(t, err)

	// Again: nothing changes.
	puts := b.records.puts
	r, err = b.deploy(t, awsResources, nil)
	require.NoError(t, err)
	require.False(t, r.Changed(), "%v", actions(r))
	require.Equal(t, puts, b.records.puts)

	// New throughput, visibility and display name: updated in place (a
	// bus's new description too, with UpdateEventBus, which moto has
	// not).
	r, err = b.deploy(t, awsResources, map[string]string{"Read": "7", "Visibility": "45", "Display": "Night alerts"})
	require.NoError(t, err)
	require.Equal(t, []string{"Bucket unchanged", "Bus unchanged", "Queue updated", "Simple unchanged", "Table updated", "Topic updated"}, actions(r))
	ta, err = sn.GetTopicAttributes(ctx, &sns.GetTopicAttributesInput{TopicArn: aws.String(out["Topic"])})
	require.NoError(t, err)
	require.Equal(t, "Night alerts", ta.Attributes["DisplayName"])
	bus, err := eb.DescribeEventBus(ctx, &eventbridge.DescribeEventBusInput{Name: aws.String("jobs")})
	require.NoError(t, err)
	require.Equal(t, "the jobs", aws.ToString(bus.Description))
	table, err = ddb.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String("app-Table")})
	require.NoError(t, err)
	require.Equal(t, int64(7), aws.ToInt64(table.Table.ProvisionedThroughput.ReadCapacityUnits))
	qa, err = sq.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(out["Queue"]), AttributeNames: []sqstypes.QueueAttributeName{"VisibilityTimeout"}})
	require.NoError(t, err)
	require.Equal(t, "45", qa.Attributes["VisibilityTimeout"])

	// A new key: the table cannot be changed in place, and is not made
	// again under its name, which would lose its items.
	_, err = ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("app-Table"), Item: map[string]ddbtypes.AttributeValue{"pk": &ddbtypes.AttributeValueMemberS{Value: "x"}}})
	require.NoError(t, err)
	_, err = b.deploy(t, awsResources, map[string]string{"Read": "7", "Visibility": "45", "Display": "Night alerts", "Key": "id"})
	require.ErrorContains(t, err, "resource Table (AWS::DynamoDB::Table): app-Table cannot be changed in place and would be made again under the same name")
	item, err := ddb.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("app-Table"), Key: map[string]ddbtypes.AttributeValue{"pk": &ddbtypes.AttributeValueMemberS{Value: "x"}}})
	require.NoError(t, err)
	require.NotEmpty(t, item.Item, "the table keeps its items")

	// A new bucket name: a new bucket, the old one deleted.
	params := map[string]string{"Read": "7", "Visibility": "45", "Display": "Night alerts", "BucketName": "app-data-2"}
	r, err = b.deploy(t, awsResources, params)
	require.NoError(t, err)
	require.Equal(t, []string{"Bucket replaced", "Bus unchanged", "Queue unchanged", "Simple unchanged", "Table unchanged", "Topic unchanged"}, actions(r))
	_, err = s3c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String("app-data")})
	require.Error(t, err, "the old bucket is deleted")
	_, err = s3c.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String("app-data-2")})
	require.NoError(t, err)

	// Deleted by hand: made again.
	_, err = sq.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(out["Queue"])})
	require.NoError(t, err)
	r, err = b.deploy(t, awsResources, params)
	require.NoError(t, err)
	require.Contains(t, actions(r), "Queue created")

	// The stack deleted: everything at the endpoint goes.
	r, err = b.d.Delete(ctx, "app")
	require.NoError(t, err)
	require.Len(t, r.Changes, 6)
	tables, err := ddb.ListTables(ctx, &dynamodb.ListTablesInput{})
	require.NoError(t, err)
	require.Empty(t, tables.TableNames)
	queues, err := sq.ListQueues(ctx, &sqs.ListQueuesInput{})
	require.NoError(t, err)
	require.Empty(t, queues.QueueUrls)
	topics, err := sn.ListTopics(ctx, &sns.ListTopicsInput{})
	require.NoError(t, err)
	require.Empty(t, topics.Topics)
	buckets, err := s3c.ListBuckets(ctx, &s3.ListBucketsInput{})
	require.NoError(t, err)
	require.Empty(t, buckets.Buckets)
	_, err = eb.DescribeEventBus(ctx, &eventbridge.DescribeEventBusInput{Name: aws.String("jobs")})
	require.Error(t, err)
}

func TestFunctionCodeFromS3AtTheEndpoint(t *testing.T) {
	b := newTestBed(t)
	base := codeFolder(t)
	cfg := withMoto(t, b)
	ctx := context.Background()
	s3c := s3.NewFromConfig(cfg, func(o *s3.Options) { o.UsePathStyle = true })
	_, err := s3c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String("code")})
	require.NoError(t, err)
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.Create("index.py")
	require.NoError(t, err)
	_, err = w.Write([]byte("def handler(e, c):\n    return 1\n"))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	_, err = s3c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String("code"), Key: aws.String("fn/v1.zip"), Body: bytes.NewReader(buf.Bytes())})
	require.NoError(t, err)

	tmpl := "Resources:\n  Fn: {Type: AWS::Lambda::Function, Properties: {Runtime: python3.12, Handler: index.handler, Code: {S3Bucket: code, S3Key: fn/v1.zip}}}\n" +
		"  Sam: {Type: AWS::Serverless::Function, Properties: {Runtime: python3.12, Handler: index.handler, CodeUri: s3://code/fn/v1.zip}}\n"
	r, err := b.deployAt(t, tmpl, base, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"Fn created", "Sam created"}, actions(r))
	fn := b.fns.fns["app-Fn"]
	require.True(t, strings.HasSuffix(fn.Code, ".zip"), fn.Code)
	got, err := os.ReadFile(fn.Code)
	require.NoError(t, err)
	require.Equal(t, buf.Bytes(), got, "the object is downloaded into the cache")
	require.Equal(t, fn.Code, b.fns.fns["app-Sam"].Code)

	r, err = b.deployAt(t, tmpl, base, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"Fn unchanged", "Sam unchanged"}, actions(r))

	_, err = b.deployAt(t, strings.Replace(tmpl, "fn/v1.zip}}}", "fn/v2.zip}}}", 1), base, nil)
	require.ErrorContains(t, err, "resource Fn (AWS::Lambda::Function): Properties.Code: s3://code/fn/v2.zip at http://127.0.0.1:")
}

func TestEndpointKeys(t *testing.T) {
	ctx := context.Background()
	keys := func(e *AWSEndpoint) (string, string) {
		cfg, err := e.sdkConfig(ctx, "eu-west-1")
		require.NoError(t, err)
		c, err := cfg.Credentials.Retrieve(ctx)
		require.NoError(t, err)
		return c.AccessKeyID, cfg.Region
	}
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	id, region := keys(&AWSEndpoint{URL: "http://127.0.0.1:5000"})
	require.Equal(t, "test", id, "a local stand-in checks no keys")
	require.Equal(t, "eu-west-1", region, "the service's region by default")
	id, region = keys(&AWSEndpoint{URL: "http://127.0.0.1:5000", Region: "us-west-2", AccessKeyID: "AKIDOWN", SecretAccessKey: "s"})
	require.Equal(t, "AKIDOWN", id)
	require.Equal(t, "us-west-2", region)
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDENV")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "s")
	id, _ = keys(&AWSEndpoint{URL: "http://127.0.0.1:5000"})
	require.Equal(t, "AKIDENV", id)
}

// A global secondary index added, then removed, changes the table in
// place: its items stay.
func TestTableIndexesChangeInPlace(t *testing.T) {
	b := newTestBed(t)
	cfg := withMoto(t, b)
	ctx := context.Background()
	ddb := dynamodb.NewFromConfig(cfg)
	plain := `Resources:
  T:
    Type: AWS::DynamoDB::Table
    Properties:
      TableName: orders
      BillingMode: PAY_PER_REQUEST
      AttributeDefinitions: [{AttributeName: pk, AttributeType: S}]
      KeySchema: [{AttributeName: pk, KeyType: HASH}]
`
	indexed := strings.Replace(plain, "[{AttributeName: pk, AttributeType: S}]", "[{AttributeName: pk, AttributeType: S}, {AttributeName: day, AttributeType: S}]", 1) +
		"      GlobalSecondaryIndexes: [{IndexName: byDay, KeySchema: [{AttributeName: day, KeyType: HASH}], Projection: {ProjectionType: ALL}}]\n"
	_, err := b.deploy(t, plain, nil)
	require.NoError(t, err)
	_, err = ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("orders"), Item: map[string]ddbtypes.AttributeValue{
		"pk": &ddbtypes.AttributeValueMemberS{Value: "o-1"}, "day": &ddbtypes.AttributeValueMemberS{Value: "mon"}}})
	require.NoError(t, err)
	indexes := func() []string {
		d, err := ddb.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String("orders")})
		require.NoError(t, err)
		require.Equal(t, int64(1), aws.ToInt64(d.Table.ItemCount), "the table keeps its item")
		var names []string
		for _, g := range d.Table.GlobalSecondaryIndexes {
			names = append(names, aws.ToString(g.IndexName))
		}
		return names
	}
	r, err := b.deploy(t, indexed, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"T updated"}, actions(r))
	require.Equal(t, []string{"byDay"}, indexes())
	r, err = b.deploy(t, plain, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"T updated"}, actions(r))
	require.Empty(t, indexes())
}
