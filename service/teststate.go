package service

import (
	"context"
	"math"
)

// TestState is implemented outside this package (package teststate) and
// plugged into Service.TestState; RunTestState is the operation the
// transport calls.

// TestStateInput is the request of TestState.
type TestStateInput struct {
	Definition         string                  `json:"definition"`
	RoleArn            *string                 `json:"roleArn,omitempty"`
	Input              *string                 `json:"input,omitempty"`
	InspectionLevel    string                  `json:"inspectionLevel,omitempty"`
	RevealSecrets      bool                    `json:"revealSecrets,omitempty"`
	Variables          *string                 `json:"variables,omitempty"`
	StateName          *string                 `json:"stateName,omitempty"`
	Mock               *MockInput              `json:"mock,omitempty"`
	Context            *string                 `json:"context,omitempty"`
	StateConfiguration *TestStateConfiguration `json:"stateConfiguration,omitempty"`
}

// MockInput is the mocked result or error of a tested Task state.
type MockInput struct {
	Result              *string          `json:"result,omitempty"`
	ErrorOutput         *MockErrorOutput `json:"errorOutput,omitempty"`
	FieldValidationMode string           `json:"fieldValidationMode,omitempty"`
}

// MockErrorOutput is a mocked error.
type MockErrorOutput struct {
	Error *string `json:"error,omitempty"`
	Cause *string `json:"cause,omitempty"`
}

// TestStateConfiguration sets up the situation the state is tested in.
type TestStateConfiguration struct {
	RetrierRetryCount        *int    `json:"retrierRetryCount,omitempty"`
	ErrorCausedByState       *string `json:"errorCausedByState,omitempty"`
	MapIterationFailureCount *int    `json:"mapIterationFailureCount,omitempty"`
	MapItemReaderData        *string `json:"mapItemReaderData,omitempty"`
}

// TestStateOutput is the response of TestState.
type TestStateOutput struct {
	Output         *string         `json:"output,omitempty"`
	Error          *string         `json:"error,omitempty"`
	Cause          *string         `json:"cause,omitempty"`
	InspectionData *InspectionData `json:"inspectionData,omitempty"`
	NextState      *string         `json:"nextState,omitempty"`
	Status         string          `json:"status,omitempty"`
}

// InspectionData is what TestState reports about the steps of the state.
type InspectionData struct {
	Input                      *string                 `json:"input,omitempty"`
	AfterArguments             *string                 `json:"afterArguments,omitempty"`
	AfterInputPath             *string                 `json:"afterInputPath,omitempty"`
	AfterParameters            *string                 `json:"afterParameters,omitempty"`
	Result                     *string                 `json:"result,omitempty"`
	AfterResultSelector        *string                 `json:"afterResultSelector,omitempty"`
	AfterResultPath            *string                 `json:"afterResultPath,omitempty"`
	Request                    *InspectionDataRequest  `json:"request,omitempty"`
	Response                   *InspectionDataResponse `json:"response,omitempty"`
	Variables                  *string                 `json:"variables,omitempty"`
	ErrorDetails               *InspectionErrorDetails `json:"errorDetails,omitempty"`
	AfterItemsPath             *string                 `json:"afterItemsPath,omitempty"`
	AfterItemSelector          *string                 `json:"afterItemSelector,omitempty"`
	AfterItemBatcher           *string                 `json:"afterItemBatcher,omitempty"`
	AfterItemsPointer          *string                 `json:"afterItemsPointer,omitempty"`
	ToleratedFailureCount      *int                    `json:"toleratedFailureCount,omitempty"`
	ToleratedFailurePercentage *float64                `json:"toleratedFailurePercentage,omitempty"`
	MaxConcurrency             *int                    `json:"maxConcurrency,omitempty"`
}

// InspectionDataRequest is the HTTP request of an HTTP Task.
type InspectionDataRequest struct {
	Protocol *string `json:"protocol,omitempty"`
	Method   *string `json:"method,omitempty"`
	URL      *string `json:"url,omitempty"`
	Headers  *string `json:"headers,omitempty"`
	Body     *string `json:"body,omitempty"`
}

// InspectionDataResponse is the HTTP response of an HTTP Task.
type InspectionDataResponse struct {
	Protocol      *string `json:"protocol,omitempty"`
	StatusCode    *string `json:"statusCode,omitempty"`
	StatusMessage *string `json:"statusMessage,omitempty"`
	Headers       *string `json:"headers,omitempty"`
	Body          *string `json:"body,omitempty"`
}

// InspectionErrorDetails says which retrier or catcher handled an error.
type InspectionErrorDetails struct {
	CatchIndex                  *int `json:"catchIndex,omitempty"`
	RetryIndex                  *int `json:"retryIndex,omitempty"`
	RetryBackoffIntervalSeconds *int `json:"retryBackoffIntervalSeconds,omitempty"`
}

// maxTestStateText is the API model's limit on TestState's JSON text
// members.
const maxTestStateText = 262144

// RunTestState is the TestState operation. It checks the request's
// constraints and hands it to the TestState hook; without a hook the
// operation is unsupported.
//
// HOOK: package teststate implements TestState; set Service.TestState.
func (s *Service) RunTestState(ctx context.Context, in *TestStateInput) (*TestStateOutput, error) {
	if s.TestState == nil {
		return nil, errUnsupportedOperation("TestState")
	}
	v := newValidator()
	v.required("definition", in.Definition)
	v.length("definition", in.Definition, 1, maxDefinitionLength)
	if in.RoleArn != nil {
		v.length("roleArn", *in.RoleArn, 1, 256)
	}
	v.enum("inspectionLevel", in.InspectionLevel, "INFO", "DEBUG", "TRACE")
	if in.StateName != nil {
		v.length("stateName", *in.StateName, 1, 80)
	}
	if in.Mock != nil {
		v.enum("mock.fieldValidationMode", in.Mock.FieldValidationMode, "STRICT", "PRESENT", "NONE")
		if in.Mock.Result != nil {
			v.length("mock.result", *in.Mock.Result, 0, maxTestStateText)
		}
	}
	for _, m := range []struct {
		member string
		text   *string
	}{{"input", in.Input}, {"variables", in.Variables}, {"context", in.Context}} {
		if m.text != nil {
			v.length(m.member, *m.text, 0, maxTestStateText)
		}
	}
	if c := in.StateConfiguration; c != nil {
		v.intRange("stateConfiguration.retrierRetryCount", c.RetrierRetryCount, 0, math.MaxInt32)
		v.intRange("stateConfiguration.mapIterationFailureCount", c.MapIterationFailureCount, 0, math.MaxInt32)
		if c.ErrorCausedByState != nil {
			v.length("stateConfiguration.errorCausedByState", *c.ErrorCausedByState, 1, 80)
		}
		if c.MapItemReaderData != nil {
			v.length("stateConfiguration.mapItemReaderData", *c.MapItemReaderData, 0, maxTestStateText)
		}
	}
	if err := v.err(); err != nil {
		return nil, err
	}
	return s.TestState(ctx, in)
}
