package service

import (
	"stepwise/history"
)

// The request and response shapes of the operations, named and tagged as
// the API model (botocore's stepfunctions/2016-11-23/service-2.json) names
// them, so that the transport can decode and encode them as they are.
// Optional scalars are pointers where the API tells absent from zero.

// Time is a timestamp as the API writes it: epoch seconds with a fraction.
type Time = history.EpochTime

// StartExecutionInput is the request of StartExecution.
type StartExecutionInput struct {
	StateMachineArn string  `json:"stateMachineArn"`
	Name            *string `json:"name,omitempty" awsjson:"name"`
	Input           *string `json:"input,omitempty"`
	TraceHeader     *string `json:"traceHeader,omitempty"`
}

// StartExecutionOutput is the response of StartExecution.
type StartExecutionOutput struct {
	ExecutionArn string `json:"executionArn"`
	StartDate    Time   `json:"startDate"`
}

// StartSyncExecutionInput is the request of StartSyncExecution.
type StartSyncExecutionInput struct {
	StateMachineArn string  `json:"stateMachineArn"`
	Name            *string `json:"name,omitempty" awsjson:"name"`
	Input           *string `json:"input,omitempty"`
	TraceHeader     *string `json:"traceHeader,omitempty"`
	IncludedData    string  `json:"includedData,omitempty"`
}

// DataDetails says whether a payload is included in a response.
type DataDetails struct {
	Included bool `json:"included"`
}

// BillingDetails is what a synchronous execution is billed.
type BillingDetails struct {
	BilledMemoryUsedInMB         int64 `json:"billedMemoryUsedInMB"`
	BilledDurationInMilliseconds int64 `json:"billedDurationInMilliseconds"`
}

// StartSyncExecutionOutput is the response of StartSyncExecution.
type StartSyncExecutionOutput struct {
	ExecutionArn    string          `json:"executionArn"`
	StateMachineArn string          `json:"stateMachineArn,omitempty"`
	Name            string          `json:"name,omitempty"`
	StartDate       Time            `json:"startDate"`
	StopDate        Time            `json:"stopDate"`
	Status          string          `json:"status"`
	Error           *string         `json:"error,omitempty"`
	Cause           *string         `json:"cause,omitempty"`
	Input           *string         `json:"input,omitempty"`
	InputDetails    *DataDetails    `json:"inputDetails,omitempty"`
	Output          *string         `json:"output,omitempty"`
	OutputDetails   *DataDetails    `json:"outputDetails,omitempty"`
	TraceHeader     *string         `json:"traceHeader,omitempty"`
	BillingDetails  *BillingDetails `json:"billingDetails,omitempty"`
}

// DescribeExecutionInput is the request of DescribeExecution.
type DescribeExecutionInput struct {
	ExecutionArn string `json:"executionArn"`
	IncludedData string `json:"includedData,omitempty"`
}

// DescribeExecutionOutput is the response of DescribeExecution.
type DescribeExecutionOutput struct {
	ExecutionArn        string       `json:"executionArn"`
	StateMachineArn     string       `json:"stateMachineArn"`
	Name                string       `json:"name,omitempty"`
	Status              string       `json:"status"`
	StartDate           Time         `json:"startDate"`
	StopDate            *Time        `json:"stopDate,omitempty"`
	Input               *string      `json:"input,omitempty"`
	InputDetails        *DataDetails `json:"inputDetails,omitempty"`
	Output              *string      `json:"output,omitempty"`
	OutputDetails       *DataDetails `json:"outputDetails,omitempty"`
	TraceHeader         *string      `json:"traceHeader,omitempty"`
	Error               *string      `json:"error,omitempty"`
	Cause               *string      `json:"cause,omitempty"`
	RedriveCount        int          `json:"redriveCount"`
	RedriveDate         *Time        `json:"redriveDate,omitempty"`
	RedriveStatus       string       `json:"redriveStatus,omitempty"`
	RedriveStatusReason *string      `json:"redriveStatusReason,omitempty"`
	// StateMachineVersionArn and StateMachineAliasArn: the version the
	// execution ran, and the alias it was started on.
	StateMachineVersionArn string `json:"stateMachineVersionArn,omitempty"`
	StateMachineAliasArn   string `json:"stateMachineAliasArn,omitempty"`
	// MapRunArn: the map run that started the execution.
	MapRunArn string `json:"mapRunArn,omitempty"`
}

// DescribeStateMachineForExecutionInput is the request of
// DescribeStateMachineForExecution.
type DescribeStateMachineForExecutionInput struct {
	ExecutionArn string `json:"executionArn"`
	IncludedData string `json:"includedData,omitempty"`
}

// DescribeStateMachineForExecutionOutput is the response of
// DescribeStateMachineForExecution.
type DescribeStateMachineForExecutionOutput struct {
	StateMachineArn         string                   `json:"stateMachineArn"`
	Name                    string                   `json:"name"`
	Definition              string                   `json:"definition,omitempty"`
	RoleArn                 string                   `json:"roleArn"`
	UpdateDate              Time                     `json:"updateDate"`
	LoggingConfiguration    *LoggingConfiguration    `json:"loggingConfiguration,omitempty"`
	TracingConfiguration    *TracingConfiguration    `json:"tracingConfiguration,omitempty"`
	MapRunArn               string                   `json:"mapRunArn,omitempty"`
	Label                   string                   `json:"label,omitempty"`
	RevisionID              string                   `json:"revisionId,omitempty"`
	EncryptionConfiguration *EncryptionConfiguration `json:"encryptionConfiguration,omitempty"`
	VariableReferences      VariableReferences       `json:"variableReferences,omitempty"`
}

// ListExecutionsInput is the request of ListExecutions.
type ListExecutionsInput struct {
	StateMachineArn string  `json:"stateMachineArn,omitempty"`
	StatusFilter    string  `json:"statusFilter,omitempty"`
	MaxResults      *int    `json:"maxResults,omitempty"`
	NextToken       *string `json:"nextToken,omitempty"`
	MapRunArn       string  `json:"mapRunArn,omitempty"`
	RedriveFilter   string  `json:"redriveFilter,omitempty"`
}

// ExecutionListItem is one execution in a list.
type ExecutionListItem struct {
	ExecutionArn    string `json:"executionArn"`
	StateMachineArn string `json:"stateMachineArn"`
	Name            string `json:"name"`
	Status          string `json:"status"`
	StartDate       Time   `json:"startDate"`
	StopDate        *Time  `json:"stopDate,omitempty"`
	// RedriveCount is listed only for an execution that was redriven:
	// AWS's items of the others carry none.
	RedriveCount int   `json:"redriveCount,omitempty"`
	RedriveDate  *Time `json:"redriveDate,omitempty"`
	// StateMachineVersionArn and StateMachineAliasArn: the version the
	// execution ran, and the alias it was started on.
	StateMachineVersionArn string `json:"stateMachineVersionArn,omitempty"`
	StateMachineAliasArn   string `json:"stateMachineAliasArn,omitempty"`
	// MapRunArn: the map run, for its children listed by its ARN.
	MapRunArn string `json:"mapRunArn,omitempty"`
}

// ListExecutionsOutput is the response of ListExecutions.
type ListExecutionsOutput struct {
	Executions []ExecutionListItem `json:"executions"`
	NextToken  string              `json:"nextToken,omitempty"`
}

// StopExecutionInput is the request of StopExecution.
type StopExecutionInput struct {
	ExecutionArn string  `json:"executionArn"`
	Error        *string `json:"error,omitempty"`
	Cause        *string `json:"cause,omitempty"`
}

// StopExecutionOutput is the response of StopExecution.
type StopExecutionOutput struct {
	StopDate Time `json:"stopDate"`
}

// RedriveExecutionInput is the request of RedriveExecution.
type RedriveExecutionInput struct {
	ExecutionArn string  `json:"executionArn"`
	ClientToken  *string `json:"clientToken,omitempty"`
}

// RedriveExecutionOutput is the response of RedriveExecution.
type RedriveExecutionOutput struct {
	RedriveDate Time `json:"redriveDate"`
}
