package service_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/engine/activity"
	"stepwise/service"
	"stepwise/sfnapi"
)

func TestGetActivityTask(t *testing.T) {
	t.Parallel()

	t.Run("PollsTheEngineUntilTheActivityIsDeleted", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		var polled []string
		b.engine.GetActivityTaskFunc = func(ctx context.Context, activityArn, workerName string) (*activity.Handout, error) {
			polled = append(polled, activityArn+" "+workerName)
			return &activity.Handout{Token: "token", Input: `{}`}, nil
		}
		act, err := b.svc.CreateActivity(b.ctx, &service.CreateActivityInput{Name: "work"})
		require.NoError(t, err)
		for range 2 {
			out, err := b.svc.GetActivityTask(b.ctx, &service.GetActivityTaskInput{ActivityArn: act.ActivityArn, WorkerName: ptr("w")})
			require.NoError(t, err)
			require.Equal(t, &service.GetActivityTaskOutput{TaskToken: ptr("token"), Input: ptr(`{}`)}, out)
		}
		require.Equal(t, []string{act.ActivityArn + " w", act.ActivityArn + " w"}, polled)

		_, err = b.svc.DeleteActivity(b.ctx, &service.DeleteActivityInput{ActivityArn: act.ActivityArn})
		require.NoError(t, err)
		_, err = b.svc.GetActivityTask(b.ctx, &service.GetActivityTaskInput{ActivityArn: act.ActivityArn})
		requireAPIError(t, err, sfnapi.CodeActivityDoesNotExist, "Activity Does Not Exist: '"+act.ActivityArn+"'")
		require.Len(t, polled, 2)
	})

	t.Run("AWorkerThatLeftGetsNoError", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		act, err := b.svc.CreateActivity(b.ctx, &service.CreateActivityInput{Name: "work"})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(b.ctx)
		b.engine.GetActivityTaskFunc = func(ctx context.Context, activityArn, workerName string) (*activity.Handout, error) {
			cancel() // the worker leaves while the engine works
			return nil, ctx.Err()
		}
		out, err := b.svc.GetActivityTask(ctx, &service.GetActivityTaskInput{ActivityArn: act.ActivityArn})
		require.NoError(t, err, "no internal error for a worker that left")
		require.Equal(t, &service.GetActivityTaskOutput{}, out)
	})

	t.Run("ActivityDoesNotExist", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		arn := "arn:aws:states:us-east-1:123456789012:activity:nope"
		_, err := b.svc.GetActivityTask(b.ctx, &service.GetActivityTaskInput{ActivityArn: arn})
		requireAPIError(t, err, sfnapi.CodeActivityDoesNotExist, "Activity Does Not Exist: '"+arn+"'")
	})
}
