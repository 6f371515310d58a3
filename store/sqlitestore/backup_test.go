package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"stepwise/history"
	"stepwise/store"
)

func TestBackup(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	type testBundle struct {
		dir    string
		path   string
		driver *Driver
		x      *store.Execution
	}

	setup := func(t *testing.T) *testBundle {
		t.Helper()
		dir := t.TempDir()
		b := &testBundle{dir: dir, path: filepath.Join(dir, "stepwise.db")}
		d, err := Open(ctx, b.path, Options{})
		require.NoError(t, err)
		t.Cleanup(func() { d.Close() })
		b.driver = d
		b.x = seed(ctx, t, d.Executor())
		return b
	}

	// check opens the copy at path and finds the seeded execution.
	check := func(t *testing.T, path string, x *store.Execution) {
		t.Helper()
		fi, err := os.Stat(path)
		require.NoError(t, err)
		require.Equal(t, fs.FileMode(0o600), fi.Mode().Perm())
		d, err := Open(ctx, path, Options{})
		require.NoError(t, err)
		defer d.Close()
		got, err := d.Executor().ExecutionGet(ctx, x.Arn)
		require.NoError(t, err)
		require.Equal(t, x, got)
		evs, err := d.Executor().EventList(ctx, &store.EventListParams{ExecutionArn: x.Arn})
		require.NoError(t, err)
		require.Len(t, evs, 2)
		var ok string
		require.NoError(t, d.write.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&ok))
		require.Equal(t, "ok", ok)
	}

	t.Run("WhileOpen", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		dest := filepath.Join(b.dir, "backup.db")
		require.NoError(t, Backup(ctx, b.path, dest, BackupOptions{}))
		check(t, dest, b.x)
		// Nothing left behind but the copy.
		names, err := filepath.Glob(filepath.Join(b.dir, ".backup.db.tmp-*"))
		require.NoError(t, err)
		require.Empty(t, names)
	})

	t.Run("Closed", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		// Closing the last connection removes the -wal and -shm files;
		// the read-only copy needs neither.
		require.NoError(t, b.driver.Close())
		_, err := os.Stat(b.path + "-wal")
		require.ErrorIs(t, err, fs.ErrNotExist)
		dest := filepath.Join(b.dir, "backup.db")
		require.NoError(t, Backup(ctx, b.path, dest, BackupOptions{}))
		check(t, dest, b.x)
		_, err = os.Stat(b.path + "-wal")
		require.ErrorIs(t, err, fs.ErrNotExist, "the backup wrote to the database")
	})

	t.Run("RefusesAnExistingFile", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		dest := filepath.Join(b.dir, "backup.db")
		require.NoError(t, os.WriteFile(dest, []byte("precious"), 0o644))
		err := Backup(ctx, b.path, dest, BackupOptions{})
		require.ErrorIs(t, err, fs.ErrExist)
		require.EqualError(t, err, dest+": file already exists")
		data, err := os.ReadFile(dest)
		require.NoError(t, err)
		require.Equal(t, "precious", string(data))

		// A -wal file alone is refused too: it would be read with the copy.
		lone := filepath.Join(b.dir, "lone.db")
		require.NoError(t, os.WriteFile(lone+"-wal", []byte("stale"), 0o644))
		require.ErrorIs(t, Backup(ctx, b.path, lone, BackupOptions{}), fs.ErrExist)
	})

	t.Run("Overwrite", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		dest := filepath.Join(b.dir, "backup.db")
		require.NoError(t, os.WriteFile(dest, []byte("old"), 0o644))
		require.NoError(t, os.WriteFile(dest+"-wal", []byte("stale"), 0o644))
		require.NoError(t, os.WriteFile(dest+"-shm", []byte("stale"), 0o644))
		require.NoError(t, Backup(ctx, b.path, dest, BackupOptions{Overwrite: true}))
		check(t, dest, b.x)
	})

	t.Run("NotOverTheDatabase", func(t *testing.T) {
		t.Parallel()
		b := setup(t)

		err := Backup(ctx, b.path, b.path, BackupOptions{Overwrite: true})
		require.EqualError(t, err, b.path+" is the database itself")
		link := filepath.Join(b.dir, "link.db")
		require.NoError(t, os.Link(b.path, link))
		err = Backup(ctx, b.path, link, BackupOptions{Overwrite: true})
		require.EqualError(t, err, link+" is the database itself")
		_, err = b.driver.Executor().ExecutionGet(ctx, b.x.Arn)
		require.NoError(t, err)
	})

	t.Run("NoDatabase", func(t *testing.T) {
		t.Parallel()
		dir := t.TempDir()

		err := Backup(ctx, filepath.Join(dir, "none.db"), filepath.Join(dir, "b.db"), BackupOptions{})
		require.ErrorIs(t, err, fs.ErrNotExist)
		require.EqualError(t, Backup(ctx, Memory, filepath.Join(dir, "b.db"), BackupOptions{}), "an in-memory database has nothing to back up")

		other := filepath.Join(dir, "other.db")
		db, err := sql.Open("sqlite", other)
		require.NoError(t, err)
		_, err = db.Exec("CREATE TABLE t (x)")
		require.NoError(t, err)
		require.NoError(t, db.Close())
		require.EqualError(t, Backup(ctx, other, filepath.Join(dir, "b.db"), BackupOptions{}), other+" is not a stepwise database")
		_, err = os.Stat(filepath.Join(dir, "b.db"))
		require.ErrorIs(t, err, fs.ErrNotExist)
		names, err := filepath.Glob(filepath.Join(dir, ".b.db.tmp-*"))
		require.NoError(t, err)
		require.Empty(t, names)
	})
}

// backupWhileWriting copies a database of n executions while another
// connection commits a new execution with three history events every
// millisecond, as the server's engine does. It requires that the writer
// went on during the copy and that the copy is one consistent snapshot
// (every execution in it with all its events), and returns how long the
// copy took, how many commits went through meanwhile, and their sorted
// latencies.
func backupWhileWriting(tb testing.TB, n int) (took time.Duration, size int64, during int64, lat []time.Duration) {
	tb.Helper()
	ctx := context.Background()
	dir := tb.TempDir()
	path := filepath.Join(dir, "stepwise.db")
	seedRetention(tb, path, n, 12)
	d, err := Open(ctx, path, Options{})
	require.NoError(tb, err)
	defer d.Close()

	const smArn = "arn:aws:states:us-east-1:123456789012:stateMachine:bench"
	var (
		mu        sync.Mutex
		latencies []time.Duration
		commits   atomic.Int64
	)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
			arn := fmt.Sprintf("arn:aws:states:us-east-1:123456789012:execution:bench:w%06d", i)
			step := &store.Step{
				Insert: &store.Execution{Arn: arn, StateMachineArn: smArn, RevisionID: "r1", Name: fmt.Sprintf("w%06d", i),
					Status: history.StatusRunning, Input: `{}`, StartDate: baseTime, RoleArn: "role", Version: 1, LastEventID: 3},
			}
			for id := int64(1); id <= 3; id++ {
				step.Events = append(step.Events, &store.Event{ExecutionArn: arn, ID: id, Type: "PassStateEntered", Timestamp: baseTime, Body: []byte(`{}`)})
			}
			began := time.Now()
			if err := d.Executor().StepWrite(ctx, []*store.Step{step}); err != nil {
				tb.Error(err)
				return
			}
			mu.Lock()
			latencies = append(latencies, time.Since(began))
			mu.Unlock()
			commits.Add(1)
		}
	}()
	time.Sleep(100 * time.Millisecond)

	dest := filepath.Join(dir, "backup.db")
	before := commits.Load()
	mu.Lock()
	first := len(latencies)
	mu.Unlock()
	began := time.Now()
	require.NoError(tb, Backup(ctx, path, dest, BackupOptions{}))
	took = time.Since(began)
	during = commits.Load() - before
	time.Sleep(50 * time.Millisecond)
	close(stop)
	<-done
	require.Positive(tb, during, "the writer was blocked for the whole copy")

	mu.Lock()
	lat = slices.Clone(latencies[first:])
	mu.Unlock()
	slices.Sort(lat)
	fi, err := os.Stat(dest)
	require.NoError(tb, err)

	// One snapshot: every execution with its whole history.
	c, err := Open(ctx, dest, Options{})
	require.NoError(tb, err)
	defer c.Close()
	var bad, executions int
	require.NoError(tb, c.write.QueryRowContext(ctx, `
SELECT count(*), sum(x.last_event_id != (SELECT coalesce(max(h.last_id), 0) FROM stepwise_history h WHERE h.execution_id = x.id))
FROM stepwise_execution x`).Scan(&executions, &bad))
	require.Zero(tb, bad)
	require.GreaterOrEqual(tb, executions, n)
	return took, fi.Size(), during, lat
}

// The writer goes on while a database of 2,000 executions is copied.
func TestBackupWhileWriting(t *testing.T) {
	t.Parallel()

	took, size, during, lat := backupWhileWriting(t, 2_000)
	t.Logf("backup of %d kB took %s; %d commits meanwhile, commit latency p50 %s, max %s",
		size>>10, took.Round(time.Millisecond), during, lat[len(lat)/2], lat[len(lat)-1])
}

// BenchmarkBackupWhileWriting copies a database of 10,000 executions
// (12 history events each) while a writer commits every millisecond, and
// reports the copy's time and the commits' latency during it.
//
//	go test ./store/sqlitestore -run '^$' -bench BackupWhileWriting -benchtime 1x
func BenchmarkBackupWhileWriting(b *testing.B) {
	for range b.N {
		took, size, during, lat := backupWhileWriting(b, 10_000)
		ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
		b.ReportMetric(ms(took), "backup-ms")
		b.ReportMetric(float64(size)/1e6, "MB")
		b.ReportMetric(float64(during), "commits")
		b.ReportMetric(ms(lat[len(lat)/2]), "commit-p50-ms")
		b.ReportMetric(ms(lat[len(lat)*99/100]), "commit-p99-ms")
		b.ReportMetric(ms(lat[len(lat)-1]), "commit-max-ms")
	}
}
