package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/glue"
	gluetypes "github.com/aws/aws-sdk-go-v2/service/glue/types"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/stretchr/testify/require"

	"stepwise/integration/integrationtest"
)

// A .sync Glue task whose server is killed -9 in the first milliseconds
// after its execution started (before the StartJobRun call, between the
// call and the commit of TaskSubmitted, or after it) starts its job run
// once: after the restart each execution's job has exactly one run, the
// one its TaskSubmitted names, and the execution succeeds. Some kills
// must fall between a run's start and its record (the run there at the
// kill, its TaskSubmitted written by the restarted server).
//
// STEPWISE_SYNC_KILL_DELAYS (milliseconds, comma-separated; "0,1,2,3,4,6"
// by default) are the rounds' delays between the starts and the kill,
// STEPWISE_SYNC_KILL_EXECUTIONS (5 by default) the executions each round
// starts at once.
func TestSyncJobStartedOnceAcrossKills(t *testing.T) {
	t.Parallel()
	moto := integrationtest.Moto(t)
	gc := glueClient(t, moto)
	db := filepath.Join(t.TempDir(), "once.db")
	s := startServer(t, db, "--aws-endpoint", moto)
	sm := createMachine(t, s.client(t), "etl-once", `{"StartAt": "Run", "States": {"Run": {"Type": "Task",
		"Resource": "arn:aws:states:::glue:startJobRun.sync", "Parameters": {"JobName.$": "$.job"}, "End": true}}}`)
	delays := killDelays(t)
	n := killEnv(t, "STEPWISE_SYNC_KILL_EXECUTIONS", 5)

	twice, window, total := 0, 0, 0
	for round, delay := range delays {
		jobs := make([]string, n)
		for i := range jobs {
			jobs[i] = fmt.Sprintf("etl-%d-%d", round, i)
			createGlueJob(t, gc, jobs[i])
		}
		c := s.client(t)
		arns := make([]string, n)
		var wg sync.WaitGroup
		for i := range jobs {
			wg.Go(func() {
				out, err := c.StartExecution(context.Background(), &sfn.StartExecutionInput{
					StateMachineArn: aws.String(sm), Input: aws.String(`{"job": "` + jobs[i] + `"}`)})
				require.NoError(t, err)
				arns[i] = aws.ToString(out.ExecutionArn)
			})
		}
		wg.Wait()
		time.Sleep(delay)
		s.kill()
		// The runs started before the kill: those whose start the
		// restarted server records were in the window.
		before := make([]int, n)
		for i := range jobs {
			runs, err := gc.GetJobRuns(context.Background(), &glue.GetJobRunsInput{JobName: aws.String(jobs[i])})
			require.NoError(t, err)
			before[i] = len(runs.JobRuns)
		}
		restarted := time.Now()
		s = startServer(t, db, "--aws-endpoint", moto)
		c = s.client(t)
		for i, arn := range arns {
			d := waitExecution(t, c, arn, 2*time.Minute)
			require.Equal(t, types.ExecutionStatusSucceeded, d.Status, "%v %v", aws.ToString(d.Error), aws.ToString(d.Cause))
			runs, err := gc.GetJobRuns(context.Background(), &glue.GetJobRunsInput{JobName: aws.String(jobs[i])})
			require.NoError(t, err)
			total++
			if len(runs.JobRuns) != 1 {
				twice++
				t.Logf("killed %v after the start: %s has %d runs", delay, jobs[i], len(runs.JobRuns))
				continue
			}
			submitted := 0
			h, err := c.GetExecutionHistory(context.Background(), &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String(arn)})
			require.NoError(t, err)
			for _, ev := range h.Events {
				if ev.Type == types.HistoryEventTypeTaskSubmitted {
					submitted++
					require.Contains(t, aws.ToString(ev.TaskSubmittedEventDetails.Output), aws.ToString(runs.JobRuns[0].Id), "TaskSubmitted names the run")
					if before[i] == 1 && ev.Timestamp.After(restarted) {
						window++
					}
				}
			}
			require.Equal(t, 1, submitted, "TaskSubmitted events of %s", arn)
		}
	}
	t.Logf("executions whose job was started more than once: %d of %d; started and not recorded at the kill: %d", twice, total, window)
	require.Zero(t, twice, "executions whose job was started more than once")
	require.NotZero(t, window, "no kill fell between a start and its record")
}

// killDelays are the delays of STEPWISE_SYNC_KILL_DELAYS.
func killDelays(t *testing.T) []time.Duration {
	t.Helper()
	v := os.Getenv("STEPWISE_SYNC_KILL_DELAYS")
	if v == "" {
		v = "0,1,2,3,4,6"
	}
	var out []time.Duration
	for f := range strings.SplitSeq(v, ",") {
		ms, err := strconv.Atoi(strings.TrimSpace(f))
		require.NoError(t, err, "STEPWISE_SYNC_KILL_DELAYS")
		out = append(out, time.Duration(ms)*time.Millisecond)
	}
	return out
}

// createGlueJob creates a Glue job in moto whose runs moto ends at once.
func createGlueJob(t *testing.T, gc *glue.Client, name string) {
	t.Helper()
	_, err := gc.CreateJob(context.Background(), &glue.CreateJobInput{Name: aws.String(name), Role: aws.String("arn:aws:iam::123456789012:role/glue"),
		Command:           &gluetypes.JobCommand{Name: aws.String("glueetl"), ScriptLocation: aws.String("s3://scripts/etl.py")},
		ExecutionProperty: &gluetypes.ExecutionProperty{MaxConcurrentRuns: 10}})
	require.NoError(t, err)
}
