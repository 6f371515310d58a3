package stepwisetype

import (
	"errors"
	"fmt"
)

// The predefined ASL error names.
const (
	ErrorAll                    = "States.ALL"
	ErrorDataLimitExceeded      = "States.DataLimitExceeded"
	ErrorExceedToleratedFailure = "States.ExceedToleratedFailureThreshold"
	ErrorHeartbeatTimeout       = "States.HeartbeatTimeout"
	ErrorIntrinsicFailure       = "States.IntrinsicFailure"
	ErrorItemReaderFailed       = "States.ItemReaderFailed"
	ErrorNoChoiceMatched        = "States.NoChoiceMatched"
	ErrorParameterPathFailure   = "States.ParameterPathFailure"
	ErrorPermissions            = "States.Permissions"
	ErrorQueryEvaluationError   = "States.QueryEvaluationError"
	ErrorResultPathMatchFailure = "States.ResultPathMatchFailure"
	ErrorResultWriterFailed     = "States.ResultWriterFailed"
	ErrorRuntime                = "States.Runtime"
	ErrorTaskFailed             = "States.TaskFailed"
	ErrorTimeout                = "States.Timeout"
	ErrorBranchFailed           = "States.BranchFailed"
	ErrorExecutionLimitExceeded = "States.ExecutionLimitExceeded"
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

// NewFailure returns a failure with a cause.
func NewFailure(name, cause string) *Failure {
	return &Failure{Name: name, Cause: cause, HasCause: true}
}

// AsFailure returns the failure err is or wraps, or else a States.Runtime
// failure whose cause is err's text.
func AsFailure(err error) *Failure {
	var fl *Failure
	if errors.As(err, &fl) {
		return fl
	}
	return NewFailure(ErrorRuntime, err.Error())
}

// Failuref returns a failure whose cause is formatted.
func Failuref(name, format string, args ...any) *Failure {
	return NewFailure(name, fmt.Sprintf(format, args...))
}

func (f *Failure) Error() string {
	if f.HasCause {
		return f.Name + ": " + f.Cause
	}
	return f.Name
}
