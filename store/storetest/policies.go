package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"stepwise/history"
	"stepwise/store"
)

// exercisePolicies checks that an execution's policies (opaque JSON text
// to the store) go through every path that writes or reads executions.
// Each execution has its own, so that a path that dropped or mixed them
// up would fail.
func exercisePolicies(ctx context.Context, t *testing.T, setup func(t *testing.T) *testBundle) {
	t.Helper()

	t.Run("ExecutionPolicies", func(t *testing.T) {
		t.Parallel()

		policies := func(name string) string {
			return `{"OnFailure":{"Retry":{"MaxAttempts":3},"Tag":"` + name + `"}}`
		}

		t.Run("RoundTrip", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			sm := b.insertStateMachine(ctx, t, "orders")

			// ExecutionInsert, and one without policies.
			direct := executionFixture(sm.Arn, "direct", baseTime, history.StatusRunning)
			direct.Policies = policies("direct")
			x, err := b.exec.ExecutionInsert(ctx, &store.ExecutionInsertParams{Execution: direct})
			require.NoError(t, err)
			require.Equal(t, direct, x)
			none := executionFixture(sm.Arn, "none", baseTime.Add(time.Second), history.StatusRunning)
			_, err = b.exec.ExecutionInsert(ctx, &store.ExecutionInsertParams{Execution: none})
			require.NoError(t, err)

			// Through a step, unowned and owned (the two inserts of a
			// driver may differ).
			viaStep := executionFixture(sm.Arn, "step", baseTime.Add(2*time.Second), history.StatusRunning)
			viaStep.Policies = policies("step")
			owned := executionFixture(sm.Arn, "owned", baseTime.Add(3*time.Second), history.StatusRunning)
			owned.Policies = policies("owned")
			owned.MapRunArn = mapRunArn(sm.Arn, "map", "run") // for the list of a map run
			f, err := b.exec.NodeRegister(ctx, "node-a", time.Hour)
			require.NoError(t, err)
			require.NoError(t, b.exec.StepWrite(ctx, []*store.Step{
				{Insert: viaStep, Events: eventFixtures(viaStep.Arn, 1, 2)},
				{Insert: owned, Fence: &f, Events: eventFixtures(owned.Arn, 1, 2)},
			}))

			all := []*store.Execution{direct, none, viaStep, owned}
			for _, want := range all {
				got, err := b.exec.ExecutionGet(ctx, want.Arn)
				require.NoError(t, err)
				require.Equal(t, want, got)
				require.Equal(t, want.Policies, got.Policies, want.Name)
			}

			// Every list.
			running, err := b.exec.ExecutionListRunning(ctx, "", 0)
			require.NoError(t, err)
			require.Len(t, running, len(all))
			requirePolicies(t, all, running)
			xs, err := b.exec.ExecutionList(ctx, &store.ExecutionListParams{StateMachineArn: sm.Arn})
			require.NoError(t, err)
			require.Equal(t, []string{"step", "none", "direct"}, executionNames(xs)) // owned is a map run's
			requirePolicies(t, all, xs)
			xs, err = b.exec.ExecutionList(ctx, &store.ExecutionListParams{StateMachineArn: sm.Arn, Status: history.StatusRunning})
			require.NoError(t, err)
			require.Len(t, xs, len(all)-1)
			requirePolicies(t, all, xs)
			xs, err = b.exec.ExecutionList(ctx, &store.ExecutionListParams{MapRunArn: owned.MapRunArn})
			require.NoError(t, err)
			require.Equal(t, []string{"owned"}, executionNames(xs))
			requirePolicies(t, all, xs)

			// An update leaves them, and returns them.
			for _, want := range []*store.Execution{direct, viaStep, owned} {
				up, err := b.exec.ExecutionUpdate(ctx, &store.ExecutionUpdateParams{Arn: want.Arn, ExpectedVersion: want.Version,
					Status: history.StatusFailed, Error: ptr("States.TaskFailed"), StopDate: ptr(baseTime.Add(time.Minute)), LastEventID: 3})
				require.NoError(t, err)
				require.Equal(t, want.Policies, up.Policies, want.Name)
				got, err := b.exec.ExecutionGet(ctx, want.Arn)
				require.NoError(t, err)
				require.Equal(t, up, got)
			}
			xs, err = b.exec.ExecutionList(ctx, &store.ExecutionListParams{StateMachineArn: sm.Arn, Status: history.StatusFailed})
			require.NoError(t, err)
			require.Equal(t, []string{"step", "direct"}, executionNames(xs))
			requirePolicies(t, all, xs)
			xs, err = b.exec.ExecutionList(ctx, &store.ExecutionListParams{MapRunArn: owned.MapRunArn, Status: history.StatusFailed})
			require.NoError(t, err)
			require.Equal(t, []string{"owned"}, executionNames(xs))
			requirePolicies(t, all, xs)
		})
	})
}

// requirePolicies checks that each execution of got has the policies of
// the one of want with its ARN.
func requirePolicies(t *testing.T, want, got []*store.Execution) {
	t.Helper()
	byArn := make(map[string]string, len(want))
	for _, x := range want {
		byArn[x.Arn] = x.Policies
	}
	for _, x := range got {
		p, ok := byArn[x.Arn]
		require.True(t, ok, x.Arn)
		require.Equal(t, p, x.Policies, x.Name)
	}
}
