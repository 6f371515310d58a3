package cli

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// The load generator signs with a key of the server's credentials file
// when the server is given one.
func TestBenchKey(t *testing.T) {
	t.Parallel()
	id, secret, err := benchKey([]string{"--time-skip"})
	require.NoError(t, err)
	require.Equal(t, "bench", id)
	require.Equal(t, "bench", secret)

	path := filepath.Join(t.TempDir(), "credentials")
	require.NoError(t, os.WriteFile(path, []byte("[b]\naws_access_key_id = KB\naws_secret_access_key = sb\n[a]\naws_access_key_id = KA\naws_secret_access_key = sa\n"), 0o600))
	for _, args := range [][]string{{"--credentials", path}, {"--time-skip", "--credentials=" + path}} {
		id, secret, err = benchKey(args)
		require.NoError(t, err)
		require.Equal(t, "KA", id)
		require.Equal(t, "sa", secret)
	}
	_, _, err = benchKey([]string{"--credentials", path + ".missing"})
	require.ErrorContains(t, err, "credentials: stat")
}

// The model's line says per unit what the database did between two
// samples, without the probe's own statements, and leaves out what it
// could not read.
func TestBenchDBPerUnit(t *testing.T) {
	t.Parallel()
	before := dbSample{writes: 100, stmts: 1000, walSyncs: 10, walBytes: 0, cpu: 1.5}
	after := dbSample{writes: 200, stmts: 2004, walSyncs: 15, walBytes: 150000, cpu: 2.5}
	require.Equal(t, ", database cpu 10000 µs, 1.0000 write transactions, 10.000 statements, 0.0500 WAL flushes, 1500 WAL bytes per task",
		before.perUnit(after, 100, "task"))
	unread := dbSample{writes: -1, stmts: -1, walSyncs: -1, walBytes: -1, cpu: -1}
	require.Equal(t, "", unread.perUnit(unread, 100, "task"))
	require.Equal(t, ", 1.0000 write transactions per transition",
		dbSample{writes: 100, stmts: -1, walSyncs: -1, walBytes: -1, cpu: -1}.perUnit(dbSample{writes: 200, stmts: -1, walSyncs: -1, walBytes: -1, cpu: -1}, 100, "transition"))
	var probe *dbProbe // no PostgreSQL: nothing read, nothing waited for
	require.Equal(t, unread, probe.sample(t.Context()))
	require.NoError(t, probe.analyze(t.Context()))
}

// The database's CPU is read from /proc only for a PostgreSQL server of
// this machine; the CPU of a process with its children is read there.
func TestBenchDBProc(t *testing.T) {
	t.Parallel()
	comm, ppid, ok := procParent(os.Getpid())
	require.True(t, ok)
	require.NotEmpty(t, comm)
	require.Equal(t, os.Getppid(), ppid)
	require.Zero(t, localPostmaster(os.Getpid())) // not a postgres
	require.Zero(t, localPostmaster(-1))
	require.GreaterOrEqual(t, clusterCPU(os.Getpid()), procCPU(os.Getpid()))
}

// The machine's share says how many cores were busy over a measurement
// and how many of them went to other processes than the bench's.
func TestBenchMachineShare(t *testing.T) {
	t.Parallel()
	db := dbSample{cpu: 1}
	require.Regexp(t, `^; machine: 1\.50 of \d+ cores busy, 0\.50 by other processes$`,
		machineShare(10, 13, 2, 1, 0.5, db, dbSample{cpu: 1.5}))
	require.Regexp(t, `, 0\.00 by other processes$`, machineShare(10, 11, 2, 1, 0.5, db, dbSample{cpu: 1.5}))
	require.Equal(t, "", machineShare(-1, 13, 2, 1, 0.5, db, db))
	require.Positive(t, machineBusy())
}

// The servers' pool size, for the warning that they may not fit in the
// database's max_connections.
func TestBenchPoolSize(t *testing.T) {
	t.Parallel()
	url := "postgres://u@h/db?sslmode=disable"
	require.Equal(t, max(4, runtime.NumCPU()), benchPoolSize(url, nil))
	require.Equal(t, 7, benchPoolSize(url+"&pool_max_conns=7", nil))
	require.Equal(t, 9, benchPoolSize(url+"&pool_max_conns=7", []string{"--db-pool-max=9"}))
	require.Equal(t, 3, benchPoolSize(url, []string{"--time-skip", "--db-pool-max", "3"}))
}
