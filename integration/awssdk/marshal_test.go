package awssdk

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/failure"
	"stepwise/integration/awssdk/awsmodel"
	"stepwise/jsonvalue"
)

type testBundle struct {
	models *awsmodel.Models
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	return &testBundle{models: &awsmodel.Models{}}
}

// build converts Parameters and marshals the request of service:action.
func (b *testBundle) build(t *testing.T, service, action, params string) (*request, error) {
	t.Helper()
	m, err := b.models.Get(service)
	require.NoError(t, err)
	op, ok := m.Operation(action)
	require.True(t, ok, "operation %s:%s", service, action)
	p, err := jsonvalue.ParseString(params)
	require.NoError(t, err)
	in, err := convertParams(p, op.Input)
	if err != nil {
		return nil, err
	}
	return marshal(m, op, in)
}

func TestMarshal(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, service, action, params string
		method, path, query           string
		header                        map[string]string
		body                          string
	}{
		{
			name: "json: DynamoDB PutItem, blobs in base64", service: "dynamodb", action: "putItem",
			params: `{"TableName": "t", "Item": {"id": {"S": "1"}, "bin": {"B": "aGk="}, "n": {"N": "5"}}}`,
			method: "POST", path: "/",
			header: map[string]string{"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "DynamoDB_20120810.PutItem"},
			body:   `{"TableName":"t","Item":{"id":{"S":"1"},"bin":{"B":"aGk="},"n":{"N":"5"}}}`,
		},
		{
			name: "json: camelCase members of Step Functions, JSON text for a string member", service: "sfn", action: "startExecution",
			params: `{"StateMachineArn": "arn:sm", "Input": {"k": "v"}}`,
			method: "POST", path: "/",
			header: map[string]string{"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "AWSStepFunctions.StartExecution"},
			body:   `{"stateMachineArn":"arn:sm","input":"{\"k\":\"v\"}"}`,
		},
		{
			name: "json 1.1: EventBridge PutEvents, timestamps in epoch seconds", service: "eventbridge", action: "putEvents",
			params: `{"Entries": [{"Source": "s", "DetailType": "d", "Detail": {"x": 1}, "Time": "2024-01-02T03:04:05.5Z"}]}`,
			method: "POST", path: "/",
			header: map[string]string{"Content-Type": "application/x-amz-json-1.1", "X-Amz-Target": "AWSEvents.PutEvents"},
			body:   `{"Entries":[{"Time":1704164645.500,"Source":"s","DetailType":"d","Detail":"{\"x\":1}"}]}`,
		},
		{
			name: "json: SQS in query-compatible mode", service: "sqs", action: "sendMessage",
			params: `{"QueueUrl": "https://q", "MessageBody": "hi", "DelaySeconds": 3}`,
			method: "POST", path: "/",
			header: map[string]string{"X-Amz-Target": "AmazonSQS.SendMessage", "X-Amzn-Query-Mode": "true"},
			body:   `{"QueueUrl":"https://q","MessageBody":"hi","DelaySeconds":3}`,
		},
		{
			name: "query: SNS Publish, maps as entry.N.Name/Value", service: "sns", action: "publish",
			params: `{"TopicArn": "arn:t", "Message": "hi", "MessageAttributes": {"k": {"DataType": "String", "StringValue": "v"}}}`,
			method: "POST", path: "/",
			header: map[string]string{"Content-Type": "application/x-www-form-urlencoded; charset=utf-8"},
			body:   `Action=Publish&Message=hi&MessageAttributes.entry.1.Name=k&MessageAttributes.entry.1.Value.DataType=String&MessageAttributes.entry.1.Value.StringValue=v&TopicArn=arn%3At&Version=2010-03-31`,
		},
		{
			name: "query: SNS CreateTopic, lists as member.N, empty list", service: "sns", action: "createTopic",
			params: `{"Name": "n", "Tags": [{"Key": "a", "Value": "b"}], "Attributes": {"x": "y"}, "DataProtectionPolicy": null}`,
			method: "POST", path: "/",
			body: `Action=CreateTopic&Attributes.entry.1.key=x&Attributes.entry.1.value=y&Name=n&Tags.member.1.Key=a&Tags.member.1.Value=b&Version=2010-03-31`,
		},
		{
			name: "rest-xml: S3 PutObject, labels, headers, metadata, JSON text body, CRC32", service: "s3", action: "putObject",
			params: `{"Bucket": "b", "Key": "dir/a b+c", "Body": "text data", "ContentType": "text/plain", "Metadata": {"foo": "bar"}}`,
			method: "PUT", path: "/b/dir/a%20b%2Bc",
			header: map[string]string{"Content-Type": "text/plain", "X-Amz-Meta-Foo": "bar", "X-Amz-Checksum-Crc32": "KUmHvQ==", "X-Amz-Sdk-Checksum-Algorithm": "CRC32"},
			body:   `"text data"`,
		},
		{
			name: "rest-xml: S3 PutObject, a chosen checksum algorithm", service: "s3", action: "putObject",
			params: `{"Bucket": "b", "Key": "k", "Body": {"a": 1}, "ChecksumAlgorithm": "SHA256"}`,
			method: "PUT", path: "/b/k",
			header: map[string]string{"X-Amz-Checksum-Sha256": "AVq9f1zFei3ZS3WQ8ErYCEJzkF7jPsXOvq5iJ2qX+GI=", "X-Amz-Sdk-Checksum-Algorithm": "SHA256"},
			body:   `{"a":1}`,
		},
		{
			name: "rest-xml: S3 ListObjectsV2, static and member query", service: "s3", action: "listObjectsV2",
			params: `{"Bucket": "b", "Prefix": "p/", "MaxKeys": 5}`,
			method: "GET", path: "/b", query: "list-type=2&max-keys=5&prefix=p%2F",
		},
		{
			name: "rest-xml: S3 DeleteObjects, flattened list in an XML payload", service: "s3", action: "deleteObjects",
			params: `{"Bucket": "b", "Delete": {"Objects": [{"Key": "a"}, {"Key": "b"}], "Quiet": true}}`,
			method: "POST", path: "/b", query: "delete=",
			header: map[string]string{"Content-Type": "application/xml", "X-Amz-Checksum-Crc32": "9I4Tdw=="},
			body:   `<Delete xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Object><Key>a</Key></Object><Object><Key>b</Key></Object><Quiet>true</Quiet></Delete>`,
		},
		{
			name: "rest-xml: S3 PutBucketTagging, wrapped list", service: "s3", action: "putBucketTagging",
			params: `{"Bucket": "b", "Tagging": {"TagSet": [{"Key": "k", "Value": "v"}]}}`,
			method: "PUT", path: "/b", query: "tagging=",
			body: `<Tagging xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><TagSet><Tag><Key>k</Key><Value>v</Value></Tag></TagSet></Tagging>`,
		},
		{
			name: "rest-json: Lambda Invoke, payload as JSON text, header and query members", service: "lambda", action: "invoke",
			params: `{"FunctionName": "f", "Payload": {"a": 1}, "InvocationType": "Event", "Qualifier": "1"}`,
			method: "POST", path: "/2015-03-31/functions/f/invocations", query: "Qualifier=1",
			header: map[string]string{"X-Amz-Invocation-Type": "Event"},
			body:   `{"a":1}`,
		},
		{
			name: "rest-json: Lambda GetFunction, an ARN label escaped", service: "lambda", action: "getFunction",
			params: `{"FunctionName": "arn:aws:lambda:us-east-1:1:function:f"}`,
			method: "GET", path: "/2015-03-31/functions/arn%3Aaws%3Alambda%3Aus-east-1%3A1%3Afunction%3Af",
		},
		{
			name: "rest-json: Batch SubmitJob, camelCase body members", service: "batch", action: "submitJob",
			params: `{"JobName": "j", "JobQueue": "q", "JobDefinition": "d", "ContainerOverrides": {"Command": ["a"]}}`,
			method: "POST", path: "/v1/submitjob",
			header: map[string]string{"Content-Type": "application/json"},
			body:   `{"jobName":"j","jobQueue":"q","jobDefinition":"d","containerOverrides":{"command":["a"]}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			r, err := b.build(t, tt.service, tt.action, tt.params)
			require.NoError(t, err)
			require.Equal(t, tt.method, r.method)
			require.Equal(t, tt.path, r.path)
			require.Equal(t, tt.query, r.query.Encode())
			for k, v := range tt.header {
				require.Equal(t, v, r.header.Get(k), "header %s", k)
			}
			require.Equal(t, tt.body, string(r.body))
		})
	}
}

func TestMarshal_idempotencyToken(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r, err := b.build(t, "secretsmanager", "createSecret", `{"Name": "n", "SecretString": "s"}`)
	require.NoError(t, err)
	v, err := jsonvalue.Parse(r.body)
	require.NoError(t, err)
	token, _ := v.(*jsonvalue.Object).Get("ClientRequestToken")
	require.Regexp(t, `^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`, token)
}

func TestMarshal_errors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, service, action, params, cause string
	}{
		{
			name: "unknown members", service: "dynamodb", action: "getItem",
			params: `{"TableName": "t", "Key": {"id": {"S": "1"}}, "Nope": 1, "tableName": "t"}`,
			cause:  `The Parameters could not be used to start the Task: [The field 'Nope' is not supported by Step Functions, The field 'tableName' is not supported by Step Functions]`,
		},
		{
			name: "nested unknown member", service: "dynamodb", action: "getItem",
			params: `{"TableName": "t", "Key": {"id": {"X": "1"}}}`,
			cause:  `The Parameters could not be used to start the Task: [The field 'Key.id.X' is not supported by Step Functions]`,
		},
		{
			name: "wrong types", service: "dynamodb", action: "query",
			params: `{"TableName": "t", "Limit": "5", "ConsistentRead": 1, "AttributesToGet": "a", "ExclusiveStartKey": []}`,
			cause:  `The Parameters could not be used to start the Task: [The value of the field 'AttributesToGet' must be an array, not string, The value of the field 'Limit' must be an integer, not string, The value of the field 'ConsistentRead' must be a boolean, not number, The value of the field 'ExclusiveStartKey' must be an object, not array]`,
		},
		{
			name: "integer out of range", service: "sqs", action: "sendMessage",
			params: `{"QueueUrl": "q", "MessageBody": "m", "DelaySeconds": 3000000000}`,
			cause:  `The Parameters could not be used to start the Task: [The value of the field 'DelaySeconds' must be an integer between -2147483648 and 2147483647, not 3000000000]`,
		},
		{
			name: "blob not base64", service: "kms", action: "encrypt",
			params: `{"KeyId": "k", "Plaintext": "not base64!"}`,
			cause:  `The Parameters could not be used to start the Task: [The value of the field 'Plaintext' must be base64-encoded binary data]`,
		},
		{
			name: "bad timestamp", service: "eventbridge", action: "putEvents",
			params: `{"Entries": [{"Time": "yesterday"}]}`,
			cause:  `The Parameters could not be used to start the Task: [The value of the field 'Entries[0].Time' must be an ISO 8601 timestamp, not string]`,
		},
		{
			name: "parameters not an object", service: "sqs", action: "listQueues",
			params: `[1]`,
			cause:  `The Parameters could not be used to start the Task: [The value of the field 'Parameters' must be an object, not array]`,
		},
		{
			name: "missing URI label", service: "s3", action: "getObject",
			params: `{"Bucket": "b"}`,
			cause:  `The Parameters could not be used to start the Task: [The field 'Key' is required but was missing]`,
		},
		{
			name: "empty URI label", service: "s3", action: "getObject",
			params: `{"Bucket": "", "Key": "k"}`,
			cause:  `The Parameters could not be used to start the Task: [The field 'Bucket' must not be empty]`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			_, err := b.build(t, tt.service, tt.action, tt.params)
			require.Equal(t, failure.New(failure.TaskFailed, tt.cause), err)
		})
	}
}

func TestMarshal_missingRequiredLeftToTheService(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r, err := b.build(t, "dynamodb", "putItem", `{"TableName": "t", "Item": null}`)
	require.NoError(t, err)
	require.Equal(t, http.MethodPost, r.method)
	require.Equal(t, `{"TableName":"t"}`, string(r.body))
}
