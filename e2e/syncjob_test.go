package e2e

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/glue"
	gluetypes "github.com/aws/aws-sdk-go-v2/service/glue/types"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/stretchr/testify/require"

	"stepwise/integration/integrationtest"
	"stepwise/internal/testkit/pgtest"
	"stepwise/internal/testkit/testwait"
)

// A Glue job run started by a .sync Task (moto's runs take ten seconds
// here) when the server is killed -9 is found again after the restart by
// the run id recorded in TaskSubmitted, and followed to its end: moto
// has exactly one run of the job, and the history one TaskSubmitted.
func TestSyncJobFollowedAfterKill(t *testing.T) {
	t.Parallel()
	moto := syncJobMoto(t)
	db := filepath.Join(t.TempDir(), "syncjob.db")
	s := startServer(t, db, "--aws-endpoint", moto)
	syncJobCrash(t, moto, s.client(t), func() *sfn.Client {
		s.kill()
		s = startServer(t, db, "--aws-endpoint", moto)
		return s.client(t)
	})
}

// The same on PostgreSQL with two nodes: the node that started the run is
// killed -9, and the other takes the execution over and follows the run.
func TestSyncJobFollowedAfterFailover(t *testing.T) {
	t.Parallel()
	moto := syncJobMoto(t)
	ns := startNodes(t, pgtest.NewDatabase(t), 2, "--aws-endpoint", moto, "--lease", "2s")
	syncJobCrash(t, moto, ns.client(0), func() *sfn.Client {
		ns.kill(0)
		return ns.client(1)
	})
}

// syncJobMoto starts moto with the Glue job "etl", whose runs go
// STARTING → RUNNING → SUCCEEDED, five seconds a step.
func syncJobMoto(t *testing.T) string {
	t.Helper()
	moto := integrationtest.Moto(t)
	ctx := context.Background()
	resp, err := http.Post(moto+"/moto-api/state-manager/set-transition", "application/json",
		strings.NewReader(`{"model_name": "glue::job_run", "transition": {"progression": "time", "seconds": 5}}`))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusCreated, resp.StatusCode)
	_, err = glueClient(t, moto).CreateJob(ctx, &glue.CreateJobInput{Name: aws.String("etl"), Role: aws.String("arn:aws:iam::123456789012:role/glue"),
		Command:           &gluetypes.JobCommand{Name: aws.String("glueetl"), ScriptLocation: aws.String("s3://scripts/etl.py")},
		ExecutionProperty: &gluetypes.ExecutionProperty{MaxConcurrentRuns: 10}}) // a second run would start
	require.NoError(t, err)
	return moto
}

// syncJobCrash starts the run through c and crashes once its start is
// recorded; crash returns a client of the server that carries on.
func syncJobCrash(t *testing.T, moto string, c *sfn.Client, crash func() *sfn.Client) {
	t.Helper()
	ctx := context.Background()
	gc := glueClient(t, moto)
	sm := createMachine(t, c, "etl", `{"StartAt": "Run", "States": {"Run": {"Type": "Task",
		"Resource": "arn:aws:states:::glue:startJobRun.sync", "Parameters": {"JobName": "etl"}, "End": true}}}`)
	start, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(sm)})
	require.NoError(t, err)

	// Killed once the run's start is recorded, while it runs.
	var runID string
	testwait.Until(t, func() bool {
		h, err := c.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: start.ExecutionArn})
		require.NoError(t, err)
		for _, ev := range h.Events {
			if ev.Type == types.HistoryEventTypeTaskSubmitted {
				runID = aws.ToString(ev.TaskSubmittedEventDetails.Output)
				return true
			}
		}
		return false
	}, time.Minute, 5*time.Millisecond)
	next := crash()
	runs, err := gc.GetJobRuns(ctx, &glue.GetJobRunsInput{JobName: aws.String("etl")})
	require.NoError(t, err)
	require.Len(t, runs.JobRuns, 1)
	id := aws.ToString(runs.JobRuns[0].Id)
	require.Contains(t, runID, id, "TaskSubmitted records the run")
	require.NotEqual(t, gluetypes.JobRunStateSucceeded, runs.JobRuns[0].JobRunState, "the run was under way at the kill")

	c = next
	d := waitExecution(t, c, aws.ToString(start.ExecutionArn), 2*time.Minute)
	require.Equal(t, types.ExecutionStatusSucceeded, d.Status, "%v %v", aws.ToString(d.Error), aws.ToString(d.Cause))
	require.Contains(t, aws.ToString(d.Output), `"Id":"`+id+`"`)
	require.Contains(t, aws.ToString(d.Output), `"JobRunState":"SUCCEEDED"`)
	runs, err = gc.GetJobRuns(ctx, &glue.GetJobRunsInput{JobName: aws.String("etl")})
	require.NoError(t, err)
	require.Len(t, runs.JobRuns, 1, "job runs: the restart followed the one started, and started none")
	require.Equal(t, []string{"1 ExecutionStarted", "2 TaskStateEntered", "3 TaskScheduled", "4 TaskStarted", "5 TaskSubmitted",
		"6 TaskSucceeded", "7 TaskStateExited", "8 ExecutionSucceeded"}, historyTypes(t, c, aws.ToString(start.ExecutionArn)))
}

// glueClient is a client of moto's Glue.
func glueClient(t *testing.T, moto string) *glue.Client {
	t.Helper()
	cfg, err := config.LoadDefaultConfig(context.Background(), config.WithRegion("us-east-1"),
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", "")))
	require.NoError(t, err)
	return glue.NewFromConfig(cfg, func(o *glue.Options) { o.BaseEndpoint = aws.String(moto) })
}
