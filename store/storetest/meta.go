package storetest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

func exerciseMeta(ctx context.Context, t *testing.T, setup func(t *testing.T) *testBundle) {
	t.Helper()

	t.Run("MetaGetOrPut", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		v, err := b.exec.MetaGetOrPut(ctx, "k", []byte("first"))
		require.NoError(t, err)
		require.Equal(t, []byte("first"), v)
		v, err = b.exec.MetaGetOrPut(ctx, "k", []byte("second"))
		require.NoError(t, err)
		require.Equal(t, []byte("first"), v, "the first value stays")
		v, err = b.exec.MetaGetOrPut(ctx, "other", []byte("x"))
		require.NoError(t, err)
		require.Equal(t, []byte("x"), v)
	})
}
