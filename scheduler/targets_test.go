package scheduler_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdk "github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/aws/aws-sdk-go-v2/service/scheduler/types"
	"github.com/stretchr/testify/require"

	"stepwise/scheduler"
)

const (
	fnArn    = "arn:aws:lambda:us-east-1:123456789012:function:nightly"
	queueArn = "arn:aws:sqs:us-east-1:123456789012:jobs.fifo"
)

// fakeTargets records the deliveries; fail, when set, answers each.
type fakeTargets struct {
	mu   sync.Mutex
	got  []scheduler.Delivery
	fail error
}

func (f *fakeTargets) Deliver(_ context.Context, d *scheduler.Delivery) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got = append(f.got, *d)
	return f.fail
}

func (f *fakeTargets) all() []scheduler.Delivery {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]scheduler.Delivery(nil), f.got...)
}

// TestFireFunctionAndQueueTargets: a schedule targeting a function
// delivers its Input (context attributes substituted) as the payload; one
// targeting a queue, with its SqsParameters' MessageGroupId.
func TestFireFunctionAndQueueTargets(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	in := createInput("fn")
	in.ScheduleExpression = aws.String("rate(1 minute)")
	in.Target.Arn = aws.String(fnArn)
	in.Target.Input = aws.String(`{"at":"<aws.scheduler.scheduled-time>"}`)
	_, err := b.client.CreateSchedule(ctx, in)
	require.NoError(t, err)
	in = createInput("queue")
	in.ScheduleExpression = aws.String("rate(1 minute)")
	in.Target.Arn = aws.String(queueArn)
	in.Target.SqsParameters = &types.SqsParameters{MessageGroupId: aws.String("g1")}
	_, err = b.client.CreateSchedule(ctx, in)
	require.NoError(t, err)

	targets, sfn := &fakeTargets{}, &fakeSFN{}
	now := b.now.Add(30 * time.Second)
	cfg := scheduler.FireConfig{Starter: sfn, Targets: targets, Now: func() time.Time { return now }}
	require.NoError(t, b.svc.FireDue(ctx, cfg))
	got := targets.all()
	require.Len(t, got, 2)
	require.Empty(t, sfn.names_(), "no execution started")
	slot := b.now // a rate's first slot is its creation's minute
	require.Equal(t, scheduler.Delivery{Kind: scheduler.TargetFunction, TargetArn: fnArn, Input: `{"at":"2026-11-24T08:00:00Z"}`,
		ScheduleArn: "arn:aws:scheduler:us-east-1:123456789012:schedule/default/fn", Slot: slot, Attempt: 1}, got[0])
	require.Equal(t, scheduler.Delivery{Kind: scheduler.TargetQueue, TargetArn: queueArn, Input: `{"a":1}`, MessageGroupId: "g1",
		ScheduleArn: "arn:aws:scheduler:us-east-1:123456789012:schedule/default/queue", Slot: slot, Attempt: 1}, got[1])

	// Fired once per slot.
	require.NoError(t, b.svc.FireDue(ctx, cfg))
	require.Len(t, targets.all(), 2)
}

// TestFireDeliveryRetriesThenDeadLetter: a delivery that keeps failing
// is retried as the RetryPolicy says, then its dead-letter event carries
// the failure's code and message.
func TestFireDeliveryRetriesThenDeadLetter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	in := createInput("fn")
	in.ScheduleExpression = aws.String("rate(5 minutes)")
	in.Target.Arn = aws.String(fnArn)
	in.Target.RetryPolicy = &types.RetryPolicy{MaximumRetryAttempts: aws.Int32(1)}
	const dlq = "arn:aws:sqs:us-east-1:123456789012:scheduler-dlq"
	in.Target.DeadLetterConfig = &types.DeadLetterConfig{Arn: aws.String(dlq)}
	_, err := b.client.CreateSchedule(ctx, in)
	require.NoError(t, err)

	targets, dl := &fakeTargets{fail: &scheduler.DeliveryError{Code: "ValueError", Message: "bad day"}}, &deadLetters{}
	now := b.now
	cfg := scheduler.FireConfig{Starter: &fakeSFN{}, Targets: targets, Now: func() time.Time { return now }, DeadLetter: dl.send}
	require.NoError(t, b.svc.FireDue(ctx, cfg))
	require.Len(t, targets.all(), 1)
	require.Empty(t, dl.all())
	now = now.Add(time.Second)
	require.NoError(t, b.svc.FireDue(ctx, cfg))
	require.Len(t, targets.all(), 2)
	require.Equal(t, 2, targets.all()[1].Attempt)
	sent := dl.all()
	require.Len(t, sent, 1)
	a := attrs(sent[0])
	require.Equal(t, "ValueError", a["ERROR_CODE/String"])
	require.Equal(t, "bad day", a["ERROR_MESSAGE/String"])
	require.Equal(t, fnArn, a["TARGET_ARN/String"])
	require.Equal(t, `{"a":1}`, sent[0].Body)
}

// TestUnreachedTarget: a target Stepwise does not reach is created as
// AWS creates it, warned of in the log and the overview, and its slots
// are skipped, never delivered nor retried.
func TestUnreachedTarget(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	var logs strings.Builder
	cfg := b.cfg
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	svc := scheduler.New(b.exec, cfg)
	const target = "arn:aws:scheduler:::aws-sdk:ec2:startInstances"
	input := `{"InstanceIds":["i-1"]}`
	_, err := svc.CreateSchedule(ctx, &scheduler.Schedule{Name: "ec2", ScheduleExpression: "rate(1 minute)",
		FlexibleTimeWindow: &scheduler.FlexibleTimeWindow{Mode: "OFF"},
		Target:             &scheduler.Target{Arn: target, RoleArn: role, Input: &input}})
	require.NoError(t, err)
	require.Contains(t, logs.String(), "scheduler: schedule will not fire: the target "+target+" is not reached here")

	list, err := svc.Overview(ctx, 1)
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.Equal(t, scheduler.DiffNotFired, list[0].NotAWS[0].Kind)

	targets := &fakeTargets{}
	now := b.now.Add(70 * time.Second)
	fc := scheduler.FireConfig{Starter: &fakeSFN{}, Targets: targets, Now: func() time.Time { return now }}
	require.NoError(t, svc.FireDue(ctx, fc))
	require.Empty(t, targets.all())
	require.Contains(t, logs.String(), "scheduler: slot skipped, its target is not reached here")
	got, err := b.client.GetSchedule(ctx, &sdk.GetScheduleInput{Name: aws.String("ec2")})
	require.NoError(t, err)
	require.Equal(t, target, aws.ToString(got.Target.Arn))
}

// TestDeliveredTargetChecks: parameters for another kind of target are
// refused.
func TestDeliveredTargetChecks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	in := createInput("fn")
	in.Target.Arn = aws.String(fnArn)
	in.Target.SqsParameters = &types.SqsParameters{MessageGroupId: aws.String("g")}
	_, err := b.client.CreateSchedule(ctx, in)
	require.Equal(t, "ValidationException", apiCode(err))
	require.ErrorContains(t, err, "SqsParameters are for an SQS queue target, not "+fnArn+".")
}
