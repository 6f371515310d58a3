package pgtest

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(Wrap(m)) }

func TestNewDatabase(t *testing.T) {
	t.Parallel()

	ctx := context.Background()

	connect := func(t *testing.T, url string) *pgx.Conn {
		t.Helper()
		conn, err := pgx.Connect(ctx, url)
		require.NoError(t, err)
		t.Cleanup(func() { conn.Close(ctx) })
		return conn
	}

	t.Run("FreshAndSeparate", func(t *testing.T) {
		t.Parallel()

		a, b := NewDatabase(t), NewDatabase(t)
		require.NotEqual(t, a, b)
		ca, cb := connect(t, a), connect(t, b)
		_, err := ca.Exec(ctx, "CREATE TABLE t (x int)")
		require.NoError(t, err)
		_, err = cb.Exec(ctx, "SELECT * FROM t")
		require.ErrorContains(t, err, "does not exist", "a table of one database is not in the other")

		var version int
		require.NoError(t, ca.QueryRow(ctx, "SELECT current_setting('server_version_num')::int").Scan(&version))
		require.GreaterOrEqual(t, version, 150000)
	})

	t.Run("DroppedWhenTheTestEnds", func(t *testing.T) {
		t.Parallel()
		Start(t) // skips this test, not only Inner, without PostgreSQL

		var name string
		var left *pgx.Conn // still open when the database is dropped
		t.Run("Inner", func(t *testing.T) {
			var err error
			left, err = pgx.Connect(ctx, NewDatabase(t))
			require.NoError(t, err)
			require.NoError(t, left.QueryRow(ctx, "SELECT current_database()").Scan(&name))
		})
		_ = left.Close(ctx)
		admin := connect(t, Start(t))
		var n int
		require.NoError(t, admin.QueryRow(ctx, "SELECT count(*) FROM pg_database WHERE datname = $1", name).Scan(&n))
		require.Zero(t, n)
	})
}
