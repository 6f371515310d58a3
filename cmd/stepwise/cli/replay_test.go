package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/stretchr/testify/require"

	"stepwise/config"
	"stepwise/internal/testkit/testwait"
	"stepwise/server/servertest"
)

const sortDef = `{"StartAt": "Split", "States": {
  "Split": {"Type": "Map", "ItemsPath": "$.items", "ItemProcessor": {"StartAt": "Double", "States": {
    "Double": {"Type": "Pass", "Parameters": {"v.$": "States.MathAdd($, $)"}, "End": true}}}, "ResultPath": "$.doubled", "Next": "Big"},
  "Big": {"Type": "Choice", "Choices": [{"Variable": "$.doubled[0].v", "NumericGreaterThan": 5, "Next": "Yes"}], "Default": "No"},
  "Yes": {"Type": "Pass", "Result": "big", "ResultPath": "$.size", "End": true},
  "No": {"Type": "Fail", "Error": "Small", "Cause": "the first is small"}}}`

// serveAPI serves the Step Functions API in process and runs one
// execution of def to its end; it returns the server's URL and the
// execution's ARN.
func serveAPI(t *testing.T, def, input string) (string, string) {
	t.Helper()
	srv := servertest.New(t)
	ctx := context.Background()
	c, err := apiClient(ctx, srv.URL)
	require.NoError(t, err)
	sm, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("sorter"), Definition: aws.String(def),
		RoleArn: aws.String("arn:aws:iam::123456789012:role/r")})
	require.NoError(t, err)
	x, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: sm.StateMachineArn, Name: aws.String("night-1"), Input: aws.String(input)})
	require.NoError(t, err)
	testwait.Until(t, func() bool {
		d, err := c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: x.ExecutionArn})
		return err == nil && d.Status != "RUNNING"
	}, 30*time.Second, 20*time.Millisecond, "the execution ends")
	return srv.URL, aws.ToString(x.ExecutionArn)
}

func TestRecordAndReplayFromAServer(t *testing.T) {
	t.Parallel()
	url, arn := serveAPI(t, sortDef, `{"items": [3, 1, 2]}`)
	dir := t.TempDir()
	file := filepath.Join(dir, "night.test.json")
	_, errOut, code := execute("test", "--record", arn, "--endpoint", url, "--out", file)
	require.Equal(t, 0, code, errOut)
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	require.Contains(t, string(data), `"path": [`)

	out, errOut, code := execute("test", file)
	require.Equal(t, 0, code, out+errOut)
	require.Contains(t, out, "1 passed, 0 failed")

	out, errOut, code = execute("replay", arn, "--endpoint", url)
	require.Equal(t, 0, code, out+errOut)
	require.Equal(t, "night-1: same path, same output\n", out)

	edited := filepath.Join(dir, "edited.asl.json")
	require.NoError(t, os.WriteFile(edited, []byte(strings.Replace(sortDef, `"NumericGreaterThan": 5`, `"NumericGreaterThan": 7`, 1)), 0o644))
	out, errOut, code = execute("replay", "--recording", file, "--definition", edited)
	require.Equal(t, 1, code, out+errOut)
	require.Contains(t, out, "night-1: first divergence at state Big, event ")
	require.Contains(t, out, "(ChoiceStateExited): went on to No; recorded: went on to Yes")

	// Clear errors: an execution that is not there, a server that is
	// not there, a file that is not a recording.
	_, errOut, code = execute("replay", arn+"x", "--endpoint", url)
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "no execution "+arn+"x at "+url)
	_, errOut, code = execute("test", "--record", arn, "--endpoint", "http://127.0.0.1:1", "--out", file)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "no server answers at http://127.0.0.1:1")
	notOne := filepath.Join(dir, "not.json")
	require.NoError(t, os.WriteFile(notOne, []byte(`{"hello": 1}`), 0o644))
	_, errOut, code = execute("replay", "--recording", notOne)
	require.Equal(t, 2, code)
	require.Contains(t, errOut, notOne+" is not a recording")
	_, errOut, code = execute("replay", "--recording", file, "--endpoint", url)
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "not both")
}

// A redriven execution is recorded as its latest run ended, by default,
// or as the run --record-run names; the output and the case's name say
// which run. The latest run's recording passes as a test: the job that
// failed, then succeeded once mended, answers with its success.
func TestRecordARedrivenExecution(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mended := filepath.Join(dir, "mended")
	srv := servertest.New(t, servertest.WithConfig(func(c *config.Serve) {
		c.Integrations.Functions = map[string]string{"job": `if [ -f ` + mended + ` ]; then echo '{"rows": 20}'; ` +
			`else echo '{"errorType": "JobFailed", "errorMessage": "broken"}'; exit 1; fi`}
	}))
	ctx := context.Background()
	c, err := apiClient(ctx, srv.URL)
	require.NoError(t, err)
	sm, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("night"), RoleArn: aws.String("arn:aws:iam::123456789012:role/r"),
		Definition: aws.String(`{"StartAt": "Extract", "States": {
			"Extract": {"Type": "Pass", "Result": {"rows": 1}, "ResultPath": "$.extract", "Next": "Job"},
			"Job": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "Parameters": {"FunctionName": "job"},
				"ResultSelector": {"rows.$": "$.Payload.rows"}, "End": true}}}`)})
	require.NoError(t, err)
	x, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: sm.StateMachineArn, Name: aws.String("night-1")})
	require.NoError(t, err)
	status := func() string {
		d, err := c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: x.ExecutionArn})
		require.NoError(t, err)
		return string(d.Status)
	}
	testwait.Until(t, func() bool { return status() == "FAILED" }, 30*time.Second, 20*time.Millisecond, "the first run fails")
	require.NoError(t, os.WriteFile(mended, nil, 0o644))
	_, err = c.RedriveExecution(ctx, &sfn.RedriveExecutionInput{ExecutionArn: x.ExecutionArn})
	require.NoError(t, err)
	testwait.Until(t, func() bool { return status() == "SUCCEEDED" }, 30*time.Second, 20*time.Millisecond, "the redriven run succeeds")
	arn := aws.ToString(x.ExecutionArn)

	latest := filepath.Join(dir, "latest.test.json")
	_, errOut, code := execute("test", "--record", arn, "--endpoint", srv.URL, "--out", latest)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, errOut, "recorded "+arn+" (run 2 of 2) in "+latest)
	data, err := os.ReadFile(latest)
	require.NoError(t, err)
	require.Contains(t, string(data), `"name": "night-1, run 2 of 2"`)
	require.Contains(t, string(data), `"status": "SUCCEEDED"`)
	require.NotContains(t, string(data), "JobFailed", "the failure the redrive ran again is not recorded")
	out, errOut, code := execute("test", latest)
	require.Equal(t, 0, code, out+errOut)
	require.Contains(t, out, "1 passed, 0 failed")

	first := filepath.Join(dir, "first.test.json")
	_, errOut, code = execute("test", "--record", arn, "--endpoint", srv.URL, "--out", first, "--record-run", "1")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, errOut, "(run 1 of 2)")
	data, err = os.ReadFile(first)
	require.NoError(t, err)
	require.Contains(t, string(data), `"name": "night-1, run 1 of 2"`)
	require.Contains(t, string(data), `"error": "JobFailed"`)
	out, errOut, code = execute("test", first)
	require.Equal(t, 0, code, out+errOut)

	_, errOut, code = execute("test", "--record", arn, "--endpoint", srv.URL, "--out", first, "--record-run", "3")
	require.NotEqual(t, 0, code)
	require.Contains(t, errOut, "the execution has 2 run(s): there is no run 3")
}
