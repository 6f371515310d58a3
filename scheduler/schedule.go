package scheduler

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"time"
	"unicode/utf8"

	"stepwise/internal/validation"
	"stepwise/scheduler/expr"
)

// Defaults AWS applies to what CreateSchedule leaves out.
const (
	DefaultGroup                    = "default"
	DefaultMaximumEventAgeInSeconds = 86400
	DefaultMaximumRetryAttempts     = 185
)

// UniversalStartExecution is the universal target that starts a Step
// Functions execution; its Input is StartExecution's request.
const UniversalStartExecution = "arn:aws:scheduler:::aws-sdk:sfn:startExecution"

// Epoch is a timestamp as the Scheduler API writes it: seconds since the
// epoch, a JSON number (fractions allowed). It also reads an RFC 3339
// string.
type Epoch struct{ time.Time }

// MarshalJSON writes the seconds, with millisecond fractions.
func (e Epoch) MarshalJSON() ([]byte, error) {
	return []byte(strconv.FormatFloat(float64(e.UnixMilli())/1000, 'f', -1, 64)), nil
}

// UnmarshalJSON reads seconds or an RFC 3339 string.
func (e *Epoch) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return err
		}
		e.Time = t.UTC()
		return nil
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return err
	}
	e.Time = time.UnixMilli(int64(f*1000 + 0.5)).UTC()
	return nil
}

func epochPtr(t time.Time) *Epoch { return &Epoch{t.UTC().Truncate(time.Millisecond)} }

// FlexibleTimeWindow is a schedule's window.
type FlexibleTimeWindow struct {
	Mode                   string `json:"Mode"`
	MaximumWindowInMinutes *int   `json:"MaximumWindowInMinutes,omitempty"`
}

// RetryPolicy is a target's retry policy.
type RetryPolicy struct {
	MaximumEventAgeInSeconds *int `json:"MaximumEventAgeInSeconds,omitempty"`
	MaximumRetryAttempts     *int `json:"MaximumRetryAttempts,omitempty"`
}

// DeadLetterConfig is a target's dead-letter queue.
type DeadLetterConfig struct {
	Arn *string `json:"Arn,omitempty"`
}

// Target is what a schedule invokes.
type Target struct {
	Arn                         string            `json:"Arn"`
	RoleArn                     string            `json:"RoleArn"`
	Input                       *string           `json:"Input,omitempty"`
	RetryPolicy                 *RetryPolicy      `json:"RetryPolicy,omitempty"`
	DeadLetterConfig            *DeadLetterConfig `json:"DeadLetterConfig,omitempty"`
	EcsParameters               json.RawMessage   `json:"EcsParameters,omitempty"`
	EventBridgeParameters       json.RawMessage   `json:"EventBridgeParameters,omitempty"`
	KinesisParameters           json.RawMessage   `json:"KinesisParameters,omitempty"`
	SageMakerPipelineParameters json.RawMessage   `json:"SageMakerPipelineParameters,omitempty"`
	SqsParameters               json.RawMessage   `json:"SqsParameters,omitempty"`
}

// Schedule is a schedule as GetSchedule returns it, and (without Arn,
// Name and the dates it sets) as CreateSchedule and UpdateSchedule take
// it.
type Schedule struct {
	ActionAfterCompletion      string              `json:"ActionAfterCompletion,omitempty"`
	Arn                        string              `json:"Arn,omitempty"`
	ClientToken                string              `json:"ClientToken,omitempty"`
	CreationDate               *Epoch              `json:"CreationDate,omitempty"`
	Description                *string             `json:"Description,omitempty"`
	EndDate                    *Epoch              `json:"EndDate,omitempty"`
	FlexibleTimeWindow         *FlexibleTimeWindow `json:"FlexibleTimeWindow,omitempty"`
	GroupName                  string              `json:"GroupName,omitempty"`
	KmsKeyArn                  *string             `json:"KmsKeyArn,omitempty"`
	LastModificationDate       *Epoch              `json:"LastModificationDate,omitempty"`
	Name                       string              `json:"Name,omitempty"`
	ScheduleExpression         string              `json:"ScheduleExpression,omitempty"`
	ScheduleExpressionTimezone string              `json:"ScheduleExpressionTimezone,omitempty"`
	StartDate                  *Epoch              `json:"StartDate,omitempty"`
	State                      string              `json:"State,omitempty"`
	Target                     *Target             `json:"Target,omitempty"`
}

// Expr is the schedule's expression with its time zone, anchor (a rate's
// StartDate or else created) and bounds.
func (s *Schedule) Expr(created time.Time) (expr.Expr, error) {
	var start, end *time.Time
	if s.StartDate != nil {
		start = &s.StartDate.Time
	}
	if s.EndDate != nil {
		end = &s.EndDate.Time
	}
	tz := s.ScheduleExpressionTimezone
	return expr.ForSchedule(s.ScheduleExpression, tz, start, end, created)
}

// MaximumEventAge is the target's RetryPolicy.MaximumEventAgeInSeconds.
func (s *Schedule) MaximumEventAge() time.Duration {
	if s.Target != nil && s.Target.RetryPolicy != nil && s.Target.RetryPolicy.MaximumEventAgeInSeconds != nil {
		return time.Duration(*s.Target.RetryPolicy.MaximumEventAgeInSeconds) * time.Second
	}
	return DefaultMaximumEventAgeInSeconds * time.Second
}

// MaximumRetryAttempts is the target's RetryPolicy.MaximumRetryAttempts.
func (s *Schedule) MaximumRetryAttempts() int {
	if s.Target != nil && s.Target.RetryPolicy != nil && s.Target.RetryPolicy.MaximumRetryAttempts != nil {
		return *s.Target.RetryPolicy.MaximumRetryAttempts
	}
	return DefaultMaximumRetryAttempts
}

// checks collects a request's constraint violations (internal/validation
// words them); constraint is what follows "Member must ".
type checks struct{ errs validation.Errors }

func (v *checks) add(value any, at, constraint string) {
	var val string
	switch x := value.(type) {
	case nil:
		val = "null"
	case string:
		val = "'" + x + "'"
	default:
		val = "'" + fmt.Sprint(x) + "'"
	}
	v.errs.Add(val, at, "Member must "+constraint)
}

func (v *checks) err() error {
	if m := v.errs.Message(); m != "" {
		return validationError("%s", m)
	}
	return nil
}

var (
	namePattern        = regexp.MustCompile(`^[0-9a-zA-Z-_.]+$`)
	clientTokenPattern = regexp.MustCompile(`^[a-zA-Z0-9-_]+$`)
	roleArnPattern     = regexp.MustCompile(`^arn:aws(-[a-z]+)?:iam::\d{12}:role/[\w+=,.@/-]+$`)
	stateMachinePrefix = regexp.MustCompile(`^arn:aws(-[a-z]+)?:states:[a-z0-9-]+:\d{12}:stateMachine:[^:]+(:[^:]+)?$`)
)

func (v *checks) name(value, at string) {
	switch {
	case value == "" || utf8.RuneCountInString(value) > 64:
		v.add(value, at, "have length less than or equal to 64 and greater than or equal to 1")
	case !namePattern.MatchString(value):
		v.add(value, at, "satisfy regular expression pattern: [0-9a-zA-Z-_.]+")
	}
}

func (v *checks) clientToken(value string) {
	if value == "" {
		return
	}
	switch {
	case len(value) > 64:
		v.add(value, "clientToken", "have length less than or equal to 64")
	case !clientTokenPattern.MatchString(value):
		v.add(value, "clientToken", "satisfy regular expression pattern: ^[a-zA-Z0-9-_]+$")
	}
}

func (v *checks) length(value *string, at string, minLen, maxLen int) {
	if value == nil {
		return
	}
	n := utf8.RuneCountInString(*value)
	if n < minLen || n > maxLen {
		v.add(*value, at, fmt.Sprintf("have length less than or equal to %d and greater than or equal to %d", maxLen, minLen))
	}
}

func oneOf(value string, allowed ...string) bool {
	for _, a := range allowed {
		if value == a {
			return true
		}
	}
	return false
}

// normalize checks a schedule from CreateSchedule or UpdateSchedule and
// fills in AWS's defaults. now is the time of the request.
func (s *Schedule) normalize(now time.Time) error {
	var v checks
	v.name(s.Name, "name")
	if s.GroupName == "" {
		s.GroupName = DefaultGroup
	}
	v.name(s.GroupName, "groupName")
	v.clientToken(s.ClientToken)
	v.length(s.Description, "description", 0, 512)
	v.length(s.KmsKeyArn, "kmsKeyArn", 1, 2048)
	if s.ScheduleExpression == "" {
		v.add(nil, "scheduleExpression", "not be null")
	} else if len(s.ScheduleExpression) > 256 {
		v.add(s.ScheduleExpression, "scheduleExpression", "have length less than or equal to 256")
	}
	if len(s.ScheduleExpressionTimezone) > 50 {
		v.add(s.ScheduleExpressionTimezone, "scheduleExpressionTimezone", "have length less than or equal to 50")
	}
	if s.State == "" {
		s.State = "ENABLED"
	} else if !oneOf(s.State, "ENABLED", "DISABLED") {
		v.add(s.State, "state", "satisfy enum value set: [ENABLED, DISABLED]")
	}
	if s.ActionAfterCompletion == "" {
		s.ActionAfterCompletion = "NONE"
	} else if !oneOf(s.ActionAfterCompletion, "NONE", "DELETE") {
		v.add(s.ActionAfterCompletion, "actionAfterCompletion", "satisfy enum value set: [NONE, DELETE]")
	}
	if w := s.FlexibleTimeWindow; w == nil {
		v.add(nil, "flexibleTimeWindow", "not be null")
	} else {
		if !oneOf(w.Mode, "OFF", "FLEXIBLE") {
			v.add(w.Mode, "flexibleTimeWindow.mode", "satisfy enum value set: [OFF, FLEXIBLE]")
		}
		if m := w.MaximumWindowInMinutes; m != nil && (*m < 1 || *m > 1440) {
			v.add(*m, "flexibleTimeWindow.maximumWindowInMinutes", "have value less than or equal to 1440 and greater than or equal to 1")
		}
	}
	if t := s.Target; t == nil {
		v.add(nil, "target", "not be null")
	} else {
		if t.Arn == "" {
			v.add(nil, "target.arn", "not be null")
		} else if len(t.Arn) > 1600 {
			v.add(t.Arn, "target.arn", "have length less than or equal to 1600")
		}
		if t.RoleArn == "" {
			v.add(nil, "target.roleArn", "not be null")
		} else if len(t.RoleArn) > 1600 || !roleArnPattern.MatchString(t.RoleArn) {
			v.add(t.RoleArn, "target.roleArn", "satisfy regular expression pattern: ^arn:aws(-[a-z]+)?:iam::\\d{12}:role\\/[\\w+=,.@\\/-]+$")
		}
		v.length(t.Input, "target.input", 1, 8192)
		if t.RetryPolicy == nil {
			t.RetryPolicy = &RetryPolicy{}
		}
		rp := t.RetryPolicy
		if rp.MaximumEventAgeInSeconds == nil {
			n := DefaultMaximumEventAgeInSeconds
			rp.MaximumEventAgeInSeconds = &n
		} else if n := *rp.MaximumEventAgeInSeconds; n < 60 || n > 86400 {
			v.add(n, "target.retryPolicy.maximumEventAgeInSeconds", "have value less than or equal to 86400 and greater than or equal to 60")
		}
		if rp.MaximumRetryAttempts == nil {
			n := DefaultMaximumRetryAttempts
			rp.MaximumRetryAttempts = &n
		} else if n := *rp.MaximumRetryAttempts; n < 0 || n > 185 {
			v.add(n, "target.retryPolicy.maximumRetryAttempts", "have value less than or equal to 185 and greater than or equal to 0")
		}
	}
	if err := v.err(); err != nil {
		return err
	}

	// Beyond the constraints of the shapes.
	if w := s.FlexibleTimeWindow; w.Mode == "FLEXIBLE" && w.MaximumWindowInMinutes == nil {
		return validationError("MaximumWindowInMinutes must be provided when FlexibleTimeWindow Mode is FLEXIBLE.")
	} else if w.Mode == "OFF" && w.MaximumWindowInMinutes != nil {
		return validationError("MaximumWindowInMinutes must not be provided when FlexibleTimeWindow Mode is OFF.")
	}
	if s.StartDate != nil && s.EndDate != nil && !s.EndDate.After(s.StartDate.Time) {
		return validationError("The EndDate must be after the StartDate.")
	}
	if s.ScheduleExpressionTimezone == "" {
		s.ScheduleExpressionTimezone = "UTC"
	}
	if _, err := s.Expr(now); err != nil {
		return validationError("%s", err.Error())
	}
	return s.Target.check()
}

// check checks a target: a state machine's input and name templates, the
// input and parameters of the others (targets.go).
func (t *Target) check() error {
	switch {
	case t.Arn == UniversalStartExecution:
		if t.Input == nil {
			return validationError("The target %s needs an Input: the StartExecution request, with its StateMachineArn.", t.Arn)
		}
		var req struct {
			StateMachineArn string
			Name, Input     any
		}
		if err := json.Unmarshal([]byte(*t.Input), &req); err != nil {
			return validationError("The Input of the target %s must be a JSON object (the StartExecution request): %v", t.Arn, err)
		}
		if !stateMachinePrefix.MatchString(req.StateMachineArn) {
			return validationError("The Input of the target %s must name the state machine: StateMachineArn.", t.Arn)
		}
		for _, f := range []struct {
			what string
			v    any
		}{{"Name", req.Name}, {"Input", req.Input}} {
			if text, ok := f.v.(string); ok {
				if err := CheckTemplate(text); err != nil {
					return validationError("The %s in the Input of the target %s: %v.", f.what, t.Arn, err)
				}
			}
		}
	case stateMachinePrefix.MatchString(t.Arn):
		if t.Input != nil {
			if err := CheckTemplate(*t.Input); err != nil {
				return validationError("The Input of the target %s: %v.", t.Arn, err)
			}
		}
	default:
		// A function, a queue, a topic, a bus, a universal target; one
		// not reached here is accepted as AWS accepts it, and warned of.
		kind, _, _, _ := TargetKind(t.Arn)
		return t.checkDelivered(kind)
	}
	return nil
}
