// Package sns is the optimized Amazon SNS integration:
// arn:aws:states:::sns:publish, request-response and .waitForTaskToken,
// at the endpoint configured for "sns".
package sns

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sns/types"

	"stepwise/integration"
	"stepwise/jsonvalue"
)

// Resource is the resource ARN of Publish.
const Resource = integration.ResourcePrefix + "sns:publish"

func init() {
	integration.Register(integration.Module{
		Resource: Resource,
		Patterns: []integration.Pattern{integration.WaitForTaskToken},
		New:      newPublish,
	})
}

func newPublish(cfg *integration.Config) (integration.Integration, error) {
	awsCfg, endpoint, err := cfg.AWSConfig(context.Background(), "sns")
	if err != nil {
		return nil, err
	}
	client := sns.NewFromConfig(awsCfg, func(o *sns.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	})
	return integration.Func(func(ctx context.Context, r *integration.Request) (any, error) {
		return publish(ctx, client, r.Parameters)
	}), nil
}

// publish publishes a message and answers as AWS does: MessageId (and
// SequenceNumber for FIFO topics) with the SDK's HTTP metadata. A Message
// that is not a string is published as JSON text.
func publish(ctx context.Context, client *sns.Client, params any) (any, error) {
	msg, err := integration.RequireString(params, "Message")
	if err != nil {
		return nil, err
	}
	in := &sns.PublishInput{Message: aws.String(msg)}
	for name, dst := range map[string]**string{
		"TopicArn": &in.TopicArn, "TargetArn": &in.TargetArn, "PhoneNumber": &in.PhoneNumber,
		"Subject": &in.Subject, "MessageStructure": &in.MessageStructure,
		"MessageDeduplicationId": &in.MessageDeduplicationId, "MessageGroupId": &in.MessageGroupId,
	} {
		if s, ok := integration.StringParam(params, name); ok {
			*dst = aws.String(s)
		}
	}
	obj, _ := params.(*jsonvalue.Object)
	if in.MessageAttributes, err = integration.MessageAttributes(obj, messageAttribute); err != nil {
		return nil, err
	}
	res, err := client.Publish(ctx, in)
	if err != nil {
		return nil, integration.ServiceFailure("SNS", "AmazonSNS", err)
	}
	out := jsonvalue.NewObject(4)
	return integration.MessageSent(out, res.MessageId, res.SequenceNumber, res.ResultMetadata), nil
}

// messageAttribute is one message attribute, for integration.MessageAttributes.
func messageAttribute(dataType, stringValue *string, binaryValue []byte) types.MessageAttributeValue {
	return types.MessageAttributeValue{DataType: dataType, StringValue: stringValue, BinaryValue: binaryValue}
}
