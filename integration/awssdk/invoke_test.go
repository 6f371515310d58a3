package awssdk_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/failure"
	"stepwise/integration/awssdk"
	"stepwise/jsonvalue"
)

// ecsStandIn answers DescribeTasks with a stopped task, and any other
// call with ECS's ClusterNotFoundException.
func ecsStandIn(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		w.Header().Set("X-Amzn-Requestid", "req-1")
		if r.Header.Get("X-Amz-Target") == "AmazonEC2ContainerServiceV20141113.DescribeTasks" {
			_, _ = w.Write([]byte(`{"tasks": [{"taskArn": "arn:t", "stoppedAt": 1680596504.771, "lastStatus": "STOPPED",
				"containers": [{"name": "main", "exitCode": 0}]}], "failures": []}`))
			return
		}
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"__type": "ClusterNotFoundException", "message": "Cluster not found."}`))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// Invoke renders a result as the optimized integrations do: timestamps in
// epoch milliseconds and, with EmptyLists, unset lists as [] with the
// members still in alphabetical order; it answers with the HTTP status
// and headers.
func TestInvoke_result(t *testing.T) {
	t.Parallel()
	b := setup(t, ecsStandIn(t))
	params, err := jsonvalue.ParseString(`{"Cluster": "jobs", "Tasks": ["arn:t"]}`)
	require.NoError(t, err)
	reply, err := b.client.Invoke(context.Background(), "ecs", "DescribeTasks", params.(*jsonvalue.Object), awssdk.InvokeOptions{EmptyLists: true})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, reply.Status)
	require.Equal(t, "req-1", reply.RequestID())
	tasks, _ := reply.Result.Get("Tasks")
	task := tasks.([]any)[0].(*jsonvalue.Object)
	stopped, _ := task.Get("StoppedAt")
	require.Equal(t, jsonvalue.Number("1680596504771"), stopped)
	attachments, _ := task.Get("Attachments")
	require.Equal(t, []any{}, attachments, "an unset list is []")
	require.IsIncreasing(t, task.Keys())
	status, _ := task.Get("LastStatus")
	require.Equal(t, "STOPPED", status, "members keep their values when sorted")

	reply, err = b.client.Invoke(context.Background(), "ecs", "DescribeTasks", params.(*jsonvalue.Object), awssdk.InvokeOptions{})
	require.NoError(t, err)
	tasks, _ = reply.Result.Get("Tasks")
	require.False(t, tasks.([]any)[0].(*jsonvalue.Object).Has("Attachments"), "without EmptyLists an unset list is left out")
}

// A service's error answer is a *ServiceError that knows its modeled
// exception, status and request ID; Parameters the model refuses are the
// task failure Call gives, and StrictStrings refuses a number for a
// string in Check.
func TestInvoke_errors(t *testing.T) {
	t.Parallel()
	b := setup(t, ecsStandIn(t))
	run, err := jsonvalue.ParseString(`{"TaskDefinition": "d"}`)
	require.NoError(t, err)
	_, err = b.client.Invoke(context.Background(), "ecs", "RunTask", run.(*jsonvalue.Object), awssdk.InvokeOptions{})
	var svcErr *awssdk.ServiceError
	require.True(t, errors.As(err, &svcErr), "%v", err)
	require.Equal(t, "ClusterNotFoundException", svcErr.ErrorCode())
	require.Equal(t, "ClusterNotFoundException", svcErr.ModeledException())
	require.Equal(t, "Cluster not found.", svcErr.ErrorMessage())
	require.Equal(t, http.StatusBadRequest, svcErr.HTTPStatusCode())
	require.Equal(t, "req-1", svcErr.ServiceRequestID())

	bad, err := jsonvalue.ParseString(`{"TaskDefinition": "d", "Bogus": 1}`)
	require.NoError(t, err)
	_, err = b.client.Invoke(context.Background(), "ecs", "RunTask", bad.(*jsonvalue.Object), awssdk.InvokeOptions{})
	var f *failure.Failure
	require.True(t, errors.As(err, &f), "%v", err)
	require.Equal(t, "The Parameters could not be used to start the Task: [The field 'Bogus' is not supported by Step Functions]", f.Cause)

	number, err := jsonvalue.ParseString(`{"TaskDefinition": 1}`)
	require.NoError(t, err)
	require.NoError(t, b.client.Check("ecs", "RunTask", number.(*jsonvalue.Object), awssdk.InvokeOptions{}), "a number is sent as its text")
	err = b.client.Check("ecs", "RunTask", number.(*jsonvalue.Object), awssdk.InvokeOptions{StrictStrings: true})
	require.True(t, errors.As(err, &f), "%v", err)
	require.Equal(t, "The Parameters could not be used to start the Task: [The value of the field 'TaskDefinition' must be a string, not number]", f.Cause)
}

// Invoke calls a region other than the configured one when asked: the
// request is signed for it.
func TestInvoke_region(t *testing.T) {
	t.Parallel()
	got := make(chan string, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("Authorization")
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		_, _ = w.Write([]byte(`{}`))
	}))
	t.Cleanup(srv.Close)
	b := setup(t, srv.URL)
	in, err := jsonvalue.ParseString(`{"LogGroupName": "g", "LogStreamName": "s"}`)
	require.NoError(t, err)
	_, err = b.client.Invoke(context.Background(), "logs", "CreateLogStream", in.(*jsonvalue.Object), awssdk.InvokeOptions{Region: "eu-west-1"})
	require.NoError(t, err)
	require.Contains(t, <-got, "/eu-west-1/logs/aws4_request")
	_, err = b.client.Invoke(context.Background(), "logs", "CreateLogStream", in.(*jsonvalue.Object), awssdk.InvokeOptions{})
	require.NoError(t, err)
	require.Contains(t, <-got, "/us-east-1/logs/aws4_request", "the configured region")
}
