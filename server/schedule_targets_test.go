package server_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/require"

	"stepwise/config"
	"stepwise/deploy"
	"stepwise/integration/integrationtest"
	"stepwise/internal/testkit/slowtest"
	"stepwise/scheduler"
	"stepwise/server"
	"stepwise/server/servertest"
)

const schedRole = "arn:aws:iam::123456789012:role/scheduler"

// virtualClock is a server whose clock the test advances.
func virtualClock(c *config.Serve) { c.WaitTimeScale = 0 }

// createSchedule makes a schedule of rate(1 minute) targeting arn, and
// moves the server's clock past its first slots.
func createSchedule(t *testing.T, s *servertest.Server, name, arn, input string, edit func(*scheduler.Target)) {
	t.Helper()
	ctx := context.Background()
	target := &scheduler.Target{Arn: arn, RoleArn: schedRole}
	if input != "" {
		target.Input = &input
	}
	if edit != nil {
		edit(target)
	}
	_, err := s.Scheduler().CreateSchedule(ctx, &scheduler.Schedule{Name: name, ScheduleExpression: "rate(1 minute)",
		FlexibleTimeWindow: &scheduler.FlexibleTimeWindow{Mode: "OFF"}, Target: target})
	require.NoError(t, err)
}

// advance looks at the schedules and moves the clock on by d.
func advance(t *testing.T, s *servertest.Server, d time.Duration) {
	t.Helper()
	ctx := context.Background()
	s.Scheduler().Look(ctx)
	_, err := s.Engine().AdvanceClockBy(ctx, d)
	require.NoError(t, err)
	s.Scheduler().Look(ctx)
}

// TestScheduleInvokesLocalFunction: a schedule targeting a local Python
// function invokes it with the schedule's Input, its context attributes
// substituted.
func TestScheduleInvokesLocalFunction(t *testing.T) {
	t.Parallel()
	slowtest.Require(t, "it runs a Python function")
	code, out := t.TempDir(), filepath.Join(t.TempDir(), "events")
	require.NoError(t, os.WriteFile(filepath.Join(code, "app.py"), []byte(`import json, os
def handler(event, context):
    with open(os.environ["OUT"], "a") as f:
        f.write(json.dumps(event) + "\n")
    return {"ok": True}
`), 0o644))
	s := servertest.New(t, servertest.WithConfig(virtualClock), servertest.WithOptions(server.WithDeployAtStart(func(ctx context.Context, d *deploy.Deployer) error {
		return d.Functions.PutFunction(ctx, &deploy.Function{Name: "nightly", Runtime: "python3.12", Handler: "app.handler", Code: code,
			Env: map[string]string{"OUT": out}})
	})))
	createSchedule(t, s, "fn", "arn:aws:lambda:us-east-1:123456789012:function:nightly",
		`{"job": "report", "at": "<aws.scheduler.scheduled-time>"}`, nil)
	advance(t, s, 2*time.Minute)

	var lines []string
	require.Eventually(t, func() bool {
		b, _ := os.ReadFile(out)
		lines = strings.Split(strings.TrimSpace(string(b)), "\n")
		return len(b) > 0
	}, 30*time.Second, 50*time.Millisecond)
	var ev map[string]string
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &ev))
	require.Equal(t, "report", ev["job"])
	_, err := time.Parse(time.RFC3339, ev["at"])
	require.NoError(t, err, "the scheduled time substituted: %s", lines[0])
}

// TestScheduleSendsToQueue: a schedule targeting an SQS queue at the
// endpoint (moto) sends its Input as a message, with its
// MessageGroupId on a FIFO queue; a universal sqs:sendMessage target
// sends its request.
func TestScheduleSendsToQueue(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	moto := integrationtest.Moto(t)
	s := servertest.New(t, servertest.WithConfig(func(c *config.Serve) {
		virtualClock(c)
		c.Integrations.AWSEndpoint = moto
	}))
	cfg, err := awsconfig.LoadDefaultConfig(ctx, awsconfig.WithRegion("us-east-1"),
		awsconfig.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("test", "test", "")))
	require.NoError(t, err)
	q := sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.BaseEndpoint = aws.String(moto) })
	plain, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("jobs")})
	require.NoError(t, err)
	fifo, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("jobs.fifo"),
		Attributes: map[string]string{"FifoQueue": "true"}})
	require.NoError(t, err)

	createSchedule(t, s, "queue", "arn:aws:sqs:us-east-1:123456789012:jobs", `{"job": "extract"}`, nil)
	createSchedule(t, s, "fifo", "arn:aws:sqs:us-east-1:123456789012:jobs.fifo", `{"job": "load"}`, func(t *scheduler.Target) {
		t.SqsParameters = json.RawMessage(`{"MessageGroupId": "nightly"}`)
	})
	createSchedule(t, s, "universal", "arn:aws:scheduler:::aws-sdk:sqs:sendMessage",
		`{"QueueUrl": "`+aws.ToString(plain.QueueUrl)+`", "MessageBody": "by the universal target"}`, nil)
	advance(t, s, 30*time.Second)

	receive := func(url string, n int) []string {
		var bodies []string
		require.Eventually(t, func() bool {
			out, err := q.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 10,
				MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameMessageGroupId}})
			require.NoError(t, err)
			for _, m := range out.Messages {
				bodies = append(bodies, aws.ToString(m.Body)+"|"+m.Attributes["MessageGroupId"])
			}
			return len(bodies) >= n
		}, 30*time.Second, 100*time.Millisecond)
		return slices.Compact(slices.Sorted(slices.Values(bodies))) // a slot a minute: the advance may pass two
	}
	require.Equal(t, []string{"by the universal target|", `{"job": "extract"}|`}, receive(aws.ToString(plain.QueueUrl), 2))
	require.Equal(t, []string{`{"job": "load"}|nightly`}, receive(aws.ToString(fifo.QueueUrl), 1))
}

// TestScheduleBusAndUnreachedTargets: a schedule targeting an event bus
// puts its event through the server's bus hook; one whose target is not
// reached here (a universal target of ec2) is created and never fired.
func TestScheduleBusAndUnreachedTargets(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := servertest.New(t, servertest.WithConfig(virtualClock))
	var mu sync.Mutex
	var put []server.BusEvent
	s.SetBusDelivery(func(_ context.Context, e *server.BusEvent) error {
		mu.Lock()
		defer mu.Unlock()
		put = append(put, *e)
		return nil
	})
	const bus = "arn:aws:events:us-east-1:123456789012:event-bus/default"
	createSchedule(t, s, "bus", bus, `{"night": "<stepwise.scheduled-date>"}`, func(t *scheduler.Target) {
		t.EventBridgeParameters = json.RawMessage(`{"DetailType": "Night started", "Source": "jobnet"}`)
	})
	createSchedule(t, s, "ec2", "arn:aws:scheduler:::aws-sdk:ec2:stopInstances", `{"InstanceIds": ["i-1"]}`, nil)
	advance(t, s, 30*time.Second)

	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(put) > 0
	}, 10*time.Second, 20*time.Millisecond)
	mu.Lock()
	e := put[0]
	mu.Unlock()
	require.Equal(t, bus, e.Bus)
	require.Equal(t, "Night started", e.DetailType)
	require.Equal(t, "jobnet", e.Source)
	require.Regexp(t, `^\{"night": "\d{8}"\}$`, e.Detail)
	require.Equal(t, []string{"arn:aws:scheduler:us-east-1:123456789012:schedule/default/bus"}, e.Resources)

	list, err := s.Scheduler().Overview(ctx, 1)
	require.NoError(t, err)
	for _, o := range list {
		if o.Name == "ec2" {
			require.Equal(t, scheduler.DiffNotFired, o.NotAWS[0].Kind)
			require.Contains(t, o.NotAWS[0].Detail, "is not reached here")
		}
	}
}
