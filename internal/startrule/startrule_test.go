package startrule

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"stepwise/sfnapi"
)

func TestName(t *testing.T) {
	require.Nil(t, Name("run-1"))
	for _, bad := range []string{"", strings.Repeat("a", MaxNameLength+1), "a b", "a:b", "a/b"} {
		err := Name(bad)
		require.NotNil(t, err, bad)
		require.Equal(t, sfnapi.CodeInvalidName, err.Code)
		require.Equal(t, "Invalid Name: '"+bad+"'", err.Message)
	}
}

func TestInput(t *testing.T) {
	v, err := Input(`{"a": 1}`, 0)
	require.Nil(t, err)
	require.NotNil(t, v)
	for text, msg := range map[string]string{
		`{"a": 1}`: "Invalid State Machine Execution Input: 'Input exceeds the maximum size of 4 bytes (UTF-8).'",
		"  ":       "Invalid State Machine Execution Input: 'Invalid execution input.'",
		"not":      "Invalid State Machine Execution Input: 'Unrecognized token 'not': was expecting (JSON String, Number, Array, Object or token 'null', 'true' or 'false')'",
	} {
		limit := 0
		if strings.HasPrefix(msg, "Invalid State Machine Execution Input: 'Input exceeds") {
			limit = 4
		}
		_, err := Input(text, limit)
		require.NotNil(t, err, text)
		require.Equal(t, sfnapi.CodeInvalidExecutionInput, err.Code)
		require.Equal(t, msg, err.Message)
	}
}

func TestStateMachineArn(t *testing.T) {
	a, err := StateMachineArn("arn:aws:states:us-east-1:123456789012:stateMachine:sm:prod")
	require.Nil(t, err)
	require.Equal(t, []string{"sm", "prod"}, a.Parts)
	for text, msg := range map[string]string{
		"sm": "Invalid Arn: 'Invalid ARN prefix: sm'",
		"arn:aws:states:us-east-1:123456789012:activity:a":         "Invalid Arn: 'Resource type not valid in this context: activity'",
		"arn:aws:states:us-east-1:123456789012:stateMachine:a:1:2": "Invalid Arn: 'Invalid ARN format: arn:aws:states:us-east-1:123456789012:stateMachine:a:1:2'",
		"arn:aws:states:us-east-1:123456789012:stateMachine":       "Invalid Arn: 'Invalid ARN format: arn:aws:states:us-east-1:123456789012:stateMachine'",
	} {
		_, err := StateMachineArn(text)
		require.NotNil(t, err, text)
		require.Equal(t, sfnapi.CodeInvalidArn, err.Code, text)
		require.Equal(t, msg, err.Message, text)
	}
}
