package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/stretchr/testify/require"
)

// TestNightlyBatchOperated runs examples/nightly-batch/operate.sh against
// the binary: a night held, suspended and resumed, a held job skipped, a
// running job killed (the night fails), a job ended with warning, the
// night mended and redriven, a held job released. It checks each control's
// effect in the night's history, its children and the operator log.
func TestNightlyBatchOperated(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"aws", "curl", "python3"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is required on CI", tool)
			}
			t.Skipf("%s is not on PATH; examples/nightly-batch/operate.sh needs it", tool)
		}
	}
	night, err := buildNightly()
	require.NoError(t, err, "build examples/nightly-batch: %s", trimErr(err))
	s := startServer(t, filepath.Join(t.TempDir(), "operate.db"))
	c := s.client(t)
	ctx := context.Background()

	cmd := exec.Command("bash", "examples/nightly-batch/operate.sh")
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "STEPWISE="+binary, "NIGHTLY="+night, "AWS_ENDPOINT_URL="+s.url(),
		"AWS_ACCESS_KEY_ID=local", "AWS_SECRET_ACCESS_KEY=local", "AWS_DEFAULT_REGION=us-east-1",
		"AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null", "DATE=2025-07-31", "WORK=2s")
	b, err := cmd.CombinedOutput()
	out := string(b)
	require.NoError(t, err, out)

	// What the script printed at each step.
	for _, want := range []string{
		"$ stepwise suspend $NIGHT\n$ nightly-batch wait -date 2025-07-31 -job JOB-001 -status SUCCEEDED\nnight-2025-07-31-JOB-001-0 SUCCEEDED\n$ states\nJOB-001\n",
		"night-2025-07-31-JOB-004-0 ABORTED\n",
		"FAILED\tOps.Killed\torders.csv has not come\n",
		"warning 1\n",
		`stepwise_task_warnings_total{state="JOB-003",state_machine_arn="arn:aws:states:us-east-1:123456789012:stateMachine:nightly-batch"} 1`,
		"--query status --output text\nRUNNING\n",
		"$ stepwise release $SM --state JOB-006\narn:aws:states:us-east-1:123456789012:execution:nightly-batch:night-2025-07-31\n",
		"night-2025-07-31 SUCCEEDED\n",
	} {
		require.Contains(t, out, want)
	}

	arn := "arn:aws:states:us-east-1:123456789012:execution:nightly-batch:night-2025-07-31"
	done := waitDone(t, c, arn)
	require.Equal(t, types.ExecutionStatusSucceeded, done.Status)
	require.Equal(t, int32(1), aws.ToInt32(done.RedriveCount))
	ran := func(job string, redrive string) string {
		return `{"execution": "night-2025-07-31-` + job + `-` + redrive + `", "worker": "go-worker"}`
	}
	require.JSONEq(t, `{"date": "2025-07-31", "jobs": {
		"JOB-001": `+ran("JOB-001", "0")+`, "JOB-002": {"skipped": "the store feed is late"}, "JOB-003": `+ran("JOB-003", "0")+`,
		"JOB-004": `+ran("JOB-004", "1")+`, "JOB-005": `+ran("JOB-005", "1")+`, "JOB-006": `+ran("JOB-006", "1")+`}}`,
		aws.ToString(done.Output))

	// The history: the suspended night entered nothing after JOB-001
	// while it was suspended (the Fork came after the resume); JOB-002,
	// skipped, has no child and succeeded with the operator's output;
	// JOB-004 failed with the kill; the night failed, was redriven, and
	// entered only JOB-004, JOB-005 and, released, JOB-006.
	h, err := c.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(arn), MaxResults: 1000})
	require.NoError(t, err)
	var before, after []string
	var killed, failed bool
	redriven := false
	for _, ev := range h.Events {
		if d := ev.StateEnteredEventDetails; d != nil {
			if redriven {
				after = append(after, aws.ToString(d.Name))
			} else {
				before = append(before, aws.ToString(d.Name))
			}
		}
		switch ev.Type {
		case types.HistoryEventTypeTaskFailed:
			d := ev.TaskFailedEventDetails
			require.Equal(t, "Ops.Killed", aws.ToString(d.Error))
			require.Equal(t, "orders.csv has not come", aws.ToString(d.Cause))
			killed = true
		case types.HistoryEventTypeExecutionFailed:
			require.Equal(t, "Ops.Killed", aws.ToString(ev.ExecutionFailedEventDetails.Error))
			failed = true
		case types.HistoryEventTypeExecutionRedriven:
			redriven = true
		case types.HistoryEventTypeTaskStateExited:
			if d := ev.StateExitedEventDetails; aws.ToString(d.Name) == "JOB-002" {
				require.JSONEq(t, `{"date": "2025-07-31", "jobs": {"JOB-002": {"skipped": "the store feed is late"}}}`, aws.ToString(d.Output))
			}
		}
	}
	require.True(t, killed, "JOB-004 failed with the operator's error")
	require.True(t, failed, "the night failed with it")
	require.True(t, redriven)
	require.Equal(t, []string{"JOB-001", "Fork", "JOB-004", "JOB-002", "JOB-003"}, before)
	require.Equal(t, []string{"JOB-004", "JOB-005", "JOB-006"}, after)

	// The children: JOB-002 never ran; JOB-004's first run was stopped.
	children, err := c.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: aws.String(smArn("nightly-job"))})
	require.NoError(t, err)
	status := map[string]types.ExecutionStatus{}
	for _, x := range children.Executions {
		status[aws.ToString(x.Name)] = x.Status
	}
	require.Equal(t, map[string]types.ExecutionStatus{
		"night-2025-07-31-JOB-001-0": "SUCCEEDED", "night-2025-07-31-JOB-003-0": "SUCCEEDED",
		"night-2025-07-31-JOB-004-0": "ABORTED", "night-2025-07-31-JOB-004-1": "SUCCEEDED",
		"night-2025-07-31-JOB-005-1": "SUCCEEDED", "night-2025-07-31-JOB-006-1": "SUCCEEDED",
	}, status)

	// The operator log, in order, as stepwise actions prints it.
	log, code := stepwiseCLI(t, "actions", arn, "--endpoint", s.url())
	require.Equal(t, 0, code, log)
	var actions []string
	for _, line := range strings.Split(strings.TrimSpace(log), "\n")[1:] {
		f := strings.Fields(line)
		require.Equal(t, "anonymous@127.0.0.1", f[1], line)
		actions = append(actions, strings.Join(f[2:min(len(f), 4)], " "))
	}
	require.Equal(t, []string{"Hold JOB-002", "Suspend -", "Resume -", "Skip JOB-002", "Kill JOB-004", "Redrive -", "Release JOB-006"}, actions)
	require.Contains(t, log, "Ops.Killed: orders.csv has not come")
	require.Contains(t, out, log, "the script printed the same log")
}
