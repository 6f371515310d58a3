package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/store"
)

func exerciseStacks(ctx context.Context, t *testing.T, setup func(t *testing.T) *testBundle) {
	t.Helper()

	stack := func(name, body string) *store.Stack {
		return &store.Stack{Name: name, Body: body, CreatedAt: baseTime, UpdatedAt: baseTime}
	}
	names := func(ss []*store.Stack) []string {
		out := make([]string, len(ss))
		for i, s := range ss {
			out[i] = s.Name
		}
		return out
	}

	t.Run("Stacks", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		list, err := b.exec.StackList(ctx)
		require.NoError(t, err)
		require.Empty(t, list)

		// Names sort by bytes: upper case before lower, "app" before
		// "app-2" before "apps".
		for _, name := range []string{"apps", "app-2", "Zeta", "app", "日本"} {
			require.NoError(t, b.exec.StackPut(ctx, stack(name, `{"Template":"`+name+`"}`)))
		}
		got, err := b.exec.StackGet(ctx, "app")
		require.NoError(t, err)
		require.Equal(t, stack("app", `{"Template":"app"}`), got)
		list, err = b.exec.StackList(ctx)
		require.NoError(t, err)
		require.Equal(t, []string{"Zeta", "app", "app-2", "apps", "日本"}, names(list))
		require.Equal(t, stack("日本", `{"Template":"日本"}`), list[4])

		_, err = b.exec.StackGet(ctx, "missing")
		require.ErrorIs(t, err, store.ErrNotFound)
		_, err = b.exec.StackGet(ctx, "APP")
		require.ErrorIs(t, err, store.ErrNotFound)

		// A second put replaces the body and the update date; the
		// creation date stays the first put's, whatever the second says.
		later := baseTime.Add(time.Hour + 5*time.Millisecond)
		body := `{"Resources":{"Fn":{"Type":"AWS::Serverless::Function"}},"Outputs":{"Arn":"arn:aws:lambda:us-east-1:123456789012:function:fn"}}`
		require.NoError(t, b.exec.StackPut(ctx, &store.Stack{Name: "app", Body: body, CreatedAt: later, UpdatedAt: later}))
		got, err = b.exec.StackGet(ctx, "app")
		require.NoError(t, err)
		require.Equal(t, &store.Stack{Name: "app", Body: body, CreatedAt: baseTime, UpdatedAt: later}, got)
		list, err = b.exec.StackList(ctx)
		require.NoError(t, err)
		require.Equal(t, []string{"Zeta", "app", "app-2", "apps", "日本"}, names(list))
		require.Equal(t, got, list[1])
		// Only that stack changed.
		got, err = b.exec.StackGet(ctx, "apps")
		require.NoError(t, err)
		require.Equal(t, stack("apps", `{"Template":"apps"}`), got)

		require.NoError(t, b.exec.StackDelete(ctx, "app"))
		_, err = b.exec.StackGet(ctx, "app")
		require.ErrorIs(t, err, store.ErrNotFound)
		list, err = b.exec.StackList(ctx)
		require.NoError(t, err)
		require.Equal(t, []string{"Zeta", "app-2", "apps", "日本"}, names(list))
		require.ErrorIs(t, b.exec.StackDelete(ctx, "app"), store.ErrNotFound)
		require.ErrorIs(t, b.exec.StackDelete(ctx, "never"), store.ErrNotFound)

		// A put after the delete is a new stack, created anew.
		require.NoError(t, b.exec.StackPut(ctx, &store.Stack{Name: "app", Body: `{}`, CreatedAt: later, UpdatedAt: later}))
		got, err = b.exec.StackGet(ctx, "app")
		require.NoError(t, err)
		require.Equal(t, &store.Stack{Name: "app", Body: `{}`, CreatedAt: later, UpdatedAt: later}, got)
	})

	t.Run("StackTimesInUTCMilliseconds", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		at := time.Date(2026, 11, 27, 10, 0, 0, 123_456_789, time.FixedZone("JST", 9*3600))
		require.NoError(t, b.exec.StackPut(ctx, &store.Stack{Name: "s", Body: `{}`, CreatedAt: at, UpdatedAt: at}))
		got, err := b.exec.StackGet(ctx, "s")
		require.NoError(t, err)
		want := time.Date(2026, 11, 27, 1, 0, 0, 123_000_000, time.UTC)
		require.Equal(t, want, got.CreatedAt)
		require.Equal(t, want, got.UpdatedAt)
	})
}
