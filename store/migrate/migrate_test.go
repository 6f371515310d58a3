package migrate

import (
	"context"
	"database/sql"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite"
)

func TestMigrator(t *testing.T) {
	t.Parallel()

	ctx := context.Background()

	type testBundle struct {
		db       *sql.DB
		migrator *Migrator
	}

	setup := func(t *testing.T) *testBundle {
		t.Helper()
		db, err := sql.Open("sqlite", ":memory:")
		require.NoError(t, err)
		db.SetMaxOpenConns(1)
		t.Cleanup(func() { require.NoError(t, db.Close()) })
		m, err := New(fstest.MapFS{
			"001_initial.up.sql":   {Data: []byte("CREATE TABLE a (id INTEGER); CREATE TABLE b (id INTEGER);")},
			"001_initial.down.sql": {Data: []byte("DROP TABLE b; DROP TABLE a;")},
			"002_more.up.sql":      {Data: []byte("CREATE TABLE c (id INTEGER);")},
			"002_more.down.sql":    {Data: []byte("DROP TABLE c;")},
			"010_later.up.sql":     {Data: []byte("CREATE TABLE d (id INTEGER);")},
			"010_later.down.sql":   {Data: []byte("DROP TABLE d;")},
		})
		require.NoError(t, err)
		return &testBundle{db: db, migrator: m}
	}

	tables := func(t *testing.T, db Executor) []string {
		t.Helper()
		rows, err := db.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table' AND name != 'stepwise_migration' ORDER BY name`)
		require.NoError(t, err)
		defer rows.Close()
		names := []string{}
		for rows.Next() {
			var name string
			require.NoError(t, rows.Scan(&name))
			names = append(names, name)
		}
		require.NoError(t, rows.Err())
		return names
	}

	// An upgrade is told of; a new database's migrations are not.
	t.Run("Upgrading", func(t *testing.T) {
		t.Parallel()
		bundle := setup(t)

		var told []int
		bundle.migrator.Upgrading = func(m Migration) { told = append(told, m.Version) }
		_, err := bundle.migrator.Migrate(ctx, bundle.db, DirectionUp, &Opts{TargetVersion: 1})
		require.NoError(t, err)
		require.Empty(t, told)
		_, err = bundle.migrator.Migrate(ctx, bundle.db, DirectionUp, nil)
		require.NoError(t, err)
		require.Equal(t, []int{2, 10}, told)
		_, err = bundle.migrator.Migrate(ctx, bundle.db, DirectionUp, nil)
		require.NoError(t, err)
		require.Equal(t, []int{2, 10}, told, "nothing left to apply")
	})

	t.Run("Migrations", func(t *testing.T) {
		t.Parallel()
		bundle := setup(t)

		ms := bundle.migrator.Migrations()
		require.Len(t, ms, 3)
		require.Equal(t, Migration{Version: 2, Name: "more", Up: "CREATE TABLE c (id INTEGER);", Down: "DROP TABLE c;"}, ms[1])
		require.Equal(t, 10, ms[2].Version)
	})

	t.Run("UpAppliesAllOnce", func(t *testing.T) {
		t.Parallel()
		bundle := setup(t)

		res, err := bundle.migrator.Migrate(ctx, bundle.db, DirectionUp, nil)
		require.NoError(t, err)
		require.Equal(t, &Result{Direction: DirectionUp, Versions: []int{1, 2, 10}}, res)
		require.Equal(t, []string{"a", "b", "c", "d"}, tables(t, bundle.db))

		res, err = bundle.migrator.Migrate(ctx, bundle.db, DirectionUp, nil)
		require.NoError(t, err)
		require.Empty(t, res.Versions)

		applied, err := bundle.migrator.Applied(ctx, bundle.db)
		require.NoError(t, err)
		require.Equal(t, []int{1, 2, 10}, applied)
	})

	t.Run("UpTargetAndSteps", func(t *testing.T) {
		t.Parallel()
		bundle := setup(t)

		res, err := bundle.migrator.Migrate(ctx, bundle.db, DirectionUp, &Opts{TargetVersion: 2})
		require.NoError(t, err)
		require.Equal(t, []int{1, 2}, res.Versions)

		res, err = bundle.migrator.Migrate(ctx, bundle.db, DirectionUp, &Opts{MaxSteps: 5})
		require.NoError(t, err)
		require.Equal(t, []int{10}, res.Versions)
	})

	t.Run("DownOneStepByDefault", func(t *testing.T) {
		t.Parallel()
		bundle := setup(t)

		_, err := bundle.migrator.Migrate(ctx, bundle.db, DirectionUp, nil)
		require.NoError(t, err)

		res, err := bundle.migrator.Migrate(ctx, bundle.db, DirectionDown, nil)
		require.NoError(t, err)
		require.Equal(t, &Result{Direction: DirectionDown, Versions: []int{10}}, res)
		require.Equal(t, []string{"a", "b", "c"}, tables(t, bundle.db))

		res, err = bundle.migrator.Migrate(ctx, bundle.db, DirectionDown, &Opts{TargetVersion: 1})
		require.NoError(t, err)
		require.Equal(t, []int{2}, res.Versions)

		_, err = bundle.migrator.Migrate(ctx, bundle.db, DirectionUp, nil)
		require.NoError(t, err)
		res, err = bundle.migrator.Migrate(ctx, bundle.db, DirectionDown, &Opts{TargetVersion: -1})
		require.NoError(t, err)
		require.Equal(t, []int{10, 2, 1}, res.Versions)
		require.Empty(t, tables(t, bundle.db))

		applied, err := bundle.migrator.Applied(ctx, bundle.db)
		require.NoError(t, err)
		require.Empty(t, applied)
	})

	t.Run("InsideCallerTransaction", func(t *testing.T) {
		t.Parallel()
		bundle := setup(t)

		tx, err := bundle.db.BeginTx(ctx, nil)
		require.NoError(t, err)
		res, err := bundle.migrator.Migrate(ctx, tx, DirectionUp, nil)
		require.NoError(t, err)
		require.Equal(t, []int{1, 2, 10}, res.Versions)
		require.Equal(t, []string{"a", "b", "c", "d"}, tables(t, tx))
		require.NoError(t, tx.Rollback())

		require.Empty(t, tables(t, bundle.db))
		applied, err := bundle.migrator.Applied(ctx, bundle.db)
		require.NoError(t, err)
		require.Empty(t, applied)
	})

	t.Run("FailingMigrationStopsTheRun", func(t *testing.T) {
		t.Parallel()
		bundle := setup(t)

		m, err := New(fstest.MapFS{
			"001_ok.up.sql":      {Data: []byte("CREATE TABLE a (id INTEGER);")},
			"001_ok.down.sql":    {Data: []byte("DROP TABLE a;")},
			"002_bad.up.sql":     {Data: []byte("CREATE TABLE a (id INTEGER);")},
			"002_bad.down.sql":   {Data: []byte("SELECT 1;")},
			"003_never.up.sql":   {Data: []byte("CREATE TABLE c (id INTEGER);")},
			"003_never.down.sql": {Data: []byte("DROP TABLE c;")},
		})
		require.NoError(t, err)
		tx, err := bundle.db.BeginTx(ctx, nil)
		require.NoError(t, err)
		_, err = m.Migrate(ctx, tx, DirectionUp, nil)
		require.ErrorContains(t, err, "migration 002_bad up")
		require.NoError(t, tx.Rollback())
		require.Empty(t, tables(t, bundle.db))
	})

	t.Run("NewerDatabase", func(t *testing.T) {
		t.Parallel()
		bundle := setup(t)

		_, err := bundle.migrator.Migrate(ctx, bundle.db, DirectionUp, nil)
		require.NoError(t, err)
		_, err = bundle.db.ExecContext(ctx, `INSERT INTO stepwise_migration (version, name, applied_at) VALUES (11, 'future', 0)`)
		require.NoError(t, err)
		_, err = bundle.migrator.Migrate(ctx, bundle.db, DirectionUp, nil)
		require.ErrorContains(t, err, "database has migration 11, which this build does not know")
	})

	t.Run("BadFiles", func(t *testing.T) {
		t.Parallel()

		for name, fsys := range map[string]fstest.MapFS{
			"bad name":     {"1-initial.up.sql": {Data: []byte("x")}},
			"no down":      {"001_initial.up.sql": {Data: []byte("x")}},
			"two names":    {"001_a.up.sql": {Data: []byte("x")}, "001_b.down.sql": {Data: []byte("x")}},
			"zero version": {"000_a.up.sql": {Data: []byte("x")}, "000_a.down.sql": {Data: []byte("x")}},
		} {
			_, err := New(fsys)
			require.Error(t, err, name)
		}
	})

	t.Run("UnknownDirection", func(t *testing.T) {
		t.Parallel()
		bundle := setup(t)

		_, err := bundle.migrator.Migrate(ctx, bundle.db, "sideways", nil)
		require.ErrorContains(t, err, `unknown migration direction "sideways"`)
	})
}
