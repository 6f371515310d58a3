package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/stretchr/testify/require"
)

// busTemplate: a function (emit) puts an event with boto3, no endpoint
// in its code; a SAM state machine's EventBridgeRule event (flow) takes
// it through an InputTransformer; a Task events:putEvents (sender)
// triggers a rule that invokes a function (record); a DISABLED rule
// (Off) would start flow.
const busTemplate = `AWSTemplateFormatVersion: "2010-09-09"
Transform: AWS::Serverless-2016-10-31
Resources:
  Emit:
    Type: AWS::Serverless::Function
    Properties:
      FunctionName: emit
      CodeUri: fn/
      Handler: emit.handler
      Runtime: python3.12
  Record:
    Type: AWS::Serverless::Function
    Properties:
      FunctionName: record
      CodeUri: fn/
      Handler: record.handler
      Runtime: python3.12
      Events:
        FromTask:
          Type: EventBridgeRule
          Properties:
            Pattern: {source: [app.task]}
  Start:
    Type: AWS::Serverless::StateMachine
    Properties:
      Name: start
      Definition:
        StartAt: Emit
        States:
          Emit:
            Type: Task
            Resource: arn:aws:states:::lambda:invoke
            Parameters: {FunctionName: !Ref Emit, Payload.$: $}
            ResultSelector: {failed.$: $.Payload.failed, id.$: $.Payload.id}
            End: true
  Flow:
    Type: AWS::Serverless::StateMachine
    Properties:
      Name: flow
      Definition: {StartAt: P, States: {P: {Type: Pass, End: true}}}
      Events:
        Emitted:
          Type: EventBridgeRule
          Properties:
            Pattern: {source: [app.emit], detail-type: [Emitted]}
            InputTransformer:
              InputPathsMap: {order: $.detail.order, kind: $.detail-type}
              InputTemplate: '{"order": <order>, "kind": <kind>}'
  Sender:
    Type: AWS::Serverless::StateMachine
    Properties:
      Name: sender
      Definition:
        StartAt: Put
        States:
          Put:
            Type: Task
            Resource: arn:aws:states:::events:putEvents
            Parameters:
              Entries:
                - {Source: app.task, DetailType: Sent, Detail.$: $}
            End: true
  Off:
    Type: AWS::Events::Rule
    Properties:
      State: DISABLED
      EventPattern: {source: [app.off]}
      Targets: [{Id: flow, Arn: !Ref Flow}]
`

const emitHandler = `import json, boto3

def handler(event, context):
    out = boto3.client("events").put_events(Entries=[
        {"Source": "app.emit", "DetailType": "Emitted", "Detail": json.dumps(event)}])
    return {"failed": out["FailedEntryCount"], "id": out["Entries"][0].get("EventId", "")}
`

const recordHandler = `import json

def handler(event, context):
    with open(event["detail"]["file"] + ".tmp", "w") as f:
        json.dump(event, f)
    import os
    os.rename(event["detail"]["file"] + ".tmp", event["detail"]["file"])
`

// flowInputs waits until flow has n executions and returns their inputs.
func flowInputs(t *testing.T, c *sfn.Client, n int) []string {
	t.Helper()
	ctx := context.Background()
	var inputs []string
	require.Eventually(t, func() bool {
		list, err := c.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: aws.String(smArn("flow"))})
		require.NoError(t, err)
		if len(list.Executions) < n {
			return false
		}
		inputs = inputs[:0]
		for _, e := range list.Executions {
			d, err := c.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: e.ExecutionArn})
			require.NoError(t, err)
			inputs = append(inputs, aws.ToString(d.Input))
		}
		return true
	}, 30*time.Second, 50*time.Millisecond, "flow has %d executions", n)
	return inputs
}

// TestLocalEventBus runs the local bus with real processes: a deployed
// SAM app's functions and state machines put events and are started by
// rules; a disabled rule does nothing; after a restart the rules still
// run.
func TestLocalEventBus(t *testing.T) {
	t.Parallel()
	if exec.Command("python3", "-c", "import boto3").Run() != nil {
		t.Skip("python3 with boto3 is not on this machine")
	}
	ctx := context.Background()
	app := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(app, "fn"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(app, "fn", "emit.py"), []byte(emitHandler), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(app, "fn", "record.py"), []byte(recordHandler), 0o644))
	template := filepath.Join(app, "template.yaml")
	require.NoError(t, os.WriteFile(template, []byte(busTemplate), 0o644))
	db := filepath.Join(t.TempDir(), "stepwise.db")
	s := startServer(t, db)
	out, code := stepwiseCLI(t, "deploy", template, "--endpoint", s.url(), "--stack-name", "bus")
	require.Equal(t, 0, code, out)
	c := s.client(t)

	// A function's boto3 puts an event: the rule starts flow with the
	// transformed input.
	started, err := c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smArn("start")), Input: aws.String(`{"order": 7}`)})
	require.NoError(t, err)
	done := waitDone(t, c, aws.ToString(started.ExecutionArn))
	require.Equal(t, "SUCCEEDED", string(done.Status), aws.ToString(done.Cause))
	var emitted struct {
		Failed int
		ID     string
	}
	require.NoError(t, json.Unmarshal([]byte(aws.ToString(done.Output)), &emitted))
	require.Zero(t, emitted.Failed)
	require.NotEmpty(t, emitted.ID)
	require.Equal(t, []string{`{"order": 7, "kind": "Emitted"}`}, flowInputs(t, c, 1))

	// A Task events:putEvents triggers the rule that invokes record.
	file := filepath.Join(t.TempDir(), "recorded.json")
	started, err = c.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(smArn("sender")), Input: aws.String(`{"file": "` + file + `"}`)})
	require.NoError(t, err)
	done = waitDone(t, c, aws.ToString(started.ExecutionArn))
	require.Equal(t, "SUCCEEDED", string(done.Status), aws.ToString(done.Cause))
	var sent struct {
		Entries []struct {
			EventID string `json:"EventId"`
		}
		FailedEntryCount int
	}
	require.NoError(t, json.Unmarshal([]byte(aws.ToString(done.Output)), &sent))
	require.Len(t, sent.Entries, 1)
	var recorded struct {
		ID         string `json:"id"`
		Source     string `json:"source"`
		DetailType string `json:"detail-type"`
		Resources  []string
	}
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(file)
		return err == nil && json.Unmarshal(b, &recorded) == nil
	}, 30*time.Second, 50*time.Millisecond, "the rule invokes record")
	require.Equal(t, "app.task", recorded.Source)
	require.Equal(t, "Sent", recorded.DetailType)
	require.Equal(t, sent.Entries[0].EventID, recorded.ID, "the Task's result carries the bus's id")

	// The disabled rule does nothing: the event put with it (first) is
	// not delivered, the one after it is.
	eb := eventbridge.NewFromConfig(awsConfig(t), func(o *eventbridge.Options) { o.BaseEndpoint = aws.String(s.url()) })
	put := func(source, detail string) {
		res, err := eb.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []ebtypes.PutEventsRequestEntry{
			{Source: aws.String(source), DetailType: aws.String("Emitted"), Detail: aws.String(detail)}}})
		require.NoError(t, err)
		require.Zero(t, res.FailedEntryCount)
	}
	put("app.off", `{"order": 0}`)
	put("app.emit", `{"order": 8}`)
	require.ElementsMatch(t, []string{`{"order": 7, "kind": "Emitted"}`, `{"order": 8, "kind": "Emitted"}`}, flowInputs(t, c, 2))
	time.Sleep(300 * time.Millisecond)
	require.Len(t, flowInputs(t, c, 2), 2, "the disabled rule started nothing")

	// After a restart, the server's records give the rules again.
	s.stop(t)
	s = startServer(t, db)
	c = s.client(t)
	eb = eventbridge.NewFromConfig(awsConfig(t), func(o *eventbridge.Options) { o.BaseEndpoint = aws.String(s.url()) })
	put("app.emit", `{"order": 9}`)
	require.Contains(t, flowInputs(t, c, 3), `{"order": 9, "kind": "Emitted"}`)
}
