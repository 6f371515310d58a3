package wiring

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// FunctionError is a function's failure: the error payload it answered
// with ({"errorType": ..., "errorMessage": ...}).
type FunctionError struct {
	Function string
	Payload  []byte
}

func (e *FunctionError) Error() string {
	var p struct{ ErrorType, ErrorMessage string }
	if json.Unmarshal(e.Payload, &p) == nil && (p.ErrorType != "" || p.ErrorMessage != "") {
		return fmt.Sprintf("function %s failed: %s: %s", e.Function, p.ErrorType, p.ErrorMessage)
	}
	return fmt.Sprintf("function %s failed: %s", e.Function, e.Payload)
}

// Deliver sends one event to a target as AWS's event sources do: a
// function is invoked with it (its failure is a *FunctionError), a state
// machine starts an execution with it as the input, a queue gets it as a
// message, a topic as a notification, a bus (the local one) as an event
// already in EventBridge's envelope. It returns the function's result
// or the started execution's StartExecution output.
func (e *Env) Deliver(ctx context.Context, t Target, event []byte) ([]byte, error) {
	switch t.Type {
	case ToFunction:
		if e.Invoke == nil {
			return nil, errors.New("local functions are not served")
		}
		name := t.Name
		if name == "" {
			name = t.ARN
		}
		out, failed, err := e.Invoke(ctx, name, event)
		if err != nil {
			return nil, err
		}
		if failed {
			return out, &FunctionError{Function: name, Payload: out}
		}
		return out, nil
	case ToStateMachine:
		if e.Call == nil {
			return nil, errors.New("executions are not started here")
		}
		in, err := json.Marshal(map[string]string{"stateMachineArn": t.ARN, "input": string(event)})
		if err != nil {
			return nil, err
		}
		return e.Call(ctx, "StartExecution", in)
	case ToQueue:
		cfg, err := e.ServiceConfig(ctx, "sqs")
		if err != nil {
			return nil, err
		}
		url := t.URL
		if url == "" {
			if url, err = QueueURL(ctx, cfg, t.ARN); err != nil {
				return nil, err
			}
		}
		_, err = sqs.NewFromConfig(cfg).SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String(string(event))})
		return nil, err
	case ToTopic:
		cfg, err := e.ServiceConfig(ctx, "sns")
		if err != nil {
			return nil, err
		}
		_, err = sns.NewFromConfig(cfg).Publish(ctx, &sns.PublishInput{TopicArn: aws.String(t.ARN), Message: aws.String(string(event))})
		return nil, err
	case ToBus:
		if e.PutEvent == nil {
			return nil, errors.New("there is no local event bus here")
		}
		return nil, e.PutEvent(ctx, t.Name, event)
	}
	return nil, fmt.Errorf("targets of type %q are not delivered to here", t.Type)
}

// ServiceConfig is AWS(ctx, service), or an error saying no endpoint is
// given for it.
func (e *Env) ServiceConfig(ctx context.Context, service string) (aws.Config, error) {
	if e.AWS == nil {
		return aws.Config{}, fmt.Errorf("no endpoint is given for %s (serve --aws-endpoint or --endpoint %s=URL)", service, service)
	}
	return e.AWS(ctx, service)
}

// QueueURL finds a queue's URL from its ARN
// (arn:aws:sqs:REGION:ACCOUNT:NAME).
func QueueURL(ctx context.Context, cfg aws.Config, arn string) (string, error) {
	name, account := "", ""
	if parts := splitARN(arn); len(parts) == 6 {
		account, name = parts[4], parts[5]
	}
	if name == "" {
		return "", fmt.Errorf("%q is not a queue's ARN", arn)
	}
	in := &sqs.GetQueueUrlInput{QueueName: aws.String(name)}
	if account != "" {
		in.QueueOwnerAWSAccountId = aws.String(account)
	}
	out, err := sqs.NewFromConfig(cfg).GetQueueUrl(ctx, in)
	if err != nil {
		return "", fmt.Errorf("queue %s: %w", arn, err)
	}
	return aws.ToString(out.QueueUrl), nil
}

func splitARN(arn string) []string {
	var parts []string
	start := 0
	for i := 0; i < len(arn) && len(parts) < 5; i++ {
		if arn[i] == ':' {
			parts = append(parts, arn[start:i])
			start = i + 1
		}
	}
	return append(parts, arn[start:])
}
