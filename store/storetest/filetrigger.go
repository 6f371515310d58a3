package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/store"
)

func exerciseFileTriggers(ctx context.Context, t *testing.T, setup func(t *testing.T) *testBundle) {
	t.Helper()

	t.Run("FileTriggers", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		list, err := b.exec.FileTriggerList(ctx)
		require.NoError(t, err)
		require.Empty(t, list)
		for _, name := range []string{"b", "a"} {
			require.NoError(t, b.exec.FileTriggerPut(ctx, &store.FileTrigger{Name: name, Body: `{"v":1}`, CreatedAt: baseTime, UpdatedAt: baseTime}))
		}
		later := baseTime.Add(time.Hour)
		require.NoError(t, b.exec.FileTriggerPut(ctx, &store.FileTrigger{Name: "a", Body: `{"v":2}`, CreatedAt: later, UpdatedAt: later}))
		got, err := b.exec.FileTriggerGet(ctx, "a")
		require.NoError(t, err)
		require.Equal(t, `{"v":2}`, got.Body)
		require.True(t, got.CreatedAt.Equal(baseTime), "the first put's")
		require.True(t, got.UpdatedAt.Equal(later))
		list, err = b.exec.FileTriggerList(ctx)
		require.NoError(t, err)
		require.Len(t, list, 2)
		require.Equal(t, "a", list[0].Name)
		_, err = b.exec.FileTriggerGet(ctx, "c")
		require.ErrorIs(t, err, store.ErrNotFound)

		for i, key := range []string{"/in/x.csv 10 1", "/in/y.csv 20 2"} {
			require.NoError(t, b.exec.FileArrivalInsert(ctx, &store.FileArrival{Trigger: "a", Key: key,
				ExecutionArn: "arn:x:" + key, StartedAt: baseTime.Add(time.Duration(i) * time.Minute)}))
		}
		err = b.exec.FileArrivalInsert(ctx, &store.FileArrival{Trigger: "a", Key: "/in/x.csv 10 1", ExecutionArn: "other", StartedAt: later})
		require.ErrorIs(t, err, store.ErrAlreadyExists)
		require.NoError(t, b.exec.FileArrivalInsert(ctx, &store.FileArrival{Trigger: "b", Key: "/in/x.csv 10 1", ExecutionArn: "b", StartedAt: later}))
		a, err := b.exec.FileArrivalGet(ctx, "a", "/in/x.csv 10 1")
		require.NoError(t, err)
		require.Equal(t, "arn:x:/in/x.csv 10 1", a.ExecutionArn)
		_, err = b.exec.FileArrivalGet(ctx, "a", "/in/z.csv 1 1")
		require.ErrorIs(t, err, store.ErrNotFound)
		arrivals, err := b.exec.FileArrivalList(ctx, "a", 10)
		require.NoError(t, err)
		require.Len(t, arrivals, 2)
		require.Equal(t, "/in/y.csv 20 2", arrivals[0].Key, "newest first")

		require.NoError(t, b.exec.FileTriggerDelete(ctx, "a"))
		require.ErrorIs(t, b.exec.FileTriggerDelete(ctx, "a"), store.ErrNotFound)
		arrivals, err = b.exec.FileArrivalList(ctx, "a", 10)
		require.NoError(t, err)
		require.Empty(t, arrivals, "deleted with their trigger")
		arrivals, err = b.exec.FileArrivalList(ctx, "b", 10)
		require.NoError(t, err)
		require.Len(t, arrivals, 1)
	})
}
