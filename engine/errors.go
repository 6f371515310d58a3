package engine

import (
	"errors"
	"fmt"

	"stepwise/history"
)

// The errors the engine returns to the layer above, with task.ErrStopped
// (work offered to an engine that is stopping) of the runners' seam. They
// say what went wrong in the engine's terms; the service maps them to
// AWS's error codes and wording (service/errors.go).
var (
	// ErrInvalidToken is a task token the engine did not make.
	ErrInvalidToken = errors.New("invalid task token")
	// ErrTaskOver is a token whose task has ended: it completed, timed
	// out, or its execution ended.
	ErrTaskOver = errors.New("the task does not exist anymore")
)

// InvalidInputError is an execution input that is not JSON.
type InvalidInputError struct{ Err error }

func (e *InvalidInputError) Error() string { return "invalid execution input: " + e.Err.Error() }
func (e *InvalidInputError) Unwrap() error { return e.Err }

// InvalidOutputError is a task output that is not JSON.
type InvalidOutputError struct{ Err error }

func (e *InvalidOutputError) Error() string { return "invalid task output: " + e.Err.Error() }
func (e *InvalidOutputError) Unwrap() error { return e.Err }

// NotRedrivableError is an execution that cannot be redriven, and why.
type NotRedrivableError struct {
	Arn string
	// Status is set when the execution's status rules a redrive out
	// (RUNNING, SUCCEEDED).
	Status history.ExecutionStatus
	// Expired is set when it ended longer than RedriveWindow ago.
	Expired bool
}

func (e *NotRedrivableError) Error() string {
	switch {
	case e.Status != "":
		return fmt.Sprintf("execution %s is %s and cannot be redriven", e.Arn, e.Status)
	case e.Expired:
		return fmt.Sprintf("execution %s ended more than 14 days ago and can no longer be redriven", e.Arn)
	}
	return fmt.Sprintf("execution %s cannot be redriven", e.Arn)
}

// Reason words why the execution cannot be redriven as AWS does in
// DescribeExecution's redriveStatusReason, RedriveExecution's error and a
// status-change event's redriveStatusReason.
func (e *NotRedrivableError) Reason() string {
	switch {
	case e.Status != "":
		return "Execution is " + string(e.Status) + " and cannot be redriven" // AWS
	case e.Expired:
		return "Execution cannot be redriven more than 14 days after it ended"
	}
	return "Execution cannot be redriven"
}
