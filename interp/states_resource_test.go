package interp

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSplitResource(t *testing.T) {
	t.Parallel()
	for arn, want := range map[string][2]string{
		"arn:aws:states:::lambda:invoke":                    {"lambda", "invoke"},
		"arn:aws:states:::sqs:sendMessage.waitForTaskToken": {"sqs", "sendMessage.waitForTaskToken"},
		"arn:aws:states:::states:startExecution.sync":       {"states", "startExecution.sync"},
		"arn:aws:states:::states:startExecution.sync:2":     {"states", "startExecution.sync:2"},
		"arn:aws:states:::aws-sdk:sfn:sendTaskSuccess":      {"aws-sdk:sfn", "sendTaskSuccess"},
		"arn:aws:lambda:us-east-1:123456789012:function:fn": {"lambda", "function:fn"},
	} {
		typ, res := splitResource(arn)
		require.Equal(t, want, [2]string{typ, res}, arn)
	}
}
