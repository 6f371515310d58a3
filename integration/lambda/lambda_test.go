package lambda_test

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awslambda "github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/stretchr/testify/require"

	"stepwise/engine/task"
	"stepwise/failure"
	"stepwise/integration"
	"stepwise/integration/integrationtest"
	_ "stepwise/integration/lambda"
	"stepwise/internal/testkit/testwait"
	"stepwise/interp"
	"stepwise/jsonvalue"
)

// run carries out one task through the registry and waits for its result.
func run(t *testing.T, reg *integration.Registry, resource, params string) task.Result {
	t.Helper()
	p, err := jsonvalue.ParseString(params)
	require.NoError(t, err)
	ch := make(chan task.Result, 1)
	reg.Run(context.Background(), &task.Task{ExecutionArn: "arn:x", ID: "t1", Request: &interp.TaskRequest{Resource: resource, Parameters: p}},
		func(r task.Result) { ch <- r })
	select {
	case r := <-ch:
		return r
	case <-time.After(60 * time.Second):
		t.Fatal("no result")
		return task.Result{}
	}
}

// createFunction creates a Python function on the stand-in.
func createFunction(t testing.TB, client *awslambda.Client, name, source string) string {
	t.Helper()
	var zipped bytes.Buffer
	zw := zip.NewWriter(&zipped)
	w, err := zw.Create("handler.py")
	require.NoError(t, err)
	_, err = w.Write([]byte(source))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	out, err := client.CreateFunction(context.Background(), &awslambda.CreateFunctionInput{
		FunctionName: aws.String(name), Runtime: types.RuntimePython312, Handler: aws.String("handler.handler"),
		Role: aws.String("arn:aws:iam::123456789012:role/lambda"), Code: &types.FunctionCode{ZipFile: zipped.Bytes()},
	})
	var conflict *types.ResourceConflictException
	if errors.As(err, &conflict) {
		// The SDK sent the call again after an answer was lost on a
		// loaded machine: the first one created the function.
		got, err := client.GetFunction(context.Background(), &awslambda.GetFunctionInput{FunctionName: aws.String(name)})
		require.NoError(t, err)
		return aws.ToString(got.Configuration.FunctionArn)
	}
	require.NoError(t, err)
	return aws.ToString(out.FunctionArn)
}

func get(t *testing.T, v any, path ...string) any {
	t.Helper()
	for _, k := range path {
		obj, ok := v.(*jsonvalue.Object)
		require.True(t, ok, "%s of %s", k, jsonvalue.String(v))
		v, ok = obj.Get(k)
		require.True(t, ok, "%s of %s", k, jsonvalue.String(obj))
	}
	return v
}

// The optimized integration and the function ARN resource invoke through
// the Lambda API (here the conformance runner's stand-in): lambda:invoke
// answers AWS's envelope, a function ARN the payload itself; a function
// error is named after its errorType with the payload as the cause; a
// missing function is Lambda.ResourceNotFoundException.
func TestInvokeThroughTheLambdaAPI(t *testing.T) {
	t.Parallel()
	url := integrationtest.LambdaStandIn(t)
	cfg := integration.Config{Region: "us-east-1", Account: "123456789012", Endpoints: map[string]string{"lambda": url}}
	reg, err := integration.New(cfg)
	require.NoError(t, err)
	awsCfg, _, err := cfg.AWSConfig(context.Background(), "lambda")
	require.NoError(t, err)
	client := awslambda.NewFromConfig(awsCfg, func(o *awslambda.Options) { o.BaseEndpoint = aws.String(url) })
	echo := createFunction(t, client, "echo", "def handler(event, context):\n    return {'got': event}\n")
	createFunction(t, client, "boom", "class AccountAlreadyExistsException(Exception):\n    pass\n\ndef handler(event, context):\n    raise AccountAlreadyExistsException('taken')\n")

	res := run(t, reg, "arn:aws:states:::lambda:invoke", `{"FunctionName": "echo", "Payload": {"n": 1}}`)
	require.Nil(t, res.Failure)
	require.Equal(t, `{"got":{"n":1}}`, jsonvalue.String(get(t, res.Output, "Payload")))
	require.Equal(t, jsonvalue.NumberFromInt(200), get(t, res.Output, "StatusCode"))
	require.Equal(t, "$LATEST", get(t, res.Output, "ExecutedVersion"))
	require.Equal(t, jsonvalue.NumberFromInt(200), get(t, res.Output, "SdkHttpMetadata", "HttpStatusCode"))

	res = run(t, reg, "arn:aws:states:::lambda:invoke", `{"FunctionName": "echo", "Payload": null}`)
	require.Nil(t, res.Failure)
	require.Equal(t, `{"got":{}}`, jsonvalue.String(get(t, res.Output, "Payload")), "a null payload is no payload")

	res = run(t, reg, echo, `{"n": 2}`)
	require.Nil(t, res.Failure)
	require.Equal(t, `{"got":{"n":2}}`, jsonvalue.String(res.Output), "a function ARN's result is the payload")

	res = run(t, reg, "arn:aws:states:::lambda:invoke", `{"FunctionName": "boom", "Payload": {}}`)
	require.NotNil(t, res.Failure)
	require.Equal(t, "AccountAlreadyExistsException", res.Failure.Name)
	require.Contains(t, res.Failure.Cause, `"errorMessage": "taken"`)

	res = run(t, reg, "arn:aws:states:::lambda:invoke", `{"FunctionName": "nope"}`)
	require.NotNil(t, res.Failure)
	require.Equal(t, "Lambda.ResourceNotFoundException", res.Failure.Name)
	require.Regexp(t, `\(Service: AWSLambda; Status Code: 404; Error Code: ResourceNotFoundException; Request ID: .*; Proxy: null\)$`, res.Failure.Cause)

	res = run(t, reg, "arn:aws:states:::lambda:invoke", `{"Payload": {}}`)
	require.Equal(t, failure.TaskFailed, res.Failure.Name)
	require.Equal(t, "The field 'FunctionName' is required but was missing", res.Failure.Cause)
	res = run(t, reg, "arn:aws:states:::lambda:invoke", `{"FunctionName": "echo", "Qualifier": 3}`)
	require.Equal(t, "The field 'Qualifier' must be a string, not number", res.Failure.Cause)
	res = run(t, reg, "arn:aws:states:::lambda:invoke", `{"FunctionName": "echo", "Payloads": {}}`)
	require.Contains(t, res.Failure.Cause, "The field 'Payloads' is not supported by lambda:invoke")
}

// A Lambda endpoint that refuses connections fails the task as
// Lambda.SdkClientException, never hangs.
func TestInvokeEndpointRefused(t *testing.T) {
	t.Parallel()
	reg, err := integration.New(integration.Config{Region: "us-east-1", Account: "123456789012", Endpoints: map[string]string{"lambda": "http://127.0.0.1:1"}})
	require.NoError(t, err)
	res := run(t, reg, "arn:aws:states:::lambda:invoke", `{"FunctionName": "f"}`)
	require.NotNil(t, res.Failure)
	require.Equal(t, "Lambda.SdkClientException", res.Failure.Name)
}

func localRegistry(t *testing.T, fns map[string]string, limit int) *integration.Registry {
	t.Helper()
	reg, err := integration.New(integration.Config{Region: "us-east-1", Account: "123456789012", Functions: fns, PayloadLimit: limit,
		Endpoints: map[string]string{"lambda": "http://127.0.0.1:1"}})
	require.NoError(t, err)
	return reg
}

// Local functions answer as Lambda does, by name, partial or full ARN.
func TestLocalFunctions(t *testing.T) {
	t.Parallel()
	reg := localRegistry(t, map[string]string{
		"echo":    "cat",
		"fail":    `echo '{"errorType": "JobFailed", "errorMessage": "disk full"}'; exit 3`,
		"crash":   `echo "segfault somewhere" >&2; exit 2`,
		"garbage": `echo 'not json at all'`,
		"big":     `head -c 5000 /dev/zero | tr '\0' 'x'`,
		"env":     `printf '"%s"' "$AWS_LAMBDA_FUNCTION_NAME"`,
	}, 1000)

	res := run(t, reg, "arn:aws:states:::lambda:invoke", `{"FunctionName": "echo", "Payload": {"a": [1, "two"]}}`)
	require.Nil(t, res.Failure)
	require.Equal(t, `{"a":[1,"two"]}`, jsonvalue.String(get(t, res.Output, "Payload")))
	require.Equal(t, jsonvalue.NumberFromInt(200), get(t, res.Output, "StatusCode"))
	require.NotEmpty(t, get(t, res.Output, "SdkResponseMetadata", "RequestId"))

	for _, ident := range []string{"echo:prod", "123456789012:function:echo", "arn:aws:lambda:us-east-1:123456789012:function:echo:$LATEST"} {
		res = run(t, reg, "arn:aws:states:::lambda:invoke", `{"FunctionName": "`+ident+`", "Payload": 7}`)
		require.Nil(t, res.Failure, ident)
		require.Equal(t, jsonvalue.NumberFromInt(7), get(t, res.Output, "Payload"), ident)
	}
	res = run(t, reg, "arn:aws:lambda:us-east-1:123456789012:function:echo", `{"x": true}`)
	require.Equal(t, `{"x":true}`, jsonvalue.String(res.Output))
	res = run(t, reg, "arn:aws:states:::lambda:invoke", `{"FunctionName": "echo"}`)
	require.Equal(t, `{}`, jsonvalue.String(get(t, res.Output, "Payload")), "no payload is the event {}")

	res = run(t, reg, "arn:aws:states:::lambda:invoke", `{"FunctionName": "fail"}`)
	require.Equal(t, "JobFailed", res.Failure.Name)
	require.JSONEq(t, `{"errorType": "JobFailed", "errorMessage": "disk full"}`, res.Failure.Cause)

	res = run(t, reg, "arn:aws:states:::lambda:invoke", `{"FunctionName": "crash"}`)
	require.Equal(t, "Runtime.ExitError", res.Failure.Name)
	require.Contains(t, res.Failure.Cause, "exit status 2")
	require.Contains(t, res.Failure.Cause, "segfault somewhere")

	res = run(t, reg, "arn:aws:states:::lambda:invoke", `{"FunctionName": "garbage"}`)
	require.Equal(t, "Runtime.MarshalError", res.Failure.Name)
	require.Contains(t, res.Failure.Cause, "not json at all")

	res = run(t, reg, "arn:aws:states:::lambda:invoke", `{"FunctionName": "big"}`)
	require.Nil(t, res.Failure)
	payload, _ := get(t, res.Output, "Payload").(string)
	require.Len(t, payload, 1001, "output is kept up to one byte over the limit: the task then fails with States.DataLimitExceeded")

	res = run(t, reg, "arn:aws:states:::lambda:invoke", `{"FunctionName": "env"}`)
	require.Equal(t, "env", get(t, res.Output, "Payload"))

	res = run(t, reg, "arn:aws:states:::lambda:invoke", `{"FunctionName": "other"}`)
	require.Equal(t, "Lambda.SdkClientException", res.Failure.Name, "a function with no local command goes to the Lambda API")
}

// A local function whose task ends first (a Parallel's branch failed
// beside it, the execution was stopped) runs on to its end, as an invoke
// already sent to Lambda does: the task gives up at once, the result is
// dropped; what the command left running once it exited is killed.
func TestLocalFunctionRunsOnWhenTheTaskEnds(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	done, child := dir+"/done", dir+"/child"
	reg := localRegistry(t, map[string]string{"slow": `(sleep 3; touch ` + child + `) & sleep 1; touch ` + done}, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := reg.Invoke(ctx, "arn:aws:states:::lambda:invoke", jsonvalue.FromGo(map[string]any{"FunctionName": "slow"}))
	require.ErrorContains(t, err, context.DeadlineExceeded.Error())
	require.Less(t, time.Since(start), 900*time.Millisecond, "the task gave up at once")
	require.NoFileExists(t, done)
	testwait.Until(t, func() bool { _, err := os.Stat(done); return err == nil }, 10*time.Second, 20*time.Millisecond,
		"the invoke ran on to its end")
	time.Sleep(3500 * time.Millisecond)
	require.NoFileExists(t, child, "what the command left running was killed when it exited")
}

func TestLocalFunctionNames(t *testing.T) {
	t.Parallel()
	_, err := integration.New(integration.Config{Functions: map[string]string{"a:b": "cat"}})
	require.ErrorContains(t, err, "a function name has no ':'")
	_, err = integration.New(integration.Config{Functions: map[string]string{"a": " "}})
	require.ErrorContains(t, err, "no command")
}

// An operator's kill (Registry.Kill) stops a local function's process,
// where a cancel lets an invoke already handed over run to its end.
func TestLocalFunctionKilledByAnOperator(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pidFile, done := dir+"/pid", dir+"/done"
	reg := localRegistry(t, map[string]string{"slow": `echo $$ > ` + pidFile + `; sleep 5; touch ` + done}, 0)
	results := make(chan task.Result, 1)
	reg.Run(context.Background(), &task.Task{ExecutionArn: "arn:x", ID: "k1", Request: &interp.TaskRequest{
		Resource: "arn:aws:states:::lambda:invoke", Parameters: jsonvalue.FromGo(map[string]any{"FunctionName": "slow"})}},
		func(r task.Result) { results <- r })
	var pid int
	testwait.Until(t, func() bool {
		b, err := os.ReadFile(pidFile)
		if err != nil {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil
	}, 10*time.Second, 20*time.Millisecond, "the function started")
	reg.Kill("arn:x", "k1")
	testwait.Until(t, func() bool { return syscall.Kill(pid, 0) != nil }, 5*time.Second, 20*time.Millisecond,
		"the killed function's process is gone")
	time.Sleep(200 * time.Millisecond)
	require.NoFileExists(t, done)
}
