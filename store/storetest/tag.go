package storetest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"stepwise/store"
)

func exerciseTags(ctx context.Context, t *testing.T, setup func(t *testing.T) *testBundle) {
	t.Helper()

	t.Run("TagPut", func(t *testing.T) {
		t.Parallel()

		t.Run("AddsReplacesDeletesSorted", func(t *testing.T) {
			t.Parallel()
			b := setup(t)

			arn, other := stateMachineArn("a"), stateMachineArn("b")
			tags, err := b.exec.TagList(ctx, arn)
			require.NoError(t, err)
			require.Empty(t, tags)

			require.NoError(t, b.exec.TagPut(ctx, arn, []store.Tag{{Key: "team", Value: "x"}, {Key: "env", Value: "dev"}}))
			require.NoError(t, b.exec.TagPut(ctx, other, []store.Tag{{Key: "env", Value: "prod"}}))
			require.NoError(t, b.exec.TagPut(ctx, arn, []store.Tag{{Key: "team", Value: "y"}, {Key: "cost", Value: ""}}))
			require.NoError(t, b.exec.TagPut(ctx, arn, nil))

			tags, err = b.exec.TagList(ctx, arn)
			require.NoError(t, err)
			require.Equal(t, []store.Tag{{Key: "cost", Value: ""}, {Key: "env", Value: "dev"}, {Key: "team", Value: "y"}}, tags)

			require.NoError(t, b.exec.TagDelete(ctx, arn, []string{"env", "never"}))
			require.NoError(t, b.exec.TagDelete(ctx, arn, nil))
			tags, err = b.exec.TagList(ctx, arn)
			require.NoError(t, err)
			require.Equal(t, []store.Tag{{Key: "cost", Value: ""}, {Key: "team", Value: "y"}}, tags)

			tags, err = b.exec.TagList(ctx, other)
			require.NoError(t, err)
			require.Equal(t, []store.Tag{{Key: "env", Value: "prod"}}, tags)
		})
	})
}
