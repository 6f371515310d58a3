package ecs_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ecs"
	"github.com/aws/aws-sdk-go-v2/service/ecs/types"
	"github.com/stretchr/testify/require"

	"stepwise/engine/task"
	"stepwise/integration"
	_ "stepwise/integration/ecs"
	"stepwise/integration/integrationtest"
	"stepwise/internal/testkit/testwait"
	"stepwise/interp"
	"stepwise/jsonvalue"
)

const resource = "arn:aws:states:::ecs:runTask"

// motoECS starts moto with a cluster and a task definition.
func motoECS(t *testing.T) (*integration.Registry, *ecs.Client, string) {
	t.Helper()
	return motoECSBehind(t, func(endpoint string) string { return endpoint })
}

// motoECSBehind is motoECS whose registry calls ECS at front(endpoint).
func motoECSBehind(t *testing.T, front func(endpoint string) string) (*integration.Registry, *ecs.Client, string) {
	t.Helper()
	moto := integrationtest.Moto(t)
	endpoint := fixContainers(t, moto)
	cfg := integration.Config{Region: "us-east-1", Account: "123456789012", Endpoints: map[string]string{"ecs": front(endpoint)}}
	reg, err := integration.New(cfg)
	require.NoError(t, err)
	client := motoECSSetup(t, cfg, endpoint)
	return reg, client, moto
}

// motoECSSetup creates the cluster "jobs" and the task definition
// "nightly" in moto and returns a client of it.
func motoECSSetup(t *testing.T, cfg integration.Config, endpoint string) *ecs.Client {
	t.Helper()
	awsCfg, _, err := cfg.AWSConfig(context.Background(), "ecs")
	require.NoError(t, err)
	client := ecs.NewFromConfig(awsCfg, func(o *ecs.Options) { o.BaseEndpoint = aws.String(endpoint) })
	ctx := context.Background()
	_, err = client.CreateCluster(ctx, &ecs.CreateClusterInput{ClusterName: aws.String("jobs")})
	require.NoError(t, err)
	_, err = client.RegisterTaskDefinition(ctx, &ecs.RegisterTaskDefinitionInput{
		Family: aws.String("nightly"), NetworkMode: types.NetworkModeBridge,
		ContainerDefinitions: []types.ContainerDefinition{{Name: aws.String("main"), Image: aws.String("busybox"), Memory: aws.Int32(128)}},
	})
	require.NoError(t, err)
	return client
}

// fixContainers puts a proxy in front of moto that answers the Cpu and
// Memory of containers as strings, as ECS does: moto answers numbers,
// which the AWS SDK refuses.
func fixContainers(t *testing.T, moto string) string {
	t.Helper()
	target, err := url.Parse(moto)
	require.NoError(t, err)
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ModifyResponse = func(resp *http.Response) error {
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) == nil {
			stringifyContainers(v)
			body, _ = json.Marshal(v)
		}
		resp.Body = io.NopCloser(bytes.NewReader(body))
		resp.ContentLength = int64(len(body))
		resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
		return nil
	}
	srv := httptest.NewServer(proxy)
	t.Cleanup(srv.Close)
	return srv.URL
}

func stringifyContainers(v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if k == "containers" {
				for _, c := range e.([]any) {
					for _, name := range []string{"cpu", "memory"} {
						if n, ok := c.(map[string]any)[name].(json.Number); ok {
							c.(map[string]any)[name] = n.String()
						}
					}
				}
			}
			stringifyContainers(e)
		}
	case []any:
		for _, e := range v {
			stringifyContainers(e)
		}
	}
}

// setTransition makes moto's ECS tasks advance a status every n
// DescribeTasks calls.
func setTransition(t *testing.T, moto string, n int) {
	t.Helper()
	body := `{"model_name": "ecs::task", "transition": {"progression": "manual", "times": ` + jsonvalue.String(jsonvalue.NumberFromInt(int64(n))) + `}}`
	resp, err := http.Post(moto+"/moto-api/state-manager/set-transition", "application/json", strings.NewReader(body))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusCreated, resp.StatusCode)
}

const params = `{"Cluster": "jobs", "TaskDefinition": "nightly", "LaunchType": "FARGATE",
	"Overrides": {"ContainerOverrides": [{"Name": "main", "Command": ["run", "--date", "2024-01-01"], "Environment": [{"Name": "MODE", "Value": "full"}]}]}}`

func TestRunTaskRequestResponse(t *testing.T) {
	t.Parallel()
	reg, _, _ := motoECS(t)
	res := integrationtest.Call(t, reg, resource, params)
	require.Nil(t, res.Failure)
	require.False(t, res.Submitted)
	require.Equal(t, []string{"Failures", "SdkHttpMetadata", "SdkResponseMetadata", "Tasks"}, res.Output.(*jsonvalue.Object).Keys())
	tasks := integrationtest.Member(t, res.Output, "Tasks").([]any)
	require.Len(t, tasks, 1)
	require.Equal(t, "RUNNING", integrationtest.Member(t, tasks[0], "LastStatus"))
	require.Equal(t, "FARGATE", integrationtest.Member(t, tasks[0], "LaunchType"))
	require.Contains(t, integrationtest.Member(t, tasks[0], "TaskDefinitionArn"), "task-definition/nightly:1")
	override := integrationtest.Member(t, tasks[0], "Overrides", "ContainerOverrides").([]any)[0]
	require.Equal(t, []any{"run", "--date", "2024-01-01"}, integrationtest.Member(t, override, "Command"))
	require.Equal(t, "full", integrationtest.Member(t, integrationtest.Member(t, override, "Environment").([]any)[0], "Value"))
	keys := tasks[0].(*jsonvalue.Object).Keys()
	require.IsIncreasing(t, keys, "members in alphabetical order")
	require.Equal(t, []any{}, integrationtest.Member(t, tasks[0], "InferenceAccelerators"), "unset lists are [], as in the Java SDK's models")
}

func TestRunTaskWaitForTaskToken(t *testing.T) {
	t.Parallel()
	reg, _, _ := motoECS(t)
	res := integrationtest.Call(t, reg, resource+".waitForTaskToken", params)
	require.Nil(t, res.Failure)
	require.True(t, res.Submitted, "the response is recorded as submitted; the token ends the task")
	require.Len(t, integrationtest.Member(t, res.Output, "Tasks"), 1)
}

// .sync waits for the task to stop (moto's tasks stop after a few
// DescribeTasks) and answers its description.
func TestRunTaskSync(t *testing.T) {
	t.Parallel()
	reg, _, _ := motoECS(t)
	res := integrationtest.Call(t, reg, resource+".sync", params)
	require.Nil(t, res.Failure)
	require.False(t, res.Submitted)
	out := res.Output.(*jsonvalue.Object)
	require.Equal(t, "STOPPED", integrationtest.Member(t, out, "LastStatus"))
	require.Equal(t, "AWS Step Functions", integrationtest.Member(t, out, "StartedBy"))
	require.Equal(t, jsonvalue.Number("0"), integrationtest.Member(t, integrationtest.Member(t, out, "Containers").([]any)[0], "ExitCode"))
	require.False(t, out.Has("SdkHttpMetadata"), "a .sync result is the task's description alone")
}

// A cancelled .sync task (it timed out, or its execution ended) stops its
// ECS task, and answers nothing.
func TestRunTaskSyncCancelled(t *testing.T) {
	t.Parallel()
	reg, client, moto := motoECS(t)
	setTransition(t, moto, 1_000_000) // the task runs until stopped
	ch := integrationtest.Start(t, reg, resource+".sync", params)
	ctx := context.Background()
	var arn string
	testwait.Until(t, func() bool {
		list, err := client.ListTasks(ctx, &ecs.ListTasksInput{Cluster: aws.String("jobs")})
		require.NoError(t, err)
		if len(list.TaskArns) == 0 {
			return false
		}
		arn = list.TaskArns[0]
		return true
	}, 30*time.Second, 10*time.Millisecond)
	reg.Cancel("arn:x", "t1")
	testwait.Until(t, func() bool {
		desc, err := client.DescribeTasks(ctx, &ecs.DescribeTasksInput{Cluster: aws.String("jobs"), Tasks: []string{arn}})
		require.NoError(t, err)
		return aws.ToString(desc.Tasks[0].LastStatus) == "STOPPED" && strings.HasPrefix(aws.ToString(desc.Tasks[0].StoppedReason), "Stopped by Step Functions")
	}, 30*time.Second, 10*time.Millisecond, "the ECS task is stopped")
	select {
	case r := <-ch:
		t.Fatalf("a cancelled task answered: %+v", r)
	case <-time.After(50 * time.Millisecond):
	}
}

func TestRunTaskServiceError(t *testing.T) {
	t.Parallel()
	reg, _, _ := motoECS(t)
	for _, pattern := range []string{"", ".sync"} {
		res := integrationtest.Call(t, reg, resource+pattern, `{"Cluster": "nope", "TaskDefinition": "nightly", "LaunchType": "FARGATE"}`)
		require.NotNil(t, res.Failure, pattern)
		require.Equal(t, "ECS.ClusterNotFoundException", res.Failure.Name)
		require.Contains(t, res.Failure.Cause, "(Service: AmazonECS; Status Code: 400; Error Code: ClusterNotFoundException; Request ID: ")
	}
}

func TestRunTaskBadParameters(t *testing.T) {
	t.Parallel()
	reg, err := integration.New(integration.Config{Region: "us-east-1", Account: "123456789012", Endpoints: map[string]string{"ecs": "http://127.0.0.1:1"}})
	require.NoError(t, err)
	for params, cause := range map[string]string{
		`{"Cluster": "jobs"}`:                       "The Parameters could not be used to start the Task: [The field 'TaskDefinition' is required but was missing]",
		`{"TaskDefinition": "nightly", "Bogus": 1}`: "The Parameters could not be used to start the Task: [The field 'Bogus' is not supported by Step Functions]",
		`{"TaskDefinition": "nightly", "Overrides": {"ContainerOverrides": [{"Memory": "lots"}]}}`: "The Parameters could not be used to start the Task: [The value of the field 'Overrides.ContainerOverrides[0].Memory' must be an integer, not string]",
		`["nightly"]`: "The Parameters could not be used to start the Task: [The Parameters must be an object, not array]",
	} {
		res := integrationtest.Call(t, reg, resource+".sync", params)
		require.NotNil(t, res.Failure, params)
		require.Equal(t, "States.TaskFailed", res.Failure.Name, params)
		require.Equal(t, cause, res.Failure.Cause, params)
	}
}

// ecsStandIn answers RunTask with a task (or, for the task definition
// "unplaceable", a failure) and DescribeTasks with that task stopped after
// its container exited with 1.
func ecsStandIn(t *testing.T) string {
	t.Helper()
	const taskJSON = `{"taskArn": "arn:aws:ecs:us-east-1:123456789012:task/jobs/1", "clusterArn": "arn:aws:ecs:us-east-1:123456789012:cluster/jobs"`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		switch target := r.Header.Get("X-Amz-Target"); {
		case strings.HasSuffix(target, ".RunTask") && strings.Contains(string(body), "unplaceable"):
			io.WriteString(w, `{"tasks": [], "failures": [{"arn": "arn:aws:ecs:us-east-1:123456789012:container-instance/1", "reason": "RESOURCE:MEMORY"}]}`)
		case strings.HasSuffix(target, ".RunTask"):
			io.WriteString(w, `{"tasks": [`+taskJSON+`, "lastStatus": "PROVISIONING"}], "failures": []}`)
		case strings.HasSuffix(target, ".DescribeTasks"):
			io.WriteString(w, `{"tasks": [`+taskJSON+`, "lastStatus": "STOPPED", "stopCode": "EssentialContainerExited",
				"stoppedReason": "Essential container in task exited", "stoppedAt": 1680596504.771,
				"containers": [{"name": "main", "exitCode": 1, "lastStatus": "STOPPED"}]}], "failures": []}`)
		default:
			t.Errorf("unexpected call %s", target)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// A task whose container exits non-zero fails with States.TaskFailed and
// the task's description as the cause; a RunTask that places nothing
// fails with AmazonECS.Unknown.
func TestRunTaskSyncFailure(t *testing.T) {
	t.Parallel()
	reg, err := integration.New(integration.Config{Region: "us-east-1", Account: "123456789012", Endpoints: map[string]string{"ecs": ecsStandIn(t)}})
	require.NoError(t, err)
	res := integrationtest.Call(t, reg, resource+".sync", `{"Cluster": "jobs", "TaskDefinition": "nightly"}`)
	require.NotNil(t, res.Failure)
	require.Equal(t, "States.TaskFailed", res.Failure.Name)
	cause, err := jsonvalue.ParseString(res.Failure.Cause)
	require.NoError(t, err)
	require.Equal(t, "EssentialContainerExited", integrationtest.Member(t, cause, "StopCode"))
	require.Equal(t, jsonvalue.Number("1680596504771"), integrationtest.Member(t, cause, "StoppedAt"), "timestamps are epoch milliseconds")
	require.Equal(t, jsonvalue.Number("1"), integrationtest.Member(t, integrationtest.Member(t, cause, "Containers").([]any)[0], "ExitCode"))

	res = integrationtest.Call(t, reg, resource+".sync", `{"Cluster": "jobs", "TaskDefinition": "unplaceable"}`)
	require.NotNil(t, res.Failure)
	require.Equal(t, "AmazonECS.Unknown", res.Failure.Name)
	require.Contains(t, res.Failure.Cause, `"Reason":"RESOURCE:MEMORY"`)

	res = integrationtest.Call(t, reg, resource, `{"Cluster": "jobs", "TaskDefinition": "unplaceable"}`)
	require.Nil(t, res.Failure, "request-response answers a response with Failures as it is")
	require.Len(t, integrationtest.Member(t, res.Output, "Failures"), 1)
}

// A .sync task dispatched again after a restart, its ECS task's start
// recorded, follows that ECS task: no second one is run.
func TestRunTaskSyncResumed(t *testing.T) {
	t.Parallel()
	reg, client, _ := motoECS(t)
	started := integrationtest.Call(t, reg, resource, params) // the start, as recorded
	require.Nil(t, started.Failure)
	arn := integrationtest.Member(t, integrationtest.Member(t, started.Output, "Tasks").([]any)[0], "TaskArn")
	res := integrationtest.Resume(t, reg, resource+".sync", params, started.Output)
	require.Nil(t, res.Failure)
	require.Equal(t, arn, integrationtest.Member(t, res.Output, "TaskArn"))
	require.Equal(t, "STOPPED", integrationtest.Member(t, res.Output, "LastStatus"))
	ctx := context.Background()
	var all []string
	for _, status := range []types.DesiredStatus{types.DesiredStatusRunning, types.DesiredStatusStopped} {
		out, err := client.ListTasks(ctx, &ecs.ListTasksInput{Cluster: aws.String("jobs"), DesiredStatus: status})
		require.NoError(t, err)
		all = append(all, out.TaskArns...)
	}
	require.Equal(t, []string{arn.(string)}, all, "ECS tasks run")
}

// clientTokens stands in front of ECS for what moto leaves out: RunTask's
// idempotency. A RunTask whose clientToken it saw before in the cluster
// is answered with the first request's answer, as ECS answers it, and
// nothing is run; the tokens of all RunTask requests are kept.
type clientTokens struct {
	mu      sync.Mutex
	tokens  []string
	answers map[string][]byte
}

func (c *clientTokens) front(t *testing.T) func(endpoint string) string {
	return func(endpoint string) string {
		target, err := url.Parse(endpoint)
		require.NoError(t, err)
		proxy := httputil.NewSingleHostReverseProxy(target)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".RunTask") {
				proxy.ServeHTTP(w, r)
				return
			}
			body, err := io.ReadAll(r.Body)
			require.NoError(t, err)
			var req struct{ Cluster, ClientToken string }
			require.NoError(t, json.Unmarshal(body, &req))
			key := req.Cluster + "\x00" + req.ClientToken
			c.mu.Lock()
			c.tokens = append(c.tokens, req.ClientToken)
			answer, seen := c.answers[key]
			c.mu.Unlock()
			if seen {
				w.Header().Set("Content-Type", "application/x-amz-json-1.1")
				w.Write(answer)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			rec := httptest.NewRecorder()
			proxy.ServeHTTP(rec, r)
			if rec.Code == http.StatusOK {
				c.mu.Lock()
				c.answers[key] = rec.Body.Bytes()
				c.mu.Unlock()
			}
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.WriteHeader(rec.Code)
			w.Write(rec.Body.Bytes())
		}))
		t.Cleanup(srv.Close)
		return srv.URL
	}
}

func (c *clientTokens) sent() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.tokens)
}

// A task dispatched again after a restart, its first RunTask made and its
// answer not recorded, sends the same client token, so ECS (which moto
// does not stand in for here: clientTokens does) runs no second task; the
// task follows the first one. The token names the task: another task's
// differs, and a ClientToken in the Parameters is sent as it is.
func TestRunTaskSyncRedispatchedSameClientToken(t *testing.T) {
	t.Parallel()
	front := &clientTokens{answers: map[string][]byte{}}
	reg, client, _ := motoECSBehind(t, front.front(t))
	first := integrationtest.Call(t, reg, resource, params) // the start whose answer was lost
	require.Nil(t, first.Failure)
	arn := integrationtest.Member(t, integrationtest.Member(t, first.Output, "Tasks").([]any)[0], "TaskArn")

	submitted, res := integrationtest.Redispatch(t, reg, resource+".sync", params)
	require.Nil(t, res.Failure)
	require.NotNil(t, submitted, "the start is recorded")
	require.Equal(t, arn, integrationtest.Member(t, res.Output, "TaskArn"))
	tokens := front.sent()
	require.Len(t, tokens, 2)
	require.Regexp(t, `^stepwise-[0-9a-f]{40}$`, tokens[0])
	require.Equal(t, tokens[0], tokens[1], "the same token each dispatch")
	var all []string
	for _, status := range []types.DesiredStatus{types.DesiredStatusRunning, types.DesiredStatusStopped} {
		out, err := client.ListTasks(context.Background(), &ecs.ListTasksInput{Cluster: aws.String("jobs"), DesiredStatus: status})
		require.NoError(t, err)
		all = append(all, out.TaskArns...)
	}
	require.Equal(t, []string{arn.(string)}, all, "ECS tasks run")

	// Another task of the execution has a token of its own; the
	// Parameters' token is kept.
	p, err := jsonvalue.ParseString(params)
	require.NoError(t, err)
	done := make(chan task.Result, 1)
	reg.Run(context.Background(), &task.Task{ExecutionArn: "arn:x", ExecutionStart: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), ID: "t2", Request: &interp.TaskRequest{Resource: resource, Parameters: p}},
		func(r task.Result) { done <- r })
	require.Nil(t, (<-done).Failure)
	require.Nil(t, integrationtest.Call(t, reg, resource, strings.Replace(params, "{", `{"ClientToken": "mine", `, 1)).Failure)
	tokens = front.sent()
	require.Len(t, tokens, 4)
	require.NotEqual(t, tokens[0], tokens[2])
	require.Regexp(t, `^stepwise-[0-9a-f]{40}$`, tokens[2])
	require.Equal(t, "mine", tokens[3])
}
