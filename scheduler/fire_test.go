package scheduler_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	sdk "github.com/aws/aws-sdk-go-v2/service/scheduler"
	"github.com/aws/aws-sdk-go-v2/service/scheduler/types"
	"github.com/stretchr/testify/require"

	"stepwise/scheduler"
	"stepwise/sfnapi"
)

// fakeSFN is a StartExecution that refuses a name twice.
type fakeSFN struct {
	mu      sync.Mutex
	started []map[string]string
	names   map[string]bool
}

func (f *fakeSFN) StartExecution(_ context.Context, r *scheduler.StartExecution) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	req := requestMap(r)
	if f.names == nil {
		f.names = map[string]bool{}
	}
	if f.names[req["name"]] {
		return sfnapi.NewError(sfnapi.CodeExecutionAlreadyExists, "Execution Already Exists")
	}
	f.names[req["name"]] = true
	f.started = append(f.started, req)
	return nil
}

// requestMap is a start's members by their names in the API.
func requestMap(r *scheduler.StartExecution) map[string]string {
	m := map[string]string{"stateMachineArn": r.StateMachineArn}
	for k, v := range map[string]*string{"name": r.Name, "input": r.Input, "traceHeader": r.TraceHeader} {
		if v != nil {
			m[k] = *v
		}
	}
	return m
}

func (f *fakeSFN) names_() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, s := range f.started {
		out = append(out, s["name"])
	}
	return out
}

func TestFireRate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	in := createInput("every")
	in.ScheduleExpression = aws.String("rate(1 minute)")
	in.Target.Input = aws.String(`{"at":"<aws.scheduler.scheduled-time>","arn":"<aws.scheduler.schedule-arn>","n":"<aws.scheduler.attempt-number>"}`)
	in.Target.RetryPolicy = &types.RetryPolicy{MaximumEventAgeInSeconds: aws.Int32(120)}
	_, err := b.client.CreateSchedule(ctx, in)
	require.NoError(t, err)

	sfn := &fakeSFN{}
	now := b.now.Add(150 * time.Second)
	cfg := scheduler.FireConfig{Starter: sfn, Now: func() time.Time { return now }}
	require.NoError(t, b.svc.FireDue(ctx, cfg))
	// 08:00 is 150 s old: older than MaximumEventAgeInSeconds, dropped.
	require.Equal(t, []string{"every-20261124T080100", "every-20261124T080200"}, sfn.names_())
	require.Equal(t, smArn, sfn.started[0]["stateMachineArn"])
	require.JSONEq(t, `{"at":"2026-11-24T08:01:00Z","arn":"arn:aws:scheduler:us-east-1:123456789012:schedule/default/every","n":"1"}`, sfn.started[0]["input"])

	// Again, or from another node: nothing more.
	require.NoError(t, b.svc.FireDue(ctx, cfg))
	require.Len(t, sfn.names_(), 2)

	// Downtime of 10 minutes: slots older than 120 s are dropped.
	now = now.Add(10 * time.Minute)
	require.NoError(t, b.svc.FireDue(ctx, cfg))
	require.Equal(t, []string{"every-20261124T080100", "every-20261124T080200",
		"every-20261124T081100", "every-20261124T081200"}, sfn.names_())

	// Disabled, it does not fire; enabled again, it does not fire what it
	// missed.
	up := &sdk.UpdateScheduleInput{Name: in.Name, ScheduleExpression: in.ScheduleExpression, FlexibleTimeWindow: in.FlexibleTimeWindow,
		Target: in.Target, State: types.ScheduleStateDisabled}
	b.now = now
	_, err = b.client.UpdateSchedule(ctx, up)
	require.NoError(t, err)
	now = now.Add(time.Minute)
	require.NoError(t, b.svc.FireDue(ctx, cfg))
	require.Len(t, sfn.names_(), 4)
	b.now = now.Add(30 * time.Second)
	up.State = types.ScheduleStateEnabled
	_, err = b.client.UpdateSchedule(ctx, up)
	require.NoError(t, err)
	now = b.now.Add(40 * time.Second)
	require.NoError(t, b.svc.FireDue(ctx, cfg))
	require.Equal(t, "every-20261124T081400", sfn.names_()[len(sfn.names_())-1])
}

func TestFireAtUniversalDelete(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	in := createInput("once")
	in.ScheduleExpression = aws.String("at(2026-11-24T17:30:00)")
	in.ScheduleExpressionTimezone = aws.String("Asia/Tokyo") // 08:30 UTC
	in.ActionAfterCompletion = types.ActionAfterCompletionDelete
	in.Target.Arn = aws.String(scheduler.UniversalStartExecution)
	in.Target.Input = aws.String(`{"StateMachineArn":"` + smArn + `","Name":"jobnet-<stepwise.scheduled-date>","Input":"{\"id\":\"<aws.scheduler.execution-id>\"}"}`)
	_, err := b.client.CreateSchedule(ctx, in)
	require.NoError(t, err)

	sfn := &fakeSFN{}
	now := b.now.Add(29 * time.Minute)
	cfg := scheduler.FireConfig{Starter: sfn, Now: func() time.Time { return now }}
	require.NoError(t, b.svc.FireDue(ctx, cfg))
	require.Empty(t, sfn.names_())
	now = now.Add(time.Minute)
	require.NoError(t, b.svc.FireDue(ctx, cfg))
	require.Equal(t, []string{"jobnet-20261124"}, sfn.names_())
	slot := time.Date(2026, 11, 24, 8, 30, 0, 0, time.UTC)
	id := scheduler.ExecutionID("arn:aws:scheduler:us-east-1:123456789012:schedule/default/once", slot)
	require.JSONEq(t, `{"id":"`+id+`"}`, sfn.started[0]["input"])
	_, err = b.client.GetSchedule(ctx, &sdk.GetScheduleInput{Name: aws.String("once")})
	var nf *types.ResourceNotFoundException
	require.ErrorAs(t, err, &nf, "deleted after it fired")
}

func TestFlexibleWindow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	in := createInput("flex")
	in.ScheduleExpression = aws.String("cron(0 9 * * ? *)")
	in.FlexibleTimeWindow = &types.FlexibleTimeWindow{Mode: types.FlexibleTimeWindowModeFlexible, MaximumWindowInMinutes: aws.Int32(15)}
	_, err := b.client.CreateSchedule(ctx, in)
	require.NoError(t, err)
	sfn := &fakeSFN{}
	now := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	cfg := scheduler.FireConfig{Starter: sfn, Now: func() time.Time { return now }}
	var firedAt time.Time
	for ; now.Before(time.Date(2026, 11, 24, 9, 16, 0, 0, time.UTC)); now = now.Add(10 * time.Second) {
		require.NoError(t, b.svc.FireDue(ctx, cfg))
		if len(sfn.names_()) == 1 && firedAt.IsZero() {
			firedAt = now
		}
	}
	require.Equal(t, []string{"flex-20261124T090000"}, sfn.names_())
	require.False(t, firedAt.IsZero())
	require.Less(t, firedAt.Sub(time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)), 15*time.Minute+10*time.Second)
}

// failingSFN refuses every StartExecution as for a state machine that
// does not exist, and keeps the inputs it was sent.
type failingSFN struct {
	mu     sync.Mutex
	inputs []string
}

func (f *failingSFN) StartExecution(_ context.Context, r *scheduler.StartExecution) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.inputs = append(f.inputs, requestMap(r)["input"])
	return sfnapi.NewError(sfnapi.CodeStateMachineDoesNotExist, "State Machine Does Not Exist: '%s'", smArn)
}

func (f *failingSFN) calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.inputs...)
}

// deadLetters collects the dead-letter events sent.
type deadLetters struct {
	mu   sync.Mutex
	sent []*scheduler.DeadLetter
}

func (d *deadLetters) send(_ context.Context, m *scheduler.DeadLetter) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.sent = append(d.sent, m)
	return nil
}

func (d *deadLetters) all() []*scheduler.DeadLetter {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]*scheduler.DeadLetter(nil), d.sent...)
}

func attrs(m *scheduler.DeadLetter) map[string]string {
	out := map[string]string{}
	for _, a := range m.Attributes {
		out[a.Name+"/"+a.DataType] = a.Value
	}
	return out
}

// TestFireRetriesThenDeadLetter: a start that keeps failing is made once
// and retried MaximumRetryAttempts (2) times, after 1 s and then 2 s of
// execution time, then its dead-letter event goes to the queue, once,
// with the target's input and AWS's attributes; the next slot is tried
// afresh.
func TestFireRetriesThenDeadLetter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	in := createInput("failing")
	in.GroupName = aws.String("default")
	in.ScheduleExpression = aws.String("rate(5 minutes)")
	in.Target.Input = aws.String(`{"attempt":"<aws.scheduler.attempt-number>","at":"<aws.scheduler.scheduled-time>"}`)
	in.Target.RetryPolicy = &types.RetryPolicy{MaximumRetryAttempts: aws.Int32(2)}
	const dlq = "arn:aws:sqs:us-east-1:123456789012:scheduler-dlq"
	in.Target.DeadLetterConfig = &types.DeadLetterConfig{Arn: aws.String(dlq)}
	_, err := b.client.CreateSchedule(ctx, in)
	require.NoError(t, err)

	sfn, dl := &failingSFN{}, &deadLetters{}
	now := b.now
	var alarm time.Time
	cfg := scheduler.FireConfig{Starter: sfn, Now: func() time.Time { return now }, DeadLetter: dl.send,
		Alarm: func(at time.Time, _ func(context.Context)) { alarm = at }}
	require.NoError(t, b.svc.FireDue(ctx, cfg))
	require.Len(t, sfn.calls(), 1)
	require.Equal(t, now.Add(time.Second), alarm, "the retry is the next thing to do")
	// Not before its back-off.
	now = now.Add(500 * time.Millisecond)
	require.NoError(t, b.svc.FireDue(ctx, cfg))
	require.Len(t, sfn.calls(), 1)
	now = now.Add(500 * time.Millisecond)
	require.NoError(t, b.svc.FireDue(ctx, cfg))
	require.Len(t, sfn.calls(), 2)
	require.Empty(t, dl.all())
	now = now.Add(2 * time.Second)
	require.NoError(t, b.svc.FireDue(ctx, cfg))
	require.Equal(t, []string{`{"attempt":"1","at":"2026-11-24T08:00:00Z"}`, `{"attempt":"2","at":"2026-11-24T08:00:00Z"}`,
		`{"attempt":"3","at":"2026-11-24T08:00:00Z"}`}, sfn.calls())
	sent := dl.all()
	require.Len(t, sent, 1)
	require.Equal(t, dlq, sent[0].QueueArn)
	require.Equal(t, `{"attempt":"3","at":"2026-11-24T08:00:00Z"}`, sent[0].Body)
	require.Equal(t, map[string]string{
		"ERROR_CODE/String":                "StateMachineDoesNotExist",
		"ERROR_MESSAGE/String":             "State Machine Does Not Exist: '" + smArn + "'",
		"EXECUTION_ID/String":              scheduler.ExecutionID("arn:aws:scheduler:us-east-1:123456789012:schedule/default/failing", b.now),
		"EXHAUSTED_RETRY_CONDITION/String": "MaximumRetryAttempts",
		"IS_PAYLOAD_TRUNCATED/String":      "false",
		"RETRY_ATTEMPTS/String":            "2",
		"SCHEDULED_TIME/String":            "2026-11-24T08:00:00Z",
		"SCHEDULE_ARN/String":              "arn:aws:scheduler:us-east-1:123456789012:schedule/default/failing",
		"GROUP_ARN/String":                 "arn:aws:scheduler:us-east-1:123456789012:schedule-group/default",
		"TARGET_ARN/String":                smArn,
	}, attrs(sent[0]))
	require.Equal(t, b.now.Add(5*time.Minute), alarm, "the next slot")

	// Done with: looked at again, nothing more is sent or tried.
	require.NoError(t, b.svc.FireDue(ctx, cfg))
	require.Len(t, sfn.calls(), 3)
	require.Len(t, dl.all(), 1)
	// The next slot starts with attempt 1.
	now = b.now.Add(5 * time.Minute)
	require.NoError(t, b.svc.FireDue(ctx, cfg))
	require.Equal(t, `{"attempt":"1","at":"2026-11-24T08:05:00Z"}`, sfn.calls()[3])
}

// TestFireRetriesUntilEventAge: with MaximumEventAgeInSeconds 60 the
// retries (1, 2, 4, 8, 16 s apart) end when the next one would come after
// the slot's age limit: six attempts, five retries.
func TestFireRetriesUntilEventAge(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	in := createInput("aging")
	in.ScheduleExpression = aws.String("rate(5 minutes)")
	in.Target.RetryPolicy = &types.RetryPolicy{MaximumEventAgeInSeconds: aws.Int32(60)}
	in.Target.DeadLetterConfig = &types.DeadLetterConfig{Arn: aws.String("arn:aws:sqs:us-east-1:123456789012:dlq")}
	_, err := b.client.CreateSchedule(ctx, in)
	require.NoError(t, err)
	sfn, dl := &failingSFN{}, &deadLetters{}
	now := b.now
	cfg := scheduler.FireConfig{Starter: sfn, Now: func() time.Time { return now }, DeadLetter: dl.send}
	for ; now.Before(b.now.Add(2 * time.Minute)); now = now.Add(time.Second) {
		_ = b.svc.FireDue(ctx, cfg)
	}
	require.Len(t, sfn.calls(), 6)
	sent := dl.all()
	require.Len(t, sent, 1)
	require.Equal(t, "MaximumEventAgeInSeconds", attrs(sent[0])["EXHAUSTED_RETRY_CONDITION/String"])
	require.Equal(t, "5", attrs(sent[0])["RETRY_ATTEMPTS/String"])
}

// TestFireAlarmNextSlot: a look arms the alarm for the next slot, in the
// schedule's time zone: a nightly cron in Asia/Tokyo.
func TestFireAlarmNextSlot(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	in := createInput("nightly")
	in.ScheduleExpression = aws.String("cron(30 2 * * ? *)")
	in.ScheduleExpressionTimezone = aws.String("Asia/Tokyo")
	_, err := b.client.CreateSchedule(ctx, in)
	require.NoError(t, err)
	var alarm time.Time
	cfg := scheduler.FireConfig{Starter: &fakeSFN{}, Now: func() time.Time { return b.now },
		Alarm: func(at time.Time, _ func(context.Context)) { alarm = at }}
	require.NoError(t, b.svc.FireDue(ctx, cfg))
	// 02:30 in Tokyo on the 25th is 17:30 UTC on the 24th.
	require.Equal(t, time.Date(2026, 11, 24, 17, 30, 0, 0, time.UTC), alarm.UTC())
}

// TestFireRetriesAcrossRestart: the attempts a slot made are kept with the
// schedule: a scheduler started again (a restart, a new leader) goes on
// with the retries left, after the back-off of the last, instead of
// starting them over.
func TestFireRetriesAcrossRestart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t)
	in := createInput("restarted")
	in.ScheduleExpression = aws.String("rate(5 minutes)")
	in.Target.RetryPolicy = &types.RetryPolicy{MaximumRetryAttempts: aws.Int32(2)}
	in.Target.DeadLetterConfig = &types.DeadLetterConfig{Arn: aws.String("arn:aws:sqs:us-east-1:123456789012:dlq")}
	_, err := b.client.CreateSchedule(ctx, in)
	require.NoError(t, err)
	sfn, dl := &failingSFN{}, &deadLetters{}
	now := b.now
	cfg := scheduler.FireConfig{Starter: sfn, Now: func() time.Time { return now }, DeadLetter: dl.send}
	require.NoError(t, b.svc.FireDue(ctx, cfg))
	now = now.Add(time.Second)
	require.NoError(t, b.svc.FireDue(ctx, cfg))
	require.Len(t, sfn.calls(), 2)

	again := scheduler.New(b.exec, scheduler.Config{Region: region, Account: account, Now: func() time.Time { return now }})
	now = now.Add(time.Second) // the second retry is due 2 s after the first
	require.NoError(t, again.FireDue(ctx, cfg))
	require.Len(t, sfn.calls(), 2)
	now = now.Add(time.Second)
	require.NoError(t, again.FireDue(ctx, cfg))
	require.Len(t, sfn.calls(), 3, "one retry left")
	sent := dl.all()
	require.Len(t, sent, 1)
	require.Equal(t, "2", attrs(sent[0])["RETRY_ATTEMPTS/String"])
}

// A slot's start that fails is a typed error: the Starter's *sfnapi.Error
// as it is (its code and message go to the dead-letter queue), any other
// failure InternalFailure; a universal target whose request has a member
// of the wrong type is refused as the API refuses it.
func TestFireStartFailureIsTyped(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for name, tc := range map[string]struct {
		input         string
		err           error
		code, message string
	}{
		"refused": {`{"StateMachineArn":"` + smArn + `"}`, sfnapi.NewError(sfnapi.CodeStateMachineDeleting, "State Machine is being deleted: '%s'", smArn),
			sfnapi.CodeStateMachineDeleting, "State Machine is being deleted: '" + smArn + "'"},
		"internal": {`{"StateMachineArn":"` + smArn + `"}`, errors.New("the disk is full"),
			sfnapi.CodeInternalFailure, "An internal error occurred"},
		"object input": {`{"StateMachineArn":"` + smArn + `","Input":{"a":1}}`, nil,
			sfnapi.CodeSerialization, "Start of structure or map found where not expected. (member input)"},
		"number trace header": {`{"StateMachineArn":"` + smArn + `","TraceHeader":7}`, nil,
			sfnapi.CodeSerialization, "NUMBER_VALUE can not be converted to a String (member traceHeader)"},
	} {
		b := setup(t)
		in := createInput("typed")
		in.ScheduleExpression = aws.String("rate(5 minutes)")
		in.Target.Arn = aws.String(scheduler.UniversalStartExecution)
		in.Target.Input = aws.String(tc.input)
		in.Target.RetryPolicy = &types.RetryPolicy{MaximumRetryAttempts: aws.Int32(0)}
		const dlq = "arn:aws:sqs:us-east-1:123456789012:scheduler-dlq"
		in.Target.DeadLetterConfig = &types.DeadLetterConfig{Arn: aws.String(dlq)}
		_, err := b.client.CreateSchedule(ctx, in)
		require.NoError(t, err, name)
		var got []*scheduler.StartExecution
		starter := scheduler.StarterFunc(func(_ context.Context, r *scheduler.StartExecution) error {
			got = append(got, r)
			return tc.err
		})
		dl := &deadLetters{}
		require.NoError(t, b.svc.FireDue(ctx, scheduler.FireConfig{Starter: starter, Now: func() time.Time { return b.now }, DeadLetter: dl.send}), name)
		sent := dl.all()
		require.Len(t, sent, 1, name)
		require.Equal(t, tc.code, attrs(sent[0])["ERROR_CODE/String"], name)
		require.Equal(t, tc.message, attrs(sent[0])["ERROR_MESSAGE/String"], name)
		if tc.err != nil {
			require.Len(t, got, 1, name)
			require.Equal(t, smArn, got[0].StateMachineArn, name)
			require.Equal(t, "typed-20261124T080000", *got[0].Name, name)
		} else {
			require.Empty(t, got, "a request the API would not decode is not started: "+name)
		}
	}
}
