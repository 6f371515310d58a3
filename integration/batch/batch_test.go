package batch_test

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

	"github.com/stretchr/testify/require"

	"stepwise/engine/task"
	"stepwise/integration"
	_ "stepwise/integration/batch"
	"stepwise/integration/integrationtest"
	"stepwise/internal/testkit/testwait"
	"stepwise/interp"
	"stepwise/jsonvalue"
)

const resource = "arn:aws:states:::batch:submitJob"

// standIn is AWS Batch for the tests (moto runs jobs in docker): it speaks
// SubmitJob, DescribeJobs and TerminateJob. A job is RUNNABLE, then
// RUNNING, then SUCCEEDED, one step per DescribeJobs; a job named "fails"
// ends FAILED, one named "forever" stays RUNNING. The queue "nope" does
// not exist. ListJobs lists the jobs of a queue whose name a JOB_NAME
// filter gives.
type standIn struct {
	mu         sync.Mutex
	submitted  []map[string]any
	jobs       map[string]*job
	terminated map[string]string // job ID → reason
}

type job struct {
	name, queue, status string
	params              map[string]any
	polls               int
}

var schedule = map[string][]string{
	"":        {"RUNNABLE", "RUNNING", "SUCCEEDED"},
	"fails":   {"RUNNABLE", "RUNNING", "FAILED"},
	"forever": {"RUNNABLE", "RUNNING"},
}

func newStandIn(t *testing.T) (*standIn, *integration.Registry) {
	t.Helper()
	s := &standIn{jobs: map[string]*job{}, terminated: map[string]string{}}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	reg, err := integration.New(integration.Config{Region: "us-east-1", Account: "123456789012", Endpoints: map[string]string{"batch": srv.URL}})
	require.NoError(t, err)
	return s, reg
}

func (s *standIn) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body map[string]any
	_ = json.NewDecoder(r.Body).Decode(&body)
	s.mu.Lock()
	defer s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-RequestId", "req-1")
	switch r.URL.Path {
	case "/v1/submitjob":
		s.submit(w, body)
	case "/v1/describejobs":
		s.describe(w, body)
	case "/v1/listjobs":
		s.list(w, body)
	case "/v1/terminatejob":
		s.terminated[body["jobId"].(string)] = body["reason"].(string)
		fmt.Fprint(w, `{}`)
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

func (s *standIn) submit(w http.ResponseWriter, body map[string]any) {
	if body["jobQueue"] == "nope" {
		w.Header().Set("X-Amzn-ErrorType", "ClientException")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"message": "JobQueue nope not found"}`)
		return
	}
	s.submitted = append(s.submitted, body)
	id := fmt.Sprintf("job-%d", len(s.submitted))
	name := body["jobName"].(string)
	params, _ := body["parameters"].(map[string]any)
	s.jobs[id] = &job{name: name, queue: body["jobQueue"].(string), status: "SUBMITTED", params: params}
	fmt.Fprintf(w, `{"jobArn": "arn:aws:batch:us-east-1:123456789012:job/%s", "jobName": %q, "jobId": %q}`, id, name, id)
}

func (s *standIn) describe(w http.ResponseWriter, body map[string]any) {
	var jobs []any
	for _, id := range body["jobs"].([]any) {
		j := s.jobs[id.(string)]
		steps, ok := schedule[j.name]
		if !ok {
			steps = schedule[""]
		}
		j.status = steps[min(j.polls, len(steps)-1)]
		j.polls++
		d := map[string]any{"jobId": id, "jobArn": "arn:aws:batch:us-east-1:123456789012:job/" + id.(string), "jobName": j.name, "jobQueue": "arn:aws:batch:us-east-1:123456789012:job-queue/nightly",
			"jobDefinition": "arn:aws:batch:us-east-1:123456789012:job-definition/etl:1", "status": j.status,
			"createdAt": 1700000000000, "parameters": j.params, "tags": map[string]any{"team": "data"}}
		if j.status == "FAILED" {
			d["statusReason"] = "Essential container in task exited"
			d["container"] = map[string]any{"exitCode": 3, "image": "etl"}
		}
		jobs = append(jobs, d)
	}
	json.NewEncoder(w).Encode(map[string]any{"jobs": jobs})
}

func (s *standIn) list(w http.ResponseWriter, body map[string]any) {
	filters, _ := body["filters"].([]any)
	if len(filters) != 1 || filters[0].(map[string]any)["name"] != "JOB_NAME" {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	name := filters[0].(map[string]any)["values"].([]any)[0]
	summaries := []any{}
	for id, j := range s.jobs {
		if j.queue == body["jobQueue"] && strings.EqualFold(j.name, name.(string)) {
			summaries = append(summaries, map[string]any{"jobId": id, "jobName": j.name})
		}
	}
	json.NewEncoder(w).Encode(map[string]any{"jobSummaryList": summaries})
}

func jobParams(name string) string {
	return `{"JobName": "` + name + `", "JobQueue": "nightly", "JobDefinition": "etl",
		"Parameters": {"date": "2024-01-01"}, "ContainerOverrides": {"Command": ["etl", "Ref::date"], "Environment": [{"Name": "MODE", "Value": "full"}]}}`
}

func TestSubmitJobRequestResponse(t *testing.T) {
	t.Parallel()
	s, reg := newStandIn(t)
	res := integrationtest.Call(t, reg, resource, jobParams("nightly-etl"))
	require.Nil(t, res.Failure)
	out := res.Output.(*jsonvalue.Object)
	require.Equal(t, []string{"JobArn", "JobId", "JobName", "SdkHttpMetadata", "SdkResponseMetadata"}, out.Keys())
	require.Equal(t, "job-1", integrationtest.Member(t, out, "JobId"))
	require.Equal(t, "req-1", integrationtest.Member(t, integrationtest.Member(t, out, "SdkResponseMetadata"), "RequestId"))
	sent := s.submitted[0]
	require.Equal(t, "2024-01-01", sent["parameters"].(map[string]any)["date"])
	require.Regexp(t, `^stepwise-[0-9a-f]{40}$`, sent["parameters"].(map[string]any)["StepwiseTask"], "the job names its task")
	require.Equal(t, []any{map[string]any{"name": "MODE", "value": "full"}}, sent["containerOverrides"].(map[string]any)["environment"],
		"request-response leaves the environment as it is")

	res = integrationtest.Call(t, reg, resource+".waitForTaskToken", jobParams("callback"))
	require.Nil(t, res.Failure)
	require.True(t, res.Submitted)
}

func TestSubmitJobSync(t *testing.T) {
	t.Parallel()
	s, reg := newStandIn(t)
	res := integrationtest.Call(t, reg, resource+".sync", jobParams("nightly-etl"))
	require.Nil(t, res.Failure)
	out := res.Output.(*jsonvalue.Object)
	require.Equal(t, "SUCCEEDED", integrationtest.Member(t, out, "Status"))
	require.Equal(t, jsonvalue.Number("1700000000000"), integrationtest.Member(t, out, "CreatedAt"))
	require.Equal(t, "2024-01-01", integrationtest.Member(t, integrationtest.Member(t, out, "Parameters"), "date"), "map keys are kept as they are")
	require.IsIncreasing(t, out.Keys())
	require.False(t, out.Has("SdkHttpMetadata"))
	require.Contains(t, s.submitted[0]["containerOverrides"].(map[string]any)["environment"],
		map[string]any{"name": "MANAGED_BY_AWS", "value": "STARTED_BY_STEP_FUNCTIONS"}, "AWS marks the jobs .sync submits")
	require.Equal(t, 3, s.jobs["job-1"].polls, "polled until SUCCEEDED")
}

func TestSubmitJobSyncFailure(t *testing.T) {
	t.Parallel()
	_, reg := newStandIn(t)
	res := integrationtest.Call(t, reg, resource+".sync", jobParams("fails"))
	require.NotNil(t, res.Failure)
	require.Equal(t, "States.TaskFailed", res.Failure.Name)
	cause, err := jsonvalue.ParseString(res.Failure.Cause)
	require.NoError(t, err)
	require.Equal(t, "FAILED", integrationtest.Member(t, cause, "Status"))
	require.Equal(t, "Essential container in task exited", integrationtest.Member(t, cause, "StatusReason"))
	require.Equal(t, jsonvalue.Number("3"), integrationtest.Member(t, integrationtest.Member(t, cause, "Container"), "ExitCode"))
}

func TestSubmitJobSyncCancelled(t *testing.T) {
	t.Parallel()
	s, reg := newStandIn(t)
	ch := integrationtest.Start(t, reg, resource+".sync", jobParams("forever"))
	testwait.Until(t, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.jobs["job-1"] != nil && s.jobs["job-1"].polls > 2
	}, 30*time.Second, 5*time.Millisecond)
	reg.Cancel("arn:x", "t1")
	testwait.Until(t, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.terminated["job-1"] != ""
	}, 30*time.Second, 5*time.Millisecond, "the job is terminated")
	select {
	case r := <-ch:
		t.Fatalf("a cancelled task answered: %+v", r)
	case <-time.After(50 * time.Millisecond):
	}
}

func TestSubmitJobServiceError(t *testing.T) {
	t.Parallel()
	_, reg := newStandIn(t)
	res := integrationtest.Call(t, reg, resource+".sync", `{"JobName": "x", "JobQueue": "nope", "JobDefinition": "etl"}`)
	require.NotNil(t, res.Failure)
	require.Equal(t, "Batch.ClientException", res.Failure.Name)
	require.Equal(t, "Error executing request, Exception : JobQueue nope not found, RequestId: req-1 (Service: AWSBatch; Status Code: 400; Error Code: ClientException; Request ID: req-1; Proxy: null)", res.Failure.Cause)
}

func TestSubmitJobBadParameters(t *testing.T) {
	t.Parallel()
	s, reg := newStandIn(t)
	for params, cause := range map[string]string{
		`{"JobName": "x", "JobQueue": "q"}`:                                               "The Parameters could not be used to start the Task: [The field 'JobDefinition' is required but was missing]",
		`{"JobName": "x", "JobQueue": "q", "JobDefinition": "d", "Parameters": {"n": 1}}`: "The Parameters could not be used to start the Task: [The value of the field 'Parameters.n' must be a string, not number]",
		`{"JobName": "x", "JobQueue": "q", "JobDefinition": "d", "Priority": 1}`:          "The Parameters could not be used to start the Task: [The field 'Priority' is not supported by Step Functions]",
	} {
		res := integrationtest.Call(t, reg, resource+".sync", params)
		require.NotNil(t, res.Failure, params)
		require.Equal(t, "States.TaskFailed", res.Failure.Name)
		require.Equal(t, cause, res.Failure.Cause)
	}
	require.Empty(t, s.submitted, "nothing is submitted")
}

// A .sync task dispatched again after a restart, its job's start
// recorded, follows that job: no second job is submitted.
func TestSubmitJobSyncResumed(t *testing.T) {
	t.Parallel()
	s, reg := newStandIn(t)
	started := integrationtest.Call(t, reg, resource, jobParams("nightly-etl")) // the start, as recorded
	require.Nil(t, started.Failure)
	res := integrationtest.Resume(t, reg, resource+".sync", jobParams("nightly-etl"), started.Output)
	require.Nil(t, res.Failure)
	require.Equal(t, "SUCCEEDED", integrationtest.Member(t, res.Output, "Status"))
	require.Equal(t, "job-1", integrationtest.Member(t, res.Output, "JobId"))
	require.Len(t, s.submitted, 1, "jobs submitted")
	require.Equal(t, 3, s.jobs["job-1"].polls, "polled until SUCCEEDED")
}

// A task dispatched again after a restart whose job was submitted but its
// submission not recorded (a crash between SubmitJob's answer and the
// commit of TaskSubmitted) finds that job in the queue by the parameter
// naming the task, records it and follows it: no second job is
// submitted. Another task's job of the same name is not taken for it.
func TestSubmitJobSyncRedispatchedFindsItsJob(t *testing.T) {
	t.Parallel()
	s, reg := newStandIn(t)
	p, err := jsonvalue.ParseString(jobParams("nightly-etl"))
	require.NoError(t, err)
	other := make(chan task.Result, 1)
	reg.Run(context.Background(), &task.Task{ExecutionArn: "arn:x", ID: "t0", Request: &interp.TaskRequest{Resource: resource, Parameters: p}},
		func(r task.Result) { other <- r })
	require.Nil(t, (<-other).Failure)
	first := integrationtest.Call(t, reg, resource, jobParams("nightly-etl")) // the submission whose answer was lost
	require.Nil(t, first.Failure)
	require.Equal(t, "job-2", integrationtest.Member(t, first.Output, "JobId"))

	submitted, res := integrationtest.Redispatch(t, reg, resource+".sync", jobParams("nightly-etl"))
	require.Nil(t, res.Failure)
	require.NotNil(t, submitted, "the job's submission is recorded")
	require.Equal(t, "job-2", integrationtest.Member(t, submitted, "JobId"))
	require.Equal(t, "nightly-etl", integrationtest.Member(t, submitted, "JobName"))
	require.Equal(t, "arn:aws:batch:us-east-1:123456789012:job/job-2", integrationtest.Member(t, submitted, "JobArn"))
	require.Equal(t, "job-2", integrationtest.Member(t, res.Output, "JobId"))
	require.Equal(t, "SUCCEEDED", integrationtest.Member(t, res.Output, "Status"))
	require.Len(t, s.submitted, 2, "jobs submitted")

	// A .waitForTaskToken task alike: the job found is its submission.
	_, res = integrationtest.Redispatch(t, reg, resource+".waitForTaskToken", jobParams("nightly-etl"))
	require.Nil(t, res.Failure)
	require.True(t, res.Submitted)
	require.Equal(t, "job-2", integrationtest.Member(t, res.Output, "JobId"))
	require.Len(t, s.submitted, 2, "jobs submitted")

	// Dispatched again with no job of its own in the queue: submitted.
	_, res = integrationtest.Redispatch(t, reg, resource+".sync", jobParams("other-name"))
	require.Nil(t, res.Failure)
	require.Equal(t, "job-3", integrationtest.Member(t, res.Output, "JobId"))
	require.Len(t, s.submitted, 3, "jobs submitted")
}
