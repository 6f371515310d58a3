package service

import (
	"encoding/json"
	"stepwise/history"
)

// The request and response shapes of the operations, named and tagged as
// the API model (botocore's stepfunctions/2016-11-23/service-2.json) names
// them, so that the transport can decode and encode them as they are.
// Optional scalars are pointers where the API tells absent from zero.

// Time is a timestamp as the API writes it: epoch seconds with a fraction.
type Time = history.EpochTime

// LoggingConfiguration is a state machine's logging configuration.
type LoggingConfiguration struct {
	Level                *string          `json:"level,omitempty"`
	IncludeExecutionData *bool            `json:"includeExecutionData,omitempty"`
	Destinations         []LogDestination `json:"destinations,omitzero"`
}

// LogDestination is one logging destination.
type LogDestination struct {
	CloudWatchLogsLogGroup *CloudWatchLogsLogGroup `json:"cloudWatchLogsLogGroup,omitempty"`
}

// CloudWatchLogsLogGroup names a log group.
type CloudWatchLogsLogGroup struct {
	LogGroupArn *string `json:"logGroupArn,omitempty"`
}

// TracingConfiguration is a state machine's X-Ray tracing configuration.
type TracingConfiguration struct {
	Enabled *bool `json:"enabled,omitempty"`
}

// EncryptionConfiguration is a state machine's encryption configuration.
type EncryptionConfiguration struct {
	KmsKeyID                     *string `json:"kmsKeyId,omitempty"`
	KmsDataKeyReusePeriodSeconds *int    `json:"kmsDataKeyReusePeriodSeconds,omitempty"`
	Type                         string  `json:"type"`
}

// Tag is a resource tag.
type Tag struct {
	Key   *string `json:"key,omitempty"`
	Value *string `json:"value,omitempty"`
}

// CreateStateMachineInput is the request of CreateStateMachine.
type CreateStateMachineInput struct {
	Name                    string                   `json:"name" awsjson:"name"`
	Definition              string                   `json:"definition"`
	RoleArn                 string                   `json:"roleArn"`
	Type                    string                   `json:"type,omitempty"`
	LoggingConfiguration    *LoggingConfiguration    `json:"loggingConfiguration,omitempty"`
	Tags                    []Tag                    `json:"tags,omitempty"`
	TracingConfiguration    *TracingConfiguration    `json:"tracingConfiguration,omitempty"`
	Publish                 bool                     `json:"publish,omitempty"`
	VersionDescription      string                   `json:"versionDescription,omitempty"`
	EncryptionConfiguration *EncryptionConfiguration `json:"encryptionConfiguration,omitempty"`
}

// CreateStateMachineOutput is the response of CreateStateMachine.
type CreateStateMachineOutput struct {
	StateMachineArn        string `json:"stateMachineArn"`
	CreationDate           Time   `json:"creationDate"`
	StateMachineVersionArn string `json:"stateMachineVersionArn,omitempty"`
}

// DescribeStateMachineInput is the request of DescribeStateMachine.
type DescribeStateMachineInput struct {
	StateMachineArn string `json:"stateMachineArn"`
	IncludedData    string `json:"includedData,omitempty"`
}

// VariableReferences maps state names to the variables they read.
type VariableReferences map[string][]string

// DescribeStateMachineOutput is the response of DescribeStateMachine.
type DescribeStateMachineOutput struct {
	StateMachineArn         string                   `json:"stateMachineArn"`
	Name                    string                   `json:"name"`
	Status                  string                   `json:"status,omitempty"`
	Definition              string                   `json:"definition,omitempty"`
	RoleArn                 string                   `json:"roleArn"`
	Type                    string                   `json:"type"`
	CreationDate            Time                     `json:"creationDate"`
	LoggingConfiguration    *LoggingConfiguration    `json:"loggingConfiguration,omitempty"`
	TracingConfiguration    *TracingConfiguration    `json:"tracingConfiguration,omitempty"`
	Label                   string                   `json:"label,omitempty"`
	RevisionID              string                   `json:"revisionId,omitempty"`
	Description             string                   `json:"description,omitempty"`
	EncryptionConfiguration *EncryptionConfiguration `json:"encryptionConfiguration,omitempty"`
	VariableReferences      VariableReferences       `json:"variableReferences,omitempty"`
}

// UpdateStateMachineInput is the request of UpdateStateMachine.
type UpdateStateMachineInput struct {
	StateMachineArn         string                   `json:"stateMachineArn"`
	Definition              *string                  `json:"definition,omitempty"`
	RoleArn                 *string                  `json:"roleArn,omitempty"`
	LoggingConfiguration    *LoggingConfiguration    `json:"loggingConfiguration,omitempty"`
	TracingConfiguration    *TracingConfiguration    `json:"tracingConfiguration,omitempty"`
	Publish                 bool                     `json:"publish,omitempty"`
	VersionDescription      string                   `json:"versionDescription,omitempty"`
	EncryptionConfiguration *EncryptionConfiguration `json:"encryptionConfiguration,omitempty"`
}

// UpdateStateMachineOutput is the response of UpdateStateMachine.
type UpdateStateMachineOutput struct {
	UpdateDate             Time   `json:"updateDate"`
	RevisionID             string `json:"revisionId,omitempty"`
	StateMachineVersionArn string `json:"stateMachineVersionArn,omitempty"`
}

// DeleteStateMachineInput is the request of DeleteStateMachine.
type DeleteStateMachineInput struct {
	StateMachineArn string `json:"stateMachineArn"`
}

// DeleteStateMachineOutput is the (empty) response of DeleteStateMachine.
type DeleteStateMachineOutput struct{}

// ListStateMachinesInput is the request of ListStateMachines.
type ListStateMachinesInput struct {
	MaxResults *int    `json:"maxResults,omitempty"`
	NextToken  *string `json:"nextToken,omitempty"`
}

// StateMachineListItem is one state machine in a list.
type StateMachineListItem struct {
	StateMachineArn string `json:"stateMachineArn"`
	Name            string `json:"name"`
	Type            string `json:"type"`
	CreationDate    Time   `json:"creationDate"`
}

// ListStateMachinesOutput is the response of ListStateMachines.
type ListStateMachinesOutput struct {
	StateMachines []StateMachineListItem `json:"stateMachines"`
	NextToken     string                 `json:"nextToken,omitempty"`
}

// ValidateStateMachineDefinitionInput is the request of
// ValidateStateMachineDefinition.
type ValidateStateMachineDefinitionInput struct {
	Definition string `json:"definition"`
	Type       string `json:"type,omitempty"`
	Severity   string `json:"severity,omitempty"`
	MaxResults *int   `json:"maxResults,omitempty"`
}

// ValidateStateMachineDefinitionDiagnostic is one diagnostic.
type ValidateStateMachineDefinitionDiagnostic struct {
	Severity string `json:"severity"`
	Code     string `json:"code"`
	Message  string `json:"message"`
	Location string `json:"location,omitempty"`
}

// ValidateStateMachineDefinitionOutput is the response of
// ValidateStateMachineDefinition.
type ValidateStateMachineDefinitionOutput struct {
	Result      string                                     `json:"result"`
	Diagnostics []ValidateStateMachineDefinitionDiagnostic `json:"diagnostics"`
	Truncated   bool                                       `json:"truncated"`
}

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

// GetExecutionHistoryInput is the request of GetExecutionHistory.
type GetExecutionHistoryInput struct {
	ExecutionArn         string  `json:"executionArn"`
	MaxResults           *int    `json:"maxResults,omitempty"`
	ReverseOrder         bool    `json:"reverseOrder,omitempty"`
	NextToken            *string `json:"nextToken,omitempty"`
	IncludeExecutionData *bool   `json:"includeExecutionData,omitempty"`
}

// GetExecutionHistoryOutput is the response of GetExecutionHistory. Each
// event is the JSON the store keeps for it.
type GetExecutionHistoryOutput struct {
	Events    []json.RawMessage `json:"events"`
	NextToken string            `json:"nextToken,omitempty"`
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

// TagResourceInput is the request of TagResource.
type TagResourceInput struct {
	ResourceArn string `json:"resourceArn"`
	Tags        []Tag  `json:"tags"`
}

// TagResourceOutput is the (empty) response of TagResource.
type TagResourceOutput struct{}

// UntagResourceInput is the request of UntagResource.
type UntagResourceInput struct {
	ResourceArn string   `json:"resourceArn"`
	TagKeys     []string `json:"tagKeys"`
}

// UntagResourceOutput is the (empty) response of UntagResource.
type UntagResourceOutput struct{}

// ListTagsForResourceInput is the request of ListTagsForResource.
type ListTagsForResourceInput struct {
	ResourceArn string `json:"resourceArn"`
}

// ListTagsForResourceOutput is the response of ListTagsForResource.
type ListTagsForResourceOutput struct {
	Tags []Tag `json:"tags"`
}

// DescribeMapRunInput is the request of DescribeMapRun.
type DescribeMapRunInput struct {
	MapRunArn string `json:"mapRunArn"`
}

// DescribeMapRunOutput is the response of DescribeMapRun.
type DescribeMapRunOutput struct {
	MapRunArn                  string          `json:"mapRunArn"`
	ExecutionArn               string          `json:"executionArn"`
	Status                     string          `json:"status"`
	StartDate                  Time            `json:"startDate"`
	StopDate                   *Time           `json:"stopDate,omitempty"`
	MaxConcurrency             int             `json:"maxConcurrency"`
	ToleratedFailurePercentage float64         `json:"toleratedFailurePercentage"`
	ToleratedFailureCount      int64           `json:"toleratedFailureCount"`
	ItemCounts                 json.RawMessage `json:"itemCounts"`
	ExecutionCounts            json.RawMessage `json:"executionCounts"`
	RedriveCount               int             `json:"redriveCount"`
	RedriveDate                *Time           `json:"redriveDate,omitempty"`
}

// ListMapRunsInput is the request of ListMapRuns.
type ListMapRunsInput struct {
	ExecutionArn string  `json:"executionArn"`
	MaxResults   *int    `json:"maxResults,omitempty"`
	NextToken    *string `json:"nextToken,omitempty"`
}

// MapRunListItem is one map run in a list.
type MapRunListItem struct {
	ExecutionArn    string `json:"executionArn"`
	MapRunArn       string `json:"mapRunArn"`
	StateMachineArn string `json:"stateMachineArn"`
	StartDate       Time   `json:"startDate"`
	StopDate        *Time  `json:"stopDate,omitempty"`
}

// ListMapRunsOutput is the response of ListMapRuns.
type ListMapRunsOutput struct {
	MapRuns   []MapRunListItem `json:"mapRuns"`
	NextToken string           `json:"nextToken,omitempty"`
}

// UpdateMapRunInput is the request of UpdateMapRun.
type UpdateMapRunInput struct {
	MapRunArn                  string   `json:"mapRunArn"`
	MaxConcurrency             *int     `json:"maxConcurrency,omitempty"`
	ToleratedFailurePercentage *float64 `json:"toleratedFailurePercentage,omitempty"`
	ToleratedFailureCount      *int64   `json:"toleratedFailureCount,omitempty"`
}

// UpdateMapRunOutput is the (empty) response of UpdateMapRun.
type UpdateMapRunOutput struct{}
