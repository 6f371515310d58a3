package failure

import (
	"errors"
	"fmt"
)

// The predefined ASL error names.
const (
	All                    = "States.ALL"
	DataLimitExceeded      = "States.DataLimitExceeded"
	ExceedToleratedFailure = "States.ExceedToleratedFailureThreshold"
	HeartbeatTimeout       = "States.HeartbeatTimeout"
	IntrinsicFailure       = "States.IntrinsicFailure"
	ItemReaderFailed       = "States.ItemReaderFailed"
	NoChoiceMatched        = "States.NoChoiceMatched"
	ParameterPathFailure   = "States.ParameterPathFailure"
	Permissions            = "States.Permissions"
	QueryEvaluationError   = "States.QueryEvaluationError"
	ResultPathMatchFailure = "States.ResultPathMatchFailure"
	ResultWriterFailed     = "States.ResultWriterFailed"
	Runtime                = "States.Runtime"
	TaskFailed             = "States.TaskFailed"
	Timeout                = "States.Timeout"
	BranchFailed           = "States.BranchFailed"
	ExecutionLimitExceeded = "States.ExecutionLimitExceeded"
)

// Failure is an error raised inside a workflow: an ASL error name and a
// cause. It is what Retry and Catch match, and what a failed execution
// reports. An empty Name or Cause is absent (AWS omits the field).
type Failure struct {
	Name  string
	Cause string
	// HasCause is false when the cause is absent, not just empty.
	HasCause bool
	// Location is the field of a JSONata evaluation error
	// ("Output/result"), written in the EvaluationFailed event.
	Location string
}

// New returns a failure with a cause.
func New(name, cause string) *Failure {
	return &Failure{Name: name, Cause: cause, HasCause: true}
}

// As returns the failure err is or wraps, or else a States.Runtime
// failure whose cause is err's text.
func As(err error) *Failure {
	var fl *Failure
	if errors.As(err, &fl) {
		return fl
	}
	return New(Runtime, err.Error())
}

// Newf returns a failure whose cause is formatted.
func Newf(name, format string, args ...any) *Failure {
	return New(name, fmt.Sprintf(format, args...))
}

func (f *Failure) Error() string {
	if f.HasCause {
		return f.Name + ": " + f.Cause
	}
	return f.Name
}
