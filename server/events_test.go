package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/stretchr/testify/require"

	"stepwise/config"
	"stepwise/deploy"
	"stepwise/deploy/cfn"
	"stepwise/server"
	"stepwise/server/servertest"
)

// ruleTemplate is a rule whose target, a state machine, gets the
// event's detail.
const ruleTemplate = `
Resources:
  Machine:
    Type: AWS::StepFunctions::StateMachine
    Properties:
      StateMachineName: on-order
      RoleArn: arn:aws:iam::123456789012:role/r
      Definition: {StartAt: P, States: {P: {Type: Pass, End: true}}}
  Sender:
    Type: AWS::StepFunctions::StateMachine
    Properties:
      StateMachineName: sender
      RoleArn: arn:aws:iam::123456789012:role/r
      Definition:
        StartAt: Put
        States:
          Put:
            Type: Task
            Resource: arn:aws:states:::events:putEvents
            Parameters: {Entries: [{Source: shop, DetailType: OrderPlaced, Detail: {order: 8}}]}
            End: true
  OnOrder:
    Type: AWS::Events::Rule
    Properties:
      EventPattern: {source: [shop], detail-type: [OrderPlaced]}
      Targets:
        - Id: machine
          Arn: !Ref Machine
          RoleArn: arn:aws:iam::123456789012:role/r
          InputPath: $.detail
`

// deployRule deploys ruleTemplate as the server starts.
func deployRule(ctx context.Context, d *deploy.Deployer) error {
	tp, err := cfn.Parse([]byte(ruleTemplate))
	if err != nil {
		return err
	}
	_, err = d.Deploy(ctx, tp, deploy.Options{StackName: "orders"})
	return err
}

// eventsClient is an EventBridge client of the server, signed with key.
func eventsClient(url, key, secret string) *eventbridge.Client {
	return eventbridge.NewFromConfig(aws.Config{Region: "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider(key, secret, "")},
		func(o *eventbridge.Options) { o.BaseEndpoint = aws.String(url) })
}

// putOrder puts an OrderPlaced event and waits for the execution it
// starts, returning its input.
func putOrder(t *testing.T, url, key, secret string) string {
	t.Helper()
	ctx := context.Background()
	client := eventsClient(url, key, secret)
	states := sfn.NewFromConfig(aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider(key, secret, "")},
		func(o *sfn.Options) { o.BaseEndpoint = aws.String(url) })
	out, err := client.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []ebtypes.PutEventsRequestEntry{{
		Source: aws.String("shop"), DetailType: aws.String("OrderPlaced"), Detail: aws.String(`{"order": 7}`)}}})
	require.NoError(t, err)
	require.Zero(t, out.FailedEntryCount)
	require.Len(t, out.Entries, 1)
	require.NotEmpty(t, aws.ToString(out.Entries[0].EventId))
	machine := "arn:aws:states:us-east-1:123456789012:stateMachine:on-order"
	var input string
	require.Eventually(t, func() bool {
		list, err := states.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: aws.String(machine)})
		if err != nil || len(list.Executions) == 0 {
			return false
		}
		d, err := states.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: list.Executions[0].ExecutionArn})
		if err != nil {
			return false
		}
		input = aws.ToString(d.Input)
		return true
	}, 10*time.Second, 20*time.Millisecond, "the rule starts the state machine")
	return input
}

// The server answers EventBridge's PutEvents on its port: an event put
// with the AWS SDK's client starts the state machine of the rule it
// matches.
func TestPutEventsRoute(t *testing.T) {
	t.Parallel()
	s := servertest.New(t, servertest.WithOptions(server.WithDeployAtStart(deployRule)))
	require.JSONEq(t, `{"order": 7}`, putOrder(t, s.URL, "AKIDANY", "any"))

	// Operations other than PutEvents are refused, saying why.
	_, err := eventsClient(s.URL, "AKIDANY", "any").ListRules(context.Background(), &eventbridge.ListRulesInput{})
	require.ErrorContains(t, err, "serves PutEvents only")
}

// With credentials, PutEvents is signed with one of their keys, for the
// "events" service; an unsigned request or an unknown key is refused.
func TestPutEventsRouteWithCredentials(t *testing.T) {
	t.Parallel()
	creds := filepath.Join(t.TempDir(), "credentials")
	require.NoError(t, os.WriteFile(creds, []byte("[default]\naws_access_key_id = AKIDEVENTS\naws_secret_access_key = secret\n"), 0o600))
	s := servertest.New(t, servertest.WithConfig(func(c *config.Serve) { c.Credentials = creds }),
		servertest.WithOptions(server.WithDeployAtStart(deployRule)))
	require.JSONEq(t, `{"order": 7}`, putOrder(t, s.URL, "AKIDEVENTS", "secret"))

	req, err := http.NewRequest(http.MethodPost, s.URL, strings.NewReader(`{"Entries": [{"Source": "shop", "DetailType": "OrderPlaced", "Detail": "{}"}]}`))
	require.NoError(t, err)
	req.Header.Set("X-Amz-Target", "AWSEvents.PutEvents")
	req.Header.Set("Content-Type", "application/x-amz-json-1.1")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Contains(t, []int{http.StatusForbidden, http.StatusBadRequest}, res.StatusCode)
	var body map[string]any
	require.NoError(t, json.NewDecoder(res.Body).Decode(&body))
	require.Contains(t, body["__type"], "MissingAuthenticationToken", "an unsigned PutEvents is refused: %v", body)

	_, err = eventsClient(s.URL, "AKIDOTHER", "secret").PutEvents(context.Background(), &eventbridge.PutEventsInput{Entries: []ebtypes.PutEventsRequestEntry{{
		Source: aws.String("shop"), DetailType: aws.String("OrderPlaced"), Detail: aws.String(`{}`)}}})
	require.ErrorContains(t, err, "UnrecognizedClientException")
}

// sendOrder runs the sender state machine, whose events:putEvents Task
// puts an OrderPlaced event, and returns the inputs of the executions
// of the rule's target once they stopped coming.
func sendOrder(t *testing.T, s *servertest.Server) []string {
	t.Helper()
	ctx := context.Background()
	start, err := s.SFN.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String("arn:aws:states:us-east-1:123456789012:stateMachine:sender")})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		d, err := s.SFN.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: start.ExecutionArn})
		return err == nil && d.Status != "RUNNING"
	}, 10*time.Second, 20*time.Millisecond)
	d, err := s.SFN.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: start.ExecutionArn})
	require.NoError(t, err)
	require.Equal(t, "SUCCEEDED", string(d.Status), "%s: %s", aws.ToString(d.Error), aws.ToString(d.Cause))
	var out struct {
		Entries          []map[string]string
		FailedEntryCount int
	}
	require.NoError(t, json.Unmarshal([]byte(aws.ToString(d.Output)), &out), aws.ToString(d.Output))
	require.Len(t, out.Entries, 1)
	require.NotEmpty(t, out.Entries[0]["EventId"])
	var inputs []string
	machine := "arn:aws:states:us-east-1:123456789012:stateMachine:on-order"
	require.Eventually(t, func() bool {
		list, err := s.SFN.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: aws.String(machine)})
		return err == nil && len(list.Executions) > 0
	}, 10*time.Second, 20*time.Millisecond, "the rule starts the state machine")
	time.Sleep(500 * time.Millisecond) // any second delivery has come by now
	list, err := s.SFN.ListExecutions(ctx, &sfn.ListExecutionsInput{StateMachineArn: aws.String(machine)})
	require.NoError(t, err)
	for _, e := range list.Executions {
		d, err := s.SFN.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: e.ExecutionArn})
		require.NoError(t, err)
		inputs = append(inputs, aws.ToString(d.Input))
	}
	return inputs
}

// With no AWS endpoint, the events:putEvents Task puts its entries on
// the local bus, whose rule starts its target.
func TestPutEventsTaskOnLocalBus(t *testing.T) {
	t.Parallel()
	s := servertest.New(t, servertest.WithOptions(server.WithDeployAtStart(deployRule)))
	inputs := sendOrder(t, s)
	require.Len(t, inputs, 1)
	require.JSONEq(t, `{"order": 8}`, inputs[0])
}

// When the endpoint given for "events" is the server itself, the Task's
// call reaches its bus, which does not send the events back to itself,
// and the Task does not put them again: the rule runs once.
func TestPutEventsToItselfRunsOnce(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := ln.Addr().(*net.TCPAddr).Port
	require.NoError(t, ln.Close())
	s := servertest.New(t, servertest.WithConfig(func(c *config.Serve) {
		c.Addr = fmt.Sprintf("127.0.0.1:%d", port)
		c.Integrations.Endpoints = map[string]string{"events": fmt.Sprintf("http://localhost:%d", port)}
	}), servertest.WithOptions(server.WithDeployAtStart(deployRule)))
	inputs := sendOrder(t, s)
	require.Len(t, inputs, 1, "the event is delivered once")
	require.JSONEq(t, `{"order": 8}`, inputs[0])
}
