package pgstore

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"stepwise/internal/pgtest"
	"stepwise/store"
	"stepwise/store/storetest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(pgtest.Wrap(m)) }

// open opens a driver on a new database, closed when t ends.
func open(ctx context.Context, t *testing.T, opts Options) *Driver {
	t.Helper()
	d, err := Open(ctx, pgtest.NewDatabase(t), opts)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, d.Close()) })
	return d
}

func TestDriver(t *testing.T) {
	t.Parallel()

	ctx := context.Background()
	storetest.Exercise(ctx, t, func(t *testing.T) store.Driver {
		d, err := Open(ctx, pgtest.NewDatabase(t), Options{})
		require.NoError(t, err)
		return d
	})
}
