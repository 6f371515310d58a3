package events_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/require"

	"stepwise/engine/task"
	"stepwise/integration"
	"stepwise/integration/events"
	"stepwise/integration/integrationtest"
	"stepwise/interp"
	"stepwise/jsonvalue"
)

const executionArn = "arn:aws:states:us-east-1:123456789012:execution:machine:run-1"

type testBundle struct {
	reg      *integration.Registry
	sqs      *sqs.Client
	queueURL string
}

// setup starts moto with an event bus "orders" whose rule sends the
// events of source "stepwise.test" to a queue.
func setup(t *testing.T) *testBundle {
	t.Helper()
	ctx := context.Background()
	moto := integrationtest.Moto(t)
	cfg := integration.Config{Region: "us-east-1", Account: "123456789012", Endpoints: map[string]string{"events": moto}}
	reg, err := integration.New(cfg)
	require.NoError(t, err)
	awsCfg, _, err := cfg.AWSConfig(ctx, "events")
	require.NoError(t, err)
	eb := eventbridge.NewFromConfig(awsCfg, func(o *eventbridge.Options) { o.BaseEndpoint = aws.String(moto) })
	sq := sqs.NewFromConfig(awsCfg, func(o *sqs.Options) { o.BaseEndpoint = aws.String(moto) })

	q, err := sq.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("events")})
	require.NoError(t, err)
	_, err = eb.CreateEventBus(ctx, &eventbridge.CreateEventBusInput{Name: aws.String("orders")})
	require.NoError(t, err)
	_, err = eb.PutRule(ctx, &eventbridge.PutRuleInput{Name: aws.String("to-queue"), EventBusName: aws.String("orders"),
		EventPattern: aws.String(`{"source": ["stepwise.test"]}`)})
	require.NoError(t, err)
	_, err = eb.PutTargets(ctx, &eventbridge.PutTargetsInput{Rule: aws.String("to-queue"), EventBusName: aws.String("orders"),
		Targets: []ebtypes.Target{{Id: aws.String("q"), Arn: aws.String("arn:aws:sqs:us-east-1:123456789012:events")}}})
	require.NoError(t, err)
	return &testBundle{reg: reg, sqs: sq, queueURL: *q.QueueUrl}
}

func (b *testBundle) call(t *testing.T, resource, params string) task.Result {
	t.Helper()
	p, err := jsonvalue.ParseString(params)
	require.NoError(t, err)
	ch := make(chan task.Result, 1)
	b.reg.Run(context.Background(), &task.Task{ExecutionArn: executionArn, ID: "t1", Request: &interp.TaskRequest{Resource: resource, Parameters: p}},
		func(r task.Result) { ch <- r })
	select {
	case r := <-ch:
		return r
	case <-time.After(30 * time.Second):
		t.Fatal("no result")
		return task.Result{}
	}
}

// delivered is an event as the rule delivers it to the queue.
type delivered struct {
	DetailType string          `json:"detail-type"`
	Source     string          `json:"source"`
	Resources  []string        `json:"resources"`
	Detail     json.RawMessage `json:"detail"`
}

func (b *testBundle) receive(t *testing.T) []delivered {
	t.Helper()
	got, err := b.sqs.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: aws.String(b.queueURL), MaxNumberOfMessages: 10})
	require.NoError(t, err)
	events := make([]delivered, len(got.Messages))
	for i, m := range got.Messages {
		require.NoError(t, json.Unmarshal([]byte(*m.Body), &events[i]))
	}
	return events
}

func TestPutEvents(t *testing.T) {
	t.Parallel()
	b := setup(t)
	res := b.call(t, "arn:aws:states:::events:putEvents", `{"Entries": [{"Detail": {"order": 7, "items": ["a"]},
		"DetailType": "OrderPlaced", "Source": "stepwise.test", "EventBusName": "orders",
		"Resources": ["arn:aws:s3:::bucket"], "Time": "2024-05-01T10:00:00Z"}]}`)
	require.Nil(t, res.Failure)
	out := res.Output.(*jsonvalue.Object)
	require.Equal(t, []string{"Entries", "FailedEntryCount"}, out.Keys(), "no HTTP metadata, as AWS records it")
	count, _ := out.Get("FailedEntryCount")
	require.Equal(t, jsonvalue.Number("0"), count)
	entries, _ := out.Get("Entries")
	require.Len(t, entries, 1)
	entry := entries.([]any)[0].(*jsonvalue.Object)
	require.Equal(t, []string{"EventId"}, entry.Keys())

	events := b.receive(t)
	require.Len(t, events, 1)
	require.Equal(t, "OrderPlaced", events[0].DetailType)
	require.Equal(t, "stepwise.test", events[0].Source)
	require.JSONEq(t, `{"order": 7, "items": ["a"]}`, string(events[0].Detail), "an object Detail is sent as JSON text")
	require.Equal(t, []string{"arn:aws:s3:::bucket", "arn:aws:states:us-east-1:123456789012:stateMachine:machine", executionArn}, events[0].Resources,
		"the state machine and execution ARNs are appended to Resources")
}

func TestPutEventsWaitForTaskToken(t *testing.T) {
	t.Parallel()
	b := setup(t)
	res := b.call(t, "arn:aws:states:::events:putEvents.waitForTaskToken", `{"Entries": [{"Detail": "{\"token\": \"tok\"}",
		"DetailType": "Callback", "Source": "stepwise.test", "EventBusName": "orders"}]}`)
	require.Nil(t, res.Failure)
	require.True(t, res.Submitted, "the task waits for its token")
	events := b.receive(t)
	require.Len(t, events, 1)
	require.JSONEq(t, `{"token": "tok"}`, string(events[0].Detail), "a string Detail is sent as it is")
}

// An entry the service refuses fails the task with the whole result as
// the cause; the other entries are sent.
func TestPutEventsFailedEntry(t *testing.T) {
	t.Parallel()
	b := setup(t)
	res := b.call(t, "arn:aws:states:::events:putEvents", `{"Entries": [
		{"Detail": {"n": 1}, "DetailType": "Good", "Source": "stepwise.test", "EventBusName": "orders"},
		{"Detail": {"n": 2}, "DetailType": "NoSource", "EventBusName": "orders"}]}`)
	require.NotNil(t, res.Failure)
	require.Equal(t, "EventBridge.FailedEntry", res.Failure.Name)
	var cause struct {
		Entries          []map[string]string
		FailedEntryCount int
	}
	require.NoError(t, json.Unmarshal([]byte(res.Failure.Cause), &cause), "the cause is JSON text: %s", res.Failure.Cause)
	require.Equal(t, 1, cause.FailedEntryCount)
	require.Len(t, cause.Entries, 2)
	require.NotEmpty(t, cause.Entries[0]["EventId"])
	require.Equal(t, map[string]string{"ErrorCode": "InvalidArgument", "ErrorMessage": "Parameter Source is not valid. Reason: Source is a required argument."}, cause.Entries[1])

	events := b.receive(t)
	require.Len(t, events, 1)
	require.Equal(t, "Good", events[0].DetailType)
}

// Parameters that cannot be sent fail the task before any call.
func TestPutEventsBadParameters(t *testing.T) {
	t.Parallel()
	reg, err := integration.New(integration.Config{Region: "us-east-1", Account: "123456789012", Endpoints: map[string]string{"events": "http://127.0.0.1:1"}})
	require.NoError(t, err)
	b := &testBundle{reg: reg}
	tests := []struct{ params, cause string }{
		{`{}`, "The field 'Entries' is required but was missing"},
		{`{"Entries": {"Source": "s"}}`, "The field 'Entries' must be an array, not object"},
		{`{"Entries": [], "EndpointId": "x"}`, "The field 'EndpointId' is not supported by Step Functions"},
		{`{"Entries": ["x"]}`, "The field 'Entries[0]' must be an object, not string"},
		{`{"Entries": [{"Source": "s"}, {"Source": 1}]}`, "The field 'Entries[1].Source' must be a string, not number"},
		{`{"Entries": [{"Source": "s", "Resources": ["a", 2]}]}`, "The field 'Entries[0].Resources[1]' must be a string, not number"},
		{`{"Entries": [{"Source": "s", "Time": "yesterday"}]}`, `The field 'Entries[0].Time' must be an RFC 3339 timestamp: parsing time "yesterday" as "2006-01-02T15:04:05.999999999Z07:00": cannot parse "yesterday" as "2006"`},
		{`{"Entries": [{"Source": "s", "Detial": {}}]}`, "The field 'Entries[0].Detial' is not supported by Step Functions"},
	}
	for _, tt := range tests {
		t.Run(tt.params, func(t *testing.T) {
			t.Parallel()
			res := b.call(t, "arn:aws:states:::events:putEvents", tt.params)
			require.NotNil(t, res.Failure)
			require.Equal(t, "States.TaskFailed", res.Failure.Name)
			require.Equal(t, tt.cause, res.Failure.Cause)
		})
	}
}

// A service error is named EventBridge.<Exception>, worded as AWS's SDK
// for Java words it.
func TestPutEventsServiceError(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		w.Header().Set("x-amzn-RequestId", "req-1")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"__type": "ValidationException", "message": "1 validation error detected"}`)
	}))
	defer srv.Close()
	reg, err := integration.New(integration.Config{Region: "us-east-1", Account: "123456789012", Endpoints: map[string]string{"events": srv.URL}})
	require.NoError(t, err)
	b := &testBundle{reg: reg}
	res := b.call(t, "arn:aws:states:::events:putEvents", `{"Entries": [{"Source": "s", "DetailType": "d", "Detail": "{}"}]}`)
	require.NotNil(t, res.Failure)
	require.Equal(t, "EventBridge.AmazonEventBridgeException", res.Failure.Name)
	require.Equal(t, "1 validation error detected (Service: AmazonEventBridge; Status Code: 400; Error Code: ValidationException; Request ID: req-1; Proxy: null)", res.Failure.Cause)
}

// localBus records what the events:putEvents Task puts on the local bus,
// answering as the bus does: its own ids, MalformedDetail for a Detail
// that is not an object.
type localBus struct {
	entries []integration.Event
	ids     []string
}

func (l *localBus) put(_ context.Context, entries []integration.Event, ids []string) ([]integration.EventResult, error) {
	l.entries = append(l.entries, entries...)
	l.ids = append(l.ids, ids...)
	out := make([]integration.EventResult, len(entries))
	for i, e := range entries {
		if e.Detail == "[]" {
			out[i] = integration.EventResult{ErrorCode: "MalformedDetail", ErrorMessage: "Detail is malformed."}
			continue
		}
		out[i] = integration.EventResult{EventID: "local-" + e.DetailType}
	}
	return out, nil
}

// With no endpoint for "events", the entries go on the local bus alone
// and the result carries its ids and failures, in AWS's shape.
func TestPutEventsLocalBusAlone(t *testing.T) {
	t.Parallel()
	reg, err := integration.New(integration.Config{Region: "us-east-1", Account: "123456789012"})
	require.NoError(t, err)
	bus := &localBus{}
	reg.SetLocalEvents(bus.put)
	b := &testBundle{reg: reg}
	res := b.call(t, "arn:aws:states:::events:putEvents", `{"Entries": [{"Source": "s", "DetailType": "one", "Detail": {"n": 1}}]}`)
	require.Nil(t, res.Failure)
	require.Equal(t, `{"Entries":[{"EventId":"local-one"}],"FailedEntryCount":0}`, jsonvalue.String(res.Output))
	require.Len(t, bus.entries, 1)
	require.Equal(t, `{"n":1}`, bus.entries[0].Detail)
	require.Equal(t, []string{"arn:aws:states:us-east-1:123456789012:stateMachine:machine", executionArn}, bus.entries[0].Resources)
	require.Empty(t, bus.ids, "the bus makes the ids")

	res = b.call(t, "arn:aws:states:::events:putEvents", `{"Entries": [{"Source": "s", "DetailType": "two", "Detail": {}},
		{"Source": "s", "DetailType": "bad", "Detail": "[]"}]}`)
	require.NotNil(t, res.Failure)
	require.Equal(t, "EventBridge.FailedEntry", res.Failure.Name)
	require.JSONEq(t, `{"Entries": [{"EventId": "local-two"}, {"ErrorCode": "MalformedDetail", "ErrorMessage": "Detail is malformed."}], "FailedEntryCount": 1}`, res.Failure.Cause)
}

// With an endpoint, the entries EventBridge took go on the local bus too,
// with its ids, and the result is EventBridge's; the request is marked so
// that a Stepwise bus at the endpoint does not send it on.
func TestPutEventsLocalBusAfterAWS(t *testing.T) {
	t.Parallel()
	headers := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		headers <- r.Header.Get(events.ForwardedHeader)
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		io.WriteString(w, `{"Entries": [{"EventId": "aws-1"}, {"ErrorCode": "InvalidArgument", "ErrorMessage": "no"}, {"EventId": "aws-3"}], "FailedEntryCount": 1}`)
	}))
	defer srv.Close()
	reg, err := integration.New(integration.Config{Region: "us-east-1", Account: "123456789012", Endpoints: map[string]string{"events": srv.URL}})
	require.NoError(t, err)
	bus := &localBus{}
	reg.SetLocalEvents(bus.put)
	b := &testBundle{reg: reg}
	res := b.call(t, "arn:aws:states:::events:putEvents", `{"Entries": [{"Source": "s", "DetailType": "one", "Detail": {}},
		{"Source": "s", "DetailType": "two", "Detail": {}}, {"Source": "s", "DetailType": "three", "Detail": {}}]}`)
	require.NotNil(t, res.Failure)
	require.JSONEq(t, `{"Entries": [{"EventId": "aws-1"}, {"ErrorCode": "InvalidArgument", "ErrorMessage": "no"}, {"EventId": "aws-3"}], "FailedEntryCount": 1}`, res.Failure.Cause)
	require.Equal(t, "events", <-headers)
	require.Len(t, bus.entries, 2)
	require.Equal(t, "one", bus.entries[0].DetailType)
	require.Equal(t, "three", bus.entries[1].DetailType)
	require.Equal(t, []string{"aws-1", "aws-3"}, bus.ids)
}
