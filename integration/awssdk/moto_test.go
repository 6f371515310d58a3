package awssdk_test

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/failure"
	"stepwise/integration"
	"stepwise/integration/awssdk"
	"stepwise/integration/awssdk/awsmodel"
	"stepwise/integration/integrationtest"
	"stepwise/jsonvalue"
)

type testBundle struct {
	client *awssdk.Client
}

// setup returns a client calling every service at endpoint.
func setup(t *testing.T, endpoint string) *testBundle {
	t.Helper()
	cfg := &integration.Config{Region: "us-east-1", Account: "123456789012", Endpoint: endpoint}
	return &testBundle{client: awssdk.New(cfg, &awsmodel.Models{})}
}

// call runs aws-sdk:<service>:<action> and returns its result object or
// failure.
func (b *testBundle) call(t *testing.T, service, action, params string) (*jsonvalue.Object, *failure.Failure) {
	t.Helper()
	p, err := jsonvalue.ParseString(params)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := b.client.Call(ctx, &integration.Request{
		Resource: integration.ResourcePrefix + "aws-sdk:" + service + ":" + action,
		Service:  "aws-sdk:" + service, Action: action, Parameters: p,
	})
	if err != nil {
		return nil, integration.AsFailure(err)
	}
	return out.(*jsonvalue.Object), nil
}

// ok is call for a call that must succeed.
func (b *testBundle) ok(t *testing.T, service, action, params string) *jsonvalue.Object {
	t.Helper()
	out, f := b.call(t, service, action, params)
	require.Nil(t, f, "%s:%s", service, action)
	return out
}

// path reads a member of a result: names and array indexes.
func path(t *testing.T, v any, steps ...any) any {
	t.Helper()
	for _, s := range steps {
		switch k := s.(type) {
		case string:
			obj, ok := v.(*jsonvalue.Object)
			require.True(t, ok, "not an object at %v in %s", k, jsonvalue.String(v))
			v, ok = obj.Get(k)
			require.True(t, ok, "no member %s in %s", k, jsonvalue.String(obj))
		case int:
			arr, ok := v.([]any)
			require.True(t, ok, "not an array at %d", k)
			require.Greater(t, len(arr), k)
			v = arr[k]
		}
	}
	return v
}

const isoDate = `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{3})?Z$`

func TestMoto_DynamoDB(t *testing.T) {
	t.Parallel()
	b := setup(t, integrationtest.Moto(t))
	b.ok(t, "dynamodb", "createTable", `{"TableName": "items", "BillingMode": "PAY_PER_REQUEST",
		"AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}], "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}]}`)

	out := b.ok(t, "dynamodb", "putItem", `{"TableName": "items", "Item": {"id": {"S": "id1"}, "data": {"S": "HelloWorld"}, "bin": {"B": "aGk="}}}`)
	require.Equal(t, `{}`, jsonvalue.String(out))

	out = b.ok(t, "dynamodb", "getItem", `{"TableName": "items", "Key": {"id": {"S": "id1"}}}`)
	require.Equal(t, "HelloWorld", path(t, out, "Item", "data", "S"))
	require.Equal(t, "aGk=", path(t, out, "Item", "bin", "B"))

	out = b.ok(t, "dynamodb", "query", `{"TableName": "items", "KeyConditionExpression": "id = :id", "ExpressionAttributeValues": {":id": {"S": "id1"}}}`)
	require.Equal(t, []string{"Count", "Items", "ScannedCount"}, out.Keys())
	require.Equal(t, jsonvalue.Number("1"), path(t, out, "Count"))

	_, f := b.call(t, "dynamodb", "getItem", `{"TableName": "missing", "Key": {"id": {"S": "id1"}}}`)
	require.Equal(t, "DynamoDb.ResourceNotFoundException", f.Name)
	require.Regexp(t, `^Requested resource not found.* \(Service: DynamoDb, Status Code: 400, Request ID: \S+\)$`, f.Cause)
}

func TestMoto_S3(t *testing.T) {
	t.Parallel()
	b := setup(t, integrationtest.Moto(t))
	b.ok(t, "s3", "createBucket", `{"Bucket": "files"}`)

	out := b.ok(t, "s3", "putObject", `{"Bucket": "files", "Key": "dir/a b+c.txt", "Body": "text data"}`)
	sum := md5.Sum([]byte(`"text data"`))
	require.Equal(t, `"`+hex.EncodeToString(sum[:])+`"`, path(t, out, "ETag"), "the Body is sent as JSON text, as AWS does")
	require.Equal(t, "KUmHvQ==", path(t, out, "ChecksumCRC32"))

	b.ok(t, "s3", "putObject", `{"Bucket": "files", "Key": "obj.json", "Body": {"a": 1}, "Metadata": {"owner": "me"}}`)
	out = b.ok(t, "s3", "getObject", `{"Bucket": "files", "Key": "obj.json"}`)
	require.Equal(t, `{"a":1}`, path(t, out, "Body"))
	require.Equal(t, jsonvalue.Number("7"), path(t, out, "ContentLength"))
	require.Equal(t, "me", path(t, out, "Metadata", "owner"))
	require.Regexp(t, isoDate, path(t, out, "LastModified"))
	keys := out.Keys()
	require.Equal(t, "Body", keys[len(keys)-1])

	out = b.ok(t, "s3", "getObject", `{"Bucket": "files", "Key": "dir/a b+c.txt"}`)
	require.Equal(t, `"text data"`, path(t, out, "Body"))

	out = b.ok(t, "s3", "listObjectsV2", `{"Bucket": "files", "Prefix": "dir/"}`)
	require.Equal(t, jsonvalue.Number("1"), path(t, out, "KeyCount"))
	require.Equal(t, "dir/a b+c.txt", path(t, out, "Contents", 0, "Key"))
	require.Regexp(t, isoDate, path(t, out, "Contents", 0, "LastModified"))

	_, f := b.call(t, "s3", "getObject", `{"Bucket": "files", "Key": "nope"}`)
	require.Equal(t, "S3.NoSuchKeyException", f.Name)
	require.Regexp(t, `^The specified key does not exist. \(Service: S3, Status Code: 404, Request ID: \S+, Extended Request ID: \S+\)$`, f.Cause)

	_, f = b.call(t, "s3", "listObjects", `{"Bucket": "nosuchbucket"}`)
	require.Equal(t, "S3.NoSuchBucketException", f.Name)
}

func TestMoto_SSM(t *testing.T) {
	t.Parallel()
	b := setup(t, integrationtest.Moto(t))
	out := b.ok(t, "ssm", "putParameter", `{"Name": "/app/color", "Value": "blue", "Type": "String"}`)
	require.Equal(t, jsonvalue.Number("1"), path(t, out, "Version"))

	out = b.ok(t, "ssm", "getParameter", `{"Name": "/app/color"}`)
	require.Equal(t, "blue", path(t, out, "Parameter", "Value"))
	require.Regexp(t, isoDate, path(t, out, "Parameter", "LastModifiedDate"))

	_, f := b.call(t, "ssm", "getParameter", `{"Name": "/app/none"}`)
	require.Equal(t, "Ssm.ParameterNotFoundException", f.Name)
	require.Contains(t, f.Cause, "(Service: Ssm, Status Code: 400, Request ID: ")
}

func TestMoto_SecretsManager(t *testing.T) {
	t.Parallel()
	b := setup(t, integrationtest.Moto(t))
	out := b.ok(t, "secretsmanager", "createSecret", `{"Name": "db-password", "SecretString": "hunter2"}`)
	require.Equal(t, "db-password", path(t, out, "Name"))

	out = b.ok(t, "secretsmanager", "getSecretValue", `{"SecretId": "db-password"}`)
	require.Equal(t, "hunter2", path(t, out, "SecretString"))
	require.Regexp(t, isoDate, path(t, out, "CreatedDate"))

	_, f := b.call(t, "secretsmanager", "getSecretValue", `{"SecretId": "none"}`)
	require.Equal(t, "SecretsManager.ResourceNotFoundException", f.Name)
	require.Regexp(t, `\(Service: SecretsManager, Status Code: \d+, Request ID: \S+\)$`, f.Cause)
}

func TestMoto_SQS(t *testing.T) {
	t.Parallel()
	b := setup(t, integrationtest.Moto(t))
	queue := path(t, b.ok(t, "sqs", "createQueue", `{"QueueName": "jobs"}`), "QueueUrl").(string)

	out := b.ok(t, "sqs", "sendMessage", `{"QueueUrl": "`+queue+`", "MessageBody": {"job": 1}}`)
	sum := md5.Sum([]byte(`{"job":1}`))
	require.Equal(t, hex.EncodeToString(sum[:]), path(t, out, "MD5OfMessageBody"))

	out = b.ok(t, "sqs", "receiveMessage", `{"QueueUrl": "`+queue+`", "MaxNumberOfMessages": 1}`)
	require.Equal(t, `{"job":1}`, path(t, out, "Messages", 0, "Body"))

	_, f := b.call(t, "sqs", "sendMessage", `{"QueueUrl": "`+queue+`-missing", "MessageBody": "x"}`)
	require.Equal(t, "Sqs.QueueDoesNotExistException", f.Name)
}

func TestMoto_SNS(t *testing.T) {
	t.Parallel()
	b := setup(t, integrationtest.Moto(t))
	topic := path(t, b.ok(t, "sns", "createTopic", `{"Name": "news", "Tags": [{"Key": "team", "Value": "a"}]}`), "TopicArn").(string)
	queue := path(t, b.ok(t, "sqs", "createQueue", `{"QueueName": "inbox"}`), "QueueUrl").(string)
	queueArn := path(t, b.ok(t, "sqs", "getQueueAttributes", `{"QueueUrl": "`+queue+`", "AttributeNames": ["QueueArn"]}`), "Attributes", "QueueArn").(string)
	b.ok(t, "sns", "subscribe", `{"TopicArn": "`+topic+`", "Protocol": "sqs", "Endpoint": "`+queueArn+`", "Attributes": {"RawMessageDelivery": "true"}}`)

	out := b.ok(t, "sns", "publish", `{"TopicArn": "`+topic+`", "Message": {"hello": "world"},
		"MessageAttributes": {"kind": {"DataType": "String", "StringValue": "greeting"}}}`)
	require.NotEmpty(t, path(t, out, "MessageId"))

	out = b.ok(t, "sqs", "receiveMessage", `{"QueueUrl": "`+queue+`", "WaitTimeSeconds": 1}`)
	require.Equal(t, `{"hello":"world"}`, path(t, out, "Messages", 0, "Body"))

	out = b.ok(t, "sns", "listTopics", `{}`)
	require.Equal(t, topic, path(t, out, "Topics", 0, "TopicArn"))

	_, f := b.call(t, "sns", "publish", `{"TopicArn": "`+topic+`-missing", "Message": "x"}`)
	require.Equal(t, "Sns.NotFoundException", f.Name)
	require.Contains(t, f.Cause, "(Service: Sns, Status Code: 404, Request ID: ")
}

func TestMoto_EventBridge(t *testing.T) {
	t.Parallel()
	b := setup(t, integrationtest.Moto(t))
	queue := path(t, b.ok(t, "sqs", "createQueue", `{"QueueName": "events"}`), "QueueUrl").(string)
	queueArn := path(t, b.ok(t, "sqs", "getQueueAttributes", `{"QueueUrl": "`+queue+`", "AttributeNames": ["QueueArn"]}`), "Attributes", "QueueArn").(string)
	b.ok(t, "eventbridge", "putRule", `{"Name": "all", "EventPattern": {"source": ["app"]}}`)
	b.ok(t, "eventbridge", "putTargets", `{"Rule": "all", "Targets": [{"Id": "q", "Arn": "`+queueArn+`"}]}`)

	out := b.ok(t, "eventbridge", "putEvents", `{"Entries": [{"Source": "app", "DetailType": "order", "Detail": {"id": 7}}]}`)
	require.Equal(t, jsonvalue.Number("0"), path(t, out, "FailedEntryCount"))
	require.NotEmpty(t, path(t, out, "Entries", 0, "EventId"))

	out = b.ok(t, "sqs", "receiveMessage", `{"QueueUrl": "`+queue+`", "WaitTimeSeconds": 1}`)
	event, err := jsonvalue.ParseString(path(t, out, "Messages", 0, "Body").(string))
	require.NoError(t, err)
	require.Equal(t, jsonvalue.Number("7"), path(t, event, "detail", "id"))
	require.Equal(t, "order", path(t, event, "detail-type"))

	_, f := b.call(t, "eventbridge", "describeRule", `{"Name": "none"}`)
	require.Equal(t, "EventBridge.ResourceNotFoundException", f.Name)
}

func TestMoto_Lambda(t *testing.T) {
	t.Parallel()
	b := setup(t, integrationtest.Moto(t))
	_, f := b.call(t, "lambda", "getFunction", `{"FunctionName": "none"}`)
	require.Equal(t, "Lambda.ResourceNotFoundException", f.Name)
	require.Contains(t, f.Cause, "(Service: Lambda, Status Code: 404, Request ID: ")
}

func TestCall_notRecognized(t *testing.T) {
	t.Parallel()
	b := setup(t, "http://127.0.0.1:1")
	for _, sa := range [][2]string{{"nosuchservice", "doIt"}, {"dynamodb", "noSuchAction"}} {
		_, f := b.call(t, sa[0], sa[1], `{}`)
		require.Equal(t, failure.New(failure.TaskFailed,
			"The resource provided arn:aws:states:::aws-sdk:"+sa[0]+":"+sa[1]+" is not recognized. The value is not a valid resource ARN, or the resource is not available in this region."), f)
	}
}

// A JSON-protocol service answers a request without a member its model
// requires with its ValidationException, which AWS's call reaches: no
// request is sent from here, the failure is worded as the service's.
func TestCall_requiredMemberMissing(t *testing.T) {
	t.Parallel()
	b := setup(t, "http://127.0.0.1:1")
	_, f := b.call(t, "dynamodb", "putItem", `{"TableName": "t", "Item": null}`)
	require.Equal(t, "DynamoDb.DynamoDbException", f.Name)
	require.Regexp(t, `^1 validation error detected: Value null at 'item' failed to satisfy constraint: Member must not be null \(Service: DynamoDb, Status Code: 400, Request ID: [0-9a-f-]{36}\)$`, f.Cause)
	_, f = b.call(t, "dynamodb", "getItem", `{}`)
	require.Regexp(t, `^2 validation errors detected: Value null at 'tableName' failed to satisfy constraint: Member must not be null; Value null at 'key' failed to satisfy constraint: Member must not be null \(`, f.Cause)
	// Another protocol's service words it itself: the call is made.
	_, f = b.call(t, "sqs", "sendMessage", `{"QueueUrl": "http://127.0.0.1:1/123456789012/q"}`)
	require.Equal(t, "Sqs.SdkClientException", f.Name)
}

func TestCall_noAnswer(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	b := setup(t, "http://"+addr)
	_, f := b.call(t, "dynamodb", "listTables", `{}`)
	require.Equal(t, "DynamoDb.SdkClientException", f.Name)
	require.Contains(t, f.Cause, "Unable to execute HTTP request: ")
}

func TestCall_cancelled(t *testing.T) {
	t.Parallel()
	started, release := make(chan struct{}), make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-release
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	b := setup(t, srv.URL)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-started
		cancel()
	}()
	_, err := b.client.Call(ctx, &integration.Request{Service: "aws-sdk:dynamodb", Action: "listTables", Parameters: jsonvalue.NewObject(0)})
	require.ErrorIs(t, err, context.Canceled)
}

func TestCall_signed(t *testing.T) {
	t.Parallel()
	got := make(chan *http.Request, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		_, _ = w.Write([]byte(`{"TableNames":["a"]}`))
	}))
	t.Cleanup(srv.Close)
	b := setup(t, srv.URL)
	out := b.ok(t, "dynamodb", "listTables", `{}`)
	require.Equal(t, `{"TableNames":["a"]}`, jsonvalue.String(out))
	r := <-got
	require.Regexp(t, `^AWS4-HMAC-SHA256 Credential=\S+/\d{8}/us-east-1/dynamodb/aws4_request, SignedHeaders=\S*x-amz-target\S*, Signature=[0-9a-f]{64}$`, r.Header.Get("Authorization"))
	require.Equal(t, "DynamoDB_20120810.ListTables", r.Header.Get("X-Amz-Target"))
}

// EC2 is called with its whole model, in its own query protocol: lists
// as Name.N, results read from the EC2 XML.
func TestMoto_EC2(t *testing.T) {
	t.Parallel()
	b := setup(t, integrationtest.Moto(t))
	image := path(t, b.ok(t, "ec2", "describeImages", `{"Owners": ["amazon"], "MaxResults": 5}`), "Images", 0, "ImageId").(string)
	out := b.ok(t, "ec2", "runInstances", `{"ImageId": "`+image+`", "InstanceType": "t3.micro", "MinCount": 2, "MaxCount": 2,
		"TagSpecifications": [{"ResourceType": "instance", "Tags": [{"Key": "app", "Value": "web"}]}]}`)
	id := path(t, out, "Instances", 0, "InstanceId").(string)
	require.Regexp(t, `^i-[0-9a-f]+$`, id)
	require.Len(t, path(t, out, "Instances"), 2)

	out = b.ok(t, "ec2", "describeInstances", `{"Filters": [{"Name": "tag:app", "Values": ["web"]}]}`)
	require.Len(t, path(t, out, "Reservations", 0, "Instances"), 2)
	out = b.ok(t, "ec2", "describeInstances", `{"InstanceIds": ["`+id+`"]}`)
	require.Equal(t, id, path(t, out, "Reservations", 0, "Instances", 0, "InstanceId"))
	require.Equal(t, "t3.micro", path(t, out, "Reservations", 0, "Instances", 0, "InstanceType"))
	require.Regexp(t, isoDate, path(t, out, "Reservations", 0, "Instances", 0, "LaunchTime"))

	out = b.ok(t, "ec2", "stopInstances", `{"InstanceIds": ["`+id+`"]}`)
	require.Equal(t, id, path(t, out, "StoppingInstances", 0, "InstanceId"))

	_, f := b.call(t, "ec2", "describeInstances", `{"InstanceIds": ["i-0123456789abcdef0"]}`)
	require.NotNil(t, f)
	require.Regexp(t, `^Ec2\.`, f.Name)
	require.Contains(t, f.Cause, "(Service: Ec2, Status Code: 400, Request ID: ")
}

// Config and Rekognition are called with their whole models (JSON
// protocol).
func TestMoto_ConfigAndRekognition(t *testing.T) {
	t.Parallel()
	b := setup(t, integrationtest.Moto(t))
	b.ok(t, "config", "putConfigurationRecorder", `{"ConfigurationRecorder": {"Name": "default",
		"RoleARN": "arn:aws:iam::123456789012:role/config", "RecordingGroup": {"AllSupported": true}}}`)
	out := b.ok(t, "config", "describeConfigurationRecorders", `{}`)
	require.Equal(t, "default", path(t, out, "ConfigurationRecorders", 0, "Name"))
	require.Equal(t, true, path(t, out, "ConfigurationRecorders", 0, "RecordingGroup", "AllSupported"))

	_, f := b.call(t, "config", "startConfigurationRecorder", `{"ConfigurationRecorderName": "none"}`)
	require.NotNil(t, f)
	require.Equal(t, "Config.NoSuchConfigurationRecorderException", f.Name)

	out = b.ok(t, "rekognition", "detectLabels", `{"Image": {"S3Object": {"Bucket": "photos", "Name": "cat.jpg"}}}`)
	require.NotEmpty(t, path(t, out, "Labels", 0, "Name"))
}
