// Package awssdk is the AWS SDK service integration:
// arn:aws:states:::aws-sdk:<service>:<action>, request-response and
// .waitForTaskToken, for any AWS service, driven by the service's API
// model instead of code written for it.
//
// # Models
//
// The models are botocore's (the AWS SDK for Python's) service-2.json
// files: operations, shapes, protocol and endpoint metadata, parsed by
// package awsmodel. Those of the services workflows call most ship in the
// binary (awsmodel's embedded set, which TestState's shape checks read
// too; botocore is Apache-2.0, see awsmodel/models/NOTICE). A directory
// named by STEPWISE_AWS_MODELS holding <service>.json[.gz] files in the
// same format adds services or replaces the shipped models.
//
// The service of a resource is the one Step Functions names (the AWS SDK
// for Java v2 service id in lower case); where botocore names it
// otherwise the model is found by its botocore name (eventbridge →
// events, sfn → stepfunctions). The action is the operation with a
// lower-case first letter (getItem → GetItem).
//
// # A call
//
//	Parameters ──convert──► request value ──marshal──► HTTP request ──SigV4──► service
//	  (PascalCase members,    (checked against      (json, rest-json,
//	   JSON values)            the input shape)      rest-xml, query, ec2)
//
//	service ──► 2xx ──unmarshal──► result (PascalCase members, ISO 8601 dates)
//	        └─► error ──────────► task failure <Prefix>.<Exception>
//
// Parameters name members in PascalCase (the model's name with its first
// letter capitalised). A member the model does not have, or a value of
// the wrong type, fails the task before any call; a missing required
// member is left to the service, which answers for it as it does on AWS.
// A string member given another JSON value gets its JSON text; a blob is
// base64 text, except a body such as S3 PutObject's Body or Lambda
// Invoke's Payload, which is the JSON text of the value, as AWS sends it.
// Idempotency tokens the Parameters leave out are generated, and
// operations with a checksum get one (CRC32 unless the Parameters choose).
//
// Requests are signed with SigV4 (aws-sdk-go-v2's signer) with the
// credentials and endpoint integration.Config gives for the service name:
// a configured endpoint (a local emulator) gets every request, S3's
// path-style; otherwise AWS's own, https://<endpointPrefix>.<region>.amazonaws.com.
// Throttling and 5xx answers are tried again, up to three attempts.
//
// # Results and errors
//
// The result is the response's members in PascalCase, sorted by name, map
// keys as they are, timestamps as ISO 8601 text in UTC, blobs in base64,
// and a body member (S3 GetObject's Body) as the body's text, last.
// OpenPayload makes such a call but hands the body over unread, as it
// arrives (a Map state's ItemReader streams a large object so).
//
// A service error fails the task as the AWS SDK for Java v2 names it:
// <Prefix>.<Exception>, where the prefix is the Java client's name for
// the service (DynamoDb, S3, SecretsManager, Sfn) and the exception the
// modeled error with an Exception suffix (S3.NoSuchKeyException); a code
// the model does not know is <Prefix>.<Prefix>Exception. The cause is
// "<message> (Service: <Prefix>, Status Code: <n>, Request ID: <id>)".
// A call that got no answer fails with <Prefix>.SdkClientException.
package awssdk
