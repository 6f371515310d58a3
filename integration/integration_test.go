package integration_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/require"

	"stepwise/engine/task"
	"stepwise/failure"
	"stepwise/integration"
	"stepwise/internal/testkit/testwait"
	"stepwise/interp"
	"stepwise/jsonvalue"
)

// calls records what the test integrations were asked, by the tests
// running in parallel: a test finds its own call by its task id.
var calls = struct {
	sync.Mutex
	reqs []*integration.Request
}{}

// callOf is the last call made for the task id, or nil.
func callOf(id string) *integration.Request {
	calls.Lock()
	defer calls.Unlock()
	for i := len(calls.reqs) - 1; i >= 0; i-- {
		if calls.reqs[i].TaskID == id {
			return calls.reqs[i]
		}
	}
	return nil
}

func init() {
	echo := func(ctx context.Context, r *integration.Request) (any, error) {
		calls.Lock()
		calls.reqs = append(calls.reqs, r)
		calls.Unlock()
		if v, ok := r.Parameters.(*jsonvalue.Object).Get("block"); ok && v == true {
			<-ctx.Done()
			return nil, ctx.Err()
		}
		if v, ok := r.Parameters.(*jsonvalue.Object).Get("fail"); ok {
			return nil, failure.New(v.(string), "it failed")
		}
		if _, ok := r.Parameters.(*jsonvalue.Object).Get("oops"); ok {
			return nil, errors.New("plain error")
		}
		out := jsonvalue.NewObject(2)
		out.Set("Service", r.Service)
		out.Set("Action", r.Action)
		return out, nil
	}
	integration.Register(integration.Module{
		Resource: "arn:aws:states:::test:echo",
		Patterns: []integration.Pattern{integration.WaitForTaskToken},
		New:      func(*integration.Config) (integration.Integration, error) { return integration.Func(echo), nil },
	})
	integration.Register(integration.Module{
		Resource: "arn:aws:states:::test:job",
		Patterns: []integration.Pattern{integration.Sync},
		New: func(*integration.Config) (integration.Integration, error) {
			return integration.Func(func(ctx context.Context, r *integration.Request) (any, error) {
				r.Submit("started")
				r.Submit("started again")
				return "ended", nil
			}), nil
		},
	})
	integration.Register(integration.Module{
		Resource: "arn:aws:states:::aws-sdk:test:*",
		New:      func(*integration.Config) (integration.Integration, error) { return integration.Func(echo), nil },
	})
}

type result struct {
	ch chan task.Result
}

func (r *result) done(res task.Result) { r.ch <- res }

func (r *result) wait(t *testing.T) task.Result {
	t.Helper()
	select {
	case res := <-r.ch:
		return res
	case <-time.After(10 * time.Second):
		t.Fatal("no result")
		return task.Result{}
	}
}

func (r *result) none(t *testing.T) {
	t.Helper()
	select {
	case res := <-r.ch:
		t.Fatalf("unexpected result %+v", res)
	case <-time.After(50 * time.Millisecond):
	}
}

func run(t *testing.T, reg *integration.Registry, id, resource, params string) *result {
	t.Helper()
	p, err := jsonvalue.ParseString(params)
	require.NoError(t, err)
	r := &result{ch: make(chan task.Result, 1)}
	reg.Run(context.Background(), &task.Task{ExecutionArn: "arn:x", ID: id, Request: &interp.TaskRequest{
		Resource: resource, Parameters: p, Token: "tok-" + id,
	}}, r.done)
	return r
}

func TestRegistryRoutesByResource(t *testing.T) {
	t.Parallel()
	reg, err := integration.New(integration.Config{Region: "us-east-1", Account: "123456789012"})
	require.NoError(t, err)

	res := run(t, reg, "t1", "arn:aws:states:::test:echo", `{}`).wait(t)
	require.Nil(t, res.Failure)
	require.Equal(t, `{"Service":"test","Action":"echo"}`, jsonvalue.String(res.Output))

	res = run(t, reg, "t2", "arn:aws:states:::aws-sdk:test:anyAction", `{}`).wait(t)
	require.Equal(t, `{"Service":"aws-sdk:test","Action":"anyAction"}`, jsonvalue.String(res.Output))

	// .waitForTaskToken: the call is made and its answer submitted, then
	// the token completes the task.
	r3 := run(t, reg, "t3", "arn:aws:states:::test:echo.waitForTaskToken", `{}`)
	res = r3.wait(t)
	require.True(t, res.Submitted)
	require.Nil(t, res.Failure)
	require.Equal(t, `{"Service":"test","Action":"echo"}`, jsonvalue.String(res.Output))
	r3.none(t)
	last := callOf("t3")
	require.NotNil(t, last)
	require.Equal(t, integration.WaitForTaskToken, last.Pattern)
	require.Equal(t, "tok-t3", last.Token)

	// No integration: a callback waits for its token (with no request to
	// wait for first), anything else fails.
	res = run(t, reg, "t4", "arn:aws:states:::lambda:invoke.waitForTaskToken", `{}`).wait(t)
	require.Equal(t, task.Result{Waiting: true}, res)
	res = run(t, reg, "t5", "arn:aws:states:::lambda:invoke", `{}`).wait(t)
	require.Equal(t, failure.New("States.TaskFailed", "No integration is configured for the resource 'arn:aws:states:::lambda:invoke'."), res.Failure)

	res = run(t, reg, "t6", "arn:aws:states:::aws-sdk:test:x.waitForTaskToken", `{}`).wait(t)
	require.Equal(t, "The resource 'arn:aws:states:::aws-sdk:test:x' does not support the integration pattern 'waitForTaskToken'.", res.Failure.Cause)

	res = run(t, reg, "t7", "arn:aws:states:::test:echo", `{"fail": "Custom.Error"}`).wait(t)
	require.Equal(t, failure.New("Custom.Error", "it failed"), res.Failure)
	res = run(t, reg, "t8", "arn:aws:states:::test:echo", `{"oops": true}`).wait(t)
	require.Equal(t, failure.New("States.TaskFailed", "plain error"), res.Failure)

	// A cancelled call gives no result.
	r := run(t, reg, "t9", "arn:aws:states:::test:echo", `{"block": true}`)
	testwait.Until(t, func() bool { return callOf("t9") != nil }, 30*time.Second, time.Millisecond)
	reg.Cancel("arn:x", "t9")
	r.none(t)
}

func TestParseResource(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		resource, service, action string
		pattern                   integration.Pattern
		ok                        bool
	}{
		{"arn:aws:states:::sqs:sendMessage", "sqs", "sendMessage", integration.RequestResponse, true},
		{"arn:aws:states:::sns:publish.waitForTaskToken", "sns", "publish", integration.WaitForTaskToken, true},
		{"arn:aws:states:::states:startExecution.sync:2", "states", "startExecution", integration.Sync2, true},
		{"arn:aws:states:::aws-sdk:sfn:sendTaskSuccess", "aws-sdk:sfn", "sendTaskSuccess", integration.RequestResponse, true},
		{"arn:aws:lambda:us-east-1:123456789012:function:f", "", "", "", false},
		{"arn:aws:states:::nothing", "", "", "", false},
	} {
		service, action, pattern, ok := integration.ParseResource(tc.resource)
		require.Equal(t, tc.ok, ok, tc.resource)
		require.Equal(t, tc.service, service, tc.resource)
		require.Equal(t, tc.action, action, tc.resource)
		require.Equal(t, tc.pattern, pattern, tc.resource)
	}
}

func TestSelfAPIWaitsUntilSet(t *testing.T) {
	t.Parallel()
	var s integration.SelfAPI
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := s.Caller(ctx)
	require.EqualError(t, err, "the server's Step Functions API is not available")
	got := make(chan integration.SelfCall, 1)
	go func() {
		call, err := s.Caller(context.Background())
		require.NoError(t, err)
		got <- call
	}()
	s.Set(func(context.Context, string, []byte) ([]byte, error) { return []byte("{}"), nil })
	call := <-got
	require.NotNil(t, call)
	out, err := call(context.Background(), "ListActivities", nil)
	require.NoError(t, err)
	require.Equal(t, "{}", string(out))
}

// A service error is named as the AWS SDK for Java names it: a modeled
// error after its exception, any other code after the service's base
// exception.
func TestServiceFailureNames(t *testing.T) {
	t.Parallel()
	generic := &smithy.GenericAPIError{Code: "MissingParameter", Message: "The request must contain the parameter MessageBody."}
	fl := integration.ServiceFailure("SQS", "AmazonSQS", fmt.Errorf("operation error SQS: SendMessage: %w", generic))
	require.Equal(t, "SQS.AmazonSQSException", fl.Name)
	require.Equal(t, "The request must contain the parameter MessageBody. (Service: AmazonSQS; Status Code: 400; Error Code: MissingParameter; Request ID: ; Proxy: null)", fl.Cause)

	modeled := &sqstypes.QueueDoesNotExist{Message: aws.String("The specified queue does not exist.")}
	fl = integration.ServiceFailure("SQS", "AmazonSQS", modeled)
	require.Equal(t, "SQS.QueueDoesNotExistException", fl.Name)
}

// A .sync job's start is recorded once as submitted, then its end is the
// task's result; a request-response call's Submit does nothing.
func TestSyncJobSubmitsItsStart(t *testing.T) {
	t.Parallel()
	reg, err := integration.New(integration.Config{Region: "us-east-1", Account: "123456789012"})
	require.NoError(t, err)
	r := &result{ch: make(chan task.Result, 3)}
	reg.Run(context.Background(), &task.Task{ExecutionArn: "arn:x", ID: "s1", Request: &interp.TaskRequest{
		Resource: "arn:aws:states:::test:job.sync", Parameters: jsonvalue.NewObject(0)}}, r.done)
	res := r.wait(t)
	require.NotNil(t, res.Recorded, "the start is followed once it is recorded")
	recorded := res.Recorded
	res.Recorded = nil
	require.Equal(t, task.Result{Output: "started", Submitted: true}, res)
	r.none(t) // the job is not followed before its start is recorded
	recorded(nil)
	require.Equal(t, task.Result{Output: "ended"}, r.wait(t))
	r.none(t)

	r = &result{ch: make(chan task.Result, 3)}
	reg.Run(context.Background(), &task.Task{ExecutionArn: "arn:x", ID: "s2", Request: &interp.TaskRequest{
		Resource: "arn:aws:states:::test:job", Parameters: jsonvalue.NewObject(0)}}, r.done)
	require.Equal(t, task.Result{Output: "ended"}, r.wait(t))
	r.none(t)
}

// A resource that names the server's region and account is served as
// the one that names neither; another region's or account's is refused.
func TestRegistryQualifiedResource(t *testing.T) {
	t.Parallel()
	reg, err := integration.New(integration.Config{Region: "us-east-1", Account: "123456789012"})
	require.NoError(t, err)

	res := run(t, reg, "q1", "arn:aws:states:us-east-1:123456789012:test:echo", `{}`).wait(t)
	require.Nil(t, res.Failure)
	require.Equal(t, `{"Service":"test","Action":"echo"}`, jsonvalue.String(res.Output))
	res = run(t, reg, "q2", "arn:aws:states:us-east-1:123456789012:aws-sdk:test:anyAction", `{}`).wait(t)
	require.Equal(t, `{"Service":"aws-sdk:test","Action":"anyAction"}`, jsonvalue.String(res.Output))
	res = run(t, reg, "q3", "arn:aws:states:us-east-1:123456789012:test:echo.waitForTaskToken", `{}`).wait(t)
	require.True(t, res.Submitted)

	for _, other := range []string{"arn:aws:states:eu-west-1:123456789012:test:echo", "arn:aws:states:us-east-1:999999999999:test:echo"} {
		res = run(t, reg, "q4", other, `{}`).wait(t)
		require.NotNil(t, res.Failure, other)
		require.Equal(t, failure.TaskFailed, res.Failure.Name)
		require.Contains(t, res.Failure.Cause, "not available in this region")
	}
	require.True(t, integration.Served("arn:aws:states:us-east-1:123456789012:test:echo"))
	require.True(t, integration.Served("arn:aws:states:us-east-1:123456789012:activity:a1"))
}
