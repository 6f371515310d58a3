package glue_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/glue"
	"github.com/aws/aws-sdk-go-v2/service/glue/types"
	"github.com/stretchr/testify/require"

	"stepwise/integration"
	_ "stepwise/integration/glue"
	"stepwise/integration/integrationtest"
	"stepwise/internal/testkit/testwait"
	"stepwise/jsonvalue"
)

const resource = "arn:aws:states:::glue:startJobRun"

// motoGlue starts moto with the job "etl" (whose runs moto ends SUCCEEDED
// at once).
func motoGlue(t *testing.T) *integration.Registry {
	t.Helper()
	reg, _ := motoGlueClient(t)
	return reg
}

// motoGlueClient is motoGlue with a client of moto's Glue.
func motoGlueClient(t *testing.T) (*integration.Registry, *glue.Client) {
	t.Helper()
	moto := integrationtest.Moto(t)
	cfg := integration.Config{Region: "us-east-1", Account: "123456789012", Endpoints: map[string]string{"glue": moto}}
	reg, err := integration.New(cfg)
	require.NoError(t, err)
	awsCfg, _, err := cfg.AWSConfig(context.Background(), "glue")
	require.NoError(t, err)
	client := glue.NewFromConfig(awsCfg, func(o *glue.Options) { o.BaseEndpoint = aws.String(moto) })
	_, err = client.CreateJob(context.Background(), &glue.CreateJobInput{
		Name: aws.String("etl"), Role: aws.String("arn:aws:iam::123456789012:role/glue"),
		Command:           &types.JobCommand{Name: aws.String("glueetl"), ScriptLocation: aws.String("s3://scripts/etl.py")},
		ExecutionProperty: &types.ExecutionProperty{MaxConcurrentRuns: 10},
	})
	require.NoError(t, err)
	return reg, client
}

const params = `{"JobName": "etl", "Arguments": {"--date": "2024-01-01"}}`

func TestStartJobRunRequestResponse(t *testing.T) {
	t.Parallel()
	reg := motoGlue(t)
	res := integrationtest.Call(t, reg, resource, params)
	require.Nil(t, res.Failure)
	out := res.Output.(*jsonvalue.Object)
	require.Equal(t, []string{"JobName", "JobRunId", "SdkHttpMetadata", "SdkResponseMetadata"}, out.Keys(), "AWS adds the request's JobName")
	require.Equal(t, "etl", integrationtest.Member(t, out, "JobName"))
	require.True(t, strings.HasPrefix(integrationtest.Member(t, out, "JobRunId").(string), "jr_"))
}

func TestStartJobRunSync(t *testing.T) {
	t.Parallel()
	reg := motoGlue(t)
	res := integrationtest.Call(t, reg, resource+".sync", params)
	require.Nil(t, res.Failure)
	out := res.Output.(*jsonvalue.Object)
	require.Equal(t, "SUCCEEDED", integrationtest.Member(t, out, "JobRunState"))
	require.Equal(t, "etl", integrationtest.Member(t, out, "JobName"))
	require.Equal(t, "2024-01-01", integrationtest.Member(t, integrationtest.Member(t, out, "Arguments"), "--date"), "map keys are kept as they are")
	_, isNumber := integrationtest.Member(t, out, "StartedOn").(jsonvalue.Number)
	require.True(t, isNumber, "timestamps are epoch milliseconds")
	require.IsIncreasing(t, out.Keys())
	require.False(t, out.Has("SdkHttpMetadata"))
}

func TestStartJobRunServiceError(t *testing.T) {
	t.Parallel()
	reg := motoGlue(t)
	res := integrationtest.Call(t, reg, resource+".sync", `{"JobName": "nope"}`)
	require.NotNil(t, res.Failure)
	require.Equal(t, "Glue.EntityNotFoundException", res.Failure.Name)
	require.Contains(t, res.Failure.Cause, "(Service: AWSGlue; Status Code: 400; Error Code: EntityNotFoundException; Request ID: ")
}

func TestStartJobRunBadParameters(t *testing.T) {
	t.Parallel()
	reg, err := integration.New(integration.Config{Region: "us-east-1", Account: "123456789012", Endpoints: map[string]string{"glue": "http://127.0.0.1:1"}})
	require.NoError(t, err)
	for params, cause := range map[string]string{
		`{"Arguments": {}}`:                   "The Parameters could not be used to start the Task: [The field 'JobName' is required but was missing]",
		`{"JobName": "etl", "Bogus": 1}`:      "The Parameters could not be used to start the Task: [The field 'Bogus' is not supported by Step Functions]",
		`{"JobName": "etl", "Timeout": "1h"}`: "The Parameters could not be used to start the Task: [The value of the field 'Timeout' must be an integer, not string]",
	} {
		res := integrationtest.Call(t, reg, resource+".sync", params)
		require.NotNil(t, res.Failure, params)
		require.Equal(t, "States.TaskFailed", res.Failure.Name)
		require.Equal(t, cause, res.Failure.Cause)
	}
}

// standIn is Glue for the runs moto cannot show (moto's runs succeed,
// and it has no BatchStopJobRun): a run of "fails" is RUNNING, then
// FAILED; a run of "forever" stays RUNNING until stopped.
type standIn struct {
	mu      sync.Mutex
	polls   int
	stopped []string
}

func (s *standIn) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	_ = json.NewDecoder(r.Body).Decode(&body)
	s.mu.Lock()
	defer s.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	switch strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "AWSGlue.") {
	case "StartJobRun":
		fmt.Fprint(w, `{"JobRunId": "jr_1"}`)
	case "GetJobRun":
		s.polls++
		state := "RUNNING"
		if body["JobName"] == "fails" && s.polls > 1 {
			state = "FAILED"
		}
		fmt.Fprintf(w, `{"JobRun": {"Id": "jr_1", "JobName": %q, "JobRunState": %q, "ErrorMessage": "boom", "StartedOn": 1700000000.5, "Attempt": 0}}`, body["JobName"], state)
	case "BatchStopJobRun":
		s.stopped = append(s.stopped, body["JobName"].(string)+"/"+body["JobRunIds"].([]any)[0].(string))
		fmt.Fprint(w, `{"SuccessfulSubmissions": [], "Errors": []}`)
	}
}

func newStandIn(t *testing.T) (*standIn, *integration.Registry) {
	t.Helper()
	s := &standIn{}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	reg, err := integration.New(integration.Config{Region: "us-east-1", Account: "123456789012", Endpoints: map[string]string{"glue": srv.URL}})
	require.NoError(t, err)
	return s, reg
}

func TestStartJobRunSyncFailure(t *testing.T) {
	t.Parallel()
	_, reg := newStandIn(t)
	res := integrationtest.Call(t, reg, resource+".sync", `{"JobName": "fails"}`)
	require.NotNil(t, res.Failure)
	require.Equal(t, "States.TaskFailed", res.Failure.Name)
	cause, err := jsonvalue.ParseString(res.Failure.Cause)
	require.NoError(t, err)
	require.Equal(t, "FAILED", integrationtest.Member(t, cause, "JobRunState"))
	require.Equal(t, "boom", integrationtest.Member(t, cause, "ErrorMessage"))
	require.Equal(t, jsonvalue.Number("1700000000500"), integrationtest.Member(t, cause, "StartedOn"))
}

func TestStartJobRunSyncCancelled(t *testing.T) {
	t.Parallel()
	s, reg := newStandIn(t)
	ch := integrationtest.Start(t, reg, resource+".sync", `{"JobName": "forever"}`)
	testwait.Until(t, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.polls > 2
	}, 30*time.Second, 5*time.Millisecond)
	reg.Cancel("arn:x", "t1")
	testwait.Until(t, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return len(s.stopped) == 1 && s.stopped[0] == "forever/jr_1"
	}, 30*time.Second, 5*time.Millisecond, "the run is stopped")
	select {
	case r := <-ch:
		t.Fatalf("a cancelled task answered: %+v", r)
	case <-time.After(50 * time.Millisecond):
	}
}

// A .sync task dispatched again after a restart, its run's start
// recorded, follows that run: no second run is started.
func TestStartJobRunSyncResumed(t *testing.T) {
	t.Parallel()
	reg, client := motoGlueClient(t)
	started := integrationtest.Call(t, reg, resource, params) // the start, as recorded
	require.Nil(t, started.Failure)
	id := integrationtest.Member(t, started.Output, "JobRunId")
	res := integrationtest.Resume(t, reg, resource+".sync", params, started.Output)
	require.Nil(t, res.Failure)
	require.Equal(t, id, integrationtest.Member(t, res.Output, "Id"))
	require.Equal(t, "SUCCEEDED", integrationtest.Member(t, res.Output, "JobRunState"))
	runs, err := client.GetJobRuns(context.Background(), &glue.GetJobRunsInput{JobName: aws.String("etl")})
	require.NoError(t, err)
	require.Len(t, runs.JobRuns, 1, "job runs started")
}

// A .sync task dispatched again after a restart whose run was started but
// its start not recorded (a crash between StartJobRun's answer and the
// commit of TaskSubmitted) finds that run by the argument naming the task,
// records its start and follows it: no second run is started.
func TestStartJobRunSyncRedispatchedFindsItsRun(t *testing.T) {
	t.Parallel()
	reg, client := motoGlueClient(t)
	first := integrationtest.Call(t, reg, resource, params) // the start whose answer was lost
	require.Nil(t, first.Failure)
	id := integrationtest.Member(t, first.Output, "JobRunId")

	submitted, res := integrationtest.Redispatch(t, reg, resource+".sync", params)
	require.Nil(t, res.Failure)
	require.NotNil(t, submitted, "the run's start is recorded")
	require.Equal(t, id, integrationtest.Member(t, submitted, "JobRunId"))
	require.Equal(t, "etl", integrationtest.Member(t, submitted, "JobName"))
	require.Equal(t, id, integrationtest.Member(t, res.Output, "Id"))
	require.Equal(t, "2024-01-01", integrationtest.Member(t, res.Output, "Arguments", "--date"))
	runs, err := client.GetJobRuns(context.Background(), &glue.GetJobRunsInput{JobName: aws.String("etl")})
	require.NoError(t, err)
	require.Len(t, runs.JobRuns, 1, "job runs started")
	require.True(t, strings.HasPrefix(runs.JobRuns[0].Arguments["--stepwise-task"], "stepwise-"), "the run names its task: %v", runs.JobRuns[0].Arguments)

	// Request-response alike: the run is answered, not started again.
	_, res = integrationtest.Redispatch(t, reg, resource, params)
	require.Nil(t, res.Failure)
	require.Equal(t, id, integrationtest.Member(t, res.Output, "JobRunId"))
	runs, err = client.GetJobRuns(context.Background(), &glue.GetJobRunsInput{JobName: aws.String("etl")})
	require.NoError(t, err)
	require.Len(t, runs.JobRuns, 1, "job runs started")
}

// A task dispatched again whose first dispatch started nothing starts its
// run; a run of another task, or one whose Parameters name the task
// themselves, is not taken for it.
func TestStartJobRunSyncRedispatchedStartsOnce(t *testing.T) {
	t.Parallel()
	reg, client := motoGlueClient(t)
	other := integrationtest.Call(t, reg, resource, `{"JobName": "etl", "Arguments": {"--stepwise-task": "another"}}`)
	require.Nil(t, other.Failure)
	submitted, res := integrationtest.Redispatch(t, reg, resource+".sync", params)
	require.Nil(t, res.Failure)
	require.NotNil(t, submitted)
	require.NotEqual(t, integrationtest.Member(t, other.Output, "JobRunId"), integrationtest.Member(t, submitted, "JobRunId"))
	runs, err := client.GetJobRuns(context.Background(), &glue.GetJobRunsInput{JobName: aws.String("etl")})
	require.NoError(t, err)
	require.Len(t, runs.JobRuns, 2, "job runs started")
	args := map[string]bool{}
	for _, run := range runs.JobRuns {
		args[run.Arguments["--stepwise-task"]] = true
	}
	require.True(t, args["another"], "the Parameters' argument is kept: %v", args)

	// Dispatched again once more: its run is found.
	_, res = integrationtest.Redispatch(t, reg, resource+".sync", params)
	require.Nil(t, res.Failure)
	require.Equal(t, integrationtest.Member(t, submitted, "JobRunId"), integrationtest.Member(t, res.Output, "Id"))
	runs, err = client.GetJobRuns(context.Background(), &glue.GetJobRunsInput{JobName: aws.String("etl")})
	require.NoError(t, err)
	require.Len(t, runs.JobRuns, 2, "job runs started")
}
