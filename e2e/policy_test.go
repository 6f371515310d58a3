package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/stretchr/testify/require"
)

// The failure policies set by tags, end to end: a Parallel whose fast
// branch fails while a slow activity branch runs. Without a policy the
// activity's task is stopped (AWS); with finish-running the worker's
// answer is taken, the state fails once it came, and a redrive runs only
// the branch that failed, keeping the activity's result. The execution
// keeps the policies it started with when the tags change.
func TestFailurePolicies(t *testing.T) {
	t.Parallel()
	s := startServer(t, filepath.Join(t.TempDir(), "policies.db"))
	c := s.client(t)
	ctx := context.Background()
	act, err := c.CreateActivity(ctx, &sfn.CreateActivityInput{Name: aws.String("slow-job")})
	require.NoError(t, err)
	def := fmt.Sprintf(`{"StartAt": "Fan", "States": {"Fan": {"Type": "Parallel", "End": true, "Branches": [
		{"StartAt": "Slow", "States": {"Slow": {"Type": "Task", "Resource": %q, "End": true}}},
		{"StartAt": "Wait", "States": {
			"Wait": {"Type": "Wait", "Seconds": 1, "Next": "Fast"},
			"Fast": {"Type": "Pass", "Parameters": {"v.$": "States.StringToJson(States.ArrayGetItem($.seq, $$.Execution.RedriveCount))"}, "End": true}}}]}}}`, *act.ActivityArn)

	run := func(name string, tags []types.Tag) (string, []string) {
		out, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String(name), Definition: aws.String(def),
			RoleArn: aws.String(roleArn), Tags: tags})
		require.NoError(t, err)
		// The fast branch fails on its first run (its text is not JSON), and
		// passes once redriven.
		x := startExecution(t, c, *out.StateMachineArn, "night", `{"seq": ["not json", "\"fixed\""]}`)
		task, err := c.GetActivityTask(ctx, &sfn.GetActivityTaskInput{ActivityArn: act.ActivityArn})
		require.NoError(t, err)
		require.NotNil(t, task.TaskToken)
		// The fast branch fails meanwhile (its Wait is 1 s).
		time.Sleep(1500 * time.Millisecond)
		_, err = c.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: task.TaskToken, Output: aws.String(`{"rows": 42}`)})
		d := waitExecution(t, c, x, 30*time.Second)
		require.Equal(t, types.ExecutionStatusFailed, d.Status)
		require.Equal(t, "States.Runtime", *d.Error)
		var types []string
		for _, e := range historyTypes(t, c, x) {
			types = append(types, e[len(fmt.Sprint(len(types)+1))+1:])
		}
		if err != nil {
			return x, append(types, "answer refused")
		}
		return x, types
	}

	// AWS: the activity is aborted; the worker's late answer is refused.
	_, events := run("aws-behaviour", nil)
	require.Contains(t, events, "TaskStateAborted")
	require.Contains(t, events, "answer refused")

	// finish-running: the activity's result is taken before the state fails.
	x, events := run("spare-running", []types.Tag{{Key: aws.String("stepwise:policy/Fan"), Value: aws.String("finish-running")}})
	require.NotContains(t, events, "TaskStateAborted")
	require.NotContains(t, events, "answer refused")
	require.Contains(t, events, "ActivitySucceeded")

	// The tags change; the execution keeps its policies, and its redrive
	// runs only the failed branch.
	sm := "arn:aws:states:us-east-1:123456789012:stateMachine:spare-running"
	_, err = c.UntagResource(ctx, &sfn.UntagResourceInput{ResourceArn: aws.String(sm), TagKeys: []string{"stepwise:policy/Fan"}})
	require.NoError(t, err)
	_, err = c.RedriveExecution(ctx, &sfn.RedriveExecutionInput{ExecutionArn: aws.String(x)})
	require.NoError(t, err)
	d := waitExecution(t, c, x, 30*time.Second)
	require.Equal(t, types.ExecutionStatusSucceeded, d.Status, "%v %v", aws.ToString(d.Error), aws.ToString(d.Cause))
	var out []any
	require.NoError(t, json.Unmarshal([]byte(*d.Output), &out))
	require.Equal(t, []any{map[string]any{"rows": float64(42)}, map[string]any{"v": "fixed"}}, out)

	// A policy tag that names no policy is refused.
	_, err = c.TagResource(ctx, &sfn.TagResourceInput{ResourceArn: aws.String(sm),
		Tags: []types.Tag{{Key: aws.String("stepwise:policy/Fan"), Value: aws.String("finish-later")}}})
	require.ErrorContains(t, err, `unknown policy "finish-later"`)
}

// retry-failed-items: a Map whose Retry fires runs only the items that
// failed again (here, the one whose worker failed its first attempt); the
// others keep their results and are not run again.
func TestFailurePolicyMapRetry(t *testing.T) {
	t.Parallel()
	s := startServer(t, filepath.Join(t.TempDir(), "retry.db"))
	c := s.client(t)
	ctx := context.Background()
	act, err := c.CreateActivity(ctx, &sfn.CreateActivityInput{Name: aws.String("item-job")})
	require.NoError(t, err)
	def := fmt.Sprintf(`{"StartAt": "M", "States": {"M": {"Type": "Map", "End": true,
		"Retry": [{"ErrorEquals": ["States.ALL"], "MaxAttempts": 1, "IntervalSeconds": 1}],
		"ItemProcessor": {"StartAt": "Work", "States": {"Work": {"Type": "Task", "Resource": %q, "End": true}}}}}}`, *act.ActivityArn)
	out, err := c.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("retry-items"), Definition: aws.String(def),
		RoleArn: aws.String(roleArn), Tags: []types.Tag{{Key: aws.String("stepwise:policy/M"), Value: aws.String("retry-failed-items")}}})
	require.NoError(t, err)
	x := startExecution(t, c, *out.StateMachineArn, "once", `[1, 2, 3]`)
	// The worker: item 2 fails its first attempt; it counts what it did.
	done := map[string]int{}
	for handed := 0; handed < 4; handed++ {
		task, err := c.GetActivityTask(ctx, &sfn.GetActivityTaskInput{ActivityArn: act.ActivityArn})
		require.NoError(t, err)
		require.NotNil(t, task.TaskToken, "a task for each item, and item 2 once more")
		done[*task.Input]++
		if *task.Input == "2" && done["2"] == 1 {
			_, err = c.SendTaskFailure(ctx, &sfn.SendTaskFailureInput{TaskToken: task.TaskToken, Error: aws.String("FirstTime")})
		} else {
			_, err = c.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: task.TaskToken, Output: aws.String(fmt.Sprintf(`{"item": %s, "try": %d}`, *task.Input, done[*task.Input]))})
		}
		require.NoError(t, err)
	}
	d := waitExecution(t, c, x, 30*time.Second)
	require.Equal(t, types.ExecutionStatusSucceeded, d.Status, "%v %v", aws.ToString(d.Error), aws.ToString(d.Cause))
	require.JSONEq(t, `[{"item": 1, "try": 1}, {"item": 2, "try": 2}, {"item": 3, "try": 1}]`, *d.Output)
	require.Equal(t, map[string]int{"1": 1, "2": 2, "3": 1}, done)
}
