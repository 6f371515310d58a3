package awsjson_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/stretchr/testify/require"

	"stepwise/engine/start"
	"stepwise/service"
	"stepwise/sfnapi"
	"stepwise/store"
)

// disableHostPrefix stops the SDK from sending StartSyncExecution and
// TestState to "sync-<host>", which does not resolve for a local endpoint.
// It must run as Initialize middleware: setting it on the caller's
// context does not work.
func disableHostPrefix(stack *middleware.Stack) error {
	return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("StepwiseDisableHostPrefix",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			return next.HandleInitialize(smithyhttp.DisableEndpointHostPrefix(ctx, true), in)
		}), middleware.Before)
}

type sdkBundle struct {
	*testBundle
	client *sfn.Client
}

// setupSDK serves the API on a real HTTP server and returns an AWS SDK
// client for it. The default (buildable) HTTP client is kept, as a plain
// *http.Client makes the SDK panic when AWS_CA_BUNDLE is set.
func setupSDK(t *testing.T) *sdkBundle {
	t.Helper()
	b := setup(t)
	srv := httptest.NewServer(b.handler)
	t.Cleanup(srv.Close)
	cfg, err := config.LoadDefaultConfig(b.ctx,
		config.WithRegion("us-east-1"),
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", "")),
		config.WithRetryMaxAttempts(1),
	)
	require.NoError(t, err)
	client := sfn.NewFromConfig(cfg, func(o *sfn.Options) {
		o.BaseEndpoint = aws.String(srv.URL)
		o.APIOptions = append(o.APIOptions, disableHostPrefix)
	})
	return &sdkBundle{testBundle: b, client: client}
}

func requireErrorAs[T error](t *testing.T, err error) T {
	t.Helper()
	var target T
	require.Error(t, err)
	require.True(t, errors.As(err, &target), "want %T, got %T: %v", target, err, err)
	return target
}

func TestSDKStateMachines(t *testing.T) {
	t.Parallel()
	b := setupSDK(t)
	ctx := b.ctx

	created, err := b.client.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{
		Name: aws.String("hello"), Definition: aws.String(passDefinition), RoleArn: aws.String(roleArn),
		Tags: []types.Tag{{Key: aws.String("team"), Value: aws.String("core")}},
	})
	require.NoError(t, err)
	smArn := aws.ToString(created.StateMachineArn)
	require.Equal(t, "arn:aws:states:us-east-1:123456789012:stateMachine:hello", smArn)
	require.WithinDuration(t, time.Now(), aws.ToTime(created.CreationDate), time.Minute)

	d, err := b.client.DescribeStateMachine(ctx, &sfn.DescribeStateMachineInput{StateMachineArn: created.StateMachineArn})
	require.NoError(t, err)
	require.Equal(t, passDefinition, aws.ToString(d.Definition))
	require.Equal(t, types.StateMachineTypeStandard, d.Type)
	require.Equal(t, types.StateMachineStatusActive, d.Status)
	require.Equal(t, types.LogLevelOff, d.LoggingConfiguration.Level)
	require.False(t, d.TracingConfiguration.Enabled)
	require.Equal(t, types.EncryptionTypeAwsOwnedKey, d.EncryptionConfiguration.Type)
	require.True(t, d.CreationDate.Equal(aws.ToTime(created.CreationDate)))

	def2 := strings.Replace(passDefinition, "argument1", "v2", 1)
	up, err := b.client.UpdateStateMachine(ctx, &sfn.UpdateStateMachineInput{StateMachineArn: created.StateMachineArn, Definition: aws.String(def2)})
	require.NoError(t, err)
	require.NotEmpty(t, aws.ToString(up.RevisionId))

	list, err := b.client.ListStateMachines(ctx, &sfn.ListStateMachinesInput{})
	require.NoError(t, err)
	require.Len(t, list.StateMachines, 1)
	require.Equal(t, "hello", aws.ToString(list.StateMachines[0].Name))

	v, err := b.client.ValidateStateMachineDefinition(ctx, &sfn.ValidateStateMachineDefinitionInput{Definition: aws.String(`{"StartAt": "A"}`)})
	require.NoError(t, err)
	require.Equal(t, types.ValidateStateMachineDefinitionResultCodeFail, v.Result)
	require.Equal(t, "These fields are required: [States]", aws.ToString(v.Diagnostics[0].Message))
	require.Equal(t, "/", aws.ToString(v.Diagnostics[0].Location))

	tags, err := b.client.ListTagsForResource(ctx, &sfn.ListTagsForResourceInput{ResourceArn: created.StateMachineArn})
	require.NoError(t, err)
	require.Equal(t, "core", aws.ToString(tags.Tags[0].Value))
	_, err = b.client.TagResource(ctx, &sfn.TagResourceInput{ResourceArn: created.StateMachineArn, Tags: []types.Tag{{Key: aws.String("k"), Value: aws.String("v")}}})
	require.NoError(t, err)
	_, err = b.client.UntagResource(ctx, &sfn.UntagResourceInput{ResourceArn: created.StateMachineArn, TagKeys: []string{"team"}})
	require.NoError(t, err)
	tags, err = b.client.ListTagsForResource(ctx, &sfn.ListTagsForResourceInput{ResourceArn: created.StateMachineArn})
	require.NoError(t, err)
	require.Len(t, tags.Tags, 1)
	require.Equal(t, "k", aws.ToString(tags.Tags[0].Key))

	// Typed errors.
	_, err = b.client.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("hello"), Definition: aws.String(def2 + " "), RoleArn: aws.String(roleArn)})
	requireErrorAs[*types.StateMachineAlreadyExists](t, err)
	_, err = b.client.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("bad"), Definition: aws.String(`{}`), RoleArn: aws.String(roleArn)})
	e := requireErrorAs[*types.InvalidDefinition](t, err)
	require.Equal(t, "Invalid State Machine Definition: 'SCHEMA_VALIDATION_FAILED: These fields are required: [States, StartAt] at /'", e.ErrorMessage())
	_, err = b.client.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("a b"), Definition: aws.String(passDefinition), RoleArn: aws.String(roleArn)})
	requireErrorAs[*types.InvalidName](t, err)
	_, err = b.client.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String(strings.Repeat("n", 81)), Definition: aws.String(passDefinition), RoleArn: aws.String(roleArn)})
	requireErrorAs[*types.ValidationException](t, err)
	_, err = b.client.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{Name: aws.String("log"), Definition: aws.String(passDefinition), RoleArn: aws.String(roleArn),
		LoggingConfiguration: &types.LoggingConfiguration{Level: types.LogLevelAll}})
	requireErrorAs[*types.InvalidLoggingConfiguration](t, err)
	_, err = b.client.DescribeStateMachine(ctx, &sfn.DescribeStateMachineInput{StateMachineArn: aws.String("not_a_valid_arn")})
	e2 := requireErrorAs[*types.InvalidArn](t, err)
	require.Equal(t, "Invalid Arn: 'Invalid ARN prefix: not_a_valid_arn'", e2.ErrorMessage())
	_, err = b.client.DescribeStateMachine(ctx, &sfn.DescribeStateMachineInput{StateMachineArn: aws.String(smArn + "x")})
	requireErrorAs[*types.StateMachineDoesNotExist](t, err)
	_, err = b.client.UpdateStateMachine(ctx, &sfn.UpdateStateMachineInput{StateMachineArn: created.StateMachineArn})
	requireErrorAs[*types.MissingRequiredParameter](t, err)
	_, err = b.client.ListStateMachines(ctx, &sfn.ListStateMachinesInput{NextToken: aws.String("bogus")})
	requireErrorAs[*types.InvalidToken](t, err)
	_, err = b.client.TagResource(ctx, &sfn.TagResourceInput{ResourceArn: aws.String(smArn + "x"), Tags: []types.Tag{{Key: aws.String("k")}}})
	requireErrorAs[*types.ResourceNotFound](t, err)
	many := make([]types.Tag, 51)
	for i := range many {
		many[i] = types.Tag{Key: aws.String(strings.Repeat("k", i+1))}
	}
	_, err = b.client.TagResource(ctx, &sfn.TagResourceInput{ResourceArn: created.StateMachineArn, Tags: many})
	requireErrorAs[*types.TooManyTags](t, err)

	_, err = b.client.DeleteStateMachine(ctx, &sfn.DeleteStateMachineInput{StateMachineArn: created.StateMachineArn})
	require.NoError(t, err)
	_, err = b.client.DeleteStateMachine(ctx, &sfn.DeleteStateMachineInput{StateMachineArn: created.StateMachineArn})
	require.NoError(t, err, "deleting a missing state machine succeeds")
	_, err = b.client.DescribeStateMachine(ctx, &sfn.DescribeStateMachineInput{StateMachineArn: created.StateMachineArn})
	requireErrorAs[*types.StateMachineDoesNotExist](t, err)
}

func TestSDKExecutions(t *testing.T) {
	t.Parallel()
	b := setupSDK(t)
	ctx := b.ctx

	created, err := b.client.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{
		Name: aws.String("flow"), Definition: aws.String(passDefinition), RoleArn: aws.String(roleArn),
	})
	require.NoError(t, err)

	started, err := b.client.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: created.StateMachineArn, Name: aws.String("run-1"), Input: aws.String(`{"a":1}`)})
	require.NoError(t, err)
	execArn := aws.ToString(started.ExecutionArn)
	require.Equal(t, "arn:aws:states:us-east-1:123456789012:execution:flow:run-1", execArn)

	again, err := b.client.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: created.StateMachineArn, Name: aws.String("run-1"), Input: aws.String(`{"a":1}`)})
	require.NoError(t, err, "idempotent while running")
	require.Equal(t, execArn, aws.ToString(again.ExecutionArn))
	_, err = b.client.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: created.StateMachineArn, Name: aws.String("run-1"), Input: aws.String(`{"a":2}`)})
	requireErrorAs[*types.ExecutionAlreadyExists](t, err)
	_, err = b.client.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: created.StateMachineArn, Input: aws.String(`not json`)})
	requireErrorAs[*types.InvalidExecutionInput](t, err)
	_, err = b.client.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(aws.ToString(created.StateMachineArn) + "x")})
	requireErrorAs[*types.StateMachineDoesNotExist](t, err)

	d, err := b.client.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: started.ExecutionArn})
	require.NoError(t, err)
	require.Equal(t, types.ExecutionStatusRunning, d.Status)
	require.Equal(t, `{"a":1}`, aws.ToString(d.Input))
	require.True(t, d.InputDetails.Included)
	require.Equal(t, types.ExecutionRedriveStatusNotRedrivable, d.RedriveStatus)
	require.True(t, d.StartDate.Equal(aws.ToTime(started.StartDate)))

	dsm, err := b.client.DescribeStateMachineForExecution(ctx, &sfn.DescribeStateMachineForExecutionInput{ExecutionArn: started.ExecutionArn})
	require.NoError(t, err)
	require.Equal(t, passDefinition, aws.ToString(dsm.Definition))

	list, err := b.client.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: created.StateMachineArn, StatusFilter: types.ExecutionStatusRunning})
	require.NoError(t, err)
	require.Len(t, list.Executions, 1)
	_, err = b.client.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: created.StateMachineArn, StatusFilter: "succeeded"})
	requireErrorAs[*types.ValidationException](t, err)

	stopped, err := b.client.StopExecution(ctx, &sfn.StopExecutionInput{ExecutionArn: started.ExecutionArn, Error: aws.String("Stopped"), Cause: aws.String("by test")})
	require.NoError(t, err)
	require.False(t, aws.ToTime(stopped.StopDate).IsZero())

	hist, err := b.client.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: started.ExecutionArn})
	require.NoError(t, err)
	require.Len(t, hist.Events, 2)
	require.Equal(t, types.HistoryEventTypeExecutionStarted, hist.Events[0].Type)
	require.Equal(t, `{"a":1}`, aws.ToString(hist.Events[0].ExecutionStartedEventDetails.Input))
	require.Equal(t, types.HistoryEventTypeExecutionAborted, hist.Events[1].Type)
	require.Equal(t, "Stopped", aws.ToString(hist.Events[1].ExecutionAbortedEventDetails.Error))
	require.Equal(t, int64(1), hist.Events[1].PreviousEventId)
	require.False(t, aws.ToTime(hist.Events[0].Timestamp).IsZero())

	// Pages, through the SDK's paginator.
	pager := sfn.NewGetExecutionHistoryPaginator(b.client, &sfn.GetExecutionHistoryInput{ExecutionArn: started.ExecutionArn, MaxResults: 1, ReverseOrder: true})
	var ids []int64
	for pager.HasMorePages() {
		page, err := pager.NextPage(ctx)
		require.NoError(t, err)
		for _, ev := range page.Events {
			ids = append(ids, ev.Id)
		}
	}
	require.Equal(t, []int64{2, 1}, ids)

	red, err := b.client.RedriveExecution(ctx, &sfn.RedriveExecutionInput{ExecutionArn: started.ExecutionArn})
	require.NoError(t, err)
	require.False(t, aws.ToTime(red.RedriveDate).IsZero())
	_, err = b.client.RedriveExecution(ctx, &sfn.RedriveExecutionInput{ExecutionArn: started.ExecutionArn})
	requireErrorAs[*types.ExecutionNotRedrivable](t, err)

	_, err = b.client.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(execArn + "x")})
	requireErrorAs[*types.ExecutionDoesNotExist](t, err)
	_, err = b.client.GetExecutionHistory(ctx, &sfn.GetExecutionHistoryInput{ExecutionArn: aws.String("nope")})
	requireErrorAs[*types.InvalidArn](t, err)
	_, err = b.client.StopExecution(ctx, &sfn.StopExecutionInput{ExecutionArn: aws.String(execArn + "x")})
	requireErrorAs[*types.ExecutionDoesNotExist](t, err)

	// Synchronous executions: EXPRESS only.
	_, err = b.client.StartSyncExecution(ctx, &sfn.StartSyncExecutionInput{StateMachineArn: created.StateMachineArn})
	requireErrorAs[*types.StateMachineTypeNotSupported](t, err)
	express, err := b.client.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{
		Name: aws.String("fast"), Definition: aws.String(passDefinition), RoleArn: aws.String(roleArn), Type: types.StateMachineTypeExpress,
	})
	require.NoError(t, err)
	sync, err := b.client.StartSyncExecution(ctx, &sfn.StartSyncExecutionInput{StateMachineArn: express.StateMachineArn, Input: aws.String(`{"x":1}`)})
	require.NoError(t, err)
	require.Equal(t, types.SyncExecutionStatusSucceeded, sync.Status)
	require.Equal(t, `{"x":1}`, aws.ToString(sync.Output))
	require.Equal(t, int64(64), sync.BillingDetails.BilledMemoryUsedInMB)
	require.True(t, strings.HasPrefix(aws.ToString(sync.ExecutionArn), "arn:aws:states:us-east-1:123456789012:express:fast:"))
}

func TestSDKEngineErrorsAndUnsupported(t *testing.T) {
	t.Parallel()
	b := setupSDK(t)
	ctx := b.ctx
	created, err := b.client.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{
		Name: aws.String("flow"), Definition: aws.String(passDefinition), RoleArn: aws.String(roleArn),
	})
	require.NoError(t, err)

	// An API error of the engine reaches the SDK typed.
	b.engine.StartExecutionFunc = func(context.Context, *start.Params) (*store.Execution, error) {
		return nil, sfnapi.NewError(sfnapi.CodeExecutionLimitExceeded, "Execution Limit Exceeded")
	}
	_, err = b.client.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: created.StateMachineArn})
	requireErrorAs[*types.ExecutionLimitExceeded](t, err)

	// The map runs of an execution that does not exist: typed too.
	_, err = b.client.ListMapRuns(ctx, &sfn.ListMapRunsInput{ExecutionArn: aws.String("arn:aws:states:us-east-1:123456789012:execution:sm:x")})
	requireErrorAs[*types.ExecutionDoesNotExist](t, err)

	// TestState without its implementation is unsupported too; with it,
	// the request reaches the hook (through the sync- host prefix).
	_, err = b.client.TestState(ctx, &sfn.TestStateInput{Definition: aws.String(`{"Type": "Pass", "End": true}`)})
	require.Equal(t, "UnsupportedOperation", requireErrorAs[smithy.APIError](t, err).ErrorCode())
	b.svc.TestState = func(_ context.Context, in *service.TestStateInput) (*service.TestStateOutput, error) {
		return &service.TestStateOutput{Status: "SUCCEEDED", Output: in.Input, NextState: aws.String("Next")}, nil
	}
	ts, err := b.client.TestState(ctx, &sfn.TestStateInput{Definition: aws.String(`{"Type": "Pass", "Next": "Next"}`), Input: aws.String(`{"a":1}`)})
	require.NoError(t, err)
	require.Equal(t, types.TestExecutionStatusSucceeded, ts.Status)
	require.Equal(t, `{"a":1}`, aws.ToString(ts.Output))

}

// A NextToken pages only the list it was given for: another state
// machine, other filters or another list refuse it with InvalidToken, in
// AWS's words; the SDK's paginator, which sends the same filters back,
// pages on.
func TestSDKPageTokenScope(t *testing.T) {
	t.Parallel()
	b := setupSDK(t)
	ctx := b.ctx
	var machines []*string
	for _, name := range []string{"one", "two"} {
		created, err := b.client.CreateStateMachine(ctx, &sfn.CreateStateMachineInput{
			Name: aws.String(name), Definition: aws.String(passDefinition), RoleArn: aws.String(roleArn),
		})
		require.NoError(t, err)
		machines = append(machines, created.StateMachineArn)
	}
	for _, run := range []string{"a", "b", "c"} {
		_, err := b.client.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: machines[0], Name: aws.String(run)})
		require.NoError(t, err)
	}

	page, err := b.client.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: machines[0], MaxResults: 1})
	require.NoError(t, err)
	token := page.NextToken
	require.NotNil(t, token)
	next, err := b.client.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: machines[0], MaxResults: 1, NextToken: token})
	require.NoError(t, err)
	require.Len(t, next.Executions, 1)

	refused := func(err error, reason string) {
		t.Helper()
		e := requireErrorAs[*types.InvalidToken](t, err)
		require.Equal(t, "Invalid Token: '"+reason+"'", aws.ToString(e.Message))
	}
	_, err = b.client.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: machines[1], NextToken: token})
	refused(err, "Invalid token: it belongs to another resource")
	_, err = b.client.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: machines[0], StatusFilter: types.ExecutionStatusRunning, NextToken: token})
	refused(err, "Invalid token: it belongs to another resource")
	_, err = b.client.ListStateMachines(ctx, &sfn.ListStateMachinesInput{NextToken: token})
	refused(err, "Invalid token")
	_, err = b.client.ListActivities(ctx, &sfn.ListActivitiesInput{NextToken: token})
	refused(err, "Invalid token")

	machinesPage, err := b.client.ListStateMachines(ctx, &sfn.ListStateMachinesInput{MaxResults: 1})
	require.NoError(t, err)
	require.NotNil(t, machinesPage.NextToken)
	_, err = b.client.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: machines[0], NextToken: machinesPage.NextToken})
	refused(err, "Invalid token")

	var names []string
	pager := sfn.NewListExecutionsPaginator(b.client, &sfn.ListExecutionsInput{StateMachineArn: machines[0], MaxResults: 1})
	for pager.HasMorePages() {
		page, err := pager.NextPage(ctx)
		require.NoError(t, err)
		for _, x := range page.Executions {
			names = append(names, aws.ToString(x.Name))
		}
	}
	require.ElementsMatch(t, []string{"a", "b", "c"}, names)
}
