package history

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"
)

// ExecutionStatus is the status of an execution.
type ExecutionStatus string

const (
	StatusRunning   ExecutionStatus = "RUNNING"
	StatusSucceeded ExecutionStatus = "SUCCEEDED"
	StatusFailed    ExecutionStatus = "FAILED"
	StatusTimedOut  ExecutionStatus = "TIMED_OUT"
	StatusAborted   ExecutionStatus = "ABORTED"
)

// EventType is the type of a history event, as GetExecutionHistory names it.
type EventType string

// The history event types.
const (
	EventExecutionStarted   EventType = "ExecutionStarted"
	EventExecutionSucceeded EventType = "ExecutionSucceeded"
	EventExecutionFailed    EventType = "ExecutionFailed"
	EventExecutionAborted   EventType = "ExecutionAborted"
	EventExecutionTimedOut  EventType = "ExecutionTimedOut"
	EventExecutionRedriven  EventType = "ExecutionRedriven"

	EventEvaluationFailed EventType = "EvaluationFailed"

	EventMapStateStarted       EventType = "MapStateStarted"
	EventMapStateSucceeded     EventType = "MapStateSucceeded"
	EventMapStateFailed        EventType = "MapStateFailed"
	EventMapStateAborted       EventType = "MapStateAborted"
	EventMapIterationStarted   EventType = "MapIterationStarted"
	EventMapIterationSucceeded EventType = "MapIterationSucceeded"
	EventMapIterationFailed    EventType = "MapIterationFailed"
	EventMapIterationAborted   EventType = "MapIterationAborted"
	EventMapRunStarted         EventType = "MapRunStarted"
	EventMapRunSucceeded       EventType = "MapRunSucceeded"
	EventMapRunFailed          EventType = "MapRunFailed"
	EventMapRunAborted         EventType = "MapRunAborted"
	EventMapRunRedriven        EventType = "MapRunRedriven"

	EventParallelStateStarted   EventType = "ParallelStateStarted"
	EventParallelStateSucceeded EventType = "ParallelStateSucceeded"
	EventParallelStateFailed    EventType = "ParallelStateFailed"
	EventParallelStateAborted   EventType = "ParallelStateAborted"
	EventActivityScheduled      EventType = "ActivityScheduled"
	EventActivityStarted        EventType = "ActivityStarted"
	EventActivitySucceeded      EventType = "ActivitySucceeded"
	EventActivityFailed         EventType = "ActivityFailed"
	EventActivityTimedOut       EventType = "ActivityTimedOut"

	EventTaskScheduled    EventType = "TaskScheduled"
	EventTaskStarted      EventType = "TaskStarted"
	EventTaskStartFailed  EventType = "TaskStartFailed"
	EventTaskSubmitted    EventType = "TaskSubmitted"
	EventTaskSubmitFailed EventType = "TaskSubmitFailed"
	EventTaskSucceeded    EventType = "TaskSucceeded"
	EventTaskFailed       EventType = "TaskFailed"
	EventTaskTimedOut     EventType = "TaskTimedOut"
	EventTaskStateAborted EventType = "TaskStateAborted"

	EventLambdaFunctionScheduled EventType = "LambdaFunctionScheduled"
	EventLambdaFunctionStarted   EventType = "LambdaFunctionStarted"
	EventLambdaFunctionSucceeded EventType = "LambdaFunctionSucceeded"
	EventLambdaFunctionFailed    EventType = "LambdaFunctionFailed"
	EventLambdaFunctionTimedOut  EventType = "LambdaFunctionTimedOut"
	EventWaitStateAborted        EventType = "WaitStateAborted"
)

// StateEnteredType returns "<Type>StateEntered" for a state type name.
func StateEnteredType(stateType string) EventType { return EventType(stateType + "StateEntered") }

// StateExitedType returns "<Type>StateExited" for a state type name.
func StateExitedType(stateType string) EventType { return EventType(stateType + "StateExited") }

// Event is one event of an execution's history, shaped like the
// elements of GetExecutionHistory's "events".
type Event struct {
	Timestamp       time.Time `json:"timestamp"`
	Type            EventType `json:"type"`
	ID              int64     `json:"id"`
	PreviousEventID int64     `json:"previousEventId"`

	ExecutionStartedEventDetails   *ExecutionStartedEventDetails  `json:"executionStartedEventDetails,omitempty"`
	ExecutionSucceededEventDetails *OutputEventDetails            `json:"executionSucceededEventDetails,omitempty"`
	ExecutionFailedEventDetails    *FailureEventDetails           `json:"executionFailedEventDetails,omitempty"`
	ExecutionAbortedEventDetails   *FailureEventDetails           `json:"executionAbortedEventDetails,omitempty"`
	ExecutionTimedOutEventDetails  *FailureEventDetails           `json:"executionTimedOutEventDetails,omitempty"`
	ExecutionRedrivenEventDetails  *ExecutionRedrivenEventDetails `json:"executionRedrivenEventDetails,omitempty"`
	EvaluationFailedEventDetails   *EvaluationFailedEventDetails  `json:"evaluationFailedEventDetails,omitempty"`

	StateEnteredEventDetails *StateEnteredEventDetails `json:"stateEnteredEventDetails,omitempty"`
	StateExitedEventDetails  *StateExitedEventDetails  `json:"stateExitedEventDetails,omitempty"`

	MapStateStartedEventDetails       *MapStateStartedEventDetails `json:"mapStateStartedEventDetails,omitempty"`
	MapIterationStartedEventDetails   *MapIterationEventDetails    `json:"mapIterationStartedEventDetails,omitempty"`
	MapIterationSucceededEventDetails *MapIterationEventDetails    `json:"mapIterationSucceededEventDetails,omitempty"`
	MapIterationFailedEventDetails    *MapIterationEventDetails    `json:"mapIterationFailedEventDetails,omitempty"`
	MapIterationAbortedEventDetails   *MapIterationEventDetails    `json:"mapIterationAbortedEventDetails,omitempty"`
	MapRunStartedEventDetails         *MapRunStartedEventDetails   `json:"mapRunStartedEventDetails,omitempty"`
	MapRunFailedEventDetails          *FailureEventDetails         `json:"mapRunFailedEventDetails,omitempty"`
	MapRunRedrivenEventDetails        *MapRunRedrivenEventDetails  `json:"mapRunRedrivenEventDetails,omitempty"`

	ActivityScheduledEventDetails *ActivityScheduledEventDetails `json:"activityScheduledEventDetails,omitempty"`
	ActivityStartedEventDetails   *ActivityStartedEventDetails   `json:"activityStartedEventDetails,omitempty"`
	ActivitySucceededEventDetails *OutputEventDetails            `json:"activitySucceededEventDetails,omitempty"`
	ActivityFailedEventDetails    *FailureEventDetails           `json:"activityFailedEventDetails,omitempty"`
	ActivityTimedOutEventDetails  *FailureEventDetails           `json:"activityTimedOutEventDetails,omitempty"`

	TaskScheduledEventDetails *TaskScheduledEventDetails `json:"taskScheduledEventDetails,omitempty"`
	TaskStartedEventDetails   *TaskEventDetails          `json:"taskStartedEventDetails,omitempty"`
	TaskSubmittedEventDetails *TaskEventDetails          `json:"taskSubmittedEventDetails,omitempty"`
	TaskSucceededEventDetails *TaskEventDetails          `json:"taskSucceededEventDetails,omitempty"`
	TaskFailedEventDetails    *TaskEventDetails          `json:"taskFailedEventDetails,omitempty"`
	TaskTimedOutEventDetails  *TaskEventDetails          `json:"taskTimedOutEventDetails,omitempty"`

	LambdaFunctionScheduledEventDetails *LambdaFunctionScheduledEventDetails `json:"lambdaFunctionScheduledEventDetails,omitempty"`
	LambdaFunctionSucceededEventDetails *OutputEventDetails                  `json:"lambdaFunctionSucceededEventDetails,omitempty"`
	LambdaFunctionFailedEventDetails    *FailureEventDetails                 `json:"lambdaFunctionFailedEventDetails,omitempty"`
	LambdaFunctionTimedOutEventDetails  *FailureEventDetails                 `json:"lambdaFunctionTimedOutEventDetails,omitempty"`
}

// DataDetails says whether a payload in an event was truncated.
type DataDetails struct {
	Truncated bool `json:"truncated"`
}

// ExecutionStartedEventDetails is the detail of ExecutionStarted.
type ExecutionStartedEventDetails struct {
	Input        string      `json:"input"`
	InputDetails DataDetails `json:"inputDetails"`
	RoleArn      string      `json:"roleArn,omitempty"`
}

// ExecutionRedrivenEventDetails is the detail of ExecutionRedriven.
type ExecutionRedrivenEventDetails struct {
	RedriveCount int `json:"redriveCount"`
}

// OutputEventDetails is the detail of ExecutionSucceeded.
type OutputEventDetails struct {
	Output        string      `json:"output"`
	OutputDetails DataDetails `json:"outputDetails"`
}

// FailureEventDetails carries an error and a cause; either may be absent.
type FailureEventDetails struct {
	Error *string `json:"error,omitempty"`
	Cause *string `json:"cause,omitempty"`
}

// EvaluationFailedEventDetails is the detail of EvaluationFailed.
type EvaluationFailedEventDetails struct {
	Error    *string `json:"error,omitempty"`
	Cause    *string `json:"cause,omitempty"`
	Location string  `json:"location,omitempty"`
	State    string  `json:"state"`
}

// StateEnteredEventDetails is the detail of <Type>StateEntered.
type StateEnteredEventDetails struct {
	Name         string      `json:"name"`
	Input        string      `json:"input"`
	InputDetails DataDetails `json:"inputDetails"`
}

// StateExitedEventDetails is the detail of <Type>StateExited.
type StateExitedEventDetails struct {
	Name                     string            `json:"name"`
	Output                   string            `json:"output"`
	OutputDetails            DataDetails       `json:"outputDetails"`
	AssignedVariables        map[string]string `json:"assignedVariables,omitempty"`
	AssignedVariablesDetails *DataDetails      `json:"assignedVariablesDetails,omitempty"`
}

// MapStateStartedEventDetails is the detail of MapStateStarted.
type MapStateStartedEventDetails struct {
	Length int `json:"length"`
}

// MapIterationEventDetails is the detail of the MapIteration* events.
type MapIterationEventDetails struct {
	Name  string `json:"name"`
	Index int    `json:"index"`
}

// MapRunStartedEventDetails is the detail of MapRunStarted.
type MapRunStartedEventDetails struct {
	MapRunArn string `json:"mapRunArn"`
}

// MapRunRedrivenEventDetails is the detail of MapRunRedriven.
type MapRunRedrivenEventDetails struct {
	MapRunArn    string `json:"mapRunArn"`
	RedriveCount int    `json:"redriveCount"`
}

// ActivityScheduledEventDetails is the detail of ActivityScheduled.
type ActivityScheduledEventDetails struct {
	Resource           string      `json:"resource"`
	Input              string      `json:"input"`
	InputDetails       DataDetails `json:"inputDetails"`
	TimeoutInSeconds   *int64      `json:"timeoutInSeconds,omitempty"`
	HeartbeatInSeconds *int64      `json:"heartbeatInSeconds,omitempty"`
}

// ActivityStartedEventDetails is the detail of ActivityStarted.
type ActivityStartedEventDetails struct {
	WorkerName string `json:"workerName,omitempty"`
}

// TaskScheduledEventDetails is the detail of TaskScheduled.
type TaskScheduledEventDetails struct {
	ResourceType       string `json:"resourceType"`
	Resource           string `json:"resource"`
	Region             string `json:"region"`
	Parameters         string `json:"parameters"`
	TimeoutInSeconds   *int64 `json:"timeoutInSeconds,omitempty"`
	HeartbeatInSeconds *int64 `json:"heartbeatInSeconds,omitempty"`
	// TaskCredentials is the role a Task's Credentials name.
	TaskCredentials *TaskCredentials `json:"taskCredentials,omitempty"`
}

// LambdaFunctionScheduledEventDetails is the detail of
// LambdaFunctionScheduled: a Task whose resource is a function's ARN.
type LambdaFunctionScheduledEventDetails struct {
	Resource         string           `json:"resource"`
	Input            string           `json:"input"`
	InputDetails     DataDetails      `json:"inputDetails"`
	TimeoutInSeconds *int64           `json:"timeoutInSeconds,omitempty"`
	TaskCredentials  *TaskCredentials `json:"taskCredentials,omitempty"`
}

// TaskCredentials names the role Step Functions assumes for a task.
type TaskCredentials struct {
	RoleArn string `json:"roleArn"`
}

// TaskEventDetails is the detail of TaskStarted, TaskSucceeded, TaskFailed
// and TaskTimedOut.
type TaskEventDetails struct {
	ResourceType  string       `json:"resourceType"`
	Resource      string       `json:"resource"`
	Output        *string      `json:"output,omitempty"`
	OutputDetails *DataDetails `json:"outputDetails,omitempty"`
	Error         *string      `json:"error,omitempty"`
	Cause         *string      `json:"cause,omitempty"`
}

// EpochTime is a time written in JSON as epoch seconds with a fraction, the
// form the Step Functions API uses for every timestamp.
type EpochTime time.Time

// MarshalJSON writes the time as epoch seconds.
func (t EpochTime) MarshalJSON() ([]byte, error) {
	tt := time.Time(t)
	ms := tt.UnixMilli()
	return []byte(strconv.FormatFloat(float64(ms)/1000, 'f', -1, 64)), nil
}

// UnmarshalJSON reads epoch seconds.
func (t *EpochTime) UnmarshalJSON(b []byte) error {
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return fmt.Errorf("timestamp: %w", err)
	}
	*t = EpochTime(time.UnixMilli(int64(math.Round(f * 1000))).UTC())
	return nil
}

// MarshalJSON writes the event as the API does, with an epoch timestamp.
func (e Event) MarshalJSON() ([]byte, error) {
	type plain Event
	return json.Marshal(struct {
		Timestamp EpochTime `json:"timestamp"`
		plain
	}{EpochTime(e.Timestamp), plain(e)})
}
