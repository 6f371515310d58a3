package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAWSCLI reproduces the classic local workflow with the aws command:
// create-state-machine → start-execution → describe-execution →
// get-execution-history.
func TestAWSCLI(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("aws"); err != nil {
		t.Skip("the aws command is not on PATH; install the AWS CLI to run this test")
	}
	s := startServer(t, filepath.Join(t.TempDir(), "cli.db"))
	def := filepath.Join(t.TempDir(), "def.json")
	require.NoError(t, os.WriteFile(def, []byte(`{"StartAt": "Hello", "States": {
		"Hello": {"Type": "Pass", "Parameters": {"greeting.$": "States.Format('Hello, {}!', $.name)"}, "End": true}}}`), 0o644))

	aws := func(args ...string) map[string]any {
		t.Helper()
		cmd := exec.Command("aws", append([]string{"stepfunctions", "--endpoint-url", s.url(), "--output", "json"}, args...)...)
		cmd.Env = append(os.Environ(),
			"AWS_ACCESS_KEY_ID=AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY=secret", "AWS_DEFAULT_REGION=us-east-1",
			"AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null", "AWS_PAGER=",
			"AWS_DISABLE_HOST_PREFIX_INJECTION=true")
		out, err := cmd.Output()
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		require.NoError(t, err, "aws %v: %s", args, stderr)
		var v map[string]any
		require.NoError(t, json.Unmarshal(out, &v), "aws %v printed %q", args, out)
		return v
	}

	created := aws("create-state-machine", "--name", "hello", "--definition", "file://"+def, "--role-arn", roleArn)
	require.Equal(t, smArn("hello"), created["stateMachineArn"])
	started := aws("start-execution", "--state-machine-arn", smArn("hello"), "--name", "first", "--input", `{"name": "Ada"}`)
	arn := started["executionArn"].(string)
	require.Equal(t, "arn:aws:states:us-east-1:123456789012:execution:hello:first", arn)
	described := aws("describe-execution", "--execution-arn", arn)
	require.Equal(t, "SUCCEEDED", described["status"])
	require.JSONEq(t, `{"greeting": "Hello, Ada!"}`, described["output"].(string))
	history := aws("get-execution-history", "--execution-arn", arn)
	var types []string
	for _, e := range history["events"].([]any) {
		types = append(types, e.(map[string]any)["type"].(string))
	}
	require.Equal(t, []string{"ExecutionStarted", "PassStateEntered", "PassStateExited", "ExecutionSucceeded"}, types)
}
