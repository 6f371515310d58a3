package awsjson_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/stretchr/testify/require"

	"stepwise/awsjson"
	"stepwise/engine"
	"stepwise/engine/task"
	"stepwise/internal/security/sigv4auth"
	"stepwise/internal/testkit/testwait"
	"stepwise/service"
	"stepwise/store/sqlitestore"
)

// waitingTasks is a task runner whose tasks never end by themselves.
type waitingTasks struct {
	mu      sync.Mutex
	pending map[string]bool
}

func (w *waitingTasks) Run(_ context.Context, t *task.Task, _ func(task.Result)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pending[t.ExecutionArn+"/"+t.ID] = true
}

func (w *waitingTasks) Cancel(arn, id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.pending, arn+"/"+id)
}

func (w *waitingTasks) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.pending)
}

// operatorServer is the API of a real engine over a SQLite file, behind
// SigV4 authentication with one key (AKIDOPS) when signed is set.
func operatorServer(t *testing.T, signed bool) (*httptest.Server, *waitingTasks) {
	t.Helper()
	ctx := context.Background()
	drv, err := sqlitestore.Open(ctx, filepath.Join(t.TempDir(), "s.db"), sqlitestore.Options{})
	require.NoError(t, err)
	tasks := &waitingTasks{pending: map[string]bool{}}
	e, err := engine.New(drv, engine.Config{Region: "us-east-1", Account: "123456789012", Tasks: tasks, TokenKey: []byte("key"), WaitTimeScale: 1})
	require.NoError(t, err)
	require.NoError(t, e.Start(ctx))
	<-e.Resumed()
	svc, err := service.New(drv, e, service.Config{})
	require.NoError(t, err)
	var h http.Handler = awsjson.New(svc, nil)
	if signed {
		v := sigv4auth.NewVerifier("states", func(id string) (string, bool) { return "secret", id == "AKIDOPS" })
		h = awsjson.RequireAuth(h, authFunc(func(r *http.Request, body []byte) error {
			_, err := v.Verify(r, body)
			return err
		}), nil)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() { srv.Close(); e.Stop(); drv.Close() })
	return srv, tasks
}

// post sends target with body, signed with AKIDOPS when sign is set.
func post(t *testing.T, srv *httptest.Server, target string, in any, sign bool) (int, map[string]any) {
	t.Helper()
	body, err := json.Marshal(in)
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", target)
	if sign {
		sum := sha256.Sum256(body)
		require.NoError(t, v4.NewSigner().SignHTTP(context.Background(), aws.Credentials{AccessKeyID: "AKIDOPS", SecretAccessKey: "secret"},
			req, hex.EncodeToString(sum[:]), "states", "us-east-1", time.Now()))
	}
	res, err := srv.Client().Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	var out map[string]any
	require.NoError(t, json.Unmarshal(data, &out), string(data))
	return res.StatusCode, out
}

const opsDefinition = `{"StartAt": "W", "States": {
	"W": {"Type": "Wait", "Seconds": 1, "Next": "T"},
	"T": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "End": true}}}`

// startOps makes a state machine of opsDefinition and starts it.
func startOps(t *testing.T, srv *httptest.Server, sign bool) (string, string) {
	t.Helper()
	status, sm := post(t, srv, "AWSStepFunctions.CreateStateMachine", map[string]any{"name": "net", "definition": opsDefinition, "roleArn": roleArn}, sign)
	require.Equal(t, http.StatusOK, status, sm)
	status, ex := post(t, srv, "AWSStepFunctions.StartExecution", map[string]any{"stateMachineArn": sm["stateMachineArn"]}, sign)
	require.Equal(t, http.StatusOK, status, ex)
	return sm["stateMachineArn"].(string), ex["executionArn"].(string)
}

// Stepwise's operations are served under their own prefix, signed as the
// Step Functions API is; the operator log names the signing key, never
// what the client says.
func TestStepwiseOperationsSigned(t *testing.T) {
	t.Parallel()
	srv, tasks := operatorServer(t, true)
	_, arn := startOps(t, srv, true)

	status, out := post(t, srv, "Stepwise.HoldState", map[string]any{"executionArn": arn, "state": "T", "by": "mallory"}, true)
	require.Equal(t, http.StatusOK, status, out)
	require.Equal(t, []any{arn}, out["executionArns"])
	time.Sleep(1500 * time.Millisecond) // the Wait ends; T is held
	require.Equal(t, 0, tasks.count())

	status, out = post(t, srv, "Stepwise.SuspendExecution", map[string]any{"executionArn": arn}, true)
	require.Equal(t, http.StatusOK, status, out)
	status, out = post(t, srv, "Stepwise.ResumeExecution", map[string]any{"executionArn": arn}, true)
	require.Equal(t, http.StatusOK, status, out)
	status, out = post(t, srv, "Stepwise.ReleaseState", map[string]any{"executionArn": arn, "state": "T"}, true)
	require.Equal(t, http.StatusOK, status, out)
	testwait.Until(t, func() bool { return tasks.count() == 1 }, 5*time.Second, 10*time.Millisecond, "T's task runs once released")
	status, out = post(t, srv, "Stepwise.KillState", map[string]any{"executionArn": arn, "state": "T", "error": "Ops.Stopped", "cause": "by hand"}, true)
	require.Equal(t, http.StatusOK, status, out)

	status, out = post(t, srv, "Stepwise.ListOperatorActions", map[string]any{"executionArn": arn}, true)
	require.Equal(t, http.StatusOK, status, out)
	acts := out["actions"].([]any)
	require.Len(t, acts, 5)
	var kinds []string
	for _, a := range acts {
		m := a.(map[string]any)
		require.Equal(t, "AKIDOPS", m["by"])
		kinds = append(kinds, m["action"].(string))
	}
	require.Equal(t, []string{"Hold", "Suspend", "Resume", "Release", "Kill"}, kinds)
	kill := acts[4].(map[string]any)
	require.Equal(t, "T", kill["state"])
	require.Equal(t, "Ops.Stopped", kill["error"])
	require.Equal(t, "by hand", kill["cause"])

	status, ex := post(t, srv, "AWSStepFunctions.DescribeExecution", map[string]any{"executionArn": arn}, true)
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "FAILED", ex["status"])
	require.Equal(t, "Ops.Stopped", ex["error"])
}

// Errors come in AWS's shape with the codes clients know; Stepwise's
// operations are not reachable under AWS's prefix, nor unsigned.
func TestStepwiseOperationsErrors(t *testing.T) {
	t.Parallel()
	srv, _ := operatorServer(t, true)
	smArn, arn := startOps(t, srv, true)
	gone := arn[:len(arn)-3] + "abc"
	for _, tc := range []struct {
		target string
		in     map[string]any
		sign   bool
		typ    string
	}{
		{"AWSStepFunctions.HoldState", map[string]any{"executionArn": arn, "state": "T"}, true, "com.amazon.coral.service#UnknownOperationException"},
		{"Stepwise.StartExecution", map[string]any{"stateMachineArn": smArn}, true, "com.amazon.coral.service#UnknownOperationException"},
		{"Stepwise.HoldState", map[string]any{"executionArn": arn, "state": "T"}, false, "com.amazon.coral.service#MissingAuthenticationTokenException"},
		{"Stepwise.HoldState", map[string]any{"executionArn": gone, "state": "T"}, true, "com.amazonaws.swf.service.v2.model#ExecutionDoesNotExist"},
		{"Stepwise.HoldState", map[string]any{"stateMachineArn": smArn + "x", "state": "T"}, true, "com.amazonaws.swf.service.v2.model#StateMachineDoesNotExist"},
		{"Stepwise.HoldState", map[string]any{"executionArn": arn}, true, "com.amazonaws.swf.service.v2.model#ValidationException"},
		{"Stepwise.HoldState", map[string]any{"executionArn": arn, "state": "Nope"}, true, "com.amazonaws.swf.service.v2.model#ValidationException"},
		{"Stepwise.SkipState", map[string]any{"executionArn": arn, "state": "T", "output": "{nope"}, true, "com.amazonaws.swf.service.v2.model#InvalidOutput"},
		{"Stepwise.SkipState", map[string]any{"executionArn": arn, "state": "W", "output": "{}"}, true, "com.amazonaws.swf.service.v2.model#ValidationException"},
		{"Stepwise.KillState", map[string]any{"executionArn": arn, "state": "T"}, true, "com.amazonaws.swf.service.v2.model#ValidationException"},
		{"Stepwise.SuspendExecution", map[string]any{"executionArn": "nope"}, true, "com.amazonaws.swf.service.v2.model#InvalidArn"},
		{"Stepwise.ListOperatorActions", map[string]any{"executionArn": gone}, true, "com.amazonaws.swf.service.v2.model#ExecutionDoesNotExist"},
	} {
		status, out := post(t, srv, tc.target, tc.in, tc.sign)
		require.Equal(t, http.StatusBadRequest, status, "%s %v: %v", tc.target, tc.in, out)
		require.Equal(t, tc.typ, out["__type"], "%s %v: %v", tc.target, tc.in, out)
		require.NotEmpty(t, out["message"])
	}
}

// A server without authentication names the client by its address.
func TestStepwiseOperationsUnsignedActor(t *testing.T) {
	t.Parallel()
	srv, _ := operatorServer(t, false)
	_, arn := startOps(t, srv, false)
	status, out := post(t, srv, "Stepwise.SuspendExecution", map[string]any{"executionArn": arn, "by": "mallory"}, false)
	require.Equal(t, http.StatusOK, status, out)
	status, out = post(t, srv, "Stepwise.ListOperatorActions", map[string]any{"executionArn": arn}, false)
	require.Equal(t, http.StatusOK, status, out)
	acts := out["actions"].([]any)
	require.Len(t, acts, 1)
	require.Equal(t, "anonymous@127.0.0.1", acts[0].(map[string]any)["by"])
	require.Equal(t, "Suspend", acts[0].(map[string]any)["action"])
}

func TestStepwiseOperationNames(t *testing.T) {
	t.Parallel()
	require.Equal(t, []string{"HoldState", "KillState", "ListOperatorActions", "ReleaseState", "RerunExecution", "ResumeExecution", "SkipState", "SuspendExecution"},
		awsjson.StepwiseOperations())
}

// failOps starts opsDefinition and fails it at T with a kill.
func failOps(t *testing.T, srv *httptest.Server, tasks *waitingTasks) (string, string) {
	t.Helper()
	smArn, arn := startOps(t, srv, true)
	testwait.Until(t, func() bool { return tasks.count() == 1 }, 5*time.Second, 10*time.Millisecond, "T's task runs")
	status, out := post(t, srv, "Stepwise.KillState", map[string]any{"executionArn": arn, "state": "T", "error": "Ops.Stopped"}, true)
	require.Equal(t, http.StatusOK, status, out)
	testwait.Until(t, func() bool {
		_, ex := post(t, srv, "AWSStepFunctions.DescribeExecution", map[string]any{"executionArn": arn}, true)
		return ex["status"] == "FAILED"
	}, 5*time.Second, 10*time.Millisecond, "the execution fails")
	return smArn, arn
}

// RerunExecution answers a dry run's preview (changing nothing), then
// reruns the execution: the failed task runs again, the execution's
// redrive count goes up.
func TestStepwiseRerunExecution(t *testing.T) {
	t.Parallel()
	srv, tasks := operatorServer(t, true)
	_, arn := failOps(t, srv, tasks)

	status, out := post(t, srv, "Stepwise.RerunExecution", map[string]any{"executionArn": arn, "from": "STATE", "state": "W", "dryRun": true,
		"definition": strings.Replace(opsDefinition, `"End": true`, `"TimeoutSeconds": 60, "End": true`, 1)}, true)
	require.Equal(t, http.StatusOK, status, out)
	require.Equal(t, "STATE", out["mode"])
	require.Equal(t, "W", out["startState"])
	require.Equal(t, []any{"T", "W"}, out["rerunStates"])
	require.Equal(t, []any{}, out["keptStates"])
	require.Equal(t, []any{"T"}, out["changedStates"])
	require.Equal(t, []any{}, out["addedStates"])
	require.Equal(t, []any{}, out["removedStates"])
	require.Equal(t, true, out["dryRun"])
	require.Nil(t, out["redriveDate"])

	status, out = post(t, srv, "Stepwise.RerunExecution", map[string]any{"executionArn": arn, "from": "FAILED", "dryRun": true}, true)
	require.Equal(t, http.StatusOK, status, out)
	require.Equal(t, "FAILED", out["mode"])
	require.Nil(t, out["startState"])
	require.Equal(t, []any{"T"}, out["rerunStates"])
	require.Equal(t, []any{"W"}, out["keptStates"])
	_, ex := post(t, srv, "AWSStepFunctions.DescribeExecution", map[string]any{"executionArn": arn}, true)
	require.Equal(t, "FAILED", ex["status"], "a dry run changes nothing")
	require.Equal(t, 0, tasks.count())

	status, out = post(t, srv, "Stepwise.RerunExecution", map[string]any{"executionArn": arn, "from": "FAILED"}, true)
	require.Equal(t, http.StatusOK, status, out)
	require.Equal(t, []any{"T"}, out["rerunStates"])
	require.NotNil(t, out["redriveDate"])
	require.Equal(t, float64(1), out["redriveCount"])
	testwait.Until(t, func() bool { return tasks.count() == 1 }, 5*time.Second, 10*time.Millisecond, "T runs again")
	_, ex = post(t, srv, "AWSStepFunctions.DescribeExecution", map[string]any{"executionArn": arn}, true)
	require.Equal(t, "RUNNING", ex["status"])
	require.Equal(t, float64(1), ex["redriveCount"])
}

// RerunExecution's refusals come in AWS's shape, with the reason.
func TestStepwiseRerunExecutionErrors(t *testing.T) {
	t.Parallel()
	srv, tasks := operatorServer(t, true)
	_, failed := failOps(t, srv, tasks)
	_, running := startOps(t, srv, true)
	gone := failed[:len(failed)-3] + "abc"
	for _, tc := range []struct {
		in   map[string]any
		sign bool
		typ  string
		msg  string
	}{
		{map[string]any{"executionArn": failed, "from": "FAILED"}, false, "com.amazon.coral.service#MissingAuthenticationTokenException", ""},
		{map[string]any{"executionArn": failed, "from": "SOMETIME"}, true, "com.amazonaws.swf.service.v2.model#ValidationException", "want FAILED, NEXT"},
		{map[string]any{"executionArn": failed, "from": "FAILED", "output": "{}"}, true, "com.amazonaws.swf.service.v2.model#ValidationException", "only with NEXT"},
		{map[string]any{"executionArn": failed, "from": "NEXT", "output": "{nope"}, true, "com.amazonaws.swf.service.v2.model#InvalidOutput", "Invalid Output"},
		{map[string]any{"executionArn": failed, "from": "STATE", "state": "Nope", "dryRun": true}, true, "com.amazonaws.swf.service.v2.model#ValidationException", "The rerun is refused"},
		{map[string]any{"executionArn": failed, "from": "TOP", "definition": "{}"}, true, "com.amazonaws.swf.service.v2.model#InvalidDefinition", ""},
		{map[string]any{"executionArn": failed, "from": "TOP", "revision": 3}, true, "com.amazonaws.swf.service.v2.model#ValidationException", "no version 3"},
		{map[string]any{"executionArn": running, "from": "FAILED"}, true, "com.amazonaws.swf.service.v2.model#ExecutionNotRedrivable", ""},
		{map[string]any{"executionArn": gone, "from": "FAILED"}, true, "com.amazonaws.swf.service.v2.model#ExecutionDoesNotExist", ""},
		{map[string]any{"executionArn": "nope", "from": "FAILED"}, true, "com.amazonaws.swf.service.v2.model#InvalidArn", ""},
	} {
		status, out := post(t, srv, "Stepwise.RerunExecution", tc.in, tc.sign)
		require.Equal(t, http.StatusBadRequest, status, "%v: %v", tc.in, out)
		require.Equal(t, tc.typ, out["__type"], "%v: %v", tc.in, out)
		require.Contains(t, out["message"], tc.msg, tc.in)
	}
}

// A rerun and a redrive through the Step Functions API are in the
// operator log with their caller, who is the server's to say.
func TestStepwiseRerunAndRedriveInTheOperatorLog(t *testing.T) {
	t.Parallel()
	srv, tasks := operatorServer(t, true)
	_, arn := failOps(t, srv, tasks)
	status, out := post(t, srv, "Stepwise.RerunExecution", map[string]any{"executionArn": arn, "from": "NEXT", "output": `{"n":1}`, "dryRun": true}, true)
	require.Equal(t, http.StatusOK, status, out)
	status, out = post(t, srv, "Stepwise.RerunExecution", map[string]any{"executionArn": arn, "from": "STATE", "state": "T", "by": "mallory"}, true)
	require.Equal(t, http.StatusOK, status, out)
	testwait.Until(t, func() bool { return tasks.count() == 1 }, 5*time.Second, 10*time.Millisecond, "T runs again")
	status, out = post(t, srv, "Stepwise.KillState", map[string]any{"executionArn": arn, "state": "T", "error": "Ops.Stopped"}, true)
	require.Equal(t, http.StatusOK, status, out)
	testwait.Until(t, func() bool {
		_, ex := post(t, srv, "AWSStepFunctions.DescribeExecution", map[string]any{"executionArn": arn}, true)
		return ex["status"] == "FAILED"
	}, 5*time.Second, 10*time.Millisecond, "the execution fails again")
	status, out = post(t, srv, "AWSStepFunctions.RedriveExecution", map[string]any{"executionArn": arn, "By": "mallory"}, true)
	require.Equal(t, http.StatusOK, status, out)

	status, out = post(t, srv, "Stepwise.ListOperatorActions", map[string]any{"executionArn": arn}, true)
	require.Equal(t, http.StatusOK, status, out)
	var got []string
	for _, a := range out["actions"].([]any) {
		m := a.(map[string]any)
		require.NotEmpty(t, m["date"])
		got = append(got, fmt.Sprintf("%s %s %v %v", m["by"], m["action"], m["mode"], m["state"]))
	}
	require.Equal(t, []string{"AKIDOPS Kill <nil> T", "AKIDOPS Rerun STATE T", "AKIDOPS Kill <nil> T", "AKIDOPS Redrive <nil> <nil>"}, got)
}
