package server

import (
	"context"
	"errors"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	lambdasdk "github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"stepwise/failure"
	"stepwise/integration"
	"stepwise/jsonvalue"
	"stepwise/scheduler"
	"stepwise/wiring"
)

// BusEvent is an event a schedule puts on an event bus
// (EventBridgeParameters): PutEvents' entry.
type BusEvent struct {
	// Bus is the bus's ARN.
	Bus string
	// DetailType, Source and Detail (JSON text) are the entry's.
	DetailType, Source, Detail string
	// Resources are the schedule's ARN, as EventBridge Scheduler puts
	// it.
	Resources []string
}

// SetBusDelivery makes put the way schedules targeting an event bus
// reach it: the server's own bus. Without one, their slots are skipped
// with a warning. Set it before Start.
func (s *Server) SetBusDelivery(put func(ctx context.Context, e *BusEvent) error) {
	s.busMu.Lock()
	defer s.busMu.Unlock()
	s.bus = put
}

func (s *Server) busDelivery() func(ctx context.Context, e *BusEvent) error {
	s.busMu.Lock()
	defer s.busMu.Unlock()
	return s.bus
}

// scheduleTargets delivers the slots of schedules that target something
// other than a state machine: a local function (invoked asynchronously,
// as EventBridge Scheduler invokes one), a queue or a topic at the AWS
// endpoint, the server's event bus, a universal target of sfn (the API
// in process) or of sqs, sns and lambda (at the endpoint, as an aws-sdk
// Task calls them).
func (s *Server) scheduleTargets(env *wiring.Env) scheduler.Targets {
	return scheduler.TargetsFunc(func(ctx context.Context, d *scheduler.Delivery) error {
		return deliveryError(s.deliverSlot(ctx, env, d))
	})
}

func (s *Server) deliverSlot(ctx context.Context, env *wiring.Env, d *scheduler.Delivery) error {
	switch d.Kind {
	case scheduler.TargetFunction:
		fn := s.local.Lookup(d.TargetArn)
		if fn == nil {
			return &scheduler.DeliveryError{Code: "ResourceNotFoundException", Message: "Function not found: " + d.TargetArn}
		}
		in := &lambdasdk.InvokeInput{FunctionName: aws.String(d.TargetArn), Payload: []byte(d.Input), InvocationType: lambdatypes.InvocationTypeEvent}
		_, err := fn.Invoke(ctx, in)
		return err
	case scheduler.TargetQueue:
		cfg, err := env.ServiceConfig(ctx, "sqs")
		if err != nil {
			return &scheduler.NotReachedError{Reason: "the queue " + d.TargetArn + " is not reached: " + err.Error()}
		}
		url, err := wiring.QueueURL(ctx, cfg, d.TargetArn)
		if err != nil {
			return err
		}
		in := &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String(d.Input)}
		if d.MessageGroupId != "" {
			// A FIFO queue: the slot's execution id makes its message once.
			in.MessageGroupId = aws.String(d.MessageGroupId)
			in.MessageDeduplicationId = aws.String(scheduler.ExecutionID(d.ScheduleArn, d.Slot))
		}
		_, err = sqs.NewFromConfig(cfg).SendMessage(ctx, in)
		return err
	case scheduler.TargetTopic:
		if _, err := env.ServiceConfig(ctx, "sns"); err != nil {
			return &scheduler.NotReachedError{Reason: "the topic " + d.TargetArn + " is not reached: " + err.Error()}
		}
		_, err := env.Deliver(ctx, wiring.Target{Type: wiring.ToTopic, ARN: d.TargetArn}, []byte(d.Input))
		return err
	case scheduler.TargetBus:
		put := s.busDelivery()
		if put == nil {
			return &scheduler.NotReachedError{Reason: "the event bus " + d.TargetArn + " is not reached: this server has no event bus"}
		}
		return put(ctx, &BusEvent{Bus: d.TargetArn, DetailType: d.DetailType, Source: d.Source, Detail: d.Input, Resources: []string{d.ScheduleArn}})
	case scheduler.TargetUniversal:
		return s.callUniversal(ctx, d)
	}
	return &scheduler.NotReachedError{Reason: "targets of kind " + d.Kind + " are not reached here"}
}

// callUniversal calls a universal target's action with its Input as the
// request.
func (s *Server) callUniversal(ctx context.Context, d *scheduler.Delivery) error {
	if d.Service == "sfn" {
		op := strings.ToUpper(d.Action[:1]) + d.Action[1:]
		_, err := s.selfCall(ctx, op, []byte(d.Input))
		return err
	}
	if s.tasks == nil {
		return &scheduler.NotReachedError{Reason: "the target " + d.TargetArn + " is not reached: this server makes no AWS calls"}
	}
	params, err := jsonvalue.ParseString(d.Input)
	if err != nil {
		return &scheduler.DeliveryError{Code: "ValidationException", Message: "the Input is not JSON: " + err.Error()}
	}
	_, err = s.tasks.Invoke(ctx, integration.ResourcePrefix+"aws-sdk:"+d.Service+":"+d.Action, params)
	return err
}

// deliveryError gives a delivery's failure the code its dead-letter
// event carries: the service's exception, the task failure's name.
func deliveryError(err error) error {
	var (
		nr  *scheduler.NotReachedError
		de  *scheduler.DeliveryError
		f   *failure.Failure
		api interface {
			ErrorCode() string
			ErrorMessage() string
		}
	)
	switch {
	case err == nil, errors.As(err, &nr), errors.As(err, &de):
		return err
	case errors.As(err, &api):
		return &scheduler.DeliveryError{Code: api.ErrorCode(), Message: api.ErrorMessage()}
	case errors.As(err, &f):
		return &scheduler.DeliveryError{Code: f.Name, Message: f.Cause}
	}
	return err
}
