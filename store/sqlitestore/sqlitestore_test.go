package sqlitestore

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"stepwise/history"
	"stepwise/store"
	"stepwise/store/internal/sqlcore"
	"stepwise/store/migrate"
	"stepwise/store/storetest"
)

func TestDriver(t *testing.T) {
	t.Parallel()

	ctx := context.Background()
	storetest.Exercise(ctx, t, func(t *testing.T) store.Driver {
		d, err := Open(ctx, filepath.Join(t.TempDir(), "stepwise.db"), Options{})
		require.NoError(t, err)
		return d
	})
}

var baseTime = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// seed writes a state machine and a running execution with two events.
func seed(ctx context.Context, t *testing.T, ex store.Executor) *store.Execution {
	t.Helper()
	sm, err := ex.StateMachineInsert(ctx, &store.StateMachineInsertParams{StateMachine: &store.StateMachine{
		Arn: "arn:aws:states:us-east-1:123456789012:stateMachine:sm", Name: "sm", Type: "STANDARD", Status: "ACTIVE",
		RevisionID: "r1", Definition: `{}`, RoleArn: "role", CreatedAt: baseTime, UpdatedAt: baseTime,
	}})
	require.NoError(t, err)
	x, err := ex.ExecutionInsert(ctx, &store.ExecutionInsertParams{Execution: &store.Execution{
		Arn: "arn:aws:states:us-east-1:123456789012:execution:sm:x", StateMachineArn: sm.Arn, RevisionID: "r1",
		Name: "x", Status: history.StatusRunning, Input: `{}`, StartDate: baseTime, RoleArn: "role", Version: 1, LastEventID: 2,
	}})
	require.NoError(t, err)
	require.NoError(t, ex.EventInsert(ctx, []*store.Event{
		{ExecutionArn: x.Arn, ID: 1, Type: history.EventExecutionStarted, Timestamp: baseTime, Body: []byte(`{"id":1}`)},
		{ExecutionArn: x.Arn, ID: 2, Type: "PassStateEntered", Timestamp: baseTime, Body: []byte(`{"id":2}`)},
	}))
	return x
}

func TestOpen(t *testing.T) {
	t.Parallel()

	ctx := context.Background()

	type testBundle struct {
		path string
	}

	setup := func(t *testing.T) *testBundle {
		t.Helper()
		return &testBundle{path: filepath.Join(t.TempDir(), "stepwise.db")}
	}

	open := func(t *testing.T, path string, opts Options) *Driver {
		t.Helper()
		d, err := Open(ctx, path, opts)
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, d.Close()) })
		return d
	}

	t.Run("Pragmas", func(t *testing.T) {
		t.Parallel()
		bundle := setup(t)

		d := open(t, bundle.path, Options{})
		var journal string
		var sync, fk int
		require.NoError(t, d.write.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&journal))
		require.NoError(t, d.write.QueryRowContext(ctx, "PRAGMA synchronous").Scan(&sync))
		require.NoError(t, d.write.QueryRowContext(ctx, "PRAGMA foreign_keys").Scan(&fk))
		require.Equal(t, "wal", journal)
		require.Equal(t, 2, sync) // FULL: a commit is on disk before it returns
		require.Equal(t, 1, fk)

		var queryOnly int
		require.NoError(t, d.read.QueryRowContext(ctx, "PRAGMA query_only").Scan(&queryOnly))
		require.Equal(t, 1, queryOnly)

		m, err := Migrator()
		require.NoError(t, err)
		applied, err := m.Applied(ctx, d.read)
		require.NoError(t, err)
		require.Equal(t, []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19}, applied)
	})

	t.Run("Memory", func(t *testing.T) {
		t.Parallel()

		d := open(t, Memory, Options{})
		other := open(t, Memory, Options{})
		x := seed(ctx, t, d.Executor())

		tx, err := d.Begin(ctx)
		require.NoError(t, err)
		_, err = tx.ExecutionUpdate(ctx, &store.ExecutionUpdateParams{Arn: x.Arn, ExpectedVersion: 1, Status: history.StatusSucceeded})
		require.NoError(t, err)
		require.NoError(t, tx.Commit(ctx))

		got, err := d.Executor().ExecutionGet(ctx, x.Arn)
		require.NoError(t, err)
		require.Equal(t, history.StatusSucceeded, got.Status)
		evs, err := d.Executor().EventList(ctx, &store.EventListParams{ExecutionArn: x.Arn})
		require.NoError(t, err)
		require.Len(t, evs, 2)

		// Each in-memory database is its own.
		_, err = other.Executor().ExecutionGet(ctx, x.Arn)
		require.ErrorIs(t, err, store.ErrNotFound)

		// The database outlives idle time: it is the one connection.
		time.Sleep(10 * time.Millisecond)
		_, err = d.Executor().ExecutionGet(ctx, x.Arn)
		require.NoError(t, err)
	})

	t.Run("ReopenKeepsData", func(t *testing.T) {
		t.Parallel()
		bundle := setup(t)

		d, err := Open(ctx, bundle.path, Options{})
		require.NoError(t, err)
		x := seed(ctx, t, d.Executor())
		tx, err := d.Begin(ctx)
		require.NoError(t, err)
		_, err = tx.ExecutionUpdate(ctx, &store.ExecutionUpdateParams{Arn: x.Arn, ExpectedVersion: 1, Status: history.StatusRunning, LastEventID: 3})
		require.NoError(t, err)
		require.NoError(t, tx.EventInsert(ctx, []*store.Event{{ExecutionArn: x.Arn, ID: 3, Type: "PassStateExited", Timestamp: baseTime, Body: []byte(`{}`)}}))
		require.NoError(t, tx.TimerInsert(ctx, []*store.Timer{{ExecutionArn: x.Arn, ID: "t", FireAt: baseTime.Add(time.Hour)}}))
		require.NoError(t, tx.Commit(ctx))
		require.NoError(t, d.Close())
		require.NoError(t, d.Close()) // idempotent

		d = open(t, bundle.path, Options{})
		got, err := d.Executor().ExecutionGet(ctx, x.Arn)
		require.NoError(t, err)
		require.Equal(t, int64(2), got.Version)
		evs, err := d.Executor().EventList(ctx, &store.EventListParams{ExecutionArn: x.Arn})
		require.NoError(t, err)
		require.Len(t, evs, 3)
		next, err := d.Executor().TimerNext(ctx)
		require.NoError(t, err)
		require.Equal(t, "t", next.ID)

		m, err := Migrator()
		require.NoError(t, err)
		applied, err := m.Applied(ctx, d.read)
		require.NoError(t, err)
		require.Equal(t, []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19}, applied)
	})

	t.Run("ReadersDoNotWaitForWriter", func(t *testing.T) {
		t.Parallel()
		bundle := setup(t)

		d := open(t, bundle.path, Options{ReadConns: 4})
		x := seed(ctx, t, d.Executor())

		tx, err := d.Begin(ctx)
		require.NoError(t, err)
		defer tx.Rollback(ctx)
		_, err = tx.ExecutionUpdate(ctx, &store.ExecutionUpdateParams{Arn: x.Arn, ExpectedVersion: 1, Status: history.StatusSucceeded})
		require.NoError(t, err)
		require.NoError(t, tx.EventInsert(ctx, []*store.Event{{ExecutionArn: x.Arn, ID: 3, Type: "ExecutionSucceeded", Timestamp: baseTime, Body: []byte(`{}`)}}))

		// While the write transaction is open, readers run and see the
		// last commit.
		readCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		var wg sync.WaitGroup
		errs := make(chan error, 8*20)
		for range 8 {
			wg.Go(func() {
				for range 20 {
					got, err := d.Executor().ExecutionGet(readCtx, x.Arn)
					if err == nil && got.Status != history.StatusRunning {
						err = fmt.Errorf("read an uncommitted status %s", got.Status)
					}
					if err == nil {
						var evs []*store.Event
						evs, err = d.Executor().EventList(readCtx, &store.EventListParams{ExecutionArn: x.Arn})
						if err == nil && len(evs) != 2 {
							err = fmt.Errorf("read %d events, want 2", len(evs))
						}
					}
					if err != nil {
						errs <- err
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}

		require.NoError(t, tx.Commit(ctx))
		got, err := d.Executor().ExecutionGet(ctx, x.Arn)
		require.NoError(t, err)
		require.Equal(t, history.StatusSucceeded, got.Status)
	})

	t.Run("UnknownExecutionIsNotFound", func(t *testing.T) {
		t.Parallel()
		bundle := setup(t)

		d := open(t, bundle.path, Options{})
		err := d.Executor().EventInsert(ctx, []*store.Event{{ExecutionArn: "nope", ID: 1, Type: "X", Timestamp: baseTime, Body: []byte(`{}`)}})
		require.ErrorIs(t, err, store.ErrNotFound)
		err = d.Executor().TimerInsert(ctx, []*store.Timer{{ExecutionArn: "nope", ID: "t", FireAt: baseTime}})
		require.ErrorIs(t, err, store.ErrNotFound)
	})

	t.Run("ReadOnlyFile", func(t *testing.T) {
		t.Parallel()
		bundle := setup(t)

		d := open(t, bundle.path, Options{})
		seed(ctx, t, d.Executor())
		require.NoError(t, d.Close())

		dir := filepath.Dir(bundle.path)
		require.NoError(t, os.Chmod(bundle.path, 0o444))
		require.NoError(t, os.Chmod(dir, 0o555))
		t.Cleanup(func() { _ = os.Chmod(dir, 0o755) })
		if f, err := os.OpenFile(bundle.path, os.O_WRONLY, 0); err == nil {
			f.Close()
			t.Skip("file permissions do not stop this user from writing (running as root?); ReadOnlyMode covers read-only files with mode=ro")
		}

		requireReadOnly(ctx, t, bundle.path, Options{})
	})

	t.Run("ReadOnlyMode", func(t *testing.T) {
		t.Parallel()
		bundle := setup(t)

		// Another driver keeps the WAL files in place, as a writer process
		// sharing the file would.
		d := open(t, bundle.path, Options{})
		seed(ctx, t, d.Executor())

		requireReadOnly(ctx, t, bundle.path, Options{readOnly: true})

		got, err := d.Executor().ExecutionGet(ctx, "arn:aws:states:us-east-1:123456789012:execution:sm:x")
		require.NoError(t, err)
		require.Equal(t, int64(1), got.Version)
	})

	t.Run("DiskFull", func(t *testing.T) {
		t.Parallel()
		bundle := setup(t)

		d, err := Open(ctx, bundle.path, Options{})
		require.NoError(t, err)
		x := seed(ctx, t, d.Executor())

		// Cap the file a few pages above its size: SQLite reports
		// SQLITE_FULL as it would on a full disk.
		var pages int
		require.NoError(t, d.write.QueryRowContext(ctx, "PRAGMA page_count").Scan(&pages))
		_, err = d.write.ExecContext(ctx, fmt.Sprintf("PRAGMA max_page_count = %d", pages+8))
		require.NoError(t, err)

		body := bytes.Repeat([]byte("x"), 2000)
		id := int64(3)
		var fullErr error
		for range 1000 {
			tx, err := d.Begin(ctx)
			require.NoError(t, err)
			err = tx.EventInsert(ctx, []*store.Event{{ExecutionArn: x.Arn, ID: id, Type: "X", Timestamp: baseTime, Body: body}})
			if err != nil {
				require.NoError(t, tx.Rollback(ctx))
				fullErr = err
				break
			}
			require.NoError(t, tx.Commit(ctx))
			id++
		}
		require.ErrorIs(t, fullErr, store.ErrUnavailable)
		require.ErrorContains(t, fullErr, "full")

		// Outside a transaction too; reads still work.
		err = d.Executor().EventInsert(ctx, []*store.Event{{ExecutionArn: x.Arn, ID: id, Type: "X", Timestamp: baseTime, Body: body}})
		require.ErrorIs(t, err, store.ErrUnavailable)
		evs, err := d.Executor().EventList(ctx, &store.EventListParams{ExecutionArn: x.Arn})
		require.NoError(t, err)
		require.Len(t, evs, int(id-1))
		require.NoError(t, d.Close())

		// Every committed event survived, and the file is sound.
		d = open(t, bundle.path, Options{})
		evs, err = d.Executor().EventList(ctx, &store.EventListParams{ExecutionArn: x.Arn})
		require.NoError(t, err)
		require.Len(t, evs, int(id-1))
		requireIntact(ctx, t, d)
	})

	t.Run("NotADatabase", func(t *testing.T) {
		t.Parallel()
		bundle := setup(t)

		require.NoError(t, os.WriteFile(bundle.path, bytes.Repeat([]byte("not a database "), 1000), 0o644))
		_, err := Open(ctx, bundle.path, Options{})
		require.ErrorIs(t, err, store.ErrUnavailable)
	})

	t.Run("CannotOpen", func(t *testing.T) {
		t.Parallel()
		bundle := setup(t)

		_, err := Open(ctx, filepath.Join(bundle.path, "no", "such", "dir.db"), Options{})
		require.ErrorIs(t, err, store.ErrUnavailable)
	})

	t.Run("PathNeedingEscapes", func(t *testing.T) {
		t.Parallel()

		path := filepath.Join(t.TempDir(), "a dir?x=1#frag", "my db%20.sqlite")
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		d := open(t, path, Options{})
		seed(ctx, t, d.Executor())
		_, err := os.Stat(path)
		require.NoError(t, err)
	})

	t.Run("MigrateDownAndUp", func(t *testing.T) {
		t.Parallel()
		bundle := setup(t)

		d := open(t, bundle.path, Options{})
		seed(ctx, t, d.Executor())
		m, err := Migrator()
		require.NoError(t, err)
		tx, err := d.write.BeginTx(ctx, nil)
		require.NoError(t, err)
		res, err := m.Migrate(ctx, tx, migrate.DirectionDown, &migrate.Opts{TargetVersion: -1})
		require.NoError(t, err)
		require.Equal(t, []int{19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1}, res.Versions)
		var tables int
		require.NoError(t, tx.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name != 'stepwise_migration' AND name NOT LIKE 'sqlite_%'`).Scan(&tables))
		require.Zero(t, tables)
		res, err = m.Migrate(ctx, tx, migrate.DirectionUp, nil)
		require.NoError(t, err)
		require.Equal(t, []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19}, res.Versions)
		require.NoError(t, tx.Commit())

		_, err = d.Executor().ExecutionGet(ctx, "arn:aws:states:us-east-1:123456789012:execution:sm:x")
		require.ErrorIs(t, err, store.ErrNotFound)
		seed(ctx, t, d.Executor())
	})

	t.Run("HistoryRowsMigration", func(t *testing.T) {
		t.Parallel()
		bundle := setup(t)

		d := open(t, bundle.path, Options{})
		x := seed(ctx, t, d.Executor())
		m, err := Migrator()
		require.NoError(t, err)
		storetest.HistoryRowsMigration(ctx, t, d.write, m, d.Executor(), x)
	})

	t.Run("NewerSchema", func(t *testing.T) {
		t.Parallel()
		bundle := setup(t)

		d, err := Open(ctx, bundle.path, Options{})
		require.NoError(t, err)
		_, err = d.write.ExecContext(ctx, `INSERT INTO stepwise_migration (version, name, applied_at) VALUES (99, 'future', 0)`)
		require.NoError(t, err)
		require.NoError(t, d.Close())

		_, err = Open(ctx, bundle.path, Options{})
		require.ErrorContains(t, err, "newer")
	})

	t.Run("QueryPlans", func(t *testing.T) {
		t.Parallel()
		bundle := setup(t)

		d := open(t, bundle.path, Options{})
		for _, tc := range []struct {
			query string
			args  []any
			index string
		}{
			{sqlcore.ExecutionListSQL, []any{"sm", 1, "a", 10}, "stepwise_execution_list"},
			{sqlcore.ExecutionListStatusSQL, []any{"sm", "RUNNING", 1, "a", 10}, "stepwise_execution_list_status"},
			{sqlcore.ExecutionListRunningSQL, []any{"a", 10}, "stepwise_execution_running"},
			{sqlcore.TimerListDueSQL, []any{1, 10}, "stepwise_timer_fire_at"},
			{sqlcore.TimerNextSQL, nil, "stepwise_timer_fire_at"},
			{sqlcore.EventRowsSQL, []any{"x", 10, 10}, "sqlite_autoindex_stepwise_history_1 (execution_id=? AND first_id>?)"},
			{sqlcore.EventRowsSQL, []any{"x", 10, 10}, "sqlite_autoindex_stepwise_history_1 (execution_id=? AND first_id<?)"},
			{sqlcore.EventRowsReverseSQL, []any{"x", 10, 10}, "sqlite_autoindex_stepwise_history_1 (execution_id=? AND first_id<?)"},
			{sqlcore.VersionListSQL, []any{"sm", 5, 10}, "stepwise_version USING PRIMARY KEY (state_machine_arn=? AND number<?)"},
			{sqlcore.VersionOfRevisionSQL, []any{"sm", "r"}, "stepwise_version_revision (state_machine_arn=? AND revision_id=?)"},
			{sqlcore.AliasListSQL, []any{"sm", "a", 10}, "stepwise_alias USING PRIMARY KEY (state_machine_arn=? AND name>?)"},
			{sqlcore.MapRunGetSQL, []any{"mr"}, "stepwise_map_run USING PRIMARY KEY (arn=?)"},
			{sqlcore.MapRunListSQL, []any{"x", 1, "a", 10}, "stepwise_map_run_list (execution_arn=? AND (start_date,arn)>(?,?))"},
			{sqlcore.MapItemListSQL, []any{"mr", 5, 10}, "stepwise_map_item USING PRIMARY KEY (map_run_arn=? AND idx>?)"},
		} {
			plan := queryPlan(ctx, t, d.write, tc.query, tc.args...)
			require.Contains(t, plan, tc.index, tc.query)
			require.NotContains(t, plan, "TEMP B-TREE", tc.query)
		}
		// Each statement of a list (the lookup of executions' ids,
		// timers', tasks' and tags' deletes, retention's) seeks by it;
		// retention finds a deleted execution's map runs' items by their
		// keys.
		for _, query := range sqlcore.ListSQL(&dialect) {
			args := []any{`["x"]`}
			if strings.Contains(query, "$2") {
				args = []any{"a", `["x"]`}
			}
			plan := queryPlan(ctx, t, d.write, query, args...)
			require.NotRegexp(t, `SCAN stepwise_`, plan, query)
			if strings.Contains(query, "DELETE FROM stepwise_map_item") {
				require.Contains(t, plan, "stepwise_map_item USING PRIMARY KEY (map_run_arn=?)")
				require.Contains(t, plan, "stepwise_map_run_list (execution_arn=?)")
			}
		}
		// The cursor seeks rather than scanning from the newest row.
		require.Contains(t, queryPlan(ctx, t, d.write, sqlcore.ExecutionListSQL, "sm", 1, "a", 10), "(state_machine_arn=? AND (start_date,arn)<(?,?))")
		// Of a version, an alias or a map run: their partial indexes,
		// seeking to the cursor.
		for _, tc := range []struct {
			p     store.ExecutionListParams
			index string
		}{
			{store.ExecutionListParams{StateMachineArn: "sm", VersionArn: "sm:1"}, "stepwise_execution_list_version (version_arn=? AND (start_date,arn)<(?,?))"},
			{store.ExecutionListParams{StateMachineArn: "sm", VersionArn: "sm:1", Status: "RUNNING"}, "stepwise_execution_list_version (version_arn=? AND (start_date,arn)<(?,?))"},
			{store.ExecutionListParams{StateMachineArn: "sm", AliasArn: "sm:a"}, "stepwise_execution_list_alias (alias_arn=? AND (start_date,arn)<(?,?))"},
			{store.ExecutionListParams{StateMachineArn: "sm", AliasArn: "sm:a", Status: "RUNNING"}, "stepwise_execution_list_alias (alias_arn=? AND (start_date,arn)<(?,?))"},
			{store.ExecutionListParams{StateMachineArn: "sm", MapRunArn: "mr"}, "stepwise_execution_list_map_run (map_run_arn=? AND (start_date,arn)<(?,?))"},
			{store.ExecutionListParams{MapRunArn: "mr", Status: "RUNNING"}, "stepwise_execution_list_map_run (map_run_arn=? AND (start_date,arn)<(?,?))"},
		} {
			query, args := sqlcore.ExecutionListQuery(&tc.p, 10)
			plan := queryPlan(ctx, t, d.write, query, args...)
			require.Contains(t, plan, tc.index, query)
			require.NotContains(t, plan, "TEMP B-TREE", query)
		}
	})
}

// requireReadOnly opens path expecting it read-only: Open itself or the
// first write fails with store.ErrUnavailable, and the file stays sound.
func requireReadOnly(ctx context.Context, t *testing.T, path string, opts Options) {
	t.Helper()
	d, err := Open(ctx, path, opts)
	if err != nil {
		t.Logf("open fails: %v", err)
		require.ErrorIs(t, err, store.ErrUnavailable)
		return
	}
	defer d.Close()

	x, err := d.Executor().ExecutionGet(ctx, "arn:aws:states:us-east-1:123456789012:execution:sm:x")
	require.NoError(t, err)

	_, err = d.Executor().ExecutionUpdate(ctx, &store.ExecutionUpdateParams{Arn: x.Arn, ExpectedVersion: 1, Status: history.StatusSucceeded})
	require.ErrorIs(t, err, store.ErrUnavailable)
	require.ErrorContains(t, err, "readonly")
	t.Logf("write fails: %v", err)

	err = d.Executor().TagPut(ctx, x.StateMachineArn, []store.Tag{{Key: "k", Value: "v"}})
	require.ErrorIs(t, err, store.ErrUnavailable)

	tx, err := d.Begin(ctx)
	if err != nil {
		require.ErrorIs(t, err, store.ErrUnavailable)
	} else {
		err = tx.EventInsert(ctx, []*store.Event{{ExecutionArn: x.Arn, ID: 3, Type: "X", Timestamp: baseTime, Body: []byte(`{}`)}})
		require.ErrorIs(t, err, store.ErrUnavailable)
		require.NoError(t, tx.Rollback(ctx))
	}

	got, err := d.Executor().ExecutionGet(ctx, x.Arn)
	require.NoError(t, err)
	require.Equal(t, x, got)
	requireIntact(ctx, t, d)
}

// requireIntact runs SQLite's integrity check.
func requireIntact(ctx context.Context, t *testing.T, d *Driver) {
	t.Helper()
	var res string
	require.NoError(t, d.read.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&res))
	require.Equal(t, "ok", res)
}

func queryPlan(ctx context.Context, t *testing.T, db *sql.DB, query string, args ...any) string {
	t.Helper()
	rows, err := db.QueryContext(ctx, "EXPLAIN QUERY PLAN "+query, args...)
	require.NoError(t, err)
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var id, parent, notUsed int
		var detail string
		require.NoError(t, rows.Scan(&id, &parent, &notUsed, &detail))
		lines = append(lines, detail)
	}
	require.NoError(t, rows.Err())
	return strings.Join(lines, "\n")
}

// benchExecution is a RUNNING execution a benchmark writes steps of.
type benchExecution struct {
	arn     string
	version int64
	lastID  int64
	seq     int64
	id      int64 // the row id StepWrite told, 0 before
}

// benchExecutions stores a state machine and n RUNNING executions of it
// with the given input.
func benchExecutions(b *testing.B, d *Driver, n int, input string) []*benchExecution {
	ctx := context.Background()
	ex := d.Executor()
	const smArn = "arn:aws:states:us-east-1:123456789012:stateMachine:bench"
	_, err := ex.StateMachineInsert(ctx, &store.StateMachineInsertParams{StateMachine: &store.StateMachine{
		Arn: smArn, Name: "bench", Type: "STANDARD", Status: "ACTIVE",
		RevisionID: "r1", Definition: `{}`, RoleArn: "role", CreatedAt: baseTime, UpdatedAt: baseTime,
	}})
	require.NoError(b, err)
	xs := make([]*benchExecution, n)
	for i := range xs {
		arn := fmt.Sprintf("arn:aws:states:us-east-1:123456789012:execution:bench:%08d-aaaa-bbbb-cccc-dddddddddddd", i)
		_, err := ex.ExecutionInsert(ctx, &store.ExecutionInsertParams{Execution: &store.Execution{
			Arn: arn, StateMachineArn: smArn, RevisionID: "r1", Name: arn[len(arn)-36:], Status: history.StatusRunning,
			Input: input, StartDate: baseTime, RoleArn: "role", Version: 1,
		}})
		require.NoError(b, err)
		xs[i] = &benchExecution{arn: arn, version: 1}
	}
	return xs
}

// BenchmarkStepCommit commits engine-shaped steps, 100 to a transaction:
// each step updates an execution, appends six ~300-byte events and a
// replay input, arms a timer and deletes the previous one.
func BenchmarkStepCommit(b *testing.B) {
	ctx := context.Background()
	d, err := Open(ctx, filepath.Join(b.TempDir(), "bench.db"), Options{})
	require.NoError(b, err)
	defer d.Close()

	const batch, executions, eventsPerStep = 100, 100, 6
	xs := benchExecutions(b, d, executions, `{}`)
	body := bytes.Repeat([]byte("b"), 300)

	step := func(tx store.ExecutorTx, x *benchExecution, now time.Time) error {
		evs := make([]*store.Event, eventsPerStep)
		for j := range evs {
			evs[j] = &store.Event{ExecutionArn: x.arn, ID: x.lastID + int64(j) + 1, Type: "TaskStateEntered", Timestamp: now, Body: body}
		}
		if _, err := tx.ExecutionUpdate(ctx, &store.ExecutionUpdateParams{
			Arn: x.arn, ExpectedVersion: x.version, Status: history.StatusRunning, LastEventID: x.lastID + eventsPerStep,
		}); err != nil {
			return err
		}
		if err := tx.EventInsert(ctx, evs); err != nil {
			return err
		}
		if err := tx.InputInsert(ctx, []*store.Input{{ExecutionArn: x.arn, Seq: x.seq + 1, At: now, Body: body[:100]}}); err != nil {
			return err
		}
		if x.seq > 0 {
			if err := tx.TimerDelete(ctx, x.arn, []string{fmt.Sprintf("t%d", x.seq)}); err != nil {
				return err
			}
		}
		if err := tx.TimerInsert(ctx, []*store.Timer{{ExecutionArn: x.arn, ID: fmt.Sprintf("t%d", x.seq+1), FireAt: now.Add(time.Hour)}}); err != nil {
			return err
		}
		x.version++
		x.lastID += eventsPerStep
		x.seq++
		return nil
	}

	b.ReportAllocs()
	b.ResetTimer()
	var tx store.ExecutorTx
	for i := range b.N {
		if i%batch == 0 {
			if tx, err = d.Begin(ctx); err != nil {
				b.Fatal(err)
			}
		}
		if err := step(tx, xs[i%executions], baseTime.Add(time.Duration(i)*time.Millisecond)); err != nil {
			b.Fatal(err)
		}
		if i%batch == batch-1 || i == b.N-1 {
			if err := tx.Commit(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "steps/s")
}

// BenchmarkStepWrite writes activity-task-shaped steps through StepWrite,
// 6 executions' steps to a transaction, as the engine writes a task's
// two steps: its hand-out (one event and a replay input) and its
// completion (four events, the next task's, and a replay input), with
// ~150-byte events. "carried" steps name their execution's row id, as
// the engine's do once it has written one step; "lookup" ones are looked
// up by ARN.
func BenchmarkStepWrite(b *testing.B) {
	b.Run("lookup", func(b *testing.B) { benchStepWrite(b, false) })
	b.Run("carried", func(b *testing.B) { benchStepWrite(b, true) })
}

func benchStepWrite(b *testing.B, carry bool) {
	ctx := context.Background()
	d, err := Open(ctx, filepath.Join(b.TempDir(), "bench.db"), Options{})
	require.NoError(b, err)
	defer d.Close()

	const batch, executions = 6, 64 // the engine's batches average 5-6 steps
	xs := benchExecutions(b, d, executions, `{"Sent": 1234567890123456789, "Step": 0}`)
	body := bytes.Repeat([]byte("b"), 150)
	step := func(x *benchExecution, now time.Time) *store.Step {
		events := 1 + 3*int(x.seq%2) // a hand-out, then a completion
		// The execution stays RUNNING: its row is not written.
		s := &store.Step{Input: &store.Input{ExecutionArn: x.arn, Seq: x.seq + 1, At: now, Body: body[:100]}}
		if carry {
			s.ExecutionID = x.id
		}
		for j := range events {
			s.Events = append(s.Events, &store.Event{ExecutionArn: x.arn, ID: x.lastID + int64(j) + 1, Type: "TaskStateEntered", Timestamp: now, Body: body})
		}
		x.lastID += int64(events)
		x.seq++
		return s
	}

	b.ReportAllocs()
	b.ResetTimer()
	steps := make([]*store.Step, 0, batch)
	for i := 0; i < b.N; i += batch {
		steps = steps[:0]
		for j := i; j < min(i+batch, b.N); j++ {
			steps = append(steps, step(xs[j%executions], baseTime.Add(time.Duration(j)*time.Millisecond)))
		}
		tx, err := d.Begin(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if err := tx.StepWrite(ctx, steps); err != nil {
			b.Fatal(err)
		}
		if err := tx.Commit(ctx); err != nil {
			b.Fatal(err)
		}
		for j, s := range steps {
			xs[(i+j)%executions].id = s.ExecutionID
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "steps/s")
}

// StepWrite tells each step the id of its execution's row, and writes a
// step that carries one under that row without looking the ARN up.
func TestStepWriteCarriesExecutionID(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d, err := Open(ctx, filepath.Join(t.TempDir(), "stepwise.db"), Options{})
	require.NoError(t, err)
	defer d.Close()
	ex := d.Executor()
	x := seed(ctx, t, ex)
	y := *x
	y.Arn, y.Name, y.LastEventID = x.Arn+"2", "x2", 0

	event := func(arn string, id int64) []*store.Event {
		return []*store.Event{{ExecutionArn: arn, ID: id, Type: "PassStateEntered", Timestamp: baseTime, Body: []byte(`{}`)}}
	}
	inserted := &store.Step{Insert: &y, Events: event(y.Arn, 1)}
	looked := &store.Step{Input: &store.Input{ExecutionArn: x.Arn, Seq: 1, At: baseTime, Body: []byte(`{}`)}, Events: event(x.Arn, 3)}
	require.NoError(t, ex.StepWrite(ctx, []*store.Step{inserted, looked}))
	require.NotZero(t, inserted.ExecutionID)
	require.NotZero(t, looked.ExecutionID)
	require.NotEqual(t, inserted.ExecutionID, looked.ExecutionID)

	// A step naming x's ARN but carrying y's row id is written to y: the
	// id is not looked up again.
	carried := &store.Step{Input: &store.Input{ExecutionArn: x.Arn, Seq: 2, At: baseTime, Body: []byte(`{}`)},
		Events: event(x.Arn, 2), ExecutionID: inserted.ExecutionID}
	require.NoError(t, ex.StepWrite(ctx, []*store.Step{carried}))
	require.Equal(t, inserted.ExecutionID, carried.ExecutionID)
	evs, err := ex.EventList(ctx, &store.EventListParams{ExecutionArn: y.Arn})
	require.NoError(t, err)
	require.Len(t, evs, 2)
	evs, err = ex.EventList(ctx, &store.EventListParams{ExecutionArn: x.Arn})
	require.NoError(t, err)
	require.Len(t, evs, 3)
}

// BenchmarkStepWriteStarts writes the steps of a distributed Map's child
// starts through StepWrite, 160 to a transaction as the engine batches
// them: each inserts its execution's row (ended already, a Pass child)
// and its four ~150-byte events.
func BenchmarkStepWriteStarts(b *testing.B) {
	ctx := context.Background()
	d, err := Open(ctx, filepath.Join(b.TempDir(), "bench.db"), Options{})
	require.NoError(b, err)
	defer d.Close()

	const batch = 160
	benchExecutions(b, d, 1, `{}`) // the state machine
	const smArn = "arn:aws:states:us-east-1:123456789012:stateMachine:bench"
	const mapRun = "arn:aws:states:us-east-1:123456789012:mapRun:bench/M:05addb02-311e-a721-26ea-4c6e1f9d2b7a"
	body := bytes.Repeat([]byte("b"), 150)
	step := func(i int, now time.Time) *store.Step {
		arn := fmt.Sprintf("arn:aws:states:us-east-1:123456789012:execution:bench/M:05addb02-311e-a721-26ea-%012x", i)
		stop := now
		s := &store.Step{Insert: &store.Execution{
			Arn: arn, StateMachineArn: smArn + "/M", RevisionID: "r1", Name: arn[len(arn)-36:], Status: history.StatusSucceeded,
			Input: `{"id": "1"}`, Output: ptrTo(`{"id": "1"}`), StartDate: now, StopDate: &stop, RoleArn: "role", Version: 1,
			LastEventID: 4, MapRunArn: mapRun,
		}}
		for j := range 4 {
			s.Events = append(s.Events, &store.Event{ExecutionArn: arn, ID: int64(j) + 1, Type: "PassStateEntered", Timestamp: now, Body: body})
		}
		return s
	}

	b.ReportAllocs()
	b.ResetTimer()
	steps := make([]*store.Step, 0, batch)
	for i := 0; i < b.N; i += batch {
		steps = steps[:0]
		for j := i; j < min(i+batch, b.N); j++ {
			steps = append(steps, step(j, baseTime.Add(time.Duration(j)*time.Millisecond)))
		}
		tx, err := d.Begin(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if err := tx.StepWrite(ctx, steps); err != nil {
			b.Fatal(err)
		}
		if err := tx.Commit(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "steps/s")
}
