package integration

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"os"
	"reflect"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"stepwise/failure"
	"stepwise/jsonvalue"
)

// Credentials used for calls to a configured endpoint when the
// environment names none: local emulators accept any.
const (
	LocalAccessKeyID     = "stepwise"
	LocalSecretAccessKey = "stepwise"
)

// AWSConfig returns the AWS SDK configuration for calls to a service and
// the endpoint URL to use ("" for AWS's own). Credentials come from the
// usual chain (environment, shared files, instance roles); for a
// configured endpoint with no AWS_ACCESS_KEY_ID or AWS_PROFILE in the
// environment, fixed local credentials are used instead.
func (c *Config) AWSConfig(ctx context.Context, service string) (aws.Config, string, error) {
	endpoint := c.EndpointFor(service)
	opts := []func(*awsconfig.LoadOptions) error{awsconfig.WithRegion(c.Region)}
	if endpoint != "" && os.Getenv("AWS_ACCESS_KEY_ID") == "" && os.Getenv("AWS_PROFILE") == "" {
		opts = append(opts, awsconfig.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(LocalAccessKeyID, LocalSecretAccessKey, "")))
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return aws.Config{}, "", fmt.Errorf("aws config for %s: %w", service, err)
	}
	return cfg, endpoint, nil
}

// SdkMetadata adds the SdkHttpMetadata and SdkResponseMetadata members
// AWS puts in the results of optimized integrations, from the raw
// response the SDK kept in an output's metadata.
func SdkMetadata(out *jsonvalue.Object, md middleware.Metadata) {
	raw, _ := awsmiddleware.GetRawResponse(md).(*smithyhttp.Response)
	requestID, _ := awsmiddleware.GetRequestIDMetadata(md)
	status := 200
	var header http.Header
	if raw != nil {
		status, header = raw.StatusCode, raw.Header
	}
	SdkHTTPMetadata(out, status, header, requestID)
}

// SdkHTTPMetadata adds the SdkHttpMetadata and SdkResponseMetadata
// members of an answer's status, headers and request ID.
func SdkHTTPMetadata(out *jsonvalue.Object, status int, header http.Header, requestID string) {
	all := jsonvalue.NewObject(8)
	single := jsonvalue.NewObject(8)
	names := make([]string, 0, len(header))
	for name := range header {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool { return strings.ToLower(names[i]) < strings.ToLower(names[j]) })
	for _, name := range names {
		vals := header.Values(name)
		list := make([]any, len(vals))
		for i, v := range vals {
			list[i] = v
		}
		all.Set(name, list)
		if len(vals) > 0 {
			single.Set(name, vals[0])
		}
	}
	http := jsonvalue.NewObject(3)
	http.Set("AllHttpHeaders", all)
	http.Set("HttpHeaders", single)
	http.Set("HttpStatusCode", jsonvalue.NumberFromInt(int64(status)))
	out.Set("SdkHttpMetadata", http)
	resp := jsonvalue.NewObject(1)
	resp.Set("RequestId", requestID)
	out.Set("SdkResponseMetadata", resp)
}

// ServiceFailure is the task failure of an error an AWS SDK call
// returned, named and worded as AWS's optimized integrations do (their
// SDK is the AWS SDK for Java v1):
//
//	error: <prefix>.<Exception>     SQS.QueueDoesNotExistException
//	cause: <message> (Service: <service>; Status Code: 400; Error Code: <code>; Request ID: <id>; Proxy: null)
//
// The exception is the SDK's modeled error type when there is one, else
// the error code with an Exception suffix. Errors that never reached the
// service are <prefix>.SdkClientException.
func ServiceFailure(prefix, service string, err error) *failure.Failure {
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) {
		return failure.New(prefix+".SdkClientException", err.Error())
	}
	code := apiErr.ErrorCode()
	// A modeled error is named after its exception; any other code is the
	// service's base exception (AmazonSQSException), as the AWS SDK for
	// Java that Step Functions calls services with names it.
	name := service
	if modeled := modeledName(err); modeled != "" {
		name = modeled
	}
	if m, ok := err.(interface{ ModeledException() string }); ok && m.ModeledException() != "" {
		name = m.ModeledException()
	}
	status := 400
	var respErr interface{ HTTPStatusCode() int }
	if errors.As(err, &respErr) {
		status = respErr.HTTPStatusCode()
	}
	requestID := ""
	var reqErr interface{ ServiceRequestID() string }
	if errors.As(err, &reqErr) {
		requestID = reqErr.ServiceRequestID()
	}
	return failure.New(prefix+"."+ExceptionName(name), fmt.Sprintf(
		"%s (Service: %s; Status Code: %d; Error Code: %s; Request ID: %s; Proxy: null)",
		apiErr.ErrorMessage(), service, status, code, requestID))
}

// modeledName returns the Go type name of the modeled service error
// (types.QueueDoesNotExist → "QueueDoesNotExist"), or "".
func modeledName(err error) string {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if _, ok := e.(smithy.APIError); !ok {
			continue
		}
		t := reflect.TypeOf(e)
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if strings.HasSuffix(t.PkgPath(), "/types") {
			return t.Name()
		}
		return ""
	}
	return ""
}

// StringParam returns a Parameters member as the string an AWS string
// field takes: a string as it is, any other JSON value serialized, as the
// optimized integrations do for message bodies.
func StringParam(params any, name string) (string, bool) {
	obj, _ := params.(*jsonvalue.Object)
	v, ok := obj.Get(name)
	if !ok || v == nil {
		return "", false
	}
	if s, isString := v.(string); isString {
		return s, true
	}
	return jsonvalue.String(v), true
}

// RequireString returns a required string member, or the failure AWS
// gives for a missing one.
func RequireString(params any, name string) (string, error) {
	s, ok := StringParam(params, name)
	if !ok {
		return "", failure.Newf(failure.TaskFailed,
			"The field '%s' is required but was missing", name)
	}
	return s, nil
}

// MessageSent completes the answer of a message sent (SQS's SendMessage,
// SNS's Publish) as AWS writes it: the message's id, the SDK's metadata,
// and for a FIFO queue or topic its sequence number.
func MessageSent(out *jsonvalue.Object, id, sequence *string, md middleware.Metadata) *jsonvalue.Object {
	out.Set("MessageId", aws.ToString(id))
	SdkMetadata(out, md)
	if sequence != nil {
		out.Set("SequenceNumber", *sequence)
	}
	return out
}

// MessageAttributes converts the MessageAttributes of a task's
// parameters, {"name": {"DataType": ..., "StringValue": ..., "BinaryValue":
// base64}}, into the message attributes of SQS or SNS, whose SDK types
// differ only by package: attr makes one. Without any, it is nil.
func MessageAttributes[T any](params *jsonvalue.Object, attr func(dataType, stringValue *string, binaryValue []byte) T) (map[string]T, error) {
	v, ok := params.Get("MessageAttributes")
	if !ok {
		return nil, nil
	}
	obj, ok := v.(*jsonvalue.Object)
	if !ok {
		return nil, failure.Newf(failure.TaskFailed, "The field 'MessageAttributes' must be an object")
	}
	attrs := make(map[string]T, obj.Len())
	for name, a := range obj.All() {
		var dataType, stringValue *string
		var binary []byte
		if s, ok := StringParam(a, "DataType"); ok {
			dataType = &s
		}
		if s, ok := StringParam(a, "StringValue"); ok {
			stringValue = &s
		}
		if s, ok := StringParam(a, "BinaryValue"); ok {
			b, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				return nil, failure.Newf(failure.TaskFailed, "The field 'MessageAttributes.%s.BinaryValue' is not base64: %v", name, err)
			}
			binary = b
		}
		attrs[name] = attr(dataType, stringValue, binary)
	}
	return attrs, nil
}
