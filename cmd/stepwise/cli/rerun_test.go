package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/stretchr/testify/require"

	"stepwise/internal/testkit/testwait"
	"stepwise/server/servertest"
)

// TestRerunVerb: rerun prints a dry run's preview and changes nothing,
// reruns a failed execution from NEXT with the output given, and from a
// state on a corrected definition read from a file; the server's
// refusals exit 1 in its words, bad usage exits 2 before the server is
// asked.
func TestRerunVerb(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := servertest.New(t)
	act, err := s.SFN.CreateActivity(ctx, &sfn.CreateActivityInput{Name: aws.String("load")})
	require.NoError(t, err)
	def := `{"StartAt": "Extract", "States": {
		"Extract": {"Type": "Pass", "Result": {"rows": 1}, "Next": "Load"},
		"Load": {"Type": "Task", "Resource": "` + aws.ToString(act.ActivityArn) + `", "Next": "Report"},
		"Report": {"Type": "Pass", "End": true}}}`
	sm, err := s.SFN.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("nightly"),
		RoleArn: aws.String("arn:aws:iam::123456789012:role/r"), Definition: aws.String(def)})
	require.NoError(t, err)
	run := func(args ...string) (string, string, int) {
		var out, errOut bytes.Buffer
		code := (&CLI{Out: &out, Err: &errOut}).Execute(append(args, "--endpoint", s.URL))
		return out.String(), errOut.String(), code
	}
	describe := func(arn string) *sfn.DescribeExecutionOutput {
		x, err := s.SFN.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(arn)})
		require.NoError(t, err)
		return x
	}
	// failed starts an execution and kills it at Load.
	failed := func() string {
		x, err := s.SFN.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: sm.StateMachineArn})
		require.NoError(t, err)
		arn := aws.ToString(x.ExecutionArn)
		testwait.Until(t, func() bool {
			h, err := s.SFN.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(arn)})
			require.NoError(t, err)
			for _, e := range h.Events {
				if e.Type == types.HistoryEventTypeActivityScheduled {
					return true
				}
			}
			return false
		}, 5*time.Second, 20*time.Millisecond)
		_, errOut, code := run("kill", arn, "--state", "Load", "--error", "Job.Failed")
		require.Equal(t, 0, code, errOut)
		testwait.Until(t, func() bool { return describe(arn).Status == types.ExecutionStatusFailed }, 5*time.Second, 20*time.Millisecond)
		return arn
	}

	// A dry run of NEXT: the preview, nothing changed.
	arn := failed()
	out, errOut, code := run("rerun", arn, "--from", "NEXT", "--output", `{"rows": 3}`, "--dry-run")
	require.Equal(t, 0, code, errOut)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Equal(t, []string{
		"MODE     NEXT",
		"START    Report",
		"RERUN    Report",
		"KEEP     Extract, Load",
		"ADDED    -",
		"REMOVED  -",
		"CHANGED  -",
		"Dry run: nothing was changed.",
	}, lines, out)
	require.Equal(t, types.ExecutionStatusFailed, describe(arn).Status)

	// The rerun: Load taken as done with the output given.
	out, errOut, code = run("rerun", arn, "--from", "NEXT", "--output", `{"rows": 3}`)
	require.Equal(t, 0, code, errOut)
	require.Regexp(t, `(?m)^MODE +NEXT$`, out)
	require.Regexp(t, `(?m)^REDRIVEN  \d{4}-\d\d-\d\dT\S+Z$`, out)
	require.Regexp(t, `(?m)^REDRIVES +1$`, out)
	require.NotContains(t, out, "Dry run")
	testwait.Until(t, func() bool { return describe(arn).Status == types.ExecutionStatusSucceeded }, 5*time.Second, 20*time.Millisecond)
	require.JSONEq(t, `{"rows": 3}`, aws.ToString(describe(arn).Output))
	require.Equal(t, int32(1), aws.ToInt32(describe(arn).RedriveCount))

	// From a state, on a corrected definition read from a file.
	arn = failed()
	fixed := filepath.Join(t.TempDir(), "fixed.json")
	require.NoError(t, os.WriteFile(fixed, []byte(strings.Replace(def, `"Type": "Task", "Resource": "`+aws.ToString(act.ActivityArn)+`"`,
		`"Type": "Pass", "Result": {"rows": 9}`, 1)), 0o600))
	out, errOut, code = run("rerun", arn, "--from", "STATE:Load", "--definition", fixed)
	require.Equal(t, 0, code, errOut)
	require.Regexp(t, `(?m)^START +Load$`, out)
	require.Regexp(t, `(?m)^RERUN +Load, Report$`, out)
	require.Regexp(t, `(?m)^KEEP +Extract$`, out)
	require.Regexp(t, `(?m)^CHANGED +Load$`, out)
	testwait.Until(t, func() bool { return describe(arn).Status == types.ExecutionStatusSucceeded }, 5*time.Second, 20*time.Millisecond)
	require.JSONEq(t, `{"rows": 9}`, aws.ToString(describe(arn).Output))
	// The operator log lists the rerun.
	out, errOut, code = run("actions", arn)
	require.Equal(t, 0, code, errOut)
	lines = strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 3, out)
	require.Regexp(t, `anonymous@127\.0\.0\.1 +Kill +Load +Job\.Failed$`, lines[1])
	require.Regexp(t, `^\d{4}-\d\d-\d\dT\S+Z +anonymous@127\.0\.0\.1 +Rerun +Load +STATE \(corrected definition\)$`, lines[2])

	// The server's refusals, in its words.
	_, errOut, code = run("rerun", arn, "--from", "FAILED")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "stepwise: ExecutionNotRedrivable: ")
	arn = failed()
	_, errOut, code = run("rerun", arn, "--from", "STATE:Nope", "--dry-run")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "stepwise: ValidationException: The rerun is refused: ")
	_, errOut, code = run("rerun", arn, "--from", "TOP", "--revision", "4")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "stepwise: ValidationException: The state machine has no version 4")
	require.Equal(t, types.ExecutionStatusFailed, describe(arn).Status)

	// Bad usage, told before the server is asked.
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"rerun", arn}, "--from is required"},
		{[]string{"rerun", arn, "--from", "LAST"}, `--from "LAST": want FAILED, NEXT, TOP, WARNINGS or STATE:NAME`},
		{[]string{"rerun", arn, "--from", "STATE:"}, "--from STATE:NAME names the state"},
		{[]string{"rerun", arn, "--from", "FAILED", "--output", "{}"}, "--output is given only with --from NEXT"},
		{[]string{"rerun", arn, "--from", "NEXT", "--output", "{rows"}, "--output is not JSON"},
		{[]string{"rerun", arn, "--from", "TOP", "--definition", fixed, "--revision", "2"}, "use --definition or --revision, not both"},
		{[]string{"rerun", arn, "--from", "TOP", "--revision", "-1"}, "--revision -1"},
		{[]string{"rerun", arn, "--from", "TOP", "--definition", dir}, "--definition: "},
		{[]string{"rerun", arn, "--from", "TOP", "--definition", filepath.Join(dir, "none.json")}, "--definition: "},
		{[]string{"rerun", aws.ToString(sm.StateMachineArn), "--from", "TOP"}, "is a state machine's ARN"},
		{[]string{"rerun"}, "accepts 1 arg(s), received 0"},
	} {
		_, errOut, code := run(tc.args...)
		require.Equal(t, 2, code, "%v: %s", tc.args, errOut)
		require.Contains(t, errOut, tc.msg, tc.args)
	}
	require.Equal(t, types.ExecutionStatusFailed, describe(arn).Status)
}
