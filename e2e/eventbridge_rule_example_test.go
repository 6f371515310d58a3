package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestEventBridgeRuleExample runs examples/eventbridge-rule as its
// README says: one `stepwise deploy`, an event put with the AWS CLI's
// `aws events put-events`, and the execution the rule started read with
// the AWS CLI; its output is the README's.
func TestEventBridgeRuleExample(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("aws"); err != nil {
		t.Skip("the aws command is not on PATH; install the AWS CLI to run this test")
	}
	s := startServer(t, filepath.Join(t.TempDir(), "stepwise.db"))
	template := filepath.Join("..", "examples", "eventbridge-rule", "template.yaml")
	out, code := stepwiseCLI(t, "deploy", template, "--endpoint", s.url())
	require.Equal(t, 0, code, out)
	require.Contains(t, out, "created   OrderFlow (AWS::Serverless::StateMachine)")

	awsCLI := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("aws", args...)
		cmd.Env = append(os.Environ(),
			"AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_DEFAULT_REGION=us-east-1",
			"AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null", "AWS_PAGER=")
		out, err := cmd.Output()
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		require.NoError(t, err, "aws %v: %s", args, stderr)
		return strings.TrimSpace(string(out))
	}
	put := awsCLI("events", "put-events", "--endpoint-url", s.url(), "--entries", `[{"Source": "shop.orders",
  "DetailType": "OrderPlaced", "Detail": "{\"order\": \"o-1\", \"items\": [{\"sku\": \"tea\", \"qty\": 2, \"price\": 450}, {\"sku\": \"cup\", \"qty\": 1, \"price\": 300}]}"}]`)
	var answer struct {
		FailedEntryCount int
		Entries          []struct{ EventId string }
	}
	require.NoError(t, json.Unmarshal([]byte(put), &answer), put)
	require.Zero(t, answer.FailedEntryCount)
	require.Len(t, answer.Entries, 1)
	require.NotEmpty(t, answer.Entries[0].EventId)

	var arn string
	require.Eventually(t, func() bool {
		arn = awsCLI("stepfunctions", "list-executions", "--endpoint-url", s.url(),
			"--state-machine-arn", "arn:aws:states:us-east-1:123456789012:stateMachine:eventbridge-rule-orders",
			"--query", "executions[0].executionArn", "--output", "text")
		return strings.HasPrefix(arn, "arn:")
	}, 30*time.Second, 200*time.Millisecond, "the rule starts the state machine")
	var output string
	require.Eventually(t, func() bool {
		output = awsCLI("stepfunctions", "describe-execution", "--endpoint-url", s.url(), "--query", "output", "--output", "text",
			"--execution-arn", arn)
		return output != "None"
	}, 30*time.Second, 200*time.Millisecond, "the execution ends")
	require.Equal(t, `{"order":"o-1","total":1200}`, output)
}
