package e2e

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/stretchr/testify/require"
)

// A skip and a kill the server acknowledged are applied exactly once
// across a kill -9 of the server right after: the execution goes on past
// the skipped state with the operator's output once, or the killed task's
// retry runs once; the token of the task they ended is refused.

// opsNight is a night whose Load is a job of the activity, then a wait
// (so that the server is killed before the night ends), then Report.
func opsNight(activity, retry string) string {
	return `{"StartAt": "Load", "States": {
		"Load": {"Type": "Task", "Resource": "` + activity + `"` + retry + `, "Next": "Settle"},
		"Settle": {"Type": "Wait", "Seconds": 2, "Next": "Report"},
		"Report": {"Type": "Pass", "End": true}}}`
}

// takeTask polls the activity until a worker gets a task; its token.
func takeTask(t *testing.T, c *sfn.Client, activity, worker string) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		task, err := c.GetActivityTask(context.Background(), &sfn.GetActivityTaskInput{ActivityArn: aws.String(activity), WorkerName: aws.String(worker)})
		require.NoError(t, err)
		if tok := aws.ToString(task.TaskToken); tok != "" {
			return tok
		}
	}
	t.Fatalf("no task of %s came", activity)
	return ""
}

// countTypes counts the events of each type in arn's history.
func countTypes(t *testing.T, c *sfn.Client, arn string) map[types.HistoryEventType]int {
	t.Helper()
	out := map[types.HistoryEventType]int{}
	for _, e := range historyOf(t, c, arn) {
		out[e.Type]++
	}
	return out
}

// requireTaskOver says the task of token is over, as AWS answers a
// worker that reports on an ended task.
func requireTaskOver(t *testing.T, c *sfn.Client, token string) {
	t.Helper()
	_, err := c.SendTaskSuccess(context.Background(), &sfn.SendTaskSuccessInput{TaskToken: aws.String(token), Output: aws.String(`{"late": true}`)})
	var over *types.TaskTimedOut
	require.True(t, errors.As(err, &over), "the ended task's token is refused with TaskTimedOut: %v", err)
	_, err = c.SendTaskHeartbeat(context.Background(), &sfn.SendTaskHeartbeatInput{TaskToken: aws.String(token)})
	require.True(t, errors.As(err, &over), "a heartbeat too: %v", err)
}

func TestOperatorSkipAndKillSurviveKill9(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		retry string
	}{
		{"skip", ""},
		{"kill", `, "Retry": [{"ErrorEquals": ["Ops.Killed"], "IntervalSeconds": 1, "MaxAttempts": 1}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			bg := context.Background()
			db := filepath.Join(t.TempDir(), "stepwise.db")
			s := startServer(t, db)
			c := s.client(t)
			act, err := c.CreateActivity(bg, &sfn.CreateActivityInput{Name: aws.String("load")})
			require.NoError(t, err)
			activity := aws.ToString(act.ActivityArn)
			sm := createMachine(t, c, "night", opsNight(activity, tc.retry))
			arn := startExecution(t, c, sm, "night-1", `{"rows": 1}`)
			// The worker takes the task and never answers.
			token := takeTask(t, c, activity, "stuck")
			cli := func(args ...string) string {
				out, code := stepwiseCLI(t, append(args, "--endpoint", s.url())...)
				require.Equal(t, 0, code, "%v: %s", args, out)
				return out
			}
			if tc.name == "skip" {
				cli("skip", arn, "--state", "Load", "--output", `{"rows": 42}`)
			} else {
				cli("kill", arn, "--state", "Load", "--error", "Ops.Killed", "--cause", "stuck on a lock")
			}
			s.kill()

			s = startServer(t, db)
			c = s.client(t)
			requireTaskOver(t, c, token)
			if tc.name == "kill" {
				// The retry runs once: its task is a new one, answered.
				again := takeTask(t, c, activity, "fresh")
				require.NotEqual(t, token, again)
				requireTaskOver(t, c, token)
				_, err := c.SendTaskSuccess(bg, &sfn.SendTaskSuccessInput{TaskToken: aws.String(again), Output: aws.String(`{"rows": 7}`)})
				require.NoError(t, err)
			}
			done := waitDone(t, c, arn)
			require.Equal(t, types.ExecutionStatusSucceeded, done.Status)
			n := countTypes(t, c, arn)
			require.Equal(t, 1, n[types.HistoryEventTypeActivitySucceeded], "one success of Load")
			require.Equal(t, 0, n[types.HistoryEventTypeTaskSucceeded])
			require.Equal(t, 1, n[types.HistoryEventTypeWaitStateEntered], "Settle is entered once")
			require.Equal(t, 1, n[types.HistoryEventTypeExecutionSucceeded])
			if tc.name == "skip" {
				require.JSONEq(t, `{"rows": 42}`, aws.ToString(done.Output), "the operator's output, as Load's")
				require.Equal(t, 1, n[types.HistoryEventTypeActivityScheduled])
				require.Equal(t, 0, n[types.HistoryEventTypeActivityFailed])
			} else {
				require.JSONEq(t, `{"rows": 7}`, aws.ToString(done.Output), "the retry's output")
				require.Equal(t, 2, n[types.HistoryEventTypeActivityScheduled], "the first run and one retry")
				require.Equal(t, 2, n[types.HistoryEventTypeActivityStarted])
				require.Equal(t, 1, n[types.HistoryEventTypeActivityFailed], "the kill, once")
				for _, e := range historyOf(t, c, arn) {
					if d := e.ActivityFailedEventDetails; d != nil {
						require.Equal(t, "Ops.Killed", aws.ToString(d.Error))
						require.Equal(t, "stuck on a lock", aws.ToString(d.Cause))
					}
				}
			}
			log := cli("actions", arn)
			require.Regexp(t, `anonymous@127\.0\.0\.1 +(Skip|Kill) +Load`, log)
		})
	}
}
