package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/stretchr/testify/require"

	"stepwise/integration/integrationtest"
	"stepwise/internal/testkit/otlptest"
	"stepwise/internal/testkit/testwait"
)

// stepwiseCmd runs the binary and returns its stdout, stderr and exit
// status.
func stepwiseCmd(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return out.String(), errOut.String(), exit.ExitCode()
	}
	require.NoError(t, err)
	return out.String(), errOut.String(), 0
}

// The fix of the job net: a broken job is skipped, not the night's end.
const skipBrokenJob = `"Retry": [{"ErrorEquals": ["Lambda.TooManyRequestsException", "Lambda.ServiceException"], "IntervalSeconds": 2, "MaxAttempts": 3}],
            "Catch": [{"ErrorEquals": ["JobFailed"], "ResultPath": "$.failure", "Next": "Skipped"}],`

// TestRecordAFailedJobNetAndReplayItsFix is the night of the job net whose
// last job broke, on the services' stand-ins (moto, the job as a local
// function, the operator answering the callbacks): recorded from the
// server, it passes as a test on its own definition; replayed on a fixed
// definition, it diverges where the fix acts and names the nested
// execution the failed night never reached; given that execution's
// answer, the recorded night passes as a test on the fixed definition.
// The jobs run one after the other (MaxConcurrency 1), as a job net's
// often do: the failed night then holds the results of every job before
// the broken one.
func TestRecordAFailedJobNetAndReplayItsFix(t *testing.T) {
	t.Parallel()
	moto := integrationtest.Moto(t)
	job, err := filepath.Abs(filepath.Join("..", "examples", "jobnet", "job.py"))
	require.NoError(t, err)
	// Traced, to a real OTLP receiver.
	recv := otlptest.Start(t)
	s := startServer(t, filepath.Join(t.TempDir(), "jobnet.db"), "--aws-endpoint", moto, "--function", "jobnet-job=python3 "+job,
		"--trace-all", "--otel-endpoint", recv.HTTP)
	c := s.client(t)
	seed, err := os.ReadFile(filepath.Join("..", "examples", "jobnet", "jobnet.asl.json"))
	require.NoError(t, err)
	report, err := os.ReadFile(filepath.Join("..", "examples", "jobnet", "report.asl.json"))
	require.NoError(t, err)
	def := strings.Replace(string(seed), `"MaxConcurrency": 2`, `"MaxConcurrency": 1`, 1)
	require.NotEqual(t, string(seed), def)
	netArn, reportArn := createMachine(t, c, "jobnet", def), createMachine(t, c, "jobnet-report", string(report))
	w := setupJobNet(t, moto, c, reportArn)

	// The night fails: its last job is broken.
	require.NoError(t, os.WriteFile(filepath.Join(w.flags, "reconcile.broken"), nil, 0o600))
	exec := startExecution(t, c, netArn, night, w.input)
	failed := waitDone(t, c, exec)
	require.Equal(t, "FAILED", string(failed.Status), "%s", aws.ToString(failed.Cause))
	require.Equal(t, "JobFailed", aws.ToString(failed.Error))

	// Its trace is in the receiver, with a span for every state the
	// history entered.
	entered := map[string]bool{}
	hist, err := c.GetExecutionHistory(context.Background(), &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(exec), MaxResults: 1000})
	require.NoError(t, err)
	for _, ev := range hist.Events {
		if d := ev.StateEnteredEventDetails; d != nil {
			entered[aws.ToString(d.Name)] = true
		}
	}
	require.True(t, entered["Run"] && entered["RunJobs"], "%v", entered)
	testwait.Until(t, func() bool {
		traceID := ""
		for _, sp := range recv.Spans() {
			if sp.Attributes["stepwise.execution.arn"] == exec && sp.ParentSpanID == "" {
				traceID = sp.TraceID
			}
		}
		if traceID == "" {
			return false
		}
		spanned := map[string]bool{}
		for _, sp := range recv.Spans() {
			if name, ok := sp.Attributes["stepwise.state.name"].(string); ok && sp.TraceID == traceID {
				spanned[name] = true
			}
		}
		for name := range entered {
			if !spanned[name] {
				return false
			}
		}
		return true
	}, 30*time.Second, 100*time.Millisecond, "the night's trace has a span for every state it entered: %v", entered)

	// Recorded from the server, it passes as a test.
	dir := t.TempDir()
	recording := filepath.Join(dir, "night.test.json")
	out, errOut, code := stepwiseCmd(t, "test", "--record", exec, "--endpoint", s.url(), "--out", recording)
	require.Equal(t, 0, code, out+errOut)
	out, errOut, code = stepwiseCmd(t, "test", "-v", recording)
	require.Equal(t, 0, code, out+errOut)
	require.Contains(t, out, "1 passed, 0 failed")
	out, errOut, code = stepwiseCmd(t, "replay", exec, "--endpoint", s.url())
	require.Equal(t, 0, code, out+errOut)
	require.Equal(t, night+": same path, same output\n", out)

	// The fix: a broken job is skipped.
	fixed := strings.Replace(def, `"Retry": [{"ErrorEquals": ["Lambda.TooManyRequestsException", "Lambda.ServiceException"], "IntervalSeconds": 2, "MaxAttempts": 3}],`, skipBrokenJob, 1)
	fixed = strings.Replace(fixed, `"MarkDone": {`, `"Skipped": {"Type": "Pass", "Parameters": {"job.$": "$.job", "skipped.$": "$.failure.Error"}, "End": true},
          "MarkDone": {`, 1)
	require.NotEqual(t, def, fixed)
	fixedFile := filepath.Join(dir, "jobnet.asl.json")
	require.NoError(t, os.WriteFile(fixedFile, []byte(fixed), 0o644))

	// Replayed on the fix, from the server and from the recording alike,
	// it diverges where the broken job's failure is caught, then at the
	// nested execution no night reached.
	out, errOut, code = stepwiseCmd(t, "replay", exec, "--endpoint", s.url(), "--definition", fixedFile)
	require.Equal(t, 1, code, out+errOut)
	require.Contains(t, out, night+": first divergence at state Run, event ")
	require.Contains(t, out, `(TaskStateExited): exited with output`)
	require.Contains(t, out, `recorded: the execution ended in it (FAILED, error "JobFailed"`)
	require.Contains(t, out, "\n    then state Report has no recorded result: the replay stopped there\n")
	t.Logf("stepwise replay on the fix:\n%s", out)
	fromFile, errOut, code := stepwiseCmd(t, "replay", "--recording", recording, "--definition", fixedFile)
	require.Equal(t, 1, code, errOut)
	require.Equal(t, out, fromFile)

	// The recording, with the fixed definition, the answer of the report
	// and the night that now succeeds as what it expects, passes as a
	// test.
	var file map[string]any
	data, err := os.ReadFile(recording)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &file))
	file["definition"] = "jobnet.asl.json"
	file["mocks"] = map[string]any{"Report": map[string]any{"Return": map[string]any{"Status": "SUCCEEDED", "Output": map[string]any{"night": night, "jobs": 3}}}}
	kase := file["cases"].([]any)[0].(map[string]any)
	kase["expect"] = map[string]any{"output": map[string]any{"night": night, "jobs": 3},
		"path": []string{"LoadNight", "ReadOperator", "RunJobs", "Report"}}
	data, err = json.MarshalIndent(file, "", "  ")
	require.NoError(t, err)
	proof := filepath.Join(dir, "fixed.test.json")
	require.NoError(t, os.WriteFile(proof, data, 0o644))
	out, errOut, code = stepwiseCmd(t, "test", "-v", proof)
	require.Equal(t, 0, code, out+errOut)
	require.Contains(t, out, "1 passed, 0 failed")

	// Without the report's answer, the test names it.
	delete(file, "mocks")
	data, err = json.Marshal(file)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(proof, data, 0o644))
	out, _, code = stepwiseCmd(t, "test", proof)
	require.Equal(t, 1, code, out)
	require.Contains(t, out, `Task state "Report" (resource arn:aws:states:::states:startExecution.sync:2) has no mocked response`)
}

// TestRecordAndReplayAWeekend records, from a server that skips time and
// answers tasks from a mock configuration, an execution with a retried
// task, a Parallel whose branch waits for an activity worker, a Wait of
// three days and a distributed Map whose children call a task; the
// recording passes as a test and replays with the same path and output,
// and an edit inside the Parallel diverges there.
func TestRecordAndReplayAWeekend(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mockFile := filepath.Join(dir, "mocks.json")
	require.NoError(t, os.WriteFile(mockFile, []byte(`{
  "StateMachines": {"weekend": {"TestCases": {"Calm": {"Fetch": "afterRetry", "Left": "left", "Child": "child"}}}},
  "MockedResponses": {
    "afterRetry": {"0": {"Throw": {"Error": "Lambda.ServiceException", "Cause": "busy"}}, "1": {"Return": {"Payload": {"items": [1, 2, 3]}}}},
    "left": {"0": {"Return": {"Payload": "left"}}},
    "child": {"0": {"Return": {"Payload": "done"}}}
  }
}`), 0o600))
	s := startServer(t, filepath.Join(dir, "weekend.db"), "--time-skip", "--mock-config", mockFile)
	c := s.client(t)
	ctx := context.Background()
	act, err := c.CreateActivity(ctx, &sfn.CreateActivityInput{Name: aws.String("approve")})
	require.NoError(t, err)
	def := fmt.Sprintf(`{"StartAt": "Fetch", "States": {
  "Fetch": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "Parameters": {"FunctionName": "fetch"},
    "Retry": [{"ErrorEquals": ["Lambda.ServiceException"], "IntervalSeconds": 60}], "ResultSelector": {"items.$": "$.Payload.items"}, "Next": "Both"},
  "Both": {"Type": "Parallel", "ResultPath": "$.both", "Next": "Weekend", "Branches": [
    {"StartAt": "Left", "States": {"Left": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "Parameters": {"FunctionName": "left"}, "OutputPath": "$.Payload", "End": true}}},
    {"StartAt": "Approve", "States": {"Approve": {"Type": "Task", "Resource": %q, "End": true}}}]},
  "Weekend": {"Type": "Wait", "Seconds": 259200, "Next": "Fan"},
  "Fan": {"Type": "Map", "ItemsPath": "$.items", "ResultPath": "$.fanned", "End": true,
    "ItemProcessor": {"ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"}, "StartAt": "Child", "States": {
      "Child": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "Parameters": {"FunctionName": "child", "Payload.$": "$"}, "OutputPath": "$.Payload", "End": true}}}}}}`,
		aws.ToString(act.ActivityArn))
	sm := createMachine(t, c, "weekend", def)
	exec := startExecution(t, c, sm+"#Calm", "calm", `{}`)
	task, err := c.GetActivityTask(ctx, &sfn.GetActivityTaskInput{ActivityArn: act.ActivityArn, WorkerName: aws.String("w")})
	require.NoError(t, err)
	require.NotEmpty(t, aws.ToString(task.TaskToken))
	_, err = c.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: task.TaskToken, Output: aws.String(`{"by": "ada"}`)})
	require.NoError(t, err)
	done := waitDone(t, c, exec)
	require.Equal(t, "SUCCEEDED", string(done.Status), "%s: %s", aws.ToString(done.Error), aws.ToString(done.Cause))

	recording := filepath.Join(dir, "weekend.test.json")
	out, errOut, code := stepwiseCmd(t, "test", "--record", exec, "--endpoint", s.url(), "--out", recording)
	require.Equal(t, 0, code, out+errOut)
	data, err := os.ReadFile(recording)
	require.NoError(t, err)
	require.Contains(t, string(data), `"Error": "Lambda.ServiceException"`)
	require.Contains(t, string(data), `"Child": [`)
	out, errOut, code = stepwiseCmd(t, "test", recording)
	require.Equal(t, 0, code, out+errOut)
	out, errOut, code = stepwiseCmd(t, "replay", exec, "--endpoint", s.url())
	require.Equal(t, 0, code, out+errOut)
	require.Equal(t, "calm: same path, same output\n", out)

	edited := filepath.Join(dir, "edited.asl.json")
	require.NoError(t, os.WriteFile(edited, []byte(strings.Replace(def, `"OutputPath": "$.Payload", "End": true}}},`, `"End": true}}},`, 1)), 0o644))
	out, errOut, code = stepwiseCmd(t, "replay", "--recording", recording, "--definition", edited)
	require.Equal(t, 1, code, out+errOut)
	require.Contains(t, out, "calm: first divergence at state Left, event ")
	require.Contains(t, out, `(TaskStateExited): output differs: output: recorded "left", got {"Payload":"left"}`)
}
