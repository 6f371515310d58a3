package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"stepwise/store"
)

func exerciseActivities(ctx context.Context, t *testing.T, setup func(t *testing.T) *testBundle) {
	t.Helper()

	t.Run("Activities", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		arn := func(name string) string { return "arn:aws:states:us-east-1:123456789012:activity:" + name }
		created := time.UnixMilli(1700000000123).UTC()
		for _, name := range []string{"b", "a", "c"} {
			a, err := b.exec.ActivityInsert(ctx, &store.Activity{Arn: arn(name), Name: name, CreatedAt: created})
			require.NoError(t, err)
			require.Equal(t, name, a.Name)
		}
		_, err := b.exec.ActivityInsert(ctx, &store.Activity{Arn: arn("a2"), Name: "a", CreatedAt: created})
		require.ErrorIs(t, err, store.ErrAlreadyExists)
		if b.inTx {
			return // a failed write ends a PostgreSQL transaction
		}
		got, err := b.exec.ActivityGet(ctx, arn("b"))
		require.NoError(t, err)
		require.Equal(t, &store.Activity{Arn: arn("b"), Name: "b", CreatedAt: created}, got)
		page, err := b.exec.ActivityList(ctx, &store.ActivityListParams{AfterName: "a", Limit: 1})
		require.NoError(t, err)
		require.Len(t, page, 1)
		require.Equal(t, "b", page[0].Name)

		require.NoError(t, b.exec.TagPut(ctx, arn("b"), []store.Tag{{Key: "k", Value: "v"}}))
		require.NoError(t, b.exec.ActivityDelete(ctx, arn("b")))
		_, err = b.exec.ActivityGet(ctx, arn("b"))
		require.ErrorIs(t, err, store.ErrNotFound)
		tags, err := b.exec.TagList(ctx, arn("b"))
		require.NoError(t, err)
		require.Empty(t, tags, "the activity's tags went with it")
		require.ErrorIs(t, b.exec.ActivityDelete(ctx, arn("b")), store.ErrNotFound)
	})
}
