package lambda_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/engine/task"
	"stepwise/failure"
	"stepwise/history"
	"stepwise/integration"
	"stepwise/integration/lambda"
	"stepwise/internal/testkit/slowtest"
	"stepwise/internal/testkit/testwait"
	"stepwise/jsonvalue"
	"stepwise/server"
	"stepwise/server/servertest"
	"stepwise/service"
	"stepwise/store"
)

// needs skips the test unless the slow suite runs (it starts the host's
// python3 or node) and the runtime is installed.
func needs(t *testing.T, program string) {
	t.Helper()
	slowtest.Require(t, "handlers run with the host's "+program)
	if _, err := exec.LookPath(program); err != nil {
		t.Skipf("%s is not installed: the %s handlers run with the host's %s", program, program, program)
	}
}

// handlerDir writes files (name → source) to a new folder.
func handlerDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, src := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644))
	}
	return dir
}

const pyHandlers = `
import os

calls = 0

class MyCustomError(Exception):
    pass

def hello(event, context):
    global calls
    calls += 1
    print("printed lines go to the log, not the answer")
    return {
        "hello": event.get("name"),
        "calls": calls,
        "function": context.function_name,
        "arn": context.invoked_function_arn,
        "request": context.aws_request_id,
        "memory": context.memory_limit_in_mb,
        "remaining": context.get_remaining_time_in_millis(),
        "env": os.environ.get("AWS_LAMBDA_FUNCTION_NAME"),
    }

def fail(event, context):
    raise MyCustomError("the order " + str(event["order"]) + " is gone")

def slow(event, context):
    import time
    time.sleep(30)
`

// A Python handler answers with its value and the Lambda context; the
// process stays warm between invokes (a module-level counter goes on).
func TestPythonHandler(t *testing.T) {
	t.Parallel()
	needs(t, "python3")
	dir := handlerDir(t, map[string]string{"app.py": pyHandlers})
	reg := localRegistry(t, map[string]string{"hello": "python:" + dir + ":app.hello"}, 0)

	res := run(t, reg, "arn:aws:states:::lambda:invoke", `{"FunctionName": "hello", "Payload": {"name": "Ada"}}`)
	require.Nil(t, res.Failure)
	payload := get(t, res.Output, "Payload")
	require.Equal(t, "Ada", get(t, payload, "hello"))
	require.Equal(t, jsonvalue.NumberFromInt(1), get(t, payload, "calls"))
	require.Equal(t, "hello", get(t, payload, "function"))
	require.Equal(t, "hello", get(t, payload, "env"))
	require.Equal(t, "arn:aws:lambda:us-east-1:123456789012:function:hello", get(t, payload, "arn"))
	require.Equal(t, "128", get(t, payload, "memory"))
	require.Equal(t, get(t, res.Output, "SdkResponseMetadata", "RequestId"), get(t, payload, "request"))
	remaining, ok := get(t, payload, "remaining").(jsonvalue.Number).Int64()
	require.True(t, ok)
	require.True(t, remaining > 3000 && remaining <= 15*60*1000, "the remaining time counts down from the default of 15 minutes: %d", remaining)

	res = run(t, reg, "arn:aws:lambda:us-east-1:123456789012:function:hello", `{"name": "Grace"}`)
	require.Nil(t, res.Failure)
	require.Equal(t, "Grace", get(t, res.Output, "hello"))
	require.Equal(t, jsonvalue.NumberFromInt(2), get(t, res.Output, "calls"), "the handler was imported once: its module is warm")
}

// A Node.js handler, async or callback-style, answers with its value.
func TestNodeHandler(t *testing.T) {
	t.Parallel()
	needs(t, "node")
	dir := handlerDir(t, map[string]string{"index.js": `
let calls = 0;
exports.handler = async (event, context) => {
  calls++;
  console.log('printed lines go to the log');
  process.stdout.write('and so do writes to stdout\n');
  return { hello: event.name, calls, function: context.functionName, request: context.awsRequestId,
    remaining: context.getRemainingTimeInMillis() };
};
exports.callback = (event, context, callback) => { setTimeout(() => callback(null, { doubled: event.n * 2 }), 10); };
class OrderGone extends Error { constructor(m) { super(m); this.name = 'OrderGone'; } }
exports.fail = async () => { throw new OrderGone('the order is gone'); };
exports.text = async () => { throw 'plain text'; };
`})
	reg := localRegistry(t, map[string]string{
		"hello": "node:" + dir + ":index.handler",
		"cb":    "node:" + dir + ":index.callback",
		"fail":  "node:" + dir + ":index.fail",
		"text":  "node:" + dir + ":index.text",
	}, 0)
	for i := 1; i <= 2; i++ {
		res := run(t, reg, "arn:aws:states:::lambda:invoke", `{"FunctionName": "hello", "Payload": {"name": "Ada"}}`)
		require.Nil(t, res.Failure)
		payload := get(t, res.Output, "Payload")
		require.Equal(t, "Ada", get(t, payload, "hello"))
		require.Equal(t, jsonvalue.NumberFromInt(int64(i)), get(t, payload, "calls"))
		require.Equal(t, "hello", get(t, payload, "function"))
		require.Equal(t, get(t, res.Output, "SdkResponseMetadata", "RequestId"), get(t, payload, "request"))
	}
	res := run(t, reg, "arn:aws:lambda:us-east-1:123456789012:function:cb", `{"n": 21}`)
	require.Nil(t, res.Failure)
	require.Equal(t, `{"doubled":42}`, jsonvalue.String(res.Output))

	res = run(t, reg, "arn:aws:lambda:us-east-1:123456789012:function:fail", `{}`)
	require.NotNil(t, res.Failure)
	require.Equal(t, "OrderGone", res.Failure.Name)
	require.Contains(t, res.Failure.Cause, `"errorMessage":"the order is gone"`)
	require.Contains(t, res.Failure.Cause, `"trace":["OrderGone: the order is gone"`, "Node.js runtimes name the stack trace 'trace'")

	res = run(t, reg, "arn:aws:lambda:us-east-1:123456789012:function:text", `{}`)
	require.Equal(t, "string", res.Failure.Name, "a thrown value that is no Error is named by its type")
	require.JSONEq(t, `{"errorType": "string", "errorMessage": "plain text", "trace": []}`, res.Failure.Cause)
}

// A handler that runs past its timeout fails as Lambda's do, and the
// next invoke gets a fresh process.
func TestHandlerTimeout(t *testing.T) {
	t.Parallel()
	needs(t, "python3")
	dir := handlerDir(t, map[string]string{"app.py": pyHandlers})
	reg := localRegistry(t, map[string]string{"slow": "python:" + dir + ":app.slow@3s", "hello": "python:" + dir + ":app.hello"}, 0)
	start := time.Now()
	res := run(t, reg, "arn:aws:states:::lambda:invoke", `{"FunctionName": "slow"}`)
	require.NotNil(t, res.Failure)
	require.Equal(t, "Sandbox.Timedout", res.Failure.Name)
	require.Contains(t, res.Failure.Cause, "Task timed out after 3.00 seconds")
	require.Less(t, time.Since(start), 25*time.Second, "the handler was stopped at its timeout, not waited for")

	res = run(t, reg, "arn:aws:states:::lambda:invoke", `{"FunctionName": "hello"}`)
	require.Nil(t, res.Failure)
}

// The shim's warm process is started again after a timeout: a module
// counter starts over.
func TestHandlerRestartedAfterTimeout(t *testing.T) {
	t.Parallel()
	needs(t, "python3")
	dir := handlerDir(t, map[string]string{"app.py": `
import time
calls = 0
def handler(event, context):
    global calls
    calls += 1
    if event.get("sleep"):
        time.sleep(30)
    return calls
`})
	reg := localRegistry(t, map[string]string{"f": "python:" + dir + ":app.handler@2s"}, 0)
	res := run(t, reg, "arn:aws:lambda:us-east-1:123456789012:function:f", `{}`)
	require.Equal(t, jsonvalue.NumberFromInt(1), res.Output)
	res = run(t, reg, "arn:aws:lambda:us-east-1:123456789012:function:f", `{"sleep": true}`)
	require.Equal(t, "Sandbox.Timedout", res.Failure.Name)
	res = run(t, reg, "arn:aws:lambda:us-east-1:123456789012:function:f", `{}`)
	require.Equal(t, jsonvalue.NumberFromInt(1), res.Output, "a new process imported the handler again")
}

// Bad handler specs are refused with the reason; a handler that cannot be
// imported fails its invoke as Lambda's runtime does.
func TestHandlerSpecs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for spec, want := range map[string]string{
		"python:" + dir:                    "give a handler as python:DIR:module.function",
		"python:" + dir + ":nodot":         `handler "nodot": give it as module.function`,
		"node:" + dir + ":index.":          "give it as file.function",
		"python:/no/such/folder:app.h":     "the handler's folder",
		"node:" + dir + "/missing:index.h": "no such file or directory",
		"python:" + dir + ":app.h@soon":    `timeout "soon": a positive duration such as 900s, 15m or 2h`,
		"python:" + dir + ":app.h@0s":      `timeout "0s": a positive duration`,
	} {
		_, err := integration.New(integration.Config{Functions: map[string]string{"f": spec}})
		require.ErrorContains(t, err, "local function f: ", spec)
		require.ErrorContains(t, err, want, spec)
	}
	needs(t, "python3")
	reg := localRegistry(t, map[string]string{"f": "python:" + dir + ":absent.handler"}, 0)
	res := run(t, reg, "arn:aws:lambda:us-east-1:123456789012:function:f", `{}`)
	require.Equal(t, "Runtime.ImportModuleError", res.Failure.Name)
	require.Contains(t, res.Failure.Cause, "Unable to import module 'absent'")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "broken.py"), []byte("def handler(:\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "empty.py"), []byte("x = 1\n"), 0o644))
	reg = localRegistry(t, map[string]string{"broken": "python:" + dir + ":broken.handler", "empty": "python:" + dir + ":empty.handler"}, 0)
	res = run(t, reg, "arn:aws:lambda:us-east-1:123456789012:function:broken", `{}`)
	require.Equal(t, "Runtime.UserCodeSyntaxError", res.Failure.Name)
	require.Contains(t, res.Failure.Cause, "Syntax error in module 'broken'")
	res = run(t, reg, "arn:aws:lambda:us-east-1:123456789012:function:empty", `{}`)
	require.Equal(t, "Runtime.HandlerNotFound", res.Failure.Name)
	require.Contains(t, res.Failure.Cause, "Handler 'handler' missing on module 'empty'")
}

// A custom exception raised by a Python handler is caught by its class
// name in a real execution.
func TestHandlerExceptionCaughtByName(t *testing.T) {
	t.Parallel()
	needs(t, "python3")
	dir := handlerDir(t, map[string]string{"app.py": pyHandlers})
	reg := localRegistry(t, map[string]string{"fail": "python:" + dir + ":app.fail"}, 0)
	row := execute(t, reg, `{
		"StartAt": "Ship",
		"States": {
			"Ship": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke",
				"Parameters": {"FunctionName": "fail", "Payload.$": "$"},
				"Catch": [
					{"ErrorEquals": ["SomethingElse"], "Next": "Wrong"},
					{"ErrorEquals": ["MyCustomError"], "ResultPath": "$.error", "Next": "Caught"}],
				"End": true},
			"Wrong": {"Type": "Fail", "Error": "Wrong"},
			"Caught": {"Type": "Pass", "End": true}
		}}`, `{"order": 42}`)
	require.Equal(t, history.StatusSucceeded, row.Status)
	out, err := jsonvalue.ParseString(*row.Output)
	require.NoError(t, err)
	require.Equal(t, "MyCustomError", get(t, out, "error", "Error"))
	cause, err := jsonvalue.ParseString(get(t, out, "error", "Cause").(string))
	require.NoError(t, err)
	require.Equal(t, "MyCustomError", get(t, cause, "errorType"))
	require.Equal(t, "the order 42 is gone", get(t, cause, "errorMessage"))
	require.Contains(t, jsonvalue.String(get(t, cause, "stackTrace")), `in fail`)
	require.NotEmpty(t, get(t, cause, "requestId"))
}

// A handler function added with its settings (as a template gives them)
// gets its environment, memory and timeout; a process that dies fails
// the invoke with Runtime.ExitError and the next invoke starts another.
func TestHandlerSettingsAndCrash(t *testing.T) {
	t.Parallel()
	needs(t, "python3")
	dir := handlerDir(t, map[string]string{"app.py": `
import os
calls = 0
def handler(event, context):
    global calls
    calls += 1
    if event.get("crash"):
        os._exit(7)
    if event.get("sleep"):
        import time
        time.sleep(30)
    return {"table": os.environ["TABLE"], "memory": context.memory_limit_in_mb,
            "remaining": context.get_remaining_time_in_millis(), "calls": calls}
`})
	local, err := lambda.NewLocal(nil, 0, nil)
	require.NoError(t, err)
	require.NoError(t, local.AddHandler("orders", &lambda.Handler{Runtime: lambda.RuntimePython, Dir: dir, Name: "app.handler",
		Timeout: 10 * time.Second, MemoryMB: 512, Env: map[string]string{"TABLE": "Orders"}}))
	require.ErrorContains(t, local.AddHandler("orders", &lambda.Handler{Runtime: lambda.RuntimePython, Dir: dir, Name: "app.handler"}), "given twice")
	require.ErrorContains(t, local.AddHandler("ruby", &lambda.Handler{Runtime: "ruby", Dir: dir, Name: "app.handler"}), `runtime "ruby": the runtimes are python, node and provided`)
	t.Cleanup(local.Close)
	fn := local.Lookup("orders")
	call := func(event string) (any, error) {
		p, err := jsonvalue.ParseString(event)
		require.NoError(t, err)
		return lambda.InvokeLocal(context.Background(), fn, "arn:aws:lambda:us-east-1:123456789012:function:orders", p)
	}
	out, err := call(`{}`)
	require.NoError(t, err)
	require.Equal(t, "Orders", get(t, out, "table"))
	require.Equal(t, "512", get(t, out, "memory"))
	remaining, _ := get(t, out, "remaining").(jsonvalue.Number).Int64()
	require.Greater(t, remaining, int64(3000), "the remaining time counts down from the function's own timeout")

	_, err = call(`{"crash": true}`)
	var f *failure.Failure
	require.ErrorAs(t, err, &f)
	require.Equal(t, "Runtime.ExitError", f.Name)
	require.Contains(t, f.Cause, "exit status 7")
	out, err = call(`{}`)
	require.NoError(t, err)
	require.Equal(t, jsonvalue.NumberFromInt(1), get(t, out, "calls"), "a new process after the crash")

	fn.Handler.Timeout = time.Second
	_, err = call(`{"sleep": true}`)
	require.ErrorAs(t, err, &f)
	require.Equal(t, "Sandbox.Timedout", f.Name)
	require.Contains(t, f.Cause, "Task timed out after 1.00 seconds")
}

// An edit to the handler's code, in a module of a sub-folder too, is
// seen soon after: a cold start imports it again.
func TestHandlerColdStartOnChange(t *testing.T) {
	t.Parallel()
	needs(t, "python3")
	dir := handlerDir(t, map[string]string{"app.py": "from lib import helper\ndef handler(event, context):\n    return helper.value()\n"})
	require.NoError(t, os.Mkdir(filepath.Join(dir, "lib"), 0o755))
	path := filepath.Join(dir, "lib", "helper.py")
	require.NoError(t, os.WriteFile(path, []byte("def value():\n    return 'first'\n"), 0o644))
	reg := localRegistry(t, map[string]string{"f": "python:" + dir + ":app.handler"}, 0)
	res := run(t, reg, "arn:aws:lambda:us-east-1:123456789012:function:f", `{}`)
	require.Equal(t, "first", res.Output)
	require.NoError(t, os.WriteFile(path, []byte("def value():\n    return 'second'\n"), 0o644))
	later := time.Now().Add(time.Minute)
	require.NoError(t, os.Chtimes(path, later, later))
	// The code is looked at once a second at most: an invoke within it
	// may still run the old code.
	testwait.Until(t, func() bool {
		res = run(t, reg, "arn:aws:lambda:us-east-1:123456789012:function:f", `{}`)
		require.Nil(t, res.Failure)
		return res.Output == "second"
	}, 20*time.Second, 100*time.Millisecond, "the edited handler never ran")
}

// Invokes at the same time run side by side, each on a process of its
// own, as Lambda's instances do; an idle process serves the next invoke.
func TestHandlerInvokesSideBySide(t *testing.T) {
	t.Parallel()
	needs(t, "python3")
	dir := handlerDir(t, map[string]string{"app.py": `
import os, time
def handler(event, context):
    if event.get("wait"):
        # Both invokes are in at once: each waits for the other's mark.
        open(event["mine"], "w").close()
        deadline = time.time() + 2.5
        while not os.path.exists(event["theirs"]) and time.time() < deadline:
            time.sleep(0.01)
        return os.path.exists(event["theirs"])
    return True
`})
	reg := localRegistry(t, map[string]string{"f": "python:" + dir + ":app.handler"}, 0)
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	first := make(chan task.Result, 1)
	go func() {
		first <- run(t, reg, "arn:aws:lambda:us-east-1:123456789012:function:f", `{"wait": true, "mine": "`+a+`", "theirs": "`+b+`"}`)
	}()
	res := run(t, reg, "arn:aws:lambda:us-east-1:123456789012:function:f", `{"wait": true, "mine": "`+b+`", "theirs": "`+a+`"}`)
	require.Equal(t, true, res.Output, "the second invoke saw the first one running")
	require.Equal(t, true, (<-first).Output, "the first invoke saw the second one running")
}

// execute runs a state machine's execution with the registry's tasks and
// returns it ended.
func execute(t *testing.T, reg *integration.Registry, definition, input string) *store.Execution {
	t.Helper()
	ctx := context.Background()
	s := servertest.New(t, servertest.WithOptions(server.WithTasks(reg)))
	svc, drv := s.Service(), s.Store()
	sm, err := svc.CreateStateMachine(ctx, &service.CreateStateMachineInput{
		Name: "orders", RoleArn: "arn:aws:iam::123456789012:role/r", Definition: definition,
	})
	require.NoError(t, err)
	name := "first"
	started, err := svc.StartExecution(ctx, &service.StartExecutionInput{StateMachineArn: sm.StateMachineArn, Name: &name, Input: &input})
	require.NoError(t, err)
	var row *store.Execution
	testwait.Until(t, func() bool {
		row, err = drv.Executor().ExecutionGet(ctx, started.ExecutionArn)
		if errors.Is(err, store.ErrNotFound) {
			return false
		}
		require.NoError(t, err)
		return row.Status != history.StatusRunning
	}, 30*time.Second, 5*time.Millisecond, "the execution never ended")
	return row
}
