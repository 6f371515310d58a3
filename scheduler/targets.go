package scheduler

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"time"
)

// The kinds of target a schedule may have. A state machine (its ARN, or
// UniversalStartExecution) is started through the Starter; the others
// are delivered through Targets.
const (
	TargetStateMachine = "statemachine"
	TargetFunction     = "function"
	TargetQueue        = "queue"
	TargetTopic        = "topic"
	TargetBus          = "bus"
	TargetUniversal    = "universal"
)

// UniversalPrefix starts the ARN of a universal target,
// arn:aws:scheduler:::aws-sdk:SERVICE:ACTION.
const UniversalPrefix = "arn:aws:scheduler:::aws-sdk:"

// UniversalServices are the services whose universal targets Stepwise
// calls: sfn through its own API, the others at the AWS endpoint.
var UniversalServices = []string{"lambda", "sfn", "sns", "sqs"}

var (
	functionArn = regexp.MustCompile(`^arn:aws(-[a-z]+)?:lambda:[a-z0-9-]+:\d{12}:function:[a-zA-Z0-9-_]+(:[a-zA-Z0-9-_$]+)?$`)
	queueArn    = regexp.MustCompile(`^arn:aws(-[a-z]+)?:sqs:[a-z0-9-]+:\d{12}:[a-zA-Z0-9-_.]+$`)
	topicArn    = regexp.MustCompile(`^arn:aws(-[a-z]+)?:sns:[a-z0-9-]+:\d{12}:[a-zA-Z0-9-_.]+$`)
	busArn      = regexp.MustCompile(`^arn:aws(-[a-z]+)?:events:[a-z0-9-]+:\d{12}:event-bus/[a-zA-Z0-9-_./]+$`)
	universal   = regexp.MustCompile(`^arn:aws:scheduler:::aws-sdk:([a-z0-9-]+):([a-zA-Z0-9]+)$`)
)

// TargetKind is what a target ARN is: a kind of the Target* constants,
// with a universal target's service and action, or "" for a target
// Stepwise does not reach (why says so).
func TargetKind(arn string) (kind, service, action, why string) {
	switch {
	case arn == UniversalStartExecution || stateMachinePrefix.MatchString(arn):
		return TargetStateMachine, "", "", ""
	case functionArn.MatchString(arn):
		return TargetFunction, "", "", ""
	case queueArn.MatchString(arn):
		return TargetQueue, "", "", ""
	case topicArn.MatchString(arn):
		return TargetTopic, "", "", ""
	case busArn.MatchString(arn):
		return TargetBus, "", "", ""
	}
	if m := universal.FindStringSubmatch(arn); m != nil {
		for _, s := range UniversalServices {
			if m[1] == s {
				return TargetUniversal, m[1], m[2], ""
			}
		}
		return "", m[1], m[2], "the target " + arn + " is not reached here: Stepwise calls the universal targets of " +
			strings.Join(UniversalServices, ", ") + " only; the schedule's slots are skipped"
	}
	return "", "", "", "the target " + arn + " is not reached here: Stepwise starts state machines and invokes " +
		"Lambda functions, SQS queues, SNS topics, event buses and universal targets of " +
		strings.Join(UniversalServices, ", ") + "; the schedule's slots are skipped"
}

// Delivery is what a slot sends to a target that is not a state
// machine.
type Delivery struct {
	// Kind is TargetFunction, TargetQueue, TargetTopic, TargetBus or
	// TargetUniversal.
	Kind string
	// TargetArn is the target's ARN (a universal target's own).
	TargetArn string
	// Service and Action are a universal target's (sqs, sendMessage).
	Service, Action string
	// Input is the target's Input, its context attributes and Stepwise's
	// placeholders substituted ("{}" when it has none): a function's
	// payload, a message's body, an event's detail, a universal
	// target's request.
	Input string
	// MessageGroupId is the SqsParameters' (a FIFO queue's).
	MessageGroupId string
	// DetailType and Source are the EventBridgeParameters' (an event
	// bus's).
	DetailType, Source string
	// ScheduleArn and Slot say what fired (Slot: when it fired).
	ScheduleArn string
	Slot        time.Time
	// Attempt is the slot's attempt: 1, 2, ...
	Attempt int
}

// Targets delivers the slots of schedules whose target is not a state
// machine: the server invokes its local functions, sends to queues and
// topics at the AWS endpoint, puts events on its bus and calls the
// universal targets it reaches. A delivery that fails is retried as the
// target's RetryPolicy says, and ends in its DeadLetterConfig; one the
// server cannot make at all (an event bus it has none of) answers a
// *NotReachedError, and the slot is skipped with a warning.
type Targets interface {
	Deliver(ctx context.Context, d *Delivery) error
}

// TargetsFunc is a function as Targets.
type TargetsFunc func(ctx context.Context, d *Delivery) error

// Deliver calls f.
func (f TargetsFunc) Deliver(ctx context.Context, d *Delivery) error { return f(ctx, d) }

// NotReachedError is a target the server does not reach.
type NotReachedError struct{ Reason string }

func (e *NotReachedError) Error() string { return e.Reason }

// DeliveryError is a delivery's failure with the code a dead-letter
// event carries (ERROR_CODE), such as a function's error type or the
// service's exception.
type DeliveryError struct {
	Code, Message string
}

func (e *DeliveryError) Error() string { return e.Code + ": " + e.Message }

// checkDelivered checks the target of a schedule written: a templated
// target's Input placeholders, its parameters, a universal target's
// request.
func (t *Target) checkDelivered(kind string) error {
	if t.Input != nil {
		if err := CheckTemplate(*t.Input); err != nil {
			return validationError("The Input of the target %s: %v.", t.Arn, err)
		}
		if kind == TargetUniversal {
			var req map[string]any
			if err := json.Unmarshal([]byte(*t.Input), &req); err != nil {
				return validationError("The Input of the target %s must be a JSON object (the %s request): %v", t.Arn, t.Arn[len(UniversalPrefix):], err)
			}
		}
	}
	if len(t.SqsParameters) > 0 {
		var p struct{ MessageGroupId *string }
		if err := json.Unmarshal(t.SqsParameters, &p); err != nil {
			return validationError("SqsParameters must be an object: %v", err)
		}
		if kind != TargetQueue {
			return validationError("SqsParameters are for an SQS queue target, not %s.", t.Arn)
		}
	}
	if len(t.EventBridgeParameters) > 0 {
		var p struct{ DetailType, Source string }
		if err := json.Unmarshal(t.EventBridgeParameters, &p); err != nil {
			return validationError("EventBridgeParameters must be an object: %v", err)
		}
		if kind != TargetBus {
			return validationError("EventBridgeParameters are for an event bus target, not %s.", t.Arn)
		}
		if p.DetailType == "" || p.Source == "" {
			return validationError("EventBridgeParameters need DetailType and Source.")
		}
	}
	return nil
}

// delivery is the Delivery of a slot's attempt.
func delivery(sch *Schedule, f firing, attempt int) *Delivery {
	t := sch.Target
	kind, service, action, _ := TargetKind(t.Arn)
	d := &Delivery{Kind: kind, TargetArn: t.Arn, Service: service, Action: action, Input: "{}",
		ScheduleArn: sch.Arn, Slot: f.at, Attempt: attempt}
	if t.Input != nil {
		d.Input = contextAttributes(*t.Input, sch, f.at, attempt, f.cal)
	}
	if len(t.SqsParameters) > 0 {
		var p struct{ MessageGroupId string }
		_ = json.Unmarshal(t.SqsParameters, &p)
		d.MessageGroupId = p.MessageGroupId
	}
	if len(t.EventBridgeParameters) > 0 {
		var p struct{ DetailType, Source string }
		_ = json.Unmarshal(t.EventBridgeParameters, &p)
		d.DetailType, d.Source = p.DetailType, p.Source
	}
	return d
}

// deliver delivers a slot's attempt to a target that is not a state
// machine. A target not reached here is a *NotReachedError (the slot is
// skipped); another failure is retried, its code the DeliveryError's or
// TargetInvocationFailed (errorCode).
func (s *Service) deliver(ctx context.Context, cfg FireConfig, sch *Schedule, f firing, attempt int) error {
	kind, _, _, why := TargetKind(sch.Target.Arn)
	if kind == "" {
		return &NotReachedError{Reason: why}
	}
	if cfg.Targets == nil {
		return &NotReachedError{Reason: "the target " + sch.Target.Arn + " is not reached here: this server delivers to state machines only"}
	}
	d := delivery(sch, f, attempt)
	err := cfg.Targets.Deliver(ctx, d)
	if err == nil {
		s.cfg.Logger.Info("scheduler: fired", "schedule_arn", sch.Arn, "slot", f.at, "target_arn", sch.Target.Arn)
	}
	return err
}

// errorCode is the code and message of a delivery's failure.
func errorCode(err error) (code, message string) {
	var de *DeliveryError
	if errors.As(err, &de) {
		return de.Code, de.Message
	}
	return "TargetInvocationFailed", err.Error()
}

// TargetKindOf is the kind of a schedule's target (TargetKind).
func TargetKindOf(sch *Schedule) string {
	if sch.Target == nil {
		return ""
	}
	kind, _, _, _ := TargetKind(sch.Target.Arn)
	return kind
}
