// Package sqs is the optimized Amazon SQS integration:
// arn:aws:states:::sqs:sendMessage, request-response and
// .waitForTaskToken, at the endpoint configured for "sqs".
package sqs

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go/middleware"

	"stepwise/failure"
	"stepwise/integration"
	"stepwise/jsonvalue"
)

// Resource is the resource ARN of SendMessage.
const Resource = integration.ResourcePrefix + "sqs:sendMessage"

func init() {
	integration.Register(integration.Module{
		Resource: Resource,
		Patterns: []integration.Pattern{integration.WaitForTaskToken},
		New:      newSendMessage,
	})
}

func newSendMessage(cfg *integration.Config) (integration.Integration, error) {
	awsCfg, endpoint, err := cfg.AWSConfig(context.Background(), "sqs")
	if err != nil {
		return nil, err
	}
	client := sqs.NewFromConfig(awsCfg, func(o *sqs.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	})
	return integration.Func(func(ctx context.Context, r *integration.Request) (any, error) {
		return sendMessage(ctx, client, r.Parameters)
	}), nil
}

// sendMessage sends a message and answers as AWS does: MD5OfMessageBody,
// MessageId, ... with the SDK's HTTP metadata. A MessageBody that is not
// a string is sent as JSON text.
func sendMessage(ctx context.Context, client *sqs.Client, params any) (any, error) {
	queue, err := integration.RequireString(params, "QueueUrl")
	if err != nil {
		return nil, err
	}
	// A missing or null MessageBody is sent as it is: SQS refuses it
	// (MissingParameter), and that is the task's catchable failure, as on
	// AWS, whose SDK does not check the request first.
	in := &sqs.SendMessageInput{QueueUrl: aws.String(queue)}
	var opts []func(*sqs.Options)
	if body, ok := integration.StringParam(params, "MessageBody"); ok {
		in.MessageBody = aws.String(body)
	} else {
		opts = append(opts, func(o *sqs.Options) { o.APIOptions = append(o.APIOptions, skipInputValidation) })
	}
	obj, _ := params.(*jsonvalue.Object)
	if v, ok := obj.Get("DelaySeconds"); ok {
		n, isNumber := v.(jsonvalue.Number)
		i, isInt := n.Int64()
		if !isNumber || !isInt {
			return nil, failure.Newf(failure.TaskFailed, "The field 'DelaySeconds' must be an integer")
		}
		in.DelaySeconds = int32(i)
	}
	if s, ok := integration.StringParam(params, "MessageDeduplicationId"); ok {
		in.MessageDeduplicationId = aws.String(s)
	}
	if s, ok := integration.StringParam(params, "MessageGroupId"); ok {
		in.MessageGroupId = aws.String(s)
	}
	if in.MessageAttributes, err = integration.MessageAttributes(obj, messageAttribute); err != nil {
		return nil, err
	}
	res, err := client.SendMessage(ctx, in, opts...)
	if err != nil {
		return nil, integration.ServiceFailure("SQS", "AmazonSQS", err)
	}
	out := jsonvalue.NewObject(8)
	if res.MD5OfMessageAttributes != nil {
		out.Set("MD5OfMessageAttributes", *res.MD5OfMessageAttributes)
	}
	out.Set("MD5OfMessageBody", aws.ToString(res.MD5OfMessageBody))
	if res.MD5OfMessageSystemAttributes != nil {
		out.Set("MD5OfMessageSystemAttributes", *res.MD5OfMessageSystemAttributes)
	}
	return integration.MessageSent(out, res.MessageId, res.SequenceNumber, res.ResultMetadata), nil
}

// skipInputValidation removes the SDK's check of required members, so the
// service answers for itself.
func skipInputValidation(stack *middleware.Stack) error {
	_, err := stack.Initialize.Remove("OperationInputValidation")
	return err
}

// messageAttribute is one message attribute, for integration.MessageAttributes.
func messageAttribute(dataType, stringValue *string, binaryValue []byte) types.MessageAttributeValue {
	return types.MessageAttributeValue{DataType: dataType, StringValue: stringValue, BinaryValue: binaryValue}
}
