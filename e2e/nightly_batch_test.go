package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/stretchr/testify/require"
)

// TestNightlyBatch runs examples/nightly-batch as its README does, with
// the example's Go worker: the night fails at JOB-004 for a missing input
// file, and once the file is there a redrive finishes it, running JOB-004,
// JOB-005 and JOB-006 and none of the jobs that had succeeded.
func TestNightlyBatch(t *testing.T) {
	t.Parallel()
	runNight(t, "go-worker", func(night, inbox string) *exec.Cmd {
		return exec.Command(night, "worker", "-inbox", inbox, "-work", "300ms")
	})
}

// TestNightlyBatchPython is TestNightlyBatch with the example's boto3
// worker doing the jobs.
func TestNightlyBatchPython(t *testing.T) {
	t.Parallel()
	if err := exec.Command("python3", "-c", "import boto3").Run(); err != nil {
		t.Skip("python3 with boto3 is not available; install boto3 to run the Python worker of examples/nightly-batch")
	}
	runNight(t, "python-worker", func(_, inbox string) *exec.Cmd {
		return exec.Command("python3", "../examples/nightly-batch/worker.py", inbox, "0.3")
	})
}

// buildNightly builds the example once, beside the stepwise binary.
var buildNightly = sync.OnceValues(func() (string, error) {
	path := filepath.Join(filepath.Dir(binary), "nightly-batch")
	if out, err := exec.Command("go", "build", "-o", path, "stepwise/examples/nightly-batch").CombinedOutput(); err != nil {
		return "", fmt.Errorf("%w: %s", err, out)
	}
	return path, nil
})

var jobLine = regexp.MustCompile(`(JOB-\d{3}) (done|failed)`)

// runNight walks through the example's README against a fresh server, with
// the worker that worker returns doing the jobs.
func runNight(t *testing.T, workerName string, worker func(night, inbox string) *exec.Cmd) {
	t.Helper()
	night, err := buildNightly()
	require.NoError(t, err, "build examples/nightly-batch: %s", trimErr(err))
	s := startServer(t, filepath.Join(t.TempDir(), "night.db"))
	c := s.client(t)
	ctx := context.Background()
	inbox := t.TempDir()
	env := append(os.Environ(), "AWS_ENDPOINT_URL="+s.url(),
		"AWS_ACCESS_KEY_ID=local", "AWS_SECRET_ACCESS_KEY=local", "AWS_DEFAULT_REGION=us-east-1",
		"AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null")
	command := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(night, args...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "nightly-batch %v: %s", args, out)
		return strings.TrimSpace(string(out))
	}

	require.Equal(t, `arn:aws:states:us-east-1:123456789012:activity:nightly-batch
arn:aws:states:us-east-1:123456789012:stateMachine:nightly-job
arn:aws:states:us-east-1:123456789012:stateMachine:nightly-batch`, command("setup"))
	command("setup") // setting up again updates the state machines

	log := &lockedBuffer{}
	w := worker(night, inbox)
	w.Env, w.Stdout, w.Stderr = env, log, log
	require.NoError(t, w.Start())
	exited := make(chan error, 1)
	go func() { exited <- w.Wait() }()
	t.Cleanup(func() {
		w.Process.Kill()
		<-exited
	})

	// The night fails: orders.csv is not in the inbox. JOB-004 tries three
	// times; the other branch finished meanwhile.
	arn := command("start", "-date", "2025-06-30")
	require.Equal(t, "arn:aws:states:us-east-1:123456789012:execution:nightly-batch:night-2025-06-30", arn)
	failed := waitDone(t, c, arn)
	require.Equal(t, types.ExecutionStatusFailed, failed.Status)
	require.Equal(t, "States.TaskFailed", aws.ToString(failed.Error))
	var cause struct{ Name, Status, Error, Cause string }
	require.NoError(t, json.Unmarshal([]byte(aws.ToString(failed.Cause)), &cause), aws.ToString(failed.Cause))
	require.Equal(t, "night-2025-06-30-JOB-004-0", cause.Name)
	require.Equal(t, "FAILED", cause.Status)
	require.Equal(t, "Job.InputMissing", cause.Error)
	require.Contains(t, cause.Cause, "orders.csv is missing")
	waitRecord(t, log, map[string]int{"JOB-001 done": 1, "JOB-002 done": 1, "JOB-003 done": 1, "JOB-004 failed": 3})

	// The file arrives; the redriven night runs only what had not succeeded.
	require.NoError(t, os.WriteFile(filepath.Join(inbox, "orders.csv"), []byte("order,amount\n1,9.99\n"), 0o644))
	redriven, err := c.RedriveExecution(ctx, &sfn.RedriveExecutionInput{ExecutionArn: aws.String(arn)})
	require.NoError(t, err)
	require.NotNil(t, redriven.RedriveDate)
	done := waitDone(t, c, arn)
	require.Equal(t, types.ExecutionStatusSucceeded, done.Status, "%s: %s", aws.ToString(done.Error), aws.ToString(done.Cause))
	require.Equal(t, int32(1), aws.ToInt32(done.RedriveCount))
	ran := func(job string, redrive int) string {
		return fmt.Sprintf(`{"execution": "night-2025-06-30-%s-%d", "worker": %q}`, job, redrive, workerName)
	}
	require.JSONEq(t, `{"date": "2025-06-30", "jobs": {
		"JOB-001": `+ran("JOB-001", 0)+`, "JOB-002": `+ran("JOB-002", 0)+`, "JOB-003": `+ran("JOB-003", 0)+`,
		"JOB-004": `+ran("JOB-004", 1)+`, "JOB-005": `+ran("JOB-005", 1)+`, "JOB-006": `+ran("JOB-006", 1)+`}}`,
		aws.ToString(done.Output))
	waitRecord(t, log, map[string]int{"JOB-001 done": 1, "JOB-002 done": 1, "JOB-003 done": 1,
		"JOB-004 failed": 3, "JOB-004 done": 1, "JOB-005 done": 1, "JOB-006 done": 1})

	// Seven child executions: the six jobs and JOB-004's failed first run.
	children, err := c.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: aws.String(smArn("nightly-job"))})
	require.NoError(t, err)
	status := map[string]types.ExecutionStatus{}
	for _, x := range children.Executions {
		status[aws.ToString(x.Name)] = x.Status
	}
	require.Equal(t, map[string]types.ExecutionStatus{
		"night-2025-06-30-JOB-001-0": "SUCCEEDED", "night-2025-06-30-JOB-002-0": "SUCCEEDED", "night-2025-06-30-JOB-003-0": "SUCCEEDED",
		"night-2025-06-30-JOB-004-0": "FAILED", "night-2025-06-30-JOB-004-1": "SUCCEEDED",
		"night-2025-06-30-JOB-005-1": "SUCCEEDED", "night-2025-06-30-JOB-006-1": "SUCCEEDED",
	}, status)

	// The history after the redrive enters only the states that re-ran.
	history, err := c.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(arn), MaxResults: 1000})
	require.NoError(t, err)
	var entered []string
	redrive := false
	for _, ev := range history.Events {
		redrive = redrive || ev.Type == types.HistoryEventTypeExecutionRedriven
		if redrive && ev.StateEnteredEventDetails != nil {
			entered = append(entered, aws.ToString(ev.StateEnteredEventDetails.Name))
		}
	}
	require.Equal(t, []string{"JOB-004", "JOB-005", "JOB-006"}, entered)

	// The worker stops when told to.
	require.NoError(t, w.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-exited:
		if workerName == "go-worker" {
			require.NoError(t, err, "the Go worker exits cleanly on SIGTERM: %s", log)
		}
		exited <- err // for the cleanup
	case <-time.After(10 * time.Second):
		t.Fatalf("the worker did not stop within 10s of SIGTERM:\n%s", log)
	}
}

// waitRecord waits for the worker's log to record the jobs of want, each
// as many times as it says: the worker writes a job's line as it ends it,
// a moment after the execution may have moved on.
func waitRecord(t *testing.T, log *lockedBuffer, want map[string]int) {
	t.Helper()
	var got map[string]int
	for deadline := time.Now().Add(5 * time.Second); ; {
		got = map[string]int{}
		for _, m := range jobLine.FindAllStringSubmatch(log.String(), -1) {
			got[m[1]+" "+m[2]]++
		}
		if maps.Equal(got, want) || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	require.Equal(t, want, got, "the jobs the worker ran:\n%s", log)
}
