package e2e

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/stretchr/testify/require"
)

// The reruns of the binary, through `stepwise rerun`: a net that failed
// at a job is previewed from NEXT with an output, then rerun: only the
// states after the job run again. Another night that failed at the job
// is rerun from it on a corrected definition; the server is killed -9
// while the rerun's job runs and started again: the rerun completes on
// the corrected definition, the job's answer taken.

// rerunNet is a night: Extract, the job Load (an activity), Report.
func rerunNet(activity, load string) string {
	return `{"StartAt": "Extract", "States": {
		"Extract": {"Type": "Pass", "Result": {"rows": 1}, "Next": "Load"},
		"Load": {"Type": "Task", "Resource": "` + activity + `"` + load + `, "Next": "Report"},
		"Report": {"Type": "Pass", "End": true}}}`
}

// enteredAfterRerun are the states an execution's history enters after
// its last ExecutionRedriven event.
func enteredAfterRerun(t *testing.T, c *sfn.Client, arn string) []string {
	t.Helper()
	h, err := c.GetExecutionHistory(context.Background(), &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(arn), MaxResults: 1000})
	require.NoError(t, err)
	var out []string
	redriven := false
	for _, e := range h.Events {
		if e.Type == types.HistoryEventTypeExecutionRedriven {
			redriven, out = true, nil
		}
		if d := e.StateEnteredEventDetails; redriven && d != nil {
			out = append(out, aws.ToString(d.Name))
		}
	}
	require.True(t, redriven, "the history has an ExecutionRedriven event")
	return out
}

func TestRerunFromNextAndOnACorrectedDefinitionSurvivesKill9(t *testing.T) {
	t.Parallel()
	bg := context.Background()
	db := filepath.Join(t.TempDir(), "stepwise.db")
	s := startServer(t, db)
	c := s.client(t)
	act, err := c.CreateActivity(bg, &sfn.CreateActivityInput{Name: aws.String("load")})
	require.NoError(t, err)
	activity := aws.ToString(act.ActivityArn)
	sm := createMachine(t, c, "night", rerunNet(activity, ""))
	cli := func(args ...string) string {
		out, code := stepwiseCLI(t, append(args, "--endpoint", s.url())...)
		require.Equal(t, 0, code, "%v: %s", args, out)
		return out
	}
	// job takes Load's task; fail ends it with Job.Failed.
	job := func(c *sfn.Client) string {
		task, err := c.GetActivityTask(bg, &sfn.GetActivityTaskInput{ActivityArn: aws.String(activity)})
		require.NoError(t, err)
		require.NotEmpty(t, aws.ToString(task.TaskToken))
		return aws.ToString(task.TaskToken)
	}
	failNight := func(name string) string {
		arn := startExecution(t, c, sm, name, `{}`)
		_, err := c.SendTaskFailure(bg, &sfn.SendTaskFailureInput{TaskToken: aws.String(job(c)), Error: aws.String("Job.Failed")})
		require.NoError(t, err)
		require.Equal(t, types.ExecutionStatusFailed, waitDone(t, c, arn).Status)
		return arn
	}

	// From NEXT: the preview, then the rerun.
	arn := failNight("night-1")
	out := cli("rerun", arn, "--from", "NEXT", "--output", `{"rows": 5}`, "--dry-run")
	require.Regexp(t, `(?m)^MODE +NEXT$`, out)
	require.Regexp(t, `(?m)^START +Report$`, out)
	require.Regexp(t, `(?m)^RERUN +Report$`, out)
	require.Regexp(t, `(?m)^KEEP +Extract, Load$`, out)
	require.Contains(t, out, "Dry run: nothing was changed.")
	d, err := c.DescribeExecution(bg, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
	require.NoError(t, err)
	require.Equal(t, types.ExecutionStatusFailed, d.Status)
	out = cli("rerun", arn, "--from", "NEXT", "--output", `{"rows": 5}`)
	require.Regexp(t, `(?m)^REDRIVES +1$`, out)
	done := waitDone(t, c, arn)
	require.Equal(t, types.ExecutionStatusSucceeded, done.Status)
	require.JSONEq(t, `{"rows": 5}`, aws.ToString(done.Output))
	require.Equal(t, []string{"Report"}, enteredAfterRerun(t, c, arn), "only the states after the job run again")

	// From the job, on a corrected definition; kill -9 while it runs.
	arn = failNight("night-2")
	fixed := filepath.Join(t.TempDir(), "fixed.json")
	require.NoError(t, os.WriteFile(fixed, []byte(rerunNet(activity, `, "ResultPath": "$.load"`)), 0o644))
	out = cli("rerun", arn, "--from", "STATE:Load", "--definition", fixed)
	require.Regexp(t, `(?m)^CHANGED +Load$`, out)
	require.Regexp(t, `(?m)^KEEP +Extract$`, out)
	token := job(c)

	s.kill()
	s = startServer(t, db)
	c = s.client(t)
	_, err = c.SendTaskSuccess(bg, &sfn.SendTaskSuccessInput{TaskToken: aws.String(token), Output: aws.String(`{"loaded": true}`)})
	require.NoError(t, err, "the job's token outlives the crash")
	done = waitDone(t, c, arn)
	require.Equal(t, types.ExecutionStatusSucceeded, done.Status)
	require.JSONEq(t, `{"rows": 1, "load": {"loaded": true}}`, aws.ToString(done.Output), "the corrected definition runs after the restart")
	require.Equal(t, []string{"Load", "Report"}, enteredAfterRerun(t, c, arn))
	require.Equal(t, int32(1), aws.ToInt32(done.RedriveCount))
}
