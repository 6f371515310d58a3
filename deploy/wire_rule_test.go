package deploy

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/require"

	"stepwise/wiring"
	"stepwise/wiring/bus"
)

// recWiring records the wires each stack was given.
type recWiring struct {
	mu    sync.Mutex
	wires map[string][]wiring.Wire
}

func (w *recWiring) SetWires(_ context.Context, stack string, wires []wiring.Wire) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.wires[stack] = wires
	return nil
}

const rulesTemplate = `
Resources:
  OnOrder:
    Type: AWS::Events::Rule
    Properties:
      EventBusName: orders
      State: DISABLED
      EventPattern: {source: [shop], detail: {total: [{numeric: [">", 100]}]}}
      Targets:
        - Id: Machine
          Arn: arn:aws:states:us-east-1:123456789012:stateMachine:fulfil
          RoleArn: arn:aws:iam::123456789012:role/events
          InputTransformer:
            InputPathsMap: {order: $.detail.id}
            InputTemplate: '{"order": <order>}'
          RetryPolicy: {MaximumRetryAttempts: 3}
        - Id: Queue
          Arn: arn:aws:sqs:us-east-1:123456789012:audit
  Nightly:
    Type: AWS::Events::Rule
    Properties:
      ScheduleExpression: rate(1 day)
      Targets: [{Id: T, Arn: arn:aws:states:us-east-1:123456789012:stateMachine:fulfil}]
Outputs:
  Name: {Value: !Ref OnOrder}
  Arn: {Value: !GetAtt OnOrder.Arn}
`

func TestEventsRuleBecomesOneWirePerTarget(t *testing.T) {
	t.Parallel()
	b := newTestBed(t)
	rw := &recWiring{wires: map[string][]wiring.Wire{}}
	b.d.Wiring = rw
	r, err := b.deploy(t, rulesTemplate, nil)
	require.NoError(t, err)
	require.Contains(t, actions(r), "OnOrder created")
	require.Contains(t, actions(r), "Nightly skipped")
	// A scheduled rule's target is a schedule, not a wire.
	require.Contains(t, actions(r), "NightlyT created")
	require.Equal(t, "rate(1 day)", b.schedule(t, "default", "app-NightlyT").ScheduleExpression)
	outs := map[string]string{}
	for _, o := range r.Outputs {
		outs[o.Key] = o.Value
	}
	require.Equal(t, "app-OnOrder", outs["Name"])
	require.Equal(t, "arn:aws:events:us-east-1:123456789012:rule/app-OnOrder", outs["Arn"])

	wires := rw.wires["app"]
	require.Len(t, wires, 2)
	require.Equal(t, "OnOrder/Machine", wires[0].ID)
	require.Equal(t, bus.Kind, wires[0].Kind)
	require.Equal(t, wiring.Target{Type: wiring.ToStateMachine, ARN: "arn:aws:states:us-east-1:123456789012:stateMachine:fulfil", Name: "fulfil"}, wires[0].Target)
	var spec bus.Rule
	require.NoError(t, json.Unmarshal(wires[0].Source, &spec))
	require.Equal(t, "orders", spec.Bus)
	require.Equal(t, "DISABLED", spec.State)
	require.JSONEq(t, `{"source": ["shop"], "detail": {"total": [{"numeric": [">", 100]}]}}`, spec.Pattern)
	require.Equal(t, `{"order": <order>}`, spec.InputTransformer.InputTemplate)
	require.Equal(t, 3, *spec.RetryPolicy.MaximumRetryAttempts)
	require.Equal(t, wiring.ToQueue, wires[1].Target.Type)

	r, err = b.deploy(t, rulesTemplate, nil)
	require.NoError(t, err)
	require.Contains(t, actions(r), "OnOrder unchanged")
}

func TestEventsRuleBadPatternRefused(t *testing.T) {
	t.Parallel()
	b := newTestBed(t)
	_, err := b.deploy(t, `
Resources:
  Bad:
    Type: AWS::Events::Rule
    Properties:
      EventPattern: {source: shop}
      Targets: [{Id: T, Arn: arn:aws:states:us-east-1:123456789012:stateMachine:fulfil}]
`, nil)
	require.ErrorContains(t, err, "Event pattern is not valid. Reason: \"source\" must be an object or an array")
}

func TestSAMEventBridgeRuleEvent(t *testing.T) {
	t.Parallel()
	b := newTestBed(t)
	rw := &recWiring{wires: map[string][]wiring.Wire{}}
	b.d.Wiring = rw
	_, err := b.deploy(t, `
Transform: AWS::Serverless-2016-10-31
Resources:
  Flow:
    Type: AWS::Serverless::StateMachine
    Properties:
      Definition: {StartAt: P, States: {P: {Type: Pass, End: true}}}
      Events:
        Orders:
          Type: EventBridgeRule
          Properties:
            Pattern: {source: [shop]}
            InputPath: $.detail
            Enabled: false
`, nil)
	require.NoError(t, err)
	wires := rw.wires["app"]
	require.Len(t, wires, 1)
	require.Equal(t, "Flow/Orders", wires[0].ID)
	require.Equal(t, wiring.ToStateMachine, wires[0].Target.Type)
	var spec bus.Rule
	require.NoError(t, json.Unmarshal(wires[0].Source, &spec))
	require.Equal(t, "$.detail", spec.InputPath)
	require.Equal(t, "DISABLED", spec.State)
}

// samDLQTemplate's event asks SAM to make its dead-letter queue.
const samDLQTemplate = `
Transform: AWS::Serverless-2016-10-31
Resources:
  Flow:
    Type: AWS::Serverless::StateMachine
    Properties:
      Definition: {StartAt: P, States: {P: {Type: Pass, End: true}}}
      Events:
        Orders:
          Type: EventBridgeRule
          Properties:
            Pattern: {source: [shop]}
            DeadLetterConfig: {Type: SQS}
`

// A SAM event's DeadLetterConfig {Type: SQS} makes the queue SAM makes
// (<Id><Event>Queue) at the AWS endpoint, and the rule's failed events
// go there.
func TestSAMEventDeadLetterQueueMade(t *testing.T) {
	t.Parallel()
	b := newTestBed(t)
	cfg := withMoto(t, b)
	rw := &recWiring{wires: map[string][]wiring.Wire{}}
	b.d.Wiring = rw
	r, err := b.deploy(t, samDLQTemplate, nil)
	require.NoError(t, err)
	require.Empty(t, r.Warnings)
	require.Contains(t, actions(r), "FlowOrdersQueue created")
	wires := rw.wires["app"]
	require.Len(t, wires, 1)
	var spec bus.Rule
	require.NoError(t, json.Unmarshal(wires[0].Source, &spec))
	require.Regexp(t, `^arn:aws:sqs:us-east-1:123456789012:app-FlowOrdersQueue`, spec.DeadLetterArn)
	name := spec.DeadLetterArn[strings.LastIndex(spec.DeadLetterArn, ":")+1:]
	_, err = sqs.NewFromConfig(cfg).GetQueueUrl(context.Background(), &sqs.GetQueueUrlInput{QueueName: aws.String(name)})
	require.NoError(t, err, "the queue is made at the endpoint")
}

// Without an AWS endpoint, the deploy warns and the rule goes without a
// dead-letter queue.
func TestSAMEventDeadLetterQueueWithoutEndpoint(t *testing.T) {
	t.Parallel()
	b := newTestBed(t)
	rw := &recWiring{wires: map[string][]wiring.Wire{}}
	b.d.Wiring = rw
	r, err := b.deploy(t, samDLQTemplate, nil)
	require.NoError(t, err)
	require.Contains(t, strings.Join(r.Warnings, "\n"), "the dead-letter queue FlowOrdersQueue is not made")
	wires := rw.wires["app"]
	require.Len(t, wires, 1)
	var spec bus.Rule
	require.NoError(t, json.Unmarshal(wires[0].Source, &spec))
	require.Empty(t, spec.DeadLetterArn)
}
