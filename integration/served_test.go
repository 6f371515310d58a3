package integration_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/asl"
	"stepwise/integration"
	_ "stepwise/integration/sqs"
)

func TestServed(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		resource string
		served   bool
	}{
		{"arn:aws:states:::sqs:sendMessage", true},
		{"arn:aws:states:::sqs:sendMessage.waitForTaskToken", true},
		{"arn:aws:lambda:us-east-1:123456789012:function:f", true},
		{"arn:aws:states:us-east-1:123456789012:activity:a", true},
		{"arn:aws:states:::states:startExecution.sync:2", true},
		{"arn:aws:states:::sqs:sendMessage.sync", false},
		{"arn:aws:states:::codebuild:startBuild", false},
	} {
		require.Equal(t, tt.served, integration.Served(tt.resource), tt.resource)
	}
}

func TestUnservedTasksWalksEveryMachine(t *testing.T) {
	t.Parallel()
	m, diags := asl.Parse([]byte(`{"StartAt": "P", "States": {"P": {"Type": "Parallel", "Next": "M", "Branches": [
		{"StartAt": "A", "States": {"A": {"Type": "Task", "Resource": "arn:aws:states:::codebuild:startBuild", "End": true}}}]},
		"M": {"Type": "Map", "End": true, "ItemProcessor": {"StartAt": "B", "States": {
			"B": {"Type": "Task", "Resource": "arn:aws:states:::eks:runJob.waitForTaskToken", "Next": "C"},
			"C": {"Type": "Task", "Resource": "arn:aws:states:::sqs:sendMessage", "End": true}}}}}}`))
	require.Empty(t, diags)
	got := integration.UnservedTasks(m)
	require.Equal(t, []integration.Unserved{
		{Location: "/States/P/Branches[0]/States/A/Resource", Resource: "arn:aws:states:::codebuild:startBuild"},
		{Location: "/States/M/ItemProcessor/States/B/Resource", Resource: "arn:aws:states:::eks:runJob.waitForTaskToken"},
	}, got)
	require.Equal(t, "the task would fail with States.TaskFailed", got[0].Consequence())
	require.Equal(t, "no call is made and the task only waits for its token", got[1].Consequence())
}

func TestKnownService(t *testing.T) {
	t.Parallel()
	require.True(t, integration.KnownService("sqs"))
	require.False(t, integration.KnownService("lmbda"))
	require.False(t, integration.KnownService("aws-sdk"))
	integration.RegisterServices("ssm")
	require.True(t, integration.KnownService("ssm"))
	require.Contains(t, integration.KnownServices(), "ssm")
}
