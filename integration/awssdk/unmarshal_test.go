package awssdk

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/failure"
	"stepwise/jsonvalue"
)

// answer decodes a response of service:action.
func (b *testBundle) answer(t *testing.T, service, action string, resp *response) (any, error) {
	t.Helper()
	m, err := b.models.Get(service)
	require.NoError(t, err)
	op, ok := m.Operation(action)
	require.True(t, ok)
	if resp.status >= 300 {
		return nil, parseError(m, op, resp).failure(m)
	}
	return unmarshal(m, op, resp)
}

func header(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h
}

func TestUnmarshal(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, service, action string
		resp                  response
		want                  string
	}{
		{
			name: "json: DynamoDB Query, members sorted, map keys as sent", service: "dynamodb", action: "query",
			resp: response{status: 200, body: []byte(`{"Items":[{"id":{"S":"id1"},"data":{"S":"x"}}],"Count":1,"ScannedCount":1,"Unknown":1}`)},
			want: `{"Count":1,"Items":[{"id":{"S":"id1"},"data":{"S":"x"}}],"ScannedCount":1}`,
		},
		{
			name: "json: an empty body", service: "dynamodb", action: "putItem",
			resp: response{status: 200},
			want: `{}`,
		},
		{
			name: "json: Step Functions camelCase to PascalCase, epoch dates to ISO 8601", service: "sfn", action: "startExecution",
			resp: response{status: 200, body: []byte(`{"executionArn":"arn:e","startDate":1.71077612612E9}`)},
			want: `{"ExecutionArn":"arn:e","StartDate":"2024-03-18T15:35:26.120Z"}`,
		},
		{
			name: "json: whole-second dates, blobs in base64", service: "kms", action: "encrypt",
			resp: response{status: 200, body: []byte(`{"CiphertextBlob":"AQID","KeyId":"k","EncryptionAlgorithm":"SYMMETRIC_DEFAULT"}`)},
			want: `{"CiphertextBlob":"AQID","EncryptionAlgorithm":"SYMMETRIC_DEFAULT","KeyId":"k"}`,
		},
		{
			name: "json: Secrets Manager dates", service: "secretsmanager", action: "getSecretValue",
			resp: response{status: 200, body: []byte(`{"ARN":"a","Name":"n","SecretString":"s","VersionStages":["AWSCURRENT"],"CreatedDate":1700000000}`)},
			want: `{"ARN":"a","CreatedDate":"2023-11-14T22:13:20Z","Name":"n","SecretString":"s","VersionStages":["AWSCURRENT"]}`,
		},
		{
			name: "query: SNS Publish result", service: "sns", action: "publish",
			resp: response{status: 200, body: []byte(`<PublishResponse xmlns="http://sns.amazonaws.com/doc/2010-03-31/"><PublishResult><MessageId>m-1</MessageId></PublishResult><ResponseMetadata><RequestId>r</RequestId></ResponseMetadata></PublishResponse>`)},
			want: `{"MessageId":"m-1"}`,
		},
		{
			name: "query: SNS GetTopicAttributes, a map", service: "sns", action: "getTopicAttributes",
			resp: response{status: 200, body: []byte(`<GetTopicAttributesResponse><GetTopicAttributesResult><Attributes><entry><key>Owner</key><value>1</value></entry><entry><key>TopicArn</key><value>arn:t</value></entry></Attributes></GetTopicAttributesResult></GetTopicAttributesResponse>`)},
			want: `{"Attributes":{"Owner":"1","TopicArn":"arn:t"}}`,
		},
		{
			name: "query: SNS ListTopics, a member list", service: "sns", action: "listTopics",
			resp: response{status: 200, body: []byte(`<ListTopicsResponse><ListTopicsResult><Topics><member><TopicArn>a</TopicArn></member><member><TopicArn>b</TopicArn></member></Topics></ListTopicsResult></ListTopicsResponse>`)},
			want: `{"Topics":[{"TopicArn":"a"},{"TopicArn":"b"}]}`,
		},
		{
			name: "rest-xml: S3 GetObject, headers, metadata, body last", service: "s3", action: "getObject",
			resp: response{status: 200, body: []byte("text data"), header: header(
				"Content-Length", "9", "Content-Type", "binary/octet-stream", "ETag", `"332eec544317a6d340b8e77da7fe54ad"`,
				"Last-Modified", "Wed, 06 Nov 2025 12:20:01 GMT", "Accept-Ranges", "bytes", "X-Amz-Server-Side-Encryption", "AES256",
				"X-Amz-Meta-Owner", "me")},
			want: `{"AcceptRanges":"bytes","ContentLength":9,"ContentType":"binary/octet-stream","ETag":"\"332eec544317a6d340b8e77da7fe54ad\"","LastModified":"2025-11-06T12:20:01Z","Metadata":{"owner":"me"},"ServerSideEncryption":"AES256","Body":"text data"}`,
		},
		{
			name: "rest-xml: S3 GetObject, no metadata is an empty map", service: "s3", action: "getObject",
			resp: response{status: 200, header: header("Content-Length", "0")},
			want: `{"ContentLength":0,"Metadata":{},"Body":""}`,
		},
		{
			name: "rest-xml: S3 ListObjectsV2, a flattened list", service: "s3", action: "listObjectsV2",
			resp: response{status: 200, body: []byte(`<?xml version="1.0" encoding="UTF-8"?>
<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>b</Name><Prefix></Prefix><KeyCount>2</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated>
<Contents><Key>a</Key><LastModified>2025-01-02T03:04:05.000Z</LastModified><ETag>"e"</ETag><Size>3</Size><StorageClass>STANDARD</StorageClass></Contents>
<Contents><Key>b</Key><LastModified>2025-01-02T03:04:05.123Z</LastModified><Size>0</Size></Contents></ListBucketResult>`)},
			want: `{"Contents":[{"ETag":"\"e\"","Key":"a","LastModified":"2025-01-02T03:04:05Z","Size":3,"StorageClass":"STANDARD"},{"Key":"b","LastModified":"2025-01-02T03:04:05.123Z","Size":0}],"IsTruncated":false,"KeyCount":2,"MaxKeys":1000,"Name":"b","Prefix":""}`,
		},
		{
			name: "rest-xml: S3 GetBucketTagging, a structure payload", service: "s3", action: "getBucketTagging",
			resp: response{status: 200, body: []byte(`<Tagging><TagSet><Tag><Key>k</Key><Value>v</Value></Tag></TagSet></Tagging>`)},
			want: `{"TagSet":[{"Key":"k","Value":"v"}]}`,
		},
		{
			name: "rest-json: Lambda Invoke, status code, headers, payload text", service: "lambda", action: "invoke",
			resp: response{status: 200, body: []byte(`{"ok":true}`), header: header("X-Amz-Executed-Version", "$LATEST")},
			want: `{"ExecutedVersion":"$LATEST","StatusCode":200,"Payload":"{\"ok\":true}"}`,
		},
		{
			name: "rest-json: Batch DescribeJobs, camelCase to PascalCase, epoch millis stay numbers", service: "batch", action: "describeJobs",
			resp: response{status: 200, body: []byte(`{"jobs":[{"jobName":"j","jobId":"1","status":"RUNNING","createdAt":1700000000000,"container":{"command":["a"]}}]}`)},
			want: `{"Jobs":[{"Container":{"Command":["a"]},"CreatedAt":1700000000000,"JobId":"1","JobName":"j","Status":"RUNNING"}]}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			if tt.resp.header == nil {
				tt.resp.header = http.Header{}
			}
			got, err := b.answer(t, tt.service, tt.action, &tt.resp)
			require.NoError(t, err)
			require.Equal(t, tt.want, jsonvalue.String(got))
		})
	}
}

func TestUnmarshal_errors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, service, action string
		resp                  response
		error, cause          string
	}{
		{
			name: "json: an unmodeled code is the service's base exception", service: "dynamodb", action: "putItem",
			resp: response{status: 400, header: header("X-Amzn-Requestid", "R1"), body: []byte(
				`{"__type":"com.amazon.coral.validate#ValidationException","message":"1 validation error detected: Value null at 'item' failed to satisfy constraint: Member must not be null"}`)},
			error: "DynamoDb.DynamoDbException",
			cause: "1 validation error detected: Value null at 'item' failed to satisfy constraint: Member must not be null (Service: DynamoDb, Status Code: 400, Request ID: R1)",
		},
		{
			name: "json: a modeled error", service: "dynamodb", action: "getItem",
			resp: response{status: 400, header: header("X-Amzn-Requestid", "R2"), body: []byte(
				`{"__type":"com.amazonaws.dynamodb.v20120810#ResourceNotFoundException","message":"Requested resource not found"}`)},
			error: "DynamoDb.ResourceNotFoundException",
			cause: "Requested resource not found (Service: DynamoDb, Status Code: 400, Request ID: R2)",
		},
		{
			name: "json: Secrets Manager's prefix", service: "secretsmanager", action: "createSecret",
			resp: response{status: 400, header: header("X-Amzn-Requestid", "R3"), body: []byte(
				`{"__type":"ValidationException","Message":"Invalid name. Must be a valid name containing alphanumeric characters, or any of the following: -/_+=.@!"}`)},
			error: "SecretsManager.SecretsManagerException",
			cause: "Invalid name. Must be a valid name containing alphanumeric characters, or any of the following: -/_+=.@! (Service: SecretsManager, Status Code: 400, Request ID: R3)",
		},
		{
			name: "json: SQS's query-compatible code", service: "sqs", action: "sendMessage",
			resp: response{status: 400, header: header("X-Amzn-Requestid", "R4", "X-Amzn-Query-Error", "AWS.SimpleQueueService.NonExistentQueue;Sender"), body: []byte(
				`{"__type":"com.amazonaws.sqs#QueueDoesNotExist","message":"The specified queue does not exist."}`)},
			error: "Sqs.QueueDoesNotExistException",
			cause: "The specified queue does not exist. (Service: Sqs, Status Code: 400, Request ID: R4)",
		},
		{
			name: "json: Step Functions", service: "sfn", action: "sendTaskSuccess",
			resp: response{status: 400, header: header("X-Amzn-Requestid", "R5"), body: []byte(
				`{"__type":"com.amazonaws.swf.service.v2.model#InvalidToken","message":"Invalid Token: 'Invalid token'"}`)},
			error: "Sfn.InvalidTokenException",
			cause: "Invalid Token: 'Invalid token' (Service: Sfn, Status Code: 400, Request ID: R5)",
		},
		{
			name: "query: SNS", service: "sns", action: "publish",
			resp: response{status: 404, header: http.Header{}, body: []byte(
				`<ErrorResponse xmlns="http://sns.amazonaws.com/doc/2010-03-31/"><Error><Type>Sender</Type><Code>NotFound</Code><Message>Topic does not exist</Message></Error><RequestId>R6</RequestId></ErrorResponse>`)},
			error: "Sns.NotFoundException",
			cause: "Topic does not exist (Service: Sns, Status Code: 404, Request ID: R6)",
		},
		{
			name: "rest-xml: S3 with its extended request id", service: "s3", action: "getObject",
			resp: response{status: 404, header: header("X-Amz-Request-Id", "R7", "X-Amz-Id-2", "H7"), body: []byte(
				`<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message><Key>k</Key><RequestId>R7</RequestId><HostId>H7</HostId></Error>`)},
			error: "S3.NoSuchKeyException",
			cause: "The specified key does not exist. (Service: S3, Status Code: 404, Request ID: R7, Extended Request ID: H7)",
		},
		{
			name: "rest-xml: S3 HEAD without a body", service: "s3", action: "headObject",
			resp:  response{status: 404, header: header("X-Amz-Request-Id", "R8", "X-Amz-Id-2", "H8")},
			error: "S3.NoSuchKeyException",
			cause: "null (Service: S3, Status Code: 404, Request ID: R8, Extended Request ID: H8)",
		},
		{
			name: "rest-json: Lambda, the code in X-Amzn-ErrorType", service: "lambda", action: "getFunction",
			resp: response{status: 404, header: header("X-Amzn-Requestid", "R9", "X-Amzn-Errortype", "ResourceNotFoundException:http://internal.amazon.com/coral/com.amazonaws.awsgirs/"), body: []byte(
				`{"Type":"User","Message":"Function not found: arn:aws:lambda:us-east-1:1:function:f"}`)},
			error: "Lambda.ResourceNotFoundException",
			cause: "Function not found: arn:aws:lambda:us-east-1:1:function:f (Service: Lambda, Status Code: 404, Request ID: R9)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			_, err := b.answer(t, tt.service, tt.action, &tt.resp)
			require.Equal(t, failure.New(tt.error, tt.cause), err)
		})
	}
}
