package lambda_test

import (
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/history"
	"stepwise/jsonvalue"
)

// A handler's boto3 reaches the server that invoked it with nothing
// exported: AWS_ENDPOINT_URL_SFN is the server, with credentials it
// takes; the handler sees Lambda's variables.
func TestHandlerCallsTheServerBack(t *testing.T) {
	t.Parallel()
	needs(t, "python3")
	if err := exec.Command("python3", "-c", "import boto3").Run(); err != nil {
		t.Skip("boto3 is not installed")
	}
	dir := handlerDir(t, map[string]string{"app.py": `
import os, json, boto3, time, threading
def handler(event, context):
    keys = ["AWS_EXECUTION_ENV", "TZ", "AWS_LAMBDA_FUNCTION_NAME", "AWS_REGION", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "LAMBDA_TASK_ROOT", "_HANDLER"]
    env = {k: os.environ.get(k) for k in keys}
    env["offset"] = time.strftime("%z")
    client = boto3.client("stepfunctions")
    # Sent once the invoke returned, as a job started by the function would.
    threading.Thread(target=lambda: (time.sleep(0.2), client.send_task_success(taskToken=event["token"], output=json.dumps(env)))).start()
    return "started"
`})
	reg := localRegistry(t, map[string]string{"back": "python:" + dir + ":app.handler"}, 0)
	row := execute(t, reg, `{
		"StartAt": "Wait",
		"States": {
			"Wait": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke.waitForTaskToken",
				"Parameters": {"FunctionName": "back", "Payload": {"token.$": "$$.Task.Token"}},
				"TimeoutSeconds": 60, "End": true}
		}}`, `{}`)
	require.Equal(t, history.StatusSucceeded, row.Status, "%+v", row)
	out, err := jsonvalue.ParseString(*row.Output)
	require.NoError(t, err)
	require.Equal(t, "AWS_Lambda_python3", get(t, out, "AWS_EXECUTION_ENV"))
	require.Equal(t, ":UTC", get(t, out, "TZ"))
	require.Equal(t, "+0000", get(t, out, "offset"))
	require.Equal(t, "back", get(t, out, "AWS_LAMBDA_FUNCTION_NAME"))
	require.Equal(t, "us-east-1", get(t, out, "AWS_REGION"))
	require.Equal(t, "128", get(t, out, "AWS_LAMBDA_FUNCTION_MEMORY_SIZE"))
	require.Equal(t, "app.handler", get(t, out, "_HANDLER"))
	require.NotEmpty(t, get(t, out, "LAMBDA_TASK_ROOT"))
}
